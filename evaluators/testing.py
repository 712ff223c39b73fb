"""The evaluator conformance suite: checks every registered evaluator must pass.

Library code, like ``optuna.testing``, so that a plugin's author runs on their evaluator
what coexplore runs on its own (``tests/conformance``). In the plugin's own tests
(``tests/experiments/test_plugins.py`` does this for its toy plugin)::

    from evaluators.testing import check_evaluator

    def test_my_evaluator_conforms():
        ev = MyEvaluator(accelerator=MyArray, workload="dqn[2:3]")
        check_evaluator(ev, {"rows": 4, "cols": 2}, {"rows": 0, "cols": 2},  # good, unbuildable
                        unitless={"my_score"})   # documented unitless metric names, if any

Each check raises :class:`ConformanceError` (an ``AssertionError``) naming what broke:

* :func:`check_metric_units` -- every metric name carries its unit as a suffix from
  :data:`UNIT_SUFFIXES` or is one of the documented unitless names :data:`UNITLESS`
  (extend it per evaluator with ``unitless=``, and document those names); values are
  real numbers, not NaN (an infinity is a value: the nested evaluator's ``certified_gap``
  is infinite where no bound certifies a layer).
* :func:`check_infeasible` -- a point that cannot be built is reported, not crashed on:
  the evaluator raises :class:`~evaluators.base.Infeasible` with a reason, or returns an
  :class:`~evaluators.base.Evaluation` with status ``infeasible`` and a reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from evaluators.base import Evaluation, Infeasible

__all__ = ["UNITLESS", "UNIT_SUFFIXES", "ConformanceError", "check_evaluator", "check_infeasible",
           "check_metric_units"]

UNIT_SUFFIXES = ("_pj", "_nj", "_uj", "_mj", "_j", "_cycles", "_ns", "_us", "_ms", "_s", "_mm2", "_m2",
                 "_mw", "_w", "_mhz", "_ghz", "_kib", "_mib", "_bytes", "_words", "_pct", "_ratio",
                 "_per_s", "_db")
"""Units a metric name may end with (``energy_pj``, ``latency_cycles``, ``edp_uj_ms``...)."""

UNITLESS = frozenset({"edp", "accuracy", "utilization", "macs", "loss", "error", "count",
                      # the nested evaluator's proof figures: a count of layers, a 0/1 flag and
                      # a ratio (value / certified bound - 1)
                      "layers_proven", "all_layers_proven", "certified_gap"})
"""Names that are unitless by definition (documented in each evaluator's docstring)."""


class ConformanceError(AssertionError):
    """An entry broke its registry's protocol (the message names the check)."""


def _call(evaluator: Callable[..., Any], point: Mapping[str, Any]) -> Any:
    return evaluator(dict(point))


def check_metric_units(metrics: Mapping[str, Any], unitless: Iterable[str] = ()) -> None:
    """Every name has a unit suffix or is unitless (see the module docstring)."""
    allowed = UNITLESS | set(unitless)
    for name, v in metrics.items():
        if name not in allowed and not name.endswith(UNIT_SUFFIXES):
            raise ConformanceError(f"metric {name!r} names no unit: end it with one of {UNIT_SUFFIXES} or "
                                   f"document it as unitless")
        if isinstance(v, bool) or not isinstance(v, int | float) or math.isnan(float(v)):
            raise ConformanceError(f"metric {name!r} must be a real number, not NaN, got {v!r}")


def check_infeasible(evaluator: Callable[..., Any], bad_point: Mapping[str, Any]) -> str:
    """``bad_point`` is reported infeasible with a reason; returns the reason."""
    try:
        out = _call(evaluator, bad_point)
    except Infeasible as e:
        if not str(e):
            raise ConformanceError("Infeasible raised without a reason") from None
        return str(e)
    except Exception as e:  # the check is that nothing else escapes
        raise ConformanceError(f"an unbuildable point must be Infeasible, got {type(e).__name__}: {e}") from None
    if isinstance(out, Evaluation) and out.status.value == "infeasible" and out.reason:
        return out.reason
    raise ConformanceError(f"an unbuildable point {dict(bad_point)!r} was not reported infeasible: {out!r}")


def check_evaluator(evaluator: Callable[..., Any], good_point: Mapping[str, Any],
                    bad_point: Mapping[str, Any], unitless: Iterable[str] = ()) -> Any:
    """Both checks; returns the good point's result."""
    out = _call(evaluator, good_point)
    metrics = out.metrics if isinstance(out, Evaluation) else out
    if isinstance(out, Evaluation) and out.status.value != "ok":
        raise ConformanceError(f"the good point was not evaluated: {out.status.value}: {out.reason}")
    check_metric_units(metrics, unitless)
    check_infeasible(evaluator, bad_point)
    return out
