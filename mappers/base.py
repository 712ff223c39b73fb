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
* :class:`ProofScope` -- the space an optimality claim or a lower bound covers, as data
  (``MappingResult.scope``): the tilings (``divisor`` or ``padded``), the cost model's
  accounting, whether bypass choices were searched, the constraints applied, the spatial
  unrollings and the loop orders. A proof says nothing outside it: HASCO's padded
  schedules beat the exact mapper's divisor-tiling optimum (docs/reproduction/hasco.md).

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
    "TILINGS",
    "BatchCost",
    "BoundedCost",
    "CostFunction",
    "Mapper",
    "MappingResult",
    "MappingRuleRefusal",
    "NoLegalMapping",
    "ProofScope",
    "SearchStoppedEmpty",
    "WorkUnit",
    "accounting_of",
    "check_objective",
    "objective_values",
    "result_of",
]

OBJECTIVES: dict[str, str] = {"edp": "edp", "energy": "energy_pj", "latency": "latency_cycles"}
"""Mapping objective -> the :class:`BatchCost` field it minimizes."""

TILINGS = ("divisor", "padded")
"""The tilings a proof may cover (:attr:`ProofScope.tilings`): ``divisor`` -- every factor
of a dimension divides it exactly; ``padded`` -- edge tiles may be padded too."""


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
class ProofScope:
    """The space a mapper's optimality claim (``MappingResult.optimal``) and lower bound
    (``MappingResult.lower_bound``) cover. Outside it the claim says nothing: a padded
    tiling, another accounting, a bypass choice not searched or a mapping outside the
    constraints may be better.

    Attributes:
        tilings: ``"divisor"`` (exact factorizations only) or ``"padded"`` (also tiles
            whose edge tile is padded): :data:`TILINGS`.
        accounting: the cost model's counting rules by name (``"coexplore"``,
            ``"timeloop"``, ``"zigzag"`` of :data:`evaluators.loopnest.ACCOUNTING`, or
            the cost model's own description where it has no name).
        bypass: every choice of which on-chip levels keep which operands was searched
            (``False``: each level keeps what the architecture says).
        constraints: the name of the mapping constraints the space was restricted to
            (:mod:`mappers.constraints`), ``None`` where none were applied.
        spatial: the spatial unrollings covered, in words (e.g. every divisor
            assignment within each fanout, under a systolic dataflow's rules).
        loop_orders: the loop orders covered, in words.
        objective: the objective minimized (:data:`OBJECTIVES`).
    """

    tilings: str
    accounting: str
    bypass: bool
    constraints: str | None
    spatial: str
    loop_orders: str
    objective: str

    def __post_init__(self) -> None:
        if self.tilings not in TILINGS:
            raise ValueError(f"ProofScope.tilings must be one of {list(TILINGS)}, got {self.tilings!r}")
        check_objective(self.objective)
        if not isinstance(self.bypass, bool):
            raise ValueError(f"ProofScope.bypass must be a bool, got {self.bypass!r}")

    def describe(self) -> str:
        """One line: ``edp over divisor tilings, coexplore accounting, bypass searched,
        no constraints, spatial: ..., orders: ...``."""
        cons = "no constraints" if self.constraints is None else f"constraints {self.constraints}"
        byp = "bypass searched" if self.bypass else "no bypass choices (each level keeps what the architecture says)"
        return (f"{self.objective} over {self.tilings} tilings, {self.accounting} accounting, {byp}, {cons}; "
                f"spatial: {self.spatial}; loop orders: {self.loop_orders}")

    def as_dict(self) -> dict[str, Any]:
        """The fields, JSON-serializable (for a record)."""
        return {"tilings": self.tilings, "accounting": self.accounting, "bypass": self.bypass,
                "constraints": self.constraints, "spatial": self.spatial, "loop_orders": self.loop_orders,
                "objective": self.objective}


def accounting_of(cost: Any) -> str:
    """The accounting name of a cost function for :attr:`ProofScope.accounting`: its
    ``accounting_name`` (:class:`evaluators.loopnest.LoopNestCost` has one), else its
    qualified name or repr (a plain function such as ``evaluate_batch`` counts with the
    defaults it was written with, which this layer cannot see)."""
    name = getattr(cost, "accounting_name", None)
    if isinstance(name, str) and name:
        return name
    qual = getattr(cost, "__qualname__", None)
    return f"cost function {qual}" if isinstance(qual, str) else repr(cost)


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
        optimal: the result is proven to minimize the objective over the space ``scope``
            states, under the cost function.
        stopped_early: the search hit a limit (time, size) before it finished.
        info: JSON-serializable extras (a schedule's point and partition, stages ...).
        scope: the space ``optimal`` and ``lower_bound`` cover (:class:`ProofScope`);
            every mapper that claims optimality or a bound fills it in, and ``None``
            means no claim (a heuristic or sampling result).
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
    scope: ProofScope | None = None

    def __post_init__(self) -> None:
        if self.optimal and self.scope is None:
            raise ValueError("MappingResult.optimal=True needs the scope of the proof (MappingResult.scope, a "
                             "ProofScope): an optimality claim without its space is no claim")

    def claim(self) -> str:
        """What the result proves, with its space: ``proven optimal (edp over divisor
        tilings, ...)``, ``lower bound ... over (...)`` or ``no proof``."""
        if self.optimal and self.scope is not None:
            return f"proven optimal ({self.scope.describe()})"
        if self.lower_bound is not None and self.scope is not None:
            return f"not proven; lower bound {self.lower_bound:.6g} over ({self.scope.describe()})"
        return "no proof (a search's best)"

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
