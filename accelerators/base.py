"""The accelerator protocol: what every hardware model of coexplore provides.

An accelerator is a frozen dataclass built from a design point. Three protocols say what
the rest of coexplore may rely on (``typing.Protocol``, checked structurally, so a user's
class needs no base class -- ``isinstance(x, Accelerator)`` works on any of them):

* :class:`Accelerator` -- every model: ``from_point(point)`` builds one from a design
  point (unknown keys are an error naming them) and ``validate()`` raises
  :class:`InvalidParameter` (a ``ValueError``) naming the first offending parameter and
  its value. Construction validates, so a built accelerator is a valid one.
* :class:`AreaModel` -- models whose cost includes silicon area: ``area_mm2`` of one
  design and the vectorized ``area_mm2_of(columns)`` of a batch, for known constraints
  (``Constraint("area", lambda p: SystolicArray.area_mm2_of(p) <= 10)`` checks 100,000
  sampled points in one call). Every model here has one except the FPGA PPR engine,
  whose cost is device resources (:meth:`~accelerators.ppr_fpga.PPRFpgaEngine.resources_of`),
  not area.
* :class:`LoopNestAccelerator` -- models that lower to a memory hierarchy for the loop-nest
  cost model: ``to_arch() -> ArchSpec`` (:mod:`accelerators.arch`). Systolic, spatial and
  HASCO's intrinsic arrays do.

The parameter checks every model uses (positive integers, word widths, SRAM sizes ...)
are the functions below, so messages read the same everywhere:
``SpatialArray.glb_kib must be a positive finite number, got -1``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np

from accelerators import tech as _tech
from accelerators.arch import ArchSpec
from accelerators.tech import TechModel
from design_space.suggest import did_you_mean

__all__ = [
    "DEFAULT_WORD_BITS",
    "WORD_BITS_CHOICES",
    "Accelerator",
    "AreaModel",
    "InvalidParameter",
    "LoopNestAccelerator",
    "UnknownParameter",
    "check_positive_int",
    "check_positive_real",
    "check_sram_kib",
    "check_tech",
    "check_word_bits",
    "column",
    "fields_from_point",
    "kib_to_words",
    "normalize_numbers",
    "word_bits_column",
]

WORD_BITS_CHOICES = (8, 16, 32)
"""Datapath widths with an integer MAC in :mod:`accelerators.tech`."""

DEFAULT_WORD_BITS = 16


class InvalidParameter(ValueError):
    """A design parameter the accelerator cannot be built with.

    Attributes:
        owner: the accelerator class name.
        parameter: the offending field.
        value: the value it was given.
    """

    def __init__(self, owner: str, parameter: str, value: Any, requirement: str) -> None:
        """``requirement`` completes "``owner.parameter`` must ...": ``"be a positive integer"``."""
        super().__init__(f"{owner}.{parameter} must {requirement}, got {value!r}")
        self.owner, self.parameter, self.value = owner, parameter, value


class UnknownParameter(ValueError):
    """A design point names parameters the accelerator does not have (a misspelt key:
    ``glb_kb`` for ``glb_kib``). Not a property of one point but of the space or the
    config that makes the points, so it is a configuration error, not an infeasible
    design: :func:`evaluators.nested.build_accelerator` lets it through.

    Attributes:
        owner: the accelerator class name.
        unknown: the unknown keys, sorted.
        known: the parameters the accelerator takes.
    """

    def __init__(self, owner: str, unknown: list[str], known: list[str]) -> None:
        hints = "; ".join(f"{k!r}{did_you_mean(k, known)}" for k in unknown)
        super().__init__(f"{owner}.from_point: unknown keys {hints}; known keys: {known}")
        self.owner, self.unknown, self.known = owner, list(unknown), list(known)


@runtime_checkable
class Accelerator(Protocol):
    """Every accelerator model (see the module docstring)."""

    @classmethod
    def from_point(cls, point: Mapping[str, Any]) -> Self: ...

    def validate(self) -> Any: ...


@runtime_checkable
class AreaModel(Protocol):
    """An accelerator with a silicon-area model."""

    @property
    def area_mm2(self) -> float: ...

    @staticmethod
    def area_mm2_of(columns: Mapping[str, Any]) -> np.ndarray: ...


@runtime_checkable
class LoopNestAccelerator(Accelerator, AreaModel, Protocol):
    """An accelerator the loop-nest cost model can score: it lowers to an ArchSpec."""

    def to_arch(self) -> ArchSpec: ...


# ------------------------------------------------------------------ parameter checks
def check_positive_int(owner: str, name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InvalidParameter(owner, name, v, "be a positive integer")


def check_positive_real(owner: str, name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not (math.isfinite(v) and v > 0):
        raise InvalidParameter(owner, name, v, "be a positive finite number")


def check_word_bits(owner: str, v: Any) -> None:
    if isinstance(v, bool) or v not in WORD_BITS_CHOICES:
        raise InvalidParameter(owner, "word_bits", v, f"be one of {list(WORD_BITS_CHOICES)}")


def check_tech(owner: str, v: Any) -> None:
    if not isinstance(v, TechModel):
        raise InvalidParameter(owner, "tech", v, f"be a TechModel, one of {sorted(_tech.TECH_MODELS)} or a *.yaml energy table")


def kib_to_words(kib: Any, word_bits: Any) -> Any:
    """Whole ``word_bits``-bit words in ``kib`` KiB: ``floor(kib * 8192 / word_bits)``
    (64 KiB at 16 bits = 32768 words). Vectorized."""
    words = np.floor(np.asarray(kib, dtype=float) * 8192.0 / np.asarray(word_bits, dtype=float))
    return int(words) if words.ndim == 0 else words.astype(np.int64)


def check_sram_kib(owner: str, name: str, kib: Any, word_bits: int) -> None:
    check_positive_real(owner, name, kib)
    if kib_to_words(kib, word_bits) < 1:
        raise InvalidParameter(owner, name, kib, f"hold at least one {word_bits}-bit word")


# ------------------------------------------------------------------ construction
def normalize_numbers(obj: Any, int_fields: tuple[str, ...], real_fields: tuple[str, ...]) -> None:
    """Turn numpy scalars and integral floats into plain ``int``/``float`` in place (a
    frozen dataclass), leaving anything else for ``validate()`` to reject by name; a
    ``tech`` given as a built-in table name or a ``*.yaml`` table path becomes that table."""
    for name in int_fields:
        v = getattr(obj, name)
        if isinstance(v, np.integer) or (
            isinstance(v, float | np.floating) and math.isfinite(v) and float(v).is_integer()
        ):
            object.__setattr__(obj, name, int(v))
    for name in real_fields:
        v = getattr(obj, name)
        if isinstance(v, np.integer | np.floating):
            object.__setattr__(obj, name, v.item())
    if hasattr(obj, "tech") and isinstance(obj.tech, str) and (
        obj.tech in _tech.TECH_MODELS or obj.tech.endswith(_tech.TABLE_SUFFIXES)
    ):
        object.__setattr__(obj, "tech", _tech.get_tech(obj.tech))


def fields_from_point(cls: type, point: Mapping[str, Any]) -> Any:
    """``cls(**point)`` for a dataclass, with unknown keys a ``ValueError`` naming them."""
    known = [f.name for f in fields(cls)]
    unknown = sorted(set(point) - set(known))
    if unknown:
        raise UnknownParameter(cls.__name__, unknown, known)
    return cls(**point)


def column(p: Mapping[str, Any], key: str, owner: str) -> np.ndarray:
    """Column ``key`` of a batch as floats; a missing one is a ``KeyError`` naming it."""
    try:
        value = p[key]
    except KeyError:
        raise KeyError(f"{owner}.area_mm2_of needs a {key!r} column (got: {sorted(p)})") from None
    return np.asarray(value, dtype=float)


def word_bits_column(p: Mapping[str, Any]) -> Any:
    """The ``word_bits`` column, or the default width when the batch has none."""
    return np.asarray(p["word_bits"], dtype=float) if "word_bits" in p else float(DEFAULT_WORD_BITS)
