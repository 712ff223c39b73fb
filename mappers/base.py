"""The mapper protocol: choose a mapping of one layer onto one architecture.

A mapper receives the cost function it scores with; it never imports one. This is what
keeps the packages layered (an evaluator owns the cost model and hands it down) and what
lets one mapper run under another cost model (a calibrated one, Timeloop's counting
conventions) unchanged. ZigZag splits its temporal-mapping stage from its cost-model
stage the same way.

* :class:`BatchCost` -- what a cost function returns for a batch of ``B`` mappings:
  arrays ``energy_pj``, ``latency_cycles``, ``edp`` (pJ x cycles), ``utilization`` and
  ``valid``. :class:`evaluators.loopnest.LoopNestResult` is one.
* :data:`CostFunction` -- ``cost(layer, arch, batch) -> BatchCost``;
  :func:`evaluators.loopnest.evaluate_batch` is the default one.
* :class:`Mapper` -- ``map(layer, arch, cost, objective="edp", *, seed=0) ->
  MappingResult``. ``objective`` is one of :data:`OBJECTIVES` (``edp``, ``energy``,
  ``latency``), minimized. A mapper that finds no legal mapping raises
  :class:`NoLegalMapping` (a ``ValueError`` naming the layer and the architecture);
  the nested evaluator turns it into an INFEASIBLE trial. So does a constraint rule's
  refusal (:class:`MappingRuleRefusal`, raised by
  :func:`mappers.constraints.constraints_for`).
* :class:`MappingResult` -- the chosen mapping and its figures, plus how the search went:
  mappings evaluated, seconds, the best objective after each evaluation (``history``),
  and, where the mapper knows them, the size of the space it covered, a lower bound on
  the objective and whether the result is proven optimal.

The work unit a mapper maps is a :class:`~mappers.workloads.Layer` for the loop-nest
mappers; HASCO's schedule mapper maps a :class:`~mappers.tensor_ir.Computation` onto a
tensor-intrinsic architecture. Both carry ``name``, ``macs`` and ``repeat``, which is all
the network-level evaluator needs (:class:`WorkUnit`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from accelerators.arch import ArchSpec
from mappers.mapping import Mapping as LayerMapping
from mappers.mapping import MappingBatch
from mappers.workloads import Layer

__all__ = [
    "OBJECTIVES",
    "BatchCost",
    "BoundedCost",
    "CostFunction",
    "Mapper",
    "MappingResult",
    "MappingRuleRefusal",
    "NoLegalMapping",
    "SearchStoppedEmpty",
    "WorkUnit",
    "check_objective",
    "objective_values",
    "result_of",
]

OBJECTIVES: dict[str, str] = {"edp": "edp", "energy": "energy_pj", "latency": "latency_cycles"}
"""Mapping objective -> the :class:`BatchCost` field it minimizes."""


@runtime_checkable
class BatchCost(Protocol):
    """Per-mapping figures of a batch (arrays of length ``B``)."""

    energy_pj: Any
    latency_cycles: Any
    edp: Any
    utilization: Any
    valid: Any


CostFunction = Callable[[Layer, ArchSpec, MappingBatch], BatchCost]


@runtime_checkable
class BoundedCost(Protocol):
    """A cost function that also bounds partial mappings: what an exact mapper needs
    (:class:`evaluators.loopnest.LoopNestCost` is one).

    * ``separable_orders``: every count (so energy and each level's bandwidth cycles) is a
      constant plus one term per level that depends on that level's loop order alone;
      leakage, where a result reports it (``leakage_energy_pj``, static power x latency),
      is not, and :mod:`mappers.orders` adds it back from each combination's latency.
    * ``lower_bound(layer, arch, batch, known)``: figures (``energy_pj``,
      ``compute_cycles``, ``bandwidth_cycles``) that no completion of each partial mapping
      beats; the temporal factors of levels ``< known`` and their orders are free.
      Keyword options may tighten it (the loop-nest model's ``stationary`` and
      ``irrelevant_tile``).
    * ``least_lower_bound(layer, arch, batch, known, levels, candidates, objective,
      **options)``: per row, the least objective of that bound over every combination of
      one candidate order per level of ``levels`` (decided levels), and the combination's
      index (:meth:`evaluators.loopnest.LoopNestCost.least_lower_bound`).
    """

    separable_orders: bool

    def __call__(self, layer: Layer, arch: ArchSpec, batch: MappingBatch) -> BatchCost: ...

    def lower_bound(self, layer: Layer, arch: ArchSpec, batch: MappingBatch, known: int, **options: Any) -> Any: ...

    def least_lower_bound(self, layer: Layer, arch: ArchSpec, batch: MappingBatch, known: int, levels: Any,
                          candidates: Any, objective: str, **options: Any) -> tuple[Any, Any]: ...


@runtime_checkable
class WorkUnit(Protocol):
    """What a network evaluator needs of one thing a mapper maps."""

    name: str
    repeat: int

    @property
    def macs(self) -> int: ...


class NoLegalMapping(ValueError):
    """A mapper found no legal mapping of a layer on an architecture."""


class SearchStoppedEmpty(RuntimeError):
    """A mapper's search hit its limit (time, nodes) before it found any legal mapping.
    Not a proof that none exists (that is :class:`NoLegalMapping`): the design is not
    shown infeasible, the search ran out of budget; raise the limit."""


class MappingRuleRefusal(NoLegalMapping):
    """A mapper's constraint rule (row-stationary, ...) refuses a layer on an
    architecture (a filter taller than the PE array, a level missing): no mapping under
    the rule, so, like any :class:`NoLegalMapping`, an infeasible design, not a failure."""


@dataclass(frozen=True)
class MappingResult:
    """The mapping a mapper chose and how it got there.

    Attributes:
        mapping: the chosen mapping (``None`` for a result made of several stages, as a
            HASCO computation decomposed into two-input stages: see ``info``).
        batch: the same mapping as a batch of one (the cost model's input), or ``None``.
        energy_pj, latency_cycles, edp, utilization: its figures under the cost function.
        evaluated: mappings scored by the cost function.
        seconds: wall time of the search.
        history: the best objective after each evaluation (``inf`` before a legal one),
            where the mapper evaluates one candidate at a time; empty otherwise.
        space_size: mappings in the space the search covered, where known (an
            exhaustive or exact mapper).
        lower_bound: a value of the objective no mapping can beat, where known.
        optimal: the result is proven to minimize the objective over the whole legal
            mapping space under the cost function.
        stopped_early: the search hit a limit (time, size) before it finished.
        info: JSON-serializable extras (a schedule's point and partition, stages ...).
    """

    mapping: LayerMapping | None
    batch: MappingBatch | None
    energy_pj: float
    latency_cycles: float
    edp: float
    utilization: float
    evaluated: int
    seconds: float = 0.0
    history: tuple[float, ...] = ()
    space_size: int | None = None
    lower_bound: float | None = None
    optimal: bool = False
    stopped_early: bool = False
    info: Mapping[str, Any] = field(default_factory=dict)

    def objective(self, name: str) -> float:
        """The value of mapping objective ``name`` (:data:`OBJECTIVES`)."""
        return float(getattr(self, OBJECTIVES[check_objective(name)]))


@runtime_checkable
class Mapper(Protocol):
    """Chooses a mapping of one work unit onto one architecture (see module docstring)."""

    def map(self, layer: Any, arch: ArchSpec, cost: CostFunction, objective: str = "edp", *,
            seed: int = 0) -> MappingResult: ...


def check_objective(objective: str) -> str:
    """``objective`` if it is one of :data:`OBJECTIVES`, else a ``ValueError`` naming it."""
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown mapping objective {objective!r} (choices: {list(OBJECTIVES)})")
    return objective


def objective_values(cost: BatchCost, objective: str) -> np.ndarray:
    """The objective of every mapping of a batch, ``inf`` where the mapping is invalid."""
    values = np.asarray(getattr(cost, OBJECTIVES[check_objective(objective)]), dtype=float)
    return np.where(np.asarray(cost.valid, dtype=bool), values, np.inf)


def result_of(layer: Layer, arch: ArchSpec, cost: CostFunction, batch: MappingBatch, i: int, *,
              evaluated: int, seconds: float = 0.0, **extra: Any) -> MappingResult:
    """The :class:`MappingResult` of mapping ``i`` of ``batch`` (re-scored alone, so the
    figures are those of exactly that mapping); ``extra`` sets the other fields."""
    one = batch.take(np.array([i]))
    r = cost(layer, arch, one)
    return MappingResult(one.mapping(0), one, float(np.asarray(r.energy_pj)[0]),
                         float(np.asarray(r.latency_cycles)[0]), float(np.asarray(r.edp)[0]),
                         float(np.asarray(r.utilization)[0]), evaluated, seconds, **extra)
