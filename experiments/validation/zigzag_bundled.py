"""The loop-nest model against ZigZag 3.9.1 on ZigZag's OWN example accelerators.

:mod:`experiments.validation.zigzag_crossval` writes coexplore's Eyeriss v1 in ZigZag's
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

The translation (:func:`arch_from_zigzag`, its rules) is exact or refuses; what it
would drop it refuses too unless told. This script tells it, in :data:`BUNDLED_IGNORE`,
to drop four things these accelerators give and coexplore's model does not use, and
prints each dropped key: every memory's ``latency`` (ZigZag's cost model does not read
it either); each port ``bandwidth_min`` wider than a word (ZigZag rounds each transfer
period up to whole accesses of that width: part of its energy beyond its counts priced
per word, below); ``tpu_like``'s ``systolic_dimensions`` (the cycles compared are
ZigZag's ideal temporal cycles, which have no drain); and ``port_bandwidth``: a level that
merges memories of different operands (each with its own ports), or one memory whose
ports are split by direction, has no ArchSpec bandwidth that equals its ports, and is
left unlimited (so the latency with bandwidth compares only the levels whose ports an
ArchSpec expresses: one read_write port, or one read and one write port). Both tools run
every operand at 8 bits (:data:`PRECISION_BITS`). Memories of different operands with the
same ``served_dimensions`` become one level with a capacity and energies per operand, so
the mappings compared are those where they share that level's temporal loops.
Accelerators whose memories' ``served_dimensions`` are not nested (``edge_tpu_like``,
``ascend_like``, ``meta_prototype``: a weight register shared over D3, D4 and an output
register shared over D2) have no linear hierarchy and are refused with a ValueError.

Run: ``python -m experiments.validation.zigzag_bundled [--quick] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from accelerators.interop.zigzag import MEMORY_OPERAND, Translation, arch_from_zigzag
from evaluators.loopnest import LOOPNEST, evaluate_batch
from experiments.validation.zigzag_crossval import (
    OPS,
    SCRIPT,
    ZIGZAG_PYTHON,
    count_rows,
    ratio_text,
    run_zigzag,
    unique_convs,
)
from mappers.base import NoLegalMapping
from mappers.heuristic import HeuristicMapper, descend
from mappers.interop.zigzag import (
    spatial_from_zigzag,
    zigzag_spatial,
    zigzag_temporal,
    zigzag_workload,
)
from mappers.mapping import Mapping, MappingBatch
from mappers.mapping_space import MappingSpaceInfo, keep_array
from mappers.orders import best_orders
from mappers.workloads import Layer
from mappers.zoo import mobilenet_v2, resnet50

ACCELERATORS = ("eyeriss_like", "tpu_like", "tesla_npu_like")
"""ZigZag's bundled examples used here (``zigzag/inputs/hardware/<name>.yaml``)."""

PRECISION_BITS = 8
"""Bits of every operand in both tools (the workload given to ZigZag says so too): the
width of the bundled accelerators' input and weight register ports."""

BUNDLED_IGNORE = ("latency", "bandwidth_min", "systolic_dimensions", "port_bandwidth")
"""What :func:`arch_from_zigzag` drops from these accelerators, knowingly (module
docstring); each dropped key is printed."""

def load_bundled(names: tuple[str, ...] = ACCELERATORS, python: Path = ZIGZAG_PYTHON) -> dict[str, Any]:
    """ZigZag's bundled accelerators and mapping files, parsed inside ``.venv-zigzag``."""
    proc = subprocess.run([str(python), str(SCRIPT), "--bundled", *names], capture_output=True, text=True,
                          timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"zigzag_counts.py --bundled failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def zigzag_case(layer: Layer, hw: dict[str, Any], tr: Translation, mapping: Mapping,
                bits: int = PRECISION_BITS) -> dict[str, Any]:
    """The layer and mapping on the YAML accelerator ``hw`` in ZigZag's schemas: each
    operand's temporal loops at the memory of the level that holds them (loops of a level
    without that operand go to its next memory up), innermost first; the spatial loops on
    the array dimensions of :attr:`Translation.axes` (an unused dimension is pinned to a
    factor of 1)."""
    return {
        "accelerator": hw,
        "workload": zigzag_workload(layer, bits),
        "mapping": [{"name": n, "spatial_mapping": zigzag_spatial(mapping, tr.axes, hw["operational_array"]["dimensions"],
                                                                  tr.arch.n_levels),
                     "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"}} for n in ("default", "Conv")],
        "temporal": zigzag_temporal(layer, tr.arch, mapping),
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
        mems = [n for n in hw["memories"] if MEMORY_OPERAND[op] in hw["memories"][n]["operands"]]
        for zi, name in enumerate(mems):
            lv = tr.level_of[name]
            acc = zz["elem_accesses"][op][zi]
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
    log(f"ZigZag {bundled['version']} (zigzag-dse), its bundled accelerators {list(names)}")
    metas, cases = [], []
    for name in names:
        hw = bundled["accelerators"][name]["hardware"]
        tr = arch_from_zigzag(hw, PRECISION_BITS, ignore=BUNDLED_IGNORE)
        log(f"{name}: dropped, as BUNDLED_IGNORE asks ({len(tr.dropped)}):")
        for line in tr.dropped:
            log(f"  {line}")
        spatial = spatial_from_zigzag(bundled["accelerators"][name]["mapping"])
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
