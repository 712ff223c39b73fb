"""Would more epochs help? Continue a trained single-task unit of ``coexplore reproduce d2nn``.

Loads unit ``single-DATASET-sSEED`` of ``OUT/records`` (a model the reproduction trained for
``settings['epochs']`` epochs), continues training it on all of that data set's training
images for ``--extra`` more epochs on the same step schedule (the learning rate the
schedule would have reached at that epoch, halved every ``lr_step_epochs``; Adam's moments
start afresh, so this is close to, not identical with, training that many epochs from
scratch), and prints and writes the test accuracy on all 10,000 test images after every
extra epoch, with wall and CPU seconds. It is the measurement behind the choice of the
epoch count; it changes nothing in ``OUT``.

Run: ``python -m experiments.search_quality.d2nn_more_epochs --dataset fashion --seed 0
--extra 2 [--out runs/reproduce/d2nn] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import torch

from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.train import TrainConfig, evaluate, prepare_tasks, train
from experiments.reproduce.d2nn import TASKS, UnitRecords, cpu_spec, single_key


def continue_unit(out: Path, dataset: str, seed: int, extra: int) -> list[dict[str, Any]]:
    """Per extra epoch: ``epoch`` (total epochs trained), ``lr``, test ``acc``, seconds."""
    settings_path = Path(out) / "settings.json"
    if not settings_path.exists():
        raise SystemExit(f"error: --out {out}: no settings.json there (not a d2nn reproduction folder)")
    s = json.loads(settings_path.read_text())
    store = UnitRecords(Path(out))
    key = single_key(dataset, seed)
    if not store.has(key):
        raise SystemExit(f"error: --dataset {dataset} --seed {seed}: unit {key} is not in {out}/units")
    net = DiffractiveNetwork(cpu_spec(s), amplitude_factors=s["amplitude"], seed=seed, check="off")
    net.load_state_dict(store.load(key)["state"])
    task = prepare_tasks([dataset], s["train"], s["test"], seed=0)[0]
    rows = [{"epoch": s["epochs"], "lr": None, "acc": store.record(key)["acc"][0], "wall_s": 0.0, "cpu_s": 0.0}]
    for e in range(s["epochs"], s["epochs"] + extra):
        lr = s["lr"] * s["lr_gamma"] ** (e // s["lr_step_epochs"])
        t0, c0 = time.perf_counter(), time.process_time()
        train(net, [task], TrainConfig(epochs=1, batch_size=s["batch"], lr=lr, lr_step_epochs=10**6,
                                       seed=10_000 + 100 * seed + e))
        acc = evaluate(net, [task])["acc"][0]
        rows.append({"epoch": e + 1, "lr": lr, "acc": acc, "wall_s": time.perf_counter() - t0,
                     "cpu_s": time.process_time() - c0, "loadavg_1min": os.getloadavg()[0]})
        print(f"{key}: epoch {e + 1} (lr {lr:g}): test acc {acc:.4f} ({rows[-1]['wall_s']:.0f} s wall, "
              f"{rows[-1]['cpu_s']:.0f} s CPU)", flush=True)
    return rows


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", choices=TASKS, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--extra", type=int, default=2, help="epochs to add")
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/d2nn"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.extra < 1:
        raise SystemExit(f"error: --extra must be >= 1, got {args.extra}")
    torch.set_num_threads(1)
    rows = continue_unit(args.out, args.dataset, args.seed, args.extra)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    main()
