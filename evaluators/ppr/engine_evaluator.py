"""Score a joint FPGA-engine x MeLoPPR-plan point: precision@k, modelled latency, BRAM.

:class:`MeLoPPRCoDesign` is an evaluator (``point -> Evaluation``) for the co-design
space of :func:`mappers.ppr_plan.codesign_space`. For a fixed sample of query sources
of one graph (``n_queries`` sources drawn without replacement with ``query_seed``):

* **precision** -- the mean precision@k of :func:`evaluators.ppr.meloppr` run with the
  point's plan (stage split, next-stage nodes, ``c * k`` table) in the engine's integer
  arithmetic (``quantum = 2^-(int_bits - 2)``: the seed's unit mass fills the word but
  for a sign and a guard bit; see :func:`evaluators.ppr.diffuse`), against the exact
  ``L``-step local PPR (:func:`evaluators.ppr.local_ppr`). ``precision="k"`` is the
  paper's ``|T^ ∩ T| / k``; ``"pprpy"`` is the thresholded variant of MeLoPPR's
  ``PPR.py`` (:func:`evaluators.ppr.precision_at_k_pprpy`).
* **latency_ms** -- the mean over the queries of
  :meth:`accelerators.ppr_fpga.PPRFpgaEngine.query_latency`, driven by each query's
  actual sub-graphs (sizes and per-node degrees recorded by ``meloppr``); also the
  95th percentile and the CPU / transfer / FPGA parts.
* **bram36**, **lut** (and ``_pct`` of the XC7K325T) -- the engine's resource model.
* ``fpga_mem_kib`` -- the mean per-query on-chip bytes of its largest sub-graph (the
  paper's FPGA memory metric).
* ``subgraphs`` -- the mean number of sub-graphs per query; ``conflict_pct`` -- the share
  of FPGA cycles that are scheduler-conflict stalls. ``precision``, ``bram36``, ``lut`` and
  ``subgraphs`` are unitless (a fraction and counts).

A point whose engine does not fit the device raises :class:`~evaluators.Infeasible`
(normally the space's known constraint rejects it first), and so does a point for which
some query has a sub-graph that does not fit the PEs' tables even when split over all of
them (outcome constraint ``capacity_violation`` = the fraction of such queries).

**Caching.** Ground truth is computed once per ``(L, k)``; the software side (precisions
and sub-graphs) once per ``(plan, int_bits)`` -- the hardware-only parameters
(``n_pes``, ``bram_words_per_table``, placement) reuse it, so most points cost only the
latency model. Caches live in the evaluator object (one per worker process).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from accelerators.ppr_fpga import NUMPY_HOST, HostModel, PPRFpgaEngine, Subgraph
from evaluators.base import Evaluation, Infeasible
from evaluators.ppr.diffusion import (
    ALPHA,
    PPRResult,
    local_ppr,
    meloppr,
    precision_at_k,
    precision_at_k_pprpy,
)
from evaluators.ppr.graph import Graph, bfs_ball, graph_path, induced, load_graph
from mappers.ppr_plan import MeLoPPRPlan

__all__ = [
    "HOST_EXTRACTORS",
    "PRECISION_METRICS",
    "MeLoPPRCoDesign",
    "SoftwareResult",
    "baseline_subgraph",
    "calibrate_host",
    "int_quantum",
    "meloppr_subgraphs",
]

PRECISION_METRICS = ("k", "pprpy")


def int_quantum(int_bits: int | None) -> float | None:
    """Score resolution of an ``int_bits`` integer datapath: ``2^-(int_bits - 2)`` (unit
    seed mass = ``2^(int_bits-2)`` integer units, leaving a sign and a guard bit);
    ``None`` -> exact floating point."""
    if int_bits is None:
        return None
    if isinstance(int_bits, bool) or not isinstance(int_bits, int | np.integer) or int_bits < 4:
        raise ValueError(f"int_bits must be an integer >= 4 or None, got {int_bits!r}")
    return 2.0 ** -(int(int_bits) - 2)


def meloppr_subgraphs(result: PPRResult, l1: int, l2: int) -> list[Subgraph]:
    """The sub-graphs a ``meloppr(..., record_subgraphs=True)`` query diffused, as
    :class:`~accelerators.ppr_fpga.Subgraph` s (stage 1 first)."""
    degs = result.stats.extra.get("subgraph_degrees")
    if degs is None:
        raise ValueError("meloppr result has no recorded sub-graphs: call it with record_subgraphs=True")
    nbrs = result.stats.extra.get("subgraph_neighbors") or [None] * len(degs)
    out = []
    for i, (d, nb) in enumerate(zip(degs, nbrs, strict=True)):
        steps = l1 if i == 0 else l2
        out.append(Subgraph(int(d.size), int(d.sum()), steps, steps, np.asarray(d, dtype=np.int64), nb))
    return out


def baseline_subgraph(g: Graph, source: int, L: int = 6) -> Subgraph:
    """The single-stage local PPR's one sub-graph ``G_L(source)`` (``L`` steps)."""
    ball = bfs_ball(g, source, L)
    a = induced(g, ball)
    d = np.diff(a.indptr).astype(np.int64)
    return Subgraph(int(ball.size), int(d.sum()), L, L, d, a.indices.astype(np.int32))


HOST_EXTRACTORS = ("native", "numpy", "networkx")


def calibrate_host(g: Graph, n_sources: int = 40, depths: Sequence[int] = (1, 2, 3, 4, 6),
                   repeats: int = 3, seed: int = 0, base: HostModel | None = None,
                   extractor: str = "native") -> HostModel:
    """Measure sub-graph extraction on this machine and fit the
    :class:`~accelerators.ppr_fpga.HostModel` CPU constants
    (``cpu_us_per_subgraph``, ``cpu_us_per_hop``, ``cpu_ns_per_entry``) by non-negative
    least squares on the best of ``repeats`` CPU-time (``time.process_time``) timings of
    each ball, so that other jobs on a shared machine do not inflate them.

    ``extractor="native"`` (default) times the compiled BFS + induced-CSR kernel of
    :class:`evaluators.ppr.native.NativeExtractor` -- what a native host program does;
    its output already is the PE table layout, so ``cpu_ns_per_format_word`` is 0.
    ``"numpy"`` times :func:`evaluators.ppr.bfs_ball` + :func:`evaluators.ppr.induced`
    (vectorized numpy, interpreter overhead per BFS level) and keeps ``base``'s
    formatting cost; ``"networkx"`` times
    :func:`evaluators.ppr.networkx_cpu.subgraph_csr` (BFS, ``G.subgraph`` and its CSR
    in NetworkX, as a host written like the paper's CPU code would) with no separate
    formatting cost."""
    from scipy.optimize import nnls

    if extractor not in HOST_EXTRACTORS:
        raise ValueError(f"calibrate_host: extractor must be one of {list(HOST_EXTRACTORS)}, got {extractor!r}")
    if extractor == "native":
        from evaluators.ppr.native import NativeExtractor

        ex = NativeExtractor(g)
        ex.extract_arrays(0, 1)  # compile outside the timings

        def run(s: int, d: int) -> int:
            nodes, _, indices = ex.extract_arrays(s, d)
            return nodes.size + indices.size
    elif extractor == "networkx":
        from evaluators.ppr.networkx_cpu import subgraph_csr, to_networkx

        G = to_networkx(g)

        def run(s: int, d: int) -> int:
            nodes, a = subgraph_csr(G, s, d)
            return len(nodes) + a.nnz
    else:
        def run(s: int, d: int) -> int:
            ball = bfs_ball(g, s, d)
            return ball.size + induced(g, ball).nnz

    rng = np.random.default_rng(seed)
    rows, times = [], []
    for s in rng.choice(g.n, size=min(n_sources, g.n), replace=False).tolist():
        for d in depths:
            best = math.inf
            for _ in range(repeats):
                t0 = time.process_time()
                size = run(s, d)
                best = min(best, time.process_time() - t0)
            rows.append((1.0, float(d), float(size)))
            times.append(best)
    coef = nnls(np.asarray(rows), np.asarray(times))[0]
    base = base or (NUMPY_HOST if extractor == "numpy" else HostModel())
    return HostModel(cpu_us_per_subgraph=float(coef[0] * 1e6), cpu_us_per_hop=float(coef[1] * 1e6),
                     cpu_ns_per_entry=float(coef[2] * 1e9),
                     cpu_ns_per_format_word=base.cpu_ns_per_format_word if extractor == "numpy" else 0.0,
                     link_gb_per_s=base.link_gb_per_s, link_latency_us=base.link_latency_us)


@dataclass
class SoftwareResult:
    """What a plan does on the query sample, independent of the placement/hardware."""

    precision: np.ndarray
    subgraphs: list[list[Subgraph]]
    cpu_wall_ms: np.ndarray
    next_stage_used: np.ndarray
    refused: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)


class MeLoPPRCoDesign:
    """Evaluator of joint FPGA x plan points (see the module docstring).

    Args:
        graph: ``citeseer`` / ``cora`` / ``pubmed`` (shipped with coexplore), a name with
            an edge list in ``graph_dir``,
            ``synthetic-amazon[@scale]`` etc., or a path to a SNAP edge list
            (:func:`evaluators.ppr.load_graph`).
        n_queries: query sources per evaluation (fixed sample).
        query_seed: seed of the source sample.
        graph_dir: directory of ``{name}_adj.txt`` (default ``$COEXPLORE_GRAPH_DIR``,
            else the packaged graphs; :func:`evaluators.ppr.graph_path`).
        precision: ``"k"`` (paper) or ``"pprpy"``.
        quantize: emulate the ``int_bits`` integer datapath in the precision (default);
            ``False`` -> floating point.
        host: :class:`~accelerators.ppr_fpga.HostModel` or a dict of its fields.
        alpha: continuation probability (0.95).
    """

    def __init__(self, graph: str = "cora", n_queries: int = 32, query_seed: int = 0,
                 graph_dir: str | None = None, precision: str = "k", quantize: bool = True,
                 host: HostModel | Mapping[str, float] | None = None, alpha: float = ALPHA) -> None:
        if not isinstance(graph, str) or not graph:
            raise ValueError(f"MeLoPPRCoDesign: graph must be a non-empty string, got {graph!r}")
        if isinstance(n_queries, bool) or not isinstance(n_queries, int) or n_queries < 1:
            raise ValueError(f"MeLoPPRCoDesign: n_queries must be a positive integer, got {n_queries!r}")
        if precision not in PRECISION_METRICS:
            raise ValueError(f"MeLoPPRCoDesign: precision must be one of {list(PRECISION_METRICS)}, "
                             f"got {precision!r}")
        if not 0 < alpha < 1:
            raise ValueError(f"MeLoPPRCoDesign: alpha must be in (0, 1), got {alpha!r}")
        if host is None:
            host = HostModel()
        elif isinstance(host, Mapping):
            host = HostModel(**host)
        elif not isinstance(host, HostModel):
            raise ValueError(f"MeLoPPRCoDesign: host must be a HostModel or a mapping, got {host!r}")
        is_named = not (graph.startswith("synthetic-") or "/" in graph or graph.endswith((".txt", ".gz")))
        if is_named:
            graph_path(graph, graph_dir)  # raises FileNotFoundError naming where it looked
        elif not graph.startswith("synthetic-") and not Path(graph).exists():
            raise FileNotFoundError(
                f"MeLoPPRCoDesign: graph {graph!r}: {graph} not found (nothing is downloaded)")
        self.graph_spec = graph
        self.graph_dir = graph_dir
        self.n_queries = n_queries
        self.query_seed = query_seed
        self.precision_metric = precision
        self.quantize = bool(quantize)
        self.host = host
        self.alpha = float(alpha)
        self._g: Graph | None = None
        self._sources: np.ndarray | None = None
        self._truth: dict[tuple[int, int], list[PPRResult]] = {}
        self._soft: dict[tuple, SoftwareResult] = {}

    # -- data --------------------------------------------------------------------------------

    @property
    def graph(self) -> Graph:
        if self._g is None:
            self._g = load_graph(self.graph_spec, self.graph_dir)
        return self._g

    @property
    def sources(self) -> np.ndarray:
        """The fixed query sample (node indices)."""
        if self._sources is None:
            g = self.graph
            rng = np.random.default_rng(self.query_seed)
            self._sources = rng.choice(g.n, size=min(self.n_queries, g.n), replace=False)
        return self._sources

    def truth(self, L: int) -> list[PPRResult]:
        """Exact ``L``-step local PPR of every query (cached)."""
        key = (L, 0)
        if key not in self._truth:
            self._truth[key] = [local_ppr(self.graph, int(s), L=L, alpha=self.alpha) for s in self.sources]
        return self._truth[key]

    def software(self, plan: MeLoPPRPlan, int_bits: int | None) -> SoftwareResult:
        """Precision and sub-graphs of ``plan`` on the query sample (cached)."""
        quantum = int_quantum(int_bits) if self.quantize else None
        key = (plan.key(), quantum, self.precision_metric)
        hit = self._soft.get(key)
        if hit is not None:
            return hit
        truths = self.truth(plan.L)
        prec, sgs, wall, used, refused = [], [], [], [], []
        for s, truth in zip(self.sources.tolist(), truths):
            r = meloppr(self.graph, s, l1=plan.l1, l2=plan.l2, alpha=self.alpha, k=plan.k,
                        next_stage=plan.next_stage, c=plan.c, quantum=quantum, record_subgraphs=True)
            if self.precision_metric == "k":
                prec.append(precision_at_k(r.top(plan.k), truth.top(plan.k), plan.k))
            else:
                prec.append(precision_at_k_pprpy(r, truth, plan.k))
            sgs.append(meloppr_subgraphs(r, plan.l1, plan.l2))
            wall.append(r.stats.wall_s * 1e3)
            used.append(r.stats.extra["next_stage_used"])
            refused.append(r.stats.extra["refused"])
        res = SoftwareResult(np.asarray(prec), sgs, np.asarray(wall), np.asarray(used), np.asarray(refused))
        self._soft[key] = res
        return res

    # -- evaluation --------------------------------------------------------------------------

    def __call__(self, point: Mapping[str, Any]) -> Evaluation:
        plan = MeLoPPRPlan.from_point(point)
        engine = PPRFpgaEngine.from_point(point, host=self.host)
        res = engine.resources()
        util = engine.utilization()
        if not engine.fits_device():
            d = engine.device
            raise Infeasible(
                f"engine does not fit the {d.name}: {res['lut']:.0f}/{d.lut} LUT, "
                f"{res['bram36']:g}/{d.bram36} BRAM36",
                lut_excess=res["lut"] / d.lut - 1, bram36_excess=res["bram36"] / d.bram36 - 1)
        sw = self.software(plan, engine.int_bits)
        lat = [engine.query_latency(q, plan.pe_assignment, result_entries=plan.table_entries)
               for q in sw.subgraphs]
        bad = [x for x in lat if not x.fits]
        if bad:
            frac = len(bad) / len(lat)
            raise Infeasible(f"{len(bad)}/{len(lat)} queries have a sub-graph that does not fit "
                             f"the on-chip tables, e.g. {bad[0].reason}", capacity_violation=frac)
        ms = np.array([x.latency_ms for x in lat])
        metrics = {
            "precision": float(sw.precision.mean()),
            "latency_ms": float(ms.mean()),
            "latency_p95_ms": float(np.percentile(ms, 95)),
            "bram36": res["bram36"],
            "lut": res["lut"],
            "bram_pct": util["bram_pct"],
            "lut_pct": util["lut_pct"],
            "fpga_mem_kib": float(np.mean([x.fpga_peak_bytes for x in lat]) / 1024),
            "cpu_ms": float(np.mean([x.cpu_ms for x in lat])),
            "transfer_ms": float(np.mean([x.transfer_ms for x in lat])),
            "fpga_ms": float(np.mean([x.fpga_busy_ms for x in lat])),
            "subgraphs": float(np.mean([x.n_subgraphs for x in lat])),
            "conflict_pct": float(100 * sum(x.conflict_cycles for x in lat)
                                  / max(1, sum(x.fpga_cycles for x in lat))),
        }
        info = {
            "graph": self.graph.name, "n_queries": int(self.sources.size),
            "precision_metric": self.precision_metric,
            "quantum": int_quantum(engine.int_bits) if self.quantize else None,
            "next_stage_used_mean": float(sw.next_stage_used.mean()),
            "table_refusals_mean": float(sw.refused.mean()),
            "cpu_meloppr_wall_ms_mean": float(sw.cpu_wall_ms.mean()),
            "how": "precision measured by running meloppr on the query sample; latency, BRAM "
                   "and LUT from the accelerators.ppr_fpga model",
        }
        return Evaluation(metrics=metrics, info=info)

    def evaluate(self, points: Sequence[Mapping[str, Any]]) -> list[Evaluation]:
        """Batch form: one :class:`Evaluation` per point (infeasible ones included)."""
        from evaluators.base import EvalStatus

        out = []
        for p in points:
            try:
                out.append(self(p))
            except Infeasible as e:
                out.append(Evaluation(constraints=e.constraints, status=EvalStatus.INFEASIBLE,
                                      reason=e.reason))
        return out

    def __getstate__(self) -> dict[str, Any]:
        # ship the configuration, not the caches or the graph: workers rebuild them
        state = dict(self.__dict__)
        state["_g"] = None
        state["_truth"] = {}
        state["_soft"] = {}
        return state
