"""Workloads, mappings and mappers (the software half of a co-design point).

A *workload* says what runs (tensor layers, tensor computations, graphs); a *mapping*
says how it is laid onto an accelerator (tilings, loop orders, spatial unrolling, bypass;
a HASCO schedule; a graph decomposition); a *mapper* chooses one. Every mapper implements
:class:`~mappers.base.Mapper`, ``map(layer, arch, cost, objective)``, with the cost
function handed in by its caller: nothing here imports an evaluator.

Data flow: design_space -> accelerators -> **mappers** -> evaluators -> experiments.

Modules:

* :mod:`mappers.base` -- the :class:`Mapper` protocol, :class:`MappingResult`, the
  objectives.
* :mod:`mappers.workloads` -- :class:`Layer` (convolutions, GEMM, batched matmul) and
  their tensors; :mod:`mappers.zoo` -- ResNet-50, MobileNetV2, Xception, DQN, DLRM MLPs,
  a BERT block; :mod:`mappers.from_torch` -- layers of any ``torch.nn.Module``.
* :mod:`mappers.mapping` -- :class:`Mapping` and :class:`MappingBatch` (the cost model's
  input); :mod:`mappers.mapping_space` -- the legal mappings of a layer on an
  architecture as a :class:`design_space.DesignSpace`, and the joint hardware x mapping
  space.
* Mappers: :mod:`mappers.exact` (the provably best mapping under the cost model, by
  branch and bound), :mod:`mappers.heuristic` (max utilization, then steepest descent),
  :mod:`mappers.sampling` (random), :mod:`mappers.exhaustive` (every mapping of a small
  layer), :mod:`mappers.asktell` (any ask/tell strategy, e.g. constrained BO).
* :mod:`mappers.constraints` -- :class:`MappingConstraints`, a declarative restriction
  of the mapping space (Timeloop's mapspace constraints), honoured by the exact and
  exhaustive mappers; :mod:`mappers.row_stationary` -- Eyeriss's row-stationary dataflow
  as such a set, and Eyeriss's own AlexNet mappings (JSSC 2017 Table III).
* HASCO: :mod:`mappers.tensor_ir` (tensor computations, intrinsics, HW/SW partitioning)
  and :mod:`mappers.schedule` (schedule spaces, their searches, :class:`ScheduleMapper`).
* MeLoPPR: :mod:`mappers.ppr_plan` (graph decompositions and their plans).
* :mod:`mappers.registry` -- mappers and search strategies by name; :mod:`mappers.testing`
  -- the conformance suite every registered mapper passes.
* ``interop/`` -- other tools' workload and mapping specs (:mod:`mappers.interop.zigzag`).
"""

from mappers.base import (
    OBJECTIVES,
    BatchCost,
    CostFunction,
    Mapper,
    MappingResult,
    NoLegalMapping,
    objective_values,
)
from mappers.exact import ExactMapper
from mappers.exhaustive import ExhaustiveMapper
from mappers.heuristic import HeuristicMapper
from mappers.mapping import Mapping, MappingBatch
from mappers.mapping_space import joint_mapping_space, mapping_space
from mappers.registry import MAPPERS, SEARCHES, make_mapper
from mappers.sampling import RandomMapper
from mappers.workloads import Layer

__all__ = [
    "MAPPERS",
    "OBJECTIVES",
    "SEARCHES",
    "BatchCost",
    "CostFunction",
    "ExactMapper",
    "ExhaustiveMapper",
    "HeuristicMapper",
    "Layer",
    "Mapper",
    "Mapping",
    "MappingBatch",
    "MappingResult",
    "NoLegalMapping",
    "RandomMapper",
    "joint_mapping_space",
    "make_mapper",
    "mapping_space",
    "objective_values",
]
