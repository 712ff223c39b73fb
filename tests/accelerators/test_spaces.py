"""accelerators/spaces.py: the published flows' hardware spaces, defined once (issue 40:
``hardware_space()`` was defined in three layers)."""

from __future__ import annotations

import pytest

from accelerators import spaces
from accelerators.reference import eyeriss_v1


def test_each_user_takes_its_space_from_here():
    import evaluators.intrinsic_codesign as ic
    import mappers.ppr_plan as pp

    assert ic.hardware_space is spaces.hasco_space
    assert pp.hardware_space is spaces.ppr_fpga_space


def test_eyeriss_is_inside_iso_and_free_admits_more():
    e = eyeriss_v1()
    point = {"pe_x": e.pe_x, "pe_y": e.pe_y, "rf_w_words": e.rf_w_words, "rf_i_words": e.rf_i_words,
             "rf_o_words": e.rf_o_words, "glb_kib": int(e.glb_kib)}
    assert spaces.shi2020_space("iso").validate(point) == []
    big = {**point, "pe_x": 32, "pe_y": 20}
    assert spaces.shi2020_space("iso").validate(big) and spaces.shi2020_space("free").validate(big) == []
    with pytest.raises(ValueError, match="mode"):
        spaces.shi2020_space("huge")


def test_hasco_area_budget_and_ppr_fixed_parameters():
    capped = spaces.hasco_space("GEMM", 1.0)
    assert "area_budget" in [c.name for c in capped.constraints] and capped.name.startswith("hasco-gemm-area")
    assert spaces.ppr_fpga_space(bram_words=[4096]).names == ["n_pes", "bram_words_per_table", "int_bits",
                                                             "clock_mhz"]
    with pytest.raises(ValueError, match="at least one"):
        spaces.ordinal_or_fixed("x", [])
