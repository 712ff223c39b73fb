"""Every ask/tell optimizer as a mapping search strategy (the study layer's composition).

Mappers import no optimizer (:mod:`mappers.registry`); this module, above both, offers
them: it adds a resolver to :data:`mappers.registry.SEARCHES` that answers every name the
optimizer registry knows with :class:`OptimizerSearch`. So once :mod:`experiments` is
imported (every study, config and CLI command imports it), ``mapper: constrained-bo``
searches each layer's mapping space with constrained BO, and HASCO's ``sw_method:
qlearning`` drives :class:`optimizer.qlearning.QLearning` over each schedule space.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from design_space.trials import Objective
from mappers.registry import SEARCHES
from optimizer.base import Optimizer
from optimizer.registry import OPTIMIZERS, make_optimizer

__all__ = ["OptimizerSearch", "install"]


class OptimizerSearch:
    """``(space, objectives, seed, **options) -> Optimizer`` for the optimizer ``name``
    (picklable: it travels inside a mapper to worker processes)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, space: Any, objectives: Sequence[Objective], seed: int, **options: Any) -> Optimizer:
        return make_optimizer(self.name, space, objectives, seed, options)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OptimizerSearch) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("OptimizerSearch", self.name))

    def __repr__(self) -> str:
        return f"OptimizerSearch({self.name!r})"


def _resolve(name: str) -> OptimizerSearch | None:
    return OptimizerSearch(name) if name in OPTIMIZERS else None


def install() -> None:
    """Add the resolver (idempotent)."""
    SEARCHES.add_resolver(_resolve)


install()
