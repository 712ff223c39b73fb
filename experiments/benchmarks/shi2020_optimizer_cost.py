"""What the Shi 2020 optimizer comparison costs (issue 42): ``python -m
experiments.benchmarks.shi2020_optimizer_cost run [OPTIMIZER ...]`` runs one seed of each
outer optimizer of :data:`~experiments.reproduce.shi2020.VARIANTS` for 8 evaluations on DQN
at batch 1, iso resources, one worker, the search's mapper (3 M nodes per layer), and prints
the trials' CPU and wall seconds and the driver's CPU seconds; ``... overhead`` times one
proposal of each optimizer with a history of 16, 60 and 119 trials of a toy objective (the
optimizers' own cost beside the mapper's). Studies under ``runs/shi2020_optimizer_cost/``."""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

from experiments.reproduce import shi2020 as s

OUT = Path("runs/shi2020_optimizer_cost")


def run(optimizers: list[str], budget: int = 8) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    out = {}
    for opt in optimizers:
        t, c = time.perf_counter(), time.process_time()
        r = s.run_study("dqn", "dqn", opt, 0, "iso", budget, s.search_mapper(0, s.MAX_NODES),
                        f"sqlite:///{OUT / 'studies.db'}", 1)
        out[opt] = {"elapsed_wall_s": time.perf_counter() - t, "driver_cpu_s": time.process_time() - c,
                    "trials_wall_s": r["seconds"], "trials_cpu_s": r["cpu_seconds"], "failed": r["failed"],
                    "trial_cpu_s": r["trial_cpu_seconds"], "trial_wall_s": r["trial_seconds"]}
        print(opt, json.dumps(out[opt]), flush=True)
    return out


def _toy(p: dict) -> float:
    return (1 + (p["pe_x"] - 12) ** 2 + (p["pe_y"] - 12) ** 2) * (1 + abs(math.log2(p["glb_kib"] / 64)))


def overhead() -> dict:
    from optimizer import Trial, TrialStatus, make_optimizer
    from optimizer.base import parse_objectives

    space, obj = s.hardware_space("iso"), parse_objectives({"edp_uj_ms": "min"})
    hist = [Trial(i, p, TrialStatus.COMPLETE, metrics={"edp_uj_ms": _toy(p)})
            for i, p in enumerate(space.sample(120, seed=1))]
    out: dict = {}
    for name in s.VARIANTS:
        reg, opts = s.variant(name)
        out[name] = {}
        for n in (16, 60, 119):
            opt = make_optimizer(reg, space, obj, 0, opts)
            opt.tell(hist[:n])
            c = time.process_time()
            opt.ask(1)
            out[name][n] = time.process_time() - c
        print(name, out[name], flush=True)
    return out


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "run"
    if what == "overhead":
        overhead()
    else:
        run(sys.argv[2:] or list(s.VARIANTS))
