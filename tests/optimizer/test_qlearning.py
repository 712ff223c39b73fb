"""Q-learning optimizer: legality, determinism, reconstruction, learning, rewards."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from design_space import (
    Categorical,
    Constraint,
    DesignSpace,
    Fixed,
    Integer,
    JointSpace,
    Ordinal,
    Permutation,
    PowerOfTwo,
    Real,
)
from optimizer import Objective, QLearning, RandomSearch, Trial, TrialStatus, make_optimizer
from tests.design_space.helpers import hw, sw_for

OBJ = (Objective("cost"),)


def conditional_space() -> DesignSpace:
    """Conditional parameters (a chain), a permutation, a real and tight known constraints."""
    return DesignSpace(
        Categorical("arch", ["systolic", "spatial", "simd"]),
        PowerOfTwo("rows", 2, 64, active_if={"arch": ["systolic", "simd"]}),
        PowerOfTwo("cols", 2, 64),
        Integer("pes", 1, 6, active_if={"arch": "spatial"}),
        Ordinal("rf", [16, 32, 64, 128], active_if={"pes": [4, 5, 6]}),
        Permutation("order", ["k", "c", "p"]),
        Real("clk", 0.5, 2.0),
        Fixed("word", 16),
        constraints=[
            Constraint("pe_budget", "rows * cols <= 256"),
            Constraint("rf_budget", "arch != 'spatial' or pes * rf <= 256"),
            Constraint("fast_small", "clk <= 1.5 or cols <= 16"),
        ],
    )


def cost(p: dict) -> float:
    """A toy objective over any point (absent parameters count 1)."""
    v = abs(math.log2(p.get("rows", 8)) - 3) + abs(math.log2(p.get("cols", 4)) - 5)
    v += 0.3 * abs(p.get("pes", 3) - 5) + 0.01 * abs(p.get("rf", 64) - 64)
    v += 0.5 * ("order" in p and p["order"][0] != "c") + abs(p.get("clk", 1.0) - 1.2)
    return v + 1.0


def outcome(number: int, p: dict, fail_every: int = 0) -> Trial:
    """COMPLETE with ``cost``; every ``fail_every``-th trial INFEASIBLE / FAILED instead."""
    if fail_every and number % fail_every == fail_every - 1:
        status = TrialStatus.INFEASIBLE if number % 2 else TrialStatus.FAILED
        return Trial(number, p, status, reason="toy")
    return Trial(number, p, TrialStatus.COMPLETE, {"cost": cost(p)})


def run_serial(opt: QLearning, steps: int, fail_every: int = 0) -> list[dict]:
    points = []
    for _ in range(steps):
        (p,) = opt.ask(1)
        points.append(p)
        opt.tell([outcome(opt.next_number - 1, p, fail_every)])
    return points


# ---------------------------------------------------------------- legality
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), fail_every=st.sampled_from([0, 3, 7]),
       restart_best=st.sampled_from([0.0, 0.5, 1.0]), episode_length=st.integers(1, 6))
def test_proposals_never_violate_known_constraints(seed, fail_every, restart_best, episode_length):
    s = conditional_space()
    opt = QLearning(s, OBJ, seed, restart_best=restart_best, episode_length=episode_length)
    points = run_serial(opt, 30, fail_every) + opt.ask(3)
    for p in points:
        assert s.validate(p) == [], p
    keys = [s.point_key(p) for p in points]
    assert len(set(keys)) == len(keys)  # a huge space: never a repeat


def test_legal_actions_are_the_space_neighbors_and_match_their_action():
    s = conditional_space()
    opt = QLearning(s, OBJ, 0)
    for p in s.sample(30, 1):
        moves = opt.legal_actions(p)
        assert sorted(map(s.point_key, moves.values())) == sorted(map(s.point_key, s.neighbors(p)))
        for (name, k), q in moves.items():
            assert s.validate(q) == []
            if name == "order":
                w = list(p["order"])
                w[k], w[k + 1] = w[k + 1], w[k]
                assert q["order"] == tuple(w)
            elif name == "arch":
                assert q["arch"] == ["systolic", "spatial", "simd"][k]
            elif name in ("rows", "cols"):
                assert q[name] == (p[name] * 2 if k == 1 else p[name] // 2)
            elif name == "clk":
                assert (q["clk"] > p["clk"]) == (k == 1)
                assert abs(q["clk"] - p["clk"]) <= 0.05 * 1.5 + 1e-9
            else:
                assert name in ("pes", "rf")
                assert q[name] != p[name]
    assert not any(a[0] == "word" for a in opt.actions)  # Fixed: no actions


def test_never_repeats_a_point_while_an_unevaluated_one_exists():
    s = DesignSpace(Integer("a", 0, 4), Categorical("b", ["x", "y"]))
    opt = QLearning(s, OBJ, 5)
    pts = []
    for i in range(10):
        (p,) = opt.ask(1)
        pts.append(s.point_key(p))
        opt.tell([Trial(i, p, TrialStatus.COMPLETE, {"cost": float(p["a"])})])
    assert len(set(pts)) == 10  # the whole space, each point once


# ---------------------------------------------------------------- determinism
def test_same_seed_same_sequence_and_seed_matters():
    a = run_serial(QLearning(conditional_space(), OBJ, 11), 30, fail_every=5)
    b = run_serial(QLearning(conditional_space(), OBJ, 11), 30, fail_every=5)
    c = run_serial(QLearning(conditional_space(), OBJ, 12), 30, fail_every=5)
    assert a == b
    assert a != c


def test_batch_ask_is_deterministic_and_uses_independent_walkers():
    def batches(seed):
        s = conditional_space()
        opt = QLearning(s, OBJ, seed)
        out = []
        for _ in range(6):
            pts = opt.ask(4)
            assert len(pts) == 4
            out += pts
            first = opt.next_number - 4
            # finish in reverse order (asynchronous completion)
            opt.tell([outcome(first + i, p, 5) for i, p in reversed(list(enumerate(pts)))])
        return s, opt, out

    s, opt, a = batches(3)
    _, _, b = batches(3)
    assert a == b
    assert all(s.validate(p) == [] for p in a)
    assert len({s.point_key(p) for p in a}) == len(a)
    assert opt.n_walkers == 4


# ---------------------------------------------------------------- reconstruction
@pytest.mark.parametrize("space_fn", [conditional_space, lambda: JointSpace(hw(), sw_for)])
def test_rebuilt_from_history_continues_exactly_in_serial_mode(space_fn):
    s = space_fn()
    opt = QLearning(s, OBJ, 21, episode_length=4)
    history: list[Trial] = []
    q_after_25 = None
    for i in range(40):
        (p,) = opt.ask(1)
        t = outcome(i, p, fail_every=6)
        history.append(t)
        opt.tell([t])
        if i == 24:
            q_after_25 = opt.q_table
    assert q_after_25

    # told at once, in one call
    fresh = QLearning(space_fn(), OBJ, 21, episode_length=4)
    fresh.tell(history[:25])
    assert fresh.q_table == q_after_25
    for i in range(25, 40):
        (p,) = fresh.ask(1)
        assert p == history[i].params, i
        fresh.tell([history[i]])
    assert fresh.q_table == opt.q_table

    # told out of order, in several calls (forces a replay in number order)
    shuffled = QLearning(space_fn(), OBJ, 21, episode_length=4)
    shuffled.tell(history[10:25])
    shuffled.tell(history[3:10][::-1])
    shuffled.tell(history[:3])
    assert shuffled.q_table == q_after_25
    assert shuffled.ask(1)[0] == history[25].params


def test_rebuilt_with_a_pending_trial_is_deterministic():
    s = conditional_space()
    full = QLearning(s, OBJ, 4)
    hist = [outcome(i, p) for i, p in enumerate(run_serial(full, 15))]
    a, b = QLearning(s, OBJ, 4), QLearning(s, OBJ, 4)
    for o in (a, b):
        o.tell([*hist[:12], Trial(12, hist[12].params, TrialStatus.RUNNING)])
    assert a.next_number == 13
    assert a.ask(2) == b.ask(2)


# ---------------------------------------------------------------- learning
def test_learns_a_valley_better_than_random_search():
    s = DesignSpace(Ordinal("x", list(range(31))), Ordinal("y", list(range(31))))
    obj = (Objective("f"),)

    def f(p):
        return float((p["x"] - 23) ** 2 + (p["y"] - 7) ** 2)

    def best_of(opt, budget=150):
        best = math.inf
        for i in range(budget):
            (p,) = opt.ask(1)
            best = min(best, f(p))
            opt.tell([Trial(i, p, TrialStatus.COMPLETE, {"f": f(p)})])
        return best

    ql_opts = [QLearning(s, obj, seed) for seed in range(5)]
    ql = [best_of(o) for o in ql_opts]
    rs = [best_of(RandomSearch(s, obj, seed)) for seed in range(5)]
    assert statistics.median(ql) < statistics.median(rs), (ql, rs)
    assert all(o.q_table for o in ql_opts)
    # it also learned which moves help: positive Q for some improving moves
    assert any(v > 0 for o in ql_opts for v in o.q_table.values())


def test_maximization_direction_is_respected():
    s = DesignSpace(Integer("x", 0, 40))
    obj = (Objective("gain", "max"),)
    opt = QLearning(s, obj, 0)
    for i in range(40):
        (p,) = opt.ask(1)
        opt.tell([Trial(i, p, TrialStatus.COMPLETE, {"gain": float(p["x"]) + 1.0})])
    assert opt.best == {"x": 40}
    ups = [v for (_, a), v in opt.q_table.items() if a == ("x", 1)]
    downs = [v for (_, a), v in opt.q_table.items() if a == ("x", -1)]
    assert ups and all(v > 0 for v in ups)  # larger gain = positive reward
    assert all(v < 0 for v in downs)


# ---------------------------------------------------------------- rewards
@pytest.mark.parametrize(
    "bad",
    [
        lambda n, p: Trial(n, p, TrialStatus.INFEASIBLE, reason="no mapping"),
        lambda n, p: Trial(n, p, TrialStatus.FAILED, reason="crash"),
        lambda n, p: Trial(n, p, TrialStatus.COMPLETE, {"cost": 1.0}, {"area": 3.0}),
        lambda n, p: Trial(n, p, TrialStatus.COMPLETE, {"cost": math.nan}),
    ],
    ids=["infeasible", "failed", "outcome-constraint", "nan"],
)
def test_bad_outcomes_are_punished_and_the_walker_stays(bad):
    s = DesignSpace(Integer("x", 0, 20), Integer("y", 0, 20))
    opt = QLearning(s, OBJ, 2, restart_best=0.0)
    (start,) = opt.ask(1)  # an episode's start: a fresh sample, no update
    opt.tell([Trial(0, start, TrialStatus.COMPLETE, {"cost": 10.0})])
    assert opt.q_table == {}
    (step,) = opt.ask(1)
    assert step in opt.legal_actions(start).values()
    action = next(a for a, q in opt.legal_actions(start).items() if q == step)
    opt.tell([bad(1, step)])
    assert opt.q_value(start, action) == pytest.approx(-0.5)  # alpha * (-1 - 0)
    (nxt,) = opt.ask(1)  # still at ``start``: the next move starts from it again
    assert nxt in opt.legal_actions(start).values() and nxt != step
    # an improvement gives a positive reward and the walker moves onto it
    opt.tell([Trial(2, nxt, TrialStatus.COMPLETE, {"cost": 5.0})])
    a2 = next(a for a, q in opt.legal_actions(start).items() if q == nxt)
    assert opt.q_value(start, a2) == pytest.approx(0.5 * math.tanh(0.5))
    (after,) = opt.ask(1)
    assert after in opt.legal_actions(nxt).values()


def test_reward_is_scale_free():
    s = DesignSpace(Integer("x", 0, 20))
    qs = []
    for scale in (1.0, 1e9):
        opt = QLearning(s, OBJ, 0, restart_best=0.0)
        (a,) = opt.ask(1)
        opt.tell([Trial(0, a, TrialStatus.COMPLETE, {"cost": 10.0 * scale})])
        (b,) = opt.ask(1)
        opt.tell([Trial(1, b, TrialStatus.COMPLETE, {"cost": 8.0 * scale})])
        qs.append(opt.q_table)
    assert qs[0] == qs[1]
    assert next(iter(qs[0].values())) == pytest.approx(0.5 * math.tanh(0.2))


# ---------------------------------------------------------------- joint space, permutations
def test_works_on_a_joint_space():
    j = JointSpace(hw(), sw_for)
    opt = QLearning(j, OBJ, 8, episode_length=5)
    names = {a[0] for a in opt.actions}
    assert names == {"rows", "buf_words", "tile_k", "unroll", "order"}
    pts = []
    for i in range(60):
        got = opt.ask(1)
        if not got:
            break
        (p,) = got
        pts.append(p)
        v = p["rows"] / p["tile_k"] + 3.0 / p["unroll"] + (p["order"][0] == "n")
        opt.tell([Trial(i, p, TrialStatus.COMPLETE, {"cost": v})])
    assert len(pts) == 60
    assert all(j.validate(p) == [] for p in pts)
    assert len({j.point_key(p) for p in pts}) == min(60, j.cardinality())
    assert opt.q_table
    # hardware moves exist (software carried over) as well as software moves
    some = pts[-1]
    assert {a[0] for a in opt.legal_actions(some)} & {"rows", "buf_words"}
    assert {a[0] for a in opt.legal_actions(some)} & {"tile_k", "unroll", "order"}


def test_permutation_actions_are_adjacent_swaps_and_find_the_order():
    items = ["a", "b", "c", "d", "e"]
    target = ("d", "b", "e", "a", "c")
    s = DesignSpace(Permutation("order", items), Integer("n", 0, 3))
    opt = QLearning(s, OBJ, 1)
    assert [a for a in opt.actions if a[0] == "order"] == [("order", i) for i in range(4)]

    def inversions(p):
        pos = [target.index(x) for x in p["order"]]
        return sum(pos[i] > pos[j] for i in range(5) for j in range(i + 1, 5)) + p["n"]

    p0 = {"order": tuple(items), "n": 2}
    moves = opt.legal_actions(p0)
    for i in range(4):
        w = list(items)
        w[i], w[i + 1] = w[i + 1], w[i]
        assert moves[("order", i)] == {"order": tuple(w), "n": 2}

    def best_of(o, budget=120):
        best = math.inf
        for i in range(budget):
            (p,) = o.ask(1)
            best = min(best, inversions(p))
            o.tell([Trial(i, p, TrialStatus.COMPLETE, {"cost": float(inversions(p)) + 1.0})])
        return best

    # 480 points, 120 evaluations: walking adjacent swaps beats random sampling
    ql = [best_of(QLearning(s, OBJ, seed)) for seed in range(5)]
    rs = [best_of(RandomSearch(s, OBJ, seed)) for seed in range(5)]
    assert statistics.median(ql) < statistics.median(rs), (ql, rs)
    assert ql.count(0) >= 3, ql


# ---------------------------------------------------------------- options
def test_registered_and_options_validated():
    s = conditional_space()
    opt = make_optimizer("qlearning", s, OBJ, 0, {"episode_length": 3, "gamma": 0.5})
    assert isinstance(opt, QLearning) and opt.episode_length == 3 and opt.gamma == 0.5
    with pytest.raises(ValueError, match="bad options"):
        make_optimizer("qlearning", s, OBJ, 0, {"nope": 1})


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("episode_length", 0),
        ("episode_length", 2.5),
        ("episode_length", True),
        ("restart_best", 1.5),
        ("restart_best", -0.1),
        ("epsilon", 2.0),
        ("epsilon_min", -1.0),
        ("epsilon_decay", -0.01),
        ("epsilon_decay", math.inf),
        ("alpha", 0.0),
        ("alpha", 1.5),
        ("gamma", 1.01),
        ("gamma", math.nan),
        ("max_redraws", -1),
    ],
)
def test_bad_hyperparameters_name_the_argument(option, value):
    with pytest.raises(ValueError, match=option):
        QLearning(conditional_space(), OBJ, 0, **{option: value})


def test_needs_an_objective():
    with pytest.raises(ValueError, match="objective"):
        QLearning(conditional_space(), None, 0)


def test_epsilon_schedule():
    opt = QLearning(conditional_space(), OBJ, 0)
    assert opt.epsilon_at(0) == pytest.approx(0.8)
    assert opt.epsilon_at(100) == pytest.approx(0.8 * math.exp(-1.0))
    assert opt.epsilon_at(10_000) == pytest.approx(0.1)
