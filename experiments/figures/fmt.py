"""Number formats the rendered figures share (the typography of the hand-written docs:
a true minus sign, thousands separators, a space before %)."""

from __future__ import annotations

import math

__all__ = ["MINUS", "fixed", "pct", "signed", "thousands"]

MINUS = "\u2212"


def signed(x: float, digits: int = 1) -> str:
    """``x`` with its sign: ``+1.2`` / ``−1.2`` (``0.0`` without a sign)."""
    s = f"{x:+.{digits}f}"
    if float(s) == 0:
        return s[1:]
    return s.replace("-", MINUS)


def pct(fraction: float, digits: int = 1, *, sign: bool = True) -> str:
    """A fraction as a percentage: ``-0.105 -> '−10.5 %'``."""
    v = 100 * fraction
    return f"{signed(v, digits) if sign else fixed(v, digits)} %"


def fixed(x: float, digits: int = 1) -> str:
    """``x`` to ``digits`` decimals, a true minus sign where negative."""
    return f"{x:.{digits}f}".replace("-", MINUS)


def thousands(x: float) -> str:
    """``x`` rounded to an integer with thousands separators: ``3462.9 -> '3,463'``."""
    if not math.isfinite(x):
        raise ValueError(f"thousands: x must be finite, got {x!r}")
    return f"{round(x):,}"
