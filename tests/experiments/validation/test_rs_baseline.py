"""experiments/validation/rs_baseline.py's figures agree with silicon_compare's counts of
the same Table III mappings and with its published rows (two code paths, one model)."""

from __future__ import annotations

import pytest

from accelerators import eyeriss_v1
from experiments.validation.rs_baseline import figures, published
from experiments.validation.silicon_compare import alexnet_layer, eyeriss_rows
from mappers.row_stationary import table_iii_mapping


def test_figures_and_published_match_silicon_compare():
    rows, layers = eyeriss_rows()
    pub = {(r["layer"], r["figure"]): r["published"] for r in rows}
    arch = eyeriss_v1().to_arch()
    for name, d in layers.items():
        layer = alexnet_layer(name)
        f = figures(layer, arch, table_iii_mapping(name, layer, arch))
        assert f["energy_uj"] == pytest.approx(d["energy_pj"] * 1e-6, rel=1e-12)
        assert f["onchip_energy_uj"] == pytest.approx((d["energy_pj"] - d["energy_breakdown_pj"]["DRAM"]) * 1e-6,
                                                      rel=1e-12)
        assert f["latency_ms"] == pytest.approx(d["latency_cycles"] / 200e6 * 1e3, rel=1e-12)
        assert f["glb_mb"] == pytest.approx(d["glb_words"] * 2 / 1e6, rel=1e-12)
        assert f["dram_mb"] == pytest.approx(d["dram_words"] * 2 / 1e6, rel=1e-12)
        p = published(name)
        assert p["onchip_energy_uj"] == pytest.approx(pub[(name, "chip energy (mJ)")] * 1e3, rel=1e-12)
        assert p["latency_ms"] == pub[(name, "processing latency (ms)")]
        assert p["glb_mb"] == pub[(name, "GLB accesses (MB)")]
        assert p["dram_mb"] == pub[(name, "DRAM accesses (MB)")]


def test_transposed_swaps_rows_and_columns_and_keeps_the_counts_of_a_square_layer():
    from evaluators.loopnest import evaluate
    from experiments.validation.rs_baseline import transposed

    arch = eyeriss_v1().to_arch()
    layer = alexnet_layer("CONV3")
    m = table_iii_mapping("CONV3", layer, arch)
    t = transposed(m)
    assert t.temporal[0] == {"R": 3, "C": 4, "K": 16} and t.spatial_x[1] == {"Q": 13}
    assert t.spatial_y[1] == {"S": 3, "K": 4} and transposed(t) == m
    a, b = evaluate(layer, arch, m), evaluate(layer, arch, t)
    assert float(b.energy_pj[0]) == pytest.approx(float(a.energy_pj[0]), rel=1e-12)
    assert float(b.latency_cycles[0]) == pytest.approx(float(a.latency_cycles[0]), rel=1e-12)


def test_the_run_states_each_searchs_proof_scope_before_its_rows(capsys):
    """Issue 45 item 3: the output says what its "optimal" covers, per search: RS-opt within
    the row-stationary set, free-opt without constraints, both under the accounting the
    model counts with; computed from the mappers (the JSON keeps it) and held to the
    results (a node limit: the scope is the same whether or not a search finishes)."""
    from experiments.proof_scopes import PREFIX
    from experiments.validation import rs_baseline

    res = rs_baseline.main(["--layers", "CONV5", "--max-nodes", "20000"])
    out = capsys.readouterr().out.splitlines()
    head = out.index(f"{PREFIX}, per search:")
    rs_line, free_line = out[head + 1], out[head + 2]
    assert rs_line.startswith("  rs_opt: edp over divisor tilings, coexplore accounting, bypass searched, "
                              "constraints row-stationary;")
    assert free_line.startswith("  free_opt: edp over divisor tilings, coexplore accounting, bypass searched, "
                                "no constraints;")
    first_row = next(i for i, ln in enumerate(out) if ln.startswith("CONV5 "))
    assert head < first_row and any("CONV5 rs_opt" in ln for ln in out[first_row:])
    assert [r["applies_to"] for r in res["scopes"]] == [["rs_opt"], ["free_opt"]]
    assert [r["constraints"] for r in res["scopes"]] == ["row-stationary", None]
    assert {r["accounting"] for r in res["scopes"]} == {"coexplore"}
    assert rs_baseline.announced_scopes([]).lines() == [f"{PREFIX}, per search:", rs_line, free_line]
