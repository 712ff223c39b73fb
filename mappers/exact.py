"""The exact mapper: the mapping that minimizes the objective under the cost model, proven
over the divisor tilings (the space below; ``MappingResult.scope`` states it as data).

The legal mapping space of a layer on an architecture is every exact (divisor)
factorization of every dimension over its allowed loop slots (temporal per level,
spatial per fanout, the systolic dataflow rules of :func:`mappers.mapping_space.allowed_slots`),
every loop order at every level and every bypass choice (where the architecture allows
bypass) -- the space :func:`mappers.exhaustive.enumerate_mappings` enumerates.
:class:`ExactMapper` returns a mapping whose objective (EDP, energy or latency) is the
minimum over that whole space: a branch and bound over the factors, with an exact order
search at the leaves. Every pruning rule below is an argument that it cannot remove the
optimum; ``tests/mappers/test_exact.py`` checks the result against the brute-force
minimum on hundreds of small layers and architectures.

**Monotonicity (the basis of every bound).** The objectives grow with every count: energy
is a sum of counts times non-negative per-word energies; latency is the maximum of the
compute cycles and each level's bandwidth cycles, themselves sums of counts; EDP is their
product. So figures that bound every count from below bound the objective from below.

**The search.** Decisions are taken outermost first:

1. *Bypass* (which on-chip levels keep which operands) and 2. *spatial factors* of every
   fanout level (every divisor assignment within the fanouts and the dataflow's rules):
   every combination is a root, all bounded in one batch. The spatial factors fix the
   instances, the multicast groups and the iterations, hence the compute cycles.
3. *Temporal factors, level by level* from the backing store inwards; the innermost level
   takes what is left. Factors are divisors of what is left of each dimension.
4. *Loop orders*, at the leaves (all factors fixed): exactly, see below.

**Pruning rules.**

* *Capacity*: a node whose known tiles do not fit, or whose smallest possible inner tiles
  (the spatial factors alone) do not, has no legal completion.
* *Bounds*: the cost model's :meth:`~mappers.base.BoundedCost.lower_bound` gives, for a
  partial mapping with given loop orders at the decided levels, figures no completion
  beats (:meth:`evaluators.loopnest.LoopNestCost.lower_bound` explains its
  arguments). The node's bound is the minimum over *order classes* of the decided
  levels: at a level, an order benefits at most the operands irrelevant to its innermost
  loop (the others have their innermost relevant loop there and refetch on every
  iteration of that level), and for an operand it benefits, nothing beats putting all of
  that operand's irrelevant loops innermost; the class order for operand ``t`` is that
  (the other loops outside, those over a sliding operand's one-dimension axes first in
  each block, which minimizes the moves the bound counts for it). So every order is
  matched by a class whose bound is no higher: the model's bound depends on a decided
  level's order only through those runs and the set of operands its innermost loop is
  irrelevant to, each monotonically. (This needs each loop dimension to be irrelevant to
  at most one operand -- true of convolutions, GEMM and batched matmul; otherwise the
  mapper refuses with an error.) Where the level just above the last unknown tile has
  undecided loops (``known >= 2``), the bound is also the least over which operand that
  level's innermost loop leaves stationary (every order leaves at most one), given the
  largest product of irrelevant extents of any tile that fits the level below (a table
  over every tile shape of divisors); a first pass without that refinement is lower
  still, so nodes it prunes are pruned soundly, and only the rest get the refinement.
  The same refinement applies at every on-chip level ``c`` below that tile (issue 41):
  all levels between ``c`` and the last known tile are undecided, so unless an operand
  keeps its whole share at ``c`` or is the one the innermost loop above ``c`` is
  irrelevant to, every iteration of those loops refetches its tile; the bound is the
  least over one stationary operand per refined level (every completion has at most one
  per level), staged (the highest level alone first) and at most two levels deep.
  A sliding-window operand (a convolution's input) that is not the stationary one
  fetches, at each refined level whose share it does not keep whole, at least its MACs
  over the most MACs per fetched word of any tile that fits there (the table's column for
  it: :func:`irrelevant_tile_table`; the argument is in
  :func:`evaluators.loopnest.bounds.lower_bound`), which bounds every bypass choice at
  the roots: a small register file bypassed by the buffer above it refills from DRAM.
  The tables are not one per level but a few cases (:func:`restricted_fronts`): per
  stationary operand, the Pareto-maximal reuse vectors of the other two operands over
  the tiles a completion of the node can have there -- those that fit, with, in every
  dimension, the node's spatial factors at and below the level times a divisor of what
  the node leaves to its undecided levels (one tile cannot hold every operand's longest
  run at once, and a node that left 10 of a dimension has no tile 20 wide); every
  completion's tile is dominated by one of them and the bound falls as reuse rises, so
  the least bound over the cases bounds it. The lowest refined level is refined first
  (its small capacity is what prunes).
  A node's bound is never below its parent's (*parent floors*: the parent's bound
  bounds every completion of the parent, the child's among them).
* *Top-level screen*: the children of a root (the backing store's factors decided) get a
  cheap bound first, where the cost model has one (``top_level_bound``:
  :mod:`evaluators.loopnest.bounds_top`, the root's unrefined counts with the new tile's
  fills from the top level, read from a table over the top-level factor vectors); those it
  puts at or above the bar are dropped before their own bound (:meth:`_Search._screen_top`).
  It is at most the child's own bound, so it drops only children that bound would drop:
  the search, its nodes and its result are unchanged (``tests/evaluators/
  test_loopnest_bounds_top.py``), only the CPU time falls.
* *Spatial floor*: a spatial assignment whose bound from its PE count alone (the cost
  model's ``spatial_floor``: compulsory energy x ``MACs / PEs used``) is at least the
  bar is dropped before its roots are bounded (:meth:`_Search._busy_enough`).
* *Mirror symmetry*: where a dimension involution maps the layer and the space onto
  themselves (a square convolution: ``P <-> Q``, ``R <-> S``) and there are no
  constraints, of each pair of mirrored spatial assignments only one is searched
  (:func:`_mirror_canonical`: mirrored mappings score the same).
* *Dives*: before the best-first search, a short depth-first dive from the best roots
  offers incumbents (:meth:`_Search._dive`); it changes no bound, only the bar. With
  many roots it starts before they are all bounded in full, from the best of those with
  the least partially refined bound (:meth:`_Search._early_dive`), so the expensive
  stages of the roots' own bounds see a better bar.
* *First legal mapping*: where no incumbent is known once the roots are bounded (the
  heuristic's mapping breaks the mapspace constraints and the local search found none),
  a depth-first search with backtracking that bounds nothing finds one before the dives
  (:meth:`_Search._first_legal`), and the local search polishes it: on a deep hierarchy of
  single-word registers under constraints, a best-first search with no incumbent prunes
  nothing and a dive bounds every level's children, so a limited search used to stop with
  no mapping at all. It only offers incumbents.
* *Local search* (issue 41, item 2): where the space holds more than ``10**8`` mappings,
  before the roots are bounded, a steepest descent
  from the heuristic's mapping (and the warm start's), and greedy descents from the roots
  of least unrefined bound among the spatial assignments of least spatial floor, each
  followed by the same descent (:meth:`_Search._local_descent`: a neighbour moves one
  prime factor between two slots, exchanges two, or flips one operand's bypass; every
  neighbour scored with the exact leaf order search); again after the dives. It offers
  legal mappings of the space only, as *soft* incumbents (the bar at their objective
  times ``1 + 1e-6``, as the warm start's), so no bound changes, the tree still reaches
  its own optimum and replaces them, and a completed search returns what it returns
  without them; a search stopped by a limit returns the best of them with its true
  objective and the certified gap.
  A node whose bound is at least the best objective found so far (times ``1 + 1e-9``,
  for float rounding) is pruned: it holds no better mapping. The first incumbent is the
  heuristic mapper's. With ``gap > 0`` a node is pruned once its bound is within
  ``1 + gap`` of the best found: whatever it holds is at most that much better, so the
  result is within ``1 + gap`` of the optimum.
* *Search order*: best first (a heap of bound-sorted batches of nodes), so every node
  expanded has a bound below the optimum: the nodes on the way to the optimum have
  bounds no higher than it and are expanded before any node of higher bound.
* *Loop orders at a leaf*: the cost model is order-separable
  (:attr:`~mappers.base.BoundedCost.separable_orders`): energy and every level's bandwidth
  cycles are a constant plus one term per level depending on that level's order alone.
  For each level the mapper scores every order of its loops with a factor > 1 (the order
  of loops of extent 1, and of the innermost level, changes no count), each with the
  other levels at a reference order; subtracting the reference gives every order's term.
  A level's terms that another of its terms beats in energy and in every bandwidth are
  dropped (monotonicity); the survivors of all levels are combined and the best
  combination is exact. Where the cost is not order-separable (Timeloop's window rule,
  reads on change: the cost's ``order_coupling``; whole-vector accesses) the leaf uses
  :func:`mappers.orders.coupled_best_orders`, exact by fixing each level's innermost
  moving loop and by a dominance filter on the counts a vector rounding reads (its
  docstring); the bounds stay bounds under every convention set
  (:mod:`evaluators.loopnest.bounds_conventions`).

**Constraints** (``ExactMapper(constraints=...)``, :mod:`mappers.constraints`) restrict
the space the search branches over: spatial assignments, bypass choices and each level's
temporal factors outside the constraints' bounds are never generated (the innermost
level's factors, what is left, are checked at the leaves). The bounds are unchanged:
each bounds every completion of a node in the unconstrained space (the free factors are
still placed as low as the architecture allows), so a fortiori every constrained one;
the capacity rules are exact for any split. The heuristic mapper's incumbent is used only
if it meets the constraints. So the result is the best mapping within them, proven
(brute force over the enumerated mappings that meet random constraint sets:
``tests/mappers/test_constraints.py``). Loop orders cannot be constrained.

The result carries the space its proof covers (``scope``, a
:class:`~mappers.base.ProofScope`: divisor tilings, the cost model's accounting, whether
bypass was searched, the constraints, the spatial unrollings, every loop order), the size of the space (mappings over all factorizations, orders and
bypass choices, counted from the factorizations without enumerating them), the lower bound
of the root (the best objective no mapping beats, before any branching), the number of
mappings the cost model scored and the wall time. With ``time_limit_s`` the search stops
when the time is up and returns the best mapping so far with ``stopped_early`` and, as
``lower_bound``, the smallest bound of the nodes not yet explored (the optimum lies
between it and the result). ``info["incumbents"]`` is the anytime trace: ``(CPU seconds
since the search began, objective)`` at each new incumbent, the heuristic's first.

**Warm start** (``ExactMapper.map(..., incumbents=[...])``, issue 41 item 4: the nested
evaluator offers the best mappings it found for the same layer on other hardware points).
Each candidate (a :class:`~mappers.mapping.Mapping` or the rows of a
:class:`~mappers.mapping.MappingBatch`) is checked against this search's space -- the
layer's dimensions and the architecture's levels, an exact factorization with every
factor > 1 in an allowed slot, the fanouts, a bypass choice the search branches over,
the constraints -- and scored; one the cost model finds invalid (a tile that does not fit)
is dropped, with every other illegal one, silently. The best legal candidate becomes the
first incumbent if it beats the heuristic's, with its objective raised by a relative
``1e-6`` (:data:`_WARM_SLACK`) for the bar only. That slack is what keeps a completed
search's *result* the one a cold search returns: the candidate lies in the search's
space, so its own leaf has a bound at most its objective and is reached below the bar;
every mapping the search itself finds at least as good as the candidate therefore
replaces it, and the nodes the tighter bar prunes have bounds above the candidate's
objective, where no mapping that could become the final incumbent lies. The nodes
expanded below the candidate's objective, their order and the leaves scored there are
those of a cold search (best first: the order of the nodes below the bar does not depend
on the bar), so a completed search returns the same mapping, bit for bit, with or without
a warm start (``tests/mappers/test_exact_warm_start.py`` checks this on random cases; the
demo's 360 layer maps and the 66 proven of 150 in a Shi DQN@32 search were equal too). The one exception
the argument leaves open is a near tie: an improvement must beat the incumbent by the
relative ``_TOL``, so of two mappings within ``1e-9`` of each other the one kept may
depend on which incumbent came before -- then the mapping, energy and latency may differ,
the objective by at most that ``1e-9``;
what it saves is the nodes, leaves and bounds a cold search spends above that objective
before it finds a mapping as good. Only a search stopped by a limit may return the
candidate itself (with its true objective; the reported bound stays below it), which is
the point of it there: no cliff back to the heuristic's mapping.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from mappers.base import (
    BoundedCost,
    CostFunction,
    MappingResult,
    NoLegalMapping,
    ProofScope,
    SearchStoppedEmpty,
    check_objective,
    result_of,
)
from mappers.constraints import (
    ConstraintSpec,
    MappingConstraints,
    ResolvedConstraints,
    check_constraint_spec,
    constraints_for,
)
from mappers.fit import explain_unmappable, smallest_tile_shortfalls
from mappers.heuristic import HeuristicMapper
from mappers.mapping import Mapping, MappingBatch
from mappers.mapping_space import (
    MappingSpaceInfo,
    allowed_slots,
    divisor_proof_scope,
    divisors,
    keep_array,
    prime_factors,
)
from mappers.orders import (
    OrderStructure,
    best_orders,
    canonical_orders,
    coupled_best_orders,
    objective_of,
    separable_best,
    vector_levels,
)
from mappers.workloads import Layer

__all__ = ["ExactMapper", "irrelevant_tile_table", "restricted_fronts", "reuse_fronts", "tile_reuse", "tile_shapes"]

_TOL = 1e-9
_WARM_SLACK = 1e-6
"""A warm-start candidate sets the bar at its objective times ``1 + _WARM_SLACK`` (well
above the ``_TOL`` every improvement must clear), so a search that completes replaces it
with the mapping a cold search finds (see the module docstring)."""
_REFINED_LEVELS = 2
"""The stationary-operand refinement of :meth:`_Search._bound` covers at most this many
levels below the last known tile (``3 ** k`` passes for ``k`` levels)."""
_FRONT_POINTS = 4
"""Reuse vectors per stationary operand and refined level (:func:`reuse_fronts`): the
refinement's cases per level are at most ``3 x`` this many."""
_RESTRICTED_TILES = 4096
"""Fitting tiles beyond which a level's refinement uses the fronts over every tile that
fits rather than per node (:meth:`_Search._reuse_options`): the per-node sets cost a pass
over the tiles per node, and a buffer that holds tens of thousands of tile shapes
restricts little (on the first Shi et al. iso point, DQN conv1 at batch 1 and 32, restricting the buffer's
fronts too removed no node beyond the register file's)."""
_EARLY_DIVE_ROOTS = 256
"""Roots beyond which the first dive starts before every root is bounded in full
(:meth:`_Search._early_dive`), and how many of the least unrefined bound it ranks."""
_DIVE_ROOTS = 4
_DIVE_WIDTH = 4
_DIVE_LEAVES = 64
"""The initial dives (:meth:`_Search._dive`): roots dived from, children kept per level,
leaves scored per dive."""
_LOCAL_SPACE = 10 ** 8
"""The local search runs where the space holds more mappings than this (below it, the
tree search alone takes well under a second here: the demo's layers)."""
_POLISH_ROUNDS = 32
_DESCENT_WIDTH = 512
_START_POOL = 4096
_STARTS = 8
_KEEP_POOL = 64
_KEEP_STARTS = 4
"""The local search (:meth:`_Search._local_descent`): at most this many rounds per
descent, and neighbours scored per round; the starts of :meth:`_Search._multistart`:
spatial assignments considered, and descents started, with the incumbent's bypass choice;
then spatial assignments considered per other bypass choice, and descents started from
the best roots of those choices."""
_ROOT_CHUNK = 1 << 16
"""Roots bounded at a time (:meth:`_Search._roots`, :meth:`_Search._early_dive`): about 40 MB
of node arrays and about 0.3 CPU s of bounding on DQN@32 conv1 / Eyeriss v1, the granularity
of a time limit there (2^18 overran a 0.5 s limit by about 2 s, 2^16 by about 1 s, with the
same proof time; the chunks change no result), and a multiple of the loop-nest model's
16,384-row blocks."""


# ------------------------------------------------------------------------ the space
@dataclass
class _Problem:
    """Everything about (layer, architecture, bypass choice) the search needs."""

    layer: Layer
    arch: ArchSpec
    info: MappingSpaceInfo
    dims: tuple[str, ...]              # the layer's dimensions (canonical order)
    sizes: np.ndarray                  # (D,)
    slots: dict[str, list[tuple[str, int]]]
    temporal_ok: np.ndarray            # (L, D) dimension may have a temporal factor at level
    spatial_x_ok: np.ndarray           # (L, D)
    spatial_y_ok: np.ndarray
    structure: OrderStructure          # what loop orders can change
    rc: ResolvedConstraints            # the mapping constraints (none: every bound open)


def _problem(layer: Layer, arch: ArchSpec, bypass: bool, rc: ResolvedConstraints) -> _Problem:
    info = MappingSpaceInfo(layer, arch, "divisors", bypass)
    dims = layer.dim_names
    L, D = arch.n_levels, len(dims)
    slots = allowed_slots(info)
    t_ok = np.zeros((L, D), dtype=bool)
    x_ok = np.zeros((L, D), dtype=bool)
    y_ok = np.zeros((L, D), dtype=bool)
    for d, ss in slots.items():
        j = dims.index(d)
        for kind, li in ss:
            {"t": t_ok, "x": x_ok, "y": y_ok}[kind][li, j] = True
    return _Problem(layer, arch, info, dims, np.array([layer.dims[d] for d in dims], dtype=np.int64),
                    slots, t_ok, x_ok, y_ok, OrderStructure.of(layer), rc)


def _keep_choices(layer: Layer, arch: ArchSpec, bypass: bool, rc: ResolvedConstraints) -> list[np.ndarray]:
    """Every bypass choice that meets the constraints (levels whose kept operands are
    constrained keep exactly those; without bypass choices, the one choice must)."""
    info = MappingSpaceInfo(layer, arch, "divisors", bypass)
    base = keep_array(info)[0]
    if not bypass or info.dataflow is not None:
        return [base] if rc.keep_ok(base[None])[0] else []
    base = rc.apply_keep(base)
    opts = [(li, t) for li in range(arch.n_levels - 1) for t, op in enumerate(OPERANDS)
            if op in arch.levels[li].tensors and not rc.keep_fixed[li]]
    out = []
    for bits in itertools.product([True, False], repeat=len(opts)):
        k = base.copy()
        for (li, t), b in zip(opts, bits):
            k[li, t] = b
        out.append(k)
    return out


def _vectors(choices: list[list[int]], limit: int | None = None) -> np.ndarray:
    """All vectors with one value from each list (``(n, len(choices))``), optionally only
    those whose product is at most ``limit``."""
    rows = np.array(list(itertools.product(*choices)), dtype=np.int64).reshape(-1, len(choices))
    if limit is not None and len(rows):
        rows = rows[np.prod(rows, axis=1) <= limit]
    return rows


def _spatial_assignments(p: _Problem) -> tuple[np.ndarray, np.ndarray]:
    """Every spatial assignment: ``(n, L, D)`` X and Y factors within the fanouts, the
    dataflow's rules and the constraints, each dimension's total dividing its size."""
    D = len(p.dims)
    per_level = []
    for li, lv in enumerate(p.arch.levels):
        for kind, fan, ok in ((1, lv.fanout_x, p.spatial_x_ok[li]), (2, lv.fanout_y, p.spatial_y_ok[li])):
            choices = [p.rc.allowed(kind, li, j, divisors(int(p.sizes[j])) if ok[j] and fan > 1 else [1])
                       for j in range(D)]
            per_level.append(_vectors(choices, fan))
    # combine level by level, keeping per-dimension products that divide the sizes
    acc = np.ones((1, 0, D), dtype=np.int64)
    prod = np.ones((1, D), dtype=np.int64)
    for vec in per_level:
        a = np.repeat(np.arange(len(acc)), len(vec))
        b = np.tile(np.arange(len(vec)), len(acc))
        new_prod = prod[a] * vec[b]
        ok = (p.sizes[None, :] % new_prod == 0).all(axis=1)
        acc = np.concatenate([acc[a[ok]], vec[b[ok]][:, None, :]], axis=1)
        prod = new_prod[ok]
    sx = acc[:, 0::2, :]
    sy = acc[:, 1::2, :]
    return sx, sy


def _mirror(p: _Problem) -> np.ndarray | None:
    """A dimension permutation ``sigma`` (an involution, not the identity) under which the
    layer and the search space are symmetric, or ``None``: equal sizes, every operand's
    tensor axes mapped onto its own axes (dimension and coefficient), the same allowed
    slots for ``d`` and ``sigma[d]`` at every level, and no dataflow (whose rules name
    dimensions). A convolution with ``P = Q``, ``R = S`` and equal strides and dilations
    has one: ``P <-> Q``, ``R <-> S``."""
    if p.info.dataflow is not None:
        return None
    dims = p.dims
    D = len(dims)
    axes = {op: sorted(tuple(sorted(ax)) for ax in p.layer.tensor(op).axes) for op in OPERANDS}
    for perm in itertools.permutations(range(D)):
        sigma = np.array(perm)
        if (sigma == np.arange(D)).all() or (sigma[sigma] != np.arange(D)).any():
            continue
        if (p.sizes[sigma] != p.sizes).any():
            continue
        name = {dims[j]: dims[sigma[j]] for j in range(D)}
        if any(sorted(tuple(sorted((name[d], c) for d, c in ax)) for ax in p.layer.tensor(op).axes) != axes[op]
               for op in OPERANDS):
            continue
        if all((ok[:, sigma] == ok).all() for ok in (p.temporal_ok, p.spatial_x_ok, p.spatial_y_ok)):
            return sigma
    return None


def _mirror_canonical(p: _Problem, sx: np.ndarray, sy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of each pair of spatial assignments that are mirror images under :func:`_mirror`'s
    ``sigma`` (dimensions ``d`` and ``sigma[d]`` exchanged), only the one whose factors
    come first lexicographically (and every self-mirrored one).

    Sound: ``sigma`` maps the mapping space onto itself (same sizes and slots; a
    bypass choice names operands, not dimensions, so it is unchanged) and every
    mapping ``m`` onto one with the same counts (the model reads dimensions only through
    the operands' axes, which ``sigma`` permutes among themselves: ``sigma(m)`` has the
    same tiles, transitions and overlaps, dimension for dimension renamed), hence the same
    objective. The roots of a dropped assignment are the mirror images of a kept
    assignment's roots, and their completions of the kept ones' completions, so the
    best objective over the kept roots is the best over all (the mapping found may be
    the mirror image of another search's, at the same objective up to float rounding).
    Only without constraints (which may name one dimension and not its mirror)."""
    sigma = _mirror(p)
    if sigma is None or not len(sx):
        return sx, sy
    a = np.concatenate([sx, sy], axis=1).reshape(len(sx), -1)
    b = np.concatenate([sx[:, :, sigma], sy[:, :, sigma]], axis=1).reshape(len(sx), -1)
    diff = a != b
    first = np.argmax(diff, axis=1)
    rows = np.arange(len(a))
    keep = ~diff.any(axis=1) | (a[rows, first] < b[rows, first])
    return sx[keep], sy[keep]


def _row_codes(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """One int64 per row of ``values`` (``(n, D)``, ``1 <= values[:, j] <= sizes[j]``),
    equal exactly for equal rows (mixed radix; the sizes' product is far below 2**63 for
    any layer a mapper can search)."""
    radix = np.concatenate([[1], np.cumprod(sizes[:-1] + 1)]).astype(np.int64)
    return values @ radix


def _space_size(p: _Problem) -> int:
    """Factorizations of every dimension over its allowed slots within the constraints'
    bounds (fanouts and capacities not yet applied, loop orders not counted): the tilings
    this bypass choice spans."""
    from mappers.exhaustive import factorizations

    kinds = {"t": 0, "x": 1, "y": 2}
    total = 1
    for j, d in enumerate(p.dims):
        if d not in p.slots:
            continue
        lo = np.array([p.rc.lo[kinds[k], li, j] for k, li in p.slots[d]])
        hi = np.array([p.rc.hi[kinds[k], li, j] for k, li in p.slots[d]])
        f = np.array(factorizations(int(p.sizes[j]), len(p.slots[d])), dtype=np.int64)
        total *= int(((f >= lo) & (f <= hi)).all(axis=1).sum())
    return total


# ------------------------------------------------------------------------ the mapper
def tile_shapes(layer: Layer, limit: int = 2_000_000) -> np.ndarray | None:
    """``(m, D)`` every tile shape (one divisor of each dimension's size per dimension, in
    ``layer.dim_names`` order); ``None`` when there are more than ``limit``."""
    choices = [divisors(int(layer.dims[d])) for d in layer.dim_names]
    if math.prod(len(ch) for ch in choices) > limit:
        return None
    return _vectors(choices).astype(float)


def _bounding_words(layer: Layer, extents: np.ndarray) -> np.ndarray:
    """``(n, 3)`` bounding-box words of each operand for tile extents ``(n, D)``."""
    dims = layer.dim_names
    out = np.ones((len(extents), 3))
    for k, op in enumerate(OPERANDS):
        for axis in layer.tensor(op).axes:
            out[:, k] *= 1 + sum(c * (extents[:, dims.index(d)] - 1) for d, c in axis)
    return out


def _fits_level(lv: MemoryLevel, keep: np.ndarray, words: np.ndarray) -> np.ndarray:
    """``(n,)``: the operands ``keep`` (``(n, 3)`` or ``(1, 3)``) holds, ``words`` each
    (``(n, 3)``), fit level ``lv`` (one shared capacity, or one per operand)."""
    held = np.where(keep, words, 0.0)
    if lv.capacity_words is None:
        return np.ones(len(words), dtype=bool)
    if lv.shared:
        return held.sum(axis=1) <= lv.capacity_of("W")
    cap = np.array([lv.capacity_of(op) for op in OPERANDS])
    return (held <= cap[None, :]).all(axis=1)


def irrelevant_tile_table(layer: Layer, arch: ArchSpec, level: int, keep: np.ndarray,
                          tiles: np.ndarray | None = None) -> np.ndarray | None:
    """The ``irrelevant_tile`` argument of :meth:`LoopNestCost.lower_bound`: ``(n, 3)``, per
    operand, an upper bound on the MACs per word the operand's tile at level ``level``
    fetches while it moves, over every tile (of ``tiles``, default :func:`tile_shapes`)
    that fits level ``level`` with the bypass choice ``keep`` (``(n, 3)``, that level's
    kept operands); ``None`` when there are too many tile shapes to list.

    * An operand whose every axis is one dimension: the largest product of the tile's
      extents over the dimensions irrelevant to it (``V / w``: ``V`` the tile's MACs, the
      product of all its extents, ``w`` its words).
    * A sliding-window operand (an axis ``a p + b r``), issue 41: the largest, over the
      tiles and over every dimension ``m`` relevant to it that the tile does not cover
      whole (some loop above the level may be over ``m``), of ``V / (kappa_m new_m)``:
      ``new_m`` the words a step of one tile extent along ``m`` brings in (``w`` on a
      one-dimension axis; ``(w / x) min(x, coef_m e_m)`` on a sliding axis of extent
      ``x``), ``kappa_m`` 1 on a one-dimension axis and 1/2 on a sliding one.
      :func:`evaluators.loopnest.bounds.lower_bound` gives why ``N V / table`` words then
      bound the fills of ``N`` visits.
    """
    ext = tile_shapes(layer) if tiles is None else tiles
    if ext is None:
        return None
    words = _bounding_words(layer, ext)                          # (m, 3)
    reuse = tile_reuse(layer, ext, words)
    out = np.ones((len(keep), 3))
    lv = arch.levels[level]
    rows, inverse = np.unique(keep, axis=0, return_inverse=True)
    for r, kc in enumerate(rows):
        fit = _fits_level(lv, kc[None, :], words)
        out[inverse.ravel() == r] = reuse[fit].max(axis=0) if fit.any() else 1.0
    return np.where(np.isfinite(out), out, np.inf)


def tile_reuse(layer: Layer, ext: np.ndarray, words: np.ndarray | None = None) -> np.ndarray:
    """``(m, 3)``: per tile (extents ``(m, D)``) and operand, the MACs per fetched word of
    :func:`irrelevant_tile_table` before the maximum over tiles (``-inf`` for a sliding
    operand no loop above the level can move: the tile covers every dimension it depends
    on). ``words``: the tiles' bounding-box words, if already computed."""
    words = _bounding_words(layer, ext) if words is None else words
    dims = layer.dim_names
    sizes = np.array([layer.dims[d] for d in dims], dtype=float)
    volume = np.prod(ext, axis=1)
    reuse = np.ones((len(ext), 3))
    for k, op in enumerate(OPERANDS):
        axes = layer.tensor(op).axes
        rel = {d for axis in axes for d, _ in axis}
        if all(len(axis) == 1 for axis in axes):
            for j, d in enumerate(dims):
                if d not in rel:
                    reuse[:, k] *= ext[:, j]
            continue
        best = np.full(len(ext), -np.inf)                        # no dimension can move it
        for axis in axes:
            x = 1 + sum(cf * (ext[:, dims.index(d)] - 1) for d, cf in axis)
            for d, cf in axis:
                j = dims.index(d)
                if sizes[j] == 1 or cf <= 0:
                    continue
                if len(axis) == 1:
                    per_word = volume / words[:, k]
                else:
                    per_word = 2.0 * volume / (words[:, k] / x * np.minimum(x, cf * ext[:, j]))
                best = np.where(ext[:, j] < sizes[j], np.maximum(best, per_word), best)
        reuse[:, k] = best
    return reuse


def _fitting_tiles(layer: Layer, arch: ArchSpec, level: int, keep: np.ndarray,
                   tiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(extents (m, D) int, reuse (m, 3))`` of the tiles of ``tiles`` that fit level
    ``level`` with the kept operands ``keep`` (``(3,)``): :func:`tile_reuse` with a
    sliding operand no loop can move (``-inf``) at 0 and an unbounded one at ``inf``."""
    words = _bounding_words(layer, tiles)
    fit = _fits_level(arch.levels[level], np.asarray(keep, dtype=bool)[None, :], words)
    reuse = tile_reuse(layer, tiles[fit], words[fit])
    return tiles[fit].astype(np.int64), np.where(np.isfinite(reuse), reuse, np.where(reuse > 0, np.inf, 0.0))


def reuse_fronts(layer: Layer, arch: ArchSpec, level: int, keep: np.ndarray, tiles: np.ndarray | None = None,
                 max_points: int = 8) -> list[np.ndarray] | None:
    """Per stationary operand ``s`` (0, 1, 2), an ``(n_s, 3)`` set of reuse vectors
    (:func:`tile_reuse`) that dominates every tile that fits level ``level`` with the
    kept operands ``keep`` (``(3,)``): for each such tile, some row is at least its reuse
    in every operand but ``s`` (whose entry, unused by the bound when ``s`` is the
    stationary operand, is the maximum). The Pareto-maximal vectors of the other two
    operands, at most ``max_points`` (beyond that, consecutive ones in the first
    operand's order are merged into their componentwise maximum, which still dominates
    them); ``None`` when there are too many tile shapes to list.

    This is what couples the operands' refinements: one tile cannot have the largest
    irrelevant extents of every operand at once (a register file that holds a long run of
    ``K`` for the input holds little of ``P`` and ``Q`` for the weights), so the least
    bound over the rows (each with the stationary operand ``s``) bounds every completion
    (:meth:`_Search._bound`)."""
    ext = tile_shapes(layer) if tiles is None else tiles
    if ext is None:
        return None
    _, reuse = _fitting_tiles(layer, arch, level, keep, ext)
    if not len(reuse):
        return [np.ones((1, 3)) for _ in range(3)]
    top = reuse.max(axis=0)
    out = []
    for s in range(3):
        others = [k for k in range(3) if k != s]
        v = np.unique(reuse[:, others], axis=0)
        v = v[np.lexsort((-v[:, 1], -v[:, 0]))]                  # first operand descending
        front = v[np.maximum.accumulate(v[:, 1]) == v[:, 1]]     # strictly rising second one
        front = front[np.concatenate([[True], front[1:, 1] > front[:-1, 1]])]
        if len(front) > max_points:
            groups = np.array_split(np.arange(len(front)), max_points)
            front = np.stack([front[g].max(axis=0) for g in groups])
        rows = np.empty((len(front), 3))
        rows[:, others] = front
        rows[:, s] = top[s]
        out.append(rows)
    return out


def restricted_fronts(layer: Layer, arch: ArchSpec, level: int, keep: np.ndarray, sp: np.ndarray, rem: np.ndarray,
                      tiles: np.ndarray | None = None, max_points: int = 4) -> np.ndarray | None:
    """``(U, 3, max_points, 3)``: :func:`reuse_fronts` of level ``level`` for ``U`` nodes at
    once, each over the tiles a completion of that node can have there: those that fit
    with the kept operands ``keep`` (``(3,)``) and whose extent in every dimension ``d`` is
    ``sp[u, d]`` (the node's spatial factors at and below the level, fixed at its root)
    times a divisor of ``rem[u, d]`` (what the node leaves to the undecided levels, which
    include every level up to this one). Row ``[u, s]``: for the stationary operand ``s``,
    vectors dominating every such tile's reuse in the other two operands (Pareto-maximal
    ones, consecutive ones merged into their componentwise maximum down to ``max_points``;
    fewer repeat one, which changes no minimum); the entry of ``s`` itself is the largest.
    A node none of whose tiles fits gets reuse 1 everywhere (a bound still: no completion
    exists). ``None`` when there are too many tile shapes to list.

    Against the unrestricted fronts (every tile that fits) this drops tiles no completion
    of the node has -- a register-file tile 20 outputs wide where the node has left 10 --
    whose reuse the bound would otherwise credit it with (issue 41)."""
    ext = tile_shapes(layer) if tiles is None else tiles
    if ext is None:
        return None
    sp = np.asarray(sp, dtype=np.int64)
    rem = np.asarray(rem, dtype=np.int64)
    e, reuse = _fitting_tiles(layer, arch, level, keep, ext)
    if not len(e) or not len(sp):
        return np.ones((len(sp), 3, max_points, 3))
    masks, which = _distinct_masks(_allowed_tiles(e, sp, rem))
    ok = np.unpackbits(masks, axis=1, count=len(e)).astype(bool)
    return _masked_fronts(reuse, ok, max_points)[which]


def _allowed_tiles(e: np.ndarray, sp: np.ndarray, rem: np.ndarray) -> np.ndarray:
    """``(U, m)``: which of the tiles ``e`` (``(m, D)`` extents) a completion of each node
    can have (extent ``sp[u, d]`` times a divisor of ``rem[u, d]`` in every dimension): per
    dimension, the few extents the tiles take, allowed or not per node, gathered."""
    ok = np.ones((len(sp), len(e)), dtype=bool)
    for d in range(e.shape[1]):
        vals, inv = np.unique(e[:, d], return_inverse=True)
        f = vals[None, :] // sp[:, d:d + 1]
        allowed = (vals[None, :] % sp[:, d:d + 1] == 0) & (f >= 1) & (rem[:, d:d + 1] % np.maximum(f, 1) == 0)
        ok &= allowed[:, inv.ravel()]
    return ok


def _distinct_masks(ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(packed distinct rows of ok, (U,) the row of each)``: nodes with the same allowed
    tiles have the same fronts, computed once per distinct set."""
    packed = np.ascontiguousarray(np.packbits(ok, axis=1))
    view = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, which = np.unique(view, return_index=True, return_inverse=True)
    return packed[first], which.ravel()


def _masked_fronts(reuse: np.ndarray, ok: np.ndarray, max_points: int) -> np.ndarray:
    """``(G, 3, max_points, 3)``: :func:`restricted_fronts`' rows for ``G`` sets of tiles
    (``ok``, ``(G, m)``, over the ``m`` tiles whose reuse vectors are ``reuse``, ``(m, 3)``):
    per stationary operand ``s``, the Pareto front of the other two operands' reuse over
    the set (tiles sorted by the first descending, then the second: a tile is on the
    front where the second exceeds every earlier tile's of the set), cut into
    ``max_points`` runs of consecutive front points, each replaced by its componentwise
    maximum (the run's first point's first entry, its last point's second); a run left
    empty repeats the first. A set with no tile gets reuse 1 (a bound still: no completion
    exists)."""
    G = len(ok)
    out = np.ones((G, 3, max_points, 3))
    top = np.where(ok[:, :, None], reuse[None, :, :], -np.inf).max(axis=1)                       # (G, 3)
    for s in range(3):
        a, b = [k for k in range(3) if k != s]
        idx = np.lexsort((-reuse[:, b], -reuse[:, a]))
        M, A, B = ok[:, idx], reuse[idx, a], reuse[idx, b]
        run = np.maximum.accumulate(np.where(M, B[None, :], -np.inf), axis=1)
        prev = np.concatenate([np.full((G, 1), -np.inf), run[:, :-1]], axis=1)
        row, col = np.nonzero(M & (B[None, :] > prev))            # the front points, row by row, in order
        n_f = np.bincount(row, minlength=G)
        start = np.cumsum(n_f) - n_f
        group = (np.arange(len(row)) - start[row]) * max_points // np.maximum(n_f, 1)[row]
        pts = np.full((G, max_points, 2), -np.inf)
        # along a front the first entry falls and the second rises: a run's maximum is its
        # first point's first entry and its last point's second
        np.maximum.at(pts[:, :, 0], (row, group), A[col])
        np.maximum.at(pts[:, :, 1], (row, group), B[col])
        empty = (pts[:, :, 0] == -np.inf)[:, :, None]
        pts = np.where(empty, pts[:, :1, :], pts)
        out[:, s, :, a], out[:, s, :, b] = pts[:, :, 0], pts[:, :, 1]
        out[:, s, :, s] = top[:, s][:, None]
    return np.where(ok.any(axis=1)[:, None, None, None], out, 1.0)


def _neighbours(p: _Problem, fx: np.ndarray, fy: np.ndarray, T: np.ndarray, sx: np.ndarray, sy: np.ndarray,
                keep: np.ndarray, keeps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The complete factorizations one move from ``(T, sx, sy, keep)`` (each ``(L, D)``,
    ``keep`` ``(L, 3)``), as ``(n, L, D)`` arrays and ``(n, L, 3)`` bypass choices:

    * a prime factor of one dimension moved from one slot (a level's temporal loop, or its
      spatial x or y unrolling) to another slot that may take that dimension, and a
      composite factor moved whole (a batch dimension moved to the backing store one prime
      at a time climbs before it descends);
    * two such moves between the same two slots in opposite directions, of different
      dimensions (an exchange, which keeps both tiles near their sizes: what a full
      buffer needs);
    * another bypass choice of the search (``keeps``) that differs in one level's one
      operand.

    Spatial slots stay within their fanouts (``fx``, ``fy``: per level). Every row is a
    factorization of the layer (the product of each dimension's factors is unchanged);
    capacity and constraints are the caller's to check."""
    L, D = T.shape
    F = np.stack([T, sx, sy])                                   # (3, L, D): kind, level, dim
    ok = np.stack([p.temporal_ok, p.spatial_x_ok, p.spatial_y_ok])
    slots = [(k, li) for k in range(3) for li in range(L)]
    moves: list[tuple[int, int, int, int, int, int]] = []      # (dim, kind_from, lvl_from, kind_to, lvl_to, factor)
    prime_moves: list[tuple[int, int, int, int, int, int]] = []    # those whose factor is a prime
    for d in range(D):
        for ka, la in slots:
            f = int(F[ka, la, d])
            if f == 1:
                continue
            primes = prime_factors(f)
            # each distinct prime, and the whole factor where it is composite (a dimension
            # moved as a block: one prime at a time may climb before it descends)
            factors = [(q, True) for q in sorted(set(primes))] + ([(f, False)] if len(primes) > 1 else [])
            for q, is_prime in factors:
                for kb, lb in slots:
                    if (kb, lb) != (ka, la) and ok[kb, lb, d]:
                        moves.append((d, ka, la, kb, lb, q))
                        if is_prime:
                            prime_moves.append(moves[-1])
    rows = []
    for d, ka, la, kb, lb, q in moves:
        G = F.copy()
        G[ka, la, d] //= q
        G[kb, lb, d] *= q
        rows.append(G)
    by_pair: dict[tuple[int, int, int, int], list[tuple[int, int]]] = {}
    for d, ka, la, kb, lb, q in prime_moves:                   # exchanges: of primes only
        by_pair.setdefault((ka, la, kb, lb), []).append((d, q))
    for (ka, la, kb, lb), there in by_pair.items():
        if (ka, la, kb, lb) > (kb, lb, ka, la):
            continue
        for d1, q1 in there:
            for d2, q2 in by_pair.get((kb, lb, ka, la), []):
                if d1 == d2:
                    continue
                G = F.copy()
                G[ka, la, d1] //= q1
                G[kb, lb, d1] *= q1
                G[kb, lb, d2] //= q2
                G[ka, la, d2] *= q2
                rows.append(G)
    if rows:
        G = np.stack(rows)                                      # (n, 3, L, D)
        fan = (np.prod(G[:, 1], axis=2) <= fx[None]).all(axis=1) & (np.prod(G[:, 2], axis=2) <= fy[None]).all(axis=1)
        G = G[fan]
    else:
        G = np.ones((0, 3, L, D), dtype=np.int64)
    K = np.repeat(keep[None], len(G), axis=0)
    other = keeps[(keeps != keep[None]).sum(axis=(1, 2)) == 1]
    if len(other):
        G = np.concatenate([G, np.repeat(F[None], len(other), axis=0)])
        K = np.concatenate([K, other])
    return G[:, 0], G[:, 1], G[:, 2], K


@dataclass(frozen=True)
class ExactMapper:
    """The provably best mapping under a bounded cost model (see the module docstring).

    Args:
        bypass: also search which on-chip levels keep which operands.
        time_limit_s: stop after this many seconds with the best mapping so far, its
            bound and ``stopped_early`` (``None``: run to the end).
        max_nodes: stop the same way after expanding this many search nodes: an effort
            limit that, unlike a time limit, gives the same result on any machine and
            under any load (``None``: no limit).
        gap: accept a mapping within ``1 + gap`` of the optimum: nodes whose bound is
            within that factor of the best found are pruned too, so the result is proven
            within it (``lower_bound`` says how close), faster; ``optimal`` only with
            ``gap = 0``.
        constraints: search only the mappings that meet these
            (:class:`mappers.constraints.MappingConstraints`, or a rule's name such as
            ``"row-stationary"`` or a rule ``(layer, arch) -> MappingConstraints``,
            :data:`mappers.constraints.RULES`); the result is the best of them,
            ``optimal`` within them. Constraints only remove branching choices
            (spatial assignments, bypass choices, temporal factors at a level), and every
            bound is a bound over the unconstrained completions, hence over the
            constrained ones: the pruning stays sound.
        local_search: run the local search before the tree where the space is large
            (anytime quality; the module docstring): it changes no completed result, and
            costs CPU time on layers the tree proves quickly
            (``python -m experiments.benchmarks.mapper_local_search`` measures both).
    """

    bypass: bool = True
    time_limit_s: float | None = None
    max_nodes: int | None = None
    gap: float = 0.0
    constraints: ConstraintSpec = None
    local_search: bool = True
    _chunk: int = field(default=200_000, repr=False)

    def __post_init__(self) -> None:
        if self.time_limit_s is not None and not (self.time_limit_s > 0):
            raise ValueError(f"ExactMapper.time_limit_s must be > 0 or None, got {self.time_limit_s!r}")
        if not (isinstance(self.gap, (int, float)) and 0 <= self.gap < math.inf):
            raise ValueError(f"ExactMapper.gap must be a number >= 0, got {self.gap!r}")
        if self.max_nodes is not None and (isinstance(self.max_nodes, bool) or not isinstance(self.max_nodes, int)
                                           or self.max_nodes < 1):
            raise ValueError(f"ExactMapper.max_nodes must be a positive integer or None, got {self.max_nodes!r}")
        check_constraint_spec("ExactMapper", self.constraints)
        if not isinstance(self.local_search, bool):
            raise ValueError(f"ExactMapper.local_search must be True or False, got {self.local_search!r}")

    def proof_scope(self, layer: Layer, arch: ArchSpec, cost: CostFunction, objective: str = "edp",
                    constraints: MappingConstraints | None = None) -> ProofScope:
        """The space a :meth:`map` of ``layer`` on ``arch`` under ``cost`` proves over (its
        result's ``scope``), without searching: a report can state it before the results
        (``constraints``: the set :func:`~mappers.constraints.constraints_for` gave, when
        the caller has it; a rule's refusal raises
        :class:`~mappers.base.MappingRuleRefusal`)."""
        cons = constraints_for(self.constraints, layer, arch) if constraints is None else constraints
        return divisor_proof_scope(MappingSpaceInfo(layer, arch, "divisors", self.bypass), cost,
                                   check_objective(objective), cons,
                                   "every order at every level (exact order search at each leaf)")

    def map(self, layer: Layer, arch: ArchSpec, cost: CostFunction, objective: str = "edp", *,
            seed: int = 0, incumbents: Sequence[Mapping | MappingBatch] | None = None) -> MappingResult:
        """The best mapping of ``layer`` on ``arch`` (see the module docstring).

        ``incumbents``: candidate mappings to start from (a warm start, e.g. the best
        mappings of this layer on other hardware points); the legal ones are offered as the
        first incumbent before the search, the illegal ones ignored. A search that
        completes returns the same mapping with or without them; a search stopped by a
        limit returns at worst the best legal candidate."""
        check_objective(objective)
        if not isinstance(cost, BoundedCost):
            raise ValueError("ExactMapper needs a cost model that bounds partial mappings "
                             "(mappers.base.BoundedCost, e.g. evaluators.loopnest.LOOPNEST); "
                             f"got {cost!r}")
        if not cost.separable_orders and getattr(cost, "order_coupling", None) is None:
            raise ValueError(f"ExactMapper needs a cost model with order-separable counts, or one that says how its "
                             f"orders are coupled (order_coupling); {cost!r} has neither")
        t0 = time.perf_counter()
        deadline = None if self.time_limit_s is None else t0 + self.time_limit_s
        cons = constraints_for(self.constraints, layer, arch)
        rc = cons.resolve(layer, arch)
        short = smallest_tile_shortfalls(layer, arch, cons, bypass=self.bypass)
        if short:   # no legal mapping at all (mappers.fit): say why without searching
            within = f" within the constraints {cons.name or ''}".rstrip() if cons.levels else ""
            raise NoLegalMapping(f"no legal mapping of {layer.name!r} on {arch.name!r}{within}: "
                                 + "; ".join(map(str, short)))
        search = _Search(layer, arch, cost, objective, self.bypass, deadline, self._chunk, self.gap, rc,
                         self.max_nodes)
        search.warm = list(incumbents or ())
        search.local_search = self.local_search
        search.mirror = self.constraints is None
        search.run()
        search.settle_warm_start()
        if search.best is None and search.stopped:
            raise SearchStoppedEmpty(f"ExactMapper on {layer.name!r} / {arch.name!r}: the search stopped at its limit "
                                     f"(time_limit_s={self.time_limit_s}, max_nodes={self.max_nodes}) before it found "
                                     "a legal mapping; that is no proof that none exists: raise the limit")
        if search.best is None:
            within = f" within the constraints {cons.name or ''}".rstrip() if cons.levels else ""
            why = explain_unmappable(layer, arch, cons, bypass=self.bypass)
            raise NoLegalMapping(f"no legal mapping of {layer.name!r} on {arch.name!r}{within}"
                                 + (f": {why}" if why else ""))
        batch, _ = search.best
        scope = self.proof_scope(layer, arch, cost, objective, cons)
        return result_of(layer, arch, cost, batch, 0, evaluated=search.evaluated,
                         seconds=time.perf_counter() - t0, space_size=search.space_size,
                         lower_bound=search.lower_bound, optimal=not search.stopped and self.gap == 0,
                         stopped_early=search.stopped, scope=scope,
                         info={"nodes": search.nodes, "leaves": search.leaves, "screened": search.screened,
                               "incumbents": search.incumbents,
                               "keep_choices": search.n_keep, "gap": self.gap,
                               "constraints": cons.name if cons.levels else None,
                               **search.warm_info})


class _Search:
    """One exact search (see the module docstring); ``run`` fills ``best``."""

    def __init__(self, layer: Layer, arch: ArchSpec, cost: Any, objective: str, bypass: bool,
                 deadline: float | None, chunk: int, gap: float, rc: ResolvedConstraints,
                 max_nodes: int | None = None) -> None:
        self.layer, self.arch, self.cost, self.objective = layer, arch, cost, objective
        self.bypass, self.deadline, self.chunk, self.gap, self.rc = bypass, deadline, chunk, gap, rc
        self.max_nodes = max_nodes
        self.best: tuple[MappingBatch, float] | None = None
        self._cpu0 = time.process_time()
        self.incumbents: list[tuple[float, float]] = []   # (CPU s since the start, objective)
        self.evaluated = 0
        self.nodes = 0
        self.leaves = 0
        self.stopped = False
        self.open_bounds: list[float] = []
        self.root_bounds: list[float] = []
        self.floor_bounds: list[float] = []                 # spatial assignments dropped (_busy_enough)
        self.mirror = False                                 # may drop mirror images (_mirror_canonical)
        self.local_search = True                            # may run the local search (_polish, _multistart)
        self.keeps = _keep_choices(layer, arch, bypass, rc)
        self.n_keep = len(self.keeps)
        self.space_size = 0
        self._tile_tables: dict[str, Any] = {}
        self._pre: np.ndarray | None = None                 # the roots' first-stage bounds (_early_dive)
        self._floor_min = 0.0                               # a bound of every mapping searched (_busy_enough)
        self._top_table: Any = None                         # the top-level screen's table (_screen_top); False: none
        self.screened = 0                                   # children _screen_top dropped
        self._heap: list[tuple[float, int, int, _Nodes, np.ndarray]] = []   # (least bound, tie, level, nodes, bounds)
        self._counter = itertools.count()
        self.warm: list[Mapping | MappingBatch] = []        # candidate incumbents (warm_start)
        self.warm_info: dict[str, Any] = {}
        self._warm_best: MappingBatch | None = None         # the warm start's incumbent, if one was
        self._soft: tuple[MappingBatch, float] | None = None   # a soft incumbent and its true objective (_improve)

    # ---------------------------------------------------------------- driver
    @property
    def incumbent(self) -> float:
        return self.best[1] if self.best is not None else math.inf

    @property
    def bar(self) -> float:
        """Nodes whose bound is not below this are pruned: the best objective found, over
        ``1 + gap`` (then the result is within ``1 + gap`` of the optimum), less the float
        rounding tolerance."""
        return self.incumbent * (1 - _TOL) / (1 + self.gap)

    @property
    def lower_bound(self) -> float:
        if self.stopped:
            return min([self.incumbent, *self.open_bounds, *([self.bar] if self.gap else [])])
        root = min(self.root_bounds + self.floor_bounds) if self.root_bounds or self.floor_bounds else self.incumbent
        return max(root, self.bar) if self.gap else root

    def run(self) -> None:
        try:
            h = HeuristicMapper().map(self.layer, self.arch, self.cost, self.objective)
            self.evaluated += h.evaluated
            # the heuristic knows no constraints: its mapping is an incumbent only if it meets them
            b = h.batch
            if (self.rc.factors_ok(b.temporal, b.spatial_x, b.spatial_y) & self.rc.keep_ok(b.keep)).all():
                self._improve(h.batch, h.objective(self.objective))
        except NoLegalMapping:
            pass
        p = _problem(self.layer, self.arch, self.bypass, self.rc)
        self.warm_start(p)                  # the caller's candidate incumbents (issue 41, item 4)
        self.space_size = _space_size(p) * self.n_keep
        # the local search pays where the space is large; a small one is proven sooner
        local = self.local_search and self.space_size > _LOCAL_SPACE
        if local:
            self._polish(p)                 # a local search from the incumbent (anytime quality)
        sx, sy = _spatial_assignments(p)
        sx, sy = self._busy_enough(sx, sy)
        if self.mirror:
            sx, sy = _mirror_canonical(p, sx, sy)
        if not len(sx) or not self.keeps:
            return
        if local:
            self._multistart(p, sx, sy)
        # the roots: every bypass choice x every spatial assignment, every temporal factor
        # still free; all bounded (in chunks) and explored best bound first, so the most
        # promising bypass choices set the bar for the others
        keeps = np.stack(self.keeps)
        fit = self._min_tiles_fit(sx * sy, keeps)                     # (bypass choices, assignments)
        ki, si = np.nonzero(fit)
        if not len(ki):
            return
        self._pre = None
        self._early_dive(p, sx, sy, keeps, ki, si)
        # the roots go straight onto the heap (a bound-sorted copy), so nothing else keeps them
        self._push(*self._roots(p, sx, sy, keeps, ki, si), self.arch.n_levels - 1)
        if self.best is None:
            self._first_legal(p)
            if local:
                self._polish(p)             # the first legal mapping is usually far off
        self._dive(p)
        if local:
            self._polish(p)
        self._descend(p)

    def _dive(self, p: _Problem, start: tuple[_Nodes, np.ndarray, int] | None = None) -> None:
        """Anytime quality: from each of the :data:`_DIVE_ROOTS` roots of least bound, a
        depth-first dive that keeps the :data:`_DIVE_WIDTH` children of least bound at
        each level and scores the :data:`_DIVE_LEAVES` best leaves exactly, for an early
        incumbent near the optimum (the best-first search reaches leaves only after
        every node of lower bound, usually after every root). It only offers mappings
        (legal ones, scored by the model) as incumbents and leaves the heap alone, so the
        search that follows is the same best-first search with a better bar: it still
        expands every node whose bound is below the best found, and the dived roots too.
        ``start``: ``(roots sorted by bound, their bounds, level)`` to dive from instead
        of the heap's first batch (:meth:`_early_dive`)."""
        if start is None:
            if not self._heap:
                return
            _, _, top, roots, bounds = self._heap[0]
        else:
            roots, bounds, top = start
        for r in range(min(_DIVE_ROOTS, len(roots))):
            frontier, lvl = roots.take(slice(r, r + 1)), top
            frontier.floor = bounds[r:r + 1]
            while len(frontier) and bounds[r] < self.bar:
                if self._timed_out():
                    return
                children = self._children(p, frontier, lvl)
                self.nodes += len(children)
                if not len(children):
                    break
                if lvl == 1:
                    lb = self._bound(p, children, 0)
                    sel = np.argsort(lb, kind="stable")[:_DIVE_LEAVES]
                    self._leaves(p, children.take(sel[lb[sel] < self.bar]))
                    break
                cb = self._bound(p, children, lvl)
                sel = np.argsort(cb, kind="stable")[:_DIVE_WIDTH]
                sel = sel[cb[sel] < self.bar]
                frontier = children.take(sel)
                frontier.floor = cb[sel]
                lvl -= 1

    def _first_legal(self, p: _Problem) -> None:
        """Anytime quality where no incumbent is known yet (the heuristic's mapping breaks
        the constraints, or the local search found nothing legal): a depth-first search
        with backtracking for a first legal mapping, before the dives. Deep hierarchies of
        single-word registers under mapspace constraints (Timeloop's exercises) are where
        this matters: most branches fail a capacity test a level or two further down, a
        best-first search with no incumbent prunes nothing and widens level by level, and
        a dive spends seconds bounding each level's children (the classes of every decided
        level's order). So this one bounds nothing: over the roots in order of bound, it
        tries each node's children putting the most at that level first (what is left
        below is least: the inner tiles are the smallest, the likeliest to fit), and scores
        up to :data:`_DIVE_LEAVES` leaves at a time with the exact order search, until one
        is legal (offered as the incumbent) or the limit is hit. It only offers mappings
        and leaves the heap alone: the best-first search that follows is unchanged but
        for its bar."""
        for _, _, top, roots, _b in sorted(self._heap, key=lambda h: (h[0], h[1])):
            stack = [(roots, top)]
            while stack:
                if self.best is not None or self._timed_out():
                    return
                nodes, lvl = stack.pop()
                if len(nodes) > 1:
                    stack.append((nodes.take(slice(1, None)), lvl))
                children = self._children(p, nodes.take(slice(0, 1)), lvl)
                self.nodes += len(children)
                if not len(children):
                    continue
                order = np.argsort(np.prod(children.remaining.astype(float), axis=1), kind="stable")
                if lvl > 1:
                    stack.append((children.take(order), lvl - 1))
                    continue
                for lo in range(0, len(order), _DIVE_LEAVES):
                    leaf = children.take(order[lo:lo + _DIVE_LEAVES])
                    values, orders = self._score(p, leaf)
                    for i in np.argsort(values, kind="stable"):
                        if not math.isfinite(values[i]):
                            break
                        self._offer(self._batch(p, leaf.take(slice(int(i), int(i) + 1)), orders[i:i + 1]))
                        if self.best is not None:
                            return
                    if self._timed_out():
                        return

    def _polish(self, p: _Problem) -> None:
        """Anytime quality (issue 41, item 2): a local search from the incumbent
        (:meth:`_local_descent`). Like the dives it only offers legal mappings of the space
        as incumbents: no bound and no pruning rule changes, so a search that completes
        returns the optimum it would return without it (the near-tie exception of the warm
        start aside)."""
        if self.best is None or not self.keeps:
            return
        one, value = self.best
        self._local_descent(p, _Nodes(one.spatial_x, one.spatial_y, one.temporal,
                                      np.ones((1, len(p.dims)), dtype=np.int64), one.keep.astype(bool), np.zeros(1)),
                            value)

    def _multistart(self, p: _Problem, sx: np.ndarray, sy: np.ndarray) -> None:
        """More starts for the local search, in other spatial unrollings than the
        incumbent's: of the :data:`_START_POOL` spatial assignments of least spatial floor
        (all of them without one), with the incumbent's bypass choice (else the first),
        the :data:`_STARTS` roots of least unrefined bound; from each a greedy descent (at
        each level the child of least unrefined bound; at the last, the best of the
        :data:`_DIVE_LEAVES` leaves of least unrefined bound, exactly ordered) and then
        :meth:`_local_descent`. Then the same from the best root of each of the
        :data:`_KEEP_STARTS` other bypass choices whose best root (over the
        :data:`_KEEP_POOL` assignments of least floor) has the least bound: the descent
        flips one operand's bypass at a time, and an optimum two flips away sits behind a
        worse mapping (issue 41: on several Shi DQN maps the optimum keeps another operand
        at the global buffer than the first starts' best). Only the incumbent changes, as with
        :meth:`_polish`."""
        if not len(sx) or not self.keeps or self._timed_out():
            return
        floor = getattr(self.cost, "spatial_floor", None)
        f = None if floor is None else floor(self.layer, self.arch, self.objective, np.prod(sx * sy, axis=(1, 2)))
        pool = np.arange(len(sx)) if f is None else np.argsort(np.asarray(f), kind="stable")
        pool = pool[:_START_POOL]
        keeps = np.stack(self.keeps)
        k = 0
        if self.best is not None:
            same = np.flatnonzero((keeps == self.best[0].keep[0].astype(bool)[None]).all(axis=(1, 2)))
            k = int(same[0]) if len(same) else 0
        L = self.arch.n_levels
        # the incumbent's bypass choice over the whole pool, every other one over its head
        ks = [np.full(len(pool), k)] + [np.full(min(len(pool), _KEEP_POOL), j) for j in range(len(keeps)) if j != k]
        ki = np.concatenate(ks)
        si = np.concatenate([pool] + [pool[:_KEEP_POOL]] * (len(ks) - 1))
        fit = self._min_tiles_fit_rows((sx * sy)[si], keeps[ki])
        ki, si = ki[fit], si[fit]
        if not len(ki):
            return
        roots = self._root_nodes(p, sx, sy, keeps, ki, si)
        lb = self._bound(p, roots, L, stages=0)
        order = np.argsort(lb, kind="stable")
        mine = order[ki[order] == k][:_STARTS]
        # the best root of each other bypass choice (a descent flips one operand at a time:
        # two flips apart is a barrier it does not cross)
        _, first = np.unique(ki[order], return_index=True)
        others = order[first]
        others = others[ki[others] != k]
        others = others[np.argsort(lb[others], kind="stable")][:_KEEP_STARTS]
        for r in np.concatenate([mine, others]):
            frontier, lvl = roots.take(slice(int(r), int(r) + 1)), L - 1
            while lvl >= 1 and len(frontier):
                if self._timed_out():
                    return
                children = self._children(p, frontier, lvl)    # not search nodes: max_nodes counts the tree's
                if not len(children):
                    break
                if lvl == 1:
                    cb = self._bound(p, children, 0, stages=0)
                    sel = np.argsort(cb, kind="stable")[:_DIVE_LEAVES]
                    leaf = children.take(sel)
                    values, _ = self._score(p, leaf)
                    i = int(np.argmin(values))
                    if math.isfinite(values[i]):
                        self._local_descent(p, leaf.take(slice(i, i + 1)), float(values[i]))
                    break
                cb = self._bound(p, children, lvl, stages=0)
                frontier = children.take(slice(j := int(np.argmin(cb)), j + 1))
                lvl -= 1

    def _batch(self, p: _Problem, nodes: _Nodes, orders: np.ndarray | None = None) -> MappingBatch:
        """Complete nodes as a mapping batch (default orders: the dimensions' order)."""
        if orders is None:
            orders = np.tile(np.arange(len(p.dims)), (len(nodes), self.arch.n_levels, 1))
        return MappingBatch(p.dims, nodes.T, nodes.sx, nodes.sy, orders, nodes.keep)

    def _placed_batch(self, p: _Problem, nodes: _Nodes) -> MappingBatch:
        """Partial nodes as the batch their bounds take: what is left placed as low as it
        may go (:meth:`_Nodes.placed`), the dimensions' order at every level."""
        return self._batch(p, _Nodes(nodes.sx, nodes.sy, nodes.placed(p), nodes.remaining, nodes.keep, nodes.floor))

    def _score(self, p: _Problem, nodes: _Nodes) -> tuple[np.ndarray, np.ndarray]:
        """Complete nodes scored with the exact leaf order search (:meth:`_leaf_orders`),
        counted as scored leaves: ``(objective per node, its best orders)``."""
        values, orders, scored = self._leaf_orders(p, self._batch(p, nodes))
        self.evaluated += scored
        self.leaves += len(nodes)
        return values, orders

    def _local_descent(self, p: _Problem, node: _Nodes, value: float) -> None:
        """Steepest descent from the complete mapping ``node`` (objective ``value`` with
        its best orders): each round scores, with the exact order search of the leaves,
        the legal neighbours (:func:`_neighbours`: one prime factor moved between two
        slots, two exchanged, or one operand's bypass flipped) whose bound is below the
        current value, the :data:`_DESCENT_WIDTH` of least bound, and moves to the best if
        it is better; at most :data:`_POLISH_ROUNDS` rounds. Each point better than the
        incumbent is offered (:meth:`_offer`)."""
        for _ in range(_POLISH_ROUNDS):
            nb = self._legal_neighbours(p, node)
            if nb is None or not len(nb):
                return
            lb = self._bound(p, nb, 0)
            sel = np.flatnonzero(lb < value * (1 - _TOL))
            if not len(sel):
                return
            sel = sel[np.argsort(lb[sel], kind="stable")][:_DESCENT_WIDTH]
            cand = nb.take(sel)
            values, orders = self._score(p, cand)
            i = int(np.argmin(values))
            if not values[i] < value * (1 - _TOL):
                return
            node, value = cand.take(slice(i, i + 1)), float(values[i])
            if value < self.incumbent * (1 - _TOL):
                self._offer(self._batch(p, node, orders[i:i + 1]), soft=True)

    def _legal_neighbours(self, p: _Problem, one: MappingBatch | _Nodes) -> _Nodes | None:
        """The legal neighbours (:func:`_neighbours`) of the first mapping of ``one``, as
        complete nodes; ``None`` at the limit."""
        if self._timed_out():
            return None
        fx = np.array([lv.fanout_x for lv in self.arch.levels])
        fy = np.array([lv.fanout_y for lv in self.arch.levels])
        if isinstance(one, MappingBatch):
            T0, sx0, sy0, k0 = one.temporal[0], one.spatial_x[0], one.spatial_y[0], one.keep[0]
        else:
            T0, sx0, sy0, k0 = one.T[0], one.sx[0], one.sy[0], one.keep[0]
        T, sx, sy, K = _neighbours(p, fx, fy, T0, sx0, sy0, k0.astype(bool), np.stack(self.keeps))
        L, D = self.arch.n_levels, len(p.dims)
        cand = MappingBatch(p.dims, T, sx, sy, np.tile(np.arange(D), (len(T), L, 1)), K)
        legal = np.flatnonzero(self._in_space(p, cand) & self._tiles_fit(T, sx, sy, K))
        return _Nodes(sx[legal], sy[legal], T[legal], np.ones((len(legal), D), dtype=np.int64), K[legal],
                      np.zeros(len(legal)))

    def _tiles_fit(self, T: np.ndarray, sx: np.ndarray, sy: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """``(n,)``: the tiles of complete factorizations fit every on-chip level: at level
        ``c`` the product of every factor at and below ``c`` (as :meth:`_children` checks
        them one level at a time)."""
        ext = np.cumprod(T * sx * sy, axis=1)                    # (n, L, D): extents at and below each level
        ok = np.ones(len(T), dtype=bool)
        for c in range(self.arch.n_levels - 1):
            ok &= _fits_level(self.arch.levels[c], keep[:, c, :], _bounding_words(self.layer, ext[:, c, :].astype(float)))
        return ok

    def _early_dive(self, p: _Problem, sx: np.ndarray, sy: np.ndarray, keeps: np.ndarray, ki: np.ndarray,
                    si: np.ndarray) -> None:
        """Where there are many roots (more than :data:`_EARLY_DIVE_ROOTS`), dive before
        they are all bounded in full: the :data:`_EARLY_DIVE_ROOTS` roots of least
        unrefined bound (a pass over every root, chunk by chunk, of the cheap first stage
        of :meth:`_bound`; a root's bound is a function of that root alone, so the
        choice does not depend on the chunks) get their full bound, and
        :meth:`_dive` dives from the best of them. Only the bar changes: the refined
        stages of the roots' own bounding (:meth:`_roots`) then spend their passes on
        the roots below a better incumbent, and every pruning rule is unchanged."""
        if len(ki) <= _EARLY_DIVE_ROOTS:
            return
        L = self.arch.n_levels
        best_lb, best_idx = np.empty(0), np.empty(0, dtype=np.int64)
        pre = []
        for lo in range(0, len(ki), _ROOT_CHUNK):
            idx = np.arange(lo, min(lo + _ROOT_CHUNK, len(ki)))
            lb = self._bound(p, self._root_nodes(p, sx, sy, keeps, ki[idx], si[idx]), L, stages=1)
            pre.append(lb)
            lb, idx = np.concatenate([best_lb, lb]), np.concatenate([best_idx, idx])
            top = np.lexsort((idx, lb))[:_EARLY_DIVE_ROOTS]          # least bound, then first
            best_lb, best_idx = lb[top], idx[top]
            if self._timed_out():
                return
        self._pre = np.concatenate(pre)        # every root's first-stage bound, for _roots
        best_idx = np.sort(best_idx)
        parts = [self._root_nodes(p, sx, sy, keeps, ki[best_idx[lo:lo + _ROOT_CHUNK]], si[best_idx[lo:lo + _ROOT_CHUNK]])
                 for lo in range(0, len(best_idx), _ROOT_CHUNK)]
        lb = np.concatenate([self._bound(p, part, L) for part in parts])
        nodes = _Nodes.concat(parts)
        order = np.argsort(lb, kind="stable")
        self._dive(p, (nodes.take(order), lb[order], L - 1))

    def _root_nodes(self, p: _Problem, sx: np.ndarray, sy: np.ndarray, keeps: np.ndarray, k: np.ndarray,
                    i: np.ndarray) -> _Nodes:
        """The roots ``(keeps[k], sx[i], sy[i])``: every temporal factor still free."""
        L, D = self.arch.n_levels, len(p.dims)
        a, b = sx[i], sy[i]
        remaining = p.sizes[None, :] // (a.prod(axis=1) * b.prod(axis=1))
        return _Nodes(a, b, np.ones((len(i), L, D), dtype=np.int64), remaining, keeps[k], np.zeros(len(i)))

    def _busy_enough(self, sx: np.ndarray, sy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The spatial assignments that may hold a mapping better than the incumbent: a
        cost model with a ``spatial_floor(layer, arch, objective, spatial_product)`` (a
        bound of the objective over every mapping whose spatial factors multiply to that
        product, e.g. :meth:`evaluators.loopnest.LoopNestCost.spatial_floor`: compulsory
        energy x ``MACs / PEs used``) drops each assignment whose floor is at least the
        bar, with all its roots, before any of them is bounded. Every completion of its
        roots has that product, so none beats the incumbent."""
        floor = getattr(self.cost, "spatial_floor", None)
        if floor is None or not len(sx) or not math.isfinite(self.bar):
            return sx, sy
        f = floor(self.layer, self.arch, self.objective, np.prod(sx * sy, axis=(1, 2)))
        if f is None:
            return sx, sy
        ok = np.asarray(f) < self.bar
        if not ok.all():                     # what the dropped assignments' completions are at least
            self.floor_bounds.append(float(np.min(np.asarray(f)[~ok])))
        if ok.any():                         # what every completion of the others is at least
            self._floor_min = float(np.min(np.asarray(f)[ok]))
        return sx[ok], sy[ok]

    def _roots(self, p: _Problem, sx: np.ndarray, sy: np.ndarray, keeps: np.ndarray, ki: np.ndarray,
               si: np.ndarray) -> tuple[_Nodes, np.ndarray]:
        """The roots ``(keeps[ki], sx[si], sy[si])`` whose bound is below the bar, and
        their bounds; sets ``root_bounds``.

        Bounded :data:`_ROOT_CHUNK` at a time, and only those below the bar kept (the rest
        :meth:`_push` would drop): a large array has tens of millions of
        roots (DQN conv1 at batch 32 on 32 x 32 PEs: 24 M, 4.5 M of them below the
        heuristic's EDP), whose node arrays take 4 GB apiece. A root's bound is a
        function of that root alone (the cost model drops a size-1 dimension only where
        no row of its block tiles or unrolls it, and divisor factors never do), so the
        chunks give the bounds, the survivors and their order that one batch would."""
        L = self.arch.n_levels
        pre = self._pre
        parts, bounds, least = [], [], math.inf
        for lo in range(0, len(ki), _ROOT_CHUNK):
            if self._timed_out():             # the roots not bounded: at least their first stage, or the floor
                rest = pre[lo:] if pre is not None else None
                self.open_bounds.append(float(rest.min()) if rest is not None else self._floor_min)
                break
            k, i = ki[lo:lo + _ROOT_CHUNK], si[lo:lo + _ROOT_CHUNK]
            if pre is None:
                nodes = self._root_nodes(p, sx, sy, keeps, k, i)
                lb = self._bound(p, nodes, L)
            else:                             # resume from the early dive's first stage
                first = pre[lo:lo + _ROOT_CHUNK]
                sub = np.flatnonzero(first < self.bar)
                if len(sub) < len(first):
                    least = min(least, float(np.min(np.delete(first, sub))))
                nodes = self._root_nodes(p, sx, sy, keeps, k[sub], i[sub])
                lb = self._bound(p, nodes, L, start=(first[sub], 1))
            if len(lb):
                least = min(least, float(np.min(lb)))
            below = np.flatnonzero(lb < self.bar)
            parts.append(nodes.take(below))
            bounds.append(lb[below])
        self.root_bounds = [least]
        if not parts:
            return _Nodes.empty(L, len(p.dims)), np.empty(0)
        return _Nodes.concat(parts), np.concatenate(bounds)

    def _timed_out(self) -> bool:
        if (self.deadline is not None and time.perf_counter() > self.deadline) or \
                (self.max_nodes is not None and self.nodes >= self.max_nodes):
            self.stopped = True
        return self.stopped

    # ---------------------------------------------------------------- the search
    def _push(self, ns: _Nodes, bounds: np.ndarray, lvl: int) -> None:
        """Put the nodes of ``ns`` (temporal factors decided at levels > ``lvl``) whose
        bound is below the bar on the heap, as one batch sorted by bound."""
        keep = np.flatnonzero(bounds < self.bar)
        if len(keep):
            keep = keep[np.argsort(bounds[keep], kind="stable")]
            kept = ns.take(keep)
            kept.floor = bounds[keep]            # the children's floor (see _bound)
            heapq.heappush(self._heap, (float(bounds[keep[0]]), next(self._counter), lvl, kept, bounds[keep]))

    def _descend(self, p: _Problem) -> None:
        """Best-first search from the nodes on the heap: always expand the open nodes of
        least bound (in batches of up to 64), so every node expanded has a bound below the
        optimum (its ancestors' bounds are no higher than its leaf's, so the optimum is
        found before any node of higher bound is reached); stop when the least open bound
        reaches the best found."""
        heap = self._heap
        counter = self._counter
        while heap:
            if self._timed_out():
                self.open_bounds.extend(float(h[0]) for h in heap)
                return
            key, _, lvl, ns, bounds = heapq.heappop(heap)
            if key >= self.bar:
                return                                   # every open node is no better
            # this batch's nodes up to the next batch's least bound (at least one, at
            # most 64), so nodes are expanded in order of bound across batches
            limit = min(self.bar, heap[0][0] if heap else math.inf)
            n_take = min(max(int(np.searchsorted(bounds, limit, side="right")), 1), 64)
            if len(bounds) > n_take:                     # the rest goes back as views, not copies
                rest = slice(n_take, None)
                heapq.heappush(heap, (float(bounds[n_take]), next(counter), lvl, ns.take(rest), bounds[rest]))
            parents = ns.take(slice(0, n_take))
            children, parent = self._expand(p, parents, lvl)
            self.nodes += len(children)
            if not len(children):
                continue
            if lvl == 1:
                self._leaves(p, children)
            else:
                if lvl == self.arch.n_levels - 1:
                    children = self._screen_top(p, parents, children, parent)
                self._push(children, self._bound(p, children, lvl), lvl - 1)

    # ---------------------------------------------------------------- branching
    def _children(self, p: _Problem, nodes: _Nodes, level: int) -> _Nodes:
        """:meth:`_expand`'s children."""
        return self._expand(p, nodes, level)[0]

    def _expand(self, p: _Problem, nodes: _Nodes, level: int) -> tuple[_Nodes, np.ndarray]:
        """``(children, parent)``: every choice of ``level``'s temporal factors (divisors of what is left, allowed
        slots only) whose tile at ``level - 1`` fits; at level 1 the innermost level
        takes the rest.

        Only that tile is new: the tiles above it depend on factors the parent had
        decided (checked when it was made), and the smallest tiles below it on the
        spatial factors alone (checked at the root). It is the child's whole remainder
        times the spatial factors at and below ``level - 1``, whatever the split below,
        so it is checked before any child is built. ``parent[i]``: the index in
        ``nodes`` of child ``i``'s parent."""
        L, D = self.arch.n_levels, len(p.dims)
        c = level - 1
        lv = self.arch.levels[c] if 0 <= c < L - 1 else None
        check = lv is not None and lv.capacity_words is not None
        if check:
            sp_below = np.prod((nodes.sx * nodes.sy)[:, :c + 1, :], axis=1)        # (n, D)
        lo_t, hi_t = p.rc.lo[0], p.rc.hi[0]
        # a dimension may leave a factor > 1 below only where a slot below may take one
        below = (p.temporal_ok[:level] & (hi_t[:level] > 1)).any(axis=0)
        parts, parents = [], []
        # group nodes by what is left, so each distinct remainder is expanded once
        code = _row_codes(nodes.remaining, p.sizes)
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        groups = np.split(np.argsort(inverse, kind="stable"), np.cumsum(np.bincount(inverse))[:-1])
        for k, members in enumerate(groups):
            rem = nodes.remaining[first[k]]
            choices = [p.rc.allowed(0, level, j, divisors(int(rem[j])) if p.temporal_ok[level, j] else [1])
                       for j in range(D)]
            vec = _vectors(choices)
            left = rem[None, :] // vec
            # what is left must have a temporal slot below (level 1: the innermost level
            # takes the rest, within its constraints)
            ok = ((left == 1) | below[None, :]).all(axis=1)
            if level == 1:
                ok &= ((left >= lo_t[0]) & (left <= hi_t[0])).all(axis=1)
            vec, left = vec[ok], left[ok]
            if not len(vec):
                continue
            if check:
                ext = (left[None, :, :] * sp_below[members][:, None, :]).reshape(-1, D).astype(float)
                kc = np.repeat(nodes.keep[members, c, :], len(vec), axis=0)
                fit = _fits_level(lv, kc, _bounding_words(self.layer, ext))
                a_i, b_i = np.divmod(np.flatnonzero(fit), len(vec))
                a = members[a_i]
            else:
                a = np.repeat(members, len(vec))
                b_i = np.tile(np.arange(len(vec)), len(members))
            if not len(a):
                continue
            T = nodes.T[a]
            T[:, level, :] = vec[b_i]
            if level == 1:
                T[:, 0, :] = left[b_i]
                rem_new = np.ones_like(left[b_i])
            else:
                rem_new = left[b_i]
            parts.append(_Nodes(nodes.sx[a], nodes.sy[a], T, rem_new, nodes.keep[a], nodes.floor[a]))
            parents.append(a)
        if not parts:
            return _Nodes.empty(L, D), np.zeros(0, dtype=np.int64)
        return _Nodes.concat(parts), np.concatenate(parents)

    def _screen_top(self, p: _Problem, parents: _Nodes, children: _Nodes, parent: np.ndarray) -> _Nodes:
        """The children of roots (the top level's factors decided) that the cost model's
        ``top_level_bound`` (:func:`evaluators.loopnest.bounds_top.top_level_bound`: the
        parent's counts with the top level's fills of the new tile, from a table) leaves
        below the bar; the rest hold no better mapping. Where the cost model has no such
        bound, or it does not apply, every child. It changes no bound the search uses,
        only which children get one: a child it drops would have been dropped by its own
        bound, which is at least the screen's."""
        screen = getattr(self.cost, "top_level_bound", None)
        if screen is None or not len(children) or not math.isfinite(self.bar):
            return children
        if self._top_table is None:
            self._top_table = self.cost.top_fill_table(self.layer, self.arch, np.stack(canonical_orders(p.structure)))
        if self._top_table is False:
            return children
        value = screen(self.layer, self.arch, self._placed_batch(p, parents), self._placed_batch(p, children), parent,
                       self._top_table, self.objective)
        self.evaluated += len(parents)
        keep = np.flatnonzero(value < self.bar)
        self.screened += len(children) - len(keep)
        return children.take(keep)

    # ---------------------------------------------------------------- capacity
    def _min_tiles_fit(self, sp: np.ndarray, keeps: np.ndarray) -> np.ndarray:
        """``(k, n)``: :meth:`_min_tiles_fit_rows` of every spatial assignment ``sp[n]``
        under every bypass choice ``keeps[k]``."""
        return np.stack([self._min_tiles_fit_rows(sp, np.repeat(kc[None], len(sp), axis=0)) for kc in keeps]) \
            if len(keeps) else np.ones((0, len(sp)), dtype=bool)

    def _min_tiles_fit_rows(self, sp: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """``(n,)``: with bypass choice ``keep[n]`` (``(n, L, 3)``), the smallest tiles the
        on-chip levels can get under spatial factors ``sp[n]`` (``(n, L, D)``; those
        factors alone, every temporal factor 1) fit. A root failing it has no legal
        completion; its descendants keep its spatial factors, so none of theirs needs the
        check."""
        ok = np.ones(len(sp), dtype=bool)
        for li in range(self.arch.n_levels - 1):
            words = _bounding_words(self.layer, np.prod(sp[:, :li + 1, :], axis=1))    # (n, 3)
            ok &= _fits_level(self.arch.levels[li], keep[:, li, :], words)
        return ok

    # ---------------------------------------------------------------- bounds
    def _bound(self, p: _Problem, nodes: _Nodes, known: int, stages: int = _REFINED_LEVELS,
               start: tuple[np.ndarray, int] | None = None) -> np.ndarray:
        """The bound of each node (temporal factors decided at levels >= ``known``): the
        minimum over the canonical orders of the decided levels and, for the on-chip
        levels ``c`` below the last known tile (``c < known - 1``, every level between
        ``c`` and that tile undecided), over which operand the innermost loop above ``c``
        leaves stationary (at most :data:`_REFINED_LEVELS` of them, the highest; each
        completion has one such operand, or none, per level, so the least over every
        combination bounds it); never below the node's parent's bound (:attr:`_Nodes.floor`:
        the parent's bound bounds every completion of the parent, a fortiori of the child).

        Staged: first without the stationary refinement (lower still: a node it prunes is
        pruned soundly), then, for the nodes left below the bar, refining the highest
        level alone, then the two highest, and so on (each stage's bound is at most the
        full one: an unrefined level is a relaxation). ``stages``: at most this many
        (0: the unrefined bound alone, lower still). ``start``: ``(bounds, stage)``, the
        nodes' bounds after that many stages (an earlier call's, :meth:`_early_dive`'s);
        the refinement resumes after it (a node's stages depend on that node alone, and
        on the bar only through which nodes are refined: the earlier call's bar was no
        lower, so it refined every node this call would have, and a refined bound is
        still a bound)."""
        L = self.arch.n_levels
        levels = list(range(max(known, 1), L))
        classes = np.stack(canonical_orders(p.structure))
        if not levels:                       # nothing temporal decided: the top level, one class
            levels, classes = [L - 1], classes[:1]
        # the decided levels' orders are the classes' (least_lower_bound sets them)
        batch = self._placed_batch(p, nodes)
        b = known - 1
        refined = [c for c in range(b - 1, -1, -1) if c < L - 1][:_REFINED_LEVELS][::-1]   # lowest first
        refined = refined[:stages]              # the levels this call refines (lowest first)
        if refined and self._tile_list() is None:
            refined = []                        # too many tile shapes to list: no refinement

        def bound(rows: np.ndarray, stationary: Any, tiles: np.ndarray | None) -> np.ndarray:
            sub = batch if len(rows) == len(batch) else batch.take(rows)
            # the least over the classes of the decided levels, in one pass of the model
            value, _ = self.cost.least_lower_bound(self.layer, self.arch, sub, known, levels, classes,
                                                   self.objective, stationary=stationary, irrelevant_tile=tiles)
            self.evaluated += len(rows) * len(classes) ** len(levels)    # at most: repeats are skipped
            return value

        if start is None:
            best, done = np.maximum(bound(np.arange(len(nodes)), None, None), nodes.floor), 0
        else:
            best, done = np.maximum(start[0], nodes.floor), start[1]
        # each refined level's cases, computed when its stage first comes and only for the
        # nodes still below the bar then (the later stages refine a subset of those)
        options: dict[int, tuple[np.ndarray, list[tuple[int, np.ndarray]]]] = {}
        for k in range(done + 1, len(refined) + 1):
            rows = np.flatnonzero(best < self.bar)
            if not len(rows):
                break
            for c in refined[:k]:
                if c not in options:
                    at = np.full(len(nodes), -1, dtype=np.int64)
                    at[rows] = np.arange(len(rows))
                    options[c] = (at, self._reuse_options(nodes.take(rows), c))
            least = np.full(len(rows), np.inf)
            for combo in itertools.product(*(range(len(options[c][1])) for c in refined[:k])):
                codes = [-1] * L
                part = np.full((len(rows), L, len(OPERANDS)), -1.0)     # levels not refined at this stage: -1
                for c, i in zip(refined[:k], combo):
                    at, opts = options[c]
                    codes[c], tab = opts[i]
                    part[:, c] = tab[at[rows]]
                least = np.minimum(least, bound(rows, codes, part))
            best[rows] = np.maximum(best[rows], least)
        return best

    def _tile_list(self) -> np.ndarray | None:
        """Every tile shape of the layer (:func:`tile_shapes`, computed once per search), or
        ``None`` when there are too many to list."""
        if "tiles" not in self._tile_tables:
            self._tile_tables["tiles"] = tile_shapes(self.layer)
        return self._tile_tables["tiles"]

    def _reuse_options(self, nodes: _Nodes, c: int) -> list[tuple[int, np.ndarray]] | None:
        """The refinement's cases at level ``c`` for ``nodes``: ``(stationary operand,
        (n, 3) reuse table)`` pairs, from :func:`restricted_fronts` of each node's kept
        operands there, spatial factors at and below ``c`` and remaining factors (at most
        :data:`_FRONT_POINTS` per stationary operand). Every completion of a node has at
        most one stationary operand at ``c`` and a tile there that fits and is one of
        those the front covers, whose reuse one of the pairs with that operand dominates;
        so the least bound over the pairs bounds it. Where more than
        :data:`_RESTRICTED_TILES` tiles fit the level, the fronts over every tile that
        fits (a superset: a bound still). Each front is computed
        once per search (by kept operands and set of allowed tiles); ``None`` when there
        are too many tile shapes to list."""
        tiles = self._tile_list()
        if tiles is None:
            return None
        code = nodes.keep[:, c, :].astype(np.int64) @ np.array([1, 2, 4])
        sp = np.prod((nodes.sx * nodes.sy)[:, :c + 1, :], axis=1)
        per = np.empty((len(nodes), 3, _FRONT_POINTS, 3))
        for u in np.unique(code):
            rows = np.flatnonzero(code == u)
            key = f"fit:{c}:{u}"
            if key not in self._tile_tables:
                keep_row = np.array([(int(u) >> j) & 1 for j in range(3)], dtype=bool)
                self._tile_tables[key] = (*_fitting_tiles(self.layer, self.arch, c, keep_row, tiles), {})
            e, reuse, cache = self._tile_tables[key]
            every = len(e) > _RESTRICTED_TILES       # every node: the fronts over every fitting tile
            D = sp.shape[1]
            if every:
                sub, which = np.zeros((1, 2 * D), dtype=np.int64), np.zeros(len(rows), dtype=np.int64)
            else:                                    # one per distinct (spatial, remaining) pair of vectors
                sub, which = np.unique(np.concatenate([sp[rows], nodes.remaining[rows]], axis=1), axis=0,
                                       return_inverse=True)
                which = which.ravel()
            got = [cache.get(k.tobytes()) for k in sub]
            missing = np.array([i for i, g in enumerate(got) if g is None], dtype=np.int64)
            if len(missing):
                allowed = (np.ones((len(missing), len(e)), dtype=bool) if every
                           else _allowed_tiles(e, sub[missing, :D], sub[missing, D:]))
                masks, of = _distinct_masks(allowed)
                ok = np.unpackbits(masks, axis=1, count=len(e)).astype(bool)
                fr = _masked_fronts(reuse, ok, _FRONT_POINTS)
                for i, j in zip(missing, of):
                    cache[sub[i].tobytes()] = got[i] = fr[j]
            per[rows] = np.stack(got)[which]
        return [(s, per[:, s, i, :]) for s in range(len(OPERANDS)) for i in range(_FRONT_POINTS)]

    # ---------------------------------------------------------------- leaves
    def _leaves(self, p: _Problem, leaves: _Nodes) -> None:
        """Exact best orders of complete factorizations whose bound is below the best."""
        lb = self._bound(p, leaves, 0)
        self.leaves += len(leaves)
        sel = np.flatnonzero(lb < self.bar)
        sel = sel[np.argsort(lb[sel], kind="stable")]
        L = self.arch.n_levels

        def batch_of(rows: np.ndarray, orders: np.ndarray | None = None) -> MappingBatch:
            sub = leaves.take(rows)
            if orders is None:
                orders = np.tile(np.arange(len(p.dims)), (len(sub), L, 1))
            return MappingBatch(p.dims, sub.T, sub.sx, sub.sy, orders, sub.keep)

        if p.structure.sliding and len(sel):
            # the canonical orders' best (exact for every operand but a sliding one) is a
            # mapping too: it often sets a bar that spares the search over every order
            canon = canonical_orders(p.structure)
            levels = list(range(1, L))
            if levels:
                b = batch_of(sel)
                values, choice, scored = separable_best(lambda m, rows: self.cost(self.layer, self.arch, m), b,
                                                        levels, [canon] * len(levels), self.objective, self.chunk)
                self.evaluated += scored
                i = int(np.argmin(values))
                orders = b.order[i:i + 1].copy()
                for k, li in enumerate(levels):
                    orders[0, li] = canon[choice[i, k]]
                self._offer(batch_of(sel[i:i + 1], orders))
                sel = sel[lb[sel] < self.bar]
        step = len(sel) if not p.structure.sliding else 256
        for lo in range(0, len(sel), max(step, 1)):
            if self._timed_out():
                self.open_bounds.extend(lb[sel[lo:]].tolist())
                return
            part = sel[lo:lo + step]
            part = part[lb[part] < self.bar]
            if not len(part):
                continue
            batch = batch_of(part)
            values, orders, scored = self._leaf_orders(p, batch)
            self.evaluated += scored
            i = int(np.argmin(values))
            if values[i] < self.incumbent * (1 - _TOL):
                self._offer(batch_of(part[i:i + 1], orders[i:i + 1]))

    def _leaf_orders(self, p: _Problem, batch: MappingBatch) -> tuple[np.ndarray, np.ndarray, int]:
        """The exact best orders of complete factorizations: :func:`mappers.orders.best_orders`
        where the cost is order-separable and no level moves whole vectors, else
        :func:`mappers.orders.coupled_best_orders` (exact by the argument in its docstring)."""
        coupling = None if self.cost.separable_orders else self.cost.order_coupling
        if coupling is None and not vector_levels(self.arch):
            return best_orders(self.layer, self.arch, self.cost, batch, self.objective, structure=p.structure,
                               chunk=self.chunk)
        return coupled_best_orders(self.layer, self.arch, self.cost, batch, self.objective, coupling=coupling,
                                   chunk=self.chunk)

    def _offer(self, one: MappingBatch, soft: bool = False) -> None:
        """Make the one-mapping batch ``one`` the incumbent if it is legal and better
        (``soft``: as the local search's are, see :meth:`_improve`)."""
        r = self.cost(self.layer, self.arch, one)
        v = float(objective_of(self.objective, r.energy_pj, r.compute_cycles, r.bandwidth_cycles)[0])
        if bool(np.asarray(r.valid)[0]) and v * (1 + _WARM_SLACK if soft else 1) < self.incumbent:
            self._improve(one, v, soft)

    def _improve(self, one: MappingBatch, value: float, soft: bool = False) -> None:
        """A new incumbent, with the CPU time it was found at (the anytime trace). A
        ``soft`` one (the warm start's and the local search's: found outside the tree)
        sets the bar at its objective times ``1 + _WARM_SLACK``, so the mapping the tree
        search itself reaches at that objective replaces it and a search that completes
        returns what it would return without them (the module docstring, warm start);
        :meth:`settle_warm_start` gives it back its true objective if it is kept."""
        self.best = (one, value * (1 + _WARM_SLACK) if soft else value)
        self._soft = (one, value) if soft else None
        self.incumbents.append((time.process_time() - self._cpu0, value))

    # ---------------------------------------------------------------- warm start
    def warm_start(self, p: _Problem) -> None:
        """Offer the best legal mapping of :attr:`warm` as the incumbent, its objective
        raised by :data:`_WARM_SLACK` for the bar (see the module docstring); sets
        :attr:`warm_info` (candidates offered, legal, and whether one became the
        incumbent)."""
        if not self.warm:
            return
        L = self.arch.n_levels
        self.warm_info = {"warm_offered": sum(1 if isinstance(c, Mapping) else len(c) for c in self.warm),
                          "warm_legal": 0, "warm_used": False}
        rows = [MappingBatch.from_mappings(self.layer, self.arch, [c]) if isinstance(c, Mapping) else c
                for c in self.warm if c.n_levels == L]
        rows = [b for b in rows if b.dims == p.dims and len(b)]
        if not rows:
            return
        cand = MappingBatch(p.dims, *(np.concatenate([getattr(b, f) for b in rows]).astype(
            bool if f == "keep" else np.int64) for f in ("temporal", "spatial_x", "spatial_y", "order", "keep")))
        cand = cand.take(np.flatnonzero(self._in_space(p, cand)))
        if not len(cand):
            return
        r = self.cost(self.layer, self.arch, cand)
        v = np.asarray(objective_of(self.objective, r.energy_pj, r.compute_cycles, r.bandwidth_cycles), dtype=float)
        v = np.where(np.asarray(r.valid, dtype=bool), v, np.inf)
        self.evaluated += len(cand)
        self.warm_info["warm_legal"] = int(np.isfinite(v).sum())
        i = int(np.argmin(v))
        if math.isfinite(v[i]) and v[i] * (1 + _WARM_SLACK) < self.incumbent:
            one = cand.take(np.array([i]))
            self._improve(one, float(v[i]), soft=True)
            self._warm_best = one

    def _in_space(self, p: _Problem, b: MappingBatch) -> np.ndarray:
        """``(n,)``: the mappings of ``b`` this search's space holds, capacity aside: an exact
        factorization, factors > 1 only in allowed slots, within the fanouts, loop orders
        that are permutations, a bypass choice among :attr:`keeps`, within the constraints."""
        T, sx, sy = b.temporal, b.spatial_x, b.spatial_y
        ok = (T >= 1).all(axis=(1, 2)) & (sx >= 1).all(axis=(1, 2)) & (sy >= 1).all(axis=(1, 2))
        ok &= (np.prod(T * sx * sy, axis=1) == p.sizes[None, :]).all(axis=1)
        for f, slot in ((T, p.temporal_ok), (sx, p.spatial_x_ok), (sy, p.spatial_y_ok)):
            ok &= ((f == 1) | slot[None]).all(axis=(1, 2))
        fx = np.array([lv.fanout_x for lv in self.arch.levels])
        fy = np.array([lv.fanout_y for lv in self.arch.levels])
        ok &= (np.prod(sx, axis=2) <= fx[None]).all(axis=1) & (np.prod(sy, axis=2) <= fy[None]).all(axis=1)
        ok &= (np.sort(b.order, axis=2) == np.arange(len(p.dims))[None, None, :]).all(axis=(1, 2))
        if not self.keeps:
            return np.zeros(len(b), dtype=bool)
        keeps = np.stack(self.keeps)                                             # (k, L, 3)
        ok &= (b.keep[:, None] == keeps[None]).all(axis=(2, 3)).any(axis=1)
        return ok & self.rc.factors_ok(T, sx, sy) & self.rc.keep_ok(b.keep)

    def settle_warm_start(self) -> None:
        """After :meth:`run`: a soft incumbent (a warm-start candidate or the local
        search's) that is still the incumbent (only a search stopped by a limit keeps
        one) gets back its true objective, so the reported bound and gap are against it."""
        if self._soft is not None and self.best is not None and self.best[0] is self._soft[0]:
            self.best = self._soft
            if self.best[0] is self._warm_best:
                self.warm_info["warm_used"] = True


@dataclass
class _Nodes:
    """A batch of partial mappings: spatial factors, temporal factors (decided levels;
    the rest as 1) and what is left of each dimension."""

    sx: np.ndarray          # (n, L, D)
    sy: np.ndarray
    T: np.ndarray
    remaining: np.ndarray   # (n, D)
    keep: np.ndarray        # (n, L, 3) the bypass choice
    floor: np.ndarray       # (n,) the parent's bound (a bound of every completion of the node)

    def __len__(self) -> int:
        return len(self.T)

    def take(self, idx: np.ndarray | slice) -> _Nodes:
        return _Nodes(self.sx[idx], self.sy[idx], self.T[idx], self.remaining[idx], self.keep[idx], self.floor[idx])

    @classmethod
    def empty(cls, L: int, D: int) -> _Nodes:
        z = np.ones((0, L, D), dtype=np.int64)
        return cls(z, z, z, np.ones((0, D), dtype=np.int64), np.ones((0, L, 3), dtype=bool), np.zeros(0))

    @classmethod
    def concat(cls, parts: list[_Nodes]) -> _Nodes:
        fs = ("sx", "sy", "T", "remaining", "keep", "floor")
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in fs))

    def extents(self, sizes: np.ndarray) -> np.ndarray:
        """``(n, L, D)`` tile extents from the top: the size over the factors above each
        level (exact for the levels whose factors above are all decided)."""
        f = self.T * self.sx * self.sy
        above = np.cumprod(f[:, ::-1, :], axis=1)[:, ::-1, :]          # product at levels >= l
        above = np.concatenate([above[:, 1:, :], np.ones_like(above[:, :1, :])], axis=1)
        return sizes[None, None, :] // above

    def placed(self, p: _Problem) -> np.ndarray:
        """Temporal factors with what is left put as low as it may go (for bounds)."""
        T = self.T.copy()
        rem = self.remaining.copy()
        for li in range(T.shape[1]):
            put = np.where(p.temporal_ok[li][None, :], rem, 1)
            T[:, li, :] *= put
            rem = rem // put
        return T

