"""Every registered optimizer against the ask/tell protocol (:mod:`optimizer.testing`),
and proof that each check catches a broken optimizer."""

from __future__ import annotations

import numpy as np
import pytest

from optimizer.base import Optimizer
from optimizer.random_search import RandomSearch
from optimizer.registry import OPTIMIZERS
from optimizer.testing import (
    ConformanceError,
    check_ask_tell,
    check_optimizer,
    check_resume,
    check_state_is_seed_and_history,
)

# Small settings per entry (the checks tell ~12 trials); objectives: how many it optimizes.
CASES: dict[str, dict] = {
    "random": {},
    "grid": {},
    "qlearning": {},
    "qnetwork": {"options": {"epochs": 1}},
    "constrained-bo": {"options": {"n_init": 3, "pool_size": 64, "n_local": 1}, "slow": True},
    "mobo": {"options": {"n_init": 3, "pool_size": 64, "n_local": 1}, "objectives": 2, "slow": True},
    "tpe": {},
    "nsga2": {"options": {"sampler_options": {"population_size": 4}}},
    "optuna-random": {},
    "optuna-gp": {"options": {"sampler_options": {"n_startup_trials": 3}}, "slow": True},
}


def test_every_registered_optimizer_has_a_case():
    assert set(OPTIMIZERS.names()) == set(CASES), "add a conformance case for each new optimizer"


def _marks(case):
    return [pytest.mark.slow] if case.get("slow") else []


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(c)) for n, c in CASES.items()])
def test_registered_optimizer_conforms(name):
    case = CASES[name]
    check_optimizer(OPTIMIZERS.get(name), case.get("options"), objectives=case.get("objectives", 1))


# ------------------------------------------------------------------ the checks can fail
class IgnoresTheSeed(RandomSearch):
    """Draws from unseeded randomness: two instances with one seed disagree."""

    def _propose(self, n, first_number):
        rng = np.random.default_rng()
        return self.space.sample(n, int(rng.integers(2**31)))


class CountsAsks(Optimizer):
    """Proposes by how many times ask was called, which a rebuilt instance does not know."""

    def __init__(self, space, objectives=None, seed=0):
        super().__init__(space, objectives, seed)
        self.calls = 0
        self.grid = list(space.grid())

    def _propose(self, n, first_number):
        self.calls += 1
        return [self.grid[(self.calls * 5 + i) % len(self.grid)] for i in range(n)]


class ProposesOutside(RandomSearch):
    """Proposes a point the space's known constraint forbids."""

    def _propose(self, n, first_number):
        return [{"a": 16, "b": "x", "c": 3}] * n


def test_the_checks_catch_broken_optimizers():
    check_optimizer(RandomSearch)   # the unbroken base passes
    with pytest.raises(ConformanceError, match="state is not f\\(seed, history\\)"):
        check_state_is_seed_and_history(IgnoresTheSeed)
    with pytest.raises(ConformanceError, match="resume"):
        check_resume(CountsAsks)
    with pytest.raises(ConformanceError, match="not a valid point"):
        check_ask_tell(ProposesOutside)
