"""Capacity as an unknown constraint of the inner mapping search (Shi et al.'s output
constraints): the space stops rejecting overflowing mappings, the cost model finds them
invalid and the ask/tell mapper tells them INFEASIBLE, trial by trial."""

from __future__ import annotations

import numpy as np
import pytest

from accelerators import eyeriss_v1
from evaluators.loopnest import LOOPNEST, evaluate_batch
from mappers.asktell import AskTellMapper
from mappers.mapping_space import batch_from_columns, mapping_space
from mappers.workloads import conv2d

LAYER = conv2d("c", K=16, C=8, P=14, Q=14, R=3, S=3)


def test_unknown_capacity_space_holds_overflowing_mappings_the_known_one_rejects():
    arch = eyeriss_v1().to_arch()
    known, unknown = mapping_space(LAYER, arch), mapping_space(LAYER, arch, capacity="unknown")
    assert {c.name for c in known.constraints} - {c.name for c in unknown.constraints} == {
        f"capacity_{lv.name}" for lv in arch.levels[:-1] if lv.capacity_words is not None}
    pts = unknown.sample(400, seed=0)
    valid = evaluate_batch(LAYER, arch, batch_from_columns(LAYER, arch, unknown.columns(pts))).valid
    assert 0 < valid.sum() < len(pts)           # overflow happens, and not everywhere
    # the known space's capacity constraints are exactly the model's validity on these points
    assert np.array_equal(known.feasible_mask(pts), valid)


class _Replay:
    """A strategy that proposes a fixed list of points, in order (and records what it is told)."""

    def __init__(self, points):
        self.points, self.told = list(points), []

    def ask(self, n):
        out, self.points = self.points[:n], self.points[n:]
        return out

    def tell(self, trials):
        self.told.extend(trials)


def test_asktell_tells_exactly_the_invalid_mappings_infeasible():
    arch = eyeriss_v1().to_arch()
    space = mapping_space(LAYER, arch, capacity="unknown")
    pts = space.sample(40, seed=5)
    valid = evaluate_batch(LAYER, arch, batch_from_columns(LAYER, arch, space.columns(pts))).valid
    strategies = []

    def factory(sp, objectives, seed, **options):
        assert [c.name for c in sp.constraints] == [c.name for c in space.constraints]
        strategies.append(_Replay(pts))
        return strategies[-1]

    r = AskTellMapper("replay", budget=40, capacity="unknown", factory=factory).map(
        LAYER, arch, LOOPNEST, "edp", seed=0)
    expected = tuple(int(i) for i in np.flatnonzero(~valid))
    assert 0 < len(expected) < 40
    assert r.info["infeasible_trials"] == expected and r.info["infeasible"] == len(expected)
    told = strategies[0].told
    assert [t.status.name for t in told] == ["INFEASIBLE" if not v else "COMPLETE" for v in valid]


def test_bad_capacity_mode_is_named():
    arch = eyeriss_v1().to_arch()
    with pytest.raises(ValueError, match=r"capacity.*'maybe'"):
        mapping_space(LAYER, arch, capacity="maybe")
    with pytest.raises(ValueError, match=r"AskTellMapper\.capacity.*'maybe'"):
        AskTellMapper("random", capacity="maybe")
