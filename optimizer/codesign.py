"""Hardware/software co-design of tensor accelerators: nested and joint.

**Nested** (Shi et al. 2020's bilevel formulation): an outer optimizer (a study with
``optimizer: constrained-bo``) proposes hardware points; :class:`NestedCoDesign` scores
each by optimizing every layer's mapping with an inner search (:func:`inner_search`:
the heuristic, random or exhaustive mappers, or any ask/tell optimizer -- constrained BO,
Q-learning, TPE -- over :func:`mappers.space.mapping_space`) and returns the network
metrics: energy and latency summed over layers with repeat counts, and EDP = total
energy x total latency. Invalid hardware, or a layer without any legal mapping, makes
the point INFEASIBLE (an unknown constraint the outer BO learns). Layers are searched in
parallel by ``layer_workers`` processes; hardware points in parallel by the study's
workers. Inner results are cached per (hardware, layer).

**Joint** (:func:`joint_space` + :class:`JointCoDesign`): one flattened space -- the
hardware parameters and every layer's mapping parameters (``L0.t_GLB_K`` ...) -- searched
by a single optimizer; the evaluator scores the whole point. Useful as a comparison;
the dimension grows with the number of layers, which is why the nested mode exists.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from design_space.compose import product, split
from design_space.joint import JointSpace
from evaluators.analytical import resolve_accelerator, resolve_workload
from evaluators.base import Infeasible
from evaluators.loopnest import evaluate_batch
from mappers.mapping import MappingBatch
from mappers.search import SearchResult, search
from mappers.space import batch_from_columns, mapping_space
from mappers.workloads import Layer
from optimizer.base import Objective, Trial, TrialStatus
from optimizer.registry import make_optimizer

MAPPER_METHODS = ("heuristic", "random", "exhaustive")
METRIC = {"edp": "edp", "energy": "energy_pj", "latency": "latency_cycles"}


def inner_search(layer: Layer, arch: Any, method: str = "heuristic", *, budget: int = 200,
                 seed: int = 0, objective: str = "edp", options: Mapping[str, Any] | None = None) -> SearchResult:
    """The best mapping of ``layer`` on ``arch`` found by ``method`` within ``budget``
    mapping evaluations (the heuristic ignores the budget; it stops when no move helps).

    ``method`` is a mapper (``heuristic``, ``random``, ``exhaustive``) or the registry
    name of an ask/tell optimizer (``constrained-bo``, ``qlearning``, ``tpe``, ...),
    which then searches :func:`mappers.space.mapping_space` one mapping at a time.
    """
    if objective not in METRIC:
        raise ValueError(f"unknown mapping objective {objective!r} (choices: {sorted(METRIC)})")
    if method in MAPPER_METHODS:
        return search(layer, arch, method, budget=budget, seed=seed, objective=objective)
    space = mapping_space(layer, arch)
    metric = METRIC[objective]
    opt = make_optimizer(method, space, (Objective(metric, "min"),), seed, dict(options or {}))
    best: tuple[float, MappingBatch] | None = None
    for number in range(budget):
        pts = opt.ask(1)
        if not pts:
            break
        batch = batch_from_columns(layer, arch, space.columns(pts))
        r = evaluate_batch(layer, arch, batch)
        if not bool(r.valid[0]):
            opt.tell([Trial(number, pts[0], TrialStatus.INFEASIBLE, reason="invalid mapping")])
            continue
        val = float({"edp": r.edp, "energy_pj": r.energy_pj, "latency_cycles": r.latency_cycles}[metric][0])
        opt.tell([Trial(number, pts[0], TrialStatus.COMPLETE, {metric: val})])
        if best is None or val < best[0]:
            best = (val, batch)
    if best is None:
        raise ValueError(f"{method} found no legal mapping of {layer.name!r} on {arch.name!r} in {budget} tries")
    one = best[1]
    r = evaluate_batch(layer, arch, one)
    return SearchResult(one.mapping(0), float(r.energy_pj[0]), float(r.latency_cycles[0]), float(r.edp[0]),
                        float(r.utilization[0]), budget, one)


def _layer_task(args: tuple) -> tuple[float, float, float] | str:
    layer, arch, method, budget, seed, objective, options = args
    try:
        r = inner_search(layer, arch, method, budget=budget, seed=seed, objective=objective, options=options)
    except ValueError as e:
        return str(e)
    return r.energy_pj, r.latency_cycles, r.utilization


def network_metrics(arch: Any, area_mm2: float, layers: Sequence[Layer],
                    per_layer: Sequence[tuple[float, float, float]]) -> dict[str, float]:
    """Network totals from per-layer (energy_pj, latency_cycles, utilization)."""
    energy = sum(e * layer.repeat for (e, _, _), layer in zip(per_layer, layers))
    latency = sum(t * layer.repeat for (_, t, _), layer in zip(per_layer, layers))
    macs = sum(layer.macs * layer.repeat for layer in layers)
    latency_ms = latency / (arch.clock_mhz * 1e3)
    return {"energy_pj": energy, "energy_uj": energy * 1e-6, "latency_cycles": latency,
            "latency_ms": latency_ms, "edp_uj_ms": energy * 1e-6 * latency_ms,
            "area_mm2": float(area_mm2), "utilization": macs / (latency * arch.n_macs) if latency else 0.0,
            "macs": float(macs)}


class NestedCoDesign:
    """``point -> network metrics`` with an inner mapping search per layer (see module doc).

    Args:
        accelerator: class / builder / ``"systolic"`` / ``"spatial"`` / ``"module:Class"``.
        workload: layers or a zoo name (``"resnet50[0:6]"``).
        inner: inner search method (see :func:`inner_search`).
        inner_budget: mapping evaluations per layer (random and ask/tell methods).
        inner_options: options of an ask/tell inner optimizer.
        objective: what the inner search minimizes per layer: ``edp`` | ``energy`` | ``latency``.
        layer_workers: processes searching layers in parallel (1 = in this process).
        fixed: parameters merged under every point.
        cache_size: inner results kept per (hardware, layer).
    """

    def __init__(self, accelerator: Any, workload: Sequence[Layer] | str, *, inner: str = "heuristic",
                 inner_budget: int = 200, inner_options: Mapping[str, Any] | None = None,
                 objective: str = "edp", layer_workers: int = 1, fixed: Mapping[str, Any] | None = None,
                 cache_size: int = 4096) -> None:
        self.accelerator = resolve_accelerator(accelerator)
        self.layers = resolve_workload(workload)
        self.inner, self.inner_budget = inner, int(inner_budget)
        self.inner_options = dict(inner_options or {})
        self.objective = objective
        self.layer_workers = int(layer_workers)
        self.fixed = dict(fixed or {})
        self._cache: OrderedDict[tuple, tuple[float, float, float]] = OrderedDict()
        self._cache_size = cache_size
        if objective not in METRIC:
            raise ValueError(f"unknown objective {objective!r} (choices: {sorted(METRIC)})")
        if self.inner_budget < 1 or self.layer_workers < 1:
            raise ValueError("inner_budget and layer_workers must be >= 1")

    def build(self, point: Mapping[str, Any]) -> Any:
        builder: Callable[[Mapping[str, Any]], Any] = getattr(self.accelerator, "from_point", self.accelerator)
        try:
            return builder({**self.fixed, **point})
        except (ValueError, TypeError) as e:
            raise Infeasible(f"invalid hardware: {e}") from None

    def __call__(self, point: Mapping[str, Any], seed: int | None = None) -> dict[str, float]:
        acc = self.build(point)
        arch = acc.to_arch()
        seed = 0 if seed is None else int(seed)
        hw_key = repr(sorted(dict(self.fixed, **point).items()))
        tasks, todo = [], []
        results: list[Any] = [None] * len(self.layers)
        for i, layer in enumerate(self.layers):
            key = (hw_key, repr(layer), self.inner, self.inner_budget, self.objective)
            if key in self._cache:
                results[i] = self._cache[key]
            else:
                todo.append((i, key))
                tasks.append((layer, arch, self.inner, self.inner_budget, seed + i, self.objective, self.inner_options))
        if tasks:
            if self.layer_workers > 1 and len(tasks) > 1:
                ctx = mp.get_context("forkserver")
                with cf.ProcessPoolExecutor(min(self.layer_workers, len(tasks)), mp_context=ctx) as pool:
                    outs = list(pool.map(_layer_task, tasks))
            else:
                outs = [_layer_task(t) for t in tasks]
            for (i, key), out in zip(todo, outs):
                if isinstance(out, str):
                    raise Infeasible(f"layer {self.layers[i].name!r}: {out}")
                results[i] = out
                self._cache[key] = out
                if len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return network_metrics(arch, acc.area_mm2, self.layers, results)


def joint_space(hardware: Any, accelerator: Any, workload: Sequence[Layer] | str) -> JointSpace:
    """Hardware space x (every layer's mapping space), flattened: ``L<i>.<param>``."""
    acc_cls = resolve_accelerator(accelerator)
    layers = resolve_workload(workload)
    builder = getattr(acc_cls, "from_point", acc_cls)

    def software(hw: dict) -> Any:
        arch = builder(hw).to_arch()
        return product({f"L{i}": mapping_space(layer, arch) for i, layer in enumerate(layers)})

    return JointSpace(hardware, software)


class JointCoDesign:
    """``flat joint point -> network metrics`` for :func:`joint_space` points."""

    def __init__(self, accelerator: Any, workload: Sequence[Layer] | str, hardware_names: Sequence[str],
                 fixed: Mapping[str, Any] | None = None) -> None:
        self.accelerator = resolve_accelerator(accelerator)
        self.layers = resolve_workload(workload)
        self.hardware_names = list(hardware_names)
        self.fixed = dict(fixed or {})

    def __call__(self, point: Mapping[str, Any], seed: int | None = None) -> dict[str, float]:
        hw = {k: v for k, v in point.items() if k in self.hardware_names}
        builder = getattr(self.accelerator, "from_point", self.accelerator)
        try:
            acc = builder({**self.fixed, **hw})
        except (ValueError, TypeError) as e:
            raise Infeasible(f"invalid hardware: {e}") from None
        arch = acc.to_arch()
        parts = split({k: v for k, v in point.items() if k not in self.hardware_names})
        per_layer = []
        for i, layer in enumerate(self.layers):
            space = mapping_space(layer, arch)
            sub = parts.get(f"L{i}", {})
            batch = batch_from_columns(layer, arch, space.columns([sub]))
            r = evaluate_batch(layer, arch, batch)
            if not bool(np.asarray(r.valid)[0]):
                raise Infeasible(f"layer {layer.name!r}: mapping does not fit {arch.name}")
            per_layer.append((float(r.energy_pj[0]), float(r.latency_cycles[0]), float(r.utilization[0])))
        return network_metrics(arch, acc.area_mm2, self.layers, per_layer)
