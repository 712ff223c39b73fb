"""Mappings of a layer onto an architecture, one and many at a time.

A :class:`Mapping` says, for every storage level ``l`` of an
:class:`~accelerators.arch.ArchSpec` (innermost first):

* ``temporal[l]``: dimension -> factor of the temporal loops at that level,
* ``spatial_x[l]`` / ``spatial_y[l]``: dimension -> factor unrolled across the level's
  ``fanout_x`` / ``fanout_y`` children,
* ``order[l]``: the temporal loops' order, outermost first (dimensions not listed follow
  in the layer's canonical order),
* ``bypass[l]``: operands not kept at the level (beyond those it cannot hold at all).

The loop nest it denotes, outermost first, is: for each level from the backing store
down to level 0, that level's temporal loops in ``order``, then its X spatial loops, then
its Y spatial loops; the MAC is innermost. Level ``l`` keeps, per instance, the tile of
every operand touched by the loops *inside* it (its own temporal and spatial loops and
everything below); the loops above it decide how often that tile changes.

**Non-divisor factors are padding.** The product of a dimension's factors over all
levels (``padded_dims``) may exceed its size: the layer is then evaluated as if padded
to that size -- the padded iterations are executed (wasted cycles are counted in latency,
in energy and in utilization) and padded operand words are moved like real ones. This
gives ceil-folding ("edge tiles") as in SCALE-Sim. :meth:`Mapping.violations` rejects
gratuitous padding: dropping one iteration of the dimension's outermost loop must leave
it short of the size, so the waste is always less than one outer step.

:class:`MappingBatch` holds B mappings of one layer as integer arrays, the form the
vectorized cost model (:mod:`evaluators.loopnest`) consumes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping as MappingT
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from mappers.workloads import Layer

Factors = MappingT[str, int]


def _freeze_factors(levels: Sequence[Factors], n: int, what: str) -> tuple[dict[str, int], ...]:
    out = tuple(dict(x) for x in levels)
    if len(out) != n:
        raise ValueError(f"mapping: {what} has {len(out)} levels, the architecture has {n}")
    for lvl in out:
        for d, f in lvl.items():
            if not isinstance(f, int | np.integer) or f < 1:
                raise ValueError(f"mapping: {what} factor {d}={f!r} must be a positive integer")
    return tuple({d: int(f) for d, f in lvl.items()} for lvl in out)


@dataclass(frozen=True)
class Mapping:
    """One mapping (see module docstring). Build with :meth:`create`."""

    temporal: tuple[dict[str, int], ...]
    spatial_x: tuple[dict[str, int], ...]
    spatial_y: tuple[dict[str, int], ...]
    order: tuple[tuple[str, ...], ...]
    bypass: tuple[frozenset[str], ...] = field(default=())

    @classmethod
    def create(
        cls,
        arch: ArchSpec,
        temporal: Sequence[Factors] | None = None,
        spatial_x: Sequence[Factors] | None = None,
        spatial_y: Sequence[Factors] | None = None,
        order: Sequence[Sequence[str]] | None = None,
        bypass: Sequence[set[str] | frozenset[str] | Sequence[str]] | None = None,
    ) -> Mapping:
        n = arch.n_levels
        empty: list[dict[str, int]] = [{} for _ in range(n)]
        return cls(
            _freeze_factors(temporal if temporal is not None else empty, n, "temporal"),
            _freeze_factors(spatial_x if spatial_x is not None else empty, n, "spatial_x"),
            _freeze_factors(spatial_y if spatial_y is not None else empty, n, "spatial_y"),
            tuple(tuple(o) for o in (order if order is not None else [() for _ in range(n)])),
            tuple(frozenset(b) for b in (bypass if bypass is not None else [() for _ in range(n)])),
        )

    @property
    def n_levels(self) -> int:
        return len(self.temporal)

    def full_order(self, level: int, dims: Sequence[str]) -> tuple[str, ...]:
        """The level's loop order over all ``dims`` (listed first, then the rest)."""
        listed = [d for d in self.order[level] if d in dims] if level < len(self.order) else []
        return tuple(listed) + tuple(d for d in dims if d not in listed)

    def factor(self, dim: str) -> int:
        """Product of every factor of ``dim`` (its padded size)."""
        return math.prod(
            lvl.get(dim, 1) for group in (self.temporal, self.spatial_x, self.spatial_y) for lvl in group
        )

    def padded_dims(self, layer: Layer) -> dict[str, int]:
        return {d: self.factor(d) for d in layer.dims}

    def keeps(self, arch: ArchSpec, level: int, operand: str) -> bool:
        """Whether ``operand`` is stored at ``level`` (the backing store keeps all)."""
        if level == arch.n_levels - 1:
            return True
        byp = self.bypass[level] if level < len(self.bypass) else frozenset()
        return operand in arch.levels[level].tensors and operand not in byp

    def violations(self, layer: Layer, arch: ArchSpec, *, check_capacity: bool = True) -> list[str]:
        """Every reason this mapping is illegal for ``layer`` on ``arch`` (empty = legal)."""
        out: list[str] = []
        n = arch.n_levels
        if self.n_levels != n:
            return [f"mapping has {self.n_levels} levels, architecture {arch.name!r} has {n}"]
        for group, what in ((self.temporal, "temporal"), (self.spatial_x, "spatial_x"),
                            (self.spatial_y, "spatial_y")):
            for li, lvl in enumerate(group):
                for d in lvl:
                    if d not in layer.dims:
                        out.append(f"{what}[{arch.levels[li].name}] names unknown dimension {d!r}")
        for li, o in enumerate(self.order):
            bad = [d for d in o if d not in layer.dims]
            if bad or len(set(o)) != len(o):
                out.append(f"order[{arch.levels[li].name}] {list(o)} has unknown or repeated dimensions")
        for li, level in enumerate(arch.levels):
            for fan, group, what in ((level.fanout_x, self.spatial_x, "X"), (level.fanout_y, self.spatial_y, "Y")):
                used = math.prod(group[li].values())
                if used > fan:
                    out.append(f"spatial {what} at {level.name!r} uses {used} > fanout {fan}")
            if li < len(self.bypass):
                for op in self.bypass[li]:
                    if op not in OPERANDS:
                        out.append(f"bypass[{level.name}] names unknown operand {op!r}")
        if self.bypass and len(self.bypass) == n and self.bypass[-1]:
            out.append(f"the backing store {arch.levels[-1].name!r} cannot be bypassed")
        for d, size in layer.dims.items():
            pad = self.factor(d)
            if pad < size:
                out.append(f"dimension {d}: factors multiply to {pad} < size {size}")
            elif pad > size:
                outer = self._outermost_factor(d)
                if pad - pad // outer >= size:
                    out.append(f"dimension {d}: factors multiply to {pad}, padding more than one "
                               f"outer step over size {size}")
        if check_capacity and not out:
            for li, level in enumerate(arch.levels[:-1]):
                words = {op: tile_words(self, layer, li, op) for op in OPERANDS if self.keeps(arch, li, op)}
                if level.shared:
                    if sum(words.values()) > level.capacity_of("W"):
                        out.append(f"tiles at {level.name!r} need {sum(words.values())} words > "
                                   f"capacity {level.capacity_words}")
                else:
                    for op, w in words.items():
                        if w > level.capacity_of(op):
                            out.append(f"{op} tile at {level.name!r} needs {w} words > capacity "
                                       f"{level.capacity_of(op):g}")
        return out

    def _outermost_factor(self, dim: str) -> int:
        for li in range(self.n_levels - 1, -1, -1):
            for group in (self.temporal, self.spatial_x, self.spatial_y):
                f = group[li].get(dim, 1)
                if f > 1:
                    return f
        return 1


def tile_dims(mapping: Mapping, layer: Layer, level: int) -> dict[str, int]:
    """Per-instance tile of ``level``: each dimension's extent over the loops at levels
    ``<= level`` (temporal and spatial)."""
    out = dict.fromkeys(layer.dims, 1)
    for li in range(level + 1):
        for group in (mapping.temporal, mapping.spatial_x, mapping.spatial_y):
            for d, f in group[li].items():
                out[d] *= f
    return out


def tile_words(mapping: Mapping, layer: Layer, level: int, operand: str) -> int:
    """Words of ``operand``'s tile held by one instance of ``level`` (bounding box)."""
    return layer.tensor(operand).words(tile_dims(mapping, layer, level))


@dataclass(frozen=True)
class MappingBatch:
    """``B`` mappings of one layer as arrays (``D`` = the layer's dims in canonical order,
    ``L`` = levels):

    * ``temporal``, ``spatial_x``, ``spatial_y``: int64 ``(B, L, D)`` factors,
    * ``order``: int64 ``(B, L, D)`` the level's temporal loop order, outermost first, as
      dimension indices (a permutation of ``0..D-1`` per level),
    * ``keep``: bool ``(B, L, 3)`` whether ``W``, ``I``, ``O`` are stored at the level.
    """

    dims: tuple[str, ...]
    temporal: np.ndarray
    spatial_x: np.ndarray
    spatial_y: np.ndarray
    order: np.ndarray
    keep: np.ndarray

    def __len__(self) -> int:
        return self.temporal.shape[0]

    @property
    def n_levels(self) -> int:
        return self.temporal.shape[1]

    @classmethod
    def from_mappings(cls, layer: Layer, arch: ArchSpec, mappings: Sequence[Mapping]) -> MappingBatch:
        dims = layer.dim_names
        b, n, d = len(mappings), arch.n_levels, len(dims)
        t = np.ones((b, n, d), dtype=np.int64)
        sx = np.ones((b, n, d), dtype=np.int64)
        sy = np.ones((b, n, d), dtype=np.int64)
        order = np.tile(np.arange(d, dtype=np.int64), (b, n, 1))
        keep = np.zeros((b, n, len(OPERANDS)), dtype=bool)
        for i, m in enumerate(mappings):
            for li in range(n):
                for j, dim in enumerate(dims):
                    t[i, li, j] = m.temporal[li].get(dim, 1)
                    sx[i, li, j] = m.spatial_x[li].get(dim, 1)
                    sy[i, li, j] = m.spatial_y[li].get(dim, 1)
                for pos, dim in enumerate(m.full_order(li, dims)):
                    order[i, li, pos] = dims.index(dim)
                for k, op in enumerate(OPERANDS):
                    keep[i, li, k] = m.keeps(arch, li, op)
        return cls(dims, t, sx, sy, order, keep)

    def mapping(self, i: int) -> Mapping:
        """The ``i``-th mapping as a :class:`Mapping` (factors of 1 omitted)."""
        n = self.n_levels

        def facs(a: np.ndarray) -> list[dict[str, int]]:
            return [{d: int(a[i, li, j]) for j, d in enumerate(self.dims) if a[i, li, j] != 1} for li in range(n)]

        order = [tuple(self.dims[j] for j in self.order[i, li]) for li in range(n)]
        bypass = [frozenset(op for k, op in enumerate(OPERANDS) if not self.keep[i, li, k]) for li in range(n)]
        return Mapping(tuple(facs(self.temporal)), tuple(facs(self.spatial_x)), tuple(facs(self.spatial_y)),
                       tuple(order), tuple(bypass))

    def take(self, idx: np.ndarray | slice) -> MappingBatch:
        """The rows ``idx`` (an index array: copies; a slice: views)."""
        return MappingBatch(self.dims, self.temporal[idx], self.spatial_x[idx], self.spatial_y[idx],
                            self.order[idx], self.keep[idx])
