"""Single-stage local PPR and MeLoPPR written the way the paper's CPU code is described:
Python + NetworkX for the graph, scipy CSR for the diffusion.

MeLoPPR's CPU figures (Li et al., DAC 2021, Sec. VI: Table II's CPU column and Fig. 7's
CPU speedups) compare two Python/NetworkX programs that run their diffusions as CSR
sparse matrix-vector products. This module is our own implementation of that style, so
that coexplore can measure the paper's baseline next to its vectorized one
(:func:`evaluators.ppr.local_ppr` / :func:`evaluators.ppr.meloppr`, which work on the
CSR arrays directly). Per sub-graph it does what such a program does:

1. BFS from the seed with ``networkx.single_source_shortest_path_length(G, s, cutoff)``;
2. the induced sub-graph ``G.subgraph(nodes)`` and its adjacency matrix
   ``networkx.to_scipy_sparse_array(..., format="csr")``;
3. the random-walk matrix ``W = D^-1 A`` with the sub-graph's own degrees (exact on a
   BFS ball of depth >= the step count; see :mod:`evaluators.ppr.diffusion`), and
   ``steps`` row-vector products ``S <- (1 - alpha) S0 + alpha S W``;
4. the scores as a ``{node: score}`` dict; MeLoPPR's global table is a dict of at most
   ``c * k`` entries.

The algorithm is the one :func:`evaluators.ppr.meloppr` implements, with the same
next-stage order (largest residual first, ties by smaller node) and the same table
admission order (first come, offered in descending contribution, ties by smaller node),
so both give the same scores to rounding (``tests/evaluators/test_ppr_networkx.py``).
Only the data structures -- and so the time and memory a query costs -- differ.

``G`` is a :class:`networkx.Graph` whose nodes are ``0 .. n-1`` (:func:`to_networkx`).
Results are :class:`~evaluators.ppr.diffusion.PPRResult` s with ``wall_s``, ``cpu_s``, ``bfs_s``
(BFS + sub-graph + matrix), ``diffusion_s``, and with ``trace_memory=True`` the
tracemalloc peak of the query (the graph ``G`` itself is not counted, as for the CSR
versions).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from evaluators.ppr.diffusion import ALPHA, PPRResult, PPRStats, trace_peak
from evaluators.ppr.graph import Graph

__all__ = ["local_ppr_networkx", "meloppr_networkx", "subgraph_csr", "to_networkx"]


def to_networkx(g: Graph):
    """``g`` as a :class:`networkx.Graph` on nodes ``0 .. n-1`` (no edge attributes, as
    ``networkx.read_edgelist`` builds it), self-loops kept."""
    import networkx as nx

    G = nx.Graph()
    G.add_nodes_from(range(g.n))
    a = g.adj.tocoo()
    upper = a.row <= a.col
    G.add_edges_from(zip(a.row[upper].tolist(), a.col[upper].tolist()))
    return G


def subgraph_csr(G, seed: int, depth: int) -> tuple[list[int], sp.csr_array]:
    """The BFS ball of ``seed`` to ``depth`` hops (BFS order, seed first) and its induced
    adjacency as CSR, the NetworkX way: the host-side work of one sub-graph."""
    import networkx as nx

    dist = nx.single_source_shortest_path_length(G, seed, cutoff=depth)
    nodes = list(dist)
    A = nx.to_scipy_sparse_array(G.subgraph(nodes), nodelist=nodes, weight=None, dtype=np.float64,
                                 format="csr")
    return nodes, A


def _subgraph_walk(G, seed: int, depth: int):
    """BFS ball of ``seed`` (BFS order, seed first), its CSR adjacency and ``D^-1 A``."""
    nodes, A = subgraph_csr(G, seed, depth)
    deg = np.asarray(A.sum(axis=1)).ravel()
    inv = np.zeros_like(deg)
    np.divide(1.0, deg, out=inv, where=deg > 0)
    W = sp.csr_array(sp.diags_array(inv) @ A)
    return nodes, A, W


def _diffuse_rows(W, s0: np.ndarray, steps: int, alpha: float):
    S = s0.copy()
    R = s0.copy()
    teleport = (1.0 - alpha) * s0
    for _ in range(steps):
        S = teleport + alpha * (S @ W)
        R = R @ W
    return S, R


def _result(method: str, table: dict[int, float], stats: PPRStats) -> PPRResult:
    nodes = np.fromiter(table.keys(), dtype=np.int64, count=len(table))
    vals = np.fromiter(table.values(), dtype=np.float64, count=len(table))
    return PPRResult(nodes, vals, stats)


def local_ppr_networkx(G, source: int, L: int = 6, alpha: float = ALPHA,
                       trace_memory: bool = False) -> PPRResult:
    """The single-stage baseline: BFS to depth ``L`` and an ``L``-step diffusion on that
    ball, in the NetworkX style (see the module docstring)."""
    stats = PPRStats(method=f"local_ppr_networkx(L={L})")
    with trace_peak(trace_memory) as peak:
        c0 = time.process_time()
        t0 = time.perf_counter()
        nodes, A, W = _subgraph_walk(G, source, L)
        t1 = time.perf_counter()
        s0 = np.zeros(len(nodes))
        s0[0] = 1.0
        S, _ = _diffuse_rows(W, s0, L, alpha)
        scores = {v: x for v, x in zip(nodes, S.tolist()) if x != 0.0}
        t2 = time.perf_counter()
        stats.cpu_s = time.process_time() - c0
    stats.tracemalloc_peak_bytes = peak[0]
    stats.wall_s, stats.bfs_s, stats.diffusion_s = t2 - t0, t1 - t0, t2 - t1
    stats.stage_sizes = [(len(nodes), (A.nnz + int(np.count_nonzero(A.diagonal()))) // 2)]
    stats.stage_nnz = [int(A.nnz)]
    return _result(stats.method, scores, stats)


def _offer(table: dict[int, float], cap: int | None, nodes: list[int], vals: np.ndarray,
           refused: list[int]) -> None:
    """Add ``vals`` into the table, new nodes first-come in descending value (ties:
    smaller node) while there is room."""
    for i in sorted((i for i in range(len(nodes)) if vals[i] != 0.0), key=lambda i: (-vals[i], nodes[i])):
        v = nodes[i]
        if v in table:
            table[v] += float(vals[i])
        elif cap is None or len(table) < cap:
            table[v] = float(vals[i])
        else:
            refused[0] += 1


def meloppr_networkx(G, source: int, l1: int = 3, l2: int = 3, alpha: float = ALPHA, k: int = 200,
                     next_stage: int | None = None, c: int | None = 10,
                     trace_memory: bool = False) -> PPRResult:
    """MeLoPPR (Eq. 8) in the NetworkX style: stage 1 on ``G_l1(s)``, then for the
    ``next_stage`` nodes with the largest stage-1 residual (``None``: all non-zero ones)
    a stage-2 diffusion of ``R_l1[v] e_v`` on ``G_l2(v)``, accumulated with weight
    ``alpha^l1`` into a dict of at most ``c * k`` entries (``c=None``: unbounded).
    Same algorithm and orders as :func:`evaluators.ppr.meloppr` (count form of
    ``next_stage`` only)."""
    if l1 < 1 or l2 < 0:
        raise ValueError(f"need l1 >= 1 and l2 >= 0, got l1={l1}, l2={l2}")
    if next_stage is not None and (isinstance(next_stage, bool) or not isinstance(next_stage, int)
                                   or next_stage < 0):
        raise ValueError(f"next_stage must be None or a count >= 0, got {next_stage!r}")
    stats = PPRStats(method=f"meloppr_networkx(l1={l1},l2={l2},next_stage={next_stage},c={c})")
    cap = None if c is None else int(c) * int(k)
    decay = alpha**l1
    refused = [0]
    bfs_s = diff_s = 0.0
    with trace_peak(trace_memory) as peak:
        c0 = time.process_time()
        t0 = time.perf_counter()
        nodes, A, W = _subgraph_walk(G, source, l1)
        t1 = time.perf_counter()
        s0 = np.zeros(len(nodes))
        s0[0] = 1.0
        S, R = _diffuse_rows(W, s0, l1, alpha)
        table: dict[int, float] = {}
        # stage 1 is offered in descending S_l1 (its value is S_l1 - alpha^l1 R_l1)
        s1, r1 = S.tolist(), R.tolist()
        order = sorted((i for i in range(len(nodes)) if s1[i] != 0.0), key=lambda i: (-s1[i], nodes[i]))
        for i in order:
            if cap is None or len(table) < cap:
                table[nodes[i]] = s1[i] - decay * r1[i]
            else:
                refused[0] += 1
        residual = sorted(((nodes[i], r1[i]) for i in range(len(nodes)) if r1[i] != 0.0),
                          key=lambda t: (-t[1], t[0]))
        chosen = residual if next_stage is None else residual[:next_stage]
        t2 = time.perf_counter()
        bfs_s += t1 - t0
        diff_s += t2 - t1
        stats.stage_sizes.append((len(nodes), (A.nnz + int(np.count_nonzero(A.diagonal()))) // 2))
        stats.stage_nnz.append(int(A.nnz))
        del A, W
        for v, rv in chosen:
            t1 = time.perf_counter()
            nodes2, A2, W2 = _subgraph_walk(G, v, l2)
            t2 = time.perf_counter()
            s0 = np.zeros(len(nodes2))
            s0[0] = rv
            S2, _ = _diffuse_rows(W2, s0, l2, alpha)
            _offer(table, cap, nodes2, decay * S2, refused)
            t3 = time.perf_counter()
            bfs_s += t2 - t1
            diff_s += t3 - t2
            stats.stage_sizes.append((len(nodes2), (A2.nnz + int(np.count_nonzero(A2.diagonal()))) // 2))
            stats.stage_nnz.append(int(A2.nnz))
        t_end = time.perf_counter()
        stats.cpu_s = time.process_time() - c0
    stats.tracemalloc_peak_bytes = peak[0]
    stats.wall_s, stats.bfs_s, stats.diffusion_s = t_end - t0, bfs_s, diff_s
    stats.extra = {"next_stage_used": len(chosen), "nonzero_residual": len(residual),
                   "table_entries": len(table), "table_capacity": cap, "refused": refused[0]}
    return _result(stats.method, table, stats)
