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

Timings are CPU seconds of this process (``time.process_time``, one core, BLAS threads set
to 1), which other work on the machine does not stretch; the wall seconds are printed beside
them with the load average. The numba kernels are compiled (or loaded from their cache)
before the first timed layer (:func:`experiments.benchmarks.jit_warmup.warm_exact_mapper`).
The exact mapper's ``--time-limit`` is wall time. ``--json FILE`` writes every row and the
summary.

Run: ``python -m experiments.benchmarks.mapper_choice [--config FILE] [--points N] [--seed S] [--json FILE]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from evaluators.loopnest import LOOPNEST  # noqa: E402
from evaluators.nested import NestedEvaluator  # noqa: E402
from experiments.benchmarks.jit_warmup import warm_exact_mapper  # noqa: E402
from experiments.config import load_config  # noqa: E402
from experiments.proof_scopes import ProofScopes  # noqa: E402
from mappers.exact import ExactMapper  # noqa: E402
from mappers.heuristic import HeuristicMapper  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "configs" / "demo.yaml"


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(DEMO), help="study config whose space and nested evaluator to use")
    ap.add_argument("--points", type=int, default=10, help="hardware points drawn from the space")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=60.0, help="exact mapper's limit per layer (wall s)")
    ap.add_argument("--json", default=None, help="write every row and the summary here")
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
    rows: list[dict[str, object]] = []
    points = loaded.space.sample(args.points, seed=args.seed)
    warm_cpu_s = warm_exact_mapper(ev.build(points[0]).to_arch(), (objective,))
    print(f"{Path(args.config).name}: {args.points} points, seed {args.seed}, objective {objective}, "
          f"load {os.getloadavg()[0]:.1f}; numba warm-up {warm_cpu_s:.1f} CPU s (not counted)")
    archs = [ev.build(point).to_arch() for point in points]
    scopes = ProofScopes("point")
    for k, arch in enumerate(archs):
        for layer in ev.layers:
            scopes.announce(f"point {k}", layer.name, exact, layer, arch, LOOPNEST, objective)
    print("\n".join(scopes.lines()))
    print(f"{'point':>5}  {'layer':<22}{'heur/exact':>11}{'exact CPU s':>12}{'wall s':>8}{'heur CPU s':>11}  proven")
    for k, arch in enumerate(archs):
        for layer in ev.layers:
            c = time.process_time()
            h = heuristic.map(layer, arch, LOOPNEST, objective)
            heur_cpu_s = time.process_time() - c
            t, c = time.perf_counter(), time.process_time()
            e = exact.map(layer, arch, LOOPNEST, objective)
            exact_wall_s, exact_cpu_s = time.perf_counter() - t, time.process_time() - c
            scopes.check(f"point {k}", layer.name, e)
            ratio = h.objective(objective) / e.objective(objective)
            rows.append(dict(point=k, layer=layer.name, heuristic_over_exact=ratio, exact_cpu_s=exact_cpu_s,
                             exact_wall_s=exact_wall_s, heuristic_cpu_s=heur_cpu_s, proven=bool(e.optimal),
                             scope=e.scope.as_dict() if e.scope is not None else None))
            print(f"{k:>5}  {layer.name:<22}{ratio:>11.3f}{exact_cpu_s:>12.2f}{exact_wall_s:>8.2f}{heur_cpu_s:>11.2f}"
                  f"  {e.optimal}", flush=True)
    t_exact = [r["exact_cpu_s"] for r in rows]
    t_heur = [r["heuristic_cpu_s"] for r in rows]
    ratios = [r["heuristic_over_exact"] for r in rows]
    proven = sum(bool(r["proven"]) for r in rows)
    summary = {
        "exact_median_cpu_s": float(np.median(t_exact)), "exact_max_cpu_s": float(np.max(t_exact)),
        "exact_max_wall_s": float(max(r["exact_wall_s"] for r in rows)),
        "heuristic_median_cpu_s": float(np.median(t_heur)), "heuristic_max_cpu_s": float(np.max(t_heur)),
        "heuristic_over_exact_median": float(np.median(ratios)),
        "heuristic_over_exact_max": float(np.max(ratios)),
        "proven_optimal": proven, "layers_mapped": len(ratios),
    }
    print(f"exact: median {summary['exact_median_cpu_s']:.2f} CPU s, max {summary['exact_max_cpu_s']:.2f} CPU s "
          f"per layer, {proven}/{len(ratios)} proven optimal; heuristic: median "
          f"{summary['heuristic_median_cpu_s']:.2f} CPU s, "
          f"objective / exact median {summary['heuristic_over_exact_median']:.3f}, "
          f"max {summary['heuristic_over_exact_max']:.3f} (load {os.getloadavg()[0]:.1f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": Path(args.config).name, "points": args.points, "seed": args.seed,
                       "objective": objective, "time_limit_wall_s": args.time_limit,
                       "warmup_cpu_s": warm_cpu_s, "rows": rows, "summary": summary,
                       "scopes": scopes.records()}, f, indent=1)
    return summary


if __name__ == "__main__":
    main()
