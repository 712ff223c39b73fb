"""Optimizers by name, so configs and the CLI can say ``optimizer: constrained-bo``.

The names live in one :class:`design_space.registry.Registry` (entry-point group
``coexplore.optimizers``): the built-in ones below, any registered with :func:`register`
(e.g. by a module a study config lists under ``plugins:``), and any that an installed
package declares as an entry point. A factory is called as
``factory(space, objectives, seed, **options)`` and returns an :class:`Optimizer`.

Built in: ``random``, ``grid``, ``qlearning``, ``qnetwork``; ``constrained-bo`` and ``mobo`` (BoTorch,
imported on first use); and the Optuna baselines ``tpe``, ``nsga2``, ``optuna-random`` and
``optuna-gp`` (:mod:`optimizer.optuna_adapter`): Optuna, the optional ``baselines`` extra, is
imported only when one of them is built, and a missing Optuna is an ``ImportError`` that
names the extra.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from design_space.registry import Registry
from optimizer.base import Objective, Optimizer
from optimizer.grid_search import GridSearch
from optimizer.qlearning import QLearning
from optimizer.qnetwork import QNetwork
from optimizer.random_search import RandomSearch

__all__ = ["OPTIMIZERS", "OptimizerFactory", "available_optimizers", "make_optimizer", "register"]

OptimizerFactory = Callable[..., Optimizer]


def _optuna_factory(sampler: str) -> OptimizerFactory:
    def factory(space: Any, objectives: Sequence[Objective], seed: int = 0, **options: Any) -> Optimizer:
        from optimizer.optuna_adapter import OptunaOptimizer  # lazy: optional Optuna

        return OptunaOptimizer(space, objectives, seed, sampler=sampler, **options)

    factory.__name__ = factory.__qualname__ = f"optuna_{sampler}"
    factory.__doc__ = f"``OptunaOptimizer(..., sampler={sampler!r})`` (imports Optuna lazily)."
    return factory


OPTIMIZERS: Registry[OptimizerFactory] = Registry("optimizer", "coexplore.optimizers", {
    "random": RandomSearch,
    "grid": GridSearch,
    "qlearning": QLearning,
    "qnetwork": QNetwork,
    "constrained-bo": "optimizer.constrained_bo:ConstrainedBO",   # lazy: torch/BoTorch
    "mobo": "optimizer.mobo:MOBO",
    "tpe": _optuna_factory("tpe"),
    "nsga2": _optuna_factory("nsga2"),
    "optuna-random": _optuna_factory("random"),
    "optuna-gp": _optuna_factory("gp"),
})


def register(name: str, factory: OptimizerFactory, *, replace: bool = False) -> OptimizerFactory:
    """Make ``factory(space, objectives, seed, **options)`` available as ``name``."""
    return OPTIMIZERS.register(name, factory, replace=replace)


def available_optimizers() -> list[str]:
    return OPTIMIZERS.names()


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
    factory = OPTIMIZERS.get(name)
    try:
        return factory(space, objectives, seed, **dict(options or {}))
    except TypeError as e:
        raise ValueError(f"optimizer {name!r}: bad options {dict(options or {})}: {e}") from None
