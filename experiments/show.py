"""``coexplore show STORAGE TRIAL``: the mapping every layer of a stored trial was given.

The nested co-design evaluator stores each distinct chosen mapping once in the trial's
breakdown (``info["breakdown"]["mappings"]``, records of :mod:`mappers.mapping_record`),
and each layer names its own by index (:mod:`evaluators.nested`). This module reads them
back from the stored data alone -- no space, evaluator or accelerator is rebuilt and no
reference stored in the database is imported -- and prints them:

* ``--format text`` (default): per layer its loop nest, outermost first, as Timeloop's
  ``map.txt`` (:func:`mappers.mapping_record.loop_nest_text`); a layer that shares another's
  mapping says so instead of printing it again;
* ``--format json``: ``{"study", "trial", "status", "levels", "layers": [{"name", "repeat",
  "mapping": record}]}``;
* ``--format timeloop``: Timeloop mapping YAML (:func:`mappers.mapping_record.timeloop_yaml`),
  one YAML document per layer, each after a ``# layer NAME`` comment.

``--layer`` picks one layer, by name or by position (0 first).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mappers.mapping_record import RecordError, loop_nest_text, timeloop_yaml

__all__ = ["FORMATS", "MappingsError", "layer_mappings", "pick_layers", "show_text"]

FORMATS = ("text", "json", "timeloop")


class MappingsError(ValueError):
    """The trial has no stored mappings, or a layer asked for is not in it."""


def layer_mappings(info: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """``[{"name", "repeat", "index", "mapping"}]``, one per layer of the trial's breakdown
    that names a stored mapping (``index`` into ``breakdown["mappings"]``); empty when the
    evaluator stored none. ``RecordError`` where an index points nowhere."""
    bd = (info or {}).get("breakdown")
    if not isinstance(bd, Mapping):
        return []
    stored = bd.get("mappings")
    layers = bd.get("layers")
    if not isinstance(stored, list) or not isinstance(layers, list):
        return []
    out = []
    for i, row in enumerate(layers):
        if not isinstance(row, Mapping) or "mapping" not in row:
            continue
        k = row["mapping"]
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(stored):
            raise RecordError(f"breakdown['layers'][{i}]['mapping'] is {k!r}, not an index of the "
                              f"{len(stored)} stored mappings")
        out.append({"name": str(row.get("name", f"layer {i}")), "repeat": row.get("repeat", 1),
                    "index": k, "mapping": stored[k]})
    return out


def pick_layers(layers: Sequence[dict[str, Any]], layer: str | None) -> list[dict[str, Any]]:
    """All ``layers``, or the one named ``layer`` (a name, else a position from 0)."""
    if layer is None:
        return list(layers)
    named = [x for x in layers if x["name"] == layer]
    if named:
        return named
    if layer.lstrip("-").isdigit() and 0 <= int(layer) < len(layers):
        return [layers[int(layer)]]
    names = [x["name"] for x in layers]
    raise MappingsError(f"--layer {layer!r}: no such layer; the trial's layers are {names} "
                        f"(or a position 0..{len(names) - 1})")


def show_text(record: Any, study: str, fmt: str = "text", layer: str | None = None) -> str:
    """What ``coexplore show`` prints for a stored trial (a
    :class:`~experiments.storage.TrialRecord` read with its info)."""
    if fmt not in FORMATS:
        raise MappingsError(f"--format {fmt!r}: expected one of {list(FORMATS)}")
    layers = layer_mappings(record.info)
    status = str(getattr(record.status, "value", record.status))
    if not layers:
        why = (f"it is {status}" + (f": {record.reason}" if record.reason else "")
               if status != "COMPLETE" else "its evaluator stored none (the nested co-design evaluator "
               "stores one per layer in the trial's breakdown)")
        raise MappingsError(f"trial {record.number} of study {study!r} has no stored mappings: {why}")
    chosen = pick_layers(layers, layer)
    if fmt == "json":
        bd = record.info["breakdown"]
        return json.dumps({"study": study, "trial": int(record.number), "status": status,
                           "levels": bd.get("levels"),
                           "layers": [{"name": x["name"], "repeat": x["repeat"], "mapping": x["mapping"]}
                                      for x in chosen]}, indent=1)
    if fmt == "timeloop":
        docs = []
        for x in chosen:
            try:
                body = timeloop_yaml(x["mapping"])
            except ValueError as e:
                raise MappingsError(f"layer {x['name']!r}: {e}") from None
            docs.append(f"# layer {x['name']} (study {study!r}, trial {record.number})\n{body}")
        return "---\n".join(docs)
    lines = [f"study {study!r}, trial {record.number} ({status}): {len(layers)} layers, "
             f"{len({x['index'] for x in layers})} distinct mappings"]
    first: dict[int, str] = {}
    for x in chosen:
        lines.append("")
        lines.append(f"layer {x['name']} (x{x['repeat']})")
        if x["index"] in first and layer is None:
            lines.append(f"  same mapping as layer {first[x['index']]}")
            continue
        first.setdefault(x["index"], x["name"])
        lines += ["  " + line for line in loop_nest_text(x["mapping"]).splitlines()]
    return "\n".join(lines)
