"""HASCO's software searches at an equal number of evaluated schedules, on every pair of
the reproduction, against the exact mapper's bound.

For each (workload, intrinsic) pair of :data:`experiments.reproduce.hasco.PAIRS` the
hardware is fixed to the Gemmini-like reference design of that intrinsic
(:func:`evaluators.intrinsic_codesign.reference_point`), so no hardware search is needed
and every pair has the same kind of target. On the pair's three largest stages (MACs x
repeats), FlexTensor's heuristic, the tabular Q-learning, FlexTensor's Q-network walk and
random search each get ``--budget`` schedules per stage, from no seed point, over
``--seeds`` seeds (:func:`experiments.reproduce.hasco.sw_convergence`). Reported per pair:
the median best total latency of each search, its ratio to the exact mapper's bound
(:func:`mappers.schedule.exact_reference`; the optimum of the schedule spaces where every
stage's bound is attained and nothing pads), and whether the Q-network beats random search
(median over seeds, strictly lower).

Run: ``python -m experiments.search_quality.hasco_sw_search [--pairs gemm:GEMM ...] [--seeds 5]
[--first-seed 0] [--budget 150] [--out runs/benchmarks/hasco_sw_search]``. Each finished pair is cached as
JSON under ``--out``; ``results.json`` and ``table.md`` summarize the pairs finished.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from experiments.reproduce import jsonable, write_atomic
from experiments.reproduce.hasco import (
    PAIRS,
    SW_METHODS,
    bound_scope_phrase,
    bound_scope_sentence,
    oracle_label,
    sw_bound_scopes,
    sw_convergence,
    sw_finals,
)
from mappers.schedule import EXACT_REFERENCE_MAX_NODES


def cache_path(store: Path, workload: str, kind: str, seeds: list[int], budget: int, exact_nodes: int | None,
               exact_s: float | None) -> Path:
    """The pair's cache file: named by everything its result depends on. The exact mapper's
    limits appear only where they differ from the defaults (so caches written before they
    were part of the name stay valid: those ran with the defaults)."""
    first = f"-from{seeds[0]}" if seeds and seeds[0] else ""
    limits = ""
    if exact_nodes != EXACT_REFERENCE_MAX_NODES:
        limits += f"-n{exact_nodes or 'inf'}"
    if exact_s is not None:
        limits += f"-t{exact_s:g}"
    return store / f"{workload}-{kind}-s{len(seeds)}{first}-b{budget}{limits}.json"


def pair_result(workload: str, kind: str, seeds: list[int], budget: int, exact_nodes: int | None,
                exact_s: float | None, store: Path) -> dict[str, Any]:
    """One pair's searches on the reference design (cached under ``store``)."""
    from evaluators.intrinsic_codesign import reference_point

    path = cache_path(store, workload, kind, seeds, budget, exact_nodes, exact_s)
    if path.exists():
        return json.loads(path.read_text())
    t0 = time.perf_counter()
    sc = sw_convergence(workload, kind, reference_point(kind), budget, seeds, exact_nodes, exact_s)
    finals = sw_finals(sc)
    bound = sc["oracle"]["bound"]
    res = {"workload": workload, "intrinsic": kind, "point": reference_point(kind), "sw_convergence": sc,
           "final_median_cycles": finals, "final_over_bound": {m: v / bound for m, v in finals.items()},
           "seconds": time.perf_counter() - t0}
    write_atomic(path, json.dumps(res))
    return res


def summary(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    f = [p["final_median_cycles"] for p in pairs]
    return {"pairs": len(pairs),
            "beats_random": {m: sum(x[m] < x["random"] for x in f) for m in SW_METHODS if m != "random"},
            "ties_random": {m: sum(x[m] == x["random"] for x in f) for m in SW_METHODS if m != "random"},
            "median_over_bound": {m: float(np.median([p["final_over_bound"][m] for p in pairs]))
                                  for m in SW_METHODS},
            "bound_is_the_optimum": sum(p["sw_convergence"]["oracle"]["optimum"] for p in pairs)}


def table(pairs: list[dict[str, Any]], s: dict[str, Any], budget: int, seeds: int, cmd: str) -> str:
    """table.md of ``pairs`` (each a :func:`pair_result`) and their :func:`summary` ``s``; the
    bound's space is computed from the pairs (:func:`experiments.reproduce.hasco.sw_bound_scopes`)."""
    scopes = sw_bound_scopes([(p["workload"], p["intrinsic"], p["point"], p["sw_convergence"]["stages"])
                              for p in pairs])
    lines = [f"Reference design per intrinsic; best total cycles of the three largest stages after {budget} "
             f"schedules per stage, median over {seeds} seeds (ratio to the exact mapper's bound). "
             f"Command: `{cmd}`. {bound_scope_sentence(scopes)}.", "",
             "| workload | intrinsic | " + " | ".join(SW_METHODS) + " | exact bound | bound is the optimum |",
             "|---|---|" + "---|" * len(SW_METHODS) + "---|---|"]
    for p in pairs:
        f, r = p["final_median_cycles"], p["final_over_bound"]
        o = p["sw_convergence"]["oracle"]
        lines.append(f"| {p['workload']} | {p['intrinsic']} | "
                     + " | ".join(f"{f[m]:.4g} ({r[m]:.2f}x)" for m in SW_METHODS)
                     + f" | {o['bound']:.4g} | {oracle_label(o)} |")
    b, t = s["beats_random"], s["ties_random"]
    lines += ["", f"Over {s['pairs']} pairs, strictly better than random search (median over seeds): "
              + ", ".join(f"{m} {b[m]} (ties {t[m]})" for m in b) + ". Median ratio to the bound: "
              + ", ".join(f"{m} {v:.2f}x" for m, v in s["median_over_bound"].items())
              + f". The bound is the optimum on {s['bound_is_the_optimum']} pairs ({bound_scope_phrase(scopes)}; "
              "each pair's space is in the first paragraph)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", nargs="+", default=None, metavar="WORKLOAD:INTRINSIC")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0,
                    help="seeds are first-seed, first-seed + 1, ... (a run on other seeds than a first one)")
    ap.add_argument("--budget", type=int, default=150, help="schedules per stage")
    ap.add_argument("--exact-max-nodes", type=int, default=EXACT_REFERENCE_MAX_NODES,
                    help="exact mapper's search nodes per operand group (0: no limit)")
    ap.add_argument("--exact-time-limit", type=float, default=None,
                    help="also a time limit in seconds per operand group (default none: results independent of load)")
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/hasco_sw_search"))
    args = ap.parse_args(argv)
    args.exact_max_nodes = args.exact_max_nodes or None      # 0: no limit
    for name in ("seeds", "budget"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name}: must be a positive integer, got {getattr(args, name)}")
    if args.first_seed < 0:
        raise SystemExit(f"--first-seed: must be a non-negative integer, got {args.first_seed}")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    pairs = [tuple(p.split(":")) for p in args.pairs] if args.pairs else list(PAIRS)
    for p in pairs:
        if len(p) != 2:
            raise SystemExit(f"--pairs: expected WORKLOAD:INTRINSIC, got {':'.join(p)!r}")
    store = args.out / "pairs"
    store.mkdir(parents=True, exist_ok=True)
    done = []
    for wl, kind in pairs:
        r = pair_result(wl, kind, seeds, args.budget, args.exact_max_nodes, args.exact_time_limit, store)
        done.append(r)
        print(f"{wl:>12} {kind:4}: " + " ".join(f"{m} {v:.2f}x" for m, v in r["final_over_bound"].items())
              + f" of the bound ({r['seconds']:.0f} s)", flush=True)
    s = summary(done)
    cmd = "python -m experiments.search_quality.hasco_sw_search " + " ".join(argv if argv is not None else sys.argv[1:])
    out = {"settings": {"pairs": [list(p) for p in pairs], "seeds": args.seeds, "seed_list": seeds,
                        "budget": args.budget,
                        "exact_max_nodes": args.exact_max_nodes, "exact_time_limit_s": args.exact_time_limit}, "summary": s, "pairs": done}
    (args.out / "results.json").write_text(json.dumps(jsonable(out), indent=1))
    (args.out / "table.md").write_text(table(done, s, args.budget, args.seeds, cmd.strip()))
    print(table(done, s, args.budget, args.seeds, cmd.strip()))
    return out


if __name__ == "__main__":
    main()
