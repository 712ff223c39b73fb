"""Time per training epoch of the D2NN reproduction's CPU configuration, measured.

Trains the single-task network of ``coexplore reproduce d2nn`` (N = 64 + 2 x 32 padding,
L = 5 phase-only layers, z = 0.1 m, batch 64, Adam; :func:`experiments.reproduce.d2nn.settings_for`)
on MNIST for ``--steps`` optimizer steps per thread count and extrapolates to one epoch of
60,000 images. It prints, per thread count, the wall time and the process's CPU time
(user + system, all threads) per step and per epoch, and the 1-minute load average
before and after: on a machine shared with other jobs the wall time is inflated by the
load, the CPU time much less, so both are reported. With ``--threads 1 2`` it also shows
what a second thread buys (or costs, when the cores are oversubscribed and the OpenMP
threads wait for each other).

Run: ``python -m experiments.benchmarks.d2nn_epoch_time [--steps 60] [--threads 1 2]
[--layers 5] [--n 64] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import torch

from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.train import TrainConfig, prepare_tasks, train
from experiments.reproduce.d2nn import cpu_spec, settings_for

EPOCH_IMAGES = 60_000


def measure(threads: int, steps: int, n: int, layers: int) -> dict[str, Any]:
    """Wall and CPU seconds of ``steps`` training steps at ``threads`` torch threads."""
    s = {**settings_for(False), "n": n, "layers": layers}
    task = prepare_tasks(["mnist"], s["batch"] * (steps + 2), 10, seed=0)[0]
    torch.set_num_threads(threads)
    net = DiffractiveNetwork(cpu_spec(s), amplitude_factors=s["amplitude"], seed=0, check="off")
    warm = TrainConfig(epochs=1, batch_size=s["batch"], lr=s["lr"], max_steps=2)
    train(net, [task], warm)  # first steps build the transfer functions and allocate
    load0 = os.getloadavg()[0]
    r = train(net, [task], TrainConfig(epochs=1, batch_size=s["batch"], lr=s["lr"], max_steps=steps))
    per_step_wall, per_step_cpu = r.seconds / r.steps, r.cpu_seconds / r.steps
    steps_per_epoch = EPOCH_IMAGES / s["batch"]
    return {"threads": threads, "steps": r.steps, "n": n, "layers": layers, "batch": s["batch"],
            "wall_s_per_step": per_step_wall, "cpu_s_per_step": per_step_cpu,
            "epoch_wall_s": per_step_wall * steps_per_epoch, "epoch_cpu_s": per_step_cpu * steps_per_epoch,
            "loadavg_1min": [load0, os.getloadavg()[0]], "cores": os.cpu_count()}


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60, help="timed optimizer steps per thread count")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--layers", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.steps < 1 or any(t < 1 for t in args.threads):
        raise SystemExit(f"error: --steps and --threads must be >= 1, got {args.steps} and {args.threads}")
    rows = []
    for t in args.threads:
        t0 = time.perf_counter()
        r = measure(t, args.steps, args.n, args.layers)
        rows.append(r)
        print(f"N={r['n']} L={r['layers']} batch {r['batch']}, {t} thread(s): {1e3 * r['wall_s_per_step']:.0f} ms wall, "
              f"{1e3 * r['cpu_s_per_step']:.0f} ms CPU per step -> one 60,000-image epoch {r['epoch_wall_s']:.0f} s "
              f"wall, {r['epoch_cpu_s']:.0f} s CPU (1-min load {r['loadavg_1min'][0]:.1f} -> "
              f"{r['loadavg_1min'][1]:.1f} on {r['cores']} cores; {time.perf_counter() - t0:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
