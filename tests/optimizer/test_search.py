"""Random and grid search: determinism, reconstruction from history, exhaustiveness."""

from __future__ import annotations

import pytest

from design_space import Categorical, Constraint, DesignSpace, Integer, JointSpace, PowerOfTwo, Real
from optimizer import (
    GridSearch,
    Objective,
    RandomSearch,
    Trial,
    TrialStatus,
    make_optimizer,
    parse_objectives,
)
from tests.design_space.helpers import hw, sw_for


def space() -> DesignSpace:
    return DesignSpace(
        PowerOfTwo("rows", 4, 64), PowerOfTwo("cols", 4, 64), Categorical("df", ["OS", "WS"]),
        Real("f", 0.0, 1.0),
        constraints=[Constraint("pe", "rows * cols <= 512")],
    )


def done(number: int, params: dict) -> Trial:
    return Trial(number, params, TrialStatus.COMPLETE, {"edp": 1.0})


def test_random_is_reproducible_and_batch_independent():
    a = RandomSearch(space(), seed=3).ask(10)
    b = RandomSearch(space(), seed=3)
    one_by_one = [b.ask(1)[0] for _ in range(10)]
    assert a == one_by_one
    assert a != RandomSearch(space(), seed=4).ask(10)
    for p in a:
        assert space().validate(p) == []


def test_random_reconstructed_from_history_continues_exactly():
    full = RandomSearch(space(), seed=7).ask(20)
    resumed = RandomSearch(space(), seed=7)
    # the killed run had finished 0..11 and was evaluating 12, 13
    resumed.tell([done(i, p) for i, p in enumerate(full[:12])])
    resumed.tell([Trial(i, full[i], TrialStatus.RUNNING) for i in (12, 13)])
    assert resumed.next_number == 14
    assert resumed.ask(6) == full[14:]


def test_random_deduplicates_on_small_spaces():
    s = DesignSpace(Integer("a", 0, 4))
    pts = RandomSearch(s, seed=0).ask(5)
    assert sorted(p["a"] for p in pts) == [0, 1, 2, 3, 4]


def test_grid_visits_every_point_once_then_stops():
    s = DesignSpace(Integer("a", 0, 3), Categorical("b", ["x", "y", "z"]), constraints=[Constraint("c", "a != 2")])
    g = GridSearch(s)
    got = g.ask(4) + g.ask(100)
    assert len(got) == s.cardinality() == 9
    assert len({s.point_key(p) for p in got}) == 9
    assert g.ask(3) == []


def test_grid_resume_skips_everything_already_tried():
    j = JointSpace(hw(), sw_for)
    total = list(GridSearch(j).ask(10_000))
    assert len(total) == j.cardinality()
    g = GridSearch(j)
    # history with gaps (e.g. re-queued trials are part of the history as WAITING)
    hist = [done(i, p) for i, p in enumerate(total[:30])] + [Trial(30, total[40], TrialStatus.WAITING)]
    g.tell(hist)
    rest = g.ask(10_000)
    assert len(rest) == len(total) - 31
    seen = {j.point_key(t.params) for t in hist}
    assert not seen & {j.point_key(p) for p in rest}


def test_grid_shuffle_is_seeded():
    s = DesignSpace(Integer("a", 0, 20))
    a = GridSearch(s, seed=1, shuffle=True).ask(21)
    assert a == GridSearch(s, seed=1, shuffle=True).ask(21)
    assert a != GridSearch(s, seed=2, shuffle=True).ask(21)
    assert sorted(p["a"] for p in a) == list(range(21))


def test_grid_rejects_infinite_space():
    with pytest.raises(ValueError, match="not finite"):
        GridSearch(DesignSpace(Real("r", 0, 1)))


def test_registry_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"unknown optimizer 'bayes' \(available: \[.*'grid'.*'random'"):
        make_optimizer("bayes", space(), (), 0)
    with pytest.raises(ValueError, match="optimizer 'random': bad options"):
        make_optimizer("random", space(), (), 0, {"temperature": 3})


def test_parse_objectives_forms():
    assert parse_objectives({"edp": "min", "acc": "max"}) == (Objective("edp"), Objective("acc", "max"))
    assert parse_objectives("-energy_pj, +accuracy") == (Objective("energy_pj"), Objective("accuracy", "max"))
    with pytest.raises(ValueError, match="direction must be 'min' or 'max', got 'up'"):
        parse_objectives({"edp": "up"})
    with pytest.raises(ValueError, match="duplicate"):
        parse_objectives(["edp", "-edp"])
    with pytest.raises(ValueError, match="at least one"):
        parse_objectives({})
