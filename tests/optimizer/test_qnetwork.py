"""FlexTensor-style Q-network search: its network, its walk, its validation."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from design_space import Constraint, DesignSpace, Ordinal, Permutation
from optimizer import Objective, QNetwork, RandomSearch, Trial, TrialStatus, make_optimizer
from optimizer.qnetwork import MLP

OBJ = (Objective("f"),)


def valley() -> DesignSpace:
    return DesignSpace(Ordinal("x", list(range(31))), Ordinal("y", list(range(31))),
                       constraints=[Constraint("corner", "x + y <= 55")])


def f(p: dict) -> float:
    return float((p["x"] - 23) ** 2 + (p["y"] - 7) ** 2)


def run(opt, budget: int, fn=f) -> list[dict]:
    out = []
    for i in range(budget):
        got = opt.ask(1)
        if not got:
            break
        (p,) = got
        out.append(p)
        opt.tell([Trial(i, p, TrialStatus.COMPLETE, {"f": fn(p)})])
    return out


def test_mlp_backpropagation_matches_finite_differences():
    """Adam's first step moves every weight by ``-lr * sign(gradient)``; the sign must be
    that of the numerical gradient of the loss the step minimizes."""
    net = MLP((3, 5, 4), seed=1)
    rng = np.random.default_rng(0)
    x, col, y = rng.normal(size=(7, 3)), rng.integers(0, 4, size=7), rng.normal(size=7)

    def loss(m: MLP) -> float:
        out = m.predict(x)
        return float(np.mean((out[np.arange(7), col] - y) ** 2))

    checked = 0
    for layer in range(2):
        for idx in np.ndindex(net.weights[layer].shape):
            h = 1e-6
            plus, minus = net.copy(), net.copy()
            plus.weights[layer][idx] += h
            minus.weights[layer][idx] -= h
            g = (loss(plus) - loss(minus)) / (2 * h)
            if abs(g) < 1e-4:
                continue
            stepped = net.copy()
            stepped.step(x, col, y, lr=1e-5)
            delta = stepped.weights[layer][idx] - net.weights[layer][idx]
            assert delta == pytest.approx(-1e-5 * np.sign(g), rel=1e-3), (layer, idx, g)
            checked += 1
    assert checked > 10
    # and training fits the targets
    fit = net.copy()
    first = fit.step(x, col, y, 1e-2)
    for _ in range(500):
        last = fit.step(x, col, y, 1e-2)
    assert last < 0.01 * first


def test_proposals_are_feasible_new_states_and_deterministic():
    s = valley()
    a = run(QNetwork(s, OBJ, 3, epochs=2), 120)
    b = run(QNetwork(s, OBJ, 3, epochs=2), 120)
    c = run(QNetwork(s, OBJ, 4, epochs=2), 120)
    assert a == b and a != c
    assert all(s.validate(p) == [] for p in a)
    keys = [s.point_key(p) for p in a]
    assert len(set(keys)) == len(keys) == 120


def test_learning_is_what_beats_random_search():
    """A 4-d valley (923,521 points): the trained network walks down it; the same walk with
    an untrained network (``epochs=0``) does not, and random search at the same budget is
    in between."""
    s = DesignSpace(*[Ordinal(n, list(range(31))) for n in "abcd"])
    target = {"a": 23, "b": 7, "c": 15, "d": 28}

    def g(p):
        return float(sum((p[k] - v) ** 2 for k, v in target.items()))

    def med(make):
        return statistics.median(min(map(g, run(make(seed), 100, fn=g))) for seed in range(5))

    trained = med(lambda seed: QNetwork(s, OBJ, seed, epochs=5))
    untrained = med(lambda seed: QNetwork(s, OBJ, seed, epochs=0))
    rand = med(lambda seed: RandomSearch(s, OBJ, seed))
    assert trained < rand < untrained, (trained, rand, untrained)


def test_moves_follow_the_q_network_when_greedy():
    """With no exploration, the move taken from the only evaluated point is the one of
    largest Q (every move is legal from an interior point)."""
    s = DesignSpace(Ordinal("x", list(range(20))), Permutation("o", ["a", "b", "c"]))
    start = {"x": 10, "o": ("a", "b", "c")}
    for seed in range(4):
        opt = QNetwork(s, OBJ, seed, epsilon=0.0, epsilon_min=0.0, parallel=1, epochs=0)
        opt.tell([Trial(0, start, TrialStatus.COMPLETE, {"f": 1.0})])
        (p,) = opt.ask(1)
        if p["x"] != start["x"]:
            taken = ("x", 1 if p["x"] > start["x"] else -1)
        else:
            taken = ("o", next(i for i in range(2) if p["o"][i] != start["o"][i]))
        q = opt.q_values([start])[0]
        assert opt.actions.index(taken) == int(np.argmax(q))


def test_infeasible_moves_are_punished():
    s = valley()
    opt = QNetwork(s, OBJ, 0, epochs=3, parallel=2)
    pts = run(opt, 30, fn=lambda p: math.inf if p["x"] > 20 else f(p))
    assert len(pts) == 30 and opt.rounds > 0


@pytest.mark.parametrize("option, value", [
    ("parallel", 0), ("moves", 0), ("depth", 1), ("epsilon", 1.5), ("gamma", -0.1),
    ("learning_rate", 0.0), ("batch_size", 0), ("accept", math.nan), ("epochs", True),
])
def test_bad_options_name_the_argument(option, value):
    with pytest.raises(ValueError, match=option):
        QNetwork(valley(), OBJ, 0, **{option: value})


def test_registered_and_needs_an_objective():
    assert isinstance(make_optimizer("qnetwork", valley(), OBJ, 0, {"epochs": 1}), QNetwork)
    with pytest.raises(ValueError, match="objectives"):
        QNetwork(valley(), (), 0)


# ---------------------------------------------------------------- moves a space provides
P2 = [1, 2, 4, 8, 16, 32, 64]
LOOPS = "xyz"
LEVELS = ("a", "b", "c")                     # c: the implicit outer level, 64 / (a * b)
SPLIT_ACTIONS = tuple(("transfer", lp, s, d) for lp in LOOPS for s in LEVELS for d in LEVELS if s != d)
TARGET = {"x": (3, 1), "y": (0, 5), "z": (2, 2)}


def split_space() -> DesignSpace:
    """Three loops of extent 64, each split in three levels (a x b x c = 64): a small,
    enumerable model of a schedule space (21,952 points)."""
    params = [Ordinal(f"{lv}_{lp}", P2) for lp in LOOPS for lv in "ab"]
    return DesignSpace(*params, constraints=[Constraint(f"fits_{lp}", f"a_{lp} * b_{lp} <= 64") for lp in LOOPS])


def split_cost(p: dict) -> float:
    """Smooth in the exponents; 1.0 at the one optimum."""
    s = 0.0
    for lp, (ta, tb) in TARGET.items():
        ea, eb = int(math.log2(p[f"a_{lp}"])) - ta, int(math.log2(p[f"b_{lp}"])) - tb
        s += ea * ea + eb * eb + 0.5 * ea * eb
    return 1.0 + s


def split_moves(p: dict) -> list[tuple[tuple, dict]]:
    """FlexTensor's split moves: a factor of 2 from one level of a loop to another."""
    out = []
    for act in SPLIT_ACTIONS:
        _, lp, src, dst = act
        q = dict(p)
        if src != "c":
            if q[f"{src}_{lp}"] == 1:
                continue
            q[f"{src}_{lp}"] //= 2
        if dst != "c":
            q[f"{dst}_{lp}"] *= 2
        if q[f"a_{lp}"] * q[f"b_{lp}"] <= 64 and max(q[f"a_{lp}"], q[f"b_{lp}"]) <= 64:
            out.append((act, q))
    return out


def test_extra_moves_are_actions_and_stay_in_the_space():
    s = split_space()
    opt = QNetwork(s, OBJ, 0, epochs=1, extra_actions=SPLIT_ACTIONS, extra_moves=split_moves, keep_starts=True)
    assert opt.actions[-len(SPLIT_ACTIONS):] == SPLIT_ACTIONS
    pts = run(opt, 60, fn=split_cost)
    assert all(s.validate(p) == [] for p in pts) and len({s.point_key(p) for p in pts}) == 60
    # from an interior point every split move is legal and proposed under its own label
    mid = {f"{lv}_{lp}": 4 for lp in LOOPS for lv in "ab"}
    legal = opt._legal(-1, mid)
    labels = {opt.actions[a] for a, _, _ in legal}
    assert set(SPLIT_ACTIONS) <= labels
    with pytest.raises(ValueError, match="extra_actions, extra_moves"):
        QNetwork(s, OBJ, 0, extra_actions=SPLIT_ACTIONS)
    with pytest.raises(ValueError, match="unique"):
        QNetwork(s, OBJ, 0, extra_actions=(("a_x", 1),), extra_moves=split_moves)


def test_rewarm_proposes_fresh_samples_every_few_rounds():
    s = split_space()
    opt = QNetwork(s, OBJ, 0, epochs=0, parallel=2, rewarm_every=2)
    run(opt, 40, fn=split_cost)
    fresh = [p for p in opt._plans.values() if p.origin is None]
    # the first proposal (empty pool), then two fresh samples every second round
    assert len(fresh) >= 1 + 2 * (opt.rounds // 2) - 2
    with pytest.raises(ValueError, match="rewarm_every"):
        QNetwork(s, OBJ, 0, rewarm_every=-1)


def test_learning_finds_the_optimum_of_a_split_space():
    """On the split space (one optimum in 21,952 points) the trained Q-network walk with
    split moves reaches the optimum in more runs, and sooner, than the same walk with an
    untrained network; random search at the same budget does not reach it at all. A
    learner that learns the wrong thing (e.g. a reward of the wrong sign) or nothing fails
    this."""
    s = split_space()

    def first_hits(make) -> list[int]:
        hits = []
        for seed in range(12):
            vals = [split_cost(p) for p in run(make(seed), 150, fn=split_cost)]
            hits.append(next((i + 1 for i, v in enumerate(vals) if v <= 1.0), 151))
        return hits

    def walk(epochs):
        return lambda seed: QNetwork(s, OBJ, seed, epochs=epochs, keep_starts=True,
                                     extra_actions=SPLIT_ACTIONS, extra_moves=split_moves)

    trained, untrained = first_hits(walk(5)), first_hits(walk(0))
    rand = first_hits(lambda seed: RandomSearch(s, OBJ, seed))
    found = [sum(h <= 150 for h in x) for x in (trained, untrained, rand)]
    assert found[0] > found[1] > found[2] == 0, found
    assert statistics.median(trained) < statistics.median(untrained), (trained, untrained)


# ---------------------------------------------------------------- resume: state = f(seed, history)
def _scored(number: int, p: dict) -> Trial:
    """COMPLETE below x = 26, INFEASIBLE above (so -1 rewards are replayed too)."""
    if p["x"] > 25:
        return Trial(number, p, TrialStatus.INFEASIBLE, reason="x > 25")
    return Trial(number, p, TrialStatus.COMPLETE, {"f": f(p)})


@pytest.mark.parametrize("kill", [0, 1, 9, 30])
def test_rebuilt_from_a_serial_history_continues_the_walk(kill):
    """A study killed after ``kill`` serial steps (a random warm-up told first, as the
    schedule search does) and rebuilt by telling a fresh instance the history continues
    with the original's points, and holds its walk: the rounds planned, the network's
    weights, the queued moves. The walk's plans live only in the process that asked, so an
    instance that lets the resumed trials merely join its pool fails this."""
    s = valley()
    opts = {"epochs": 2, "parallel": 3, "rewarm_every": 3, "keep_starts": True}
    a = QNetwork(s, OBJ, 7, **opts)
    history = [_scored(i, p) for i, p in enumerate(s.sample(4, 123))]
    a.tell(history)
    for n in range(len(history), len(history) + kill):
        (p,) = a.ask(1)
        history.append(_scored(n, p))
        a.tell([history[-1]])
    b = QNetwork(s, OBJ, 7, **opts)
    b.tell(history)
    assert b.rounds == a.rounds
    assert [q.key for q in b._queue] == [q.key for q in a._queue]
    assert all(np.array_equal(u, v) for u, v in zip(b.network.weights, a.network.weights))
    n = len(history)
    for _ in range(25):
        pa, pb = a.ask(1), b.ask(1)
        assert pa == pb
        a.tell([_scored(n, pa[0])])
        b.tell([_scored(n, pa[0])])
        n += 1


def test_trials_it_did_not_propose_leave_the_walk_untouched():
    """A trial that is not the walk's next proposal (a warm-up, another driver's point)
    only joins the pool: re-deriving its plan plans no round and trains nothing."""
    s = valley()
    opt = QNetwork(s, OBJ, 0, epochs=2, parallel=2)
    run(opt, 12)
    before = (opt.rounds, [w.copy() for w in opt.network.weights], list(opt._queue), len(opt._pool))
    n = opt.next_number
    proposed = {s.point_key(t.params) for t in opt.trials}
    other = next(p for p in s.sample(50, 9) if s.point_key(p) not in proposed)
    opt.tell([Trial(n, other, TrialStatus.COMPLETE, {"f": f(other)})])
    assert opt.rounds == before[0] and list(opt._queue) == before[2]
    assert all(np.array_equal(u, v) for u, v in zip(opt.network.weights, before[1]))
    assert len(opt._pool) == before[3] + 1 and n not in opt._plans
