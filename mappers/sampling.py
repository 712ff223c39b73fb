"""Random mapping: sample legal mappings uniformly over prime-factor placements.

:func:`random_mappings` draws ``n`` legal mappings from the mapping space's structured
proposal (:func:`mappers.mapping_space.propose`: every prime factor of every dimension
goes to one of its allowed loop slots, so factor products divide exactly and fanouts and
dataflow rules hold by construction; capacity is left to rejection). :class:`RandomMapper`
scores ``budget`` of them in one vectorized batch and keeps the best -- the baseline every
other mapper must beat, and at a large budget a fair stand-in for "what blind search finds".
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators.arch import ArchSpec
from mappers.base import CostFunction, MappingResult, NoLegalMapping, objective_values, result_of
from mappers.mapping import MappingBatch
from mappers.mapping_space import batch_from_columns, mapping_space
from mappers.workloads import Layer

__all__ = ["RandomMapper", "random_mappings"]


def random_mappings(layer: Layer, arch: ArchSpec, n: int, seed: Any = None, *,
                    factors: str = "divisors", bypass: bool = False) -> MappingBatch:
    """``n`` random legal mappings (uniform over prime-factor placements)."""
    space = mapping_space(layer, arch, factors=factors, bypass=bypass)
    cols = space.sample_columns(n, seed)
    return batch_from_columns(layer, arch, cols, factors=factors, bypass=bypass)


@dataclass(frozen=True)
class RandomMapper:
    """The best of ``budget`` random legal mappings (``bypass``: also sample whether each
    on-chip level keeps each operand)."""

    budget: int = 1000
    bypass: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 1:
            raise ValueError(f"RandomMapper.budget must be a positive integer, got {self.budget!r}")

    def map(self, layer: Layer, arch: ArchSpec, cost: CostFunction, objective: str = "edp", *,
            seed: int = 0) -> MappingResult:
        t0 = time.perf_counter()
        batch = random_mappings(layer, arch, self.budget, seed, bypass=self.bypass)
        s = objective_values(cost(layer, arch, batch), objective)
        i = int(np.argmin(s))
        if not np.isfinite(s[i]):
            raise NoLegalMapping(f"no legal mapping of {layer.name!r} on {arch.name!r} among "
                                 f"{len(batch)} random samples")
        return result_of(layer, arch, cost, batch, i, evaluated=len(batch),
                         seconds=time.perf_counter() - t0)
