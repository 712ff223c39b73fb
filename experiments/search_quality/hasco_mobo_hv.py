"""Hypervolume of HASCO's hardware search after a fixed budget: MOBO (feasibility model)
vs MOBO with HASCO's reject-and-resample vs random search.

Each method searches HASCO's hardware space of an intrinsic accelerator
(:func:`evaluators.intrinsic_codesign.hardware_space`) for a workload, minimizing latency, power and
area (:class:`evaluators.intrinsic_codesign.HascoCoDesign`: every hardware point gets its software
searched per layer; the generator's bank limit makes some points infeasible). Same
budget of hardware evaluations for every method (infeasible ones count: each costs an
evaluation), ``--seeds`` seeds. The hypervolume is computed on log10 objectives
normalized by the bounds of every run of the problem, with reference point 1.1 per axis,
over the feasible evaluations. Printed per problem: the median final hypervolume of each
method, how many seeds MOBO beats random search on, and the infeasible evaluations spent.

Run: ``python -m experiments.search_quality.hasco_mobo_hv [--problems conv2d:CONV gemm:GEMM]
[--seeds 5] [--budget 25]``. Runs are cached under ``--out`` (delete it to start over).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np

from experiments.reproduce.hasco import hv_history, normalizer, objective_matrix, run_search

METHODS = ("mobo", "mobo-reject", "random")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="+", default=["conv2d:CONV", "gemm:GEMM", "mobilenet_v2:CONV"],
                    metavar="WORKLOAD:INTRINSIC")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget", type=int, default=25, help="hardware evaluations (HASCO: 5 Sobol + 20)")
    ap.add_argument("--n-init", type=int, default=5)
    ap.add_argument("--sw-budget", type=int, default=60, help="schedules per layer")
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/hasco_mobo_hv"))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict = {"settings": vars(args) | {"out": str(args.out)}, "problems": {}}
    for prob in args.problems:
        wl, kind = prob.split(":")
        runs: dict[str, list] = {}
        for m in args.methods:
            runs[m] = [run_search(kind, wl, m, s, args.budget, args.n_init, args.sw_budget, "search", args.out)
                       for s in range(args.seeds)]
        # seconds as recorded when each run executed (proposals + evaluations; a cached
        # run reports the time it took when it ran)
        secs = {m: [sum(r["seconds"]["ask"] + r["seconds"]["evaluate"] for r in run) for run in rs]
                for m, rs in runs.items()}
        mats = {m: [objective_matrix(r) for r in rs] for m, rs in runs.items()}
        lo, hi = normalizer([x for ms in mats.values() for x in ms if np.isfinite(x).all(axis=1).any()])
        hv = {m: np.array([hv_history(x, lo, hi)[-1] for x in ms]) for m, ms in mats.items()}
        bad = {m: [sum(r["status"] != "COMPLETE" for r in run) for run in rs] for m, rs in runs.items()}
        print(f"\n{wl} on {kind}: {args.budget} hardware evaluations, {args.seeds} seeds")
        print(f"{'method':12} {'median HV':>10} {'min':>8} {'max':>8} {'infeasible evals (median)':>26} "
              f"{'s/run':>7}")
        for m in args.methods:
            print(f"{m:12} {np.median(hv[m]):10.4f} {hv[m].min():8.4f} {hv[m].max():8.4f} "
                  f"{np.median(bad[m]):26.1f} {np.median(secs[m]):7.0f}")
        entry = {"hv": {m: v.tolist() for m, v in hv.items()}, "infeasible": bad,
                 "hv_median": {m: float(np.median(v)) for m, v in hv.items()}}
        if "mobo" in hv and "random" in hv:
            wins = int((hv["mobo"] > hv["random"]).sum())
            print(f"MOBO beats random search on {wins}/{args.seeds} seeds; median HV ratio "
                  f"{np.median(hv['mobo']) / np.median(hv['random']):.3f}")
            entry["mobo_wins_over_random"] = wins
        if "mobo" in hv and "mobo-reject" in hv:
            wins = int((hv["mobo"] > hv["mobo-reject"]).sum())
            print(f"feasibility model beats reject-and-resample on {wins}/{args.seeds} seeds")
            entry["model_wins_over_reject"] = wins
        report["problems"][prob] = entry
    print(json.dumps({p: e["hv_median"] for p, e in report["problems"].items()}))
    (args.out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    return report


if __name__ == "__main__":
    main()
