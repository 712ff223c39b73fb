"""HASCO's hardware search against a third multi-objective method (issue 49, item 5):
NSGA-II beside the reproduction's MOBO and random search, by hypervolume per evaluation.

The searches are those of :mod:`experiments.reproduce.hasco`: every workload x intrinsic
pair of its :data:`~experiments.reproduce.hasco.PAIRS`, seeds 0-9, 25 hardware evaluations
per search, objectives latency_ms / power_mw / area_mm2 (all minimized), HASCO's hardware
space under the same area cap (a known constraint) and the same unknown constraint (the
generator's bank limit: such a design is evaluated, found infeasible and costs one of the
25 evaluations). NSGA-II is Optuna's ``NSGAIISampler`` through the ask/tell adapter
(:mod:`optimizer.optuna_adapter`), run as a :class:`~experiments.study.Study` by
:func:`experiments.reproduce.hasco.run_search` (``optimizer="nsga2"``), so its sampler's
seed derives from the run's seed as MOBO's and random search's do.

**NSGA-II's settings, fixed before any NSGA-II search was run**
(:data:`experiments.reproduce.hasco.NSGA2_OPTIONS`): a population of 5 individuals, so
the 25 evaluations are 5 generations; the first generation is random, the same size as
MOBO's Sobol initial design (Optuna's default of 50 would leave the whole budget inside
its random first generation, i.e. random search). Optuna's other defaults: uniform
crossover (probability 0.9, swapping probability 0.5), mutation probability 1 / the
number of parameters. How the adapter handles constraints: a proposal that violates a
known constraint (the area cap, ``local_kib <= sp_kib``) or repeats an evaluated design is
never evaluated; it is told to the sampler as pruned and asked again (at most 100 times,
then a random legal design). A design found infeasible by the evaluator (the bank limit)
is told as pruned too; NSGA-II leaves pruned trials out of its populations, so such an
evaluation spends budget and teaches it nothing.

**Evaluations.** On the 12 pairs of the GEMM and GEMV intrinsics every legal design is
already scored by the same in-loop evaluator (:mod:`experiments.reproduce.hasco_enumerate`,
deterministic: fixed software seed), so NSGA-II's evaluations there are looked up in those
records (:class:`~experiments.reproduce.hasco_enumerate.EnumeratedHasco`; a test checks
that looked-up values equal fresh evaluations). The 5 CONV and DOT pairs (65,541 legal
designs each) are evaluated live.

**Hypervolume, and the committed normalization.** The reproduction's hypervolume takes
log10 objectives, scales each to [0, 1] by its bounds over every MOBO and random run of
the pair (all 10 seeds), reference point 1.1 on every axis
(:func:`experiments.reproduce.hasco.hv_history`). Its ``results.json`` keeps each run's
hypervolume history but not the bounds, and the evaluated points of seed 0 only, so the
normalizer cannot be recomputed with NSGA-II's points added. The committed normalization
is kept instead, **recovered** from seed 0 (:func:`recover_normalizer`): a hypervolume
depends on the six bounds only through four numbers (the reference point in log10 units
and the product of the widths), which are fitted so that seed 0's recorded MOBO and
random points give the committed seed-0 histories; a pair where that fit misses by more
than :data:`TOLERANCE` is refused. On the 12 enumerated pairs exactly one choice of
enumerated designs' values has those four numbers, so the true bounds are known there
(``bounds_exact``). NSGA-II's evaluations are scored with this normalization,
**unclipped**: an NSGA-II design better on some objective than every MOBO and random
evaluation of the pair counts with its whole dominated box, as it would have under the
committed bounds (clipping would need the bounds themselves, which the CONV/DOT pairs'
histories do not determine); on the enumerated pairs the number of such NSGA-II
evaluations is reported. MOBO's and random search's histories are the committed ones,
untouched.

Reported (:func:`summarize`, ``table.md``): per pair and method the hypervolume after 5,
10, 15, 20 and 25 evaluations, median [25th, 75th percentile] over the seeds; over all
pairs the same over every (pair, seed) run; and how many pairs each method leads at 25
(highest median; a tie is counted as a tie, not a lead).

Run: ``python -m experiments.reproduce.hasco_dse`` (records under ``--out``/records, one
per pair and seed, kind ``hasco.search`` as the reproduction's own; reused, so a stopped
run resumes), then ``results.json`` and ``table.md`` there; ``--retable`` rewrites
``table.md`` from ``results.json`` alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from experiments.records import RecordStore
from experiments.reproduce import hasco, jsonable
from experiments.reproduce import hasco_enumerate as en

DEFAULT_OUT = Path("docs/reproduction/results/hasco-dse")
BUDGET = 25
N_INIT = 5
SW_BUDGET = 60
SEEDS = tuple(range(10))
LIVE_ORDER = (("conv2d", "CONV"), ("depthwise", "DOT"), ("resnet50", "CONV"), ("xception", "CONV"),
              ("mobilenet_v2", "CONV"))
"""The pairs evaluated live, in the order they are run (cheapest first: the two kernels
take about half a second a design, the networks about 5 s)."""
LOOKUP_NOTE = ("evaluations looked up in the records of experiments.reproduce.hasco_enumerate "
               "(docs/reproduction/results/hasco-enumerate/records), not recomputed")


def pair_order() -> list[tuple[str, str]]:
    """Every pair of the reproduction: the enumerated ones (in its order), then :data:`LIVE_ORDER`."""
    live = [p for p in LIVE_ORDER if p in hasco.PAIRS]
    if sorted(en.ENUM_PAIRS + tuple(live)) != sorted(hasco.PAIRS):
        raise RuntimeError("hasco_dse: the pairs of hasco.PAIRS are not the enumerated pairs plus LIVE_ORDER")
    return list(en.ENUM_PAIRS) + live


def run_nsga2(workload: str, kind: str, seed: int, store: RecordStore, budget: int = BUDGET,
              lookup: bool | None = None, records: Path = en.DEFAULT_OUT / "records") -> list[dict[str, Any]]:
    """NSGA-II's search of one pair and seed (recorded in ``store``); ``lookup`` (default:
    where the pair is enumerated) reads the evaluations from the enumeration's ``records``."""
    if lookup is None:
        lookup = (workload, kind) in en.ENUM_PAIRS
    evaluator = None
    if lookup:
        evaluator = ("experiments.reproduce.hasco_enumerate:EnumeratedHasco",
                     {"intrinsic": kind, "workload": workload, "sw_budget": SW_BUDGET, "records": str(records)})
    return hasco.run_search(kind, workload, "nsga2", seed, budget, N_INIT, SW_BUDGET, "search", store,
                            evaluator=evaluator, note=LOOKUP_NOTE if lookup else None)


METHODS = ("mobo", "random", "nsga2")
AT = (5, 10, 15, 20, 25)
"""Evaluations after which the hypervolumes are reported."""
TOLERANCE = 1e-9
"""Largest difference allowed between a committed seed-0 hypervolume and the one the
recovered bounds give."""
HASCO_RESULTS = en.HASCO_RESULTS


def _distinct(values: Sequence[float]) -> np.ndarray:
    """``values`` without consecutive repeats (a history's steps), with a leading 0."""
    out = [0.0]
    for v in values:
        if abs(v - out[-1]) > 1e-13:
            out.append(float(v))
    return np.asarray(out)


def _feasible_matrix(recs: Sequence[dict[str, Any]]) -> np.ndarray:
    return np.array([[r["metrics"][k] for k in hasco.OBJECTIVES] for r in recs], dtype=float).reshape(-1, 3)


def normalizer_residual(pair: dict[str, Any], lo: np.ndarray, hi: np.ndarray) -> float:
    """Largest difference between ``pair``'s committed seed-0 hypervolume histories (MOBO,
    random) and those the bounds ``(lo, hi)`` give its recorded seed-0 points, step by step
    (a history's distinct values: the committed history also counts the infeasible
    evaluations, which ``front_seed0`` leaves out); ``inf`` where the steps differ in number."""
    worst = 0.0
    for opt in ("mobo", "random"):
        got = _distinct(hasco.hv_history(_feasible_matrix(pair["front_seed0"][opt]), lo, hi))
        want = _distinct(pair["hv"][opt][0])
        if len(got) != len(want):
            return float("inf")
        worst = max(worst, float(np.abs(got - want).max()))
    return worst


def recover_normalizer(pair: dict[str, Any], candidates: np.ndarray | None = None) -> dict[str, Any]:
    """The committed normalization of ``pair``'s hypervolumes, recovered from its seed-0
    runs (see the module docstring). A hypervolume under bounds ``(lo, hi)`` (log10 of
    each objective, reference point 1.1 after scaling) depends on them only through the
    reference point in log10 units, ``ref_i = lo_i + 1.1 (hi_i - lo_i)``, and the product
    of the widths ``hi_i - lo_i``: moving ``lo_i`` toward or away from ``ref_i`` scales that
    axis of every box by the same factor, and factors whose product is 1 leave every
    hypervolume as it was. So these 4 numbers are what the committed histories determine,
    and all a hypervolume needs: they are fitted (least squares over the steps of the
    seed-0 MOBO and random histories) with the widths in the proportions of seed 0's own
    points; ``lo_log10`` / ``hi_log10`` are that representative. With ``candidates`` (per
    objective, the log10 values of every buildable design, ``(n, 3)``), also the true
    bounds where exactly one choice of enumerated values has the fitted reference point
    and width product (``bounds_exact``; else ``None``). ``ValueError`` where the fit does
    not reproduce the committed histories to :data:`TOLERANCE` (:func:`normalizer_residual`)."""
    from scipy.optimize import least_squares

    mats = {o: _feasible_matrix(pair["front_seed0"][o]) for o in ("mobo", "random")}
    lg = np.log10(np.vstack(list(mats.values())))
    lo0, hi0 = lg.min(axis=0), lg.max(axis=0)
    shape = np.where(hi0 > lo0, hi0 - lo0, 1.0)
    want = {o: _distinct(pair["hv"][o][0]) for o in mats}

    def bounds(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w = shape * np.exp(x[3])
        return x[:3] - 1.1 * w, x[:3] - 0.1 * w

    def residuals(x: np.ndarray) -> np.ndarray:
        lo, hi = bounds(x)
        out = []
        for o in mats:
            got = _distinct(hasco.hv_history(mats[o], lo, hi))
            n = min(len(got), len(want[o]))
            out += [got[:n] - want[o][:n], np.ones(abs(len(got) - len(want[o])))]
        return np.concatenate(out)

    fit = least_squares(residuals, np.r_[hi0 + 0.11 * shape, np.log(1.01)], xtol=1e-15, ftol=1e-15, gtol=1e-15,
                        max_nfev=500)
    lo, hi = bounds(fit.x)
    res = normalizer_residual(pair, lo, hi)
    if not res <= TOLERANCE:
        raise ValueError(f"{pair['workload']}/{pair['intrinsic']}: no bounds reproduce the committed seed-0 "
                         f"hypervolume histories (largest difference {res:.3g} > {TOLERANCE:g})")
    ref = lo + 1.1 * (hi - lo)
    out = {"ref_log10": ref.tolist(), "width_product": float(np.prod(hi - lo)), "lo_log10": lo.tolist(),
           "hi_log10": hi.tolist(), "residual": res, "bounds_exact": None}
    if candidates is not None:
        out["bounds_exact"] = enumerated_bounds(ref, float(np.prod(hi - lo)), np.asarray(candidates, dtype=float),
                                                lo0, hi0)
    return out


def enumerated_bounds(ref: np.ndarray, width_product: float, candidates: np.ndarray, lo0: np.ndarray,
                      hi0: np.ndarray, rtol: float = 1e-7) -> dict[str, list[float]] | None:
    """The bounds ``{"lo_log10", "hi_log10"}`` made of enumerated values (``candidates``, per
    objective) with reference point ``ref`` and width product ``width_product`` (to
    ``rtol``) that contain seed 0's bounds ``(lo0, hi0)``, if exactly one choice has them."""
    per_axis = []
    for j in range(3):
        u = np.unique(candidates[:, j])
        opts = []
        for lo in u[u <= lo0[j] + 1e-12]:
            hi = lo + (ref[j] - lo) / 1.1
            k = np.argmin(np.abs(u - hi))
            if abs(u[k] - hi) <= rtol * max(1.0, abs(hi)) and u[k] >= hi0[j] - 1e-12:
                opts.append((float(lo), float(u[k])))
        per_axis.append(opts)
    hits = [(a, b, c) for a in per_axis[0] for b in per_axis[1] for c in per_axis[2]
            if abs(np.prod([h - lo for lo, h in (a, b, c)]) / width_product - 1) <= rtol]
    if len(hits) != 1:
        return None
    return {"lo_log10": [x[0] for x in hits[0]], "hi_log10": [x[1] for x in hits[0]]}


def hv_histories(mat: np.ndarray, norm: dict[str, Any]) -> np.ndarray:
    """:func:`experiments.reproduce.hasco.hv_history` of ``mat`` under the recovered
    normalization ``norm`` (:func:`recover_normalizer`; its exact bounds where known, else
    the fitted representative, which gives the same hypervolumes): the committed one's
    hypervolume, an objective better than the committed bounds counting with its whole box."""
    b = norm["bounds_exact"] or norm
    return hasco.hv_history(mat, np.asarray(b["lo_log10"]), np.asarray(b["hi_log10"]))


def beyond_bounds(mat: np.ndarray, bounds: dict[str, list[float]]) -> int:
    """Rows of ``mat`` (feasible evaluations) with some objective below ``bounds``' ``lo_log10``:
    better there than every MOBO and random evaluation of the pair."""
    ok = np.isfinite(mat).all(axis=1)
    return int((np.log10(mat[ok]) < np.asarray(bounds["lo_log10"]) - 1e-12).any(axis=1).sum())


def _stats(values: Sequence[float]) -> dict[str, float]:
    q = hasco.quartiles(values)
    assert q is not None
    return {k: q[k] for k in ("median", "q25", "q75", "n")}


def _candidates(workload: str, kind: str) -> np.ndarray | None:
    """log10 objectives of every buildable enumerated design of the pair (``None`` if not enumerated)."""
    if (workload, kind) not in en.ENUM_PAIRS:
        return None
    ev = en.EnumeratedHasco(kind, workload, SW_BUDGET)
    rows = [r["metrics"] for r in ev._rows.values() if r["status"] == "COMPLETE"]
    return np.log10(np.array([[m[k] for k in hasco.OBJECTIVES] for m in rows]))


def summarize(committed: dict[str, Any], store: RecordStore, pairs: Sequence[tuple[str, str]],
              seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    """Per pair (those whose NSGA-II records are all in ``store``), the committed MOBO and
    random histories, NSGA-II's (under the recovered normalization), their statistics at
    :data:`AT`, and over all pairs."""
    by_pair = {(p["workload"], p["intrinsic"]): p for p in committed["pairs"]}
    out = []
    for wl, kind in pairs:
        settings = [hasco.search_settings(kind, wl, "nsga2", s, BUDGET, N_INIT, SW_BUDGET, "search", "reference")
                    for s in seeds]
        runs = [store.get(hasco.KINDS["search"], st) for st in settings]
        if any(r is None for r in runs):
            continue
        cp = by_pair[(wl, kind)]
        if len(cp["hv"]["mobo"]) != len(seeds):
            raise ValueError(f"{wl}/{kind}: the committed histories cover {len(cp['hv']['mobo'])} seeds, not {len(seeds)}")
        norm = recover_normalizer(cp, _candidates(wl, kind))
        hv = {"mobo": cp["hv"]["mobo"], "random": cp["hv"]["random"], "nsga2": []}
        beyond: int | None = 0 if norm["bounds_exact"] else None
        infeasible = 0
        for recs in runs:
            mat = hasco.objective_matrix(recs)
            hv["nsga2"].append(hv_histories(mat, norm).tolist())
            if beyond is not None:
                beyond += beyond_bounds(mat, norm["bounds_exact"])
            infeasible += sum(r["status"] != "COMPLETE" for r in recs)
        at = {m: {str(k): _stats([h[k - 1] for h in hv[m]]) for k in AT} for m in METHODS}
        out.append({"workload": wl, "intrinsic": kind, "normalizer": norm, "hv": hv, "at": at,
                    "nsga2_beyond_bounds": beyond, "nsga2_infeasible_evaluations": infeasible,
                    "nsga2_looked_up": (wl, kind) in en.ENUM_PAIRS,
                    "leader_25": leader({m: at[m]["25"]["median"] for m in METHODS})})
    overall = {"pairs": len(out),
               "at": {m: {str(k): _stats([h[k - 1] for p in out for h in p["hv"][m]]) for k in AT} for m in METHODS},
               "leads_25": {m: sum(p["leader_25"] == m for p in out) for m in METHODS},
               "ties_25": sum(p["leader_25"] == "tie" for p in out),
               "nsga2_above_random_25": sum(p["at"]["nsga2"]["25"]["median"] > p["at"]["random"]["25"]["median"]
                                            for p in out),
               "nsga2_above_mobo_25": sum(p["at"]["nsga2"]["25"]["median"] > p["at"]["mobo"]["25"]["median"]
                                          for p in out),
               "bounds_exact_pairs": sum(p["nsga2_beyond_bounds"] is not None for p in out),
               "nsga2_beyond_bounds": sum(p["nsga2_beyond_bounds"] or 0 for p in out),
               "nsga2_infeasible_evaluations": sum(p["nsga2_infeasible_evaluations"] for p in out),
               "nsga2_evaluations": sum(len(h) for p in out for h in p["hv"]["nsga2"])}
    return {"pairs": out, "overall": overall}


def leader(medians: dict[str, float]) -> str:
    """The method with the highest median, or ``"tie"`` where two share it."""
    best = max(medians.values())
    top = [m for m, v in medians.items() if v == best]
    return top[0] if len(top) == 1 else "tie"


NAMES = {"mobo": "MOBO", "random": "random", "nsga2": "NSGA-II"}


def _cell(st: dict[str, float]) -> str:
    return f"{st['median']:.3f} [{st['q25']:.3f}, {st['q75']:.3f}]"


def write_table(results: dict[str, Any], path: Path) -> None:
    """``table.md`` from ``results`` (the output of :func:`main`)."""
    st = results["settings"]
    ov = results["overall"]
    lines = [f"NSGA-II (Optuna NSGAIISampler through the ask/tell adapter; settings fixed before the run: "
             f"{json.dumps(st['nsga2_options'])}, Optuna's other defaults; sampler seed derived from the run's "
             f"seed) against the committed MOBO and random hardware searches of `{st['hasco_results']}`: "
             f"{ov['pairs']} pairs, seeds {st['seeds'][0]}-{st['seeds'][-1]}, {st['budget']} evaluations per search, "
             f"same space, area cap and constraint handling. Command: `{st['command']}`.", "",
             "Hypervolume: the committed normalization (log10 objectives scaled by each pair's bounds over every "
             "MOBO and random run, reference point 1.1), recovered from the committed seed-0 runs, whose "
             f"histories it reproduces to within {max(p['normalizer']['residual'] for p in results['pairs']):.1g}; "
             "MOBO's and random search's histories are the committed ones. NSGA-II's evaluations are not "
             f"clipped: on the {ov['bounds_exact_pairs']} pairs where the bounds are known exactly (the enumerated "
             f"ones), {ov['nsga2_beyond_bounds']} of its evaluations lie beyond them on some objective (better "
             "than every MOBO and random evaluation there) and count with their whole box. NSGA-II spent "
             f"{ov['nsga2_infeasible_evaluations']} of its {ov['nsga2_evaluations']} evaluations on "
             "designs over the generator's bank limit. Median [25th, 75th percentile] over the seeds "
             "(over all pairs: over every pair and seed).", "",
             "| workload | intrinsic | method | " + " | ".join(f"after {k}" for k in AT) + " |",
             "|---|---|---|" + "---|" * len(AT)]
    for p in results["pairs"]:
        for m in METHODS:
            lead = " (leads at 25)" if p["leader_25"] == m else ""
            lines.append(f"| {p['workload']} | {p['intrinsic']} | {NAMES[m]}{lead} | "
                         + " | ".join(_cell(p["at"][m][str(k)]) for k in AT) + " |")
    for m in METHODS:
        lines.append(f"| **all {ov['pairs']} pairs** | | {NAMES[m]} | "
                     + " | ".join(_cell(ov["at"][m][str(k)]) for k in AT) + " |")
    leads = ", ".join(f"{NAMES[m]} {ov['leads_25'][m]}" for m in METHODS)
    lines += ["", f"Pairs led at 25 evaluations (highest median): {leads}; ties {ov['ties_25']}. NSGA-II's median "
              f"is above random search's on {ov['nsga2_above_random_25']} of {ov['pairs']} pairs and above MOBO's "
              f"on {ov['nsga2_above_mobo_25']}."]
    missing = [f"{w}/{k}" for w, k in st["pairs_requested"] if not any(
        p["workload"] == w and p["intrinsic"] == k for p in results["pairs"])]
    if missing:
        lines += ["", "Pairs without all NSGA-II runs, left out: " + ", ".join(missing) + "."]
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m experiments.reproduce.hasco_dse", description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", nargs="+", default=None, metavar="WORKLOAD:INTRINSIC")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--hasco-results", type=Path, default=HASCO_RESULTS)
    ap.add_argument("--run-only", action="store_true", help="run (or resume) the searches, write no summary")
    ap.add_argument("--summarize-only", action="store_true",
                    help="run nothing: summarize the pairs whose records are all there")
    ap.add_argument("--retable", action="store_true", help="run nothing: rewrite table.md from results.json")
    args = ap.parse_args(argv)
    if args.retable:
        results = json.loads((args.out / "results.json").read_text())
        write_table(results, args.out / "table.md")
        return results
    order = pair_order()
    pairs = [tuple(p.split(":")) for p in args.pairs] if args.pairs else order
    for p in pairs:
        if p not in order:
            raise SystemExit(f"--pairs: {':'.join(p)!r} is not one of {[':'.join(q) for q in order]}")
    store = RecordStore(args.out / "records")
    t0 = time.perf_counter()
    if not args.summarize_only:
        for wl, kind in pairs:
            for s in SEEDS:
                t = time.perf_counter()
                run_nsga2(wl, kind, s, store)
                print(f"  {wl:>12} {kind:4} nsga2 seed {s}: {time.perf_counter() - t:6.1f} s", flush=True)
    if args.run_only:
        return {}
    if not args.hasco_results.is_file():
        raise SystemExit(f"--hasco-results: {args.hasco_results} not found")
    committed = json.loads(args.hasco_results.read_text())
    for key, want in (("budget", BUDGET), ("n_init", N_INIT), ("sw_budget", SW_BUDGET), ("seeds", list(SEEDS))):
        if committed["settings"][key] != want:
            raise SystemExit(f"--hasco-results: its {key} is {committed['settings'][key]}, this comparison's {want}")
    results = summarize(committed, store, pairs)
    cmd = "python -m experiments.reproduce.hasco_dse " + " ".join(argv if argv is not None else sys.argv[1:])
    results["settings"] = {"nsga2_options": hasco.NSGA2_OPTIONS, "budget": BUDGET, "seeds": list(SEEDS),
                           "sw_budget": SW_BUDGET, "at": list(AT), "hasco_results": str(args.hasco_results),
                           "pairs_requested": [list(p) for p in pairs], "command": cmd.strip(),
                           "summary_seconds": time.perf_counter() - t0}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(jsonable(results), indent=1))
    write_table(results, args.out / "table.md")
    print(f"results: {args.out / 'results.json'}, table: {args.out / 'table.md'}")
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
