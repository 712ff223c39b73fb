"""The co-design evaluator and the shipped study config."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluators.base import Infeasible
from evaluators.optics import data
from evaluators.optics.multitask_evaluator import D2NNCoDesign, loss_weights

CONFIG = Path(__file__).resolve().parents[3] / "experiments" / "configs" / "d2nn_codesign.yaml"
POINT = {"layers": 2, "shared_depth": 1, "n": 16, "pitch_um": 36.0, "z_mm": 30.0, "phase_levels": 16,
         "loss_ratio": 2.0}


def test_loss_weights_ratio_and_mean():
    a, b = loss_weights(4.0)
    assert a / b == pytest.approx(4.0) and (a + b) / 2 == pytest.approx(1.0)


def test_config_loads_and_known_constraints_reject_bad_points():
    from experiments.config import load_config

    loaded = load_config(CONFIG)
    assert set(loaded.config.objectives) == {"acc_task1", "acc_task2", "physical_layers"}
    pts = loaded.space.sample(64, seed=0)
    assert all(p["shared_depth"] < p["layers"] for p in pts)
    cols = {"layers": np.array([2, 2]), "shared_depth": np.array([1, 3]), "pitch_um": np.array([36.0, 36.0]),
            "z_mm": np.array([30.0, 30.0]), "n": np.array([32, 32])}
    con = loaded.space.constraints[0]
    assert con.predicate(cols).tolist() == [True, False]


def test_min_recognition_must_be_a_fraction():
    for bad in (0.0, 1.5, -0.2):
        with pytest.raises(ValueError, match="min_recognition"):
            D2NNCoDesign(min_recognition=bad)


def test_structurally_impossible_point_is_infeasible():
    with pytest.raises(Infeasible, match="shared_layers"):
        D2NNCoDesign()(dict(POINT, shared_depth=3))
    with pytest.raises(Infeasible, match="lambda/2"):
        D2NNCoDesign()(dict(POINT, pitch_um=0.2))


def test_one_cheap_evaluation_reports_metrics():
    for name in ("mnist", "fashion"):
        why = data.available(name)
        if why:
            pytest.skip(f"{name} data not installed: {why}")
    ev = D2NNCoDesign(train_samples=40, test_samples=20, epochs=1, batch_size=20)(POINT, seed=3)
    m = ev.metrics
    assert 0 <= m["acc_task1"] <= 1 and 0 <= m["acc_task2"] <= 1 and 0 <= m["recognition"] <= 1
    assert m["physical_layers"] == 3 and m["layers_saved"] == 1
    assert m["area_mm2"] == pytest.approx(3 * (16 * 0.036) ** 2)
    assert ev.info["fidelity"]["train_samples_per_task"] == 40
    assert ev.constraints == {}  # no recognition constraint unless asked for
    ev = D2NNCoDesign(train_samples=40, test_samples=20, epochs=1, batch_size=20, min_recognition=0.9)(POINT, seed=3)
    assert ev.constraints["recognition_shortfall"] == pytest.approx(0.9 - ev.metrics["recognition"])
