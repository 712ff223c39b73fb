"""The loop-nest cost model: exact access counts, energy (pJ), latency (cycles), EDP,
utilization and validity for a batch of mappings of a layer on an architecture.

Given a :class:`~mappers.workloads.Layer`, an :class:`~accelerators.arch.ArchSpec` and a
:class:`~mappers.mapping.MappingBatch` of ``B`` mappings, :func:`evaluate_batch` returns
a :class:`LoopNestResult` of per-mapping arrays, with array operations over the whole
batch (no Python loop over mappings) or the compiled kernel.

What goes where:

* :mod:`~evaluators.loopnest.conventions` -- the counting conventions where tools
  differ (:class:`Conventions`, :data:`ACCOUNTING`, :data:`CONVENTION_CHOICES`).
* :mod:`~evaluators.loopnest.counts` -- the counting rules (the model's semantics, in
  its docstring) as numpy/jax array code: :func:`count`, :func:`prepare`,
  :class:`LayerArch`, :class:`FillContext`.
* :mod:`~evaluators.loopnest.energy` -- picojoules from counts: access, NoC, vector
  and leakage energy, for both paths.
* :mod:`~evaluators.loopnest.reference` -- the array path of :func:`evaluate_batch`:
  blocks, latency, validity, the result layout.
* :mod:`~evaluators.loopnest.kernel` -- the same rules compiled with numba;
  :mod:`~evaluators.loopnest.kernel_bounds` -- its copy of the lower bound;
  :mod:`~evaluators.loopnest.kernel_common` -- numba helpers both use.
* :mod:`~evaluators.loopnest.dispatch` -- when the kernel runs, its per-(layer,
  architecture) plan (packed once, cached) and its output as a result.
* :mod:`~evaluators.loopnest.bounds` -- lower bounds on partial mappings, for the exact
  mapper (:meth:`LoopNestCost.lower_bound`, :meth:`LoopNestCost.least_lower_bound`).
* :mod:`~evaluators.loopnest.compulsory` -- compulsory-traffic bounds on a whole layer,
  true of every mapping (:func:`edp_lower_bound` and its two factors).
* :mod:`~evaluators.loopnest.cost` -- :func:`evaluate_batch` (which path runs),
  :func:`evaluate`, :class:`LoopNestCost` and :data:`LOOPNEST`.
* :mod:`~evaluators.loopnest.result` -- :class:`LoopNestResult`.
* :mod:`~evaluators.loopnest.walk` -- the literal loop-nest walk, the independent oracle
  every count is tested against; it shares no code with the model.

docs/MODEL.md describes the model and how each part is validated.
"""

from evaluators.loopnest.compulsory import (
           edp_lower_bound,
           energy_lower_bound_pj,
           latency_lower_bound_cycles,
)
from evaluators.loopnest.conventions import ACCOUNTING, CONVENTION_CHOICES, Conventions
from evaluators.loopnest.cost import LOOPNEST, LoopNestCost, evaluate, evaluate_batch
from evaluators.loopnest.counts import (
           FillContext,
           LayerArch,
           LayerConstants,
           count,
           layer_constants,
           prepare,
)
from evaluators.loopnest.dispatch import KERNEL_CACHE_SIZE, kernel_available
from evaluators.loopnest.result import LoopNestResult

__all__ = ["ACCOUNTING", "CONVENTION_CHOICES", "KERNEL_CACHE_SIZE", "LOOPNEST", "Conventions", "FillContext",
           "LayerArch", "LayerConstants", "LoopNestCost", "LoopNestResult", "count", "edp_lower_bound",
           "energy_lower_bound_pj", "evaluate", "evaluate_batch", "kernel_available", "latency_lower_bound_cycles",
           "layer_constants", "prepare"]
