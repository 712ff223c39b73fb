"""Option checks shared by the optimizers of this package: a clear ``ValueError`` naming
the option and the offending value."""

from __future__ import annotations

import math
from numbers import Integral
from numbers import Real as RealNumber
from typing import Any


def check_int(name: str, value: Any, low: int) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) ``>= low``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_real(name: str, value: Any, low: float, high: float, *, low_open: bool = False) -> float:
    """``value`` as a ``float`` if it is a finite number (not a bool) in ``[low, high]``
    (``(low, high]`` with ``low_open``)."""
    if isinstance(value, bool) or not isinstance(value, RealNumber) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    v = float(value)
    if v < low or v > high or (low_open and v == low):
        raise ValueError(f"{name} must be in {'(' if low_open else '['}{low:g}, {high:g}], got {value!r}")
    return v
