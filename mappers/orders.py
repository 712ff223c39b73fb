"""Loop orders for fixed factors: the exact best, through the cost model's order separability.

For a mapping whose factors (spatial and temporal) and bypass choices are fixed, what is
left to choose is the loop order of every level above the innermost (the innermost
level's order, and the position of loops of extent 1, change no count). A cost model that
is *order-separable* (:attr:`mappers.base.BoundedCost.separable_orders`; the loop-nest
model is) makes energy and every level's bandwidth cycles a constant plus one term per
level that depends on that level's order alone. So:

* :func:`separable_best` scores, for each level, every candidate order with the other
  levels at a reference order, keeps per level the candidates no other candidate beats in
  energy and in every bandwidth (the objectives grow with both), and combines the
  survivors: ``sum over levels of the candidates`` instead of ``product``.
* :func:`best_orders` is exact: with every permutation of a level's loops of extent > 1
  as the candidates it finds the best order over the whole order space. When no operand
  slides (every tensor axis of the layer is one live dimension), the few
  :func:`canonical_orders` suffice: an operand's fills then depend on a level's order only
  through the longest innermost run of loops irrelevant to it, only the operand
  irrelevant to the innermost loop can have one (each dimension is irrelevant to at most
  one operand), and nothing beats putting all of its irrelevant loops innermost.

**Leakage.** A level's static energy is ``leakage_pj_per_cycle x instances x latency``:
not a sum of per-level order terms (latency is a maximum over levels), but a fixed rate
(the architecture's) times the latency, which the order searches rebuild from each
combination's own compute and bandwidth cycles. So they work on the *dynamic* energy
(separable) and score a combination as ``dynamic + rate x max(compute, bandwidth)``
(:func:`objective_of`), which is exactly the model's energy of that combination; the
objective grows with the dynamic energy and with every bandwidth, so dropping a term
that another beats in both stays exact, and bounds stay bounds.

:func:`canonical_orders` also serves the exact mapper's bounds
(:mod:`mappers.exact`), where it covers every order's bound, sliding operands included.

**Where orders are not separable** (Timeloop's window rule, a MAC's reads on change,
whole-vector accesses), :func:`coupled_best_orders` is exact by another argument: fixing
each level's innermost moving loop makes the cost separable again, and a dominance
filter on the counts a vector rounding reads keeps the rounding exact (its docstring).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from mappers.base import check_objective
from mappers.mapping import MappingBatch
from mappers.workloads import Layer

__all__ = ["OrderCoupling", "OrderStructure", "bandwidth_columns", "best_orders", "canonical_orders", "coupled_best_orders", "objective_of",
           "pareto_mask", "permutation_best", "require_separable", "separable_best", "vector_levels"]


def objective_of(objective: str, energy: Any, compute: Any, bandwidth: Any,
                 leakage_pj_per_cycle: Any = 0.0) -> np.ndarray:
    """The objective from energy (pJ), compute cycles and bandwidth cycles per level
    (``(..., L)``): latency is the maximum of the compute and bandwidth cycles.

    ``leakage_pj_per_cycle``: static power of the whole architecture (every physical
    instance of every level), when ``energy`` is the dynamic energy alone: the energy is
    then ``energy + leakage_pj_per_cycle x latency``. Both terms grow with every count,
    so the objective stays monotone in the dynamic energy and in every bandwidth."""
    latency = np.maximum(np.asarray(compute, dtype=float), np.max(np.asarray(bandwidth, dtype=float), axis=-1))
    energy = np.asarray(energy, dtype=float)
    if np.any(np.asarray(leakage_pj_per_cycle) != 0):
        energy = energy + np.asarray(leakage_pj_per_cycle, dtype=float) * latency
    return {"energy": energy, "latency": latency, "edp": energy * latency}[check_objective(objective)]


def vector_levels(arch: ArchSpec) -> list[str]:
    """The levels of ``arch`` whose accesses are whole vectors (``vector_words > 1``):
    their energy rounds each instance's words up to whole vectors, a ceiling of a sum of
    per-level order terms, which is not itself such a sum, so loop orders are not
    separable there (the bounds stay bounds: the ceiling grows with the counts)."""
    return [lv.name for lv in arch.levels if lv.vector_words > 1]


def require_separable(arch: ArchSpec, who: str) -> None:
    """``ValueError`` naming the levels and ``vector_words`` if ``arch`` has whole-vector
    accesses (:func:`vector_levels`), which the order search ``who`` relies on not having."""
    wide = vector_levels(arch)
    if wide:
        raise ValueError(f"{who} needs loop orders to be separable, and whole-vector accesses are not: "
                         f"levels {wide} of {arch.name!r} have vector_words > 1 (use vector_words=1 there, "
                         "or a mapper that does not rely on separability)")


@dataclass(frozen=True)
class OrderStructure:
    """What loop orders can change for a layer.

    Attributes:
        dims: the layer's dimensions (canonical order).
        live: ``(D,)`` dimensions of size > 1.
        irrelevant_to: ``(D,)`` the operand index (0 W, 1 I, 2 O) a dimension is
            irrelevant to, ``-1`` if relevant to all.
        ns_dims: ``(D,)`` dimensions on a one-live-dimension axis of the input.
        sliding: some operand has an axis over two live dimensions (a sliding window).
    """

    dims: tuple[str, ...]
    live: np.ndarray
    irrelevant_to: np.ndarray
    ns_dims: np.ndarray
    sliding: bool

    @classmethod
    def of(cls, layer: Layer) -> OrderStructure:
        """Raises ``ValueError`` if a live dimension is irrelevant to two operands (the
        order arguments above need at most one)."""
        dims = layer.dim_names
        live = np.array([layer.dims[d] > 1 for d in dims])
        irr = np.full(len(dims), -1)
        for j, d in enumerate(dims):
            if not live[j]:
                continue
            off = [k for k, op in enumerate(OPERANDS) if d not in layer.relevant(op)]
            if len(off) > 1:
                raise ValueError(f"dimension {d!r} of {layer.name!r} is irrelevant to {len(off)} operands; "
                                 "the loop-order arguments need at most one")
            if off:
                irr[j] = off[0]
        ns = np.zeros(len(dims), dtype=bool)
        for axis in layer.tensor("I").axes:
            alive = [d for d, _ in axis if layer.dims[d] > 1]
            if len(alive) == 1:
                ns[dims.index(alive[0])] = True
        sliding = any(sum(layer.dims[d] > 1 for d, _ in axis) > 1
                      for op in OPERANDS for axis in layer.tensor(op).axes)
        return cls(dims, live, irr, ns, sliding)


def canonical_orders(s: OrderStructure) -> list[np.ndarray]:
    """A level's canonical orders (permutations of all dimensions, outermost first).

    For each operand ``t``: ``[E, C, A, B]`` and, when the input slides and both ``A`` and
    ``C`` have live dimensions, ``[A, E, C, B]``, where ``A`` / ``B`` are the dimensions
    irrelevant to ``t`` on / off the input's one-dimension axes and ``C`` / ``E`` the
    relevant ones off / on them; and, when the input slides, ``[on, off]`` (one-dimension
    axes first). Every order has a canonical one that gives each operand an innermost run
    of loops irrelevant to it at least as long, and leaves at least as long an innermost
    run of loops off the input's one-dimension axes (what the exact mapper's bound counts
    for a sliding input): see :mod:`mappers.exact`.
    """
    D = len(s.dims)
    out: list[np.ndarray] = []

    def add(groups: Sequence[np.ndarray]) -> None:
        key = np.zeros(D, dtype=np.int64)
        for g, mask in enumerate(groups):
            key[mask] = g
        o = np.argsort(key, kind="stable")
        if not any(np.array_equal(o, x) for x in out):
            out.append(o)

    ns = s.ns_dims
    for t in range(3):
        irr = s.irrelevant_to == t
        A, B = irr & ns, irr & ~ns
        C, E = ~irr & ~ns, ~irr & ns
        add([E, C, A, B])
        if s.sliding and (A & s.live).any() and (C & s.live).any():
            add([A, E, C, B])
    if s.sliding:
        add([ns, ~ns])
    return out


def pareto_mask(x: np.ndarray) -> np.ndarray:
    """``(g, m)``: for each of ``g`` sets of ``m`` vectors (``(g, m, k)``), whether a
    vector is kept: no other vector of its set is at most it everywhere and below it
    somewhere; of equal vectors the first is kept."""
    x = np.round(x, 6)
    le = (x[:, :, None, :] <= x[:, None, :, :]).all(axis=-1)          # le[g, a, b]: a <= b
    lt = (x[:, :, None, :] < x[:, None, :, :]).any(axis=-1)
    m = x.shape[1]
    earlier = np.tri(m, k=-1, dtype=bool).T                            # earlier[a, b]: a < b
    dominated = (le & lt).any(axis=1) | (le & ~lt & earlier[None]).any(axis=1)
    return ~dominated


def bandwidth_columns(r: Any) -> np.ndarray:
    """``(n, K)``: a cost result's bandwidth cycles as columns that are each a sum of
    counts, so order-separable: its ``bandwidth_parts`` (``(n, 3, L)``: per level, reads +
    writes over the shared bandwidth, reads over the read bandwidth, writes over the write
    bandwidth), flattened, where it has them (some level limits reads or writes apart:
    the level's cycles are then the maximum of its three, which is not itself a sum), else
    ``bandwidth_cycles`` (``(n, L)``). Latency is the maximum over the columns either way
    (:func:`objective_of`), and every objective grows with each column."""
    parts = getattr(r, "bandwidth_parts", None)
    if parts is None:
        return np.asarray(r.bandwidth_cycles, dtype=float)
    parts = np.asarray(parts, dtype=float)
    return parts.reshape(len(parts), -1)


Score = Callable[[MappingBatch, np.ndarray], Any]
"""``score(mappings, rows)``: the cost model's result for ``mappings``, which are the rows
``rows`` of the batch given to :func:`separable_best` (with other orders)."""


def _run(score: Score, batch: MappingBatch, chunk: int,
         rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(dynamic energy, compute cycles, bandwidth columns, leakage pJ per cycle)`` of
    every row (the columns: :func:`bandwidth_columns`). Leakage (a result's
    ``leakage_energy_pj``, ``(n, L)``: static power x latency) is split off the energy:
    the dynamic energy is order-separable, the leakage
    is not (latency is a maximum over levels), so the order searches add each
    combination's leakage back through :func:`objective_of` from its own latency."""
    n, L = len(batch), batch.n_levels
    rows = np.arange(n) if rows is None else rows
    e, c, bw, leak = np.empty(n), np.empty(n), None, np.zeros(n)
    for lo in range(0, n, chunk):
        sl = slice(lo, min(lo + chunk, n))                 # views, not copies
        r = score(batch if n <= chunk else batch.take(sl), rows[sl])
        e[lo:lo + chunk] = np.asarray(r.energy_pj, dtype=float)
        c[lo:lo + chunk] = np.asarray(r.compute_cycles, dtype=float)
        cols = bandwidth_columns(r)
        if bw is None:
            bw = np.empty((n, cols.shape[1]))
        bw[lo:lo + chunk] = cols
        static = getattr(r, "leakage_energy_pj", None)
        if static is not None and np.any(np.asarray(static) != 0):
            total = np.asarray(static, dtype=float).sum(axis=1)
            e[lo:lo + chunk] -= total
            leak[lo:lo + chunk] = total / np.asarray(r.latency_cycles, dtype=float)
    return e, c, (np.empty((0, L)) if bw is None else bw), leak


def separable_best(score: Score, batch: MappingBatch, levels: Sequence[int],
                   options: Sequence[Sequence[np.ndarray]], objective: str,
                   chunk: int = 200_000) -> tuple[np.ndarray, np.ndarray, int]:
    """For every row of ``batch`` (its factors and bypass fixed), the best objective over
    every combination of one order per level -- ``options[k]`` for ``levels[k]``, the
    same candidates for every row -- assuming ``score`` is order-separable. Returns the
    best value ``(n,)``, the chosen option per level ``(n, len(levels))`` and the number
    of mappings scored (an option is scored only on the rows where it orders the level's
    loops of extent > 1 differently from every earlier option)."""
    n = len(batch.temporal)
    ref = batch.order.copy()
    for li, opts in zip(levels, options):
        ref[:, li, :] = opts[0]

    def with_order(order: np.ndarray) -> MappingBatch:
        return MappingBatch(batch.dims, batch.temporal, batch.spatial_x, batch.spatial_y, order, batch.keep)

    e0, compute, bw0, leak = _run(score, with_order(ref), chunk)
    K = bw0.shape[1]
    scored = n
    terms = []
    for li, opts in zip(levels, options):
        de = np.zeros((n, len(opts)))
        dbw = np.zeros((n, len(opts), K))
        # a row's order of loops of extent 1 changes nothing: score an option only on the
        # rows where its order of the level's loops of extent > 1 is new
        seqs = [_effective(batch.temporal[:, li, :], o) for o in opts]
        for k, o in enumerate(opts[1:], 1):
            same = [np.flatnonzero((seqs[k] == seqs[q]).all(axis=1)) for q in range(k)]
            todo = np.ones(n, dtype=bool)
            for q, rows in enumerate(same):
                rows = rows[todo[rows]]
                de[rows, k], dbw[rows, k] = de[rows, q], dbw[rows, q]
                todo[rows] = False
            rows = np.flatnonzero(todo)
            if not len(rows):
                continue
            scored += len(rows)
            sub = batch.take(rows)
            order = ref[rows].copy()
            order[:, li, :] = o
            e, _, bw, _ = _run(score, MappingBatch(sub.dims, sub.temporal, sub.spatial_x, sub.spatial_y, order,
                                                   sub.keep), chunk, rows)
            de[rows, k] = e - e0[rows]
            dbw[rows, k] = bw - bw0[rows]
        terms.append((de, dbw))
    best = np.full(n, np.inf)
    choice = np.zeros((n, len(levels)), dtype=np.int64)
    for combo in itertools.product(*(range(len(o)) for o in options)):
        e = e0 + sum(terms[k][0][:, c] for k, c in enumerate(combo))
        bw = bw0 + sum(terms[k][1][:, c] for k, c in enumerate(combo))
        v = objective_of(objective, e, compute, bw, leak)
        better = v < best
        best = np.where(better, v, best)
        choice[better] = combo
    return best, choice, scored


def _effective(factors: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``(n, D)``: per row, the dimensions of ``order`` whose factor is > 1, in that
    order, padded with -1."""
    live = factors[:, order] > 1
    # rows share one of at most 2^D live patterns: order each pattern once
    code = live @ (1 << np.arange(live.shape[1], dtype=np.int64))
    patterns, inverse = np.unique(code, return_inverse=True)
    out = np.full((len(patterns), live.shape[1]), -1, dtype=np.asarray(order).dtype)
    for u, c in enumerate(patterns):
        seq = np.asarray(order)[(c >> np.arange(live.shape[1])) & 1 == 1]
        out[u, :len(seq)] = seq
    return out[inverse.ravel()]


def best_orders(layer: Layer, arch: ArchSpec, cost: Any, batch: MappingBatch, objective: str, *,
                structure: OrderStructure | None = None, chunk: int = 200_000) -> tuple[np.ndarray, np.ndarray, int]:
    """The exact best loop orders of every row of ``batch`` (factors and bypass fixed)
    under an order-separable ``cost``: returns ``(objective value (n,), orders (n, L, D),
    mappings scored)``. Rows the cost model finds invalid get ``inf``."""
    s = structure or OrderStructure.of(layer)
    n, L, _ = batch.temporal.shape
    levels = list(range(1, L))
    if not levels:
        r = cost(layer, arch, batch)
        v = objective_of(objective, r.energy_pj, r.compute_cycles, r.bandwidth_cycles)
        return np.where(np.asarray(r.valid, dtype=bool), v, np.inf), batch.order.copy(), n

    def score(b: MappingBatch, rows: np.ndarray) -> Any:
        return cost(layer, arch, b)

    if not s.sliding:
        canon = canonical_orders(s)
        best, choice, scored = separable_best(score, batch, levels, [canon] * len(levels), objective, chunk)
        orders = batch.order.copy()
        for k, li in enumerate(levels):
            orders[:, li, :] = np.stack(canon)[choice[:, k]]
        valid = np.asarray(cost(layer, arch, MappingBatch(batch.dims, batch.temporal, batch.spatial_x,
                                                          batch.spatial_y, orders, batch.keep)).valid, dtype=bool)
        return np.where(valid, best, np.inf), orders, scored + n
    return permutation_best(score, batch, levels, objective, chunk)


def _front(vec: np.ndarray) -> np.ndarray:
    """:func:`pareto_mask` of ``vec`` (``(g, m, k)``), computed on fewer vectors: equal
    vectors but the first, and vectors that one of a few probes (the least in each
    coordinate and in their sum) dominates, are not on the front; only the rest are
    compared pairwise (padded per set with +inf vectors, which nothing finite fails to
    dominate)."""
    g, m, k = vec.shape
    x = np.round(vec, 6)
    gi = np.repeat(np.arange(g), m)
    flat = x.reshape(g * m, k)
    order = np.lexsort((*(flat[:, j] for j in range(k - 1, -1, -1)), gi))
    srt = flat[order]
    same = np.zeros(g * m, dtype=bool)
    same[1:] = (srt[1:] == srt[:-1]).all(axis=1) & (gi[order][1:] == gi[order][:-1])
    keep = np.empty(g * m, dtype=bool)
    keep[order] = ~same                                    # lexsort is stable: the first stays
    keep = keep.reshape(g, m)
    probes = np.concatenate([np.argmin(x, axis=1), np.argmin(x.sum(axis=2), axis=1)[:, None]], axis=1)
    P = np.take_along_axis(x, probes[:, :, None], axis=1)                      # (g, p, k)
    le = (P[:, :, None, :] <= x[:, None, :, :]).all(axis=-1)
    lt = (P[:, :, None, :] < x[:, None, :, :]).any(axis=-1)
    keep &= ~(le & lt).any(axis=1)
    cnt = keep.sum(axis=1)
    S = int(cnt.max())
    idx = np.argsort(~keep, axis=1, kind="stable")[:, :S]                      # the kept, in order
    sub = np.take_along_axis(x, idx[:, :, None], axis=1)
    pad = np.arange(S)[None, :] >= cnt[:, None]
    sub[pad] = np.inf
    front = pareto_mask(sub) & ~pad
    out = np.zeros((g, m), dtype=bool)
    np.put_along_axis(out, idx, front, axis=1)
    return out


def permutation_best(score: Score, batch: MappingBatch, levels: list[int], objective: str,
                  chunk: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`best_orders` with every permutation of each level's loops of extent > 1.

    Each level's permutations are scored with the other levels at a reference order;
    per row, the level's terms on the front (:func:`_front`) are kept, padded to the
    batch's largest front with +inf terms, and every combination of one term per level is
    scored at once (the first best in :func:`itertools.product` order wins)."""
    n, L, D = batch.temporal.shape
    ref = np.tile(np.arange(D), (n, L, 1))

    def with_order(rows: np.ndarray, order: np.ndarray) -> MappingBatch:
        return MappingBatch(batch.dims, batch.temporal[rows], batch.spatial_x[rows], batch.spatial_y[rows],
                            order, batch.keep[rows])

    e0, compute, bw0, leak = _run(score, with_order(np.arange(n), ref), chunk)
    K = bw0.shape[1]                   # bandwidth columns (bandwidth_columns)
    evaluated = n
    fronts = []                        # per level: terms (n, M) energy, (n, M, K) bandwidth, (n, M, D) orders
    for li in levels:
        moving = batch.temporal[:, li, :] > 1                               # (n, D)
        patterns, inverse = np.unique(moving, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        groups = []
        for k, pat in enumerate(patterns):
            members = np.flatnonzero(inverse == k)
            mv, still = np.flatnonzero(pat), np.flatnonzero(~pat)
            perms = (np.array(list(itertools.permutations(mv)), dtype=np.int64).reshape(-1, len(mv))
                     if len(mv) else np.zeros((1, 0), dtype=np.int64))
            groups.append((members, np.concatenate([perms, np.broadcast_to(still, (len(perms), len(still)))], axis=1)))
        rl = np.concatenate([np.repeat(mem, len(lo)) for mem, lo in groups])
        orders = ref[rl].copy()
        orders[:, li, :] = np.concatenate([np.tile(lo, (len(mem), 1)) for mem, lo in groups])
        energy, _, bw, _ = _run(score, with_order(rl, orders), chunk, rl)
        evaluated += len(rl)
        vec_all = np.concatenate([(energy - e0[rl])[:, None], bw - bw0[rl]], axis=1)
        start = 0
        kept = []
        for members, level_orders in groups:
            g, m = len(members), len(level_orders)
            vec = vec_all[start:start + g * m].reshape(g, m, K + 1)
            start += g * m
            front = _front(vec)
            idx = np.argsort(~front, axis=1, kind="stable")[:, :int(front.sum(axis=1).max())]
            kept.append((members, vec, level_orders, front, idx))
        M = max(idx.shape[1] for *_, idx in kept)
        te = np.full((n, M), np.inf)
        tb = np.full((n, M, K), np.inf)
        to = np.zeros((n, M, D), dtype=np.int64)
        for members, vec, level_orders, front, idx in kept:
            w = idx.shape[1]
            ok = np.take_along_axis(front, idx, axis=1)
            sel = np.take_along_axis(vec, idx[:, :, None], axis=1)
            te[members, :w] = np.where(ok, sel[:, :, 0], np.inf)
            tb[members, :w] = np.where(ok[:, :, None], sel[:, :, 1:], np.inf)
            to[members, :w] = level_orders[idx]
        fronts.append((te, tb, to))
    # every combination of one term per level, rows in blocks that keep the arrays small
    sizes = [f[0].shape[1] for f in fronts]
    combos = math.prod(sizes)
    best = np.empty(n)
    pick = np.empty(n, dtype=np.int64)
    step = max(1, 4_000_000 // max(combos * (K + 1), 1))
    for lo in range(0, n, step):
        r = slice(lo, min(lo + step, n))
        de = np.zeros((r.stop - r.start,) + (1,) * len(fronts))
        dbw = np.zeros((r.stop - r.start,) + (1,) * len(fronts) + (K,))
        for k, (te, tb, _) in enumerate(fronts):
            shape = [1] * len(fronts)
            shape[k] = sizes[k]
            de = de + te[r].reshape((-1, *shape))
            dbw = dbw + tb[r].reshape((-1, *shape, K))
        e = e0[r].reshape((-1,) + (1,) * len(fronts)) + de
        b = bw0[r].reshape((-1,) + (1,) * len(fronts) + (K,)) + dbw
        v = objective_of(objective, e, compute[r].reshape((-1,) + (1,) * len(fronts)), b,
                         leak[r].reshape((-1,) + (1,) * len(fronts))).reshape(len(e), -1)
        pick[r] = np.argmin(v, axis=1)
        best[r] = v[np.arange(len(v)), pick[r]]
    orders = ref.copy()
    digits = np.array(np.unravel_index(pick, sizes)).reshape(len(fronts), n)
    for k, li in enumerate(levels):
        orders[:, li] = fronts[k][2][np.arange(n), digits[k]]
    valid = np.asarray(score(with_order(np.arange(n), orders), np.arange(n)).valid, dtype=bool)
    return np.where(valid, best, np.inf), orders, evaluated + n


@dataclass(frozen=True)
class OrderCoupling:
    """How a cost's loop orders are coupled across levels, where they are not
    order-separable (a cost model's ``order_coupling``:
    :attr:`evaluators.loopnest.LoopNestCost.order_coupling`).

    Attributes:
        innermost: a loop's term at a level depends, besides that level's order, on the
            innermost moving loop (factor > 1) of the lowest level below it that has one
            (Timeloop's window rule: a step keeps the old tile's overlap only if it
            translates the tile as the innermost moving loop above the tile does).
        inner_level: the innermost level's order counts too (a MAC's operand read on
            change: the one-word input of a MAC sits below every loop).
    """

    innermost: bool = False
    inner_level: bool = False


def _instances(batch: MappingBatch) -> np.ndarray:
    """``(n, L)`` active instances: the product of the spatial factors above each level."""
    sp = np.prod(batch.spatial_x * batch.spatial_y, axis=2).astype(float)          # (n, L)
    above = np.cumprod(sp[:, ::-1], axis=1)[:, ::-1]                                 # levels >= l
    return np.concatenate([above[:, 1:], np.ones((len(sp), 1))], axis=1)


def coupled_best_orders(layer: Layer, arch: ArchSpec, cost: Any, batch: MappingBatch, objective: str, *,
                        coupling: OrderCoupling | None = None,
                        chunk: int = 200_000) -> tuple[np.ndarray, np.ndarray, int]:
    """The exact best loop orders of every row of ``batch`` (factors and bypass fixed)
    where the cost is not order-separable: under a ``coupling``
    (:class:`OrderCoupling`) and/or with whole-vector accesses (levels of ``arch`` with
    ``vector_words > 1``). Returns ``(objective value (n,), orders (n, L, D), mappings
    scored)``, as :func:`best_orders`; rows the cost model finds invalid get ``inf``.

    **Why it is exact.**

    * *Innermost coupling* (Timeloop's window rule). A fill at level ``c`` is
      ``w + sum_j n_j g_j`` over the loops ``j`` above ``c``, with ``g_j = w - overlap_j``
      if ``j`` translates the tile as the innermost moving loop ``m`` above ``c`` does,
      else ``w``. ``n_j`` is the product of the loops outside ``j`` (the levels above:
      a product; ``j``'s own level: its order), and ``j``'s translation and overlap are
      set by its step and by the loops inside it (the lower levels': sets; its own
      level's: its order). ``m`` is the innermost moving loop of the lowest level above
      ``c`` that has one, and nothing moves between it and ``c``, so its translation is
      its step along its own dimension: a function of *which dimension* that level's
      innermost moving loop is over. So once every level's innermost moving dimension is
      fixed (an *assignment*), every count is again a constant plus one term per level
      depending on that level's order alone, and the per-level search below is exact
      over the orders with those innermost dimensions. Every order combination has one
      assignment; the search runs over every assignment (per row, the product over
      levels of the number of moving loops) and keeps the best.
    * *Inner level* (reads on change): the MAC's one-word tile has every loop above it,
      level 0's included, so level 0's order is searched like the others' (its loops'
      terms are separable as every level's are).
    * *Whole vectors*: a level of ``V > 1`` words per access costs
      ``inst x ceil(words / (inst x V))`` accesses per operand, reads and writes apart:
      not a sum of per-level terms, but a non-decreasing function of the words, which
      are. So each level's terms are vectors of (the energy outside those accesses,
      every level's bandwidth cycles, and the words each such level reads and writes of
      each operand); the objective is non-decreasing in every coordinate of their sum
      (latency and leakage grow with the bandwidths, energy with the words through the
      ceiling), so a term that another of its level's terms is at most in every
      coordinate is dropped without loss (:func:`_front`), and every combination of the
      rest is scored with the exact rounding.

    Leakage is added back from each combination's latency as in :func:`best_orders`
    (a rate fixed by the spatial factors, under either leakage rule)."""
    check_objective(objective)
    n, L, D = batch.temporal.shape
    coupling = coupling or OrderCoupling()
    levels = list(range(0 if coupling.inner_level else 1, L))
    if not levels or not n:
        r = cost(layer, arch, batch)
        v = objective_of(objective, r.energy_pj, r.compute_cycles, r.bandwidth_cycles)
        return np.where(np.asarray(r.valid, dtype=bool), v, np.inf), batch.order.copy(), n
    # ---- assignments: per row, every choice of each searched level's innermost moving
    # dimension (-1 where the level has no moving loop, or without the coupling)
    moving = batch.temporal > 1                                                   # (n, L, D)
    per_row = []
    for i in range(n):
        choices = [(list(np.flatnonzero(moving[i, li])) or [-1]) if coupling.innermost else [-1] for li in levels]
        per_row.append(np.array(list(itertools.product(*choices)), dtype=np.int64).reshape(-1, len(levels)))
    owner = np.concatenate([np.full(len(a), i) for i, a in enumerate(per_row)])
    assign = np.concatenate(per_row)                                               # (v, len(levels))
    vb = batch.take(owner)
    nv = len(owner)
    # a reference order per virtual row: each level's moving loops in canonical order
    # with the assigned one innermost, then the loops of extent 1
    ref = np.tile(np.arange(D), (nv, L, 1))
    for k, li in enumerate(levels):
        for pat_i in range(nv):
            mv = [d for d in np.flatnonzero(moving[owner[pat_i], li]) if d != assign[pat_i, k]]
            inner = [] if assign[pat_i, k] < 0 else [int(assign[pat_i, k])]
            still = list(np.flatnonzero(~moving[owner[pat_i], li]))
            ref[pat_i, li] = mv + inner + still
    vec_lv = [li for li, lv in enumerate(arch.levels) if lv.vector_words > 1]
    inst = _instances(vb)                                                          # (v, L)
    e_r = np.array([[lv.read_energy_pj.get(op, 0.0) for op in OPERANDS] for lv in arch.levels])
    e_w = np.array([[lv.write_energy_pj.get(op, 0.0) for op in OPERANDS] for lv in arch.levels])
    # per vector coordinate (level, operand, read/write): energy per access x instances and
    # words per access x instances (``ceil(words / div) x coef`` is its energy)
    coef = np.concatenate([inst[:, [li]] * np.concatenate([e_r[li], e_w[li]])[None, :] for li in vec_lv], axis=1) \
        if vec_lv else np.zeros((nv, 0))
    div = np.concatenate([np.repeat(inst[:, [li]] * arch.levels[li].vector_words, 6, axis=1) for li in vec_lv],
                         axis=1) if vec_lv else np.zeros((nv, 0))

    def with_order(rows: np.ndarray, order: np.ndarray) -> MappingBatch:
        return MappingBatch(vb.dims, vb.temporal[rows], vb.spatial_x[rows], vb.spatial_y[rows], order, vb.keep[rows])

    def coords(rows: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(coordinates (m, 1 + Kb + J), compute (m,), leakage rate (m,))``: the dynamic
        energy, the ``Kb`` bandwidth columns (:func:`bandwidth_columns`) and the vector
        levels' words."""
        parts, comp, leak = [], np.empty(len(rows)), np.zeros(len(rows))
        for lo in range(0, len(rows), chunk):
            sl = slice(lo, min(lo + chunk, len(rows)))
            r = cost(layer, arch, with_order(rows[sl], order[sl]))
            e = np.asarray(r.energy_pj, dtype=float).copy()
            static = np.asarray(r.leakage_energy_pj, dtype=float).sum(axis=1)
            lat = np.asarray(r.latency_cycles, dtype=float)
            e -= static
            leak[sl] = np.where(lat > 0, static / np.where(lat > 0, lat, 1.0), 0.0)
            words = []
            for li in vec_lv:
                rv, wv = np.asarray(r.read_vectors)[:, li], np.asarray(r.write_vectors)[:, li]
                e -= (rv * e_r[li]).sum(axis=1) + (wv * e_w[li]).sum(axis=1)
                words += [np.asarray(r.reads)[:, li], np.asarray(r.writes)[:, li]]
            parts.append(np.concatenate([e[:, None], bandwidth_columns(r), *words], axis=1))
            comp[sl] = np.asarray(r.compute_cycles, dtype=float)
        return np.concatenate(parts), comp, leak

    base, compute, leak = coords(np.arange(nv), ref)
    scored = nv
    K = base.shape[1]
    Kb = K - 1 - 6 * len(vec_lv)                # bandwidth columns, as the cost's results give them
    fronts = []                    # per level: terms (v, M, K) and orders (v, M, D)
    for k, li in enumerate(levels):
        key = np.concatenate([moving[owner, li], assign[:, [k]]], axis=1)
        patterns, inverse = np.unique(key, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        groups = []
        for g, pat in enumerate(patterns):
            members = np.flatnonzero(inverse == g)
            mv, still, a = np.flatnonzero(pat[:D]), np.flatnonzero(~pat[:D].astype(bool)), int(pat[D])
            perms = [p for p in itertools.permutations(mv) if a < 0 or p[-1] == a] if len(mv) else [()]
            lo = np.array([list(p) + list(still) for p in perms], dtype=np.int64).reshape(len(perms), D)
            groups.append((members, lo))
        rl = np.concatenate([np.repeat(mem, len(lo)) for mem, lo in groups])
        orders = ref[rl].copy()
        orders[:, li, :] = np.concatenate([np.tile(lo, (len(mem), 1)) for mem, lo in groups])
        vals, _, _ = coords(rl, orders)
        scored += len(rl)
        terms = vals - base[rl]
        M = max(len(lo) for _, lo in groups)
        te = np.full((nv, M, K), np.inf)
        to = np.zeros((nv, M, D), dtype=np.int64)
        start = 0
        for members, lo in groups:
            g, m = len(members), len(lo)
            vec = terms[start:start + g * m].reshape(g, m, K)
            start += g * m
            front = _front(vec)
            idx = np.argsort(~front, axis=1, kind="stable")
            ok = np.take_along_axis(front, idx, axis=1)
            sel = np.take_along_axis(vec, idx[:, :, None], axis=1)
            te[members, :m] = np.where(ok[:, :, None], sel, np.inf)
            to[members, :m] = lo[idx]
        width = int(np.isfinite(te[:, :, 0]).sum(axis=1).max())
        fronts.append((te[:, :width], to[:, :width]))
    # ---- every combination of one surviving term per level, rows in blocks
    sizes = [f[0].shape[1] for f in fronts]
    combos = math.prod(sizes)
    best = np.empty(nv)
    pick = np.empty(nv, dtype=np.int64)
    step = max(1, 4_000_000 // max(combos * K, 1))
    nl = len(fronts)
    for lo in range(0, nv, step):
        r = slice(lo, min(lo + step, nv))
        X = base[r].reshape((-1,) + (1,) * nl + (K,))
        for k, (te, _) in enumerate(fronts):
            shape = [1] * nl
            shape[k] = sizes[k]
            X = X + te[r].reshape((-1, *shape, K))
        X = X.reshape(len(X), -1, K)                                          # (rows, combos, K)
        finite = np.isfinite(X).all(axis=2)
        Xf = np.where(finite[:, :, None], X, 0.0)
        e = Xf[:, :, 0]
        if vec_lv:
            e = e + (np.ceil(Xf[:, :, 1 + Kb:] / div[r][:, None, :]) * coef[r][:, None, :]).sum(axis=2)
        v = objective_of(objective, e, compute[r][:, None], Xf[:, :, 1:1 + Kb], leak[r][:, None])
        v = np.where(finite, v, np.inf)
        pick[r] = np.argmin(v, axis=1)
        best[r] = v[np.arange(len(v)), pick[r]]
    vorders = ref.copy()
    digits = np.array(np.unravel_index(pick, sizes)).reshape(nl, nv)
    for k, li in enumerate(levels):
        vorders[:, li] = fronts[k][1][np.arange(nv), digits[k]]
    # per row, the best of its assignments (the first of equal ones)
    values = np.full(n, np.inf)
    orders = batch.order.copy()
    for j in range(nv):
        i = owner[j]
        if best[j] < values[i]:
            values[i] = best[j]
            orders[i] = vorders[j]
    valid = np.asarray(cost(layer, arch, MappingBatch(batch.dims, batch.temporal, batch.spatial_x, batch.spatial_y,
                                                      orders, batch.keep)).valid, dtype=bool)
    return np.where(valid, values, np.inf), orders, scored + n
