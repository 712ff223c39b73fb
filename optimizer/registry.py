"""Optimizers by name, so configs and the CLI can say ``optimizer: random``.

Later optimizers (constrained BO, MOBO, Q-learning) register here with :func:`register`.
The Optuna baselines ``tpe``, ``nsga2``, ``optuna-random`` and ``optuna-gp``
(:mod:`optimizer.optuna_adapter`) are registered with lazy factories: Optuna (the
optional ``baselines`` extra) is imported only when one of them is built, and a missing
Optuna is an ``ImportError`` that names the extra.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optimizer.base import Objective, Optimizer
from optimizer.grid_search import GridSearch
from optimizer.qlearning import QLearning
from optimizer.random_search import RandomSearch

OptimizerFactory = Callable[..., Optimizer]

def _constrained_bo(*a: Any, **k: Any) -> Optimizer:
    from optimizer.constrained_bo import ConstrainedBO  # lazy: imports torch/BoTorch

    return ConstrainedBO(*a, **k)


def _mobo(*a: Any, **k: Any) -> Optimizer:
    from optimizer.mobo import MOBO

    return MOBO(*a, **k)


def _optuna_factory(sampler: str) -> OptimizerFactory:
    def factory(space: Any, objectives: Sequence[Objective], seed: int = 0, **options: Any) -> Optimizer:
        from optimizer.optuna_adapter import OptunaOptimizer  # lazy: optional Optuna

        return OptunaOptimizer(space, objectives, seed, sampler=sampler, **options)

    factory.__name__ = factory.__qualname__ = f"optuna_{sampler}"
    factory.__doc__ = f"``OptunaOptimizer(..., sampler={sampler!r})`` (imports Optuna lazily)."
    return factory


_REGISTRY: dict[str, OptimizerFactory] = {
    "random": RandomSearch,
    "grid": GridSearch,
    "qlearning": QLearning,
    "constrained-bo": _constrained_bo,
    "mobo": _mobo,
    "tpe": _optuna_factory("tpe"),
    "nsga2": _optuna_factory("nsga2"),
    "optuna-random": _optuna_factory("random"),
    "optuna-gp": _optuna_factory("gp"),
}


def register(name: str, factory: OptimizerFactory) -> None:
    """Make ``factory(space, objectives, seed, **options)`` available as ``name``."""
    _REGISTRY[name] = factory


def available_optimizers() -> list[str]:
    return sorted(_REGISTRY)


def make_optimizer(
    name: str,
    space: Any,
    objectives: Sequence[Objective],
    seed: int,
    options: Mapping[str, Any] | None = None,
) -> Optimizer:
    """Build the optimizer called ``name``.

    Raises:
        ValueError: unknown name (the message lists the known ones) or options the
            optimizer does not accept (the message names them).
    """
    if name not in _REGISTRY:
        raise ValueError(f"unknown optimizer {name!r} (available: {available_optimizers()})")
    try:
        return _REGISTRY[name](space, objectives, seed, **dict(options or {}))
    except TypeError as e:
        raise ValueError(f"optimizer {name!r}: bad options {dict(options or {})}: {e}") from None
