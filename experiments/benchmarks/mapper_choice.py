"""Which inner mapper a study should use: exact vs heuristic on the hardware points it visits.

A co-design study maps every layer of its workload on every hardware point it proposes, so
the choice of mapper is a trade of run time against how wrong each point's score is. This
benchmark draws ``--points`` feasible hardware points uniformly from a study config's space
(constraints enforced; default: the demo, ``experiments/configs/demo.yaml``), builds each
point's accelerator with the config's nested evaluator, and maps every unit of its
workload with the heuristic mapper and with the exact mapper (:class:`mappers.exact.ExactMapper`,
the config's objective for mapping, default EDP), both scored by the loop-nest model. It
prints per point and layer the heuristic's objective over the exact one and both times,
then the median and largest of each and how many layers the exact mapper proved optimal.

Timings are wall seconds on one core (BLAS threads set to 1) and depend on the machine's
load, printed with them.

Run: ``python -m experiments.benchmarks.mapper_choice [--config FILE] [--points N] [--seed S]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from evaluators.loopnest import LOOPNEST  # noqa: E402
from evaluators.nested import NestedEvaluator  # noqa: E402
from experiments.config import load_config  # noqa: E402
from mappers.exact import ExactMapper  # noqa: E402
from mappers.heuristic import HeuristicMapper  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "configs" / "demo.yaml"


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(DEMO), help="study config whose space and nested evaluator to use")
    ap.add_argument("--points", type=int, default=10, help="hardware points drawn from the space")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=60.0, help="exact mapper's limit per layer (s)")
    args = ap.parse_args(argv)

    loaded = load_config(args.config)
    ev_cfg = loaded.config.evaluator
    opts = dict(ev_cfg.options)
    if ev_cfg.function != "nested":
        raise SystemExit(f"--config {args.config}: evaluator.function is {ev_cfg.function!r}; this benchmark "
                         "needs the nested evaluator (evaluator: {function: nested, options: ...})")
    ev = NestedEvaluator(opts["accelerator"], opts["workload"], "heuristic",
                         objective=opts.get("objective", "edp"))
    objective = ev.objective
    exact, heuristic = ExactMapper(time_limit_s=args.time_limit), HeuristicMapper()
    ratios, t_exact, t_heur, proven = [], [], [], 0
    print(f"{Path(args.config).name}: {args.points} points, seed {args.seed}, objective {objective}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'point':>5}  {'layer':<22}{'heur/exact':>11}{'exact s':>9}{'heur s':>8}  proven")
    for k, point in enumerate(loaded.space.sample(args.points, seed=args.seed)):
        arch = ev.build(point).to_arch()
        for layer in ev.layers:
            t = time.perf_counter()
            h = heuristic.map(layer, arch, LOOPNEST, objective)
            t_heur.append(time.perf_counter() - t)
            t = time.perf_counter()
            e = exact.map(layer, arch, LOOPNEST, objective)
            t_exact.append(time.perf_counter() - t)
            ratios.append(h.objective(objective) / e.objective(objective))
            proven += bool(e.optimal)
            print(f"{k:>5}  {layer.name:<22}{ratios[-1]:>11.3f}{t_exact[-1]:>9.2f}{t_heur[-1]:>8.2f}  {e.optimal}",
                  flush=True)
    summary = {
        "exact_median_s": float(np.median(t_exact)), "exact_max_s": float(np.max(t_exact)),
        "heuristic_median_s": float(np.median(t_heur)), "heuristic_max_s": float(np.max(t_heur)),
        "heuristic_over_exact_median": float(np.median(ratios)),
        "heuristic_over_exact_max": float(np.max(ratios)),
        "proven_optimal": proven, "layers_mapped": len(ratios),
    }
    print(f"exact: median {summary['exact_median_s']:.2f} s, max {summary['exact_max_s']:.2f} s per layer, "
          f"{proven}/{len(ratios)} proven optimal; heuristic: median {summary['heuristic_median_s']:.2f} s, "
          f"objective / exact median {summary['heuristic_over_exact_median']:.3f}, "
          f"max {summary['heuristic_over_exact_max']:.3f} (load {os.getloadavg()[0]:.1f})")
    return summary


if __name__ == "__main__":
    main()
