"""Reproduce MeLoPPR (Li, Chen, Zirnheld, Li, Hao, DAC 2021): memory-efficient low-latency
personalized PageRank by stage/linear decomposition, on CPU and a modelled FPGA engine.

What runs (every number measured or modelled in this run; paper values are constants
from the paper, arXiv 2104.09616 -- Tables I and II, and Figs. 5, 6 and 7, whose values
are read off the figures):

1. **Exactness** -- MeLoPPR with every next-stage node and an unbounded table equals the
   direct 6-step diffusion (Eq. 8) on citeseer, cora and pubmed: max abs difference.
2. **Precision vs next-stage nodes** 1..14 (Fig. 7; ``l1 = l2 = 3``, ``k = 200``,
   ``c = 10``, ``alpha = 0.95``) with three precision definitions -- ``|T^ ∩ T| / k``
   (the paper's formula), ``PPR.py``'s thresholded variant, ``|T^ ∩ T| / min(k, |T|)``.
3. **Fig. 6** -- precision vs the *fraction* of next-stage nodes under three readings of
   "fraction of what" (:data:`FIG6_RULES`) and the three definitions, side by side.
4. **CPU, both baselines** -- per-query latency and tracemalloc peak of the single-stage
   baseline (BFS depth 6 + 6-step diffusion) and of MeLoPPR, each in two
   implementations measured in the same run on the same sources: NetworkX + CSR
   products, the way the paper describes its CPU code
   (:mod:`evaluators.ppr.networkx_cpu`), and vectorized scipy CSR
   (:func:`evaluators.ppr.local_ppr` / :func:`evaluators.ppr.meloppr`). Every ratio is
   given against both, so the baseline's share of the paper's figure shows.
5. **FPGA (modelled)** -- :mod:`accelerators.ppr_fpga` at the paper's design (P = 16,
   8192-word 32-bit tables, 100 MHz) with the host's sub-graph extraction costed as
   native code (:class:`evaluators.ppr.native.NativeExtractor`, measured on this
   machine; the numpy host of the first version for comparison): on-chip memory
   reduction (Table II FPGA column), end-to-end and FPGA-only speedups over both CPU
   baselines (Fig. 7 FPGA), the Table I resources, and Fig. 5's single diffusion of
   citeseer at P = 1 and 16.
6. **Synthetic large graphs** -- power-law stand-ins with the node and edge counts of
   com-amazon / com-dblp / com-youtube (full size by default), clearly labelled: the
   SNAP graphs are not available offline. Precision over a ladder of next-stage counts,
   then speed and memory at 1 and 13 nodes and at the ~80 % / ~90 % operating points.
   As the paper's ``c * k`` table caps their precision below both targets,
   :func:`synthetic_operating_points` also finds the operating points with the table's
   capacity as a stated parameter (:data:`TABLE_LADDER`: c = 10, 40, 160, unbounded)
   and measures speed, memory and the engine's BRAM there
   (``--operating-points-only [--merge-into DIR]`` runs only these, and adds them to a
   finished run's results and table).
7. **Co-design** -- a multi-objective BO study over FPGA x plan
   (``experiments/configs/meloppr.yaml``'s space, precision / latency / BRAM) on cora,
   its Pareto front against the paper's chosen point.

Writes ``results.json``, ``table.md`` (quantity | graph | paper | ours | command | note)
and plots to ``runs/reproduce/meloppr/``; each finished graph, each stand-in's operating
points and the host models are records of the study engine's record store
(:mod:`experiments.records`, kinds :data:`KINDS`) under ``records/`` there, keyed by their
settings (the signature of what they were measured with), so a killed run resumes. Run:
``coexplore reproduce meloppr [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import math
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from accelerators.ppr_fpga import (
    PAPER_TABLE_I,
    HostModel,
    PPRFpgaEngine,
    Subgraph,
    subgraph_fpga_bytes,
)
from evaluators.ppr import (
    SYNTHETIC_LIKE,
    Graph,
    load_graph,
    local_ppr,
    meloppr,
    precision_at_k,
    precision_at_k_pprpy,
)
from evaluators.ppr.engine_evaluator import (
    HOST_EXTRACTORS,
    MeLoPPRCoDesign,
    baseline_subgraph,
    calibrate_host,
    meloppr_subgraphs,
)
from evaluators.ppr.networkx_cpu import local_ppr_networkx, meloppr_networkx, to_networkx
from experiments.records import RecordStore
from experiments.reproduce import jsonable
from mappers.ppr_plan import PAPER_POINT

logger = logging.getLogger(__name__)

PLANETOID = ("citeseer", "cora", "pubmed")
#: Fig. 7 (values read from the figure): precision and CPU speedup at 1 and 13
#: next-stage nodes; FPGA speedup at 1 / 5 / 9 / 13 (None: not readable).
PAPER_FIG7: dict[str, dict[str, dict[int, float | None]]] = {
    "citeseer": {"prec": {1: 0.71, 13: 0.90}, "cpu": {1: 1.11, 13: 0.19},
                 "fpga": {1: 48.9, 5: 8.1, 9: 4.5, 13: 3.1}},
    "cora": {"prec": {1: 0.65, 13: 0.89}, "cpu": {1: 2.59, 13: 0.35},
             "fpga": {1: None, 5: 13.4, 9: 7.4, 13: 5.1}},
    "pubmed": {"prec": {1: 0.76, 13: 0.86}, "cpu": {1: 7.25, 13: 0.63},
               "fpga": {1: 78.6, 5: 26.7, 9: 14.9, 13: 9.9}},
    "amazon": {"prec": {1: 0.63, 13: 0.88}, "cpu": {1: 8.3, 13: 1.23},
               "fpga": {1: 281.8, 5: 54.9, 9: 31.6, 13: 21.8}},
    "dblp": {"prec": {1: 0.79, 13: 0.91}, "cpu": {1: 24.68, 13: 2.58},
             "fpga": {1: 707.9, 5: 257.0, 9: 120.2, 13: 70.7}},
    "youtube": {"prec": {1: 0.65, 13: 0.72}, "cpu": {1: 8.19, 13: 0.25},
                "fpga": {1: 416.8, 5: 38.0, 9: 8.9, 13: 3.8}},
}
#: Table II: average memory reduction vs single-stage local PPR (CPU, FPGA).
PAPER_TABLE_II = {"citeseer": (1.51, 73.64), "cora": (4.18, 214.58), "pubmed": (6.43, 389.83),
                  "amazon": (9.46, 595.55), "dblp": (13.43, 2169.64), "youtube": (4.21, 8699.55)}
#: Fig. 6 (average of G1-G3, 1000 seeds): precision by % of next-stage nodes; the 5 %
#: point is given only as a range (86.7-96 %).
PAPER_FIG6 = {0.01: 0.738, 0.02: 0.781, 0.03: 0.852, 0.05: None, 0.20: 0.961, 0.30: 0.969}
#: An independent re-implementation's sanity check, made while this reproduction was
#: planned (unpublished; alpha 0.95, k 200, 100 seeds; pubmed 40) [inferred].
INDEPENDENT_CHECK = {"cora": {1: 0.59, 3: 0.78, 5: 0.85, 13: 0.90},
                     "citeseer": {1: 0.69, 3: 0.82, 5: 0.87, 13: 0.95},
                     "pubmed": {1: 0.77, 3: 0.86, 5: 0.87, 13: 0.87}}
K, C, ALPHA = 200, 10, 0.95
TARGETS = (0.8, 0.9)
#: Global-table capacities, as ``c`` in ``c * k``, tried for the synthetic operating points
#: (:func:`synthetic_operating_points`): the paper's 10, then steps of 4 while the table
#: still fits the KC705 beside the paper's 16 PEs (160: 32,000 entries; 640 does not fit),
#: then unbounded (``None``), which no KC705 design holds at these graphs' sizes.
TABLE_LADDER: tuple[int | None, ...] = (10, 40, 160, None)
#: Next-stage counts tried on the synthetic graphs (their precision rises slowly).
SYNTHETIC_LADDER = (1, 2, 4, 8, 13, 32, 64, 128)
#: The NetworkX code runs on the synthetic graphs only up to this many next-stage nodes:
#: each of their 3-hop balls holds 10^4-10^5 nodes, ~1 s per ball in NetworkX here.
SYNTHETIC_NX_MAX_NS = 32
#: On real graphs with more nodes than this, the NetworkX code runs on the first
#: :data:`LARGE_GRAPH_NX_SOURCES` sources only, and Fig. 6 on the first
#: :data:`LARGE_GRAPH_FIG6_SOURCES` (else 50): on pubmed the NetworkX MeLoPPR under
#: tracemalloc takes minutes for sources near hubs (3-hop balls of thousands of nodes),
#: and 1-30 % of its |V| is hundreds of next-stage nodes.
LARGE_GRAPH_NODES = 10_000
LARGE_GRAPH_NX_SOURCES = 5
LARGE_GRAPH_FIG6_SOURCES = 10
#: The kinds of this reproduction's records: one graph's measurements (:func:`run_graph`),
#: a stand-in's operating points (:func:`synthetic_operating_points`; ``part:
#: "unbounded"`` in the settings for :func:`unbounded_operating_points`) and the host models.
KINDS = {"graph": "meloppr.graph", "operating_points": "meloppr.operating_points", "hosts": "meloppr.host_models"}
#: Bumped when what a graph's cached result holds changes.
CACHE_VERSION = 2
#: Likewise for the cached synthetic operating points.
OPS_CACHE_VERSION = 1
FIG6_RULE_NOTES = {
    "residual": "fraction of the non-zero-residual stage-1 nodes (the candidates Sec. IV-D ranks)",
    "ball": "fraction of the stage-1 ball G_3(s)",
    "graph": "fraction of the graph's |V| (capped at the non-zero-residual nodes)",
}


# ------------------------------------------------------------------------- measurements


def exactness(g: Graph, sources: Sequence[int]) -> float:
    """Max |MeLoPPR(all next-stage nodes, unbounded table) - 6-step diffusion| over sources."""
    worst = 0.0
    for s in sources:
        truth = local_ppr(g, int(s), L=6).dense(g.n)
        est = meloppr(g, int(s), l1=3, l2=3, next_stage=None, c=None).dense(g.n)
        worst = max(worst, float(np.abs(truth - est).max()))
    return worst


def _prec_min(top: np.ndarray, truth_top: np.ndarray, k: int) -> float:
    return len(set(top.tolist()) & set(truth_top.tolist())) / max(1, min(k, truth_top.size))


def _new_row() -> dict[str, list]:
    return {"lat_ms": [], "mem_kib": [], "prec_k": [], "prec_pprpy": [], "prec_min": [], "subs": [],
            "fpga_bytes": [], "used": [], "entries": [], "nx_lat_ms": [], "nx_mem_kib": []}


def measure_graph(g: Graph, sources: Sequence[int], ns_values: Sequence[int], k: int = K, c: int = C,
                  memory: bool = True, nx_graph: Any = None, nx_sources: int | None = None,
                  nx_ns: Sequence[int] | None = None, mem_ns: Sequence[int] | None = None) -> dict[str, Any]:
    """Per source: both single-stage baselines' latency and memory and, per next-stage
    count, MeLoPPR's latency, memory, the three precisions and its sub-graphs (for the
    FPGA model), in the vectorized scipy implementation and -- with ``nx_graph``
    (:func:`evaluators.ppr.networkx_cpu.to_networkx` of ``g``) -- in the NetworkX one
    written the way the paper describes its CPU code.

    Latency is each query's CPU time (``PPRStats.cpu_s``, ``time.process_time``): on a
    shared machine wall time also counts the time the process waits for a core, which
    would inflate the measured CPU side against the modelled FPGA.
    Each query runs twice, once timed and once under tracemalloc (``memory=True``; only
    for the counts in ``mem_ns``, default all); the baseline and MeLoPPR of a source run
    back to back, so load on the machine affects both alike. The NetworkX runs cover the
    first ``nx_sources`` sources (default all) and the counts in ``nx_ns`` (default all).
    """
    mem_set = set(ns_values if mem_ns is None else mem_ns)
    nx_set = set(ns_values if nx_ns is None else nx_ns)
    n_nx = len(sources) if nx_sources is None else min(nx_sources, len(sources))
    s0 = int(sources[0])
    local_ppr(g, s0)  # warm-up
    meloppr(g, s0, next_stage=1)
    if nx_graph is not None:
        local_ppr_networkx(nx_graph, s0, L=3)
    base: dict[str, list] = {"lat_ms": [], "mem_kib": [], "sub": [], "nx_lat_ms": [], "nx_mem_kib": []}
    rows: dict[int, dict[str, list]] = {ns: _new_row() for ns in ns_values}
    for i, s in enumerate(int(x) for x in sources):
        with_nx = nx_graph is not None and i < n_nx
        b = local_ppr(g, s)
        base["lat_ms"].append(b.stats.cpu_s * 1e3)
        if memory:
            base["mem_kib"].append(local_ppr(g, s, trace_memory=True).stats.tracemalloc_peak_bytes / 1024)
        if with_nx:
            base["nx_lat_ms"].append(local_ppr_networkx(nx_graph, s).stats.cpu_s * 1e3)
            if memory:
                base["nx_mem_kib"].append(
                    local_ppr_networkx(nx_graph, s, trace_memory=True).stats.tracemalloc_peak_bytes / 1024)
        base["sub"].append(baseline_subgraph(g, s, 6))
        truth_top = b.top(k)
        for ns in ns_values:
            est = meloppr(g, s, l1=3, l2=3, k=k, next_stage=ns, c=c, record_subgraphs=True)
            r = rows[ns]
            r["lat_ms"].append(est.stats.cpu_s * 1e3)
            if memory and ns in mem_set:
                m = meloppr(g, s, l1=3, l2=3, k=k, next_stage=ns, c=c, trace_memory=True)
                r["mem_kib"].append(m.stats.tracemalloc_peak_bytes / 1024)
            if with_nx and ns in nx_set:
                r["nx_lat_ms"].append(meloppr_networkx(nx_graph, s, k=k, next_stage=ns, c=c).stats.cpu_s * 1e3)
                if memory:
                    r["nx_mem_kib"].append(meloppr_networkx(
                        nx_graph, s, k=k, next_stage=ns, c=c, trace_memory=True).stats.tracemalloc_peak_bytes / 1024)
            top = est.top(k)
            r["prec_k"].append(precision_at_k(top, truth_top, k))
            r["prec_pprpy"].append(precision_at_k_pprpy(est, b, k))
            r["prec_min"].append(_prec_min(top, truth_top, k))
            subs = meloppr_subgraphs(est, 3, 3)
            r["subs"].append(subs)
            r["fpga_bytes"].append(max(float(subgraph_fpga_bytes(x.n_nodes, x.nnz, 32)) for x in subs))
            r["used"].append(est.stats.extra["next_stage_used"])
            r["entries"].append(est.stats.extra["table_entries"])
    return {"base": base, "rows": rows, "nx_sources": n_nx if nx_graph is not None else 0}


#: Next-stage rules for Fig. 6's "% of next-stage nodes": which set the fraction is of.
#: ``residual`` -- the stage-1 nodes with a non-zero residual (the candidates Sec. IV-D
#: ranks; :func:`evaluators.ppr.meloppr`'s float ``next_stage``); ``ball`` -- every node
#: of the stage-1 ball ``G_l1(s)``; ``graph`` -- the graph's ``|V|``. Each takes
#: ``ceil(f * size)`` nodes, largest residual first, at most all non-zero-residual ones.
FIG6_RULES = ("residual", "ball", "graph")
FIG6_METRICS = ("prec_k", "prec_pprpy", "prec_min")


def fraction_curves(g: Graph, sources: Sequence[int], fractions: Sequence[float], k: int = K,
                    c: int = C, rules: Sequence[str] = FIG6_RULES) -> dict[str, dict[float, dict[str, float]]]:
    """Mean precision (three definitions) for next-stage *fractions* (Fig. 6's x-axis),
    under each rule of :data:`FIG6_RULES`. Nothing here is fitted: every rule and metric
    is reported."""
    bad = [r for r in rules if r not in FIG6_RULES]
    if bad:
        raise ValueError(f"fraction_curves: unknown rules {bad}; choose from {list(FIG6_RULES)}")
    truths = {int(s): local_ppr(g, int(s)) for s in sources}
    sizes = {}
    for s in truths:
        st = meloppr(g, s, next_stage=0, c=c, k=k).stats
        sizes[s] = {"residual": st.extra["nonzero_residual"], "ball": st.stage_sizes[0][0], "graph": g.n}
    out: dict[str, dict[float, dict[str, float]]] = {}
    for rule in rules:
        out[rule] = {}
        for f in fractions:
            acc: dict[str, list[float]] = {m: [] for m in FIG6_METRICS}
            used = []
            for s, t in truths.items():
                nz = sizes[s]["residual"]
                count = min(nz, math.ceil(float(f) * sizes[s][rule] - 1e-9))
                est = meloppr(g, s, next_stage=int(count), c=c, k=k)
                top, ttop = est.top(k), t.top(k)
                acc["prec_k"].append(precision_at_k(top, ttop, k))
                acc["prec_pprpy"].append(precision_at_k_pprpy(est, t, k))
                acc["prec_min"].append(_prec_min(top, ttop, k))
                used.append(count)
            out[rule][float(f)] = {m: float(np.mean(v)) for m, v in acc.items()} | {"used": float(np.mean(used))}
    return out


def table_bound_check(g: Graph, sources: Sequence[int], ns_values: Sequence[int] = (13, 128),
                      k: int = K, c: int = C) -> dict[int, dict[str, float]]:
    """Mean precision (PPR.py variant) with the ``c * k`` global table and with an
    unbounded one, at each next-stage count: how much of the precision the table's
    first-come admission costs."""
    out = {}
    for ns in ns_values:
        bounded, unbounded, refused = [], [], []
        for s in (int(x) for x in sources):
            truth = local_ppr(g, s)
            r = meloppr(g, s, next_stage=ns, c=c, k=k)
            bounded.append(precision_at_k_pprpy(r, truth, k))
            refused.append(r.stats.extra["refused"])
            unbounded.append(precision_at_k_pprpy(meloppr(g, s, next_stage=ns, c=None, k=k), truth, k))
        out[int(ns)] = {"prec_table": float(np.mean(bounded)), "prec_unbounded": float(np.mean(unbounded)),
                        "refused_mean": float(np.mean(refused))}
    return out


def _ratio(num: Sequence[float], den: Sequence[float]) -> float | None:
    return float(np.mean(num) / np.mean(den)) if len(num) and len(den) else None


def summarize_cpu(meas: dict[str, Any], ns_values: Sequence[int]) -> dict[str, Any]:
    """Means and ratios of means: ``speedup`` / ``mem_reduction`` are scipy baseline over
    scipy MeLoPPR, ``speedup_nx`` / ``mem_reduction_nx`` NetworkX over NetworkX (the
    paper's comparison), ``baseline_nx_over_scipy`` how much slower the NetworkX baseline
    is (all on the sources each was run on)."""
    base = meas["base"]
    n_nx = meas.get("nx_sources", 0)
    b_lat = float(np.mean(base["lat_ms"]))
    b_mem = float(np.mean(base["mem_kib"])) if base["mem_kib"] else math.nan
    out: dict[str, Any] = {
        "baseline_lat_ms": b_lat, "baseline_mem_kib": b_mem, "nx_sources": n_nx,
        "baseline_nx_lat_ms": float(np.mean(base["nx_lat_ms"])) if base["nx_lat_ms"] else None,
        "baseline_nx_mem_kib": float(np.mean(base["nx_mem_kib"])) if base["nx_mem_kib"] else None,
        "baseline_nx_over_scipy_lat": _ratio(base["nx_lat_ms"], base["lat_ms"][:n_nx]),
        "baseline_nx_over_scipy_mem": _ratio(base["nx_mem_kib"], base["mem_kib"][:n_nx]),
        "per_ns": {},
    }
    for ns in ns_values:
        r = meas["rows"][ns]
        lat = float(np.mean(r["lat_ms"]))
        d: dict[str, Any] = {
            "lat_ms": lat, "speedup": b_lat / lat, "prec_k": float(np.mean(r["prec_k"])),
            "prec_pprpy": float(np.mean(r["prec_pprpy"])), "prec_min": float(np.mean(r["prec_min"])),
            "used": float(np.mean(r["used"]))}
        if r["mem_kib"]:
            per = np.asarray(base["mem_kib"]) / np.asarray(r["mem_kib"])
            d.update(mem_kib=float(np.mean(r["mem_kib"])), mem_reduction=b_mem / float(np.mean(r["mem_kib"])),
                     mem_reduction_per_seed_mean=float(per.mean()), mem_reduction_min=float(per.min()),
                     mem_reduction_max=float(per.max()))
        if r["nx_lat_ms"]:
            d.update(nx_lat_ms=float(np.mean(r["nx_lat_ms"])), speedup_nx=_ratio(base["nx_lat_ms"], r["nx_lat_ms"]))
        if r["nx_mem_kib"]:
            per = np.asarray(base["nx_mem_kib"]) / np.asarray(r["nx_mem_kib"])
            d.update(nx_mem_kib=float(np.mean(r["nx_mem_kib"])),
                     mem_reduction_nx=_ratio(base["nx_mem_kib"], r["nx_mem_kib"]),
                     mem_reduction_nx_min=float(per.min()), mem_reduction_nx_max=float(per.max()))
        out["per_ns"][ns] = d
    return out


def at_targets(cpu: dict[str, Any], key: str = "prec_pprpy", targets: Sequence[float] = TARGETS,
               fpga: dict[str, Any] | None = None) -> dict:
    """For each target precision, the smallest next-stage count reaching it and the
    speedups there (``None`` if never reached; then the best precision is reported)."""
    out = {}
    per = cpu["per_ns"]
    for t in targets:
        hit = next((ns for ns in sorted(per) if per[ns][key] >= t), None)
        if hit is None:
            best = max(per, key=lambda ns: per[ns][key])
            out[t] = {"ns": None, "speedup": None, "best_prec": per[best][key], "best_ns": best}
            continue
        d = {"ns": hit, "speedup": per[hit]["speedup"], "prec": per[hit][key]}
        for extra in ("speedup_nx", "mem_reduction", "mem_reduction_nx"):
            if per[hit].get(extra) is not None:
                d[extra] = per[hit][extra]
        if fpga is not None and hit in fpga["per_ns"]:
            f = fpga["per_ns"][hit]
            for extra in ("speedup_vs_scipy", "speedup_vs_nx", "fpga_only_vs_scipy", "fpga_only_vs_nx",
                          "mem_reduction", "mem_reduction_nx"):
                if f.get(extra) is not None:
                    d[f"fpga_{extra}"] = f[extra]
        out[t] = d
    return out


def sent_back(table_capacity: int | None, entries: int) -> int:
    """Entries a query sends back at its end: the table's ``table_capacity``, or for an
    unbounded table (``None``) the ``entries`` the query filled."""
    return int(entries) if table_capacity is None else int(table_capacity)


def fpga_latencies(engines: dict[str, PPRFpgaEngine], meas: dict[str, Any], ns_values: Sequence[int],
                   table_capacity: int | None = C * K) -> dict[Any, Any]:
    """Per query, the engines' :class:`~accelerators.ppr_fpga.LatencyBreakdown`:
    ``"base"`` the single-stage baselines' balls on the native engine, and per next-stage
    count one list per host kind (what :func:`fpga_figures` summarizes)."""
    native = engines["native"]
    out: dict[Any, Any] = {"base": [native.query_latency([sg], "split", result_entries=0)
                                    for sg in meas["base"]["sub"]]}
    for ns in ns_values:
        r = meas["rows"][ns]
        back = [sent_back(table_capacity, n) for n in r["entries"]]
        out[ns] = {kind: [e.query_latency(subs, "split", result_entries=n) for subs, n in zip(r["subs"], back)]
                   for kind, e in engines.items()}
    return out


def fpga_figures(engines: dict[str, PPRFpgaEngine], meas: dict[str, Any],
                 ns_values: Sequence[int], table_capacity: int | None = C * K,
                 latencies: dict[Any, Any] | None = None) -> dict[str, Any]:
    """Modelled FPGA latency and on-chip memory per next-stage count, against both
    measured CPU baselines. ``engines`` maps a host kind (``native``, ``numpy``) to the
    engine costed with that host; ``native`` gives the headline end-to-end figures.
    At the end of a query the global table's ``table_capacity`` entries go back to the
    host; ``None`` (an unbounded table) sends back the entries each query filled.
    ``latencies`` (:func:`fpga_latencies`' output, computed elsewhere, e.g. one query at a
    time) replaces costing ``meas``' sub-graphs here; ``meas`` then needs none."""
    base = meas["base"]
    n_nx = meas.get("nx_sources", 0)
    b_lat = float(np.mean(base["lat_ms"]))
    b_nx = base["nx_lat_ms"]
    b_mem = np.asarray(base["mem_kib"]) * 1024 if base["mem_kib"] else None
    b_nx_mem = np.asarray(base["nx_mem_kib"]) * 1024 if base["nx_mem_kib"] else None
    if latencies is None:
        latencies = fpga_latencies(engines, meas, ns_values, table_capacity)
    base_fpga = latencies["base"]
    out: dict[str, Any] = {
        "baseline_on_fpga_ms": float(np.mean([x.latency_ms for x in base_fpga])),
        "baseline_fits_fraction": float(np.mean([x.fits for x in base_fpga])),
        "per_ns": {},
    }
    for ns in ns_values:
        r = meas["rows"][ns]
        lat = latencies[ns]
        ms = np.array([x.latency_ms for x in lat["native"]])
        busy = np.array([x.fpga_busy_ms for x in lat["native"]])
        d: dict[str, Any] = {
            "latency_ms": float(ms.mean()), "fpga_busy_ms": float(busy.mean()),
            "cpu_ms": float(np.mean([x.cpu_ms for x in lat["native"]])),
            "speedup_vs_scipy": b_lat / float(ms.mean()), "fpga_only_vs_scipy": b_lat / float(busy.mean()),
            "fits_fraction": float(np.mean([x.fits for x in lat["native"]])),
            "fpga_kib": float(np.mean(r["fpga_bytes"]) / 1024)}
        for kind, xs in lat.items():
            if kind != "native":
                m_all = np.array([x.latency_ms for x in xs])
                d[f"latency_ms_{kind}_host"] = float(m_all.mean())
                d[f"cpu_ms_{kind}_host"] = float(np.mean([x.cpu_ms for x in xs]))
                d[f"speedup_vs_scipy_{kind}_host"] = b_lat / float(m_all.mean())
                if b_nx:
                    d[f"speedup_vs_nx_{kind}_host"] = float(np.mean(b_nx) / m_all[:n_nx].mean())
        if b_nx:
            d["speedup_vs_nx"] = float(np.mean(b_nx) / ms[:n_nx].mean())
            d["fpga_only_vs_nx"] = float(np.mean(b_nx) / busy[:n_nx].mean())
        fb = np.asarray(r["fpga_bytes"])
        if b_mem is not None:
            d["mem_reduction"] = float(b_mem.mean() / fb.mean())
            d["mem_reduction_per_seed_mean"] = float((b_mem / fb).mean())
        if b_nx_mem is not None:
            d["mem_reduction_nx"] = float(b_nx_mem.mean() / fb[:n_nx].mean())
        out["per_ns"][ns] = d
    return out


def _capacity_label(c: int | None) -> int | str:
    return "unbounded" if c is None else int(c)


def table_resources(entries: int, n_pes: int = 16) -> dict[str, Any]:
    """BRAM of the paper's engine (P = ``n_pes``, 8192-word 32-bit PE tables) with a global
    table of ``entries`` id/score pairs, from :meth:`PPRFpgaEngine.resources_of`: the
    table's own BRAM36, the design's total and share of the KC705, and whether it fits."""
    e = PPRFpgaEngine(n_pes=n_pes, score_table_entries=max(1, int(entries)))
    total = e.resources()["bram36"]
    pes_only = float(PPRFpgaEngine.resources_of({"n_pes": n_pes, "bram_words_per_table": 8192,
                                                 "score_table_entries": 0})["bram36"])
    return {"entries": int(entries), "table_bram36": total - pes_only, "bram36": total,
            "bram_pct": e.utilization()["bram_pct"], "fits_kc705": bool(e.fits_device())}


def _grid_row(g: Graph, truths: dict[int, Any], c: int | None, ns: int, k: int) -> dict[str, float]:
    """Mean precisions (PPR.py variant and ``#(T^∩T)/k``), table entries and refused
    insertions of MeLoPPR with ``ns`` next-stage nodes and capacity ``c`` over the sources."""
    acc: dict[str, list[float]] = {"prec_pprpy": [], "prec_k": [], "entries": [], "refused": []}
    for s, truth in truths.items():
        est = meloppr(g, s, l1=3, l2=3, k=k, next_stage=ns, c=c)
        acc["prec_pprpy"].append(precision_at_k_pprpy(est, truth, k))
        acc["prec_k"].append(precision_at_k(est.top(k), truth.top(k), k))
        acc["entries"].append(est.stats.extra["table_entries"])
        acc["refused"].append(est.stats.extra["refused"])
    return {m: float(np.mean(v)) for m, v in acc.items()} | {"entries_max": int(max(acc["entries"]))}


def _measure_points(g: Graph, srcs: list[int], engines: dict[str, PPRFpgaEngine], points: Any, *, k: int, key: str,
                    nx_graph: Any, nx_sources: int | None, nx_max_ns: int, memory: bool) -> None:
    """Fill each point (``{"c": capacity label, "ns": count}``; ``ns`` None: skipped) with
    what :func:`measure_graph`, :func:`fpga_figures` and :func:`table_resources` give there:
    one :func:`measure_graph` call per capacity, with its own back-to-back baselines."""
    points = [p for p in points if p["ns"] is not None]
    measured: dict[Any, dict[str, Any]] = {}
    for lab in dict.fromkeys(p["c"] for p in points):
        picked = sorted({p["ns"] for p in points if p["c"] == lab})
        c = None if lab == "unbounded" else int(lab)
        meas = measure_graph(g, srcs, picked, k=k, c=c, memory=memory, nx_graph=nx_graph, nx_sources=nx_sources,
                             nx_ns=[ns for ns in picked if ns <= nx_max_ns])
        cpu = summarize_cpu(meas, picked)
        fp = fpga_figures(engines, meas, picked, table_capacity=None if c is None else c * k)
        measured[lab] = {"cpu": cpu, "fpga": fp, "networkx_ns": [ns for ns in picked if ns <= nx_max_ns],
                         "entries_max": {ns: int(max(meas["rows"][ns]["entries"])) for ns in picked}}
    for p in points:
        m = measured[p["c"]]
        ns = p["ns"]
        cpu_d, fp_d = m["cpu"]["per_ns"][ns], m["fpga"]["per_ns"][ns]
        entries = int(p["c"]) * k if p["c"] != "unbounded" else m["entries_max"][ns]
        p.update(prec=cpu_d[key], prec_k=cpu_d["prec_k"], capacity=None if p["c"] == "unbounded" else entries,
                 cpu=cpu_d, fpga=fp_d, table=table_resources(entries), table_kib=2 * 4 * entries / 1024,
                 baseline={x: m["cpu"][x] for x in ("baseline_lat_ms", "baseline_mem_kib", "baseline_nx_lat_ms",
                                                    "baseline_nx_mem_kib", "nx_sources")},
                 networkx=ns in m["networkx_ns"])


def unbounded_operating_points(g: Graph, sources: Sequence[int], engines: dict[str, PPRFpgaEngine],
                               ops: dict[str, Any], *, targets: Sequence[float] = TARGETS, k: int = K,
                               nx_graph: Any = None, nx_sources: int | None = None,
                               nx_max_ns: int = SYNTHETIC_NX_MAX_NS, memory: bool = True) -> dict[str, Any]:
    """The second rule beside :func:`synthetic_operating_points`' smallest table: an
    unbounded table and the smallest next-stage count reaching each target (the fewest
    stage-2 balls, whatever BRAM the table then needs). Reads the unbounded row of
    ``ops["search"]`` and sweeps the counts it lacks; a point ``ops`` measured already is
    reused, the others are measured as there."""
    t0 = time.perf_counter()
    key, ns_values = ops["metric"], sorted(int(x) for x in ops["ns_values"])
    srcs = [int(x) for x in sources]
    row = {int(ns): d for ns, d in ops["search"].get("unbounded", {}).items()}
    if any(all(d[key] < t for d in row.values()) for t in targets):
        truths = {s: local_ppr(g, s) for s in srcs}
        for ns in ns_values:
            if ns in row:
                continue
            row[ns] = _grid_row(g, truths, None, ns, k)
            if row[ns][key] >= max(targets):
                break
    row = dict(sorted(row.items()))
    points: dict[float, dict[str, Any]] = {}
    for t in sorted(targets):
        hit = next((ns for ns in row if row[ns][key] >= t), None)
        if hit is None:
            best = max(row, key=lambda ns: row[ns][key])
            points[t] = {"c": None, "ns": None, "best_prec": row[best][key], "best_at": ["unbounded", best]}
            continue
        done = next((p for p in ops["points"].values() if p.get("c") == "unbounded" and p.get("ns") == hit), None)
        points[t] = dict(done, reused=True) if done is not None else {"c": "unbounded", "ns": hit}
    _measure_points(g, srcs, engines, [p for p in points.values() if not p.get("reused")], k=k, key=key,
                    nx_graph=nx_graph, nx_sources=nx_sources, nx_max_ns=nx_max_ns, memory=memory)
    return {"search": row, "points": points, "seconds": time.perf_counter() - t0}


def synthetic_operating_points(g: Graph, sources: Sequence[int], engines: dict[str, PPRFpgaEngine], *,
                               ns_values: Sequence[int] = SYNTHETIC_LADDER,
                               capacities: Sequence[int | None] = TABLE_LADDER,
                               targets: Sequence[float] = TARGETS, k: int = K, key: str = "prec_pprpy",
                               nx_graph: Any = None, nx_sources: int | None = None,
                               nx_max_ns: int = SYNTHETIC_NX_MAX_NS, memory: bool = True) -> dict[str, Any]:
    """The ~80 % / ~90 % operating points of a graph whose precision plateaus under the
    paper's ``c * k`` table, with the table's capacity as a stated parameter.

    **Rule** (fixed before any measurement): for each target, the first capacity ``c`` of
    ``capacities`` (global table of ``c * k`` entries; ``None`` = unbounded) at which
    some next-stage count of ``ns_values`` reaches the target (mean ``key`` precision over
    the sources), and at that capacity the smallest such count -- :func:`at_targets`'
    rule. Capacities are searched in order, counts in ascending order; a capacity's sweep
    stops at the first count whose precision reaches every target still open.

    At each operating point everything :func:`measure_graph` measures (both CPU baselines,
    tracemalloc memory, NetworkX on the first ``nx_sources`` sources where the count is at
    most ``nx_max_ns``), the FPGA model (:func:`fpga_figures`, the table's entries sent
    back at the end) and the engine's BRAM with that table (:func:`table_resources`; an
    unbounded table is sized to the most entries any of the queries filled). One
    :func:`measure_graph` call per capacity used, so each has its own back-to-back
    baselines. The paper's formula ``#(T^∩T)/k`` is reported at the same points, and its
    own operating points are read off the searched grid (``None`` where the search
    stopped before reaching them).
    """
    t0 = time.perf_counter()
    srcs = [int(x) for x in sources]
    truths = {s: local_ppr(g, s) for s in srcs}
    grid: dict[Any, dict[int, dict[str, float]]] = {}
    points: dict[float, dict[str, Any]] = {}
    open_t = sorted(targets)
    for c in capacities:
        if not open_t:
            break
        lab = _capacity_label(c)
        grid[lab] = {}
        for ns in sorted(ns_values):
            row = _grid_row(g, truths, c, ns, k)
            grid[lab][int(ns)] = row
            if row[key] >= open_t[-1]:
                break
        for t in list(open_t):
            hit = next((ns for ns in sorted(grid[lab]) if grid[lab][ns][key] >= t), None)
            if hit is not None:
                points[t] = {"c": lab, "ns": hit}
                open_t.remove(t)
    for t in open_t:
        best = max(((lab, ns) for lab in grid for ns in grid[lab]), key=lambda x: grid[x[0]][x[1]][key])
        points[t] = {"c": None, "ns": None, "best_prec": grid[best[0]][best[1]][key], "best_at": list(best)}
    _measure_points(g, srcs, engines, points.values(), k=k, key=key, nx_graph=nx_graph, nx_sources=nx_sources,
                    nx_max_ns=nx_max_ns, memory=memory)
    other = "prec_k" if key != "prec_k" else "prec_pprpy"
    other_points = {}
    for t in sorted(targets):
        hit = next(((lab, ns) for lab in grid for ns in sorted(grid[lab]) if grid[lab][ns][other] >= t), None)
        other_points[t] = ({"c": hit[0], "ns": hit[1], "prec": grid[hit[0]][hit[1]][other]} if hit
                           else {"c": None, "ns": None})
    return {"metric": key, "capacities": [_capacity_label(c) for c in capacities], "ns_values": list(ns_values),
            "sources": len(srcs), "nx_sources": 0 if nx_graph is None else min(nx_sources or len(srcs), len(srcs)),
            "search": grid, "points": points, f"points_{other}": other_points,
            "seconds": time.perf_counter() - t0}


def fig5(g: Graph, P_values: Sequence[int] = (1, 2, 4, 8, 16), cycle_model: str = "rtl") -> dict[str, Any]:
    """One 6-step diffusion of the whole graph (Fig. 5, citeseer) at each P, under
    ``cycle_model`` (:data:`accelerators.ppr_fpga.CYCLE_MODELS`)."""
    sg = Subgraph(g.n, g.nnz, 6, 6, np.diff(g.adj.indptr), g.adj.indices)
    ms, over = {}, {}
    for P in P_values:
        e = PPRFpgaEngine(n_pes=P, cycle_model=cycle_model)
        ms[P] = e.split_cycles(sg)[0] * e.cycle_ns * 1e-6
        over[P] = e.scheduling_overhead(sg)
    return {"ms": ms, "overhead": over, "speedup_1_to_max": ms[P_values[0]] / ms[P_values[-1]]}


# ------------------------------------------------------------------------- co-design


def run_codesign(graph: str, graph_dir: str | None, trials: int, n_init: int, n_queries: int,
                 out: Path, workers: int, seed: int = 0) -> dict[str, Any]:
    """MOBO over ``experiments/configs/meloppr.yaml``'s space; its front vs the paper's point."""
    from experiments.config import load_config
    from experiments.study import Study

    cfg_path = Path(__file__).resolve().parents[1] / "configs" / "meloppr.yaml"
    loaded = load_config(cfg_path)
    objectives = dict(loaded.config.objectives)
    opts = {"graph": graph, "n_queries": n_queries, "query_seed": 0, "graph_dir": graph_dir}
    storage = f"sqlite:///{(out / 'codesign.db').resolve()}"
    study = Study.create(f"meloppr-{graph}-q{n_queries}-s{seed}", loaded.space, objectives,
                         "evaluators.ppr.engine_evaluator:MeLoPPRCoDesign", "mobo",
                         optimizer_options={"n_init": n_init, "pool_size": 1000},
                         evaluator_options=opts, storage=storage, seed=seed)
    t0 = time.perf_counter()
    study.optimize(trials, workers=workers, progress=False, timeout_s=600)
    wall = time.perf_counter() - t0
    front = study.pareto_front(feasible_only=True)
    front_csv = out / "codesign_pareto_front.csv"
    front.to_csv(front_csv, index=False)
    try:
        plots = [str(p) for p in study.plot(out / "codesign_plots")]
    except Exception as e:  # plotting must not lose the numbers
        logger.warning("co-design plots failed: %s", e)
        plots = []
    ev = MeLoPPRCoDesign(**{k: v for k, v in opts.items()})
    paper = ev(PAPER_POINT).metrics
    keep = ("precision", "latency_ms", "bram36", "lut_pct", "cpu_ms", "fpga_ms", "conflict_pct")
    by_pes = {P: {k: ev(dict(PAPER_POINT, n_pes=P)).metrics[k] for k in keep} for P in (1, 2, 4, 8, 16)}
    cols = {o: f"metrics_{o}" for o in objectives}
    pts = front[[cols[o] for o in objectives]].to_numpy(dtype=float)

    def better(row: np.ndarray) -> tuple[bool, bool]:
        ge, gt = True, False
        for v, (o, d) in zip(row, objectives.items()):
            p = paper[o]
            ok = v >= p if d == "max" else v <= p
            strict = v > p if d == "max" else v < p
            ge &= bool(ok)
            gt |= bool(strict)
        return ge, gt

    dominators = [i for i, row in enumerate(pts) if all(better(row))]
    param_cols = [c for c in front.columns if c.startswith("params_")]
    dom_rows = [{**{c.removeprefix("params_"): _plain(front.iloc[i][c]) for c in param_cols},
                 **{o: float(pts[i][j]) for j, o in enumerate(objectives)}} for i in dominators]
    at_prec = front[front[cols["precision"]] >= paper["precision"]] if "precision" in objectives else front
    return {
        "study": study.name, "storage": storage, "trials": trials, "wall_s": wall,
        "status_counts": {k.value: v for k, v in study.status_counts().items()},
        "front_size": len(front), "front_csv": str(front_csv), "plots": plots,
        "paper_point": PAPER_POINT, "paper_point_metrics": paper, "paper_plan_by_pes": by_pes,
        "paper_point_dominated": bool(dominators), "dominating_points": dom_rows[:10],
        "front_best_precision": float(front[cols["precision"]].max()) if len(front) else None,
        "front_min_latency_at_paper_precision": float(at_prec[cols["latency_ms"]].min()) if len(at_prec) else None,
        "front_min_bram36_at_paper_precision": float(at_prec[cols["bram36"]].min()) if len(at_prec) else None,
        "front": [{o: float(r[j]) for j, o in enumerate(objectives)} for r in pts],
    }


def _fits_note(frac: float) -> str:
    return "" if frac >= 1 else f"only {frac:.0%} of queries fit the P=16 tables (all counted)"


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v



# ------------------------------------------------------------------------- output


def _f(v: Any, spec: str = ".2f", suffix: str = "") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:{spec}}{suffix}"


def _x(v: Any, spec: str = ".2f") -> str:
    return _f(v, spec, "x")


def _paper_at_target(key: str, t: float) -> str:
    """The paper's figures nearest an operating point of ~``t`` precision (Fig. 7)."""
    fig7 = PAPER_FIG7.get(key, {})
    paper = "–"
    if t == 0.9 and fig7.get("prec", {}).get(13) is not None:
        paper = (f"CPU {fig7['cpu'][13]:.2f}x, FPGA {_x(fig7.get('fpga', {}).get(13), '.1f')} "
                 f"at 13 nodes (precision {fig7['prec'][13]:.2f})")
    if key == "dblp":
        paper = ("CPU 15.43x, FPGA 707.9x at 1-2 nodes (precision ~0.8)" if t == 0.8 else
                 "CPU 2.58x, FPGA 70.7x at 13 nodes (precision 0.91)")
    return paper


def _operating_point_rows(sop: dict[str, Any], fcmd: str = "",
                          fnote: str = "") -> list[tuple[str, str, str, str, str, str]]:
    """Rows of the synthetic operating points (:func:`synthetic_operating_points`), each
    with the command and date of the run that measured them (the FPGA speedups: of the
    rerun ``fcmd`` that replaced them, if any, with its note ``fnote``)."""
    rows = []
    cmd = sop["command"]
    for name, ops in sop["graphs"].items():
        label = f"{name} (SYNTHETIC, |V| {ops['n']:,}, |E| {ops['m']:,})"
        notes = {part.get("date", sop.get("date", "?")): (
            f"SYNTHETIC stand-in, not the SNAP graph; run {part.get('date', sop.get('date', '?'))}; "
            f"{ops['sources']} sources, NetworkX on {ops['nx_sources']} up to {SYNTHETIC_NX_MAX_NS} nodes")
            for part in (ops, ops.get("unbounded", {}))}
        ptab = PAPER_TABLE_II.get(ops["key"])
        ladder = "/".join(str(c) for c in ops["capacities"])
        rules = [(t, p, f"~{t:.0%} operating point, smallest table (c = {ladder})",
                  f"rule: smallest c of {ladder} reaching the target, then the smallest count", ops)
                 for t, p in ops["points"].items()]
        rules += [(t, p, f"~{t:.0%} operating point, unbounded table",
                   "rule: unbounded table, the smallest count reaching the target", ops["unbounded"])
                  for t, p in ops.get("unbounded", {}).get("points", {}).items()]
        for t, p, where, rule, part in rules:
            base_note = notes[part.get("date", sop.get("date", "?"))]
            if p["ns"] is None:
                rows.append((f"{where}: capacity and next-stage nodes (PPR.py variant)", label,
                             "c = 10 (2,000 entries)", f"not reached (best {p['best_prec']:.3f} at c, ns = "
                             f"{p['best_at'][0]}, {p['best_at'][1]})", base_note, cmd))
                continue
            cpu, f, tb = p["cpu"], p["fpga"], p["table"]
            nx_note = "" if p["networkx"] else f"; NetworkX MeLoPPR not run above {SYNTHETIC_NX_MAX_NS} nodes"
            rows.append((f"{where}: capacity and next-stage nodes (PPR.py variant)", label,
                         "c = 10 (2,000 entries); " + _paper_at_target(ops["key"], t),
                         f"c = {p['c']} ({tb['entries']:,} entries{'' if p['capacity'] else ', most any query filled'}), "
                         f"{p['ns']} node(s): precision {p['prec']:.3f} (#(T^∩T)/k {p['prec_k']:.3f})",
                         base_note + "; " + rule, cmd))
            rows.append((f"{where}: CPU speedup vs single-stage", label, _paper_at_target(ops["key"], t),
                         f"NetworkX {_x(cpu.get('speedup_nx'))}; scipy {cpu['speedup']:.2f}x "
                         f"({cpu['lat_ms']:.0f} vs {p['baseline']['baseline_lat_ms']:.0f} ms)", base_note + nx_note, cmd))
            rows.append((f"{where}: CPU memory reduction (tracemalloc)", label, _x(ptab and ptab[0]),
                         f"NetworkX {_x(cpu.get('mem_reduction_nx'))}; scipy {_x(cpu.get('mem_reduction'))} "
                         f"({_f(cpu.get('mem_kib'), '.0f')} vs {p['baseline']['baseline_mem_kib']:.0f} KiB)",
                         base_note + nx_note, cmd))
            rows.append((f"{where}: FPGA speedup vs CPU baseline (model, P=16)", label,
                         _paper_at_target(ops["key"], t),
                         f"vs NetworkX: {_x(f.get('speedup_vs_nx'), '.1f')} end to end, "
                         f"{_x(f.get('fpga_only_vs_nx'), '.1f')} FPGA only; vs scipy: {f['speedup_vs_scipy']:.1f}x "
                         f"end to end ({f['latency_ms']:.2f} ms, host {f['cpu_ms']:.2f} ms), "
                         f"{f['fpga_only_vs_scipy']:.1f}x FPGA only",
                         "; ".join(x for x in (base_note, "native-code host; the table's entries sent back",
                                               _fits_note(f["fits_fraction"]), fnote) if x), fcmd or cmd))
            rows.append((f"{where}: FPGA on-chip memory", label,
                         f"{_x(ptab and ptab[1], '.1f')} reduction; 2,000-entry table (4 BRAM36, 324 at P=16)",
                         f"global table {tb['entries']:,} entries = {tb['table_bram36']:g} BRAM36 "
                         f"({p['table_kib']:.0f} KiB); design {tb['bram36']:g} BRAM36 = {tb['bram_pct']:.0f}% of the "
                         f"KC705: {'fits' if tb['fits_kc705'] else 'does NOT fit'}; largest sub-graph "
                         f"{f['fpga_kib']:.0f} KiB, reduction vs NetworkX {_x(f.get('mem_reduction_nx'), '.1f')}, "
                         f"vs scipy {_x(f.get('mem_reduction'), '.1f')}",
                         base_note + "; BRAM from the engine's table layout (accelerators/ppr_fpga.py)", cmd))
        base_note = notes[ops.get("date", sop.get("date", "?"))]
        for t, p in ops.get("points_prec_k", {}).items():
            ours = (f"c = {p['c']}, {p['ns']} node(s): precision {p['prec']:.3f}" if p["ns"] is not None
                    else "not reached in the searched grid")
            rows.append((f"~{t:.0%} operating point, paper's formula #(T^∩T)/k", label, "–", ours,
                         base_note + "; read off the same search (speed and memory not measured separately)", cmd))
    return rows


def _cycle_note(res: dict[str, Any]) -> tuple[str, str]:
    """The command that made the FPGA figures and a note naming their cycle model: the run's
    own (``""``) unless a rerun (``meloppr_fpga_rerun --merge-into``) replaced them."""
    rerun = res.get("fpga_rerun")
    if not rerun:
        return "", ""
    return rerun["command"], (f"FPGA cycle model {rerun['cycle_model']} (rerun {rerun['date']}; the "
                              f"{rerun['earlier_cycle_model']} figures under *_v1 in results.json)")


def write_table(res: dict[str, Any], path: Path, cmd: str) -> None:
    rows: list[tuple[str, str, str, str, str, str]] = []
    fcmd, fnote = _cycle_note(res)

    def add(q: str, graph: str, paper: str, ours: str, note: str = "", command: str = "") -> None:
        rows.append((q, graph, paper, ours, note, command or cmd))

    def with_cycles(note: str) -> str:
        return "; ".join(x for x in (note, fnote) if x)

    for name, ex in res.get("exactness", {}).items():
        add("Eq. 8 exactness: max abs error, all next-stage nodes, no table bound", name,
            "exact (Eq. 8)", f"{ex:.1e}")
    for name, gr in res.get("graphs", {}).items():
        cpu, fig7, syn = gr["cpu"], PAPER_FIG7.get(gr["key"], {}), gr["synthetic"]
        label = f"{name} (SYNTHETIC, |V| {gr['n']:,}, |E| {gr['m']:,})" if syn else name
        pnote = "paper: real SNAP graph; ours: synthetic stand-in of the same size" if syn else ""
        for ns in (1, 3, 5, 13):
            if ns not in cpu["per_ns"]:
                continue
            d = cpu["per_ns"][ns]
            paper = fig7.get("prec", {}).get(ns)
            check = INDEPENDENT_CHECK.get(name, {}).get(ns) if not syn else None
            ptxt = _f(paper) + (f" (independent check {check:.2f})" if check is not None else "")
            add(f"precision@200, {ns} next-stage node(s) (Fig. 7)", label, ptxt,
                f"{d['prec_k']:.3f} (PPR.py variant {d['prec_pprpy']:.3f}; #(T^∩T)/min(k, #T) {d['prec_min']:.3f})",
                pnote or ("#(T^∩T)/k is low where 6-hop balls have < 200 nodes" if name == "citeseer" else ""))
        nxs = cpu.get("nx_sources", 0)
        for ns, d in gr.get("table_bound", {}).items():
            add(f"precision with the c*k = {C * K} table vs an unbounded one, {ns} next-stage nodes", label, "–",
                f"{d['prec_table']:.3f} vs {d['prec_unbounded']:.3f} ({d['refused_mean']:,.0f} nodes refused per query)",
                "what the first-come table costs on these graphs")
        add("single-stage baseline per query: NetworkX / scipy", label, "NetworkX (Sec. VI)",
            f"{_f(cpu.get('baseline_nx_lat_ms'))} ms, {_f(cpu.get('baseline_nx_mem_kib'), '.0f')} KiB / "
            f"{cpu['baseline_lat_ms']:.2f} ms, {cpu['baseline_mem_kib']:.0f} KiB "
            f"(NetworkX {_x(cpu.get('baseline_nx_over_scipy_lat'))} the time, "
            f"{_x(cpu.get('baseline_nx_over_scipy_mem'))} the memory)",
            f"NetworkX on {nxs} of {gr['sources']} sources" if nxs != gr["sources"] else "")
        for ns in sorted(cpu["per_ns"]):
            if ns not in (1, 13) and not (syn and ns in {t.get("ns") for t in gr["targets"].values()}):
                continue
            d = cpu["per_ns"][ns]
            add(f"CPU speedup vs single-stage, {ns} next-stage node(s) (Fig. 7)", label,
                _x(fig7.get("cpu", {}).get(ns)),
                f"NetworkX {_x(d.get('speedup_nx'))}; scipy {d['speedup']:.2f}x "
                f"({d['lat_ms']:.2f} vs {cpu['baseline_lat_ms']:.2f} ms)",
                pnote or "NetworkX = the paper's kind of CPU code; scipy = vectorized CSR, both ours")
        ptab = PAPER_TABLE_II.get(gr["key"])
        for ns in sorted(cpu["per_ns"]):
            d = cpu["per_ns"][ns]
            if "mem_reduction" not in d or (ns not in (1, 13) and not syn):
                continue
            add(f"CPU memory reduction (tracemalloc), {ns} next-stage node(s) (Table II)", label,
                _x(ptab and ptab[0]),
                f"NetworkX {_x(d.get('mem_reduction_nx'))}; scipy {d['mem_reduction']:.2f}x "
                f"(mean per seed {d['mem_reduction_per_seed_mean']:.2f}x, "
                f"{d['mem_reduction_min']:.2f}-{d['mem_reduction_max']:.2f}x)",
                pnote or "paper does not say at which next-stage count")
        for t, d in gr["targets"].items():
            if d["ns"] is None:
                ours = f"not reached (best {d['best_prec']:.3f} at {d['best_ns']} nodes)"
            else:
                ours = (f"{d['ns']} node(s) (precision {d['prec']:.3f}): CPU NetworkX {_x(d.get('speedup_nx'))}, "
                        f"scipy {d['speedup']:.2f}x; FPGA end to end vs NetworkX "
                        f"{_x(d.get('fpga_speedup_vs_nx'), '.1f')}, vs scipy {_x(d.get('fpga_speedup_vs_scipy'), '.1f')}")
            paper = _paper_at_target(gr["key"], t)
            add(f"operating point: ~{t:.0%} precision (PPR.py variant)", label, paper, ours,
                with_cycles(pnote) if d["ns"] is not None else pnote)
        fp = gr.get("fpga")
        if fp:
            for ns in sorted(fp["per_ns"]):
                if ns not in (1, 5, 9, 13):
                    continue
                d = fp["per_ns"][ns]
                add(f"FPGA speedup vs CPU baseline, {ns} next-stage node(s) (Fig. 7; model, P=16)", label,
                    _x(fig7.get("fpga", {}).get(ns), ".1f"),
                    f"vs NetworkX: {_x(d.get('speedup_vs_nx'), '.1f')} end to end, "
                    f"{_x(d.get('speedup_vs_nx_networkx_host'), '.1f')} with a NetworkX host, "
                    f"{_x(d.get('fpga_only_vs_nx'), '.1f')} FPGA only; vs scipy: {d['speedup_vs_scipy']:.1f}x end to "
                    f"end ({d['latency_ms']:.3f} ms, host {d['cpu_ms']:.3f} ms), "
                    f"{d['fpga_only_vs_scipy']:.1f}x FPGA only, {_x(d.get('speedup_vs_scipy_numpy_host'))} "
                    "with a numpy host",
                    with_cycles("; ".join(x for x in (pnote or "end to end = native-code host + link + FPGA",
                                                      _fits_note(d["fits_fraction"])) if x)), fcmd)
            for ns in (1, 13):
                d = fp["per_ns"].get(ns)
                if d and "mem_reduction" in d:
                    add(f"FPGA memory reduction vs CPU tracemalloc, {ns} next-stage node(s) (Table II)", label,
                        _x(ptab and ptab[1], ".1f"),
                        f"vs NetworkX {_x(d.get('mem_reduction_nx'), '.1f')}; vs scipy {d['mem_reduction']:.1f}x "
                        f"(mean per seed {d['mem_reduction_per_seed_mean']:.1f}x; {d['fpga_kib']:.1f} KiB on chip)",
                        "; ".join(x for x in (pnote or "4(5V+2E) bytes of the largest sub-graph",
                                              _fits_note(d["fits_fraction"])) if x))
            add("single-stage baseline queries that fit the P=16 engine's tables", label, "–",
                f"{fp['baseline_fits_fraction']:.0%}", pnote)
    f6 = res.get("fig6")
    if f6:
        for rule, curve in f6.items():
            for f, d in curve.items():
                p = PAPER_FIG6.get(float(f))
                ptxt = _f(p, ".3f") if p is not None else ("0.867-0.96" if abs(float(f) - 0.05) < 1e-9 else "–")
                add(f"precision with {float(f):.0%} of next-stage nodes (Fig. 6, mean of 3 graphs), "
                    f"rule '{rule}'", "G1-G3", ptxt,
                    f"#∩/k {d['prec_k']:.3f}; PPR.py variant {d['prec_pprpy']:.3f}; #∩/min(k,#T) {d['prec_min']:.3f} "
                    f"({d['used']:.1f} nodes)", FIG6_RULE_NOTES[rule])
    if "resources" in res:
        for P, d in res["resources"].items():
            lut, bram = PAPER_TABLE_I[int(P)]
            add(f"FPGA resources at P={P} (Table I)", "XC7K325T", f"LUT {lut}%, BRAM {bram}%",
                f"LUT {d['lut_pct']:.1f}%, BRAM {d['bram_pct']:.1f}%",
                "LUT model calibrated to this row set; BRAM from the RTL table layout")
    if "fig5" in res:
        f5 = res["fig5"]
        add("one 6-step diffusion of citeseer, P=1 / P=16 (Fig. 5)", "citeseer", "~11 ms / ~1 ms (read off)",
            f"{f5['ms'][1]:.2f} ms / {f5['ms'][16]:.2f} ms ({f5['speedup_1_to_max']:.1f}x)", fnote, fcmd)
        add("scheduling overhead P=2 / P=16 (Fig. 5)", "citeseer", "< 20% / < 40%",
            f"{100 * f5['overhead'][2]:.1f}% / {100 * f5['overhead'][16]:.1f}%",
            with_cycles("" if fnote else "model [inferred]"), fcmd)
    hm = res.get("host_models")
    if hm:
        for kind, h in hm.items():
            add(f"host extraction cost, {kind} code (measured here)", res.get("host_graph", "cora"), "not published",
                f"{h['cpu_us_per_subgraph']:.2f} us/sub-graph + {h['cpu_us_per_hop']:.2f} us/hop + "
                f"{h['cpu_ns_per_entry']:.1f} ns/entry",
                {"native": "headline end-to-end figures use the native host",
                 "networkx": "a host written like the paper's CPU code"}.get(kind, "for comparison"))
    cd = res.get("codesign")
    if cd:
        pm = cd["paper_point_metrics"]
        add("co-design: paper point (P=16, l1=l2=3, 13 nodes, c=10)", cd["graph"], "chosen design",
            f"precision {pm['precision']:.3f}, {pm['latency_ms']:.3f} ms, {pm['bram36']:g} BRAM36",
            f"{cd['trials']} MOBO trials, front of {cd['front_size']}"
            + ("; FPGA cycle model v1 (the co-design study is not rerun)" if fnote else ""))
        bp = cd.get("paper_plan_by_pes", {})
        if bp:
            add("co-design: paper plan at P = " + "/".join(str(P) for P in bp), cd["graph"], "P = 16 chosen",
                " / ".join(f"{v['latency_ms']:.2f} ms, {v['bram36']:g} BRAM36" for v in bp.values()),
                "native-code host" + ("; FPGA cycle model v1 (not rerun)" if fnote else ""))
        add("co-design: front dominates the paper point?", cd["graph"], "–",
            "yes" if cd["paper_point_dominated"] else "no",
            (f"e.g. {cd['dominating_points'][0]}" if cd["dominating_points"] else
             f"front at >= paper precision: min latency {_f(cd['front_min_latency_at_paper_precision'], '.3f')} ms, "
             f"min BRAM36 {_f(cd['front_min_bram36_at_paper_precision'], 'g')}"))
    if res.get("synthetic_operating_points"):
        rows.extend(_operating_point_rows(res["synthetic_operating_points"], fcmd, fnote))
    lines = ["| quantity | graph | paper | ours | command | note |", "|---|---|---|---|---|---|"]
    for cells in rows:
        q, g, p, o, n, c = (x.replace("|", "\\|") for x in cells)
        lines.append(f"| {q} | {g} | {p} | {o} | `{c}` | {n} |")
    path.write_text("\n".join(lines) + "\n")


def plot_curves(res: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graphs = list(res["graphs"].items())
    fig, axes = plt.subplots(1, len(graphs), figsize=(4 * len(graphs), 3.4), squeeze=False)
    for ax, (name, gr) in zip(axes[0], graphs):
        per = gr["cpu"]["per_ns"]
        ns = sorted(per)
        ax.plot(ns, [per[n]["prec_k"] for n in ns], "o-", label="ours #(T^∩T)/k")
        ax.plot(ns, [per[n]["prec_pprpy"] for n in ns], "s--", label="ours PPR.py variant")
        pk = PAPER_FIG7.get(gr["key"], {}).get("prec", {})
        ax.plot(list(pk), list(pk.values()), "k*", ms=12, label="paper Fig. 7")
        ax.set_title(name + (" (synthetic)" if gr["synthetic"] else ""))
        ax.set_xlabel("next-stage nodes")
        if gr["synthetic"]:
            ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("precision@200")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_fig6(f6: dict[str, Any], path: Path) -> None:
    """Fig. 6 side by side: every next-stage rule x precision definition, and the paper."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(f6), figsize=(4 * len(f6), 3.4), squeeze=False)
    for ax, (rule, curve) in zip(axes[0], f6.items()):
        fs = sorted(curve)
        for m, style in zip(FIG6_METRICS, ("o-", "s--", "^:")):
            ax.plot([100 * f for f in fs], [curve[f][m] for f in fs], style, label=m)
        pts = [(100 * f, p) for f, p in PAPER_FIG6.items() if p is not None]
        ax.plot([x for x, _ in pts], [y for _, y in pts], "k*", ms=12, label="paper Fig. 6")
        ax.set_xscale("log")
        ax.set_title(f"fraction of: {rule}")
        ax.set_xlabel("% of next-stage nodes")
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("precision@200 (mean of G1-G3)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_front(cd: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = cd["front"]
    fig, ax = plt.subplots(figsize=(5, 3.6))
    sc = ax.scatter([p["latency_ms"] for p in pts], [p["precision"] for p in pts],
                    c=[p["bram36"] for p in pts], cmap="viridis", label="Pareto front (ours)")
    pm = cd["paper_point_metrics"]
    ax.scatter([pm["latency_ms"]], [pm["precision"]], marker="*", s=250, c="red", label="paper's point")
    fig.colorbar(sc, label="BRAM36")
    ax.set_xlabel("modelled latency per query (ms)")
    ax.set_ylabel("precision@200")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------- main


def _restore_keys(o: Any) -> Any:
    """Undo JSON's string keys: ``"13"`` -> 13, ``"0.8"`` -> 0.8 (for cached results)."""
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            key: Any = k
            if isinstance(k, str):
                try:
                    key = int(k)
                except ValueError:
                    try:
                        key = float(k) if any(ch.isdigit() for ch in k) and k.replace(".", "", 1).isdigit() else k
                    except ValueError:
                        key = k
            out[key] = _restore_keys(v)
        return out
    if isinstance(o, list):
        return [_restore_keys(v) for v in o]
    return o


def load_results(path: Path) -> dict[str, Any]:
    """A ``results.json`` this reproduction wrote, as :func:`write_table` takes it (JSON's
    string keys restored: ``"13"`` -> 13, ``"0.8"`` -> 0.8)."""
    return _restore_keys(json.loads(Path(path).read_text()))


def _cached(store: RecordStore, kind: str, signature: dict[str, Any]) -> dict[str, Any] | None:
    """The result recorded in ``store`` for ``signature`` (JSON's string keys restored), or
    ``None``: a result measured with other settings has another key."""
    value = store.get(kind, jsonable(signature))
    return None if value is None else _restore_keys(value)


def _store(store: RecordStore, kind: str, signature: dict[str, Any], result: dict[str, Any],
           cpu_s: float | None = None) -> None:
    """Record ``result`` for ``signature`` (replacing an earlier one: a graph's record gains
    its table-bound check after it was first stored), with its ``seconds`` as wall time."""
    wall = result.get("seconds")
    if cpu_s is None:                      # an update keeps the CPU seconds the first write measured
        prev = store.record(kind, jsonable(signature))
        cpu_s = prev.cpu_s if prev is not None else None
    store.put(kind, jsonable(signature), jsonable(result), wall_s=wall if isinstance(wall, float | int) else None,
              cpu_s=cpu_s, replace=True)


def _host_models(store: RecordStore, quick: bool, seed: int, fresh: bool) -> dict[str, HostModel]:
    """Native and numpy host costs, measured once on cora and kept as a record so that a
    resumed or split run costs every graph with the same host."""
    settings = {"graph": "cora", "extractors": list(HOST_EXTRACTORS)}
    kept = None if fresh else store.get(KINDS["hosts"], settings)
    if kept is not None:
        return {k: HostModel(**v) for k, v in kept.items()}
    t, c = time.perf_counter(), time.process_time()
    g = load_graph("cora")
    n, rep = (10, 2) if quick else (40, 5)
    models = {kind: calibrate_host(g, n_sources=n, repeats=rep, seed=seed, extractor=kind)
              for kind in HOST_EXTRACTORS}
    store.put(KINDS["hosts"], settings, jsonable({k: v.__dict__ for k, v in models.items()}),
              wall_s=time.perf_counter() - t, cpu_s=time.process_time() - c, replace=True)
    return models


def run_graph(name: str, key: str, g: Graph, *, synthetic: bool, scale: float, n_src: int, ns_values: Sequence[int],
              rng_seed: int, quick: bool, networkx: bool, nx_sources: int | None,
              engines: dict[str, PPRFpgaEngine]) -> dict[str, Any]:
    """Everything measured on one graph (see the module docstring)."""
    t = time.perf_counter()
    rng = np.random.default_rng(rng_seed)
    sources = rng.choice(g.n, size=min(n_src, g.n), replace=False)
    nx_graph = to_networkx(g) if networkx else None
    gr: dict[str, Any] = {"key": key, "synthetic": synthetic, "scale": scale, "n": g.n, "m": g.m,
                          "sources": len(sources)}
    if not synthetic:
        gr["exactness"] = exactness(g, sources[: (3 if quick else 10)])
        meas = measure_graph(g, sources, ns_values, nx_graph=nx_graph, nx_sources=nx_sources)
    else:
        # pass 1: precision and scipy latency over the whole ladder; pass 2: memory and the
        # NetworkX runs at 1 and 13 nodes and at the operating points (~80 %, ~90 %)
        first = measure_graph(g, sources, ns_values, memory=False)
        ops = at_targets(summarize_cpu(first, ns_values))
        picked = sorted({1, 13} & set(ns_values) | {d["ns"] for d in ops.values() if d["ns"] is not None})
        nx_ns = [ns for ns in picked if ns <= SYNTHETIC_NX_MAX_NS]
        second = measure_graph(g, sources, picked, nx_graph=nx_graph, nx_sources=nx_sources, nx_ns=nx_ns)
        first["rows"].update(second["rows"])
        meas = {"base": second["base"], "rows": first["rows"], "nx_sources": second["nx_sources"]}
        gr["networkx_ns"] = nx_ns
    del nx_graph
    cpu = summarize_cpu(meas, ns_values)
    fp = fpga_figures(engines, meas, ns_values)
    gr.update(cpu=cpu, fpga=fp, targets=at_targets(cpu, fpga=fp), targets_prec_k=at_targets(cpu, "prec_k", fpga=fp))
    if not synthetic:
        n6 = 5 if quick else (LARGE_GRAPH_FIG6_SOURCES if g.n > LARGE_GRAPH_NODES else 50)
        gr["fig6"] = fraction_curves(g, sources[:n6], list(PAPER_FIG6))
        gr["fig6_sources"] = n6
    gr["seconds"] = time.perf_counter() - t
    return gr


def _operating_points_for(name: str, key: str, g: Graph | None, *, scale: float, n_src: int, ns_values: Sequence[int],
                          rng_seed: int, networkx: bool, nx_sources: int, engines: dict[str, PPRFpgaEngine],
                          hosts: dict[str, Any], store: RecordStore, fresh: bool) -> dict[str, Any]:
    """:func:`synthetic_operating_points` of one synthetic stand-in, and beside them
    (``"unbounded"``) :func:`unbounded_operating_points`, each kept as a record in ``store``
    (same sources as :func:`run_graph`)."""
    signature = {"graph": name, "sources": n_src, "ns": list(ns_values), "k": K,
                 "capacities": [_capacity_label(c) for c in TABLE_LADDER], "targets": list(TARGETS),
                 "rng_seed": rng_seed, "scale": scale, "networkx": networkx, "nx_sources": nx_sources,
                 "hosts": hosts, "version": OPS_CACHE_VERSION, "cycle_model": PPRFpgaEngine().cycle_model}
    kind = KINDS["operating_points"]
    sig_unb = dict(signature, part="unbounded")
    ops = None if fresh else _cached(store, kind, signature)
    unb = None if fresh else _cached(store, kind, sig_unb)
    if ops is not None:
        print(f"{name}: operating points kept from {store.root}")
    if ops is None or unb is None:
        if g is None:
            t = time.perf_counter()
            g = load_graph(f"synthetic-{key}@{scale}", seed=rng_seed)
            print(f"{name}: generated |V|={g.n:,} |E|={g.m:,} in {time.perf_counter() - t:.0f} s", flush=True)
        sources = np.random.default_rng(rng_seed).choice(g.n, size=min(n_src, g.n), replace=False)
        nx_graph = to_networkx(g) if networkx else None
        today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
        if ops is None:
            ops = synthetic_operating_points(g, sources, engines, ns_values=ns_values, nx_graph=nx_graph,
                                             nx_sources=nx_sources)
            ops.update(key=key, n=g.n, m=g.m, scale=scale, date=today)
            _store(store, kind, signature, ops)
            ops = _restore_keys(json.loads(json.dumps(jsonable(ops))))
        unb = unbounded_operating_points(g, sources, engines, ops, nx_graph=nx_graph, nx_sources=nx_sources)
        unb["date"] = today
        _store(store, kind, sig_unb, unb)
        unb = _restore_keys(json.loads(json.dumps(jsonable(unb))))
    else:
        print(f"{name}: unbounded-table operating points kept from {store.root}")
    ops["unbounded"] = unb
    return ops


def _print_operating_points(name: str, ops: dict[str, Any]) -> None:
    print(f"{name} (SYNTHETIC) operating points, {ops['sources']} sources ({ops['nx_sources']} with NetworkX), "
          f"{ops['seconds']:.0f} s:", flush=True)
    for lab, row in ops["search"].items():
        print(f"  table c={lab}: " + ", ".join(f"ns {ns} {d[ops['metric']]:.3f}" for ns, d in row.items()), flush=True)
    pts = [("smallest table", t, p) for t, p in ops["points"].items()]
    pts += [("unbounded table", t, p) for t, p in ops.get("unbounded", {}).get("points", {}).items()]
    for rule, t, p in pts:
        if p["ns"] is None:
            print(f"  ~{t:.0%} ({rule}): not reached (best {p['best_prec']:.3f} at {p['best_at']})")
            continue
        cpu, f, tb = p["cpu"], p["fpga"], p["table"]
        print(f"  ~{t:.0%} ({rule}): c={p['c']} ({tb['entries']:,} entries), ns={p['ns']}: prec {p['prec']:.3f} "
              f"(#∩/k {p['prec_k']:.3f}) | CPU NetworkX {_x(cpu.get('speedup_nx'))} scipy {cpu['speedup']:.2f}x, "
              f"mem NetworkX {_x(cpu.get('mem_reduction_nx'))} scipy {_x(cpu.get('mem_reduction'))} | FPGA e2e "
              f"vs NetworkX {_x(f.get('speedup_vs_nx'), '.1f')} vs scipy {f['speedup_vs_scipy']:.1f}x | table "
              f"{tb['table_bram36']:g} BRAM36, design {tb['bram36']:g} ({tb['bram_pct']:.0f}% of KC705, "
              f"fits {tb['fits_kc705']})", flush=True)


def _print_graph(name: str, gr: dict[str, Any]) -> None:
    cpu = gr["cpu"]
    print(f"{name}{' (SYNTHETIC)' if gr['synthetic'] else ''}: |V|={gr['n']:,} |E|={gr['m']:,}, {gr['sources']} "
          f"sources ({cpu['nx_sources']} with NetworkX), {gr['seconds']:.0f} s; baseline scipy "
          f"{cpu['baseline_lat_ms']:.2f} ms {cpu['baseline_mem_kib']:.0f} KiB, NetworkX "
          f"{_f(cpu['baseline_nx_lat_ms'])} ms {_f(cpu['baseline_nx_mem_kib'], '.0f')} KiB"
          + (f"; exactness {gr['exactness']:.1e}" if "exactness" in gr else ""), flush=True)
    for ns, d in cpu["per_ns"].items():
        f = gr["fpga"]["per_ns"][ns]
        print(f"  ns={ns:>3}: prec {d['prec_k']:.3f} (pprpy {d['prec_pprpy']:.3f}) | CPU speedup NetworkX "
              f"{_x(d.get('speedup_nx'))} scipy {d['speedup']:.2f}x, mem NetworkX {_x(d.get('mem_reduction_nx'))} "
              f"scipy {_x(d.get('mem_reduction'))} | FPGA e2e vs NetworkX {_x(f.get('speedup_vs_nx'), '.1f')} "
              f"(NetworkX host {_x(f.get('speedup_vs_nx_networkx_host'), '.1f')}) "
              f"vs scipy {f['speedup_vs_scipy']:.1f}x (numpy host {_x(f.get('speedup_vs_scipy_numpy_host'))}), "
              f"FPGA only vs scipy {f['fpga_only_vs_scipy']:.1f}x", flush=True)


def _main_operating_points(args: argparse.Namespace, scale: float, n_src: int, nx_src: int, ns_values: list[int],
                           networkx: bool, run_cmd: str) -> dict[str, Any]:
    """``--operating-points-only``: the synthetic stand-ins' operating points, written to
    OUT (and, with ``--merge-into DIR``, added to DIR's results and table)."""
    cmd = "coexplore reproduce meloppr --operating-points-only" + (" --quick" if args.quick else "")
    if args.synthetic_graphs != list(SYNTHETIC_LIKE):
        cmd += " --synthetic-graphs " + " ".join(args.synthetic_graphs)
    for flag in ("synthetic_scale", "synthetic_seeds", "synthetic_nx_seeds"):
        if getattr(args, flag) is not None:
            cmd += f" --{flag.replace('_', '-')} {getattr(args, flag):g}"
    if not networkx:
        cmd += " --no-networkx"
    merged: dict[str, Any] | None = None
    if args.merge_into is not None:
        cmd += f" --merge-into {args.merge_into}"
        merged = _restore_keys(json.loads((args.merge_into / "results.json").read_text()))
        hosts = {k: HostModel(**v) for k, v in merged["host_models"].items()}
    else:
        hosts = _host_models(RecordStore(args.out / "records"), args.quick, args.rng_seed, args.fresh)
    host_dicts = {k: v.__dict__ for k, v in hosts.items()}
    engines = {kind: PPRFpgaEngine(host=h) for kind, h in hosts.items()}
    t_all = time.perf_counter()
    ops_all: dict[str, Any] = {
        "command": cmd, "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "settings": {"synthetic_scale": scale, "sources": n_src, "networkx_sources": nx_src, "ns_values": ns_values,
                     "capacities": [_capacity_label(c) for c in TABLE_LADDER], "k": K, "targets": list(TARGETS),
                     "networkx_max_ns": SYNTHETIC_NX_MAX_NS, "rng_seed": args.rng_seed,
                     "python": platform.python_version(), "machine": platform.machine(), "numpy": np.__version__},
        "host_models": host_dicts, "graphs": {}}
    for key in args.synthetic_graphs:
        name = f"synthetic-{key}" + ("" if scale == 1 else f"-x{scale:g}")
        ops = _operating_points_for(name, key, None, scale=scale, n_src=n_src, ns_values=ns_values,
                                    rng_seed=args.rng_seed, networkx=networkx, nx_sources=nx_src, engines=engines,
                                    hosts=host_dicts, store=RecordStore(args.out / "records"), fresh=args.fresh)
        ops_all["graphs"][name] = ops
        _print_operating_points(name, ops)
    ops_all["seconds"] = time.perf_counter() - t_all
    (args.out / "operating_points.json").write_text(json.dumps(jsonable(ops_all), indent=1))
    if merged is not None:
        merged["synthetic_operating_points"] = ops_all
        (args.merge_into / "results.json").write_text(json.dumps(jsonable(merged), indent=1))
        quick = bool(merged.get("settings", {}).get("quick"))
        write_table(merged, args.merge_into / "table.md", "coexplore reproduce meloppr" + (" --quick" if quick else ""))
        print(f"merged into {args.merge_into / 'results.json'} and {args.merge_into / 'table.md'}")
        return merged
    res = {"synthetic_operating_points": ops_all}
    write_table(res, args.out / "table.md", run_cmd)
    print(f"results: {args.out / 'operating_points.json'}, table: {args.out / 'table.md'}")
    return res


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="coexplore reproduce meloppr", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="10 sources per graph, next-stage 1/3/5/13, 3 exactness sources, synthetic "
                         "scale 0.003, 8 co-design trials")
    ap.add_argument("--seeds", type=int, default=None, help="query sources per real graph (default 100)")
    ap.add_argument("--graph", action="append", default=None,
                    help="a graph to run instead of citeseer, cora and pubmed (repeatable): a packaged "
                         "name, NAME with NAME_adj.txt in --graph-dir, or a path to an edge list")
    ap.add_argument("--graph-dir", default=None,
                    help="directory of {name}_adj.txt[.gz] edge lists (default $COEXPLORE_GRAPH_DIR, then "
                         "the graphs shipped with coexplore)")
    ap.add_argument("--synthetic-scale", type=float, default=None,
                    help="|V|, |E| of the synthetic SNAP stand-ins relative to the real ones (default 1: full size)")
    ap.add_argument("--synthetic-seeds", type=int, default=None, help="sources per synthetic graph (default 4)")
    ap.add_argument("--synthetic-nx-seeds", type=int, default=None,
                    help="of those, how many also run the NetworkX code (default 2)")
    ap.add_argument("--networkx-seeds", type=int, default=None,
                    help=f"sources per real graph that also run the NetworkX code (default: all, but "
                         f"{LARGE_GRAPH_NX_SOURCES} on graphs of more than {LARGE_GRAPH_NODES:,} nodes)")
    ap.add_argument("--no-synthetic", action="store_true")
    ap.add_argument("--synthetic-only", action="store_true", help="skip the real graphs (and Fig. 5/6)")
    ap.add_argument("--synthetic-graphs", nargs="+", default=list(SYNTHETIC_LIKE), choices=list(SYNTHETIC_LIKE),
                    help="which synthetic stand-ins to run (default all)")
    ap.add_argument("--no-networkx", action="store_true", help="skip the NetworkX-style CPU code")
    ap.add_argument("--operating-points-only", action="store_true",
                    help="only the synthetic stand-ins' ~80 %% / ~90 %% operating points with the global table's "
                         "capacity as a parameter (see synthetic_operating_points)")
    ap.add_argument("--merge-into", type=Path, default=None,
                    help="with --operating-points-only: add them to DIR/results.json under "
                         "'synthetic_operating_points' (costed with its host models) and rewrite DIR/table.md; "
                         "nothing else there changes")
    ap.add_argument("--codesign-trials", type=int, default=None, help="MOBO trials (default 30; 0 skips)")
    ap.add_argument("--codesign-graph", default="cora")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rng-seed", type=int, default=0)
    ap.add_argument("--fresh", action="store_true", help="ignore the finished graphs recorded under OUT/records/")
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/meloppr"))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    for flag in ("seeds", "synthetic_seeds", "synthetic_nx_seeds", "networkx_seeds", "codesign_trials"):
        v = getattr(args, flag)
        if v is not None and v < (0 if flag == "codesign_trials" else 1):
            ap.error(f"--{flag.replace('_', '-')} must be >= {0 if flag == 'codesign_trials' else 1}, got {v}")
    if args.synthetic_scale is not None and not 0 < args.synthetic_scale <= 1:
        ap.error(f"--synthetic-scale must be in (0, 1], got {args.synthetic_scale}")
    if args.merge_into is not None and not args.operating_points_only:
        ap.error("--merge-into needs --operating-points-only")
    if args.merge_into is not None and not (args.merge_into / "results.json").exists():
        ap.error(f"--merge-into: no {args.merge_into / 'results.json'}")
    q = args.quick
    seeds = args.seeds or (10 if q else 100)
    ns_values = [1, 3, 5, 13] if q else list(range(1, 15))
    syn_ns = [1, 4, 13, 32] if q else list(SYNTHETIC_LADDER)
    syn_scale = args.synthetic_scale or (0.003 if q else 1.0)
    syn_seeds = args.synthetic_seeds or (3 if q else 4)
    syn_nx = args.synthetic_nx_seeds or 2
    trials = args.codesign_trials if args.codesign_trials is not None else (8 if q else 30)
    networkx = not args.no_networkx
    cmd = "coexplore reproduce meloppr" + (" --quick" if q else "")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.operating_points_only:
        return _main_operating_points(args, syn_scale, syn_seeds, syn_nx, syn_ns, networkx, cmd)
    t_all = time.perf_counter()
    res: dict[str, Any] = {
        "settings": {"quick": q, "seeds": seeds, "ns_values": ns_values, "synthetic_ns_values": syn_ns, "k": K,
                     "c": C, "alpha": ALPHA, "synthetic_scale": syn_scale, "synthetic_seeds": syn_seeds,
                     "synthetic_networkx_seeds": syn_nx, "networkx": networkx, "codesign_trials": trials,
                     "rng_seed": args.rng_seed, "python": platform.python_version(),
                     "machine": platform.machine(), "numpy": np.__version__},
        "exactness": {}, "graphs": {},
    }
    store = RecordStore(args.out / "records")
    hosts = _host_models(store, q, args.rng_seed, args.fresh)
    res["host_models"] = {k: v.__dict__ for k, v in hosts.items()}
    res["host_graph"] = "cora"
    engines = {kind: PPRFpgaEngine(host=h) for kind, h in hosts.items()}
    for kind, h in hosts.items():
        print(f"host model, {kind} extraction (measured here): {h.cpu_us_per_subgraph:.2f} us/sub-graph + "
              f"{h.cpu_us_per_hop:.2f} us/hop + {h.cpu_ns_per_entry:.1f} ns/entry")
    res["resources"] = {P: PPRFpgaEngine(n_pes=P).utilization() for P in sorted(PAPER_TABLE_I)}
    real = [] if args.synthetic_only else (args.graph or list(PLANETOID))
    todo: list[tuple[str, str, Any, bool, float, int, list[int]]] = []
    for spec in real:
        g = load_graph(spec, args.graph_dir)
        todo.append((g.name, g.name, g, False, 1.0, seeds, ns_values))
    nx_real = {t[0]: (args.networkx_seeds or (LARGE_GRAPH_NX_SOURCES if t[2].n > LARGE_GRAPH_NODES else None))
               for t in todo}
    if "citeseer" in [t[0] for t in todo]:
        res["fig5"] = fig5(todo[[t[0] for t in todo].index("citeseer")][2])
    if not args.no_synthetic:
        for key in args.synthetic_graphs:
            label = f"synthetic-{key}" + ("" if syn_scale == 1 else f"-x{syn_scale:g}")
            todo.append((label, key, None, True, syn_scale, syn_seeds, syn_ns))
    for name, key, g, syn, scale, n_src, ns_here in todo:
        signature = {"graph": name, "sources": n_src, "ns": ns_here, "k": K, "c": C, "rng_seed": args.rng_seed,
                     "scale": scale, "networkx": networkx, "nx_sources": syn_nx if syn else nx_real.get(name),
                     "hosts": res["host_models"], "version": CACHE_VERSION,
                     "cycle_model": PPRFpgaEngine().cycle_model}
        gr = None if args.fresh else _cached(store, KINDS["graph"], signature)
        if gr is None:
            if g is None:
                t = time.perf_counter()
                g = load_graph(f"synthetic-{key}@{scale}", seed=args.rng_seed)
                print(f"{name}: generated |V|={g.n:,} |E|={g.m:,} in {time.perf_counter() - t:.0f} s", flush=True)
            c0 = time.process_time()
            gr = run_graph(name, key, g, synthetic=syn, scale=scale, n_src=n_src, ns_values=ns_here,
                           rng_seed=args.rng_seed, quick=q, networkx=networkx,
                           nx_sources=syn_nx if syn else nx_real.get(name), engines=engines)
            _store(store, KINDS["graph"], signature, gr, cpu_s=time.process_time() - c0)
        else:
            print(f"{name}: kept from {store.root}")
        if syn and "table_bound" not in gr:
            if g is None:
                g = load_graph(f"synthetic-{key}@{scale}", seed=args.rng_seed)
            src = np.random.default_rng(args.rng_seed).choice(g.n, size=min(n_src, g.n), replace=False)
            gr["table_bound"] = table_bound_check(g, src, [ns for ns in (13, max(ns_here)) if ns in ns_here])
            _store(store, KINDS["graph"], signature, gr)
        if syn:
            ops = _operating_points_for(name, key, g, scale=scale, n_src=n_src, ns_values=ns_here,
                                        rng_seed=args.rng_seed, networkx=networkx, nx_sources=syn_nx,
                                        engines=engines, hosts=res["host_models"], store=store, fresh=args.fresh)
            res.setdefault("synthetic_operating_points", {"command": cmd, "graphs": {}})["graphs"][name] = ops
            _print_operating_points(name, ops)
        del g
        res["graphs"][name] = gr
        if "exactness" in gr:
            res["exactness"][name] = gr["exactness"]
        _print_graph(name, gr)
    curves = [gr["fig6"] for gr in res["graphs"].values() if "fig6" in gr]
    if curves:
        res["fig6"] = {rule: {f: {m: float(np.mean([c[rule][f][m] for c in curves])) for m in (*FIG6_METRICS, "used")}
                              for f in curves[0][rule]} for rule in curves[0]}
    # ---- co-design
    if trials > 0 and not args.synthetic_only:
        cgraph = args.codesign_graph
        cd = run_codesign(cgraph, args.graph_dir, trials, n_init=6 if q else 10, n_queries=8 if q else 24,
                          out=args.out, workers=args.workers, seed=args.rng_seed)
        cd["graph"] = cgraph
        res["codesign"] = cd
        plot_front(cd, args.out / "codesign_front_vs_paper.png")
        pm = cd["paper_point_metrics"]
        print(f"co-design on {cgraph}: {cd['trials']} trials, front {cd['front_size']} points; paper point "
              f"precision {pm['precision']:.3f}, {pm['latency_ms']:.3f} ms, {pm['bram36']:g} BRAM36; "
              f"dominated: {cd['paper_point_dominated']}")
    res["seconds"] = time.perf_counter() - t_all
    (args.out / "results.json").write_text(json.dumps(jsonable(res), indent=1))
    write_table(res, args.out / "table.md", cmd)
    if res["graphs"]:
        plot_curves(res, args.out / "precision_vs_next_stage.png")
    if "fig6" in res:
        plot_fig6(res["fig6"], args.out / "fig6_rules.png")
    print(f"results: {args.out / 'results.json'}, table: {args.out / 'table.md'} ({res['seconds']:.0f} s)")
    return res


if __name__ == "__main__":
    main()
