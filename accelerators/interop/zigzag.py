"""ZigZag 3.9.1's accelerator schema (a parsed ``zigzag/inputs/hardware/*.yaml``) as an
:class:`~accelerators.arch.ArchSpec`.

ZigZag (Mei et al., IEEE TC 2021; ``zigzag-dse`` on PyPI) describes an accelerator as an
operational array (named dimensions and sizes, a MAC energy) and a list of memories, each
with the operands it holds (``I1`` inputs, ``I2`` weights, ``O`` outputs), a size in
bits, per-access read and write costs, ports with widths and allocations, and the array
dimensions it is shared over (``served_dimensions``). :func:`arch_from_zigzag` states its
rules; what it cannot express (non-nested ``served_dimensions``, a level that unrolls
more than two array dimensions, operands other than I1/I2/O) is refused with a
``ValueError`` naming the memory. The result is checked count for count against ZigZag on
its own bundled accelerators by :mod:`experiments.validation.zigzag_bundled`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelerators.arch import ArchSpec, MemoryLevel
from accelerators.interop.values import real, shown

__all__ = ["MEMORY_OPERAND", "OPERAND_OF", "Translation", "arch_from_zigzag", "load_zigzag_accelerator"]

#: ZigZag's memory operand -> coexplore's operand (``I1`` inputs, ``I2`` weights, ``O`` outputs)
OPERAND_OF = {"I1": "I", "I2": "W", "O": "O"}
#: coexplore's operand -> ZigZag's memory operand
MEMORY_OPERAND = {v: k for k, v in OPERAND_OF.items()}


@dataclass(frozen=True)
class Translation:
    """A ZigZag accelerator as an ArchSpec, and how its parts correspond.

    Attributes:
        arch: the ArchSpec (levels innermost first).
        level_of: ZigZag memory name -> our level index.
        memories: per level, the ZigZag memories it stands for.
        axes: ``(level, "x" | "y")`` -> the ZigZag operational-array dimension unrolled
            by that level's fanout axis.
    """

    arch: ArchSpec
    level_of: dict[str, int]
    memories: tuple[tuple[str, ...], ...]
    axes: dict[tuple[int, str], str]


def _real(v: Any, where: str) -> float:
    return real(v, where, "ZigZag")


def _whole(v: Any, where: str) -> int:
    """A positive whole number (a size in bits, a port width, an array size)."""
    if isinstance(v, str) and len(v) <= 100:   # a number written as a string, or 1e10 (YAML 1.1: a string)
        try:
            v = float(v)
        except ValueError:
            pass
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():   # 1.0e10 written as a float
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"ZigZag {where}: expected a positive whole number, got {shown(v)}")
    return v


def _port_bits(mem: dict[str, Any], name: str, mem_op: str, direction: str) -> int:
    """Width in bits of the port that serves ``mem_op`` in ``direction`` (ZigZag's
    ``tl`` read to the level below, ``fh`` write from the level above)."""
    for port in mem["ports"]:
        if f"{mem_op}, {direction}" in [a.replace(" ", "").replace(",", ", ") for a in port["allocation"]]:
            return _whole(port.get("bandwidth_max"), f"memory {name!r} port {port.get('name')!r} bandwidth_max")
    raise ValueError(f"ZigZag memory {name!r}: no port allocated to '{mem_op}, {direction}'")


def arch_from_zigzag(hw: dict[str, Any], bits: int = 8) -> Translation:
    """ZigZag's accelerator schema (a parsed ``hardware/*.yaml``) as an ArchSpec.

    Rules: a memory serving the operational-array dimensions ``S`` (its
    ``served_dimensions``) has ``prod(sizes of the other dimensions)`` instances, and the
    fanout below it spans ``S``; memories are ordered by ``S`` (which must be nested: each
    set contains the previous) and then by their order in the file, the last memory is the
    backing store. Consecutive single-operand memories with the same ``S`` and different
    operands form one level with a capacity per operand; a memory of several operands is a
    level of its own with a shared capacity. A level's fanout spans the dimensions its
    ``S`` adds to the level below it (X the first, Y the second; more than two is refused).
    Capacities are ``size`` bits // ``bits``; per-word energies are ``r_cost`` (``w_cost``)
    x ``bits`` / the width of the port serving that operand's reads to the level below
    (writes from above); a level's bandwidth (words per cycle per instance) is the sum of
    its memories' port widths over ``bits``; the MAC energy is ``unit_energy``.

    ``bits`` is the one word size of every operand (an ArchSpec has one per
    architecture); the default, 8, is the width of the input and weight register ports of
    ZigZag's bundled examples.
    """
    if not isinstance(bits, int) or bits < 1:
        raise ValueError(f"bits must be a positive integer, got {bits!r}")
    try:
        return _arch_from_zigzag(hw, bits)
    except KeyError as e:
        raise ValueError(f"ZigZag accelerator {hw.get('name')!r}: a memory, port or the operational_array "
                         f"lacks the key {e}") from None


def _arch_from_zigzag(hw: dict[str, Any], bits: int) -> Translation:
    oa = hw["operational_array"]
    dims = list(oa["dimensions"])
    sizes = [_whole(x, f"operational_array.sizes[{i}]") for i, x in enumerate(oa["sizes"])]
    size_of = dict(zip(dims, sizes))
    names = list(hw["memories"])
    if not names:
        raise ValueError(f"ZigZag accelerator {hw.get('name')!r} has no memories")
    entries = []
    for i, name in enumerate(names):
        mem = hw["memories"][name]
        unknown = set(mem["operands"]) - set(OPERAND_OF)
        if unknown:
            raise ValueError(f"ZigZag memory {name!r}: operands {sorted(unknown)} are not I1, I2, O")
        served = frozenset(dims) if i == len(names) - 1 else frozenset(mem["served_dimensions"])
        entries.append((len(served), i, name, served, [OPERAND_OF[o] for o in mem["operands"]]))
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
            raise ValueError(f"ZigZag accelerator {hw.get('name')!r}: served_dimensions {sorted(prev)} and "
                             f"{sorted(served)} are not nested; no linear memory hierarchy represents them")
        new = [d for d in dims if d in served and d not in prev]
        if len(new) > 2:
            raise ValueError(f"ZigZag accelerator {hw.get('name')!r}: level {g[0][0]!r} adds {len(new)} array "
                             f"dimensions {new}; an ArchSpec fanout has two axes")
        fan = [size_of[d] for d in new] + [1, 1]
        for ax, d in zip(("x", "y"), new):
            axes[(li, ax)] = d
        prev = served
        ops = [op for _, _, o in g for op in o]
        mems = [hw["memories"][n] for n, _, _ in g]
        last = li == len(groups) - 1
        if last:
            cap: Any = None
        elif len(g) == 1 and len(ops) > 1:
            cap = _whole(mems[0]["size"], f"memory {g[0][0]!r} size") // bits
        else:
            cap = {o[0]: _whole(m["size"], f"memory {n!r} size") // bits for (n, _, o), m in zip(g, mems)}
        rd, wr = {}, {}
        for (n, _, o), m in zip(g, mems):
            for op in o:
                rd[op] = _real(m["r_cost"], f"memory {n!r} r_cost") * bits / _port_bits(m, n, MEMORY_OPERAND[op], "tl")
                wr[op] = _real(m["w_cost"], f"memory {n!r} w_cost") * bits / _port_bits(m, n, MEMORY_OPERAND[op], "fh")
        bw = sum(_whole(p.get("bandwidth_max"), f"memory {n!r} port {p.get('name')!r} bandwidth_max")
                 for (n, _, _), m in zip(g, mems) for p in m["ports"]) / bits
        instances = math.prod(size_of[d] for d in dims if d not in served)
        levels.append(MemoryLevel("+".join(n for n, _, _ in g), tensors=frozenset(ops), capacity_words=cap,
                                  instances=instances, fanout_x=fan[0], fanout_y=fan[1], read_energy_pj=rd,
                                  write_energy_pj=wr, bandwidth_words_per_cycle=bw))
        for n, _, _ in g:
            level_of[n] = li
    arch = ArchSpec(str(hw.get("name", "zigzag")), tuple(levels), mac_energy_pj=_real(oa["unit_energy"], "operational_array.unit_energy"),
                    word_bits=bits)
    return Translation(arch, level_of, tuple(tuple(n for n, _, _ in g) for g in groups), axes)


def load_zigzag_accelerator(path: str | Path, bits: int = 8) -> Translation:
    """:func:`arch_from_zigzag` of a ZigZag 3.x accelerator file (``hardware/*.yaml``)."""
    from design_space.yamlio import load_yaml_file

    hw = load_yaml_file(path)[0]   # bounded, one-line errors naming file and line (a ValueError)
    if not isinstance(hw, dict) or "memories" not in hw or "operational_array" not in hw:
        raise ValueError(f"{path}: a ZigZag accelerator has 'memories' and 'operational_array'")
    return arch_from_zigzag(hw, bits)
