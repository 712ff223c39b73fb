"""`AnalyticalEvaluator`: a hardware design point -> network energy, latency, EDP, area.

The nested co-design evaluator: build the accelerator from the point (bad hardware ->
``Infeasible`` with the validation message), map every layer of the workload with a
mapper (:mod:`mappers.search`), and sum per-layer energy and latency weighted by each
layer's repeat count (layers run one after another). A layer without any legal mapping
makes the point ``Infeasible`` (an unknown constraint: it depends on the buffers).

Metrics (units in the names): ``energy_pj``, ``energy_uj``, ``latency_cycles``,
``latency_ms`` (at the accelerator's clock), ``edp_uj_ms`` (network energy x network
latency), ``area_mm2``, ``utilization`` (MAC-weighted PE utilization), ``macs``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evaluators.base import Infeasible
from mappers import zoo
from mappers.search import search
from mappers.workloads import Layer


def resolve_workload(workload: Sequence[Layer] | str) -> list[Layer]:
    """A list of layers, or a zoo network name with an optional layer selection:
    ``"resnet50"``, ``"resnet50[0:5]"`` (first five unique layers), ``"dqn"``."""
    if not isinstance(workload, str):
        layers = list(workload)
        if not layers or not all(isinstance(x, Layer) for x in layers):
            raise ValueError("workload must be a non-empty list of Layer objects or a zoo name")
        return layers
    name, _, sel = workload.partition("[")
    layers = zoo.get(name.strip())
    if sel:
        if not sel.endswith("]"):
            raise ValueError(f"workload {workload!r}: expected name[start:stop]")
        parts = sel[:-1].split(":")
        try:
            idx = [int(x) if x else None for x in parts]
        except ValueError:
            raise ValueError(f"workload {workload!r}: bad layer selection {sel[:-1]!r}") from None
        layers = layers[slice(*idx)] if len(idx) > 1 else [layers[idx[0]]]
        if not layers:
            raise ValueError(f"workload {workload!r} selects no layers")
    return layers


ACCELERATORS = {"systolic": "accelerators.systolic:SystolicArray",
                "spatial": "accelerators.spatial:SpatialArray"}


def resolve_accelerator(accelerator: Any) -> Any:
    """A class/builder, ``"systolic"`` / ``"spatial"``, or ``"module:Class"``."""
    if not isinstance(accelerator, str):
        return accelerator
    from design_space.constraints import import_ref
    from design_space.errors import SpaceDefinitionError

    ref = ACCELERATORS.get(accelerator, accelerator)
    try:
        return import_ref(ref, "accelerator")
    except SpaceDefinitionError as e:
        raise ValueError(f"{e} (or one of {sorted(ACCELERATORS)})") from None


class AnalyticalEvaluator:
    """Callable ``point -> metrics`` (see module docstring).

    Args:
        accelerator: a class with ``from_point(dict)`` and ``to_arch()`` (e.g.
            :class:`~accelerators.systolic.SystolicArray`), a function ``point ->
            accelerator``, or a name: ``"systolic"``, ``"spatial"``, ``"module:Class"``
            (so YAML configs can name it).
        workload: layers or a zoo name (:func:`resolve_workload`).
        mapper: ``"heuristic"`` (default), ``"random"`` or ``"exhaustive"``.
        mapper_budget: mappings per layer for the random mapper.
        objective: what the mapper minimizes per layer: ``"edp"``, ``"energy"``, ``"latency"``.
        fixed: parameters merged under every point (e.g. a fixed clock).
    """

    def __init__(self, accelerator: Any, workload: Sequence[Layer] | str, *, mapper: str = "heuristic",
                 mapper_budget: int = 1000, objective: str = "edp",
                 fixed: Mapping[str, Any] | None = None) -> None:
        self.accelerator = resolve_accelerator(accelerator)
        self.layers = resolve_workload(workload)
        self.mapper = mapper
        self.mapper_budget = int(mapper_budget)
        self.objective = objective
        self.fixed = dict(fixed or {})
        if mapper not in ("heuristic", "random", "exhaustive"):
            raise ValueError(f"unknown mapper {mapper!r} (choices: heuristic, random, exhaustive)")

    def build(self, point: Mapping[str, Any]) -> Any:
        builder: Callable[[Mapping[str, Any]], Any] = getattr(self.accelerator, "from_point", self.accelerator)
        try:
            return builder({**self.fixed, **point})
        except (ValueError, TypeError) as e:
            raise Infeasible(f"invalid hardware: {e}") from None

    def __call__(self, point: Mapping[str, Any], seed: int | None = None) -> dict[str, float]:
        acc = self.build(point)
        arch = acc.to_arch()
        energy = latency = busy = macs = 0.0
        for layer in self.layers:
            try:
                r = search(layer, arch, self.mapper, budget=self.mapper_budget, seed=seed,
                           objective=self.objective)
            except ValueError as e:
                raise Infeasible(f"layer {layer.name!r}: {e}") from None
            if not (r.edp < float("inf")):
                raise Infeasible(f"layer {layer.name!r} has no legal mapping on {arch.name}")
            energy += r.energy_pj * layer.repeat
            latency += r.latency_cycles * layer.repeat
            busy += layer.macs * layer.repeat
            macs += layer.macs * layer.repeat
        latency_ms = latency / (arch.clock_mhz * 1e3)
        energy_uj = energy * 1e-6
        return {
            "energy_pj": energy,
            "energy_uj": energy_uj,
            "latency_cycles": latency,
            "latency_ms": latency_ms,
            "edp_uj_ms": energy_uj * latency_ms,
            "area_mm2": float(acc.area_mm2),
            "utilization": busy / (latency * arch.n_macs) if latency else 0.0,
            "macs": macs,
        }
