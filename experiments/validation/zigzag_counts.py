"""ZigZag 3.9.1's counts for fixed mappings (runs INSIDE ``.venv-zigzag``; ZigZag + stdlib only).

The ZigZag half of the cross-validation in :mod:`experiments.validation.zigzag_crossval`,
which runs it as a subprocess. It reads one JSON list of cases on stdin; each case gives,
in ZigZag's own schemas, an accelerator (``accelerator``), a one-layer workload
(``workload``), a mapping entry with the spatial mapping (``mapping``), and the temporal
mapping as ``temporal``: layer operand (``W``, ``I``, ``O``) -> one list per memory level of
that operand, innermost level first, of ``[dim, factor]`` loops innermost first. The
temporal mapping is given to ``zigzag.cost_model.cost_model.CostModelEvaluation`` as is
(no LOMA search, no memory allocation by ZigZag), so both tools see the same loop nest.

It prints one JSON list with, per case: per layer operand and memory level ZigZag's word
accesses in its four directions summed over memory instances (``word_accesses``; where a
port is one word wide they are mostly element accesses, but ZigZag rounds each transfer
period up to whole words) and its element moves (``elem_accesses``, ``DATA_ELEM_MOVE_COUNT``,
which no port width changes), the energy per
operand and level, the MAC energy, the total energy, the ideal temporal cycles and
ZigZag's latency with stalls and on/off-loading (``latency_total2``), or ``error``.

    .venv-zigzag/bin/python experiments/validation/zigzag_counts.py < cases.json

With ``--bundled NAME [NAME ...]`` it instead prints one JSON object: per name, ZigZag's
own example accelerator ``zigzag/inputs/hardware/NAME.yaml`` (``hardware``) and its mapping
file ``zigzag/inputs/mapping/NAME.yaml`` (``mapping``; ``null`` where ZigZag ships none),
as the installed package holds them, parsed with PyYAML (a ZigZag dependency), and the
installed ZigZag version (``version``).
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any


def _spatial_inputs(accelerator_data: dict, workload_data: list, mapping_data: list) -> dict[str, Any]:
    from zigzag.parser.accelerator_factory import AcceleratorFactory
    from zigzag.parser.accelerator_validator import AcceleratorValidator
    from zigzag.parser.mapping_validator import MappingValidator
    from zigzag.parser.workload_factory import WorkloadFactory
    from zigzag.parser.workload_validator import WorkloadValidator
    from zigzag.stages.mapping.spatial_mapping_generation import SpatialMappingGeneratorStage
    from zigzag.stages.stage import Stage
    from zigzag.workload.layer_node import LayerNode

    acc_v = AcceleratorValidator(accelerator_data)
    if not acc_v.validate():
        raise ValueError(f"invalid accelerator: {acc_v.validator.errors}")
    accelerator = AcceleratorFactory(acc_v.normalized_data).create()
    wl_v = WorkloadValidator(workload_data)
    map_v = MappingValidator(mapping_data)
    if not wl_v.validate():
        raise ValueError(f"invalid workload: {wl_v.validator.errors}")
    if not map_v.validate():
        raise ValueError(f"invalid mapping: {map_v.validator.errors}")
    workload = WorkloadFactory(wl_v.normalized_data, map_v.normalized_data).create()
    layer = next(n for n in workload.topological_sort() if isinstance(n, LayerNode))
    captured: dict[str, Any] = {}

    class _Capture(Stage):
        def __init__(self, list_of_callables: list[Any], **kwargs: Any):
            super().__init__(list_of_callables, **kwargs)
            captured.update(kwargs)

        def run(self):
            return
            yield

        def is_leaf(self) -> bool:
            return True

    for _ in SpatialMappingGeneratorStage([_Capture], accelerator=accelerator, layer=layer,
                                          nb_mappings_generated=1).run():
        pass
    return {k: captured[k] for k in ("accelerator", "layer", "spatial_mapping", "spatial_mapping_int")}


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    from zigzag.cost_model.cost_model import CostModelEvaluation
    from zigzag.datatypes import LayerDim, LayerOperand
    from zigzag.hardware.architecture.memory_port import DataDirection
    from zigzag.mapping.data_movement import DataMoveAttr
    from zigzag.mapping.temporal_mapping import TemporalMapping, TemporalMappingType

    inputs = _spatial_inputs(case["accelerator"], case["workload"], case["mapping"])
    tm_dict = {
        LayerOperand(op): [[(LayerDim(d), f) for d, f in level] for level in levels]
        for op, levels in case["temporal"].items()
    }
    tm = TemporalMapping(tm_dict, inputs["layer"], TemporalMappingType.UNEVEN)
    cme = CostModelEvaluation(**inputs, temporal_mapping=tm,
                              access_same_data_considered_as_no_access=case.get("same_data_no_access", False))
    counts: dict[str, list[dict[str, float]]] = {}
    elems: dict[str, list[dict[str, float]]] = {}
    for op, levels in cme.memory_word_access.items():
        counts[str(op)] = [{str(d): float(acc.get(d)) for d in DataDirection} for acc in levels]
    for op in cme.layer.layer_operands:
        per_level = []
        for lv in range(cme.mapping.mem_level[op]):
            # ZigZag's element moves (mapping.py calc_data_access: the layer's MACs over the
            # irrelevant loops at and below the level): totals over every instance already
            move = cme.mapping.unit_mem_data_movement[op][lv].get_attribute(DataMoveAttr.DATA_ELEM_MOVE_COUNT)
            per_level.append({str(d): float(move.get(d)) for d in DataDirection})
        elems[str(op)] = per_level
    return {
        "word_accesses": counts,
        "elem_accesses": elems,
        "mem_energy": {str(op): [float(x) for x in v] for op, v in cme.mem_energy_breakdown.items()},
        "mac_energy": float(cme.mac_energy),
        "energy_total": float(cme.energy_total),
        "ideal_temporal_cycle": float(cme.ideal_temporal_cycle),
        "ideal_cycle": float(cme.ideal_cycle),
        "latency_total2": float(cme.latency_total2),
        "temporal_mapping_stationary": str(cme.temporal_mapping),
    }


def bundled(names: list[str]) -> dict[str, Any]:
    """ZigZag's bundled example accelerators and mapping files (see the module docstring)."""
    from importlib.metadata import version
    from pathlib import Path

    import yaml
    import zigzag

    inputs = Path(zigzag.__file__).resolve().parent / "inputs"
    out: dict[str, Any] = {"version": version("zigzag-dse"), "inputs": str(inputs), "accelerators": {}}
    for name in names:
        hw = inputs / "hardware" / f"{name}.yaml"
        if not hw.exists():
            raise FileNotFoundError(f"ZigZag ships no accelerator {name!r} ({hw} missing)")
        mp = inputs / "mapping" / f"{name}.yaml"
        out["accelerators"][name] = {
            "hardware": yaml.safe_load(hw.read_text()),
            "mapping": yaml.safe_load(mp.read_text()) if mp.exists() else None,
        }
    return out


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--bundled":
        print(json.dumps(bundled(sys.argv[2:])), flush=True)
        return 0
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("zigzag").setLevel(logging.ERROR)
    cases = json.load(sys.stdin)
    out = []
    for case in cases:
        try:
            out.append(run_case(case))
        except Exception as exc:  # reported per case, the others still run
            out.append({"error": f"{type(exc).__name__}: {exc}"})
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
