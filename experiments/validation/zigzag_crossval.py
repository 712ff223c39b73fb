"""The loop-nest model against ZigZag 3.9.1, count for count, on one fixed mapping per case.

Each case is a layer of ResNet-50 or MobileNetV2 (:mod:`mappers.zoo`, batch 1; grouped
and depthwise layers left out) on Eyeriss v1 (:func:`accelerators.eyeriss_v1`: per-PE
register files of 224 / 12 / 24 words, a 108 KiB global buffer over a 14 x 12 array, DRAM;
Eyeriss-normalized energies) with one mapping found by coexplore's heuristic mapper
(energy) or drawn by its random mapper. The same accelerator, layer and mapping are written
in ZigZag's schemas (:func:`zigzag_case`) -- every loop at the same memory level, in the
same order, the same spatial unrolling on ZigZag's D1 (our X) and D2 (our Y), the same
per-word energies, every port one 16-bit word wide so that ZigZag's energy is per word
as ours -- and evaluated by ZigZag's ``CostModelEvaluation`` with that temporal
mapping as is (``experiments/validation/zigzag_counts.py`` inside ``.venv-zigzag``,
``make zigzag-env``).

The script prints, per case, level and operand, both tools' reads and writes (ZigZag's
element moves ``rd_out_to_low + rd_out_to_high`` and ``wr_in_by_high + wr_in_by_low``; its
word accesses, even through one-word ports, round every transfer period up to whole words;
ours under the default accounting and under ``accounting="zigzag"``), then the energy
(ZigZag has no interconnect energy, so ours is shown without the NoC term as well) and the
cycles (temporal iterations: our ``compute_cycles`` and ZigZag's
``ideal_temporal_cycle``), and a summary of where and by how much they differ.

Run: ``python -m experiments.validation.zigzag_crossval [--quick] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from accelerators import eyeriss_v1
from evaluators.loopnest import LOOPNEST, evaluate, evaluate_batch
from mappers.heuristic import HeuristicMapper
from mappers.interop.zigzag import (
    zigzag_accelerator,
    zigzag_spatial,
    zigzag_temporal,
    zigzag_workload,
)
from mappers.mapping import Mapping, MappingBatch
from mappers.sampling import RandomMapper
from mappers.workloads import Layer
from mappers.zoo import mobilenet_v2, resnet50

ROOT = Path(__file__).resolve().parents[2]
ZIGZAG_PYTHON = ROOT / ".venv-zigzag" / "bin" / "python"
SCRIPT = Path(__file__).resolve().with_name("zigzag_counts.py")

#: the operands, in the order the comparison reports them
OPS = ("W", "I", "O")
#: Eyeriss v1's GLB fanout axes as ZigZag's two operational-array dimensions
EYERISS_AXES = {(1, "x"): "D1", (1, "y"): "D2"}


def zigzag_case(layer: Layer, arch: Any, mapping: Mapping) -> dict[str, Any]:
    """The case in ZigZag's schemas (see the module docstring)."""
    return {
        "accelerator": zigzag_accelerator(arch, mapping),
        "workload": zigzag_workload(layer),
        "mapping": [{"name": n, "spatial_mapping": zigzag_spatial(mapping, EYERISS_AXES, ["D1", "D2"], arch.n_levels),
                     "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"}} for n in ("default", "Conv")],
        "temporal": zigzag_temporal(layer, arch, mapping),
    }


def run_zigzag(cases: list[dict[str, Any]], python: Path = ZIGZAG_PYTHON, timeout_s: float = 1800) -> list[dict]:
    proc = subprocess.run([str(python), str(SCRIPT)], input=json.dumps(cases), capture_output=True, text=True,
                          timeout=timeout_s, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"zigzag_counts.py failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def unique_convs(layers: list[Layer]) -> list[Layer]:
    """The ungrouped convolutions of ``layers``, each shape (dimensions, stride) once."""
    seen: set[tuple] = set()
    out = []
    for x in layers:
        key = (tuple(sorted(x.dims.items())), x.attrs.get("stride"))
        if x.kind == "conv" and "G" not in x.dims and key not in seen:
            seen.add(key)
            out.append(x)
    return out


def select_layers(quick: bool) -> list[Layer]:
    """The first 8 unique ungrouped convolutions of ResNet-50 and the first 4 of MobileNetV2
    (12 layers x 2 mappings = 24 cases); ``quick``: 2 of ResNet-50 and 1 of MobileNetV2."""
    r, m = unique_convs(resnet50()), unique_convs(mobilenet_v2())
    return r[1:3] + m[1:2] if quick else r[:8] + m[:4]


def our_mappings(layer: Layer, arch: Any) -> list[tuple[str, Mapping]]:
    out = [("heuristic", HeuristicMapper().map(layer, arch, LOOPNEST, "energy").mapping)]
    r = RandomMapper(300).map(layer, arch, LOOPNEST, "energy", seed=1)
    if r.mapping is not None:
        out.append(("random", r.mapping))
    return out


def compare(layer: Layer, arch: Any, mapping: Mapping, zz: dict[str, Any]) -> dict[str, Any]:
    res = evaluate(layer, arch, mapping)
    res_zz = evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, [mapping]), accounting="zigzag")
    rows = []
    for ti, op in enumerate(OPS):
        kept = [lv for lv in range(arch.n_levels) if mapping.keeps(arch, lv, op)]
        for zi, lv in enumerate(kept):
            acc = zz["elem_accesses"][op][zi]
            z_reads = acc["rd_out_to_low"] + acc["rd_out_to_high"]
            z_writes = acc["wr_in_by_high"] + acc["wr_in_by_low"]
            rows.append(dict(level=arch.levels[lv].name, operand=op, ours_reads=float(res.reads[0][lv][ti]),
                             mode_reads=float(res_zz.reads[0][lv][ti]), zigzag_reads=z_reads,
                             ours_writes=float(res.writes[0][lv][ti]), mode_writes=float(res_zz.writes[0][lv][ti]),
                             zigzag_writes=z_writes))
    noc_pj = float(sum(float(res.noc_words[0][lv]) * arch.levels[lv].noc_energy_pj for lv in range(arch.n_levels)))
    energy = float(res.energy_pj[0])
    return dict(layer=layer.name, dims=dict(layer.dims), rows=rows, ours_energy_pj=energy,
                ours_energy_without_noc_pj=energy - noc_pj, zigzag_energy_pj=zz["energy_total"],
                ours_cycles=float(res.compute_cycles[0]), zigzag_cycles=zz["ideal_temporal_cycle"],
                zigzag_latency_total2=zz["latency_total2"])


def ratio_text(a: float, b: float) -> str:
    """``a / b`` to three decimals, ``=`` when equal, ``inf`` when ``b`` is 0."""
    if a == b:
        return "="
    return f"{a / b:.3f}" if b else "inf"


def count_rows(rows: list[dict[str, Any]], where: str, width: int) -> list[str]:
    """The per-(memory, operand) lines of a comparison: reads and writes, ours and under
    ``accounting="zigzag"`` against ZigZag's, with ratios; ``where`` is the row's key of
    the memory (``"level"`` or ``"memory"``), ``width`` its column width."""
    lines = [f"  {where:{width}} {'op':2} {'reads ours':>12} {'ratio':>6} {'zz-mode':>12} {'zigzag':>12} {'ratio':>6}"
             f" {'writes ours':>12} {'ratio':>6} {'zz-mode':>12} {'zigzag':>12} {'ratio':>6}"]
    for r in rows:
        cells = []
        for k in ("reads", "writes"):
            z = r[f"zigzag_{k}"]
            cells.append(f"{r[f'ours_{k}']:12.0f} {ratio_text(r[f'ours_{k}'], z):>6} {r[f'mode_{k}']:12.0f} {z:12.0f} "
                         f"{ratio_text(r[f'mode_{k}'], z):>6}")
        lines.append(f"  {r[where]:{width}} {r['operand']:2} {' '.join(cells)}")
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 layers x 2 mappings")
    ap.add_argument("--json", default=None)
    ap.add_argument("--python", default=str(ZIGZAG_PYTHON), help="the .venv-zigzag interpreter")
    args = ap.parse_args(argv)
    arch = eyeriss_v1().to_arch()
    cases, meta = [], []
    for layer in select_layers(args.quick):
        for how, m in our_mappings(layer, arch):
            cases.append(zigzag_case(layer, arch, m))
            meta.append((layer, how, m))
    zz = run_zigzag(cases, Path(args.python))
    results = []
    for (layer, how, m), z in zip(meta, zz):
        if "error" in z:
            results.append(dict(layer=layer.name, mapping=how, error=z["error"]))
            print(f"{layer.name} [{how}]: ZigZag error: {z['error']}")
            continue
        c = compare(layer, arch, m, z)
        c["mapping"] = how
        c["mapping_repr"] = repr(m)
        results.append(c)
        print(f"\n{layer.name} {layer.dims} [{how}]")
        print("\n".join(count_rows(c["rows"], "level", 5)))
        print(f"  energy pJ: ours {c['ours_energy_pj']:.6g} (without NoC {c['ours_energy_without_noc_pj']:.6g}), "
              f"zigzag {c['zigzag_energy_pj']:.6g}, ratio {ratio_text(c['ours_energy_without_noc_pj'], c['zigzag_energy_pj'])}; "
              f"cycles: ours {c['ours_cycles']:.0f}, zigzag {c['zigzag_cycles']:.0f} "
              f"(with stalls {c['zigzag_latency_total2']:.0f})")
    ok = [r for r in results if "error" not in r]
    exact_rows = sum(r["ours_reads"] == r["zigzag_reads"] and r["ours_writes"] == r["zigzag_writes"]
                     for c in ok for r in c["rows"])
    n_rows = sum(len(c["rows"]) for c in ok)
    mode_rows = sum(r["mode_reads"] == r["zigzag_reads"] and r["mode_writes"] == r["zigzag_writes"]
                    for c in ok for r in c["rows"])
    e_ratios = [c["ours_energy_without_noc_pj"] / c["zigzag_energy_pj"] for c in ok]
    cyc = sum(c["ours_cycles"] == c["zigzag_cycles"] for c in ok)
    print(f"\n{len(ok)} of {len(results)} cases ran in ZigZag; (level, operand) rows equal in both tools: "
          f"{exact_rows} of {n_rows} (under accounting='zigzag': {mode_rows}); cycles equal in {cyc} of {len(ok)}; energy without NoC ours/zigzag "
          f"{min(e_ratios):.3f}-{max(e_ratios):.3f} (median {float(np.median(e_ratios)):.3f})" if ok else "no case ran")
    out = dict(cases=results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
    return out


if __name__ == "__main__":
    main()
