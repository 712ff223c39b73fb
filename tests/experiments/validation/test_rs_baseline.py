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
