"""Reproduce HASCO (Xiao et al., ISCA 2021): co-design vs separate design of intrinsic
accelerators and their software.

The paper (its abstract, arXiv 2105.01585): partitioning tensor computations
onto hardware intrinsics, multi-objective BO for the hardware and heuristic + Q-learning
for the software give **1.25x-1.44x lower latency than developing hardware and software
separately**. Its body, the exact baselines and budgets are not available; the settings
below follow its released code (github.com/pku-liang/HASCO) where it says something.

For each workload and intrinsic (:data:`PAIRS`: ResNet-50, MobileNetV2 and Xception on
GEMM and CONV accelerators, as HASCO's ``co_*`` testbenches; the kernel benchmarks GEMM,
GEMV, conv2d, depthwise, MTTKRP and TTM on every intrinsic they have a partition onto),
and each seed:

* **Area budget**: every flow searches HASCO's hardware space
  (:func:`evaluators.intrinsic_codesign.hardware_space`) under the known constraint "area at most
  that of a Gemmini-like reference design" (:func:`evaluators.intrinsic_codesign.reference_area_mm2`;
  without a budget the lowest latency is always the largest array).
* **Co-design**: MOBO (:class:`optimizer.mobo.MOBO`, qLogNEHVI; Sobol initial design of
  ``n_init``, HASCO's testbenches use 5 + 20 iterations) minimizing latency, power and
  area of the workload, every hardware point scored with its software searched per layer
  (:class:`evaluators.intrinsic_codesign.HascoCoDesign`: heuristic schedule search, ``sw_budget``
  schedules per layer, seeded with the default schedule). Invalid hardware (the
  generator's bank limit) is handled by MOBO's feasibility model.
* **Random search** over the same space at the same budget (the hypervolume baseline).
* **Separate design**: the same MOBO over the same space and budget, but for a generic
  proxy workload (:data:`evaluators.intrinsic_codesign.PROXIES`) with the untuned default schedule
  (hardware designed without knowing the software); its lowest-latency design is then
  given the same per-layer software search on the real workload.
* **Comparison**: from each flow, the lowest-latency feasible design (on the proxy for
  the separate flow, which does not know the real workload). Reported: separate latency /
  co-design latency on the real workload (paper: 1.25-1.44); beside it the energy and EDP
  of the same designs (:func:`noise_and_energy`), and for every median its percentile
  bootstrap interval (:data:`BOOTSTRAP`; :func:`bootstrap_median`,
  :func:`bootstrap_median_of_medians`). ``--retable DIR`` recomputes these from a
  finished run's ``results.json`` without running anything.
* **Pareto fronts**: latency/power/area of MOBO's and random search's evaluations and the
  hypervolume per iteration (log-scaled objectives normalized by the bounds of every run
  of the pair, reference point 1.1 on each axis).
* **Software search convergence**: on the co-design's chosen hardware (seed 0), the three
  largest layers (or stages) searched by the heuristic, Q-learning and random search at an
  equal budget, from no seed point, over the seeds; best total latency vs evaluations.

Run: ``coexplore reproduce hasco [--quick]`` (or ``python -m
experiments.reproduce.hasco``); results in ``runs/reproduce/hasco/``: ``results.json``,
``table.md``, PNGs. Each hardware search is a :class:`~experiments.study.Study` (in
memory), and each finished search (its trials' rows) and each finished pair of the closing
phase (separate-flow tuning, software comparison, oracle) is a record of the study
engine's record store (:mod:`experiments.records`, kinds :data:`KINDS`) under ``records/``
there, reused, so a stopped run resumes (delete the directory to start over). With
``--workers N`` the searches and then the pairs run in the study engine's worker
processes (:class:`~experiments.executors.ProcessExecutor`). The study derives its
optimizer's seed from the run's seed (:func:`experiments.study.derived_seed`); the committed
run, made with a hand-written ask/tell loop seeded with the run's seed itself, drew other
points.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.base import Evaluation
from experiments.proof_scopes import ProofScopes
from experiments.records import RecordStore, trials_ref
from experiments.reproduce import jsonable
from mappers.schedule import EXACT_REFERENCE_MAX_NODES

PAPER_RATIO = (1.25, 1.44)
OBJECTIVES = {"latency_ms": "min", "power_mw": "min", "area_mm2": "min"}
PAIRS: tuple[tuple[str, str], ...] = (
    ("resnet50", "GEMM"), ("resnet50", "CONV"), ("mobilenet_v2", "GEMM"), ("mobilenet_v2", "CONV"),
    ("xception", "GEMM"), ("xception", "CONV"),
    ("gemm", "GEMM"), ("gemm", "GEMV"), ("gemv", "GEMV"), ("conv2d", "CONV"), ("conv2d", "GEMM"),
    ("conv2d", "GEMV"), ("depthwise", "DOT"), ("depthwise", "GEMV"), ("mttkrp", "GEMV"),
    ("ttm", "GEMM"), ("ttm", "GEMV"),
)
"""(workload, intrinsic) pairs of the full run: every intrinsic a kernel has a partition
onto (HASCO's testbenches also try DOT/CONV on GEMM-like kernels through layout tricks
that change the computation; the IR here does not, see the docs)."""
QUICK_PAIRS = (("conv2d", "CONV"), ("gemm", "GEMM"), ("mttkrp", "GEMV"))
MOBO_OPTIONS = {"pool_size": 300, "mc_samples": 32, "n_local": 2, "local_steps": 3}
"""MOBO acquisition settings: smaller than the library defaults (2,000 / 128 / 5 / 5) to
keep a proposal at a few seconds on two cores."""
NSGA2_OPTIONS = {"sampler_options": {"population_size": 5}}
"""NSGA-II's settings (Optuna's ``NSGAIISampler`` through :mod:`optimizer.optuna_adapter`),
fixed before any NSGA-II search was run (issue 49, item 5): a population of 5, so that 25
evaluations are 5 generations, the first of them random, as large as MOBO's Sobol initial
design; Optuna's other defaults (uniform crossover with probability 0.9, swapping
probability 0.5, mutation probability 1 / the number of parameters)."""

logger = logging.getLogger(__name__)


# ------------------------------------------------------------------------------ runs


KINDS = {"search": "hasco.search", "finish": "hasco.finish"}
"""The kinds of this reproduction's records: one hardware search (value: its evaluations,
:func:`run_search`) and one finished pair of the closing phase (:func:`_finish_task`)."""


def _key(*parts: Any) -> str:
    return "-".join(str(p) for p in parts)


def _as_store(store: RecordStore | str | os.PathLike[str] | None) -> RecordStore | None:
    return store if store is None or isinstance(store, RecordStore) else RecordStore(store)


SW_METHOD = "heuristic"
"""The in-loop software search of the committed run (``--sw-method``): every hardware
point's layers are searched by FlexTensor's heuristic, with the schedule searches' seed
fixed at 0 (``--sw-seed``)."""


def _sw_seed(sw_seed: int | str, seed: int) -> int:
    """The in-loop schedule searches' seed of the run with seed ``seed``: ``sw_seed``, or the
    run's own seed where ``sw_seed`` is ``"run"``."""
    if sw_seed == "run":
        return int(seed)
    if isinstance(sw_seed, bool) or not isinstance(sw_seed, int | np.integer) or sw_seed < 0:
        raise ValueError(f"sw_seed must be a non-negative integer or 'run', got {sw_seed!r}")
    return int(sw_seed)


def in_loop(sw_method: str, sw_seed: int) -> dict[str, Any]:
    """The settings that name a non-default in-loop software search (``{}`` for the
    heuristic at seed 0, so that the records of the committed flow keep their keys)."""
    return {} if (sw_method, sw_seed) == (SW_METHOD, 0) else {"sw_method": sw_method, "sw_seed": sw_seed}


def search_settings(kind: str, workload: str, optimizer: str, seed: int, budget: int, n_init: int,
                    sw_budget: int, schedule: str, area_cap: str, sw_method: str = SW_METHOD,
                    sw_seed: int = 0) -> dict[str, Any]:
    """The settings of one hardware search's record (everything its evaluations depend on;
    for ``nsga2`` also its :data:`NSGA2_OPTIONS`, for which ``n_init`` means nothing; the
    in-loop software search and its seed where they are not the default, :func:`in_loop`,
    and only for ``schedule="search"``: the default schedule searches nothing)."""
    out = {"intrinsic": kind, "workload": workload, "optimizer": optimizer, "seed": seed, "budget": budget,
           "n_init": n_init, "sw_budget": sw_budget, "schedule": schedule, "area_cap": area_cap}
    if optimizer == "nsga2":
        out["optimizer_options"] = json.loads(json.dumps(NSGA2_OPTIONS))
    if schedule == "search":
        out.update(in_loop(sw_method, sw_seed))
    return out


def run_search(kind: str, workload: str, optimizer: str, seed: int, budget: int, n_init: int,
               sw_budget: int, schedule: str = "search", store: RecordStore | str | os.PathLike[str] | None = None,
               area_cap: str = "reference", evaluator: tuple[str, dict[str, Any]] | None = None,
               note: str | None = None, sw_method: str = SW_METHOD, sw_seed: int = 0) -> list[dict[str, Any]]:
    """One hardware search (``optimizer``: ``mobo``, ``mobo-reject``, ``random`` or
    ``nsga2``, :data:`NSGA2_OPTIONS`) under
    the area budget ``area_cap`` (``"reference"``: :func:`evaluators.intrinsic_codesign.reference_area_mm2`;
    ``"none"``), run as a :class:`~experiments.study.Study` of the ``hasco`` evaluator
    (:class:`evaluators.intrinsic_codesign.HascoCoDesign`) in memory, one evaluation at a
    time; returns every evaluation in order (``point``, ``status``, ``metrics``,
    ``reason``, ``seconds``: ``evaluate`` = the trial's wall time, ``ask`` = the driver's
    time from the previous trial's end to this one's creation, the proposal), recorded in
    ``store`` (a :class:`~experiments.records.RecordStore` or its folder) with the study's
    name and trial numbers. ``evaluator``: ``(spec, options)`` in place of the ``hasco``
    evaluator, for one that gives the same values by other means (the enumeration's
    records, :class:`experiments.reproduce.hasco_enumerate.EnumeratedHasco`); it is not
    part of the record's settings, ``note`` (kept with the record) should say it.
    ``sw_method``, ``sw_seed``: the in-loop software search of every hardware point and its
    seed (:class:`~evaluators.intrinsic_codesign.HascoCoDesign`'s ``sw_method`` and
    ``sw_seed``; a search name other than the built-in ones, e.g. ``qnetwork``, gets its
    optimizer's factory from the study layer); for ``schedule="default"`` they change
    nothing and are left out of the record and the evaluator."""
    from evaluators.intrinsic_codesign import hardware_space, reference_area_mm2
    from experiments.study import Study

    if area_cap not in ("reference", "none"):
        raise ValueError(f"area_cap must be 'reference' or 'none', got {area_cap!r}")
    store = _as_store(store)
    settings = search_settings(kind, workload, optimizer, seed, budget, n_init, sw_budget, schedule, area_cap,
                               sw_method, sw_seed)
    loop = in_loop(sw_method, sw_seed) if schedule == "search" else {}
    if store is not None:
        kept = store.get(KINDS["search"], settings)
        if kept is not None:
            return kept
    space = hardware_space(kind, reference_area_mm2(kind) if area_cap == "reference" else None)
    if optimizer == "random":
        name, opts = "random", {}
    elif optimizer in ("mobo", "mobo-reject"):
        name = "mobo"
        opts = dict(MOBO_OPTIONS, n_init=n_init, infeasible="reject" if optimizer == "mobo-reject" else "model")
    elif optimizer == "nsga2":
        name, opts = "nsga2", json.loads(json.dumps(NSGA2_OPTIONS))
    else:
        raise ValueError(f"unknown hardware optimizer {optimizer!r} (mobo, mobo-reject, random, nsga2)")
    ev_spec, ev_opts = evaluator or ("hasco", {"intrinsic": kind, "workload": workload, "sw_budget": sw_budget,
                                               "schedule": schedule, **loop})
    study_name = _key("hasco", workload, kind, optimizer, schedule, f"s{seed}", budget, n_init, sw_budget, area_cap,
                      *([f"sw-{loop['sw_method']}-{loop['sw_seed']}"] if loop else []))
    t0, c0 = time.time(), time.process_time()
    study = Study.create(study_name, space, OBJECTIVES, ev_spec, name, optimizer_options=opts,
                         evaluator_options=ev_opts, storage="sqlite:///:memory:", seed=seed)
    study.optimize(budget, workers=1, progress=False)
    cpu_s = time.process_time() - c0
    records: list[dict[str, Any]] = []
    last = t0
    for t in sorted(study.trials, key=lambda r: r.number):
        ok = t.status.value == "COMPLETE"
        records.append({"point": dict(t.params), "status": t.status.value, "metrics": dict(t.metrics) if ok else {},
                        "reason": t.reason, "seconds": {"ask": max(t.created_at - last, 0.0),
                                                        "evaluate": float(t.wall_time_s or 0.0)}})
        last = t.finished_at or t.created_at
    if store is not None:
        store.put(KINDS["search"], settings, records, wall_s=time.time() - t0, cpu_s=cpu_s,
                  trials=trials_ref(study_name, [t.number for t in study.trials]), note=note)
    return records


def objective_matrix(records: Sequence[dict[str, Any]]) -> np.ndarray:
    """``(n, 3)`` objectives of the runs' evaluations (NaN rows where infeasible)."""
    out = np.full((len(records), len(OBJECTIVES)), np.nan)
    for i, r in enumerate(records):
        if r["status"] == "COMPLETE":
            out[i] = [r["metrics"][k] for k in OBJECTIVES]
    return out


def normalizer(mats: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of log10 objectives over every run of a pair."""
    allv = np.vstack([m[np.isfinite(m).all(axis=1)] for m in mats if len(m)])
    lg = np.log10(allv)
    return lg.min(axis=0), lg.max(axis=0)


def hv_history(mat: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Hypervolume after each evaluation: log10 objectives scaled to [0, 1] by
    (``lo``, ``hi``), reference point 1.1 on every axis."""
    from optimizer.pareto import hypervolume_history

    z = (np.log10(mat) - lo) / np.where(hi > lo, hi - lo, 1.0)
    return hypervolume_history(z, np.full(mat.shape[1], 1.1))


def select(records: Sequence[dict[str, Any]], area_cap: float) -> dict[str, Any] | None:
    """The lowest-latency feasible evaluation with ``area_mm2 <= area_cap``."""
    ok = [r for r in records if r["status"] == "COMPLETE" and r["metrics"]["area_mm2"] <= area_cap * (1 + 1e-9)]
    return min(ok, key=lambda r: r["metrics"]["latency_ms"]) if ok else None


# ------------------------------------------------------------------------------ tasks


class TaskRunner:
    """The two kinds of task of a run as an evaluator of the study engine's executors:
    ``{"search": args, "options": kw}`` runs :func:`run_search` (``kw``, optional: its keyword
    arguments), ``{"finish": args}`` :func:`_finish_task`; both record what they compute, so ``info`` holds only the task's wall seconds. A
    worker process runs with one thread per numerical library (the executors' default)."""

    def __call__(self, params: dict[str, Any]) -> Evaluation:
        t = time.perf_counter()
        if "search" in params:
            run_search(*params["search"], **params.get("options", {}))
        else:
            _finish_task(tuple(params["finish"]))
        return Evaluation(metrics={}, info={"seconds": time.perf_counter() - t})


def _run_tasks(tasks: list[dict[str, Any]], workers: int) -> list[float]:
    """Every task of ``tasks`` (see :class:`TaskRunner`), on up to ``workers`` worker
    processes (inline with one); their wall seconds in order."""
    from experiments.executors import InlineExecutor, ProcessExecutor, Task, map_tasks

    seconds = [0.0] * len(tasks)
    n = min(workers, len(tasks))
    with (InlineExecutor(TaskRunner()) if n <= 1 else ProcessExecutor(TaskRunner(), workers=n)) as executor:
        for res in map_tasks(executor, (Task(i, t, 0) for i, t in enumerate(tasks))):
            if res.status.value != "ok":
                raise RuntimeError(f"task {tasks[res.number]}: {res.reason}\n{res.traceback or ''}")
            seconds[res.number] = res.info["seconds"]
            args = tasks[res.number].get("search")
            if args is not None:
                print(f"  {args[1]:>12} {args[0]:4} {args[2]:11} seed {args[3]}: {seconds[res.number]:6.0f} s",
                      flush=True)
    return seconds


def _to_json(o: Any) -> Any:
    """``json.dumps`` default for a finished pair: numpy scalars and arrays as Python values
    (non-finite floats stay NaN / Infinity, which ``json`` round-trips)."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"cannot store {type(o).__name__} in a finished pair's cache")


def _finish_args(args: tuple) -> tuple:
    """``args`` of a finished pair with the in-loop software search's two trailing entries
    (``sw_method``, ``sw_seed``: an integer or ``"run"``) filled in where left off."""
    if len(args) == 11:
        return (*args, SW_METHOD, 0)
    if len(args) != 13:
        raise ValueError(f"a finished pair's args have 11 or 13 entries, got {len(args)}")
    return tuple(args)


def finish_settings(args: tuple) -> dict[str, Any]:
    """The settings of the record of :func:`_finish_task`'s pair of ``args``: the pair and
    every setting the result depends on (seeds, budgets, the oracle's limits, the in-loop
    software search where it is not the default, :func:`in_loop`)."""
    (workload, kind, seeds, budget, n_init, sw_budget, sw_conv_budget, _store, with_random, exact_nodes, exact_s,
     sw_method, sw_seed) = _finish_args(args)
    return {"workload": workload, "intrinsic": kind, "seeds": [int(x) for x in seeds], "budget": budget,
            "n_init": n_init, "sw_budget": sw_budget, "sw_conv_budget": sw_conv_budget,
            "random_hardware_search": bool(with_random), "exact_max_nodes": exact_nodes,
            "exact_time_limit_s": exact_s, **in_loop(sw_method, sw_seed)}


def save_finished(store: RecordStore, settings: dict[str, Any], out: dict[str, Any], **timing: Any) -> None:
    """Record a finished pair (numpy values as Python's, non-finite floats kept as JSON's
    ``NaN`` / ``Infinity``, seed keys as strings)."""
    store.put(KINDS["finish"], settings, json.loads(json.dumps(out, default=_to_json)), **timing)


def load_finished(store: RecordStore, settings: dict[str, Any]) -> dict[str, Any] | None:
    """A finished pair as :func:`_finish_task` returned it (seed keys back to ``int``), or ``None``."""
    out = store.get(KINDS["finish"], settings)
    if out is not None:
        out["seeds"] = {int(k): v for k, v in out["seeds"].items()}
    return out


def _finish_task(args: tuple) -> dict[str, Any]:
    """Separate-flow tuning and software-search convergence of one pair (after the runs),
    recorded in the store of ``args``, so that a run stopped in this phase resumes at the
    first pair not finished."""
    args = _finish_args(args)
    store, settings = _as_store(args[7]), finish_settings(args)
    kept = load_finished(store, settings)
    if kept is not None:
        return kept
    t0, c0 = time.perf_counter(), time.process_time()
    out = _finish_pair((*args[:7], store, *args[8:]))
    save_finished(store, settings, out, wall_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0)
    print(f"  finished {out['workload']:>12} {out['intrinsic']:4}: {time.perf_counter() - t0:6.0f} s", flush=True)
    return load_finished(store, settings)


def in_loop_evaluator(kind: str, workload: str, sw_budget: int, sw_method: str = SW_METHOD,
                      sw_seed: int = 0) -> Any:
    """:class:`~evaluators.intrinsic_codesign.HascoCoDesign` with the software of every
    layer searched by ``sw_method`` (``sw_budget`` schedules per layer, seed ``sw_seed``),
    as the co-design's hardware search scores a point; an ask/tell search (``qnetwork``,
    ``qlearning``) gets its optimizer's factory here, as the study layer gives it."""
    from evaluators.intrinsic_codesign import HascoCoDesign
    from mappers.schedule import SCHEDULE_SEARCHES

    factory = None
    if sw_method not in SCHEDULE_SEARCHES:
        from experiments.inner_search import OptimizerSearch

        factory = OptimizerSearch(sw_method)
    return HascoCoDesign(kind, workload, sw_method=sw_method, sw_budget=sw_budget, sw_seed=sw_seed,
                         sw_factory=factory)


def _designs(evaluator: Any, points: dict[str, dict[str, Any] | None]) -> dict[str, dict[str, Any] | None]:
    """``name -> {"point", "metrics"}`` (or ``{"point", "error"}`` where ``evaluator`` finds the
    point infeasible; ``None`` for no point) of each named point."""
    from evaluators.base import Infeasible

    out: dict[str, dict[str, Any] | None] = {}
    for name, pt in points.items():
        if pt is None:
            out[name] = None
            continue
        try:
            out[name] = {"point": pt, "metrics": dict(evaluator(pt).metrics)}
        except Infeasible as e:
            out[name] = {"point": pt, "error": str(e)}
    return out


def _latency(design: dict[str, Any] | None) -> float | None:
    return (design or {}).get("metrics", {}).get("latency_ms")


def _finish_pair(args: tuple) -> dict[str, Any]:
    (workload, kind, seeds, budget, n_init, sw_budget, sw_conv_budget, store, with_random, exact_nodes, exact_s,
     sw_method, sw_seed) = _finish_args(args)
    from evaluators.intrinsic_codesign import hardware_space, reference_area_mm2, reference_point

    area_cap = reference_area_mm2(kind)
    out: dict[str, Any] = {"workload": workload, "intrinsic": kind, "area_cap_mm2": area_cap, "seeds": {}}
    per_seed = sw_seed == "run"   # the software searches' seed follows the run's: one evaluator per seed
    tuned = {s: in_loop_evaluator(kind, workload, sw_budget, sw_method, _sw_seed(sw_seed, s))
             for s in (seeds if per_seed else seeds[:1])}
    # the committed flow's software (the heuristic, seed 0) on this flow's designs, where the
    # in-loop search is another: the reference beside it
    heuristic = (in_loop_evaluator(kind, workload, sw_budget) if (sw_method, sw_seed) != (SW_METHOD, 0)
                 else None)
    # second definition of "separate": a published fixed design (Gemmini-like, at the area
    # cap), software tuned for it with the same per-layer search (per seed where its seed is)
    ref_pt = reference_point(kind)
    if per_seed:
        out["reference"] = {"point": ref_pt, "per_seed": True}
    else:
        out["reference"] = _designs(tuned[seeds[0]], {"d": ref_pt})["d"]
    for s in seeds:
        ev = tuned[s if per_seed else seeds[0]]
        loop = {"sw_method": sw_method, "sw_seed": _sw_seed(sw_seed, s)}
        co = run_search(kind, workload, "mobo", s, budget, n_init, sw_budget, "search", store, **loop)
        rnd = (run_search(kind, workload, "random", s, budget, n_init, sw_budget, "search", store, **loop)
               if with_random else [])
        proxy = run_search(kind, "proxy", "mobo", s, budget, n_init, sw_budget, "default", store)
        c_sel, p_sel = select(co, area_cap), select(proxy, area_cap)
        rec: dict[str, Any] = {"codesign": c_sel, "proxy_choice": p_sel}
        if per_seed:
            rec["reference"] = _designs(ev, {"d": ref_pt})["d"]
        ref_lat = _latency(rec["reference"] if per_seed else out["reference"])
        if c_sel is not None and p_sel is not None:
            # the proxy's choice may not run this workload: then its error is reported
            rec["separate"] = _designs(ev, {"d": p_sel["point"]})["d"]
            sep_lat = _latency(rec["separate"])
            rec["ratio"] = sep_lat / c_sel["metrics"]["latency_ms"] if sep_lat is not None else None
        if c_sel is not None and ref_lat is not None:
            rec["ratio_reference"] = ref_lat / c_sel["metrics"]["latency_ms"]
        if heuristic is not None:
            h = _designs(heuristic, {"codesign": (c_sel or {}).get("point"),
                                     "separate": (p_sel or {}).get("point") if c_sel is not None else None,
                                     "reference": ref_pt})
            lat = {k: _latency(v) for k, v in h.items()}
            if lat["codesign"] is not None:
                for key, name in (("ratio", "separate"), ("ratio_reference", "reference")):
                    if lat[name] is not None:
                        h[key] = lat[name] / lat["codesign"]
                # the heuristic's software / the in-loop search's on the co-designed hardware
                h["codesign_over_in_loop"] = lat["codesign"] / c_sel["metrics"]["latency_ms"]
            rec["heuristic"] = h
        rec["infeasible"] = {"mobo": sum(r["status"] != "COMPLETE" for r in co),
                             "random": sum(r["status"] != "COMPLETE" for r in rnd)}
        out["seeds"][s] = rec
    # software-search convergence on the co-design choice of the first seed
    first = out["seeds"][seeds[0]]["codesign"]
    if first is not None and sw_conv_budget:
        out["sw_convergence"] = sw_convergence(workload, kind, first["point"], sw_conv_budget, seeds, exact_nodes, exact_s)
    out["space_size"] = int(hardware_space(kind, area_cap).cardinality())
    out["space_size_uncapped"] = int(hardware_space(kind).cardinality())
    return out


SW_METHODS = ("heuristic", "qlearning", "qnetwork", "random")
"""Software searches compared at an equal number of evaluated schedules: FlexTensor's
heuristic, the tabular Q-learning, FlexTensor's Q-network walk and random search."""


def attainment(ref: Any, found: dict[str, float]) -> dict[str, Any]:
    """Whether a schedule of the stage's space scores the exact mapper's proven bound, and
    which one shows it: the exact mapper's own best mapping where it is a schedule
    (``"exact"``), else the best schedule any search found (``found``: search -> cycles).
    Either certifies that the bound is the optimum of the schedules that pad nothing; the
    exact mapper's mapping alone is one of possibly many optimal mappings (which one it
    returns among equals is not specified), so it is not the only witness.
    ``{"attained": bool, "witness": str | None}``."""
    if ref.attained:
        return {"attained": True, "witness": "exact"}
    if ref.proved:
        for m, v in sorted(found.items(), key=lambda kv: kv[1]):
            if abs(v - ref.bound) <= 1e-9 * ref.bound:
                return {"attained": True, "witness": m}
    return {"attained": False, "witness": None}


def sw_stages(workload: str, kind: str) -> list[tuple[Any, int]]:
    """The stages :func:`sw_convergence` searches: the three largest (MACs x repeats) of
    ``workload``'s first decomposition that the ``kind`` intrinsic matches, each with its
    repeat count."""
    from evaluators.intrinsic_codesign import workload as wl
    from mappers.tensor_ir import decompositions, intrinsic, match

    stages = []
    for c in wl(workload, kind):
        for dec in decompositions(c):
            if all(match(s, intrinsic(kind)) for s in dec):
                stages += [(s, c.repeat) for s in dec]
                break
    stages.sort(key=lambda sr: -sr[0].macs * sr[1])
    return stages[:3]


def sw_bound_scopes(pairs: Sequence[tuple[str, str, dict[str, Any], Sequence[str]]]) -> ProofScopes:
    """The space the exact mapper's bound (and "bound is the optimum") of each
    :func:`sw_convergence` covers, computed without mapping: :func:`mappers.schedule.
    exact_reference_scopes` of every operand group of every stage searched, on the design
    it ran on. ``pairs``: ``(workload, intrinsic, point, stages)``, ``stages`` as the
    record names them (``sw_convergence``'s ``stages``), checked against the stages this
    code chooses (a record of other stages is refused: its bound's space is not this)."""
    from evaluators.intrinsic_codesign import build
    from evaluators.loopnest import LOOPNEST, evaluate_batch
    from mappers.schedule import ScheduleProblem, exact_reference_scopes

    scopes = ProofScopes("pair")
    for workload, kind, point, recorded in pairs:
        chosen = sw_stages(workload, kind)
        names = [f"{s.name} x{rep}" for s, rep in chosen]
        if names != list(recorded):
            raise ValueError(f"{workload}:{kind}: the record's software-search stages {list(recorded)} are not the "
                             f"ones this code searches ({names}); its bound's space cannot be computed")
        arch = build(kind, point).to_arch()
        for s, _ in chosen:
            for g, scope in enumerate(exact_reference_scopes(ScheduleProblem(s, arch, evaluate_batch), LOOPNEST)):
                scopes.add(f"{workload}:{kind}", f"{s.name} group {g}", scope)
    return scopes


def bound_scope_sentence(scopes: ProofScopes) -> str:
    """``scopes`` (:func:`sw_bound_scopes`) as one sentence beside the bound's table: one
    bracket per distinct space, with the pairs it covers."""
    return ("The exact bound and \"bound is the optimum\" cover (computed from the exact reference's mapper on "
            "each pair's stages and design; schedules with padded tiles are outside it): "
            + (scopes.bracketed() or "nothing (no bound)"))


def bound_scope_phrase(scopes: ProofScopes) -> str:
    """The part of ``scopes`` every pair shares, in a few words (tilings, accounting,
    bypass, constraints), for a sentence that repeats the bound's claim; an error where
    the pairs differ in one of those (the phrase would misstate some)."""
    distinct = scopes.distinct()
    common = {k: {getattr(s, k) for s in distinct} for k in ("tilings", "accounting", "bypass", "constraints")}
    if not distinct or any(len(v) != 1 for v in common.values()):
        raise ValueError(f"the pairs' bounds differ in more than their spatial rules ({common}); state them per pair")
    (til,), (acc,), (byp,), (cons,) = (common[k] for k in ("tilings", "accounting", "bypass", "constraints"))
    return (f"over {til} tilings, {acc} accounting, {'bypass searched' if byp else 'no bypass choices'}, "
            f"{'no constraints' if cons is None else 'constraints ' + str(cons)}")


def run_bound_scopes(results: dict[str, Any]) -> ProofScopes:
    """:func:`sw_bound_scopes` of a HASCO run's ``results``: each pair's software search
    ran on its first seed's co-designed point (:func:`_finish_pair`)."""
    first = results["settings"]["seeds"][0]

    def point(res: dict[str, Any]) -> dict[str, Any]:
        seeds = res["seeds"]   # by seed, or by its string once read back from JSON
        return (seeds[first] if first in seeds else seeds[str(first)])["codesign"]["point"]

    return sw_bound_scopes([(res["workload"], res["intrinsic"], point(res), res["sw_convergence"]["stages"])
                            for res in results["pairs"] if "sw_convergence" in res])


def sw_convergence(workload: str, kind: str, point: dict[str, Any], budget: int,
                   seeds: Sequence[int], exact_max_nodes: int | None = EXACT_REFERENCE_MAX_NODES,
                   exact_time_limit_s: float | None = None) -> dict[str, Any]:
    """Best total latency (three largest stages, x repeats) after each evaluation, for
    every search of :data:`SW_METHODS`, and the exact mapper's reference of the same
    stages (:func:`mappers.schedule.exact_reference`): ``bound`` (sum over the stages, x
    repeats) is a lower bound of every schedule that pads nothing, the optimum of the
    schedule spaces where ``attained`` for every stage and no stage is ``padded``."""
    from evaluators.intrinsic_codesign import build
    from evaluators.loopnest import LOOPNEST, evaluate_batch
    from experiments.inner_search import optimizer_searches
    from mappers.schedule import ScheduleProblem, exact_reference, search_curves

    arch = build(kind, point).to_arch()
    chosen = sw_stages(workload, kind)
    methods = SW_METHODS
    total = {m: np.zeros((len(seeds), budget)) for m in methods}
    seconds = dict.fromkeys(methods, 0.0)
    oracle: dict[str, Any] = {"bound": 0.0, "stages": []}
    for s, rep in chosen:
        problem = ScheduleProblem(s, arch, evaluate_batch)
        found = {}
        for m in methods:
            t = time.perf_counter()
            curves = search_curves(problem, [m], budget, seeds, optimizer_searches())[m]
            seconds[m] += time.perf_counter() - t
            total[m] += np.where(np.isfinite(curves), curves, np.nan) * rep
            found[m] = float(np.min(curves)) if np.isfinite(curves).any() else math.inf
        ref = exact_reference(problem, LOOPNEST, exact_max_nodes, time_limit_s=exact_time_limit_s)
        oracle["bound"] += ref.bound * rep
        oracle["stages"].append({"stage": s.name, "repeat": rep, "bound_cycles": ref.bound, "proved": ref.proved,
                                 **attainment(ref, found), "padded": ref.padded,
                                 "exact_schedule_cycles": ref.schedule_latency, "seconds": ref.seconds})
    oracle["optimum"] = all(st["attained"] and not st["padded"] for st in oracle["stages"])
    return {"stages": [f"{s.name} x{rep}" for s, rep in chosen], "budget": budget,
            "curves": {m: v.tolist() for m, v in total.items()}, "seconds": seconds, "oracle": oracle}


# ------------------------------------------------------------------------------ report


RATIOS = {"ratio": "MOBO on a proxy, software tuned after (HASCO's flow, our reading)",
          "ratio_reference": "fixed Gemmini-like reference design, software tuned"}
"""The two definitions of "separate" design, by the key of their ratio in a seed record."""


def quartiles(values: Sequence[float]) -> dict[str, float] | None:
    """``{median, q25, q75, min, max, n}`` of ``values`` (``None`` when empty)."""
    v = np.asarray([x for x in values if x is not None], dtype=float)
    if not len(v):
        return None
    q = np.percentile(v, [0, 25, 50, 75, 100])
    return {"median": float(q[2]), "q25": float(q[1]), "q75": float(q[3]), "min": float(q[0]),
            "max": float(q[4]), "n": len(v)}


BOOTSTRAP = {"resamples": 10_000, "level": 0.95, "seed": 0}
"""The percentile bootstrap of the ratios' medians (:func:`bootstrap_median`,
:func:`bootstrap_median_of_medians`): resamples, confidence level, RNG seed."""


def _check_bootstrap(resamples: int, level: float) -> None:
    if not isinstance(resamples, int | np.integer) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")


def _resampled_medians(values: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Medians of ``n`` resamples of ``values`` with replacement (each as long as ``values``)."""
    return np.median(values[rng.integers(len(values), size=(n, len(values)))], axis=1)


def _sample(values: Sequence[float | None], name: str) -> np.ndarray:
    v = np.asarray([x for x in values if x is not None], dtype=float)
    if not len(v):
        raise ValueError(f"{name}: no values to bootstrap")
    if not np.isfinite(v).all():
        raise ValueError(f"{name}: non-finite value in {v.tolist()}")
    return v


def bootstrap_median(values: Sequence[float | None], resamples: int = BOOTSTRAP["resamples"],
                     level: float = BOOTSTRAP["level"], seed: int = BOOTSTRAP["seed"]) -> tuple[float, float]:
    """Percentile bootstrap interval of the median of ``values`` (``None`` entries
    dropped): ``resamples`` resamples with replacement, each as long as the sample, from a
    generator seeded with ``seed``; the interval is the ``(1 - level) / 2`` and
    ``(1 + level) / 2`` quantiles of their medians (numpy's linear interpolation)."""
    _check_bootstrap(resamples, level)
    v = _sample(values, "values")
    boot = _resampled_medians(v, int(resamples), np.random.default_rng(seed))
    lo, hi = np.percentile(boot, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def bootstrap_median_of_medians(groups: Sequence[Sequence[float | None]], resamples: int = BOOTSTRAP["resamples"],
                                level: float = BOOTSTRAP["level"],
                                seed: int = BOOTSTRAP["seed"]) -> tuple[float, float]:
    """Percentile bootstrap interval of the median over ``groups`` of each group's median
    (the "median of pair medians"), resampled at both levels: each resample draws as many
    groups as there are, with replacement, and within each drawn group its values with
    replacement (so both the choice of pairs and the seeds' noise count); quantiles as
    :func:`bootstrap_median`."""
    _check_bootstrap(resamples, level)
    if not len(groups):
        raise ValueError("groups: no groups to bootstrap")
    vs = [_sample(g, f"groups[{i}]") for i, g in enumerate(groups)]
    rng = np.random.default_rng(seed)
    which = rng.integers(len(vs), size=(int(resamples), len(vs)))
    meds = np.empty(which.shape)
    for j, v in enumerate(vs):
        drawn = which == j
        meds[drawn] = _resampled_medians(v, int(drawn.sum()), rng)
    lo, hi = np.percentile(np.median(meds, axis=1), [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


METRICS = {"latency_ms": "latency", "energy_uj": "energy", "edp_uj_ms": "EDP"}
"""The metrics compared between the flows' designs (separate / co-design), by their key
in a design's metrics and their name in the table."""
FLOWS = {"proxy": "ratio", "reference": "ratio_reference"}
"""The two definitions of "separate" (:data:`RATIOS`), by a short name and the key of
their latency ratio in a seed record."""
SELECTION = ("latency only: each flow's lowest-latency feasible design under the area cap (the proxy flow's "
             "lowest on its proxy), as for the latency ratio; energy and EDP are those same designs' on the "
             "real workload with the same software search, not designs re-selected for energy or EDP")
"""The rule that picks the compared designs (the paper's abstract states none)."""


def metric_ratios(res: dict[str, Any]) -> dict[str, dict[str, list[float | None]]]:
    """Per flow of :data:`FLOWS` and metric of :data:`METRICS`, separate / co-design of the
    seed records of the finished pair ``res``, in seed order (``None`` where a flow has no
    design); the latency ratios are the seed records' own (checked against the metrics).
    The reference design's metrics are the pair's, or a seed record's own where its software
    was searched per seed (``--sw-seed run``)."""
    ref = res.get("reference", {}).get("metrics")
    out: dict[str, dict[str, list[float | None]]] = {f: {m: [] for m in METRICS} for f in FLOWS}
    for s in sorted(res["seeds"], key=int):
        rec = res["seeds"][s]
        co = (rec.get("codesign") or {}).get("metrics")
        designs = {"proxy": (rec.get("separate") or {}).get("metrics"),
                   "reference": (rec["reference"].get("metrics") if "reference" in rec else ref)}
        for flow, key in FLOWS.items():
            sep = designs[flow] if rec.get(key) is not None else None
            for m in METRICS:
                out[flow][m].append(sep[m] / co[m] if sep is not None and co is not None else None)
            lat = out[flow]["latency_ms"][-1]
            if lat is not None and not math.isclose(lat, rec[key], rel_tol=1e-9):
                raise ValueError(f"{res['workload']}/{res['intrinsic']} seed {s}: {key} {rec[key]} is not the "
                                 f"designs' latency ratio {lat}")
    return out


def ratio_summary(values: Sequence[float | None]) -> dict[str, Any] | None:
    """:func:`quartiles` of ``values`` with the bootstrap interval of their median
    (``ci``, :data:`BOOTSTRAP`) and whether it holds 1.00x (``ci_holds_1``)."""
    q = quartiles(values)
    if q is None:
        return None
    lo, hi = bootstrap_median(values)
    return {**q, "ci": [lo, hi], "ci_holds_1": lo <= 1.0 <= hi}


def noise_and_energy(finished: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Adds ``metric_ratios`` to every finished pair (per flow and metric, the ratios per
    seed and :func:`ratio_summary`) and returns the summary over pairs: per flow and
    metric the median of the pair medians, its two-level bootstrap interval
    (:func:`bootstrap_median_of_medians`), and how many pairs' intervals hold 1.00x, lie
    above or below it; with :data:`BOOTSTRAP` and :data:`SELECTION`."""
    per_pair = []
    for res in finished:
        ratios = metric_ratios(res)
        res["metric_ratios"] = {f: {m: {"values": v, "summary": ratio_summary(v)} for m, v in ms.items()}
                                for f, ms in ratios.items()}
        per_pair.append(ratios)
    overall: dict[str, Any] = {"bootstrap": dict(BOOTSTRAP, method="percentile; a pair over its seeds, all pairs "
                                                 "over pairs and then seeds within each"),
                               "selection": SELECTION}
    for flow in FLOWS:
        overall[flow] = {}
        for m in METRICS:
            groups = [r[flow][m] for r in per_pair if any(x is not None for x in r[flow][m])]
            sums = [res["metric_ratios"][flow][m]["summary"] for res in finished]
            sums = [x for x in sums if x is not None]
            if not groups:
                overall[flow][m] = None
                continue
            lo, hi = bootstrap_median_of_medians(groups)
            overall[flow][m] = {
                "median_of_pair_medians": float(np.median([x["median"] for x in sums])), "pairs": len(sums),
                "ci": [lo, hi], "ci_holds_1": lo <= 1.0 <= hi,
                "pairs_ci_holds_1": sum(x["ci_holds_1"] for x in sums),
                "pairs_ci_above_1": sum(x["ci"][0] > 1.0 for x in sums),
                "pairs_ci_below_1": sum(x["ci"][1] < 1.0 for x in sums)}
    return overall


ARRAY_KEYS = ("pe", "pe_x", "pe_y")
"""The hardware parameters that size the PE array (:func:`evaluators.intrinsic_codesign.hardware_space`:
``pe`` on GEMM/GEMV, ``pe_x`` x ``pe_y`` on CONV/DOT)."""


def proxy_breakdown(finished: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Where the proxy-MOBO ratio comes from, over every comparison of every pair: the
    ratios where the separate flow ends with the co-designed PE array (:data:`ARRAY_KEYS`)
    and where it does not, how many comparisons are below / exactly 1.00x and how many
    separate designs are the co-designed point; and the evaluations each hardware search
    spent on infeasible designs."""
    same, other = [], []
    below = exact = same_point = n = 0
    infeasible = {"mobo": 0, "random": 0}
    for res in finished:
        for rec in res["seeds"].values():
            for k in infeasible:
                infeasible[k] += rec.get("infeasible", {}).get(k, 0)
            ratio = rec.get("ratio")
            if ratio is None:
                continue
            n += 1
            co, sep = rec["codesign"]["point"], rec["separate"]["point"]
            arr = [k for k in ARRAY_KEYS if k in co]
            (same if all(co[k] == sep.get(k) for k in arr) else other).append(ratio)
            below += ratio < 1 - 1e-9
            exact += abs(ratio - 1) <= 1e-9
            same_point += co == sep
    return {"comparisons": n, "same_array": quartiles(same), "other_array": quartiles(other),
            "below_1": below, "exactly_1": exact, "same_point": same_point, "infeasible_evaluations": infeasible}


SEED_GROUPS = ((0, 2), (3, 5), (6, 15))
"""The seed groups the ratios are also reported on (first and last seed of each): those of
the software-search benchmark (``results/hasco-sw-search/``), whose seeds 0-2 the
Q-network's settings were chosen on, 3-5 the check on other seeds, 6-15 the further
seeds; a run's seeds 0-9 split into 0-2, 3-5 and 6-9. Fixed before any run with the
Q-network in the loop (issue 49, item 1)."""


def seed_groups(finished: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per group of :data:`SEED_GROUPS` that holds seeds of the run: per ratio of
    :data:`RATIOS` (and, where the seed records have them, the same designs' ratios with the
    heuristic's software, ``heuristic_<key>``, and the heuristic's co-design latency over the
    in-loop search's, ``heuristic_codesign_over_in_loop``) the median over pairs of each
    pair's median over the group's seeds, the pairs counted, and the two-level bootstrap
    interval of that median (:func:`bootstrap_median_of_medians`)."""
    out = []
    for lo, hi in SEED_GROUPS:
        recs = [[r for s, r in res["seeds"].items() if lo <= int(s) <= hi] for res in finished]
        present = sorted({int(s) for res in finished for s in res["seeds"] if lo <= int(s) <= hi})
        if not present:
            continue
        keys = {key: (lambda r, k=key: r.get(k)) for key in RATIOS}
        if any("heuristic" in r for rs in recs for r in rs):
            keys.update({f"heuristic_{key}": (lambda r, k=key: r.get("heuristic", {}).get(k)) for key in RATIOS})
            keys["heuristic_codesign_over_in_loop"] = lambda r: r.get("heuristic", {}).get("codesign_over_in_loop")
        label = f"{present[0]}-{present[-1]}" if len(present) > 1 else f"{present[0]}"
        group: dict[str, Any] = {"seeds": present, "label": label}
        for key, get in keys.items():
            vals = [[get(r) for r in rs if get(r) is not None] for rs in recs]
            vals = [v for v in vals if v]
            if not vals:
                group[key] = None
                continue
            ci = bootstrap_median_of_medians(vals)
            group[key] = {"median_of_pair_medians": float(np.median([np.median(v) for v in vals])),
                          "pairs": len(vals), "ci": list(ci), "ci_holds_1": ci[0] <= 1.0 <= ci[1]}
        out.append(group)
    return out


def summarize(finished: list[dict[str, Any]], store: Path, budget: int, n_init: int,
              sw_budget: int, seeds: Sequence[int], with_random: bool = True, sw_method: str = SW_METHOD,
              sw_seed: int | str = 0) -> dict[str, Any]:
    """Hypervolumes (MOBO vs random), ratio statistics per pair and over all pairs (and per
    seed group, :func:`seed_groups`), the heuristic's software on the same designs where the
    in-loop search is another, and the software searches against each other and against the
    exact mapper's reference."""
    for res in finished:
        wl, kind = res["workload"], res["intrinsic"]
        for key in RATIOS:
            res[key + "_stats"] = quartiles([r.get(key) for r in res["seeds"].values()])
        if any("heuristic" in r for r in res["seeds"].values()):
            res["heuristic_stats"] = {k: quartiles([r.get("heuristic", {}).get(k) for r in res["seeds"].values()])
                                      for k in (*RATIOS, "codesign_over_in_loop")}
        # kept for older readers: median and range of the first definition
        st = res["ratio_stats"]
        res["ratio_median"] = st["median"] if st else None
        res["ratio_range"] = [st["min"], st["max"]] if st else None
        if "sw_convergence" in res:
            sc = res["sw_convergence"]
            res["sw_final_median_cycles"] = sw_finals(sc)
            bound = sc["oracle"]["bound"]
            res["sw_final_over_bound"] = {m: v / bound for m, v in res["sw_final_median_cycles"].items()}
        if not with_random:
            continue
        runs = {opt: [run_search(kind, wl, opt, s, budget, n_init, sw_budget, "search", store, sw_method=sw_method,
                                 sw_seed=_sw_seed(sw_seed, s)) for s in seeds]
                for opt in ("mobo", "random")}
        mats = {opt: [objective_matrix(r) for r in rs] for opt, rs in runs.items()}
        finite = [m for ms in mats.values() for m in ms if np.isfinite(m).all(axis=1).any()]
        if not finite:
            continue
        lo, hi = normalizer(finite)
        res["hv"] = {opt: [hv_history(m, lo, hi).tolist() for m in ms] for opt, ms in mats.items()}
        res["hv_final_median"] = {opt: float(np.median([h[-1] for h in hs])) for opt, hs in res["hv"].items()}
        res["front_seed0"] = {opt: [r for r in runs[opt][0] if r["status"] == "COMPLETE"] for opt in runs}
    overall: dict[str, Any] = {}
    for key in RATIOS:
        per_pair = [res[key + "_stats"]["median"] for res in finished if res.get(key + "_stats")]
        every = [r.get(key) for res in finished for r in res["seeds"].values()]
        overall[key] = {"median_of_pair_medians": float(np.median(per_pair)) if per_pair else None,
                        "pairs": len(per_pair), "all_comparisons": quartiles(every),
                        "pairs_with_median_at_least_1.25": sum(m >= PAPER_RATIO[0] for m in per_pair)}
    if any("heuristic_stats" in res for res in finished):
        overall["heuristic"] = {}
        for key in (*RATIOS, "codesign_over_in_loop"):
            per_pair = [res["heuristic_stats"][key]["median"] for res in finished
                        if (res.get("heuristic_stats") or {}).get(key)]
            overall["heuristic"][key] = {"median_of_pair_medians": float(np.median(per_pair)) if per_pair else None,
                                         "pairs": len(per_pair)}
    overall["seed_groups"] = seed_groups(finished)
    overall["proxy_breakdown"] = proxy_breakdown(finished)
    overall["metric_ratios"] = noise_and_energy(finished)
    sw = [res for res in finished if "sw_final_median_cycles" in res]
    if sw:
        f = [res["sw_final_median_cycles"] for res in sw]
        overall["sw"] = {
            "pairs": len(sw),
            "qnetwork_beats_random": sum(x["qnetwork"] < x["random"] for x in f),
            "qnetwork_ties_random": sum(x["qnetwork"] == x["random"] for x in f),
            "qlearning_beats_random": sum(x["qlearning"] < x["random"] for x in f),
            "heuristic_beats_random": sum(x["heuristic"] < x["random"] for x in f),
            "median_over_bound": {m: float(np.median([res["sw_final_over_bound"][m] for res in sw]))
                                  for m in SW_METHODS},
            "pairs_where_bound_is_the_optimum": sum(res["sw_convergence"]["oracle"]["optimum"] for res in sw),
        }
    return {"pairs": finished, "overall": overall}


def plot_pair(res: dict[str, Any], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from optimizer.pareto import pareto_mask

    files = []
    wl, kind = res["workload"], res["intrinsic"]
    if "hv" in res:
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
        for opt, color in (("mobo", "C0"), ("random", "C1")):
            recs = res["front_seed0"][opt]
            if recs:
                y = np.array([[r["metrics"][k] for k in OBJECTIVES] for r in recs])
                front = pareto_mask(y, ["min"] * 3)
                for ax, (i, j) in zip(axes[:2], ((0, 2), (0, 1))):
                    ax.scatter(y[:, i], y[:, j], s=12, alpha=0.35, color=color)
                    ax.scatter(y[front, i], y[front, j], s=30, color=color, edgecolor="k",
                               label=f"{opt} (front of seed 0)")
            hv = np.array(res["hv"][opt])
            x = np.arange(1, hv.shape[1] + 1)
            axes[2].plot(x, np.median(hv, axis=0), color=color, label=f"{opt} (median)")
            axes[2].fill_between(x, hv.min(axis=0), hv.max(axis=0), color=color, alpha=0.15)
        names = list(OBJECTIVES)
        for ax, (i, j) in zip(axes[:2], ((0, 2), (0, 1))):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(names[i])
            ax.set_ylabel(names[j])
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize=7)
        axes[2].set_xlabel("hardware evaluations")
        axes[2].set_ylabel("hypervolume (normalized log objectives)")
        axes[2].legend(fontsize=7)
        axes[2].grid(alpha=0.3)
        fig.suptitle(f"{wl} on a {kind} accelerator: MOBO vs random search", fontsize=9)
        fig.tight_layout()
        f = out / f"pareto_{wl}_{kind}.png"
        fig.savefig(f, dpi=110)
        plt.close(fig)
        files.append(f.name)
    if "sw_convergence" in res:
        sc = res["sw_convergence"]
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        best = sc["oracle"]["bound"]
        for m, v in sc["curves"].items():
            arr = np.array(v, dtype=float) / best
            x = np.arange(1, arr.shape[1] + 1)
            ax.plot(x, np.nanmedian(arr, axis=0), label=m)
            ax.fill_between(x, np.nanmin(arr, axis=0), np.nanmax(arr, axis=0), alpha=0.15)
        ax.set_yscale("log")
        ax.set_xlabel("schedules evaluated (per stage)")
        ax.set_ylabel("best latency / exact mapper's bound")
        ax.set_title(f"{wl} on {kind}: {', '.join(sc['stages'])}", fontsize=7)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        f = out / f"sw_convergence_{wl}_{kind}.png"
        fig.savefig(f, dpi=110)
        plt.close(fig)
        files.append(f.name)
    return files


def sw_finals(sc: dict[str, Any]) -> dict[str, float]:
    return {m: float(np.nanmedian(np.array(v, dtype=float)[:, -1])) for m, v in sc["curves"].items()}


def oracle_label(oracle: dict[str, Any]) -> str:
    """Whether the exact mapper's bound is the optimum of the schedule spaces: ``yes``;
    ``no: padded`` where some stage's space holds schedules with padded tiles, which the
    bound does not cover (a search may beat it); ``no: lower bound`` otherwise."""
    if oracle["optimum"]:
        return "yes"
    if any(st["padded"] for st in oracle["stages"]):
        return "no: bounds unpadded schedules only"
    return "no: lower bound"




def _fmt(st: dict[str, float] | None) -> str:
    if not st:
        return "n/a"
    return f"{st['median']:.2f}x [{st['q25']:.2f}, {st['q75']:.2f}]"


def _ci(st: dict[str, Any] | None) -> str:
    """A bootstrap interval ``[lo, hi]``, with "holds 1.00x" where it does."""
    if not st:
        return "n/a"
    lo, hi = st["ci"]
    return f"[{lo:.2f}, {hi:.2f}]" + (" holds 1.00x" if st["ci_holds_1"] else "")


def _median_ci(st: dict[str, Any] | None, key: str = "median") -> str:
    return "n/a" if not st else f"{st[key]:.2f}x {_ci(st)}"


def _group_cell(st: dict[str, Any] | None) -> str:
    if not st:
        return "n/a"
    lo, hi = st["ci"]
    return (f"{st['median_of_pair_medians']:.2f}x [{lo:.2f}, {hi:.2f}]" + (" holds 1.00x" if st["ci_holds_1"] else "")
            + f" ({st['pairs']} pair{'' if st['pairs'] == 1 else 's'})")


def _seed_group_lines(groups: list[dict[str, Any]] | None, level: float) -> list[str]:
    """The latency ratios per seed group (:func:`seed_groups`) as a table (none without groups)."""
    if not groups:
        return []
    heur = any(g.get("heuristic_ratio") for g in groups)
    cols = [("ratio", "separate = MOBO on a proxy"), ("ratio_reference", "separate = Gemmini-like reference")]
    if heur:
        cols += [("heuristic_ratio", "MOBO on a proxy, heuristic's software"),
                 ("heuristic_ratio_reference", "Gemmini-like reference, heuristic's software"),
                 ("heuristic_codesign_over_in_loop", "co-design latency, heuristic's software / in-loop")]
    lines = ["", f"## Separate / co-design latency per seed group: median of pair medians over the group's seeds "
             f"[its {level:.0%} bootstrap interval]", "",
             "| seeds | " + " | ".join(name for _, name in cols) + " |", "|---|" + "---|" * len(cols)]
    for g in groups:
        lines.append(f"| {g['label']} | " + " | ".join(_group_cell(g.get(k)) for k, _ in cols) + " |")
    lines += ["", "Seed groups: those of the software-search benchmark (its seeds 0-2, on which the Q-network's "
              "settings were chosen; 3-5; 6-15), fixed before the run; a seed is the hardware searches' and, with "
              "`--sw-seed run`, the in-loop software searches'."]
    return lines


def _heuristic_lines(results: dict[str, Any]) -> list[str]:
    """The heuristic's software on the designs of a flow whose in-loop search is another (none
    where no pair has it)."""
    if not any("heuristic_stats" in res for res in results["pairs"]):
        return []
    lines = ["", "## The heuristic beside it: the same designs with the heuristic's software (seed 0, the same "
             "schedules per layer), median [25th, 75th percentile] over seeds", "",
             "| workload | intrinsic | separate = MOBO on a proxy | separate = Gemmini-like reference | "
             "co-design latency, heuristic's software / in-loop |", "|---|---|---|---|---|"]
    for res in results["pairs"]:
        h = res.get("heuristic_stats") or {}
        lines.append(f"| {res['workload']} | {res['intrinsic']} | {_fmt(h.get('ratio'))} | "
                     f"{_fmt(h.get('ratio_reference'))} | {_fmt(h.get('codesign_over_in_loop'))} |")
    o = results["overall"].get("heuristic", {})

    def med(key: str) -> str:
        m = (o.get(key) or {}).get("median_of_pair_medians")
        return "n/a" if m is None else f"{m:.2f}x"

    lines.append(f"| **all pairs** (median of pair medians) | | {med('ratio')} | {med('ratio_reference')} | "
                 f"{med('codesign_over_in_loop')} |")
    return lines


def write_table(results: dict[str, Any], path: Path, cmd: str | None = None) -> None:
    """``table.md``: HASCO's comparison as the paper states it first (separate / co-design
    latency, both definitions of separate, median [IQR] over seeds and the bootstrap
    interval of the median), the energy and EDP of the same designs, then the software
    searches against random search and the exact mapper's reference. ``cmd``: the command
    named in the table (default: ``results["settings"]["command"]``)."""
    lo, hi = PAPER_RATIO
    st = results["settings"]
    ov = results["overall"]
    if cmd is None:
        cmd = st["command"]
    mr = ov["metric_ratios"]
    boot = mr["bootstrap"]
    loop = ""
    if "sw_method" in st:
        seed = "the run's seed" if st["sw_seed"] == "run" else f"seed {st['sw_seed']}"
        loop = f" (searched by the {st['sw_method']} search, {seed})"
    lines = [f"Settings: {len(results['pairs'])} workload x intrinsic pairs, {len(st['seeds'])} seeds, {st['budget']} hardware evaluations per search "
             f"({st['n_init']} Sobol + {st['budget'] - st['n_init']} MOBO), {st['sw_budget']} schedules per layer "
             f"in the loop{loop}, {st['sw_conv_budget']} per stage in the software comparison"
             f"{'' if st.get('random_hardware_search', True) else ', no random hardware search'}. Command: `{cmd}`.",
             "",
             f"Compared designs, selection rule: {mr['selection']}. Intervals: {boot['level']:.0%} percentile "
             f"bootstrap of the median, {boot['resamples']:,} resamples, RNG seed {boot['seed']}; a pair's over "
             "its seeds; over all pairs, the pairs resampled and then the seeds within each. \"holds 1.00x\": "
             "the interval contains 1.00x, so the seeds do not tell the two flows apart.",
             "",
             "## Separate / co-design latency (paper: "
             f"{lo:.2f}x-{hi:.2f}x), median [25th, 75th percentile] over seeds, and the median's "
             f"{boot['level']:.0%} bootstrap interval", "",
             "| workload | intrinsic | separate = MOBO on a proxy, then SW tuned | its interval | separate = "
             "Gemmini-like reference, then SW tuned | its interval |", "|---|---|---|---|---|---|"]
    for res in results["pairs"]:
        m = res.get("metric_ratios", {})
        lines.append(f"| {res['workload']} | {res['intrinsic']} | {_fmt(res.get('ratio_stats'))} | "
                     f"{_ci(m.get('proxy', {}).get('latency_ms', {}).get('summary'))} | "
                     f"{_fmt(res.get('ratio_reference_stats'))} | "
                     f"{_ci(m.get('reference', {}).get('latency_ms', {}).get('summary'))} |")
    row = ["**all pairs** (median of pair medians; all comparisons median [IQR])"]
    for key, flow in zip(RATIOS, FLOWS):
        o = ov[key]
        m = o["median_of_pair_medians"]
        row.append(f"{m:.2f}x; {_fmt(o['all_comparisons'])}" if m is not None else "n/a")
        row.append(_ci(mr[flow]["latency_ms"]))
    lines.append(f"| {row[0]} | | " + " | ".join(row[1:]) + " |")
    counts = "; ".join(f"{name} {mr[flow]['latency_ms']['pairs_ci_holds_1']} of {mr[flow]['latency_ms']['pairs']}"
                       for flow, name in (("proxy", "proxy MOBO"), ("reference", "reference design"))
                       if mr[flow]["latency_ms"])
    lines += ["", f"Pairs whose latency interval holds 1.00x: {counts}."]
    lines += _seed_group_lines(ov.get("seed_groups"), boot["level"])
    lines += _heuristic_lines(results)
    b = ov.get("proxy_breakdown")
    if b and b["comparisons"]:
        def part(q: dict[str, float] | None) -> str:
            return f"{q['n']} comparisons, median {q['median']:.3f}x" if q else "none"

        lines += ["", f"Proxy MOBO, where the ratio comes from ({b['comparisons']} comparisons): the separate "
                  f"flow ends with the co-designed PE array in {part(b['same_array'])}; with another array in "
                  f"{part(b['other_array'])}. Below 1.00x: {b['below_1']}; exactly 1.00x: {b['exactly_1']} "
                  f"({b['same_point']} with the co-designed point itself). Evaluations of infeasible designs "
                  f"(the unknown bank limit), all searches: MOBO {b['infeasible_evaluations']['mobo']}, "
                  f"random {b['infeasible_evaluations']['random']}."]
    names = {"proxy": "MOBO on a proxy", "reference": "Gemmini-like reference"}
    cols = [(f, m) for f in FLOWS for m in METRICS if m != "latency_ms"]
    lines += ["", f"## Separate / co-design energy and EDP of the same designs, median over seeds and its "
              f"{boot['level']:.0%} bootstrap interval", "",
              "| workload | intrinsic | " + " | ".join(f"{METRICS[m]}, separate = {names[f]}" for f, m in cols) + " |",
              "|---|---|" + "---|" * len(cols)]
    for res in results["pairs"]:
        m = res.get("metric_ratios", {})
        lines.append(f"| {res['workload']} | {res['intrinsic']} | "
                     + " | ".join(_median_ci(m.get(f, {}).get(k, {}).get("summary")) for f, k in cols) + " |")
    lines.append("| **all pairs** (median of pair medians) | | "
                 + " | ".join(_median_ci(mr[f][k], "median_of_pair_medians") for f, k in cols) + " |")
    spans = []
    for f, k in cols:
        o = mr[f][k]
        if o:
            spans.append(f"{METRICS[k]} vs {names[f]}: {o['pairs_ci_holds_1']} hold 1.00x, {o['pairs_ci_above_1']} "
                        f"lie above, {o['pairs_ci_below_1']} below")
    per_seed = any(res.get("reference", {}).get("per_seed") for res in results["pairs"])
    lines += ["", f"Pairs' intervals (of {len(results['pairs'])}): " + "; ".join(spans) + ". The reference design is "
              "one design per pair, so its ratios vary over the seeds only through the co-design"
              + (" and its software, searched with each seed's seed." if per_seed else ".")]
    sw_scopes = run_bound_scopes(results)
    lines += ["", f"## Software search: best cycles after {st['sw_conv_budget']} schedules per stage "
              "(three largest stages), median over seeds, and as a ratio to the exact mapper's bound", "",
              f"{bound_scope_sentence(sw_scopes)}.", "",
              "| workload | intrinsic | " + " | ".join(SW_METHODS) + " | exact bound (cycles) | bound is the optimum |",
              "|---|---|" + "---|" * len(SW_METHODS) + "---|---|"]
    for res in results["pairs"]:
        if "sw_final_median_cycles" not in res:
            continue
        f, r = res["sw_final_median_cycles"], res["sw_final_over_bound"]
        orc = res["sw_convergence"]["oracle"]
        cells = [f"{f[m]:.4g} ({r[m]:.2f}x)" for m in SW_METHODS]
        lines.append(f"| {res['workload']} | {res['intrinsic']} | " + " | ".join(cells)
                     + f" | {orc['bound']:.4g} | {oracle_label(orc)} |")
    if "sw" in ov:
        s = ov["sw"]
        lines += ["", f"Q-network beats random search on {s['qnetwork_beats_random']} of {s['pairs']} pairs "
                  f"(ties {s['qnetwork_ties_random']}); tabular Q-learning on {s['qlearning_beats_random']}, "
                  f"the heuristic on {s['heuristic_beats_random']}. Median ratio to the bound: "
                  + ", ".join(f"{m} {v:.2f}x" for m, v in s["median_over_bound"].items()) + "."]
    if any("hv_final_median" in res for res in results["pairs"]):
        lines += ["", "## Hardware search: hypervolume after the budget, MOBO / random (median)", "",
                  "| workload | intrinsic | MOBO | random |", "|---|---|---|---|"]
        for res in results["pairs"]:
            if "hv_final_median" in res:
                h = res["hv_final_median"]
                lines.append(f"| {res['workload']} | {res['intrinsic']} | {h['mobo']:.3f} | {h['random']:.3f} |")
    path.write_text("\n".join(lines) + "\n")


def sw_method_settings(method: str) -> dict[str, Any]:
    """What the in-loop software search ``method`` runs with, for a run's settings: for an
    ask/tell search (``qnetwork``, ``qlearning``) its optimizer's constructor defaults (read
    from the class, so they are the code's) and what the schedule space sets on top (overriding a default)
    (:func:`mappers.schedule.ask_tell_schedule`); none of them is a setting of this run."""
    import inspect

    from mappers.schedule import SCHEDULE_SEARCHES

    out: dict[str, Any] = {"method": method, "warmup": "max(8, budget // 8) random schedules, the default "
                                                        "schedule first (counted in the budget)"}
    if method in SCHEDULE_SEARCHES:
        return out
    from optimizer.registry import OPTIMIZERS

    sig = inspect.signature(OPTIMIZERS.get(method).__init__)
    out["optimizer_defaults"] = {k: p.default for k, p in sig.parameters.items()
                                 if p.kind is p.KEYWORD_ONLY and isinstance(p.default, int | float | bool | str)}
    out["schedule_space_sets"] = {
        "qnetwork": "features = ScheduleProblem.features, state_key = ScheduleProblem.state_keys, FlexTensor's "
                    "split moves (ScheduleProblem.transfers) as extra actions, rewarm_every = ceil(rounds / 5), "
                    "keep_starts = True",
        "qlearning": "restart_best = 0.8"}.get(method, "nothing")
    return out


def _dump(results: dict[str, Any]) -> str:
    return json.dumps(jsonable(results), indent=1, default=float)


def retable(directory: Path, command: str | None = None) -> dict[str, Any]:
    """Recompute, from the designs recorded in ``directory/results.json``, what
    :func:`noise_and_energy` derives (energy and EDP ratios, bootstrap intervals; nothing is
    searched or evaluated again), store it there with the run's ``command`` (required
    where ``settings`` lacks it) and rewrite ``table.md`` from it."""
    path = Path(directory) / "results.json"
    if not path.is_file():
        raise SystemExit(f"--retable: {path} not found")
    results = json.loads(path.read_text())
    st = results["settings"]
    if command is not None:
        st["command"] = command
    elif "command" not in st:
        raise SystemExit(f"--retable: {path} does not say which command made it; give --command")
    results["overall"]["metric_ratios"] = noise_and_energy(results["pairs"])
    path.write_text(_dump(results))
    write_table(results, path.with_name("table.md"))
    print(f"rewrote {path} and {path.with_name('table.md')}")
    return results


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="coexplore reproduce hasco", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"{len(QUICK_PAIRS)} kernel pairs, 2 seeds, 8 hardware evaluations, small software budgets")
    ap.add_argument("--pairs", nargs="+", default=None, metavar="WORKLOAD:INTRINSIC",
                    help="subset, e.g. resnet50:GEMM conv2d:CONV")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--budget", type=int, default=None, help="hardware evaluations per run (HASCO: 5 + 20)")
    ap.add_argument("--n-init", type=int, default=None, help="Sobol initial points (HASCO's testbenches: 5)")
    ap.add_argument("--sw-budget", type=int, default=None, help="schedules per layer in the co-design loop")
    ap.add_argument("--sw-conv-budget", type=int, default=None, help="schedules per stage, convergence study")
    ap.add_argument("--sw-method", choices=SW_METHODS, default=SW_METHOD,
                    help="the software search of every hardware point in the loop (and of the separate flow's "
                         "and the reference design's software; default: the heuristic)")
    ap.add_argument("--sw-seed", default="0", metavar="N|run",
                    help="seed of the in-loop software searches: a fixed N (default 0) or 'run', the run's seed")
    ap.add_argument("--no-random", action="store_true",
                    help="skip the random hardware searches (and so the hypervolume comparison)")
    ap.add_argument("--exact-max-nodes", type=int, default=EXACT_REFERENCE_MAX_NODES,
                    help="search nodes per operand group for the exact mapper's reference of a stage (0: no limit)")
    ap.add_argument("--exact-time-limit", type=float, default=None,
                    help="also a time limit in seconds per operand group (default none: results independent of load)")
    ap.add_argument("--workers", type=int, default=1, help="processes running searches in parallel")
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/hasco"))
    ap.add_argument("--retable", type=Path, default=None, metavar="DIR",
                    help="run nothing: recompute the statistics derived from DIR/results.json's designs (energy "
                         "and EDP ratios, bootstrap intervals) and rewrite it and DIR/table.md")
    ap.add_argument("--command", default=None,
                    help="with --retable: the command that made DIR/results.json, where it does not say")
    args = ap.parse_args(argv)
    if args.retable is not None:
        return retable(args.retable, args.command)
    args.exact_max_nodes = args.exact_max_nodes or None      # 0: no limit
    logging.basicConfig(level=logging.WARNING)
    q = args.quick
    pairs = [tuple(p.split(":")) for p in args.pairs] if args.pairs else list(QUICK_PAIRS if q else PAIRS)
    for p in pairs:
        if len(p) != 2:
            raise SystemExit(f"--pairs: expected WORKLOAD:INTRINSIC, got {':'.join(p)!r}")
    for name in ("seeds", "budget", "n_init", "sw_budget"):
        v = getattr(args, name)
        if v is not None and v < 1:
            raise SystemExit(f"--{name.replace('_', '-')}: must be a positive integer, got {v}")
    with_random = not args.no_random
    sw_seed: int | str = args.sw_seed
    if sw_seed != "run":
        try:
            sw_seed = _sw_seed(int(sw_seed), 0)
        except ValueError:
            raise SystemExit(f"--sw-seed: a non-negative integer or 'run', got {args.sw_seed!r}") from None
    seeds = list(range(args.seeds or (2 if q else 3)))
    budget = args.budget or (8 if q else 25)
    n_init = args.n_init or (4 if q else 5)
    sw_budget = args.sw_budget or (20 if q else 60)
    sw_conv = args.sw_conv_budget if args.sw_conv_budget is not None else (30 if q else 150)
    store = RecordStore(args.out / "records")
    t0 = time.perf_counter()
    kinds = sorted({k for _, k in pairs})
    tasks = [(k, "proxy", "mobo", s, budget, n_init, sw_budget, "default", store) for k in kinds for s in seeds]
    options = [{}] * len(tasks)
    for wl, k in pairs:
        for s in seeds:
            loop = {"sw_method": args.sw_method, "sw_seed": _sw_seed(sw_seed, s)}
            tasks.append((k, wl, "mobo", s, budget, n_init, sw_budget, "search", store))
            options.append(loop)
            if with_random:
                tasks.append((k, wl, "random", s, budget, n_init, sw_budget, "search", store))
                options.append(loop)
    finish = [(wl, k, seeds, budget, n_init, sw_budget, sw_conv, store, with_random, args.exact_max_nodes,
               args.exact_time_limit, args.sw_method, sw_seed)
              for wl, k in pairs]
    walls = {_key(a[1], a[0], a[2], a[3]): sec
             for a, sec in zip(tasks, _run_tasks([{"search": a, "options": o} for a, o in zip(tasks, options)],
                                                 args.workers))}
    _run_tasks([{"finish": f} for f in finish], args.workers)
    finished = [load_finished(store, finish_settings(f)) for f in finish]
    results = summarize(finished, store, budget, n_init, sw_budget, seeds, with_random, args.sw_method, sw_seed)
    results["settings"] = {"quick": q, "pairs": [list(p) for p in pairs], "seeds": seeds, "budget": budget,
                           "n_init": n_init, "sw_budget": sw_budget, "sw_conv_budget": sw_conv,
                           "sw_method": args.sw_method, "sw_seed": sw_seed,
                           "sw_method_settings": sw_method_settings(args.sw_method),
                           "seed_groups": [list(g) for g in SEED_GROUPS],
                           "random_hardware_search": with_random, "exact_max_nodes": args.exact_max_nodes,
                           "exact_time_limit_s": args.exact_time_limit,
                           "mobo_options": MOBO_OPTIONS, "objectives": OBJECTIVES,
                           "wall_seconds": time.perf_counter() - t0, "run_seconds": walls}
    plots = []
    for res in results["pairs"]:
        plots += plot_pair(res, args.out)
        h = res.get("hv_final_median", {})
        sc = res.get("sw_final_over_bound", {})
        print(f"{res['workload']:>12} {res['intrinsic']:4}: separate/co-design latency, proxy MOBO "
              f"{_fmt(res.get('ratio_stats'))}, reference design {_fmt(res.get('ratio_reference_stats'))}; "
              f"HV MOBO {h.get('mobo', math.nan):.3f} random {h.get('random', math.nan):.3f}; SW best / bound "
              + " ".join(f"{m} {v:.2f}" for m, v in sc.items()))
    cmd = "coexplore reproduce hasco " + " ".join(argv if argv is not None else sys.argv[1:])
    results["settings"]["command"] = cmd
    results["plots"] = plots
    (args.out / "results.json").write_text(_dump(results))
    write_table(results, args.out / "table.md", cmd)
    print(f"results: {args.out / 'results.json'}, table: {args.out / 'table.md'} "
          f"({time.perf_counter() - t0:.0f} s)")
    return results


if __name__ == "__main__":
    main()
