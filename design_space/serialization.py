"""Spaces to and from plain dicts and YAML (exact round trip).

Format (the list form; a mapping ``name -> fields`` is accepted too)::

    parameters:
      - {name: rows, type: power_of_two, low: 8, high: 256}
      - {name: dataflow, type: categorical, choices: [OS, WS, IS]}
      - {name: sram_kib, type: ordinal, values: [64, 128, 256, 512]}
      - {name: order, type: permutation, items: [K, C, P]}
      - {name: rf_kib, type: integer, low: 1, high: 8, active_if: {arch: spatial}}
    constraints:
      - {name: pe_budget, expr: "rows * cols <= 4096"}
      - {name: area, function: "mypkg.models:area_ok"}

A joint space is ``{hardware: <space>, software: "module:function"}``.

Reading a space imports the code its references name (a constraint's ``function:``, a
joint space's ``software:``, which :class:`~design_space.joint.JointSpace` then calls): do
that only for a description you trust, such as your own config. ``space_from_dict(data,
resolve=...)`` decides how a reference becomes an object; :func:`space_references` lists
them without importing anything, and :func:`space_view` reads a description as data only
(:class:`~design_space.space_view.SpaceView`), which is how a stored study is opened.

Every error is a :class:`~design_space.errors.ConfigError` naming the key path
(``parameters[2].low``) and the line of the YAML file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from design_space.constraints import Constraint
from design_space.errors import ConfigError, SpaceDefinitionError
from design_space.joint import JointSpace
from design_space.parameters import PARAMETER_KINDS
from design_space.references import import_ref
from design_space.space import DesignSpace
from design_space.space_view import SpaceView
from design_space.yamlio import LineMap, load_yaml, load_yaml_file

_FIELDS: dict[str, dict[str, bool]] = {  # field -> required
    "integer": {"low": True, "high": True, "log": False},
    "real": {"low": True, "high": True, "log": False},
    "power_of_two": {"low": True, "high": True},
    "ordinal": {"values": True},
    "categorical": {"choices": True},
    "permutation": {"items": True},
    "fixed": {"value": True},
}


def space_to_dict(space: DesignSpace | JointSpace) -> dict[str, Any]:
    """A plain-dict description of ``space`` (JSON/YAML serializable): its ``to_dict()``.

    Each space writes itself (:meth:`DesignSpace.to_dict`, :meth:`JointSpace.to_dict`), as
    each parameter and constraint does; this module only reads the format back, so that
    the space modules need not import it.

    Raises:
        SpaceDefinitionError: ``space`` is not a space, or holds a function that cannot be
            saved (a custom proposal or repair, a joint space's closure).
    """
    if not isinstance(space, DesignSpace | JointSpace):
        raise SpaceDefinitionError(f"space_to_dict: expected a DesignSpace or JointSpace, got {space!r}")
    return space.to_dict()


def _param_from_dict(item: Any, path: tuple, lm: LineMap, name_hint: str | None = None) -> Any:
    if not isinstance(item, Mapping):
        raise lm.error(path, f"a parameter must be a mapping, got {item!r}")
    item = dict(item)
    if name_hint is not None:
        item.setdefault("name", name_hint)
    if "name" not in item:
        raise lm.error(path, "missing required key 'name'")
    kind = item.get("type")
    if kind is None:
        raise lm.error(path, f"parameter {item['name']!r}: missing required key 'type' "
                             f"(one of {sorted(PARAMETER_KINDS)})")
    if not isinstance(kind, str) or kind not in PARAMETER_KINDS:
        raise lm.error((*path, "type"), f"parameter {item['name']!r}: unknown type {kind!r} "
                                       f"(one of {sorted(PARAMETER_KINDS)})")
    fields = _FIELDS[kind]
    allowed = {"name", "type", "active_if", *fields}
    for k in item:
        if k not in allowed:
            raise lm.error((*path, k), f"parameter {item['name']!r}: unknown key {k!r} for type "
                                       f"{kind!r} (allowed: {sorted(allowed)})")
    for f, required in fields.items():
        if required and f not in item:
            raise lm.error(path, f"parameter {item['name']!r}: missing required key {f!r}")
    kwargs = {k: v for k, v in item.items() if k not in ("name", "type")}
    for k in ("values", "choices", "items"):
        if k in kwargs and isinstance(kwargs[k], list):
            kwargs[k] = tuple(kwargs[k])
    cls = PARAMETER_KINDS[kind]
    try:
        if kind in ("ordinal", "categorical", "permutation", "fixed"):
            main = {"ordinal": "values", "categorical": "choices", "permutation": "items",
                    "fixed": "value"}[kind]
            return cls(item["name"], **{main: kwargs.pop(main)}, **kwargs)
        return cls(item["name"], **kwargs)
    except SpaceDefinitionError as e:
        raise lm.error((*path, e.field) if e.field else path, str(e)) from None
    except TypeError as e:
        raise lm.error(path, f"parameter {item['name']!r}: {e}") from None


Resolver = Callable[[str, str], Any]
"""``resolve(ref, what) -> object``: how :func:`space_from_dict` turns a reference into the
object (default :func:`~design_space.references.import_ref`); it raises
:class:`SpaceDefinitionError` to refuse one."""


def _constraint_from_dict(item: Any, path: tuple, lm: LineMap,
                          resolve: Resolver = import_ref) -> Constraint:
    if not isinstance(item, Mapping):
        raise lm.error(path, f"a constraint must be a mapping with 'name' and 'expr', got {item!r}")
    for k in item:
        if k not in ("name", "expr", "function"):
            raise lm.error((*path, k), f"unknown key {k!r} in a constraint (allowed: name, expr, function)")
    if "name" not in item:
        raise lm.error(path, "constraint: missing required key 'name'")
    if not isinstance(item["name"], str) or not item["name"].strip():
        raise lm.error((*path, "name"), f"constraint name must be a non-empty string, got {item['name']!r}")
    has_expr, has_fn = "expr" in item, "function" in item
    if has_expr == has_fn:
        raise lm.error(path, f"constraint {item['name']!r}: give exactly one of 'expr' or 'function'")
    try:
        if has_expr:
            if not isinstance(item["expr"], str):
                raise SpaceDefinitionError(
                    f"constraint {item['name']!r}: expr must be a string, got {item['expr']!r}",
                    field="expr",
                )
            return Constraint(str(item["name"]), item["expr"])
        name = str(item["name"])
        return Constraint(name, resolve(str(item["function"]), f"constraint {name!r}"))
    except SpaceDefinitionError as e:
        key = e.field if e.field in ("expr",) else ("function" if has_fn else "expr")
        raise lm.error((*path, key), str(e)) from None


def space_from_dict(data: Any, lm: LineMap | None = None, *,
                    resolve: Resolver = import_ref) -> DesignSpace | JointSpace:
    """Build a space from :func:`space_to_dict` output (or parsed YAML).

    Every reference goes through ``resolve`` (default: imported; see the module
    docstring), the joint space's software factory before it is called."""
    lm = lm or LineMap({})
    if not isinstance(data, Mapping):
        raise lm.error((), f"a space must be a mapping with 'parameters', got {type(data).__name__}")
    if "hardware" in data or "software" in data:
        for k in data:
            if k not in ("hardware", "software", "name"):
                raise lm.error((k,), f"unknown key {k!r} in a joint space (allowed: hardware, software, name)")
        if "hardware" not in data or "software" not in data:
            raise lm.error((), "a joint space needs both 'hardware' and 'software'")
        hw = space_from_dict(data["hardware"], lm.sub(("hardware",)), resolve=resolve)
        if not isinstance(hw, DesignSpace):
            raise lm.error(("hardware",), "the hardware part must be a plain space")
        try:
            factory = resolve(str(data["software"]), "software")
            return JointSpace(hw, factory, name=data.get("name"))
        except SpaceDefinitionError as e:
            raise lm.error(("software",), str(e)) from None
    for k in data:
        if k not in ("parameters", "constraints", "name"):
            raise lm.error((k,), f"unknown key {k!r} in a space (allowed: parameters, constraints, name)")
    raw = data.get("parameters")
    if raw is None:
        raise lm.error((), "missing required key 'parameters'")
    params = []
    if isinstance(raw, Mapping):
        for name, item in raw.items():
            if not isinstance(name, str):   # `null:` or `1:` as a key: no "None" parameter
                raise lm.error(("parameters",), f"parameter name must be a string, got {name!r}")
            params.append(_param_from_dict(item, ("parameters", name), lm, name_hint=str(name)))
    elif isinstance(raw, list):
        for i, item in enumerate(raw):
            params.append(_param_from_dict(item, ("parameters", i), lm))
    else:
        raise lm.error(("parameters",), "'parameters' must be a list (or a mapping name -> fields)")
    if not params:
        raise lm.error(("parameters",), "a space needs at least one parameter")
    first: dict[str, int] = {}
    for i, p in enumerate(params):
        if p.name in first and isinstance(raw, list):
            raise lm.error(("parameters", i, "name"),
                           f"duplicate parameter name {p.name!r} (first at parameters[{first[p.name]}])")
        first.setdefault(p.name, i)
    cons_raw = data.get("constraints") or []
    if not isinstance(cons_raw, list):
        raise lm.error(("constraints",), "'constraints' must be a list")
    cons = [_constraint_from_dict(c, ("constraints", i), lm, resolve) for i, c in enumerate(cons_raw)]
    try:
        return DesignSpace(*params, constraints=cons, name=data.get("name"))
    except SpaceDefinitionError as e:
        # locate the parameter or constraint the message names
        msg = str(e)
        for i, p in enumerate(params):
            if f"parameter {p.name!r}" in msg:
                path = ("parameters", p.name if isinstance(raw, Mapping) else i)
                raise lm.error((*path, e.field) if e.field else path, msg) from None
        for i, c in enumerate(cons):
            if f"constraint {c.name!r}" in msg:
                raise lm.error(("constraints", i, e.field or "expr"), msg) from None
        raise lm.error(("parameters",), msg) from None


def space_references(data: Any) -> list[tuple[str, str]]:
    """``(where, reference)`` for every reference in a space description -- a joint
    space's ``software`` and each constraint ``function`` -- read as data: nothing is
    imported, and a malformed description gives what can be read of it."""
    out: list[tuple[str, str]] = []
    if not isinstance(data, Mapping):
        return out
    if "software" in data:
        out.append(("software", str(data["software"])))
    parts = [("", data)]
    if isinstance(data.get("hardware"), Mapping):
        parts.append(("hardware ", data["hardware"]))
    for prefix, part in parts:
        cons = part.get("constraints")
        for c in cons if isinstance(cons, list) else []:
            if isinstance(c, Mapping) and "function" in c:
                out.append((f"{prefix}constraint {str(c.get('name'))!r}", str(c["function"])))
    return out


def space_view(data: Any, seen_names: Any = ()) -> SpaceView:
    """A stored space description as data only (:class:`SpaceView`): its parameters are
    rebuilt (they are plain data), its references kept as text and never imported.
    ``seen_names``: parameter names found in the study's stored trials, which name a joint
    space's software parameters (only its unimported factory knows them otherwise)."""
    lm = LineMap({})
    if not isinstance(data, Mapping):
        raise lm.error((), f"a space must be a mapping with 'parameters', got {type(data).__name__}")
    part = data.get("hardware") if "hardware" in data or "software" in data else data
    if not isinstance(part, Mapping):
        raise lm.error(("hardware",), "the hardware part must be a plain space")
    raw = part.get("parameters")
    if isinstance(raw, Mapping):
        params = [_param_from_dict(item, ("parameters", n), lm, name_hint=str(n)) for n, item in raw.items()]
    elif isinstance(raw, list):
        params = [_param_from_dict(item, ("parameters", i), lm) for i, item in enumerate(raw)]
    else:
        raise lm.error(("parameters",), "'parameters' must be a list (or a mapping name -> fields)")
    known = {p.name for p in params}
    others = tuple(dict.fromkeys(str(n) for n in seen_names if str(n) not in known))
    return SpaceView(description=dict(data), params=tuple(params), other_names=others,
                     references=tuple(space_references(data)), name=data.get("name"))


def load_space(path_or_text: str | Path) -> DesignSpace | JointSpace:
    """Load a space from a YAML file path (or from YAML text containing a newline)."""
    if isinstance(path_or_text, str) and "\n" in path_or_text:
        data, lm = load_yaml(path_or_text)
    else:
        data, lm = load_yaml_file(path_or_text)
    try:
        return space_from_dict(data, lm)
    except ConfigError:
        raise


def save_space(space: DesignSpace | JointSpace, path: str | Path | None = None) -> str:
    """Write ``space`` as YAML to ``path`` (if given) and return the text."""
    text = yaml.safe_dump(space_to_dict(space), sort_keys=False, default_flow_style=None)
    if path is not None:
        Path(path).write_text(text)
    return text
