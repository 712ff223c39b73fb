"""SpatialArray (Eyeriss-like): validation, from_point, area, lowering with both tables."""

from __future__ import annotations

import dataclasses
import itertools
import re

import numpy as np
import pytest

from accelerators import SpatialArray, tech
from accelerators.tech import EYERISS_NORMALIZED, HOROWITZ_45NM


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("pe_x", 0, "SpatialArray.pe_x must be a positive integer, got 0"),
        ("pe_y", 1.5, "SpatialArray.pe_y must be a positive integer, got 1.5"),
        ("rf_w_words", -1, "SpatialArray.rf_w_words must be a positive integer, got -1"),
        ("rf_i_words", 0, "SpatialArray.rf_i_words must be a positive integer, got 0"),
        ("rf_o_words", None, "SpatialArray.rf_o_words must be a positive integer, got None"),
        ("glb_kib", 0.0, "SpatialArray.glb_kib must be a positive finite number, got 0.0"),
        ("glb_kib", 1e-7, "SpatialArray.glb_kib must hold at least one 16-bit word"),
        (
            "dram_bw_words_per_cycle",
            -2.0,
            "SpatialArray.dram_bw_words_per_cycle must be a positive finite number, got -2.0",
        ),
        (
            "glb_bw_words_per_cycle",
            0,
            "SpatialArray.glb_bw_words_per_cycle must be a positive finite number, got 0",
        ),
        (
            "clock_mhz",
            float("nan"),
            "SpatialArray.clock_mhz must be a positive finite number, got nan",
        ),
        ("word_bits", 4, "SpatialArray.word_bits must be one of [8, 16, 32], got 4"),
        ("multicast", "yes", "SpatialArray.multicast must be a bool, got 'yes'"),
        (
            "tech",
            "accelergy",
            "SpatialArray.tech must be a TechModel, one of ['eyeriss_normalized', 'horowitz_45nm'] or a *.yaml energy table, got 'accelergy'",
        ),
    ],
)
def test_validation_names_parameter_and_value(field, value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        SpatialArray(**{field: value})
    with pytest.raises(ValueError, match=re.escape(message)):
        dataclasses.replace(SpatialArray(), **{field: value})


def test_from_point_and_normalization():
    s = SpatialArray.from_point(
        {
            "pe_x": np.int64(16),
            "glb_kib": 64,
            "multicast": np.bool_(False),
            "tech": "eyeriss_normalized",
        }
    )
    assert (type(s.pe_x), s.pe_x, s.glb_kib, s.multicast) == (int, 16, 64.0, False)
    assert type(s.multicast) is bool and s.tech is EYERISS_NORMALIZED
    assert s.pe_y == SpatialArray().pe_y  # missing keys take defaults
    with pytest.raises(ValueError, match=r"SpatialArray.from_point: unknown keys 'glb_kb' \(did you mean 'glb_kib'\?\)"):
        SpatialArray.from_point({"glb_kb": 64})


def test_to_arch_structure_horowitz():
    s = SpatialArray(
        pe_x=8,
        pe_y=4,
        rf_w_words=64,
        rf_i_words=16,
        rf_o_words=32,
        glb_kib=64,
        dram_bw_words_per_cycle=2.0,
        glb_bw_words_per_cycle=8.0,
        clock_mhz=250,
        multicast=False,
        tech=HOROWITZ_45NM,
    )
    a = s.to_arch()
    assert [lv.name for lv in a.levels] == ["RF", "GLB", "DRAM"]
    rf, glb, dram = a.levels
    assert a.n_macs == 32 and rf.instances == 32 and rf.fanout == 1
    assert rf.capacity_words == {"W": 64, "I": 16, "O": 32}
    assert glb.capacity_words == 32768 and glb.shared  # 64 KiB at 16 bit
    assert (glb.instances, glb.fanout_x, glb.fanout_y) == (1, 8, 4)
    assert glb.multicast is False and glb.bandwidth_words_per_cycle == 8.0
    assert dram.capacity_words is None and dram.bandwidth_words_per_cycle == 2.0
    assert a.clock_mhz == 250.0 and a.area_mm2 == pytest.approx(s.area_mm2)
    # energies: RF by partition size, GLB by its size, NoC 2x MAC, DRAM 20 pJ/bit
    for op, words in rf.capacity_words.items():
        assert rf.read_energy_pj[op] == pytest.approx(tech.register_file_energy_pj(words, 16))
    assert rf.read_energy_pj["I"] < rf.read_energy_pj["O"] < rf.read_energy_pj["W"]
    assert glb.read_energy_pj["I"] == pytest.approx(tech.sram_energy_pj(64, 16))
    assert glb.noc_energy_pj == pytest.approx(2 * tech.mac_energy_pj("int16"))
    assert dram.write_energy_pj["O"] == pytest.approx(320.0)


def test_to_arch_eyeriss_table_ratios():
    a = SpatialArray(tech="eyeriss_normalized").to_arch()
    rf, glb, dram = a.levels
    mac = a.mac_energy_pj
    got = [
        rf.read_energy_pj["W"],
        glb.noc_energy_pj,
        glb.read_energy_pj["I"],
        dram.read_energy_pj["O"],
    ]
    assert [g / mac for g in got] == pytest.approx([1, 2, 6, 200])


def test_area_mm2_of_matches_objects_elementwise():
    keys = ["pe_x", "pe_y", "rf_w_words", "rf_i_words", "rf_o_words", "glb_kib", "word_bits"]
    values = [[1, 14, 32], [12, 16], [8, 224], [12], [4, 24], [16, 108.5], [8, 16, 32]]
    designs = [dict(zip(keys, v)) for v in itertools.product(*values)]
    cols = {k: np.array([d[k] for d in designs]) for k in keys}
    vec = SpatialArray.area_mm2_of(cols)
    assert vec.shape == (len(designs),)
    assert vec == pytest.approx([SpatialArray(**d).area_mm2 for d in designs], rel=1e-12)


def test_area_formula():
    s = SpatialArray(
        pe_x=4, pe_y=2, rf_w_words=10, rf_i_words=20, rf_o_words=30, glb_kib=50, word_bits=32
    )
    pe_um2 = (3495 + 137) + 60 * 32 * 4.522  # int32 MAC + 60 words of 32 flip-flops
    assert s.area_mm2 == pytest.approx(8 * pe_um2 * 1e-6 + 50 * 8192 * 0.346 / 0.7 * 1e-6)
    assert SpatialArray(tech="eyeriss_normalized").area_mm2 == SpatialArray().area_mm2


@pytest.mark.parametrize(
    "field,small,large",
    [
        ("pe_x", 8, 16),
        ("pe_y", 8, 16),
        ("rf_w_words", 16, 32),
        ("rf_i_words", 16, 32),
        ("rf_o_words", 16, 32),
        ("glb_kib", 64, 128),
        ("word_bits", 16, 32),
    ],
)
def test_area_grows(field, small, large):
    assert SpatialArray(**{field: small}).area_mm2 < SpatialArray(**{field: large}).area_mm2
