"""The nested co-design evaluator: a hardware point -> network energy, latency, EDP, area.

Every co-design flow in coexplore scores a hardware point the same way, in five steps
(ZigZag's stage pipeline, written as plain functions):

1. **build** (:func:`build_accelerator`): the accelerator from the point, with ``fixed``
   parameters merged under it. Hardware that cannot be built (an
   :class:`~accelerators.base.InvalidParameter`) raises :class:`~evaluators.base.Infeasible`
   naming the parameter; so does an optional ``check(acc)`` that returns a reason (a
   hardware generator's limit, discovered only by trying to build the design). A key
   the accelerator does not have (:class:`~accelerators.base.UnknownParameter`) is an
   error, not an infeasible design.
2. **lower**: ``acc.to_arch()``, the memory hierarchy the cost model scores.
3. **map**: every work unit of the workload (a layer, or a HASCO computation) by the
   :class:`~mappers.base.Mapper`, under the cost function (default: the loop-nest model,
   :func:`evaluators.loopnest.evaluate_batch`) and the mapping objective (``edp``,
   ``energy``, ``latency``). Results are cached per (hardware point, unit shape): layers
   of the same shape are mapped once, and a hardware point proposed again (a resumed
   study, a Q-learning walk) costs nothing -- it gets the first result, whatever the
   trial's seed. With ``reuse`` work is also reused *between* hardware
   points, see **Reuse across hardware points** below. A unit the mapper cannot map makes
   the point INFEASIBLE (an unknown
   constraint: it depends on the buffers), with the unit named. Units are mapped one after
   another, or through a ``task_map`` the caller supplies (the study layer owns processes;
   an evaluator never starts any).
4. **sum** (:func:`network_metrics`): layers run one after another, so energy and latency
   add up over units times their ``repeat``.
5. **explain** (:func:`breakdown`): per unit, its figures and, where the cost model gives
   them, the energy of every memory level and of the MACs.

Metrics (units in the names): ``energy_pj``, ``energy_uj``, ``latency_cycles``,
``latency_ms`` (at the architecture's clock), ``edp_uj_ms`` (network energy x network
latency), ``power_mw`` (average: energy / latency), ``area_mm2``, ``utilization``
(MACs / (PEs x latency cycles), stalls included; a layer's breakdown row has the
mapper's utilization over its compute cycles), ``macs``; and how far the mapper's answers are from proven
(:func:`proof_metrics`, dimensionless): ``layers_proven`` (units whose mapping the mapper
proved optimal), ``all_layers_proven`` (1 when every unit's is, else 0) and
``certified_gap`` (the worst unit's (objective value - lower bound) / lower bound, 0 when
every unit is proven; infinite -- stored by a study as null -- where an unproven unit has
no positive lower bound, so no certificate). The evaluator returns an
:class:`~evaluators.base.Evaluation` whose ``info["breakdown"]`` is::

    {"levels": ["RF", "GLB", "DRAM"],
     "layers": [{"name": ..., "repeat": 1, "macs": ..., "energy_pj": ..., "latency_cycles": ...,
                 "utilization": ..., "evaluated": ..., "map_seconds": ...,
                 "optimal": ...,  # True: the mapper proved the mapping optimal over proof_scope
                 "objective_lower_bound": ...,  # of the mapping objective, where the mapper knows one
                 "proof_scope": {"tilings": "divisor", "accounting": ..., "bypass": ...,
                                 "constraints": ..., ...},  # where the mapper proves or bounds (ProofScope)
                 "energy_by_level_pj": {"MAC": ..., "RF": ..., "GLB": ..., "DRAM": ...}}, ...]}

with each layer's figures for one instance (multiply by ``repeat`` for the network;
``energy_by_level_pj`` only where the mapping is a loop nest the cost model breaks down).
Where a layer's mapping is a loop nest, the breakdown also holds the chosen mappings,
``"mappings": [record, ...]`` (:func:`mappers.mapping_record.mapping_record`: per level its
factors, loop order, kept operands and tile words), each distinct one once, and the
layer's row names its own by index, ``"mapping": i``; beside them
``"mapping_texts": [text, ...]``, each record's compact loop-nest text (Timeloop's
``map.txt`` form, :func:`~mappers.mapping_record.loop_nest_text`), so a reader of the
stored trial sees the loop nest without this package. The Timeloop mapping YAML is
rendered from the record (:func:`~mappers.mapping_record.timeloop_yaml`) by
``coexplore show``.

**Reuse across hardware points** (``NestedEvaluator(reuse=True)``; ``reuse: true`` in a
config's evaluator options; off by default, see *Measured* below). Two things, both in the memory of
the evaluator object, so per worker process where a study runs its trials in processes
(each worker unpickles the evaluator once and keeps it), nothing shared or stored:

* **A cache keyed by the mapping problem** (:func:`problem_key`), not by the hardware
  point: a unit mapped once on an architecture is not searched again on any other point
  whose architecture is the same *as far as this unit's mapping space and costs go*. A hit
  is re-scored on the new architecture (one cost evaluation) and taken only if its energy,
  latency and EDP come out bit for bit as cached -- a guard; the argument below says they
  always do. Its ``mapping_info`` says ``"reused": "cache"``; ``evaluated``,
  ``map_seconds`` and the search's other counters are the original search's.
* **A warm start** where the mapper takes one (``ExactMapper.map(..., incumbents=...)``):
  the best mappings of the same unit on the last :data:`WARM_POOL` points mapped, most
  recent first, are offered as candidate incumbents; the exact mapper keeps the legal ones
  (:mod:`mappers.exact`, *Warm start*). A search that completes returns the mapping a cold
  search returns, bit for bit (so every figure and the network EDP are unchanged); what
  changes is only how fast it gets there. A search stopped by a node or time limit returns
  a mapping at least as good as the best legal candidate and as the heuristic's (where a
  cold search may fall back to the heuristic's), so its result depends on which points
  came before: with several worker processes, on which worker evaluated what. ``mapping_info`` says how many candidates were offered and legal, and
  whether the result is one of them (``warm_offered``, ``warm_legal``, ``warm_used``).

*Why a cache hit is exact.* The key holds everything of the architecture that the cost
model and the mappers read -- every level's name (constraints name levels), operands,
instances, fanouts, multicast, per-operand read and write energies, NoC energy,
bandwidth, leakage and access width, and the MAC energy, word width, clock, kind,
dataflow and intrinsic -- except the names and areas of the architecture and its levels
and the energy table's name, which no mapping's figures depend on (energies enter as the
numbers they give), and with one canonical form: a capacity that no tile of this unit
can exceed. Every quantity the cost model, the exact mapper and its bounds compare with a
capacity is the word count of a sub-box of one operand's index space (a tile's bounding
box, or the distinct words of a share of one), at most the words of the whole operand
(:func:`full_words`; a sum of them for a shared buffer); so a capacity at least that
large makes every such test pass and every ``max(words - capacity, 0)`` zero, exactly as
an unbounded level does, and is keyed as ``"fits"``. Two architectures with equal keys
therefore have the same legal mappings of the unit, each with the same energy, latency
and EDP: the optimum is the same number, and a mapping that is optimal on one is optimal
on the other. Because the exact search (and the heuristic mapping it starts from) reads
capacities only through those tests, its run is the same one on both, and a hit returns the mapping, bound and counters a fresh
search would (``tests/evaluators/test_nested_reuse.py`` checks a hit against a fresh
search on an architecture with another, non-binding global buffer; a binding capacity,
an energy or a fanout that differs misses). The canonical capacity is used only for a
result proven optimal (the exact and exhaustive mappers prove over the exact divisor
factorizations, whose tiles are sub-boxes) whose mapping is unpadded; any other result is
shared only under the key with the raw capacities, the same inputs to the same
deterministic search. (The constraint rules coexplore ships read the levels' names and
fanouts and the dataflow, all keyed; a user's rule that reads capacities needs
``reuse=False``.)

Both are per evaluator object, so for one mapper, cost function and objective.

*Determinism.* A serial run (one process) evaluates the same points in the same order,
so the same reuse, and is bit-reproducible. Across processes, a completed exact search
is unaffected by what a worker saw before (above); only node- or time-limited searches
can differ with the history (as they can with a worker restarted after a trial's
timeout, which starts with nothing to reuse).

*Measured* (issue 41 item 4; 2 shared cores; docs/benchmarks/nested_reuse_demo.txt and
nested_reuse_dqn32.txt, with their commands): the demo's 60 trials take 69.7 user CPU s
without reuse and 67.5 with it, the trials equal; 30 points of a constrained-BO Shi DQN@32
search (``max_nodes=300_000`` per layer) replayed in one process take 503 CPU s without
and 501 with, 0 cache hits, a legal warm candidate for 37 of 150 layer maps, the proven
layers equal and 3 of the 30 network EDPs lower. So it saves no CPU time here -- a
best-first search expands the nodes below the optimum whatever its incumbent, and in these
spaces every buffer size changes that buffer's access energy, so different points never
share a problem -- and it is off by default: turning it on changes node-limited results
(for the better, as measured), which the reproductions' record settings do not record.

:class:`JointEvaluator` scores points of :func:`mappers.mapping_space.joint_mapping_space`
(the hardware and every layer's mapping in one flat point) with the same steps, the
mapping of every layer read from the point instead of searched.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from accelerators.base import UnknownParameter
from accelerators.registry import resolve_accelerator
from design_space.compose import split
from design_space.errors import UnsatisfiableSpaceError
from evaluators.base import Evaluation, Infeasible
from evaluators.loopnest import LOOPNEST
from mappers import zoo
from mappers.base import (
    CostFunction,
    Mapper,
    MappingResult,
    NoLegalMapping,
    check_objective,
    result_of,
)
from mappers.fit import smallest_tile_shortfalls
from mappers.mapping import MappingBatch
from mappers.mapping_record import loop_nest_text, mapping_record
from mappers.mapping_space import batch_from_columns, mapping_space
from mappers.registry import make_mapper
from mappers.workload_files import resolve_workload
from mappers.workloads import Layer

__all__ = ["WARM_POOL", "JointEvaluator", "NestedEvaluator", "TaskMap", "breakdown", "build_accelerator",
           "full_words", "network_metrics", "problem_key", "proof_metrics", "unit_gap", "unit_key"]

WARM_POOL = 8
"""Candidate incumbents offered per unit with ``reuse``: its best mappings on the last this
many hardware points mapped (each costs one cost evaluation and a legality check)."""

TaskMap = Callable[[Callable[[Any], Any], Sequence[Any]], Sequence[Any]]
"""``task_map(fn, items) -> [fn(item) for item in items]``, possibly in parallel (e.g. a
process pool's ``map``); ``fn`` and the items are picklable."""


# ------------------------------------------------------------------------ the steps
def build_accelerator(builder: Callable[[Mapping[str, Any]], Any], point: Mapping[str, Any],
                      fixed: Mapping[str, Any] | None = None,
                      check: Callable[[Any], str | None] | None = None) -> Any:
    """Step 1: ``builder({**fixed, **point})``; a ``ValueError`` / ``TypeError`` while
    building, or a reason from ``check(acc)``, raises :class:`Infeasible`. An
    :class:`~accelerators.base.UnknownParameter` (a key the accelerator does not have:
    every point of the space has it, so it is the space's mistake, not this design's) is
    raised as it is."""
    try:
        acc = builder({**dict(fixed or {}), **point})
    except UnknownParameter:
        raise
    except (ValueError, TypeError) as e:
        raise Infeasible(f"invalid hardware: {e}") from None
    why = check(acc) if check is not None else None
    if why:
        raise Infeasible(f"generator: {why}")
    return acc


def unit_key(unit: Any) -> str:
    """What identifies a work unit's mapping problem: every field but ``name`` and
    ``repeat`` (two ResNet blocks of one shape are one problem)."""
    if is_dataclass(unit):
        return repr((type(unit).__name__, [(f.name, getattr(unit, f.name)) for f in fields(unit)
                                           if f.name not in ("name", "repeat")]))
    return repr(unit)


def full_words(layer: Layer) -> dict[str, int]:
    """Words of each whole operand of ``layer`` (its bounding box at the full sizes): no
    tile, nor share of a tile, of that operand holds more (see the module docstring)."""
    return {op: int(layer.tensor(op).words(layer.dims)) for op in OPERANDS}


def _capacity_key(level: MemoryLevel, full: dict[str, int] | None) -> Any:
    """A level's capacity as keyed: ``"fits"`` where ``full`` (the unit's whole operands)
    says no tile can exceed it (per operand it holds, or their sum for a shared buffer)."""
    cap = level.capacity_words
    held = sorted(level.tensors)
    if cap is None:
        return None
    if isinstance(cap, Mapping):
        return tuple((op, "fits" if full is not None and op in level.tensors and v >= full[op] else float(v))
                     for op, v in sorted(cap.items()))
    if full is not None and cap >= sum(full[op] for op in held):
        return "fits"
    return float(cap)


def _per_op(value: Mapping[str, float]) -> tuple:
    return tuple(sorted(value.items()))


def problem_key(unit: Any, arch: ArchSpec, canonical: bool = False) -> str | None:
    """What the mapping of ``unit`` on ``arch`` depends on, as a string (the reuse
    cache's key, with :func:`unit_key`): every field of ``arch`` and its levels the cost
    model and the mappers read, none of the names and areas; with ``canonical`` (a
    loop-nest layer only), a capacity no tile of it can exceed keyed as ``"fits"`` (the
    module docstring gives the argument). ``None`` for a unit that is not a
    :class:`~mappers.workloads.Layer` with ``canonical``."""
    full = None
    if canonical:
        if not isinstance(unit, Layer):
            return None
        full = full_words(unit)
    levels = tuple((lv.name, tuple(sorted(lv.tensors)), _capacity_key(lv, full), lv.instances, lv.fanout_x,
                    lv.fanout_y, _per_op(lv.read_energy_pj), _per_op(lv.write_energy_pj),
                    lv.bandwidth_words_per_cycle, lv.multicast, lv.noc_energy_pj, lv.leakage_pj_per_cycle,
                    lv.vector_words)
                   + ((lv.read_bandwidth_words_per_cycle, lv.write_bandwidth_words_per_cycle)
                      if lv.split_bandwidth else ()) for lv in arch.levels)
    return repr((levels, arch.mac_energy_pj, arch.word_bits, arch.clock_mhz, arch.kind, arch.dataflow,
                 arch.intrinsic))


def _takes_incumbents(mapper: Any) -> bool:
    """Whether ``mapper.map`` accepts ``incumbents=`` (the exact mapper's warm start)."""
    try:
        return "incumbents" in inspect.signature(mapper.map).parameters
    except (TypeError, ValueError, AttributeError):
        return False


def _map_one(task: tuple) -> MappingResult | str:
    """Map one unit; a unit without a legal mapping comes back as its message (so that a
    ``task_map`` over processes never has to pickle an exception)."""
    mapper, unit, arch, cost, objective, seed, incumbents = task
    try:
        if incumbents is None:
            return mapper.map(unit, arch, cost, objective, seed=seed)
        return mapper.map(unit, arch, cost, objective, seed=seed, incumbents=incumbents)
    except (NoLegalMapping, UnsatisfiableSpaceError) as e:   # no legal mapping, or none found
        return str(e)


def _same_figures(a: MappingResult, b: MappingResult) -> bool:
    return (a.energy_pj == b.energy_pj and a.latency_cycles == b.latency_cycles and a.edp == b.edp
            and a.utilization == b.utilization)


def network_metrics(arch: ArchSpec, area_mm2: float, units: Sequence[Any],
                    results: Sequence[MappingResult]) -> dict[str, float]:
    """Step 4: network totals from per-unit results (see the module docstring)."""
    energy = sum(r.energy_pj * u.repeat for u, r in zip(units, results))
    latency = sum(r.latency_cycles * u.repeat for u, r in zip(units, results))
    macs = sum(u.macs * u.repeat for u in units)
    latency_ms = latency / (arch.clock_mhz * 1e3)
    seconds = latency / (arch.clock_mhz * 1e6)
    return {"energy_pj": energy, "energy_uj": energy * 1e-6, "latency_cycles": latency,
            "latency_ms": latency_ms, "edp_uj_ms": energy * 1e-6 * latency_ms,
            "power_mw": energy * 1e-12 / seconds * 1e3 if latency else 0.0,
            "area_mm2": float(area_mm2),
            "utilization": macs / (latency * arch.n_macs) if latency else 0.0, "macs": float(macs)}


def unit_gap(result: MappingResult, objective: str = "edp") -> float:
    """How far ``result`` may be from the optimum of ``objective``, certified: 0 when the
    mapper proved it optimal, else its objective value / its lower bound - 1, infinite
    without a positive lower bound."""
    if result.optimal:
        return 0.0
    lb = result.lower_bound
    if lb is None or not lb > 0:
        return math.inf
    return result.objective(objective) / lb - 1.0


def proof_metrics(results: Sequence[MappingResult], objective: str = "edp") -> dict[str, float]:
    """``layers_proven``, ``all_layers_proven`` (0/1) and ``certified_gap`` (the worst
    :func:`unit_gap`) of ``results``, one per unit (see the module docstring)."""
    proven = sum(bool(r.optimal) for r in results)
    return {"layers_proven": float(proven), "all_layers_proven": float(proven == len(results)),
            "certified_gap": max((unit_gap(r, objective) for r in results), default=0.0)}


def breakdown(arch: ArchSpec, units: Sequence[Any], results: Sequence[MappingResult],
              cost: CostFunction) -> dict[str, Any]:
    """Step 5: per-unit figures and energy by level (see the module docstring)."""
    levels = [lv.name for lv in arch.levels]
    rows = []
    mappings: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for u, r in zip(units, results):
        row: dict[str, Any] = {"name": u.name, "repeat": int(u.repeat), "macs": int(u.macs),
                               "energy_pj": r.energy_pj, "latency_cycles": r.latency_cycles,
                               "utilization": r.utilization, "evaluated": r.evaluated,
                               "map_seconds": r.seconds, "optimal": r.optimal, "edp": r.edp,
                               "objective_lower_bound": r.lower_bound}
        if r.scope is not None:
            row["proof_scope"] = r.scope.as_dict()
        if r.batch is not None:
            c = cost(u, arch, r.batch)
            level = getattr(c, "level_energy_pj", None)
            mac = getattr(c, "mac_energy_pj", None)
            if level is not None and mac is not None:
                by = {"MAC": float(np.asarray(mac)[0])}
                by.update({name: float(e) for name, e in zip(levels, np.asarray(level)[0])})
                row["energy_by_level_pj"] = by
        if r.info:
            row["mapping_info"] = dict(r.info)
        chosen = r.mapping if r.mapping is not None else r.batch.mapping(0) if r.batch is not None else None
        if chosen is not None and isinstance(u, Layer):
            rec = mapping_record(chosen, u, arch)
            key = json.dumps(rec, sort_keys=True)
            if key not in seen:
                seen[key] = len(mappings)
                mappings.append(rec)
            row["mapping"] = seen[key]
        rows.append(row)
    out: dict[str, Any] = {"levels": levels, "layers": rows}
    if mappings:
        out["mappings"] = mappings
        out["mapping_texts"] = [loop_nest_text(rec) for rec in mappings]
    return out


def _area(acc: Any, arch: ArchSpec) -> float:
    area = getattr(acc, "area_mm2", None)
    return float(area) if area is not None else float(arch.area_mm2)


# ------------------------------------------------------------------------ evaluators
class NestedEvaluator:
    """``point -> Evaluation`` of network metrics, every unit mapped by an inner mapper.

    Args:
        accelerator: a class with ``from_point`` and ``to_arch`` (e.g.
            :class:`~accelerators.systolic.SystolicArray`), a builder ``point ->
            accelerator``, a registered name (``"systolic"``, ``"spatial"``, ...) or
            ``"module:Class"``.
        workload: units (layers, or HASCO computations), or a zoo name with an optional
            selection (``"resnet50[0:6]"``, :func:`mappers.zoo.resolve`), or a workload
            spec: an ``.onnx`` path, ``{"torch": "module:factory", "input_shape": [...]}``,
            ``{"onnx": ...}``, ``{"timeloop": "problem.yaml"}``
            (:func:`mappers.workload_files.load_workload`).
        mapper: a :class:`~mappers.base.Mapper`, a name (``"heuristic"``, ``"random"``,
            ``"exhaustive"``, ``"exact"`` ...) or ``{"name": ..., **options}``
            (:func:`mappers.registry.make_mapper`). An ask/tell optimizer searches the
            mappings when wired in: from Python ``mapper=search_mapper("constrained-bo")``
            (:func:`experiments.inner_search.search_mapper`); a study or config's
            ``mapper: constrained-bo`` is wired by the study layer. Default ``"anytime"``
            (:class:`mappers.anytime.AnytimeMapper`): the exact mapper stopped at a fixed
            node limit, with its certified gap; it replaced the heuristic as the default
            (``python -m experiments.benchmarks.mapper_fast_default`` measures both).
        objective: what the mapper minimizes per unit: ``"edp"``, ``"energy"`` or
            ``"latency"``.
        cost: the cost function handed to the mapper (default: the loop-nest model).
        fixed: parameters merged under every point (e.g. a fixed clock or energy table).
        check: ``acc -> reason | None``, a feasibility check beyond ``validate``.
        task_map: maps units in parallel (see :data:`TaskMap`); default: one after another.
        cache_size: mapping results kept per (hardware point, unit shape), and as many per
            (unit shape, :func:`problem_key`) with ``reuse``.
        reuse: reuse work between hardware points: the problem-keyed cache and the warm
            start (module docstring, *Reuse across hardware points*); ``False`` (the
            default): each point's units are mapped from scratch (the per-point cache
            stays).

    Attributes:
        reuse_stats: counters of this evaluator object (so of one worker process):
            ``searched`` (units mapped by the mapper), ``cache_hits``, ``warm_offered``
            (searches given candidates), ``warm_used`` (results that are a candidate).
    """

    MAPPER_OPTIONS: tuple[str, ...] = ("mapper",)
    """Options holding a mapper spec: the study layer builds them into mappers with the
    ask/tell optimizers wired in (:func:`experiments.inner_search.wire_evaluator_options`)."""

    def __init__(self, accelerator: Any, workload: Sequence[Any] | str, mapper: Any = "anytime", *,
                 objective: str = "edp", cost: CostFunction | None = None,
                 fixed: Mapping[str, Any] | None = None, check: Callable[[Any], str | None] | None = None,
                 task_map: TaskMap | None = None, cache_size: int = 4096, reuse: bool = False) -> None:
        self.accelerator = resolve_accelerator(accelerator)
        self.units = resolve_workload(workload) if isinstance(workload, str | Mapping) else list(workload)
        if not self.units:
            raise ValueError("workload must hold at least one layer")
        self.mapper: Mapper = make_mapper(mapper, "mapper")
        self.objective = check_objective(objective)
        self.cost = cost or LOOPNEST
        self.fixed = dict(fixed or {})
        self.check = check
        self.task_map = task_map
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise ValueError(f"cache_size must be an integer >= 0, got {cache_size!r}")
        self._cache: OrderedDict[tuple[str, str], MappingResult] = OrderedDict()
        self._cache_size = cache_size
        if not isinstance(reuse, bool):
            raise ValueError(f"reuse must be True or False, got {reuse!r}")
        self.reuse = reuse
        self._problems: OrderedDict[tuple[str, str, str], MappingResult] = OrderedDict()
        self._pool: dict[str, list[MappingBatch]] = {}
        self._warm = reuse and _takes_incumbents(self.mapper)
        self.reuse_stats = {"searched": 0, "cache_hits": 0, "warm_offered": 0, "warm_used": 0}

    @property
    def layers(self) -> list[Any]:
        """The work units (layers for loop-nest workloads)."""
        return self.units

    def build(self, point: Mapping[str, Any]) -> Any:
        """The accelerator of ``point`` (step 1; :class:`Infeasible` if it cannot be built)."""
        return build_accelerator(getattr(self.accelerator, "from_point", self.accelerator), point,
                                 self.fixed, self.check)

    def map_units(self, arch: ArchSpec, point: Mapping[str, Any], seed: int = 0) -> list[MappingResult]:
        """Step 3: a :class:`MappingResult` per unit (cached; see the module docstring).

        Raises:
            Infeasible: a unit has no legal mapping (the message names it).
        """
        hw_key = repr(sorted({**self.fixed, **point}.items()))
        results: list[MappingResult | None] = [None] * len(self.units)
        todo: dict[str, list[int]] = {}
        for i, unit in enumerate(self.units):
            key = (hw_key, unit_key(unit))
            hit = self._cache.get(key)
            if hit is None and key[1] not in todo and self.reuse:
                hit = self._problem_hit(unit, key[1], arch)
                if hit is not None:
                    self._remember(self._cache, key, hit)
            if hit is not None:
                self._cache.move_to_end(key)
                results[i] = hit
            else:
                todo.setdefault(key[1], []).append(i)
        if todo:
            tasks = [(self.mapper, self.units[idx[0]], arch, self.cost, self.objective, seed + idx[0],
                      self._candidates(ukey)) for ukey, idx in todo.items()]
            outs = (self.task_map or _serial_map)(_map_one, tasks)
            for (ukey, idx), out in zip(todo.items(), outs):
                if isinstance(out, str):
                    raise Infeasible(f"layer {self.units[idx[0]].name!r}: {out}")
                for i in idx:
                    results[i] = out
                self._remember(self._cache, (hw_key, ukey), out)
                if self.reuse:
                    self._learn(self.units[idx[0]], ukey, arch, out)
        return [r for r in results if r is not None]

    # ---------------------------------------------------------------- reuse
    def _remember(self, cache: OrderedDict, key: Any, result: MappingResult) -> None:
        if self._cache_size:
            cache[key] = result
            cache.move_to_end(key)
            while len(cache) > self._cache_size:
                cache.popitem(last=False)

    def _problem_hit(self, unit: Any, ukey: str, arch: ArchSpec) -> MappingResult | None:
        """A result of the same mapping problem on another point (:func:`problem_key`: the
        raw key, or the canonical one for a proven optimum), re-scored on ``arch`` and
        taken only if its figures are the cached ones bit for bit."""
        for canonical in (False, True):
            pkey = problem_key(unit, arch, canonical)
            if pkey is None:
                continue
            cached = self._problems.get(("canonical" if canonical else "raw", ukey, pkey))
            if cached is None or (canonical and not cached.optimal):
                continue
            if cached.batch is not None:
                fresh = result_of(unit, arch, self.cost, cached.batch, 0, evaluated=1)
                if not (_same_figures(fresh, cached) and bool(np.asarray(
                        self.cost(unit, arch, cached.batch).valid)[0])):
                    continue                     # a guard: the key's argument says it never fires
            self.reuse_stats["cache_hits"] += 1
            return dataclasses.replace(cached, info={**dict(cached.info), "reused": "cache"})
        return None

    def _learn(self, unit: Any, ukey: str, arch: ArchSpec, result: MappingResult) -> None:
        """Keep ``result`` for :meth:`_problem_hit` and its mapping for the warm starts."""
        self.reuse_stats["searched"] += 1
        self.reuse_stats["warm_used"] += bool(result.info.get("warm_used"))
        self._remember(self._problems, ("raw", ukey, problem_key(unit, arch)), result)
        canon = problem_key(unit, arch, canonical=True)
        if canon is not None and result.optimal and _unpadded(unit, result.batch):
            self._remember(self._problems, ("canonical", ukey, canon), result)
        if self._warm and result.batch is not None:
            pool = self._pool.setdefault(ukey, [])
            pool[:] = [b for b in pool if not _same_batch(b, result.batch)]
            pool.insert(0, result.batch)
            del pool[WARM_POOL:]

    def _candidates(self, ukey: str) -> list[MappingBatch] | None:
        """The warm-start candidates for unit ``ukey`` (``None``: the mapper takes none)."""
        if not self._warm:
            return None
        pool = list(self._pool.get(ukey, ()))
        self.reuse_stats["warm_offered"] += bool(pool)
        return pool

    def preflight(self, points: Sequence[Mapping[str, Any]],
                  columns: Mapping[str, Any] | None = None) -> list[str]:
        """Check this evaluator on sampled design points before a study spends its budget
        (``coexplore validate``, and the start of ``coexplore run``): build every point
        (construction runs ``validate``), compare the vectorized area ``area_mm2_of``
        over ``columns`` (the points' columns, as the space's constraints see them) with
        each design's ``area_mm2``, map the first unit on the first design with the
        configured mapper, after checking every distinct unit's smallest tiles
        (:func:`mappers.fit.smallest_tile_shortfalls`) on every design.

        Returns the lines of a report. Raises ``ValueError`` naming the key for what no
        trial could survive: a parameter the accelerator does not have
        (:class:`~accelerators.base.UnknownParameter`), no sampled design that builds, a
        unit that fits none of the designs (the level, operand and words missing, or the
        mapper's rule refusing it).
        """
        builder = getattr(self.accelerator, "from_point", self.accelerator)
        owner = getattr(self.accelerator, "__name__", type(self.accelerator).__name__)
        built, why = [], Counter()
        for p in points:
            try:
                acc = build_accelerator(builder, p, self.fixed, self.check)
            except Infeasible as e:
                why[str(e)] += 1
                continue
            if hasattr(acc, "validate"):
                acc.validate()
            built.append((p, acc))
        lines = [f"hardware: {len(built)} of {len(points)} sampled designs build as {owner}"
                 + (f" (most common reason not: {why.most_common(1)[0][0]})" if why else "")]
        if not built:
            raise ValueError(f"none of the {len(points)} sampled designs can be built as {owner}: "
                             f"{why.most_common(1)[0][0]}")
        area_of = getattr(type(built[0][1]), "area_mm2_of", None)
        if callable(area_of) and columns is not None:
            idx = [i for i, p in enumerate(points) if any(p is q for q, _ in built)]
            cols = {k: np.asarray(v)[idx] for k, v in columns.items()}
            cols.update({k: np.full(len(idx), v) for k, v in self.fixed.items()
                         if isinstance(v, int | float) and k not in cols})
            try:
                vec = np.asarray(area_of(cols), dtype=float)
            except KeyError as e:
                lines.append(f"area: {e.args[0]}: a constraint on {owner}.area_mm2_of would fail "
                             "(add the parameter to the space, or to the evaluator's `fixed`)")
            else:
                one = np.array([float(acc.area_mm2) for _, acc in built])
                agree = bool(np.allclose(vec, one, rtol=1e-9, atol=0.0))
                lines.append(f"area: {one.min():.4g}-{one.max():.4g} mm2 over the built designs; "
                             f"vectorized area_mm2_of {'agrees' if agree else 'DIFFERS from area_mm2'}")
        constraints = getattr(self.mapper, "constraints", None)
        bypass = bool(getattr(self.mapper, "bypass", False))
        seen: set[str] = set()
        for unit in self.units:
            key = unit_key(unit)
            if key in seen or not isinstance(unit, Layer):
                continue
            seen.add(key)
            problems = []
            for _, acc in built:
                try:
                    short = smallest_tile_shortfalls(unit, acc.to_arch(), constraints, bypass=bypass)
                except ValueError as e:           # the mapper's rule refuses it
                    short = [str(e)]
                if not short:
                    break
                problems.append(short[0])
            else:
                raise ValueError(f"workload layer {unit.name!r} cannot be mapped on any of the "
                                 f"{len(built)} sampled designs: {problems[0]}")
        if seen:
            lines.append(f"layers: each of the {len(seen)} distinct layers fits some sampled design")
        arch = built[0][1].to_arch()
        first = self.units[0]
        t0 = time.perf_counter()
        out = _map_one((self.mapper, first, arch, self.cost, self.objective, 0, None))
        seconds = time.perf_counter() - t0
        mapper = type(self.mapper).__name__
        if isinstance(out, str):
            lines.append(f"mapping: {mapper} found no legal mapping of {first.name!r} on the first "
                         f"design: {out}")
        else:
            lines.append(f"mapping: {mapper} mapped {first.name!r} on the first design in "
                         f"{seconds:.2g} s (EDP {out.edp:.4g} pJ*cycles, utilization {out.utilization:.3g})")
        return lines

    def __call__(self, point: Mapping[str, Any], seed: int | None = None) -> Evaluation:
        acc = self.build(point)
        arch = acc.to_arch()
        results = self.map_units(arch, point, 0 if seed is None else int(seed))
        metrics = network_metrics(arch, _area(acc, arch), self.units, results)
        if not all(math.isfinite(v) for v in metrics.values()):
            raise Infeasible("no legal mapping for some layer (a non-finite figure)")
        metrics.update(proof_metrics(results, self.objective))
        return Evaluation(metrics=metrics, info={"breakdown": breakdown(arch, self.units, results, self.cost)})


def _serial_map(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    return [fn(x) for x in items]


def _unpadded(layer: Layer, batch: MappingBatch | None) -> bool:
    """Every dimension's factors multiply to its size (no padding: every tile a sub-box)."""
    if batch is None:
        return False
    sizes = np.array([layer.dims[d] for d in batch.dims])
    return bool((np.prod(batch.temporal * batch.spatial_x * batch.spatial_y, axis=1) == sizes).all())


def _same_batch(a: MappingBatch, b: MappingBatch) -> bool:
    return a.dims == b.dims and all(np.array_equal(getattr(a, f), getattr(b, f))
                                    for f in ("temporal", "spatial_x", "spatial_y", "order", "keep"))


class JointEvaluator:
    """``flat joint point -> Evaluation`` for points of
    :func:`mappers.mapping_space.joint_mapping_space`: hardware parameters plus
    ``L<i>.<param>`` for layer ``i``'s mapping.

    Args:
        accelerator, workload, fixed, cost: as :class:`NestedEvaluator`'s.
        hardware_names: the hardware parameters of the joint space.
    """

    def __init__(self, accelerator: Any, workload: Sequence[Any] | str, hardware_names: Sequence[str], *,
                 fixed: Mapping[str, Any] | None = None, cost: CostFunction | None = None) -> None:
        self.accelerator = resolve_accelerator(accelerator)
        self.units = resolve_workload(workload) if isinstance(workload, Mapping) else zoo.resolve(workload)
        self.hardware_names = list(hardware_names)
        self.fixed = dict(fixed or {})
        self.cost = cost or LOOPNEST

    def __call__(self, point: Mapping[str, Any], seed: int | None = None) -> Evaluation:
        hw = {k: v for k, v in point.items() if k in self.hardware_names}
        acc = build_accelerator(getattr(self.accelerator, "from_point", self.accelerator), hw, self.fixed)
        arch = acc.to_arch()
        parts = split({k: v for k, v in point.items() if k not in self.hardware_names})
        results = []
        for i, layer in enumerate(self.units):
            batch = batch_from_columns(layer, arch, mapping_space(layer, arch).columns([parts.get(f"L{i}", {})]))
            if not bool(np.asarray(self.cost(layer, arch, batch).valid)[0]):
                raise Infeasible(f"layer {layer.name!r}: mapping does not fit {arch.name}")
            results.append(result_of(layer, arch, self.cost, batch, 0, evaluated=1))
        metrics = network_metrics(arch, _area(acc, arch), self.units, results)
        return Evaluation(metrics=metrics, info={"breakdown": breakdown(arch, self.units, results, self.cost)})
