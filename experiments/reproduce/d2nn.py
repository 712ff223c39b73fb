"""Reproduce the multi-task diffractive deep neural network (Li, Chen, Sensale-Rodriguez,
Gao, Yu, Sci. Rep. 11:11013, 2021) on CPU: physics checks, single- and multi-task
training on the full data sets, the multi-task regularization, noise robustness of the
single- and multi-task systems, and a co-design study with task recognition as an outcome
constraint.

The paper's Methods and Results were not available to us (only its abstract), so its own
accuracy and noise figures cannot be compared; the "reference" column holds published
figures of the same physics where there are some (an angular-spectrum re-run of Lin et al.,
Science 361:1004, 2018: 97.63 % MNIST / 87.49 % Fashion-MNIST with 5 layers; Li et al.,
Adv. Photon. 1:046001, 2019, differential detection: 98.54 % / 90.54 %), an unpublished
independent numpy kernel check of the propagation [inferred], and the cost model's worked
examples for LightRidge's and Lin et al.'s geometries; "n/a" where there is none. Every
"ours" figure is measured in the run.

1. **Physics** -- band-limited ASM energy, ``H(0,0) = e^{jkz}``, ASM vs Fresnel relative
   L2 with the validity check, the central-energy fraction after one random-phase hop,
   Gaussian-beam width vs ``w0 sqrt(1 + (z/zR)^2)``.
2. **Cost model** -- :mod:`accelerators.diffractive` at LightRidge's and Lin 2018's
   geometries and the multi-task layer count.
3. **Single task** -- MNIST and Fashion-MNIST at the CPU configuration (full run: N = 64,
   pad 32, 36 um, 532 nm, z = 0.1 m, L = 5 phase-only layers, 10 regions of 6 px, all
   60,000 training and 10,000 test images, 6 epochs), >= 3 seeds, time per epoch and threads, next
   to logistic regression on the same images' 28 x 28 pixels. These are the separate
   systems of the multi-task comparison.
4. **Multi-task** -- T = 2 (MNIST, Fashion) at the same L with every shared depth
   K_s = 0..L, the same seeds as the separate systems: accuracy per task (mean, std and
   the paired difference to the separate system of the same seed), task recognition, and
   the hardware saving of the optical cost model (layers, area, energy per inference).
5. **Robustness** -- every noise source of :data:`evaluators.optics.noise.NOISE_SWEEPS`
   on the single-task models and on the multi-task models at every shared depth, each
   plain and noise-aware (fine-tuned with :data:`~evaluators.optics.robustness.NOISE_AWARE`
   injected), every model seed.
6. **Regularization** -- the loss-weight ratio lambda_MNIST / lambda_Fashion at one shared
   depth with several seeds per ratio: mean and 95 % t-intervals per ratio and the
   least-squares slope of accuracy against log2(ratio) with its 95 % interval, which says
   whether the knob's effect is distinguishable from seed noise.
7. **Co-design** -- MOBO over ``experiments/configs/d2nn_codesign.yaml``'s space at a
   cheap training fidelity, with task recognition >= ``min_recognition`` as an outcome
   constraint; the feasible Pareto front.
8. **GPU scale** (``--gpu``) -- 200 x 200, 5 layers, 0.3 m, full MNIST, on ``--device cuda``.

**Resumable.** Every trained model, fine-tuned model and robustness sweep is one record
of the study engine's record store (:mod:`experiments.records`) under
``OUT/records/d2nn.unit/`` (:class:`UnitRecords`; a model's trained parameters in a
``.pt`` file beside its record), so a run that is stopped resumes where it stopped; ``--no-train`` writes the results of the units that exist (missing ones are
listed as pending) without training anything. ``OUT/settings.json`` fingerprints the
configuration: a run with other settings in the same ``OUT`` is refused. ``--jobs N``
trains N units at a time in the study engine's worker processes
(:class:`~experiments.executors.ProcessExecutor`, ``--threads`` torch threads each).

Writes ``results.json``, ``table.md``, CSVs and PNGs to ``OUT`` (``runs/reproduce/d2nn/``).
Run: ``coexplore reproduce d2nn [--quick] [--jobs 2] [--gpu --device cuda]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from accelerators.diffractive import LIGHTRIDGE_VISIBLE, LIN2018_THZ, DiffractiveAccelerator
from evaluators.base import Evaluation
from evaluators.optics.data import stratified_subset
from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.multitask_evaluator import loss_weights
from evaluators.optics.noise import NOISE_SWEEPS
from evaluators.optics.propagation import (
    PADDING_TOL,
    asm_transfer,
    check_propagation,
    fresnel_transfer,
    propagate,
    rs_transfer,
)
from evaluators.optics.robustness import NOISE_AWARE, plot_robustness_models, robustness_rows
from evaluators.optics.train import (
    TaskData,
    TrainConfig,
    evaluate,
    prepare_tasks,
    resolve_device,
    train,
)
from experiments.executors import ProcessExecutor, Task, map_tasks
from experiments.records import RecordStore, record_key
from experiments.reproduce import jsonable

logger = logging.getLogger(__name__)

#: Reference numbers; none is the anchor paper's own (its Results were not available).
#: ASM vs Fresnel and central-energy fractions: an independent numpy check (unpublished,
#: band-limited ASM of Matsushima & Shimobaba, Opt. Express 17:19662, 2009, against the
#: Fresnel transfer function) [inferred]; latencies ``(L + 1) z / c`` at LightRidge's
#: defaults (arXiv 2306.11268) and Lin et al.'s geometry (Science 361:1004, 2018); the
#: shot-noise energy and the 7-vs-10 layer count are worked examples of
#: :mod:`accelerators.diffractive`'s cost model. Accuracy: Lin et al. 2018's architecture
#: re-run with the angular spectrum (5 layers, 20 epochs; yeungmkw/nonlinear-d2nn on
#: GitHub) and Li et al., Adv. Photon. 1:046001 (2019) with class-specific differential
#: detection; 93.26 % is LightRidge's 10-epoch MNIST validation accuracy (200^2, 5 layers)
#: in github.com/lightridge/lightridge ``ASPLOS2024_AE/README.md``.
NOTES = {
    "asm_fresnel_l2_visible": 1.2e-3, "asm_fresnel_l2_cpu": 4.1e-4, "asm_fresnel_l2_thz": 1.39,
    "central_energy_visible": 0.72, "central_energy_cpu": 0.70, "central_energy_thz": 0.54,
    "latency_ns_lightridge": 6.0, "latency_ns_lin": 0.6, "energy_pj_532": 0.37,
    "mt_layers": (7, 10), "lightridge_gpu_acc_10ep": 0.9326,
    "asm_rerun_mnist": 0.9763, "asm_rerun_fashion": 0.8749,
    "differential_mnist": 0.9854, "differential_fashion": 0.9054,
}
#: The accuracy the CPU configuration must reach single-task on the full data (issue 20).
TARGET_ACC = {"mnist": 0.95, "fashion": 0.85}
TASKS = ("mnist", "fashion")


# ------------------------------------------------------------------------------ physics
def _random_phase(n: int, m: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    u = torch.zeros(m, m, dtype=torch.complex64)
    p = (m - n) // 2
    u[p:p + n, p:p + n] = torch.polar(torch.ones(n, n), 2 * math.pi * torch.rand(n, n, generator=g))
    return u


def physics_checks() -> dict[str, Any]:
    """The propagation checks of :data:`NOTES`, measured with :mod:`evaluators.optics.propagation`."""
    out: dict[str, Any] = {}
    geoms = {"visible": (532e-9, 36e-6, 200, 100, 0.3), "cpu": (532e-9, 36e-6, 64, 32, 0.1),
             "thz": (0.75e-3, 0.4e-3, 200, 100, 0.03)}
    for key, (lam, dx, n, pad, z) in geoms.items():
        m = n + 2 * pad
        u = _random_phase(n, m)
        ha = asm_transfer(m, dx, lam, z)
        a = propagate(u, ha)
        f = propagate(u, fresnel_transfer(m, dx, lam, z))
        e_in = float((u.abs() ** 2).sum())
        rep = check_propagation(lam, dx, m, z, "fresnel", warn=False)
        out[key] = {
            "asm_fresnel_l2": float(torch.linalg.vector_norm(a - f) / torch.linalg.vector_norm(a)),
            "asm_energy_ratio": float((a.abs() ** 2).sum()) / e_in,
            # fraction of the propagated energy that stays in the central N^2 (the reference check's
            # definition: at THz it is 0.54 of what survives the evanescent loss)
            "central_energy": float((a[pad:pad + n, pad:pad + n].abs() ** 2).sum() / (a.abs() ** 2).sum()),
            "central_energy_of_input": float((a[pad:pad + n, pad:pad + n].abs() ** 2).sum()) / e_in,
            "h00_error": abs(complex(ha[0, 0]) - complex(math.cos(2 * math.pi * z / lam), math.sin(2 * math.pi * z / lam))),
            "fresnel_valid": rep.ok, "fresnel_problems": list(rep.problems),
            "fresnel_phase_error_rad": rep.fresnel_phase_error_rad,
        }
    # Gaussian beam (532 nm, 8 um, 256^2, w0 = 60 um), width over the central half
    lam, dx, m, w0 = 532e-9, 8e-6, 256, 60e-6
    zr = math.pi * w0**2 / lam
    x = (torch.arange(m, dtype=torch.float64) - m // 2) * dx
    yy, xx = torch.meshgrid(x, x, indexing="ij")
    u0 = torch.exp(-(xx**2 + yy**2) / w0**2).to(torch.complex64)
    worst: dict[str, float] = {}
    for name, fn, zs in (("asm", asm_transfer, (0.5, 1, 2, 3)), ("rs", rs_transfer, (2, 3, 4))):
        errs = []
        for k in zs:
            z = k * zr
            u = torch.fft.fftshift(torch.fft.ifft2(torch.fft.fft2(torch.fft.ifftshift(u0)) * fn(m, dx, lam, z)))
            c = u[m // 4:-m // 4, m // 4:-m // 4].abs() ** 2
            xs = x[m // 4:-m // 4]
            w = c.sum(0).double()
            width = 2 * math.sqrt(float((w * xs**2).sum() / w.sum()))
            errs.append(abs(width / (w0 * math.sqrt(1 + k**2)) - 1))
        worst[name] = max(errs)
    out["gaussian_width_rel_error"] = worst
    return out


def cost_checks() -> dict[str, Any]:
    mt = LIGHTRIDGE_VISIBLE.with_(tasks=2, shared_layers=3)
    return {"lightridge": LIGHTRIDGE_VISIBLE.cost(), "lin2018": LIN2018_THZ.cost(),
            "multitask_T2_L5_Ks3": mt.cost(), "energy_pj_lightridge": LIGHTRIDGE_VISIBLE.energy_j * 1e12}


# ------------------------------------------------------------------------------ settings
def settings_for(quick: bool) -> dict[str, Any]:
    """The run's configuration. Full: the CPU configuration of issue 20 (all 60,000 / 10,000
    images per task, 6 epochs: at 4, Fashion-MNIST stopped at 83.6 % with seed 0 and reached
    86.3 % when trained on to 6, docs/reproduction/d2nn.md; about 14 CPU minutes per
    single-task model at 1 thread); quick: a small one for the tests (a few minutes on 2 cores)."""
    if quick:
        return {"n": 32, "z_m": 0.05, "layers": 2, "seeds": 3, "train": 600, "test": 300, "epochs": 1,
                "batch": 32, "lr": 0.1, "lr_step_epochs": 20, "lr_gamma": 0.5, "amplitude": 1.2,
                "finetune_train": 300, "finetune_epochs": 1, "finetune_lr": 0.02,
                "robust_test": 100, "noise_seeds": 2, "robust_levels": 3,
                "reg_shared": 1, "ratios": (0.25, 1.0, 4.0), "reg_seeds": 3,
                "codesign_trials": 4, "codesign_init": 3, "min_recognition": 0.6,
                "codesign_opts": {"train_samples": 200, "test_samples": 100, "epochs": 1, "padding_tol": PADDING_TOL}}
    return {"n": 64, "z_m": 0.1, "layers": 5, "seeds": 3, "train": None, "test": None, "epochs": 6,
            "batch": 64, "lr": 0.05, "lr_step_epochs": 2, "lr_gamma": 0.5, "amplitude": 1.2,
            "finetune_train": 10000, "finetune_epochs": 1, "finetune_lr": 0.01,
            "robust_test": 500, "noise_seeds": 2, "robust_levels": None,
            "reg_shared": 3, "ratios": (0.25, 1.0, 4.0), "reg_seeds": 5,
            "codesign_trials": 20, "codesign_init": 8, "min_recognition": 0.9,
            "codesign_opts": {"train_samples": 2000, "test_samples": 500, "epochs": 1, "padding_tol": PADDING_TOL}}


#: Settings that change what a unit computes: a run in an ``OUT`` written with other values
#: of these is refused (the units would mix configurations).
FINGERPRINT = ("n", "z_m", "layers", "train", "test", "epochs", "batch", "lr", "lr_step_epochs", "lr_gamma",
               "amplitude", "finetune_train", "finetune_epochs", "finetune_lr", "robust_test", "noise_seeds",
               "robust_levels")


def check_fingerprint(out: Path, s: dict[str, Any]) -> None:
    """Write ``OUT/settings.json`` on the first run; refuse a later run whose settings differ
    (``SystemExit`` naming each differing key)."""
    path = out / "settings.json"
    mine = jsonable({k: s[k] for k in FINGERPRINT})
    if not path.exists():
        path.write_text(json.dumps(mine, indent=1))
        return
    theirs = json.loads(path.read_text())
    diff = [f"{k}: {theirs.get(k)!r} there, {mine[k]!r} here" for k in FINGERPRINT if theirs.get(k) != mine[k]]
    if diff:
        raise SystemExit(f"error: {out} holds units of another configuration ({'; '.join(diff)}); "
                         "pass another --out, or delete that folder to start again")


def cpu_spec(s: dict[str, Any], tasks: int = 1, shared: int | None = None,
             phase_levels: int | None = None) -> DiffractiveAccelerator:
    """The CPU-scale accelerator of settings ``s`` (532 nm, 36 um pitch, padding N/2,
    ``s['z_m']`` between planes, ``s['layers']`` layers, 10 regions of N/10 px per plane)."""
    L = s["layers"]
    return DiffractiveAccelerator(n=s["n"], pad=s["n"] // 2, pitch_m=36e-6, wavelength_m=532e-9, z_m=s["z_m"],
                                  layers=L, tasks=tasks, shared_layers=L if shared is None else shared,
                                  detector_size_px=max(2, s["n"] // 10), phase_levels=phase_levels)


# ------------------------------------------------------------------------------ units
@dataclass(frozen=True)
class Unit:
    """One resumable piece of the run. ``kind``: ``model`` (train from scratch on
    ``tasks``; ``shared`` layers shared when there are two tasks; loss-weight ``ratio``),
    ``aware`` (fine-tune model ``base`` with noise injected), ``robust`` (every noise sweep
    on model ``base``) or ``logreg`` (the pixel baseline of ``tasks[0]``)."""

    key: str
    kind: str
    tasks: tuple[str, ...] = ()
    shared: int | None = None
    seed: int = 0
    ratio: float = 1.0
    base: str | None = None


def single_key(ds: str, seed: int) -> str:
    return f"single-{ds}-s{seed}"


def mt_key(shared: int, ratio: float, seed: int) -> str:
    return f"mt-ks{shared}-r{ratio:g}-s{seed}"


def plan(s: dict[str, Any], skip: set[str]) -> list[list[Unit]]:
    """The units of a run in phases (a phase needs only units of earlier ones), in the
    order of the issue's priorities: the single-task systems (seed-major, so a partial run
    has both data sets) and the pixel baseline, the multi-task models, their noise-aware
    fine-tuning, the robustness sweeps, the regularization seeds."""
    seeds = range(s["seeds"])
    L = s["layers"]
    want_mt = "multitask" not in skip or "robustness" not in skip
    single = [Unit(single_key(ds, sd), "model", (ds,), seed=sd) for sd in seeds for ds in TASKS]
    phases: list[list[Unit]] = [single + [Unit(f"logreg-{ds}", "logreg", (ds,)) for ds in TASKS]]
    mt = [Unit(mt_key(ks, 1.0, sd), "model", TASKS, ks, sd) for sd in seeds for ks in range(L + 1)] if want_mt else []
    phases.append(mt)
    if "robustness" not in skip:
        plain = single + mt
        aware = [Unit(f"aware-{u.key}", "aware", u.tasks, u.shared, u.seed, base=u.key) for u in plain]
        phases.append(aware)
        phases.append([Unit(f"robust-{u.key}", "robust", u.tasks, u.shared, u.seed, base=u.key)
                       for u in plain + aware])
    if "regularization" not in skip:
        have = {u.key for u in mt}
        reg = [Unit(mt_key(s["reg_shared"], r, sd), "model", TASKS, s["reg_shared"], sd, r)
               for sd in range(s["reg_seeds"]) for r in s["ratios"]]
        phases.append([u for u in reg if u.key not in have])
    return [p for p in phases if p]


UNIT_KIND = "d2nn.unit"


class UnitRecords:
    """The run's units as records of the record store (:mod:`experiments.records`) under
    ``OUT/records/``: kind :data:`UNIT_KIND`, settings ``{"unit": KEY}`` (the key names the
    unit's kind, tasks, shared depth, ratio and seed; ``OUT/settings.json`` guards the rest
    of the configuration, :func:`check_fingerprint`), value ``{"record": ..., "rows": ...
    (a robustness sweep's), "weights": FILE | None}``, wall and CPU seconds from the
    unit's record. A model's trained parameters (tensors only, on the CPU) are in ``FILE``
    beside its record, written atomically before the record is published (so a record never
    names a missing file) and loaded with ``torch.load(..., weights_only=True)``."""

    def __init__(self, out: Path) -> None:
        self.store = RecordStore(Path(out) / "records")

    def has(self, key: str) -> bool:
        return self.store.has(UNIT_KIND, {"unit": key})

    def keys(self) -> list[str]:
        """The stored units' keys, sorted."""
        return sorted(r.settings["unit"] for r in self.store if r.kind == UNIT_KIND)

    def weights_path(self, key: str) -> Path:
        return self.store.path(record_key(UNIT_KIND, {"unit": key})).with_suffix(".pt")

    def load(self, key: str) -> dict[str, Any]:
        """The unit's data, tensors on the CPU (a unit trained on a GPU loads anywhere)."""
        v = self.store.get(UNIT_KIND, {"unit": key})
        if v is None:
            raise KeyError(f"no unit {key!r} in {self.store.root}")
        out = {k: v[k] for k in ("record", "rows") if k in v}
        if v.get("weights"):
            out["state"] = torch.load(self.weights_path(key).with_name(v["weights"]), weights_only=True,
                                      map_location="cpu")
        return out

    def record(self, key: str) -> dict[str, Any] | None:
        v = self.store.get(UNIT_KIND, {"unit": key})
        return None if v is None else v["record"]

    def save(self, key: str, obj: dict[str, Any]) -> None:
        """Store ``obj`` (``record``, and ``state`` and / or ``rows``), its state tensors
        moved to the CPU."""
        value: dict[str, Any] = {"record": jsonable(obj["record"]), "weights": None}
        if "rows" in obj:
            value["rows"] = jsonable(obj["rows"])
        if "state" in obj:
            path = self.weights_path(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
            torch.save({k: v.detach().cpu() for k, v in obj["state"].items()}, tmp)
            os.replace(tmp, path)
            value["weights"] = path.name
        rec = value["record"]
        wall = rec.get("train_s", rec.get("seconds"))
        self.store.put(UNIT_KIND, {"unit": key}, value, wall_s=wall, cpu_s=rec.get("cpu_s"), replace=True)


@dataclass
class Context:
    """What the units of one process share: settings, device, the data subsets."""

    s: dict[str, Any]
    device: str
    tasks: dict[str, TaskData]
    finetune: dict[str, TaskData]
    robust: dict[str, TaskData]
    store: UnitRecords


def _subset(t: TaskData, n_train: int | None, n_test: int | None, seed: int) -> TaskData:
    tr = stratified_subset(t.train_y.numpy(), n_train, seed) if n_train else np.arange(len(t.train_y))
    te = np.sort(stratified_subset(t.test_y.numpy(), n_test, seed + 1)) if n_test else np.arange(len(t.test_y))
    return TaskData(t.name, t.train_x[tr], t.train_y[tr], t.test_x[te], t.test_y[te], t.source)


def make_context(s: dict[str, Any], device: str, out: Path) -> Context:
    tasks = dict(zip(TASKS, prepare_tasks(TASKS, s["train"], s["test"], seed=0)))
    ft = {k: _subset(t, s["finetune_train"], None, 10) for k, t in tasks.items()}
    rb = {k: _subset(t, None, s["robust_test"], 20) for k, t in tasks.items()}
    return Context(s, device, tasks, ft, rb, UnitRecords(out))


def _sweeps(levels: int | None) -> tuple:
    if not levels:
        return NOISE_SWEEPS
    out = []
    for name, fld, lv in NOISE_SWEEPS:
        idx = np.unique(np.linspace(0, len(lv) - 1, levels).round().astype(int))
        out.append((name, fld, tuple(lv[i] for i in idx)))
    return tuple(out)


def _spec_of(s: dict[str, Any], u: Unit) -> DiffractiveAccelerator:
    return cpu_spec(s, tasks=len(u.tasks), shared=u.shared if len(u.tasks) > 1 else None)


def load_net(ctx: Context, u: Unit) -> DiffractiveNetwork:
    """The trained network of model/aware unit ``u`` from its file."""
    net = DiffractiveNetwork(_spec_of(ctx.s, u), amplitude_factors=ctx.s["amplitude"], seed=u.seed, check="off")
    net.load_state_dict(ctx.store.load(u.key)["state"])
    return net.eval()


def _timing(r: Any, load0: tuple[float, ...]) -> dict[str, Any]:
    return {"train_s": r.seconds, "epoch_s": list(r.epoch_seconds), "cpu_s": r.cpu_seconds, "threads": r.threads,
            "steps": r.steps, "device": r.device, "loadavg_start": list(load0), "loadavg_end": list(os.getloadavg())}


def run_unit(ctx: Context, u: Unit) -> dict[str, Any]:
    """Compute unit ``u`` (its dependencies must exist) and store it; returns its record."""
    s, store = ctx.s, ctx.store
    load0 = os.getloadavg()
    if u.kind == "logreg":
        from threadpoolctl import threadpool_limits

        t0, c0 = time.perf_counter(), time.process_time()
        with threadpool_limits(torch.get_num_threads()):  # BLAS threads as torch's (spinning threads waste CPU)
            acc = logistic_baseline(ctx.tasks[u.tasks[0]])
        rec = {"acc": [acc], "train_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
               "train_images": len(ctx.tasks[u.tasks[0]].train_y)}
        store.save(u.key, {"record": rec})
        return rec
    tasks = [ctx.tasks[t] for t in u.tasks]
    if u.kind == "model":
        net = DiffractiveNetwork(_spec_of(s, u), amplitude_factors=s["amplitude"], seed=u.seed, check="off")
        cfg = TrainConfig(epochs=s["epochs"], batch_size=s["batch"], lr=s["lr"], lr_step_epochs=s["lr_step_epochs"],
                          lr_gamma=s["lr_gamma"], loss_weights=loss_weights(u.ratio) if len(tasks) > 1 else None,
                          seed=u.seed, device=ctx.device)
        r = train(net, tasks, cfg)
        ev = evaluate(net, tasks)
        rec = {**ev, **_timing(r, load0), "epochs": s["epochs"], "train_images": len(tasks[0].train_y),
               "test_images": len(tasks[0].test_y)}
        store.save(u.key, {"state": net.state_dict(), "record": jsonable(rec)})
        return rec
    base = Unit(u.base or "", "model", u.tasks, u.shared, u.seed)
    if u.kind == "aware":
        net = load_net(ctx, base)
        cfg = TrainConfig(epochs=s["finetune_epochs"], batch_size=s["batch"], lr=s["finetune_lr"], noise=NOISE_AWARE,
                          seed=1000 + u.seed, device=ctx.device)
        r = train(net, [ctx.finetune[t] for t in u.tasks], cfg)
        ev = evaluate(net, tasks)
        rec = {**ev, **_timing(r, load0), "finetune_images": len(ctx.finetune[u.tasks[0]].train_y)}
        store.save(u.key, {"state": net.state_dict(), "record": jsonable(rec)})
        return rec
    if u.kind == "robust":
        net = load_net(ctx, Unit(u.base or "", "model", u.tasks, u.shared, u.seed))
        t0, c0 = time.perf_counter(), time.process_time()
        rows = robustness_rows(net, [ctx.robust[t] for t in u.tasks], sweeps=_sweeps(s["robust_levels"]),
                               noise_seeds=range(s["noise_seeds"]))
        rec = {"seconds": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
               "test_images": len(ctx.robust[u.tasks[0]].test_y)}
        store.save(u.key, {"rows": jsonable(rows), "record": rec})
        return rec
    raise ValueError(f"unknown unit kind {u.kind!r}")


class UnitEvaluator:
    """One unit as an evaluator of the study engine's executors: ``{"unit": fields} ->``
    :class:`~evaluators.base.Evaluation` with the unit's record in ``info``. A worker
    process builds its context (the data) once, at its first unit, and runs with
    ``threads`` torch threads."""

    def __init__(self, s: dict[str, Any], device: str, out: str, threads: int) -> None:
        self.s, self.device, self.out, self.threads = s, device, out, threads
        self._ctx: Context | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_ctx": None}

    def __call__(self, params: dict[str, Any]) -> Evaluation:
        torch.set_num_threads(self.threads)
        logging.basicConfig(level=logging.WARNING)
        warnings.simplefilter("ignore")
        if self._ctx is None:
            self._ctx = make_context(self.s, self.device, Path(self.out))
        u = params["unit"]
        u = Unit(**{**u, "tasks": tuple(u["tasks"])})
        return Evaluation(metrics={}, info={"key": u.key, "record": jsonable(run_unit(self._ctx, u))})


def _describe(key: str, rec: dict[str, Any]) -> str:
    acc = " / ".join(f"{a:.4f}" for a in rec.get("acc", []))
    t = rec.get("train_s", rec.get("seconds", 0.0))
    return f"{key}: acc {acc or '-'} ({t:.0f} s wall, {rec.get('cpu_s', 0.0):.0f} s CPU)"


def execute(phases: list[list[Unit]], ctx: Context, jobs: int, out: Path, threads: int | None,
            log: Callable[[str], None] = print) -> None:
    """Run every missing unit, phase by phase (``jobs`` processes, or inline with 1)."""
    for phase in phases:
        todo = [u for u in phase if not ctx.store.has(u.key)]
        if not todo:
            continue
        if jobs <= 1:
            for u in todo:
                log(_describe(u.key, run_unit(ctx, u)))
            continue
        ev = UnitEvaluator(ctx.s, ctx.device, str(out), threads or torch.get_num_threads())
        with ProcessExecutor(ev, workers=min(jobs, len(todo)), start_method="spawn") as executor:
            for res in map_tasks(executor, (Task(i, {"unit": asdict(u)}, 0) for i, u in enumerate(todo))):
                if res.status.value != "ok":
                    raise RuntimeError(f"unit {todo[res.number].key}: {res.reason}\n{res.traceback or ''}")
                log(_describe(res.info["key"], res.info["record"]))


ROBUST_FORWARD_COST = 1.2
"""CPU time of one image's forward pass in a robustness sweep, in training steps per image
(forward and backward at the training batch). Measured on the full-data run's six
single-task robustness units: 59-65 s of CPU for 69 evaluations of 500 images (1.8 ms an
image; the sweep evaluates its 500 images in one batch, training takes 64 at a time)
against 91 s per 60,000-image training epoch (1.5 ms). The multi-task units agree (K_s =
2, 4, 5 of seed 0: 194, 153, 131 s measured, 201, 151, 126 s by this count). Until this
revision the plan assumed a third of a step, which put the sweeps at 23 single-task
epochs instead of about 80."""


def plan_cost(s: dict[str, Any], phases: list[list[Unit]], n_train: int) -> dict[str, Any]:
    """The planned compute of each phase in single-task epochs (one pass of one task's
    ``n_train`` images through a single-task model of ``L`` layers), counted in layer
    passes: every input of a multi-task model goes through the ``K_s`` shared layers and
    every task's branch (:meth:`evaluators.optics.model.DiffractiveNetwork.forward`
    returns all task planes, which the recognition term needs), so a multi-task epoch of
    ``T`` tasks costs ``T (K_s + T (L - K_s)) / L`` single-task epochs (4 at ``K_s = 0``,
    2 at ``K_s = L``; measured on the full-data configuration: 3.5-3.6 at ``K_s`` = 0, 1).
    Models ``epochs`` of that, fine-tuning ``finetune_train / n_train`` epochs of it, a
    robustness sweep ``evals x robust_test / n_train x ROBUST_FORWARD_COST`` of it."""
    evals = 1 + sum(len([v for v in lv if v not in (None, 0.0)]) for _, _, lv in _sweeps(s["robust_levels"])) \
        * s["noise_seeds"]
    L = s["layers"]
    per: dict[str, float] = {}
    for i, phase in enumerate(phases):
        e = 0.0
        for u in phase:
            t = len(u.tasks)
            ks = u.shared or 0
            passes = t * (ks + t * (L - ks)) / L
            if u.kind == "model":
                e += s["epochs"] * passes
            elif u.kind == "aware":
                e += s["finetune_epochs"] * passes * min(1.0, (s["finetune_train"] or n_train) / n_train)
            elif u.kind == "robust":
                e += evals * (s["robust_test"] or 10000) * passes / n_train * ROBUST_FORWARD_COST
        per[f"phase{i}:" + "+".join(sorted({u.kind for u in phase}))] = e
    return {"epochs_per_phase": per, "epochs_total": sum(per.values()), "robust_evals_per_model": evals}


# ------------------------------------------------------------------------------ statistics
def mean_ci(values: Sequence[float], level: float = 0.95) -> dict[str, Any]:
    """Mean, sample std (ddof 1), n and the two-sided Student-t interval of the mean."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    n = len(v)
    if n == 0:
        return {"mean": None, "std": None, "n": 0, "ci": [None, None]}
    m = float(v.mean())
    if n < 2:
        return {"mean": m, "std": None, "n": 1, "ci": [None, None]}
    sd = float(v.std(ddof=1))
    h = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return {"mean": m, "std": sd, "n": n, "ci": [m - h, m + h]}


def slope_ci(x: Sequence[float], y: Sequence[float], level: float = 0.95,
             groups: Sequence[Any] | None = None) -> dict[str, Any]:
    """Least-squares slope of ``y`` on ``x`` with its two-sided t interval (``n - 2`` dof).
    With ``groups`` (say, the model seed of each point) the slope is the within-group one:
    each group's means are taken out of ``x`` and ``y`` first (a fixed effect per group, so
    a seed that is better at every ``x`` does not widen the interval), ``n - g - 1`` dof."""
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    g = np.zeros(len(x), dtype=int) if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    ng = int(g.max()) + 1 if len(g) else 0
    dof = len(x) - ng - 1
    xc = x - (np.bincount(g, x) / np.bincount(g))[g] if len(x) else x
    sxx = float(xc @ xc)
    if dof < 1 or sxx == 0:  # too few points, or x constant (within every group)
        return {"slope": None, "ci": [None, None], "n": len(x), "p": None}
    yc = y - (np.bincount(g, y) / np.bincount(g))[g]
    b = float(xc @ yc) / sxx
    resid = yc - b * xc
    se = float(np.sqrt(resid @ resid / dof / sxx))
    h = float(stats.t.ppf(0.5 + level / 2, dof)) * se
    pval = float(2 * stats.t.sf(abs(b) / se, dof)) if se > 0 else 0.0
    return {"slope": b, "ci": [b - h, b + h], "n": len(x), "p": pval, "groups": ng}


def spearman(x: list[float], y: list[float]) -> float:
    rx, ry = pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy()
    if np.std(rx) == 0 or np.std(ry) == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def logistic_baseline(task: TaskData) -> float:
    """scikit-learn's logistic regression on the 28 x 28 pixels (/255) of ``task``."""
    from sklearn.linear_model import LogisticRegression

    xtr = task.train_x.reshape(len(task.train_y), -1).numpy() / 255.0
    xte = task.test_x.reshape(len(task.test_y), -1).numpy() / 255.0
    clf = LogisticRegression(max_iter=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(xtr, task.train_y.numpy())
    return float(clf.score(xte, task.test_y.numpy()))


# ------------------------------------------------------------------------------ results
def _recs(store: UnitRecords, keys: Sequence[str]) -> list[dict[str, Any]]:
    return [r for r in (store.record(k) for k in keys) if r is not None]


def single_results(s: dict[str, Any], store: UnitRecords) -> dict[str, Any]:
    """Single-task accuracy per data set over the seeds, time per epoch, the baseline."""
    out: dict[str, Any] = {"d2nn": {}, "logreg": {}}
    for ds in TASKS:
        recs = _recs(store, [single_key(ds, sd) for sd in range(s["seeds"])])
        lr = store.record(f"logreg-{ds}")
        if lr:
            out["logreg"][ds] = lr["acc"][0]
        if not recs:
            continue
        accs = [r["acc"][0] for r in recs]
        ep_wall = [e for r in recs for e in r["epoch_s"]]
        ep_cpu = [r["cpu_s"] / max(1, r["epochs"]) for r in recs]
        out["d2nn"][ds] = {
            "acc": mean_ci(accs), "per_seed": accs, "target": TARGET_ACC[ds],
            "meets_target": bool(np.mean(accs) >= TARGET_ACC[ds]),
            "epoch_wall_s": float(np.mean(ep_wall)), "epoch_cpu_s": float(np.mean(ep_cpu)),
            "train_wall_s": float(np.mean([r["train_s"] for r in recs])),
            "threads": sorted({r["threads"] for r in recs}),
            "loadavg_1min": [float(np.mean([r["loadavg_start"][0] for r in recs])),
                             float(np.mean([r["loadavg_end"][0] for r in recs]))],
            "train_images": recs[0]["train_images"], "test_images": recs[0]["test_images"]}
    return out


def multitask_results(s: dict[str, Any], store: UnitRecords) -> dict[str, Any]:
    """Every shared depth over the seeds against the separate systems of the same seeds,
    with the cost model's layers, area and energy per inference."""
    one = cpu_spec(s)
    rows = []
    for ks in range(s["layers"] + 1):
        spec = cpu_spec(s, tasks=2, shared=ks)
        per = []
        for sd in range(s["seeds"]):
            r = store.record(mt_key(ks, 1.0, sd))
            if r is None:
                continue
            sep = [store.record(single_key(ds, sd)) for ds in TASKS]
            per.append({"seed": sd, "acc_mnist": r["acc"][0], "acc_fashion": r["acc"][1],
                        "recognition": float(np.mean(r["recognition"])), "joint": float(np.mean(r["joint"])),
                        "diff_mnist": None if sep[0] is None else r["acc"][0] - sep[0]["acc"][0],
                        "diff_fashion": None if sep[1] is None else r["acc"][1] - sep[1]["acc"][0]})
        row: dict[str, Any] = {"shared": ks, "layers": s["layers"], "seeds": len(per), "per_seed": per,
                               "physical_layers": spec.physical_layers, "separate_layers": spec.separate_layers,
                               "layers_saved": spec.layers_saved, "area_mm2": spec.area_mm2,
                               "separate_area_mm2": 2 * one.area_mm2, "energy_pj": spec.energy_j * 1e12,
                               "separate_energy_pj": one.energy_j * 1e12, "latency_ns": spec.latency_s * 1e9}
        for k in ("acc_mnist", "acc_fashion", "recognition", "joint"):
            row[k] = mean_ci([p[k] for p in per])
        for k in ("diff_mnist", "diff_fashion"):
            row[k] = mean_ci([p[k] for p in per if p[k] is not None])
        rows.append(row)
    out: dict[str, Any] = {"rows": rows, "separate": {"physical_layers": 2 * s["layers"], "area_mm2": 2 * one.area_mm2,
                                                      "energy_pj_per_inference": one.energy_j * 1e12}}
    # the cost of each shared layer where every task keeps a branch (K_s < L; at K_s = L the
    # planes see one field and the task cannot be recognized): the multi-task models' own
    # accuracy against K_s, every seed a point, the slope within seeds, with its 95 % interval
    branch = [(r["shared"], p) for r in rows if r["shared"] < s["layers"] for p in r["per_seed"]]
    for k in ("mnist", "fashion"):
        out[f"depth_slope_{k}"] = slope_ci([ks for ks, _ in branch], [p[f"acc_{k}"] for _, p in branch],
                                           groups=[p["seed"] for _, p in branch])
    return out


def _model_label(key: str) -> str:
    if key.startswith("single-"):
        return "single-task"
    return "K_s=" + key.split("-")[1][2:]


def robustness_frame(s: dict[str, Any], phases: list[list[Unit]], store: UnitRecords) -> pd.DataFrame:
    rows = []
    for u in (u for p in phases for u in p if u.kind == "robust"):
        if not store.has(u.key):
            continue
        base = u.base or ""
        variant = "noise-aware" if base.startswith("aware-") else "plain"
        model = base.removeprefix("aware-")
        for r in store.load(u.key)["rows"]:
            rows.append({"model": _model_label(model), "variant": variant, "model_seed": u.seed, **r})
    return pd.DataFrame(rows)


def robustness_summary(df: pd.DataFrame) -> dict[str, Any]:
    """Per task and noise source, at two levels of the sweep -- its middle non-ideal level
    and its strongest (by magnitude for a signed sweep) -- the accuracy of every model (single-task, K_s) and variant (plain,
    noise-aware): mean and std over model seeds, their count, and the mean at the ideal
    level. ``robustness_summary.csv`` holds every level."""
    if df.empty:
        return {}
    out: dict[str, Any] = {}
    for (task, src), d in df.groupby(["task", "source"], sort=False):
        level_of = dict(zip(d["level_label"], d["level"]))  # in sweep order, weakest first
        off = [lb for lb, v in level_of.items() if v is None or pd.isna(v) or v == 0]
        ideal = off[0] if off else next(iter(level_of))
        noisy = [lb for lb in level_of if lb != ideal] or [ideal]
        if any(float(level_of[lb]) < 0 for lb in noisy):  # a signed sweep (drift): by magnitude
            noisy.sort(key=lambda lb: abs(float(level_of[lb])))
        picks = list(dict.fromkeys([noisy[(len(noisy) - 1) // 2], noisy[-1]]))
        g = d.groupby(["model", "variant", "level_label"])["accuracy"]
        m, sd, n = g.mean(), g.std(), g.count()
        pairs = list(dict.fromkeys(zip(d["model"], d["variant"])))
        out.setdefault(task, {})[src] = {"levels": {lv: {
            f"{mo} {va}": {"acc": float(m[(mo, va, lv)]),
                           "std": None if pd.isna(sd[(mo, va, lv)]) else float(sd[(mo, va, lv)]),
                           "seeds": int(n[(mo, va, lv)]), "ideal": float(m[(mo, va, ideal)])}
            for mo, va in pairs if (mo, va, lv) in m.index} for lv in picks}}
    return out


def regularization_results(s: dict[str, Any], store: UnitRecords) -> dict[str, Any]:
    """Per ratio: accuracy per task with t-intervals over seeds; the slope of accuracy on
    log2(ratio) with its interval (distinguishable from seed noise when it excludes 0).
    Every seed is trained at every ratio, so the slope is taken within seeds (``slope_*``:
    a seed that is better at every ratio is not counted as noise); ``slope_*_pooled``
    ignores the pairing."""
    ks = s["reg_shared"]
    rows, pts = [], []
    for r in s["ratios"]:
        recs = [(sd, store.record(mt_key(ks, r, sd))) for sd in range(s["reg_seeds"])]
        recs = [(sd, x) for sd, x in recs if x is not None]
        for sd, x in recs:
            pts.append({"ratio": r, "seed": sd, "acc_mnist": x["acc"][0], "acc_fashion": x["acc"][1],
                        "recognition": float(np.mean(x["recognition"]))})
        rows.append({"ratio": r, "seeds": len(recs),
                     "acc_mnist": mean_ci([x["acc"][0] for _, x in recs]),
                     "acc_fashion": mean_ci([x["acc"][1] for _, x in recs]),
                     "recognition": mean_ci([float(np.mean(x["recognition"])) for _, x in recs])})
    lx = [math.log2(p["ratio"]) for p in pts]
    out: dict[str, Any] = {"shared": ks, "rows": rows, "points": pts}
    for k in ("mnist", "fashion"):
        for name, groups in ((f"slope_{k}", [p["seed"] for p in pts]), (f"slope_{k}_pooled", None)):
            sl = slope_ci(lx, [p[f"acc_{k}"] for p in pts], groups=groups)
            sl["distinguishable"] = bool(sl["slope"] is not None and (sl["ci"][0] > 0 or sl["ci"][1] < 0))
            out[name] = sl
        means = [r[f"acc_{k}"]["mean"] for r in rows if r[f"acc_{k}"]["mean"] is not None]
        out[f"spearman_{k}"] = spearman([r["ratio"] for r in rows if r[f"acc_{k}"]["mean"] is not None], means) \
            if len(means) > 1 else None
    return out


# ------------------------------------------------------------------------------ co-design
def run_codesign(trials: int, n_init: int, opts: dict[str, Any], out: Path, seed: int = 0,
                 run: bool = True) -> dict[str, Any] | None:
    """MOBO over the co-design config's space with task recognition >= ``min_recognition``
    as an outcome constraint (``opts``); resumes the study in ``OUT/codesign.db``.
    ``run=False`` only reports an existing study (``None`` when there is none)."""
    from experiments.config import load_config
    from experiments.study import Study

    cfg_path = Path(__file__).resolve().parents[1] / "configs" / "d2nn_codesign.yaml"
    loaded = load_config(cfg_path)
    objectives = dict(loaded.config.objectives)
    db = (out / "codesign.db").resolve()
    if not run and not db.exists():
        return None
    storage = f"sqlite:///{db}"
    tag = "-".join(f"{k}{v}" for k, v in sorted(opts.items()))
    study = Study.create(f"d2nn-{tag}-s{seed}", loaded.space, objectives,
                         "evaluators.optics.multitask_evaluator:D2NNCoDesign", "mobo",
                         optimizer_options={"n_init": n_init, "pool_size": 500}, evaluator_options=opts,
                         storage=storage, seed=seed)
    t0 = time.perf_counter()
    if run:
        study.optimize(trials, workers=1, progress=False)
    wall = time.perf_counter() - t0
    trials_df = study.trials_dataframe()
    front = study.pareto_front(feasible_only=True)
    front.to_csv(out / "codesign_pareto_front.csv", index=False)
    trials_df.to_csv(out / "codesign_trials.csv", index=False)
    try:
        plots = [str(p) for p in study.plot(out / "codesign_plots")]
    except Exception as e:  # plotting must not lose the numbers
        logger.warning("co-design plots failed: %s", e)
        plots = []
    cols = [c for c in front.columns if c.startswith(("params_", "metrics_"))]
    short = "constraints_recognition_shortfall"
    violated = int((trials_df[short] > 0).sum()) if short in trials_df else 0
    return {"study": study.name, "storage": storage, "trials": len(trials_df), "wall_s": wall,
            "status_counts": {k.value: v for k, v in study.status_counts().items()},
            "violating_recognition": violated, "min_recognition": opts.get("min_recognition"),
            "objectives": objectives, "front_size": len(front), "plots": plots,
            "front": json.loads(front[cols].to_json(orient="records")), "fidelity": opts}


# ------------------------------------------------------------------------------ plots
def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_multitask(mt: dict[str, Any], single: dict[str, Any], path: Path) -> None:
    plt = _plt()
    rows = [r for r in mt["rows"] if r["seeds"]]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k, ds, mk in (("acc_mnist", "mnist", "o"), ("acc_fashion", "fashion", "s")):
        x = [r["shared"] for r in rows]
        y = [r[k]["mean"] for r in rows]
        e = [r[k]["std"] or 0 for r in rows]
        line = ax.errorbar(x, y, yerr=e, marker=mk, capsize=3, label=f"multi-task, {ds}")
        d = single["d2nn"].get(ds)
        if d:
            ax.axhline(d["acc"]["mean"], ls="--", color=line[0].get_color(), alpha=0.7,
                       label=f"separate single-task, {ds}")
    ax.plot([r["shared"] for r in rows], [r["recognition"]["mean"] for r in rows], "k^:", label="task recognition")
    ax.set_xlabel("shared layers K_s")
    ax.set_ylabel("test accuracy (mean +- std over seeds)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_regularization(rg: dict[str, Any], path: Path) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, mk in (("mnist", "o-"), ("fashion", "s-")):
        rows = [r for r in rg["rows"] if r[f"acc_{k}"]["mean"] is not None]
        x = [r["ratio"] for r in rows]
        y = [r[f"acc_{k}"]["mean"] for r in rows]
        lo = [y_ - (r[f"acc_{k}"]["ci"][0] if r[f"acc_{k}"]["ci"][0] is not None else y_) for y_, r in zip(y, rows)]
        ax.errorbar(x, y, yerr=[lo, lo], fmt=mk, capsize=3, label=f"{k} (95 % t-interval over seeds)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(rg_ratios(rg)), [f"{v:g}" for v in rg_ratios(rg)])
    ax.minorticks_off()
    ax.set_xlabel("lambda_MNIST / lambda_Fashion")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"Multi-task regularization, K_s = {rg['shared']}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def rg_ratios(rg: dict[str, Any]) -> list[float]:
    return [r["ratio"] for r in rg["rows"]]


# ------------------------------------------------------------------------------ table
def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.2f} %"


def _ms(d: dict[str, Any]) -> str:
    """'mean +- std (n)' in % from a :func:`mean_ci` dict."""
    if not d or d.get("mean") is None:
        return "pending"
    sd = "" if d.get("std") is None else f" ± {100 * d['std']:.2f}"
    return f"{100 * d['mean']:.2f} %{sd} (n={d['n']})"


def _ci(d: dict[str, Any]) -> str:
    if not d or d.get("ci", [None])[0] is None:
        return "n/a"
    return f"[{100 * d['ci'][0]:.2f}, {100 * d['ci'][1]:.2f}]"


def write_table(res: dict[str, Any], path: Path, cmd: str) -> None:
    lines = ["| quantity | reference | ours | command | note |", "|---|---|---|---|---|"]

    def add(q: str, ref: str, ours: str, note: str = "") -> None:
        lines.append(f"| {q} | {ref} | {ours} | `{cmd}` | {note} |")

    st = res.get("settings", {})
    ph = res.get("physics", {})
    for key, label in (("visible", "visible 532 nm/36 um/200+2x100/0.3 m"), ("cpu", "CPU 532 nm/36 um/64+2x32/0.1 m"),
                       ("thz", "THz 0.75 mm/0.4 mm/200+2x100/3 cm")):
        if key in ph:
            d = ph[key]
            add(f"ASM vs Fresnel rel. L2, {label}", f"{NOTES['asm_fresnel_l2_' + key]:g}", f"{d['asm_fresnel_l2']:.3g}",
                "Fresnel check: " + ("valid" if d["fresnel_valid"] else "REFUSED (" + d["fresnel_problems"][0][:60] + "...)"))
            add(f"central energy after 1 hop, {label}", f"{NOTES['central_energy_' + key]:g}", f"{d['central_energy']:.2f}")
            add(f"band-limited ASM energy ratio, {label}", "1.0000 (visible)", f"{d['asm_energy_ratio']:.5f}",
                "evanescent corners lost at THz" if key == "thz" else "")
    if "gaussian_width_rel_error" in ph:
        g = ph["gaussian_width_rel_error"]
        add("Gaussian beam width vs w0 sqrt(1+(z/zR)^2), worst rel. error", "< 2 %",
            f"ASM {100 * g['asm']:.2f} %, RS {100 * g['rs']:.2f} %")
    c = res.get("cost", {})
    if c:
        add("optical latency (L+1)z/c, LightRidge / Lin 2018", "6.0 / 0.6 ns",
            f"{c['lightridge']['latency_ns']:.2f} / {c['lin2018']['latency_ns']:.2f} ns")
        add("energy per inference at the shot-noise floor, 532 nm, 10 detectors", "0.37 pJ",
            f"{c['energy_pj_lightridge']:.3f} pJ")
        add("layers, T=2 L=5 K_s=3 vs separate", "7 vs 10",
            f"{c['multitask_T2_L5_Ks3']['physical_layers']:.0f} vs {c['multitask_T2_L5_Ks3']['separate_layers']:.0f}")
    geo = f"N={st.get('n')}, L={st.get('layers')}"
    sg = res.get("single", {})
    refs = {"mnist": f"{100 * NOTES['asm_rerun_mnist']:.2f} % (ASM re-run of Lin 2018, 5 layers, 20 epochs); "
                     f"{100 * NOTES['differential_mnist']:.2f} % (differential, Li 2019)",
            "fashion": f"{100 * NOTES['asm_rerun_fashion']:.2f} % (ASM re-run, 5 layers, 20 epochs); "
                       f"{100 * NOTES['differential_fashion']:.2f} % (differential, Li 2019)"}
    for ds, d in sg.get("d2nn", {}).items():
        add(f"single-task {ds}, {geo}, {d['train_images']} train / {d['test_images']} test images, "
            f"{st.get('epochs')} epochs", refs[ds], _ms(d["acc"]),
            f"target >= {100 * d['target']:.0f} %: {'met' if d['meets_target'] else 'NOT met'}; 95 % CI {_ci(d['acc'])}")
        add(f"time per epoch, single-task {ds} ({d['train_images']} images)", "about 1 h per model (issue)",
            f"{d['epoch_wall_s']:.0f} s wall, {d['epoch_cpu_s']:.0f} s CPU",
            f"{d['threads']} thread(s); 1-min load {d['loadavg_1min'][0]:.1f}-{d['loadavg_1min'][1]:.1f} on 2 cores")
    for ds, v in sg.get("logreg", {}).items():
        add(f"logistic regression {ds}, 28x28 pixels, same images", "n/a", _pct(v))
    mt = res.get("multitask", {})
    for r in mt.get("rows", []):
        if not r["seeds"]:
            add(f"multi-task K_s={r['shared']} of L={r['layers']}", "n/a", "pending")
            continue
        add(f"multi-task K_s={r['shared']} of L={r['layers']}: MNIST / Fashion acc (mean ± std over seeds)",
            "n/a (paper Results unavailable)", f"{_ms(r['acc_mnist'])} / {_ms(r['acc_fashion'])}",
            f"recognition {_ms(r['recognition'])}")
        add(f"multi-task K_s={r['shared']}: minus the separate system of the same seed, MNIST / Fashion", "n/a",
            f"{_pp(r['diff_mnist'])} / {_pp(r['diff_fashion'])}",
            f"{r['physical_layers']} vs {r['separate_layers']} layers, {r['area_mm2']:.1f} vs "
            f"{r['separate_area_mm2']:.1f} mm^2, {r['energy_pj']:.2f} vs {r['separate_energy_pj']:.2f} pJ/inference")
    for k in ("mnist", "fashion"):
        sl = mt.get(f"depth_slope_{k}")
        if sl and sl["slope"] is not None:
            lo, hi = sl["ci"]
            add(f"multi-task: {k} accuracy per shared layer (K_s < L, every seed a point)", "n/a",
                f"{100 * sl['slope']:+.2f} points [{100 * lo:+.2f}, {100 * hi:+.2f}]",
                f"95 % CI within seeds, {sl['n']} models; " + ("below 0: sharing costs accuracy" if hi < 0 else
                                                 "includes 0: no cost distinguishable" if lo <= 0 else "above 0"))
    rg = res.get("regularization", {})
    for r in rg.get("rows", []):
        add(f"regularization K_s={rg['shared']}, lambda_MNIST/lambda_Fashion = {r['ratio']:g}: MNIST / Fashion",
            "n/a", f"{_ms(r['acc_mnist'])} / {_ms(r['acc_fashion'])}",
            f"95 % CI {_ci(r['acc_mnist'])} / {_ci(r['acc_fashion'])}")
    for k in ("mnist", "fashion"):
        sl = rg.get(f"slope_{k}")
        if sl and sl["slope"] is not None:
            add(f"regularization: slope of {k} accuracy per doubling of the ratio", "n/a",
                f"{100 * sl['slope']:+.2f} points [{100 * sl['ci'][0]:+.2f}, {100 * sl['ci'][1]:+.2f}]",
                ("distinguishable" if sl["distinguishable"] else "NOT distinguishable") +
                f" from seed noise (95 % CI within seeds, {sl['n']} models)")
    rb = res.get("robustness", {})
    for task, per in rb.get("summary", {}).items():
        for src, d in per.items():
            for lv, models in d["levels"].items():
                cells = "; ".join(f"{m}: {100 * v['acc']:.1f}" + ("" if v["std"] is None else f" ± {100 * v['std']:.1f}")
                                  for m, v in models.items())
                add(f"robustness {task}: {src} at {lv} (acc %, mean ± std over model seeds)", "n/a", cells)
    cd = res.get("codesign")
    if cd:
        add("co-design MOBO (acc1, acc2, layers) with recognition >= "
            f"{cd['min_recognition']}: trials / violating recognition / front size", "n/a",
            f"{cd['trials']} / {cd['violating_recognition']} / {cd['front_size']}",
            f"{cd['wall_s']:.0f} s this run; codesign_pareto_front.csv")
    comp = res.get("compute", {})
    if comp.get("by_device"):
        dc = res.get("device_check")
        add("units by the device they trained on", "n/a",
            ", ".join(f"{d} {n}" for d, n in sorted(comp["by_device"].items())),
            "" if not dc else f"{dc['units']} units trained on both: largest test-accuracy difference "
            f"{100 * dc['max_abs_acc_diff']:.2f} pts, largest phase difference {dc['max_abs_param_diff_rad']:.1e} rad "
            "(device_check.csv)")
    gpu = res.get("gpu")
    if gpu:
        add("GPU scale 200x200, L=5, 0.3 m, MNIST", f"{100 * NOTES['lightridge_gpu_acc_10ep']:.2f} % (LightRidge, 10 epochs)",
            gpu.get("acc_str", "not run"), gpu.get("note", ""))
    pend = res.get("pending", [])
    if pend:
        lines.append("")
        lines.append(f"**Partial run**: {len(pend)} units pending ({', '.join(pend[:8])}{' ...' if len(pend) > 8 else ''}); "
                     f"resume with `{cmd}`.")
    path.write_text("\n".join(lines) + "\n")


def _pp(d: dict[str, Any]) -> str:
    """Paired difference in points: 'mean ± std (n)'."""
    if not d or d.get("mean") is None:
        return "n/a"
    sd = "" if d.get("std") is None else f" ± {100 * d['std']:.2f}"
    return f"{100 * d['mean']:+.2f}{sd} pts (n={d['n']})"


# ------------------------------------------------------------------------------ main
def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="coexplore reproduce d2nn", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the small configuration (N=32, L=2, 600 train / 300 "
                    "test images per task, 1 epoch, 3 noise levels per source, 4 co-design trials)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (CUDA must be available)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per process (default 1: on a loaded "
                    "2-core machine one thread per process wastes the least CPU time)")
    ap.add_argument("--jobs", type=int, default=1, help="units trained at a time, each in its own process")
    ap.add_argument("--no-train", action="store_true", help="train nothing: write the results of the units "
                    "that exist (the others are listed as pending)")
    ap.add_argument("--gpu", action="store_true", help="also train the GPU-scale config (200x200, 5 layers)")
    ap.add_argument("--gpu-epochs", type=int, default=10)
    ap.add_argument("--gpu-train", type=int, default=None, help="training images for --gpu (default all 60,000)")
    ap.add_argument("--gpu-test", type=int, default=None, help="test images for --gpu (default all 10,000)")
    ap.add_argument("--codesign-trials", type=int, default=None, help="MOBO trials (0 skips)")
    ap.add_argument("--train", type=int, default=None, help="training images per task (default all; quick 600)")
    ap.add_argument("--test", type=int, default=None, help="test images per task (default all; quick 300)")
    ap.add_argument("--epochs", type=int, default=None, help="training epochs of every model")
    ap.add_argument("--seeds", type=int, default=None, help="model seeds (default 3)")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: "
                    "physics,multitask,regularization,robustness,codesign")
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/d2nn"))
    ap.add_argument("--compare-with", type=Path, default=None, metavar="DIR",
                    help="another run's folder (say, one trained with --device cuda): write "
                         "OUT/device_check.csv comparing the units both hold, then continue")
    return ap


def _positive(name: str, v: int | None) -> None:
    if v is not None and v < 1:
        raise SystemExit(f"error: --{name} must be >= 1, got {v}")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    for name in ("threads", "jobs", "train", "test", "epochs", "seeds", "gpu_epochs"):
        _positive(name.replace("_", "-"), getattr(args, name))
    try:
        device = str(resolve_device(args.device))
    except RuntimeError as e:
        raise SystemExit(f"error: {e}") from None
    if args.compare_with is not None and not (args.compare_with / "records" / UNIT_KIND).is_dir():
        raise SystemExit(f"error: --compare-with {args.compare_with}: no records/{UNIT_KIND}/ folder there")
    skip = {x.strip() for x in args.skip.split(",") if x.strip()}
    unknown = skip - {"physics", "multitask", "regularization", "robustness", "codesign", "single"}
    if unknown:
        raise SystemExit(f"error: --skip {sorted(unknown)}: unknown section(s)")
    torch.set_num_threads(args.threads)
    q = args.quick
    s = settings_for(q)
    for key in ("train", "test", "epochs", "seeds"):
        if getattr(args, key) is not None:
            s[key] = getattr(args, key)
    trials = s["codesign_trials"] if args.codesign_trials is None else args.codesign_trials
    # the command that resumes this run: the settings that are part of the fingerprint, as given
    cmd = "coexplore reproduce d2nn" + (" --quick" if q else "") + "".join(
        f" --{key} {getattr(args, key)}" for key in ("train", "test", "epochs") if getattr(args, key) is not None)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    check_fingerprint(out, s)
    t_all = time.perf_counter()
    res: dict[str, Any] = {"settings": {**s, "quick": q, "device": device, "threads": args.threads, "jobs": args.jobs,
                                        "python": platform.python_version(), "torch": torch.__version__,
                                        "cpu_count": os.cpu_count()}}
    if "physics" not in skip:
        res["physics"] = physics_checks()
        print("physics: ASM-Fresnel L2 visible {:.2e}, cpu {:.2e}, THz {:.2f}; Gaussian worst {:.2%}".format(
            res["physics"]["visible"]["asm_fresnel_l2"], res["physics"]["cpu"]["asm_fresnel_l2"],
            res["physics"]["thz"]["asm_fresnel_l2"], max(res["physics"]["gaussian_width_rel_error"].values())))
    res["cost"] = cost_checks()
    ctx = make_context(s, device, out)
    res["data"] = {ds: {"source": t.source, "train": len(t.train_y), "test": len(t.test_y)} for ds, t in ctx.tasks.items()}
    print(f"data: {res['data']}")
    phases = plan(s, skip)
    if "codesign" not in skip and trials > 0:  # first: cheap next to the full-data models
        opts = {**s["codesign_opts"], "min_recognition": s["min_recognition"]}
        cd = run_codesign(trials, s["codesign_init"], opts, out, run=not args.no_train)
        if cd:
            res["codesign"] = cd
            print(f"co-design: {cd['trials']} trials, {cd['violating_recognition']} below recognition "
                  f"{cd['min_recognition']}, front {cd['front_size']} points")
    if not args.no_train:
        execute(phases, ctx, args.jobs, out, args.threads)
    store = ctx.store
    res["pending"] = [u.key for p in phases for u in p if not store.has(u.key)]
    res["single"] = single_results(s, store)
    for ds, d in res["single"]["d2nn"].items():
        print(f"single {ds}: {_ms(d['acc'])}; {d['epoch_wall_s']:.0f} s wall / {d['epoch_cpu_s']:.0f} s CPU per epoch")
    pd.DataFrame([{"dataset": ds, "seed": sd, "acc": a} for ds, d in res["single"]["d2nn"].items()
                  for sd, a in enumerate(d["per_seed"])]).to_csv(out / "single_task.csv", index=False)
    if "multitask" not in skip:
        res["multitask"] = multitask_results(s, store)
        pd.DataFrame([{k: v for k, v in r.items() if k != "per_seed"} | p for r in res["multitask"]["rows"]
                      for p in r["per_seed"]]).to_csv(out / "multitask.csv", index=False)
        if any(r["seeds"] for r in res["multitask"]["rows"]):
            plot_multitask(res["multitask"], res["single"], out / "multitask.png")
    if "robustness" not in skip:
        df = robustness_frame(s, phases, store)
        if not df.empty:
            df.to_csv(out / "robustness.csv", index=False)
            g = df.groupby(["task", "model", "variant", "source", "level_label"], sort=False)
            summ = g["accuracy"].agg(["mean", "std", "count"]).reset_index()
            summ.to_csv(out / "robustness_summary.csv", index=False)
            for task in dict.fromkeys(df["task"]):
                plot_robustness_models(df[df["task"] == task], out / f"robustness_{task}.png",
                                       f"{task}, N={s['n']}, L={s['layers']}: mean over model seeds x "
                                       f"{s['noise_seeds']} noise seeds, {s['robust_test']} test images")
        aware = _recs(store, [u.key for p in phases for u in p if u.kind == "aware"])
        res["robustness"] = {"summary": robustness_summary(df), "noise_aware": NOISE_AWARE.as_dict(),
                             "test_images": s["robust_test"], "noise_seeds": s["noise_seeds"],
                             "aware_models": len(aware)}
    if "regularization" not in skip:
        res["regularization"] = regularization_results(s, store)
        pd.DataFrame(res["regularization"]["points"]).to_csv(out / "regularization.csv", index=False)
        if res["regularization"]["points"]:
            plot_regularization(res["regularization"], out / "regularization.png")
    if args.gpu:
        res["gpu"] = gpu_scale(args, s, device)
    res["compute"] = compute_used(store)
    if args.compare_with is not None:
        rows = compare_stores(store, UnitRecords(args.compare_with))
        pd.DataFrame(rows).to_csv(out / "device_check.csv", index=False)
        res["device_check"] = {"units": len(rows), "other": str(args.compare_with),
                               "max_abs_acc_diff": max((r["max_abs_acc_diff"] for r in rows), default=None),
                               "max_abs_param_diff_rad": max((r["max_abs_param_diff"] for r in rows), default=None)}
        print(f"device check: {len(rows)} units in both; largest accuracy difference "
              f"{res['device_check']['max_abs_acc_diff']}, largest phase difference "
              f"{res['device_check']['max_abs_param_diff_rad']} rad")
    res["compute"]["plan"] = plan_cost(s, phases, len(ctx.tasks["mnist"].train_y))
    ep = [d["epoch_cpu_s"] for d in res["single"]["d2nn"].values()]
    if ep:  # the whole run's CPU time at the measured single-task epoch
        res["compute"]["plan"]["cpu_hours_estimate"] = res["compute"]["plan"]["epochs_total"] * float(np.mean(ep)) / 3600
        print(f"plan: {res['compute']['plan']['epochs_total']:.0f} single-task epochs, about "
              f"{res['compute']['plan']['cpu_hours_estimate']:.1f} CPU hours at {np.mean(ep):.0f} s CPU per epoch")
    res["seconds"] = time.perf_counter() - t_all
    (out / "results.json").write_text(json.dumps(jsonable(res), indent=1))
    write_table(res, out / "table.md", cmd)
    print(f"results: {out / 'results.json'}, table: {out / 'table.md'} ({res['seconds']:.0f} s; "
          f"{len(res['pending'])} units pending)")
    return res


def _device_kind(record: dict[str, Any]) -> str:
    """``cpu`` / ``cuda`` ...: the device type a unit's record names (``cuda:0`` is ``cuda``)."""
    return str(record.get("device", "cpu")).split(":")[0]


def compute_used(store: UnitRecords) -> dict[str, Any]:
    """What the stored units cost, whenever run: CPU and wall hours of the units computed on
    the CPU, wall hours of those trained on a GPU (``gpu_wall_hours``; their host CPU time
    is no measure of the work), and how many units were trained on each device
    (``by_device``; units that train nothing -- robustness sweeps, the pixel baseline --
    count as ``cpu``)."""
    cpu = wall = gpu_wall = 0.0
    n = 0
    by_device: dict[str, int] = {}
    for key in store.keys():
        r = store.record(key) or {}
        dev = _device_kind(r)
        w = float(r.get("train_s", r.get("seconds", 0.0)))
        if dev == "cpu":
            cpu += float(r.get("cpu_s", 0.0))
            wall += w
        else:
            gpu_wall += w
        n += 1
        by_device[dev] = by_device.get(dev, 0) + 1
    return {"units": n, "cpu_hours": cpu / 3600, "wall_hours": wall / 3600, "gpu_wall_hours": gpu_wall / 3600,
            "by_device": by_device}


def compare_stores(a: UnitRecords, b: UnitRecords) -> list[dict[str, Any]]:
    """The units trained in both stores on different devices (say one on the CPU, one on a
    GPU), side by side: each one's test accuracies and the largest difference between their
    parameters (phase, rad). Training is seeded, so the two differ only by floating-point
    order. Units trained on the same device in both (one store's copy of the other's) are
    left out."""
    rows = []
    for key in a.keys():
        if not b.has(key):
            continue
        x, y = a.load(key), b.load(key)
        if "state" not in x or "state" not in y or _device_kind(x["record"]) == _device_kind(y["record"]):
            continue
        dp = max(float((x["state"][k].double() - y["state"][k].double()).abs().max()) for k in x["state"])
        rx, ry = x["record"], y["record"]
        rows.append({"unit": key, "device_a": rx.get("device"), "device_b": ry.get("device"),
                     "acc_a": list(rx["acc"]), "acc_b": list(ry["acc"]),
                     "max_abs_acc_diff": max(abs(u - v) for u, v in zip(rx["acc"], ry["acc"])),
                     "max_abs_param_diff": dp})
    return rows


def gpu_scale(args: argparse.Namespace, s: dict[str, Any], device: str) -> dict[str, Any]:
    """The GPU-scale config (runs on --device; meant for cuda, a CPU run needs --gpu-train small)."""
    if not device.startswith("cuda"):
        print("warning: the GPU-scale config on CPU is slow; pass --device cuda on a GPU machine")
    spec = DiffractiveAccelerator(n=200, pad=100, z_m=0.3, layers=5, detector_size_px=20)
    full = prepare_tasks(["mnist"], args.gpu_train, args.gpu_test, seed=0)[0]
    net = DiffractiveNetwork(spec, amplitude_factors=s["amplitude"], seed=0)
    r = train(net, [full], TrainConfig(epochs=args.gpu_epochs, batch_size=256, lr=0.05, device=device))
    acc = evaluate(net, [full])["acc"][0]
    print(f"GPU-scale config (200x200, L=5): {acc:.4f} in {r.seconds:.0f} s on {r.device}")
    return {"acc": acc, "acc_str": _pct(acc), "train_s": r.seconds,
            "note": f"{args.gpu_epochs} epochs, {len(full.train_y)} train / {len(full.test_y)} test images, "
                    f"{r.device}, {r.seconds:.0f} s"}


if __name__ == "__main__":
    main()
