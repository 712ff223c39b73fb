"""What was observed at points of a space: trial records and the objectives they are judged by.

These records are the vocabulary shared by everything that learns from evaluated points:
ask/tell optimizers (:mod:`optimizer`) are told :class:`Trial` s, the study layer
(:mod:`experiments`) stores them, and inner searches (a mapper that drives an ask/tell
optimizer over a mapping space, :mod:`mappers`) create them. They live at the bottom of
the package stack so that none of those has to import another to speak the protocol.

* :class:`TrialStatus` -- the lifecycle of a trial (WAITING, RUNNING, COMPLETE,
  INFEASIBLE, FAILED).
* :class:`Trial` -- one evaluated (or pending) point: number, parameters, status, metrics,
  outcome constraints (``<= 0`` feasible) and the reason of an infeasible or failed one.
* :class:`Objective` -- a metric name and its direction; :func:`parse_objectives`
  normalizes the forms configs and users write.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Objective", "Point", "Trial", "TrialStatus", "parse_objectives"]

Point = dict[str, Any]


class TrialStatus(enum.StrEnum):
    """Lifecycle of a trial row. WAITING = queued (e.g. re-queued after a dead driver)."""

    WAITING = "WAITING"
    RUNNING = "RUNNING"
    COMPLETE = "COMPLETE"
    INFEASIBLE = "INFEASIBLE"
    FAILED = "FAILED"

    @property
    def finished(self) -> bool:
        return self in (TrialStatus.COMPLETE, TrialStatus.INFEASIBLE, TrialStatus.FAILED)


@dataclass(frozen=True)
class Trial:
    """One evaluated (or pending) point of a study, as the optimizer sees it."""

    number: int
    params: Point
    status: TrialStatus
    metrics: Mapping[str, float] = field(default_factory=dict)
    constraints: Mapping[str, float] = field(default_factory=dict)
    reason: str | None = None

    @property
    def feasible(self) -> bool:
        """COMPLETE with every outcome constraint ``<= 0``."""
        return self.status is TrialStatus.COMPLETE and all(
            v <= 0 for v in self.constraints.values()
        )


@dataclass(frozen=True)
class Objective:
    """A metric to optimize. ``direction`` is ``"min"`` or ``"max"``."""

    name: str
    direction: str = "min"

    def __post_init__(self) -> None:
        if self.direction not in ("min", "max"):
            raise ValueError(
                f"objective {self.name!r}: direction must be 'min' or 'max', got {self.direction!r}"
            )

    @property
    def sign(self) -> float:
        """+1 for min, -1 for max: ``sign * value`` is always minimized."""
        return 1.0 if self.direction == "min" else -1.0


def parse_objectives(
    objectives: Mapping[str, str] | Sequence[Objective] | Sequence[str] | str,
) -> tuple[Objective, ...]:
    """Normalize ``{"edp": "min"}``, ``["-energy_pj", "accuracy"]``, ``"edp"`` or objects.

    In the string forms a leading ``-`` means minimize, ``+`` or nothing means... minimize
    too for a bare name (co-design metrics are costs); write ``+accuracy`` or use the
    mapping form ``{"accuracy": "max"}`` to maximize.
    """
    if isinstance(objectives, str):
        objectives = [s.strip() for s in objectives.split(",") if s.strip()]
    out: list[Objective] = []
    if isinstance(objectives, Mapping):
        items: Iterable[Any] = objectives.items()
        for name, direction in items:
            out.append(Objective(str(name), str(direction).lower()))
    else:
        for obj in objectives:
            if isinstance(obj, Objective):
                out.append(obj)
            elif isinstance(obj, str):
                if obj.startswith("+"):
                    out.append(Objective(obj[1:], "max"))
                else:
                    out.append(Objective(obj.lstrip("-"), "min"))
            else:
                raise TypeError(f"objectives: cannot interpret {obj!r}")
    if not out:
        raise ValueError("objectives: at least one objective is required")
    names = [o.name for o in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"objectives: duplicate objective names {sorted(dup)}")
    return tuple(out)
