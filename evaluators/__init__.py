"""Evaluators: score a design point (energy, delay, EDP, area, accuracy ...).

The simplest evaluator is a plain function ``point -> dict of metrics`` that may raise
:class:`Infeasible` for unknown-constraint violations. Richer ones return an
:class:`Evaluation` (metrics, outcome constraints with ``<= 0`` feasible, status,
reason). Analytical evaluators are vectorized array code; measuring evaluators record
how they measured. Evaluators never import optimizers or the study layer.
"""

from evaluators.base import EvalStatus, Evaluation, Infeasible

__all__ = ["EvalStatus", "Evaluation", "Infeasible"]
