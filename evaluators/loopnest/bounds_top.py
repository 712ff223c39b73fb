"""A cheap lower bound on the children that decide the top level's temporal factors: what
the exact mapper screens them with before their full bound (issue 41).

Scope: :func:`top_level_bound` and the table it reads, :func:`top_fill_table`.

**Why it is needed.** The exact mapper decides the backing store's temporal factors
first (:mod:`mappers.exact`); a root (a spatial and bypass choice) has thousands of such
children, and on the co-design points of the Shi et al. spaces nearly all of them bound
above the optimum, so bounding them in full (every candidate order of the top level in the
compiled kernel) is most of a hard layer's search. The screen costs about a tenth of that
per child (``python -m experiments.benchmarks.mapper_codesign --no-screen`` is the search
without it, for the ratio on the same maps).

**The bound.** A child's completions are completions of its parent, so every count the
parent's unrefined lower bound gives (:func:`evaluators.loopnest.bounds.lower_bound` with
nothing temporal decided, ``known = L``: each fill, read, write and NoC word of every level
and operand bounded from below, whatever the orders) bounds the child's. The child adds
one thing the parent does not know: the words the top level exchanges with the tile below
it, which is now decided. For an operand the level below the top keeps, those are the
reads (fills of that tile) and writes (updates) of the top level in the lower bound of the
child (``known = L - 1``), and they depend on nothing but that tile's extents (the sizes
over the top level's factors, the top level having no fanout) and the top level's factors
and order: the tile is known, so the bound's rules for it read only the loops above it
(the model's own fills for a one-dimension operand, the sliding-window rules for a
sliding one, and the words an instance uses over the run, from the spatial factors above
it: none). So one table, over the distinct top-level factor vectors and candidate orders,
gives them for every child of every root (:func:`top_fill_table`, from the lower bound of
one representative mapping per vector: those factors at the top, the rest of each
dimension at the innermost level, no spatial factors, every operand kept everywhere). The
child's screen, per candidate order: the parent's counts with the top level's reads and
writes of each operand the level below keeps raised to the table's (the larger of two
lower bounds of the same count), its energy the parent's with the top level's part
recomputed from those counts (per-word energies and the parent's NoC words), its top
level's bandwidth cycles recomputed likewise (one instance), its compute cycles the
parent's; the least objective over the candidates. Every figure is at most the child's
unrefined bound's for the same candidate, and objectives grow with every figure, so the
screen is at most the child's bound, hence at most every completion's objective: a child
it puts at or above the bar holds no better mapping.

It applies where this arithmetic is the model's (:func:`applies`): at least three levels
(with two, the top level's children are leaves), a top level with one instance and no
fanout, no whole-vector accesses (``vector_words = 1``), no leakage (energy would depend on
the latency) and no systolic dataflow (whose compute cycles depend on the temporal
factors); elsewhere the caller bounds every child in full. ``tests/evaluators/
test_loopnest_bounds_top.py`` checks the screen against the children's full bound on
random cases (never above it) and the table against the children's own top-level counts
(equal).
"""

from __future__ import annotations

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from evaluators.loopnest.bounds import lower_bound
from evaluators.loopnest.conventions import Conventions
from evaluators.loopnest.counts import prepare
from mappers.mapping import MappingBatch
from mappers.mapping_space import divisors
from mappers.orders import objective_of
from mappers.workloads import Layer

__all__ = ["TopFillTable", "applies", "top_fill_table", "top_level_bound"]


def applies(arch: ArchSpec) -> bool:
    """Whether :func:`top_level_bound` holds on ``arch`` (module docstring)."""
    top = arch.levels[-1]
    return (arch.n_levels >= 3 and top.instances == 1 and top.fanout_x * top.fanout_y == 1
            and arch.dataflow is None and all(lv.vector_words == 1 for lv in arch.levels)
            and all(lv.leakage_pj_per_cycle == 0 for lv in arch.levels))


class TopFillTable:
    """The top level's reads and writes per operand (``(m, K, 3)`` each) for every
    top-level factor vector met so far, by candidate order (:func:`top_fill_table`),
    filled as new vectors come (one search keeps one). A vector is found by its code, the
    mixed-radix number of its divisor indices (one array lookup per dimension)."""

    def __init__(self, layer: Layer, arch: ArchSpec, candidates: np.ndarray,
                 conventions: Conventions | str | None) -> None:
        self.layer, self.arch, self.conventions = layer, arch, conventions
        self.candidates = np.asarray(candidates, dtype=np.int64)
        K = len(self.candidates)
        self.reads = np.zeros((0, K, 3))
        self.writes = np.zeros((0, K, 3))
        sizes = [int(layer.dims[d]) for d in layer.dim_names]
        self._digit = []                                   # per dimension: factor -> divisor index
        for n in sizes:
            idx = np.full(n + 1, -1, dtype=np.int64)
            divs = divisors(n)
            idx[divs] = np.arange(len(divs))
            self._digit.append(idx)
        radix = [int((x >= 0).sum()) for x in self._digit]
        self._weight = np.cumprod([1, *radix[:-1]]).astype(np.int64)
        self._row_of: dict[int, int] = {}

    def rows(self, tops: np.ndarray) -> np.ndarray:
        """``(n,)`` the table rows of top-level factor vectors ``tops`` (``(n, D)``), the new
        ones computed."""
        tops = np.asarray(tops, dtype=np.int64)
        code = sum(self._digit[d][tops[:, d]] * self._weight[d] for d in range(tops.shape[1]))
        uniq, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        at = np.array([self._row_of.get(int(c), -1) for c in uniq], dtype=np.int64)
        new = np.flatnonzero(at < 0)
        if len(new):
            r, w = top_fill_table(self.layer, self.arch, tops[first[new]], self.candidates, self.conventions)
            base = len(self.reads)
            self.reads = np.concatenate([self.reads, r])
            self.writes = np.concatenate([self.writes, w])
            at[new] = base + np.arange(len(new))
            self._row_of.update(zip(uniq[new].tolist(), at[new].tolist()))
        return at[inverse.ravel()]


def top_fill_table(layer: Layer, arch: ArchSpec, tops: np.ndarray, candidates: np.ndarray,
                   conventions: Conventions | str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(reads, writes)``, each ``(m, K, 3)``: the top level's reads and writes of each
    operand in the lower bound (``known = L - 1``) of a mapping whose top-level temporal
    factors are ``tops[i]`` (``(m, D)``, divisors of the sizes) and whose top-level order
    is ``candidates[k]``, where the level below the top keeps every operand; the module
    docstring gives why they are every such child's."""
    L = arch.n_levels
    dims = layer.dim_names
    sizes = np.array([layer.dims[d] for d in dims], dtype=np.int64)
    tops = np.asarray(tops, dtype=np.int64)
    m, D = tops.shape
    T = np.ones((m, L, D), dtype=np.int64)
    T[:, L - 1] = tops
    T[:, 0] = sizes[None, :] // tops
    ones = np.ones((m, L, D), dtype=np.int64)
    keep = np.ones((m, L, 3), dtype=bool)
    keep &= np.array([[op in lv.tensors for op in OPERANDS] for lv in arch.levels])[None]
    reads = np.empty((m, len(candidates), 3))
    writes = np.empty((m, len(candidates), 3))
    for k, cand in enumerate(candidates):
        order = np.tile(np.arange(D), (m, L, 1))
        order[:, L - 1] = cand
        r = lower_bound(layer, arch, MappingBatch(dims, T, ones, ones, order, keep), L - 1,
                        conventions=conventions)
        reads[:, k] = r.reads[:, L - 1]
        writes[:, k] = r.writes[:, L - 1]
    return reads, writes


def top_level_bound(layer: Layer, arch: ArchSpec, parents: MappingBatch, children: MappingBatch,
                    parent_of: np.ndarray, table: TopFillTable, objective: str, *,
                    conventions: Conventions | str | None = None) -> np.ndarray:
    """``(n,)`` per child (``children``: the top level's temporal factors decided, the
    rest free, placed low), a lower bound of every completion's ``objective``: the
    module docstring's screen over ``table``'s candidate orders, from the unrefined lower
    bound of its parent ``parents[parent_of[i]]`` (nothing temporal decided). The caller
    checks :func:`applies`."""
    L = arch.n_levels
    st = prepare(layer, arch)
    root = lower_bound(layer, arch, parents, L, conventions=conventions)
    pi = np.asarray(parent_of, dtype=np.int64)
    rows = table.rows(children.temporal[:, L - 1])
    kept = children.keep[:, L - 2, :]                                    # (n, 3) the tile below keeps
    base_r, base_w = root.reads[pi, L - 1], root.writes[pi, L - 1]       # (n, 3)
    below = (root.energy_pj - root.level_energy_pj[:, L - 1])[pi]
    noc = root.noc_words[pi, L - 1] * st.e_noc[L - 1]
    bw = root.bandwidth_cycles[pi].copy()                               # (n, L)
    compute = root.compute_cycles[pi]
    best = np.full(len(pi), np.inf)
    # the top level's bandwidth cycles, as bandwidth_cycles computes them for one instance
    shared, rd, wr = st.bandwidth[L - 1], st.read_bandwidth[L - 1], st.write_bandwidth[L - 1]
    for k in range(len(table.candidates)):
        R = np.where(kept, np.maximum(base_r, table.reads[rows, k]), base_r)
        W = np.where(kept, np.maximum(base_w, table.writes[rows, k]), base_w)
        top_e = R @ st.e_read[L - 1] + W @ st.e_write[L - 1] + noc
        r_sum, w_sum = R.sum(axis=1), W.sum(axis=1)
        cyc = (r_sum + w_sum) / shared
        if st.split_bandwidth:
            cyc = np.maximum(np.maximum(cyc, r_sum / rd), w_sum / wr)
        b = bw.copy()
        b[:, L - 1] = np.maximum(b[:, L - 1], cyc)
        best = np.minimum(best, objective_of(objective, below + top_e, compute, b))
    return best
