"""The loop-nest model against ZigZag 3.9.1 on fixed mappings (experiments/validation/zigzag_crossval.py).

The translation tests need no ZigZag. The agreement test runs 3 layers x 2 mappings in
``.venv-zigzag`` (``make zigzag-env``) and skips, saying why, when that env is absent. It
pins what the committed 24-case run (docs/validation/zigzag_crossval.txt) shows on those
cases: equal cycles; equal weight counts at every level; equal input counts on 1x1 layers
(no sliding window); equal final output writes to DRAM; nowhere more accesses than
ZigZag's element moves, because each default convention that differs (sliding-window
reuse, each PE's first accumulation into a word reads no partial sum) saves accesses in
coexplore; and, under ``accounting="zigzag"`` (ZigZag's rules for those two), every count
equal.
"""

from __future__ import annotations

import pytest

from accelerators import eyeriss_v1
from experiments.validation.zigzag_crossval import (
    ZIGZAG_PYTHON,
    compare,
    our_mappings,
    run_zigzag,
    select_layers,
    zigzag_case,
)
from mappers.mapping import Mapping
from mappers.workloads import conv2d


def test_the_case_is_written_with_the_same_loops_at_the_same_levels():
    arch = eyeriss_v1().to_arch()
    layer = conv2d("t", K=32, C=16, P=14, Q=14, R=3, S=3, stride=2)
    m = Mapping.create(arch, temporal=[{"S": 3, "C": 4, "K": 8}, {"Q": 14, "K": 2}, {"C": 4, "P": 7}],
                       spatial_x=[{}, {"P": 2}, {}], spatial_y=[{}, {"R": 3, "K": 2}, {}],
                       order=[(), ("K", "Q"), ("P", "C")], bypass=[(), ("W",), ()])
    case = zigzag_case(layer, arch, m)
    t = case["temporal"]
    # innermost first; W skips the GLB, so its second level holds the GLB's and DRAM's loops
    assert t["I"] == [[["FX", 3], ["C", 4], ["K", 8]], [["OX", 14], ["K", 2]], [["C", 4], ["OY", 7]]]
    assert t["W"] == [[["FX", 3], ["C", 4], ["K", 8]], [["OX", 14], ["K", 2], ["C", 4], ["OY", 7]]]
    assert case["mapping"][0]["spatial_mapping"] == {"D1": ["OY, 2"], "D2": ["FY, 3", "K, 2"]}
    mems = case["accelerator"]["memories"]
    assert "I2" not in mems["glb"]["operands"] and mems["rf_w"]["size"] == 224 * 16
    wl = case["workload"][0]
    assert wl["dimension_relations"] == ["ix=2*ox+1*fx", "iy=2*oy+1*fy"]
    assert wl["pr_loop_sizes"] == [13 * 2 + 3, 13 * 2 + 3]


@pytest.mark.skipif(not ZIGZAG_PYTHON.exists(), reason=f"{ZIGZAG_PYTHON} missing: run `make zigzag-env`")
def test_agreement_with_zigzag_on_fixed_mappings():
    arch = eyeriss_v1().to_arch()
    metas, cases = [], []
    for layer in select_layers(quick=True):
        for _, m in our_mappings(layer, arch):
            metas.append((layer, m))
            cases.append(zigzag_case(layer, arch, m))
    results = run_zigzag(cases, timeout_s=600)
    assert len(results) == 6
    for (layer, m), z in zip(metas, results):
        assert "error" not in z, z
        c = compare(layer, arch, m, z)
        assert c["ours_cycles"] == c["zigzag_cycles"]
        one_by_one = layer.dims["R"] == layer.dims["S"] == 1
        for r in c["rows"]:
            assert r["ours_reads"] <= r["zigzag_reads"] and r["ours_writes"] <= r["zigzag_writes"], r
            if r["operand"] == "W" or (r["operand"] == "I" and one_by_one):
                assert (r["ours_reads"], r["ours_writes"]) == (r["zigzag_reads"], r["zigzag_writes"]), r
            if r["operand"] == "O" and r["level"] == "DRAM":
                assert r["ours_writes"] == r["zigzag_writes"], r
            assert (r["mode_reads"], r["mode_writes"]) == (r["zigzag_reads"], r["zigzag_writes"]), r
        assert 0.75 <= c["ours_energy_without_noc_pj"] / c["zigzag_energy_pj"] <= 1.0
