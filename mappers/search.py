"""Mapping search primitives: random, exhaustive and heuristic (greedy) mappers.

All work on :class:`~mappers.mapping.MappingBatch` arrays and score candidates with the
vectorized cost model, so a search step costs one array evaluation, not one Python call
per mapping.

* :func:`random_mappings` -- ``n`` legal mappings from the mapping space's structured
  proposal (prime factors assigned to loop slots), capacity by rejection.
* :func:`enumerate_mappings` -- every exact (divisor) factorization, every distinct loop
  order (permutations of the loops with a factor > 1 only), every bypass choice; for
  small layers (tests, ground truth for the other mappers).
* :func:`heuristic_mapping` -- start from the spatial assignment with the highest PE
  utilization (ties: the most spatial reuse), everything else in the backing store;
  then steepest descent: move one prime factor of one dimension between two of its loop
  slots, or swap two adjacent loops of a level, taking the best legal move in each
  round until none improves the objective.
* :func:`search` -- one entry point: ``method`` in ``random | exhaustive | heuristic``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from evaluators.loopnest import LoopNestResult, evaluate_batch, layer_constants
from mappers.mapping import Mapping, MappingBatch
from mappers.space import (
    DATAFLOWS,
    MappingSpaceInfo,
    allowed_slots,
    batch_from_columns,
    mapping_space,
    prime_factors,
)
from mappers.workloads import Layer

OBJECTIVES = ("edp", "energy", "latency")


def _score(res: LoopNestResult, objective: str) -> np.ndarray:
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown mapping objective {objective!r} (choices: {list(OBJECTIVES)})")
    s = {"edp": res.edp, "energy": res.energy_pj, "latency": res.latency_cycles}[objective]
    return np.where(np.asarray(res.valid), np.asarray(s, dtype=float), np.inf)


@dataclass(frozen=True)
class SearchResult:
    """The best mapping found, its scores and how much was evaluated."""

    mapping: Mapping
    energy_pj: float
    latency_cycles: float
    edp: float
    utilization: float
    evaluated: int
    batch: MappingBatch          # the best mapping as a batch of one


def _result(layer: Layer, arch: ArchSpec, batch: MappingBatch, i: int, evaluated: int) -> SearchResult:
    one = batch.take(np.array([i]))
    r = evaluate_batch(layer, arch, one)
    return SearchResult(one.mapping(0), float(r.energy_pj[0]), float(r.latency_cycles[0]),
                        float(r.edp[0]), float(r.utilization[0]), evaluated, one)


def random_mappings(layer: Layer, arch: ArchSpec, n: int, seed: Any = None, *,
                    factors: str = "divisors", bypass: bool = False) -> MappingBatch:
    """``n`` random legal mappings (uniform over prime-factor placements)."""
    space = mapping_space(layer, arch, factors=factors, bypass=bypass)
    cols = space.sample_columns(n, seed)
    return batch_from_columns(layer, arch, cols, factors=factors, bypass=bypass)


def random_search(layer: Layer, arch: ArchSpec, budget: int = 1000, seed: Any = None, *,
                  objective: str = "edp", bypass: bool = False) -> SearchResult:
    batch = random_mappings(layer, arch, budget, seed, bypass=bypass)
    s = _score(evaluate_batch(layer, arch, batch), objective)
    return _result(layer, arch, batch, int(np.argmin(s)), len(batch))


# ------------------------------------------------------------------------- exhaustive
def _factorizations(n: int, k: int) -> list[tuple[int, ...]]:
    """Ordered ``k``-tuples of positive integers whose product is ``n``."""
    if k == 1:
        return [(n,)]
    out = []
    for d in range(1, n + 1):
        if n % d == 0:
            out.extend((d, *rest) for rest in _factorizations(n // d, k - 1))
    return out


def enumerate_mappings(layer: Layer, arch: ArchSpec, *, bypass: bool = False, orders: bool = True,
                       max_mappings: int = 2_000_000, chunk: int = 65536) -> Iterator[MappingBatch]:
    """Every legal exact mapping (see module docstring), in chunks.

    Raises ``ValueError`` (before enumerating) if the factorizations times the orders
    exceed ``max_mappings``.
    """
    info = MappingSpaceInfo(layer, arch, "divisors", bypass)
    L = arch.n_levels
    dims = layer.dim_names
    D = len(dims)
    slots = allowed_slots(info)
    per_dim = [_factorizations(layer.dims[d], len(slots[d])) for d in info.dims]
    n_fact = int(np.prod([len(x) for x in per_dim], dtype=object)) if per_dim else 1
    keep_opts = [(li, t) for li in range(L - 1) for t, op in enumerate(OPERANDS)
                 if bypass and info.dataflow is None and op in arch.levels[li].tensors]
    if n_fact * (2 ** len(keep_opts)) > max_mappings:
        raise ValueError(f"enumerate_mappings: {n_fact} factorizations x {2 ** len(keep_opts)} bypass "
                         f"choices exceed max_mappings={max_mappings}; use a smaller layer or another mapper")
    base_keep = np.zeros((L, 3), dtype=bool)
    base_keep[L - 1] = True
    for li in range(L - 1):
        for t, op in enumerate(OPERANDS):
            if op in arch.levels[li].tensors:
                base_keep[li, t] = (op == DATAFLOWS[info.dataflow][3]) if (info.dataflow and li == 0) else True
    rows: dict[str, list] = {k: [] for k in ("T", "SX", "SY", "O", "K")}
    count = 0

    def flush() -> MappingBatch:
        b = MappingBatch(dims, np.array(rows["T"]), np.array(rows["SX"]), np.array(rows["SY"]),
                         np.array(rows["O"]), np.array(rows["K"]))
        for v in rows.values():
            v.clear()
        return b

    for combo in itertools.product(*per_dim):
        T = np.ones((L, D), dtype=np.int64)
        SX = np.ones((L, D), dtype=np.int64)
        SY = np.ones((L, D), dtype=np.int64)
        for d, facs in zip(info.dims, combo):
            j = dims.index(d)
            for (kind, li), fct in zip(slots[d], facs):
                {"t": T, "x": SX, "y": SY}[kind][li, j] *= fct
        if (SX.prod(axis=1) > [lv.fanout_x for lv in arch.levels]).any():
            continue
        if (SY.prod(axis=1) > [lv.fanout_y for lv in arch.levels]).any():
            continue
        level_orders = []
        for li in range(L):
            moving = [j for j in range(D) if T[li, j] > 1]
            rest = [j for j in range(D) if T[li, j] == 1]
            perms = itertools.permutations(moving) if (orders and li > 0) else [tuple(moving)]
            level_orders.append([list(p) + rest for p in perms])
        for ords in itertools.product(*level_orders):
            for bits in itertools.product([True, False], repeat=len(keep_opts)):
                keep = base_keep.copy()
                for (li, t), b in zip(keep_opts, bits):
                    keep[li, t] = b
                rows["T"].append(T)
                rows["SX"].append(SX)
                rows["SY"].append(SY)
                rows["O"].append(np.array(ords))
                rows["K"].append(keep)
                count += 1
                if len(rows["T"]) >= chunk:
                    yield flush()
    if rows["T"]:
        yield flush()


def exhaustive_search(layer: Layer, arch: ArchSpec, *, objective: str = "edp", bypass: bool = False,
                      max_mappings: int = 2_000_000) -> SearchResult:
    best, best_s, best_batch, total = None, np.inf, None, 0
    for batch in enumerate_mappings(layer, arch, bypass=bypass, max_mappings=max_mappings):
        s = _score(evaluate_batch(layer, arch, batch), objective)
        total += len(batch)
        i = int(np.argmin(s))
        if s[i] < best_s:
            best, best_s, best_batch = i, s[i], batch
    if best_batch is None or not np.isfinite(best_s):
        raise ValueError(f"no legal mapping of {layer.name!r} on {arch.name!r}")
    return _result(layer, arch, best_batch, best, total)


# -------------------------------------------------------------------------- heuristic
def _start(layer: Layer, arch: ArchSpec, info: MappingSpaceInfo) -> MappingBatch:
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
    keep = _keep_for(info, L)
    return MappingBatch(dims, T[None], SX[None], SY[None], order[None], keep[None])


def _keep_for(info: MappingSpaceInfo, L: int) -> np.ndarray:
    keep = np.zeros((L, 3), dtype=bool)
    keep[L - 1] = True
    for li in range(L - 1):
        for t, op in enumerate(OPERANDS):
            if op in info.arch.levels[li].tensors:
                keep[li, t] = (op == DATAFLOWS[info.dataflow][3]) if (info.dataflow and li == 0) else True
    return keep


def _moves(batch: MappingBatch, info: MappingSpaceInfo) -> MappingBatch:
    """All single prime-factor moves between allowed slots and adjacent loop swaps."""
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


def heuristic_mapping(layer: Layer, arch: ArchSpec, *, objective: str = "edp",
                      max_rounds: int = 200) -> SearchResult:
    info = MappingSpaceInfo(layer, arch, "divisors", False)
    consts = layer_constants(layer)
    cur = _start(layer, arch, info)
    cur_s = _score(evaluate_batch(layer, arch, cur, consts=consts), objective)[0]
    evaluated = 1
    for _ in range(max_rounds):
        cand = _moves(cur, info)
        if not len(cand):
            break
        s = _score(evaluate_batch(layer, arch, cand, consts=consts), objective)
        evaluated += len(cand)
        i = int(np.argmin(s))
        if not s[i] < cur_s:
            break
        cur, cur_s = cand.take(np.array([i])), s[i]
    if not np.isfinite(cur_s):
        raise ValueError(f"heuristic found no legal mapping of {layer.name!r} on {arch.name!r}")
    return _result(layer, arch, cur, 0, evaluated)


def search(layer: Layer, arch: ArchSpec, method: str = "heuristic", *, budget: int = 1000,
           seed: Any = None, objective: str = "edp") -> SearchResult:
    """Best mapping of ``layer`` on ``arch`` by ``method`` (random uses ``budget``)."""
    if method == "heuristic":
        return heuristic_mapping(layer, arch, objective=objective)
    if method == "random":
        return random_search(layer, arch, budget, seed, objective=objective)
    if method == "exhaustive":
        return exhaustive_search(layer, arch, objective=objective)
    raise ValueError(f"unknown mapper {method!r} (choices: heuristic, random, exhaustive)")
