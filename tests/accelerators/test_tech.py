"""accelerators.tech: Horowitz constants and fits, the Eyeriss normalized table, areas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelerators import tech
from accelerators.tech import EYERISS_NORMALIZED, HOROWITZ_45NM, TechModel

PRECISIONS = ["int8", "int16", "int32", "fp16", "fp32"]


# -- arithmetic -----------------------------------------------------------------------------


def test_mac_energy_is_horowitz_mult_plus_add():
    assert tech.mac_energy_pj("int8") == pytest.approx(0.2 + 0.03)
    assert tech.mac_energy_pj("int32") == pytest.approx(3.1 + 0.1)
    assert tech.mac_energy_pj("fp16") == pytest.approx(1.1 + 0.4)
    assert tech.mac_energy_pj("fp32") == pytest.approx(3.7 + 0.9)
    assert tech.mac_energy_pj("int8", accumulate="int32") == pytest.approx(0.2 + 0.1)


def test_int16_is_the_power_law_interpolant_and_near_published_estimates():
    # power law through (8, E8) and (32, E32) evaluated at 16 = geometric mean
    assert tech.INT16_ADD_PJ == pytest.approx(math.sqrt(0.03 * 0.1))
    assert tech.INT16_MULT_PJ == pytest.approx(math.sqrt(0.2 * 3.1))
    assert tech.int_add_energy_pj(16) == pytest.approx(tech.INT16_ADD_PJ, rel=1e-12)
    assert tech.int_mult_energy_pj(16) == pytest.approx(tech.INT16_MULT_PJ, rel=1e-12)
    # public tables that extend Horowitz's to 16 bit use 0.05 / 1.0 pJ and 0.06 / 0.8 pJ
    assert 0.05 <= tech.INT16_ADD_PJ <= 0.06
    assert 0.7 <= tech.INT16_MULT_PJ <= 1.0
    assert tech.mac_energy_pj("int8") < tech.mac_energy_pj("int16") < tech.mac_energy_pj("int32")


def test_int_power_laws_hit_the_table_points_and_vectorize():
    bits = np.array([8, 16, 32])
    e = tech.int_mac_energy_pj(bits)
    assert isinstance(e, np.ndarray) and e.shape == (3,)
    assert e == pytest.approx([tech.mac_energy_pj(f"int{b}") for b in bits], rel=1e-12)
    a = tech.int_mac_area_um2(bits)
    assert a == pytest.approx([tech.mac_area_um2(f"int{b}") for b in bits], rel=1e-12)
    assert isinstance(tech.int_mac_energy_pj(8), float)


def test_unknown_precision_lists_choices():
    with pytest.raises(ValueError, match=r"unknown precision 'int4'.*fp16"):
        tech.mac_energy_pj("int4")
    with pytest.raises(ValueError, match="no integer precision of 12 bits"):
        tech.int_precision(12)
    assert tech.int_precision(8) == "int8"


# -- SRAM / RF / DRAM -------------------------------------------------------------------------


@pytest.mark.parametrize("kib,pj", [(8, 10.0), (32, 20.0), (1024, 100.0)])
def test_sram_fit_passes_through_horowitz_points(kib, pj):
    assert tech.sram_energy_pj(kib, 64) == pytest.approx(pj, rel=1e-12)
    assert tech.sram_energy_pj(kib) == pytest.approx(pj, rel=1e-12)  # 64-bit default
    # linear in word width
    assert tech.sram_energy_pj(kib, 16) == pytest.approx(pj / 4, rel=1e-12)
    assert tech.sram_energy_pj(kib, 8) == pytest.approx(pj / 8, rel=1e-12)


def test_sram_fit_is_monotone_and_continuous():
    kib = np.geomspace(1e-3, 1e6, 5001)
    e = tech.sram_energy_pj(kib, 16)
    assert isinstance(e, np.ndarray) and e.shape == kib.shape
    assert np.all(np.diff(e) > 0)
    for x in (8.0, 32.0, 1024.0):  # no jump at the breakpoints
        lo, hi = tech.sram_energy_pj([x * (1 - 1e-9), x * (1 + 1e-9)], 64)
        assert lo == pytest.approx(hi, rel=1e-8)
    # log-log segments: doubling 8 -> 16 KiB multiplies by 2**0.5
    assert tech.sram_energy_pj(16) / tech.sram_energy_pj(8) == pytest.approx(math.sqrt(2))


@pytest.mark.parametrize("bad", [0, -1.0, [8, 0]])
def test_sram_fit_rejects_non_positive_capacity(bad):
    with pytest.raises(ValueError, match="capacity_kib must be > 0"):
        tech.sram_energy_pj(bad)


def test_register_file_energy_extrapolates_the_fit_and_matches_eyeriss_roughly():
    # 256 words x 16 bit = 0.5 KiB: 10 pJ * sqrt(0.5 / 8) * 16 / 64
    assert tech.register_file_energy_pj(256, 16) == pytest.approx(10 * math.sqrt(0.5 / 8) / 4)
    ratio = tech.register_file_energy_pj(256, 16) / tech.mac_energy_pj("int16")
    assert 0.5 <= ratio <= 2.0  # Eyeriss: a 0.5 kB RF costs 1x MAC
    words = np.array([1, 4, 16, 64, 256])
    assert np.all(np.diff(tech.register_file_energy_pj(words, 16)) > 0)
    assert tech.register_file_energy_pj(256, 16) < tech.sram_energy_pj(8, 16)


def test_dram_energy_is_640_pj_per_32_bits():
    assert tech.DRAM_PER_BIT_PJ == 20.0
    assert tech.dram_energy_pj(32) == pytest.approx(640.0)
    assert tech.dram_energy_pj(16) == pytest.approx(320.0)
    assert tech.dram_energy_pj(np.array([8, 64])) == pytest.approx([160.0, 1280.0])


# -- energy tables ----------------------------------------------------------------------------


@pytest.mark.parametrize("precision", PRECISIONS)
def test_eyeriss_normalized_ratios(precision):
    m = EYERISS_NORMALIZED
    mac = m.mac_energy_pj(precision)
    assert mac == pytest.approx(tech.mac_energy_pj(precision))
    rf = m.register_energy_pj(12, precision)
    noc = m.noc_energy_pj(precision)
    glb = m.sram_energy_pj(108, precision)
    dram = m.dram_energy_pj(precision)
    assert [rf / mac, noc / mac, glb / mac, dram / mac] == pytest.approx([1, 2, 6, 200])
    # normalized costs do not depend on size
    assert m.register_energy_pj(224, precision) == pytest.approx(rf)
    assert m.sram_energy_pj(4096, precision) == pytest.approx(glb)
    assert m.hop_energy_pj(precision) == pytest.approx(noc)


def test_normalized_table_vectorizes_over_capacity():
    out = EYERISS_NORMALIZED.sram_energy_pj(np.array([1.0, 64.0, 512.0]), "int16")
    assert isinstance(out, np.ndarray) and out.shape == (3,)
    assert np.all(out == out[0])


def test_horowitz_table_uses_the_fits():
    m = HOROWITZ_45NM
    assert not m.normalized and EYERISS_NORMALIZED.normalized
    assert m.sram_energy_pj(64, "int16") == pytest.approx(tech.sram_energy_pj(64, 16))
    assert m.register_energy_pj(24, "int16") == pytest.approx(tech.register_file_energy_pj(24, 16))
    assert m.dram_energy_pj("int8") == pytest.approx(160.0)
    assert m.noc_energy_pj("int16") == pytest.approx(2 * tech.mac_energy_pj("int16"))
    assert m.hop_energy_pj("int16") == pytest.approx(tech.register_file_energy_pj(1, 16))


def test_tech_model_validation_and_lookup():
    with pytest.raises(ValueError, match="all four"):
        TechModel("half", rf_x_mac=1.0)
    with pytest.raises(ValueError, match=r"TechModel.dram_x_mac must be >= 0"):
        TechModel("neg", 1.0, 2.0, 6.0, -1.0)
    assert tech.get_tech("eyeriss_normalized") is EYERISS_NORMALIZED
    assert tech.get_tech(HOROWITZ_45NM) is HOROWITZ_45NM
    with pytest.raises(ValueError, match=r"unknown tech 'x'.*horowitz_45nm"):
        tech.get_tech("x")


# -- area -------------------------------------------------------------------------------------


def test_area_constants_and_formulas():
    assert tech.SRAM_AREA_PER_KIB_MM2 == pytest.approx(8192 * 0.346 / 0.7 * 1e-6)
    assert tech.sram_area_mm2(64) == pytest.approx(64 * 8192 * 0.346 / 0.7 * 1e-6)
    assert tech.sram_area_mm2(np.array([0.0, 1.0])) == pytest.approx(
        [0.0, tech.SRAM_AREA_PER_KIB_MM2]
    )
    assert tech.register_area_um2(3, 8) == pytest.approx(3 * 8 * 4.522)
    assert tech.mac_area_um2("int8") == pytest.approx(282 + 36)
    assert tech.mac_area_um2("fp16") == pytest.approx(1640 + 1360)
    assert tech.mac_area_um2("fp32") == pytest.approx(7700 + 4184)
    assert tech.mac_area_um2("int16") == pytest.approx(math.sqrt(282 * 3495) + math.sqrt(36 * 137))
    with pytest.raises(ValueError, match="capacity_kib must be >= 0"):
        tech.sram_area_mm2(-1)


def test_every_numeric_constant_names_its_unit():
    units = ("_PJ", "_UM2", "_MM2", "_X_MAC", "_BITS", "_EFFICIENCY")
    for name, value in vars(tech).items():
        if name.isupper() and isinstance(value, int | float):
            assert name.endswith(units), f"tech.{name} has no unit suffix"
