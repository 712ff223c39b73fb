"""Golden values for the reference designs, each computed by hand from its formula."""

from __future__ import annotations

import math

import pytest

from accelerators import SpatialArray, SystolicArray, eyeriss_v1, tech, tpu_v1_like
from accelerators.tech import EYERISS_NORMALIZED, HOROWITZ_45NM

SRAM_MM2_PER_KIB = 8192 * 0.346 / 0.7 * 1e-6  # bits/KiB x 6T cell (um^2) / array efficiency
DFF_UM2 = 4.522


def test_eyeriss_v1_golden():
    e = eyeriss_v1()
    assert isinstance(e, SpatialArray) and e.tech is EYERISS_NORMALIZED
    assert (e.pe_y, e.pe_x) == (12, 14)  # 12 rows x 14 columns
    assert (e.rf_w_words, e.rf_i_words, e.rf_o_words) == (224, 12, 24)
    assert e.rf_words * e.word_bits / 8 == 520  # bytes per PE, "0.5 kB"
    assert (e.glb_kib, e.word_bits, e.clock_mhz) == (108, 16, 200)
    assert e.dram_bw_words_per_cycle == 64 / 16 and e.glb_bw_words_per_cycle == 32

    a = e.to_arch()
    assert a.n_macs == 168
    rf, glb, _ = a.levels
    assert rf.capacity_words == {"W": 224, "I": 12, "O": 24}
    assert glb.capacity_words == 108 * 1024 * 8 // 16 == 55296
    assert (glb.fanout_x, glb.fanout_y) == (14, 12)

    mac16_um2 = math.sqrt(282 * 3495) + math.sqrt(36 * 137)  # int16 mult + add, interpolated
    pe_um2 = mac16_um2 + (224 + 12 + 24) * 16 * DFF_UM2
    area = 168 * pe_um2 * 1e-6 + 108 * SRAM_MM2_PER_KIB
    assert e.area_mm2 == pytest.approx(area, rel=1e-12)
    assert e.area_mm2 == pytest.approx(3.7762, abs=1e-4)

    mac = math.sqrt(0.2 * 3.1) + math.sqrt(0.03 * 0.1)  # int16 MAC, pJ
    assert a.mac_energy_pj == pytest.approx(mac) == pytest.approx(0.8422, abs=1e-4)
    assert glb.read_energy_pj["I"] == pytest.approx(6 * mac)
    assert a.levels[2].read_energy_pj["W"] == pytest.approx(200 * mac)


def test_eyeriss_v1_with_horowitz_table():
    a = eyeriss_v1(tech="horowitz_45nm").to_arch()
    assert a.levels[1].read_energy_pj["I"] == pytest.approx(tech.sram_energy_pj(108, 16))
    assert a.area_mm2 == pytest.approx(eyeriss_v1().area_mm2)


def test_tpu_v1_like_golden():
    t = tpu_v1_like()
    assert isinstance(t, SystolicArray) and t.tech is HOROWITZ_45NM
    assert (t.rows, t.cols, t.dataflow, t.word_bits, t.clock_mhz) == (256, 256, "WS", 8, 700)
    assert (t.ifmap_sram_kib, t.filter_sram_kib, t.ofmap_sram_kib) == (24 * 1024, 256, 4 * 1024)
    assert (
        t.dram_bw_words_per_cycle == pytest.approx(34e9 / 700e6) == pytest.approx(48.571, abs=1e-3)
    )

    a = t.to_arch()
    assert a.n_macs == 65536
    assert a.dataflow == "WS" and (a.array_rows, a.array_cols) == (256, 256)
    sram = a.levels[1]
    assert sram.capacity_words == {"I": 24 * 2**20, "W": 256 * 2**10, "O": 4 * 2**20}

    pe_um2 = (282 + 36) + 3 * 8 * DFF_UM2  # int8 MAC + W/I/O registers of 8 bits
    area = 65536 * pe_um2 * 1e-6 + (24 * 1024 + 256 + 4 * 1024) * SRAM_MM2_PER_KIB
    assert t.area_mm2 == pytest.approx(area, rel=1e-12)
    assert t.area_mm2 == pytest.approx(145.088, abs=1e-3)
    assert a.mac_energy_pj == pytest.approx(0.2 + 0.03)
    assert a.levels[2].read_energy_pj["I"] == pytest.approx(8 * 20.0)
