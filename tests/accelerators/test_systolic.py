"""SystolicArray: validation, from_point, area (scalar and vectorized), lowering."""

from __future__ import annotations

import dataclasses
import itertools
import re

import numpy as np
import pytest

from accelerators import ArchSpec, SystolicArray, tech
from accelerators.tech import EYERISS_NORMALIZED, HOROWITZ_45NM
from design_space import Constraint, DesignSpace, Ordinal, PowerOfTwo


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("rows", 0, "SystolicArray.rows must be a positive integer, got 0"),
        ("rows", 2.5, "SystolicArray.rows must be a positive integer, got 2.5"),
        ("rows", True, "SystolicArray.rows must be a positive integer, got True"),
        ("cols", -4, "SystolicArray.cols must be a positive integer, got -4"),
        ("cols", "8", "SystolicArray.cols must be a positive integer, got '8'"),
        ("dataflow", "RS", "SystolicArray.dataflow must be one of ['OS', 'WS', 'IS'], got 'RS'"),
        (
            "ifmap_sram_kib",
            0,
            "SystolicArray.ifmap_sram_kib must be a positive finite number, got 0",
        ),
        (
            "filter_sram_kib",
            -1.0,
            "SystolicArray.filter_sram_kib must be a positive finite number, got -1.0",
        ),
        (
            "ofmap_sram_kib",
            float("nan"),
            "SystolicArray.ofmap_sram_kib must be a positive finite number, got nan",
        ),
        ("ifmap_sram_kib", 1e-6, "SystolicArray.ifmap_sram_kib must hold at least one 16-bit word"),
        (
            "dram_bw_words_per_cycle",
            0.0,
            "SystolicArray.dram_bw_words_per_cycle must be a positive finite number, got 0.0",
        ),
        (
            "clock_mhz",
            float("inf"),
            "SystolicArray.clock_mhz must be a positive finite number, got inf",
        ),
        ("word_bits", 12, "SystolicArray.word_bits must be one of [8, 16, 32], got 12"),
        ("tech", "tsmc7", "SystolicArray.tech must be a TechModel, one of"),
    ],
)
def test_validation_names_parameter_and_value(field, value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        SystolicArray(**{field: value})
    with pytest.raises(ValueError, match=re.escape(message)):
        dataclasses.replace(SystolicArray(), **{field: value})


def test_numbers_are_normalized():
    s = SystolicArray(
        rows=np.int64(8), cols=8.0, ifmap_sram_kib=np.float64(32), word_bits=np.int32(8)
    )
    assert type(s.rows) is int and type(s.cols) is int and type(s.word_bits) is int
    assert type(s.ifmap_sram_kib) is float
    s.validate()  # callable on its own
    assert SystolicArray(tech="eyeriss_normalized").tech is EYERISS_NORMALIZED


def test_from_point():
    s = SystolicArray.from_point({"rows": 32, "dataflow": "OS", "tech": "horowitz_45nm"})
    assert (s.rows, s.cols, s.dataflow, s.tech) == (32, SystolicArray().cols, "OS", HOROWITZ_45NM)
    with pytest.raises(ValueError, match=r"unknown keys 'banks'; 'row' \(did you mean 'rows'\?\)"):
        SystolicArray.from_point({"row": 4, "banks": 2})
    with pytest.raises(ValueError, match=r"SystolicArray\.rows must be a positive integer"):
        SystolicArray.from_point({"rows": 0})


def test_to_arch_structure():
    s = SystolicArray(
        rows=8,
        cols=4,
        dataflow="OS",
        ifmap_sram_kib=64,
        filter_sram_kib=32,
        ofmap_sram_kib=16,
        dram_bw_words_per_cycle=12.0,
        clock_mhz=500,
        word_bits=16,
    )
    a = s.to_arch()
    assert isinstance(a, ArchSpec)
    assert [lv.name for lv in a.levels] == ["PE", "SRAM", "DRAM"]
    pe, sram, dram = a.levels
    assert a.n_macs == 32 and pe.instances == 32 and pe.fanout == 1
    assert pe.capacity_words == {"W": 1, "I": 1, "O": 1}
    # 64 KiB at 16 bit = 64 * 1024 * 8 / 16 = 32768 words
    assert sram.capacity_words == {"I": 32768, "W": 16384, "O": 8192}
    assert (sram.instances, sram.fanout_x, sram.fanout_y, sram.multicast) == (1, 4, 8, True)
    assert dram.capacity_words is None and dram.bandwidth_words_per_cycle == 12.0
    assert a.dataflow == "OS" and a.array_rows == 8 and a.array_cols == 4
    assert (a.word_bits, a.clock_mhz) == (16, 500.0)
    assert a.area_mm2 == pytest.approx(s.area_mm2)
    # energies (Horowitz)
    assert a.mac_energy_pj == pytest.approx(tech.mac_energy_pj("int16"))
    reg = tech.register_file_energy_pj(1, 16)
    assert pe.read_energy_pj == pytest.approx(dict.fromkeys("WIO", reg))
    assert pe.write_energy_pj == pytest.approx(dict.fromkeys("WIO", reg))
    assert sram.read_energy_pj["I"] == pytest.approx(tech.sram_energy_pj(64, 16))
    assert sram.read_energy_pj["W"] == pytest.approx(tech.sram_energy_pj(32, 16))
    assert sram.read_energy_pj["O"] == pytest.approx(tech.sram_energy_pj(16, 16))
    assert sram.noc_energy_pj == pytest.approx(reg)
    assert dram.read_energy_pj["W"] == pytest.approx(320.0)


def test_to_arch_capacity_at_8_bits_and_eyeriss_table():
    s = SystolicArray(ifmap_sram_kib=64, word_bits=8, tech="eyeriss_normalized")
    a = s.to_arch()
    pe, sram, dram = a.levels
    assert sram.capacity_words["I"] == 65536
    mac = tech.mac_energy_pj("int8")
    assert a.mac_energy_pj == pytest.approx(mac)
    assert pe.read_energy_pj["W"] / mac == pytest.approx(1)
    assert sram.noc_energy_pj / mac == pytest.approx(2)
    assert sram.read_energy_pj["I"] / mac == pytest.approx(6)
    assert dram.read_energy_pj["O"] / mac == pytest.approx(200)


def _grid():
    keys = ["rows", "cols", "ifmap_sram_kib", "filter_sram_kib", "ofmap_sram_kib", "word_bits"]
    values = [[1, 16, 128], [4, 64], [8, 96.5], [16, 2048], [0.5, 64], [8, 16, 32]]
    return [dict(zip(keys, v)) for v in itertools.product(*values)]


def test_area_mm2_of_matches_objects_elementwise():
    designs = _grid()
    cols = {k: np.array([d[k] for d in designs]) for k in designs[0]}
    cols["unrelated"] = np.zeros(len(designs))  # other parameters are ignored
    vec = SystolicArray.area_mm2_of(cols)
    assert isinstance(vec, np.ndarray) and vec.shape == (len(designs),)
    assert vec == pytest.approx([SystolicArray(**d).area_mm2 for d in designs], rel=1e-12)
    # word_bits is optional (default 16)
    no_bits = {k: v for k, v in cols.items() if k != "word_bits"}
    at16 = [SystolicArray(**{**d, "word_bits": 16}).area_mm2 for d in designs]
    assert SystolicArray.area_mm2_of(no_bits) == pytest.approx(at16, rel=1e-12)
    with pytest.raises(KeyError, match="needs a 'cols' column"):
        SystolicArray.area_mm2_of({"rows": np.ones(2)})


def test_area_formula():
    s = SystolicArray(
        rows=16, cols=8, ifmap_sram_kib=10, filter_sram_kib=20, ofmap_sram_kib=30, word_bits=8
    )
    pe_um2 = (282 + 36) + 3 * 8 * 4.522  # int8 MAC + 3 operand registers of 8 flip-flops
    sram_mm2 = 60 * 8192 * 0.346 / 0.7 * 1e-6
    assert s.area_mm2 == pytest.approx(16 * 8 * pe_um2 * 1e-6 + sram_mm2)


@pytest.mark.parametrize(
    "field,small,large",
    [
        ("rows", 8, 16),
        ("cols", 8, 16),
        ("ifmap_sram_kib", 32, 64),
        ("filter_sram_kib", 32, 64),
        ("ofmap_sram_kib", 32, 64),
        ("word_bits", 8, 16),
    ],
)
def test_area_grows(field, small, large):
    assert SystolicArray(**{field: small}).area_mm2 < SystolicArray(**{field: large}).area_mm2


def test_area_as_a_vectorized_known_constraint():
    space = DesignSpace(
        PowerOfTwo("rows", 4, 256),
        PowerOfTwo("cols", 4, 256),
        Ordinal("ifmap_sram_kib", [16, 64, 256, 1024]),
        Ordinal("filter_sram_kib", [16, 64, 256]),
        Ordinal("ofmap_sram_kib", [16, 64, 256]),
        constraints=[Constraint("area", lambda p: SystolicArray.area_mm2_of(p) <= 4.0)],
    )
    points = space.sample(200, seed=0)
    assert len(points) == 200
    assert all(SystolicArray.from_point(p).area_mm2 <= 4.0 for p in points)
