"""A chosen mapping as a study stores it: a compact JSON-able record, its loop-nest text
(as Timeloop prints ``map.txt``), and its Timeloop mapping YAML -- all from the record
alone, so a stored trial shows and exports its mappings without the accelerator, the
layer or any code named in the database.

The record of a :class:`~mappers.mapping.Mapping` of a layer on an architecture::

    {"dims": {"N": 1, "K": 64, "C": 3, ...},       # the layer's sizes, canonical order
     "levels": [                                    # innermost first (as ArchSpec.levels)
        {"name": "RF", "instances": 256,
         "fanout": [1, 1],                          # X, Y; omitted when 1 x 1
         "holds": ["W", "I", "O"],                  # operands the level can store; omitted when all
         "keep": ["W", "O"],                        # those it keeps; omitted when all it holds
         "tile_words": {"W": 9, "O": 1},            # words of each kept tile, per instance
         "temporal": {"C": 3, "R": 3},              # factors > 1 only; omitted when none
         "order": ["C", "R"],                       # temporal loops, outermost first
         "spatial_x": {"K": 16}, "spatial_y": {}},  # omitted when empty
        ...]}

``tile_words`` of the backing store is the whole operand (the layer's footprint). Only
loops with a factor above 1 are kept: a loop of one iteration changes nothing (the cost
model reads the order of the loops that iterate), so :func:`mapping_from_record` gives a
mapping with the same loop nest, which the cost model scores to the same figures
(``tests/mappers/test_mapping_record.py`` checks both, and the Timeloop round trip).
A three-level, seven-dimension convolution's record is about 500 bytes of JSON.
"""

from __future__ import annotations

from collections.abc import Mapping as MappingT
from typing import Any

import yaml

from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from mappers.interop.timeloop import mapping_to_timeloop
from mappers.mapping import Mapping, tile_words
from mappers.workloads import Layer, TensorSpec

__all__ = [
    "RecordError",
    "loop_nest_lines",
    "loop_nest_text",
    "mapping_from_record",
    "mapping_record",
    "record_arch",
    "timeloop_yaml",
]


class RecordError(ValueError):
    """A stored mapping record does not follow the schema (module docstring)."""


def mapping_record(mapping: Mapping, layer: Layer, arch: ArchSpec) -> dict[str, Any]:
    """The compact JSON-able record of ``mapping`` (module docstring)."""
    dims = list(layer.dims)
    n = arch.n_levels
    levels = []
    for li, lv in enumerate(arch.levels):
        holds = [op for op in OPERANDS if op in lv.tensors] if li < n - 1 else list(OPERANDS)
        keep = [op for op in OPERANDS if mapping.keeps(arch, li, op)]
        rec: dict[str, Any] = {"name": lv.name, "instances": int(lv.instances)}
        if lv.fanout_x != 1 or lv.fanout_y != 1:
            rec["fanout"] = [int(lv.fanout_x), int(lv.fanout_y)]
        if holds != list(OPERANDS):
            rec["holds"] = holds
        if keep != holds:
            rec["keep"] = keep
        rec["tile_words"] = {op: int(layer.tensor_words(op) if li == n - 1 else tile_words(mapping, layer, li, op))
                             for op in keep}
        t = {d: int(f) for d, f in mapping.temporal[li].items() if f != 1}
        if t:
            rec["temporal"] = {d: t[d] for d in dims if d in t}
            rec["order"] = [d for d in mapping.full_order(li, dims) if d in t]
        for key, group in (("spatial_x", mapping.spatial_x[li]), ("spatial_y", mapping.spatial_y[li])):
            s = {d: int(group[d]) for d in dims if group.get(d, 1) != 1}
            if s:
                rec[key] = s
        levels.append(rec)
    return {"dims": {d: int(v) for d, v in layer.dims.items()}, "levels": levels}


def _check(record: Any) -> tuple[dict[str, int], list[MappingT[str, Any]]]:
    if not isinstance(record, MappingT):
        raise RecordError(f"a mapping record is a mapping, got {type(record).__name__}")
    dims, levels = record.get("dims"), record.get("levels")
    if not isinstance(dims, MappingT) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1
                                                 for v in dims.values()):
        raise RecordError(f"mapping record 'dims' is {dims!r}, expected dimension -> size >= 1")
    if not isinstance(levels, list) or len(levels) < 2:
        raise RecordError("mapping record 'levels' must list at least two levels")
    for i, lv in enumerate(levels):
        if not isinstance(lv, MappingT) or not isinstance(lv.get("name"), str):
            raise RecordError(f"mapping record levels[{i}] needs a name")
        for key in ("temporal", "spatial_x", "spatial_y", "tile_words"):
            v = lv.get(key, {})
            if not isinstance(v, MappingT) or not all(isinstance(f, int) and not isinstance(f, bool) for f in v.values()):
                raise RecordError(f"mapping record levels[{i}][{key!r}] is {v!r}, expected name -> integer")
            if key != "tile_words" and any(d not in dims for d in v):
                raise RecordError(f"mapping record levels[{i}][{key!r}] names a dimension not in {list(dims)}")
        for key in ("holds", "keep"):
            v = lv.get(key, OPERANDS)
            if not isinstance(v, list | tuple) or any(op not in OPERANDS for op in v):
                raise RecordError(f"mapping record levels[{i}][{key!r}] is {v!r}, expected operands of {OPERANDS}")
        order = lv.get("order", [])
        if not isinstance(order, list) or any(d not in dims for d in order):
            raise RecordError(f"mapping record levels[{i}]['order'] is {order!r}, expected dimensions of {list(dims)}")
    return dict(dims), list(levels)


def _holds(lv: MappingT[str, Any]) -> list[str]:
    return list(lv.get("holds", OPERANDS))


def _keep(lv: MappingT[str, Any]) -> list[str]:
    return list(lv.get("keep", _holds(lv)))


def loop_nest_lines(record: MappingT[str, Any], roles: MappingT[str, str] | None = None) -> list[str]:
    """The loop nest of a record, outermost first, one line per loop that iterates, under
    each level's name and the words of the tiles it keeps (as Timeloop's ``map.txt``).
    ``roles`` renames the operands (e.g. ``{"W": "Weights"}``)."""
    dims, levels = _check(record)
    name = dict(roles or {})
    lines: list[str] = []
    depth = 0
    for lv in reversed(levels):
        words = lv.get("tile_words", {})
        kept = " ".join(f"{name.get(op, op)}:{words[op]}" if op in words else name.get(op, op) for op in _keep(lv))
        lines.append(f"{lv['name']} [ {kept} ]")
        t = lv.get("temporal", {})
        order = [d for d in lv.get("order", []) if d in t] + [d for d in dims if d in t and d not in lv.get("order", [])]
        loops = [(d, t[d], "") for d in order]
        for axis in ("x", "y"):
            loops += [(d, f, f" (Spatial-{axis.upper()})") for d, f in lv.get(f"spatial_{axis}", {}).items()]
        for d, f, kind in loops:
            lines.append(f"|{'  ' * depth} for {d} in [0:{f}){kind}")
            depth += 1
    lines.append(f"|{'  ' * depth} << Compute >>")
    return lines


def loop_nest_text(record: MappingT[str, Any], roles: MappingT[str, str] | None = None) -> str:
    """:func:`loop_nest_lines` joined by newlines."""
    return "\n".join(loop_nest_lines(record, roles))


def record_arch(record: MappingT[str, Any]) -> ArchSpec:
    """The architecture's structure as far as the mapping reads it (level names, the
    operands each holds, instances, fanouts): capacities and energies are not stored."""
    _, levels = _check(record)
    out = []
    for lv in levels:
        fx, fy = lv.get("fanout", [1, 1])
        out.append(MemoryLevel(name=lv["name"], tensors=frozenset(_holds(lv)), instances=int(lv.get("instances", 1)),
                               fanout_x=int(fx), fanout_y=int(fy)))
    try:
        return ArchSpec(name="stored", levels=tuple(out), mac_energy_pj=0.0)
    except ValueError as e:
        raise RecordError(f"mapping record levels do not form an architecture: {e}") from None


def mapping_from_record(record: MappingT[str, Any], arch: ArchSpec | None = None) -> Mapping:
    """The :class:`Mapping` a record describes (on ``arch``, else on :func:`record_arch`)."""
    _, levels = _check(record)
    arch = arch or record_arch(record)
    if arch.n_levels != len(levels):
        raise RecordError(f"mapping record has {len(levels)} levels, architecture {arch.name!r} has {arch.n_levels}")
    return Mapping.create(
        arch,
        [dict(lv.get("temporal", {})) for lv in levels],
        [dict(lv.get("spatial_x", {})) for lv in levels],
        [dict(lv.get("spatial_y", {})) for lv in levels],
        [list(lv.get("order", [])) for lv in levels],
        [frozenset(set(_holds(lv)) - set(_keep(lv))) if i < len(levels) - 1 else frozenset()
         for i, lv in enumerate(levels)])


def _layer_of(dims: MappingT[str, int]) -> Layer:
    """A layer with the record's dimensions (what :func:`mapping_to_timeloop` reads); its
    operands' projections are not stored and not needed for the mapping."""
    names = list(dims)
    return Layer("stored", "stored", dict(dims),
                 tuple(TensorSpec(op, tuple(((d, 1),) for d in names)) for op in OPERANDS))  # type: ignore[arg-type]


def timeloop_yaml(record: MappingT[str, Any], roles: MappingT[str, str] | None = None) -> str:
    """The record as Timeloop mapping YAML (``mapping:`` directives, by
    :func:`mappers.interop.timeloop.mapping_to_timeloop`); ``ValueError`` where the mapping
    unrolls one dimension on both axes of a fanout, which Timeloop's format cannot express."""
    dims, _ = _check(record)
    arch = record_arch(record)
    directives = mapping_to_timeloop(mapping_from_record(record, arch), arch, _layer_of(dims), roles)
    return yaml.safe_dump({"mapping": directives}, sort_keys=False)

