"""The nested evaluator before and during a study: a misspelt hardware key is an error,
not an infeasible design; a constraint rule's refusal is INFEASIBLE, not FAILED; and
``preflight`` catches what no trial could survive, naming it."""

from __future__ import annotations

import pytest

from accelerators.base import UnknownParameter
from design_space import DesignSpace, Ordinal, PowerOfTwo
from evaluators.base import EvalStatus, Infeasible
from evaluators.nested import NestedEvaluator
from experiments.executors import Task, run_evaluation
from experiments.preflight import preflight
from mappers.workloads import conv2d

SMALL = [conv2d("c1", K=8, C=4, P=6, Q=6, R=3, S=3), conv2d("c2", K=8, C=8, P=4, Q=4, R=1, S=1)]


def test_a_misspelt_hardware_key_is_an_error_with_a_hint():
    ev = NestedEvaluator("spatial", SMALL)
    with pytest.raises(UnknownParameter, match=r"unknown keys 'glb_kb' \(did you mean 'glb_kib'\?\)"):
        ev({"pe_x": 4, "glb_kb": 64})
    r = run_evaluation(ev, Task(0, {"pe_x": 4, "glb_kb": 64}, 0))
    assert r.status is EvalStatus.FAILED              # not INFEASIBLE: no point of the space is fine
    space = DesignSpace(PowerOfTwo("pe_x", 4, 16), Ordinal("glb_kb", [32, 64]))
    with pytest.raises(UnknownParameter, match="glb_kb"):
        preflight(space, ev)


def test_a_row_stationary_refusal_is_infeasible():
    """A filter taller than the PE array: the rule refuses the layer on this design."""
    ev = NestedEvaluator("spatial", [conv2d("tall", K=2, C=2, P=2, Q=2, R=13, S=1)],
                         mapper={"name": "exact", "constraints": "row-stationary"})
    with pytest.raises(Infeasible, match=r"layer 'tall'.*refuses.*R=13"):
        ev({"pe_y": 12})
    r = run_evaluation(ev, Task(0, {"pe_y": 12}, 0))
    assert r.status is EvalStatus.INFEASIBLE and "exceeds the 12 PE rows" in r.reason
    assert ev({"pe_y": 16}).metrics["edp_uj_ms"] > 0     # 16 rows hold the 13-row set


def test_preflight_reports_and_maps_one_layer():
    space = DesignSpace(PowerOfTwo("pe_x", 4, 16), PowerOfTwo("pe_y", 4, 16), Ordinal("glb_kib", [32, 64]),
                        Ordinal("rf_w_words", [64, 224]), Ordinal("rf_i_words", [12, 24]),
                        Ordinal("rf_o_words", [24, 48]))
    lines = preflight(space, NestedEvaluator("spatial", SMALL), n_designs=4)
    text = "\n".join(lines)
    assert "hardware: 4 of 4 sampled designs build as SpatialArray" in text
    assert "vectorized area_mm2_of agrees" in text
    assert "mapping: AnytimeMapper mapped 'c1' on the first design" in text
    assert "each of the 2 distinct layers fits some sampled design" in text


def test_preflight_refuses_a_layer_no_sampled_design_can_hold():
    """Row-stationary keeps a 3-weight filter row in the RF: RFs of 1 or 2 weights fit none."""
    space = DesignSpace(PowerOfTwo("pe_x", 4, 16), Ordinal("rf_w_words", [1, 2]))
    ev = NestedEvaluator("spatial", SMALL, mapper={"name": "exact", "constraints": "row-stationary"})
    with pytest.raises(ValueError, match=r"workload layer 'c1' cannot be mapped on any of the 4 sampled "
                                         r"designs: level 'RF' is [12] words too small for W"):
        preflight(space, ev, n_designs=4)
