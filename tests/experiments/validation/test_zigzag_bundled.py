"""ZigZag's own bundled accelerators against the loop-nest model (experiments/validation/zigzag_bundled.py).

The case test needs no ZigZag: the small accelerator of tests/accelerators/test_interop_zigzag.py.
The agreement test runs 3 layers on ``eyeriss_like``, ``tpu_like`` and ``tesla_npu_like``
in ``.venv-zigzag`` (``make zigzag-env``) and skips, saying why, when that env is absent.
It pins what the committed 24-case run (docs/validation/zigzag_bundled.txt) shows on those
cases: equal cycles; equal weight counts everywhere; under ``accounting="zigzag"`` every
count equal but one row, whose cause docs/MODEL.md names (ZigZag serves partially
overlapping input windows of the array's PEs with one read per distinct word; coexplore
shares a read only among identical tiles); and ZigZag's counts priced at our per-word
energies within 5 % of our energy.
"""

from __future__ import annotations

import pytest

from experiments.validation.zigzag_bundled import (
    ACCELERATORS,
    ZIGZAG_PYTHON,
    arch_from_zigzag,
    run,
    select_layers,
    zigzag_case,
)
from mappers.mapping import Mapping
from mappers.workloads import conv2d
from tests.accelerators.test_interop_zigzag import toy


def test_the_case_puts_each_operands_loops_at_its_memories():
    hw = toy()
    tr = arch_from_zigzag(hw)
    layer = conv2d("t", K=4, C=4, P=4, Q=4, R=1, S=1)
    m = Mapping.create(tr.arch, temporal=[{"C": 2}, {"C": 2}, {"P": 2}, {"Q": 4}],
                       spatial_x=[{}, {"P": 2}, {"K": 4}, {}])
    case = zigzag_case(layer, hw, tr, m)
    t = case["temporal"]
    assert t["W"] == [[["C", 2], ["C", 2]], [["OY", 2], ["OX", 4]]]
    assert t["I"] == [[["C", 2], ["C", 2], ["OY", 2]], [["OX", 4]]]
    assert t["O"] == [[["C", 2]], [["C", 2], ["OY", 2]], [["OX", 4]]]
    assert case["mapping"][0]["spatial_mapping"] == {"D1": ["K, 4"], "D2": ["OY, 2"]}
    assert case["accelerator"] is hw and case["workload"][0]["operand_precision"]["O"] == 8


@pytest.mark.skipif(not ZIGZAG_PYTHON.exists(), reason=f"{ZIGZAG_PYTHON} missing: run `make zigzag-env`")
def test_agreement_with_zigzag_on_its_own_accelerators():
    results = run(ACCELERATORS, select_layers(quick=True), log=lambda *a: None)
    assert len(results) == 9
    named = {("eyeriss_like", "layer1.0.conv2", "sram_1M", "I")}   # partially overlapping windows multicast
    default_equal = mode_equal = 0
    for c in results:
        assert "error" not in c, c
        assert c["ours_cycles"] == c["zigzag_cycles"]
        assert 0.95 <= c["ours_energy_pj"] / c["zigzag_counts_at_our_energies_pj"] <= 1.0 + 1e-12
        for r in c["rows"]:
            same = (r["ours_reads"], r["ours_writes"]) == (r["zigzag_reads"], r["zigzag_writes"])
            mode = (r["mode_reads"], r["mode_writes"]) == (r["zigzag_reads"], r["zigzag_writes"])
            default_equal += same
            mode_equal += mode
            if r["operand"] == "W":
                assert same and mode, r
            key = (c["accelerator"], c["layer"], r["memory"], r["operand"])
            assert mode == (key not in named), (key, r)
    assert mode_equal > default_equal
