"""The mapper conformance suite: checks every :class:`~mappers.base.Mapper` must pass.

Library code, like ``optuna.testing``, so that a plugin's author runs on their mapper what
coexplore runs on its own (``tests/conformance``). The cost function is handed in, as to
every mapper (mappers import no evaluator). In the plugin's own tests
(``tests/experiments/test_plugins.py`` does this for its toy plugin)::

    from evaluators.loopnest import evaluate_batch
    from mappers.testing import check_mapper, tiny_case

    def test_my_mapper_conforms():
        check_mapper(MyMapper(), *tiny_case(), evaluate_batch)

Each check raises :class:`ConformanceError` (an ``AssertionError``) naming what broke:

* :func:`check_result_fields` -- a :class:`~mappers.base.MappingResult` with finite,
  positive energy and latency, ``edp = energy x latency``, ``evaluated >= 1``, ``seconds
  >= 0``, a non-increasing ``history`` no longer than ``evaluated``, a ``lower_bound`` no
  greater than the objective, ``optimal`` a bool, a ``scope`` (:class:`~mappers.base.ProofScope`) on
  every result that claims optimality or a bound, JSON-able ``info``; a loop-nest result's
  figures are its mapping's, re-scored by the cost function.
* :func:`check_legal` -- the mapping passes the library's own legality check
  (:meth:`Mapping.violations <mappers.mapping.Mapping.violations>`); a result without one
  (a HASCO computation in stages) says so in ``info``.
* :func:`check_optimal_claim` -- ``optimal=True`` only when true: the result is no worse
  than the best of every mapping of :func:`mappers.mapping_space.mapping_space` on the
  tiny case, enumerated independently of any mapper (a necessary condition of a proof).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from accelerators.arch import ArchSpec
from accelerators.spatial import SpatialArray
from mappers.base import CostFunction, Mapper, MappingResult, ProofScope, objective_values
from mappers.mapping_space import batch_from_columns, mapping_space
from mappers.workloads import Layer, gemm

__all__ = ["ConformanceError", "brute_force_best", "check_legal", "check_mapper", "check_optimal_claim",
           "check_result_fields", "tiny_case"]

REL = 1e-9


class ConformanceError(AssertionError):
    """An entry broke its registry's protocol (the message names the check)."""


def tiny_case() -> tuple[Layer, ArchSpec]:
    """A 4x4x4 GEMM on a 2x2 spatial array with small buffers: small enough to enumerate."""
    arch = SpatialArray(pe_x=2, pe_y=2, rf_w_words=8, rf_i_words=8, rf_o_words=8, glb_kib=1).to_arch()
    return gemm("conformance", M=4, N=4, K=4), arch


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def check_result_fields(result: Any, layer: Any, arch: ArchSpec, cost: CostFunction,
                        objective: str = "edp") -> None:
    """The fields of ``result`` (see the module docstring)."""
    if not isinstance(result, MappingResult):
        raise ConformanceError(f"map must return a MappingResult, got {type(result).__name__}")
    for f in ("energy_pj", "latency_cycles", "edp"):
        v = getattr(result, f)
        if not (isinstance(v, float) and math.isfinite(v) and v > 0):
            raise ConformanceError(f"MappingResult.{f} must be a finite positive float, got {v!r}")
    if not _close(result.edp, result.energy_pj * result.latency_cycles):
        raise ConformanceError(f"MappingResult.edp {result.edp!r} != energy_pj x latency_cycles "
                               f"{result.energy_pj * result.latency_cycles!r}")
    if isinstance(result.evaluated, bool) or not isinstance(result.evaluated, int) or result.evaluated < 1:
        raise ConformanceError(f"MappingResult.evaluated must be an int >= 1, got {result.evaluated!r}")
    if not result.seconds >= 0:
        raise ConformanceError(f"MappingResult.seconds must be >= 0, got {result.seconds!r}")
    h = np.asarray(result.history, dtype=float)
    if len(h) > result.evaluated or (len(h) > 1 and (np.diff(h) > 0).any()):
        raise ConformanceError(f"MappingResult.history must be the best objective so far (non-increasing, at "
                               f"most `evaluated` long), got {tuple(result.history)[:10]}...")
    if not isinstance(result.optimal, bool) or not isinstance(result.stopped_early, bool):
        raise ConformanceError("MappingResult.optimal and .stopped_early must be bools")
    if result.scope is not None and not isinstance(result.scope, ProofScope):
        raise ConformanceError(f"MappingResult.scope must be a ProofScope or None, got {result.scope!r}")
    if (result.optimal or result.lower_bound is not None) and result.scope is None:
        raise ConformanceError("a result that claims optimality or a lower bound must state the space the claim "
                               "covers (MappingResult.scope)")
    if result.scope is not None and result.scope.objective != objective:
        raise ConformanceError(f"MappingResult.scope.objective is {result.scope.objective!r}, but the mapper was "
                               f"asked for {objective!r}")
    value = result.objective(objective)
    if result.lower_bound is not None and result.lower_bound > value * (1 + REL):
        raise ConformanceError(f"MappingResult.lower_bound {result.lower_bound!r} exceeds the result's "
                               f"{objective} {value!r}")
    try:
        json.dumps(dict(result.info), default=str)
    except (TypeError, ValueError) as e:
        raise ConformanceError(f"MappingResult.info must be JSON-serializable: {e}") from None
    if result.batch is not None:
        r = cost(layer, arch, result.batch)
        again = (float(np.asarray(r.energy_pj)[0]), float(np.asarray(r.latency_cycles)[0]))
        if not (_close(again[0], result.energy_pj) and _close(again[1], result.latency_cycles)):
            raise ConformanceError(f"the result's figures (energy {result.energy_pj!r}, latency "
                                   f"{result.latency_cycles!r}) are not its mapping's under the cost "
                                   f"function ({again})")


def check_legal(result: MappingResult, layer: Any, arch: ArchSpec) -> None:
    """The returned mapping is legal under the library's check."""
    if result.mapping is None:
        if not result.info:
            raise ConformanceError("a result without a mapping must describe its stages in info")
        return
    bad = result.mapping.violations(layer, arch)
    if bad:
        raise ConformanceError(f"the returned mapping is illegal: {bad}")


def brute_force_best(layer: Layer, arch: ArchSpec, cost: CostFunction, objective: str = "edp") -> float:
    """The least ``objective`` over every point of ``mapping_space(layer, arch)``."""
    space = mapping_space(layer, arch)
    best, chunk = math.inf, []
    for p in space.grid():
        chunk.append(p)
        if len(chunk) == 4096:
            best = min(best, _best_of(layer, arch, cost, objective, space, chunk))
            chunk = []
    if chunk:
        best = min(best, _best_of(layer, arch, cost, objective, space, chunk))
    return best


def _best_of(layer: Layer, arch: ArchSpec, cost: CostFunction, objective: str, space: Any, pts: list) -> float:
    v = objective_values(cost(layer, arch, batch_from_columns(layer, arch, space.columns(pts))), objective)
    v = v[np.isfinite(v)]
    return float(v.min()) if len(v) else math.inf


def check_optimal_claim(result: MappingResult, layer: Layer, arch: ArchSpec, cost: CostFunction,
                        objective: str = "edp", best: float | None = None) -> None:
    """``optimal=True`` only if no enumerated mapping beats the result (``best``: the
    brute-force optimum, if already known)."""
    if not result.optimal:
        return
    best = brute_force_best(layer, arch, cost, objective) if best is None else best
    value = result.objective(objective)
    if value > best * (1 + REL):
        raise ConformanceError(f"the result claims optimal={result.optimal} with {objective} {value!r}, but "
                               f"enumerating the mapping space finds {best!r}")


def check_mapper(mapper: Mapper, layer: Any, arch: ArchSpec, cost: CostFunction, objective: str = "edp", *,
                 seed: int = 0, best: float | None = None,
                 map_fn: Callable[..., MappingResult] | None = None) -> MappingResult:
    """Every check on ``mapper.map(layer, arch, cost, objective, seed=seed)``; returns the
    result. The optimality cross-check needs a loop-nest :class:`Layer`."""
    result = (map_fn or mapper.map)(layer, arch, cost, objective, seed=seed)
    check_result_fields(result, layer, arch, cost, objective)
    check_legal(result, layer, arch)
    if isinstance(layer, Layer):
        check_optimal_claim(result, layer, arch, cost, objective, best)
    elif result.optimal:
        raise ConformanceError("optimal=True on a unit the suite cannot enumerate; check it on a Layer")
    return result
