"""ZigZag 3.9.1's accelerator schema (a parsed ``zigzag/inputs/hardware/*.yaml``) as an
:class:`~accelerators.arch.ArchSpec`.

ZigZag (Mei et al., IEEE TC 2021; ``zigzag-dse`` on PyPI) describes an accelerator as an
operational array (named dimensions and sizes, a MAC energy) and a list of memories, each
with the operands it holds (``I1`` inputs, ``I2`` weights, ``O`` outputs), a size in
bits, per-access read and write costs, ports with widths and allocations, and the array
dimensions it is shared over (``served_dimensions``). :func:`arch_from_zigzag` states its
rules. Every key of the file is either read into the ArchSpec or refused: a
``ValueError`` that names the file and line (where known), the key's path and why it
cannot be expressed. Keys whose information coexplore's model does not use (a memory's
``latency``, ``bandwidth_min`` wider than a word, ``systolic_dimensions``, ...: the
:data:`IGNORABLE` names) are refused as well unless the caller names them in
``ignore``; what was dropped is then listed in :attr:`Translation.dropped`, never left
out silently. The result is checked count for count against ZigZag on its own bundled
accelerators by :mod:`experiments.validation.zigzag_bundled`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from accelerators.interop.values import real, shown

__all__ = ["IGNORABLE", "MEMORY_OPERAND", "OPERAND_OF", "Translation", "arch_from_zigzag", "load_zigzag_accelerator"]

#: ZigZag's memory operand -> coexplore's operand (``I1`` inputs, ``I2`` weights, ``O`` outputs)
OPERAND_OF = {"I1": "I", "I2": "W", "O": "O"}
#: coexplore's operand -> ZigZag's memory operand
MEMORY_OPERAND = {v: k for k, v in OPERAND_OF.items()}

IGNORABLE: dict[str, str] = {
    "latency": "a memory's access latency in cycles: coexplore's cycle model has no memory latency (ZigZag 3.9.1 "
               "stores it and its cost model does not read it)",
    "min_r_granularity": "a memory's smallest read in bits (ZigZag 2.x): coexplore counts whole words without it",
    "min_w_granularity": "a memory's smallest write in bits (ZigZag 2.x): coexplore counts whole words without it",
    "bandwidth_min": "a port's smallest access in bits, to which ZigZag rounds each transfer period up: coexplore "
                     "counts words without that rounding (read where it divides the word size, whose words it "
                     "then never rounds)",
    "systolic_dimensions": "array dimensions along which ZigZag adds a drain of one cycle per unit: coexplore's "
                           "cycles have no such drain",
    "dataflows": "the spatial unrolling the accelerator fixes, a mapping constraint: coexplore's mappers do not "
                 "read it",
    "input_precision": "the multiplier's input widths (ZigZag reads them for in-memory compute only), where they "
                       "differ from the I and W word sizes",
    "port_bandwidth": "the bandwidth of a level whose ports an ArchSpec level cannot express (memories of several "
                      "operands merged into one level, several ports of one type, a read_write port beside a "
                      "read or write port, operands of different word sizes): the level is left unlimited",
}
"""What ``ignore`` may name, each with what dropping it leaves out. Anything else is
either read or refused outright."""

_MEMORY_KEYS = {"size", "r_cost", "w_cost", "area", "latency", "mem_type", "auto_cost_extraction", "operands",
                "ports", "served_dimensions", "force_double_buffering", "min_r_granularity", "min_w_granularity"}
_PORT_KEYS = {"name", "type", "bandwidth_min", "bandwidth_max", "allocation"}
_ARRAY_KEYS = {"dimensions", "sizes", "unit_energy", "unit_area", "is_imc", "systolic_dimensions",
               "input_precision", "imc_type", "adc_resolution", "bit_serial_precision"}
_TOP_KEYS = {"name", "memories", "operational_array", "dataflows"}
#: keys read only for in-memory compute, and the values that mean "none"
_IMC_NEUTRAL = {"is_imc": (False, None), "imc_type": (None,), "adc_resolution": (0, 0.0, None),
                "bit_serial_precision": (None,)}
_READS, _WRITES = ("tl", "th"), ("fh", "fl")


@dataclass(frozen=True)
class Translation:
    """A ZigZag accelerator as an ArchSpec, and how its parts correspond.

    Attributes:
        arch: the ArchSpec (levels innermost first).
        level_of: ZigZag memory name -> our level index.
        memories: per level, the ZigZag memories it stands for.
        axes: ``(level, "x" | "y")`` -> the ZigZag operational-array dimension unrolled
            by that level's fanout axis.
        dropped: what the caller's ``ignore`` dropped, one line each (the key's path and
            value); empty when nothing was.
    """

    arch: ArchSpec
    level_of: dict[str, int]
    memories: tuple[tuple[str, ...], ...]
    axes: dict[tuple[int, str], str]
    dropped: tuple[str, ...] = ()


def _path(parts: Iterable[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


class _Reader:
    """One translation: where errors point, and what ``ignore`` allows dropping."""

    def __init__(self, hw: Mapping[str, Any], ignore: frozenset[str], lines: Any) -> None:
        self.name = hw.get("name") if isinstance(hw, Mapping) else None
        self.ignore, self.lines = ignore, lines
        self.dropped: list[str] = []

    def error(self, path: tuple[Any, ...], message: str) -> ValueError:
        if self.lines is not None:
            return self.lines.error(path, f"ZigZag: {message}")
        where = f"ZigZag accelerator {self.name!r}"
        return ValueError(f"{where}: {_path(path)}: {message}" if path else f"{where}: {message}")

    def drop(self, path: tuple[Any, ...], key: str, value: Any, why: str = "", line: str = "") -> None:
        """Drop ``key`` (an :data:`IGNORABLE` name) at ``path`` if the caller allows it,
        recording it (as ``line`` where given); else refuse it, saying why and how to
        accept the loss."""
        if key in self.ignore:
            self.dropped.append(line or (f"{_path(path)} = {shown(value)}" + (f" ({why})" if why else "")))
            return
        raise self.error(path, f"{shown(value)}: {why or IGNORABLE[key]}; refused rather than dropped "
                               f"(ignore=({key!r},) drops it, listed in Translation.dropped)")

    def keys(self, d: Any, allowed: set[str], path: tuple[Any, ...], what: str) -> Mapping[str, Any]:
        if not isinstance(d, Mapping):
            raise self.error(path, f"{what} must be a mapping, got {shown(d)}")
        unknown = sorted(str(k) for k in d if k not in allowed)
        if unknown:
            raise self.error((*path, unknown[0]), f"{what} key {unknown[0]!r} is not one coexplore reads from ZigZag "
                                                  f"3.9.1's schema (read: {sorted(allowed)}); cannot be expressed")
        return d

    def whole(self, v: Any, path: tuple[Any, ...]) -> int:
        """A positive whole number (a size in bits, a port width, an array size)."""
        if isinstance(v, str) and len(v) <= 100:   # a number written as a string, or 1e10 (YAML 1.1: a string)
            try:
                v = float(v)
            except ValueError:
                pass
        if isinstance(v, float) and math.isfinite(v) and v.is_integer():   # 1.0e10 written as a float
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise self.error(path, f"expected a positive whole number, got {shown(v)}")
        return v

    def real(self, v: Any, path: tuple[Any, ...]) -> float:
        try:
            return real(v, "value", "ZigZag")
        except ValueError as e:
            raise self.error(path, str(e).removeprefix("ZigZag value: ")) from None


def _bits_of(bits: int | Mapping[str, int]) -> dict[str, int]:
    if isinstance(bits, Mapping):
        unknown = set(bits) - set(OPERANDS)
        if unknown or set(bits) != set(OPERANDS):
            raise ValueError(f"bits must give each of {list(OPERANDS)} a word size, got {dict(bits)!r}")
        out = dict(bits)
    else:
        out = dict.fromkeys(OPERANDS, bits)
    for op, b in out.items():
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise ValueError(f"bits must be a positive integer, got {b!r}" + (f" for {op}" if isinstance(bits, Mapping)
                                                                              else ""))
    return out


def arch_from_zigzag(hw: dict[str, Any], bits: int | Mapping[str, int] = 8, *, ignore: Iterable[str] = (),
                     lines: Any = None) -> Translation:
    """ZigZag's accelerator schema (a parsed ``hardware/*.yaml``) as an ArchSpec.

    **Levels.** A memory serving the operational-array dimensions ``S`` (its
    ``served_dimensions``) has ``prod(sizes of the other dimensions)`` instances, and the
    fanout below it spans ``S``; memories are ordered by ``S`` (which must be nested: each
    set contains the previous) and then by their order in the file, the last memory is the
    backing store (ZigZag's top memory holds the whole layer, as an unbounded one does).
    Consecutive single-operand memories with the same ``S`` and different operands form
    one level with a capacity per operand; a memory of several operands is a level of its
    own with a shared capacity. A level's fanout spans the dimensions its ``S`` adds to
    the level below it (X the first, Y the second; more than two is refused).

    **Word sizes.** ``bits`` is the word size of every operand, or one per operand
    (``{"W": 8, "I": 8, "O": 16}``: ZigZag's workload ``operand_precision``). Capacities
    are ``size`` bits // the operand's bits, per operand; a memory shared by operands of
    different word sizes is refused (an ArchSpec's shared capacity counts every operand's
    words alike). :attr:`ArchSpec.word_bits` is the inputs' word size.

    **Energies.** Per word: ``r_cost`` (``w_cost``) x the operand's bits / the width
    (``bandwidth_max``) of the port serving its reads to the level below (writes from
    above), the charge per bit of ZigZag's port-wide access; an output's reads to above
    (writes from below) must be served by a port of the same width. The MAC energy is
    ``unit_energy``. ``area`` (per instance, read as mm^2, the unit CACTI gives ZigZag) x
    instances is the level's area, ``unit_area`` x MACs the array's.

    **Bandwidth** (words per cycle per instance): a memory alone in its level whose
    operands have one word size, served by one ``read_write`` port, has that port's width
    / bits as its shared bandwidth; served by one ``read`` port (every read direction) and
    one ``write`` port (every write direction), their widths / bits as read and write
    bandwidths. Any other arrangement of ports cannot be expressed by an ArchSpec level
    (its read, write and shared limits count all its operands together) and is refused
    unless ``ignore`` names ``"port_bandwidth"``, which leaves that level unlimited.

    **Refused**, naming the key: keys that are not ZigZag 3.9.1's; non-nested
    ``served_dimensions``; a level adding more than two array dimensions; operands other
    than I1/I2/O; ``auto_cost_extraction`` (CACTI is not run), ``force_double_buffering``
    and in-memory compute (``is_imc``) when set; a missing port for an operand's
    direction. ``mem_type`` is read only by ZigZag's CACTI extraction and is accepted.
    The :data:`IGNORABLE` keys are refused unless named in ``ignore``; each dropped one is
    listed in :attr:`Translation.dropped` with its value. ``lines`` (a
    :class:`design_space.yamlio.LineMap`) makes errors name the file and line.
    """
    ig = frozenset(ignore)
    bad = sorted(ig - set(IGNORABLE))
    if bad:
        raise ValueError(f"ignore names {bad}, which are not droppable ZigZag keys (droppable: {sorted(IGNORABLE)})")
    bw = _bits_of(bits)
    r = _Reader(hw, ig, lines)
    try:
        return _arch_from_zigzag(hw, bw, r)
    except KeyError as e:
        raise r.error((), f"a memory, port or the operational_array lacks the key {e}") from None


def _ports(mem: Mapping[str, Any], name: str, r: _Reader, bits: dict[str, int]) -> list[dict[str, Any]]:
    """The memory's ports, checked: type, widths and allocations ``(operand, direction)``."""
    ports = mem["ports"]
    base = ("memories", name, "ports")
    if not isinstance(ports, list) or not ports:
        raise r.error(base, f"expected a list of ports, got {shown(ports)}")
    out = []
    ops = {OPERAND_OF[o] for o in mem["operands"]}
    for j, p in enumerate(ports):
        path = (*base, j)
        r.keys(p, _PORT_KEYS, path, "port")
        kind = p.get("type")
        if kind not in ("read", "write", "read_write"):
            raise r.error((*path, "type"), f"expected read, write or read_write, got {shown(kind)}")
        width = r.whole(p.get("bandwidth_max"), (*path, "bandwidth_max"))
        alloc = set()
        for k, a in enumerate(p.get("allocation") or []):
            parts = [x.strip() for x in str(a).split(",")]
            if len(parts) != 2 or parts[0] not in OPERAND_OF or parts[1] not in _READS + _WRITES:
                raise r.error((*path, "allocation", k), f"{shown(a)} is not 'OPERAND, DIRECTION' (I1, I2, O; "
                                                        "tl, th, fh, fl)")
            op, d = OPERAND_OF[parts[0]], parts[1]
            if op not in ops:
                raise r.error((*path, "allocation", k), f"{shown(a)}: the memory does not hold {parts[0]}")
            if (kind == "read" and d in _WRITES) or (kind == "write" and d in _READS):
                raise r.error((*path, "allocation", k), f"{shown(a)}: a {kind} port cannot serve direction {d}")
            alloc.add((op, d))
        if "bandwidth_min" in p:
            lo = r.whole(p["bandwidth_min"], (*path, "bandwidth_min"))
            wider = sorted({op for op, _ in alloc if bits[op] % lo})
            if lo > width:
                raise r.error((*path, "bandwidth_min"), f"{lo} is wider than bandwidth_max {width}")
            if wider:
                sizes = sorted({bits[o] for o in wider})
                words = (f"{sizes[0]}-bit words of {wider}" if len(sizes) == 1 else
                         "words of " + ", ".join(f"{o} ({bits[o]} bits)" for o in wider))
                r.drop((*path, "bandwidth_min"), "bandwidth_min", lo,
                       f"ZigZag rounds each transfer period up to whole {lo}-bit accesses, which the {words} do "
                       "not fill: coexplore counts words without that rounding")
        out.append({"name": p.get("name", j), "type": kind, "width": width, "alloc": alloc})
    return out


def _port_width(ports: list[dict[str, Any]], op: str, dirs: tuple[str, ...], name: str, r: _Reader) -> int | None:
    """Width of the port serving ``op`` in ``dirs[0]``; the other directions (an output's
    reads to above, writes from below) must be served at the same width."""
    widths = {}
    for d in dirs:
        served = [p for p in ports if (op, d) in p["alloc"]]
        if len(served) > 1:
            raise r.error(("memories", name, "ports"), f"{MEMORY_OPERAND[op]}, {d} is allocated to "
                                                       f"{len(served)} ports; ZigZag serves a direction by one")
        if served:
            widths[d] = served[0]["width"]
    if dirs[0] not in widths:
        return None
    if len(set(widths.values())) > 1:
        raise r.error(("memories", name, "ports"), f"operand {MEMORY_OPERAND[op]}'s directions {sorted(widths)} are "
                                                   f"served by ports of different widths {widths}: an ArchSpec "
                                                   "level has one energy per word and operand for each of reads and "
                                                   "writes")
    return widths[dirs[0]]


def _level_bandwidth(group: list[tuple[str, Mapping[str, Any], list[dict[str, Any]]]], ops: list[str],
                     bits: dict[str, int]) -> tuple[dict[str, float | None], str]:
    """The level's shared, read and write bandwidths, or (``{}``, why not) where its
    ports cannot be expressed."""
    if len(group) > 1:
        return {}, (f"memories {[n for n, _, _ in group]} of different operands share the level, each with its "
                    "own ports; an ArchSpec level limits all its operands together")
    ((_, _, ports),) = group
    widths = {bits[op] for op in ops}
    if len(widths) > 1:
        return {}, f"its operands {ops} have different word sizes, so a width in bits is no one number of words"
    b = widths.pop()
    kinds = sorted(p["type"] for p in ports)
    reads = {(op, d) for p in ports for op, d in p["alloc"] if d in _READS}
    writes = {(op, d) for p in ports for op, d in p["alloc"] if d in _WRITES}
    if kinds == ["read_write"]:
        return {"shared": ports[0]["width"] / b, "read": None, "write": None}, ""
    if kinds == ["read", "write"]:
        rp = next(p for p in ports if p["type"] == "read")
        wp = next(p for p in ports if p["type"] == "write")
        if rp["alloc"] == reads and wp["alloc"] == writes:
            return {"shared": None, "read": rp["width"] / b, "write": wp["width"] / b}, ""
    listed = ", ".join(f"{p['name']}: {p['type']}" for p in ports)
    return {}, (f"its ports ({listed}) are not one read_write port, nor one read port for every read and one "
                "write port for every write")


def _arch_from_zigzag(hw: dict[str, Any], bits: dict[str, int], r: _Reader) -> Translation:
    r.keys(hw, _TOP_KEYS, (), "accelerator")
    if hw.get("dataflows"):
        r.drop(("dataflows",), "dataflows", hw["dataflows"])
    oa = r.keys(hw["operational_array"], _ARRAY_KEYS, ("operational_array",), "operational_array")
    for k, neutral in _IMC_NEUTRAL.items():
        if k in oa and oa[k] not in neutral:
            raise r.error(("operational_array", k), f"{shown(oa[k])}: in-memory compute (ZigZag's IMC cost model) "
                                                    "cannot be expressed; coexplore's array is one of digital MACs")
    if oa.get("systolic_dimensions"):
        r.drop(("operational_array", "systolic_dimensions"), "systolic_dimensions", oa["systolic_dimensions"])
    if oa.get("input_precision") is not None and list(oa["input_precision"]) != [bits["I"], bits["W"]]:
        r.drop(("operational_array", "input_precision"), "input_precision", oa["input_precision"],
               f"{IGNORABLE['input_precision']} ({bits['I']} and {bits['W']} here)")
    dims = list(oa["dimensions"])
    sizes = [r.whole(x, ("operational_array", "sizes", i)) for i, x in enumerate(oa["sizes"])]
    if len(dims) != len(sizes) or len(set(dims)) != len(dims):
        raise r.error(("operational_array",), f"dimensions {dims} and sizes {sizes} must be lists of the same "
                                              "length, each dimension once")
    size_of = dict(zip(dims, sizes))
    mems = hw["memories"]
    if not isinstance(mems, Mapping) or not mems:
        raise r.error(("memories",), "the accelerator has no memories")
    names = list(mems)
    entries = []
    ports_of: dict[str, list[dict[str, Any]]] = {}
    for i, name in enumerate(names):
        mem = r.keys(mems[name], _MEMORY_KEYS, ("memories", name), "memory")
        path = ("memories", name)
        unknown = set(mem["operands"]) - set(OPERAND_OF)
        if unknown:
            raise r.error((*path, "operands"), f"operands {sorted(unknown)} are not I1, I2, O")
        if mem.get("auto_cost_extraction"):
            raise r.error((*path, "auto_cost_extraction"), "costs and area from CACTI (ZigZag's extraction) are not "
                                                           "computed here; give r_cost, w_cost and area")
        if mem.get("force_double_buffering"):
            raise r.error((*path, "force_double_buffering"), "True: ZigZag's forced double buffering (half the "
                                                             "memory per tile) cannot be expressed")
        for k in ("latency", "min_r_granularity", "min_w_granularity"):
            if k in mem:
                r.drop((*path, k), k, mem[k])
        served_raw = mem["served_dimensions"]
        if not isinstance(served_raw, list) or not set(served_raw) <= set(dims):
            raise r.error((*path, "served_dimensions"), f"{shown(served_raw)} is not a list of the array's "
                                                        f"dimensions {dims}")
        served = frozenset(dims) if i == len(names) - 1 else frozenset(served_raw)
        ops = [OPERAND_OF[o] for o in mem["operands"]]
        if len(set(ops)) != len(ops) or not ops:
            raise r.error((*path, "operands"), f"{shown(mem['operands'])}: each operand once, at least one")
        ports_of[name] = _ports(mem, name, r, bits)
        entries.append((len(served), i, name, served, ops))
    last_mem = names[-1]
    if {OPERAND_OF[o] for o in mems[last_mem]["operands"]} != set(OPERANDS):
        raise r.error(("memories", last_mem, "operands"), "the last memory is the backing store and must hold I1, "
                                                          "I2 and O")
    entries.sort()
    groups: list[list[tuple[str, frozenset, list[str]]]] = []
    for _, i, name, served, ops in entries:
        g = groups[-1] if groups else None
        if (g is not None and i != len(names) - 1 and g[0][1] == served and len(ops) == 1
                and all(len(o) == 1 for _, _, o in g) and ops[0] not in {o[0] for _, _, o in g}):
            g.append((name, served, ops))
        else:
            groups.append([(name, served, ops)])
    prev: frozenset = frozenset()
    levels, axes, level_of = [], {}, {}
    for li, g in enumerate(groups):
        served = g[0][1]
        if not prev <= served:
            raise r.error(("memories", g[0][0], "served_dimensions"),
                          f"{sorted(served)} and the {sorted(prev)} of the level below are not nested; no linear "
                          "memory hierarchy represents them")
        new = [d for d in dims if d in served and d not in prev]
        if len(new) > 2:
            raise r.error(("memories", g[0][0], "served_dimensions"),
                          f"level {g[0][0]!r} adds {len(new)} array dimensions {new}; an ArchSpec fanout has two axes")
        fan = [size_of[d] for d in new] + [1, 1]
        for ax, d in zip(("x", "y"), new):
            axes[(li, ax)] = d
        prev = served
        ops = [op for _, _, o in g for op in o]
        gm = [mems[n] for n, _, _ in g]
        last = li == len(groups) - 1
        if last:
            cap: Any = None
        elif len(g) == 1 and len(ops) > 1:
            if len({bits[o] for o in ops}) > 1:
                raise r.error(("memories", g[0][0], "size"),
                              f"shared by {ops} of word sizes {[bits[o] for o in ops]} bits: an ArchSpec shared "
                              "capacity counts every operand's words alike; cannot be expressed")
            cap = r.whole(gm[0]["size"], ("memories", g[0][0], "size")) // bits[ops[0]]
        else:
            cap = {o[0]: r.whole(m["size"], ("memories", n, "size")) // bits[o[0]] for (n, _, o), m in zip(g, gm)}
        rd, wr = {}, {}
        area = 0.0
        instances = math.prod(size_of[d] for d in dims if d not in served)
        for (n, _, o), m in zip(g, gm):
            for op in o:
                rw = _port_width(ports_of[n], op, ("tl", "th"), n, r)
                ww = _port_width(ports_of[n], op, ("fh", "fl"), n, r)
                if rw is None or ww is None:
                    d = "tl" if rw is None else "fh"
                    raise r.error(("memories", n, "ports"), f"no port allocated to '{MEMORY_OPERAND[op]}, {d}'")
                for key, width, out in (("r_cost", rw, rd), ("w_cost", ww, wr)):
                    if m.get(key) is None:
                        raise r.error(("memories", n, key), "no cost given (ZigZag's CACTI extraction is not run)")
                    out[op] = r.real(m[key], ("memories", n, key)) * bits[op] / width
            if m.get("area") is not None:
                area += r.real(m["area"], ("memories", n, "area")) * instances
        group = [(n, m, ports_of[n]) for (n, _, _), m in zip(g, gm)]
        limits, why = _level_bandwidth(group, ops, bits)
        if not limits:
            level = "+".join(n for n, _, _ in g)
            r.drop(("memories", g[0][0], "ports"), "port_bandwidth", [p["name"] for _, _, ps in group for p in ps],
                   f"level {level!r}: {why}; with port_bandwidth ignored the level has no bandwidth limit",
                   line=", ".join(f"memories.{n}.ports" for n, _, _ in g) + f": level {level!r} left without a "
                        f"bandwidth limit ({why})")
            limits = {"shared": None, "read": None, "write": None}
        levels.append(MemoryLevel("+".join(n for n, _, _ in g), tensors=frozenset(ops), capacity_words=cap,
                                  instances=instances, fanout_x=fan[0], fanout_y=fan[1], read_energy_pj=rd,
                                  write_energy_pj=wr, bandwidth_words_per_cycle=limits["shared"],
                                  read_bandwidth_words_per_cycle=limits["read"],
                                  write_bandwidth_words_per_cycle=limits["write"], area_mm2=area))
        for n, _, _ in g:
            level_of[n] = li
    if "unit_energy" not in oa:
        raise r.error(("operational_array",), "no unit_energy (the MAC's energy)")
    n_macs = math.prod(sizes)
    unit_area = r.real(oa["unit_area"], ("operational_array", "unit_area")) if oa.get("unit_area") is not None else 0.0
    arch = ArchSpec(str(hw.get("name", "zigzag")), tuple(levels),
                    mac_energy_pj=r.real(oa["unit_energy"], ("operational_array", "unit_energy")),
                    word_bits=bits["I"], area_mm2=sum(lv.area_mm2 for lv in levels) + unit_area * n_macs,
                    kind="zigzag")
    return Translation(arch, level_of, tuple(tuple(n for n, _, _ in g) for g in groups), axes, tuple(r.dropped))


def load_zigzag_accelerator(path: str | Path, bits: int | Mapping[str, int] = 8, *,
                            ignore: Iterable[str] = ()) -> Translation:
    """:func:`arch_from_zigzag` of a ZigZag 3.x accelerator file (``hardware/*.yaml``); its
    errors name the file and line."""
    from design_space.yamlio import load_yaml_file

    hw, lines = load_yaml_file(path)   # bounded, one-line errors naming file and line (a ValueError)
    if not isinstance(hw, dict) or "memories" not in hw or "operational_array" not in hw:
        raise ValueError(f"{path}: a ZigZag accelerator has 'memories' and 'operational_array'")
    return arch_from_zigzag(hw, bits, ignore=ignore, lines=lines)
