"""The exact mapper: the mapping that minimizes the objective under the cost model, proven.

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

1. *Bypass* (which on-chip levels keep which operands): every choice the architecture
   allows is a separate root; each is searched in turn.
2. *Spatial factors* of every fanout level (every divisor assignment within the fanouts
   and the dataflow's rules): they fix the instances, the multicast groups and the
   iterations, hence the compute cycles.
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
  matched by a class whose bound is no higher. (This needs each loop dimension to be
  irrelevant to at most one operand -- true of convolutions, GEMM and batched matmul;
  otherwise the mapper refuses with an error.) A node whose bound is at least the best
  objective found so far (times ``1 + 1e-9``, for float rounding) is pruned: it holds no
  better mapping. The first incumbent is the heuristic mapper's.
* *Loop orders at a leaf*: the cost model is order-separable
  (:attr:`~mappers.base.BoundedCost.separable_orders`): energy and every level's bandwidth
  cycles are a constant plus one term per level depending on that level's order alone.
  For each level the mapper scores every order of its loops with a factor > 1 (the order
  of loops of extent 1, and of the innermost level, changes no count), each with the
  other levels at a reference order; subtracting the reference gives every order's term.
  A level's terms that another of its terms beats in energy and in every bandwidth are
  dropped (monotonicity); the survivors of all levels are combined and the best
  combination is exact.

The result carries the size of the space (mappings over all factorizations, orders and
bypass choices, counted from the factorizations without enumerating them), the lower bound
of the root (the best objective no mapping beats, before any branching), the number of
mappings the cost model scored and the wall time. With ``time_limit_s`` the search stops
when the time is up and returns the best mapping so far with ``stopped_early`` and, as
``lower_bound``, the smallest bound of the nodes not yet explored (the optimum lies
between it and the result).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from mappers.base import (
    BoundedCost,
    CostFunction,
    MappingResult,
    NoLegalMapping,
    check_objective,
    result_of,
)
from mappers.heuristic import HeuristicMapper
from mappers.mapping import MappingBatch
from mappers.mapping_space import MappingSpaceInfo, allowed_slots, divisors, keep_array
from mappers.workloads import Layer

__all__ = ["ExactMapper", "objective_of"]

_TOL = 1e-9


def objective_of(objective: str, energy: Any, compute: Any, bandwidth: Any) -> np.ndarray:
    """The objective from energy (pJ), compute cycles and bandwidth cycles per level
    (``(..., L)``): latency is the maximum of the compute and bandwidth cycles."""
    latency = np.maximum(np.asarray(compute, dtype=float), np.max(np.asarray(bandwidth, dtype=float), axis=-1))
    energy = np.asarray(energy, dtype=float)
    return {"energy": energy, "latency": latency, "edp": energy * latency}[objective]


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
    keep: np.ndarray                   # (L, 3)
    irrelevant_to: np.ndarray          # (D,) operand index a dimension is irrelevant to, -1 none
    ns_dims: np.ndarray                # (D,) bool: a dimension on a one-dimension axis of I
    sliding: bool                      # some operand has an axis over two live dimensions


def _problem(layer: Layer, arch: ArchSpec, keep: np.ndarray, bypass: bool) -> _Problem:
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
    irr = np.full(D, -1)
    for j, d in enumerate(dims):
        if layer.dims[d] == 1:
            continue
        off = [k for k, op in enumerate(OPERANDS) if d not in layer.relevant(op)]
        if len(off) > 1:
            raise ValueError(f"ExactMapper: dimension {d!r} of {layer.name!r} is irrelevant to "
                             f"{len(off)} operands; the order-class bound needs at most one")
        if off:
            irr[j] = off[0]
    # the input's one-dimension axes, counting only dimensions of size > 1 (the cost
    # model drops the others, so an axis q + s with S = 1 is one-dimensional)
    ns = np.zeros(D, dtype=bool)
    for axis in layer.tensor("I").axes:
        live = [d for d, _ in axis if layer.dims[d] > 1]
        if len(live) == 1:
            ns[dims.index(live[0])] = True
    sliding = any(sum(layer.dims[d] > 1 for d, _ in axis) > 1
                  for op in OPERANDS for axis in layer.tensor(op).axes)
    return _Problem(layer, arch, info, dims, np.array([layer.dims[d] for d in dims], dtype=np.int64),
                    slots, t_ok, x_ok, y_ok, keep, irr, ns, sliding)


def _keep_choices(layer: Layer, arch: ArchSpec, bypass: bool) -> list[np.ndarray]:
    info = MappingSpaceInfo(layer, arch, "divisors", bypass)
    base = keep_array(info)[0]
    if not bypass or info.dataflow is not None:
        return [base]
    opts = [(li, t) for li in range(arch.n_levels - 1) for t, op in enumerate(OPERANDS)
            if op in arch.levels[li].tensors]
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
    """Every spatial assignment: ``(n, L, D)`` X and Y factors within the fanouts and the
    dataflow's rules, each dimension's total dividing its size."""
    D = len(p.dims)
    per_level = []
    for li, lv in enumerate(p.arch.levels):
        for fan, ok in ((lv.fanout_x, p.spatial_x_ok[li]), (lv.fanout_y, p.spatial_y_ok[li])):
            choices = [divisors(int(p.sizes[j])) if ok[j] and fan > 1 else [1] for j in range(D)]
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


def _space_size(p: _Problem) -> int:
    """Factorizations of every dimension over its allowed slots (fanouts and capacities
    not yet applied, loop orders not counted): the tilings this bypass choice spans."""
    from mappers.exhaustive import factorizations

    return math.prod(len(factorizations(int(p.sizes[j]), len(p.slots[d])))
                     for j, d in enumerate(p.dims) if d in p.slots)


# ------------------------------------------------------------------------ the mapper
@dataclass(frozen=True)
class ExactMapper:
    """The provably best mapping under a bounded cost model (see the module docstring).

    Args:
        bypass: also search which on-chip levels keep which operands.
        time_limit_s: stop after this many seconds with the best mapping so far, its
            bound and ``stopped_early`` (``None``: run to the end).
    """

    bypass: bool = True
    time_limit_s: float | None = None
    _chunk: int = field(default=200_000, repr=False)

    def __post_init__(self) -> None:
        if self.time_limit_s is not None and not (self.time_limit_s > 0):
            raise ValueError(f"ExactMapper.time_limit_s must be > 0 or None, got {self.time_limit_s!r}")

    def map(self, layer: Layer, arch: ArchSpec, cost: CostFunction, objective: str = "edp", *,
            seed: int = 0) -> MappingResult:
        check_objective(objective)
        if not isinstance(cost, BoundedCost):
            raise ValueError("ExactMapper needs a cost model that bounds partial mappings "
                             "(mappers.base.BoundedCost, e.g. evaluators.loopnest.LOOPNEST); "
                             f"got {cost!r}")
        if not cost.separable_orders:
            raise ValueError(f"ExactMapper needs a cost model with order-separable counts; {cost!r} is not")
        t0 = time.perf_counter()
        deadline = None if self.time_limit_s is None else t0 + self.time_limit_s
        search = _Search(layer, arch, cost, objective, self.bypass, deadline, self._chunk)
        search.run()
        if search.best is None:
            raise NoLegalMapping(f"no legal mapping of {layer.name!r} on {arch.name!r}")
        batch, _ = search.best
        return result_of(layer, arch, cost, batch, 0, evaluated=search.evaluated,
                         seconds=time.perf_counter() - t0, space_size=search.space_size,
                         lower_bound=search.lower_bound, optimal=not search.stopped,
                         stopped_early=search.stopped,
                         info={"nodes": search.nodes, "leaves": search.leaves,
                               "keep_choices": search.n_keep})


class _Search:
    """One exact search (see the module docstring); ``run`` fills ``best``."""

    def __init__(self, layer: Layer, arch: ArchSpec, cost: Any, objective: str, bypass: bool,
                 deadline: float | None, chunk: int) -> None:
        self.layer, self.arch, self.cost, self.objective = layer, arch, cost, objective
        self.bypass, self.deadline, self.chunk = bypass, deadline, chunk
        self.best: tuple[MappingBatch, float] | None = None
        self.evaluated = 0
        self.nodes = 0
        self.leaves = 0
        self.stopped = False
        self.open_bounds: list[float] = []
        self.root_bounds: list[float] = []
        self.keeps = _keep_choices(layer, arch, bypass)
        self.n_keep = len(self.keeps)
        self.space_size = 0

    # ---------------------------------------------------------------- driver
    @property
    def incumbent(self) -> float:
        return self.best[1] if self.best is not None else math.inf

    @property
    def lower_bound(self) -> float:
        if self.stopped:
            return min([self.incumbent, *self.open_bounds])
        return min(self.root_bounds) if self.root_bounds else self.incumbent

    def run(self) -> None:
        try:
            h = HeuristicMapper().map(self.layer, self.arch, self.cost, self.objective)
            self.best = (h.batch, h.objective(self.objective))
            self.evaluated += h.evaluated
        except NoLegalMapping:
            pass
        roots = []
        sx = sy = None
        for keep in self.keeps:
            p = _problem(self.layer, self.arch, keep, self.bypass)
            self.space_size += _space_size(p)
            if sx is None:
                sx, sy = _spatial_assignments(p)
            root = self._roots(p, sx, sy)
            if root is not None:
                roots.append((float(np.min(root[1])), p, *root))
        # the most promising bypass choice first: its mappings set the bar for the others
        roots.sort(key=lambda r: r[0])
        self.root_bounds = [r[0] for r in roots]
        for k, (lb_min, p, nodes, lb) in enumerate(roots):
            if self._timed_out():
                self.open_bounds.extend(r[0] for r in roots[k:])
                return
            if lb_min < self.incumbent * (1 - _TOL):
                self._descend(p, nodes, lb, self.arch.n_levels - 1)

    def _timed_out(self) -> bool:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.stopped = True
        return self.stopped

    # ---------------------------------------------------------------- one bypass choice
    def _roots(self, p: _Problem, sx: np.ndarray, sy: np.ndarray) -> tuple[_Nodes, np.ndarray] | None:
        """The root nodes of one bypass choice (spatial factors fixed, every temporal
        factor free) whose smallest tiles fit, with their bounds."""
        if not len(sx):
            return None
        L, D = self.arch.n_levels, len(p.dims)
        T = np.ones((len(sx), L, D), dtype=np.int64)
        remaining = p.sizes[None, :] // (sx.prod(axis=1) * sy.prod(axis=1))
        nodes = _Nodes(sx, sy, T, remaining)
        nodes = nodes.take(np.flatnonzero(self._min_tiles_fit(p, nodes, L)))
        if not len(nodes):
            return None
        return nodes, self._bound(p, nodes, L)

    def _descend(self, p: _Problem, nodes: _Nodes, lb: np.ndarray, level: int) -> None:
        """Explore ``nodes`` (temporal factors decided at levels > ``level``) best bound
        first, deciding ``level``'s factors."""
        order = np.argsort(lb, kind="stable")
        for lo in range(0, len(order), 64):
            if self._timed_out():
                self.open_bounds.extend(lb[order[lo:]].tolist())
                return
            idx = order[lo:lo + 64]
            keep_idx = idx[lb[idx] < self.incumbent * (1 - _TOL)]
            if not len(keep_idx):
                return                                  # sorted: the rest are no better
            group = nodes.take(keep_idx)
            children = self._children(p, group, level)
            self.nodes += len(children)
            if not len(children):
                continue
            if level == 1:
                self._leaves(p, children)
            else:
                clb = self._bound(p, children, level)
                sel = clb < self.incumbent * (1 - _TOL)
                if sel.any():
                    self._descend(p, children.take(np.flatnonzero(sel)), clb[sel], level - 1)

    # ---------------------------------------------------------------- branching
    def _children(self, p: _Problem, nodes: _Nodes, level: int) -> _Nodes:
        """Every choice of ``level``'s temporal factors (divisors of what is left, allowed
        slots only); at level 1 the innermost level takes the rest."""
        L, D = self.arch.n_levels, len(p.dims)
        parts = []
        # group nodes by what is left, so each distinct remainder is expanded once
        keys, inverse = np.unique(nodes.remaining, axis=0, return_inverse=True)
        for k, rem in enumerate(keys):
            members = np.flatnonzero(inverse.ravel() == k)
            choices = [divisors(int(rem[j])) if p.temporal_ok[level, j] else [1] for j in range(D)]
            vec = _vectors(choices)
            left = rem[None, :] // vec
            # what is left must have a temporal slot below (level 1: the innermost level
            # takes the rest)
            below = p.temporal_ok[:level].any(axis=0)
            ok = ((left == 1) | below[None, :]).all(axis=1)
            vec, left = vec[ok], left[ok]
            if not len(vec):
                continue
            a = np.repeat(members, len(vec))
            b = np.tile(np.arange(len(vec)), len(members))
            T = nodes.T[a].copy()
            T[:, level, :] = vec[b]
            if level == 1:
                T[:, 0, :] = left[b]
                rem_new = np.ones_like(left[b])
            else:
                rem_new = left[b]
            parts.append(_Nodes(nodes.sx[a], nodes.sy[a], T, rem_new))
        if not parts:
            return _Nodes.empty(L, D)
        out = _Nodes.concat(parts)
        ok = self._tiles_fit(p, out, level - 1) & self._min_tiles_fit(p, out, level - 1)
        return out.take(np.flatnonzero(ok))

    # ---------------------------------------------------------------- capacity
    def _tile_words(self, p: _Problem, extents: np.ndarray) -> np.ndarray:
        """``(n, 3)`` bounding-box words of each operand for tile extents ``(n, D)``."""
        out = np.ones((len(extents), 3))
        for k, op in enumerate(OPERANDS):
            for axis in self.layer.tensor(op).axes:
                out[:, k] *= 1 + sum(c * (extents[:, p.dims.index(d)] - 1) for d, c in axis)
        return out

    def _fits(self, p: _Problem, level: int, words: np.ndarray) -> np.ndarray:
        lv = self.arch.levels[level]
        held = np.where(p.keep[level][None, :], words, 0.0)
        if lv.capacity_words is None:
            return np.ones(len(words), dtype=bool)
        if lv.shared:
            return held.sum(axis=1) <= lv.capacity_of("W")
        cap = np.array([lv.capacity_of(op) for op in OPERANDS])
        return (held <= cap[None, :]).all(axis=1)

    def _tiles_fit(self, p: _Problem, nodes: _Nodes, upto: int) -> np.ndarray:
        """The tiles of levels ``>= upto`` (known) fit."""
        ok = np.ones(len(nodes), dtype=bool)
        ext = nodes.extents(p.sizes)                      # (n, L, D) tile extents
        for li in range(max(upto, 0), self.arch.n_levels - 1):
            ok &= self._fits(p, li, self._tile_words(p, ext[:, li, :]))
        return ok

    def _min_tiles_fit(self, p: _Problem, nodes: _Nodes, upto: int) -> np.ndarray:
        """The smallest tiles the levels below ``upto`` can still get (their spatial
        factors alone, with decided temporal factors) fit."""
        ok = np.ones(len(nodes), dtype=bool)
        sp = nodes.sx * nodes.sy
        for li in range(0, min(upto, self.arch.n_levels - 1)):
            ext = np.prod(sp[:, :li + 1, :], axis=1)
            ok &= self._fits(p, li, self._tile_words(p, ext))
        return ok

    # ---------------------------------------------------------------- bounds
    def _canonical_orders(self, p: _Problem) -> list[np.ndarray]:
        """The canonical loop orders of a level (permutations of all dimensions; see the
        module docstring): for each operand ``t``, ``[E, C, A, B]`` and, where both ``A``
        and ``C`` can be non-empty, ``[A, E, C, B]``, with ``A`` / ``B`` the dimensions
        irrelevant to ``t`` on / off the sliding operand's one-dimension axes and ``C`` /
        ``E`` the relevant ones off / on them; and, when the input slides, ``[ns, rest]``."""
        D = len(p.dims)
        live = p.sizes > 1
        ns = p.ns_dims
        out: list[np.ndarray] = []

        def add(groups: list[np.ndarray]) -> None:
            key = np.zeros(D, dtype=np.int64)
            for g, mask in enumerate(groups):
                key[mask] = g
            o = np.argsort(key, kind="stable")
            if not any(np.array_equal(o, x) for x in out):
                out.append(o)

        for t in range(3):
            irr = p.irrelevant_to == t
            A, B = irr & ns, irr & ~ns
            C, E = ~irr & ~ns, ~irr & ns
            add([E, C, A, B])
            if p.sliding and (A & live).any() and (C & live).any():
                add([A, E, C, B])
        if p.sliding:
            add([ns, ~ns])
        return out

    def _separable(self, p: _Problem, nodes: _Nodes, T: np.ndarray, levels: list[int],
                   options: list[list[np.ndarray]], score: Any) -> tuple[np.ndarray, np.ndarray]:
        """The best objective over every combination of one order per level (one of
        ``options[k]`` for ``levels[k]``) for each node, using that ``score`` (the cost
        or its bound) is separable over levels: one evaluation per level and option,
        the others at the first option. Returns the best value and, per level, the index
        of the chosen option (``(n, len(levels))``)."""
        n, L, D = T.shape
        ref = np.tile(np.arange(D), (n, L, 1))
        for li, opts in zip(levels, options):
            ref[:, li, :] = opts[0]
        keep = np.broadcast_to(p.keep, (n, L, 3)).copy()

        def run(order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            e = np.empty(n)
            c = np.empty(n)
            bw = np.empty((n, L))
            for lo in range(0, n, self.chunk):
                sl = slice(lo, lo + self.chunk)
                r = score(MappingBatch(p.dims, T[sl], nodes.sx[sl], nodes.sy[sl], order[sl], keep[sl]))
                e[sl] = np.asarray(r.energy_pj, dtype=float)
                c[sl] = np.asarray(r.compute_cycles, dtype=float)
                bw[sl] = np.asarray(r.bandwidth_cycles, dtype=float)
            return e, c, bw

        e0, compute, bw0 = run(ref)
        # per level: (n, k) energy terms and (n, k, L) bandwidth terms (option 0: zero)
        terms = []
        for li, opts in zip(levels, options):
            de = np.zeros((n, len(opts)))
            dbw = np.zeros((n, len(opts), L))
            for k, o in enumerate(opts[1:], 1):
                order = ref.copy()
                order[:, li, :] = o
                e, _, bw = run(order)
                de[:, k] = e - e0
                dbw[:, k] = bw - bw0
            terms.append((de, dbw))
        shape = [len(o) for o in options]
        best = np.full(n, np.inf)
        choice = np.zeros((n, len(levels)), dtype=np.int64)
        for combo in itertools.product(*(range(k) for k in shape)):
            e = e0 + sum(terms[k][0][:, c] for k, c in enumerate(combo))
            bw = bw0 + sum(terms[k][1][:, c] for k, c in enumerate(combo))
            v = objective_of(self.objective, e, compute, bw)
            better = v < best
            best = np.where(better, v, best)
            choice[better] = combo
        return best, choice

    def _bound(self, p: _Problem, nodes: _Nodes, known: int) -> np.ndarray:
        """The bound of each node (temporal factors decided at levels >= ``known``): the
        minimum over the canonical orders of the decided levels."""
        L = self.arch.n_levels
        T = nodes.placed(p)
        levels = list(range(max(known, 1), L))
        canon = self._canonical_orders(p)
        if not levels:
            levels, opts = [L - 1], [[canon[0]]]
        else:
            opts = [canon] * len(levels)

        def score(b: MappingBatch) -> Any:
            return self.cost.lower_bound(self.layer, self.arch, b, known)

        return self._separable(p, nodes, T, levels, opts, score)[0]

    # ---------------------------------------------------------------- leaves
    def _leaves(self, p: _Problem, leaves: _Nodes) -> None:
        """Exact best orders of complete factorizations (see the module docstring)."""
        lb = self._bound(p, leaves, 0)
        sel = np.flatnonzero(lb < self.incumbent * (1 - _TOL))
        self.leaves += len(leaves)
        if not len(sel):
            return
        if not p.sliding:
            # the canonical orders are exact for operands whose axes are one dimension
            # each: the bound at a leaf is the cost, attained by the canonical orders
            self._exact_canonical(p, leaves.take(sel))
            return
        for lo in range(0, len(sel), 256):
            if self._timed_out():
                self.open_bounds.extend(lb[sel[lo:]].tolist())
                return
            part = sel[lo:lo + 256]
            part = part[lb[part] < self.incumbent * (1 - _TOL)]
            if len(part):
                self._exact_orders(p, leaves.take(part))

    def _accept(self, p: _Problem, leaves: _Nodes, i: int, order: np.ndarray) -> None:
        """Score leaf ``i`` with ``order`` directly and keep it if it is the best."""
        L = self.arch.n_levels
        one = MappingBatch(p.dims, leaves.T[i:i + 1], leaves.sx[i:i + 1], leaves.sy[i:i + 1], order[None],
                           np.broadcast_to(p.keep, (1, L, 3)).copy())
        r = self.cost(self.layer, self.arch, one)
        self.evaluated += 1
        v = float(objective_of(self.objective, r.energy_pj, r.compute_cycles, r.bandwidth_cycles)[0])
        if bool(np.asarray(r.valid)[0]) and v < self.incumbent:
            self.best = (one, v)

    def _exact_canonical(self, p: _Problem, leaves: _Nodes) -> None:
        L, D = self.arch.n_levels, len(p.dims)
        levels = list(range(1, L))
        canon = self._canonical_orders(p)
        best, choice = self._separable(p, leaves, leaves.T, levels, [canon] * len(levels),
                                       lambda b: self.cost(self.layer, self.arch, b))
        self.evaluated += len(leaves) * (1 + len(levels) * (len(canon) - 1))
        for i in np.argsort(best):
            if not best[i] < self.incumbent * (1 - _TOL):
                break
            order = np.tile(np.arange(D), (L, 1))
            for k, li in enumerate(levels):
                order[li] = canon[choice[i, k]]
            self._accept(p, leaves, int(i), order)

    def _exact_orders(self, p: _Problem, leaves: _Nodes) -> None:
        """Every order of every level (loops with a factor > 1), combined through order
        separability: per level, the orders another of the same level beats in energy and
        in every bandwidth are dropped, then every combination of the rest is scored."""
        L, D = self.arch.n_levels, len(p.dims)
        n = len(leaves)
        T = leaves.T
        keep = np.broadcast_to(p.keep, (n, L, 3)).copy()
        ref = np.tile(np.arange(D), (n, L, 1))
        r0 = self.cost(self.layer, self.arch, MappingBatch(p.dims, T, leaves.sx, leaves.sy, ref, keep))
        self.evaluated += n
        e0 = np.asarray(r0.energy_pj, dtype=float)
        bw0 = np.asarray(r0.bandwidth_cycles, dtype=float)
        compute = np.asarray(r0.compute_cycles, dtype=float)
        valid = np.asarray(r0.valid, dtype=bool)
        # per leaf and level: (energy terms, bandwidth terms, level orders) of the
        # orders no other order of that level beats
        terms: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in range(n)]
        for li in range(1, L):
            moving = T[:, li, :] > 1                                   # (n, D)
            patterns, inverse = np.unique(moving, axis=0, return_inverse=True)
            inverse = inverse.ravel()
            groups = []
            for k, pat in enumerate(patterns):
                members = np.flatnonzero(inverse == k)
                mv = np.flatnonzero(pat)
                still = np.flatnonzero(~pat)
                perms = np.array(list(itertools.permutations(mv)), dtype=np.int64).reshape(-1, len(mv)) \
                    if len(mv) else np.zeros((1, 0), dtype=np.int64)
                level_orders = np.concatenate([perms, np.broadcast_to(still, (len(perms), len(still)))], axis=1)
                groups.append((members, level_orders))
            rl = np.concatenate([np.repeat(mem, len(lo_)) for mem, lo_ in groups])
            lvl = np.concatenate([np.tile(lo_, (len(mem), 1)) for mem, lo_ in groups])
            orders = ref[rl].copy()
            orders[:, li, :] = lvl
            energy = np.empty(len(rl))
            bw = np.empty((len(rl), L))
            for lo in range(0, len(rl), self.chunk):
                sl = slice(lo, lo + self.chunk)
                r = self.cost(self.layer, self.arch, MappingBatch(p.dims, T[rl[sl]], leaves.sx[rl[sl]],
                                                                  leaves.sy[rl[sl]], orders[sl], keep[rl[sl]]))
                energy[sl] = np.asarray(r.energy_pj, dtype=float)
                bw[sl] = np.asarray(r.bandwidth_cycles, dtype=float)
            self.evaluated += len(rl)
            vec_all = np.concatenate([(energy - e0[rl])[:, None], bw - bw0[rl]], axis=1)
            start = 0
            for members, level_orders in groups:
                g, m = len(members), len(level_orders)
                vec = vec_all[start:start + g * m].reshape(g, m, L + 1)
                start += g * m
                front = _pareto_batch(vec)                               # (g, m) bool
                for a, i in enumerate(members):
                    sel = np.flatnonzero(front[a])
                    terms[i].append((vec[a, sel, 0], vec[a, sel, 1:], level_orders[sel]))
        for i in range(n):
            if not valid[i]:
                continue
            best_v, best_combo = math.inf, None
            for combo in itertools.product(*(range(len(tl[0])) for tl in terms[i])):
                e = e0[i] + sum(terms[i][k][0][c] for k, c in enumerate(combo))
                b = bw0[i] + sum(terms[i][k][1][c] for k, c in enumerate(combo))
                v = float(objective_of(self.objective, e, compute[i], b))
                if v < best_v:
                    best_v, best_combo = v, combo
            if best_combo is not None and best_v < self.incumbent * (1 - _TOL):
                order = ref[i].copy()
                for k, c in enumerate(best_combo):
                    order[k + 1] = terms[i][k][2][c]
                self._accept(p, leaves, i, order)


def _pareto_batch(x: np.ndarray) -> np.ndarray:
    """``(g, m)``: for each of ``g`` sets of ``m`` vectors (``(g, m, k)``), whether a
    vector is kept: no other vector of its set is at most it everywhere and below it
    somewhere, and of equal vectors the first is kept."""
    x = np.round(x, 6)
    le = (x[:, :, None, :] <= x[:, None, :, :]).all(axis=-1)          # le[g, a, b]: a <= b
    lt = (x[:, :, None, :] < x[:, None, :, :]).any(axis=-1)
    m = x.shape[1]
    earlier = np.tri(m, k=-1, dtype=bool).T                            # earlier[a, b]: a < b
    dominated = (le & lt).any(axis=1) | (le & ~lt & earlier[None]).any(axis=1)
    return ~dominated


@dataclass
class _Nodes:
    """A batch of partial mappings: spatial factors, temporal factors (decided levels;
    the rest as 1) and what is left of each dimension."""

    sx: np.ndarray          # (n, L, D)
    sy: np.ndarray
    T: np.ndarray
    remaining: np.ndarray   # (n, D)

    def __len__(self) -> int:
        return len(self.T)

    def take(self, idx: np.ndarray) -> _Nodes:
        return _Nodes(self.sx[idx], self.sy[idx], self.T[idx], self.remaining[idx])

    @classmethod
    def empty(cls, L: int, D: int) -> _Nodes:
        z = np.ones((0, L, D), dtype=np.int64)
        return cls(z, z, z, np.ones((0, D), dtype=np.int64))

    @classmethod
    def concat(cls, parts: list[_Nodes]) -> _Nodes:
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("sx", "sy", "T", "remaining")))

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

