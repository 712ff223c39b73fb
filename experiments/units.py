"""Units of a study's columns, read from their names, and numbers written with them.

coexplore names every quantity with its unit (``energy_pj``, ``latency_ms``,
``area_mm2``, ``glb_kib``); :func:`unit_of` reads the suffix, and :func:`format_value`
writes a value the way a person reads it: energy, time and power with an SI prefix chosen
so the number lies in [1, 1000) (``5646000000`` pJ is ``5.646 mJ``), counts (cycles,
MACs, words) of a million or more with k/M/G/T, ``utilization`` as a percentage, and
everything to four significant digits. :func:`axis_ticks` gives an axis tick values
and labels so written: on a logarithmic axis at 1, 2 and 5 times each power of ten
(only the powers of ten past six decades), never plotly's bare mantissas.

The report's script (``static/explorer.js``, ``formatValue``) writes numbers the same
way; ``tests/experiments/test_browser.py`` checks the two agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Unit", "axis_ticks", "format_value", "unit_of", "units_of"]


@dataclass(frozen=True)
class Unit:
    """``symbol`` as written after a number; ``base`` and ``scale`` where the unit is a
    multiple of an SI base (``pJ``: base ``J``, scale 1e-12) that may be re-prefixed;
    ``kind``: ``"si"``, ``"count"``, ``"percent"`` or ``"fixed"``."""

    symbol: str
    kind: str = "fixed"
    base: str = ""
    scale: float = 1.0

    def as_json(self) -> dict[str, object]:
        return {"symbol": self.symbol, "kind": self.kind, "base": self.base, "scale": self.scale}


_SI = {"p": 1e-12, "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3}
_MICRO = "\u00b5"
# suffix -> unit; the longest suffix that matches wins
_SUFFIXES: dict[str, Unit] = {
    "_uj_ms": Unit(f"{_MICRO}J\u00b7ms"),
    "_pj_cycles": Unit("pJ\u00b7cycles"),
    "_mm2": Unit("mm\u00b2"),
    "_um2": Unit(f"{_MICRO}m\u00b2"),
    "_kib": Unit("KiB"),
    "_mib": Unit("MiB"),
    "_bytes": Unit("B", "count"),
    "_bits": Unit("bits", "count"),
    "_words": Unit("words", "count"),
    "_cycles": Unit("cycles", "count"),
    "_macs": Unit("MACs", "count"),
    "_mhz": Unit("MHz"),
    "_ghz": Unit("GHz"),
    "_pct": Unit("%"),
}
for _p, _f in _SI.items():
    _sym = _MICRO if _p == "u" else _p
    _SUFFIXES[f"_{_p}j"] = Unit(f"{_sym}J", "si", "J", _f)
    _SUFFIXES[f"_{_p}w"] = Unit(f"{_sym}W", "si", "W", _f)
    if _p != "k":
        _SUFFIXES[f"_{_p}s"] = Unit(f"{_sym}s", "si", "s", _f)
_EXACT = {"macs": Unit("MACs", "count"), "utilization": Unit("%", "percent")}
_PREFIXES = [(1e-15, "f"), (1e-12, "p"), (1e-9, "n"), (1e-6, _MICRO), (1e-3, "m"), (1.0, ""),
             (1e3, "k"), (1e6, "M"), (1e9, "G")]
_COUNT = [(1e12, "T"), (1e9, "G"), (1e6, "M")]


def unit_of(name: str) -> Unit | None:
    """The unit a column name ends with (``params_`` / ``metrics_`` prefixes ignored), or
    None for a dimensionless or unknown one."""
    name = name.removeprefix("params_").removeprefix("metrics_").lower()
    if name in _EXACT:
        return _EXACT[name]
    best = None
    for suffix, unit in _SUFFIXES.items():
        if name.endswith(suffix) and len(name) > len(suffix) and (best is None or len(suffix) > len(best[0])):
            best = (suffix, unit)
    return best[1] if best else None


def units_of(names: Sequence[str]) -> dict[str, dict[str, object]]:
    """``{name: unit.as_json()}`` for the names that carry a unit (what the page reads)."""
    return {n: u.as_json() for n in names if (u := unit_of(n)) is not None}


def _sig(x: float, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits without trailing zeros (``5.646``, ``1235``,
    ``0.01234``); ``1.235e6`` at a million or more and below 1e-4."""
    if x == 0:
        return "0"
    ax = abs(x)
    if ax >= 1e6 or ax < 1e-4:
        mant, _, exp = f"{x:.{digits - 1}e}".partition("e")
        mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
        return f"{mant}e{int(exp)}"
    e = math.floor(math.log10(ax))
    if e >= digits:
        q = 10 ** (e - digits + 1)
        return str(math.floor(x / q + 0.5) * q)  # JavaScript's Math.round, so the page writes the same
    text = f"{x:.{max(digits - 1 - e, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_value(v: object, unit: Unit | None = None) -> str:
    """``v`` written with ``unit`` (module docstring); non-numbers as ``str``, ``n/a``
    for NaN and infinities."""
    if v is None:
        return ""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    x = float(v)
    if not math.isfinite(x):
        return "n/a"
    if unit is None:
        return str(int(x)) if x.is_integer() and abs(x) < 1e15 else _sig(x)
    if unit.kind == "percent":
        return f"{_sig(100 * x, 3)} %"
    if unit.kind == "si" and x != 0:
        base = x * unit.scale
        for f, p in reversed(_PREFIXES):
            if abs(base) >= f * (1 - 5e-5):  # 999.96 uJ rounds to 1 mJ, not 1000 uJ
                return f"{_sig(base / f)} {p}{unit.base}"
        f, p = _PREFIXES[0]
        return f"{_sig(base / f)} {p}{unit.base}"
    if unit.kind == "count":
        for f, p in _COUNT:
            if abs(x) >= f:
                return f"{_sig(x / f)}{p} {unit.symbol}"
        return f"{int(x) if x.is_integer() else _sig(x)} {unit.symbol}"
    return f"{_sig(x)} {unit.symbol}"


def _nice_step(span: float, n: int = 5) -> float:
    raw = span / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def axis_ticks(values: Sequence[float], log: bool, unit: Unit | None = None) -> tuple[list[float], list[str]]:
    """Tick values over the finite ``values`` and their labels (:func:`format_value`):
    1-2-5 per decade on a log axis (decades only past six), about five round steps on a
    linear one. Empty when there is nothing to tick."""
    x = [float(v) for v in values if v is not None and isinstance(v, int | float) and math.isfinite(v)]
    if log:
        x = [v for v in x if v > 0]
    if not x:
        return [], []
    lo, hi = min(x), max(x)
    if log:
        e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        mults = (1,) if e1 - e0 > 6 else (1, 2, 5)
        ticks = [m * 10.0**e for e in range(e0, e1 + 1) for m in mults]
        ticks = [t for t in ticks if lo / 1.0001 <= t <= hi * 1.0001]
        if len(ticks) < 2:  # less than a 1-2-5 step apart: the ends
            ticks = [lo, hi] if hi > lo else [lo]
    else:
        if hi == lo:
            ticks = [lo]
        else:
            step = _nice_step(hi - lo)
            start = math.ceil(lo / step - 1e-9) * step
            ticks = [start + i * step for i in range(int((hi - start) / step + 1e-9) + 1)]
            ticks = [round(t, 12) for t in ticks]
    return ticks, [format_value(t, unit) for t in ticks]
