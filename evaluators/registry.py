"""Evaluators by name, so configs can say ``evaluator: nested``.

One :class:`design_space.registry.Registry` (entry-point group ``coexplore.evaluators``).
A study config's ``evaluator:`` is a registered name or a ``"module:attr"`` reference; a
class is instantiated with the config's ``options``, a function called with the point
and the options.
"""

from __future__ import annotations

from typing import Any

from design_space.registry import Registry

__all__ = ["EVALUATORS", "register"]

EVALUATORS: Registry[Any] = Registry("evaluator", "coexplore.evaluators", {
    "nested": "evaluators.nested:NestedEvaluator",
    "joint": "evaluators.nested:JointEvaluator",
    "hasco": "evaluators.intrinsic_codesign:HascoCoDesign",
    "d2nn": "evaluators.optics.multitask_evaluator:D2NNCoDesign",
    "meloppr": "evaluators.ppr.engine_evaluator:MeLoPPRCoDesign",
})


def register(name: str, evaluator: Any, *, replace: bool = False) -> Any:
    """Make an evaluator (a class or a function) available as ``name``."""
    return EVALUATORS.register(name, evaluator, replace=replace)
