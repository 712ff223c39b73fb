"""HASCO's intrinsic accelerators: parameters, area, the lowering, a hand-computed GEMM and
physical bounds on random schedules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelerators import tech
from accelerators.intrinsic import (
    ACC_BANKS,
    BANK_PERIPHERY_MM2,
    PE_REGISTER_BITS,
    IntrinsicAccelerator,
)
from evaluators.loopnest import evaluate_batch
from mappers import tensor_ir as ir
from mappers import zoo
from mappers.schedule import ScheduleProblem


def test_area_by_hand():
    acc = IntrinsicAccelerator("GEMM", 16, 16, sp_kib=256, local_kib=128, dataflow="OS", sp_banks=4)
    # PE: int8 multiplier 282 um^2 + int32 adder 137 um^2 (Horowitz), 48 register bits
    pe_um2 = 282.0 + 137.0 + 48 * 4.522
    sram = (256 + 128) * 8192 * 0.346 / 0.7 * 1e-6
    periphery = (4 + 2) * 32 * 8192 * 0.346 / 0.7 * 1e-6 * 0.3
    assert acc.area_mm2 == pytest.approx(256 * pe_um2 * 1e-6 + sram + periphery, rel=1e-12)
    assert PE_REGISTER_BITS == 48 and ACC_BANKS == 2
    assert BANK_PERIPHERY_MM2 == pytest.approx(0.0389, abs=1e-4)
    # vectorized form agrees, and more banks cost area
    cols = {"pe": np.array([16, 16]), "sp_kib": np.array([256, 256]), "local_kib": np.array([128, 128]),
            "sp_banks": np.array([4, 8])}
    a = IntrinsicAccelerator.area_mm2_of(cols)
    assert a[0] == pytest.approx(acc.area_mm2) and a[1] - a[0] == pytest.approx(4 * BANK_PERIPHERY_MM2)


def test_lowering_structure():
    acc = IntrinsicAccelerator("CONV", pe_x=8, pe_y=4, sp_kib=64, local_kib=32, dataflow="FIXED",
                               sp_banks=2, dma_bus_bits=256)
    arch = acc.to_arch()
    assert [lv.name for lv in arch.levels] == ["REG", "ACC", "SP", "DRAM"]
    reg, accl, sp, dram = arch.levels
    assert reg.instances == 32 and reg.tensors == frozenset({"W"})       # NVDLA-style: weights stay
    assert (accl.fanout_x, accl.fanout_y) == (8, 4) and accl.capacity_of("O") == 32 * 1024 / 4
    assert sp.capacity_words == 64 * 1024 and sp.tensors == frozenset({"W", "I"})
    assert sp.bandwidth_words_per_cycle == 2 * 8 and dram.bandwidth_words_per_cycle == 32
    assert arch.dataflow is None and arch.intrinsic == "CONV"            # no systolic timing
    assert arch.n_macs == 32
    # smaller banks: cheaper accesses (Horowitz SRAM fit)
    assert sp.read_energy_pj["W"] == pytest.approx(tech.sram_energy_pj(32, 8))
    g = IntrinsicAccelerator("GEMM", dataflow="WS").to_arch()
    assert g.dataflow == "WS" and g.levels[0].tensors == frozenset({"W"})
    assert IntrinsicAccelerator("GEMM", dataflow="OS").to_arch().levels[0].tensors == frozenset({"O"})


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="dataflow must be one of \\['FIXED'\\]"):
        IntrinsicAccelerator("CONV", dataflow="WS")
    with pytest.raises(ValueError, match="intrinsic must be one of"):
        IntrinsicAccelerator("TPU")
    with pytest.raises(ValueError, match="pe_x must be a positive integer"):
        IntrinsicAccelerator("GEMM", pe_x=0)
    with pytest.raises(ValueError, match="dma_bus_bits must be a multiple of 8"):
        IntrinsicAccelerator("GEMM", dma_bus_bits=100)
    with pytest.raises(ValueError, match="sp_kib must be a positive finite number"):
        IntrinsicAccelerator("GEMM", sp_kib=-1)
    with pytest.raises(ValueError, match="absolute table"):
        IntrinsicAccelerator("GEMM", tech="eyeriss_normalized")
    with pytest.raises(ValueError, match="unknown keys 'bogus'"):
        IntrinsicAccelerator.from_point({"bogus": 1})
    a = IntrinsicAccelerator.from_point({"pe": 8, "sp_kib": np.int64(128)}, intrinsic="gemv", dataflow="FIXED")
    assert (a.pe_x, a.pe_y, a.intrinsic, a.sp_kib) == (8, 8, "GEMV", 128)


def _gemm16_point(pr, db):
    return {"partition": pr.keys[0], "stream_k": 16, "acc_m": 1, "sp_m": 1, "acc_n": 1, "sp_n": 1,
            "acc_k": 1, "sp_k": 1, "order_acc": ("m", "n", "k"), "order_sp": ("m", "n", "k"),
            "order_dram": ("m", "n", "k"), "double_buffer": db}


def test_hand_computed_gemm_on_an_output_stationary_array():
    """C[16,16] = A[16,16] B[16,16] on a 16x16 OS array, one intrinsic call streaming k.

    Compute: one SCALE-Sim OS fold, T + rows + cols - 2 = 16 + 16 + 16 - 2 = 46 cycles.
    DRAM: A and B read once (256 + 256 words), C written once (256): 768 int8 words on a
    128-bit bus (16 words/cycle) = 48 cycles. Scratchpad: 512 words in + 512 out to the
    array (one read per element, multicast along rows/columns) over 4 banks x 16 words =
    16 cycles; accumulator: 256 writes + 256 reads over 2 x 16 = 16 cycles.
    Double buffered: max(46, 16, 16, 48) = 48. Not: max(46, 16, 16) + 48 = 94.
    Energy: 4096 MACs x (0.2 + 0.1) pJ, DRAM 768 x 8 bits x 20 pJ/bit = 122,880 pJ.
    """
    acc = IntrinsicAccelerator("GEMM", 16, 16, sp_kib=256, local_kib=128, dataflow="OS", sp_banks=4,
                               dma_bus_bits=128)
    pr = ScheduleProblem(ir.gemm(16, 16, 16), acc.to_arch(), evaluate_batch)
    for db, want in ((True, 48), (False, 94)):
        r = pr.evaluate([_gemm16_point(pr, db)])
        assert r["valid"][0] and r["compute_cycles"][0] == 46
        assert r["latency_cycles"][0] == want and r["dram_words"][0] == 768
    res = evaluate_batch(pr.layers[0], pr.arch, pr.batch(pr.space.columns([_gemm16_point(pr, True)])))
    assert res.level_energy_pj[0][3] == pytest.approx(768 * 160.0)
    assert float(res.mac_energy_pj[0]) == pytest.approx(4096 * 0.3)
    np.testing.assert_allclose(res.bandwidth_cycles[0], [0, 16, 16, 48])


CASES = [
    ("GEMM", "WS", ir.Computation.from_layer(zoo.resnet50()[2])),
    ("GEMM", "OS", ir.gemm(M=100, N=70, K=300)),
    ("CONV", "FIXED", ir.conv2d(N=1, K=40, C=24, P=14, Q=14, R=3, S=3)),
    ("GEMV", "FIXED", ir.gemv(M=96, L=200, B=3)),
    ("DOT", "FIXED", ir.depthwise(G=32, P=28, Q=28, R=3, S=3)),
]


@pytest.mark.parametrize("kind,df,comp", CASES, ids=[c[0] + "-" + c[2].kind for c in CASES])
def test_physical_bounds_on_random_schedules(kind, df, comp):
    acc = IntrinsicAccelerator(kind, pe_x=12, pe_y=8, sp_kib=64, local_kib=32, dataflow=df, sp_banks=2,
                               dma_bus_bits=64)
    pr = ScheduleProblem(comp, acc.to_arch(), evaluate_batch)
    pts = pr.sample(300, np.random.default_rng(1))
    r = pr.evaluate(pts)
    ok = r["valid"]
    assert ok.mean() > 0.9
    lat, comp_c, dram = r["latency_cycles"][ok], r["compute_cycles"][ok], r["dram_words"][ok]
    # no more than one MAC per PE per cycle
    assert (comp_c >= math.ceil(comp.macs / acc.n_pes)).all() and (lat >= comp_c).all()
    # every input word read and every output word written at least once
    compulsory = sum(math.prod(comp.shape(op.name)) for op in comp.operands)
    assert (dram >= compulsory).all()
    assert (lat >= dram / acc.dram_bandwidth_words_per_cycle - 1e-9).all()
    e_min = comp.macs * acc.mac_energy_pj + compulsory * acc.dram_access_energy_pj
    assert (r["energy_pj"][ok] >= e_min * (1 - 1e-9)).all()
    # power is energy over time
    p = acc.power_mw(r["energy_pj"][ok], lat)
    assert np.allclose(p, r["energy_pj"][ok] * 1e-12 / (lat / 1e9) * 1e3)
