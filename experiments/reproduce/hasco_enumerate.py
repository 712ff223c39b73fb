"""Ground truth of HASCO's two small hardware spaces (issue 49, item 2): every legal design
of the GEMM (284) and GEMV (142) intrinsic spaces under the reproduction's area cap,
scored for each workload of :data:`experiments.reproduce.hasco.PAIRS` on them with the
reproduction's own in-loop evaluator (:class:`evaluators.intrinsic_codesign.HascoCoDesign`:
the heuristic schedule search, 60 schedules per layer, fixed software seed, so a design
always gets the same software and the same latency the searches saw).

From the enumeration and the committed reproduction (``docs/reproduction/results/hasco/
results.json``), per pair:

* the **true co-design optimum**: the lowest latency of any legal, buildable design (the
  objective MOBO and random search minimize under the same cap; the latency-only rule of
  the reproduction's comparison);
* **MOBO after its 25 evaluations** (10 seeds): its pick / the optimum, and how many seeds
  found the optimum;
* **random search per budget**, exactly: the reproduction's random search draws designs
  uniformly without replacement from the legal designs (:class:`optimizer.random_search.RandomSearch`,
  ``deduplicate``), so the distribution of its best after ``k`` evaluations follows from
  the enumeration alone (:func:`random_best_distribution`); the committed seed 0 run is
  checked against it;
* the **separate flow's regret**: the proxy-MOBO design (software tuned after) and the
  Gemmini-like reference design, each / the optimum.

The software of each design is the in-loop heuristic's, not the exact mapper's: the exact
mapper's reference of the reproduction needed minutes per stage at 5 million nodes and did
not finish its proof on 5 pairs, so running it for each of 2,556 designs is out of reach
here; the optimum reported is that of the objective the hardware searches optimize.

Run: ``python -m experiments.reproduce.hasco_enumerate`` (records under ``--out``/records,
one per pair and chunk of :data:`CHUNK` designs, reused, so a stopped run resumes at its
first chunk without a record); ``results.json`` and ``table.md`` there.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from experiments.records import RecordStore
from experiments.reproduce import jsonable
from experiments.reproduce.hasco import PAIRS, quartiles

KIND = "hasco.enumerate"
"""The kind of this script's records: one chunk of one pair's designs, evaluated."""
CHUNK = 71
"""Designs per record (284 = 4 x 71, 142 = 2 x 71): a killed run loses at most one chunk,
about 2.5 minutes of a network on the GEMM space."""
KINDS = ("GEMM", "GEMV")
"""The intrinsic spaces small enough to enumerate (CONV and DOT have 65,541 legal designs)."""
ENUM_PAIRS = tuple(p for p in PAIRS if p[1] in KINDS)
BUDGETS = (1, 5, 10, 25, 50, 100)
"""Random search budgets reported (25: the reproduction's)."""
HASCO_RESULTS = Path("docs/reproduction/results/hasco/results.json")
DEFAULT_OUT = Path("docs/reproduction/results/hasco-enumerate")


def designs(kind: str) -> list[dict[str, Any]]:
    """Every legal design of ``kind``'s space under the reproduction's area cap, in the
    space's grid order (the order of the chunks)."""
    from evaluators.intrinsic_codesign import hardware_space, reference_area_mm2

    return list(hardware_space(kind, reference_area_mm2(kind)).grid())


def chunk_settings(kind: str, workload: str, sw_budget: int, chunk: int, n_designs: int) -> dict[str, Any]:
    """The settings of one chunk's record (everything its evaluations depend on)."""
    return {"intrinsic": kind, "workload": workload, "sw_method": "heuristic", "sw_budget": sw_budget,
            "sw_seed": 0, "area_cap": "reference", "chunk": chunk, "chunk_size": CHUNK, "designs": n_designs}


def evaluate_designs(kind: str, workload: str, points: Sequence[dict[str, Any]], sw_budget: int) -> list[dict[str, Any]]:
    """Each point scored by the reproduction's in-loop evaluator: ``{"point", "status"
    ("COMPLETE" or "INFEASIBLE"), "metrics", "reason", "seconds"}``."""
    from evaluators.base import Infeasible
    from evaluators.intrinsic_codesign import HascoCoDesign

    ev = HascoCoDesign(kind, workload, sw_budget=sw_budget)
    out = []
    for p in points:
        t = time.perf_counter()
        try:
            m, status, reason = dict(ev(p).metrics), "COMPLETE", None
        except Infeasible as e:
            m, status, reason = {}, "INFEASIBLE", str(e)
        out.append({"point": dict(p), "status": status, "metrics": m, "reason": reason,
                    "seconds": time.perf_counter() - t})
    return out


def enumerate_pair(kind: str, workload: str, sw_budget: int, store: RecordStore,
                   log: bool = True) -> list[dict[str, Any]]:
    """Every design of ``kind`` evaluated on ``workload``, chunk by chunk, each chunk a
    record of ``store`` (reused: only chunks without a record are evaluated)."""
    pts = designs(kind)
    out: list[dict[str, Any]] = []
    for c in range(math.ceil(len(pts) / CHUNK)):
        part = pts[c * CHUNK:(c + 1) * CHUNK]
        settings = chunk_settings(kind, workload, sw_budget, c, len(pts))
        t, cpu = time.perf_counter(), time.process_time()
        kept = store.get(KIND, settings)
        if kept is None:
            kept = evaluate_designs(kind, workload, part, sw_budget)
            store.put(KIND, settings, kept, wall_s=time.perf_counter() - t, cpu_s=time.process_time() - cpu)
            if log:
                print(f"  {workload:>12} {kind} chunk {c}: {time.perf_counter() - t:6.0f} s", flush=True)
        if [r["point"] for r in kept] != part:
            raise ValueError(f"record {KIND} {settings}: its designs are not the space's chunk {c} (the space "
                             "changed since it was made; delete the record to evaluate again)")
        out += kept
    return out


class EnumeratedHasco:
    """The in-loop evaluator's scores of ``intrinsic``'s legal designs for ``workload``, read
    from this script's records under ``records`` instead of computed: ``point ->``
    :class:`~evaluators.base.Evaluation` with the recorded metrics, or
    :class:`~evaluators.base.Infeasible` with the recorded reason. Exact because
    :class:`~evaluators.intrinsic_codesign.HascoCoDesign` is deterministic (fixed software
    seed); a study of it draws the same points and sees the same values as one of the live
    evaluator. Every chunk of the pair must be recorded (``ValueError`` naming the first
    missing one); a point that is not a legal design raises ``ValueError``."""

    def __init__(self, intrinsic: str, workload: str, sw_budget: int = 60,
                 records: str = str(DEFAULT_OUT / "records")) -> None:
        from evaluators.intrinsic_codesign import hardware_space, reference_area_mm2

        kind = intrinsic.upper() if isinstance(intrinsic, str) else intrinsic
        if kind not in KINDS:
            raise ValueError(f"intrinsic must be one of the enumerated spaces {list(KINDS)}, got {intrinsic!r}")
        self.space = hardware_space(kind, reference_area_mm2(kind))
        pts = designs(kind)
        store = RecordStore(records)
        self._rows: dict[str, dict[str, Any]] = {}
        for c in range(math.ceil(len(pts) / CHUNK)):
            settings = chunk_settings(kind, workload, sw_budget, c, len(pts))
            kept = store.get(KIND, settings)
            if kept is None:
                raise ValueError(f"records={records!r}: no {KIND} record of {workload}/{kind} chunk {c} "
                                 f"(sw_budget {sw_budget}); run python -m experiments.reproduce.hasco_enumerate "
                                 f"--pairs {workload}:{kind} --enumerate-only")
            if [r["point"] for r in kept] != pts[c * CHUNK:(c + 1) * CHUNK]:
                raise ValueError(f"record {KIND} {settings}: its designs are not the space's chunk {c}")
            self._rows.update((self.space.point_key(r["point"]), r) for r in kept)

    def __call__(self, point: dict[str, Any]) -> Any:
        from evaluators.base import Evaluation, Infeasible

        bad = self.space.validate(point, constraints=False)
        row = None if bad else self._rows.get(self.space.point_key(point))
        if row is None:
            raise ValueError(f"point {point} is not a legal design of {self.space.name}")
        if row["status"] != "COMPLETE":
            raise Infeasible(row["reason"])
        return Evaluation(metrics=dict(row["metrics"]), info={"looked_up": True})


def random_best_distribution(latencies: Sequence[float], k: int) -> dict[str, Any]:
    """The best latency that uniform random sampling of ``k`` of the designs without
    replacement finds, exactly (``latencies``: one per design, ``inf`` where the design
    is infeasible). With the designs sorted by latency, the best has rank at least ``j``
    with probability ``C(N - j + 1, k) / C(N, k)``. Returns ``values`` (the distinct
    finite latencies, ascending), ``p`` (the probability that each is the best found),
    ``p_none`` (no feasible design drawn), ``p_optimum`` (= ``p[0]``) and ``median``
    (the median of the best found, ``inf`` where ``p_none`` reaches a half)."""
    lat = np.sort(np.asarray(latencies, dtype=float))
    n = len(lat)
    if not isinstance(k, int | np.integer) or not 1 <= k <= n:
        raise ValueError(f"k must be an integer in [1, {n}] (the number of designs), got {k!r}")
    if np.isnan(lat).any():
        raise ValueError("latencies: NaN (give inf for an infeasible design)")

    def at_least(j: int) -> float:          # P(best's rank >= j), ranks 1..n; j = n + 1: none feasible drawn
        return math.comb(n - j + 1, k) / math.comb(n, k)

    finite = lat[np.isfinite(lat)]
    values, first = np.unique(finite, return_index=True)
    bounds = [*first.tolist(), len(finite)]
    p = [at_least(bounds[i] + 1) - at_least(bounds[i + 1] + 1) for i in range(len(values))]
    p_none = at_least(len(finite) + 1)
    cum, median = 0.0, math.inf
    for v, q in zip(values, p):
        cum += q
        if cum >= 0.5:
            median = float(v)
            break
    return {"values": values.tolist(), "p": p, "p_none": p_none, "p_optimum": p[0] if p else 0.0,
            "median": median}


def _lat(rec: dict[str, Any] | None) -> float | None:
    return None if not rec or "metrics" not in rec else rec["metrics"]["latency_ms"]


def summarize_pair(evals: Sequence[dict[str, Any]], pair: dict[str, Any],
                   budgets: Sequence[int] = BUDGETS) -> dict[str, Any]:
    """The optimum of the enumeration ``evals`` and how close each flow of the committed
    reproduction's ``pair`` (a pair of its ``results.json``) gets to it; the committed
    designs' latencies must be the enumeration's (the same evaluator)."""
    lat = {json.dumps(r["point"], sort_keys=True): (r["metrics"]["latency_ms"] if r["status"] == "COMPLETE"
                                                     else math.inf) for r in evals}
    values = list(lat.values())
    feasible = [r for r in evals if r["status"] == "COMPLETE"]
    if not feasible:
        raise ValueError(f"{pair['workload']}/{pair['intrinsic']}: no feasible design")
    best = min(feasible, key=lambda r: r["metrics"]["latency_ms"])
    opt = best["metrics"]["latency_ms"]
    optima = [r["point"] for r in feasible if r["metrics"]["latency_ms"] == opt]

    def check(point: dict[str, Any], got: float | None, what: str) -> float:
        want = lat.get(json.dumps(point, sort_keys=True))
        if want is None:
            raise ValueError(f"{pair['workload']}/{pair['intrinsic']} {what}: {point} is not a legal design")
        if got is not None and not math.isclose(got, want, rel_tol=1e-9):
            raise ValueError(f"{pair['workload']}/{pair['intrinsic']} {what}: latency {got} recorded, "
                             f"{want} enumerated")
        return want

    def rank(v: float) -> int:                # designs strictly faster, + 1
        return 1 + sum(x < v for x in values)

    mobo, separate = [], []
    for s in sorted(pair["seeds"], key=int):
        rec = pair["seeds"][s]
        if rec.get("codesign"):
            v = check(rec["codesign"]["point"], _lat(rec["codesign"]), f"seed {s} co-design")
            mobo.append({"seed": int(s), "regret": v / opt, "rank": rank(v)})
        if rec.get("separate") and "metrics" in rec["separate"]:
            v = check(rec["separate"]["point"], _lat(rec["separate"]), f"seed {s} separate")
            separate.append({"seed": int(s), "regret": v / opt, "rank": rank(v)})
    ref = pair.get("reference", {})
    ref_lat = check(ref["point"], _lat(ref), "reference") if "metrics" in ref else None
    random = {}
    for k in budgets:
        if k <= len(values):
            d = random_best_distribution(values, k)
            random[str(k)] = {"p_optimum": d["p_optimum"], "p_none": d["p_none"], "median_regret": d["median"] / opt,
                              "expected_regret_if_found": (sum(v * q for v, q in zip(d["values"], d["p"]))
                                                           / (1 - d["p_none"]) / opt) if d["p_none"] < 1 else None}
    seed0 = {}
    for opt_name, recs in pair.get("front_seed0", {}).items():
        lats = [check(r["point"], _lat(r), f"seed 0 {opt_name} evaluation") for r in recs]
        if lats:
            seed0[opt_name] = {"feasible_evaluations": len(lats), "best_regret": min(lats) / opt,
                               "best_so_far_regret": (np.minimum.accumulate(lats) / opt).tolist()}
    if "mobo" in seed0 and mobo and mobo[0]["seed"] == 0 and not math.isclose(seed0["mobo"]["best_regret"],
                                                                              mobo[0]["regret"], rel_tol=1e-12):
        raise ValueError(f"{pair['workload']}/{pair['intrinsic']}: seed 0's co-design is not the best of its "
                         "recorded MOBO evaluations")
    return {"workload": pair["workload"], "intrinsic": pair["intrinsic"], "designs": len(evals),
            "feasible": len(feasible), "optimum_ms": opt, "optimum_points": optima,
            "mobo_25": {"seeds": mobo, "regret": quartiles([m["regret"] for m in mobo]),
                        "found_optimum": sum(m["regret"] == 1.0 for m in mobo), "n": len(mobo)},
            "separate_proxy": {"seeds": separate, "regret": quartiles([m["regret"] for m in separate]),
                               "is_optimum": sum(m["regret"] == 1.0 for m in separate), "n": len(separate)},
            "reference": {"regret": ref_lat / opt if ref_lat else None, "rank": rank(ref_lat) if ref_lat else None},
            "random": random, "seed0_committed": seed0,
            "seconds": sum(r.get("seconds", 0.0) for r in evals)}


def _q(st: dict[str, float] | None) -> str:
    return "n/a" if not st else f"{st['median']:.3f}x [{st['q25']:.3f}, {st['q75']:.3f}]"


def write_table(results: dict[str, Any], path: Path) -> None:
    """``table.md`` from ``results`` (the output of :func:`main`)."""
    st = results["settings"]
    lines = [f"Every legal design of the GEMM and GEMV spaces under the reproduction's area cap, scored by the "
             f"in-loop evaluator ({st['sw_method']} schedule search, {st['sw_budget']} schedules per layer, software "
             f"seed 0). Command: `{st['command']}`. The MOBO, separate and reference designs are those of "
             f"`{st['hasco_results']}` (their recorded latencies equal the enumeration's). Regret: latency / the "
             "optimum's, median [25th, 75th percentile] over the 10 seeds.", "",
             "## The optimum, and how close each flow gets", "",
             "| workload | intrinsic | designs (buildable) | optimum (ms) | MOBO after 25: regret | MOBO seeds at the "
             "optimum | random after 25: P(optimum), median regret | separate = proxy MOBO: regret | separate = "
             "reference design: regret |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results["pairs"]:
        rnd = r["random"].get("25", {})
        rtxt = f"{rnd['p_optimum']:.2f}, {rnd['median_regret']:.3f}x" if rnd else "n/a"
        ref = r["reference"]["regret"]
        lines.append(f"| {r['workload']} | {r['intrinsic']} | {r['designs']} ({r['feasible']}) | {r['optimum_ms']:.4g} | "
                     f"{_q(r['mobo_25']['regret'])} | {r['mobo_25']['found_optimum']} of {r['mobo_25']['n']} | {rtxt} | "
                     f"{_q(r['separate_proxy']['regret'])} | {f'{ref:.3f}x' if ref else 'n/a'} |")
    ov = results["overall"]
    lines += ["", f"Over the {ov['pairs']} pairs: MOBO found the optimum in {ov['mobo_found']} of {ov['mobo_runs']} "
              f"runs (median regret {ov['mobo_regret_median']:.3f}x); random search at the same 25 evaluations would "
              f"be expected to find it in {ov['random25_expected_found']:.1f} of them (probability "
              f"{ov['random25_p_optimum_mean']:.2f} on average over the pairs). MOBO's median regret is below random "
              f"search's on {ov['mobo_median_regret_below_random']} pairs and above it on "
              f"{ov['mobo_median_regret_above_random']}; its share of runs at the optimum exceeds random search's "
              f"probability on {ov['mobo_found_share_above_random']}. The proxy flow's separate "
              f"design is the optimum in {ov['separate_is_optimum']} of {ov['separate_runs']} (median regret "
              f"{ov['separate_regret_median']:.3f}x), the reference design's median regret is "
              f"{ov['reference_regret_median']:.3f}x.", "",
              "## Random search per budget (exact, from the enumeration): P(optimum found), median regret", "",
              "| workload | intrinsic | " + " | ".join(f"{k} evaluations" for k in st["budgets"]) + " |",
              "|---|---|" + "---|" * len(st["budgets"])]
    for r in results["pairs"]:
        cells = []
        for k in st["budgets"]:
            d = r["random"].get(str(k))
            cells.append(f"{d['p_optimum']:.2f}, {d['median_regret']:.3f}x" if d else "n/a (fewer designs)")
        lines.append(f"| {r['workload']} | {r['intrinsic']} | " + " | ".join(cells) + " |")
    lines += ["", "## The committed seed-0 runs: best regret after their 5th, 10th and last feasible evaluation "
              "(the only runs whose evaluations `results.json` keeps, in order; infeasible evaluations are not kept, "
              "so the count is of feasible ones)", "",
              "| workload | intrinsic | MOBO: feasible evaluations; best after 5 / 10 / all | random: feasible "
              "evaluations; best after 5 / 10 / all |", "|---|---|---|---|"]
    for r in results["pairs"]:
        cells = []
        for o in ("mobo", "random"):
            d = r["seed0_committed"].get(o)
            if d:
                b = d["best_so_far_regret"]
                at = " / ".join(f"{b[min(i, len(b)) - 1]:.3f}x" for i in (5, 10, len(b)))
                cells.append(f"{d['feasible_evaluations']}; {at}")
            else:
                cells.append("n/a")
        lines.append(f"| {r['workload']} | {r['intrinsic']} | " + " | ".join(cells) + " |")
    path.write_text("\n".join(lines) + "\n")


def overall(pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    mobo = [m["regret"] for r in pairs for m in r["mobo_25"]["seeds"]]
    sep = [m["regret"] for r in pairs for m in r["separate_proxy"]["seeds"]]
    refs = [r["reference"]["regret"] for r in pairs if r["reference"]["regret"]]
    med = [(r["mobo_25"]["regret"]["median"], r["random"]["25"]["median_regret"]) for r in pairs]
    found = [(r["mobo_25"]["found_optimum"] / r["mobo_25"]["n"], r["random"]["25"]["p_optimum"]) for r in pairs]
    return {"pairs": len(pairs), "mobo_runs": len(mobo), "mobo_found": sum(x == 1.0 for x in mobo),
            "random25_expected_found": float(sum(r["random"]["25"]["p_optimum"] * r["mobo_25"]["n"] for r in pairs)),
            "mobo_median_regret_below_random": sum(m < x for m, x in med),
            "mobo_median_regret_above_random": sum(m > x for m, x in med),
            "mobo_found_share_above_random": sum(m > x for m, x in found),
            "mobo_regret_median": float(np.median(mobo)), "separate_runs": len(sep),
            "separate_is_optimum": sum(x == 1.0 for x in sep), "separate_regret_median": float(np.median(sep)),
            "reference_regret_median": float(np.median(refs)),
            "random25_p_optimum_mean": float(np.mean([r["random"]["25"]["p_optimum"] for r in pairs]))}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m experiments.reproduce.hasco_enumerate",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", nargs="+", default=None, metavar="WORKLOAD:INTRINSIC",
                    help=f"subset of {' '.join(f'{w}:{k}' for w, k in ENUM_PAIRS)}")
    ap.add_argument("--sw-budget", type=int, default=60, help="schedules per layer (the reproduction's: 60)")
    ap.add_argument("--hasco-results", type=Path, default=HASCO_RESULTS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--enumerate-only", action="store_true", help="evaluate (or resume), write no summary")
    args = ap.parse_args(argv)
    pairs = [tuple(p.split(":")) for p in args.pairs] if args.pairs else list(ENUM_PAIRS)
    for p in pairs:
        if p not in ENUM_PAIRS:
            raise SystemExit(f"--pairs: {':'.join(p)!r} is not one of {[':'.join(q) for q in ENUM_PAIRS]}")
    if args.sw_budget < 1:
        raise SystemExit(f"--sw-budget: must be a positive integer, got {args.sw_budget}")
    store = RecordStore(args.out / "records")
    t0 = time.perf_counter()
    evals = {p: enumerate_pair(p[1], p[0], args.sw_budget, store) for p in pairs}
    if args.enumerate_only:
        return {}
    if not args.hasco_results.is_file():
        raise SystemExit(f"--hasco-results: {args.hasco_results} not found")
    committed = {(r["workload"], r["intrinsic"]): r for r in json.loads(args.hasco_results.read_text())["pairs"]}
    if args.sw_budget != 60:
        raise SystemExit("--sw-budget: the committed reproduction's designs were scored with 60; use "
                         "--enumerate-only for another budget")
    out = [summarize_pair(evals[p], committed[p]) for p in pairs if p in committed]
    cmd = "python -m experiments.reproduce.hasco_enumerate " + " ".join(argv if argv is not None else sys.argv[1:])
    results = {"pairs": out, "overall": overall(out),
               "settings": {"sw_method": "heuristic", "sw_budget": args.sw_budget, "budgets": list(BUDGETS),
                            "hasco_results": str(args.hasco_results), "command": cmd.strip(),
                            "chunk": CHUNK, "wall_seconds": time.perf_counter() - t0}}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(jsonable(results), indent=1))
    write_table(results, args.out / "table.md")
    print(f"results: {args.out / 'results.json'}, table: {args.out / 'table.md'}")
    return results


if __name__ == "__main__":
    main()
