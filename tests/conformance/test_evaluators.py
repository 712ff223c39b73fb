"""Every registered evaluator against its protocol (:mod:`evaluators.testing`), and proof
that each check catches a broken evaluator."""

from __future__ import annotations

import pytest

from evaluators.registry import EVALUATORS
from evaluators.testing import (
    ConformanceError,
    check_evaluator,
    check_infeasible,
    check_metric_units,
)
from experiments.study import resolve_evaluator

SPATIAL = {"pe_x": 4, "pe_y": 2, "rf_w_words": 16, "rf_i_words": 16, "rf_o_words": 16, "glb_kib": 2}
RF = {"rf_w_words": 16, "rf_i_words": 16, "rf_o_words": 16}
# name -> the options each case resolves it with (tiny settings: each runs in seconds)
CASES = {
    "nested": {"accelerator": "spatial", "workload": "dqn[0:1]"},
    "joint": {"accelerator": "spatial", "workload": "dqn[0:2]", "hardware_names": ["pe_x", "pe_y", "glb_kib"],
              "fixed": RF},
    "hasco": {"intrinsic": "GEMV", "workload": "gemv", "sw_budget": 5},
    "d2nn": {"train_samples": 40, "test_samples": 20, "epochs": 1, "batch_size": 20, "threads": 1},
    "meloppr": {"graph": "cora", "n_queries": 4},
}


def test_every_registered_evaluator_has_a_case():
    assert set(EVALUATORS.names()) == set(CASES)


def test_nested_evaluator_conforms():
    check_evaluator(resolve_evaluator("nested", CASES["nested"]), SPATIAL, dict(SPATIAL, pe_x=0))


def test_joint_evaluator_conforms():
    """A joint point (hardware x every layer's mapping, :func:`joint_mapping_space`) is
    scored; unbuildable hardware, and hardware too small for the point's mappings, are
    Infeasible."""
    from design_space import Constraint, DesignSpace, Ordinal, PowerOfTwo
    from mappers.mapping_space import joint_mapping_space

    opts = CASES["joint"]
    hw = DesignSpace(PowerOfTwo("pe_x", 2, 8), PowerOfTwo("pe_y", 2, 4), Ordinal("glb_kib", [2, 8]),
                     constraints=[Constraint("pes", "pe_x * pe_y <= 16")])
    assert hw.names == opts["hardware_names"]
    js = joint_mapping_space(hw, opts["accelerator"], opts["workload"], fixed=opts["fixed"])
    ev = resolve_evaluator("joint", opts)
    good = js.sample(1, seed=0)[0]
    out = check_evaluator(ev, good, dict(good, pe_x=0))
    assert out.metrics["macs"] > 0 and len(out.info["breakdown"]["layers"]) == 2
    # the same mappings on the smallest array: some spatial factor no longer fits
    shrunk = next(q for q in (dict(p, pe_x=2, pe_y=2, glb_kib=2) for p in js.sample(20, seed=3))
                  if js.validate(q))
    assert "does not fit" in check_infeasible(ev, shrunk)


def test_hasco_evaluator_conforms():
    from evaluators.intrinsic_codesign import reference_point

    ev = resolve_evaluator("hasco", CASES["hasco"])
    good = reference_point("GEMV")
    check_evaluator(ev, good, dict(good, pe_x=0) if "pe_x" in good else dict(good, pe=0))


# the documented unitless metrics of each (fractions and counts; see their module docstrings)
D2NN_UNITLESS = {"acc_task1", "acc_task2", "recognition", "physical_layers", "layers_saved"}
MELOPPR_UNITLESS = {"precision", "bram36", "lut", "subgraphs"}


D2NN_POINT = {"layers": 2, "shared_depth": 1, "n": 32, "pitch_um": 36.0, "z_mm": 40.0, "phase_levels": 0,
              "loss_ratio": 1.0}


def test_d2nn_evaluator_reports_unbuildable_points():
    """Infeasible before any data are loaded or any network is trained (no data sets needed)."""
    ev = resolve_evaluator("d2nn", CASES["d2nn"])
    assert "shared_layers 3" in check_infeasible(ev, dict(D2NN_POINT, shared_depth=3))
    assert "pitch_m" in check_infeasible(ev, dict(D2NN_POINT, pitch_um=-1.0))
    assert ev._tasks is None


@pytest.mark.slow  # ~8 s in a fresh process: torch's optimizer imports torch._dynamo, and the data load
def test_d2nn_evaluator_conforms():
    """Trains a 2-layer, 32 x 32 network on 40 images per task for one epoch."""
    from evaluators.optics import data

    missing = [f"{name}: {why}" for name in ("mnist", "fashion") if (why := data.available(name))]
    if missing:
        pytest.skip("the optics data sets are not available: " + "; ".join(missing))
    ev = resolve_evaluator("d2nn", CASES["d2nn"])
    out = check_evaluator(ev, D2NN_POINT, dict(D2NN_POINT, shared_depth=3), unitless=D2NN_UNITLESS)
    assert out.metrics["physical_layers"] == 3.0 and 0.0 <= out.metrics["acc_task1"] <= 1.0
    assert out.info["fidelity"]["train_samples_per_task"] == 40


def test_meloppr_evaluator_conforms():
    """Four queries on the packaged Cora graph, with a k = 20 plan."""
    from mappers.ppr_plan import codesign_space

    ev = resolve_evaluator("meloppr", CASES["meloppr"])
    good = {"n_pes": 16, "bram_words_per_table": 8192, "int_bits": 32, "clock_mhz": 100.0, "L": 6, "l1": 3,
            "ns_mode": "count", "ns_count": 4, "c": 10, "k": 20, "pe_assignment": "split"}
    assert codesign_space(k_values=(20,)).validate(good) == []
    out = check_evaluator(ev, good, dict(good, n_pes=32), unitless=MELOPPR_UNITLESS)   # 32 PEs: over the LUTs
    assert 0.0 <= out.metrics["precision"] <= 1.0 and out.metrics["latency_ms"] > 0


def broken_units(point):
    return {"energy": 1.0, "latency_cycles": 2.0}


def crashes(point):
    if point["x"] < 0:
        raise ZeroDivisionError("x < 0")
    return {"edp": 1.0}


def test_the_checks_catch_broken_evaluators():
    check_metric_units({"energy_pj": 1.0, "edp_uj_ms": 2.0, "accuracy": 0.5})
    check_metric_units({"certified_gap": float("inf")})        # no bound certifies a layer: a value
    with pytest.raises(ConformanceError, match="'energy_pj' must be a real number, not NaN"):
        check_metric_units({"energy_pj": float("nan")})
    with pytest.raises(ConformanceError, match="'energy_pj' must be a real number"):
        check_metric_units({"energy_pj": "12"})
    with pytest.raises(ConformanceError, match="'energy' names no unit"):
        check_metric_units(broken_units({}))
    with pytest.raises(ConformanceError, match="must be Infeasible, got ZeroDivisionError"):
        check_infeasible(crashes, {"x": -1})
    with pytest.raises(ConformanceError, match="not reported infeasible"):
        check_infeasible(crashes, {"x": 1})
