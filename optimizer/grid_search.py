"""Exhaustive grid search over a finite space: every feasible point exactly once.

Points come in the space's canonical grid order (or a seeded shuffle of it with
``shuffle=True``). The optimizer skips every point already in the history, so a resumed
study continues with the first point not yet tried and the grid is never evaluated
twice; ``ask`` returns fewer points than requested (eventually none) once the grid is
exhausted, which ends the study.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from optimizer.base import Optimizer, Point


class GridSearch(Optimizer):
    """Exhaustive search of a finite ``DesignSpace`` / ``JointSpace``.

    Args:
        shuffle: visit the grid in a random (seeded) order instead of lexicographic
            order; needs the whole grid in memory.
    """

    name = "grid"

    def __init__(self, space, objectives=None, seed: int = 0, *, shuffle: bool = False) -> None:
        super().__init__(space, objectives, seed)
        if not getattr(space, "is_finite", False):
            raise ValueError("grid: the space is not finite (it has real-valued parameters)")
        self.shuffle = shuffle
        self._iter: Iterator[Point] | None = None
        self._issued: set[str] = set()

    def _points(self) -> Iterator[Point]:
        if not self.shuffle:
            yield from self.space.grid()
            return
        pts = list(self.space.grid())
        order = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(7,))).permutation(
            len(pts)
        )
        for i in order:
            yield pts[i]

    def _propose(self, n: int, first_number: int) -> list[Point]:
        if self._iter is None:
            self._iter = self._points()
        known = {self.space.point_key(t.params) for t in self.trials} | self._issued
        out: list[Point] = []
        for p in self._iter:
            key = self.space.point_key(p)
            if key in known:
                continue
            known.add(key)
            self._issued.add(key)
            out.append(p)
            if len(out) == n:
                break
        return out
