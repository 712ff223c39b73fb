"""Typed design parameters and their ``[0, 1]`` encodings.

Every parameter is a frozen dataclass with vectorized ``sample`` / ``encode`` / ``decode``
over numpy arrays, a scalar ``check`` for validation, ``grid_values`` for finite kinds
and ``neighbors`` for local search.

Encoding (what Bayesian optimization sees; every column lies in ``[0, 1]``):

================  =====  ==================================================================
kind              cols   encoding
================  =====  ==================================================================
``Integer``       1      ``(v - low) / (high - low)``; ``log=True``: the same on ``log v``;
                         decoded by rounding to the nearest integer.
``Real``          1      ``(v - low) / (high - low)``; ``log=True``: on ``log v``.
``PowerOfTwo``    1      exponent ``(log2 v - log2 low) / (log2 high - log2 low)``, rounded.
``Ordinal``       1      index ``i / (n - 1)`` in the given (meaningful) order, rounded.
``Categorical``   n      one-hot over the ``n`` choices; decoded by ``argmax`` (ties ->
                         first choice). All choices are equidistant, as they should be.
``Permutation``   n(n-1)/2  one column per item pair ``(i, j), i < j`` in ``items`` order:
                         1 if ``i`` comes before ``j``. Hamming distance between two
                         encodings is the Kendall-tau distance between the orderings, so a
                         stationary kernel on it respects order similarity. Decoded by
                         ranking items by how many others they precede (Borda count; ties
                         -> ``items`` order), which inverts the encoding exactly.
``Fixed``         0      nothing.
================  =====  ==================================================================

A degenerate range (``low == high``, one value or one choice) encodes as the constant 0
(or 1 for a single one-hot column). Inactive conditional parameters encode as 0 in every
column of the parameter (see :class:`design_space.space.DesignSpace`).

Round trips ``decode(encode(v)) == v`` are exact for every discrete kind; for ``Real`` they
are exact up to floating-point rounding of the affine (or log) map, ``|error| <= 1e-12``
relative to the range.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from numbers import Integral
from numbers import Real as RealNumber
from typing import Any, ClassVar

import numpy as np

from design_space.errors import SpaceDefinitionError

Scalar = int | float | str | bool


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise SpaceDefinitionError(f"parameter name must be a non-empty string, got {name!r}")
    if name != name.strip():
        raise SpaceDefinitionError(f"parameter name {name!r} has leading/trailing whitespace")
    return name


def _is_int(v: Any) -> bool:
    return isinstance(v, Integral) and not isinstance(v, bool | np.bool_)


def _is_number(v: Any) -> bool:
    return isinstance(v, RealNumber) and not isinstance(v, bool | np.bool_)


def to_python(v: Any) -> Any:
    """Convert numpy scalars (and tuples of them) to plain Python values."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return tuple(to_python(x) for x in v)
    return v


def values_array(values: Sequence[Any]) -> np.ndarray:
    """A 1-D array of ``values`` with the narrowest dtype that keeps them apart.

    bool -> bool, int -> int64, int/float -> float64, str -> unicode, otherwise object.
    (``np.asarray([1, "a"])`` would silently turn the 1 into ``"1"``.)
    """
    vals = list(values)
    if vals and all(isinstance(v, bool | np.bool_) for v in vals):
        return np.asarray(vals, dtype=bool)
    if vals and all(_is_int(v) for v in vals):
        return np.asarray(vals, dtype=np.int64)
    if vals and all(_is_number(v) for v in vals):
        return np.asarray(vals, dtype=np.float64)
    if vals and all(isinstance(v, str) and not v.endswith("\x00") for v in vals):
        # (numpy's fixed-width strings drop trailing NULs; such strings stay objects)
        return np.asarray(vals, dtype=str)
    out = np.empty(len(vals), dtype=object)
    out[:] = vals
    return out


def _canonical_condition(active_if: Any, name: str) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    if active_if is None:
        return ()
    if isinstance(active_if, tuple) and all(
        isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], tuple) for c in active_if
    ):
        items = list(active_if)
    elif isinstance(active_if, Mapping):
        items = []
        for parent, allowed in active_if.items():
            if isinstance(allowed, list | tuple | set | frozenset):
                allowed_t = tuple(allowed)
            else:
                allowed_t = (allowed,)
            if not allowed_t:
                raise SpaceDefinitionError(
                    f"parameter {name!r}: active_if[{parent!r}] lists no values", field="active_if"
                )
            items.append((str(parent), allowed_t))
    else:
        raise SpaceDefinitionError(
            f"parameter {name!r}: active_if must be a mapping parent -> allowed values, "
            f"got {active_if!r}",
            field="active_if",
        )
    for parent, _ in items:
        if parent == name:
            raise SpaceDefinitionError(
                f"parameter {name!r}: active_if refers to itself", field="active_if"
            )
    return tuple(sorted(items, key=lambda c: c[0]))


@dataclass(frozen=True)
class Parameter(ABC):
    """Base class. ``active_if={"arch": ["systolic"]}`` makes the parameter conditional:
    it exists only in points whose ``arch`` is one of the listed values (several parents
    must all match)."""

    name: str
    active_if: Any = field(default=None, kw_only=True)

    kind: ClassVar[str] = "parameter"

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", _check_name(self.name))
        object.__setattr__(self, "active_if", _canonical_condition(self.active_if, self.name))

    # -- structure ---------------------------------------------------------------------
    @property
    def width(self) -> int:
        """Number of encoded columns."""
        return 1

    @property
    def is_finite(self) -> bool:
        return True

    @abstractmethod
    def size(self) -> int | float:
        """Number of distinct values (``math.inf`` for ``Real``)."""

    @abstractmethod
    def grid_values(self) -> list[Any]:
        """All values in canonical (encoding) order; finite kinds only."""

    @property
    @abstractmethod
    def default(self) -> Any:
        """The fill value used in column views where the parameter is inactive."""

    @property
    def parents(self) -> tuple[str, ...]:
        return tuple(p for p, _ in self.active_if)

    # -- vectorized --------------------------------------------------------------------
    @abstractmethod
    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` values drawn uniformly (log-uniformly for ``log=True``)."""

    @abstractmethod
    def encode(self, values: np.ndarray) -> np.ndarray:
        """``(n,)`` values -> ``(n, width)`` floats in ``[0, 1]``."""

    @abstractmethod
    def decode(self, x: np.ndarray) -> np.ndarray:
        """``(n, width)`` floats (clipped to ``[0, 1]``) -> ``(n,)`` values."""

    def fill(self, n: int) -> np.ndarray:
        """``n`` copies of :attr:`default` (the column value where the parameter is inactive)."""
        d = self.default
        if isinstance(d, tuple):
            out = np.empty(n, dtype=object)
            for i in range(n):
                out[i] = d
            return out
        return np.repeat(values_array([d]), n)

    # -- scalar ------------------------------------------------------------------------
    @abstractmethod
    def check(self, value: Any) -> str | None:
        """``None`` if ``value`` is legal, else a message naming the parameter."""

    def normalize(self, value: Any) -> Any:
        """The canonical Python value for a legal ``value`` (``64.0`` -> ``64`` ...)."""
        return to_python(value)

    def neighbors(self, value: Any) -> list[Any]:
        """Nearby legal values (excluding ``value``), in a deterministic order."""
        return []

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": self.kind}
        d.update(self._fields_dict())
        if self.active_if:
            d["active_if"] = {
                p: list(v) if len(v) > 1 else v[0] for p, v in self.active_if
            }
        return d

    @abstractmethod
    def _fields_dict(self) -> dict[str, Any]: ...

    def describe(self) -> str:
        """Short human-readable domain, used in error messages."""
        return self.kind


def _clip01(x: np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if np.isnan(x).any():
        raise ValueError(f"decode: encoded value of parameter {name!r} is NaN")
    return np.clip(x, 0.0, 1.0)


@dataclass(frozen=True)
class Integer(Parameter):
    """An integer in ``[low, high]`` (inclusive); ``log=True`` samples and encodes on a log
    scale (``low >= 1``)."""

    low: int = 0
    high: int = 1
    log: bool = False

    kind: ClassVar[str] = "integer"

    def __post_init__(self) -> None:
        super().__post_init__()
        for f in ("low", "high"):
            v = getattr(self, f)
            if isinstance(v, float) and v.is_integer():
                object.__setattr__(self, f, int(v))
            elif not _is_int(v):
                raise SpaceDefinitionError(
                    f"parameter {self.name!r}: {f} must be an integer, got {v!r}", field=f
                )
            else:
                object.__setattr__(self, f, int(v))
        if self.low > self.high:
            raise SpaceDefinitionError(
                f"parameter {self.name!r}: low ({self.low}) > high ({self.high})", field="low"
            )
        if self.log and self.low < 1:
            raise SpaceDefinitionError(
                f"parameter {self.name!r}: log scale needs low >= 1, got low={self.low}",
                field="low",
            )

    def size(self) -> int:
        return self.high - self.low + 1

    def grid_values(self) -> list[int]:
        return list(range(self.low, self.high + 1))

    @property
    def default(self) -> int:
        return self.low

    def _t(self, v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=np.float64)
        return np.log(v) if self.log else v

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if not self.log:
            return rng.integers(self.low, self.high + 1, size=n, dtype=np.int64)
        u = rng.uniform(math.log(self.low), math.log(self.high + 1), size=n)
        return np.clip(np.floor(np.exp(u)), self.low, self.high).astype(np.int64)

    def encode(self, values: np.ndarray) -> np.ndarray:
        if self.low == self.high:
            return np.zeros((len(values), 1))
        lo, hi = self._t(np.array(self.low)), self._t(np.array(self.high))
        return ((self._t(values) - lo) / (hi - lo))[:, None]

    def decode(self, x: np.ndarray) -> np.ndarray:
        x = _clip01(np.asarray(x)[:, 0], self.name)
        if self.low == self.high:
            return np.full(len(x), self.low, dtype=np.int64)
        lo, hi = self._t(np.array(self.low)), self._t(np.array(self.high))
        t = lo + x * (hi - lo)
        v = np.exp(t) if self.log else t
        if self.log:
            # round in log space: pick the integer whose log is nearest
            f = np.floor(v)
            c = f + 1
            lf, lc = np.log(np.maximum(f, 1)), np.log(c)
            v = np.where(np.abs(lf - t) <= np.abs(lc - t), f, c)
        return np.clip(np.rint(v), self.low, self.high).astype(np.int64)

    def check(self, value: Any) -> str | None:
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        if not _is_int(value):
            return f"parameter {self.name!r}: expected an integer, got {value!r}"
        if not self.low <= value <= self.high:
            return f"parameter {self.name!r}: {value} is out of range [{self.low}, {self.high}]"
        return None

    def normalize(self, value: Any) -> int:
        return int(value)

    def neighbors(self, value: Any) -> list[int]:
        v = int(value)
        return [w for w in (v - 1, v + 1) if self.low <= w <= self.high]

    def _fields_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"low": self.low, "high": self.high}
        if self.log:
            d["log"] = True
        return d

    def describe(self) -> str:
        return f"integer [{self.low}, {self.high}]" + (" log" if self.log else "")


@dataclass(frozen=True)
class Real(Parameter):
    """A real number in ``[low, high]``; ``log=True`` needs ``low > 0``."""

    low: float = 0.0
    high: float = 1.0
    log: bool = False

    kind: ClassVar[str] = "real"
    #: relative step of ``neighbors`` in encoded space
    neighbor_step: ClassVar[float] = 0.05

    def __post_init__(self) -> None:
        super().__post_init__()
        for f in ("low", "high"):
            v = getattr(self, f)
            if not _is_number(v) or not math.isfinite(float(v)):
                raise SpaceDefinitionError(
                    f"parameter {self.name!r}: {f} must be a finite number, got {v!r}", field=f
                )
            object.__setattr__(self, f, float(v))
        if self.low > self.high:
            raise SpaceDefinitionError(
                f"parameter {self.name!r}: low ({self.low:g}) > high ({self.high:g})", field="low"
            )
        if self.log and self.low <= 0:
            raise SpaceDefinitionError(
                f"parameter {self.name!r}: log scale needs low > 0, got low={self.low:g}",
                field="low",
            )

    @property
    def is_finite(self) -> bool:
        return self.low == self.high

    def size(self) -> int | float:
        return 1 if self.low == self.high else math.inf

    def grid_values(self) -> list[float]:
        if self.low == self.high:
            return [self.low]
        raise SpaceDefinitionError(
            f"parameter {self.name!r}: a real range has no finite grid; "
            "use Ordinal or Integer to enumerate it"
        )

    @property
    def default(self) -> float:
        return self.low

    def _t(self, v: Any) -> Any:
        return np.log(v) if self.log else np.asarray(v, dtype=np.float64)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.log:
            return np.exp(rng.uniform(math.log(self.low), math.log(self.high), size=n)).clip(
                self.low, self.high
            )
        return rng.uniform(self.low, self.high, size=n)

    def _span(self) -> tuple[float, float] | None:
        """The transformed ``(lo, hi)``, or None when the range collapses in float64
        (``low == high``, or a log range so narrow that ``log low == log high``)."""
        lo, hi = float(self._t(self.low)), float(self._t(self.high))
        return (lo, hi) if hi > lo else None

    def encode(self, values: np.ndarray) -> np.ndarray:
        span = self._span()
        if span is None:
            return np.zeros((len(values), 1))
        lo, hi = span
        u = (self._t(np.asarray(values, dtype=np.float64)) - lo) / (hi - lo)
        return np.clip(u, 0.0, 1.0)[:, None]

    def decode(self, x: np.ndarray) -> np.ndarray:
        x = _clip01(np.asarray(x)[:, 0], self.name)
        span = self._span()
        if span is None:
            return np.full(len(x), self.low)
        lo, hi = span
        t = lo + x * (hi - lo)
        return np.clip(np.exp(t) if self.log else t, self.low, self.high)

    def check(self, value: Any) -> str | None:
        if not _is_number(value) or not math.isfinite(float(value)):
            return f"parameter {self.name!r}: expected a finite number, got {value!r}"
        if not self.low <= float(value) <= self.high:
            return f"parameter {self.name!r}: {value!r} is out of range [{self.low:g}, {self.high:g}]"
        return None

    def normalize(self, value: Any) -> float:
        return float(value)

    def neighbors(self, value: Any) -> list[float]:
        if self.low == self.high:
            return []
        x = self.encode(np.array([float(value)]))[0, 0]
        out = []
        for dx in (-self.neighbor_step, self.neighbor_step):
            w = float(self.decode(np.array([[min(max(x + dx, 0.0), 1.0)]]))[0])
            if w != float(value) and w not in out:
                out.append(w)
        return out

    def _fields_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"low": self.low, "high": self.high}
        if self.log:
            d["log"] = True
        return d

    def describe(self) -> str:
        return f"real [{self.low:g}, {self.high:g}]" + (" log" if self.log else "")


def _is_pow2(v: int) -> bool:
    return v >= 1 and (v & (v - 1)) == 0


@dataclass(frozen=True)
class PowerOfTwo(Parameter):
    """A power of two in ``[low, high]`` (both powers of two), e.g. array rows 8..256."""

    low: int = 1
    high: int = 1

    kind: ClassVar[str] = "power_of_two"

    def __post_init__(self) -> None:
        super().__post_init__()
        for f in ("low", "high"):
            v = getattr(self, f)
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if not _is_int(v) or not _is_pow2(int(v)):
                raise SpaceDefinitionError(
                    f"parameter {self.name!r}: {f} must be a power of two >= 1, got {v!r}",
                    field=f,
                )
            object.__setattr__(self, f, int(v))
        if self.low > self.high:
            raise SpaceDefinitionError(
                f"parameter {self.name!r}: low ({self.low}) > high ({self.high})", field="low"
            )

    @property
    def _klo(self) -> int:
        return self.low.bit_length() - 1

    @property
    def _khi(self) -> int:
        return self.high.bit_length() - 1

    def size(self) -> int:
        return self._khi - self._klo + 1

    def grid_values(self) -> list[int]:
        return [1 << k for k in range(self._klo, self._khi + 1)]

    @property
    def default(self) -> int:
        return self.low

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.left_shift(1, rng.integers(self._klo, self._khi + 1, size=n)).astype(np.int64)

    def encode(self, values: np.ndarray) -> np.ndarray:
        if self.low == self.high:
            return np.zeros((len(values), 1))
        k = np.log2(np.asarray(values, dtype=np.float64))
        return ((k - self._klo) / (self._khi - self._klo))[:, None]

    def decode(self, x: np.ndarray) -> np.ndarray:
        x = _clip01(np.asarray(x)[:, 0], self.name)
        k = np.rint(self._klo + x * (self._khi - self._klo)).astype(np.int64)
        return np.left_shift(1, k).astype(np.int64)

    def check(self, value: Any) -> str | None:
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        if not _is_int(value) or not _is_pow2(int(value)):
            return f"parameter {self.name!r}: expected a power of two, got {value!r}"
        if not self.low <= value <= self.high:
            return f"parameter {self.name!r}: {value} is out of range [{self.low}, {self.high}]"
        return None

    def normalize(self, value: Any) -> int:
        return int(value)

    def neighbors(self, value: Any) -> list[int]:
        v = int(value)
        return [w for w in (v // 2, v * 2) if self.low <= w <= self.high and w != v]

    def _fields_dict(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high}

    def describe(self) -> str:
        return f"power of two [{self.low}, {self.high}]"


def _check_values(name: str, values: Any, what: str) -> tuple[Any, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise SpaceDefinitionError(
            f"parameter {name!r}: {what} must be a list, got {values!r}", field=what
        )
    vals = tuple(to_python(v) for v in values)
    if not vals:
        raise SpaceDefinitionError(f"parameter {name!r}: {what} is empty", field=what)
    for v in vals:
        if not isinstance(v, int | float | str | bool) or (
            isinstance(v, float) and not math.isfinite(v)
        ):
            raise SpaceDefinitionError(
                f"parameter {name!r}: {what} may hold only numbers, strings and booleans, "
                f"got {v!r}",
                field=what,
            )
    seen: list[Any] = []
    for v in vals:
        # 1 == 1.0 == True in Python; treat those as duplicates too
        if any((v == s and type(v) is type(s)) or (_is_number(v) and _is_number(s) and v == s)
               for s in seen):
            raise SpaceDefinitionError(
                f"parameter {name!r}: {what} has a duplicate value {v!r}", field=what
            )
        seen.append(v)
    return vals


class _IndexedMixin:
    """What ``Ordinal`` and ``Categorical`` share: a finite tuple of values (``_values``)
    with type-aware lookup, uniform sampling and validation."""

    name: str

    def _values(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def size(self) -> int:
        return len(self._values())

    def grid_values(self) -> list[Any]:
        return list(self._values())

    @property
    def default(self) -> Any:
        return self._values()[0]

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        vals = self._values()
        return values_array(vals)[rng.integers(0, len(vals), size=n)]

    def check(self, value: Any) -> str | None:
        if self.index_of(value) is None:
            return f"parameter {self.name!r}: {value!r} is not one of {list(self._values())}"
        return None

    def normalize(self, value: Any) -> Any:
        return self._values()[self.index_of(value)]  # type: ignore[index]

    def index_of(self, value: Any) -> int | None:
        value = to_python(value)
        for i, v in enumerate(self._values()):
            if type(v) is type(value) and v == value:
                return i
        for i, v in enumerate(self._values()):
            if _is_number(v) and _is_number(value) and v == value:
                return i
        return None

    def indices(self, values: np.ndarray) -> np.ndarray:
        vals = self._values()
        arr = values_array(vals)
        values = np.asarray(values)
        if arr.dtype != object and values.dtype != object and arr.dtype.kind == values.dtype.kind:
            order = np.argsort(arr, kind="stable")
            pos = np.searchsorted(arr[order], values)
            pos = np.clip(pos, 0, len(arr) - 1)
            idx = order[pos]
            if np.all(arr[idx] == values):
                return idx.astype(np.int64)
        out = np.empty(len(values), dtype=np.int64)
        for k, v in enumerate(values):
            i = self.index_of(v)
            if i is None:
                raise ValueError(f"{v!r} is not a value of parameter {self.name!r}")  # type: ignore[attr-defined]
            out[k] = i
        return out


@dataclass(frozen=True)
class Ordinal(_IndexedMixin, Parameter):
    """An ordered discrete choice, e.g. buffer sizes ``[64, 128, 256]``; the given order
    is the one neighbours and the encoding follow."""

    values: tuple[Any, ...] = ()

    kind: ClassVar[str] = "ordinal"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "values", _check_values(self.name, self.values, "values"))

    def _values(self) -> tuple[Any, ...]:
        return self.values

    def encode(self, values: np.ndarray) -> np.ndarray:
        if len(self.values) == 1:
            return np.zeros((len(values), 1))
        return (self.indices(values) / (len(self.values) - 1))[:, None]

    def decode(self, x: np.ndarray) -> np.ndarray:
        x = _clip01(np.asarray(x)[:, 0], self.name)
        idx = np.rint(x * (len(self.values) - 1)).astype(np.int64)
        return values_array(self.values)[idx]

    def neighbors(self, value: Any) -> list[Any]:
        i = self.index_of(value)
        assert i is not None
        return [self.values[j] for j in (i - 1, i + 1) if 0 <= j < len(self.values)]

    def _fields_dict(self) -> dict[str, Any]:
        return {"values": list(self.values)}

    def describe(self) -> str:
        return f"ordinal {list(self.values)}"


@dataclass(frozen=True)
class Categorical(_IndexedMixin, Parameter):
    """An unordered choice, e.g. dataflow ``["OS", "WS", "IS"]`` (one-hot encoded)."""

    choices: tuple[Any, ...] = ()

    kind: ClassVar[str] = "categorical"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "choices", _check_values(self.name, self.choices, "choices"))

    def _values(self) -> tuple[Any, ...]:
        return self.choices

    @property
    def width(self) -> int:
        return len(self.choices)

    def encode(self, values: np.ndarray) -> np.ndarray:
        idx = self.indices(values)
        out = np.zeros((len(idx), len(self.choices)))
        out[np.arange(len(idx)), idx] = 1.0
        return out

    def decode(self, x: np.ndarray) -> np.ndarray:
        x = _clip01(np.asarray(x), self.name)
        return values_array(self.choices)[np.argmax(x, axis=1)]

    def neighbors(self, value: Any) -> list[Any]:
        i = self.index_of(value)
        return [c for j, c in enumerate(self.choices) if j != i]

    def _fields_dict(self) -> dict[str, Any]:
        return {"choices": list(self.choices)}

    def describe(self) -> str:
        return f"categorical {list(self.choices)}"


@dataclass(frozen=True)
class Permutation(Parameter):
    """An ordering of ``items``, e.g. a loop order ``("K", "C", "P")``; values are tuples."""

    items: tuple[Any, ...] = ()

    kind: ClassVar[str] = "permutation"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "items", _check_values(self.name, self.items, "items"))

    @property
    def width(self) -> int:
        k = len(self.items)
        return k * (k - 1) // 2

    def size(self) -> int:
        return math.factorial(len(self.items))

    def _perm_index(self) -> dict[tuple[type, Any], int]:
        # keyed by (type, value): 0, False and 0.0 are different items
        return {(type(v), v): i for i, v in enumerate(self.items)}

    def grid_values(self) -> list[tuple[Any, ...]]:
        from itertools import permutations

        return [tuple(p) for p in permutations(self.items)]

    @property
    def default(self) -> tuple[Any, ...]:
        return tuple(self.items)

    def _rows_to_positions(self, values: np.ndarray) -> np.ndarray:
        """``(n,)`` tuples -> ``(n, k)`` position of each item (by item index)."""
        lookup = self._perm_index()
        k = len(self.items)
        pos = np.empty((len(values), k), dtype=np.int64)
        for r, perm in enumerate(values):
            for p, item in enumerate(perm):
                pos[r, lookup[(type(item), item)]] = p
        return pos

    def _positions_to_rows(self, order: np.ndarray) -> np.ndarray:
        """``(n, k)`` item indices in order -> object array of tuples."""
        out = np.empty(len(order), dtype=object)
        items = self.items
        for r in range(len(order)):
            out[r] = tuple(items[i] for i in order[r])
        return out

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        k = len(self.items)
        order = np.argsort(rng.random((n, k)), axis=1)
        return self._positions_to_rows(order)

    def encode(self, values: np.ndarray) -> np.ndarray:
        pos = self._rows_to_positions(values)
        pairs = list(combinations(range(len(self.items)), 2))
        if not pairs:
            return np.zeros((len(values), 0))
        i, j = np.array(pairs).T
        return (pos[:, i] < pos[:, j]).astype(np.float64)

    def decode(self, x: np.ndarray) -> np.ndarray:
        k = len(self.items)
        x = _clip01(np.asarray(x).reshape(len(x), -1), self.name)
        wins = np.zeros((len(x), k))
        for c, (i, j) in enumerate(combinations(range(k), 2)):
            wins[:, i] += x[:, c]
            wins[:, j] += 1.0 - x[:, c]
        # most wins first; ties broken by item index (stable sort on -wins)
        order = np.argsort(-wins, axis=1, kind="stable")
        return self._positions_to_rows(order)

    def check(self, value: Any) -> str | None:
        if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
            return f"parameter {self.name!r}: expected an ordering of {list(self.items)}, got {value!r}"
        vals = [to_python(v) for v in value]
        if len(vals) != len(self.items) or sorted(map(repr, vals)) != sorted(map(repr, self.items)):
            return (
                f"parameter {self.name!r}: {list(vals)!r} is not a permutation of "
                f"{list(self.items)}"
            )
        return None

    def normalize(self, value: Any) -> tuple[Any, ...]:
        return tuple(to_python(v) for v in value)

    def neighbors(self, value: Any) -> list[tuple[Any, ...]]:
        v = list(value)
        out = []
        for i in range(len(v) - 1):
            w = v.copy()
            w[i], w[i + 1] = w[i + 1], w[i]
            out.append(tuple(w))
        return out

    def _fields_dict(self) -> dict[str, Any]:
        return {"items": list(self.items)}

    def describe(self) -> str:
        return f"permutation of {list(self.items)}"


@dataclass(frozen=True)
class Fixed(Parameter):
    """A constant, e.g. the word width of a baseline; contributes no encoded column."""

    value: Any = None

    kind: ClassVar[str] = "fixed"

    def __post_init__(self) -> None:
        super().__post_init__()
        v = to_python(self.value)
        if isinstance(v, list):
            v = tuple(v)
        if not isinstance(v, int | float | str | bool | tuple):
            raise SpaceDefinitionError(
                f"parameter {self.name!r}: a fixed value must be a number, string, boolean "
                f"or tuple, got {self.value!r}",
                field="value",
            )
        object.__setattr__(self, "value", v)

    @property
    def width(self) -> int:
        return 0

    def size(self) -> int:
        return 1

    def grid_values(self) -> list[Any]:
        return [self.value]

    @property
    def default(self) -> Any:
        return self.value

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if isinstance(self.value, tuple):
            out = np.empty(n, dtype=object)
            for i in range(n):
                out[i] = self.value
            return out
        return np.repeat(values_array([self.value]), n)

    def encode(self, values: np.ndarray) -> np.ndarray:
        return np.zeros((len(values), 0))

    def decode(self, x: np.ndarray) -> np.ndarray:
        return self.sample(np.random.default_rng(0), len(x))

    def check(self, value: Any) -> str | None:
        v = to_python(value)
        if isinstance(v, list):
            v = tuple(v)
        if v != self.value:
            return f"parameter {self.name!r}: fixed to {self.value!r}, got {value!r}"
        return None

    def normalize(self, value: Any) -> Any:
        return self.value

    def _fields_dict(self) -> dict[str, Any]:
        return {"value": list(self.value) if isinstance(self.value, tuple) else self.value}

    def describe(self) -> str:
        return f"fixed {self.value!r}"


PARAMETER_KINDS: dict[str, type[Parameter]] = {
    cls.kind: cls for cls in (Integer, Real, PowerOfTwo, Ordinal, Categorical, Permutation, Fixed)
}
