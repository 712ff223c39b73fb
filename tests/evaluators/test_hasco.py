"""HASCO's co-design problem and evaluator: hardware spaces, workloads, the generator's
unknown constraint, network totals, and MOBO's two ways of handling infeasible points."""

from __future__ import annotations

import math

import pytest

from evaluators import intrinsic_codesign as hasco
from evaluators.base import Infeasible
from evaluators.intrinsic_codesign import HascoCoDesign
from evaluators.loopnest import evaluate_batch
from mappers import zoo
from mappers.base import NoLegalMapping
from mappers.schedule import ScheduleMapper
from mappers.workloads import total_macs
from optimizer import Trial, TrialStatus, make_optimizer, parse_objectives


def test_hardware_spaces():
    g = hasco.hardware_space("GEMM")
    # pe 3 x (sp, local) pairs with local <= sp: 128:{64,128}, 256:{3}, 512:{3} = 8
    # x dataflow 2 x banks 8 x dma 2
    assert g.cardinality() == 3 * 8 * 2 * 8 * 2
    assert "dataflow" not in hasco.hardware_space("GEMV").names
    c = hasco.hardware_space("conv")
    assert {"pe_x", "pe_y"} <= set(c.names)
    # CONV: x, y in 4..32 (29 each), (sp, local) pairs with local <= sp: 2+3+4+4 = 13,
    # banks 8, dma 3
    assert c.cardinality() == 29 * 29 * 13 * 8 * 3
    with pytest.raises(ValueError, match="unknown intrinsic 'TPU'"):
        hasco.hardware_space("TPU")


def test_area_budget_is_a_known_constraint():
    from accelerators.intrinsic import IntrinsicAccelerator

    cap = hasco.reference_area_mm2("GEMM")
    assert cap == pytest.approx(hasco.build("GEMM", hasco.reference_point("GEMM")).area_mm2)
    capped = hasco.hardware_space("GEMM", cap)
    n = capped.cardinality()
    assert 0 < n < 768
    assert capped.validate(hasco.reference_point("GEMM")) == []        # the reference fits exactly
    for p in capped.grid():
        assert IntrinsicAccelerator.from_point(p, intrinsic="GEMM").area_mm2 <= cap * (1 + 1e-12)
    over = [p for p in hasco.hardware_space("GEMM").grid()
            if IntrinsicAccelerator.from_point(p, intrinsic="GEMM").area_mm2 > cap]
    assert len(over) == 768 - n
    with pytest.raises(ValueError, match="area_cap_mm2 must be > 0"):
        hasco.hardware_space("GEMM", 0.0)


def test_workloads():
    conv = hasco.workload("resnet50", "CONV")
    gemm = hasco.workload("resnet50", "GEMM")
    assert sum(c.macs * c.repeat for c in conv) == total_macs(zoo.resnet50())
    assert conv[-1].kind == "conv" and gemm[-1].kind == "gemm"          # fc as a 1x1 conv
    xc = hasco.workload("xception", "GEMM")
    assert sum(c.macs * c.repeat for c in xc) == total_macs(zoo.xception(image=224))
    assert [c.name for c in hasco.workload("conv2d", "CONV")] == ["conv_1", "conv_2"]
    assert hasco.KERNELS["conv2d"][0].loops == {"n": 1, "k": 32, "c": 128, "p": 30, "q": 254, "r": 3, "s": 3}
    with pytest.raises(ValueError, match="unknown workload 'vgg'"):
        hasco.workload("vgg", "GEMM")


def test_generator_limit_is_an_unknown_constraint():
    ev = HascoCoDesign("GEMV", "gemv", sw_budget=10)
    p = dict(hasco.reference_point("GEMV"), sp_kib=512, sp_banks=2)
    assert hasco.hardware_space("GEMV").validate(p) == []               # legal in the space
    with pytest.raises(Infeasible, match="scratchpad bank of 256 KiB exceeds the 128 KiB"):
        ev(p)
    with pytest.raises(Infeasible, match="invalid hardware"):
        ev(dict(p, sp_banks=0))


def test_network_totals_and_bounds():
    ev = HascoCoDesign("CONV", "conv2d", sw_budget=20)
    ref = hasco.reference_point("CONV")
    m = ev(ref).metrics
    acc = hasco.build("CONV", ref)
    macs = sum(c.macs for c in ev.comps)
    assert m["latency_cycles"] >= macs / acc.n_pes
    assert m["latency_ms"] == pytest.approx(m["latency_cycles"] / 1e6)
    assert m["power_mw"] == pytest.approx(m["energy_uj"] * 1e-6 / (m["latency_ms"] * 1e-3) * 1e3)
    assert m["area_mm2"] == pytest.approx(acc.area_mm2) and 0 < m["utilization"] <= 1
    # the software search never loses to the default schedule it starts from
    d = HascoCoDesign("CONV", "conv2d", schedule="default")(ref).metrics
    assert m["latency_cycles"] <= d["latency_cycles"]


def test_mttkrp_needs_a_gemv_for_both_stages():
    comp = hasco.KERNELS["mttkrp"][1]
    acc = hasco.build("GEMV", hasco.reference_point("GEMV"))
    r = ScheduleMapper(budget=10).map(comp, acc.to_arch(), evaluate_batch)
    assert len(r.info["partitions"]) == 2 and math.isfinite(r.latency_cycles)
    with pytest.raises(NoLegalMapping, match="has no partition onto the GEMM intrinsic"):
        ScheduleMapper(budget=10).map(comp, hasco.build("GEMM", hasco.reference_point("GEMM")).to_arch(),
                                      evaluate_batch)


def test_mobo_reject_mode_ignores_infeasible_points(monkeypatch):
    import optimizer.bo.driver as driver

    seen: list[int] = []

    def fake_fit(X, y, space, seed):  # record what the objective GPs would be fitted on
        seen.append(X.shape[0])
        return None

    monkeypatch.setattr(driver, "fit_gp", fake_fit)
    sp = hasco.hardware_space("GEMV")
    objs = parse_objectives({"latency_ms": "min", "area_mm2": "min"})
    with pytest.raises(ValueError, match="infeasible must be 'model' or 'reject'"):
        make_optimizer("mobo", sp, objs, 0, {"infeasible": "ignore"})
    pts = sp.sample(6, 0)
    hist = [Trial(i, p, TrialStatus.INFEASIBLE if i % 2 else TrialStatus.COMPLETE,
                  {} if i % 2 else {"latency_ms": 1.0 + i, "area_mm2": 5.0 - i}) for i, p in enumerate(pts)]
    for mode, expect_model, n_train in (("model", True, 6), ("reject", False, 3)):
        seen.clear()
        opt = make_optimizer("mobo", sp, objs, 0, {"n_init": 2, "infeasible": mode})
        opt.tell(hist)
        fitted = opt._fit(opt.trials, 6)
        assert (fitted["feas"].mode == "gpc") is expect_model
        # "model": infeasible points enter the objective GPs at the worst value;
        # "reject": the GPs see the 3 feasible points only
        assert seen == [n_train, n_train]
        assert float(fitted["feas"].prob(sp.encode(pts[1:2]))[0]) < 1.0 or not expect_model
