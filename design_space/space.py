"""`DesignSpace`: parameters + known constraints, with vectorized sampling and codecs.

Internally a batch of points is a *table*: one numpy column per parameter (inactive
entries hold the parameter's default) plus an activity mask per conditional parameter.
Sampling, constraint checks, encoding, decoding and grid enumeration all work on tables,
so their cost is a handful of array operations per parameter whatever the batch size;
only the conversion to and from ``list[dict]`` points is a Python loop.

Conditional parameters: ``Integer("rf_kib", 1, 8, active_if={"arch": ["spatial"]})``
exists only in points whose ``arch`` is ``"spatial"``. Parents must be discrete
(not ``Real`` or ``Permutation``); chains (a conditional parent) are allowed; cycles are
rejected. An inactive parameter is *absent* from a point, holds its default in constraint
columns, and encodes as 0 in every one of its columns.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from design_space.constraints import Columns, Constraint
from design_space.errors import SpaceDefinitionError, UnsatisfiableSpaceError, Violation
from design_space.parameters import (
    Integer,
    Parameter,
    Permutation,
    PowerOfTwo,
    Real,
    to_python,
    values_array,
)

Point = dict[str, Any]
SeedLike = int | np.random.Generator | np.random.SeedSequence | None


@runtime_checkable
class SpaceLike(Protocol):
    """What optimizers and studies need from a space (``DesignSpace`` and ``JointSpace``)."""

    @property
    def dim(self) -> int: ...
    def sample(self, n: int, seed: SeedLike = None) -> list[Point]: ...
    def validate(self, point: Mapping[str, Any]) -> list[Violation]: ...
    def encode(self, points: Sequence[Mapping[str, Any]]) -> np.ndarray: ...
    def decode(self, x: Any) -> list[Point]: ...
    def feasible_mask(self, points: Sequence[Mapping[str, Any]]) -> np.ndarray: ...
    def neighbors(self, point: Mapping[str, Any]) -> list[Point]: ...
    def grid(self) -> Iterator[Point]: ...
    def cardinality(self) -> int | float: ...
    def normalize(self, point: Mapping[str, Any]) -> Point: ...
    def point_key(self, point: Mapping[str, Any]) -> str: ...
    def encoding(self) -> tuple[EncodedGroup, ...]: ...
    def to_dict(self) -> dict[str, Any]: ...


def as_rng(seed: SeedLike) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


@dataclass(frozen=True)
class EncodedGroup:
    """Where one parameter lives in the encoding: ``columns`` slice, its kind and size."""

    name: str
    kind: str
    columns: slice
    n_values: int | float
    conditional: bool


@dataclass
class _Table:
    cols: dict[str, np.ndarray]
    active: dict[str, np.ndarray]
    n: int

    def take(self, idx: np.ndarray) -> _Table:
        return _Table(
            {k: v[idx] for k, v in self.cols.items()},
            {k: v[idx] for k, v in self.active.items()},
            len(idx) if idx.dtype != bool else int(idx.sum()),
        )

    @staticmethod
    def concat(tables: Sequence[_Table]) -> _Table:
        t0 = tables[0]
        return _Table(
            {k: np.concatenate([t.cols[k] for t in tables]) for k in t0.cols},
            {k: np.concatenate([t.active[k] for t in tables]) for k in t0.active},
            sum(t.n for t in tables),
        )


def _column(p: Parameter, values: list[Any]) -> np.ndarray:
    if isinstance(p, Integer | PowerOfTwo):
        return np.asarray(values, dtype=np.int64)
    if isinstance(p, Real):
        return np.asarray(values, dtype=np.float64)
    if isinstance(p, Permutation) or isinstance(p.default, tuple):
        out = np.empty(len(values), dtype=object)
        out[:] = [tuple(v) for v in values] if values else []
        return out
    return values_array(values)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _value_in(par: Parameter, value: Any, allowed: Sequence[Any]) -> bool:
    """Whether a (legal) value of ``par`` is one of ``allowed``, type-aware (1 != True)."""
    if par.check(value) is not None:
        return False
    v = par.normalize(value)
    return any(_same(v, par.normalize(a)) for a in allowed)


def _merge(active: np.ndarray, values: np.ndarray, fill: np.ndarray) -> np.ndarray:
    if active.all():
        return values
    if values.dtype == object or fill.dtype == object:
        out = np.empty(len(values), dtype=object)
        out[:] = list(fill)
        idx = np.flatnonzero(active)
        for i in idx:
            out[i] = values[i]
        return out
    return np.where(active, values, fill)


class DesignSpace:
    """A design space: typed parameters plus known constraints.

    Args:
        *params: :class:`~design_space.parameters.Parameter` objects (unique names).
        constraints: :class:`~design_space.constraints.Constraint` objects, all of which a
            point must satisfy.
        name: optional label used in messages and exports.
        proposal: optional ``proposal(n, rng) -> {name: array}`` drawing candidate
            points from a smarter distribution than independent uniform draws (e.g. a
            mapping space assigns prime factors to loops so that factor products divide
            by construction). Candidates still pass every known constraint; the space
            is the same set, only ``sample`` draws differently. Spaces with a proposal
            cannot be saved to YAML.
        repair: optional ``repair(points) -> [point | None, ...]`` that turns points
            violating a known constraint into nearby ones that may not (e.g. a schedule space shrinks
            tile factors that no longer fit after a move changed which loop is spatial).
            :meth:`neighbors` repairs the candidates that violate a constraint and keeps
            the repaired ones that are feasible, so a local search can cross between
            regions that one-parameter moves do not connect. Like a proposal, it makes
            the space unsavable to YAML, and composed spaces do not carry it.

    Raises:
        SpaceDefinitionError: duplicate names, unknown/illegal/cyclic conditions, a
            constraint expression naming an unknown parameter.
    """

    def __init__(
        self,
        *params: Parameter,
        constraints: Sequence[Constraint] = (),
        name: str | None = None,
        proposal: Any = None,
        repair: Any = None,
    ) -> None:
        if len(params) == 1 and isinstance(params[0], list | tuple):
            params = tuple(params[0])
        for p in params:
            if not isinstance(p, Parameter):
                raise SpaceDefinitionError(
                    f"DesignSpace: expected Parameter objects, got {p!r}"
                )
        names = [p.name for p in params]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise SpaceDefinitionError(f"DesignSpace: duplicate parameter names {dup}")
        self.params: tuple[Parameter, ...] = tuple(params)
        self.name = name
        self.proposal = proposal
        self.repair = repair
        self._by_name = {p.name: p for p in params}
        self._check_conditions()
        self._order = self._topological_order()
        cnames = [c.name for c in constraints]
        cdup = sorted({n for n in cnames if cnames.count(n) > 1})
        if cdup:
            raise SpaceDefinitionError(f"DesignSpace: duplicate constraint names {cdup}")
        for c in constraints:
            if not isinstance(c, Constraint):
                raise SpaceDefinitionError(f"DesignSpace: expected Constraint objects, got {c!r}")
            unknown = sorted((c.names or set()) - set(names))
            if unknown:
                raise SpaceDefinitionError(
                    f"constraint {c.name!r} refers to unknown parameter(s) {unknown} "
                    f"(parameters: {names})",
                    field="expr",
                )
        self.constraints: tuple[Constraint, ...] = tuple(constraints)
        groups, start = [], 0
        for p in self.params:
            groups.append(
                EncodedGroup(p.name, p.kind, slice(start, start + p.width), p.size(), bool(p.active_if))
            )
            start += p.width
        self._groups = tuple(groups)
        self._dim = start

    # ---------------------------------------------------------------- structure
    def _check_conditions(self) -> None:
        for p in self.params:
            for parent, allowed in p.active_if:
                if parent not in self._by_name:
                    raise SpaceDefinitionError(
                        f"parameter {p.name!r}: active_if refers to unknown parameter "
                        f"{parent!r}",
                        field="active_if",
                    )
                par = self._by_name[parent]
                if isinstance(par, Real | Permutation):
                    raise SpaceDefinitionError(
                        f"parameter {p.name!r}: active_if parent {parent!r} must be discrete "
                        f"(not {par.kind})",
                        field="active_if",
                    )
                for v in allowed:
                    if par.check(v) is not None:
                        raise SpaceDefinitionError(
                            f"parameter {p.name!r}: active_if value {v!r} is not a value of "
                            f"{parent!r} ({par.describe()})",
                            field="active_if",
                        )

    def _topological_order(self) -> tuple[Parameter, ...]:
        done: list[Parameter] = []
        placed: set[str] = set()
        remaining = list(self.params)
        while remaining:
            progress = False
            for p in list(remaining):
                if all(par in placed for par in p.parents):
                    done.append(p)
                    placed.add(p.name)
                    remaining.remove(p)
                    progress = True
            if not progress:
                raise SpaceDefinitionError(
                    "active_if conditions form a cycle among "
                    f"{sorted(p.name for p in remaining)}"
                )
        return tuple(done)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    @property
    def dim(self) -> int:
        """Number of encoded columns ``d`` of :meth:`encode`."""
        return self._dim

    def __getitem__(self, name: str) -> Parameter:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"unknown parameter {name!r} (parameters: {self.names})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self.params)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self.params)

    def encoding(self) -> tuple[EncodedGroup, ...]:
        """The column layout of :meth:`encode`: one :class:`EncodedGroup` per parameter."""
        return self._groups

    @property
    def is_finite(self) -> bool:
        return all(p.is_finite for p in self.params)

    def __repr__(self) -> str:
        inner = ", ".join(f"{p.name}: {p.describe()}" for p in self.params)
        cons = f"; constraints: {[c.name for c in self.constraints]}" if self.constraints else ""
        return f"DesignSpace({inner}{cons})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DesignSpace):
            return NotImplemented
        return self.params == other.params and [c.name for c in self.constraints] == [
            c.name for c in other.constraints
        ] and [c.expression or c.predicate for c in self.constraints] == [
            c.expression or c.predicate for c in other.constraints
        ]

    __hash__ = None  # type: ignore[assignment]

    # ---------------------------------------------------------------- tables
    def _active_mask(self, p: Parameter, cols: Mapping[str, np.ndarray],
                     active: Mapping[str, np.ndarray], n: int) -> np.ndarray:
        mask = np.ones(n, dtype=bool)
        for parent, allowed in p.active_if:
            par = self._by_name[parent]
            vals = cols[parent]
            if vals.dtype == object:
                hit = np.array([_value_in(par, v, allowed) for v in vals], dtype=bool)
            else:
                hit = np.isin(vals, values_array([par.normalize(a) for a in allowed]))
            mask &= active[parent] & hit
        return mask

    def _sample_table(self, rng: np.random.Generator, n: int) -> _Table:
        cols: dict[str, np.ndarray] = {}
        active: dict[str, np.ndarray] = {}
        proposed = self.proposal(n, rng) if self.proposal is not None else {}
        for p in self._order:
            if p.name in proposed:
                v = proposed[p.name]
                vals = v if isinstance(v, np.ndarray) else _column(p, list(v))
            else:
                vals = p.sample(rng, n)
            a = self._active_mask(p, cols, active, n)
            cols[p.name] = _merge(a, vals, p.fill(n)) if p.active_if else vals
            active[p.name] = a
        return _Table(cols, active, n)

    def _constraint_masks(self, t: _Table) -> dict[str, np.ndarray]:
        view = Columns(t.cols, t.n)
        return {c.name: c.evaluate(view) for c in self.constraints}

    def _feasible(self, t: _Table) -> np.ndarray:
        ok = np.ones(t.n, dtype=bool)
        for m in self._constraint_masks(t).values():
            ok &= m
        return ok

    def _to_points(self, t: _Table) -> list[Point]:
        lists = {p.name: t.cols[p.name].tolist() for p in self.params}
        conditional = [p.name for p in self.params if p.active_if]
        act = {k: t.active[k].tolist() for k in conditional}
        perm = [p.name for p in self.params if isinstance(p, Permutation)]
        out = []
        names = self.names
        for i in range(t.n):
            pt = {k: lists[k][i] for k in names}
            for k in perm:
                pt[k] = tuple(pt[k])
            for k in conditional:
                if not act[k][i]:
                    del pt[k]
            out.append(pt)
        return out

    def _from_points(self, points: Sequence[Mapping[str, Any]], check: bool = True) -> _Table:
        n = len(points)
        cols: dict[str, np.ndarray] = {}
        active: dict[str, np.ndarray] = {}
        if check:
            for i, pt in enumerate(points):
                v = self.validate(pt, constraints=False)
                if v:
                    raise ValueError(f"point {i} is not in the space: " + "; ".join(map(str, v)))
        for p in self._order:
            a = self._active_mask(p, cols, active, n)
            d = p.default
            vals = [p.normalize(pt[p.name]) if a[i] else d for i, pt in enumerate(points)]
            cols[p.name] = _column(p, vals)
            active[p.name] = a
        return _Table(cols, active, n)

    # ---------------------------------------------------------------- sampling
    def sample(self, n: int, seed: SeedLike = None, *, max_draws: int | None = None) -> list[Point]:
        """``n`` feasible points drawn uniformly from the parameter ranges, constraints
        enforced by vectorized rejection.

        Raises:
            UnsatisfiableSpaceError: fewer than ``n`` feasible points in ``max_draws`` raw
                draws (default ``max(100_000, 100 n)``); the message names the constraint
                that rejected the most draws.
        """
        if n < 0:
            raise ValueError(f"sample: n must be >= 0, got {n}")
        return self._to_points(self._sample_feasible(n, as_rng(seed), max_draws))

    def _sample_feasible(self, n: int, rng: np.random.Generator, max_draws: int | None) -> _Table:
        if not self.constraints or n == 0:
            return self._sample_table(rng, n)
        budget = max_draws if max_draws is not None else max(100_000, 100 * n)
        parts: list[_Table] = []
        have = drawn = 0
        rejections = dict.fromkeys((c.name for c in self.constraints), 0)
        batch = max(n, 64)
        while have < n and drawn < budget:
            m = min(batch, budget - drawn)
            t = self._sample_table(rng, m)
            drawn += m
            ok = np.ones(m, dtype=bool)
            for name, mask in self._constraint_masks(t).items():
                rejections[name] += int((~mask).sum())
                ok &= mask
            idx = np.flatnonzero(ok)[: n - have]
            if len(idx):
                parts.append(t.take(idx))
                have += len(idx)
            rate = max(have, 1) / drawn
            batch = int(min(max((n - have) / rate * 1.2, 64), 1_000_000))
        if have < n:
            worst = sorted(rejections.items(), key=lambda kv: -kv[1])
            detail = ", ".join(
                f"{k!r} rejected {v} ({100.0 * v / drawn:.1f}%)" for k, v in worst
            )
            raise UnsatisfiableSpaceError(
                f"found {have} of {n} feasible points in {drawn} random samples; constraint "
                f"{worst[0][0]!r} rejects the most samples ({detail})",
                rejections,
            )
        return _Table.concat(parts)

    # ---------------------------------------------------------------- validation
    def validate(self, point: Mapping[str, Any], *, constraints: bool = True) -> list[Violation]:
        """Every reason ``point`` is not in the space (empty list = valid and feasible)."""
        out: list[Violation] = []
        if not isinstance(point, Mapping):
            return [Violation("type", "", f"a point must be a mapping, got {type(point).__name__}")]
        for k in point:
            if k not in self._by_name:
                out.append(Violation("unknown_parameter", str(k),
                                     f"unknown parameter {k!r} (parameters: {self.names})"))
        present_ok: dict[str, bool] = {}
        for p in self._order:
            active = True
            for parent, allowed in p.active_if:
                if not present_ok.get(parent) or not _value_in(
                    self._by_name[parent], point[parent], allowed
                ):
                    active = False
            if active and p.name not in point:
                out.append(Violation("missing_parameter", p.name, f"missing parameter {p.name!r}"))
                present_ok[p.name] = False
            elif not active and p.name in point:
                cond = ", ".join(f"{k} in {list(v)}" for k, v in p.active_if)
                out.append(Violation("inactive_parameter", p.name,
                                     f"parameter {p.name!r} is inactive here (active only if {cond})"))
                present_ok[p.name] = False
            elif active:
                msg = p.check(point[p.name])
                if msg:
                    out.append(Violation("out_of_range", p.name, msg))
                present_ok[p.name] = msg is None
        if out or not constraints or not self.constraints:
            return out
        t = self._from_points([point], check=False)
        for name, mask in self._constraint_masks(t).items():
            if not mask[0]:
                out.append(Violation("constraint", name, f"constraint {name!r} violated"))
        return out

    def check(self, point: Mapping[str, Any]) -> Point:
        """Return the normalized point, or raise ``ValueError`` listing every violation."""
        v = self.validate(point)
        if v:
            raise ValueError("; ".join(map(str, v)))
        return self.normalize(point)

    def feasible_mask(self, points: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Vectorized: which points are valid and satisfy every known constraint."""
        if not points:
            return np.zeros(0, dtype=bool)
        valid = np.array([not self.validate(p, constraints=False) for p in points])
        if not valid.any():
            return valid
        idx = np.flatnonzero(valid)
        t = self._from_points([points[i] for i in idx], check=False)
        valid[idx] = self._feasible(t)
        return valid

    def normalize(self, point: Mapping[str, Any]) -> Point:
        """Canonical Python values in declaration order (``list`` -> ``tuple`` for
        permutations, ``64.0`` -> ``64`` for integers); unknown keys dropped."""
        return {p.name: p.normalize(point[p.name]) for p in self.params if p.name in point}

    def point_key(self, point: Mapping[str, Any]) -> str:
        """A canonical string identifying a point (for de-duplication)."""
        return json.dumps(self.normalize(point), sort_keys=True, default=str)

    def columns(self, points: Sequence[Mapping[str, Any]], *, check: bool = True) -> dict[str, np.ndarray]:
        """The column view of ``points`` (one array per parameter, inactive entries at
        their defaults): what constraints see, for vectorized consumers."""
        return dict(self._from_points(points, check=check).cols)

    def sample_columns(self, n: int, seed: SeedLike = None) -> dict[str, np.ndarray]:
        """:meth:`sample` without building ``n`` dicts (for very large batches)."""
        return dict(self._sample_feasible(n, as_rng(seed), None).cols)

    # ---------------------------------------------------------------- codec
    def encode(self, points: Sequence[Mapping[str, Any]], *, check: bool = True) -> np.ndarray:
        """``(n, dim)`` float64 array in ``[0, 1]`` (use ``torch.from_numpy`` for BoTorch).

        Raises ``ValueError`` naming the point and parameter if a point is not in the space
        (``check=False`` skips that for points the space itself produced, e.g. samples and
        neighbours, which is several times faster).
        """
        return self._encode_table(self._from_points(points, check=check))

    def _encode_table(self, t: _Table) -> np.ndarray:
        out = np.zeros((t.n, self._dim))
        for p, g in zip(self.params, self._groups):
            if not p.width:
                continue
            a = t.active[p.name]
            if a.all():
                out[:, g.columns] = p.encode(t.cols[p.name])
            elif a.any():
                out[np.flatnonzero(a), g.columns] = p.encode(t.cols[p.name][a])
        return out

    def decode(self, x: Any) -> list[Point]:
        """Inverse of :meth:`encode`: any ``(n, dim)`` array in ``[0, 1]`` (values outside
        are clipped) maps to points with legal parameter values. Known constraints are not
        enforced here; use :meth:`feasible_mask`."""
        return self._to_points(self._decode_table(x))

    def _decode_table(self, x: Any) -> _Table:
        if hasattr(x, "detach"):
            x = x.detach().cpu().numpy()
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 1:
            x = x[None, :]
        if x.ndim != 2 or x.shape[1] != self._dim:
            raise ValueError(f"decode: expected an (n, {self._dim}) array, got shape {x.shape}")
        n = len(x)
        cols: dict[str, np.ndarray] = {}
        active: dict[str, np.ndarray] = {}
        groups = {g.name: g for g in self._groups}
        for p in self._order:
            vals = p.decode(x[:, groups[p.name].columns])
            a = self._active_mask(p, cols, active, n)
            cols[p.name] = _merge(a, vals, p.fill(n)) if p.active_if else vals
            active[p.name] = a
        return _Table(cols, active, n)

    # ---------------------------------------------------------------- enumeration
    def _expand(self, t: _Table, p: Parameter) -> _Table:
        values = p.grid_values()
        k = len(values)
        a = self._active_mask(p, t.cols, t.active, t.n)
        counts = np.where(a, k, 1)
        rows = np.repeat(np.arange(t.n), counts)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        offset = np.arange(len(rows)) - starts
        new = t.take(rows)
        grid_col = _column(p, values)
        vals = grid_col[np.minimum(offset, k - 1)]
        act = a[rows]
        new.cols[p.name] = _merge(act, vals, p.fill(len(rows))) if p.active_if else vals
        new.active[p.name] = act
        return new

    def _grid_tables(self, chunk: int) -> Iterator[_Table]:
        if not self.is_finite:
            reals = [p.name for p in self.params if not p.is_finite]
            raise SpaceDefinitionError(
                f"grid: the space is not finite (real parameters {reals}); use Ordinal values"
            )
        order = self._order

        def rec(t: _Table, k: int) -> Iterator[_Table]:
            if k == len(order):
                yield t
                return
            new = self._expand(t, order[k])
            for s in range(0, new.n, chunk):
                part = new.take(np.arange(s, min(s + chunk, new.n)))
                yield from rec(part, k + 1)

        yield from rec(_Table({}, {}, 1), 0)

    def grid(self, *, chunk: int = 65536) -> Iterator[Point]:
        """Every feasible point of a finite space exactly once, in lexicographic order of
        the parameters (declaration order, values in encoding order). Memory stays
        bounded by ``chunk`` rows."""
        for t in self._grid_tables(chunk):
            ok = self._feasible(t) if self.constraints else np.ones(t.n, dtype=bool)
            if ok.any():
                yield from self._to_points(t.take(np.flatnonzero(ok)))

    def cardinality(self, *, constrained: bool = True, max_enumerate: int = 10**7) -> int | float:
        """Number of points. Exact: combinatorial without constraints (conditionals
        included), by vectorized enumeration with them (up to ``max_enumerate`` raw
        points). ``math.inf`` if a real parameter has a non-degenerate range."""
        if not self.is_finite:
            return math.inf
        raw = self._count_unconstrained()
        if not constrained or not self.constraints:
            return raw
        if raw > max_enumerate:
            raise ValueError(
                f"cardinality: counting feasible points needs enumerating {raw} points "
                f"(> max_enumerate={max_enumerate}); pass constrained=False for the "
                "unconstrained count or raise max_enumerate"
            )
        return sum(int(self._feasible(t).sum()) for t in self._grid_tables(1 << 18))

    def _count_unconstrained(self) -> int:
        parent_names = {par for p in self.params for par in p.parents}
        t = _Table({}, {}, 1)
        for p in self._order:
            if p.name in parent_names:
                t = self._expand(t, p)
        weights = np.ones(t.n, dtype=object)
        for p in self._order:
            if p.name in parent_names:
                continue
            a = self._active_mask(p, t.cols, t.active, t.n)
            weights = weights * np.where(a, int(p.size()), 1).astype(object)
        return int(sum(weights.tolist()))

    # ---------------------------------------------------------------- local search
    def neighbors(self, point: Mapping[str, Any]) -> list[Point]:
        """Feasible points one move away: one parameter stepped to an adjacent value
        (integers +-1, powers of two x2 / /2, ordinal +-1 index, real +-5 % of the range,
        another category, an adjacent swap in a permutation). Children activated by a
        changed parent take their defaults; deactivated ones are dropped. A move that
        violates a known constraint is passed through the space's ``repair`` function,
        if it has one, and kept if the repaired point is feasible. ``point`` itself may
        violate known constraints (useful for repair) but its values must be legal."""
        bad = self.validate(point, constraints=False)
        if bad:
            raise ValueError("neighbors: " + "; ".join(map(str, bad)))
        base = self.normalize(point)
        cands: list[Point] = []
        for p in self.params:
            if p.name not in base:
                continue
            for v in p.neighbors(base[p.name]):
                new = dict(base)
                new[p.name] = v
                cands.append(self._repair_activity(new))
        if not cands:
            return []
        keep = self.feasible_mask(cands)
        if self.repair is not None and not keep.all():
            bad = np.flatnonzero(~keep)
            fixed = list(self.repair([cands[i] for i in bad]))
            idx = [i for i, f in zip(bad, fixed) if f is not None]
            fixed = [self.normalize(f) for f in fixed if f is not None]
            if fixed:
                ok = self.feasible_mask(fixed)
                for i, f, good in zip(idx, fixed, ok):
                    if good:
                        cands[i] = f
                        keep[i] = True
        seen = {self.point_key(base)}
        out = []
        for c, ok in zip(cands, keep):
            key = self.point_key(c)
            if ok and key not in seen:
                seen.add(key)
                out.append(c)
        return out

    @property
    def dependency_order(self) -> tuple[Parameter, ...]:
        """The parameters ordered so that every ``active_if`` parent comes before its
        children (declaration order otherwise): the order in which to choose values when a
        point is built one parameter at a time (see :meth:`is_active`)."""
        return self._order

    def is_active(self, param: str | Parameter, partial_point: Mapping[str, Any]) -> bool:
        """Whether ``param`` exists in a point that starts like ``partial_point``.

        Only ``param``'s ``active_if`` parents are looked at: each must be present in
        ``partial_point`` with one of the allowed values (type-aware, ``1 != True``). So
        ``partial_point`` may hold just the values chosen so far, in
        :attr:`dependency_order`. Unconditional parameters are always active.
        """
        p = self[param] if isinstance(param, str) else param
        return all(
            parent in partial_point
            and _value_in(self._by_name[parent], partial_point[parent], allowed)
            for parent, allowed in p.active_if
        )

    def _repair_activity(self, point: Point) -> Point:
        """Drop parameters made inactive, add defaults for those made active."""
        new = dict(point)
        for p in self._order:
            active = all(
                parent in new and _value_in(self._by_name[parent], new[parent], allowed)
                for parent, allowed in p.active_if
            )
            if active and p.name not in new:
                new[p.name] = p.default
            elif not active:
                new.pop(p.name, None)
        return {p.name: new[p.name] for p in self.params if p.name in new}

    # ---------------------------------------------------------------- serialization
    def to_dict(self) -> dict[str, Any]:
        """A plain-dict description (JSON/YAML serializable; read back by
        :func:`design_space.serialization.space_from_dict`).

        Raises:
            SpaceDefinitionError: the space has a custom proposal or repair function.
        """
        if self.proposal is not None or getattr(self, "repair", None) is not None:
            what = "proposal" if self.proposal is not None else "repair"
            raise SpaceDefinitionError(
                f"space {self.name or ''!r} has a custom {what} function and cannot be saved; "
                "save the function that builds it instead"
            )
        d: dict[str, Any] = {"parameters": [p.to_dict() for p in self.params]}
        if self.constraints:
            d["constraints"] = [c.to_dict() for c in self.constraints]
        if self.name:
            d["name"] = self.name
        return d

    def to_jsonable(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """A JSON-serializable copy (tuples -> lists)."""
        return {k: list(v) if isinstance(v, tuple) else to_python(v) for k, v in point.items()}
