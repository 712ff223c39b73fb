"""Undirected graphs on ``scipy.sparse`` CSR, for the local-PPR evaluators.

A :class:`Graph` holds a symmetric 0/1 adjacency matrix ``adj`` (``float64``
``csr_array``, ``n x n``, sorted indices, self-loops kept as a single diagonal ``1``),
the degree vector ``deg`` (row sums of ``adj``, so a self-loop adds **1** to its node's
degree, as in ``nx.to_scipy_sparse_array(G).sum(axis=1)``, which is the normalisation
MeLoPPR's code uses), and the original node ids (``node_ids[i]`` is the id of node
``i``). All algorithms address nodes by their index ``0..n-1``.

**Edge count.** ``m`` counts undirected edges with a self-loop counted once:
``m = (nnz + n_selfloops) / 2``, where ``nnz`` counts both directions of every
non-loop edge and a self-loop once. This is networkx's ``number_of_edges`` and the
convention of MeLoPPR's Table II: cora 2,708 / 5,278, citeseer 3,327 / 4,676 (124 of the
edges are self-loops), pubmed 19,717 / 44,327 (3 self-loops).

**Local extraction.** :func:`bfs_ball` and :func:`induced` touch only the rows of the
nodes they visit (frontier expansion on ``indptr``/``indices``, vectorized): they never
allocate an ``O(n)`` array, so their cost and memory scale with the ball, not the graph.
"""

from __future__ import annotations

import gzip
import math
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = [
    "GRAPH_DIR_ENV",
    "PACKAGED_GRAPHS",
    "PLANETOID_COUNTS",
    "SYNTHETIC_LIKE",
    "Graph",
    "bfs_ball",
    "edge_count",
    "from_networkx",
    "from_scipy",
    "graph_dir",
    "graph_path",
    "induced",
    "load_edgelist",
    "load_graph",
    "packaged_graph_path",
    "synthetic_like",
    "synthetic_powerlaw",
]

#: |V|, |E| of MeLoPPR's G1-G3 (Table II); the packaged edge lists match them exactly.
PLANETOID_COUNTS: dict[str, tuple[int, int]] = {
    "citeseer": (3327, 4676),
    "cora": (2708, 5278),
    "pubmed": (19717, 44327),
}

#: |V|, |E| of MeLoPPR's G4-G6 (SNAP com-*), which are not available offline:
#: :func:`synthetic_like` generates power-law graphs of these sizes instead.
SYNTHETIC_LIKE: dict[str, tuple[int, int]] = {
    "amazon": (334863, 925872),
    "dblp": (317080, 1049866),
    "youtube": (1134890, 2987624),
}

#: Environment variable naming a directory of ``{name}_adj.txt`` (or ``.txt.gz``) edge lists.
GRAPH_DIR_ENV = "COEXPLORE_GRAPH_DIR"

#: Graphs shipped with coexplore (``evaluators/ppr/data/{name}_adj.txt.gz``; origin and
#: licence in ``evaluators/ppr/data/README.md``).
PACKAGED_GRAPHS = ("citeseer", "cora", "pubmed")

_SUFFIXES = ("_adj.txt", "_adj.txt.gz")


def graph_dir(directory: str | Path | None = None) -> Path | None:
    """The user's directory of edge lists: ``directory`` if given, else
    ``$COEXPLORE_GRAPH_DIR``, else ``None`` (only the packaged graphs)."""
    if directory is not None and str(directory) != "":
        return Path(directory)
    env = os.environ.get(GRAPH_DIR_ENV)
    return Path(env) if env else None


def packaged_graph_path(name: str) -> Path:
    """Path of a graph shipped with coexplore (one of :data:`PACKAGED_GRAPHS`)."""
    if name not in PACKAGED_GRAPHS:
        raise KeyError(f"graph {name!r} is not shipped with coexplore (shipped: {list(PACKAGED_GRAPHS)})")
    return Path(str(resources.files("evaluators.ppr") / "data" / f"{name}_adj.txt.gz"))


def graph_path(name: str, directory: str | Path | None = None) -> Path:
    """Where the edge list of graph ``name`` is read from.

    1. ``directory`` given: ``directory/{name}_adj.txt`` (or ``.txt.gz``) and nowhere else;
    2. else ``$COEXPLORE_GRAPH_DIR/{name}_adj.txt[.gz]`` if that file exists;
    3. else the copy shipped with coexplore, for :data:`PACKAGED_GRAPHS`.

    Raises ``FileNotFoundError`` naming the graph and the places it looked. Nothing is
    downloaded.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"graph name must be a non-empty string, got {name!r}")
    looked: list[Path] = []
    explicit = directory is not None and str(directory) != ""
    d = graph_dir(directory)
    if d is not None:
        for suffix in _SUFFIXES:
            cand = d / f"{name}{suffix}"
            if cand.exists():
                return cand
            looked.append(cand)
    if not explicit and name in PACKAGED_GRAPHS:
        return packaged_graph_path(name)
    where = ", ".join(str(x) for x in looked) or "no directory given"
    raise FileNotFoundError(
        f"graph {name!r}: no edge list found ({where}); coexplore ships "
        f"{list(PACKAGED_GRAPHS)}; for another graph pass a path to its edge list, or set "
        f"graph_dir / ${GRAPH_DIR_ENV} to the directory holding {{name}}_adj.txt; nothing "
        "is downloaded"
    )


def load_graph(spec: str, directory: str | Path | None = None, seed: int = 0) -> Graph:
    """A graph by name or path, for configs and command lines.

    * ``"citeseer"``, ``"cora"``, ``"pubmed"`` (shipped with coexplore) or any ``NAME``
      with a ``NAME_adj.txt[.gz]`` in ``directory`` / ``$COEXPLORE_GRAPH_DIR``
      (:func:`graph_path`): that edge list;
    * ``"synthetic-amazon"`` / ``-dblp`` / ``-youtube``, optionally ``"...@0.05"`` for a
      scaled copy: :func:`synthetic_like` with ``seed`` (labelled synthetic);
    * anything else containing a path separator or ending in ``.txt`` / ``.gz``:
      :func:`load_edgelist` of that file.

    A missing file raises ``FileNotFoundError`` naming the path and ``graph``. Nothing is
    downloaded.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"graph must be a non-empty string, got {spec!r}")
    if spec.startswith("synthetic-"):
        base, _, scale = spec.partition("@")
        try:
            sc = float(scale) if scale else 1.0
        except ValueError:
            raise ValueError(f"graph {spec!r}: scale after '@' must be a number") from None
        return synthetic_like(base, seed=seed, scale=sc)
    if "/" in spec or os.sep in spec or spec.endswith((".txt", ".gz")):
        path = Path(spec)
        if not path.exists():
            raise FileNotFoundError(f"graph {spec!r}: edge list {path} not found (nothing is downloaded)")
        return load_edgelist(path)
    path = graph_path(spec, directory)
    return load_edgelist(path, name=spec)


@dataclass(frozen=True, eq=False)
class Graph:
    """A simple undirected graph (self-loops allowed) as a symmetric CSR matrix.

    ``adj``: ``scipy.sparse.csr_array``, ``float64`` 0/1, symmetric, sorted indices.
    ``deg``: ``float64`` row sums of ``adj`` (a self-loop counts 1).
    ``name``: label; ``synthetic``: True for generated stand-ins of real graphs.
    ``node_ids``: original id of each node index (from the file, or the networkx node).
    """

    adj: sp.csr_array
    deg: np.ndarray
    name: str
    synthetic: bool = False
    node_ids: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.node_ids is None:
            object.__setattr__(self, "node_ids", np.arange(self.adj.shape[0]))

    @property
    def n(self) -> int:
        """Number of nodes."""
        return int(self.adj.shape[0])

    @property
    def nnz(self) -> int:
        """Stored adjacency entries: 2 per non-loop edge, 1 per self-loop."""
        return int(self.adj.nnz)

    @property
    def n_selfloops(self) -> int:
        return int(np.count_nonzero(self.adj.diagonal()))

    @property
    def m(self) -> int:
        """Undirected edges, a self-loop counted once: ``(nnz + n_selfloops) / 2``."""
        return (self.nnz + self.n_selfloops) // 2

    def __repr__(self) -> str:
        tag = ", synthetic" if self.synthetic else ""
        return f"Graph({self.name!r}, n={self.n}, m={self.m}{tag})"


def _csr_from_pairs(u: np.ndarray, v: np.ndarray, n: int) -> sp.csr_array:
    """Symmetric 0/1 CSR from (possibly duplicated, one- or two-way) pairs."""
    rows = np.concatenate([u, v])
    cols = np.concatenate([v, u])
    idx_dtype = np.int32 if n < 2**31 - 1 else np.int64
    a = sp.coo_array(
        (np.ones(rows.size), (rows.astype(idx_dtype), cols.astype(idx_dtype))), shape=(n, n)
    ).tocsr()
    a.sum_duplicates()
    a.data[:] = 1.0
    a.sort_indices()
    return a


def _make(adj: sp.csr_array, name: str, synthetic: bool, node_ids: np.ndarray) -> Graph:
    deg = np.asarray(adj.sum(axis=1), dtype=np.float64).ravel()
    return Graph(adj=adj, deg=deg, name=name, synthetic=synthetic, node_ids=node_ids)


def load_edgelist(path: str | Path, name: str | None = None) -> Graph:
    """Read a SNAP-style edge list: two whitespace-separated integer ids per line.

    Lines starting with ``#`` or ``%`` and blank lines are skipped; CRLF endings are fine;
    a ``.gz`` file is read through gzip. An edge may be listed in one or both directions
    (duplicates collapse); ``u u`` is a self-loop. Ids are remapped to ``0..n-1`` in
    increasing id order (``node_ids`` keeps them). ``name`` defaults to the file name
    without ``.gz``, ``.txt`` and a trailing ``_adj``.
    Malformed lines raise ``ValueError("<path>:<line>: ...")``.
    """
    path = Path(path)
    us: list[int] = []
    vs: list[int] = []
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            s = line.strip()
            if not s or s[0] in "#%":
                continue
            parts = s.split()
            if len(parts) != 2:
                raise ValueError(
                    f"{path}:{lineno}: expected two integer node ids, got {len(parts)} "
                    f"field(s): {s[:80]!r}"
                )
            try:
                a, b = int(parts[0]), int(parts[1])
            except ValueError:
                raise ValueError(
                    f"{path}:{lineno}: node ids must be integers, got {s[:80]!r}"
                ) from None
            if a < 0 or b < 0:
                raise ValueError(f"{path}:{lineno}: negative node id in {s[:80]!r}")
            us.append(a)
            vs.append(b)
    if not us:
        raise ValueError(f"{path}: no edges found")
    u = np.asarray(us, dtype=np.int64)
    v = np.asarray(vs, dtype=np.int64)
    ids = np.unique(np.concatenate([u, v]))
    adj = _csr_from_pairs(np.searchsorted(ids, u), np.searchsorted(ids, v), ids.size)
    if name is None:
        name = path.name.removesuffix(".gz").removesuffix(".txt").removesuffix("_adj")
    return _make(adj, name, False, ids)


def from_scipy(a, name: str = "graph", synthetic: bool = False) -> Graph:
    """A :class:`Graph` from any square scipy sparse matrix/array (or dense array).

    Only the sparsity pattern is used: weights are dropped, explicit zeros ignored, and
    the pattern is symmetrized (an entry in either direction makes an undirected edge).
    """
    a = sp.coo_array(a)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {a.shape}")
    nz = a.data != 0
    adj = _csr_from_pairs(a.row[nz].astype(np.int64), a.col[nz].astype(np.int64), a.shape[0])
    return _make(adj, name, synthetic, np.arange(a.shape[0]))


def from_networkx(G, name: str | None = None, synthetic: bool = False) -> Graph:
    """A :class:`Graph` from a networkx graph (node order = ``list(G.nodes)``).

    Directed graphs are symmetrized, multi-edges collapse, edge weights are dropped.
    ``node_ids`` holds the networkx nodes (an object array if they are not numbers).
    """
    import networkx as nx

    nodes = list(G.nodes)
    a = nx.to_scipy_sparse_array(G, nodelist=nodes, weight=None, format="coo")
    g = from_scipy(a, name=name or (G.name or "networkx"), synthetic=synthetic)
    try:
        ids = np.asarray(nodes)
        if ids.ndim != 1:
            raise ValueError
    except ValueError:
        ids = np.empty(len(nodes), dtype=object)
        ids[:] = nodes
    return Graph(adj=g.adj, deg=g.deg, name=g.name, synthetic=synthetic, node_ids=ids)


def synthetic_powerlaw(
    n: int, m: int, seed: int = 0, name: str | None = None, triad_p: float = 0.5
) -> Graph:
    """A heavy-tailed stand-in graph with ``n`` nodes and about ``m`` edges.

    Holme-Kim growth (``networkx.powerlaw_cluster_graph``: preferential attachment, so a
    power-law degree tail, plus triad closure with probability ``triad_p`` for
    clustering) with ``ceil(m/n)`` edges per new node, then uniformly random edges are
    removed to bring the count to exactly ``m``: a node left isolated by the removal gets
    one of its removed edges back, and as many other random edges whose ends keep a
    neighbour are removed instead. Deterministic in ``seed``. Labelled ``synthetic=True``.

    Caveat: growth models are small worlds, so their 3- and 6-hop balls are much larger
    than those of the real SNAP community graphs of the same size; results on them are
    not comparable with the paper's G4-G6 numbers.
    """
    import networkx as nx

    if n < 3 or m < 1:
        raise ValueError(f"need n >= 3 and m >= 1, got n={n}, m={m}")
    per_node = max(1, min(math.ceil(m / n), n - 1))
    G = nx.powerlaw_cluster_graph(n, per_node, triad_p, seed=seed)
    e = np.fromiter(
        (x for edge in G.edges() for x in edge), dtype=np.int64, count=2 * G.number_of_edges()
    ).reshape(-1, 2)
    del G
    rng = np.random.default_rng(seed)
    if e.shape[0] > m:
        perm = rng.permutation(e.shape[0])
        kept, dropped = e[perm[:m]], e[perm[m:]]
        deg = np.bincount(kept.ravel(), minlength=n)
        # give every node isolated by the removal one of its removed edges back
        ends = dropped.ravel()
        lonely = deg[ends] == 0
        if lonely.any():
            _, first = np.unique(ends[lonely], return_index=True)
            back = np.unique(np.flatnonzero(lonely)[first] // 2)
            kept = np.concatenate([kept, dropped[back]])
            # and as many other edges leave again, never one that would isolate a node
            deg = np.bincount(kept.ravel(), minlength=n)
            drop = np.zeros(kept.shape[0], dtype=bool)
            extra = kept.shape[0] - m
            for i in rng.permutation(kept.shape[0] - back.size):
                if extra == 0:
                    break
                u, v = kept[i]
                if deg[u] > 1 and deg[v] > 1:
                    deg[u] -= 1
                    deg[v] -= 1
                    drop[i] = True
                    extra -= 1
            kept = kept[~drop]
        e = kept
    adj = _csr_from_pairs(e[:, 0], e[:, 1], n)
    return _make(adj, name or f"synthetic-powerlaw-{n}-{m}", True, np.arange(n))


def synthetic_like(name: str, seed: int = 0, scale: float = 1.0) -> Graph:
    """A synthetic stand-in for SNAP com-``name`` (``amazon``, ``dblp``, ``youtube``).

    Same |V| and |E| as the paper's Table II times ``scale`` (``scale < 1`` for quick
    runs), built by :func:`synthetic_powerlaw`; named ``synthetic-<name>`` (plus
    ``-x<scale>`` when scaled).
    """
    key = name.removeprefix("com-").removeprefix("synthetic-")
    if key not in SYNTHETIC_LIKE:
        raise KeyError(f"unknown graph {name!r}; choose from {sorted(SYNTHETIC_LIKE)}")
    if not 0 < scale <= 1:
        raise ValueError(f"scale must be in (0, 1], got {scale}")
    n, m = SYNTHETIC_LIKE[key]
    n_s, m_s = max(10, round(n * scale)), max(10, round(m * scale))
    label = f"synthetic-{key}" + ("" if scale == 1 else f"-x{scale:g}")
    return synthetic_powerlaw(n_s, m_s, seed=seed, name=label)


def _gather_rows(indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray):
    """Concatenated column indices of ``rows`` and the row position of each entry."""
    starts = indptr[rows].astype(np.int64)
    counts = indptr[rows + 1].astype(np.int64) - starts
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), counts
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    cols = indices[shift + np.arange(total)].astype(np.int64, copy=False)
    return cols, np.repeat(np.arange(rows.size), counts), counts


def bfs_ball(g: Graph, source: int, depth: int, return_depth: bool = False):
    """Node indices within ``depth`` hops of ``source`` (the BFS ball ``G_depth(s)``).

    Ordered by hop level (``source`` first), each level in increasing index order.
    With ``return_depth=True`` also returns each node's hop distance (``int64``).
    Level-synchronous frontier expansion on the CSR arrays: memory and time are
    proportional to the ball and its incident edges.
    """
    if not 0 <= source < g.n:
        raise IndexError(f"source {source} out of range for {g.n} nodes")
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    indptr, indices = g.adj.indptr, g.adj.indices
    frontier = np.array([source], dtype=np.int64)
    seen = frontier  # sorted
    levels = [frontier]
    for _ in range(depth):
        nbrs, _, _ = _gather_rows(indptr, indices, frontier)
        nbrs = np.unique(nbrs)
        pos = np.searchsorted(seen, nbrs)
        old = (pos < seen.size) & (seen[np.minimum(pos, seen.size - 1)] == nbrs)
        frontier = nbrs[~old]
        if frontier.size == 0:
            break
        levels.append(frontier)
        seen = np.union1d(seen, frontier)
    ball = np.concatenate(levels)
    if return_depth:
        d = np.repeat(np.arange(len(levels)), [lv.size for lv in levels])
        return ball, d
    return ball


def induced(g: Graph, nodes: np.ndarray) -> sp.csr_array:
    """Adjacency of the subgraph induced by ``nodes`` (row/column ``i`` = ``nodes[i]``).

    ``nodes`` must be unique. Reads only the rows of ``nodes`` (no ``O(n)`` work);
    ``float64`` 0/1 data, ``int32`` indices (``int64`` beyond 2**31 entries).
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    order = np.argsort(nodes, kind="stable")
    srt = nodes[order]
    cols, rowpos, _ = _gather_rows(g.adj.indptr, g.adj.indices, nodes)
    pos = np.searchsorted(srt, cols)
    keep = (pos < srt.size) & (srt[np.minimum(pos, srt.size - 1)] == cols)
    new_cols = order[pos[keep]]
    row_counts = np.bincount(rowpos[keep], minlength=nodes.size)
    big = max(nodes.size, int(row_counts.sum())) >= 2**31 - 1
    idx_dtype = np.int64 if big else np.int32
    indptr = np.zeros(nodes.size + 1, dtype=idx_dtype)
    np.cumsum(row_counts, out=indptr[1:])
    return sp.csr_array(
        (np.ones(new_cols.size), new_cols.astype(idx_dtype), indptr),
        shape=(nodes.size, nodes.size),
    )


def edge_count(adj: sp.csr_array) -> int:
    """Undirected edges of a symmetric CSR, self-loops counted once (as :attr:`Graph.m`)."""
    rows = np.repeat(np.arange(adj.shape[0]), np.diff(adj.indptr))
    loops = int(np.count_nonzero(adj.indices == rows))
    return (int(adj.nnz) + loops) // 2
