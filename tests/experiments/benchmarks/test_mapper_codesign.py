"""The co-design benchmark of the exact mapper (experiments/benchmarks/mapper_codesign.py)."""

from __future__ import annotations

import math

import pytest

from experiments.benchmarks import mapper_codesign as bench


def test_the_anytime_incumbent_is_the_last_one_found_by_then():
    trace = [(0.05, 12.0), (0.3, 11.0), (1.5, 10.0)]
    assert bench.anytime(trace, 10.0, 0.1) == pytest.approx(1.2)
    assert bench.anytime(trace, 10.0, 0.5) == pytest.approx(1.1)
    assert bench.anytime(trace, 10.0, 2.0) == 1.0
    assert bench.anytime([(0.2, 10.0)], 10.0, 0.1) == math.inf


def test_a_small_run_maps_every_layer_of_every_design(capsys):
    out = bench.main(["--shi-points", "1", "--demo-points", "1", "--workloads", "dqn", "--max-nodes", "3000"])
    rows = out["rows"]
    assert len(rows) == (2 + 1 + 1) * 5                     # iso, free, demo, Eyeriss x DQN's 5 layers
    assert {r["space"] for r in rows} == {"shi-iso", "shi-free", "demo", "eyeriss"}
    for r in rows:
        assert r["heuristic_over_result"] >= 1 - 1e-9       # the search starts from the heuristic's mapping
        assert min(r["anytime"].values()) >= 1 - 1e-9       # no incumbent beats the final result
        if r["proven"]:
            assert r["gap"] == 0.0
        else:                                               # capped: the result is within its certified gap
            assert r["nodes"] >= 3000 and r["gap"] >= 0
            assert r["edp"] <= r["lower_bound"] * (1 + r["gap"]) * (1 + 1e-9)
    s = out["summary"]["all"]
    assert s["layer_maps"] == 20 and 0 <= s["proven"] <= 20 and s["cpu_s_median"] <= s["cpu_s_max"]
    text = capsys.readouterr().out
    assert "summary (CPU seconds per layer map" in text
    # the header states the space the proofs cover, per space: the systolic demo points
    # have no bypass choices, the others do; all under the coexplore accounting
    head = text.splitlines()
    i = head.index("proofs and bounds cover, per space (or point):")
    assert i < next(k for k, ln in enumerate(head) if ln.startswith("space "))
    scoped = head[i + 1:i + 3]
    assert scoped[0].startswith("  shi-iso, shi-free, eyeriss: edp over divisor tilings, coexplore accounting, "
                                "bypass searched")
    assert scoped[1].startswith("  demo: edp over divisor tilings, coexplore accounting, no bypass choices")
    assert {r["applies_to"][0] for r in out["scopes"]} == {"shi-iso", "demo"}


def test_a_run_resumed_from_its_rows_file_maps_only_what_is_missing(tmp_path):
    rows = tmp_path / "rows.jsonl"
    base = ["--shi-points", "1", "--demo-points", "0", "--spaces", "shi-iso", "--workloads", "dqn",
            "--max-nodes", "2000", "--rows", str(rows)]
    first = bench.main([*base, "--layers", "fc1", "fc2"])
    assert len(first["rows"]) == 2 and len(rows.read_text().splitlines()) == 3     # settings + 2 maps
    # a kill while the third map was being written leaves a cut line: dropped, mapped again
    with rows.open("a") as f:
        f.write('{"space": "shi-iso", "po')
    again = bench.main([*base, "--layers", "fc1", "fc2", "conv3"])
    lines = rows.read_text().splitlines()
    assert len(again["rows"]) == 3 and len(lines) == 4
    old = {(r["layer"], r["cpu_s"]) for r in first["rows"]}
    assert old <= {(r["layer"], r["cpu_s"]) for r in again["rows"]}                # read back, not remapped
    assert again["summary"]["all"]["layer_maps"] == 3
    with pytest.raises(ValueError, match="max_nodes=2000"):
        bench.main([*base[:-4], "--max-nodes", "5000", "--rows", str(rows)])
