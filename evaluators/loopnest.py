"""Vectorized, exact access counting and energy/latency for loop-nest mappings.

Given a :class:`~mappers.workloads.Layer`, an :class:`~accelerators.arch.ArchSpec` and a
:class:`~mappers.mapping.MappingBatch` of ``B`` mappings, :func:`evaluate_batch` returns
per-mapping access counts for every level and operand, energy (pJ), latency (cycles),
EDP, utilization and validity, with array operations over the whole batch (no Python
loop over mappings). The same core runs on numpy and on ``jax.numpy`` (pass ``xp``).

Semantics (what is counted; :mod:`evaluators.loopnest_walk` implements these rules by
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
  reported apart as ``leakage_energy_pj``, not in ``level_energy_pj``).
* **Latency** = max(compute cycles, every level's bandwidth cycles), where compute cycles
  are the temporal iterations (one MAC per PE per cycle) plus, for systolic arrays,
  fill/drain per fold (:mod:`evaluators.systolic_timing`), and bandwidth cycles are a level's
  reads + writes per active instance divided by its bandwidth (words/cycle).
* **Validity**: every tile fits its level's capacity (per partition, or summed for a
  shared buffer), spatial factors fit the fanouts, and factors cover every dimension.

Per-word counts are exact integers for divisor and padded factorizations alike; the
formulas (with ``N_j`` transitions of loop ``j`` and the box-overlap of the shifted tile)
are derived in the comments below.

**Compiled kernel.** When numba is importable, :func:`evaluate_batch` on numpy with exact
integers (no custom ``fills`` hook or ``fold_cycles``), hence :data:`LOOPNEST`'s scoring,
runs :mod:`evaluators.loopnest_kernel`, the same rules compiled one mapping at a time:
the same results, field for field (``tests/evaluators/test_loopnest_kernel.py``), several
times the throughput and microseconds instead of milliseconds per call. Its
per-(layer, architecture) constants are cached, keyed on the two objects (an LRU of
:data:`KERNEL_CACHE_SIZE`; the objects are treated as immutable). ``kernel=False`` or
``COEXPLORE_LOOPNEST_KERNEL=0`` in the environment forces the numpy code below, which
remains the reference and the ``jax`` path. :meth:`LoopNestCost.lower_bound` runs the
kernel too (its copy of the ``fills`` hook :func:`_bound_hook`, equal to it exactly).
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from evaluators.systolic_timing import fold_cycles as systolic_fold_cycles
from mappers.base import check_objective
from mappers.mapping import Mapping, MappingBatch
from mappers.orders import objective_of
from mappers.workloads import Layer

__all__ = ["ACCOUNTING", "CONVENTION_CHOICES", "KERNEL_CACHE_SIZE", "LOOPNEST", "Conventions", "FillContext",
           "LayerArch", "LayerConstants", "LoopNestCost", "LoopNestResult", "count", "evaluate", "evaluate_batch",
           "kernel_available", "layer_constants", "prepare"]


CONVENTION_CHOICES = {
    "window_reuse": ("any_step", "innermost", "none"),
    "multicast": ("coincident", "same_index"),
    "psum_refill": ("one_child", "every_child"),
    "mac_operand_reads": ("every_step", "on_change"),
    "output_drain": ("child_read", "parent_update"),
    "first_accumulation": ("per_instance", "per_word"),
}
"""Each counting convention's choices (a :class:`Conventions` field): coexplore's rule
first (the default); :data:`ACCOUNTING` names the choices of Timeloop and ZigZag."""


@dataclass(frozen=True)
class Conventions:
    """How the model counts in the places where tools differ: the first choice of each
    field is coexplore's (the default); :data:`ACCOUNTING` ``"timeloop"`` selects
    Timeloop's (the second choice of the first five fields) and ``"zigzag"`` ZigZag's
    (``window_reuse="none"``, ``first_accumulation="per_word"``).
    :mod:`evaluators.loopnest_walk` implements every choice literally and the model must
    agree with it count for count.

    Attributes:
        window_reuse: when a tile moves, which words of the old tile it keeps.
            ``"any_step"`` (default): the overlap of the new tile with the old one,
            whatever loop stepped (inner loops wrapping included): a buffer keeps what
            it holds, so a sliding window reuses its overlap after an outer loop steps
            too. ``"innermost"``: Timeloop's rule (``OperationSpace::
            SaveAndSubtractIfSameStride`` in src/workload/operation-space.cpp (src/workload/shape-models/ in later versions) of
            NVlabs/timeloop, called from ``NestAnalysis::ComputeDeltas`` in
            src/loop-analysis/nest-analysis.cpp): the overlap is kept only when the
            tile moves by the same translation as at its previous move (or right after
            a refetch); otherwise the whole tile is refetched. In a loop nest that means:
            every step of the innermost loop (of factor > 1) above the level keeps its
            overlap, and a step of any other loop keeps it only if it translates the
            tile exactly as that innermost loop does. ``"none"``: ZigZag's rule (3.9.1,
            ``TemporalMapping.innermost_stationary_loop_merge_down`` in
            zigzag/mapping/temporal_mapping.py and ``Mapping.calc_data_access`` in
            zigzag/mapping/mapping.py: a level's fills are the layer's MACs over the
            loops irrelevant to the operand at and below it, after the irrelevant loops
            at the bottom of each level are merged down into it): nothing is kept; the
            tile is refetched whole on every step of a loop above the level that is over
            one of the operand's dimensions or has such a loop (factor > 1) inside it
            above the level (a step of only irrelevant loops leaves it in place).
        multicast: which children one parent read serves. ``"coincident"`` (default):
            every child whose tile coincides with another's at that moment (Eyeriss's
            diagonals included): the words are the same, one read can feed them all.
            ``"same_index"``: only children whose indices agree in every dimension the
            operand depends on (they differ only in dimensions irrelevant to it).
        psum_refill: partial sums fetched back down into a spatial-reduction group.
            ``"one_child"`` (default): one child of the group receives the old partial
            sum (adding it once is what the arithmetic needs: the others start from
            zero). ``"every_child"``: every child of the group receives it.
        mac_operand_reads: how often a MAC reads ``W`` and ``I``. ``"every_step"``
            (default): every iteration, since a MAC unit stores nothing. ``"on_change"``:
            only when the operand at that MAC changes, where the MACs sit behind a
            fanout from the level that serves them (a spatial container without storage
            for the operand: the operand is held at the MAC's input).
        output_drain: who counts a partial sum drained up to the parent.
            ``"child_read"`` (default): the child reads it (it does) and the parent
            updates it. ``"parent_update"``: only the parent's update is counted.
        first_accumulation: which MAC accumulations into an output word read no partial
            sum. ``"per_instance"`` (default): the first one of every MAC instance (group
            of MACs that share one copy of the word) -- it starts from zero; where a
            reduction is unrolled spatially, every instance starts its own partial sum
            and the network adds them on the way up. ``"per_word"``: ZigZag's rule (3.9.1,
            ``Mapping.calc_data_access`` in zigzag/mapping/mapping.py: the innermost
            output memory's reads to the MACs are the output's size x (the product of
            all reduction loops, spatial ones included, - 1)): only the first
            accumulation into each word of the whole output; every other instance
            reducing the same word adds onto a partial sum it reads, as a PE of a
            systolic column adds onto the one arriving from its neighbour.

    docs/MODEL.md names the function of Timeloop's source behind each Timeloop choice;
    ``same_index`` and ``on_change`` are the effects there of a split fanout and of
    neighbour link transfers, not rules of Timeloop's own, and it says where they differ.
    The ZigZag rules were traced to ZigZag 3.9.1's source (cited above) and checked count
    for count against it (``experiments/validation/zigzag_bundled.py``, docs/MODEL.md).
    A bad value is a ``ValueError`` naming the field and the value.
    """

    window_reuse: str = "any_step"
    multicast: str = "coincident"
    psum_refill: str = "one_child"
    mac_operand_reads: str = "every_step"
    output_drain: str = "child_read"
    first_accumulation: str = "per_instance"

    def __post_init__(self) -> None:
        for name, choices in CONVENTION_CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise ValueError(f"Conventions.{name} must be one of {list(choices)}, got {value!r}")

    @property
    def default(self) -> bool:
        return self is _DEFAULT or self == _DEFAULT

    @classmethod
    def of(cls, accounting: Conventions | str | None) -> Conventions:
        """A :class:`Conventions` from itself, ``None`` (the default) or a name of
        :data:`ACCOUNTING`."""
        if accounting is None:
            return _DEFAULT
        if isinstance(accounting, Conventions):
            return accounting
        if isinstance(accounting, str) and accounting in ACCOUNTING:
            return ACCOUNTING[accounting]
        raise ValueError(f"accounting must be a Conventions or one of {list(ACCOUNTING)}, got {accounting!r}")


_DEFAULT = Conventions()

ACCOUNTING = {
    "coexplore": _DEFAULT,
    "timeloop": Conventions(window_reuse="innermost", multicast="same_index", psum_refill="every_child",
                            mac_operand_reads="on_change", output_drain="parent_update"),
    "zigzag": Conventions(window_reuse="none", first_accumulation="per_word"),
}
"""Named accounting modes: ``"coexplore"`` (the default rules), ``"timeloop"``
(Timeloop's rule for every convention, so a user migrating from Timeloop gets its counts
for the same architecture and mapping) and ``"zigzag"`` (ZigZag 3.9.1's window and
first-accumulation rules; its other rules agree with coexplore's on the cases compared,
see docs/MODEL.md)."""


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


@dataclass
class LoopNestResult:
    """Per-mapping results (arrays of length ``B`` unless noted).

    ``reads`` / ``writes``: ``(B, L, 3)`` words per level and operand (W, I, O), over all
    instances. ``noc_words``: ``(B, L)`` words delivered across each level's fanout.
    ``bandwidth_cycles``: ``(B, L)``. ``level_energy_pj``: ``(B, L)`` dynamic (access and
    NoC) energy per level. ``leakage_energy_pj``: ``(B, L)`` static energy per level
    (``leakage_pj_per_cycle x instances x latency_cycles``), part of ``energy_pj``.
    ``read_vectors`` / ``write_vectors``: ``(B, L, 3)`` vector accesses, where some level
    has ``vector_words > 1`` (else ``None``: every access is one word).
    """

    energy_pj: Any
    latency_cycles: Any
    compute_cycles: Any
    edp: Any                          # pJ * cycles
    utilization: Any
    macs_executed: Any
    valid: Any
    reads: Any
    writes: Any
    noc_words: Any
    bandwidth_cycles: Any
    level_energy_pj: Any
    mac_energy_pj: Any
    tile_words: Any                   # (B, L, 3) per-instance tile words
    leakage_energy_pj: Any = None     # (B, L); always set by the evaluators
    read_vectors: Any = None          # (B, L, 3) vector accesses, where a level has vector_words > 1
    write_vectors: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self, i: int) -> dict[str, Any]:
        """Scalar metrics of mapping ``i`` (for evaluators returning dicts)."""
        return {
            "energy_pj": float(self.energy_pj[i]),
            "latency_cycles": float(self.latency_cycles[i]),
            "compute_cycles": float(self.compute_cycles[i]),
            "edp": float(self.edp[i]),
            "utilization": float(self.utilization[i]),
        }


@dataclass(frozen=True)
class FillContext:
    """What :func:`count` knows about one (operand, level) pair when it asks a ``fills``
    hook for the fill count; arrays are batch-last.

    Attributes:
        t, c: operand index (0 W, 1 I, 2 O) and level.
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
        s_b = (self.L - 1 - level) * self.D
        out = np.zeros((self.L, self.nest_dims.shape[1]))
        if s_b == 0:
            return out
        hit = np.isin(self.nest_dims[:s_b], list(dims)) & (self.nest_factors[:s_b] > 1)
        moves = np.flip(np.logical_or.accumulate(np.flip(hit, axis=0), axis=0), axis=0)
        per_slot = self.n_trans[:s_b] * moves
        for k in range(s_b // self.D):
            out[self.L - 1 - k] = per_slot[k * self.D:(k + 1) * self.D].sum(axis=0)
        return out

    def multiplier(self, dims: frozenset[int], level: int) -> Any:
        """How many times a tile of level ``level`` must be fetched whole if it moves
        exactly when a loop over one of ``dims`` (above ``level``) changes its position:
        ``1 + sum of n_trans_j`` over the loops ``j`` above ``level`` that are over
        ``dims`` or have such a loop (factor > 1) inside them above ``level``. For an
        operand whose every axis is one dimension and ``dims`` its dimensions, this times
        the tile's words is the fill count itself (numpy only)."""
        s_b = (self.L - 1 - level) * self.D
        if s_b == 0:
            return np.ones(self.nest_dims.shape[1])
        rows = self.nest_dims[:s_b]
        hit = np.isin(rows, list(dims)) & (self.nest_factors[:s_b] > 1)
        moves = np.flip(np.logical_or.accumulate(np.flip(hit, axis=0), axis=0), axis=0)
        return 1.0 + (self.n_trans[:s_b] * moves).sum(axis=0)


def _distinct_two_aps(xp: Any, a: Any, m: Any, b: Any, n: Any, integer: bool) -> Any:
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


def relevant_moves(xp: Any, rel_slot: Any, f: Any, s_c: int) -> Any:
    """``(s_c, B)``: 1 where a step of nest slot ``j`` (among the first ``s_c``, the
    loops above a level) changes an index the operand depends on: ``j`` or a slot inside
    it (below it in nest order, still above the level) is over one of the operand's
    dimensions (``rel_slot``, ``(S, B)`` bool) with a factor > 1."""
    if s_c == 0:
        return xp.zeros((0, f.shape[-1]))
    hit = rel_slot[:s_c] & (f[:s_c] > 1)
    return xp.where(xp.flip(xp.cumsum(xp.flip(hit, axis=0), axis=0), axis=0) > 0, 1.0, 0.0)


def _convention_fill(xp: Any, conv: Conventions, axes: list, c: int, w_c: Any, ext_c: list, shift: Any,
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


def _mul(rows: list[Any]) -> Any:
    out = rows[0]
    for r in rows[1:]:
        out = out * r
    return out


def count(xp: Any, st: LayerArch, T: Any, SX: Any, SY: Any, order: Any, keep: Any,
          integer: bool, fills: Callable[[FillContext], Any] | None = None,
          conventions: Conventions | None = None) -> dict[str, Any]:
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
    ``padded`` (padded dimension sizes ``(D, B)``), and the inputs ``SX``, ``SY``, ``T``,
    ``keep``.

    ``fills``: replaces the per-instance fill count ``F`` of every (operand, level) pair
    (levels ``c >= 0``; a MAC's reads are always the iterations) by ``fills(ctx)`` with a
    :class:`FillContext`; everything the counts derive from ``F`` (parent reads with
    multicast, evictions and refills of partial sums, NoC deliveries, energy, bandwidth
    cycles) follows unchanged. Lower bounds use it (:meth:`LoopNestCost.lower_bound`).

    ``conventions``: the counting rules where tools differ (:class:`Conventions`);
    ``None`` is the default, on the code path the default rules have always taken.
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

    sp_tot = xp.stack([_mul([SP[li, d] for d in range(D)]) for li in range(L)])   # (L, B)
    inst_rows = [ones_d[0]]
    for li in range(L - 1, 0, -1):
        inst_rows.append(inst_rows[-1] * sp_tot[li])
    inst = xp.stack(inst_rows[::-1])                          # (L, B) active instances
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
            m_d = _mul([SP[q] for q in lv])
            st_d = _mul([xp.where(SP[q] > 1, E_below[q], 1) for q in lv])
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
                    two[idx] = _distinct_two_aps(np, a1[idx].astype(np.int64), m1[idx].astype(np.int64),
                                                 a2[idx].astype(np.int64), m2[idx].astype(np.int64), True)
                elif integer:
                    i64 = [x.astype(np.int64) for x in (a1, m1, a2, m2)]
                    two = _distinct_two_aps(xp, i64[0], i64[1], i64[2], i64[3], True).astype(float)
                else:
                    two = _distinct_two_aps(xp, a1, m1, a2, m2, False)
                nd = nd * xp.where(both, two, m1 * m2)
                if is_np:
                    # a dimension unrolled at several fanout levels of one segment is
                    # no single progression: count those (rare) rows by enumeration
                    multi = both & ((nlev[d1] > 1) | (nlev[d2] > 1))
                    if multi.any():
                        nd = _fix_multi(nd, multi, two, C[a], (d1, d2), c, p, SX, SY, E_below)
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
        ext = [1 + sum((cf * (E[:, d] - 1) for d, cf in ax), xp.zeros((L, B))) for ax in axes]
        words = _mul(ext) if ext else xp.ones((L, B))         # (L, B)
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
                U = _mul([T_all[d] for d in rel]) if rel else ones_d[0]
                if conv is not None and conv.mac_operand_reads == "on_change" and t != 2:
                    # the operand held at the MAC's input: a one-word tile of extent 1
                    F_change = _convention_fill(xp, conv, axes, -1, xp.ones(B), [xp.ones(B)] * len(axes),
                                                shift, n_trans, f, L, D, rel_slot)
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
                    F = _convention_fill(xp, conv, axes, c, w_c, [e[c] for e in ext], shift, n_trans, f, L, D,
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
                U = _mul([E[c, d] * T_above[c, d] for d in rel]) if rel else ones_d[0]
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
                        groups = (_mul([m_d[d] for d in rel]) if rel else ones_d[0]) * inst[p]
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
    level_energy, energy, vectors = _energy(xp, st, R, Wr, NOC, inst, macs_exec)
    acc = xp.sum(R + Wr, axis=1) / xp.maximum(inst, 1)
    BW = acc / xp.asarray(st.bandwidth)[:, None]
    return dict(R=R, Wr=Wr, noc=NOC, TW=TW, level_energy=level_energy, macs_exec=macs_exec,
                energy=energy, iters=iters, BW=BW, padded=E[L - 1], SX=SX, SY=SY, T=T, keep=keep,
                vectors=vectors)


def _energy(xp: Any, st: LayerArch, R: Any, Wr: Any, NOC: Any, inst: Any, macs_exec: Any) -> tuple[Any, Any, Any]:
    """``(level energy (L, B), dynamic energy (B,), vector accesses)`` from the counts
    (batch-last: ``R``, ``Wr`` ``(L, 3, B)``, ``NOC`` and active instances ``inst``
    ``(L, B)``). Where a level moves ``vector_words = V > 1`` words per access, its energies
    are per vector access and an instance's words of an operand over the run, reads and
    writes apart, are packed into whole vectors: ``inst x ceil(words / (inst x V))``
    accesses (Timeloop's rule: per-instance counts averaged over the instances,
    ``NestAnalysis::CollectWorkingSets`` in src/loop-analysis/nest-analysis.cpp, then
    rounded up per action, ``BufferLevel::ComputeVectorAccesses`` in
    src/model/buffer.cpp). ``vectors`` is ``None`` when every level has ``V = 1`` (the
    counts are the accesses). The numpy model and the compiled kernel's results (through
    :func:`_evaluate_kernel`) both go through here."""
    vec = st.vector_words
    if len(vec) and (vec > 1).any():
        per = xp.maximum(inst, 1)[:, None, :] * xp.asarray(vec)[:, None, None]   # (L, 1, B) words per vector x inst
        whole = xp.asarray(vec > 1)[:, None, None]
        VR = xp.where(whole, -xp.floor_divide(-R, per) * xp.maximum(inst, 1)[:, None, :], R)
        VW = xp.where(whole, -xp.floor_divide(-Wr, per) * xp.maximum(inst, 1)[:, None, :], Wr)
        vectors = (VR, VW)
    else:
        VR, VW, vectors = R, Wr, None
    e_r = xp.asarray(st.e_read)[:, :, None]
    e_w = xp.asarray(st.e_write)[:, :, None]
    level_energy = xp.sum(VR * e_r + VW * e_w, axis=1) + NOC * xp.asarray(st.e_noc)[:, None]
    energy = xp.sum(level_energy, axis=0) + macs_exec * st.mac_energy
    return level_energy, energy, vectors


def evaluate_batch(
    layer: Layer,
    arch: ArchSpec,
    batch: MappingBatch,
    *,
    xp: Any = np,
    integer: bool = True,
    consts: LayerConstants | None = None,
    fold_cycles: Any = None,
    block: int = 16384,
    fills: Callable[[FillContext], Any] | None = None,
    kernel: bool | None = None,
    accounting: Conventions | str | None = None,
) -> LoopNestResult:
    """Score ``batch`` (see module docstring).

    Args:
        xp: array namespace, ``numpy`` (default) or ``jax.numpy``.
        integer: exact integer arithmetic; ``False`` for a continuous relaxation
            (float factors, differentiable almost everywhere).
        fold_cycles: ``f(rows_used, cols_used, t)`` giving one fold's cycles; by default
            :func:`evaluators.systolic_timing.fold_cycles` when ``arch.dataflow`` is set.
        block: mappings per internal block (numpy): keeps temporaries in cache.
        fills: replaces fill counts (see :func:`count`).
        kernel: run the compiled kernel (:mod:`evaluators.loopnest_kernel`): ``None``
            (default) when it applies (numpy, ``integer``, no ``fills`` or
            ``fold_cycles``) and numba is importable, ``True`` to insist (``ValueError``
            if it does not apply, ``ImportError`` without numba), ``False`` for the numpy
            code.
        accounting: the counting conventions (:class:`Conventions`, or a name of
            :data:`ACCOUNTING`: ``"coexplore"``, the default, ``"timeloop"`` or ``"zigzag"``). The
            compiled kernel implements the default; other conventions run the numpy code.
    """
    conv = _DEFAULT if accounting is None or accounting is _DEFAULT else Conventions.of(accounting)
    plain = xp is np and integer and fills is None and fold_cycles is None and conv.default
    if kernel is None:
        kernel = plain and kernel_available()
    elif kernel and not plain:
        raise ValueError("the compiled kernel runs numpy, integer factors, the default accounting, no fills or "
                         "fold_cycles hooks")
    if kernel:
        return _evaluate_kernel(layer, arch, batch, consts)
    st = prepare(layer, arch, consts)
    B = len(batch)
    if xp is np and B > block:
        return _concat([_evaluate_block(xp, st, arch, _rows(batch, i, min(i + block, B)),
                                        integer, fold_cycles, fills, conv) for i in range(0, B, block)])
    return _evaluate_block(xp, st, arch, batch, integer, fold_cycles, fills, conv)


def _evaluate_block(xp: Any, st: LayerArch, arch: ArchSpec, batch: MappingBatch, integer: bool,
                    fold_cycles: Any, fills: Callable[[FillContext], Any] | None = None,
                    conv: Conventions | None = None) -> LoopNestResult:
    def cast(a: Any, dtype: Any = float) -> Any:
        moved = np.moveaxis(np.asarray(a), 0, -1)             # (B, ...) -> (..., B)
        return xp.asarray(np.ascontiguousarray(moved), dtype=dtype)

    if xp is np:
        # dimensions of size 1 that no mapping of the block unrolls or tiles contribute
        # nothing to any count: drop them (batch-size-1 layers lose N)
        unit = (st.sizes == 1) & ~((batch.temporal > 1) | (batch.spatial_x > 1)
                                   | (batch.spatial_y > 1)).any(axis=(0, 1))
        if unit.any() and not unit.all():
            live = np.flatnonzero(~unit)
            remap = np.full(st.D, -1)
            remap[live] = np.arange(len(live))
            order = batch.order
            kept = order[~unit[order]].reshape(order.shape[0], order.shape[1], len(live))
            batch = MappingBatch(tuple(batch.dims[i] for i in live), batch.temporal[:, :, live],
                                 batch.spatial_x[:, :, live], batch.spatial_y[:, :, live],
                                 remap[kept], batch.keep)
            st = replace(st, D=len(live), coef=tuple(c[:, live] for c in st.coef),
                         relevant=st.relevant[:, live], sizes=st.sizes[live])
    out = count(xp, st, cast(batch.temporal), cast(batch.spatial_x), cast(batch.spatial_y),
                cast(batch.order, np.int64), cast(batch.keep, bool), integer, fills, conv)
    return _finish(xp, st, arch, out, integer, fold_cycles)


def _finish(xp: Any, st: LayerArch, arch: ArchSpec, out: dict[str, Any], integer: bool,
            fold_cycles: Any) -> LoopNestResult:
    """Latency, validity and the (B, ...) result layout from the batch-last core output."""
    iters = out["iters"]
    compute = iters
    df = arch.dataflow
    if fold_cycles is None and df is not None:
        rows, cols = arch.array_rows, arch.array_cols

        def fold_cycles(r: Any, c_: Any, tt: Any) -> Any:
            return systolic_fold_cycles(r, c_, tt, df, rows, cols)

    if fold_cycles is not None:
        fl = st.pe_level
        rows_used = _mul(list(out["SY"][fl]))
        cols_used = _mul(list(out["SX"][fl]))
        stream = _mul([_mul(list(out["T"][li])) for li in range(fl)]) if fl else xp.ones_like(iters)
        folds = xp.round(iters / stream) if integer else iters / stream
        compute = folds * fold_cycles(rows_used, cols_used, stream)
    BW = out["BW"]                                            # (L, B)
    latency = xp.maximum(compute, xp.max(BW, axis=0))
    leak, energy = _add_leakage(xp, arch, latency, out["energy"])
    # ---- validity (discrete; numpy)
    SX, SY = np.asarray(out["SX"]), np.asarray(out["SY"])
    TW, kp = np.asarray(out["TW"]), np.asarray(out["keep"])
    padded = np.asarray(out["padded"])
    valid = np.ones(padded.shape[-1], dtype=bool)
    for d in range(len(st.sizes)):                            # row loops: short axes are slow
        valid &= padded[d] >= st.sizes[d]
    for li in range(st.L):
        if st.fanout_x[li] > 1 or SX[li].max() > 1:
            valid &= _mul(list(SX[li])) <= st.fanout_x[li]
        if st.fanout_y[li] > 1 or SY[li].max() > 1:
            valid &= _mul(list(SY[li])) <= st.fanout_y[li]
        tot = 0.0
        for t in range(3):
            held = np.where(kp[li, t], TW[li, t], 0)
            tot = tot + held
            if np.isfinite(st.cap[li, t]):
                valid &= held <= st.cap[li, t]
        if np.isfinite(st.cap_shared[li]):
            valid &= tot <= st.cap_shared[li]
    util = st.macs / (compute * st.n_macs)

    def bl(a: Any) -> Any:   # (..., B) -> (B, ...)
        return xp.moveaxis(a, -1, 0)

    return LoopNestResult(
        energy_pj=energy, latency_cycles=latency, compute_cycles=compute, edp=energy * latency,
        utilization=util, macs_executed=out["macs_exec"], valid=valid, reads=bl(out["R"]),
        writes=bl(out["Wr"]), noc_words=bl(out["noc"]), bandwidth_cycles=bl(BW),
        level_energy_pj=bl(out["level_energy"]), mac_energy_pj=out["macs_exec"] * st.mac_energy,
        tile_words=bl(out["TW"]), leakage_energy_pj=bl(leak),
        read_vectors=None if out["vectors"] is None else bl(out["vectors"][0]),
        write_vectors=None if out["vectors"] is None else bl(out["vectors"][1]),
    )


def _add_leakage(xp: Any, arch: ArchSpec, latency: Any, energy: Any) -> tuple[Any, Any]:
    """``(leakage (L, B), energy + its sum over levels)``: every physical instance of a
    level leaks ``leakage_pj_per_cycle`` per cycle of ``latency`` (``(B,)``). Both paths
    (numpy and the compiled kernel's results) go through here, so they agree bit for bit;
    without leakage the energy is returned untouched."""
    rate = [lv.leakage_pj_per_cycle * lv.instances for lv in arch.levels]
    leak = xp.asarray(rate)[:, None] * latency[None, :]
    if not any(rate):
        return leak, energy
    return leak, energy + xp.sum(leak, axis=0)


def _rows(batch: MappingBatch, i: int, j: int) -> MappingBatch:
    """Rows ``i:j`` of a batch as views (no copy)."""
    return MappingBatch(batch.dims, batch.temporal[i:j], batch.spatial_x[i:j], batch.spatial_y[i:j],
                        batch.order[i:j], batch.keep[i:j])


def _concat(parts: list[LoopNestResult]) -> LoopNestResult:
    names = [f for f in LoopNestResult.__dataclass_fields__ if f != "extra"]
    return LoopNestResult(**{n: None if getattr(parts[0], n) is None
                             else np.concatenate([np.asarray(getattr(p, n)) for p in parts]) for n in names})


def _fix_multi(nd: Any, multi: np.ndarray, two: Any, coef: np.ndarray, ds: tuple[int, int],
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


def evaluate(layer: Layer, arch: ArchSpec, mapping: Mapping) -> LoopNestResult:
    """Score one mapping (a batch of one)."""
    return evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, [mapping]))


# ------------------------------------------------------------------ compiled kernel
KERNEL_CACHE_SIZE = 64
"""(layer, architecture) pairs whose packed kernel constants are kept."""

_kernel_state: dict[str, Any] = {}
_packed: OrderedDict[tuple[int, int], tuple[Layer, ArchSpec, Any, dict[str, Any]]] = OrderedDict()
_packed_lock = threading.Lock()


def kernel_available() -> bool:
    """Whether the compiled kernel runs: numba importable (the kernel is imported, and
    compiled or loaded from numba's cache, on the first call) and not switched off by
    ``COEXPLORE_LOOPNEST_KERNEL=0`` in the environment (read on every call)."""
    if os.environ.get("COEXPLORE_LOOPNEST_KERNEL", "1") == "0":
        return False
    if "module" not in _kernel_state:
        try:
            from evaluators import loopnest_kernel as module
        except ImportError:
            module = None
        _kernel_state["module"] = module
    return _kernel_state["module"] is not None


def _kernel_constants(layer: Layer, arch: ArchSpec, consts: LayerConstants | None) -> tuple[Any, dict[str, Any]]:
    """The kernel's packed constants of (``layer``, ``arch``) and its output columns,
    cached on the two objects' identities (they are held, so an id is not reused)."""
    key = (id(layer), id(arch))
    with _packed_lock:
        hit = _packed.get(key)
        if hit is not None and hit[0] is layer and hit[1] is arch:
            _packed.move_to_end(key)
            return hit[2], hit[3]
    km = _kernel_state["module"]
    pk = km.pack(prepare(layer, arch, consts), arch.dataflow, arch.array_rows, arch.array_cols)
    cols = dict(km.columns(pk.L))
    # static power and access widths of the levels, read once per pair (the batch-1 path
    # is dominated by Python overhead)
    cols["_leaks"] = arch.leaks
    cols["_vector"] = any(lv.vector_words > 1 for lv in arch.levels)
    with _packed_lock:
        _packed[key] = (layer, arch, pk, cols)
        _packed.move_to_end(key)
        while len(_packed) > KERNEL_CACHE_SIZE:
            _packed.popitem(last=False)
    return pk, cols


_NO_IRR = np.zeros((0, 3))


def _no_least(D: int) -> tuple[Any, ...]:
    """The kernel's arguments for scoring each row's own orders."""
    return (np.zeros((0, D), dtype=np.int64), np.zeros(0, dtype=np.int64), 2, np.zeros(0), np.zeros(0),
            np.zeros(0, dtype=np.int64))


def _live_dims(sizes: np.ndarray, batch: MappingBatch, block: int) -> np.ndarray:
    """``(B, D)``: per row, the dimensions the numpy code keeps in that row's block of
    ``block`` rows (:func:`_evaluate_block` drops the size-1 dimensions no mapping of the
    block tiles or unrolls; the lower bound's rules depend on which axes remain)."""
    B = len(batch)
    live = np.ones((B, len(sizes)), dtype=bool)
    for i in range(0, B, block):
        j = min(i + block, B)
        used = ((batch.temporal[i:j] > 1) | (batch.spatial_x[i:j] > 1) | (batch.spatial_y[i:j] > 1)).any(axis=(0, 1))
        unit = (sizes == 1) & ~used
        if unit.any() and not unit.all():
            live[i:j] = ~unit
    return live


_OBJECTIVE_CODE = {"energy": 0, "latency": 1, "edp": 2}


def _evaluate_kernel(layer: Layer, arch: ArchSpec, batch: MappingBatch, consts: LayerConstants | None,
                     known: int | None = None, stationary: int | None = None,
                     irrelevant_tile: Any = None, least: Any = None, lean: bool = False) -> LoopNestResult | None:
    """:func:`evaluate_batch` through the compiled kernel; with ``known``, the lower bound
    of :meth:`LoopNestCost.lower_bound` (the kernel's copy of :func:`_bound_hook`).
    ``least``: ``(levels, candidates, objective, best, choice)`` for
    :meth:`LoopNestCost.least_lower_bound` (the kernel fills ``best`` and ``choice`` and
    no other figure: the result is ``None``)."""
    if not kernel_available():
        raise ImportError("the compiled loop-nest kernel is not available: numba cannot be imported, or "
                          "COEXPLORE_LOOPNEST_KERNEL=0 is set")
    pk, cols = _kernel_constants(layer, arch, consts)
    T = np.ascontiguousarray(batch.temporal, dtype=np.int64)
    B = T.shape[0]
    if T.ndim != 3 or T.shape[1:] != (pk.L, pk.D):
        raise ValueError(f"batch of shape {T.shape}: expected (B, {pk.L}, {pk.D}) for {layer.name!r} on {arch.name!r}")
    out = np.empty((pk.n_fields, 0 if lean else B))          # lean: the kernel writes no figure
    valid = np.empty(B, dtype=bool)
    bound = known is not None
    b = int(known) - 1 if bound else -1
    irr = _NO_IRR if irrelevant_tile is None else np.ascontiguousarray(irrelevant_tile, dtype=np.float64)
    live = _live_dims(pk.dims_i[6], batch, 16384) if bound else None
    bad = _kernel_state["module"].evaluate_rows(
        T, np.ascontiguousarray(batch.spatial_x, dtype=np.int64),
        np.ascontiguousarray(batch.spatial_y, dtype=np.int64), np.ascontiguousarray(batch.order, dtype=np.int64),
        np.ascontiguousarray(batch.keep, dtype=np.bool_), pk.axes_i, pk.axes_f, pk.dims_i, pk.lv_i,
        pk.lv_f, pk.sc, out, valid, b, -1 if stationary is None else int(stationary), irr, live,
        *(_no_least(pk.D) if least is None else
          (least[1], np.asarray(least[0], dtype=np.int64), _OBJECTIVE_CODE[least[2]],
           np.array([lv.leakage_pj_per_cycle * lv.instances for lv in arch.levels], dtype=float),
           least[3], least[4])))
    if bad:
        raise ValueError("a fold cannot use more rows/cols than the array has")
    if lean:
        return None
    L = pk.L

    def field_(name: str) -> Any:
        at, width = cols[name]
        return out[at] if width == 1 else out[at:at + width].T

    def per_level(name: str, k: int) -> Any:
        at, width = cols[name]
        blk = out[at:at + width].T                            # (B, width) view
        return blk.reshape(B, L, k) if k > 1 else blk

    latency = field_("latency_cycles")
    dynamic = kernel_energy = field_("energy_pj")
    reads, writes = per_level("reads", 3), per_level("writes", 3)
    level_energy = per_level("level_energy_pj", 1)
    vectors = None
    if cols["_vector"]:
        # whole-vector accesses: the numpy model's arithmetic on the kernel's counts
        st = prepare(layer, arch, consts)
        sp = (batch.spatial_x * batch.spatial_y).prod(axis=2).astype(float)           # (B, L)
        inst = np.ones((L, B))
        for li in range(L - 2, -1, -1):
            inst[li] = inst[li + 1] * sp[:, li + 1]
        R = np.ascontiguousarray(np.moveaxis(reads, 0, -1))
        Wr = np.ascontiguousarray(np.moveaxis(writes, 0, -1))
        le, dynamic, vectors = _energy(np, st, R, Wr, np.ascontiguousarray(per_level("noc_words", 1).T), inst,
                                       field_("macs_executed"))
        level_energy = le.T
    if cols["_leaks"]:
        leak, energy = _add_leakage(np, arch, latency, dynamic)
        leak = leak.T
    else:
        leak, energy = np.zeros((B, L)), dynamic
    edp = field_("edp") if energy is kernel_energy else energy * latency
    return LoopNestResult(
        energy_pj=energy, latency_cycles=latency, leakage_energy_pj=leak,
        compute_cycles=field_("compute_cycles"), edp=edp, utilization=field_("utilization"),
        macs_executed=field_("macs_executed"), valid=valid, reads=reads,
        writes=writes, noc_words=per_level("noc_words", 1),
        bandwidth_cycles=per_level("bandwidth_cycles", 1), level_energy_pj=level_energy,
        mac_energy_pj=field_("mac_energy_pj"), tile_words=per_level("tile_words", 3),
        read_vectors=None if vectors is None else np.moveaxis(vectors[0], -1, 0),
        write_vectors=None if vectors is None else np.moveaxis(vectors[1], -1, 0),
    )


# ------------------------------------------------------------------ cost function object
def _distinct_words(ctx: FillContext, extents: Any, whole: Any = None) -> Any:
    """A lower bound on the distinct words of the operand touched when every dimension
    ``d`` takes ``extents[d]`` distinct index values (``(D, B)``): an axis over one
    dimension touches ``X_d``; an axis ``a p + b r`` over two touches at least
    ``X_p + X_r - 1`` (a sumset of integers, whatever the index sets). Where ``whole``
    (``(D, B)``) says a dimension's values are a contiguous range, more: both ranges give
    exactly ``|a [0, X_p) + b [0, X_r)|``; one range of unit step (``b = 1``) gives
    ``X_r + (X_p - 1) min(a, X_r)`` (translates of an interval of length ``X_r`` by
    distinct multiples of ``a``)."""
    out = np.ones(extents.shape[-1])
    for ax in ctx.axes:
        if len(ax) == 1:
            out = out * extents[ax[0][0]]
            continue
        words = sum(extents[d] for d, _ in ax) - (len(ax) - 1)
        if whole is not None and len(ax) == 2:
            (d1, a), (d2, b) = ax
            x1, x2 = extents[d1], extents[d2]
            both = whole[d1] & whole[d2]
            g = math.gcd(int(a), int(b))
            exact = _distinct_two_aps(np, a // g, x1, b // g, x2, False)
            words = np.where(both, np.maximum(words, exact), words)
            if b == 1:
                words = np.where(whole[d2], np.maximum(words, x2 + (x1 - 1) * np.minimum(a, x2)), words)
            if a == 1:
                words = np.where(whole[d1], np.maximum(words, x1 + (x2 - 1) * np.minimum(b, x1)), words)
        out = out * words
    return out


def _axis_components(axes: list) -> list[tuple[list, list[int]]]:
    """Group tensor axes that share a dimension: ``[(axes, dims)]``. Subsets of loops of
    different groups move different axes, so the largest overlap is the product of each
    group's largest."""
    groups: list[tuple[list, set[int]]] = []
    for ax in axes:
        ds = {d for d, _ in ax}
        merged = [g for g in groups if g[1] & ds]
        for g in merged:
            groups.remove(g)
        groups.append(([a for g in merged for a in g[0]] + [ax], set().union(ds, *(g[1] for g in merged))))
    return [(g[0], sorted(g[1])) for g in groups]


def _sliding_level_bounds(ctx: FillContext, irrelevant: np.ndarray) -> Any:
    """``(L, B)``: for each level ``l`` above ``ctx.c``, the least words the loops of
    ``l`` can fetch into ``ctx.c``'s tile over every loop order of ``l`` whose innermost
    loop (of factor > 1) is irrelevant to no operand the batch's innermost loop of ``l``
    is relevant to (Smith's rule on per-loop floors). ``irrelevant``: ``(3, D)`` which
    operands each dimension is irrelevant to.

    A transition of a loop ``j`` of ``l`` costs ``w - overlap``, the overlap set by the
    shift of the tile: ``j``'s step minus the spans of the loops inside it above ``c``
    (all of the lower levels', and some subset of ``l``'s). The floor ``c_j`` is the
    least cost over every subset the orders allow: any subset if ``j`` may be innermost,
    else one holding an allowed innermost loop. The overlap is a product over groups of
    axes that share no dimension, each set by the subset's loops over that group's
    dimensions, so the largest overlap is the product of each group's largest (with the
    group of the forced innermost loop restricted to subsets holding it). Whatever the
    order, the level's words are ``sum_j n_j c'_j >= sum_j n_j c_j`` with
    ``n_j = P (prod of loops before j) (f_j - 1)`` (``P`` the product of the loops of the
    levels above), and by the exchange argument ``sum_j n_j c_j`` is least with the loops
    sorted by ``c_j``, largest outermost.

    The result depends on the batch's order of ``l`` only through the set of operands its
    innermost loop is irrelevant to, and a larger set allows more orders (a lower bound)."""
    L, D, c = ctx.L, ctx.D, ctx.c
    B = ctx.words.shape[-1]
    w = ctx.words[c]
    e = ctx.E[c]                                                      # (D, B) tile extents
    axes = [ax for ax in ctx.axes if ax]
    ext = {id(ax): 1 + sum(cf * (e[d] - 1) for d, cf in ax) for ax in axes}
    groups = _axis_components(axes)
    group_of = {d: gi for gi, (_, g_dims) in enumerate(groups) for d in g_dims}
    span = (ctx.T - 1) * ctx.steps                                    # (L, D, B) loop spans
    bits = (irrelevant.astype(np.int64) * np.array([[1], [2], [4]])).sum(axis=0)   # (D,)
    out = np.zeros((L, B))
    above = np.ones(B)
    for lvl in range(L - 1, c, -1):
        low = span[c + 1:lvl].sum(axis=0)                             # (D, B) lower levels' spans
        f = ctx.T[lvl]                                                # (D, B)
        # the batch's innermost loop of this level and the dimensions allowed innermost
        s0 = (L - 1 - lvl) * D
        live = ctx.nest_factors[s0:s0 + D] > 1                        # (D, B) by position
        pos = np.where(live.any(axis=0), D - 1 - np.argmax(live[::-1], axis=0), 0)
        inner = np.take_along_axis(ctx.nest_dims[s0:s0 + D], pos[None, :], axis=0)[0].astype(np.int64)
        inner_bits = bits[inner]                                      # (B,)
        allowed = (bits[:, None] & ~inner_bits[None, :]) == 0         # (D, B)
        floors = np.zeros((D, B))
        for j in range(D):
            if not (f[j] > 1).any():
                continue
            g_best, g_forced = [], []
            for g_axes, g_dims in groups:
                # only loops of this level over the group's dimensions (other than j)
                # can be inside j and change the group's overlap
                others = [d for d in g_dims if d != j and (span[lvl, d] > 0).any()]
                best = np.zeros(B)
                forced = {d: np.zeros(B) for d in others}
                for r in range(len(others) + 1):
                    for sub in itertools.combinations(others, r):
                        g_ov = np.ones(B)
                        for ax in g_axes:
                            moved = sum(cf * (-low[d] + (ctx.steps[lvl, j] if d == j else 0.0)
                                              - (span[lvl, d] if d in sub else 0.0)) for d, cf in ax)
                            g_ov = g_ov * np.maximum(0.0, ext[id(ax)] - np.abs(moved))
                        best = np.maximum(best, g_ov)
                        for d in sub:
                            forced[d] = np.maximum(forced[d], g_ov)
                g_best.append(best)
                g_forced.append(forced)
            free = np.prod(g_best, axis=0) if g_best else np.ones(B)
            # j not allowed innermost: some allowed loop of factor > 1 is inside it
            held = np.full(B, -1.0)
            for d in range(D):
                if d == j:
                    continue
                ok = allowed[d] & (f[d] > 1)
                if not ok.any():
                    continue
                gi = group_of.get(d)
                if gi is None or d not in g_forced[gi]:
                    v = free
                else:
                    v = g_forced[gi][d] * np.prod([g_best[k] for k in range(len(groups)) if k != gi], axis=0)
                held = np.maximum(held, np.where(ok, v, -1.0))
            ov = np.where(allowed[j] | (held < 0), free, held)
            floors[j] = w - ov
        floors = np.where(f > 1, floors, 0.0)
        # Smith's rule: the largest floors outermost
        order = np.argsort(-floors, axis=0, kind="stable")
        fs = np.take_along_axis(f, order, axis=0)
        cs = np.take_along_axis(floors, order, axis=0)
        before = np.cumprod(np.concatenate([np.ones((1, B)), fs[:-1]]), axis=0)
        out[lvl] = above * np.sum(before * (fs - 1) * cs, axis=0)
        above = above * np.prod(f, axis=0)
    return out


def _bound_hook(known: int, arch: ArchSpec, stationary: int | None = None,
                irrelevant_tile: Any = None) -> Callable[[FillContext], Any]:
    """The ``fills`` hook of :meth:`LoopNestCost.lower_bound` (see there). The compiled
    kernel computes the same fills in :func:`evaluators.loopnest_kernel.bound_fill`:
    change both together (``tests/evaluators/test_loopnest_kernel.py`` compares them)."""
    b = known - 1                                   # tiles of levels >= b are known

    def hook(ctx: FillContext) -> Any:
        single = all(len(ax) == 1 for ax in ctx.axes)
        # the dimensions whose change moves the tile to disjoint words: all of a
        # single-dimension operand's; a sliding operand's single-dimension axes only
        dims = frozenset(d for ax in ctx.axes if len(ax) == 1 for d, _ in ax)
        if ctx.c >= b:
            if single:
                return ctx.F
            w = ctx.words[ctx.c]
            per_level = np.maximum(w * ctx.moves(dims, ctx.c), _sliding_level_bounds(ctx, ~ctx.relevant))
            return w + per_level.sum(axis=0)
        spatial_between = np.prod(ctx.SP[ctx.c + 1:b + 1], axis=0)    # (D, B)
        extents = ctx.E[b] / spatial_between                          # per instance of c
        # a dimension no fanout between c and b splits takes a contiguous range
        inner = _distinct_words(ctx, extents, spatial_between == 1)
        mult = ctx.multiplier(dims, b)
        plain = mult * inner
        # every other transition of the decided loops starts a new sweep of the share
        # too: c holds at most its capacity of it at the start, so it fetches at least
        # the rest (a single-dimension operand whose share does not fit: all of it, its
        # first tile being disjoint from the last)
        lv = arch.levels[ctx.c]
        cap = np.inf if lv.capacity_words is None else lv.capacity_of(OPERANDS[ctx.t])
        out_all = np.prod(ctx.T_above[b], axis=0)                       # decided loops' product
        extra = np.where(inner > cap, inner, 0.0) if single else np.maximum(inner - cap, 0.0)
        sweeps = plain + (out_all - mult) * extra
        if not single or irrelevant_tile is None or ctx.c != b - 1:
            return sweeps
        # level b's loops (undecided) lie directly above c: unless the operand keeps a
        # tile of its whole share, unless it is the one operand level b's innermost loops
        # are irrelevant to, every loop of level b refetches its tile
        irr = [d for d in range(ctx.D) if d not in dims]
        reach = np.prod(extents[irr], axis=0) if irr else np.ones_like(inner)
        spread = np.maximum(reach / np.minimum(irrelevant_tile[:, ctx.t], reach), 1.0)
        moving = out_all * inner * np.where(ctx.t == stationary, 1.0, spread)
        return np.where(inner <= cap, sweeps, np.maximum(sweeps, moving))

    return hook


class LoopNestCost:
    """The loop-nest model as the cost function a mapper receives, with what an exact
    mapper needs beyond scoring (the :class:`mappers.base.BoundedCost` protocol).

    * ``cost(layer, arch, batch)`` is :func:`evaluate_batch`.
    * ``separable_orders`` (true): every count -- hence energy and every level's
      bandwidth cycles -- is a constant plus one term per level that depends on that
      level's loop order alone. A fill at a level is the sum over the loops ``j`` above
      it of ``n_trans_j (w - overlap_j)``; ``n_trans_j`` depends on the product of the
      loops outside ``j`` (at higher levels: a product, whatever their order) and
      ``overlap_j`` on the *set* of loops inside ``j`` (at lower levels: sets), so the
      loops of one level contribute through that level's order only.
      ``tests/evaluators/test_loopnest_bounds.py`` checks it on random mappings.
      Leakage (a level's ``leakage_pj_per_cycle``) is not: it is the architecture's
      static power times the latency, a maximum over levels. The result reports it apart
      (``leakage_energy_pj``), and :mod:`mappers.orders` searches orders on the dynamic
      energy and adds each combination's leakage back from its own latency, exactly.
    * :meth:`lower_bound` bounds every completion of a partial mapping.
    """

    def __init__(self, accounting: Conventions | str | None = None) -> None:
        self.conventions = Conventions.of(accounting)

    def __repr__(self) -> str:
        return f"LoopNestCost({self.conventions!r})"

    @property
    def separable_orders(self) -> bool:
        """True under the default conventions (see above); the others are not certified
        separable (Timeloop's window rule makes a loop's fills depend on the innermost
        loop above the level, at another level), so the exact mapper refuses them."""
        return self.conventions.default

    def __call__(self, layer: Layer, arch: ArchSpec, batch: MappingBatch) -> LoopNestResult:
        return evaluate_batch(layer, arch, batch, accounting=self.conventions)

    def lower_bound(self, layer: Layer, arch: ArchSpec, batch: MappingBatch, known: int, *,
                    stationary: int | None = None, irrelevant_tile: Any = None,
                    kernel: bool | None = None) -> LoopNestResult:
        """Figures no completion of a partial mapping can beat.

        A row of ``batch`` is a partial mapping: its spatial factors, bypass choices and
        the temporal factors of levels ``>= known`` are final, as are the loop orders of
        those levels; the temporal factors of the levels below ``known`` are free but for
        their product per dimension (whatever the batch puts there), and so are those
        levels' orders. The result's ``energy_pj``, ``compute_cycles`` and
        ``bandwidth_cycles`` (hence ``latency_cycles`` and ``edp``) are at most those of
        any completion, provided the batch puts the free factors as low as they may go
        (the compute cycles of a systolic array fall as its stream grows). ``valid`` is
        not meaningful.

        How (per operand and level ``c`` with a parent; ``b = known - 1``):

        * tile known (``c >= b``): an operand whose every tensor axis is one dimension
          has exactly the model's fills; for a sliding-window operand (an axis
          ``stride p + dilation r``) each level's loops fetch at least the larger of (a)
          the tile's words times the transitions that move it along its one-dimension
          axes (each lands on disjoint words and needs the whole tile), which depends on
          the level's order only through its innermost run of loops off those axes, and
          (b) the least words any order of the level can fetch (Smith's rule on each
          loop's least cost per transition: :func:`_sliding_level_bounds`);
        * tile unknown (``c < b``): at least ``m_b x`` (distinct words an instance of
          ``c`` touches within the tile of ``b``), where ``m_b`` counts the moves of
          ``b``'s tile along the operand's one-dimension axes under the known loops: each
          such move starts a sweep of ``c``'s instance over new, disjoint words (a
          sliding axis ``a p + b r`` over ``X_p`` and ``X_r`` values touches at least
          ``X_p + X_r - 1``: a sumset of integers). For a single-dimension operand this
          is at least its distinct words per instance, so partial-sum refills stay
          non-negative.

        * the level just below the last known tile (``c = b - 1``), given
          ``irrelevant_tile`` (``(B, 3)``: per operand, an upper bound on the product of
          the extents, over the dimensions irrelevant to it, of any tile that fits ``c``)
          and the operand ``stationary`` at level ``b`` (``None``: none): for a
          single-dimension operand whose whole share of ``b``'s tile does not fit ``c``,
          some loop of ``b`` is over its dimensions, so every known loop refetches the
          whole sweep (the product of all known factors, not just ``m_b``); and unless it
          is the stationary operand, ``b``'s innermost loop is relevant to it and every
          loop of ``b`` refetches its tile: the sweep's words times the product of its
          irrelevant extents over ``irrelevant_tile``. The caller takes the least bound
          over the stationary operand (each order of ``b`` has at most one).

        Everything the model derives from fill counts (multicast reads, partial-sum
        refills, NoC deliveries, energy, bandwidth) grows with them, so the figures bound
        every completion. Like the model's own counts, the bound is separable over the
        known levels' loop orders (every term is a sum over loops of ``n_trans_j`` times
        a function of the set of loops inside ``j``).

        ``kernel``: as in :func:`evaluate_batch`. The compiled kernel computes the same
        fills (:func:`evaluators.loopnest_kernel.bound_fill`, rule for rule the
        :func:`_bound_hook` used here otherwise; change both together,
        ``tests/evaluators/test_loopnest_kernel.py`` checks them equal). ``known`` above
        the number of levels is an error.
        """
        irr = self._bound_arguments(arch, batch, known, irrelevant_tile)
        if kernel is None:
            kernel = kernel_available()
        if kernel:
            return _evaluate_kernel(layer, arch, batch, None, int(known), stationary, irr)
        if irr is None:
            return evaluate_batch(layer, arch, batch, fills=_bound_hook(known, arch, stationary))
        # one hook per block of evaluate_batch, each with its rows of irrelevant_tile
        block = 16384
        parts = [evaluate_batch(layer, arch, _rows(batch, i, min(i + block, len(batch))), block=block,
                                fills=_bound_hook(known, arch, stationary, irr[i:i + block]))
                 for i in range(0, len(batch), block)]
        return parts[0] if len(parts) == 1 else _concat(parts)

    def _bound_arguments(self, arch: ArchSpec, batch: MappingBatch, known: int, irrelevant_tile: Any) -> Any:
        """The checks :meth:`lower_bound` and :meth:`least_lower_bound` share; returns
        ``irrelevant_tile`` as a float array (or ``None``)."""
        if not self.conventions.default:
            raise ValueError(f"lower bounds are derived for the default conventions only, not {self.conventions!r}")
        if int(known) > arch.n_levels:
            raise ValueError(f"known={known} levels, the architecture has {arch.n_levels}")
        irr = None if irrelevant_tile is None else np.asarray(irrelevant_tile, dtype=float)
        if irr is not None and irr.shape != (len(batch), len(OPERANDS)):
            raise ValueError(f"irrelevant_tile must have shape ({len(batch)}, 3), got {irr.shape}")
        return irr

    def least_lower_bound(self, layer: Layer, arch: ArchSpec, batch: MappingBatch, known: int,
                          levels: Sequence[int], candidates: Any, objective: str, *, stationary: int | None = None,
                          irrelevant_tile: Any = None, kernel: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the least ``objective`` of :meth:`lower_bound` over every combination
        of one candidate loop order (``candidates``, ``(K, D)``, outermost first) per
        level of ``levels`` (usually the decided ones; the batch's own orders of those levels are ignored;
        the other levels keep theirs), and the index of the combination that attains it
        (the first of equal ones in :func:`itertools.product` order; mixed radix ``K``,
        the first level most significant). Equals taking ``lower_bound`` once per
        combination and the least objective (:func:`mappers.orders.objective_of`), bit
        for bit; the compiled kernel does it in one pass that shares everything but the
        fills between the combinations, and skips a combination in which a level's
        candidate orders that level's loops of factor > 1 as an earlier candidate does
        (it scores the same)."""
        check_objective(objective)
        cand = np.ascontiguousarray(np.asarray(candidates, dtype=np.int64))
        lv = [int(x) for x in levels]
        L, D = arch.n_levels, len(batch.dims)
        if cand.ndim != 2 or cand.shape[1] != D or not len(cand) or \
                any(sorted(c.tolist()) != list(range(D)) for c in cand):
            raise ValueError(f"candidates must be (K >= 1, {D}) permutations of 0..{D - 1}, got shape {cand.shape}")
        irr = self._bound_arguments(arch, batch, known, irrelevant_tile)
        if not lv or len(set(lv)) != len(lv) or not all(0 <= x < L for x in lv):
            raise ValueError(f"levels must be distinct levels of the architecture (0..{L - 1}), got {levels!r}")
        if kernel is None:
            kernel = kernel_available()
        if kernel:
            best = np.empty(len(batch))
            choice = np.empty(len(batch), dtype=np.int64)
            _evaluate_kernel(layer, arch, batch, None, int(known), stationary, irr,
                             (lv, cand, objective, best, choice), lean=True)
            return best, choice
        best = np.full(len(batch), np.inf)
        choice = np.zeros(len(batch), dtype=np.int64)
        for k, combo in enumerate(itertools.product(range(len(cand)), repeat=len(lv))):
            order = batch.order.copy()
            for li, ci in zip(lv, combo):
                order[:, li, :] = cand[ci]
            r = self.lower_bound(layer, arch, MappingBatch(batch.dims, batch.temporal, batch.spatial_x,
                                                           batch.spatial_y, order, batch.keep), known,
                                 stationary=stationary, irrelevant_tile=irr, kernel=False)
            v = objective_of(objective, r.energy_pj, r.compute_cycles, r.bandwidth_cycles)
            better = v < best
            best[better] = v[better]
            choice[better] = k
        return best, choice


LOOPNEST = LoopNestCost()
"""The loop-nest cost function (the nested evaluator's default)."""
