"""Figures of the user guide (docs/guide/optimizers.md, report.md, kernels.md and
docs/KERNELS.md) from the records their commands write with ``--json`` / ``--out`` (the
layout of ``experiments/harnesses/record.py``: the script's results under ``rows``, with
its settings, commit, wall and CPU seconds and load average). Each block names its record
and its command."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from experiments.figures.benchmarks import INNER_FEASIBILITY, INNER_FEASIBILITY_TXT, NETWORK_NAMES
from experiments.figures.records import RecordError, load_json, stated_scope

__all__ = ["FIGURES", "calibration_cpu", "calibration_summary", "hil_cpu", "hil_summary", "optimizers_measured",
           "report_size"]

BO_ENUMERABLE = "docs/search_quality/bo_enumerable.json"
GRADIENT = "docs/search_quality/gradient_vs_bo.json"
REPORT_SIZE = "docs/benchmarks/report_size.json"
CALIBRATION = "docs/benchmarks/calibration_cpu.json"
HIL = "docs/benchmarks/hil_search_cpu.json"

LABELS = {"constrained-bo": "constrained BO", "tpe": "TPE", "qlearning": "Q-learning", "random": "random",
          "gradient": "gradient"}
KINDS = (("blocked_t1", "blocked matmuls"), ("torch_t1", "torch kernels, 1 thread"),
         ("torch_t2", "torch kernels, 2 threads"))


def _record(root: Path, rel: str, harness: str) -> dict[str, Any]:
    r = load_json(root, rel)
    for key in ("harness", "settings", "commit", "rows", "wall_s", "started_at",
                "load_avg_1_5_15_start", "load_avg_1_5_15_end"):
        if key not in r:
            raise RecordError(f"{rel}: no entry {key!r} (has {sorted(r)})")
    if r["harness"] != harness:
        raise RecordError(f"{rel}: written by {r['harness']!r}, expected {harness!r}")
    return r


def _get(d: dict, key: str, rel: str) -> Any:
    try:
        return d[key]
    except KeyError:
        raise RecordError(f"{rel}: no entry {key!r} (has {sorted(d)})") from None


def _minutes(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s"


def _provenance(r: dict, rel: str) -> str:
    """`rel`, commit, date, wall (and CPU) time of the whole run, load average at its start and end."""
    commit = (r["commit"] or "unknown")[:7] + (" with local changes" if r.get("dirty") else "")
    cpu = r.get("process_cpu_s")
    spent = _minutes(r["wall_s"]) + " wall" + (f", {_minutes(cpu)} CPU" if cpu is not None else "")
    load = ""
    if r["load_avg_1_5_15_start"] and r["load_avg_1_5_15_end"]:
        load = (f", load average {r['load_avg_1_5_15_start'][0]:.1f} at its start and "
                f"{r['load_avg_1_5_15_end'][0]:.1f} at its end on {r.get('cpu_count', '?')} cores")
    return f"`{rel}`, commit {commit}, {r['started_at']}, {spent}{load}"


# ---------------------------------------------------------------- optimizers.md


def _enumerable_row(root: Path) -> str:
    rec = _record(root, BO_ENUMERABLE, "experiments.search_quality.bo_enumerable")
    r, s = rec["rows"], rec["settings"]
    budget = _get(r, "budget", BO_ENUMERABLE)
    parts = []
    for name, res in _get(r, "results", BO_ENUMERABLE).items():
        hits = res["evals_to_target"]
        reached = [h for h in hits if h is not None]
        med = statistics.median([h if h is not None else float("inf") for h in hits])
        ratio = statistics.median(res["best_ratio"])
        best = "median best = the optimum" if ratio == 1.0 else f"median best {ratio:.2f}× optimum"
        evals = f"**{med:.0f}**" if med != float("inf") else f"> {budget}"
        cpu = statistics.median(res["cpu_seconds"])
        parts.append(f"{LABELS.get(name, name)} {evals} ({len(reached)}/{len(hits)} seeds reach it; {best}; "
                     f"{cpu:.1f} CPU s per seed, median)")
    what = (f"enumerable joint space: a {r['points']:,}-point systolic array × GEMM mapping space "
            f"({r['infeasible']} infeasible), budget {s['fraction']:.0%} ({budget} evaluations), "
            f"{s['seeds']} seeds")
    return (f"| {what} | evaluations to get within 5 % of the exhaustive optimum (median): "
            + "; ".join(parts) + f" ({_provenance(rec, BO_ENUMERABLE)}) | "
            f"`python -m experiments.search_quality.bo_enumerable --seeds {s['seeds']} --json {BO_ENUMERABLE}` |")


def _feasibility_row(root: Path) -> str:
    r = load_json(root, INNER_FEASIBILITY)
    sm = _get(r, "summary", INNER_FEASIBILITY)
    for key in ("bo", "bo-no-feasibility", "bo-neither", "random", "bo-known"):
        _get(sm, key, INNER_FEASIBILITY)
    nets = sorted({k.split(":")[0] for k in r["layers"]})
    after = {k: f"{100 * v['infeasible_share_after_init']:.1f} %" for k, v in sm.items()}
    ratio = {k: f"{v['median_ratio_to_exact']:.2f}" for k, v in sm.items()}
    # the difference of the two shares as shown (rounded to 0.1 points), so the sentence adds up
    classifier = (round(100 * sm["bo"]["infeasible_share_after_init"], 1)
                  - round(100 * sm["bo-no-feasibility"]["infeasible_share_after_init"], 1))
    what = (f"unknown feasibility in the inner mapping search: {r['arch']}, buffer capacity left out of the "
            f"space so overflowing mappings are proposed and fail ({len(r['layers'])} layers of "
            f"{' and '.join(NETWORK_NAMES.get(n, n) for n in nets)}, {r['budget']} mappings, {r['seeds']} seeds)")
    return (f"| {what} | infeasible share of proposals after BO's {r['n_init']}-point initial design: "
            f"constrained BO (classifier + failures imputed) **{after['bo']}**; imputation without the classifier "
            f"{after['bo-no-feasibility']}; neither {after['bo-neither']}; random {after['random']} (the "
            f"classifier's share is {abs(classifier):.1f} points {'above' if classifier > 0 else 'below'} "
            f"imputation alone). Best EDP / exact optimum (median; the exact mapper's optimum of "
            f"{stated_scope(root, INNER_FEASIBILITY_TXT)}, as `{INNER_FEASIBILITY_TXT}` states): "
            f"BO {ratio['bo']}, BO over the space with "
            f"capacity known {ratio['bo-known']}, random {ratio['random']} (`{INNER_FEASIBILITY}`) | "
            "`python -m experiments.search_quality.inner_feasibility` (output: "
            "`docs/search_quality/inner_feasibility.txt`) |")


def _gradient_row(root: Path) -> str:
    rec = _record(root, GRADIENT, "experiments.search_quality.gradient_vs_bo")
    r = rec["rows"]
    base = _get(r, "baseline_edp_uj_ms", GRADIENT)
    methods = _get(r, "methods", GRADIENT)
    med = {m: statistics.median(x["best"] for x in runs) for m, runs in methods.items()}
    cpu = {m: statistics.median(x["cpu_seconds"] for x in runs) for m, runs in methods.items()}
    shown = [m for m in ("gradient", "constrained-bo", "random") if m in med]
    figs = ", ".join(f"{LABELS[m]} **{med[m] / base:.3f}**" for m in shown)
    costs = ", ".join(f"{LABELS[m]} {_minutes(cpu[m])}" for m in shown)
    if "gradient" in methods:
        costs += (f"; the first gradient run, which also compiles the relaxed network, "
                  f"{_minutes(methods['gradient'][0]['cpu_seconds'])}")
    vs = []
    dosa = {"random": 2.80, "constrained-bo": 12.59}
    reproduced = []
    for other in ("random", "constrained-bo"):
        if other in med and "gradient" in med:
            ratio = med[other] / med["gradient"]
            word = "better" if ratio > 1 else "worse"
            vs.append(f"{abs(1 - 1 / ratio) * 100:.1f} % {word} than {LABELS[other]}")
            reproduced.append(ratio >= dosa[other] / 2)
    verdict = ("DOSA's gaps are reproduced" if reproduced and all(reproduced)
               else "DOSA's gaps are not reproduced (every method here maps layers with the same greedy mapper)")
    what = (f"gradient co-design (`evaluators.gradient_codesign.GradientSearch`, DOSA-style: descend the jax "
            f"relaxation of hardware + every layer's tile factors from many starts, round, repair) vs nested "
            f"constrained BO vs random, DQN on the iso-resource Eyeriss-like space, {r['budget']} evaluations, "
            f"{r['seeds']} seeds, {r['steps']} descent steps")
    return (f"| {what} | best EDP / Eyeriss v1 (median): {figs}. Gradient is " + " and ".join(vs)
            + f"; DOSA reports 2.80× vs random and 12.59× vs its BO: {verdict}. CPU time per run (median): "
            f"{costs} ({_provenance(rec, GRADIENT)}) | `python -m experiments.search_quality.gradient_vs_bo "
            f"--out {GRADIENT}` |")


DEMO_ROW = ("| demo (systolic array × ResNet-50, seed 0, 2 workers) | constrained BO (60 points) against random "
            "search (120 points), exact mapper: rendered on the [home page](../index.md) from "
            "`docs/benchmarks/demo_search.json` | `make demo`; `coexplore run experiments/configs/demo.yaml "
            "--optimizer random --n-trials 120 --study demo-random`; then `python -m "
            "experiments.benchmarks.demo_search sqlite:///runs/demo.db --out docs/benchmarks/demo_search.json` |")


#: the rows of the optimizers.md table, in order: (record, renderer)
OPTIMIZER_ROWS = ((BO_ENUMERABLE, _enumerable_row), (INNER_FEASIBILITY, _feasibility_row),
                  (GRADIENT, _gradient_row))


def optimizers_measured(root: Path, rows: tuple = OPTIMIZER_ROWS) -> str:
    """The search-quality table of optimizers.md, one row per record, then the demo's row."""
    lines = ["| what | figure | command |", "|---|---|---|", *(render(root) for _, render in rows), DEMO_ROW]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- report.md


def report_size(root: Path) -> str:
    """Writing the report of a generated study: wall and CPU seconds, page size."""
    rec = _record(root, REPORT_SIZE, "experiments.benchmarks.report_size")
    r = rec["rows"]
    runs = _get(r, "runs", REPORT_SIZE)
    counts = r["status_counts"]
    walls = ", ".join(f"{x['write_wall_s']:.1f}" for x in runs)
    cpus = ", ".join(f"{x['write_cpu_s']:.1f}" for x in runs)
    return (f"Measured with `python -m experiments.benchmarks.report_size --json {REPORT_SIZE}` on a generated "
            f"study of {r['trials']:,} trials ({counts.get('COMPLETE', 0):,} COMPLETE, "
            f"{counts.get('INFEASIBLE', 0):,} INFEASIBLE; two objectives, four parameters, no breakdowns): "
            f"writing the report took {r['write_wall_s_median']:.1f} s wall and {r['write_cpu_s_median']:.1f} "
            f"CPU s (median of {len(runs)} writes in one process: {walls} s wall, {cpus} CPU s) and the page is "
            f"{r['bytes'] / 1e6:.1f} MB; opening the study took {r['load_wall_s_median']:.2f} s. Wall time "
            f"moves with the machine's load ({_provenance(rec, REPORT_SIZE)}).{_share(rec)}\n")


# ---------------------------------------------------------------- kernels


def _calibration(root: Path) -> tuple[dict, dict]:
    rec = _record(root, CALIBRATION, "coexplore calibrate")
    fit = _get(rec["rows"], "fit", CALIBRATION)
    _get(fit, "heldout", CALIBRATION)
    return rec, fit


def _hil(root: Path) -> dict:
    return _record(root, HIL, "experiments.search_quality.hil_search")


def _cell(block: dict, metric: str, kind: str = "") -> list[str]:
    b, a = block[f"latency_before{kind}"], block[f"latency_after{kind}"]
    out = [f"{b[metric]:.3f} → {a[metric]:.3f}".replace("-", "\u2212") for metric in ("spearman", "kendall")]
    out += [f"{b[metric]:.1f} → {a[metric]:.1f} %" for metric in ("mape_pct", "mdape_pct")]
    return out


def calibration_cpu(root: Path) -> str:
    """Held-out scores of the CPU calibration, before and after the fit, per kind of kernel."""
    rec, fit = _calibration(root)
    h = fit["heldout"]
    n_train = fit["train"]["latency_before"]["n"] if "train" in fit else None
    lines = [
        f"`coexplore calibrate --device cpu --json {CALIBRATION}` (seed {rec['settings']['seed']}, threads "
        f"{rec['settings']['threads']}, the {fit.get('statistic', 'median')} of the timed blocks): "
        + (f"{n_train + h['latency_before']['n']} kernels, " if n_train is not None else "")
        + f"{h['latency_before']['n']} held out, of {len(fit.get('heldout_groups', []))} shapes; median "
        f"relative IQR of the measurements {fit['median_noise_rel']:.3f}; energy: {fit.get('energy')}.",
        "",
        "| held-out set | Spearman before → after | Kendall before → after | MAPE before → after | "
        "MdAPE before → after |",
        "|---|---|---|---|---|",
        f"| all {h['latency_before']['n']} kernels | " + " | ".join(_cell(h, "")) + " |",
    ]
    for kind, label in KINDS:
        if f"latency_before_{kind}" in h:
            lines.append(f"| {h[f'latency_before_{kind}']['n']} {label} | " + " | ".join(_cell(h, "", f"_{kind}"))
                         + " |")
    ws_b = h["latency_before"].get("within_shape_spearman")
    ws_a = h["latency_after"].get("within_shape_spearman")
    tail = []
    if ws_b is not None and ws_a is not None:
        tail.append(f"Within a shape (the tilings of one held-out GEMM), the Spearman is {ws_b:.3f} before and "
                    f"{ws_a:.3f} after.")
    if "other_statistic" in fit:
        o = fit["other_statistic"]
        oa = o["heldout"]["latency_after"]
        tail.append(f"Fitted on the {o['statistic']} of the timed blocks instead (the same measurements), all "
                    f"held-out kernels: Spearman {oa['spearman']:.3f}, MAPE {oa['mape_pct']:.1f} %.")
    tail.append(f"({_provenance(rec, CALIBRATION)}.){_share(rec)}")
    return "\n".join(lines) + "\n\n" + " ".join(tail) + "\n"


def _share(rec: dict) -> str:
    """How much of a core a timing run had: its process's CPU time over its wall time."""
    cpu = rec.get("process_cpu_s")
    if cpu is None or not rec["wall_s"]:
        return ""
    return (f" Over the run its process had {cpu / rec['wall_s']:.0%} of one core on average (CPU over wall "
            "time): the measured times include waiting for a core.")


def _by_method(r: dict) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = {}
    for row in r["rows"]:
        by.setdefault(row["method"], []).append(row)
    return by


def hil_cpu(root: Path) -> str:
    """The hardware-in-the-loop tiling search against the exhaustive sweep, per method."""
    rec = _hil(root)
    r, s = rec["rows"], rec["settings"]
    n = r["n_tilings"]
    M, N, K = r["shape"]
    sweep_pick = 100 * (r["verified"][r["exhaustive_best"]] / r["verified_best_s"] - 1)
    lines = [
        f"GEMM {M}×{N}×{K}, {n} tilings; budget {r['budget']} measurements ({s['budget_frac']:.0%}); "
        f"{s['seeds']} seeds; statistic: the {r['statistic']} of the timed blocks; model: {r['model']}; "
        f"the sweep's median relative IQR {r['median_noise_rel']:.2f}; the model's Spearman against the sweep "
        f"over all tilings {r['model_spearman_all_tilings']:.3f}. Gap = a pick's verified time (median of "
        f"{r['verify_rounds']} interleaved rounds) over the best verified time − 1; median over seeds, with the "
        "seeds within 5 % in brackets:",
        "",
        "| method | measurements (median) | of the sweep | gap (verified) | gap in the sweep |",
        "|---|---|---|---|---|",
    ]
    for m, rows in _by_method(r).items():
        used = statistics.median(x["measurements"] for x in rows)
        gaps = [x["gap_pct"] for x in rows]
        within = sum(g <= 5.0 for g in gaps)
        lines.append(f"| {m} | {used:.0f} | {used / n:.0%} | {statistics.median(gaps):.1f} % ({within}/{len(rows)}) "
                     f"| {statistics.median(x['gap_sweep_pct'] for x in rows):.1f} % |")
    lines.append(f"| exhaustive sweep | {n} | 100% | {sweep_pick:.1f} % | 0.0 % |")
    noise = [x["gp_noise_var_std"] for x in r["rows"] if "gp_noise_var_std" in x]
    if sweep_pick > 5.0:
        lines += ["", f"The sweep's own best verified {sweep_pick:.1f} % above the best re-measured tiling: at "
                      "this noise level the gaps say more about the machine's load than about the methods."]
    extra = (f" The GP's learned noise variance (standardized log-latency): {min(noise):.3g}–{max(noise):.3g} "
             "over the seeds." if noise else "")
    return ("\n".join(lines) + f"\n\n(`python -m experiments.search_quality.hil_search --seeds {s['seeds']} "
            f"--calibration {s['calibration']} --json {HIL}`: {_provenance(rec, HIL)}.){_share(rec)}{extra}\n")


def calibration_summary(root: Path) -> str:
    """One sentence of the guide: the calibration's held-out scores."""
    rec, fit = _calibration(root)
    h = fit["heldout"]
    blocked = ""
    if "latency_before_blocked_t1" in h:
        b, a = h["latency_before_blocked_t1"], h["latency_after_blocked_t1"]
        blocked = (f" and, for the {b['n']} blocked matmuls, from {b['spearman']:.3f} to {a['spearman']:.3f} with "
                   f"MAPE {b['mape_pct']:.1f} % → {a['mape_pct']:.1f} %")
    return (f"Calibration on {h['latency_before']['n']} held-out kernels of {len(fit.get('heldout_groups', []))} "
            f"shapes moved the Spearman from {h['latency_before']['spearman']:.2f} to "
            f"{h['latency_after']['spearman']:.2f} overall{blocked} (median relative IQR of the measurements "
            f"{fit['median_noise_rel']:.3f}; `{CALIBRATION}`, load average {rec['load_avg_1_5_15_start'][0]:.1f} "
            "at its start).\n")


def hil_summary(root: Path) -> str:
    """One sentence of the guide: the HIL search's verified gaps per method."""
    hil = _hil(root)
    r = hil["rows"]
    by = _by_method(r)
    parts = []
    for m in ("screen", "bo", "random", "model-only"):
        if m in by:
            used = statistics.median(x["measurements"] for x in by[m])
            parts.append(f"{m} {statistics.median(x['gap_pct'] for x in by[m]):.1f} % with {used / r['n_tilings']:.0%} "
                         "of the sweep's measurements")
    M, N, K = r["shape"]
    return (f"The HIL search on a {M}×{N}×{K} GEMM ({r['n_tilings']} tilings) picked tilings this far above the "
            f"best verified one (median over {hil['settings']['seeds']} seeds): " + "; ".join(parts)
            + f" (`{HIL}`, load average {hil['load_avg_1_5_15_start'][0]:.1f} at its start).\n")


FIGURES = {
    "optimizers-measured": ((*(rel for rel, _ in OPTIMIZER_ROWS), INNER_FEASIBILITY_TXT), optimizers_measured),
    "report-size": ((REPORT_SIZE,), report_size),
    "kernels-calibration-cpu": ((CALIBRATION,), calibration_cpu),
    "kernels-hil-cpu": ((HIL,), hil_cpu),
    "kernels-calibration-summary": ((CALIBRATION,), calibration_summary),
    "kernels-hil-summary": ((HIL,), hil_summary),
}
