"""Local personalized PageRank: truncated graph diffusion, MeLoPPR, push, power iteration.

Conventions (MeLoPPR: Li, Chen, Zirnheld, Li, Hao, DAC 2021, arXiv 2104.09616, Secs. II and
IV; the authors' code, github.com/sharc-lab/MeLoPPR ``PPR.py``):

* ``alpha`` is the **continuation** probability (default 0.95); ``1 - alpha`` is the
  teleport (stop) probability.
* ``W = A D^-1`` is column stochastic, ``D`` = diag of the *full graph's* degrees
  (``Graph.deg``: adjacency row sums, a self-loop counts 1). For an undirected graph
  ``W x = A (x / deg)``.
* Graph diffusion ``GD^(L)(S0)``: ``S_{l+1} = (1-alpha) S0 + alpha W S_l``, ``S_0 = S0``;
  ``S_L = (1-alpha) sum_{k<L} alpha^k W^k S0 + alpha^L W^L S0`` (Eq. 1). The *residual*
  is the pure walk distribution ``R_L = W^L S0``.
* Ground truth (:func:`local_ppr`) = ``GD^(L)(e_s)`` with ``L = 6`` computed on the BFS
  ball ``G_L(s)``; precision@k is measured against its top-k.

**Why diffusion on the ball is exact, and which degrees it uses.** ``(W^l e_s)[u]`` is
non-zero only for ``dist(s, u) <= l``. After ``l < L`` steps the only nodes holding mass
are within ``l <= L - 1`` hops, and every neighbour of such a node is within ``L`` hops,
so it lies in the ball and is a column/row of the induced adjacency. Hence
``A_ball (x / deg)`` equals ``(A (x / deg))`` restricted to the ball for every iterate
that the recursion multiplies, *provided* ``deg`` is the degree the whole-graph ``W``
uses. We pass the full-graph degrees ``g.deg[ball]``: then the ball diffusion is the
whole-graph diffusion restricted to ``L`` steps, by construction and for any ``steps``
(for ``steps > depth`` mass that would leave the ball is dropped, never redistributed).
The induced subgraph's own row sums (MeLoPPR's ``PPR.py``) differ only at nodes at
exactly ``L`` hops, which lose their edges to depth ``L + 1``; those nodes receive mass
only at the last step and never divide by their degree, so they give the same result
for ``steps <= depth`` too (``tests/evaluators/test_ppr.py`` checks both). Global degrees
are the safe default; ``diffuse(..., deg=None)`` gives the subgraph convention.

**Stage and linear decomposition (Eqs. 6, 8)** for ``L = l1 + l2``::

    GD^(L)(S0) = [GD^(l1)(S0) - alpha^l1 R_l1] + alpha^l1 sum_v R_l1[v] GD^(l2)(e_v)

:func:`meloppr` computes stage 1 on ``G_l1(s)`` and, for the selected next-stage nodes
``v`` (largest residual first), ``GD^(l2)(R_l1[v] e_v)`` on ``G_l2(v)``, all accumulated
into a global score table. With every node of non-zero residual and an unbounded table
it reproduces :func:`local_ppr` to rounding (~1e-16).

**Global score table (``c * k`` entries).** A node's entry accumulates every contribution
offered to it; a node *not yet* in the table is admitted only while the table holds fewer
than ``c * k`` entries (first come, no eviction; contributions of refused nodes are
lost, and counted in ``stats.extra["refused"]``). Contributions are offered in this
order: stage 1 (value ``S_l1 - alpha^l1 R_l1``) in descending order of the stage-1 score
``S_l1`` (the same admission order as ``PPR.py``, which inserts ``S_l1`` and then
subtracts ``alpha^l1 R_l1``: a node at exactly ``l1`` hops, whose value is 0 up to
rounding, is admitted too, and so is there for its stage-2 contributions), then each
stage-2 ball in next-stage order, its entries in descending order of
``alpha^l1 GD^(l2)(R_l1[v] e_v)``; ties break by smaller node index; nodes whose
ordering score is exactly 0 are not offered. ``c=None`` keeps everything.

**Results** (:class:`PPRResult`) are sparse vectors: ``nodes`` (unique ``int64`` node
indices of the :class:`~evaluators.ppr.graph.Graph`, any order) and ``values``
(``float64``); ``scores`` gives a ``{node: score}`` dict, ``dense(n)`` a dense vector,
``top(k)`` the k best node indices. Map indices to original ids with ``g.node_ids``.

**Statistics** (:class:`PPRStats`), per query:

* ``wall_s`` (with ``bfs_s``: ball extraction incl. building the induced CSR, and
  ``diffusion_s``) from ``time.perf_counter``; ``cpu_s`` the query's CPU time
  (``time.process_time``), which other jobs on a shared machine do not inflate; with ``trace_memory=True`` the query
  runs under ``tracemalloc`` (slower), so time and memory should come from separate
  calls, as the benchmark does.
* ``tracemalloc_peak_bytes``: peak traced allocation during the query above what was
  allocated at its start (``None`` unless ``trace_memory=True``).
* ``model_peak_bytes``: exact bytes of the structures a query holds at once, maximized
  over its stages: the sub-graph's CSR (``data``, ``indices``, ``indptr``), its node-id
  array and degree vector, the score vectors ``S0, S, R`` and, for MeLoPPR stage 2, the
  global table (ids + values) and the next-stage list (ids + residuals). BFS temporaries
  are not included (see ``model_parts`` for the breakdown of the peak stage).
* ``nodes_touched`` / ``edges_touched``: summed over the sub-graphs processed (a node in
  two balls counts twice) -- ``|V|`` and ``|E|`` of each ball; for push, the pushes and
  the adjacency entries they scan; for power iteration, ``n`` and ``nnz`` per iteration.
* ``stage_sizes``: ``[(|V|, |E|), ...]`` of every diffused sub-graph in order (for
  MeLoPPR: the stage-1 ball, then each stage-2 ball), ``|E|`` as :attr:`Graph.m` counts
  (self-loops once); ``stage_nnz``: the matching CSR entry counts (neighbour-list
  lengths, ``2|E| - self-loops``).
"""

from __future__ import annotations

import math
import time
import tracemalloc
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from evaluators.ppr.graph import Graph, bfs_ball, edge_count, induced

__all__ = [
    "ALPHA",
    "PPRResult",
    "PPRStats",
    "diffuse",
    "forward_push",
    "local_ppr",
    "meloppr",
    "power_iteration_ppr",
    "precision_at_k",
    "precision_at_k_pprpy",
    "trace_peak",
]

#: Continuation probability (MeLoPPR's ``PPR.py``); teleport = 1 - ALPHA.
ALPHA = 0.95


@dataclass
class PPRStats:
    """Per-query measurements (see the module docstring for definitions)."""

    method: str
    wall_s: float = 0.0
    cpu_s: float = 0.0
    bfs_s: float = 0.0
    diffusion_s: float = 0.0
    tracemalloc_peak_bytes: int | None = None
    model_peak_bytes: int = 0
    model_parts: dict[str, int] = field(default_factory=dict)
    nodes_touched: int = 0
    edges_touched: int = 0
    stage_sizes: list[tuple[int, int]] = field(default_factory=list)
    stage_nnz: list[int] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


@dataclass
class PPRResult:
    """Sparse score vector: ``values[i]`` is the score of node index ``nodes[i]``."""

    nodes: np.ndarray
    values: np.ndarray
    stats: PPRStats
    residual_nodes: np.ndarray | None = None
    residual_values: np.ndarray | None = None

    def top(self, k: int, positive_only: bool = True) -> np.ndarray:
        """The (at most) ``k`` node indices with the largest scores, best first.

        Ties break by smaller node index. With ``positive_only`` (default) nodes whose
        score is ``<= 0`` are never returned, so fewer than ``k`` may come back.
        """
        nodes, values = self.nodes, self.values
        if positive_only:
            pos = values > 0
            nodes, values = nodes[pos], values[pos]
        order = np.lexsort((nodes, -values))[:k]
        return nodes[order]

    @property
    def scores(self) -> dict[int, float]:
        return dict(zip(self.nodes.tolist(), self.values.tolist()))

    def dense(self, n: int) -> np.ndarray:
        out = np.zeros(n)
        out[self.nodes] = self.values
        return out

    def residual_dense(self, n: int) -> np.ndarray:
        out = np.zeros(n)
        if self.residual_nodes is not None:
            out[self.residual_nodes] = self.residual_values
        return out


def precision_at_k(estimate_top, truth_top, k: int) -> float:
    """``|top_k(estimate) ∩ top_k(truth)| / k`` (the paper's Prec(s, k)).

    Both arguments are sequences of node indices, best first; only their first ``k``
    entries are used. The denominator is always ``k``, so when the truth has fewer than
    ``k`` nodes the precision cannot reach 1.
    """
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    a = set(np.asarray(estimate_top)[:k].tolist())
    b = set(np.asarray(truth_top)[:k].tolist())
    return len(a & b) / k


def precision_at_k_pprpy(
    estimate: PPRResult, truth: PPRResult, k: int, threshold: float = 1e-6
) -> float:
    """The variant in MeLoPPR's ``PPR.py``: drop scores ``<= threshold`` from both
    top-k lists, then divide the overlap by the larger list's length.

    ``PPR.py`` seeds the source with mass 100 and drops scores ``<= 1e-4``; with our
    unit seed mass that is ``threshold = 1e-6``. Returns 1.0 when both lists are empty.
    """

    def kept(r: PPRResult) -> set[int]:
        t = r.top(k, positive_only=True)
        return set(t[_lookup(r, t) > threshold].tolist())

    a, b = kept(estimate), kept(truth)
    if not a and not b:
        return 1.0
    return len(a & b) / max(len(a), len(b))


def _lookup(r: PPRResult, nodes: np.ndarray) -> np.ndarray:
    order = np.argsort(r.nodes)
    pos = np.searchsorted(r.nodes, nodes, sorter=order)
    return r.values[order[pos]]


@contextmanager
def trace_peak(enabled: bool):
    """Context manager: yields a one-element list that receives, on exit, the peak
    tracemalloc allocation (bytes) above what was allocated on entry; ``None`` when not
    ``enabled``."""
    box: list[int | None] = [None]
    if not enabled:
        yield box
        return
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    try:
        yield box
    finally:
        box[0] = max(0, tracemalloc.get_traced_memory()[1] - base)
        if started:
            tracemalloc.stop()


def _nbytes(*arrays) -> int:
    return int(sum(a.nbytes for a in arrays))


def _csr_bytes(a: sp.csr_array) -> int:
    return _nbytes(a.data, a.indices, a.indptr)


def _inv(deg: np.ndarray) -> np.ndarray:
    """1/deg with 1/0 := 0 (an isolated node has no out-edges: its walk mass stops)."""
    out = np.zeros(deg.shape, dtype=np.float64)
    np.divide(1.0, deg, out=out, where=deg > 0)
    return out


def diffuse(
    adj_sub: sp.csr_array,
    s0: np.ndarray,
    steps: int,
    alpha: float = ALPHA,
    deg: np.ndarray | None = None,
    quantum: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``steps`` iterations of graph diffusion on a (sub)graph; returns ``(S, R)``.

    ``S = GD^(steps)(s0)`` via ``S <- (1-alpha) s0 + alpha W S`` from ``S = s0``, and
    ``R = W^steps s0``, with ``W = A D^-1`` (``A = adj_sub``, symmetric). ``deg`` is the
    degree of each row's node; pass the full graph's degrees (``g.deg[nodes]``) for the
    whole-graph ``W`` restricted to the sub-graph (what :func:`local_ppr` and
    :func:`meloppr` do); ``None`` uses ``adj_sub``'s own row sums. See the module
    docstring for why both are exact on a BFS ball of depth ``>= steps``.

    ``quantum`` emulates MeLoPPR's integer datapath (paper Sec. V: 32-bit integer scores,
    the division by the degree done in logic): scores are integer multiples of
    ``quantum`` (the seed's unit mass is ``1 / quantum`` integer units), and each
    per-node share ``S / deg`` and each ``alpha``-scaled sum is rounded *down* to a
    multiple of ``quantum``, as integer division and a shift-based ``alpha`` multiply
    truncate. ``None`` (default) is exact floating point.
    """
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if quantum is not None and not (quantum > 0 and math.isfinite(quantum)):
        raise ValueError(f"quantum must be a positive number or None, got {quantum!r}")
    s0 = np.asarray(s0, dtype=np.float64)
    if deg is None:
        deg = np.asarray(adj_sub.sum(axis=1)).ravel()
    inv = _inv(np.asarray(deg, dtype=np.float64))
    S = s0.copy()
    R = s0.copy()
    teleport = (1.0 - alpha) * s0
    if quantum is None:
        for _ in range(steps):
            S = teleport + alpha * (adj_sub @ (S * inv))
            R = adj_sub @ (R * inv)
        return S, R

    def q(x: np.ndarray) -> np.ndarray:
        return np.floor(x / quantum) * quantum

    S, R, teleport = q(S), q(R), q(teleport)
    for _ in range(steps):
        S = teleport + q(alpha * (adj_sub @ q(S * inv)))
        R = adj_sub @ q(R * inv)
    return S, R


def _onehot(size: int, pos: int, value: float = 1.0) -> np.ndarray:
    v = np.zeros(size)
    v[pos] = value
    return v


def local_ppr(
    g: Graph, source: int, L: int = 6, alpha: float = ALPHA, trace_memory: bool = False
) -> PPRResult:
    """Ground truth: ``GD^(L)(e_source)`` on the BFS ball ``G_L(source)``.

    Exactly the whole-graph ``L``-step diffusion (non-zero only on the ball). The result
    also carries the residual ``W^L e_s`` (``residual_nodes``/``residual_values``).
    """
    stats = PPRStats(method=f"local_ppr(L={L})")
    with trace_peak(trace_memory) as peak:
        c0 = time.process_time()
        t0 = time.perf_counter()
        ball = bfs_ball(g, source, L)
        a = induced(g, ball)
        deg = g.deg[ball]
        t1 = time.perf_counter()
        s0 = _onehot(ball.size, 0)
        S, R = diffuse(a, s0, L, alpha, deg=deg)
        t2 = time.perf_counter()
    stats.tracemalloc_peak_bytes = peak[0]
    stats.cpu_s = time.process_time() - c0
    stats.wall_s, stats.bfs_s, stats.diffusion_s = t2 - t0, t1 - t0, t2 - t1
    e = edge_count(a)
    stats.stage_sizes = [(int(ball.size), e)]
    stats.stage_nnz = [int(a.nnz)]
    stats.nodes_touched, stats.edges_touched = int(ball.size), e
    stats.model_parts = {
        "subgraph_csr": _csr_bytes(a),
        "node_ids": _nbytes(ball),
        "degrees": _nbytes(deg),
        "score_vectors": _nbytes(s0, S, R),
    }
    stats.model_peak_bytes = sum(stats.model_parts.values())
    return PPRResult(ball, S, stats, residual_nodes=ball, residual_values=R)


class _ScoreTable:
    """Global score table: sorted node ids + values, at most ``capacity`` entries,
    first-come admission, no eviction (``capacity=None``: unbounded)."""

    def __init__(self, capacity: int | None):
        self.capacity = capacity
        self.keys = np.empty(0, dtype=np.int64)
        self.vals = np.empty(0, dtype=np.float64)
        self.refused = 0

    @property
    def nbytes(self) -> int:
        return _nbytes(self.keys, self.vals)

    def offer(self, nodes: np.ndarray, vals: np.ndarray, order_key: np.ndarray) -> None:
        """Add ``vals`` to ``nodes`` (unique); new nodes admitted in descending
        ``order_key`` (ties: smaller node) while there is room. Entries whose
        ``order_key`` is exactly 0 are not offered."""
        nz = order_key != 0
        nodes, vals, order_key = nodes[nz], vals[nz], order_key[nz]
        if nodes.size == 0:
            return
        keys = self.keys
        if keys.size:
            pos = np.searchsorted(keys, nodes)
            present = (pos < keys.size) & (keys[np.minimum(pos, keys.size - 1)] == nodes)
            self.vals[pos[present]] += vals[present]
            new = ~present
        else:
            new = np.ones(nodes.size, dtype=bool)
        if not new.any():
            return
        new_nodes, new_vals, new_key = nodes[new], vals[new], order_key[new]
        if self.capacity is not None:
            room = max(0, self.capacity - keys.size)
            if new_nodes.size > room:
                keep = np.lexsort((new_nodes, -new_key))[:room]
                self.refused += new_nodes.size - keep.size
                new_nodes, new_vals = new_nodes[keep], new_vals[keep]
            if new_nodes.size == 0:
                return
        all_keys = np.concatenate([keys, new_nodes])
        all_vals = np.concatenate([self.vals, new_vals])
        order = np.argsort(all_keys, kind="stable")
        self.keys, self.vals = all_keys[order], all_vals[order]


def _select_next_stage(resid_nodes, resid_vals, next_stage):
    """Next-stage nodes: non-zero residual, largest first (ties: smaller node)."""
    nz = resid_vals != 0
    nodes, vals = resid_nodes[nz], resid_vals[nz]
    order = np.lexsort((nodes, -vals))
    count = nodes.size
    if next_stage is None:
        take = count
    elif isinstance(next_stage, bool):
        raise TypeError("next_stage must be None, an int count or a float fraction")
    elif isinstance(next_stage, (int, np.integer)):
        if next_stage < 0:
            raise ValueError(f"next_stage count must be >= 0, got {next_stage}")
        take = min(int(next_stage), count)
    elif isinstance(next_stage, (float, np.floating)):
        if not 0 < next_stage <= 1:
            raise ValueError(f"next_stage fraction must be in (0, 1], got {next_stage}")
        take = min(count, math.ceil(next_stage * count - 1e-9))
    else:
        raise TypeError("next_stage must be None, an int count or a float fraction")
    sel = order[:take]
    return nodes[sel], vals[sel], count


def meloppr(
    g: Graph,
    source: int,
    l1: int = 3,
    l2: int = 3,
    alpha: float = ALPHA,
    k: int = 200,
    next_stage: int | float | None = None,
    c: int | None = 10,
    trace_memory: bool = False,
    quantum: float | None = None,
    record_subgraphs: bool = False,
) -> PPRResult:
    """MeLoPPR two-stage local PPR approximating ``GD^(l1+l2)(e_source)``.

    Stage 1: diffusion of ``e_s`` for ``l1`` steps on ``G_l1(s)``, keeping ``S_l1`` and
    the residual ``R_l1``. Stage 2: for each next-stage node ``v`` -- the nodes with
    non-zero ``R_l1``, largest first; ``next_stage`` = ``None`` (all), an ``int`` count
    (``0`` = stage 1 only), or a ``float`` in ``(0, 1]`` = that fraction of the non-zero
    residual nodes, rounded up -- diffuse ``R_l1[v] e_v`` for ``l2`` steps on
    ``G_l2(v)`` and add ``alpha^l1`` times it (Eq. 8). Scores accumulate in a global
    table of at most ``c * k`` entries (``c=None``: unbounded); see the module docstring
    for the admission policy. ``k`` only sizes the table. With ``next_stage=None`` and
    ``c=None`` the result equals :func:`local_ppr` with ``L = l1 + l2``.

    ``quantum`` runs every diffusion in emulated integer arithmetic (see :func:`diffuse`).
    ``record_subgraphs=True`` keeps, in ``stats.extra``, ``"subgraph_degrees"`` (the
    in-sub-graph degree of every node of every diffused sub-graph, in BFS order -- what
    an FPGA engine model needs), ``"subgraph_neighbors"`` (each sub-graph's CSR neighbour
    indices, ball-local, row by row in the same order: what the engine's scheduler-stall
    simulation needs) and ``"next_stage_nodes"``.
    """
    if l1 < 1 or l2 < 0:
        raise ValueError(f"need l1 >= 1 and l2 >= 0, got l1={l1}, l2={l2}")
    stats = PPRStats(method=f"meloppr(l1={l1},l2={l2},next_stage={next_stage},c={c})")
    cap = None if c is None else int(c) * int(k)
    decay = alpha**l1
    bfs_s = diff_s = 0.0
    parts_peak: dict[str, int] = {}
    with trace_peak(trace_memory) as peak:
        c0 = time.process_time()
        t0 = time.perf_counter()
        # ---- stage 1 ----
        ball = bfs_ball(g, source, l1)
        a = induced(g, ball)
        deg = g.deg[ball]
        t1 = time.perf_counter()
        s0 = _onehot(ball.size, 0)
        S, R = diffuse(a, s0, l1, alpha, deg=deg, quantum=quantum)
        t2 = time.perf_counter()
        degrees = [np.diff(a.indptr)] if record_subgraphs else None
        neighbors = [a.indices.astype(np.int32)] if record_subgraphs else None
        bfs_s += t1 - t0
        diff_s += t2 - t1
        e = edge_count(a)
        stats.stage_sizes.append((int(ball.size), e))
        stats.stage_nnz.append(int(a.nnz))
        stats.nodes_touched += int(ball.size)
        stats.edges_touched += e
        table = _ScoreTable(cap)
        carried = decay * R
        if quantum is not None:
            carried = np.floor(carried / quantum) * quantum
        table.offer(ball, S - carried, order_key=S)
        parts_peak = {
            "subgraph_csr": _csr_bytes(a),
            "node_ids": _nbytes(ball),
            "degrees": _nbytes(deg),
            "score_vectors": _nbytes(s0, S, R),
            "global_table": table.nbytes,
        }
        ns_nodes, ns_vals, n_nonzero = _select_next_stage(ball, R, next_stage)
        del a, deg, s0, S, R
        # ---- stage 2 ----
        for v, rv in zip(ns_nodes.tolist(), ns_vals.tolist()):
            t1 = time.perf_counter()
            ball2 = bfs_ball(g, v, l2)
            a2 = induced(g, ball2)
            deg2 = g.deg[ball2]
            t2 = time.perf_counter()
            s0 = _onehot(ball2.size, 0, rv)
            S2, R2 = diffuse(a2, s0, l2, alpha, deg=deg2, quantum=quantum)
            contrib = decay * S2
            if quantum is not None:
                contrib = np.floor(contrib / quantum) * quantum
            if degrees is not None:
                degrees.append(np.diff(a2.indptr))
                neighbors.append(a2.indices.astype(np.int32))
            table.offer(ball2, contrib, order_key=contrib)
            t3 = time.perf_counter()
            bfs_s += t2 - t1
            diff_s += t3 - t2
            e = edge_count(a2)
            stats.stage_sizes.append((int(ball2.size), e))
            stats.stage_nnz.append(int(a2.nnz))
            stats.nodes_touched += int(ball2.size)
            stats.edges_touched += e
            parts = {
                "subgraph_csr": _csr_bytes(a2),
                "node_ids": _nbytes(ball2),
                "degrees": _nbytes(deg2),
                "score_vectors": _nbytes(s0, S2, R2),
                "global_table": table.nbytes,
                "next_stage_list": _nbytes(ns_nodes, ns_vals),
            }
            if sum(parts.values()) > sum(parts_peak.values()):
                parts_peak = parts
        t_end = time.perf_counter()
        stats.cpu_s = time.process_time() - c0
    stats.tracemalloc_peak_bytes = peak[0]
    stats.wall_s, stats.bfs_s, stats.diffusion_s = t_end - t0, bfs_s, diff_s
    stats.model_parts = parts_peak
    stats.model_peak_bytes = sum(parts_peak.values())
    stats.extra = {
        "next_stage_used": int(ns_nodes.size),
        "nonzero_residual": int(n_nonzero),
        "table_entries": int(table.keys.size),
        "table_capacity": cap,
        "refused": int(table.refused),
    }
    if record_subgraphs:
        stats.extra["subgraph_degrees"] = degrees
        stats.extra["subgraph_neighbors"] = neighbors
        stats.extra["next_stage_nodes"] = ns_nodes
    return PPRResult(table.keys, table.vals, stats)


def power_iteration_ppr(
    g: Graph, source: int, alpha: float = ALPHA, tol: float = 1e-10, max_iter: int = 10_000
) -> PPRResult:
    """Converged PPR ``pi = (1-alpha) sum_k alpha^k W^k e_s`` on the whole graph.

    Iterates ``p <- (1-alpha) e_s + alpha W p`` from ``p = e_s`` until the L1 change is
    below ``tol`` (then ``|p - pi|_1 <= tol * alpha / (1 - alpha)``); raises
    ``RuntimeError`` if ``max_iter`` iterations do not get there.
    """
    stats = PPRStats(method="power_iteration")
    t0 = time.perf_counter()
    inv = _inv(g.deg)
    e = _onehot(g.n, source)
    p = e.copy()
    it, delta = 0, math.inf
    while delta >= tol:
        if it == max_iter:
            raise RuntimeError(f"power iteration did not reach tol={tol} in {max_iter} iterations")
        p_new = (1 - alpha) * e + alpha * (g.adj @ (p * inv))
        delta = float(np.abs(p_new - p).sum())
        p = p_new
        it += 1
    stats.wall_s = stats.diffusion_s = time.perf_counter() - t0
    stats.nodes_touched, stats.edges_touched = g.n * it, g.nnz * it
    stats.extra = {"iterations": it, "last_l1_change": delta}
    stats.model_parts = {"graph_csr": _csr_bytes(g.adj), "vectors": _nbytes(inv, e, p)}
    stats.model_peak_bytes = sum(stats.model_parts.values())
    nz = np.flatnonzero(p)
    return PPRResult(nz, p[nz], stats)


def forward_push(g: Graph, source: int, alpha: float = ALPHA, eps: float = 1e-6) -> PPRResult:
    """Andersen-Chung-Lang forward push (non-lazy) for ``pi = (1-alpha)(I - alpha W)^-1 e_s``.

    Keeps an estimate ``p`` and a residual ``r`` (start ``p = 0``, ``r = e_s``). While some
    ``u`` has ``r[u] > eps * deg(u)``: ``p[u] += (1-alpha) r[u]``, each neighbour ``w``
    of ``u`` (a self-loop included) gets ``alpha r[u] / deg(u)``, ``r[u]`` is cleared.
    The invariant ``pi = p + sum_u r[u] pi_u`` holds throughout (``pi_u``: PPR from
    ``u``). Since ``A`` is symmetric, ``deg(u) pi_u(t) = deg(t) pi_t(u)``, so at the end

        0 <= pi(t) - p(t) = sum_u r[u] pi_u(t) <= eps sum_u deg(u) pi_u(t) = eps deg(t),

    i.e. the per-node error is at most ``eps * deg(t)`` and ``|pi - p|_inf <= eps * d_max``
    (``stats.extra["error_bound_inf"]``); also ``|pi - p|_1 = sum(r)``
    (``stats.extra["residual_l1"]``). Work is ``O(1 / (eps (1 - alpha)))`` pushes'
    edges, independent of the graph size. FIFO queue.
    """
    if eps <= 0:
        raise ValueError(f"eps must be positive, got {eps}")
    stats = PPRStats(method=f"forward_push(eps={eps:g})")
    t0 = time.perf_counter()
    indptr, indices, deg = g.adj.indptr, g.adj.indices, g.deg
    p: dict[int, float] = {}
    r: dict[int, float] = {source: 1.0}
    queue = [source]
    head = 0
    in_queue = {source}
    pushes = scanned = 0
    while head < len(queue):
        u = queue[head]
        head += 1
        in_queue.discard(u)
        ru = r.get(u, 0.0)
        du = deg[u]
        if du == 0:
            p[u] = p.get(u, 0.0) + (1 - alpha) * ru
            r[u] = 0.0
            continue
        if ru <= eps * du:
            continue
        pushes += 1
        p[u] = p.get(u, 0.0) + (1 - alpha) * ru
        r[u] = 0.0
        share = alpha * ru / du
        nbrs = indices[indptr[u] : indptr[u + 1]].tolist()
        scanned += len(nbrs)
        for w in nbrs:
            rw = r.get(w, 0.0) + share
            r[w] = rw
            if rw > eps * deg[w] and w not in in_queue:
                in_queue.add(w)
                queue.append(w)
    stats.wall_s = stats.diffusion_s = time.perf_counter() - t0
    pn = np.fromiter(p.keys(), dtype=np.int64, count=len(p))
    pv = np.fromiter(p.values(), dtype=np.float64, count=len(p))
    rn = np.fromiter(r.keys(), dtype=np.int64, count=len(r))
    rv = np.fromiter(r.values(), dtype=np.float64, count=len(r))
    keep = rv != 0
    rn, rv = rn[keep], rv[keep]
    stats.nodes_touched, stats.edges_touched = pushes, scanned
    stats.extra = {
        "pushes": pushes,
        "residual_l1": float(rv.sum()),
        "error_bound_inf": float(eps * deg.max()) if g.n else 0.0,
        "error_bound_per_node": "eps * deg(t)",
    }
    stats.model_parts = {"estimate": _nbytes(pn, pv), "residual": _nbytes(rn, rv)}
    stats.model_peak_bytes = sum(stats.model_parts.values())
    return PPRResult(pn, pv, stats, residual_nodes=rn, residual_values=rv)
