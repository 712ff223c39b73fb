"""The loop-nest model against ZigZag 3.9.1 on ZigZag's OWN example accelerators.

:mod:`experiments.benchmarks.zigzag_crossval` writes coexplore's Eyeriss v1 in ZigZag's
schemas; this module goes the other way. It reads ZigZag's bundled ``eyeriss_like``,
``tpu_like`` and ``tesla_npu_like`` accelerators from the installed package
(``zigzag/inputs/hardware/*.yaml``, via ``zigzag_counts.py --bundled`` inside
``.venv-zigzag``) and translates each into an :class:`~accelerators.arch.ArchSpec`
(:func:`arch_from_zigzag`); coexplore's heuristic mapper (energy) maps each layer on it;
the mapping is written back as ZigZag's temporal and spatial mapping of the SAME YAML
accelerator (:func:`zigzag_case`), and ZigZag's ``CostModelEvaluation`` evaluates it.

ZigZag runs each case on the accelerator as shipped. The counts compared with ours are its
element moves per memory and operand (``DATA_ELEM_MOVE_COUNT``: what its ports move is
counted apart, in port-wide words, for its energy and its latency with port stalls,
``latency_total2``).

The translation (see :func:`arch_from_zigzag` for the rules) has to approximate in these
places, each stated in docs/MODEL.md: one precision for every operand (coexplore has one
word size per architecture; 8 bits here, the width of these accelerators' input and
weight register ports); per-word energies are ZigZag's per-access costs divided by the words
one port access moves (ZigZag charges whole port-wide accesses); memories of different
operands with the same ``served_dimensions`` become one level with a capacity per operand
(they keep their own energies, but share that level's temporal loops in the mapping); a
level's bandwidth is the sum of its memories' port widths; ZigZag's ``systolic_dimensions``
(``tpu_like``) are not translated (the latency compared is ZigZag's ideal temporal cycles).
Accelerators whose memories' ``served_dimensions`` are not nested (``edge_tpu_like``,
``ascend_like``, ``meta_prototype``: a weight register shared over D3, D4 and an output
register shared over D2) have no linear hierarchy and are refused with a ValueError.

Run: ``python -m experiments.benchmarks.zigzag_bundled [--quick] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from accelerators.arch import ArchSpec, MemoryLevel
from evaluators.loopnest import LOOPNEST, evaluate_batch
from experiments.benchmarks.zigzag_crossval import (
    DIM,
    LAYER_OP,
    OPS,
    SCRIPT,
    ZIGZAG_PYTHON,
    count_rows,
    ratio_text,
    run_zigzag,
    unique_convs,
    zigzag_workload,
)
from mappers.base import NoLegalMapping
from mappers.heuristic import HeuristicMapper, descend
from mappers.mapping import Mapping, MappingBatch
from mappers.mapping_space import MappingSpaceInfo, keep_array
from mappers.orders import best_orders
from mappers.workloads import Layer
from mappers.zoo import mobilenet_v2, resnet50

ACCELERATORS = ("eyeriss_like", "tpu_like", "tesla_npu_like")
"""ZigZag's bundled examples used here (``zigzag/inputs/hardware/<name>.yaml``)."""

PRECISION_BITS = 8
"""Bits of every operand in both tools: the width of the bundled accelerators' input and
weight register ports (coexplore has one word size per architecture, see the module
docstring)."""

#: ZigZag's memory operand -> ours
OUR_OP = {"I1": "I", "I2": "W", "O": "O"}
MEM_OP = {v: k for k, v in OUR_OP.items()}


def load_bundled(names: tuple[str, ...] = ACCELERATORS, python: Path = ZIGZAG_PYTHON) -> dict[str, Any]:
    """ZigZag's bundled accelerators and mapping files, parsed inside ``.venv-zigzag``."""
    proc = subprocess.run([str(python), str(SCRIPT), "--bundled", *names], capture_output=True, text=True,
                          timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"zigzag_counts.py --bundled failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


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


def _port_bits(mem: dict[str, Any], name: str, mem_op: str, direction: str) -> int:
    """Width in bits of the port that serves ``mem_op`` in ``direction`` (ZigZag's
    ``tl`` read to the level below, ``fh`` write from the level above)."""
    for port in mem["ports"]:
        if f"{mem_op}, {direction}" in [a.replace(" ", "").replace(",", ", ") for a in port["allocation"]]:
            return int(port["bandwidth_max"])
    raise ValueError(f"ZigZag memory {name!r}: no port allocated to '{mem_op}, {direction}'")


def arch_from_zigzag(hw: dict[str, Any], bits: int = PRECISION_BITS) -> Translation:
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
    """
    if not isinstance(bits, int) or bits < 1:
        raise ValueError(f"bits must be a positive integer, got {bits!r}")
    oa = hw["operational_array"]
    dims, sizes = list(oa["dimensions"]), [int(x) for x in oa["sizes"]]
    size_of = dict(zip(dims, sizes))
    names = list(hw["memories"])
    if not names:
        raise ValueError(f"ZigZag accelerator {hw.get('name')!r} has no memories")
    entries = []
    for i, name in enumerate(names):
        mem = hw["memories"][name]
        unknown = set(mem["operands"]) - set(OUR_OP)
        if unknown:
            raise ValueError(f"ZigZag memory {name!r}: operands {sorted(unknown)} are not I1, I2, O")
        served = frozenset(dims) if i == len(names) - 1 else frozenset(mem["served_dimensions"])
        entries.append((len(served), i, name, served, [OUR_OP[o] for o in mem["operands"]]))
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
            cap = int(mems[0]["size"]) // bits
        else:
            cap = {o[0]: int(m["size"]) // bits for (_, _, o), m in zip(g, mems)}
        rd, wr = {}, {}
        for (n, _, o), m in zip(g, mems):
            for op in o:
                rd[op] = float(m["r_cost"]) * bits / _port_bits(m, n, MEM_OP[op], "tl")
                wr[op] = float(m["w_cost"]) * bits / _port_bits(m, n, MEM_OP[op], "fh")
        bw = sum(int(p["bandwidth_max"]) for m in mems for p in m["ports"]) / bits
        instances = math.prod(size_of[d] for d in dims if d not in served)
        levels.append(MemoryLevel("+".join(n for n, _, _ in g), tensors=frozenset(ops), capacity_words=cap,
                                  instances=instances, fanout_x=fan[0], fanout_y=fan[1], read_energy_pj=rd,
                                  write_energy_pj=wr, bandwidth_words_per_cycle=bw))
        for n, _, _ in g:
            level_of[n] = li
    arch = ArchSpec(str(hw.get("name", "zigzag")), tuple(levels), mac_energy_pj=float(oa["unit_energy"]),
                    word_bits=bits)
    return Translation(arch, level_of, tuple(tuple(n for n, _, _ in g) for g in groups), axes)


def zigzag_case(layer: Layer, hw: dict[str, Any], tr: Translation, mapping: Mapping,
                bits: int = PRECISION_BITS) -> dict[str, Any]:
    """The layer and mapping on the YAML accelerator ``hw`` in ZigZag's schemas: each
    operand's temporal loops at the memory of the level that holds them (loops of a level
    without that operand go to its next memory up), innermost first; the spatial loops on
    the array dimensions of :attr:`Translation.axes` (an unused dimension is pinned to a
    factor of 1)."""
    arch = tr.arch
    spatial: dict[str, list[str]] = {d: [] for d in hw["operational_array"]["dimensions"]}
    for (li, ax), d_zz in tr.axes.items():
        facs = (mapping.spatial_x if ax == "x" else mapping.spatial_y)[li]
        spatial[d_zz] += [f"{DIM[d]}, {f}" for d, f in facs.items() if f > 1]
    for li in range(arch.n_levels):
        for ax in ("x", "y"):
            facs = (mapping.spatial_x if ax == "x" else mapping.spatial_y)[li]
            if (li, ax) not in tr.axes and any(f > 1 for f in facs.values()):
                raise ValueError(f"mapping unrolls {facs} on level {li} axis {ax}, which has no array dimension")
    spatial = {k: v or ["K, 1"] for k, v in spatial.items()}
    temporal: dict[str, list[list[Any]]] = {}
    for op in OPS:
        levels: list[list[Any]] = []
        pending: list[Any] = []
        for lv in range(arch.n_levels):
            order = mapping.full_order(lv, list(layer.dims))   # outermost first
            pending += [[DIM[d], mapping.temporal[lv][d]] for d in reversed(order)
                        if mapping.temporal[lv].get(d, 1) > 1]
            if mapping.keeps(arch, lv, op):
                levels.append(pending)
                pending = []
        temporal[LAYER_OP[op]] = levels
    return {
        "accelerator": hw,
        "workload": zigzag_workload(layer, bits),
        "mapping": [{"name": n, "spatial_mapping": spatial,
                     "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"}} for n in ("default", "Conv")],
        "temporal": temporal,
    }


def compare(layer: Layer, hw: dict[str, Any], tr: Translation, mapping: Mapping,
            zz: dict[str, Any]) -> dict[str, Any]:
    """Per ZigZag memory and operand, both tools' reads and writes (ZigZag's element moves
    ``rd_out_to_low + rd_out_to_high`` and ``wr_in_by_high + wr_in_by_low``; ours under the
    default accounting and under ``accounting="zigzag"``, the ``mode_`` fields), both
    tools' energy (each its own) and cycles."""
    arch = tr.arch
    batch = MappingBatch.from_mappings(layer, arch, [mapping])
    res = evaluate_batch(layer, arch, batch)
    res_zz = evaluate_batch(layer, arch, batch, accounting="zigzag")
    rows = []
    zz_priced = float(res.macs_executed[0]) * arch.mac_energy_pj
    for ti, op in enumerate(OPS):
        mems = [n for n in hw["memories"] if MEM_OP[op] in hw["memories"][n]["operands"]]
        for zi, name in enumerate(mems):
            lv = tr.level_of[name]
            acc = zz["elem_accesses"][LAYER_OP[op]][zi]
            z_reads = acc["rd_out_to_low"] + acc["rd_out_to_high"]
            z_writes = acc["wr_in_by_high"] + acc["wr_in_by_low"]
            level = arch.levels[lv]
            zz_priced += z_reads * level.read_energy_pj[op] + z_writes * level.write_energy_pj[op]
            rows.append(dict(memory=name, operand=op, ours_reads=float(res.reads[0][lv][ti]),
                             mode_reads=float(res_zz.reads[0][lv][ti]), zigzag_reads=z_reads,
                             ours_writes=float(res.writes[0][lv][ti]), mode_writes=float(res_zz.writes[0][lv][ti]),
                             zigzag_writes=z_writes))
    return dict(layer=layer.name, dims=dict(layer.dims), rows=rows, ours_energy_pj=float(res.energy_pj[0]),
                mode_energy_pj=float(res_zz.energy_pj[0]),
                zigzag_energy_pj=zz["energy_total"], zigzag_counts_at_our_energies_pj=zz_priced,
                ours_cycles=float(res.compute_cycles[0]), zigzag_cycles=zz["ideal_temporal_cycle"],
                ours_latency=float(res.latency_cycles[0]), zigzag_latency_total2=zz["latency_total2"])


ZZ_DIM = {v: k for k, v in DIM.items()}


def spatial_of(mapping_file: list[dict[str, Any]] | None) -> dict[str, list[tuple[str, int]]] | None:
    """The ``default`` entry's spatial unrolling of a ZigZag mapping file: array dimension
    -> ``[(our dimension, factor), ...]``; ``None`` without a file."""
    if not mapping_file:
        return None
    entry = next((e for e in mapping_file if e.get("name") == "default"), None)
    if entry is None:
        raise ValueError("the ZigZag mapping file has no 'default' entry")
    out: dict[str, list[tuple[str, int]]] = {}
    for d_zz, loops in entry["spatial_mapping"].items():
        for loop in loops:
            dim, f = (x.strip() for x in loop.split(","))
            if dim not in ZZ_DIM:
                raise ValueError(f"spatial loop {loop!r} on {d_zz}: dimension {dim!r} is not one of {sorted(ZZ_DIM)}")
            out.setdefault(d_zz, []).append((ZZ_DIM[dim], int(f)))
    return out


def map_layer(layer: Layer, tr: Translation, spatial: dict[str, list[tuple[str, int]]] | None) -> Mapping:
    """The fixed mapping of a case. ``spatial`` (ZigZag's mapping file, where it ships
    one): that unrolling, each factor cut to the largest divisor of the layer's dimension
    (what is left of it) not above it; then coexplore's heuristic descent (energy) over the
    temporal factors and loop orders only, alternating with exact loop orders as
    :class:`~mappers.heuristic.HeuristicMapper` does. Without ``spatial``: the
    :class:`~mappers.heuristic.HeuristicMapper` mapping, its own unrolling included."""
    arch = tr.arch
    if spatial is None:
        return HeuristicMapper().map(layer, arch, LOOPNEST, "energy").mapping
    info = MappingSpaceInfo(layer, arch, "divisors", False)
    info.sx, info.sy = {}, {}               # the unrolling is fixed: descend over temporal slots only
    dims = layer.dim_names
    L, D = arch.n_levels, len(dims)
    T, SX, SY = (np.ones((L, D), dtype=np.int64) for _ in range(3))
    remaining = dict(layer.dims)
    where = {d_zz: key for key, d_zz in tr.axes.items()}
    for d_zz, loops in spatial.items():
        if d_zz not in where:
            raise ValueError(f"the mapping file unrolls {d_zz}, which is not an array dimension of {arch.name!r}")
        li, ax = where[d_zz]
        for d, f in loops:
            f = max(x for x in range(1, min(f, remaining[d]) + 1) if remaining[d] % x == 0)
            (SX if ax == "x" else SY)[li, dims.index(d)] *= f
            remaining[d] //= f
    for d in dims:
        T[L - 1, dims.index(d)] = remaining[d]
    start = MappingBatch(dims, T[None], SX[None], SY[None], np.tile(np.arange(D), (L, 1))[None],
                         keep_array(info)[0][None])
    best, best_s, _ = descend(layer, arch, LOOPNEST, start, info, "energy")
    while np.isfinite(best_s):
        values, orders, _ = best_orders(layer, arch, LOOPNEST, best, "energy")
        if not values[0] < best_s * (1 - 1e-12):
            break
        best, best_s, _ = descend(layer, arch, LOOPNEST, MappingBatch(best.dims, best.temporal, best.spatial_x,
                                                                       best.spatial_y, orders, best.keep),
                                  info, "energy")
    if not np.isfinite(best_s):
        raise NoLegalMapping(f"no legal mapping of {layer.name!r} on {arch.name!r} with unrolling {spatial}")
    return best.mapping(0)


def select_layers(quick: bool) -> list[Layer]:
    """The first 5 unique ungrouped convolutions of ResNet-50 and the first 3 of
    MobileNetV2 (8 layers x 3 accelerators = 24 cases); ``quick``: the 2nd and 3rd of
    ResNet-50 and the 2nd of MobileNetV2."""
    r, m = unique_convs(resnet50()), unique_convs(mobilenet_v2())
    return r[1:3] + m[1:2] if quick else r[:5] + m[:3]



def run(names: tuple[str, ...], layers: list[Layer], python: Path = ZIGZAG_PYTHON,
        log: Any = print) -> list[dict[str, Any]]:
    """Every (accelerator, layer) case in both tools; one result dict per case."""
    bundled = load_bundled(names, python)
    metas, cases = [], []
    for name in names:
        hw = bundled["accelerators"][name]["hardware"]
        tr = arch_from_zigzag(hw)
        spatial = spatial_of(bundled["accelerators"][name]["mapping"])
        for layer in layers:
            m = map_layer(layer, tr, spatial)
            metas.append((name, hw, tr, layer, m))
            cases.append(zigzag_case(layer, hw, tr, m))
    zz = run_zigzag(cases, python)
    out = []
    for (name, hw, tr, layer, m), native in zip(metas, zz):
        err = native.get("error")
        if err:
            out.append(dict(accelerator=name, layer=layer.name, error=err))
            log(f"{name} {layer.name}: ZigZag error: {err}")
            continue
        c = compare(layer, hw, tr, m, native)
        c.update(accelerator=name, mapping_repr=repr(m))
        out.append(c)
        log(f"\n{name} {layer.name} {layer.dims}")
        for line in count_rows(c["rows"], "memory", 10):
            log(line)
        log(f"  energy pJ: ours {c['ours_energy_pj']:.6g} (zigzag mode {c['mode_energy_pj']:.6g}), zigzag "
            f"{c['zigzag_energy_pj']:.6g} (ratio {ratio_text(c['ours_energy_pj'], c['zigzag_energy_pj'])}, zigzag mode "
            f"{ratio_text(c['mode_energy_pj'], c['zigzag_energy_pj'])}); zigzag's counts at our per-word energies "
            f"{c['zigzag_counts_at_our_energies_pj']:.6g} (ours / that "
            f"{ratio_text(c['ours_energy_pj'], c['zigzag_counts_at_our_energies_pj'])})")
        log(f"  cycles: ours {c['ours_cycles']:.0f}, zigzag {c['zigzag_cycles']:.0f}; with bandwidth: ours "
            f"{c['ours_latency']:.0f}, zigzag latency_total2 {c['zigzag_latency_total2']:.0f}")
    return out


def summary(results: list[dict[str, Any]]) -> str:
    ok = [c for c in results if "error" not in c]
    if not ok:
        return "no case ran"
    exact = sum(r["ours_reads"] == r["zigzag_reads"] and r["ours_writes"] == r["zigzag_writes"]
                for c in ok for r in c["rows"])
    n_rows = sum(len(c["rows"]) for c in ok)
    e = [c["ours_energy_pj"] / c["zigzag_energy_pj"] for c in ok]
    p = [c["ours_energy_pj"] / c["zigzag_counts_at_our_energies_pj"] for c in ok]
    em = [c["mode_energy_pj"] / c["zigzag_energy_pj"] for c in ok]
    lat = [c["ours_latency"] / c["zigzag_latency_total2"] for c in ok]
    port = [c["zigzag_energy_pj"] / c["zigzag_counts_at_our_energies_pj"] for c in ok]
    mode = sum(r["mode_reads"] == r["zigzag_reads"] and r["mode_writes"] == r["zigzag_writes"]
               for c in ok for r in c["rows"])
    cyc = sum(c["ours_cycles"] == c["zigzag_cycles"] for c in ok)
    more = sum(r["ours_reads"] > r["zigzag_reads"] or r["ours_writes"] > r["zigzag_writes"]
               for c in ok for r in c["rows"])
    return (f"{len(ok)} of {len(results)} cases ran in ZigZag; (memory, operand) rows with reads and writes equal: "
            f"{exact} of {n_rows} (under accounting='zigzag': {mode} of {n_rows}); rows where coexplore counts more: "
            f"{more}; cycles equal in {cyc} of {len(ok)}; "
            f"energy ours/zigzag {min(e):.3f}-{max(e):.3f} (median {float(np.median(e)):.3f}; under "
            f"accounting='zigzag' {min(em):.3f}-{max(em):.3f}, median {float(np.median(em)):.3f}); ours/(zigzag's "
            f"counts at our per-word energies) {min(p):.3f}-{max(p):.3f} (median {float(np.median(p)):.3f}); zigzag's "
            f"energy/(its counts at our per-word energies) {min(port):.3f}-{max(port):.3f}; latency "
            f"with bandwidth ours/zigzag's latency_total2 {min(lat):.3f}-{max(lat):.3f} "
            f"(median {float(np.median(lat)):.3f})")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 layers per accelerator")
    ap.add_argument("--json", default=None)
    ap.add_argument("--python", default=str(ZIGZAG_PYTHON), help="the .venv-zigzag interpreter")
    args = ap.parse_args(argv)
    results = run(ACCELERATORS, select_layers(args.quick), Path(args.python))
    print("\n" + summary(results))
    out = dict(cases=results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
    return out


if __name__ == "__main__":
    main()
