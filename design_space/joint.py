"""`JointSpace`: a hardware space and a software space that depends on the hardware point.

In co-design the legal mappings depend on the hardware: tile factors are bounded by the
array and buffer sizes, a loop can only be unrolled across as many PEs as exist. A
``JointSpace(hardware, software)`` takes a hardware :class:`DesignSpace` and a function
``software(hw_point) -> DesignSpace``; a joint point is the flat ``dict`` ``{**hw, **sw}``.

Two views of the same space:

* **nested** -- ``joint.hardware`` and ``joint.software_space(hw)``: an outer optimizer
  proposes hardware, an inner one searches that hardware's mappings.
* **flattened** -- the ``JointSpace`` itself implements the space protocol (``sample``,
  ``encode``/``decode``, ``validate``, ``neighbors``, ``grid``, ``cardinality``), so any
  optimizer can search hardware and mapping jointly. The encoding is the hardware
  encoding followed by the software encoding *of that hardware's software space*: a
  software column means "relative position within the legal range for this hardware"
  (for example the i-th of the divisors allowed). For this to be a fixed-dimensional
  space, every software space the factory returns must have the same parameter names,
  kinds and encoded widths (the ranges may differ); this is checked and a mismatch is a
  :class:`SpaceDefinitionError` naming the parameter.

Software spaces are cached per hardware point (``cache_size`` entries).

Building a ``JointSpace`` calls ``software`` (on a sampled hardware point), so build one
only from code you trust: the space of a config, or your own. A study's database is never
trusted that way -- a stored joint space is read as a
:class:`~design_space.space_view.SpaceView` and its factory not imported.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from design_space.errors import SpaceDefinitionError, Violation
from design_space.references import callable_ref
from design_space.space import DesignSpace, EncodedGroup, Point, SeedLike, as_rng

SoftwareFactory = Callable[[Point], DesignSpace]


class JointSpace:
    """Hardware space x hardware-conditioned software space (see module docstring)."""

    def __init__(
        self,
        hardware: DesignSpace,
        software: SoftwareFactory,
        *,
        name: str | None = None,
        cache_size: int = 4096,
    ) -> None:
        if not isinstance(hardware, DesignSpace):
            raise SpaceDefinitionError(f"JointSpace: hardware must be a DesignSpace, got {hardware!r}")
        if not callable(software):
            raise SpaceDefinitionError(
                f"JointSpace: software must be a callable hw_point -> DesignSpace, got {software!r}"
            )
        self.hardware = hardware
        self.software = software
        self.name = name
        self._cache: OrderedDict[str, DesignSpace] = OrderedDict()
        self._cache_size = cache_size
        ref_hw = hardware.sample(1, seed=0)[0]
        self._ref = self.software_space(ref_hw, _check=False)
        self._layout = self._signature(self._ref)

    # ---------------------------------------------------------------- structure
    @staticmethod
    def _signature(s: DesignSpace) -> tuple[tuple[str, str, int], ...]:
        return tuple((p.name, p.kind, p.width) for p in s.params)

    def software_space(self, hw_point: Mapping[str, Any], *, _check: bool = True) -> DesignSpace:
        """The (cached) software space of a hardware point."""
        hw = self.hardware.normalize(hw_point)
        key = self.hardware.point_key(hw)
        s = self._cache.get(key)
        if s is not None:
            self._cache.move_to_end(key)
            return s
        s = self.software(dict(hw))
        if not isinstance(s, DesignSpace):
            raise SpaceDefinitionError(
                f"JointSpace: software({hw}) returned {type(s).__name__}, expected a DesignSpace"
            )
        clash = sorted(set(s.names) & set(self.hardware.names))
        if clash:
            raise SpaceDefinitionError(
                f"JointSpace: software parameters {clash} have the same names as hardware ones"
            )
        if _check:
            sig = self._signature(s)
            if sig != self._layout:
                mism = [
                    f"{a[0]!r} ({a[1]}, {a[2]} cols) vs {b[0]!r} ({b[1]}, {b[2]} cols)"
                    for a, b in zip(self._layout, sig)
                    if a != b
                ] or [f"{len(self._layout)} vs {len(sig)} parameters"]
                raise SpaceDefinitionError(
                    f"JointSpace: the software space for hardware {hw} does not match the "
                    f"layout of the others: {mism[0]}; every software space needs the same "
                    "parameters (names, kinds, encoded widths) with hardware-dependent ranges"
                )
        self._cache[key] = s
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return s

    @property
    def software_names(self) -> list[str]:
        return [n for n, _, _ in self._layout]

    @property
    def names(self) -> list[str]:
        return self.hardware.names + self.software_names

    @property
    def dim(self) -> int:
        return self.hardware.dim + sum(w for _, _, w in self._layout)

    def encoding(self) -> tuple[EncodedGroup, ...]:
        """The column layout of :meth:`encode`: the hardware groups, then the software
        groups of the reference software space shifted past them (every software space
        has the same layout, so its groups describe them all)."""
        off = self.hardware.dim
        sw = tuple(EncodedGroup(g.name, g.kind, slice(g.columns.start + off, g.columns.stop + off),
                                g.n_values, g.conditional) for g in self._ref.encoding())
        return tuple(self.hardware.encoding()) + sw

    @property
    def constraints(self) -> tuple[Any, ...]:
        return self.hardware.constraints

    def split(self, point: Mapping[str, Any]) -> tuple[Point, Point]:
        """``(hw_point, sw_point)`` of a flat joint point."""
        hw_names = set(self.hardware.names)
        hw = {k: v for k, v in point.items() if k in hw_names}
        sw = {k: v for k, v in point.items() if k not in hw_names}
        return hw, sw

    def __repr__(self) -> str:
        return f"JointSpace(hardware={self.hardware!r}, software={getattr(self.software, '__qualname__', self.software)!r})"

    # ---------------------------------------------------------------- sampling
    def _groups(self, hws: Sequence[Point]) -> dict[str, list[int]]:
        groups: dict[str, list[int]] = {}
        for i, hw in enumerate(hws):
            groups.setdefault(self.hardware.point_key(hw), []).append(i)
        return groups

    def sample(self, n: int, seed: SeedLike = None) -> list[Point]:
        """``n`` joint points: feasible hardware, then feasible software for each."""
        rng = as_rng(seed)
        hws = self.hardware.sample(n, rng)
        out: list[Point | None] = [None] * n
        for idx in self._groups(hws).values():
            sws = self.software_space(hws[idx[0]]).sample(len(idx), rng)
            for i, sw in zip(idx, sws):
                out[i] = {**hws[i], **sw}
        return out  # type: ignore[return-value]

    # ---------------------------------------------------------------- validation
    def validate(self, point: Mapping[str, Any], *, constraints: bool = True) -> list[Violation]:
        hw, sw = self.split(point)
        out = self.hardware.validate(hw, constraints=constraints)
        if out:
            return out
        return self.software_space(hw).validate(sw, constraints=constraints)

    def check(self, point: Mapping[str, Any]) -> Point:
        v = self.validate(point)
        if v:
            raise ValueError("; ".join(map(str, v)))
        return self.normalize(point)

    def feasible_mask(self, points: Sequence[Mapping[str, Any]]) -> np.ndarray:
        out = np.zeros(len(points), dtype=bool)
        parts = [self.split(p) for p in points]
        hw_ok = self.hardware.feasible_mask([h for h, _ in parts]) if points else out
        ok_idx = [i for i in range(len(points)) if hw_ok[i]]
        for idx in self._groups([parts[i][0] for i in ok_idx]).values():
            real = [ok_idx[j] for j in idx]
            s = self.software_space(parts[real[0]][0])
            out[real] = s.feasible_mask([parts[i][1] for i in real])
        return out

    def normalize(self, point: Mapping[str, Any]) -> Point:
        hw, sw = self.split(point)
        nhw = self.hardware.normalize(hw)
        return {**nhw, **self.software_space(nhw).normalize(sw)}

    def point_key(self, point: Mapping[str, Any]) -> str:
        return json.dumps(self.normalize(point), sort_keys=True, default=str)

    def to_jsonable(self, point: Mapping[str, Any]) -> dict[str, Any]:
        return self.hardware.to_jsonable(point)

    # ---------------------------------------------------------------- codec
    def encode(self, points: Sequence[Mapping[str, Any]], *, check: bool = True) -> np.ndarray:
        parts = [self.split(p) for p in points]
        xh = self.hardware.encode([h for h, _ in parts], check=check)
        xs = np.zeros((len(points), self.dim - self.hardware.dim))
        for idx in self._groups([h for h, _ in parts]).values():
            s = self.software_space(parts[idx[0]][0])
            xs[idx] = s.encode([parts[i][1] for i in idx], check=check)
        return np.hstack([xh, xs])

    def decode(self, x: Any) -> list[Point]:
        if hasattr(x, "detach"):
            x = x.detach().cpu().numpy()
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        if x.shape[1] != self.dim:
            raise ValueError(f"decode: expected an (n, {self.dim}) array, got shape {x.shape}")
        dh = self.hardware.dim
        hws = self.hardware.decode(x[:, :dh])
        out: list[Point | None] = [None] * len(x)
        for idx in self._groups(hws).values():
            sws = self.software_space(hws[idx[0]]).decode(x[idx, dh:])
            for i, sw in zip(idx, sws):
                out[i] = {**hws[i], **sw}
        return out  # type: ignore[return-value]

    # ---------------------------------------------------------------- enumeration
    def grid(self) -> Iterator[Point]:
        """Every feasible joint point once: hardware grid order, then software grid order."""
        for hw in self.hardware.grid():
            for sw in self.software_space(hw).grid():
                yield {**hw, **sw}

    def cardinality(self) -> int | float:
        """Exact number of feasible joint points (sums the software spaces' cardinalities
        over the feasible hardware grid)."""
        if not self.hardware.is_finite:
            return float("inf")
        return sum(self.software_space(hw).cardinality() for hw in self.hardware.grid())

    @property
    def is_finite(self) -> bool:
        return self.hardware.is_finite and self._ref.is_finite

    def neighbors(self, point: Mapping[str, Any]) -> list[Point]:
        """Software neighbours under the same hardware, then hardware neighbours with the
        software point kept if still legal, else carried over by its encoding (same
        relative position in the new hardware's ranges)."""
        hw, sw = self.split(point)
        s = self.software_space(hw)
        out = [{**hw, **n} for n in s.neighbors(sw)]
        x_sw = s.encode([sw])
        for nhw in self.hardware.neighbors(hw):
            ns = self.software_space(nhw)
            cand = sw if not ns.validate(sw) else ns.decode(x_sw)[0]
            if ns.feasible_mask([cand])[0]:
                out.append({**nhw, **cand})
        return out

    def to_dict(self) -> dict[str, Any]:
        """``{hardware: <space>, software: "module:function"}`` (read back by
        :func:`design_space.serialization.space_from_dict`).

        Raises:
            SpaceDefinitionError: the software factory is not importable by name.
        """
        ref = callable_ref(self.software)
        if ref is None:
            raise SpaceDefinitionError(
                f"JointSpace: its software factory {self.software!r} cannot be saved; use a "
                "module-level function"
            )
        d: dict[str, Any] = {"hardware": self.hardware.to_dict(), "software": ref}
        if self.name:
            d["name"] = self.name
        return d
