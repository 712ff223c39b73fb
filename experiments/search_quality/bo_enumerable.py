"""Evaluations to reach the exhaustive optimum on an enumerable co-design space.

The joint space: a systolic array (rows, cols in {8, 16, 32}; OS or WS) x the mapping of
a 128x128x128 GEMM onto it (the PE-level stream length, the SRAM-level tile factors of
M, N and K, and the DRAM loop order). Spatial unrolling follows the dataflow (rows <-
the reduction or output dimension, columns <- N), filling the array. Mappings whose
tiles overflow the SRAM are INFEASIBLE (an unknown constraint, as in real co-design).
The objective is the layer's EDP (loop-nest model, pJ x cycles).

:class:`~optimizer.grid_search.GridSearch` first scores every point (the exact optimum).
Then every optimizer runs with a budget of 5 % of the space, for ``--seeds`` seeds, and
the script prints, per optimizer, the evaluations needed to come within 5 % of the
optimum (median, and how many seeds got there), the median best ratio at the budget, and
wall time. ``--json FILE`` writes the results with the settings, commit, wall and CPU
seconds and load average (the record of :mod:`experiments.harnesses.record`; the figure
in docs/guide/optimizers.md is rendered from ``docs/search_quality/bo_enumerable.json``).

Run: ``python -m experiments.search_quality.bo_enumerable [--seeds 5] [--optimizers ...] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from typing import Any

import numpy as np

from accelerators import SystolicArray
from design_space import Categorical, DesignSpace, JointSpace, Ordinal, Permutation, PowerOfTwo
from evaluators.base import Infeasible
from evaluators.loopnest import evaluate
from experiments.harnesses.record import Run, public_settings
from mappers.mapping import Mapping
from mappers.workloads import gemm
from optimizer import Trial, TrialStatus, make_optimizer, parse_objectives

LAYER = gemm("gemm128", M=128, N=128, K=128)
SRAM_KIB = 8


def hardware() -> DesignSpace:
    return DesignSpace(PowerOfTwo("rows", 8, 32), PowerOfTwo("cols", 8, 32), Categorical("dataflow", ["OS", "WS"]))


def software(hw: dict) -> DesignSpace:
    return DesignSpace(
        Ordinal("pe_stream", [1, 4, 16]),     # PE-level temporal factor of the streamed dim
        Ordinal("sram_m", [1, 4]), Ordinal("sram_n", [1, 4]), Ordinal("sram_k", [1, 4]),
        Permutation("order", ["M", "N", "K"]),
    )


def space() -> JointSpace:
    return JointSpace(hardware(), software)


def arch_of(p: dict) -> Any:
    return SystolicArray(rows=p["rows"], cols=p["cols"], dataflow=p["dataflow"], ifmap_sram_kib=SRAM_KIB,
                         filter_sram_kib=SRAM_KIB, ofmap_sram_kib=SRAM_KIB, dram_bw_words_per_cycle=8).to_arch()


def mapping_of(p: dict, arch: Any) -> Mapping:
    rows, cols = p["rows"], p["cols"]
    if p["dataflow"] == "WS":          # rows <- K, columns <- N, PE streams M
        sy, sx, stream = {"K": rows}, {"N": cols}, "M"
    else:                              # OS: rows <- M, columns <- N, PE streams K
        sy, sx, stream = {"M": rows}, {"N": cols}, "K"
    t0 = {stream: p["pe_stream"]}
    t1 = {"M": p["sram_m"], "N": p["sram_n"], "K": p["sram_k"]}
    used = {d: t0.get(d, 1) * t1[d] * sy.get(d, 1) * sx.get(d, 1) for d in "MNK"}
    t2 = {d: max(LAYER.dims[d] // used[d], 1) for d in "MNK"}
    return Mapping.create(arch, temporal=[t0, t1, t2], spatial_x=[{}, sx, {}], spatial_y=[{}, sy, {}],
                          order=[(), ("M", "N", "K"), tuple(p["order"])],
                          bypass=[{"W", "I", "O"} - {"O" if p["dataflow"] == "OS" else "W"}, set(), set()])


def evaluate_point(p: dict) -> dict[str, float]:
    arch = arch_of(p)
    m = mapping_of(p, arch)
    bad = m.violations(LAYER, arch)
    if bad:
        raise Infeasible("; ".join(bad))
    r = evaluate(LAYER, arch, m)
    return {"edp": float(r.edp[0])}


def exhaustive(sp: JointSpace) -> tuple[float, int, int]:
    vals, infeasible = [], 0
    for p in sp.grid():
        try:
            vals.append(evaluate_point(p)["edp"])
        except Infeasible:
            infeasible += 1
    return min(vals), len(vals) + infeasible, infeasible


def run(name: str, sp: JointSpace, seed: int, budget: int) -> list[float]:
    """Best-so-far EDP after each evaluation (inf until the first feasible one)."""
    opts = {"constrained-bo": {"n_init": 10, "pool_size": 1000}}.get(name, {})
    opt = make_optimizer(name, sp, parse_objectives({"edp": "min"}), seed, opts)
    best, curve = np.inf, []
    for i in range(budget):
        pts = opt.ask(1)
        if not pts:
            break
        try:
            m = evaluate_point(pts[0])
            t = Trial(i, pts[0], TrialStatus.COMPLETE, m)
            best = min(best, m["edp"])
        except Infeasible as e:
            t = Trial(i, pts[0], TrialStatus.INFEASIBLE, reason=str(e))
        opt.tell([t])
        curve.append(best)
    return curve


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--optimizers", nargs="+", default=["constrained-bo", "tpe", "random", "qlearning"])
    ap.add_argument("--fraction", type=float, default=0.05, help="budget as a fraction of the space")
    ap.add_argument("--json", metavar="FILE", default=None,
                    help="also write the results, settings, commit, wall/CPU time and load average here")
    args = ap.parse_args(argv)
    record = Run("experiments.search_quality.bo_enumerable", public_settings(args))
    logging.basicConfig(level=logging.WARNING)
    sp = space()
    t = time.perf_counter()
    opt_val, n, n_bad = exhaustive(sp)
    print(f"space: {n} points ({n_bad} infeasible), exhaustive optimum EDP {opt_val:.6g} "
          f"({time.perf_counter() - t:.1f} s)")
    budget = int(args.fraction * n)
    target = 1.05 * opt_val
    print(f"budget {budget} evaluations ({args.fraction:.0%}), target <= {target:.6g} (within 5 %)\n")
    print(f"{'optimizer':16} {'evals to target (median)':>26} {'seeds reaching':>15} "
          f"{'best/opt at budget (median)':>28} {'time/seed':>10}")
    out: dict = {"points": n, "infeasible": n_bad, "optimum": opt_val, "budget": budget, "results": {}}
    for name in args.optimizers:
        hits, ratios, times, cpu = [], [], [], []
        for seed in range(args.seeds):
            t, c = time.perf_counter(), time.process_time()
            curve = run(name, sp, seed, budget)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            reach = next((i + 1 for i, v in enumerate(curve) if v <= target), None)
            hits.append(reach)
            ratios.append(curve[-1] / opt_val if curve else np.inf)
        reached = [h for h in hits if h is not None]
        med = float(np.median([h if h is not None else np.inf for h in hits]))
        out["results"][name] = {"evals_to_target": hits, "best_ratio": ratios, "seconds": times,
                                "cpu_seconds": cpu}
        med_s = f"{med:.0f}" if np.isfinite(med) else f"> {budget}"
        print(f"{name:16} {med_s:>26} {len(reached):>10}/{args.seeds:<4} "
              f"{np.median(ratios):>28.4f} {np.median(times):>9.1f}s")
    print(json.dumps(out, default=float))
    record.write(args.json, out, ok=True)
    return out


if __name__ == "__main__":
    main()
