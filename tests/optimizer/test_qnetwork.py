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
