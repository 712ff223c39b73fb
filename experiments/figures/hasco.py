"""Figures from HASCO's committed ``results.json`` (``docs/reproduction/results/hasco/``,
written by ``coexplore reproduce hasco --seeds 10 --workers 1``)."""

from __future__ import annotations

from pathlib import Path

from experiments.figures.records import RecordError, load_json

__all__ = ["DSE", "ENUMERATION", "FIGURES", "RESULTS", "dse", "energy_and_noise", "ground_truth", "headline"]

RESULTS = "docs/reproduction/results/hasco/results.json"
ENUMERATION = "docs/reproduction/results/hasco-enumerate/results.json"
DSE = "docs/reproduction/results/hasco-dse/results.json"


def _x(v: float) -> str:
    return f"{v:.2f}x"


def headline(root: Path) -> str:
    """Separate / co-design latency over every pair, for the two definitions of "separate"
    (docs/reproduction/hasco.md, "HASCO's experiment as the abstract states it")."""
    overall = load_json(root, RESULTS)["overall"]
    cols = []
    for key in ("ratio", "ratio_reference"):
        try:
            s = overall[key]
            a = s["all_comparisons"]
            cols.append((s, a))
        except KeyError as e:
            raise RecordError(f"{RESULTS}: overall.{key} lacks {e}") from None
    pairs = {s["pairs"] for s, _ in cols}
    n = {a["n"] for _, a in cols}
    if len(pairs) != 1 or len(n) != 1:
        raise RecordError(
            f"{RESULTS}: the two definitions cover different pairs {pairs} or comparisons {n}"
        )
    p, c = pairs.pop(), n.pop()
    rows = [
        "| | separate = MOBO on a proxy, then software tuned (HASCO's flow, our reading) "
        "| separate = Gemmini-like reference, then software tuned |",
        "|---|---|---|",
        f"| **median of the {p} pair medians** | "
        + " | ".join(f"**{_x(s['median_of_pair_medians'])}**" for s, _ in cols)
        + " |",
        f"| all {c} comparisons | "
        + " | ".join(
            f"{_x(a['median'])} [{a['q25']:.2f}, {a['q75']:.2f}], {_x(a['min'])} to {_x(a['max'])}"
            for _, a in cols
        )
        + " |",
        "| pairs with a median of at least 1.25x | "
        + " | ".join(f"{s['pairs_with_median_at_least_1.25']} of {p}" for s, _ in cols)
        + " |",
    ]
    return "\n".join(rows) + "\n"


METRICS = (("latency_ms", "latency"), ("energy_uj", "energy"), ("edp_uj_ms", "EDP"))
FLOWS = ("proxy", "reference")


def _interval(o: dict) -> str:
    lo, hi = o["ci"]
    return f"[{lo:.2f}, {hi:.2f}]" + (", holds 1.00x" if o["ci_holds_1"] else "")


def energy_and_noise(root: Path) -> str:
    """Separate / co-design latency, energy and EDP of the latency-selected designs: the
    median of the pair medians with its bootstrap interval, and how many pairs' intervals
    hold 1.00x or lie above or below it, counted from the pairs' own intervals
    (docs/reproduction/hasco.md, "Energy, EDP and noise")."""
    rec = load_json(root, RESULTS)
    try:
        mr = rec["overall"]["metric_ratios"]
        boot = mr["bootstrap"]
        pairs = [p["metric_ratios"] for p in rec["pairs"]]
    except KeyError as e:
        raise RecordError(f"{RESULTS}: lacks {e} (made before issue 49? run `python -m "
                          "experiments.reproduce.hasco --retable docs/reproduction/results/hasco`)") from None
    rows = [
        f"| separate / co-design, median of the pair medians [{boot['level']:.0%} bootstrap interval] "
        "| separate = MOBO on a proxy, then software tuned | separate = Gemmini-like reference, then software tuned |",
        "|---|---|---|",
    ]
    for key, name in METRICS:
        rows.append(f"| **{name}** | " + " | ".join(
            f"**{mr[f][key]['median_of_pair_medians']:.2f}x** {_interval(mr[f][key])}" for f in FLOWS) + " |")
    for what, test in (("hold 1.00x", lambda s: s["ci_holds_1"]), ("lie above 1.00x", lambda s: s["ci"][0] > 1),
                       ("lie below 1.00x", lambda s: s["ci"][1] < 1)):
        cells = []
        for f in FLOWS:
            counts = []
            for key, _ in METRICS:
                sums = [p[f][key]["summary"] for p in pairs if p[f][key]["summary"]]
                n = sum(bool(test(s)) for s in sums)
                field = {"hold 1.00x": "pairs_ci_holds_1", "lie above 1.00x": "pairs_ci_above_1",
                         "lie below 1.00x": "pairs_ci_below_1"}[what]
                if n != mr[f][key][field]:
                    raise RecordError(f"{RESULTS}: overall.metric_ratios.{f}.{key}.{field} is "
                                      f"{mr[f][key][field]}, the pairs' intervals give {n}")
                counts.append(str(n))
            cells.append(" / ".join(counts) + f" of {len(pairs)}")
        rows.append(f"| pairs whose intervals {what} (latency / energy / EDP) | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def ground_truth(root: Path) -> str:
    """Per enumerated pair, the true co-design optimum and each flow's latency regret
    against it (docs/reproduction/hasco.md, "Ground truth"; written by ``python -m
    experiments.reproduce.hasco_enumerate``); the counts of optima are recounted from the
    per-seed regrets."""
    rec = load_json(root, ENUMERATION)
    rows = [
        "| workload | intrinsic | designs (buildable) | optimum (ms) | MOBO after 25: median regret, seeds at the "
        "optimum | random search after 25: P(optimum), median regret | separate = proxy MOBO: median regret, "
        "seeds at the optimum | separate = reference design: regret |",
        "|---|---|---|---|---|---|---|---|",
    ]
    try:
        for p in rec["pairs"]:
            m, sep, rnd = p["mobo_25"], p["separate_proxy"], p["random"]["25"]
            for name, d, field in (("mobo_25", m, "found_optimum"), ("separate_proxy", sep, "is_optimum")):
                n = sum(x["regret"] == 1.0 for x in d["seeds"])
                if n != d[field]:
                    raise RecordError(f"{ENUMERATION}: {p['workload']}/{p['intrinsic']} {name}.{field} is "
                                      f"{d[field]}, its seeds give {n}")
            ref = p["reference"]["regret"]
            rows.append(
                f"| {p['workload']} | {p['intrinsic']} | {p['designs']} ({p['feasible']}) | {p['optimum_ms']:.4g} | "
                f"{m['regret']['median']:.3f}x, {m['found_optimum']} of {m['n']} | "
                f"{rnd['p_optimum']:.2f}, {rnd['median_regret']:.3f}x | "
                f"{sep['regret']['median']:.3f}x, {sep['is_optimum']} of {sep['n']} | "
                + (f"{ref:.3f}x" if ref else "n/a") + " |"
            )
        pairs = rec["pairs"]
        runs = sum(p["mobo_25"]["n"] for p in pairs)
        found = sum(p["mobo_25"]["found_optimum"] for p in pairs)
        expected = sum(p["random"]["25"]["p_optimum"] * p["mobo_25"]["n"] for p in pairs)
        sep_runs = sum(p["separate_proxy"]["n"] for p in pairs)
        sep_opt = sum(p["separate_proxy"]["is_optimum"] for p in pairs)
    except KeyError as e:
        raise RecordError(f"{ENUMERATION}: a pair lacks {e}") from None
    rows += [
        "",
        f"Over the {len(pairs)} pairs: MOBO's pick after 25 evaluations is the optimum in {found} of {runs} runs; "
        f"random search at the same budget would be expected to find it in {expected:.1f}. The proxy flow's "
        f"separate design is the optimum in {sep_opt} of {sep_runs} (the optimum: the best design of the "
        f"enumerated space under the area cap, `{ENUMERATION}`).",
    ]
    return "\n".join(rows) + "\n"


_METHODS = (("mobo", "MOBO"), ("random", "random"), ("nsga2", "NSGA-II"))


def _iqr(st: dict) -> str:
    return f"{st['median']:.3f} [{st['q25']:.3f}, {st['q75']:.3f}]"


def dse(root: Path) -> str:
    """MOBO, random search and NSGA-II by hypervolume per evaluation (docs/reproduction/
    hasco.md, "The DSE comparison"; written by ``python -m experiments.reproduce.hasco_dse``):
    over all pairs after 5 to 25 evaluations, then per pair after 25 with the leader, the
    leads recounted from the pairs' medians."""
    rec = load_json(root, DSE)
    try:
        ov, pairs, st = rec["overall"], rec["pairs"], rec["settings"]
        at = [str(k) for k in st["at"]]
        rows = ["| hypervolume, median [IQR] over every pair and seed | " + " | ".join(f"after {k}" for k in at) + " |",
                "|---|" + "---|" * len(at)]
        for m, name in _METHODS:
            rows.append(f"| {name} | " + " | ".join(_iqr(ov["at"][m][k]) for k in at) + " |")
        rows += ["", "| workload | intrinsic | MOBO after 25 | random after 25 | NSGA-II after 25 | leads |",
                 "|---|---|---|---|---|---|"]
        leads = dict.fromkeys([m for m, _ in _METHODS], 0)
        ties = 0
        for p in pairs:
            meds = {m: p["at"][m]["25"]["median"] for m, _ in _METHODS}
            best = max(meds.values())
            top = [m for m, v in meds.items() if v == best]
            lead = top[0] if len(top) == 1 else "tie"
            if lead != p["leader_25"]:
                raise RecordError(f"{DSE}: {p['workload']}/{p['intrinsic']} leader_25 is {p['leader_25']!r}, "
                                  f"its medians give {lead!r}")
            if lead == "tie":
                ties += 1
            else:
                leads[lead] += 1
            rows.append(f"| {p['workload']} | {p['intrinsic']} | " + " | ".join(_iqr(p["at"][m]["25"]) for m, _ in _METHODS)
                        + f" | {dict(_METHODS).get(lead, 'tie')} |")
        if leads != ov["leads_25"] or ties != ov["ties_25"]:
            raise RecordError(f"{DSE}: overall.leads_25 {ov['leads_25']} (ties {ov['ties_25']}), the pairs give "
                              f"{leads} (ties {ties})")
        above = sum(p["at"]["nsga2"]["25"]["median"] > p["at"]["random"]["25"]["median"] for p in pairs)
        done = {(p["workload"], p["intrinsic"]) for p in pairs}
        missing = [f"{w}/{k}" for w, k in st["pairs_requested"] if (w, k) not in done]
    except KeyError as e:
        raise RecordError(f"{DSE}: lacks {e}") from None
    rows += ["", f"Pairs led after 25 evaluations (highest median over the {len(st['seeds'])} seeds), of "
             f"{len(pairs)}: " + ", ".join(f"{name} {leads[m]}" for m, name in _METHODS) + f", ties {ties}. "
             f"NSGA-II's median is above random search's on {above} of {len(pairs)}."
             + (" Not run to the end, so left out: " + ", ".join(missing) + "." if missing else "")]
    return "\n".join(rows) + "\n"


FIGURES = {"hasco-headline": ((RESULTS,), headline), "hasco-energy-noise": ((RESULTS,), energy_and_noise),
           "hasco-ground-truth": ((ENUMERATION,), ground_truth), "hasco-dse": ((DSE,), dse)}
