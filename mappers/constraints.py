"""Mapping constraints: a declarative restriction of a layer's mapping space.

In the spirit of Timeloop's *mapspace constraints* (a ``constraints`` list of
``spatial`` / ``temporal`` / ``bypass`` entries per storage level, each restricting which
dimensions may be factored there, to which factors, and which data spaces the level
keeps), a :class:`MappingConstraints` is a tuple of :class:`LevelConstraints`, one per
constrained storage level (named or indexed as in the architecture, innermost first).
For that level it may say:

* ``temporal``, ``spatial_x``, ``spatial_y``: the dimensions that may have a factor > 1
  in the level's temporal loops, or across its X / Y fanout (``None``: any dimension;
  an empty set: none);
* ``temporal_factors``, ``spatial_x_factors``, ``spatial_y_factors``: exact factors of
  some dimensions there (Timeloop's ``factors: R=3``), and ``max_temporal``,
  ``max_spatial_x``, ``max_spatial_y``: caps on them;
* ``keep``: exactly the operands (``"W"``, ``"I"``, ``"O"``) the level stores; the
  others bypass it (Timeloop's ``keep`` / ``bypass``). ``None``: the mapper's usual
  bypass choice.

Loop orders cannot be constrained: the exact mapper's order search (:mod:`mappers.orders`)
is exact over the whole order space of each level, and restricting it is not offered
(the row-stationary set, :mod:`mappers.row_stationary`, does not need it: the order of
the innermost level changes no count).

A constraint set only *removes* mappings, so every mapper that honours it
(:class:`mappers.exact.ExactMapper`, :func:`mappers.exhaustive.enumerate_mappings`)
searches a subset of its usual space.

A dataflow that depends on the layer and the architecture (row-stationary fixes ``S`` to
the filter width of *this* layer) is a **rule**: a function ``(layer, arch) ->
MappingConstraints``. Rules are registered by name in :data:`RULES` (entry-point group
``coexplore.constraint_rules``; ``row-stationary`` built in), so a mapper spec can say
``{"name": "exact", "constraints": "row-stationary"}``; :func:`constraints_for` turns a
set, a rule or a rule's name into the set for one layer. :meth:`MappingConstraints.resolve` checks a set
against a layer and an architecture (unknown level, dimension or operand, operands the
level cannot hold, fixed factors where the fanout or the dimension has no room: a
``ValueError`` naming the parameter and value) and turns it into the arrays
(:class:`ResolvedConstraints`) the mappers use; :func:`satisfies` checks mappings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from collections.abc import Mapping as MappingT
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from design_space.registry import Registry
from mappers.base import MappingRuleRefusal, NoLegalMapping
from mappers.mapping import Mapping, MappingBatch
from mappers.workloads import Layer

__all__ = ["KINDS", "RULES", "ConstraintSpec", "LevelConstraints", "MappingConstraints", "ResolvedConstraints",
           "check_constraint_spec", "constraints_for", "satisfies"]

KINDS = ("temporal", "spatial_x", "spatial_y")
"""The loop kinds a level's constraints restrict, in the order of the resolved arrays."""

_ANY = np.iinfo(np.int64).max


def _dim_set(who: str, value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise ValueError(f"{who} must be a collection of dimension names or None, got the string {value!r} "
                         f"(write [{value!r}] for one dimension)")
    out = frozenset(value)
    bad = [d for d in out if not isinstance(d, str)]
    if bad:
        raise ValueError(f"{who} must hold dimension names, got {sorted(map(repr, bad))}")
    return out


def _factor_items(who: str, value: Any) -> tuple[tuple[str, int], ...]:
    if value is None:
        return ()
    items = value.items() if isinstance(value, MappingT) else value
    out: dict[str, int] = {}
    for d, f in items:
        if not isinstance(d, str):
            raise ValueError(f"{who} keys must be dimension names, got {d!r}")
        if isinstance(f, bool) or not isinstance(f, int | np.integer) or f < 1:
            raise ValueError(f"{who}[{d!r}] must be a positive integer, got {f!r}")
        out[d] = int(f)
    return tuple(sorted(out.items()))


@dataclass(frozen=True)
class LevelConstraints:
    """What one storage level's loops and storage may be (see the module docstring).

    Attributes:
        level: the level's name (``"GLB"``) or index (0 = innermost).
        temporal, spatial_x, spatial_y: dimensions that may have a factor > 1 in that
            kind of loop at the level (``None``: any).
        temporal_factors, spatial_x_factors, spatial_y_factors: dimension -> exact factor.
        max_temporal, max_spatial_x, max_spatial_y: dimension -> largest factor.
        keep: the operands the level stores, exactly (``None``: not constrained); a string
            such as ``"IO"`` is read letter by letter.
    """

    level: str | int
    temporal: frozenset[str] | None = None
    spatial_x: frozenset[str] | None = None
    spatial_y: frozenset[str] | None = None
    temporal_factors: tuple[tuple[str, int], ...] = ()
    spatial_x_factors: tuple[tuple[str, int], ...] = ()
    spatial_y_factors: tuple[tuple[str, int], ...] = ()
    max_temporal: tuple[tuple[str, int], ...] = ()
    max_spatial_x: tuple[tuple[str, int], ...] = ()
    max_spatial_y: tuple[tuple[str, int], ...] = ()
    keep: frozenset[str] | None = None

    def __post_init__(self) -> None:
        lv = self.level
        if isinstance(lv, bool) or not isinstance(lv, str | int | np.integer):
            raise ValueError(f"LevelConstraints.level must be a level name or index, got {lv!r}")
        who = f"LevelConstraints({lv!r})"
        for kind in KINDS:
            object.__setattr__(self, kind, _dim_set(f"{who}.{kind}", getattr(self, kind)))
            for name in (f"{kind}_factors", f"max_{kind}"):
                object.__setattr__(self, name, _factor_items(f"{who}.{name}", getattr(self, name)))
        if self.keep is not None:
            keep = frozenset(self.keep)
            bad = sorted(op for op in keep if op not in OPERANDS)
            if bad:
                raise ValueError(f"{who}.keep names unknown operands {bad} (operands: {list(OPERANDS)})")
            object.__setattr__(self, "keep", keep)

    def factors(self, kind: str) -> dict[str, int]:
        """The exact factors of loop kind ``kind`` (one of :data:`KINDS`)."""
        return dict(getattr(self, f"{kind}_factors"))

    def caps(self, kind: str) -> dict[str, int]:
        """The caps on factors of loop kind ``kind``."""
        return dict(getattr(self, f"max_{kind}"))


@dataclass(frozen=True)
class ResolvedConstraints:
    """A :class:`MappingConstraints` for one layer on one architecture, as arrays over
    ``(level, dimension)`` (dimensions in ``layer.dim_names`` order): each loop's factor
    must lie in ``[lo, hi]`` (``lo[k]`` / ``hi[k]`` for kind ``KINDS[k]``, ``(3, L, D)``);
    ``keep_fixed[l]`` levels store exactly ``keep[l]`` (``(L, 3)``, W I O)."""

    dims: tuple[str, ...]
    lo: np.ndarray
    hi: np.ndarray
    keep: np.ndarray
    keep_fixed: np.ndarray

    def allowed(self, kind: int, level: int, dim: int, values: Iterable[int]) -> list[int]:
        """The values among ``values`` that loop kind ``kind`` may have at ``level`` for
        dimension index ``dim``."""
        lo, hi = self.lo[kind, level, dim], self.hi[kind, level, dim]
        return [v for v in values if lo <= v <= hi]

    def factors_ok(self, temporal: np.ndarray, spatial_x: np.ndarray, spatial_y: np.ndarray) -> np.ndarray:
        """``(n,)``: the factors (``(n, L, D)`` each) lie within the bounds everywhere."""
        ok = np.ones(len(temporal), dtype=bool)
        for k, f in enumerate((temporal, spatial_x, spatial_y)):
            ok &= ((f >= self.lo[k][None]) & (f <= self.hi[k][None])).all(axis=(1, 2))
        return ok

    def keep_ok(self, keep: np.ndarray) -> np.ndarray:
        """``(n,)``: the bypass choices (``(n, L, 3)``) store exactly the fixed operands."""
        return ((keep == self.keep[None]) | ~self.keep_fixed[None, :, None]).all(axis=(1, 2))

    def apply_keep(self, keep: np.ndarray) -> np.ndarray:
        """``keep`` (``(..., L, 3)``) with the fixed levels' operands set as constrained."""
        return np.where(self.keep_fixed[:, None], self.keep, keep)

    @property
    def unconstrained(self) -> bool:
        return bool((self.lo == 1).all() and (self.hi == _ANY).all() and not self.keep_fixed.any())


@dataclass(frozen=True)
class MappingConstraints:
    """A constraint set on mappings (see the module docstring): one
    :class:`LevelConstraints` per constrained level (at most one per level).

    Build with :meth:`of` for short: ``MappingConstraints.of(RF=dict(temporal=["S", "C", "K"]))``.
    """

    levels: tuple[LevelConstraints, ...] = ()
    name: str = ""

    def __post_init__(self) -> None:
        levels = tuple(self.levels)
        bad = [lc for lc in levels if not isinstance(lc, LevelConstraints)]
        if bad:
            raise ValueError(f"MappingConstraints.levels must hold LevelConstraints, got {bad[0]!r}")
        object.__setattr__(self, "levels", levels)

    @classmethod
    def of(cls, name: str = "", **levels: MappingT[str, Any]) -> MappingConstraints:
        """``MappingConstraints.of(RF=dict(temporal=["S", "C", "K"], keep="WIO"), GLB=...)``:
        one keyword per level name, its :class:`LevelConstraints` fields as a dict."""
        return cls(tuple(LevelConstraints(lv, **kw) for lv, kw in levels.items()), name)

    def resolve(self, layer: Layer, arch: ArchSpec) -> ResolvedConstraints:
        """The arrays for ``layer`` on ``arch``; a ``ValueError`` naming the offending
        parameter and value if the set does not fit them."""
        dims = layer.dim_names
        L, D = arch.n_levels, len(dims)
        names = [lv.name for lv in arch.levels]
        lo = np.ones((3, L, D), dtype=np.int64)
        hi = np.full((3, L, D), _ANY, dtype=np.int64)
        keep = np.zeros((L, 3), dtype=bool)
        keep_fixed = np.zeros(L, dtype=bool)
        seen: dict[int, str | int] = {}
        for lc in self.levels:
            li = _level_index(lc.level, names, arch.name)
            who = f"constraint on level {names[li]!r}"
            if li in seen:
                raise ValueError(f"{who}: given twice (as {seen[li]!r} and {lc.level!r})")
            seen[li] = lc.level
            lv = arch.levels[li]
            for k, kind in enumerate(KINDS):
                allowed = getattr(lc, kind)
                fixed, caps = lc.factors(kind), lc.caps(kind)
                for what, ds in ((kind, allowed or ()), (f"{kind}_factors", fixed), (f"max_{kind}", caps)):
                    unknown = sorted(d for d in ds if d not in layer.dims)
                    if unknown:
                        raise ValueError(f"{who}: {what} names unknown dimensions {unknown} "
                                         f"(layer {layer.name!r} has {list(dims)})")
                if allowed is not None:
                    for j, d in enumerate(dims):
                        if d not in allowed:
                            hi[k, li, j] = 1
                for d, f in fixed.items():
                    j = dims.index(d)
                    if f > 1 and hi[k, li, j] == 1:
                        raise ValueError(f"{who}: {kind}_factors[{d!r}] = {f} but {kind} does not allow {d!r}")
                    if f > layer.dims[d]:
                        raise ValueError(f"{who}: {kind}_factors[{d!r}] = {f} exceeds the size "
                                         f"{layer.dims[d]} of {d!r}")
                    lo[k, li, j] = hi[k, li, j] = f
                for d, c in caps.items():
                    j = dims.index(d)
                    if lo[k, li, j] > c:
                        raise ValueError(f"{who}: max_{kind}[{d!r}] = {c} is below its fixed factor {lo[k, li, j]}")
                    hi[k, li, j] = min(hi[k, li, j], c)
                if kind != "temporal":
                    fan = lv.fanout_x if kind == "spatial_x" else lv.fanout_y
                    need = int(np.prod(lo[k, li]))
                    if need > fan:
                        raise ValueError(f"{who}: {kind}_factors {fixed} need {need} > fanout_{kind[-1]} = {fan}")
            if lc.keep is not None:
                if li == L - 1 and lc.keep != frozenset(OPERANDS):
                    raise ValueError(f"{who}: keep={sorted(lc.keep)}, but the backing store keeps every operand")
                cannot = sorted(op for op in lc.keep if op not in lv.tensors)
                if cannot:
                    raise ValueError(f"{who}: keep names {cannot}, which {names[li]!r} cannot hold "
                                     f"(it holds {sorted(lv.tensors)})")
                keep[li] = [op in lc.keep for op in OPERANDS]
                keep_fixed[li] = True
        return ResolvedConstraints(dims, lo, hi, keep, keep_fixed)


def _level_index(level: str | int, names: Sequence[str], arch_name: str) -> int:
    if isinstance(level, str):
        if level not in names:
            raise ValueError(f"constraint names unknown level {level!r} (architecture {arch_name!r} has {list(names)})")
        return list(names).index(level)
    if not 0 <= int(level) < len(names):
        raise ValueError(f"constraint level index {level} is out of range (architecture {arch_name!r} has "
                         f"{len(names)} levels, 0 = {names[0]!r} innermost)")
    return int(level)


def satisfies(constraints: MappingConstraints, mappings: Mapping | MappingBatch | Sequence[Mapping],
              layer: Layer, arch: ArchSpec) -> np.ndarray:
    """``(n,)`` bool: whether each mapping (one :class:`Mapping`, a sequence of them, or a
    :class:`MappingBatch` of ``layer``) meets ``constraints`` on ``arch``: every factor
    within its bounds and every fixed level storing exactly its operands."""
    if isinstance(mappings, Mapping):
        mappings = [mappings]
    batch = mappings if isinstance(mappings, MappingBatch) else MappingBatch.from_mappings(layer, arch, mappings)
    if tuple(batch.dims) != tuple(layer.dim_names):
        raise ValueError(f"satisfies: the batch's dimensions {list(batch.dims)} are not those of layer "
                         f"{layer.name!r} ({list(layer.dim_names)})")
    rc = constraints.resolve(layer, arch)
    return rc.factors_ok(batch.temporal, batch.spatial_x, batch.spatial_y) & rc.keep_ok(batch.keep)



ConstraintRule = Callable[[Layer, ArchSpec], MappingConstraints]

RULES: Registry[ConstraintRule] = Registry("constraint rule", "coexplore.constraint_rules", {
    "row-stationary": "mappers.row_stationary:row_stationary",
})
"""Constraint rules by name: ``(layer, arch) -> MappingConstraints``."""

ConstraintSpec = MappingConstraints | str | Callable[[Layer, ArchSpec], MappingConstraints] | None
"""What a mapper's ``constraints`` option may be: a set, a registered rule's name, a rule,
or ``None`` (no constraints)."""


def check_constraint_spec(owner: str, spec: Any) -> None:
    """Raise ``ValueError`` naming ``owner`` if ``spec`` is not a :data:`ConstraintSpec`
    (an unknown rule name lists the registered ones)."""
    if spec is None or isinstance(spec, MappingConstraints) or (callable(spec) and not isinstance(spec, str)):
        return
    if isinstance(spec, str):
        if spec not in RULES:
            raise ValueError(f"{owner}.constraints: unknown constraint rule {spec!r} (registered: {RULES.names()})")
        return
    raise ValueError(f"{owner}.constraints must be a MappingConstraints, a constraint rule's name, a rule "
                     f"(layer, arch) -> MappingConstraints, or None; got {spec!r}")


def constraints_for(spec: Any, layer: Layer, arch: ArchSpec) -> MappingConstraints:
    """The constraint set ``spec`` (a :data:`ConstraintSpec`) gives ``layer`` on ``arch``;
    ``None`` gives the empty set. A rule that refuses them (a ``ValueError``) raises
    :class:`~mappers.base.MappingRuleRefusal`: no mapping under the rule."""
    if spec is None:
        return MappingConstraints()
    if isinstance(spec, MappingConstraints):
        return spec
    rule = RULES.get(spec) if isinstance(spec, str) else spec
    try:
        out = rule(layer, arch)
    except NoLegalMapping:
        raise
    except ValueError as e:   # the rule's refusal of this layer on this architecture
        name = spec if isinstance(spec, str) else getattr(rule, "__name__", repr(rule))
        raise MappingRuleRefusal(f"constraint rule {name!r} refuses layer {layer.name!r} on "
                                 f"{arch.name!r}: {e}") from None
    if not isinstance(out, MappingConstraints):
        raise ValueError(f"constraint rule {spec!r} returned {out!r} for layer {layer.name!r}, not a MappingConstraints")
    return out
