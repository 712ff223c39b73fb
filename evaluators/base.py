"""The evaluator protocol: what one evaluation of a design point returns.

An evaluator is any callable ``f(point) -> Mapping[str, float] | Evaluation``; if its
signature accepts a ``seed`` keyword, the study passes the trial's derived seed. The
evaluator signals an *unknown-constraint* violation (a design that cannot be built or
mapped, discovered only by evaluating it) by raising :class:`Infeasible` with a reason;
any other exception is a *failure* (a bug or a crash), recorded with its traceback.

Conventions (shared with BoTorch and Optuna):

* metric names carry their units: ``energy_pj``, ``latency_cycles``, ``latency_ns``,
  ``area_mm2``; dimensionless ones are plain (``edp``, ``accuracy``, ``utilization``).
* outcome constraints are named values where ``<= 0`` means feasible.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class Infeasible(Exception):
    """Raised by an evaluator when a point violates an unknown (black-box) constraint.

    The study records the trial as INFEASIBLE with ``reason`` and keeps sweeping; a
    feasibility model can learn from it.
    """

    def __init__(self, reason: str, **constraints: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.constraints = {k: float(v) for k, v in constraints.items()}


class EvalStatus(enum.StrEnum):
    """Terminal outcome of one evaluation."""

    OK = "ok"
    INFEASIBLE = "infeasible"
    FAILED = "failed"


@dataclass(frozen=True)
class Evaluation:
    """The record of one evaluation.

    Attributes:
        metrics: named numbers, units in the names (``energy_pj``, ``latency_cycles``).
        constraints: outcome-constraint values, ``<= 0`` feasible.
        status: :class:`EvalStatus`.
        reason: human-readable cause for INFEASIBLE / FAILED.
        info: free-form JSON-serializable extras (breakdowns, how it was measured).
    """

    metrics: Mapping[str, float] = field(default_factory=dict)
    constraints: Mapping[str, float] = field(default_factory=dict)
    status: EvalStatus = EvalStatus.OK
    reason: str | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def feasible(self) -> bool:
        """OK and every outcome constraint ``<= 0``."""
        return self.status is EvalStatus.OK and all(v <= 0 for v in self.constraints.values())
