"""Any ask/tell search strategy as a mapper: one mapping at a time over the mapping space.

:class:`AskTellMapper` drives a strategy with the ask/tell protocol of :mod:`optimizer`
(``ask(n) -> points``, ``tell(trials)``) over :func:`mappers.mapping_space.mapping_space`:
it asks for one mapping, scores it with the cost function, and tells the result -- a
COMPLETE trial with the objective, or, for a mapping the cost model finds invalid (a
tile over a buffer's capacity the known constraints did not catch), an INFEASIBLE trial
that a strategy with a feasibility model (constrained BO) learns from: Shi et al.'s
inner BO with the invalid mappings as its unknown (output) constraints.

The strategy is a factory handed in (``factory=``), or a name registered in
:data:`mappers.searches.SEARCHES`; this module imports no optimizer. The study layer hands
every ask/tell optimizer (``constrained-bo``, ``qlearning``, ``tpe`` ...) down as a factory
(:func:`experiments.inner_search.search_mapper`, :class:`experiments.inner_search.OptimizerSearch`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelerators.arch import ArchSpec
from design_space.trials import Objective, Trial, TrialStatus
from mappers.base import (
    OBJECTIVES,
    CostFunction,
    MappingResult,
    NoLegalMapping,
    check_objective,
    objective_values,
    result_of,
)
from mappers.mapping_space import CAPACITY_MODES, batch_from_columns, mapping_space
from mappers.searches import search_factory
from mappers.workloads import Layer

__all__ = ["AskTellMapper"]


@dataclass(frozen=True)
class AskTellMapper:
    """The best of ``budget`` mappings proposed one at a time by the strategy ``search``.

    Args:
        search: the strategy's name (recorded in the result's ``info``; looked up in
            :data:`mappers.searches.SEARCHES` when no ``factory`` is given).
        budget: mappings evaluated.
        options: the strategy's options (e.g. ``{"n_init": 20}`` for constrained BO).
        capacity: ``"known"`` (buffer capacities are constraints of the space: no
            overflowing mapping is proposed) or ``"unknown"`` (they are not: an overflowing
            mapping is evaluated, found invalid and told as INFEASIBLE, Shi et al.'s output
            constraints; see :func:`mappers.mapping_space.mapping_space`).
        factory: the strategy factory ``(space, objectives, seed, **options)``; by default
            looked up by ``search`` when the mapper is built (so an unknown name fails at
            once, and the mapper carries its strategy to worker processes).
    """

    search: str
    budget: int = 200
    options: Mapping[str, Any] = field(default_factory=dict)
    capacity: str = "known"
    factory: Callable[..., Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 1:
            raise ValueError(f"AskTellMapper.budget must be a positive integer, got {self.budget!r}")
        if self.capacity not in CAPACITY_MODES:
            raise ValueError(f"AskTellMapper.capacity must be one of {CAPACITY_MODES}, got {self.capacity!r}")
        if self.factory is None:
            object.__setattr__(self, "factory", search_factory(self.search, "AskTellMapper.search"))

    def map(self, layer: Layer, arch: ArchSpec, cost: CostFunction, objective: str = "edp", *,
            seed: int = 0) -> MappingResult:
        t0 = time.perf_counter()
        metric = OBJECTIVES[check_objective(objective)]
        space = mapping_space(layer, arch, capacity=self.capacity)
        opt = self.factory(space, (Objective(metric, "min"),), seed, **dict(self.options))
        best: tuple[float, Any] | None = None
        history: list[float] = []
        infeasible: list[int] = []
        for number in range(self.budget):
            pts = opt.ask(1)
            if not pts:
                break
            batch = batch_from_columns(layer, arch, space.columns(pts))
            val = float(objective_values(cost(layer, arch, batch), objective)[0])
            if not np.isfinite(val):
                infeasible.append(number)
                opt.tell([Trial(number, pts[0], TrialStatus.INFEASIBLE, reason="invalid mapping")])
            else:
                opt.tell([Trial(number, pts[0], TrialStatus.COMPLETE, {metric: val})])
                if best is None or val < best[0]:
                    best = (val, batch)
            history.append(best[0] if best else float("inf"))
        if best is None:
            raise NoLegalMapping(f"{self.search} found no legal mapping of {layer.name!r} on "
                                 f"{arch.name!r} in {len(history)} tries")
        return result_of(layer, arch, cost, best[1], 0, evaluated=len(history),
                         seconds=time.perf_counter() - t0, history=tuple(history),
                         info={"search": self.search, "infeasible": len(infeasible),
                               "infeasible_trials": tuple(infeasible)})
