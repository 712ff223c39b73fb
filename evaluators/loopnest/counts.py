"""The counting rules of the loop-nest model, vectorized over a batch of mappings.

Scope: what is counted and how (this docstring, :func:`count` and its helpers), the
per-(layer, architecture) tables the rules read (:class:`LayerConstants`,
:class:`LayerArch`, :func:`prepare`) and the ``fills`` hook's view of one (operand,
level) pair (:class:`FillContext`). Energy from the counts is
:mod:`evaluators.loopnest.energy`; latency, validity and the result layout are
:mod:`evaluators.loopnest.reference`; the compiled copy of these rules is
:mod:`evaluators.loopnest.kernel`. The same code runs on numpy and on ``jax.numpy``
(pass ``xp``).

Semantics (what is counted; :mod:`evaluators.loopnest.walk` implements these rules by
literally walking the loop nest and must agree exactly):

* **Loop nest.** Outermost first: for each level from the backing store down to level 0,
  its temporal loops in the mapping's order, then its X and Y spatial loops; the MAC is
  innermost. Dimensions are padded to the product of their factors (see
  :mod:`mappers.mapping`).
* **Tiles.** An instance of level ``l`` holds, for every operand it keeps, the bounding
  box (in the operand's index space) of the elements touched by the loops inside it:
  its own temporal and spatial loops and all loops of lower levels.
* **Fills (temporal reuse).** Whenever the loops above level ``l`` move to a new
  iteration, each instance's tile moves; the instance fetches from its parent (the next
  level above that keeps the operand) the words of the new tile that were not in the
  old one. Sliding-window overlap (``stride*P + R``) is therefore reused, and a tile that
  does not move (the loops that changed are irrelevant to the operand) costs nothing.
* **Multicast (spatial reuse).** Children of a parent instance that need identical tiles
  at the same time (they differ only in dimensions irrelevant to the operand, or their
  offsets coincide, as on Eyeriss's diagonals) are served by one parent read; partially
  overlapping tiles of different children are served separately. Every child still
  receives its words over the network (NoC deliveries).
* **MAC operands.** A MAC unit stores nothing: every iteration it reads ``W`` and ``I``
  from the innermost level that keeps them (multicast as above) and updates ``O`` there.
* **Outputs.** A child evicts every word of its old tile that leaves it to the parent
  (the final tile included), so writebacks equal fills. A word is fetched back from the
  parent only if it already holds a partial sum (it was touched before); a first touch
  starts from zero. Children that reduce into the same words (reduction dimensions
  unrolled spatially) are summed on the way up: the parent receives one update per
  group, and one child per group receives the old partial sum.
* **Energy** = sum over levels and operands of reads x read energy + writes x write
  energy, + NoC deliveries x the energy of each fanout crossed, + executed MACs (padded
  iterations included) x MAC energy, + leakage: per level, ``leakage_pj_per_cycle x
  instances x latency`` (every physical instance leaks for the whole run, used or not;
  under ``Conventions.leakage="utilized_instances"``, Timeloop's, only the active
  instances; reported apart as ``leakage_energy_pj``, not in ``level_energy_pj``).
* **Latency** = max(compute cycles, every level's bandwidth cycles), where compute cycles
  are the temporal iterations (one MAC per PE per cycle) plus, for systolic arrays,
  fill/drain per fold (:mod:`evaluators.systolic_timing`), and bandwidth cycles are a level's
  reads + writes per active instance divided by its bandwidth (words/cycle), or, where it
  limits reads or writes apart, the largest of that and its reads over its read bandwidth
  and its writes over its write bandwidth (:mod:`evaluators.loopnest.bandwidth`).
* **Validity**: every tile fits its level's capacity (per partition, or summed for a
  shared buffer), spatial factors fit the fanouts, and factors cover every dimension.

Per-word counts are exact integers for divisor and padded factorizations alike; the
formulas (with ``N_j`` transitions of loop ``j`` and the box-overlap of the shifted tile)
are derived in the comments below.

Per-word counts are exact integers for divisor and padded factorizations alike; the
formulas (with ``N_j`` transitions of loop ``j`` and the box-overlap of the shifted tile)
are derived in the comments below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from evaluators.loopnest.bandwidth import bandwidth_cycles
from evaluators.loopnest.conventions import Conventions
from evaluators.loopnest.energy import access_energy
from mappers.mapping_space import divisors
from mappers.workloads import Layer

__all__ = ["FillContext", "LayerArch", "LayerConstants", "active_instances", "axis_extent", "convention_fill", "count", "distinct_two_aps",
           "fix_multi", "layer_constants", "least_two_aps", "prepare", "product_of", "relevant_moves"]


@dataclass(frozen=True)
class LayerConstants:
    """Layer data the vectorized core needs, as arrays."""

    dims: tuple[str, ...]
    sizes: np.ndarray                 # (D,)
    coef: tuple[np.ndarray, ...]      # per operand: (A_t, D) axis coefficients
    relevant: np.ndarray              # (3, D) bool


def layer_constants(layer: Layer) -> LayerConstants:
    dims = layer.dim_names
    coefs = []
    rel = np.zeros((3, len(dims)), dtype=bool)
    for k, op in enumerate(OPERANDS):
        t = layer.tensor(op)
        c = np.zeros((len(t.axes), len(dims)), dtype=np.int64)
        for a, axis in enumerate(t.axes):
            for d, coef in axis:
                c[a, dims.index(d)] = coef
                rel[k, dims.index(d)] = True
        if (np.count_nonzero(c, axis=0) > 1).any():
            raise ValueError(f"layer {layer.name!r}: a dimension appears in two axes of {op}")
        coefs.append(c)
    return LayerConstants(dims, np.array([layer.dims[d] for d in dims]), tuple(coefs), rel)



@dataclass(frozen=True)
class FillContext:
    """What :func:`count` knows about one (operand, level) pair when it asks a ``fills``
    hook for the fill count; arrays are batch-last.

    Attributes:
        t, c: operand index (0 W, 1 I, 2 O) and level (``-1``: the one word a MAC holds at
            its input, under ``Conventions.mac_operand_reads="on_change"`` only).
        F: the model's per-instance fill count under the batch's loop orders ``(B,)``.
        words: the operand's tile words at every level ``(L, B)``.
        E: tile extents per level and dimension ``(L, D, B)`` (temporal and spatial
            loops at or below the level).
        T_above: product of the temporal factors above each level ``(L, D, B)``.
        inst: active instances of each level ``(L, B)``.
        SP: spatial factors per level and dimension ``(L, D, B)``.
        axes: the operand's axes as ``[(dim index, coefficient), ...]`` lists.
        L, D: levels and (live) dimensions.
        nest_dims, nest_factors, n_trans: per temporal loop slot in nest order
            (outermost first, ``(L * D, B)``): its dimension, its factor and how often it
            increments.
        T, steps: temporal factors and the step of each level's temporal loops
            ``(L, D, B)``.
        relevant: ``(3, D)`` which dimensions each operand's tensor is indexed by.
    """

    t: int
    c: int
    F: Any
    words: Any
    E: Any
    T_above: Any
    inst: Any
    SP: Any
    axes: list[list[tuple[int, float]]]
    L: int
    D: int
    nest_dims: Any
    nest_factors: Any
    n_trans: Any
    T: Any = None
    steps: Any = None
    relevant: Any = None

    def moves(self, dims: frozenset[int], level: int) -> Any:
        """``(L, B)``: per level ``l`` above ``level``, the sum of ``n_trans_j`` over its
        loops ``j`` that are over ``dims`` or have such a loop (factor > 1) inside them
        above ``level`` (the terms of :meth:`multiplier`, level by level)."""
        per_slot = self._moving(dims, level)
        out = np.zeros((self.L, self.nest_dims.shape[1]))
        for k in range(per_slot.shape[0] // self.D):
            out[self.L - 1 - k] = per_slot[k * self.D:(k + 1) * self.D].sum(axis=0)
        return out

    def multiplier(self, dims: frozenset[int], level: int) -> Any:
        """How many times a tile of level ``level`` must be fetched whole if it moves
        exactly when a loop over one of ``dims`` (above ``level``) changes its position:
        ``1 + sum of n_trans_j`` over the loops ``j`` above ``level`` that are over
        ``dims`` or have such a loop (factor > 1) inside them above ``level``. For an
        operand whose every axis is one dimension and ``dims`` its dimensions, this times
        the tile's words is the fill count itself (numpy only)."""
        return 1.0 + self._moving(dims, level).sum(axis=0)

    def _moving(self, dims: frozenset[int], level: int) -> Any:
        """``(s, B)``: ``n_trans_j`` of each loop ``j`` above ``level`` whose step moves a
        tile that depends on ``dims`` (:func:`relevant_moves`), else 0."""
        s_b = (self.L - 1 - level) * self.D
        over = np.isin(self.nest_dims[:s_b], list(dims))
        return self.n_trans[:s_b] * relevant_moves(np, over, self.nest_factors, s_b)


def distinct_two_aps(xp: Any, a: Any, m: Any, b: Any, n: Any, integer: bool) -> Any:
    """``|{a*i + b*j : i < m, j < n}|`` for positive steps ``a``, ``b``.

    Pairs ``(i, j)`` and ``(i + b', j - a')`` (``a' = a/g``, ``b' = b/g``) give the same
    value, so ``m*n - max(0, m - b') * max(0, n - a')`` values are distinct.
    """
    if integer:
        g = xp.gcd(a, b)
        ap, bp = a // g, b // g
    else:  # continuous relaxation: treat steps as coprime
        ap, bp = a, b
    return m * n - xp.maximum(0, m - bp) * xp.maximum(0, n - ap)


def axis_extent(axis: list[tuple[int, float]], E: Any) -> Any:
    """The extent of a tile along one tensor axis ``sum_d cf_d x d`` (``axis`` as
    ``[(dim index, cf), ...]``): ``1 + sum_d cf_d (e_d - 1)``, for tile extents ``E``
    ``(..., D, B)`` per dimension (its bounding box along the axis)."""
    return 1 + sum((cf * (E[..., d, :] - 1) for d, cf in axis), 0.0)


def relevant_moves(xp: Any, rel_slot: Any, f: Any, s_c: int) -> Any:
    """``(s_c, B)``: 1 where a step of nest slot ``j`` (among the first ``s_c``, the
    loops above a level) changes an index the operand depends on: ``j`` or a slot inside
    it (below it in nest order, still above the level) is over one of the operand's
    dimensions (``rel_slot``, ``(S, B)`` bool) with a factor > 1."""
    if s_c == 0:
        return xp.zeros((0, f.shape[-1]))
    hit = rel_slot[:s_c] & (f[:s_c] > 1)
    return xp.where(xp.flip(xp.cumsum(xp.flip(hit, axis=0), axis=0), axis=0) > 0, 1.0, 0.0)


def convention_fill(xp: Any, conv: Conventions, axes: list, c: int, w_c: Any, ext_c: list, shift: Any,
                     n_trans: Any, f: Any, L: int, D: int, rel_slot: Any = None) -> Any:
    """Per-instance fills of a tile of ``w_c`` words (axis extents ``ext_c``) at level
    ``c`` (``-1``: the one word a MAC holds at its input) under ``conv.window_reuse``:
    the first tile, then per step of a loop ``j`` above ``c`` the words of the new tile
    outside the old (``w - overlap_j``); under ``"innermost"`` only when ``j`` translates
    the tile exactly as the innermost moving loop ``m`` above ``c`` does (``j = m``
    included), else the whole tile (Timeloop's ``SaveAndSubtractIfSameStride``: see
    :class:`Conventions`); under ``"none"`` the whole tile at every step of ``j`` that
    changes one of the operand's indices (:func:`relevant_moves`, ZigZag's rule)."""
    s_c = (L - 1 - c) * D
    B = w_c.shape[-1]
    ov = xp.ones((s_c, B))
    trans = []
    for ax, e in zip(axes, ext_c):
        tr = sum(cf * shift(d, c) for d, cf in ax)                  # signed translation (s_c, B)
        trans.append(tr)
        ov = ov * xp.maximum(0.0, e[None, :] - xp.abs(tr))
    moved = w_c[None, :] - ov
    if conv.window_reuse == "none":
        return w_c + xp.sum(n_trans[:s_c] * relevant_moves(xp, rel_slot, f, s_c) * w_c[None, :], axis=0)
    if conv.window_reuse == "innermost" and s_c:
        live = f[:s_c] > 1
        m = s_c - 1 - xp.argmax(live[::-1], axis=0)                 # innermost moving loop
        same = xp.ones((s_c, B), dtype=bool)
        for tr in trans:
            same = same & (tr == xp.take_along_axis(tr, m[None, :], axis=0))
        moved = xp.where(same, moved, w_c[None, :])
    return w_c + xp.sum(n_trans[:s_c] * moved, axis=0)



@dataclass(frozen=True)
class LayerArch:
    """Everything about a (layer, architecture) pair :func:`count` needs that is not per
    mapping: the layer's tensor axes and sizes, and the levels' holds, fanouts,
    multicast, energies, bandwidths and capacities as arrays (:func:`prepare`)."""

    L: int
    D: int
    coef: tuple[np.ndarray, ...]          # per operand (A, D)
    relevant: np.ndarray                  # (3, D)
    holds: np.ndarray                     # (L, 3) level can hold operand
    fanout_x: np.ndarray                  # (L,)
    fanout_y: np.ndarray
    multicast: np.ndarray                 # (L,) bool
    e_read: np.ndarray                    # (L, 3)
    e_write: np.ndarray                   # (L, 3)
    e_noc: np.ndarray                     # (L,)
    bandwidth: np.ndarray                 # (L,) words/cycle, inf if unlimited
    cap: np.ndarray                       # (L, 3) per-operand capacity (inf unbounded)
    shared: np.ndarray                    # (L,) bool shared capacity
    cap_shared: np.ndarray                # (L,)
    mac_energy: float
    n_macs: int
    macs: int
    sizes: np.ndarray                     # (D,)
    pe_level: int                         # level whose fanout is the PE array (systolic)
    vector_words: np.ndarray = field(default_factory=lambda: np.ones(0))   # (L,) words per access
    read_bandwidth: np.ndarray = field(default_factory=lambda: np.ones(0))  # (L,) words/cycle, inf if unlimited
    write_bandwidth: np.ndarray = field(default_factory=lambda: np.ones(0))
    split_bandwidth: bool = False         # some level has a read or write bandwidth


def prepare(layer: Layer, arch: ArchSpec, k: LayerConstants | None = None) -> LayerArch:
    """The :class:`LayerArch` of ``layer`` on ``arch`` (``k``: its constants, if already
    computed)."""
    k = k or layer_constants(layer)
    lv = arch.levels
    return LayerArch(
        L=arch.n_levels, D=len(k.dims), coef=k.coef, relevant=k.relevant,
        holds=np.array([[op in x.tensors for op in OPERANDS] for x in lv]),
        fanout_x=np.array([x.fanout_x for x in lv]), fanout_y=np.array([x.fanout_y for x in lv]),
        multicast=np.array([x.multicast for x in lv]),
        e_read=np.array([[x.read_energy_pj.get(op, 0.0) for op in OPERANDS] for x in lv]),
        e_write=np.array([[x.write_energy_pj.get(op, 0.0) for op in OPERANDS] for x in lv]),
        e_noc=np.array([x.noc_energy_pj for x in lv]),
        bandwidth=np.array([x.bandwidth_words_per_cycle or np.inf for x in lv]),
        cap=np.array([[x.capacity_of(op) for op in OPERANDS] for x in lv]),
        shared=np.array([x.shared for x in lv]),
        cap_shared=np.array([x.capacity_of("W") if x.shared else np.inf for x in lv]),
        mac_energy=arch.mac_energy_pj, n_macs=arch.n_macs, macs=layer.macs, sizes=k.sizes,
        pe_level=arch.pe_array_level, vector_words=np.array([x.vector_words for x in lv], dtype=float),
        read_bandwidth=np.array([x.read_bandwidth_words_per_cycle or np.inf for x in lv]),
        write_bandwidth=np.array([x.write_bandwidth_words_per_cycle or np.inf for x in lv]),
        split_bandwidth=arch.split_bandwidth,
    )


def _cumsum0(xp: Any, x: Any) -> Any:
    """Inclusive prefix sum along axis 0 (numpy: a row loop, ~8x faster than np.cumsum
    on short axes)."""
    if xp is not np:
        return xp.cumsum(x, axis=0)
    out = np.empty_like(x)
    out[0] = x[0]
    for j in range(1, x.shape[0]):
        np.add(out[j - 1], x[j], out=out[j])
    return out


def active_instances(xp: Any, sp_tot: Any) -> Any:
    """``(L, B)``: the active instances of every level, the product of the spatial
    factors of the levels above it (``sp_tot`` ``(L, B)``: each level's product of its
    spatial factors; the backing store has one instance)."""
    rows = [xp.ones(sp_tot.shape[-1])]
    for li in range(sp_tot.shape[0] - 1, 0, -1):
        rows.append(rows[-1] * sp_tot[li])
    return xp.stack(rows[::-1])


def product_of(rows: list[Any]) -> Any:
    out = rows[0]
    for r in rows[1:]:
        out = out * r
    return out


def count(xp: Any, st: LayerArch, T: Any, SX: Any, SY: Any, order: Any, keep: Any,
          integer: bool, fills: Callable[[FillContext], Any] | None = None,
          conventions: Conventions | None = None, unknown_below: int = 0) -> dict[str, Any]:
    """The access counts and energy of one block of mappings, batch-last: every array is
    ``(..., B)``. The core of :func:`evaluate_batch` (which adds latency and validity);
    :mod:`evaluators.differentiable` and :mod:`evaluators.gradient_codesign` call it on
    ``jax.numpy`` with relaxed (real) factors.

    Branch-free in the data, so ``jax.jit`` can trace it (numpy additionally skips work
    no mapping of the block needs). Counts are float64: every quantity is an integer
    below 2**53, so float arithmetic is exact here, and it vectorizes better than int64.
    Inputs: ``T``, ``SX``, ``SY``, ``order`` of shape ``(L, D, B)``, ``keep`` ``(L, 3, B)``.
    Returns a dict: ``R`` / ``Wr`` reads and writes ``(L, 3, B)``, ``noc`` ``(L, B)``,
    ``TW`` tile words ``(L, 3, B)``, ``level_energy`` ``(L, B)``, ``macs_exec``,
    ``energy``, ``iters`` (temporal iterations), ``BW`` bandwidth cycles ``(L, B)``,
    ``padded`` (padded dimension sizes ``(D, B)``), ``inst`` (active instances ``(L, B)``), and the inputs ``SX``, ``SY``, ``T``,
    ``keep``.

    ``fills``: replaces the per-instance fill count ``F`` of every (operand, level) pair
    (levels ``c >= 0``; a MAC's reads are the iterations, except under
    ``Conventions.mac_operand_reads="on_change"``, where the hook is asked for a MAC's
    on-change count too, with ``c = -1``) by ``fills(ctx)`` with a
    :class:`FillContext`; everything the counts derive from ``F`` (parent reads with
    multicast, evictions and refills of partial sums, NoC deliveries, energy, bandwidth
    cycles) follows unchanged. Lower bounds use it (:mod:`evaluators.loopnest.bounds`).

    ``conventions``: the counting rules where tools differ (:class:`Conventions`);
    ``None`` is the default, on the code path the default rules have always taken.

    ``unknown_below`` (lower bounds, numpy only; 0 otherwise): the tiles of levels below
    ``unknown_below - 1`` are undecided, so the strides between a parent's children along
    a two-dimension (sliding-window) axis, which are those tiles' extents, are unknown
    where a fanout level ``q`` with ``0 < q < unknown_below`` unrolls the axis: their
    distinct offsets (multicast groups) are then the least over the strides a divisor
    completion may give (:func:`least_two_aps`), not the count of the batch's placement
    of the free factors (a larger tile has fewer coinciding offsets, so the placement's
    count is not a bound).
    """
    conv = None if conventions is None or conventions.default else conventions
    L, D = st.L, st.D
    B = T.shape[-1]
    is_np = xp is np
    SP = SX * SY                                              # (L, D, B)
    TSP = T * SP
    E_rows = [TSP[0]]
    for li in range(1, L):
        E_rows.append(E_rows[-1] * TSP[li])
    E = xp.stack(E_rows)                                      # tile extents e_d(l)
    ones_d = xp.ones((D, B))
    E_below = xp.stack([ones_d, *E_rows[:-1]])                # e_d(l-1)
    # a temporal loop of level l over d strides over everything nested inside it: the
    # lower levels' loops of d and the spatial loops of level l itself
    step_ld = E_below * SP

    # ---- temporal loops in nest order: levels L-1 .. 0, each in the mapping's order
    # (order[l, r] = the dimension at position r of level l).

    def nest(x: Any) -> Any:
        """``(L, D, B)`` -> ``(L*D, B)`` rows in nest order (outermost first)."""
        return xp.concatenate([xp.take_along_axis(x[li], order[li], axis=0) for li in range(L - 1, -1, -1)])

    f = nest(T)                                               # (S, B)
    s_step = nest(step_ld)
    s_dim = xp.concatenate([order[li] for li in range(L - 1, -1, -1)])   # (S, B) dim of slot
    prefix_rows = [xp.ones(B)]
    for j in range(L * D - 1):
        prefix_rows.append(prefix_rows[-1] * f[j])
    n_trans = xp.stack(prefix_rows) * (f - 1)                 # N_j: increments of loop j
    iters = prefix_rows[-1] * f[-1]
    span = (f - 1) * s_step

    sp_tot = xp.stack([product_of([SP[li, d] for d in range(D)]) for li in range(L)])   # (L, B)
    inst = active_instances(xp, sp_tot)                       # (L, B) active instances
    inst_mac = inst[0] * sp_tot[0]
    T_above_rows = [ones_d]
    for li in range(L - 1, 0, -1):
        T_above_rows.append(T_above_rows[-1] * T[li])
    T_above = xp.stack(T_above_rows[::-1])                    # (L, D, B) prod over levels > l
    T_all = T_above[0] * T[0]                                 # (D, B)
    fan = (st.fanout_x * st.fanout_y) > 1                     # (L,) static

    seg_cache: dict[tuple[int, int], tuple[Any, Any, Any]] = {}

    def segment(c: int, p: int) -> tuple[Any, Any, Any]:
        """Spatial loops at levels c < q <= p separate a parent's children: per dim their
        total factor m_d and the stride st_d of the dim's progression (e_d(q-1) at the
        level unrolling it); nlev counts such levels."""
        if (c, p) not in seg_cache:
            lv = range(c + 1, p + 1)
            m_d = product_of([SP[q] for q in lv])
            st_d = product_of([xp.where(SP[q] > 1, E_below[q], 1) for q in lv])
            nlev = sum((SP[q] > 1) * 1 for q in lv)
            seg_cache[(c, p)] = (m_d, st_d, nlev)
        return seg_cache[(c, p)]

    def distinct(t: int, c: int, p: int) -> Any:
        """Distinct child tiles among one parent's children (multicast / reduction
        groups): the child offsets in the operand's index space, counted per axis."""
        m_d, st_d, nlev = segment(c, p)
        C = st.coef[t]
        nd = ones_d[0]
        for a in range(C.shape[0]):
            ds = [d for d in range(D) if C[a, d] != 0]
            if len(ds) == 1:
                nd = nd * m_d[ds[0]]
            elif len(ds) == 2:
                d1, d2 = ds
                m1, m2 = m_d[d1], m_d[d2]
                both = (m1 > 1) & (m2 > 1)
                if is_np and not both.any():
                    nd = nd * m1 * m2
                    continue
                a1 = xp.maximum(C[a, d1] * st_d[d1], 1)
                a2 = xp.maximum(C[a, d2] * st_d[d2], 1)
                if is_np and integer:
                    # only the mappings unrolling both dimensions need the gcd
                    idx = np.flatnonzero(both)
                    two = m1 * m2
                    two[idx] = distinct_two_aps(np, a1[idx].astype(np.int64), m1[idx].astype(np.int64),
                                                 a2[idx].astype(np.int64), m2[idx].astype(np.int64), True)
                elif integer:
                    i64 = [x.astype(np.int64) for x in (a1, m1, a2, m2)]
                    two = distinct_two_aps(xp, i64[0], i64[1], i64[2], i64[3], True).astype(float)
                else:
                    two = distinct_two_aps(xp, a1, m1, a2, m2, False)
                unknown = None
                if unknown_below > 1 and is_np:
                    hit = [(SP[q, d1] > 1) | (SP[q, d2] > 1) for q in range(c + 1, p + 1) if 0 < q < unknown_below]
                    if hit:
                        unknown = both & np.logical_or.reduce(hit)
                if is_np:
                    # a dimension unrolled at several fanout levels of one segment is
                    # no single progression: count those (rare) rows by enumeration
                    multi = both & ((nlev[d1] > 1) | (nlev[d2] > 1))
                    if unknown is not None:
                        multi = multi & ~unknown
                    if multi.any():
                        two = fix_multi(two, multi, two, C[a], (d1, d2), c, p, SX, SY, E_below)
                if unknown is not None and unknown.any():   # strides undecided (see count's docstring)
                    two = np.array(two, dtype=float)
                    for i in np.flatnonzero(unknown):
                        two[i] = least_two_aps(SP[:, :, i], E_below[:, :, i], c, p, d1, d2,
                                               float(C[a, d1]), float(C[a, d2]), unknown_below)
                nd = nd * xp.where(both, two, m1 * m2)
            elif len(ds) > 2:  # pragma: no cover - no layer has this
                raise NotImplementedError("more than two dimensions on one tensor axis")
        return nd

    # ---- per dimension, shared by every operand: for nest slot j and the loops above
    # level c (the first s_c slots), the shift of dimension d's offset when loop j
    # increments: +step_j if j is a loop of d, minus the span of every loop of d between
    # j and level c (they wrap to 0). |shift| is what the per-axis overlap needs.
    onehot = [s_dim == d for d in range(D)]
    step_d = [xp.where(onehot[d], s_step, 0.0) for d in range(D)]
    G_d = [_cumsum0(xp, xp.where(onehot[d], span, 0.0)) for d in range(D)]
    shift_cache: dict[tuple[int, int], Any] = {}

    def shift(d: int, c: int) -> Any:
        """(s_c, B) shift of dimension d's offset for level c's transitions."""
        if (d, c) not in shift_cache:
            s_c = (L - 1 - c) * D
            shift_cache[(d, c)] = step_d[d][:s_c] - (G_d[d][s_c - 1][None, :] - G_d[d][:s_c])
        return shift_cache[(d, c)]

    abs_cache: dict[tuple[int, int], Any] = {}

    def abs_shift(d: int, c: int) -> Any:
        if (d, c) not in abs_cache:
            abs_cache[(d, c)] = xp.abs(shift(d, c))
        return abs_cache[(d, c)]

    zero = xp.zeros(B)
    reads = [[zero] * 3 for _ in range(L)]
    writes = [[zero] * 3 for _ in range(L)]
    noc = [zero] * L
    tiles = []
    for t in range(3):
        C = st.coef[t]                                        # (A, D) numpy, static
        axes = [[(d, float(C[a, d])) for d in range(D) if C[a, d]] for a in range(C.shape[0])]
        axes = [ax for ax in axes if ax]                      # extent-1 axes change nothing
        ext = [axis_extent(ax, E) for ax in axes]
        words = product_of(ext) if ext else xp.ones((L, B))         # (L, B)
        tiles.append(words)
        kp = keep[:, t]                                       # (L, B)
        rel = [d for d in range(D) if st.relevant[t, d]]
        rel_slot = None
        if conv is not None and conv.window_reuse == "none":
            rel_slot = xp.zeros(s_dim.shape, dtype=bool)
            for d in rel:
                rel_slot = rel_slot | onehot[d]
        for c in range(-1, L - 1):
            if c >= 0 and not st.holds[c, t]:
                continue
            act = xp.ones(B, dtype=bool) if c < 0 else kp[c]
            if is_np and not act.any():
                continue
            F_change = None
            if c < 0:
                F = iters                                     # a MAC stores nothing
                inst_c = inst_mac
                U = product_of([T_all[d] for d in rel]) if rel else ones_d[0]
                if conv is not None and conv.mac_operand_reads == "on_change" and t != 2:
                    # the operand held at the MAC's input: a one-word tile of extent 1
                    F_change = convention_fill(xp, conv, axes, -1, xp.ones(B), [xp.ones(B)] * len(axes),
                                                shift, n_trans, f, L, D, rel_slot)
                    if fills is not None:
                        # the hook replaces the on-change count too (c = -1: the MAC's
                        # one-word input; evaluators.loopnest.bounds_conventions)
                        F_change = fills(FillContext(t, -1, F_change, words, E, T_above, inst, SP, axes, L, D,
                                                     s_dim, f, n_trans, T, step_ld, st.relevant))
            else:
                # fills: the first tile, then for every increment of a loop above c the
                # words of the shifted tile outside the old one (box overlap per axis).
                # The loops above c are the first s_c nest slots (static).
                s_c = (L - 1 - c) * D
                ov = None
                for ax, e in zip(axes, ext):
                    if len(ax) == 1:
                        (d, cf), = ax
                        a_shift = abs_shift(d, c) if cf == 1.0 else cf * abs_shift(d, c)
                    else:
                        a_shift = xp.abs(sum(cf * shift(d, c) for d, cf in ax))
                    if is_np:  # same arithmetic, fewer temporaries
                        o = np.subtract(e[c][None, :], a_shift)
                        np.maximum(o, 0.0, out=o)
                        if ov is None:
                            ov = o
                        else:
                            ov *= o
                    else:
                        o = xp.maximum(0, e[c][None, :] - a_shift)
                        ov = o if ov is None else ov * o
                w_c = words[c]
                if conv is not None and conv.window_reuse != "any_step" and ov is not None:
                    F = convention_fill(xp, conv, axes, c, w_c, [e[c] for e in ext], shift, n_trans, f, L, D,
                                         rel_slot)
                elif ov is None:
                    F = w_c
                elif is_np:
                    np.subtract(w_c[None, :], ov, out=ov)         # words of the tile that moved
                    ov *= n_trans[:s_c]
                    F = w_c + ov.sum(axis=0)
                else:
                    F = w_c + xp.sum(n_trans[:s_c] * (w_c[None, :] - ov), axis=0)
                if fills is not None:
                    F = fills(FillContext(t, c, F, words, E, T_above, inst, SP, axes, L, D, s_dim, f, n_trans,
                                          T, step_ld, st.relevant))
                inst_c = inst[c]
                U = product_of([E[c, d] * T_above[c, d] for d in rel]) if rel else ones_d[0]
            child_total = F * inst_c
            # the parent is the next level above c that keeps the operand
            p_of = c + 1 + xp.argmax(kp[c + 1:], axis=0)
            for p in range(c + 1, L):
                at = act & (p_of == p)
                if is_np and not at.any():
                    continue
                atf = xp.where(at, 1.0, 0.0)
                if conv is None:
                    groups = distinct(t, c, p) * inst[p]
                else:
                    if conv.multicast == "same_index":
                        m_d = segment(c, p)[0]
                        groups = (product_of([m_d[d] for d in rel]) if rel else ones_d[0]) * inst[p]
                    else:
                        groups = distinct(t, c, p) * inst[p]
                    if F_change is not None and any(fan[q] for q in range(c + 1, p + 1)):
                        F = F_change
                        child_total = F * inst_c
                if t == 2:   # O: reduced in the network, one update per group
                    refill = (F - U) * groups
                    # old partial sums go to one child per group, or (Timeloop) to all
                    to_child = refill if conv is None or conv.psum_refill == "one_child" else (F - U) * inst_c
                    if c < 0 and conv is not None and conv.first_accumulation == "per_word":
                        # every MAC group's accumulation reads but the first into each word
                        refill = F * groups - words[L - 1]
                        to_child = refill if conv.psum_refill == "one_child" else refill * inst_c / groups
                    writes[p][t] = writes[p][t] + atf * F * groups
                    reads[p][t] = reads[p][t] + atf * refill
                    if c >= 0:
                        if conv is None or conv.output_drain == "child_read":
                            reads[c][t] = reads[c][t] + atf * child_total      # evictions
                        writes[c][t] = writes[c][t] + atf * to_child
                    deliveries = child_total + to_child
                else:
                    mc = all(st.multicast[q] for q in range(c + 1, p + 1))
                    reads[p][t] = reads[p][t] + atf * F * (groups if mc else inst_c)
                    if c >= 0:
                        writes[c][t] = writes[c][t] + atf * child_total
                    deliveries = child_total
                for q in range(c + 1, p + 1):
                    if fan[q]:
                        noc[q] = noc[q] + atf * deliveries
    R = xp.stack([xp.stack(reads[li]) for li in range(L)])    # (L, 3, B)
    Wr = xp.stack([xp.stack(writes[li]) for li in range(L)])
    NOC = xp.stack(noc)                                       # (L, B)
    TW = xp.stack(tiles, axis=1)                              # (L, 3, B)
    macs_exec = iters * inst_mac
    level_energy, energy, vectors = access_energy(xp, st, R, Wr, NOC, inst, macs_exec)
    BW, BW_parts = bandwidth_cycles(xp, st, R, Wr, inst)
    return dict(R=R, Wr=Wr, noc=NOC, TW=TW, level_energy=level_energy, macs_exec=macs_exec,
                energy=energy, iters=iters, BW=BW, BW_parts=BW_parts, padded=E[L - 1], SX=SX, SY=SY, T=T, keep=keep,
                vectors=vectors, inst=inst)



def least_two_aps(SP: np.ndarray, E_below: np.ndarray, c: int, p: int, d1: int, d2: int, cf1: float, cf2: float,
                  unknown_below: int) -> float:
    """For one mapping (``(L, D)`` spatial factors and tile extents below each level, the
    free factors placed low), the least number of distinct child offsets along the axis
    ``cf1 d1 + cf2 d2`` over a parent's children between levels ``c`` and ``p`` that any
    divisor completion may have: dimension ``k`` unrolled at one fanout level ``q_k`` has
    the stride ``cf_k b_k t_k`` (``b_k`` the spatial factors below ``q_k``, ``t_k`` the
    temporal ones), where ``t_k`` is any divisor of the placement's temporal product
    below ``q_k`` when ``q_k < unknown_below`` (those levels are undecided: a completion
    puts part of it above ``q_k``) and that product otherwise; a dimension unrolled at
    several levels gives the sumset bound ``m1 + m2 - 1``, true of any strides. The
    compiled kernel's :func:`~evaluators.loopnest.kernel_common.least_distinct_sums`
    is the same loop."""
    lv = range(c + 1, p + 1)
    m1 = float(np.prod([SP[q, d1] for q in lv]))
    m2 = float(np.prod([SP[q, d2] for q in lv]))
    q1s = [q for q in lv if SP[q, d1] > 1]
    q2s = [q for q in lv if SP[q, d2] > 1]
    if len(q1s) > 1 or len(q2s) > 1:
        return m1 + m2 - 1.0
    best = m1 * m2
    opts = []
    for qs, d in ((q1s, d1), (q2s, d2)):
        q = qs[0]
        b = float(np.prod(SP[:q, d]))
        tb = round(E_below[q, d] / b)
        ts = divisors(tb) if 0 < q < unknown_below else [tb]
        opts.append((b, ts))
    (b1, ts1), (b2, ts2) = opts
    for t1 in ts1:
        for t2 in ts2:
            a1 = int(max(cf1 * b1 * t1, 1.0))
            a2 = int(max(cf2 * b2 * t2, 1.0))
            best = min(best, float(distinct_two_aps(np, np.int64(a1), np.int64(m1), np.int64(a2), np.int64(m2),
                                                    True)))
    return best


def fix_multi(nd: Any, multi: np.ndarray, two: Any, coef: np.ndarray, ds: tuple[int, int],
               c: int, p: int, SX: Any, SY: Any, E_below: Any) -> np.ndarray:
    """Replace the two-progression count of one axis by exact enumeration of the child
    offsets, for the mappings ``multi`` where a dimension is unrolled at several levels
    (batch-last arrays ``(L, D, B)``)."""
    nd = np.array(nd)
    for i in np.flatnonzero(multi):
        offs = {0}
        for d in ds:
            for q in range(c + 1, p + 1):
                sx, sy, e = int(SX[q, d, i]), int(SY[q, d, i]), int(E_below[q, d, i])
                offs = {o + int(coef[d]) * e * (kx * sy + ky)
                        for o in offs for kx in range(sx) for ky in range(sy)}
        nd[i] = nd[i] // int(two[i]) * len(offs)
    return nd

