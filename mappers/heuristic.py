"""Greedy mapping: maximum PE utilization, then steepest descent.

:class:`HeuristicMapper` starts from the spatial assignment with the highest PE
utilization (ties: the fewest unrolled dimensions), every other factor in the backing
store (:func:`start_mapping`); then, round by round, it scores every neighbour in one
vectorized batch -- one prime factor of one dimension moved between two of its allowed
loop slots, or two adjacent loops of a level swapped (:func:`neighbourhood`) -- and takes
the best legal one, until no neighbour improves the objective or ``max_rounds`` is
reached; if no legal mapping is near that start (its unrolled tiles overflow a buffer),
it descends again from the smallest tiles (:func:`smallest_mapping`), and a layer with
no legal mapping at all is a :class:`~mappers.base.NoLegalMapping` that says which level
is too small for which operand (:mod:`mappers.fit`). When the cost model is order-separable (:mod:`mappers.orders`), the descent then
alternates with an exact loop-order optimization of the mapping it reached (its factors
fixed) until neither improves it: adjacent swaps alone get stuck where two levels' orders
must change together. It is fast and finds good mappings, but it is a local search:
nothing bounds its distance from the optimum (:class:`mappers.exact.ExactMapper` does).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from accelerators.arch import ArchSpec
from mappers.base import CostFunction, MappingResult, NoLegalMapping, objective_values, result_of
from mappers.fit import explain_unmappable
from mappers.mapping import MappingBatch
from mappers.mapping_space import MappingSpaceInfo, allowed_slots, keep_array, prime_factors
from mappers.orders import best_orders, vector_levels
from mappers.workloads import Layer

__all__ = ["HeuristicMapper", "descend", "neighbourhood", "smallest_mapping", "start_mapping"]


def start_mapping(layer: Layer, arch: ArchSpec, info: MappingSpaceInfo) -> MappingBatch:
    """Max-utilization spatial assignment; every other factor in the backing store."""
    L, dims = arch.n_levels, layer.dim_names
    slots = allowed_slots(info)
    D = len(dims)
    T = np.ones((L, D), dtype=np.int64)
    SX = np.ones((L, D), dtype=np.int64)
    SY = np.ones((L, D), dtype=np.int64)
    remaining = dict(layer.dims)
    for li in range(L - 1, -1, -1):
        for kind, arr, fan in (("x", SX, arch.levels[li].fanout_x), ("y", SY, arch.levels[li].fanout_y)):
            if fan <= 1:
                continue
            cands = [d for d in info.dims if (kind, li) in slots[d]]
            # best product of divisors of the candidate dims within the fanout
            options: list[tuple[int, tuple[int, ...]]] = [(1, tuple(1 for _ in cands))]
            for d_idx, d in enumerate(cands):
                new = []
                for prod, facs in options:
                    for f in (x for x in range(1, remaining[d] + 1) if remaining[d] % x == 0):
                        if prod * f <= fan:
                            new.append((prod * f, (*facs[:d_idx], f, *facs[d_idx + 1:])))
                options = new or options
            prod, facs = max(options, key=lambda o: (o[0], -sum(x > 1 for x in o[1])))
            for d, f in zip(cands, facs):
                arr[li, dims.index(d)] = f
                remaining[d] //= f
    for d in dims:
        T[L - 1, dims.index(d)] = remaining[d]
    order = np.tile(np.arange(D), (L, 1))
    keep = keep_array(info)[0]
    return MappingBatch(dims, T[None], SX[None], SY[None], order[None], keep[None])


def smallest_mapping(layer: Layer, arch: ArchSpec, info: MappingSpaceInfo) -> MappingBatch:
    """Every factor a temporal loop of the backing store, nothing unrolled: the smallest
    tile of every operand at every on-chip level (one word each)."""
    L, dims = arch.n_levels, layer.dim_names
    T = np.ones((L, len(dims)), dtype=np.int64)
    T[L - 1] = [layer.dims[d] for d in dims]
    ones = np.ones_like(T)
    order = np.tile(np.arange(len(dims)), (L, 1))
    return MappingBatch(dims, T[None], ones[None], ones[None], order[None], keep_array(info)[0][None])


def neighbourhood(batch: MappingBatch, info: MappingSpaceInfo) -> MappingBatch:
    """Every mapping one move from ``batch``'s first: a single prime factor of one
    dimension moved between two of its allowed slots (fanouts respected), or two adjacent
    loops of a level above the innermost swapped (both with a factor > 1)."""
    dims = batch.dims
    L = batch.n_levels
    slots = allowed_slots(info)
    T0, SX0, SY0, O0, K0 = (batch.temporal[0], batch.spatial_x[0], batch.spatial_y[0],
                            batch.order[0], batch.keep[0])
    out = []
    arrs = {"t": T0, "x": SX0, "y": SY0}
    for d in info.dims:
        j = dims.index(d)
        for src in slots[d]:
            f = arrs[src[0]][src[1], j]
            for p in set(prime_factors(int(f))) if f > 1 else ():
                for dst in slots[d]:
                    if dst == src:
                        continue
                    new = {k: v.copy() for k, v in arrs.items()}
                    new[src[0]][src[1], j] //= p
                    new[dst[0]][dst[1], j] *= p
                    if dst[0] == "x" and new["x"][dst[1]].prod() > info.arch.levels[dst[1]].fanout_x:
                        continue
                    if dst[0] == "y" and new["y"][dst[1]].prod() > info.arch.levels[dst[1]].fanout_y:
                        continue
                    out.append((new["t"], new["x"], new["y"], O0, K0))
    for li in range(1, L):
        for pos in range(len(dims) - 1):
            o = O0.copy()
            o[li, pos], o[li, pos + 1] = o[li, pos + 1], o[li, pos]
            if T0[li, o[li, pos]] > 1 and T0[li, o[li, pos + 1]] > 1:
                out.append((T0, SX0, SY0, o, K0))
    if not out:
        return batch.take(np.zeros(0, dtype=np.int64))
    return MappingBatch(dims, *(np.stack([m[i] for m in out]) for i in range(5)))


def descend(layer: Layer, arch: ArchSpec, cost: CostFunction, start: MappingBatch, info: MappingSpaceInfo,
            objective: str = "edp", max_rounds: int = 200) -> tuple[MappingBatch, float, int]:
    """Steepest descent from ``start`` over :func:`neighbourhood`: returns the final
    mapping (a batch of one), its objective (``inf`` if never legal) and the number of
    mappings scored."""
    cur = start
    cur_s = objective_values(cost(layer, arch, cur), objective)[0]
    evaluated = 1
    for _ in range(max_rounds):
        cand = neighbourhood(cur, info)
        if not len(cand):
            break
        s = objective_values(cost(layer, arch, cand), objective)
        evaluated += len(cand)
        i = int(np.argmin(s))
        if not s[i] < cur_s:
            break
        cur, cur_s = cand.take(np.array([i])), s[i]
    return cur, float(cur_s), evaluated


@dataclass(frozen=True)
class HeuristicMapper:
    """Max-utilization start, then steepest descent alternating with exact loop orders
    (see the module docstring).

    Args:
        max_rounds: descent rounds per descent.
        polish_orders: optimize the loop orders of the descent's result exactly (when
            the cost model is order-separable) and descend again while that helps.
    """

    max_rounds: int = 200
    polish_orders: bool = True

    def map(self, layer: Layer, arch: ArchSpec, cost: CostFunction, objective: str = "edp", *,
            seed: int = 0) -> MappingResult:
        t0 = time.perf_counter()
        info = MappingSpaceInfo(layer, arch, "divisors", False)
        best, best_s, evaluated = descend(layer, arch, cost, start_mapping(layer, arch, info), info,
                                          objective, self.max_rounds)
        if not np.isfinite(best_s):
            # no legal mapping near the max-utilization start (its spatial tiles may overflow
            # a buffer): descend again from the smallest tiles, everything in the backing store
            low, low_s, n = descend(layer, arch, cost, smallest_mapping(layer, arch, info), info,
                                    objective, self.max_rounds)
            evaluated += n
            if np.isfinite(low_s):
                best, best_s = low, low_s
        polish = (self.polish_orders and getattr(cost, "separable_orders", False) and not vector_levels(arch)
                  and np.isfinite(best_s))
        while polish:
            values, orders, scored = best_orders(layer, arch, cost, best, objective)
            evaluated += scored
            if not values[0] < best_s * (1 - 1e-12):
                break
            polished = MappingBatch(best.dims, best.temporal, best.spatial_x, best.spatial_y, orders, best.keep)
            best, best_s, n = descend(layer, arch, cost, polished, info, objective, self.max_rounds)
            evaluated += n
        if not np.isfinite(best_s):
            why = explain_unmappable(layer, arch)
            raise NoLegalMapping(f"heuristic found no legal mapping of {layer.name!r} on {arch.name!r}: "
                                 + (why or "its smallest tiles fit every level, but no mapping the "
                                    "descent reached is legal"))
        return result_of(layer, arch, cost, best, 0, evaluated=evaluated, seconds=time.perf_counter() - t0)
