"""The legal mappings of a layer on an architecture, as a :class:`DesignSpace`.

This is the software half of a co-design space: :func:`joint_mapping_space` couples a
hardware space with every layer's mapping space (``JointSpace(hw_space, lambda hw:
mapping_space(layer, build(hw).to_arch()))`` for one layer).

Parameters (only for dimensions of size > 1; ``<lv>`` is a level name such as ``GLB``):

* ``t_<lv>_<d>`` -- temporal factor of dimension ``d`` at on-chip level ``lv``;
* ``sx_<lv>_<d>``, ``sy_<lv>_<d>`` -- spatial factors across the level's X / Y fanout
  (levels with a fanout > 1 only);
* ``order_<lv>`` -- loop order (a permutation) at every level above the innermost one
  (the innermost level's own order never changes any count);
* ``keep_<lv>_<op>`` -- whether an operand is stored at an on-chip level (``bypass=True``).

The backing store's temporal factor of each dimension is not a parameter: it is what is
left, ``size / (product of the others)`` -- an exact division with ``factors="divisors"``
(a known constraint), or rounded up with ``factors="padded"`` (then each dimension may be
padded by less than one outer step, see :mod:`mappers.mapping`).

Factor candidates: ``"divisors"`` -- the divisors of the dimension (exact tilings, as
Timeloop and ZigZag enumerate them); ``"padded"`` -- additionally every ``ceil(size / k)``
(tiles that split the dimension into ``k`` near-equal parts, the edge tile padded).

Known constraints (vectorized over a batch, so sampling rejects illegal mappings at array
speed): factors of each dimension fit it; spatial factors fit each fanout; every tile
fits its level's capacity (per partition, or summed for a shared buffer); and for
systolic arrays the dataflow's rules (below).

Capacity as an unknown constraint (``capacity="unknown"``): the capacity checks are left
out of the space, so a mapping whose tiles overflow a buffer is proposed and evaluated,
and the cost model reports it invalid. Shi et al. 2020 (arXiv 2010.02075) take
constraints known a priori as input constraints and the others as output constraints
learned from failed evaluations; this mode makes a mapping's validity such an output
constraint, so that the inner search's feasibility model has something to learn
(``experiments/search_quality/inner_feasibility.py`` measures it). The default, ``"known"``,
rejects overflowing mappings before they are evaluated.

Systolic dataflows (``arch.dataflow``), in SCALE-Sim's convention, by the
operand relevance of each dimension: *output-only* dims (``N, P, Q``; GEMM ``M``),
*weight-output* dims (``K``; GEMM ``N``) and *reduction* dims (``C, R, S``; GEMM ``K``).
OS: rows <- output-only, columns <- weight-output, PE-level temporal <- reduction, the
PE keeps ``O``. WS: rows <- reduction, columns <- weight-output, PE-level temporal <-
output-only, the PE keeps ``W``. IS: rows <- reduction, columns <- output-only,
PE-level temporal <- weight-output, the PE keeps ``I``. Dimensions relevant to every
operand (groups ``G``, batch ``B`` of a BMM) are temporal above the PE array.
"""

from __future__ import annotations

import math
from collections.abc import Mapping as MappingT
from collections.abc import Sequence
from functools import reduce
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from accelerators.registry import resolve_accelerator
from design_space import Categorical, Constraint, DesignSpace, JointSpace, Ordinal, Permutation
from design_space.compose import product
from mappers import zoo
from mappers.base import ProofScope, accounting_of
from mappers.mapping import MappingBatch
from mappers.workloads import Layer

__all__ = [
    "CAPACITY_MODES",
    "DATAFLOW_RULES",
    "FACTOR_MODES",
    "MappingSpaceInfo",
    "allowed_slots",
    "batch_from_columns",
    "dim_classes",
    "divisor_proof_scope",
    "divisors",
    "factor_candidates",
    "joint_mapping_space",
    "keep_array",
    "mapping_space",
    "prime_factors",
    "propose",
]

FACTOR_MODES = ("divisors", "padded")
CAPACITY_MODES = ("known", "unknown")

DATAFLOW_RULES: dict[str, tuple[str, str, str, str]] = {
    "OS": ("output_only", "weight_output", "reduction", "O"),
    "WS": ("reduction", "weight_output", "output_only", "W"),
    "IS": ("reduction", "output_only", "weight_output", "I"),
}
"""Systolic dataflow -> (dimension class on the Y rows, on the X columns, of the PE-level
temporal loops, the operand the PE keeps); see the module docstring."""


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def factor_candidates(size: int, mode: str = "divisors") -> list[int]:
    if mode not in FACTOR_MODES:
        raise ValueError(f"factors must be one of {FACTOR_MODES}, got {mode!r}")
    vals = set(divisors(size))
    if mode == "padded":
        vals |= {-(-size // k) for k in range(1, size + 1)}
    return sorted(vals)


def dim_classes(layer: Layer) -> dict[str, str]:
    """``output_only``, ``weight_output``, ``reduction`` or ``all`` for every dimension."""
    w, i, o = (layer.relevant(op) for op in OPERANDS)
    out = {}
    for d in layer.dims:
        key = (d in w, d in i, d in o)
        out[d] = {(False, True, True): "output_only", (True, False, True): "weight_output",
                  (True, True, False): "reduction"}.get(key, "all")
    return out


class MappingSpaceInfo:
    """Names of the parameters of a mapping space and how they map to a MappingBatch."""

    def __init__(self, layer: Layer, arch: ArchSpec, factors: str, bypass: bool) -> None:
        self.layer, self.arch, self.factors, self.bypass = layer, arch, factors, bypass
        self.dims = [d for d, v in layer.dims.items() if v > 1]
        self.names = [lv.name for lv in arch.levels]
        L = arch.n_levels
        self.temporal = {(li, d): f"t_{self.names[li]}_{d}" for li in range(L - 1) for d in self.dims}
        self.sx = {(li, d): f"sx_{self.names[li]}_{d}" for li in range(L) if arch.levels[li].fanout_x > 1
                   for d in self.dims}
        self.sy = {(li, d): f"sy_{self.names[li]}_{d}" for li in range(L) if arch.levels[li].fanout_y > 1
                   for d in self.dims}
        self.order = {li: f"order_{self.names[li]}" for li in range(1, L)} if len(self.dims) > 1 else {}
        self.dataflow = arch.dataflow
        self.keep: dict[tuple[int, str], str] = {}
        if bypass and self.dataflow is None:
            self.keep = {(li, op): f"keep_{self.names[li]}_{op}" for li in range(L - 1)
                         for op in OPERANDS if op in arch.levels[li].tensors}


def divisor_proof_scope(info: MappingSpaceInfo, cost: Any, objective: str, constraints: Any,
                        loop_orders: str) -> ProofScope:
    """The :class:`~mappers.base.ProofScope` of a search over the divisor mappings of
    ``info`` (its layer, architecture and bypass option) under ``cost``: what the exact and
    exhaustive mappers prove over. ``constraints``: the
    :class:`~mappers.constraints.MappingConstraints` applied (an empty set: none)."""
    levels = tuple(getattr(constraints, "levels", ()) or ())
    if not levels:
        cons = None
    else:
        cons = getattr(constraints, "name", "") or "unnamed set on levels " + ", ".join(str(lc.level) for lc in levels)
    spatial = "every divisor unrolling within each fanout"
    if info.dataflow is not None:
        spatial += f", under the systolic {info.dataflow} dataflow's rules"
    return ProofScope(tilings="divisor", accounting=accounting_of(cost), bypass=bool(info.keep), constraints=cons,
                      spatial=spatial, loop_orders=loop_orders, objective=objective)


def _prod(cols: MappingT[str, np.ndarray], names: Sequence[str], n: int) -> np.ndarray:
    out = np.ones(n, dtype=np.int64)
    for name in names:
        out = out * cols[name]
    return out


def mapping_space(layer: Layer, arch: ArchSpec, *, factors: str = "divisors",
                  bypass: bool = False, capacity: str = "known") -> DesignSpace:
    """The legal mappings of ``layer`` on ``arch`` (see module docstring); with
    ``capacity="unknown"`` buffer capacities are not among the space's constraints."""
    if capacity not in CAPACITY_MODES:
        raise ValueError(f"mapping_space: capacity must be one of {CAPACITY_MODES}, got {capacity!r}")
    info = MappingSpaceInfo(layer, arch, factors, bypass)
    L = arch.n_levels
    params: list[Any] = []
    for d in info.dims:
        cands = factor_candidates(layer.dims[d], factors)
        for li in range(L - 1):
            params.append(Ordinal(info.temporal[(li, d)], cands))
        for group, fan in ((info.sx, "fanout_x"), (info.sy, "fanout_y")):
            for (li, dd), name in group.items():
                if dd == d:
                    lim = getattr(arch.levels[li], fan)
                    params.append(Ordinal(name, [c for c in cands if c <= lim]))
    for name in info.order.values():
        params.append(Permutation(name, info.dims))
    for name in info.keep.values():
        params.append(Categorical(name, [True, False]))
    cons: list[Constraint] = []

    def inner_names(d: str) -> list[str]:
        return ([info.temporal[(li, d)] for li in range(L - 1)]
                + [n for (li, dd), n in info.sx.items() if dd == d]
                + [n for (li, dd), n in info.sy.items() if dd == d])

    for d in info.dims:
        size, names = layer.dims[d], inner_names(d)
        if factors == "divisors":
            cons.append(Constraint(f"divides_{d}", lambda p, names=names, size=size: size % _prod(p, names, len(p[names[0]])) == 0))
        else:
            cons.append(Constraint(f"fits_{d}", lambda p, names=names, size=size: _prod(p, names, len(p[names[0]])) <= size))
    for group, fan in ((info.sx, "fanout_x"), (info.sy, "fanout_y")):
        for li in range(L):
            names = [n for (lv, _), n in group.items() if lv == li]
            if names:
                lim = getattr(arch.levels[li], fan)
                cons.append(Constraint(f"{fan}_{info.names[li]}",
                                       lambda p, names=names, lim=lim: _prod(p, names, len(p[names[0]])) <= lim))
    if info.dataflow is not None:
        cons.extend(_dataflow_constraints(layer, arch, info))
    if capacity == "known":
        cons.extend(_capacity_constraints(layer, arch, info))
    return DesignSpace(*params, constraints=cons, name=f"mappings({layer.name} on {arch.name})",
                       proposal=lambda n, rng: propose(info, n, rng))


def prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def allowed_slots(info: MappingSpaceInfo) -> dict[str, list[tuple[str, int]]]:
    """Per dimension, the loop slots it may use: ``("t"|"x"|"y", level)``; the backing
    store's temporal slot ``("t", L-1)`` is always allowed."""
    L = info.arch.n_levels
    classes = dim_classes(info.layer)
    rules = DATAFLOW_RULES.get(info.dataflow) if info.dataflow else None
    out: dict[str, list[tuple[str, int]]] = {}
    for d in info.dims:
        slots = []
        for li in range(L - 1):
            if rules is None or li > 0 or classes[d] == rules[2]:
                slots.append(("t", li))
        for kind, group in (("x", info.sx), ("y", info.sy)):
            for (li, dd) in group:
                if dd != d:
                    continue
                if rules is not None and classes[d] != (rules[1] if kind == "x" else rules[0]):
                    continue
                slots.append((kind, li))
        slots.append(("t", L - 1))
        out[d] = slots
    return out


def propose(info: MappingSpaceInfo, n: int, rng: np.random.Generator) -> dict[str, Any]:
    """Candidate mappings by random assignment of every prime factor of every dimension
    to one of its allowed loop slots (uniformly), skipping spatial slots that would
    exceed their fanout -- so factor products divide exactly and fanouts and dataflow
    rules hold by construction; only capacity is left to rejection. Loop orders are
    uniform permutations, bypass bits fair coins."""
    arch = info.arch
    L = arch.n_levels
    slots = allowed_slots(info)
    fac = {(d, s): np.ones(n, dtype=np.int64) for d in info.dims for s in slots[d]}
    used_x = {li: np.ones(n, dtype=np.int64) for li in range(L)}
    used_y = {li: np.ones(n, dtype=np.int64) for li in range(L)}
    occurrences = [(d, p) for d in info.dims for p in prime_factors(info.layer.dims[d])]
    for j in rng.permutation(len(occurrences)):
        d, p = occurrences[j]
        choice = rng.integers(0, len(slots[d]), size=n)
        placed = np.zeros(n, dtype=bool)
        for k, (kind, li) in enumerate(slots[d]):
            pick = (choice == k) & ~placed
            if kind == "x":
                pick &= used_x[li] * p <= arch.levels[li].fanout_x
                used_x[li] = np.where(pick, used_x[li] * p, used_x[li])
            elif kind == "y":
                pick &= used_y[li] * p <= arch.levels[li].fanout_y
                used_y[li] = np.where(pick, used_y[li] * p, used_y[li])
            fac[(d, (kind, li))] = np.where(pick, fac[(d, (kind, li))] * p, fac[(d, (kind, li))])
            placed |= pick
        top = ("t", L - 1)                      # whatever did not fit goes outermost
        fac[(d, top)] = np.where(placed, fac[(d, top)], fac[(d, top)] * p)
    cols: dict[str, Any] = {}
    for d in info.dims:
        for li in range(L - 1):
            cols[info.temporal[(li, d)]] = fac.get((d, ("t", li)), np.ones(n, dtype=np.int64))
        for kind, group in (("x", info.sx), ("y", info.sy)):
            for (li, dd), name in group.items():
                if dd == d:
                    cols[name] = fac.get((d, (kind, li)), np.ones(n, dtype=np.int64))
    for name in info.order.values():
        keys = rng.random((n, len(info.dims)))
        perm = np.argsort(keys, axis=1)
        dims = np.array(info.dims, dtype=object)
        col = np.empty(n, dtype=object)
        col[:] = [tuple(r) for r in dims[perm]]
        cols[name] = col
    for name in info.keep.values():
        cols[name] = rng.random(n) < 0.5
    return cols


def _dataflow_constraints(layer: Layer, arch: ArchSpec, info: MappingSpaceInfo) -> list[Constraint]:
    if info.dataflow not in DATAFLOW_RULES:
        raise ValueError(f"unknown dataflow {info.dataflow!r} (known: {sorted(DATAFLOW_RULES)})")
    rows_cls, cols_cls, pe_cls, _ = DATAFLOW_RULES[info.dataflow]
    classes = dim_classes(layer)
    pinned = []
    for (_li, d), name in info.sy.items():
        if classes[d] != rows_cls:
            pinned.append(name)
    for (_li, d), name in info.sx.items():
        if classes[d] != cols_cls:
            pinned.append(name)
    for d in info.dims:
        if classes[d] != pe_cls:
            pinned.append(info.temporal[(0, d)])
    if not pinned:
        return []
    return [Constraint(f"dataflow_{info.dataflow}",
                       lambda p, pinned=pinned: np.all([p[n] == 1 for n in pinned], axis=0))]


def keep_array(info: MappingSpaceInfo, cols: MappingT[str, np.ndarray] | None = None, n: int = 1) -> np.ndarray:
    """``(n, L, 3)``: whether each level keeps W, I, O -- the backing store keeps all; a
    systolic PE keeps the dataflow's stationary operand only; with bypass parameters in
    ``cols`` (``keep_<lv>_<op>``) those decide; otherwise every operand a level can hold."""
    arch = info.arch
    L = arch.n_levels
    keep = np.zeros((n, L, 3), dtype=bool)
    keep[:, L - 1, :] = True
    for li in range(L - 1):
        for t, op in enumerate(OPERANDS):
            if op not in arch.levels[li].tensors:
                continue
            if info.dataflow is not None and li == 0:
                keep[:, li, t] = op == DATAFLOW_RULES[info.dataflow][3]
            elif cols is not None and (li, op) in info.keep:
                keep[:, li, t] = np.asarray(cols[info.keep[(li, op)]], dtype=bool)
            else:
                keep[:, li, t] = True
    return keep


def _capacity_constraints(layer: Layer, arch: ArchSpec, info: MappingSpaceInfo) -> list[Constraint]:
    out = []
    L = arch.n_levels
    for li in range(L - 1):
        lv = arch.levels[li]
        if lv.capacity_words is None:
            continue

        def fits(p: MappingT[str, np.ndarray], li: int = li, lv: Any = lv) -> np.ndarray:
            n = len(next(iter(p.values())))
            ext = {d: np.ones(n, dtype=np.int64) for d in layer.dims}
            for lj in range(li + 1):
                for d in info.dims:
                    for group in (info.temporal, info.sx, info.sy):
                        name = group.get((lj, d))
                        if name is not None:
                            ext[d] = ext[d] * p[name]
            keep = keep_array(info, p, n)[:, li, :]
            words = []
            for op in OPERANDS:
                t = layer.tensor(op)
                w = np.ones(n, dtype=np.int64)
                for axis in t.axes:
                    w = w * (1 + sum(c * (ext[d] - 1) for d, c in axis))
                words.append(w)
            held = [np.where(keep[:, k], words[k], 0) for k in range(3)]
            if lv.shared:
                return sum(held) <= lv.capacity_of("W")
            return reduce(np.logical_and, [held[k] <= lv.capacity_of(op) for k, op in enumerate(OPERANDS)])

        out.append(Constraint(f"capacity_{lv.name}", fits))
    return out


def batch_from_columns(layer: Layer, arch: ArchSpec, cols: MappingT[str, np.ndarray], *,
                       factors: str = "divisors", bypass: bool = False) -> MappingBatch:
    """Column arrays of a :func:`mapping_space` -> :class:`MappingBatch` (vectorized)."""
    info = MappingSpaceInfo(layer, arch, factors, bypass)
    dims = layer.dim_names
    n = len(next(iter(cols.values()))) if cols else 1
    L, D = arch.n_levels, len(dims)
    T = np.ones((n, L, D), dtype=np.int64)
    SX = np.ones((n, L, D), dtype=np.int64)
    SY = np.ones((n, L, D), dtype=np.int64)
    for (li, d), name in info.temporal.items():
        T[:, li, dims.index(d)] = cols[name]
    for (li, d), name in info.sx.items():
        SX[:, li, dims.index(d)] = cols[name]
    for (li, d), name in info.sy.items():
        SY[:, li, dims.index(d)] = cols[name]
    inner = (T * SX * SY).prod(axis=1)
    sizes = np.array([layer.dims[d] for d in dims])
    T[:, L - 1, :] = -(-sizes[None, :] // inner)                   # ceil: exact for divisors
    order = np.tile(np.arange(D, dtype=np.int64), (n, L, 1))
    for li, name in info.order.items():
        perms = cols[name]
        uniq: dict[tuple, np.ndarray] = {}
        idx_rows = np.empty((n, D), dtype=np.int64)
        listed = set(info.dims)
        for r, perm in enumerate(perms):
            key = tuple(perm)
            row = uniq.get(key)
            if row is None:
                seq = [dims.index(d) for d in key] + [dims.index(d) for d in dims if d not in listed]
                row = uniq[key] = np.array(seq, dtype=np.int64)
            idx_rows[r] = row
        order[:, li, :] = idx_rows
    keep = keep_array(info, cols, n)
    return MappingBatch(dims, T, SX, SY, order, keep)


def joint_mapping_space(hardware: DesignSpace, accelerator: Any, workload: Sequence[Layer] | str, *,
                        fixed: MappingT[str, Any] | None = None) -> JointSpace:
    """Hardware space x every layer's mapping space, flattened: a joint point holds the
    hardware parameters and ``L<i>.<param>`` for layer ``i``'s mapping (the flattened
    view of nested co-design, for one optimizer over everything; its dimension grows
    with the layers).

    Args:
        hardware: the hardware space.
        accelerator: a class with ``from_point`` (or a registered name) whose ``to_arch()``
            gives the architecture of a hardware point.
        workload: layers, or a zoo name (:func:`mappers.zoo.resolve`).
        fixed: parameters merged under every hardware point before it is built.
    """
    builder = getattr(resolve_accelerator(accelerator), "from_point", resolve_accelerator(accelerator))
    layers = zoo.resolve(workload)
    base = dict(fixed or {})

    def software(hw: dict) -> DesignSpace:
        arch = builder({**base, **hw}).to_arch()
        return product({f"L{i}": mapping_space(layer, arch) for i, layer in enumerate(layers)})

    return JointSpace(hardware, software)
