"""Random search: each proposal is an independent feasible sample.

Proposal ``i`` (the one that becomes trial ``i``) is drawn from a generator seeded by
``(seed, i)``, so the sequence of points is the same whether a study runs in one go, is
killed and resumed, or asks for points one at a time or in batches.
"""

from __future__ import annotations

from optimizer.base import Optimizer, Point, proposal_rng


class RandomSearch(Optimizer):
    """Uniform random sampling of feasible points (known constraints by rejection).

    Args:
        space: a ``DesignSpace`` or ``JointSpace``.
        objectives: unused (random search ignores results); kept for a uniform signature.
        seed: study-derived seed.
        deduplicate: skip points already proposed in this study (re-draws up to
            ``max_redraws`` times; on small finite spaces this turns random search into
            sampling without replacement).
    """

    name = "random"

    def __init__(self, space, objectives=None, seed: int = 0, *, deduplicate: bool = True,
                 max_redraws: int = 100) -> None:
        super().__init__(space, objectives, seed)
        self.deduplicate = deduplicate
        self.max_redraws = max_redraws

    def _propose(self, n: int, first_number: int) -> list[Point]:
        seen = {self.space.point_key(t.params) for t in self.trials} if self.deduplicate else set()
        out: list[Point] = []
        for i in range(n):
            rng = proposal_rng(self.seed, first_number + i)
            point = self.space.sample(1, rng)[0]
            if self.deduplicate:
                for _ in range(self.max_redraws):
                    key = self.space.point_key(point)
                    if key not in seen:
                        break
                    point = self.space.sample(1, rng)[0]
                seen.add(self.space.point_key(point))
            out.append(point)
        return out
