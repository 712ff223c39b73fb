"""Reproduce Shi et al. 2020, "Learned Hardware/Software Co-Design of Neural Accelerators".

The paper: nested constrained Bayesian optimization over an Eyeriss-like accelerator and
its per-layer mappings improves network EDP by 18 % (ResNet) and 40 % (DQN) over the
hand-tuned Eyeriss, with strong results on an MLP and a Transformer (abstract; the paper
body, its exact spaces and budgets are not available to us; this follows the bilevel,
constrained formulation its abstract and its OpenReview summary state -- an outer
hardware loop and an inner mapping loop, known constraints as input constraints and
unknown ones as output constraints, arXiv 2010.02075 and openreview.net/forum?id=dqyK5RKMaW4
-- and, as a design, an Eyeriss-like Timeloop template as the paper is recalled [R]).

Here, for each workload (ResNet-50, DQN, the DLRM MLPs, a BERT-base block):

* **Baseline**: Eyeriss v1 (12 x 14 PEs, 224/12/24-word RFs, 108 KiB GLB, 16 bit,
  Eyeriss-normalized energies) with every layer mapped by the same inner mapper as the
  searched designs.
* **Hardware space** (:func:`hardware_space`): PE array 2..32 x 2..32, per-operand RF
  sizes, GLB size, with Eyeriss's energy table, clock and bandwidths fixed. ``iso``:
  held to Eyeriss's resources -- at most 168 PEs and at most Eyeriss's on-chip storage
  (168 x 520 B of RF + 108 KiB of GLB) -- so gains come from organisation and mapping;
  ``free``: up to 1,024 PEs and 4x the storage ("what more silicon buys").
* **Search**: a study per (workload, optimizer, seed) with network EDP as objective, at the
  same budget of evaluations: nested constrained BO, random search, TPE and NSGA-II over
  the hardware space with the nested co-design evaluator
  (:class:`evaluators.nested.NestedEvaluator`), and joint constrained BO over hardware x
  every layer's mapping (:func:`mappers.mapping_space.joint_mapping_space`; only for workloads of at
  most 8 unique layers -- ResNet-50's 24 would make a space of over a thousand
  dimensions, which is why the nested formulation exists). Joint BO is an ablation, run by
  default on DQN with iso resources only (``--joint-on``), as it costs ~25 min a run.
* **Reported**: EDP improvement over the baseline (mean +- std over seeds), evaluations
  until the baseline's EDP is beaten, wall time per run, and convergence plots
  (best-so-far EDP / baseline EDP vs evaluations).

Run: ``coexplore reproduce shi2020 [--quick]`` (or ``python -m
experiments.reproduce.shi2020``); everything lands in ``runs/reproduce/shi2020/`` and
studies resume if interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from accelerators import eyeriss_v1
from design_space import Constraint, DesignSpace, Integer, Ordinal
from evaluators.nested import NestedEvaluator
from mappers import zoo

PAPER = {"resnet50": 0.18, "dqn": 0.40, "mlp": None, "transformer": None}
WORKLOADS = {"resnet50": "resnet50", "dqn": "dqn", "mlp": "mlp_dlrm", "transformer": "bert_base_block"}
QUICK_WORKLOADS = {"resnet50": "resnet50[0:6]", "dqn": "dqn"}
OPTIMIZERS = ("constrained-bo", "constrained-bo-joint", "random", "tpe", "nsga2")
JOINT_MAX_LAYERS = 8   # joint mode only where hardware + every layer's mapping stays moderate
# Joint BO costs ~25 min a run on 2 cores (DQN, 60 evaluations, a 150+-dimensional space), so
# by default it runs as an ablation on DQN with Eyeriss's resources only; --joint-on widens it.
JOINT_ON = ("dqn:iso",)

EYERISS = eyeriss_v1()
RF_WORDS = [4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 224, 256, 384, 512]
GLB_KIB = [16, 32, 48, 64, 96, 108, 128, 192, 256, 384, 512]
FIXED = {"tech": "eyeriss_normalized", "clock_mhz": EYERISS.clock_mhz, "word_bits": EYERISS.word_bits,
         "dram_bw_words_per_cycle": EYERISS.dram_bw_words_per_cycle,
         "glb_bw_words_per_cycle": EYERISS.glb_bw_words_per_cycle}
EYERISS_PES = EYERISS.pe_x * EYERISS.pe_y
EYERISS_STORAGE_BYTES = (EYERISS_PES * (EYERISS.rf_w_words + EYERISS.rf_i_words + EYERISS.rf_o_words)
                         * EYERISS.word_bits // 8 + int(EYERISS.glb_kib * 1024))


def storage_bytes(p: Any) -> Any:
    """On-chip storage of a point (vectorized over constraint columns)."""
    return p["pe_x"] * p["pe_y"] * (p["rf_w_words"] + p["rf_i_words"] + p["rf_o_words"]) * 2 + p["glb_kib"] * 1024


def iso_resources(p: Any) -> Any:
    return (p["pe_x"] * p["pe_y"] <= EYERISS_PES) & (storage_bytes(p) <= EYERISS_STORAGE_BYTES)


def free_resources(p: Any) -> Any:
    return (p["pe_x"] * p["pe_y"] <= 1024) & (storage_bytes(p) <= 4 * EYERISS_STORAGE_BYTES)


def hardware_space(mode: str = "iso") -> DesignSpace:
    if mode not in ("iso", "free"):
        raise ValueError(f"mode must be 'iso' or 'free', got {mode!r}")
    pred = iso_resources if mode == "iso" else free_resources
    return DesignSpace(
        Integer("pe_x", 2, 32), Integer("pe_y", 2, 32),
        Ordinal("rf_w_words", RF_WORDS), Ordinal("rf_i_words", RF_WORDS), Ordinal("rf_o_words", RF_WORDS),
        Ordinal("glb_kib", GLB_KIB),
        constraints=[Constraint(f"{mode}_resources", pred)],
        name=f"shi2020-{mode}",
    )


def inner_mapper(inner: str, inner_budget: int) -> Any:
    """The mapper spec of ``--inner``: the heuristic and exhaustive mappers have no
    budget; random and every ask/tell strategy search ``inner_budget`` mappings."""
    return inner if inner in ("heuristic", "exhaustive") else {"name": inner, "budget": inner_budget}


def baseline(workload: str, inner: str, inner_budget: int) -> dict[str, float]:
    ev = NestedEvaluator("spatial", workload, inner_mapper(inner, inner_budget), fixed=FIXED)
    e = EYERISS
    return dict(ev({"pe_x": e.pe_x, "pe_y": e.pe_y, "rf_w_words": e.rf_w_words, "rf_i_words": e.rf_i_words,
                    "rf_o_words": e.rf_o_words, "glb_kib": e.glb_kib}).metrics)


def run_study(workload: str, optimizer: str, seed: int, mode: str, budget: int, inner: str,
              inner_budget: int, storage: str, workers: int) -> tuple[list[float], float]:
    """Run (or resume) one study; returns best-so-far EDP after each evaluation and the
    evaluation time in seconds (sum of the trials' wall times, stored with them, so a
    resumed run reports the same figure)."""
    from experiments.study import Study
    from mappers.mapping_space import joint_mapping_space

    bo = {"n_init": max(5, budget // 6), "pool_size": 1000}
    spec = WORKLOADS.get(workload, workload)
    if optimizer == "constrained-bo-joint":
        hw = hardware_space(mode)
        study = Study.create(
            f"{workload}-{mode}-{optimizer}-s{seed}", joint_mapping_space(hw, "spatial", spec, fixed=FIXED),
            {"edp_uj_ms": "min"}, "joint", "constrained-bo", optimizer_options=dict(bo, pool_size=300),
            evaluator_options={"accelerator": "spatial", "workload": spec, "hardware_names": hw.names,
                               "fixed": FIXED},
            storage=storage, seed=seed,
        )
    else:
        study = Study.create(
            f"{workload}-{mode}-{optimizer}-s{seed}", hardware_space(mode), {"edp_uj_ms": "min"},
            "nested", optimizer,
            optimizer_options=bo if optimizer == "constrained-bo" else {},
            evaluator_options={"accelerator": "spatial", "workload": spec,
                               "mapper": inner_mapper(inner, inner_budget), "fixed": FIXED},
            storage=storage, seed=seed,
        )
    study.optimize(budget, workers=workers, progress=False, timeout_s=1800)
    best, curve = np.inf, []
    for t in sorted(study.trials, key=lambda r: r.number):
        v = t.metrics.get("edp_uj_ms") if t.status.value == "COMPLETE" else None
        if v is not None:
            best = min(best, v)
        curve.append(best)
    return curve, float(sum(t.wall_time_s or 0.0 for t in study.trials))


def summarize(curves: dict[str, list[list[float]]], base: float) -> dict[str, Any]:
    out = {}
    for opt, runs in curves.items():
        finals = np.array([c[-1] for c in runs])
        impr = 1 - finals / base
        reach = [next((i + 1 for i, v in enumerate(c) if v < base), None) for c in runs]
        out[opt] = {"improvement_mean": float(impr.mean()), "improvement_std": float(impr.std(ddof=0)),
                    "improvements": impr.tolist(), "evals_to_beat_baseline": reach}
    return out


def plot(curves: dict[str, list[list[float]]], base: float, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for opt, runs in curves.items():
        n = max(len(c) for c in runs)
        arr = np.array([np.pad(np.asarray(c, float), (0, n - len(c)), mode="edge") for c in runs]) / base
        med = np.median(arr, axis=0)
        x = np.arange(1, n + 1)
        ax.plot(x, med, label=opt)
        ax.fill_between(x, arr.min(axis=0), arr.max(axis=0), alpha=0.15)
    ax.axhline(1.0, color="k", lw=0.8, ls="--", label="Eyeriss v1 (same mapper)")
    ax.set_xlabel("hardware evaluations")
    ax.set_ylabel("best EDP / Eyeriss EDP")
    ax.set_title(title, fontsize=9)
    ax.set_ylim(top=min(ax.get_ylim()[1], 2.0))
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="coexplore reproduce shi2020", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 workloads (ResNet-50's first 6 layers, DQN), "
                    "2 seeds, 12 evaluations: minutes")
    ap.add_argument("--workloads", nargs="+", default=None, help=f"subset of {list(WORKLOADS)}")
    ap.add_argument("--optimizers", nargs="+", default=list(OPTIMIZERS))
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--joint-on", nargs="*", default=list(JOINT_ON), metavar="WORKLOAD:MODE",
                    help="where the joint-BO ablation runs (default: dqn:iso; 'all' for everywhere)")
    ap.add_argument("--budget", type=int, default=None, help="hardware evaluations per run")
    ap.add_argument("--mode", choices=["iso", "free", "both"], default="both")
    ap.add_argument("--inner", default="heuristic", help="inner mapper (heuristic, random, constrained-bo, ...)")
    ap.add_argument("--inner-budget", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/shi2020"))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    quick = args.quick
    workloads = QUICK_WORKLOADS if quick else WORKLOADS
    if args.workloads:
        workloads = {w: (QUICK_WORKLOADS if quick else WORKLOADS).get(w, w) for w in args.workloads}
    seeds = args.seeds or (2 if quick else 5)
    budget = args.budget or (12 if quick else 60)
    modes = ["iso", "free"] if args.mode == "both" else [args.mode]
    args.out.mkdir(parents=True, exist_ok=True)
    storage = f"sqlite:///{(args.out / 'studies.db').resolve()}"
    results: dict[str, Any] = {"settings": {"quick": quick, "seeds": seeds, "budget": budget, "inner": args.inner,
                                            "inner_budget": args.inner_budget, "optimizers": args.optimizers},
                               "workloads": {}}
    for wl, spec in workloads.items():
        t = time.perf_counter()
        base = baseline(spec, args.inner, args.inner_budget)
        results["workloads"][wl] = {"baseline": base, "baseline_seconds": time.perf_counter() - t}
        print(f"{wl}: Eyeriss v1 EDP {base['edp_uj_ms']:.6g} uJ*ms "
              f"(energy {base['energy_uj']:.4g} uJ, latency {base['latency_ms']:.4g} ms)")
        for mode in modes:
            curves: dict[str, list[list[float]]] = {}
            walls: dict[str, list[float]] = {}
            for opt in args.optimizers:
                if opt == "constrained-bo-joint" and len(zoo.resolve(spec)) > JOINT_MAX_LAYERS:
                    print(f"  {mode:4} {opt:15} skipped: {len(zoo.resolve(spec))} unique layers "
                          f"(> {JOINT_MAX_LAYERS}) make the joint space too large")
                    continue
                if (opt == "constrained-bo-joint" and not quick and "all" not in args.joint_on
                        and f"{wl}:{mode}" not in args.joint_on):
                    print(f"  {mode:4} {opt:15} not run here (ablation on {', '.join(args.joint_on)}; "
                          "--joint-on to add)")
                    continue
                for seed in range(seeds):
                    c, eval_s = run_study(spec, opt, seed, mode, budget, args.inner,
                                          args.inner_budget, storage, args.workers)
                    walls.setdefault(opt, []).append(eval_s)
                    curves.setdefault(opt, []).append(c)
            summ = summarize(curves, base["edp_uj_ms"])
            for opt in summ:
                summ[opt]["seconds"] = walls[opt]
            results["workloads"][wl][mode] = {"summary": summ, "curves": curves}
            plot(curves, base["edp_uj_ms"], args.out / f"convergence_{wl}_{mode}.png",
                 f"{wl} ({mode} resources): median and range over {seeds} seeds")
            for opt, s in summ.items():
                reach = [r for r in s["evals_to_beat_baseline"] if r is not None]
                print(f"  {mode:4} {opt:15} EDP improvement {100 * s['improvement_mean']:+6.1f} % "
                      f"+- {100 * s['improvement_std']:.1f}; beat Eyeriss in {len(reach)}/{seeds} seeds "
                      f"(median {np.median(reach) if reach else float('nan'):.0f} evals); "
                      f"{np.mean(s['seconds']):.0f} s of evaluation/run")
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=float))
    write_table(results, args.out / "table.md", args)
    print(f"results: {args.out / 'results.json'}, table: {args.out / 'table.md'}")
    return results


def write_table(results: dict, path: Path, args: Any) -> None:
    lines = ["| workload | resources | optimizer | paper (EDP vs Eyeriss) | ours: mean +- std | beat Eyeriss "
             "| evals to beat (median) | evaluation s/run | command |",
             "|---|---|---|---|---|---|---|---|---|"]
    cmd = "coexplore reproduce shi2020" + (" --quick" if args.quick else "")
    for wl, res in results["workloads"].items():
        paper = PAPER.get(wl)
        for mode in ("iso", "free"):
            if mode not in res:
                continue
            for opt, s in res[mode]["summary"].items():
                reach = [r for r in s["evals_to_beat_baseline"] if r is not None]
                p = f"-{100 * paper:.0f} %" if paper and opt == "constrained-bo" and mode == "iso" else "--"
                med = f"{np.median(reach):.0f}" if reach else "--"
                lines.append(f"| {wl} | {mode} | {opt} | {p} | {-100 * s['improvement_mean']:+.1f} % +- "
                             f"{100 * s['improvement_std']:.1f} | {len(reach)}/{len(s['improvements'])} | {med} "
                             f"| {np.mean(s['seconds']):.0f} | `{cmd}` |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
