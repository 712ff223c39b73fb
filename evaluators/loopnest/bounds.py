"""Lower bounds of the loop-nest model on partial mappings: what the exact mapper
(:mod:`mappers.exact`) prunes with.

Scope: figures that no completion of a partial mapping can beat, under the default
conventions. The interface (what :class:`~evaluators.loopnest.LoopNestCost` exposes as
the :class:`mappers.base.BoundedCost` protocol):

* :func:`lower_bound` ``(layer, arch, batch, known, *, stationary, irrelevant_tile,
  kernel)``: the model's figures with every fill count replaced by a bound
  (:func:`bound_hook`), a :class:`~evaluators.loopnest.result.LoopNestResult`;
* :func:`least_lower_bound` ``(..., levels, candidates, objective, ...)``: per row, the
  least objective of :func:`lower_bound` over combinations of candidate loop orders,
  and which combination attains it;
* :func:`bound_hook` ``(known, arch, stationary, irrelevant_tile)``: the numpy ``fills``
  hook (a function of a :class:`~evaluators.loopnest.counts.FillContext`) that carries
  the rules; :func:`distinct_words` and :func:`sliding_level_bounds` are its parts.

The compiled kernel computes the same fills in
:func:`evaluators.loopnest.kernel_bounds.bound_fill`: change the two together
(``tests/evaluators/test_loopnest_kernel.py`` checks them equal, bit for bit). Everything
else the figures derive from fills (multicast, refills, NoC, energy, bandwidth) is the
model's own code. The whole-layer compulsory-traffic bound, true of every mapping, is
:mod:`evaluators.loopnest.compulsory`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from evaluators.loopnest.bounds_conventions import relaxed_conventions, with_convention_rules
from evaluators.loopnest.conventions import Conventions
from evaluators.loopnest.counts import FillContext, axis_extent, distinct_two_aps, prepare
from evaluators.loopnest.dispatch import (
    LeastRequest,
    evaluate_compiled,
    kernel_available,
    kernel_plan,
    require_kernel,
)
from evaluators.loopnest.reference import BLOCK_ROWS, evaluate_reference
from evaluators.loopnest.result import LoopNestResult, batch_rows, concat_results
from mappers.base import check_objective
from mappers.mapping import MappingBatch
from mappers.orders import objective_of
from mappers.workloads import Layer

__all__ = ["bound_hook", "check_bound_arguments", "distinct_words", "least_lower_bound", "lower_bound",
           "per_level_refinement", "run_words", "sliding_level_bounds", "stationary_code"]


def distinct_words(ctx: FillContext, extents: Any, whole: Any = None) -> Any:
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
            exact = distinct_two_aps(np, a // g, x1, b // g, x2, False)
            words = np.where(both, np.maximum(words, exact), words)
            if b == 1:
                words = np.where(whole[d2], np.maximum(words, x2 + (x1 - 1) * np.minimum(a, x2)), words)
            if a == 1:
                words = np.where(whole[d1], np.maximum(words, x1 + (x2 - 1) * np.minimum(b, x1)), words)
        out = out * words
    return out


def run_words(ctx: FillContext) -> Any:
    """``(B,)``: the distinct words of the operand an instance of level ``ctx.c`` uses over
    the whole run, a lower bound of its fills under any completion (each word a MAC below
    it reads is in its tile at some visit, and was fetched into it then or before):
    :func:`distinct_words` of the instance's share of the layer, each dimension over the
    top tile's extent divided by the spatial factors of the levels above ``c`` (a
    dimension none of them splits takes a contiguous range). For a single-dimension
    operand the other rules give at least this; for a sliding operand it counts the
    slides of a known tile that those rules leave out."""
    spatial_above = np.prod(ctx.SP[ctx.c + 1:], axis=0)
    return distinct_words(ctx, ctx.E[ctx.L - 1] / spatial_above, spatial_above == 1)


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


def sliding_level_bounds(ctx: FillContext, irrelevant: np.ndarray) -> Any:
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
    ext = {id(ax): axis_extent(ax, e) for ax in axes}
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


def bound_hook(known: int, arch: ArchSpec, stationary: Any = None,
               irrelevant_tile: Any = None) -> Callable[[FillContext], Any]:
    """The ``fills`` hook of :func:`lower_bound` (see there for the rules). The compiled
    kernel computes the same fills in :func:`evaluators.loopnest.kernel_bounds.bound_fill`:
    change both together (``tests/evaluators/test_loopnest_kernel.py`` compares them).
    ``stationary`` and ``irrelevant_tile``: per level, as :func:`per_level_refinement`
    returns them (or its one-level forms)."""
    b = known - 1                                   # tiles of levels >= b are known
    n = None if irrelevant_tile is None else np.shape(irrelevant_tile)[0]
    codes, irrelevant_tile = per_level_refinement(arch, known, n or 0, stationary, irrelevant_tile)

    def hook(ctx: FillContext) -> Any:
        single = all(len(ax) == 1 for ax in ctx.axes)
        # the dimensions whose change moves the tile to disjoint words: all of a
        # single-dimension operand's; a sliding operand's single-dimension axes only
        dims = frozenset(d for ax in ctx.axes if len(ax) == 1 for d, _ in ax)
        if ctx.c >= b:
            if single:
                return ctx.F
            w = ctx.words[ctx.c]
            per_level = np.maximum(w * ctx.moves(dims, ctx.c), sliding_level_bounds(ctx, ~ctx.relevant))
            return np.maximum(w + per_level.sum(axis=0), run_words(ctx))
        spatial_between = np.prod(ctx.SP[ctx.c + 1:b + 1], axis=0)    # (D, B)
        extents = ctx.E[b] / spatial_between                          # per instance of c
        # a dimension no fanout between c and b splits takes a contiguous range
        inner = distinct_words(ctx, extents, spatial_between == 1)
        mult = ctx.multiplier(dims, b)
        # every word the instance of c uses over the whole run is fetched at least once:
        # its distinct words, each dimension over its values in the instance's share of
        # the layer (stronger for a sliding operand, whose moves of b's tile along a
        # sliding axis mult does not count)
        total = run_words(ctx)
        plain = mult * inner
        # every other transition of the decided loops starts a new sweep of the share
        # too: c holds at most its capacity of it at the start, so it fetches at least
        # the rest (a single-dimension operand whose share does not fit: all of it, its
        # first tile being disjoint from the last)
        lv = arch.levels[ctx.c]
        cap = np.inf if lv.capacity_words is None else lv.capacity_of(OPERANDS[ctx.t])
        out_all = np.prod(ctx.T_above[b], axis=0)                       # decided loops' product
        extra = np.where(inner > cap, inner, 0.0) if single else np.maximum(inner - cap, 0.0)
        sweeps = np.maximum(plain + (out_all - mult) * extra, total)
        if irrelevant_tile is None:
            return sweeps
        table = irrelevant_tile[:, ctx.c, ctx.t]                      # (B,), < 0: no refinement
        if not (table >= 0).any():
            return sweeps
        if not single:
            # a sliding operand the loops above c move (issue 41): every visit's MACs are
            # at most table x the words the visit fetches; the MACs of all visits are the
            # decided loops' product times the share's volume (lower_bound's argument).
            # It applies where the share's bounding box (the tile c would hold were no
            # loop of c + 1 .. b over the operand's dimensions > 1) does not fit c.
            volume = np.prod(extents, axis=0)
            box = np.prod([axis_extent(ax, extents) for ax in ctx.axes if ax], axis=0)
            moving = np.where((ctx.t == codes[ctx.c]) | (table <= 0), 0.0,
                              out_all * volume / np.where(table > 0, table, 1.0))
            return np.where((box <= cap) | (table < 0), sweeps, np.maximum(sweeps, moving))
        # the loops of levels c + 1 .. b (all undecided) lie above c: unless the operand
        # keeps a tile of its whole share, unless it is the one operand the innermost of
        # them is irrelevant to, every one of them refetches its tile
        irr = [d for d in range(ctx.D) if d not in dims]
        reach = np.prod(extents[irr], axis=0) if irr else np.ones_like(inner)
        spread = np.maximum(reach / np.minimum(np.where(table >= 0, table, 1.0), reach), 1.0)
        moving = out_all * inner * np.where(ctx.t == codes[ctx.c], 1.0, spread)
        return np.where((inner <= cap) | (table < 0), sweeps, np.maximum(sweeps, moving))

    return hook


def per_level_refinement(arch: ArchSpec, known: int, n: int, stationary: Any,
                         irrelevant_tile: Any) -> tuple[tuple[int, ...], Any]:
    """The stationary operand and the irrelevant-tile table of :func:`lower_bound` per
    level: ``(codes, table)`` with ``codes[c]`` the operand level ``c``'s parent loops
    leave stationary (-1: none) and ``table`` ``(n, L, 3)`` (entries < 0: no refinement
    at that level), or ``None``.

    ``irrelevant_tile`` ``(n, 3)`` (and an ``int`` ``stationary``) is the one-level form:
    level ``known - 2`` alone. ``(n, L, 3)`` (and a length-``L`` sequence) gives every
    level; a level at or above ``known - 1`` (its tile known) is never refined."""
    L = arch.n_levels
    b = int(known) - 1
    if stationary is None:
        codes = [-1] * L
    elif isinstance(stationary, (int, np.integer)):
        codes = [-1] * L
        if 0 <= b - 1:
            codes[b - 1] = int(stationary)
    else:
        codes = [int(s) for s in stationary]
        if len(codes) != L:
            raise ValueError(f"stationary must be None, an operand index or one per level ({L}), got {stationary!r}")
    if any(not -1 <= s < len(OPERANDS) for s in codes):
        raise ValueError(f"stationary operands must be -1 (none) or 0..{len(OPERANDS) - 1}, got {stationary!r}")
    if irrelevant_tile is None:
        return tuple(codes), None
    irr = np.asarray(irrelevant_tile, dtype=float)
    if irr.shape == (n, len(OPERANDS)):
        table = np.full((n, L, len(OPERANDS)), -1.0)
        if 0 <= b - 1:
            table[:, b - 1] = irr
        irr = table
    elif irr.shape != (n, L, len(OPERANDS)):
        raise ValueError(f"irrelevant_tile must have shape ({n}, 3) or ({n}, {L}, 3), got {irr.shape}")
    else:
        irr = irr.copy()
        irr[:, max(b, 0):] = -1.0
    return tuple(codes), irr


def stationary_code(codes: Sequence[int]) -> int:
    """The kernel's form of per-level stationary operands: two bits per level
    (``codes[c] + 1``, 0 for none), level 0 least significant."""
    return sum((int(s) + 1) << (2 * c) for c, s in enumerate(codes))


def check_bound_arguments(arch: ArchSpec, batch: MappingBatch, known: int, irrelevant_tile: Any) -> Any:
    """The checks :func:`lower_bound` and :func:`least_lower_bound` share; returns
    ``irrelevant_tile`` as a float array (or ``None``)."""
    if int(known) > arch.n_levels:
        raise ValueError(f"known={known} levels, the architecture has {arch.n_levels}")
    irr = None if irrelevant_tile is None else np.asarray(irrelevant_tile, dtype=float)
    shapes = ((len(batch), len(OPERANDS)), (len(batch), arch.n_levels, len(OPERANDS)))
    if irr is not None and irr.shape not in shapes:
        raise ValueError(f"irrelevant_tile must have shape ({len(batch)}, 3) or "
                         f"({len(batch)}, {arch.n_levels}, 3), got {irr.shape}")
    return irr


def lower_bound(layer: Layer, arch: ArchSpec, batch: MappingBatch, known: int, *, stationary: Any = None,
                irrelevant_tile: Any = None, kernel: bool | None = None,
                conventions: Conventions | str | None = None) -> LoopNestResult:
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
      loop's least cost per transition: :func:`sliding_level_bounds`);
    * tile unknown (``c < b``): at least ``m_b x`` (distinct words an instance of
      ``c`` touches within the tile of ``b``), where ``m_b`` counts the moves of
      ``b``'s tile along the operand's one-dimension axes under the known loops: each
      such move starts a sweep of ``c``'s instance over new, disjoint words (a
      sliding axis ``a p + b r`` over ``X_p`` and ``X_r`` values touches at least
      ``X_p + X_r - 1``: a sumset of integers). For a single-dimension operand this
      is at least its distinct words per instance, so partial-sum refills stay
      non-negative.
    * any level, any operand: at least :func:`run_words`, the distinct words the
      instance uses over the whole run (each is in its tile at some visit and was
      fetched into it then or before); this is what bounds a sliding operand's traffic
      when the known loops above ``b`` slide ``b``'s tile along a sliding axis (``m_b``
      counts only moves along one-dimension axes).

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
    * any level ``c < b`` (issue 41), given a per-level table (``(B, L, 3)``, entries < 0:
      not refined) and one stationary operand per level: the same argument, with the
      loops of every level ``c + 1 .. b`` (all undecided) in place of ``b``'s. Within one
      pass of ``b``'s tile those loops run through every tile of ``c`` in the share:
      ``share / w`` relevant positions times at least ``reach / table`` irrelevant ones,
      ``w`` words each, all fetched anew when the innermost of those loops is relevant to
      the operand (a one-dimension operand's tiles at distinct positions are disjoint,
      and ``c`` holds one tile); the operand that innermost loop is irrelevant to is the
      level's stationary one. The caller takes the least over every combination of
      stationary operands of the refined levels (:func:`per_level_refinement` has the
      forms).
    * a sliding-window operand at such a level (issue 41), given the same table, whose
      column is then an upper bound ``rho`` on the MACs per fetched word
      (:func:`mappers.exact.irrelevant_tile_table`), when the bounding box of its share
      does not fit ``c`` and it is not the level's stationary operand: at least
      ``P V / rho`` words, ``P`` the decided loops' product and ``V`` the MACs of one
      pass of ``b``'s tile per instance of ``c`` (the product of the share's extents).
      Why: were every temporal loop of the levels ``c + 1 .. b`` over the operand's
      dimensions of factor 1, ``c``'s tile would have the share's extents along them,
      hence the share's bounding box as its words, which does not fit; so some temporal
      loop of those levels has a factor > 1 (the gate is the box, not the share's
      distinct words: a window axis split by a fanout between ``c`` and ``b`` has a sumset
      count that may fit where the box does not); let ``m``
      be the innermost loop above ``c`` with a factor > 1 (over dimension ``m`` of
      factor ``f``), relevant to the operand (else the operand is the stationary one).
      The instance makes ``N = P V / V_c`` visits (``V_c`` the MACs of its tile, the
      product of its extents ``e``). Fills are ``w + sum_j n_trans_j (w - overlap_j)``
      (``"any_step"``; every other window rule fetches at least that:
      :mod:`evaluators.loopnest.bounds_conventions`), each term ``>= 0``. If ``m`` is on a
      one-dimension axis, every transition moves that axis by at least its extent (``m``
      steps by ``>= e_m``, or wraps back by ``(f - 1) e_m >= e_m``): no overlap, so
      ``F = N w = P V / (V_c / w)``. If ``m`` is on a sliding axis of extent ``x`` with
      coefficient ``a_m``, each of ``m``'s own ``N (f - 1) / f >= N / 2`` steps shifts
      the tile along that axis alone by ``a_m`` times a step ``>= e_m`` (every factor of
      ``m`` below the loop), fetching ``>= new_m = (w / x) min(x, a_m e_m)``; so
      ``F >= P V / (2 V_c / new_m)``. Either way ``F >= P V / rho(e)`` with ``rho(e)`` the
      largest of those ratios over the dimensions ``m`` the tile does not cover whole
      (a loop above ``c`` with a factor > 1 over ``m`` needs that), and the table holds
      the largest ``rho`` over every divisor tile that fits ``c`` with its bypass choice.

    Everything the model derives from fill counts (multicast reads, partial-sum
    refills, NoC deliveries, energy, bandwidth) grows with them, so the figures bound
    every completion. One input of the multicast is not a fill: the strides between the
    children of a fanout along a sliding-window axis are the extents of the tile below
    it, undecided below level ``b``; there the distinct child offsets are counted by the
    sumset bound ``m1 + m2 - 1`` (``unknown_below`` of
    :func:`evaluators.loopnest.counts.count`), since the batch's placement of the free
    factors (as low as they go: the largest tiles, the fewest coinciding offsets) gives
    more multicast groups than a completion with smaller tiles may have. Like the model's own counts, the bound is separable over the
    known levels' loop orders (every term is a sum over loops of ``n_trans_j`` times
    a function of the set of loops inside ``j``).

    ``kernel``: as in :func:`evaluators.loopnest.evaluate_batch`. The compiled kernel computes the same
    fills (:func:`evaluators.loopnest.kernel_bounds.bound_fill`, rule for rule the
    :func:`bound_hook` used here otherwise; change both together,
    ``tests/evaluators/test_loopnest_kernel.py`` checks them equal). ``known`` above
    the number of levels is an error.

    ``conventions``: the counting rules of the cost bounded (a :class:`Conventions` or
    a name of :data:`~evaluators.loopnest.conventions.ACCOUNTING`; default coexplore's):
    the figures are then computed under :func:`~evaluators.loopnest.bounds_conventions.relaxed_conventions`
    with a MAC's reads on change bounded apart
    (:mod:`evaluators.loopnest.bounds_conventions` gives the argument, rule by rule).
    """
    irr = check_bound_arguments(arch, batch, known, irrelevant_tile)
    conv = relaxed_conventions(Conventions.of(conventions))
    codes, irr = per_level_refinement(arch, known, len(batch), stationary, irr)
    if _use_kernel(kernel):
        return evaluate_compiled(kernel_plan(layer, arch), batch, int(known), stationary_code(codes),
                                 _kernel_table(irr), conv=conv)
    st = prepare(layer, arch)
    if irr is None:
        return evaluate_reference(np, st, arch, batch, True, None,
                                  with_convention_rules(bound_hook(known, arch, codes), conv), conv,
                                  unknown_below=int(known))
    # one hook per block of the numpy path, each with its rows of irrelevant_tile
    parts = [evaluate_reference(np, st, arch, batch_rows(batch, i, min(i + BLOCK_ROWS, len(batch))), True, None,
                                with_convention_rules(bound_hook(known, arch, codes, irr[i:i + BLOCK_ROWS]), conv),
                                conv, unknown_below=int(known))
             for i in range(0, len(batch), BLOCK_ROWS)]
    return parts[0] if len(parts) == 1 else concat_results(parts)


def least_lower_bound(layer: Layer, arch: ArchSpec, batch: MappingBatch, known: int, levels: Sequence[int],
                      candidates: Any, objective: str, *, stationary: Any = None,
                      irrelevant_tile: Any = None, kernel: bool | None = None,
                      conventions: Conventions | str | None = None) -> tuple[np.ndarray, np.ndarray]:
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
    (it scores the same). ``conventions``: as in :func:`lower_bound`. Where a level
    moves whole vectors, the compiled path takes :func:`lower_bound` once per combination
    (the kernel leaves the vector rounding to :mod:`evaluators.loopnest.energy`), as the
    numpy path does."""
    check_objective(objective)
    cand = np.ascontiguousarray(np.asarray(candidates, dtype=np.int64))
    lv = [int(x) for x in levels]
    L, D = arch.n_levels, len(batch.dims)
    if cand.ndim != 2 or cand.shape[1] != D or not len(cand) or \
            any(sorted(c.tolist()) != list(range(D)) for c in cand):
        raise ValueError(f"candidates must be (K >= 1, {D}) permutations of 0..{D - 1}, got shape {cand.shape}")
    irr = check_bound_arguments(arch, batch, known, irrelevant_tile)
    if not lv or len(set(lv)) != len(lv) or not all(0 <= x < L for x in lv):
        raise ValueError(f"levels must be distinct levels of the architecture (0..{L - 1}), got {levels!r}")
    use_kernel = _use_kernel(kernel)
    if use_kernel and not kernel_plan(layer, arch).vector:
        request = LeastRequest(np.asarray(lv, dtype=np.int64), cand, objective, np.empty(len(batch)),
                               np.empty(len(batch), dtype=np.int64))
        codes, irr = per_level_refinement(arch, known, len(batch), stationary, irr)
        evaluate_compiled(kernel_plan(layer, arch), batch, int(known), stationary_code(codes), _kernel_table(irr),
                          request, conv=relaxed_conventions(Conventions.of(conventions)))
        return request.best, request.choice
    best = np.full(len(batch), np.inf)
    choice = np.zeros(len(batch), dtype=np.int64)
    for k, combo in enumerate(itertools.product(range(len(cand)), repeat=len(lv))):
        order = batch.order.copy()
        for li, ci in zip(lv, combo):
            order[:, li, :] = cand[ci]
        r = lower_bound(layer, arch, MappingBatch(batch.dims, batch.temporal, batch.spatial_x, batch.spatial_y,
                                                  order, batch.keep), known,
                        stationary=stationary, irrelevant_tile=irr, kernel=use_kernel, conventions=conventions)
        v = objective_of(objective, r.energy_pj, r.compute_cycles, r.bandwidth_cycles)
        better = v < best
        best[better] = v[better]
        choice[better] = k
    return best, choice


def _kernel_table(irr: Any) -> Any:
    """The kernel's form of a per-level irrelevant-tile table: ``(n, 3 L)``, level-major
    (``None`` stays ``None``)."""
    return None if irr is None else np.ascontiguousarray(irr.reshape(len(irr), -1))


def _use_kernel(kernel: bool | None) -> bool:
    """``kernel`` as :func:`evaluators.loopnest.evaluate_batch` reads it: ``None`` where
    available, ``True`` insists (``ImportError`` if not), ``False`` numpy."""
    if kernel is None:
        return kernel_available()
    if kernel:
        require_kernel()
    return bool(kernel)
