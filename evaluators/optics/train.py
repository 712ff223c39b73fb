"""Training and evaluation of (multi-task) diffractive networks.

:func:`train` fits a :class:`~evaluators.optics.model.DiffractiveNetwork` on one data set
per task. Each step draws one batch per task; the loss is

    sum_t  lambda_t * CE(a_t^{2L} s_t(x_t), y_t)  +  gamma * CE(g * [s_1 .. s_T](x_t), t K + y_t)

where ``s_t`` is task plane ``t``'s readout, ``lambda_t`` the per-task loss weights and
``a_t`` the per-branch amplitude factors (the multi-task regularization [inferred]), and the
second term (``gamma = recognition_weight``, only with ``T > 1``) teaches the brightest of
all ``T K`` regions to lie on the plane of the task being shown (task recognition;
``g`` is the mean of the ``a_t^{2L}``). ``loss="mse"`` uses LightRidge's
``MSE(softmax(logits), onehot)`` instead of cross-entropy. Adam with a step decay
(LightRidge: StepLR(20, 0.5)); with ``noise`` set, each batch sees a fresh draw of
:meth:`Noise.sample_training` (noise-aware training).

:func:`evaluate` reports per-task accuracy (class read on the task's own plane), task
recognition accuracy and end-to-end accuracy (recognized task and class both right),
optionally under noise, averaged over noise seeds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from evaluators.optics.data import Dataset, load, stratified_subset
from evaluators.optics.model import DiffractiveNetwork, resize_images
from evaluators.optics.noise import Noise

__all__ = ["TaskData", "TrainConfig", "evaluate", "prepare_tasks", "resolve_device", "train"]


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``cpu`` / ``cuda`` / ``cuda:i``; asking for CUDA without it raises a clear error."""
    d = torch.device(device or "cpu")
    if d.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {str(d)!r} requested but CUDA is not available to this torch "
                           f"({torch.__version__}); run with --device cpu or on a machine with a GPU")
    return d


@dataclass
class TaskData:
    """One task's images (uint8 28x28, kept small; resized per batch) and labels."""

    name: str
    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    source: str = ""

    @classmethod
    def from_dataset(cls, ds: Dataset, train_samples: int | None, test_samples: int | None,
                     seed: int = 0) -> TaskData:
        tr = stratified_subset(ds.train_y, train_samples, seed)
        te = np.sort(stratified_subset(ds.test_y, test_samples, seed + 1))
        return cls(ds.name, torch.from_numpy(ds.train_x[tr].copy()), torch.from_numpy(ds.train_y[tr].copy()),
                   torch.from_numpy(ds.test_x[te].copy()), torch.from_numpy(ds.test_y[te].copy()), ds.source)


def prepare_tasks(names: Sequence[str], train_samples: int | None, test_samples: int | None,
                  seed: int = 0) -> list[TaskData]:
    """Load each named data set (``mnist``, ``fashion``) and take stratified subsets."""
    return [TaskData.from_dataset(load(n), train_samples, test_samples, seed) for n in names]


@dataclass(frozen=True)
class TrainConfig:
    """Training hyper-parameters (per-task batch size; ``lr`` of Adam on the phases)."""

    epochs: int = 3
    batch_size: int = 64
    lr: float = 0.05
    lr_step_epochs: int = 20
    lr_gamma: float = 0.5
    loss_weights: tuple[float, ...] | None = None
    recognition_weight: float = 0.5
    loss: str = "ce"
    noise: Noise | None = None
    seed: int = 0
    device: str = "cpu"
    max_steps: int | None = None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["noise"] = self.noise.as_dict() if self.noise else None
        return d


@dataclass
class TrainResult:
    """What :func:`train` measured: wall ``seconds`` in all and per epoch, the process's
    CPU seconds (user + system, all threads), optimizer steps, torch threads, device and
    the mean loss of each epoch."""

    seconds: float
    steps: int
    threads: int
    device: str
    loss_history: list[float] = field(default_factory=list)
    epoch_seconds: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0


def _images(x: torch.Tensor, n: int, device: torch.device) -> torch.Tensor:
    return resize_images(x.to(device).float() / 255.0, n)


def _task_loss(logits: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    if kind == "ce":
        return torch.nn.functional.cross_entropy(logits, y)
    if kind == "mse":
        onehot = torch.nn.functional.one_hot(y, logits.shape[-1]).to(logits.dtype)
        return ((torch.softmax(logits, -1) - onehot) ** 2).sum(-1).mean()
    raise ValueError(f"loss must be 'ce' or 'mse', got {kind!r}")


def train(model: DiffractiveNetwork, tasks: Sequence[TaskData], cfg: TrainConfig) -> TrainResult:
    """Train ``model`` in place on ``tasks`` (one per task plane, in order)."""
    spec = model.spec
    if len(tasks) != spec.tasks:
        raise ValueError(f"model has {spec.tasks} task planes, got {len(tasks)} tasks")
    device = resolve_device(cfg.device)
    model.to(device)
    lw = cfg.loss_weights or (1.0,) * spec.tasks
    if len(lw) != spec.tasks:
        raise ValueError(f"need {spec.tasks} loss weights, got {len(lw)}")
    g = torch.Generator().manual_seed(cfg.seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=cfg.lr_step_epochs, gamma=cfg.lr_gamma)
    n_batches = max(math.ceil(len(t.train_y) / cfg.batch_size) for t in tasks)
    joint_gain = float(np.mean([a ** (2 * spec.layers) for a in model.amplitude_factors]))
    k = model.detector.k
    hist: list[float] = []
    epoch_s: list[float] = []
    steps = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    model.train()
    for _epoch in range(cfg.epochs):
        te = time.perf_counter()
        perms = [torch.randperm(len(t.train_y), generator=g) for t in tasks]
        run = 0.0
        for b in range(n_batches):
            opt.zero_grad(set_to_none=True)
            total = torch.zeros((), device=device)
            for ti, (task, perm) in enumerate(zip(tasks, perms)):
                idx = perm[(b * cfg.batch_size) % len(perm):][: cfg.batch_size]
                x = _images(task.train_x[idx], spec.n, device)
                y = task.train_y[idx].to(device)
                noise = cfg.noise.sample_training(g) if cfg.noise else None
                s = model(x, noise, g)
                total = total + lw[ti] * _task_loss(model.logits(s)[:, ti], y, cfg.loss)
                if spec.tasks > 1 and cfg.recognition_weight:
                    joint = s.reshape(len(y), -1) * joint_gain
                    total = total + cfg.recognition_weight * torch.nn.functional.cross_entropy(joint, ti * k + y)
            total.backward()
            opt.step()
            run += float(total.detach())
            steps += 1
            if cfg.max_steps and steps >= cfg.max_steps:
                break
        hist.append(run / max(1, b + 1))
        epoch_s.append(time.perf_counter() - te)
        sched.step()
        if cfg.max_steps and steps >= cfg.max_steps:
            break
    model.eval()
    return TrainResult(time.perf_counter() - t0, steps, torch.get_num_threads(), str(device), hist, epoch_s,
                       time.process_time() - c0)


@torch.no_grad()
def evaluate(model: DiffractiveNetwork, tasks: Sequence[TaskData], noise: Noise | None = None,
             seeds: Sequence[int] = (0,), batch_size: int = 500) -> dict[str, Any]:
    """Test accuracies, mean over ``seeds`` (noise realizations; one pass if ideal).

    Returns ``acc`` (per task), ``recognition`` and ``joint`` (per task, multi-task only),
    and ``acc_std`` over the seeds.
    """
    spec = model.spec
    device = next(model.parameters()).device
    model.eval()
    seeds = list(seeds) if noise is not None and not noise.is_ideal else list(seeds)[:1]
    per_seed: list[dict[str, list[float]]] = []
    for sd in seeds:
        g = torch.Generator().manual_seed(int(sd))
        acc, rec, joint = [], [], []
        for ti, task in enumerate(tasks):
            c = r = j = 0
            for b in range(0, len(task.test_y), batch_size):
                x = _images(task.test_x[b:b + batch_size], spec.n, device)
                y = task.test_y[b:b + batch_size].to(device)
                s = model(x, noise, g)
                c += int((s[:, ti].argmax(-1) == y).sum())
                if spec.tasks > 1:
                    tk, cl = model.recognize(s)
                    r += int((tk == ti).sum())
                    j += int(((tk == ti) & (cl == y)).sum())
            n = len(task.test_y)
            acc.append(c / n)
            rec.append(r / n)
            joint.append(j / n)
        per_seed.append({"acc": acc, "recognition": rec, "joint": joint})
    out: dict[str, Any] = {"acc": np.mean([p["acc"] for p in per_seed], axis=0).tolist(),
                           "acc_std": np.std([p["acc"] for p in per_seed], axis=0).tolist(),
                           "seeds": len(per_seed)}
    if spec.tasks > 1:
        out["recognition"] = np.mean([p["recognition"] for p in per_seed], axis=0).tolist()
        out["joint"] = np.mean([p["joint"] for p in per_seed], axis=0).tolist()
    return out
