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
# name -> (options, a good point, a point that cannot be built); None: not covered yet
CASES = {
    "nested": ({"accelerator": "spatial", "workload": "dqn[0:1]"}, SPATIAL, dict(SPATIAL, pe_x=0)),
    "joint": None,     # its points are hardware x every layer's mapping (tests/evaluators/test_nested.py)
    "hasco": ({"intrinsic": "GEMV", "workload": "gemv", "sw_budget": 5}, None, None),
    "d2nn": None,      # trains a network per point: covered by its slow reproduction tests
    "meloppr": None,   # runs graphs per point: covered by its slow reproduction tests
}


def test_every_registered_evaluator_has_a_case():
    assert set(EVALUATORS.names()) == set(CASES)


def test_nested_evaluator_conforms():
    opts, good, bad = CASES["nested"]
    check_evaluator(resolve_evaluator("nested", opts), good, bad)


def test_hasco_evaluator_conforms():
    from evaluators.intrinsic_codesign import reference_point

    opts = CASES["hasco"][0]
    ev = resolve_evaluator("hasco", opts)
    good = reference_point("GEMV")
    check_evaluator(ev, good, dict(good, pe_x=0) if "pe_x" in good else dict(good, pe=0))


def broken_units(point):
    return {"energy": 1.0, "latency_cycles": 2.0}


def crashes(point):
    if point["x"] < 0:
        raise ZeroDivisionError("x < 0")
    return {"edp": 1.0}


def test_the_checks_catch_broken_evaluators():
    check_metric_units({"energy_pj": 1.0, "edp_uj_ms": 2.0, "accuracy": 0.5})
    with pytest.raises(ConformanceError, match="'energy' names no unit"):
        check_metric_units(broken_units({}))
    with pytest.raises(ConformanceError, match="must be Infeasible, got ZeroDivisionError"):
        check_infeasible(crashes, {"x": -1})
    with pytest.raises(ConformanceError, match="not reported infeasible"):
        check_infeasible(crashes, {"x": 1})
