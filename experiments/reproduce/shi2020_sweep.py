"""Shi et al. 2020 at more budgets: the budget sweep and the optimizer comparison (issue 42,
items 2 and 3), beside :mod:`experiments.reproduce.shi2020`'s decomposition.

What it runs: for each workload of :data:`WORKLOADS` (ResNet-50, DQN at batch 32, the BERT
block) at iso resources, each outer optimizer of :data:`shi2020.VARIANTS
<experiments.reproduce.shi2020.VARIANTS>` (constrained BO, random search, TPE, BO without
the feasibility model, NSGA-II, constrained BO started from Eyeriss) and each of
:data:`SEEDS` seeds, one search over :func:`~experiments.reproduce.shi2020.hardware_space`
with the exact mapper inside (the decomposition's step 3), read at the budgets of
:data:`BUDGETS` hardware evaluations.

**One search per seed, read at every budget.** The search of a seed is run to the first
budget, recorded, then resumed to the next (the same study), and so on. Its first ``k``
trials are a search of budget ``k``: no optimizer of the comparison depends on the total
budget (constrained BO's initial design is a fixed 5 points, ``BO_OPTIONS``; random
search seeds proposal ``i`` by ``(seed, i)``; TPE's startup count and NSGA-II's population
are fixed; the study stops asking at the budget, and a proposal never depends on trials
after it), so reading a prefix is statistically the same experiment as a run of that
budget, not an approximation of one. With several workers a proposal sees which earlier
trials are still running, which depends on timing, exactly as in a run of the smaller
budget. The records are the decomposition's own (:func:`shi2020.search_settings` with
``budget = k``): the sweep's 16- and 30-evaluation constrained-BO records of seeds 0-4 are
the decomposition's runs of those budgets when both run in one ``--out``, and nothing is
evaluated twice.

**Stopping.** ``or until the best stops improving``: after each budget (every optimizer
and seed of a workload finished to it), the next budget is run only if some optimizer's
mean best EDP over the seeds (the searches' own figures) improved by at least
:data:`MIN_IMPROVEMENT` since the previous budget; the rule was fixed before any sweep ran.

**Figures.** Per workload, optimizer and budget: the best design of each seed's prefix,
re-mapped without a node limit (or with the workload's ``FINAL_MAX_NODES``) as the
decomposition does (the same re-map records), as EDP change against the baseline
(Eyeriss v1, best row-stationary mapping); mean, sample standard deviation (ddof = 1),
``n``, and a 95 % **Student t-interval** for the mean over seeds
(``mean +- t(0.975, n - 1) * sd / sqrt(n)``; the seeds are independent searches); the
share of infeasible proposals (trials that gave no design over all trials, from the
trials); wall and CPU seconds of the trials. ``--no-remap`` reports the searches' own
figures instead (those of a layer the node limit stopped are upper bounds).

Resumable like the decomposition: records under ``OUT/records`` (``--cache-from`` earlier
stores, e.g. the committed ``docs/reproduction/results/shi2020/records``), the studies in
``OUT/studies.db``; a stopped sweep loses only its evaluations in flight, provided
``studies.db`` is kept (a budget's record without its study can be read, not extended).

Run: ``coexplore reproduce shi2020_sweep`` (full: 3 workloads x 6 optimizers x 10 seeds x
up to 120 evaluations; it needs the faster exact mapper of issue 41), ``--smoke`` (every
optimizer end to end on DQN's last layer, 2 seeds, budgets 2 and 3: about 20 CPU s).
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from experiments.records import RecordStore, plain, trials_ref
from experiments.reproduce import shi2020 as s

WORKLOADS = ("resnet50", "dqn@32", "transformer")
BUDGETS = (16, 30, 60, 120)
SEEDS = 10
MODE = "iso"
MIN_IMPROVEMENT = 0.005
"""The next budget runs only if some optimizer's mean best EDP improved by at least 0.5 %."""
CONFIDENCE = 0.95

SMOKE = {"spec": "dqn[4]", "budgets": (2, 3), "seeds": 2, "max_nodes": 20_000}
"""``--smoke``: DQN's last layer (fully connected), budgets 2 and 3, 2 seeds, 20,000 nodes."""


def t_interval(values: list[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The Student t-interval for the mean of ``values`` at ``confidence`` (``None`` for
    fewer than 2 values)."""
    from scipy.stats import t

    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return None
    half = float(t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return float(x.mean()) - half, float(x.mean()) + half


def summarize(runs: list[dict[str, Any]], base_edp: float) -> dict[str, Any]:
    """One (workload, optimizer, budget) cell over its seeds' runs (each with ``best``, its
    figures, and the search record's fields). A seed whose every trial was infeasible has
    no design (change ``None``); the cell's mean, std and interval are then ``None``, since
    averaging over the seeds that found one would flatter the optimizer (``no_design``
    counts them)."""
    ch = [None if r["best"]["edp_uj_ms"] is None else r["best"]["edp_uj_ms"] / base_edp - 1.0 for r in runs]
    search = [r["curve"][-1] / base_edp - 1.0 if math.isfinite(r["curve"][-1]) else None for r in runs]
    cpus = [r.get("cpu_seconds") for r in runs]
    none = sum(c is None for c in ch)
    ci = t_interval(ch) if not none else None
    return {"n": len(runs), "no_design": none, "changes": ch, "change_mean": None if none else float(np.mean(ch)),
            "change_std": None if none else s.sample_std(ch),
            "std_ddof": 1, "ci95_t": list(ci) if ci else None, "search_changes": search,
            "infeasible_share": s.infeasible_share(runs), "failed_trials": [r["failed"] for r in runs],
            "trials": [len(r["curve"]) for r in runs], "wall_seconds": float(sum(r["seconds"] for r in runs)),
            "cpu_seconds": None if any(c is None for c in cpus) else float(sum(cpus)),
            "final_proven": [bool(r["best"].get("all_layers_proven_optimal")) for r in runs],
            "best_points": [r["best_point"] for r in runs], "curves": [r["curve"] for r in runs]}


def improved(prev: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]], threshold: float) -> bool:
    """Whether some optimizer's mean best EDP of its searches (``curve`` ends) fell by at
    least ``threshold`` (relative) from budget ``prev`` to budget ``now``."""
    for opt, cell in now.items():
        a, b = np.mean([c[-1] for c in prev[opt]["curves"]]), np.mean([c[-1] for c in cell["curves"]])
        if not math.isfinite(a) or (a > 0 and 1.0 - b / a >= threshold):   # inf: a seed had no design yet
            return True
    return False


def best_of(run: dict[str, Any], workload: str, spec: str, opt: str, seed: int, final: dict[str, Any],
            storage: str, store: RecordStore, remap: bool) -> tuple[dict[str, Any], tuple | None]:
    """The figures of a run's best design (from its best trial if proven in every layer, or
    from the record of its re-map; else a re-map job) and the job, if one is needed."""
    if run["best_point"] is None:         # every trial infeasible: no design to report
        return {"edp_uj_ms": None, "all_layers_proven_optimal": False}, None
    if not remap:
        return {"edp_uj_ms": run["curve"][-1], "all_layers_proven_optimal": bool(run.get("best_metrics"))}, None
    settings = s.remap_settings("exact", workload, spec, s.TECH, MODE, opt, seed, run["best_point"], final)
    trials = trials_ref(s.study_name(workload, MODE, opt, "", seed), [s._best_trial(run["curve"])], storage)
    if run.get("best_metrics") and not store.has(s.KINDS["remap"], settings):
        store.put(s.KINDS["remap"], settings, run["best_metrics"], wall_s=run["best_metrics"]["seconds"],
                  trials=trials, note="the search's best trial, proven optimal in every layer")
    if store.has(s.KINDS["remap"], settings):
        return store.get(s.KINDS["remap"], settings), None
    return {}, (settings, trials)


def sweep_workload(workload: str, spec: str, args: Any, storage: str, store: RecordStore) -> dict[str, Any]:
    """Every budget of one workload (until the stopping rule), each optimizer and seed."""
    mapper = s.search_mapper(0.0, args.max_nodes)
    final = s.final_mapper(workload, args)
    base = store.compute(s.KINDS["step"], s.step_settings("baseline", workload, spec, s.TECH),
                         lambda: plain(s.figures(spec, s.EYERISS_POINT, s.RS_MAPPER, s.TECH)))
    out: dict[str, Any] = {"spec": spec, "baseline": base, "budgets": {}, "stopped_after": None}
    prev = None
    top = max(args.budgets)
    for budget in sorted(args.budgets):
        runs = {opt: [s.search_run(workload, spec, opt, seed, MODE, budget, mapper, storage, args.workers, s.TECH,
                                   "", store, timeout_s=args.timeout_s)
                      for seed in range(args.seeds)] for opt in args.optimizers}
        jobs = {}
        for opt, rs in runs.items():
            for seed, r in enumerate(rs):
                r["best"], job = best_of(r, workload, spec, opt, seed, final, storage, store, args.remap)
                if job:
                    jobs[(opt, seed)] = job
        if jobs:
            for key, fig in zip(jobs, s.remap(spec, list(jobs.values()), final, s.TECH, args.workers, store)):
                runs[key[0]][key[1]]["best"] = fig
        cells = {opt: summarize(rs, base["edp_uj_ms"]) for opt, rs in runs.items()}
        out["budgets"][str(budget)] = cells
        for opt, c in cells.items():
            ci = c["ci95_t"]
            print(f"{workload} {budget:4d} {opt:24} EDP {_pct(c['change_mean'])} "
                  f"(95 % t-interval {'--' if ci is None else f'{100 * ci[0]:+.1f} .. {100 * ci[1]:+.1f}'}, "
                  f"n={c['n']}); infeasible {100 * (c['infeasible_share'] or 0):.1f} %; "
                  f"{c['wall_seconds']:.0f} s wall", flush=True)
        if prev is not None and budget != top and not improved(prev, cells, args.min_improvement):
            out["stopped_after"] = budget
            print(f"{workload}: no optimizer's mean best improved by {100 * args.min_improvement:.1f} % "
                  f"from the previous budget; stopping at {budget}", flush=True)
            break
        prev = cells
    return out


def _pct(x: float | None) -> str:
    return "--" if x is None else f"{100 * x:+.1f} %"


def write_table(results: dict[str, Any], path: Path) -> None:
    """sweep.md: best EDP against the budget per workload and optimizer, with the 95 %
    t-interval, sample std and n, infeasible share, wall and CPU time."""
    st = results["settings"]
    lines = ([] if results.get("complete") else ["**Incomplete sweep**: the cells below are those finished so far.", ""])
    lines += [f"Budget sweep, {MODE} resources, energy table {s.TECH}: {st['seeds']} seeds per cell; budgets "
              f"{', '.join(map(str, st['budgets']))} hardware evaluations (trials; an invalid proposal spends one), "
              f"one search per seed read at each budget; best design of each search re-mapped "
              f"{'as the decomposition does' if st['remap'] else 'no (the searches own figures)'}. EDP change "
              "against the baseline (negative = better): mean, 95 % Student t-interval of the mean over seeds, "
              "sample std (ddof = 1), n. Infeasible: trials that gave no design over all trials. Wall / CPU: "
              "the trials of the cell's searches up to that budget, summed over workers.", "",
              "| workload | optimizer | evaluations | EDP vs baseline (mean) | 95 % t-interval | sample std | n "
              "| infeasible proposals | final designs proven | wall h | CPU h |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for wl, w in results["workloads"].items():
        for budget, cells in w["budgets"].items():
            for opt, c in cells.items():
                ci, sd, cpu = c["ci95_t"], c["change_std"], c["cpu_seconds"]
                interval = "--" if ci is None else f"{_pct(ci[0])} .. {_pct(ci[1])}"
                std = "--" if sd is None else f"{100 * sd:.1f}"
                cpu_h = "--" if cpu is None else f"{cpu / 3600:.2f}"
                mean = _pct(c["change_mean"]) if not c["no_design"] else f"-- ({c['no_design']} seeds: no design)"
                lines.append(
                    f"| {wl} | {opt} | {budget} | {mean} | {interval} | {std} | {c['n']} | "
                    f"{sum(c['failed_trials'])}/{sum(c['trials'])} ({100 * (c['infeasible_share'] or 0):.1f} %) | "
                    f"{sum(c['final_proven'])}/{c['n']} | {c['wall_seconds'] / 3600:.2f} | {cpu_h} |")
        if w.get("stopped_after"):
            lines.append(f"| {wl} | -- | stopped after {w['stopped_after']} | no optimizer improved by "
                         f"{100 * st['min_improvement']:.1f} % | | | | | | | |")
    path.write_text("\n".join(lines) + "\n")


def plot(results: dict[str, Any], path: Path) -> None:
    """Top: mean best EDP / baseline against the budget, 95 % t-interval bars, per
    optimizer; bottom: the searches' best-so-far against evaluations (mean over seeds)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    wls = list(results["workloads"])
    fig, axes = plt.subplots(2, max(len(wls), 1), figsize=(4.2 * max(len(wls), 1), 6.5), squeeze=False)
    for j, wl in enumerate(wls):
        w = results["workloads"][wl]
        base = w["baseline"]["edp_uj_ms"]
        budgets = [int(b) for b in w["budgets"]]
        opts = list(next(iter(w["budgets"].values()), {}))
        for k, opt in enumerate(opts):
            cells = [w["budgets"][str(b)][opt] for b in budgets]
            m = np.array([np.nan if c["change_mean"] is None else 1 + c["change_mean"] for c in cells])
            lo = np.array([m[i] - (1 + c["ci95_t"][0]) if c["ci95_t"] else 0.0 for i, c in enumerate(cells)])
            hi = np.array([(1 + c["ci95_t"][1]) - m[i] if c["ci95_t"] else 0.0 for i, c in enumerate(cells)])
            x = np.array(budgets) * (1 + 0.02 * (k - len(opts) / 2))
            axes[0, j].errorbar(x, m, yerr=[lo, hi], marker="o", ms=3, capsize=2, lw=1, label=opt)
            last = w["budgets"][str(budgets[-1])][opt]["curves"]
            arr = np.array(last, dtype=float) / base
            arr[~np.isfinite(arr)] = np.nan
            with warnings.catch_warnings():        # an evaluation at which no seed had a design yet
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nanmean(arr, axis=0)
            axes[1, j].plot(np.arange(1, arr.shape[1] + 1), mean, lw=1, label=opt)
        for ax in axes[:, j]:
            ax.axhline(1.0, color="k", lw=0.8, ls="--")
            ax.grid(alpha=0.3)
        axes[0, j].set_xscale("log")
        axes[0, j].set_xticks(budgets, [str(b) for b in budgets])
        axes[0, j].set_title(f"{wl}: best EDP / baseline, mean and 95 % t-interval", fontsize=8)
        axes[0, j].set_xlabel("budget (hardware evaluations)")
        axes[1, j].set_xlabel("evaluations")
        axes[1, j].set_title(f"{wl}: searches' best so far, mean over seeds", fontsize=8)
    axes[0, 0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="coexplore reproduce shi2020_sweep", description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), help=f"of {list(s.WORKLOADS)}")
    ap.add_argument("--optimizers", nargs="+", default=list(s.VARIANTS), choices=list(s.VARIANTS))
    ap.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS))
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--min-improvement", type=float, default=MIN_IMPROVEMENT,
                    help="run the next budget only if some optimizer's mean best improved by this share")
    ap.add_argument("--max-nodes", type=int, default=s.MAX_NODES, help="the exact mapper's nodes per layer in the search")
    ap.add_argument("--final-max-nodes", type=int, default=None, help="as the decomposition's")
    ap.add_argument("--no-remap", dest="remap", action="store_false",
                    help="report the searches' own figures instead of re-mapping each best design")
    ap.add_argument("--smoke", action="store_true", help="every optimizer end to end on a tiny budget (tests)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cache-from", nargs="*", type=Path, default=[])
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/shi2020_sweep"))
    args = ap.parse_args(argv)
    for name in ("seeds", "workers"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not args.budgets or min(args.budgets) < 1:
        ap.error(f"--budgets must be positive integers, got {args.budgets}")
    args.timeout_s = s.TRIAL_TIMEOUT_S
    workloads = {w: s.WORKLOADS.get(w, (w, ""))[0] for w in args.workloads}
    if args.smoke:
        workloads = {"dqn-fc": SMOKE["spec"]}
        args.budgets, args.seeds, args.max_nodes = list(SMOKE["budgets"]), SMOKE["seeds"], SMOKE["max_nodes"]
        args.workers, args.timeout_s = 1, None          # in this process: seconds, not a pool's start
    args.out.mkdir(parents=True, exist_ok=True)
    storage = f"sqlite:///{(args.out / 'studies.db').resolve()}"
    store = RecordStore(args.out / "records", fallbacks=args.cache_from)
    t0 = time.perf_counter()
    results: dict[str, Any] = {
        "settings": {"workloads": workloads, "optimizers": args.optimizers, "variants": {o: s.variant(o) for o in
                                                                                       args.optimizers},
                     "budgets": sorted(args.budgets), "seeds": args.seeds, "mode": MODE, "tech": s.TECH,
                     "max_nodes": args.max_nodes, "remap": args.remap, "min_improvement": args.min_improvement,
                     "final_max_nodes": {w: s.final_nodes_of(w, args) for w in workloads},
                     "interval": f"{int(100 * CONFIDENCE)} % Student t-interval of the mean over seeds"},
        "workloads": {}}

    def save(complete: bool) -> None:
        results["complete"] = complete
        results["wall_seconds_this_invocation"] = time.perf_counter() - t0
        (args.out / "sweep.json").write_text(json.dumps(results, indent=1, default=float))
        write_table(results, args.out / "sweep.md")

    for wl, spec in workloads.items():
        results["workloads"][wl] = sweep_workload(wl, spec, args, storage, store)
        save(False)
    save(True)
    plot(results, args.out / "sweep.png")
    print(f"results: {args.out / 'sweep.json'}, table: {args.out / 'sweep.md'}, plot: {args.out / 'sweep.png'}")
    return results


if __name__ == "__main__":
    main()
