"""Hardware-in-the-loop pieces: the measuring evaluator (cache, noise reported), a study
over it, the screen-then-measure scheme and the GP's learned noise."""

import numpy as np
import pytest

from evaluators.base import Evaluation
from evaluators.kernels import blocked
from evaluators.kernels.hil import MeasuredKernelEvaluator, screen_then_measure
from experiments import Study
from optimizer.bo.models import learned_noise

FAST = dict(repeats=2, min_time_s=0.002, max_time_s=0.01)


def test_measured_evaluator_caches_and_reports_noise():
    ev = MeasuredKernelEvaluator(32, 32, 32, **FAST)
    p = {"tile_m": 16, "tile_n": 32, "tile_k": 8, "order": ("M", "N", "K")}
    a = ev(p)
    assert isinstance(a, Evaluation)
    assert set(a.metrics) >= {"latency_s", "latency_iqr_s", "noise_rel", "gflops"}
    assert a.metrics["latency_s"] > 0 and a.metrics["noise_rel"] >= 0
    assert len(a.info["repeat_medians_s"]) == 2
    assert ev(dict(p)) is a and ev.cache_hits == 1 and ev.n_measured == 1


def test_a_study_measures_real_kernels(tmp_path):
    layer = blocked.gemm_layer(32, 32, 32)
    space = blocked.tile_space(layer, tiles=(8, 16))
    ev = MeasuredKernelEvaluator(32, 32, 32, **FAST)
    s = Study.create("hil", space, {"latency_s": "min"}, evaluator=ev, optimizer="random",
                     storage=f"sqlite:///{tmp_path}/hil.db", seed=0)
    s.optimize(5, workers=1, executor="inline", progress=False)
    df = s.trials_dataframe()
    assert (df["status"] == "COMPLETE").sum() == 5
    assert (df["metrics_latency_s"] > 0).all()
    noise = learned_noise(space, s.trials, "latency_s")
    assert noise["n"] == 5 and np.isfinite(noise["noise_var_std"]) and noise["noise_var_std"] > 0


def _toy():
    layer = blocked.gemm_layer(64, 64, 64)
    space = blocked.tile_space(layer, tiles=(8, 16, 32))
    cands = list(space.grid())

    def truth(p):
        return abs(np.log2(p["tile_m"]) - 4) + abs(np.log2(p["tile_n"]) - 5) + 0.1 * abs(np.log2(p["tile_k"]) - 3) \
            + 0.01 * ("MNK".index(p["order"][0]))

    return space, cands, truth


def test_screen_then_measure_with_a_perfect_model_finds_the_optimum_in_one():
    _, cands, truth = _toy()
    best = min(cands, key=truth)
    r = screen_then_measure(cands, lambda ps: np.array([truth(p) for p in ps]), truth, budget=1)
    assert r.n_measurements == 1 and r.best_point == best


def test_screen_then_measure_respects_budget_and_corrects_a_biased_model():
    space, cands, truth = _toy()
    calls = []

    def meas(p):
        calls.append(p)
        return truth(p)

    # the model is wrong about tile_k: the neighbour phase corrects part of it
    def biased(ps):
        return np.array([abs(np.log2(p["tile_m"]) - 4) + abs(np.log2(p["tile_n"]) - 5) - 0.2 * np.log2(p["tile_k"])
                         for p in ps])

    r = screen_then_measure(cands, biased, meas, budget=12, n_screen=4, neighbors=space.neighbors)
    assert r.n_measurements == len(calls) <= 12
    assert r.best_measured_s == min(v for _, v in r.measured)
    screened = min(v for _, v in r.measured[:4])
    assert r.best_measured_s < screened  # the neighbour phase improved on the screen


def test_screen_then_measure_rejects_empty():
    with pytest.raises(ValueError):
        screen_then_measure([], lambda ps: np.zeros(0), lambda p: 0.0, budget=3)


def test_predicted_evaluator_is_the_cheap_fidelity(tmp_path):
    from evaluators.kernels import calibrate as cal
    from evaluators.kernels.cpu_model import datasheet_model
    from evaluators.kernels.hil import PredictedKernelEvaluator

    p = {"tile_m": 32, "tile_n": 64, "tile_k": 16, "order": ("K", "M", "N")}
    ds = PredictedKernelEvaluator(64, 64, 64)
    assert ds.source == "datasheet" and ds(p).metrics["latency_s"] > 0
    slow = datasheet_model().replace(block_overhead_s=1e-3)
    path = cal.Calibration(device="cpu", device_name="x", model="CPUModel", constants=slow.constants(),
                           uncalibrated={}, fit={}).save(tmp_path / "c.json")
    ev = PredictedKernelEvaluator(64, 64, 64, calibration=str(path))
    assert ev.source == str(path)
    assert ev(p).metrics["latency_s"] > ds(p).metrics["latency_s"]  # 32 blocks x 1 ms
    with pytest.raises(ValueError, match="device"):
        PredictedKernelEvaluator(8, 8, 8, device="tpu")


def test_best_statistic_is_reported_and_not_above_the_median():
    ev = MeasuredKernelEvaluator(32, 32, 32, statistic="best", **FAST)
    m = ev({"tile_m": 16, "tile_n": 16, "tile_k": 16, "order": ("K", "M", "N")}).metrics
    assert m["latency_s"] == m["latency_best_s"] <= m["latency_median_s"]
    with pytest.raises(ValueError, match="statistic"):
        MeasuredKernelEvaluator(8, 8, 8, statistic="mean")
