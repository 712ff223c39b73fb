"""Optimizers by name, so configs and the CLI can say ``optimizer: random``.

Later optimizers (constrained BO, MOBO, Q-learning, TPE/NSGA-II adapters) register here
with :func:`register`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optimizer.base import Objective, Optimizer
from optimizer.grid_search import GridSearch
from optimizer.random_search import RandomSearch

OptimizerFactory = Callable[..., Optimizer]

_REGISTRY: dict[str, OptimizerFactory] = {
    "random": RandomSearch,
    "grid": GridSearch,
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
