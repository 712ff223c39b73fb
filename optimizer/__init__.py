"""Optimizers: propose design points from the trial history (ask/tell).

Every optimizer implements :class:`Optimizer`: ``ask(n) -> list[point]`` and
``tell(trials)``. An optimizer knows only its space, the objectives and the history;
its state is a pure function of ``(seed, history)``, so a resumed study rebuilds it by
telling it every stored trial and then continues exactly where it stopped (the walks,
``qlearning`` and ``qnetwork``, re-derive the plan of each trial; exactly so in serial
use, see :mod:`optimizer.qlearning` and :mod:`optimizer.qnetwork`).

Baselines: with the optional ``baselines`` extra (Optuna), :mod:`optimizer.optuna_adapter`
puts Optuna's samplers behind the same protocol: ``tpe`` (multivariate TPE), ``nsga2``
(NSGA-II, also the GA baseline for one objective), ``optuna-random`` and ``optuna-gp``
(Optuna's GP sampler); ``make_optimizer`` imports Optuna only when one of these is asked
for.
"""

from optimizer.base import Objective, Optimizer, Trial, TrialStatus, parse_objectives
from optimizer.grid_search import GridSearch
from optimizer.pareto import hypervolume, pareto_mask
from optimizer.qlearning import QLearning
from optimizer.qnetwork import QNetwork
from optimizer.random_search import RandomSearch
from optimizer.registry import available_optimizers, make_optimizer

__all__ = [
    "GridSearch",
    "Objective",
    "Optimizer",
    "QLearning",
    "QNetwork",
    "RandomSearch",
    "Trial",
    "TrialStatus",
    "available_optimizers",
    "hypervolume",
    "make_optimizer",
    "pareto_mask",
    "parse_objectives",
]
