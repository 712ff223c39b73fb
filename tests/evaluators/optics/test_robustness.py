"""Robustness sweeps of single- and multi-task networks: one row per task and level."""

from __future__ import annotations

import pytest
import torch

from accelerators.diffractive import DiffractiveAccelerator
from evaluators.optics import robustness as rb
from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.train import TaskData, TrainConfig, train

SPEC = DiffractiveAccelerator(n=16, pad=8, z_m=0.02, layers=2, detector_regions=2, detector_size_px=4)
SWEEPS = (("phase noise", "phase_sigma_rad", (0.0, 0.5, 3.0)), ("lateral misalignment", "lateral_px", (0.0, 3.0)))


def _task(name: str, seed: int, n: int = 120) -> TaskData:
    """Two classes that differ in where the light is (left / right half): separable."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % 2
    x = (torch.rand(n, 28, 28, generator=g) * 60).to(torch.uint8)
    x[y == 0, 6:22, 2:12] = 255
    x[y == 1, 6:22, 16:26] = 255
    return TaskData(name, x[: n // 2], y[: n // 2], x[n // 2:], y[n // 2:])


def test_multitask_rows_per_task_with_recognition_and_ideal_evaluated_once(monkeypatch):
    tasks = [_task("a", 1), _task("b", 2)]
    net = DiffractiveNetwork(SPEC.with_(tasks=2, shared_layers=1), seed=0)
    train(net, tasks, TrainConfig(epochs=3, batch_size=20, lr=0.1))
    calls = []
    real = rb.evaluate
    monkeypatch.setattr(rb, "evaluate", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    rows = rb.robustness_rows(net, tasks, sweeps=SWEEPS, noise_seeds=(0, 1))
    assert len(rows) == 5 * 2 and {r["task"] for r in rows} == {"a", "b"}
    assert len(calls) == 4  # 5 levels, of which the ideal of both sweeps is one evaluation
    assert all(0 <= r["recognition"] <= 1 for r in rows)
    ideal = {r["task"]: r["accuracy"] for r in rows if r["field"] == "phase_sigma_rad" and r["level"] == 0.0}
    assert min(ideal.values()) >= 0.9
    # each row is that task's accuracy on its own plane under that noise, as evaluate() gives it
    direct = real(net, tasks, rb.Noise(lateral_px=3.0), seeds=(0, 1))
    got = {r["task"]: (r["accuracy"], r["recognition"]) for r in rows if r["field"] == "lateral_px" and r["level"]}
    assert got == {"a": (direct["acc"][0], direct["recognition"][0]), "b": (direct["acc"][1], direct["recognition"][1])}
    noisy = [r for r in rows if r["level"]]
    assert all(r["noise_seeds"] == 2 for r in noisy)


def test_single_task_rows_and_wrong_task_count():
    net = DiffractiveNetwork(SPEC, seed=0)
    rows = rb.robustness_rows(net, [_task("a", 1)], sweeps=SWEEPS, noise_seeds=(0,))
    assert len(rows) == 5 and "recognition" not in rows[0] and rows[0]["plane"] == 0
    with pytest.raises(ValueError, match="1 task planes, got 2"):
        rb.robustness_rows(net, [_task("a", 1), _task("b", 2)], sweeps=SWEEPS)


def test_table_reads_the_requested_plane_and_plot_models(tmp_path):
    t = _task("a", 1)
    net = DiffractiveNetwork(SPEC.with_(tasks=2, shared_layers=1), seed=0)
    df = rb.robustness_table({"plain": [net]}, t, sweeps=SWEEPS, noise_seeds=(0,), task_index=1)
    assert len(df) == 5 and set(df["plane"]) == {1}
    df["model"] = "K_s=1"
    path = rb.plot_robustness_models(df, tmp_path / "r.png", "toy")
    assert path.stat().st_size > 1000
    assert rb.plot_robustness(df, tmp_path / "p.png", "toy").stat().st_size > 1000
