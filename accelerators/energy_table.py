"""Energy and area tables as data: the typed loader of the YAML tables.

A table is the convention Accelergy's energy reference tables made familiar: a list of
entries, each a component class with the attributes that matter (capacity, width, ports,
technology node...), an action, and its cost. :class:`~accelerators.tech.TechModel` reads
a table; how it interpolates between entries (SRAM energy log-log in capacity, DRAM per
bit, a MAC as multiplier + adder) is documented there. The built-in tables ship inside the
package (``accelerators/tables/*.yaml``); a user table is a file of the same schema::

    table: my_7nm                 # its name (reports show it)
    description: ...              # optional
    base: horowitz_45nm           # optional: a built-in table (or a path, relative to this
                                  # file) whose entries fill in what this one lacks
    entries:
      - component: sram           # class (below)
        attributes: {capacity_kib: 64, width_bits: 64, node_nm: 7}
        action: read              # read | write | compute | transfer | null (area only)
        energy_pj: 2.1            # exactly one of energy_pj / energy_x_mac / energy_of
        leakage_pj_per_cycle: 0.01   # optional: static energy per instance per cycle
        area_um2: 5000.0          # optional
        source: "our SRAM compiler, 2024"   # required: where the numbers come from

Energy is given one of three ways: ``energy_pj`` (absolute, per action), ``energy_x_mac``
(a multiple of the table's MAC energy at the datapath's precision, as Eyeriss's normalized
table), or ``energy_of`` (the same as another component's access, e.g. ``{component:
register_file, capacity_words: 1, action: read}``). An entry of a table replaces every
entry of its base with the same component class and action.

Component classes and the attributes each requires (others may be given and are kept):

========================  ===============================================  ===========
class                     attributes                                        actions
========================  ===============================================  ===========
``multiplier``, ``adder``  ``datatype`` (int8, int16, int32, fp16, fp32)      compute
``sram``                  ``capacity_kib``, ``width_bits`` with energy_pj     read, write
``register_file``         as ``sram`` (without entries: the SRAM fit)        read, write
``dram``                  ``width_bits`` with energy_pj                       read, write
``noc``, ``neighbour_hop``                                                  transfer
``sram_cell``             ``array_efficiency`` (0 < e <= 1); ``area_um2``     null
``flip_flop``             ``area_um2`` per bit                                null
========================  ===============================================  ===========

A malformed or incomplete table raises :class:`EnergyTableError`, whose message names the
file, the entry (its index and class) and the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from design_space.errors import ConfigError
from design_space.yamlio import load_yaml_file

__all__ = [
    "BUILTIN_TABLES",
    "COMPONENT_CLASSES",
    "EnergyTable",
    "EnergyTableError",
    "TableEntry",
    "builtin_table",
    "load_energy_table",
    "table_from_dict",
]

DATATYPES = ("int8", "int16", "int32", "fp16", "fp32")
ACTIONS = ("read", "write", "compute", "transfer", None)

# class -> (allowed actions, attributes required when energy_pj is given, attributes
# always required, whether an energy is required, whether area_um2 is required)
_RULES: dict[str, tuple[tuple[str | None, ...], tuple[str, ...], tuple[str, ...], bool, bool]] = {
    "multiplier": (("compute",), (), ("datatype",), True, False),
    "adder": (("compute",), (), ("datatype",), True, False),
    "sram": (("read", "write"), ("capacity_kib", "width_bits"), (), True, False),
    "register_file": (("read", "write"), ("capacity_kib", "width_bits"), (), True, False),
    "dram": (("read", "write"), ("width_bits",), (), True, False),
    "noc": (("transfer",), (), (), True, False),
    "neighbour_hop": (("transfer",), (), (), True, False),
    "sram_cell": ((None,), (), ("array_efficiency",), False, True),
    "flip_flop": ((None,), (), (), False, True),
}
COMPONENT_CLASSES = tuple(_RULES)
"""The component classes a table may list."""

BUILTIN_TABLES = ("horowitz_45nm", "eyeriss_normalized")
"""Names of the tables shipped in ``accelerators/tables/``."""

_ENTRY_FIELDS = ("component", "attributes", "action", "energy_pj", "energy_x_mac", "energy_of",
                 "leakage_pj_per_cycle", "area_um2", "source")
_TABLE_FIELDS = ("table", "description", "base", "entries")


class EnergyTableError(ValueError):
    """A malformed or incomplete energy table; the message names file, entry and field."""


@dataclass(frozen=True)
class TableEntry:
    """One row of a table (see the module docstring for the fields' meaning).

    ``where`` is how errors name the entry: ``"file.yaml: entries[3] (sram read)"``.
    """

    component: str
    action: str | None
    attributes: Mapping[str, Any]
    source: str
    energy_pj: float | None = None
    energy_x_mac: float | None = None
    energy_of: Mapping[str, Any] | None = None
    leakage_pj_per_cycle: float | None = None
    area_um2: float | None = None
    where: str = ""

    def attr(self, name: str) -> Any:
        """Attribute ``name``; :class:`EnergyTableError` naming the entry if absent."""
        if name not in self.attributes:
            raise EnergyTableError(f"{self.where}: attributes.{name}: missing")
        return self.attributes[name]


@dataclass(frozen=True)
class EnergyTable:
    """A loaded table: its entries (this file's, then the base's it does not replace).

    Attributes:
        name: the ``table:`` name.
        entries: every entry in effect, this table's first.
        path: the file it was read from (``None`` for a table built in memory).
        description: free text.
    """

    name: str
    entries: tuple[TableEntry, ...]
    path: str | None = None
    description: str = ""
    _index: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for e in self.entries:
            self._index.setdefault((e.component, e.action), []).append(e)

    def find(self, component: str, action: str | None = None) -> list[TableEntry]:
        """The entries of ``component`` with ``action`` (may be empty)."""
        return list(self._index.get((component, action), ()))

    def require(self, component: str, action: str | None = None, **attrs: Any) -> TableEntry:
        """The one entry of ``component``/``action`` whose attributes match ``attrs``;
        :class:`EnergyTableError` naming the table and what is missing otherwise."""
        hits = [e for e in self.find(component, action)
                if all(e.attributes.get(k) == v for k, v in attrs.items())]
        if not hits:
            want = ", ".join(f"{k}={v!r}" for k, v in attrs.items())
            raise EnergyTableError(
                f"{self.path or self.name}: no entry for component {component!r} action "
                f"{action!r}{' with ' + want if want else ''} (the model needs it)")
        return hits[0]


def _fail(where: str, fieldname: str, msg: str) -> EnergyTableError:
    return EnergyTableError(f"{where}: {fieldname}: {msg}")


def _number(where: str, fieldname: str, v: Any, *, positive: bool = True) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        hint = ""
        if isinstance(v, str):
            try:
                float(v)
                hint = " (PyYAML reads an exponent without a '.' as text: write 1.0e-6, not 1e-6)"
            except ValueError:
                pass
        raise _fail(where, fieldname, f"must be a finite number, got {v!r}{hint}")
    if positive and not v > 0:
        raise _fail(where, fieldname, f"must be > 0, got {v!r}")
    if not positive and v < 0:
        raise _fail(where, fieldname, f"must be >= 0, got {v!r}")
    return float(v)


def _entry(raw: Any, where: str) -> TableEntry:
    if not isinstance(raw, Mapping):
        raise EnergyTableError(f"{where}: must be a mapping of fields, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(_ENTRY_FIELDS))
    if unknown:
        raise _fail(where, unknown[0], f"unknown field (known: {list(_ENTRY_FIELDS)})")
    comp = raw.get("component")
    if comp not in _RULES:
        raise _fail(where, "component", f"must be one of {list(COMPONENT_CLASSES)}, got {comp!r}")
    actions, sized_attrs, always_attrs, needs_energy, needs_area = _RULES[comp]
    if "action" not in raw:
        raise _fail(where, "action", f"missing (one of {list(actions)})")
    action = raw["action"]
    if action not in actions:
        raise _fail(where, "action", f"{comp!r} takes one of {list(actions)}, got {action!r}")
    where = f"{where} ({comp}{' ' + action if action else ''})"
    attrs = raw.get("attributes", {})
    if attrs is None:
        attrs = {}
    if not isinstance(attrs, Mapping):
        raise _fail(where, "attributes", f"must be a mapping, got {attrs!r}")
    source = raw.get("source")
    if not isinstance(source, str) or not source.strip():
        raise _fail(where, "source", "missing: every entry names where its numbers come from")
    given = [k for k in ("energy_pj", "energy_x_mac", "energy_of") if raw.get(k) is not None]
    if needs_energy and len(given) != 1:
        raise _fail(where, "energy_pj", "give exactly one of energy_pj, energy_x_mac, energy_of"
                    + (f" (got {given})" if given else " (none given)"))
    if not needs_energy and given:
        raise _fail(where, given[0], f"{comp!r} has no energy (it is an area entry)")
    energy_pj = energy_x_mac = None
    energy_of = None
    if raw.get("energy_pj") is not None:
        energy_pj = _number(where, "energy_pj", raw["energy_pj"], positive=False)
        for a in sized_attrs:
            if a not in attrs:
                raise _fail(where, f"attributes.{a}", f"missing (needed with energy_pj for {comp!r})")
    if raw.get("energy_x_mac") is not None:
        energy_x_mac = _number(where, "energy_x_mac", raw["energy_x_mac"], positive=False)
    if raw.get("energy_of") is not None:
        energy_of = raw["energy_of"]
        if not (isinstance(energy_of, Mapping) and energy_of.get("component") == "register_file"
                and set(energy_of) <= {"component", "capacity_words", "action"}):
            raise _fail(where, "energy_of", "must be {component: register_file, capacity_words: N, "
                        f"action: read|write}}, got {energy_of!r}")
        _number(where, "energy_of.capacity_words", energy_of.get("capacity_words"))
        if energy_of.get("action", "read") not in ("read", "write"):
            raise _fail(where, "energy_of.action", f"must be read or write, got {energy_of['action']!r}")
    for a in always_attrs:
        if a not in attrs:
            raise _fail(where, f"attributes.{a}", f"missing (required for {comp!r})")
    if "datatype" in attrs and attrs["datatype"] not in DATATYPES:
        raise _fail(where, "attributes.datatype", f"must be one of {list(DATATYPES)}, got {attrs['datatype']!r}")
    for a in ("capacity_kib", "width_bits", "ports", "node_nm"):
        if a in attrs:
            _number(where, f"attributes.{a}", attrs[a])
    if "array_efficiency" in attrs:
        eff = _number(where, "attributes.array_efficiency", attrs["array_efficiency"])
        if eff > 1:
            raise _fail(where, "attributes.array_efficiency", f"must be <= 1, got {eff!r}")
    leak = raw.get("leakage_pj_per_cycle")
    if leak is not None:
        leak = _number(where, "leakage_pj_per_cycle", leak, positive=False)
    area = raw.get("area_um2")
    if area is not None:
        area = _number(where, "area_um2", area)
    elif needs_area:
        raise _fail(where, "area_um2", f"missing (required for {comp!r})")
    return TableEntry(component=comp, action=action, attributes=dict(attrs), source=source,
                      energy_pj=energy_pj, energy_x_mac=energy_x_mac,
                      energy_of=dict(energy_of) if energy_of is not None else None,
                      leakage_pj_per_cycle=leak, area_um2=area, where=where)


def table_from_dict(data: Any, where: str = "<table>", base_dir: Path | None = None) -> EnergyTable:
    """An :class:`EnergyTable` from parsed YAML ``data``; ``where`` (the file name) prefixes
    every error. A ``base`` path is resolved against ``base_dir``."""
    if not isinstance(data, Mapping):
        raise EnergyTableError(f"{where}: a table must be a mapping with keys {list(_TABLE_FIELDS)}")
    unknown = sorted(set(data) - set(_TABLE_FIELDS))
    if unknown:
        raise EnergyTableError(f"{where}: {unknown[0]}: unknown key (known: {list(_TABLE_FIELDS)})")
    name = data.get("table")
    if not isinstance(name, str) or not name:
        raise EnergyTableError(f"{where}: table: missing (the table's name)")
    raw_entries = data.get("entries")
    if not isinstance(raw_entries, list) or not raw_entries:
        raise EnergyTableError(f"{where}: entries: must be a non-empty list")
    entries = [_entry(raw, f"{where}: entries[{i}]") for i, raw in enumerate(raw_entries)]
    seen: dict[tuple, str] = {}
    for e in entries:
        key = (e.component, e.action, tuple(sorted((k, repr(v)) for k, v in e.attributes.items())))
        if key in seen:
            raise EnergyTableError(f"{e.where}: duplicates {seen[key]}")
        seen[key] = e.where
    base = data.get("base")
    if base is not None:
        if not isinstance(base, str):
            raise EnergyTableError(f"{where}: base: must be a table name or path, got {base!r}")
        if base in BUILTIN_TABLES:
            base_table = builtin_table(base)
        else:
            p = Path(base)
            if base_dir is not None and not p.is_absolute():
                p = base_dir / p
            if not p.is_file():
                raise EnergyTableError(
                    f"{where}: base: {base!r} is neither a built-in table {list(BUILTIN_TABLES)} nor a file")
            base_table = load_energy_table(p)
        replaced = {(e.component, e.action) for e in entries}
        entries += [e for e in base_table.entries if (e.component, e.action) not in replaced]
    desc = data.get("description", "")
    return EnergyTable(name=name, entries=tuple(entries), path=where, description=str(desc or ""))


def load_energy_table(path: str | Path) -> EnergyTable:
    """Read a YAML table (:class:`EnergyTableError` naming the file for any problem)."""
    p = Path(path)
    if not p.is_file():
        raise EnergyTableError(f"{p}: cannot read the energy table: "
                               f"{'it is a directory' if p.is_dir() else 'no such file'}")
    try:   # bounded like a config: size, aliases, nesting; one line with the line number
        data, _ = load_yaml_file(p)
    except ConfigError as exc:
        if exc.detail.startswith("cannot read"):
            raise EnergyTableError(f"{p}: {exc.detail}") from None
        where = f" (line {exc.line})" if exc.line is not None else ""
        raise EnergyTableError(f"{p}: not valid YAML{where}: "
                               f"{exc.detail.removeprefix('malformed YAML: ')}") from None
    return table_from_dict(data, where=str(p), base_dir=p.parent)


_BUILTIN_CACHE: dict[str, EnergyTable] = {}


def builtin_table(name: str) -> EnergyTable:
    """A table shipped in ``accelerators/tables/`` (loaded once)."""
    if name not in BUILTIN_TABLES:
        raise EnergyTableError(f"unknown built-in energy table {name!r}; choices: {list(BUILTIN_TABLES)}")
    if name not in _BUILTIN_CACHE:
        res = resources.files("accelerators") / "tables" / f"{name}.yaml"
        data = yaml.safe_load(res.read_text())
        _BUILTIN_CACHE[name] = table_from_dict(data, where=f"accelerators/tables/{name}.yaml")
    return _BUILTIN_CACHE[name]
