"""HASCO's software searches at equal numbers of schedules, against the exact mapper's
bound (experiments/search_quality/hasco_sw_search.py)."""

from __future__ import annotations

import pytest

from experiments.reproduce import hasco as rep


def test_software_search_benchmark_against_the_bound(tmp_path):
    from experiments.search_quality import hasco_sw_search as bench

    out = bench.main(["--pairs", "gemv:GEMV", "--seeds", "2", "--budget", "12", "--out", str(tmp_path)])
    (pair,) = out["pairs"]
    assert set(pair["final_median_cycles"]) == set(rep.SW_METHODS)
    orc = pair["sw_convergence"]["oracle"]
    if orc["optimum"]:  # nothing pads: no search can beat the exact optimum
        assert min(pair["final_over_bound"].values()) >= 1 - 1e-9
    assert out["summary"]["pairs"] == 1
    assert "| gemv | GEMV |" in (tmp_path / "table.md").read_text()
    with pytest.raises(SystemExit, match="--seeds: must be a positive integer"):
        bench.main(["--seeds", "0", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="--first-seed: must be a non-negative integer"):
        bench.main(["--first-seed", "-1", "--out", str(tmp_path)])
    assert out["settings"]["seed_list"] == [0, 1]


def test_software_search_cache_is_keyed_by_the_oracle_limits(tmp_path):
    from experiments.search_quality import hasco_sw_search as bench

    default = bench.EXACT_REFERENCE_MAX_NODES
    name = lambda n, s, seeds=(0, 1): bench.cache_path(tmp_path, "gemm", "GEMM", list(seeds), 150, n, s).name  # noqa: E731
    assert name(default, None) == "gemm-GEMM-s2-b150.json"  # the name caches written before limits were keyed had
    assert name(default, None, (3, 4)) == "gemm-GEMM-s2-from3-b150.json"
    assert len({name(default, None), name(1000, None), name(None, None), name(default, 60.0)}) == 4
