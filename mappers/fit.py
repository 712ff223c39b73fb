"""Why a layer cannot be mapped: the smallest tiles it can have, against the buffers.

:func:`smallest_tile_shortfalls` says which on-chip level is too small for which operand,
and by how many words, when even the smallest tiles a layer can have there do not fit;
:func:`explain_unmappable` turns that into the sentence a :class:`~mappers.base.NoLegalMapping`
carries (``level 'RF' is 5 words too small for W: its smallest W tile is 16 words, it
holds 11``).

*The smallest tiles.* Level ``l`` keeps, per instance, the tile of every operand touched
by the loops at and below it (:mod:`mappers.mapping`). A tile's extent in dimension ``d``
is the product of ``d``'s factors (temporal, X and Y) over levels ``<= l``; every factor is
at least 1, and at least the lower bound a constraint set puts on it
(:class:`~mappers.constraints.ResolvedConstraints` ``lo``: row-stationary's ``S`` at the
RF, ``R`` across the array's rows). An operand's words are the product over its axes of
``1 + sum(coefficient x (extent - 1))`` (a bounding box), which never decreases when an
extent grows. So the extents made of the lower bounds alone give, at every level and for
every operand at once, a tile no legal mapping undercuts: if it does not fit, no mapping
fits, whatever the mapper.

*Which operands count.* A level stores the operands its ``keep`` says. Where a constraint
fixes it (``keep_fixed``) that is the set; otherwise a mapper without bypass choices keeps
every operand the level can hold (:func:`mappers.mapping_space.keep_array`), and a mapper
with them (``bypass=True``) might keep none, so only fixed ones count. A level with one
capacity shared by its operands is compared with the sum of what it keeps.

The check is necessary, not sufficient: tiles that fit each level's capacity can still
have no legal mapping (a fixed factor that does not divide the dimension with the others,
say), and then no shortfall is reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from mappers.constraints import constraints_for
from mappers.mapping_space import MappingSpaceInfo, keep_array
from mappers.workloads import Layer

__all__ = ["Shortfall", "explain_unmappable", "smallest_tile_shortfalls"]


@dataclass(frozen=True)
class Shortfall:
    """Level ``level`` holds ``capacity_words`` words for ``operand`` (``"W+I+O"`` for a
    shared capacity: the kept operands together), the smallest tile needs ``need_words``."""

    level: str
    operand: str
    need_words: int
    capacity_words: int

    @property
    def missing_words(self) -> int:
        return self.need_words - self.capacity_words

    def __str__(self) -> str:
        return (f"level {self.level!r} is {self.missing_words} words too small for {self.operand}: "
                f"its smallest {self.operand} tile is {self.need_words} words, it holds "
                f"{self.capacity_words}")


def _words(layer: Layer, extents: dict[str, int]) -> list[int]:
    out = []
    for op in OPERANDS:
        w = 1
        for axis in layer.tensor(op).axes:
            w *= 1 + sum(c * (extents[d] - 1) for d, c in axis)
        out.append(int(w))
    return out


def smallest_tile_shortfalls(layer: Layer, arch: ArchSpec, constraints: Any = None, *,
                             bypass: bool = False) -> list[Shortfall]:
    """Every on-chip level and operand whose smallest tile (module docstring) exceeds the
    level's capacity; empty when the smallest tiles fit everywhere.

    Raises:
        ValueError: the constraint set (or rule) refuses ``layer`` on ``arch``.
    """
    rc = constraints_for(constraints, layer, arch).resolve(layer, arch)
    dims = layer.dim_names
    lo = np.asarray(rc.lo)                                         # (3, L, D)
    base = keep_array(MappingSpaceInfo(layer, arch, "divisors", False))[0]   # (L, 3)
    out: list[Shortfall] = []
    extent = np.ones(len(dims), dtype=np.int64)
    for li in range(arch.n_levels - 1):
        extent = extent * lo[:, li, :].prod(axis=0)
        lv = arch.levels[li]
        if lv.capacity_words is None:
            continue
        words = _words(layer, {d: int(min(extent[j], layer.dims[d])) for j, d in enumerate(dims)})
        if rc.keep_fixed[li]:
            kept = rc.keep[li]
        elif bypass and arch.dataflow is None:
            kept = np.zeros(3, dtype=bool)
        else:
            kept = base[li]
        held = [w if k else 0 for w, k in zip(words, kept)]
        if lv.shared:
            cap = lv.capacity_of("W")
            if sum(held) > cap:
                ops = "+".join(op for op, k in zip(OPERANDS, kept) if k)
                out.append(Shortfall(lv.name, ops, int(sum(held)), int(cap)))
            continue
        for op, h in zip(OPERANDS, held):
            cap = lv.capacity_of(op)
            if h > cap:
                out.append(Shortfall(lv.name, op, int(h), int(cap)))
    return out


def explain_unmappable(layer: Layer, arch: ArchSpec, constraints: Any = None, *,
                       bypass: bool = False) -> str:
    """Why ``layer`` may have no legal mapping on ``arch``: the shortfalls of
    :func:`smallest_tile_shortfalls`, the constraint rule's refusal, or ``""`` when the
    smallest tiles fit (then the reason is not a capacity)."""
    try:
        short = smallest_tile_shortfalls(layer, arch, constraints, bypass=bypass)
    except ValueError as e:
        return str(e)
    return "; ".join(map(str, short))
