"""Exhaustive mapping: score every legal exact mapping of a small layer.

:func:`enumerate_mappings` yields, in chunks, every exact (divisor) factorization of
every dimension over its allowed loop slots (:func:`mappers.mapping_space.allowed_slots`),
every distinct loop order at every level above the innermost (permutations of the loops
with a factor > 1 only: the order of loops of extent 1 changes nothing), and every bypass
choice; with ``constraints`` (:class:`mappers.constraints.MappingConstraints`) only the
mappings that meet them. It refuses, before enumerating, a space larger than
``max_mappings`` (factorizations counted before the constraints).
:class:`ExhaustiveMapper` scores them all: the ground truth the other mappers are tested
against, for layers small enough.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from mappers.base import CostFunction, MappingResult, NoLegalMapping, objective_values, result_of
from mappers.constraints import ConstraintSpec, check_constraint_spec, constraints_for
from mappers.fit import explain_unmappable
from mappers.mapping import MappingBatch
from mappers.mapping_space import MappingSpaceInfo, allowed_slots, divisor_proof_scope, keep_array
from mappers.workloads import Layer

__all__ = ["ExhaustiveMapper", "enumerate_mappings", "factorizations"]


def factorizations(n: int, k: int) -> list[tuple[int, ...]]:
    """Ordered ``k``-tuples of positive integers whose product is ``n``."""
    if k == 1:
        return [(n,)]
    out = []
    for d in range(1, n + 1):
        if n % d == 0:
            out.extend((d, *rest) for rest in factorizations(n // d, k - 1))
    return out


def enumerate_mappings(layer: Layer, arch: ArchSpec, *, bypass: bool = False, orders: bool = True,
                       max_mappings: int = 2_000_000, chunk: int = 65536,
                       constraints: ConstraintSpec = None, inner_orders: bool = False) -> Iterator[MappingBatch]:
    """Every legal exact mapping (see module docstring), in chunks of ``chunk``; with
    ``constraints``, those that meet them (levels whose kept operands are constrained
    keep exactly those: with ``bypass``, that fixes those levels' choice; without, the one
    choice, every operand a level can hold, must meet them or nothing is enumerated).
    ``inner_orders``: every order of the innermost level too (it counts where a MAC's
    operand is read on change, ``Conventions.mac_operand_reads="on_change"``).

    Raises:
        ValueError: (before enumerating) the factorizations times the bypass choices
            exceed ``max_mappings``.
    """
    info = MappingSpaceInfo(layer, arch, "divisors", bypass)
    L = arch.n_levels
    dims = layer.dim_names
    D = len(dims)
    slots = allowed_slots(info)
    rc = constraints_for(constraints, layer, arch).resolve(layer, arch)
    per_dim = [factorizations(layer.dims[d], len(slots[d])) for d in info.dims]
    n_fact = int(np.prod([len(x) for x in per_dim], dtype=object)) if per_dim else 1
    keep_opts = [(li, t) for li in range(L - 1) for t, op in enumerate(OPERANDS)
                 if bypass and info.dataflow is None and op in arch.levels[li].tensors and not rc.keep_fixed[li]]
    base_keep = keep_array(info)[0]
    if bypass and info.dataflow is None:
        base_keep = rc.apply_keep(base_keep)          # every subset is a choice: fix the constrained levels
    elif not rc.keep_ok(base_keep[None])[0]:
        return                                        # the one bypass choice breaks the constraints
    if n_fact * (2 ** len(keep_opts)) > max_mappings:
        raise ValueError(f"enumerate_mappings: {n_fact} factorizations x {2 ** len(keep_opts)} bypass "
                         f"choices exceed max_mappings={max_mappings}; use a smaller layer or another mapper")
    rows: dict[str, list] = {k: [] for k in ("T", "SX", "SY", "O", "K")}
    fan_x = np.array([lv.fanout_x for lv in arch.levels])
    fan_y = np.array([lv.fanout_y for lv in arch.levels])

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
        if (SX.prod(axis=1) > fan_x).any() or (SY.prod(axis=1) > fan_y).any():
            continue
        if not rc.factors_ok(T[None], SX[None], SY[None])[0]:
            continue
        level_orders = []
        for li in range(L):
            moving = [j for j in range(D) if T[li, j] > 1]
            rest = [j for j in range(D) if T[li, j] == 1]
            perms = itertools.permutations(moving) if (orders and (li > 0 or inner_orders)) else [tuple(moving)]
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
                if len(rows["T"]) >= chunk:
                    yield flush()
    if rows["T"]:
        yield flush()


@dataclass(frozen=True)
class ExhaustiveMapper:
    """The best of every legal exact mapping (:func:`enumerate_mappings`), within
    ``constraints`` if given: optimal over divisor tilings, with bypass choices only
    where ``bypass`` (the result's ``scope`` says so)."""

    bypass: bool = False
    max_mappings: int = 2_000_000
    constraints: ConstraintSpec = None

    def __post_init__(self) -> None:
        check_constraint_spec("ExhaustiveMapper", self.constraints)

    def map(self, layer: Layer, arch: ArchSpec, cost: CostFunction, objective: str = "edp", *,
            seed: int = 0) -> MappingResult:
        t0 = time.perf_counter()
        best_i, best_s, best_batch, total = -1, np.inf, None, 0
        for batch in enumerate_mappings(layer, arch, bypass=self.bypass, max_mappings=self.max_mappings,
                                        constraints=self.constraints):
            s = objective_values(cost(layer, arch, batch), objective)
            total += len(batch)
            i = int(np.argmin(s))
            if s[i] < best_s:
                best_i, best_s, best_batch = i, s[i], batch
        if best_batch is None or not np.isfinite(best_s):
            why = explain_unmappable(layer, arch, self.constraints, bypass=self.bypass)
            raise NoLegalMapping(f"no legal mapping of {layer.name!r} on {arch.name!r}"
                                 + (f": {why}" if why else ""))
        scope = divisor_proof_scope(MappingSpaceInfo(layer, arch, "divisors", self.bypass), cost, objective,
                                    constraints_for(self.constraints, layer, arch),
                                    "every order of the loops with a factor > 1 at every level above the innermost")
        return result_of(layer, arch, cost, best_batch, best_i, evaluated=total,
                         seconds=time.perf_counter() - t0, space_size=total, optimal=True, scope=scope)
