"""Numbers read from other tools' spec files, checked the same way for every tool: each
bad value is a one-line ``ValueError`` that names the tool and where in the file it is."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["real", "shown"]


def shown(v: Any) -> str:
    """``v`` for a one-line message: its repr, cut to 60 characters."""
    r = repr(v)
    return r if len(r) <= 60 else f"{r[:57]}..."


def real(v: Any, where: str, tool: str) -> float:
    """A finite number >= 0 (an energy, an area, a cost, a cycle time) read from ``tool``'s
    file, or a one-line error naming ``tool`` and ``where``; never an expression. A short
    string is read as a float first, since YAML 1.1 reads ``2e-9`` (no dot) as a string."""
    if isinstance(v, str) and len(v) <= 100:
        try:
            v = float(v)
        except ValueError:
            pass
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ValueError(f"{tool} {where}: expected a number, got {shown(v)}")
    try:
        x = float(v)
    except OverflowError:
        raise ValueError(f"{tool} {where}: {shown(v)} is too large for a number") from None
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"{tool} {where}: expected a finite number >= 0, got {shown(v)}")
    return x
