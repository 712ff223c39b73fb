"""The ask/tell protocol.

The records it exchanges (:class:`~design_space.trials.Trial`,
:class:`~design_space.trials.TrialStatus`, :class:`~design_space.trials.Objective`) live in
:mod:`design_space.trials`, the vocabulary shared with the study layer and with inner
searches that drive an ask/tell optimizer; they are re-exported here.

Reconstruction contract: an optimizer is constructed from ``(space, objectives, seed,
**options)`` and then told the whole history. Everything it proposes next must depend only
on that, never on wall-clock time or on how many times ``ask`` was called in an earlier,
killed process. Optimizers that need randomness derive the generator for proposal ``i``
from ``(seed, i)`` (see :func:`proposal_rng`), where ``i`` is the trial number the proposal
will get; the study assigns trial numbers ``0, 1, 2, ...`` in the order ``ask`` returns
points.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence

import numpy as np

from design_space.space import SpaceLike
from design_space.trials import Objective, Point, Trial, TrialStatus, parse_objectives

__all__ = ["Objective", "Optimizer", "Point", "Trial", "TrialStatus", "objective_matrix",
           "parse_objectives", "proposal_rng"]


def objective_matrix(trials: Sequence[Trial], objectives: Sequence[Objective]) -> np.ndarray:
    """``(n, k)`` array of objective values of ``trials``, NaN where missing."""
    y = np.full((len(trials), len(objectives)), np.nan)
    for i, t in enumerate(trials):
        for j, o in enumerate(objectives):
            v = t.metrics.get(o.name)
            if v is not None and math.isfinite(float(v)):
                y[i, j] = float(v)
    return y


def proposal_rng(seed: int, number: int, stream: int = 0) -> np.random.Generator:
    """The generator for the proposal that becomes trial ``number`` (reconstructible)."""
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(stream, number)))


class Optimizer(ABC):
    """Base class for ask/tell optimizers.

    Subclasses implement :meth:`_propose`; the base class keeps the history, the pending
    points and the trial-number counter so that ``ask`` knows which numbers its points
    will get.
    """

    name: str = "optimizer"

    def __init__(self, space: SpaceLike, objectives: Sequence[Objective] | None = None, seed: int = 0):
        self.space = space
        self.objectives = tuple(objectives or ())
        self.seed = int(seed)
        self._trials: dict[int, Trial] = {}
        self._next_number = 0

    # -- protocol ----------------------------------------------------------------------
    def ask(self, n: int = 1) -> list[Point]:
        """Propose up to ``n`` points; fewer (possibly none) when the space is exhausted.

        The points get trial numbers ``next_number, next_number + 1, ...`` in order.
        """
        if n < 0:
            raise ValueError(f"ask: n must be >= 0, got {n}")
        points = self._propose(n, self._next_number) if n else []
        for i, p in enumerate(points):
            self._trials[self._next_number + i] = Trial(
                self._next_number + i, dict(p), TrialStatus.RUNNING
            )
        self._next_number += len(points)
        return points

    def tell(self, trials: Iterable[Trial]) -> None:
        """Record trials in any status; finished ones replace pending ones of equal number."""
        for t in trials:
            self._trials[t.number] = t
            self._next_number = max(self._next_number, t.number + 1)
        self._on_tell()

    def forget_pending(self) -> list[int]:
        """Drop every pending (not finished) trial and return their numbers.

        A driver sharing its study with other drivers calls this when its asked points
        were stored under other numbers (or not at all: the study's budget was reached
        meanwhile), then re-tells the storage's trials, pending ones included.
        """
        gone = sorted(n for n, t in self._trials.items() if not t.status.finished)
        for n in gone:
            del self._trials[n]
        self._next_number = max(self._trials, default=-1) + 1
        self._on_tell()
        return gone

    # -- for subclasses ----------------------------------------------------------------
    @abstractmethod
    def _propose(self, n: int, first_number: int) -> list[Point]:
        """Return up to ``n`` points for trial numbers ``first_number, ...``."""

    def _on_tell(self) -> None:  # noqa: B027 - optional hook
        """Called after every tell (e.g. to mark the surrogate stale)."""

    @property
    def trials(self) -> list[Trial]:
        return [self._trials[k] for k in sorted(self._trials)]

    @property
    def finished_trials(self) -> list[Trial]:
        return [t for t in self.trials if t.status.finished]

    @property
    def pending_trials(self) -> list[Trial]:
        return [t for t in self.trials if not t.status.finished]

    @property
    def next_number(self) -> int:
        return self._next_number
