"""Check a study before it spends its budget: ``coexplore validate`` and the start of
``coexplore run``.

:func:`preflight` samples designs from the space (so every known constraint is evaluated,
vectorized, over the columns it reads: a constraint that needs a column the space lacks
fails here, naming the constraint and the column), then hands them to the evaluator's own
``preflight(points, columns)`` where it has one
(:meth:`evaluators.nested.NestedEvaluator.preflight`: build each design, vectorized area,
map one layer with the configured mapper, every layer's smallest tiles against every
design's buffers). What no trial could survive is a ``ValueError`` (or the space's
``SpaceDefinitionError`` / ``UnsatisfiableSpaceError``) naming the key; the rest comes
back as report lines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["N_DESIGNS", "preflight"]

N_DESIGNS = 16
"""Designs sampled by :func:`preflight`."""


def preflight(space: Any, evaluator: Callable[..., Any], *, seed: int = 0,
              n_designs: int = N_DESIGNS) -> list[str]:
    """The report lines of the checks in the module docstring; raises on a mistake."""
    points = space.sample(n_designs, seed=seed)
    names = [c.name for c in getattr(space, "constraints", ())]
    lines = [f"space: {len(points)} designs sampled"
             + (f", constraints {', '.join(map(repr, names))} evaluated over their columns" if names else "")]
    target = getattr(evaluator, "fn", evaluator)       # a function bound with its options
    check = getattr(target, "preflight", None)
    if callable(check):
        columns = space.columns(points) if hasattr(space, "columns") else None
        lines += check(points, columns)
    else:
        lines.append(f"evaluator: {getattr(target, '__name__', type(target).__name__)} has no "
                     "preflight check of its own (nothing evaluated)")
    return lines
