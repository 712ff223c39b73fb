"""Train one diffractive network at paper scale (N = 200, issue 47 item 4) and time it.

The geometry is one of the two N = 200 references of :mod:`accelerators.diffractive`:
``lin2018-thz`` (:data:`~accelerators.diffractive.LIN2018_THZ`, Lin et al., Science
361:1004, 2018: 0.75 mm, 0.4 mm pitch, 3 cm between planes) or ``lightridge-visible``
(:data:`~accelerators.diffractive.LIGHTRIDGE_VISIBLE`, LightRidge's default: 532 nm,
36 um, 0.3 m); both with 5 phase-only layers and LightRidge's 10 detector regions of
N / 10 px. The propagator and pad are the validity planner's
(:meth:`~accelerators.diffractive.DiffractiveAccelerator.planned` at ``--tol``, default
:data:`~accelerators.diffraction_limits.PADDING_TOL`), recorded with the padding error it
expects. Training is the reproduction's CPU recipe (``settings_for(False)`` in
:mod:`experiments.reproduce.d2nn`: Adam, lr 0.05 halved every 2 epochs, batch 64,
amplitude factor 1.2, seed 0) on a stratified subset of MNIST's training images
(``--train-images``), tested on ``--test-images`` (default all 10,000).

**One record.** The trained model is one record of :mod:`experiments.records` (kind
:data:`KIND`, its settings the key) in ``--store`` with the trained phases beside it
(``.pt``, tensors only); the record holds test accuracy, wall and CPU seconds
(``time.process_time``) of training and of testing, steps, torch threads, the load
average at start and end, the planned propagator, and the data sizes. A run whose record
exists trains nothing and only rewrites ``--out`` (a JSON of the command and the record),
so a stopped run is resumed by running the same command again; a run stopped part-way
through training starts that model again (there is no mid-epoch checkpoint).

Run: ``python -m experiments.reproduce.d2nn_paper_scale --train-images 10000
--out docs/reproduction/results/d2nn/paper_scale.json``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import torch

from accelerators.diffraction_limits import PADDING_TOL, PropagationValidityError, plan_propagation
from accelerators.diffractive import LIGHTRIDGE_VISIBLE, LIN2018_THZ, DiffractiveAccelerator
from evaluators.optics.data import DataUnavailable
from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.train import TrainConfig, evaluate, prepare_tasks, resolve_device, train
from experiments.records import RecordStore, record_key
from experiments.reproduce import jsonable, write_atomic

__all__ = ["GEOMETRIES", "KIND", "main", "parse", "spec_for"]

#: Record kind of a paper-scale model.
KIND = "d2nn.paper_scale"
#: The N = 200 reference geometries (5 layers, 10 regions of N / 10 px each).
GEOMETRIES: dict[str, DiffractiveAccelerator] = {"lin2018-thz": LIN2018_THZ, "lightridge-visible": LIGHTRIDGE_VISIBLE}
#: The reproduction's CPU training recipe (``experiments.reproduce.d2nn.settings_for(False)``).
RECIPE = {"batch": 64, "lr": 0.05, "lr_step_epochs": 2, "lr_gamma": 0.5, "amplitude": 1.2}
#: MNIST's split sizes (the upper bounds of ``--train-images`` / ``--test-images``; the
#: data actually loaded is checked too).
MNIST_TRAIN, MNIST_TEST = 60_000, 10_000


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m experiments.reproduce.d2nn_paper_scale",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--geometry", choices=sorted(GEOMETRIES), default="lin2018-thz",
                    help="the N = 200 reference geometry (default lin2018-thz)")
    ap.add_argument("--n", type=int, default=200, help="pixels per side (default 200, the papers'; "
                    "smaller only for tests: the pitch, wavelength and distance stay the geometry's)")
    ap.add_argument("--train-images", type=int, default=10_000,
                    help="MNIST training images, a stratified subset (default 10,000 of 60,000)")
    ap.add_argument("--test-images", type=int, default=None, help="MNIST test images (default all 10,000)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=RECIPE["batch"])
    ap.add_argument("--lr", type=float, default=RECIPE["lr"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tol", type=float, default=PADDING_TOL, help="padding-error tolerance of the "
                    f"propagation planner (default {PADDING_TOL})")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--store", type=Path, default=Path("runs/reproduce/d2nn_paper_scale/records"),
                    help="the record store holding the model's record and trained phases")
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/d2nn_paper_scale/paper_scale.json"),
                    help="the JSON written: the command and the record")
    return ap


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Parsed and checked arguments; bad values are ``SystemExit`` naming the option and value."""
    a = _parser().parse_args(argv)
    ints = (("n", 10, None), ("train_images", 10, MNIST_TRAIN), ("test_images", 1, MNIST_TEST),
            ("epochs", 1, None), ("batch", 1, None), ("threads", 1, None), ("seed", 0, None))
    for name, low, high in ints:
        v = getattr(a, name)
        if v is None:
            continue
        if v < low or (high is not None and v > high):
            rng = f">= {low}" if high is None else f"in [{low}, {high}]"
            raise SystemExit(f"error: --{name.replace('_', '-')} must be {rng}, got {v}")
    for name in ("lr", "tol"):
        v = getattr(a, name)
        if not (math.isfinite(v) and v > 0):
            raise SystemExit(f"error: --{name} must be a finite number > 0, got {v}")
    if a.out.suffix != ".json":
        raise SystemExit(f"error: --out must name a .json file, got {str(a.out)!r}")
    try:
        a.device = str(resolve_device(a.device))
    except (RuntimeError, ValueError) as e:
        raise SystemExit(f"error: --device {a.device!r}: {e}") from None
    return a


def spec_for(geometry: str, n: int, tol: float) -> DiffractiveAccelerator:
    """The geometry at ``n`` px (pad ``n / 2`` stated, 10 regions of ``n / 10`` px), with
    the pad and propagator the planner picks at ``tol``."""
    base = GEOMETRIES[geometry]
    stated = base.with_(n=n, pad=n // 2, detector_size_px=max(2, n // 10))
    return stated.planned(tol)


def _plan_record(spec: DiffractiveAccelerator) -> dict[str, Any]:
    """The planner's choice for ``spec`` and every candidate it tried (the stated pad
    ``n / 2`` with the band-limited ASM first), with their expected padding errors."""
    plan = plan_propagation(spec.wavelength_m, spec.pitch_m, spec.n, spec.z_m, tol=spec.padding_tol,
                            prefer=("asm", spec.n // 2))
    if (plan.method, plan.pad) != (spec.propagation, spec.pad):
        raise RuntimeError(f"planner disagrees with the spec: {plan.method} pad {plan.pad} vs "
                           f"{spec.propagation} pad {spec.pad}")
    return {"method": plan.method, "pad": plan.pad, "grid": spec.grid, "tol": plan.tol,
            "padding_error": plan.error,
            "z_over_zc": spec.z_m * spec.wavelength_m / (spec.grid * spec.pitch_m**2),
            "tried": [{"method": mt, "pad": p, "padding_error": e, "problems": list(pr)}
                      for mt, p, e, pr in plan.tried]}


def settings_of(a: argparse.Namespace) -> dict[str, Any]:
    """What the model depends on: the record's key."""
    return {"geometry": a.geometry, "n": a.n, "train_images": a.train_images, "test_images": a.test_images,
            "epochs": a.epochs, "batch": a.batch, "lr": a.lr, "lr_step_epochs": RECIPE["lr_step_epochs"],
            "lr_gamma": RECIPE["lr_gamma"], "amplitude": RECIPE["amplitude"], "seed": a.seed, "tol": a.tol,
            "device": a.device.split(":")[0]}


def _train(a: argparse.Namespace, spec: DiffractiveAccelerator, store: RecordStore) -> dict[str, Any]:
    torch.set_num_threads(a.threads)
    load0 = list(os.getloadavg())
    try:
        task = prepare_tasks(["mnist"], a.train_images, a.test_images, seed=0)[0]
    except DataUnavailable as e:
        raise SystemExit(f"error: {e}") from None
    if len(task.train_y) < a.train_images or (a.test_images and len(task.test_y) < a.test_images):
        raise SystemExit(f"error: --train-images {a.train_images} / --test-images {a.test_images}: the MNIST "
                         f"loaded ({task.source}) has only {len(task.train_y)} / {len(task.test_y)}")
    net = DiffractiveNetwork(spec, amplitude_factors=RECIPE["amplitude"], seed=a.seed, check="strict")
    cfg = TrainConfig(epochs=a.epochs, batch_size=a.batch, lr=a.lr, lr_step_epochs=RECIPE["lr_step_epochs"],
                      lr_gamma=RECIPE["lr_gamma"], seed=a.seed, device=a.device)
    print(f"training {a.geometry} N = {spec.n} ({spec.propagation}, pad {spec.pad}) on {len(task.train_y)} "
          f"images, {a.epochs} epoch(s), batch {a.batch}, {a.threads} thread(s), {a.device}", flush=True)
    r = train(net, [task], cfg)
    print(f"trained: {r.seconds:.0f} s wall, {r.cpu_seconds:.0f} s CPU, {r.steps} steps", flush=True)
    t0, c0 = time.perf_counter(), time.process_time()
    ev = evaluate(net, [task], batch_size=100)
    test_s, test_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    n_tr, n_te = len(task.train_y), len(task.test_y)
    value = {
        "acc": ev["acc"][0], "train_images": n_tr, "test_images": n_te, "data": task.source,
        "train_s": r.seconds, "train_cpu_s": r.cpu_seconds, "epoch_s": list(r.epoch_seconds),
        "loss_per_epoch": list(r.loss_history), "steps": r.steps,
        "train_cpu_s_per_image_epoch": r.cpu_seconds / (n_tr * max(1, len(r.epoch_seconds))),
        "test_s": test_s, "test_cpu_s": test_cpu_s, "test_cpu_s_per_image": test_cpu_s / n_te,
        "threads": r.threads, "device": r.device, "loadavg_start": load0, "loadavg_end": list(os.getloadavg()),
        "spec": {"wavelength_m": spec.wavelength_m, "pitch_m": spec.pitch_m, "n": spec.n, "z_m": spec.z_m,
                 "layers": spec.layers, "detector_regions": spec.detector_regions,
                 "detector_px": spec.detector_px, "phase_levels": spec.phase_levels},
        "propagation": _plan_record(spec),
        "python": platform.python_version(), "torch": torch.__version__, "cpu_count": os.cpu_count(),
    }
    value = jsonable(value)
    key = record_key(KIND, settings_of(a))
    weights = store.path(key).with_suffix(".pt")
    weights.parent.mkdir(parents=True, exist_ok=True)
    tmp = weights.with_name(f".{weights.name}.tmp{os.getpid()}")
    torch.save({k: v.detach().cpu() for k, v in net.state_dict().items()}, tmp)
    os.replace(tmp, weights)
    value["weights"] = weights.name
    store.put(KIND, settings_of(a), value, wall_s=r.seconds + test_s, cpu_s=r.cpu_seconds + test_cpu_s,
              replace=True)
    return value


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train (unless the record exists) and write ``--out``; returns the record's JSON."""
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parse(argv)
    try:
        spec = spec_for(a.geometry, a.n, a.tol)
    except PropagationValidityError as e:
        raise SystemExit(f"error: --geometry {a.geometry} at --n {a.n}, --tol {a.tol}: {e}") from None
    store = RecordStore(a.store)
    settings = settings_of(a)
    if store.has(KIND, settings):
        print(f"record exists in {a.store}: not training again", flush=True)
    else:
        _train(a, spec, store)
    rec = store.record(KIND, settings)
    assert rec is not None
    out = {"command": "python -m experiments.reproduce.d2nn_paper_scale " + shlex.join(argv),
           "record": rec.to_json()}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(a.out, json.dumps(out, indent=1) + "\n")
    v = rec.value
    print(f"{a.geometry} N = {v['spec']['n']}: test accuracy {100 * v['acc']:.2f} % on {v['test_images']} images "
          f"after {settings['epochs']} epoch(s) of {v['train_images']}; training {v['train_s']:.0f} s wall / "
          f"{v['train_cpu_s']:.0f} s CPU, testing {v['test_s']:.0f} s / {v['test_cpu_s']:.0f} s CPU; "
          f"{v['propagation']['method']} pad {v['propagation']['pad']}; {a.out}", flush=True)
    return out


if __name__ == "__main__":
    main()
