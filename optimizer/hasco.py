"""HASCO's software search and its co-design evaluator (the optimizer side of
:mod:`evaluators.hasco`).

* :func:`search_schedule` -- one schedule search of a computation on an intrinsic
  accelerator (:class:`mappers.schedule.ScheduleProblem`) at a budget of evaluated
  schedules: ``random`` and ``heuristic`` (:mod:`mappers.schedule`) or ``qlearning``:
  :class:`optimizer.qlearning.QLearning` as HASCO uses FlexTensor's (tabular Q over
  moves to neighbouring schedules, epsilon ``max(0.8 exp(-0.01 t), 0.1)``, discount 0.9,
  reward ``tanh`` of the relative latency improvement -- the scale-free form of HASCO's
  ``tanh(max(v_from - v_new, 0))``, see :mod:`optimizer.qlearning`), after the same random
  warm-up as the heuristic, episodes restarting at the best point with probability 0.8.
* :func:`schedule_cached` -- memoized per (accelerator, computation shape, method,
  budget, seed): the layers of a network that share a shape are searched once.
* :class:`HascoCoDesign` -- ``hardware point -> {latency_ms, power_mw, area_mm2, ...}``:
  build the accelerator (:func:`evaluators.hasco.build`; the generator's limit
  :func:`evaluators.hasco.generator_check` raises :class:`~evaluators.base.Infeasible`),
  then the best schedule of every layer (every decomposition of a computation with more
  than two inputs is tried, its stages' latencies add up), and the network totals
  (:func:`evaluators.hasco.network_totals`). Like :class:`optimizer.codesign.NestedCoDesign`
  it lives here because its inner loop is a search.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from accelerators.intrinsic import HASCO_SPACES, IntrinsicAccelerator
from evaluators.base import Infeasible
from evaluators.hasco import MAX_BANK_KIB, build, generator_check, network_totals, workload
from mappers.intrinsics import Computation, decompositions, intrinsic, match
from mappers.schedule import (
    ScheduleProblem,
    ScheduleResult,
    default_schedule,
    heuristic_schedule,
    random_schedule,
    result_of,
)
from optimizer.base import Objective, Trial, TrialStatus
from optimizer.qlearning import QLearning

__all__ = ["METHODS", "HascoCoDesign", "computation_cost", "schedule_cached", "search_schedule",
           "sw_search_curves"]

METHODS = ("heuristic", "qlearning", "random")


def qlearning_schedule(problem: ScheduleProblem, budget: int, seed: int, rng: np.random.Generator,
                       start: Sequence[Mapping[str, Any]] = (), warmup: int | None = None,
                       **options: Any) -> ScheduleResult:
    """FlexTensor's Q-learning as HASCO runs it: a random warm-up (as the heuristic's),
    then an epsilon-greedy walk whose episodes restart (with probability
    ``restart_best``, default 0.8) at the best point; ``options`` go to
    :class:`~optimizer.qlearning.QLearning`."""
    opts = {"restart_best": 0.8, **options}
    opt = QLearning(problem.space, (Objective("latency_cycles", "min"),), seed, **opts)
    warmup = max(1, min(budget, warmup if warmup is not None else max(8, budget // 8)))
    pts = [dict(p) for p in start][:budget]
    pts += problem.sample(max(warmup - len(pts), 0), rng)
    lat = problem.evaluate(pts)["latency_cycles"].tolist()

    def trial(number: int, p: dict[str, Any], v: float) -> Trial:
        if math.isfinite(v):
            return Trial(number, p, TrialStatus.COMPLETE, {"latency_cycles": v})
        return Trial(number, p, TrialStatus.INFEASIBLE, reason="invalid schedule")

    opt.tell([trial(i, p, v) for i, (p, v) in enumerate(zip(pts, lat))])
    for number in range(len(pts), budget):
        ask = opt.ask(1)
        if not ask:
            break
        v = float(problem.evaluate(ask)["latency_cycles"][0])
        pts.append(ask[0])
        lat.append(v)
        opt.tell([trial(number, ask[0], v)])
    return result_of(problem, pts, lat, budget)


def search_schedule(problem: ScheduleProblem, method: str = "heuristic", budget: int = 100,
                    seed: int = 0, options: Mapping[str, Any] | None = None, *,
                    start: Sequence[Mapping[str, Any]] = ()) -> ScheduleResult:
    """The lowest-latency schedule ``method`` finds in ``budget`` evaluations.

    ``start``: schedules every method evaluates first (counted in the budget; e.g.
    ``[default_schedule(problem)]``). ``options``: method options (``warmup`` for the
    heuristic and Q-learning, :class:`~optimizer.qlearning.QLearning` hyperparameters).

    Raises:
        ValueError: unknown method, a budget < 1, or no legal schedule found.
    """
    if method not in METHODS:
        raise ValueError(f"unknown schedule search method {method!r} (choices: {list(METHODS)})")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    rng = np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(11,)))
    if method == "random":
        return random_schedule(problem, budget, rng, start)
    if method == "heuristic":
        return heuristic_schedule(problem, budget, rng, start, **dict(options or {}))
    return qlearning_schedule(problem, budget, seed, rng, start, **dict(options or {}))


_CACHE: OrderedDict[tuple, ScheduleResult] = OrderedDict()
CACHE_SIZE = 20000


def shape_key(comp: Computation) -> tuple:
    """What identifies a computation's schedule space (not its name or repeat)."""
    return (tuple(comp.loops.items()), comp.output, comp.inputs)


def schedule_cached(comp: Computation, acc: IntrinsicAccelerator, method: str = "heuristic",
                    budget: int = 100, seed: int = 0, *, seed_default: bool = True) -> ScheduleResult:
    """:func:`search_schedule` memoized per (accelerator, computation shape, method,
    budget, seed). ``seed_default``: start from :func:`~mappers.schedule.default_schedule`
    (counted in the budget)."""
    key = (acc, shape_key(comp), method, budget, seed, seed_default)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    problem = ScheduleProblem(comp, acc)
    start = [default_schedule(problem)] if seed_default else []
    res = search_schedule(problem, method, budget, seed, start=start)
    _CACHE[key] = res
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return res


def computation_cost(comp: Computation, acc: IntrinsicAccelerator, *, method: str = "heuristic",
                     budget: int = 60, seed: int = 0, schedule: str = "search") -> dict[str, Any]:
    """Best latency/energy of one computation (all decompositions; stages add up).

    ``schedule="search"`` searches every stage (:func:`schedule_cached`, seeded with the
    default schedule); ``"default"`` takes :func:`~mappers.schedule.default_schedule`.

    Raises:
        Infeasible: no decomposition whose stages all have a partition onto the intrinsic.
    """
    kind = acc.intrinsic
    best: dict[str, Any] | None = None
    for stages in decompositions(comp):
        if not all(match(s, intrinsic(kind)) for s in stages):
            continue
        lat = energy = 0.0
        parts = []
        for s in stages:
            if schedule == "default":
                pr = ScheduleProblem(s, acc)
                r = pr.evaluate([default_schedule(pr)])
                if not bool(r["valid"][0]):
                    raise Infeasible(f"{comp.name!r}: the default schedule of {s.name!r} is illegal")
                lat += float(r["latency_cycles"][0])
                energy += float(r["energy_pj"][0])
                parts.append("default")
            else:
                try:
                    res = schedule_cached(s, acc, method, budget, seed)
                except ValueError as e:
                    raise Infeasible(f"{comp.name!r}: {e}") from None
                lat += res.latency_cycles
                energy += res.energy_pj
                parts.append(res.partition)
        if best is None or lat < best["latency_cycles"]:
            best = {"latency_cycles": lat, "energy_pj": energy, "partitions": parts}
    if best is None:
        raise Infeasible(f"{comp.name!r} ({comp.kind}) has no partition onto the {kind} intrinsic")
    return best


class HascoCoDesign:
    """``hardware point -> {latency_ms, power_mw, area_mm2, ...}`` (see module docstring).

    Args:
        intrinsic: ``"GEMM"``, ``"GEMV"``, ``"DOT"`` or ``"CONV"``.
        workload: a name for :func:`evaluators.hasco.workload` or a list of computations.
        sw_method: schedule search (``heuristic``, ``qlearning``, ``random``).
        sw_budget: schedules evaluated per layer (and stage).
        schedule: ``"search"`` (co-design) or ``"default"`` (no software search: the
            separate flow's hardware exploration).
        max_bank_kib: the generator's largest SRAM bank
            (:data:`evaluators.hasco.MAX_BANK_KIB`).
        workload_options: passed to :func:`evaluators.hasco.workload`.
        sw_seed: seed of the schedule searches. It does not follow the trial's seed, so
            a hardware point always gets the same software (and cache hits).
    """

    def __init__(self, intrinsic: str, workload: str | Sequence[Computation], *, sw_method: str = "heuristic",
                 sw_budget: int = 60, schedule: str = "search", max_bank_kib: float = MAX_BANK_KIB,
                 workload_options: Mapping[str, Any] | None = None, sw_seed: int = 0) -> None:
        self.intrinsic = intrinsic.upper() if isinstance(intrinsic, str) else intrinsic
        if self.intrinsic not in HASCO_SPACES:
            raise ValueError(f"unknown intrinsic {intrinsic!r}; choices: {sorted(HASCO_SPACES)}")
        if schedule not in ("search", "default"):
            raise ValueError(f"schedule must be 'search' or 'default', got {schedule!r}")
        if sw_method not in METHODS:
            raise ValueError(f"unknown schedule search method {sw_method!r} (choices: {list(METHODS)})")
        if isinstance(sw_budget, bool) or not isinstance(sw_budget, int) or sw_budget < 1:
            raise ValueError(f"sw_budget must be a positive integer, got {sw_budget!r}")
        self.comps = _workload(workload, self.intrinsic, **dict(workload_options or {}))
        self.sw_method, self.sw_budget, self.schedule = sw_method, sw_budget, schedule
        self.max_bank_kib = float(max_bank_kib)
        self.sw_seed = int(sw_seed)

    def __call__(self, point: Mapping[str, Any], seed: int | None = None) -> dict[str, float]:
        try:
            acc = build(self.intrinsic, point)
        except (ValueError, TypeError) as e:
            raise Infeasible(f"invalid hardware: {e}") from None
        why = generator_check(acc, self.max_bank_kib)
        if why:
            raise Infeasible(f"generator: {why}")
        per = [computation_cost(c, acc, method=self.sw_method, budget=self.sw_budget,
                                seed=self.sw_seed, schedule=self.schedule) for c in self.comps]
        out = network_totals(acc, self.comps, per)
        if not all(math.isfinite(v) for v in out.values()):
            raise Infeasible("no legal schedule for some layer")
        return out


_workload = workload


def sw_search_curves(comp: Computation, acc: IntrinsicAccelerator, methods: Sequence[str], budget: int,
                     seeds: Sequence[int]) -> dict[str, np.ndarray]:
    """Best latency after each evaluation, per method, ``(seeds, budget)`` arrays (the
    software-search convergence of one two-input computation; no default seed point)."""
    pr = ScheduleProblem(comp, acc)
    out = {}
    for m in methods:
        rows = []
        for s in seeds:
            h = np.asarray(search_schedule(pr, m, budget, s).history, dtype=float)
            rows.append(np.pad(h, (0, budget - len(h)), mode="edge"))
        out[m] = np.array(rows)
    return out
