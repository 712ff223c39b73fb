"""Architecture spec files: any :class:`~accelerators.arch.ArchSpec` as YAML, and back.

A spec is the ArchSpec's fields, levels innermost first; every key is a field of
:class:`~accelerators.arch.ArchSpec` or :class:`~accelerators.arch.MemoryLevel` (same
names, same units), except ``keep`` / ``bypass`` for a level's ``tensors``::

    name: my_array
    word_bits: 16
    clock_mhz: 500
    energy_table: horowitz_45nm       # optional: a built-in table or a *.yaml table path
                                      # (relative to this file), for the {table: ...} energies
    mac_energy_pj: {table: mac}       # or a number
    levels:                           # innermost first; the last is the backing store
      - name: RF
        keep: [W, I, O]               # or bypass: [...] (the operands it never holds)
        capacity_words: {W: 224, I: 12, O: 24}    # an int (shared), per operand, or null
        read_energy_pj: {table: register_file}    # a number, per operand, or from the table
        write_energy_pj: 0.9
      - name: GLB
        capacity_words: 55296
        fanout_x: 14                  # children of each instance: an X x Y mesh
        fanout_y: 12
        read_energy_pj: {table: sram}
        write_energy_pj: {table: sram}
        bandwidth_words_per_cycle: 32 # reads + writes per cycle per instance
        read_bandwidth_words_per_cycle: 24    # optional: reads alone (and/or
        write_bandwidth_words_per_cycle: 16   # writes alone), each instance
        noc_energy_pj: {table: noc}
        leakage_pj_per_cycle: {table: sram}
        vector_words: 1
      - name: DRAM
        read_energy_pj: {table: dram}
        write_energy_pj: {table: dram}
        bandwidth_words_per_cycle: 4

``instances`` may be given and is then checked; otherwise it is derived: the backing store
has one and each level has its parent's instances times the parent's fanout (the
:class:`ArchSpec` rule). Table energies (``{table: COMPONENT}``, optionally with
``capacity_kib`` or ``capacity_words`` to override the level's capacity) are read from the
``energy_table`` through :class:`~accelerators.tech.TechModel` at the spec's
``word_bits``: ``register_file`` and ``sram`` by the level's capacity (per operand where
the capacity is), ``dram`` per word, ``noc`` and ``neighbour_hop`` for ``noc_energy_pj``,
``mac`` for ``mac_energy_pj``; ``leakage_pj_per_cycle: {table: sram}`` is the table's
leakage of one instance of that capacity. :func:`arch_to_dict` writes every energy as the
number it resolved to, so any ArchSpec writes out and reads back equal
(:func:`dump_arch` / :func:`load_arch`).

A level's bandwidths (words per cycle per instance, each optional): ``bandwidth_words_per_cycle``
limits reads and writes together (one port for both), ``read_bandwidth_words_per_cycle``
reads alone and ``write_bandwidth_words_per_cycle`` writes alone (fills and updates); a
level may give any of them (Timeloop's ``shared_bandwidth``, ``read_bandwidth`` and
``write_bandwidth``), and its bandwidth cycles are the largest of the three
(:mod:`evaluators.loopnest.bandwidth`).

Not expressible, and refused by name (:data:`NOT_EXPRESSIBLE`): a cluster size (accesses
shared by several instances).

Every error is a :class:`~design_space.errors.ConfigError` naming the file, the line and
the key (``arch.yaml:12: levels[1].fanout_x: must be a positive integer, got 0``).

A hardware design space can vary a spec's fields: :class:`ArchFile` (what a config's
``accelerator: {spec: my_arch.yaml, parameters: {glb_words: levels.GLB.capacity_words}}``
resolves to, :func:`accelerators.registry.resolve_accelerator`) builds the spec of a
design point with each named field set to the point's value before validation, so table
energies follow a varied capacity.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from accelerators import tech as _tech
from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from design_space.errors import ConfigError
from design_space.yamlio import LineMap, load_yaml, load_yaml_file

__all__ = [
    "NOT_EXPRESSIBLE",
    "ArchFile",
    "SpecAccelerator",
    "arch_from_dict",
    "arch_to_dict",
    "dump_arch",
    "dumps_arch",
    "load_arch",
    "loads_arch",
]

_ARCH_KEYS = ("name", "word_bits", "clock_mhz", "mac_energy_pj", "area_mm2", "kind", "dataflow",
              "intrinsic", "tech", "energy_table", "levels")
_LEVEL_KEYS = ("name", "keep", "bypass", "capacity_words", "instances", "fanout_x", "fanout_y",
               "read_energy_pj", "write_energy_pj", "bandwidth_words_per_cycle", "read_bandwidth_words_per_cycle",
               "write_bandwidth_words_per_cycle", "multicast",
               "noc_energy_pj", "area_mm2", "leakage_pj_per_cycle", "vector_words")
NOT_EXPRESSIBLE = {
    "cluster_size": "a level's accesses are per instance; Timeloop's cluster_size (instances sharing "
                    "one wide access) cannot be expressed",
}
"""Keys a spec may not have, with why (their meaning has no ArchSpec field)."""
_MEMORY_COMPONENTS = ("register_file", "sram", "dram")
_NOC_COMPONENTS = ("noc", "neighbour_hop")


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


class _Reader:
    """One spec being read: its data, where its keys are, its energy table."""

    def __init__(self, data: Any, lm: LineMap, base_dir: Path | None) -> None:
        self.data, self.lm, self.base_dir = data, lm, base_dir
        self.tech: _tech.TechModel | None = None

    def fail(self, path: Sequence[str | int], msg: str) -> ConfigError:
        return self.lm.error(tuple(path), msg)

    def keys(self, obj: Any, path: tuple, allowed: Sequence[str], what: str) -> None:
        if not isinstance(obj, Mapping):
            raise self.fail(path, f"{what} must be a mapping, got {type(obj).__name__}")
        for k in obj:
            if k in NOT_EXPRESSIBLE:
                raise self.fail((*path, k), NOT_EXPRESSIBLE[k])
            if k not in allowed:
                raise self.fail((*path, k), f"unknown key {k!r}; known keys: {list(allowed)}")

    def number(self, v: Any, path: tuple, *, low: float = 0.0, strict: bool = False) -> float:
        if not _is_number(v) or v < low or (strict and v <= low):
            bound = f"> {low:g}" if strict else f">= {low:g}"
            raise self.fail(path, f"must be a finite number {bound}, got {v!r}")
        return float(v)

    def integer(self, v: Any, path: tuple, low: int = 1) -> int:
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise self.fail(path, f"must be an integer >= {low}, got {v!r}")
        return v

    # -- the energy table ------------------------------------------------------------
    def table(self, path: tuple) -> _tech.TechModel:
        if self.tech is not None:
            return self.tech
        ref = self.data.get("energy_table")
        if ref is None:
            raise self.fail(path, "a {table: ...} energy needs the spec's energy_table "
                                  f"(one of {sorted(_tech.TECH_MODELS)} or a *.yaml table path)")
        if isinstance(ref, str) and ref.endswith(_tech.TABLE_SUFFIXES) and self.base_dir is not None \
                and not Path(ref).is_absolute():
            ref = str(self.base_dir / ref)
        try:
            self.tech = _tech.get_tech(ref)
        except (ValueError, OSError) as e:
            raise self.fail(("energy_table",), str(e)) from None
        return self.tech

    def precision(self, path: tuple) -> str:
        bits = self.data.get("word_bits", 16)
        try:
            return _tech.int_precision(bits)
        except ValueError as e:
            raise self.fail(path, f"a {{table: ...}} energy needs an integer word_bits of 8, 16 or 32: {e}") from None

    def from_table(self, ref: Mapping[str, Any], path: tuple, allowed: Sequence[str], action: str,
                   capacity_words: float | None, leakage: bool = False) -> float:
        self.keys(ref, path, ("table", "capacity_kib", "capacity_words"), "a table reference")
        comp = ref.get("table")
        if comp not in allowed:
            raise self.fail((*path, "table"), f"must be one of {list(allowed)}, got {comp!r}")
        t = self.table(path)
        prec = self.precision(path)
        bits = _tech.PRECISION_BITS[prec]
        if "capacity_kib" in ref:
            kib: float | None = self.number(ref["capacity_kib"], (*path, "capacity_kib"), strict=True)
        elif "capacity_words" in ref:
            kib = self.number(ref["capacity_words"], (*path, "capacity_words"), strict=True) * bits / 8192.0
        else:
            kib = None if capacity_words is None else capacity_words * bits / 8192.0
        try:
            if leakage:
                return float(t.leakage_pj_per_cycle(comp, kib))
            if comp == "mac":
                return float(t.mac_energy_pj(prec))
            if comp == "noc":
                return float(t.noc_energy_pj(prec))
            if comp == "neighbour_hop":
                return float(t.hop_energy_pj(prec))
            if comp == "dram":
                return float(t.dram_energy_pj(prec, action))
            if kib is None or kib <= 0:
                raise self.fail(path, f"a {comp} energy needs a bounded capacity (the level's, or "
                                      "capacity_kib / capacity_words here)")
            if comp == "sram":
                return float(t.sram_energy_pj(kib, prec, action))
            return float(t.register_energy_pj(kib * 8192.0 / bits, prec, action))
        except ConfigError:
            raise
        except ValueError as e:
            raise self.fail(path, f"energy table {t.name!r}: {e}") from None

    def energy(self, v: Any, path: tuple, action: str, capacity: Any, per_operand: bool = True) -> Any:
        """A number, a per-operand mapping (of numbers or table references) or a table
        reference."""
        if isinstance(v, Mapping) and "table" in v:
            if per_operand and isinstance(capacity, Mapping):
                return {op: self.from_table(v, path, _MEMORY_COMPONENTS, action, capacity.get(op))
                        for op in OPERANDS}
            cap = None if capacity is None or isinstance(capacity, Mapping) else float(capacity)
            return self.from_table(v, path, _MEMORY_COMPONENTS, action, cap)
        if isinstance(v, Mapping) and per_operand:
            out = {}
            for op, x in v.items():
                if op not in OPERANDS:
                    raise self.fail((*path, op), f"unknown operand {op!r}; operands: {list(OPERANDS)}")
                out[op] = self.energy(x, (*path, op), action,
                                      capacity.get(op) if isinstance(capacity, Mapping) else capacity, False)
            return out
        return self.number(v, path)

    # -- the spec --------------------------------------------------------------------
    def level(self, raw: Any, i: int, n: int) -> dict[str, Any]:
        path: tuple = ("levels", i)
        self.keys(raw, path, _LEVEL_KEYS, f"level {i}")
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail((*path, "name"), f"every level needs a name (a non-empty string), got {name!r}")
        kw: dict[str, Any] = {"name": name}
        if "keep" in raw and "bypass" in raw:
            raise self.fail((*path, "bypass"), "give keep or bypass, not both")
        for key in ("keep", "bypass"):
            if key in raw:
                ops = raw[key]
                if not isinstance(ops, list) or any(op not in OPERANDS for op in ops):
                    raise self.fail((*path, key), f"must be a list of operands among {list(OPERANDS)}, got {ops!r}")
                kept = set(ops) if key == "keep" else set(OPERANDS) - set(ops)
                kw["tensors"] = frozenset(kept)
        cap = raw.get("capacity_words")
        if isinstance(cap, Mapping):
            for op, v in cap.items():
                if op not in OPERANDS:
                    raise self.fail((*path, "capacity_words", op), f"unknown operand {op!r}")
                self.number(v, (*path, "capacity_words", op))
            cap = {op: int(v) if float(v).is_integer() else v for op, v in cap.items()}
        elif cap is not None:
            self.number(cap, (*path, "capacity_words"))
            cap = int(cap) if float(cap).is_integer() else cap
        kw["capacity_words"] = cap
        for key in ("fanout_x", "fanout_y", "vector_words"):
            if key in raw:
                kw[key] = self.integer(raw[key], (*path, key))
        for key in ("read_energy_pj", "write_energy_pj"):
            if key in raw:
                kw[key] = self.energy(raw[key], (*path, key), key.split("_")[0], cap)
        if "noc_energy_pj" in raw:
            v = raw["noc_energy_pj"]
            kw["noc_energy_pj"] = (self.from_table(v, (*path, "noc_energy_pj"), _NOC_COMPONENTS, "transfer", None)
                                   if isinstance(v, Mapping) else self.number(v, (*path, "noc_energy_pj")))
        if "leakage_pj_per_cycle" in raw:
            v = raw["leakage_pj_per_cycle"]
            if isinstance(v, Mapping):
                c = None if cap is None else float(sum(cap.values()) if isinstance(cap, Mapping) else cap)
                kw["leakage_pj_per_cycle"] = self.from_table(v, (*path, "leakage_pj_per_cycle"),
                                                             _MEMORY_COMPONENTS, "read", c, leakage=True)
            else:
                kw["leakage_pj_per_cycle"] = self.number(v, (*path, "leakage_pj_per_cycle"))
        for key in ("bandwidth_words_per_cycle", "read_bandwidth_words_per_cycle", "write_bandwidth_words_per_cycle"):
            bw = raw.get(key)
            if bw is not None:
                kw[key] = self.number(bw, (*path, key), strict=True)
        if "area_mm2" in raw:
            kw["area_mm2"] = self.number(raw["area_mm2"], (*path, "area_mm2"))
        if "multicast" in raw:
            if not isinstance(raw["multicast"], bool):
                raise self.fail((*path, "multicast"), f"must be true or false, got {raw['multicast']!r}")
            kw["multicast"] = raw["multicast"]
        return kw

    def arch(self) -> ArchSpec:
        d = self.data
        self.keys(d, (), _ARCH_KEYS, "an architecture spec")
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(("name",), f"the spec needs a name (a non-empty string), got {name!r}")
        kw: dict[str, Any] = {"name": name}
        if "word_bits" in d:
            kw["word_bits"] = self.integer(d["word_bits"], ("word_bits",))
        if "clock_mhz" in d:
            kw["clock_mhz"] = self.number(d["clock_mhz"], ("clock_mhz",), strict=True)
        if "area_mm2" in d:
            kw["area_mm2"] = self.number(d["area_mm2"], ("area_mm2",))
        for key in ("kind", "dataflow", "intrinsic", "tech"):
            if key in d and d[key] is not None:
                if not isinstance(d[key], str):
                    raise self.fail((key,), f"must be a string, got {d[key]!r}")
                kw[key] = d[key]
        if "mac_energy_pj" not in d:
            raise self.fail(("mac_energy_pj",), "missing required key 'mac_energy_pj'")
        mac = d["mac_energy_pj"]
        kw["mac_energy_pj"] = (self.from_table(mac, ("mac_energy_pj",), ("mac",), "compute", None)
                               if isinstance(mac, Mapping) else self.number(mac, ("mac_energy_pj",)))
        raw_levels = d.get("levels")
        if not isinstance(raw_levels, list) or len(raw_levels) < 2:
            raise self.fail(("levels",), "levels must be a list of at least two levels (innermost first; "
                                         "the last is the backing store)")
        lv = [self.level(raw, i, len(raw_levels)) for i, raw in enumerate(raw_levels)]
        # instances: derived from the fanouts above, or checked against them
        inst = 1
        for i in range(len(lv) - 1, -1, -1):
            given = raw_levels[i].get("instances")
            if given is not None:
                g = self.integer(given, ("levels", i, "instances"))
                if g != inst:
                    raise self.fail(("levels", i, "instances"),
                                    f"{g} instances, but the fanouts above give {inst} (the backing store has one, "
                                    "each level its parent's instances x the parent's fanout_x x fanout_y)")
            lv[i]["instances"] = inst
            inst *= lv[i].get("fanout_x", 1) * lv[i].get("fanout_y", 1)
        levels = []
        for i, kwl in enumerate(lv):
            try:
                levels.append(MemoryLevel(**kwl))
            except ValueError as e:
                raise self.fail(("levels", i), str(e)) from None
        if "tech" not in kw and self.tech is not None:
            kw["tech"] = self.tech.name
        try:
            return ArchSpec(levels=tuple(levels), **kw)
        except ValueError as e:
            where: tuple = ("levels", len(levels) - 1) if "backing store" in str(e) else ()
            raise self.fail(where, str(e)) from None


def arch_from_dict(data: Any, lm: LineMap | None = None, base_dir: str | Path | None = None) -> ArchSpec:
    """An ArchSpec from a parsed spec (see the module docstring); ``lm`` gives the lines
    for errors, ``base_dir`` the folder a relative ``energy_table`` path is read from."""
    return _Reader(data, lm or LineMap({}), Path(base_dir) if base_dir is not None else None).arch()


def load_arch(path: str | Path) -> ArchSpec:
    """Read an architecture spec file; every problem is a :class:`ConfigError` naming
    the file, line and key."""
    data, lm = load_yaml_file(path)
    return arch_from_dict(data, lm, Path(path).resolve().parent)


def loads_arch(text: str, source: str | None = None) -> ArchSpec:
    data, lm = load_yaml(text, source)
    return arch_from_dict(data, lm)


def _compact(v: Mapping[str, float]) -> Any:
    vals = [v.get(op) for op in OPERANDS]
    if set(v) == set(OPERANDS) and all(x == vals[0] for x in vals):
        return vals[0]
    return {op: v[op] for op in OPERANDS if op in v}


def arch_to_dict(arch: ArchSpec) -> dict[str, Any]:
    """The spec of ``arch``: every field that differs from its default, energies as
    numbers; :func:`arch_from_dict` reads it back equal."""
    out: dict[str, Any] = {"name": arch.name}
    for f in fields(ArchSpec):
        if f.name in ("name", "levels"):
            continue
        v = getattr(arch, f.name)
        if f.name == "mac_energy_pj" or v != f.default:
            out[f.name] = v
    levels = []
    defaults = {f.name: f.default for f in fields(MemoryLevel)}
    for lv in arch.levels:
        d: dict[str, Any] = {"name": lv.name}
        if lv.tensors != frozenset(OPERANDS):
            d["keep"] = [op for op in OPERANDS if op in lv.tensors]
        if lv.capacity_words is not None:
            cap = lv.capacity_words
            d["capacity_words"] = dict(cap) if isinstance(cap, Mapping) else cap
        for key in ("fanout_x", "fanout_y"):
            if getattr(lv, key) != 1:
                d[key] = getattr(lv, key)
        for key in ("read_energy_pj", "write_energy_pj"):
            d[key] = _compact(getattr(lv, key))
        for key in ("bandwidth_words_per_cycle", "read_bandwidth_words_per_cycle", "write_bandwidth_words_per_cycle",
                    "multicast", "noc_energy_pj", "area_mm2", "leakage_pj_per_cycle", "vector_words"):
            if getattr(lv, key) != defaults[key]:
                d[key] = getattr(lv, key)
        levels.append(d)
    out["levels"] = levels
    return out


def dumps_arch(arch: ArchSpec) -> str:
    """The YAML text of :func:`arch_to_dict` (floats written exactly: PyYAML writes
    ``repr``, which reads back to the same double)."""
    return yaml.safe_dump(arch_to_dict(arch), sort_keys=False, default_flow_style=None)


def dump_arch(arch: ArchSpec, path: str | Path) -> Path:
    p = Path(path)
    p.write_text(dumps_arch(arch))
    return p


# ------------------------------------------------------------------ design spaces over a spec
def _set_field(data: dict[str, Any], target: str, value: Any, param: str) -> None:
    """Set the spec field ``target`` (``clock_mhz``, ``levels.GLB.capacity_words``,
    ``levels.RF.capacity_words.W``, ``levels.0.fanout_x``) to ``value``."""
    parts = target.split(".")
    node: Any = data
    for j, part in enumerate(parts[:-1]):
        if node is data and part == "levels":
            continue
        if j == 1 and parts[0] == "levels":
            levels = data.get("levels") or []
            hit = [lv for lv in levels if isinstance(lv, Mapping) and lv.get("name") == part]
            if not hit and part.isdigit() and int(part) < len(levels):
                hit = [levels[int(part)]]
            if not hit:
                names = [lv.get("name") for lv in levels if isinstance(lv, Mapping)]
                raise ValueError(f"parameter {param!r}: {target!r} names no level {part!r} (levels: {names})")
            node = hit[0]
            continue
        nxt = node.get(part) if isinstance(node, Mapping) else None
        if not isinstance(nxt, dict):
            nxt = {}
            node[part] = nxt
        node = nxt
    if not isinstance(node, dict) or (parts[0] == "levels" and len(parts) < 3):
        raise ValueError(f"parameter {param!r}: {target!r} is not a field path (e.g. 'clock_mhz', "
                         "'levels.GLB.capacity_words', 'levels.RF.capacity_words.W')")
    if hasattr(value, "item"):
        value = value.item()
    node[parts[-1]] = value


@dataclass(frozen=True)
class SpecAccelerator:
    """One design point's architecture, read from a spec: what the loop-nest evaluators
    need of an accelerator (``to_arch``, ``validate``, ``area_mm2``)."""

    arch: ArchSpec

    def to_arch(self) -> ArchSpec:
        return self.arch

    def validate(self) -> SpecAccelerator:
        return self

    @property
    def area_mm2(self) -> float:
        return self.arch.area_mm2


@dataclass(frozen=True)
class ArchFile:
    """A spec file as an accelerator model: ``from_point(point)`` sets each field named
    in ``parameters`` (design-point key -> field path, see :func:`_set_field`) to the
    point's value and reads the spec. A point key not in ``parameters`` is an error
    naming it; a point that gives an invalid spec is a ``ValueError``
    (:class:`ConfigError`) naming the field."""

    path: str
    parameters: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", dict(self.parameters))
        if not Path(self.path).is_file():
            raise ValueError(f"accelerator spec {self.path!r}: no such file")
        for k, v in self.parameters.items():
            if not isinstance(k, str) or not isinstance(v, str) or not v:
                raise ValueError(f"accelerator spec parameters map point keys to field paths, got {k!r}: {v!r}")

    def _base(self) -> tuple[Any, LineMap]:
        return load_yaml_file(self.path)

    def from_point(self, point: Mapping[str, Any]) -> SpecAccelerator:
        unknown = sorted(set(point) - set(self.parameters))
        if unknown:
            raise ValueError(f"accelerator spec {self.path}: point keys {unknown} are not among its parameters "
                             f"{sorted(self.parameters)}")
        data, lm = self._base()
        data = copy.deepcopy(data)
        if not isinstance(data, dict):
            raise lm.error((), f"an architecture spec must be a mapping, got {type(data).__name__}")
        for key, value in point.items():
            _set_field(data, self.parameters[key], value, key)
        return SpecAccelerator(arch_from_dict(data, lm, Path(self.path).resolve().parent))
