"""Evaluators: score a design point (energy, delay, EDP, area, accuracy ...).

The simplest evaluator is a plain function ``point -> dict of metrics`` that may raise
:class:`Infeasible` for unknown-constraint violations. Richer ones return an
:class:`Evaluation` (metrics, outcome constraints with ``<= 0`` feasible, status,
reason, info). Analytical evaluators are vectorized array code; measuring evaluators
record how they measured. Evaluators never import an optimizer or the study layer, and
never start processes: parallelism is the study's.

Data flow: design_space -> accelerators -> mappers -> **evaluators** -> experiments.

Modules:

* :mod:`evaluators.base` -- :class:`Evaluation`, :class:`EvalStatus`, :class:`Infeasible`.
* :mod:`evaluators.loopnest` -- the vectorized loop-nest cost model (exact access counts,
  energy, latency, EDP for a batch of mappings), one module per part (its docstring: the
  conventions, the counting rules, the compiled kernel and its dispatch, the lower bounds
  of the exact mapper and the compulsory-traffic bounds, and
  :mod:`evaluators.loopnest.walk`, the literal loop-nest walk it is proven against);
  :mod:`evaluators.systolic_timing` -- SCALE-Sim's systolic compute cycles;
  :mod:`evaluators.differentiable` -- the same model under jax, relaxed.
* :mod:`evaluators.nested` -- :class:`NestedEvaluator`, the one nested co-design
  evaluator (build, lower, map every layer, cost, sum, explain), and
  :class:`JointEvaluator` for flattened joint points.
* :mod:`evaluators.intrinsic_codesign` -- HASCO's problem and :class:`HascoCoDesign`.
* :mod:`evaluators.gradient_codesign` -- DOSA-style gradient co-design through the
  relaxed model.
* :mod:`evaluators.kernels` -- real torch / Triton kernels, CPU/GPU models, calibration,
  hardware in the loop; :mod:`evaluators.optics` -- diffractive networks;
  :mod:`evaluators.ppr` -- personalized PageRank (MeLoPPR).
* :mod:`evaluators.registry` -- evaluators by name.
"""

from evaluators.base import EvalStatus, Evaluation, Infeasible
from evaluators.nested import JointEvaluator, NestedEvaluator
from evaluators.registry import EVALUATORS

__all__ = ["EVALUATORS", "EvalStatus", "Evaluation", "Infeasible", "JointEvaluator", "NestedEvaluator"]
