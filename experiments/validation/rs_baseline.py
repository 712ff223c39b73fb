"""The hand-tuned baseline of Shi et al. 2020, as the paper ran it: Eyeriss v1 running its
row-stationary dataflow, mapped by the exact mapper within the RS constraint set
(:func:`mappers.row_stationary.row_stationary`): the best row-stationary mapping of each
AlexNet convolution (batch 4, as in JSSC 2017 Table V) on :func:`accelerators.eyeriss_v1`
(Eyeriss-normalized energy table, loop-nest model).

Per layer it prints, side by side:

* **RS-opt**: the exact mapper's optimum under the RS constraints (objective EDP by
  default), proven within them;
* **Table III**: the chip's own RS mapping of the layer (JSSC 2017 Table III, encoded by
  :func:`mappers.row_stationary.table_iii_mapping`; it meets the RS set,
  ``tests/mappers/test_row_stationary.py``), evaluated by the same model;
* **free-opt**: the exact mapper's optimum without constraints, so the share of any gain
  that comes from leaving row-stationary is visible;
* **published**: Table V's processing latency, GLB and DRAM accesses and chip energy
  (power x processing latency), read from :mod:`experiments.validation.silicon_compare`.

Figures: total energy (DRAM included) and on-chip energy (DRAM excluded; compare with the
chip's energy, keeping in mind the model's known gaps listed in silicon_compare: no clock,
control or leakage energy, no zero gating), processing latency at 200 MHz, GLB and DRAM
accesses in MB of 16-bit words (10^6 bytes), EDP, and the mapper's wall time. CONV1 and
CONV2's Table III mappings pad a dimension (55 and 27 output rows over 7- and 14-wide PE
sets); the exact mapper searches exact (divisor) tilings only, so those two mappings lie
outside its space and RS-opt may be worse than them there.

The header states the space each search's proofs cover (:func:`proof_scopes`: RS-opt's
within the row-stationary set, free-opt's without constraints), computed from the mappers
before they run, and every result is checked against it; the JSON keeps it as
``scopes``.

Run: ``python -m experiments.validation.rs_baseline [--objective edp] [--json FILE]
[--time-limit-s S] [--max-nodes N] [--layers CONV1 ...]`` (a few minutes on one core); the committed
output is ``docs/validation/rs_baseline.txt`` (written before the script printed its
scope: it carries the scope stated afterwards by
:mod:`experiments.benchmarks.stated_scopes`, computed by :func:`announced_scopes`).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from accelerators import eyeriss_v1
from evaluators.loopnest import LOOPNEST, evaluate
from experiments.proof_scopes import ProofScopes
from experiments.validation.silicon_compare import (
    BATCH,
    CLOCK_HZ,
    EYERISS_TABLE_V,
    alexnet_layer,
    energy_breakdown_pj,
)
from mappers.constraints import satisfies
from mappers.exact import ExactMapper
from mappers.mapping import Mapping
from mappers.row_stationary import row_stationary, table_iii_mapping

__all__ = ["BATCH", "announced_scopes", "figures", "main", "parser", "proof_scopes", "published", "run", "searches",
           "transposed"]

FIGURES = ("energy_uj", "onchip_energy_uj", "latency_ms", "glb_mb", "dram_mb", "edp_uj_ms")


def figures(layer: Any, arch: Any, mapping: Mapping) -> dict[str, float]:
    """The compared figures of one mapping (see the module docstring)."""
    r = evaluate(layer, arch, mapping)
    total_pj = float(r.energy_pj[0])
    dram_pj = energy_breakdown_pj(arch, r)["DRAM"]
    ms = float(r.latency_cycles[0]) / CLOCK_HZ * 1e3
    glb_words = float(np.asarray(r.reads[0][1]).sum() + np.asarray(r.writes[0][1]).sum())
    dram_words = float(np.asarray(r.reads[0][2]).sum() + np.asarray(r.writes[0][2]).sum())
    return dict(energy_uj=total_pj * 1e-6, onchip_energy_uj=(total_pj - dram_pj) * 1e-6, latency_ms=ms,
                glb_mb=glb_words * 2 / 1e6, dram_mb=dram_words * 2 / 1e6, edp_uj_ms=total_pj * 1e-6 * ms)


def transposed(m: Mapping) -> Mapping:
    """``m`` with the roles of rows and columns swapped (``P <-> Q``, ``R <-> S``): on a
    square layer (``P = Q``, ``R = S``, the same stride both ways) the same computation
    with the same counts, so a "column-stationary" optimum is row-stationary in
    disguise."""
    swap = {"P": "Q", "Q": "P", "R": "S", "S": "R"}

    def sw(levels: tuple[dict[str, int], ...]) -> list[dict[str, int]]:
        return [{swap.get(d, d): f for d, f in lv.items()} for lv in levels]

    return Mapping(tuple(sw(m.temporal)), tuple(sw(m.spatial_x)), tuple(sw(m.spatial_y)),
                   tuple(tuple(swap.get(d, d) for d in o) for o in m.order), m.bypass)


def published(name: str) -> dict[str, float]:
    """Table V's figures of layer ``name`` in the units of :func:`figures` (chip energy =
    power x processing latency; the chip's energy excludes DRAM)."""
    p = EYERISS_TABLE_V[name]
    return dict(onchip_energy_uj=p["power_mw"] * p["processing_latency_ms"], latency_ms=p["processing_latency_ms"],
                glb_mb=p["glb_mb"], dram_mb=p["dram_mb"])


def searches(layer: Any, arch: Any, time_limit_s: float | None = None,
             max_nodes: int | None = None) -> dict[str, ExactMapper]:
    """The exact searches of ``layer``, by row key: ``rs_opt`` within the row-stationary set
    of ``layer`` on ``arch``, ``free_opt`` without constraints (each stopped at the limits
    given; a limit changes whether a search finishes, not the space it searches)."""
    limits = {"time_limit_s": time_limit_s, "max_nodes": max_nodes}
    return {"rs_opt": ExactMapper(constraints=row_stationary(layer, arch), **limits), "free_opt": ExactMapper(**limits)}


def proof_scopes(objective: str = "edp", layers: Sequence[str] = tuple(EYERISS_TABLE_V)) -> ProofScopes:
    """The space each search of :func:`searches` proves each of ``layers`` over (by search,
    then layer), from the mappers before they run: what the header states and each result
    is checked against."""
    arch = eyeriss_v1().to_arch()
    scopes = ProofScopes("search")
    for name in layers:
        layer = alexnet_layer(name)
        for key, mapper in searches(layer, arch).items():
            scopes.announce(key, name, mapper, layer, arch, LOOPNEST, objective)
    return scopes


def run(objective: str = "edp", time_limit_s: float | None = None, layers: Sequence[str] = tuple(EYERISS_TABLE_V),
        scopes: ProofScopes | None = None, max_nodes: int | None = None) -> dict[str, Any]:
    """The rows of ``layers`` (see the module docstring), each search's result checked
    against ``scopes`` (:func:`proof_scopes` unless given), kept as ``scopes``."""
    arch = eyeriss_v1().to_arch()
    scopes = proof_scopes(objective, layers) if scopes is None else scopes
    out: dict[str, Any] = {"objective": objective, "batch": BATCH, "scopes": scopes.records(), "layers": {}}
    for name in layers:
        layer = alexnet_layer(name)
        rs = row_stationary(layer, arch)
        table = table_iii_mapping(name, layer, arch)
        if not satisfies(rs, table, layer, arch).all():
            raise RuntimeError(f"{name}: the Table III mapping does not meet the RS constraints")
        rows: dict[str, Any] = {"table_iii": figures(layer, arch, table), "published": published(name)}
        for key, mapper in searches(layer, arch, time_limit_s, max_nodes).items():
            t0 = time.perf_counter()
            r = mapper.map(layer, arch, LOOPNEST, objective)
            seconds = time.perf_counter() - t0
            scopes.check(key, name, r)
            rows[key] = figures(layer, arch, r.mapping)
            square = layer.dims["P"] == layer.dims["Q"] and layer.dims["R"] == layer.dims["S"]
            rows[key].update(seconds=seconds, optimal=bool(r.optimal), nodes=int(r.info["nodes"]),
                             space_size=float(r.space_size), mapping=repr(r.mapping),
                             row_stationary=bool(satisfies(rs, r.batch, layer, arch)[0]),
                             transposed_row_stationary=bool(satisfies(rs, transposed(r.mapping), layer, arch)[0])
                             if square else None)
        out["layers"][name] = rows
    return out


LABELS = {"energy_uj": "energy, DRAM incl. (uJ)", "onchip_energy_uj": "on-chip energy (uJ)",
          "latency_ms": "processing latency (ms)", "glb_mb": "GLB accesses (MB)", "dram_mb": "DRAM accesses (MB)",
          "edp_uj_ms": "EDP (uJ x ms)"}


def fmt(res: dict[str, Any]) -> str:
    def num(x: float | None) -> str:
        return f"{x:10.4g}" if x is not None else f"{'--':>10}"

    def ratio(a: float | None, b: float | None) -> str:
        return f"{a / b:7.2f}" if a is not None and b else f"{'--':>7}"

    lines = [f"{'layer':6} {'figure':26} {'RS-opt':>10} {'Table III':>10} {'free-opt':>10} {'published':>10} "
             f"{'RS/TIII':>7} {'RS/pub':>7} {'TIII/pub':>8} {'free/RS':>7}"]
    tot = {k: dict.fromkeys(FIGURES, 0.0) for k in ("rs_opt", "table_iii", "free_opt")}
    for name, rows in res["layers"].items():
        for f in FIGURES:
            rs, t3, fr = rows["rs_opt"][f], rows["table_iii"][f], rows["free_opt"][f]
            pub = rows["published"].get(f)
            lines.append(f"{name:6} {LABELS[f]:26} {num(rs)} {num(t3)} {num(fr)} {num(pub)} "
                         f"{ratio(rs, t3)} {ratio(rs, pub)} {ratio(t3, pub):>8} {ratio(fr, rs)}")
            for k in tot:
                tot[k][f] += rows[k][f]
    lines.append("")
    summed = "Five layers" if len(res["layers"]) == 5 else ", ".join(res["layers"])
    lines.append(f"{summed} summed (EDP row: the network EDP, summed energy x summed latency, the objective "
                 "of experiments/reproduce/shi2020.py):")
    for k in tot:
        tot[k]["edp_uj_ms"] = tot[k]["energy_uj"] * tot[k]["latency_ms"]
    for f in FIGURES:
        lines.append(f"{'all':6} {LABELS[f]:26} {num(tot['rs_opt'][f])} {num(tot['table_iii'][f])} "
                     f"{num(tot['free_opt'][f])} {'':>10} {ratio(tot['rs_opt'][f], tot['table_iii'][f])} "
                     f"{'':>7} {'':>8} {ratio(tot['free_opt'][f], tot['rs_opt'][f])}")
    lines.append("")
    lines.append(f"Exact mapper (objective {res['objective']}): wall seconds, search nodes, optimal (proven over "
                 "the space the header states for the search), "
                 "RS (the result meets the RS set), RS^T (it does with P <-> Q and R <-> S swapped: the same "
                 "counts on these square layers), and the mapping")
    for name, rows in res["layers"].items():
        for k in ("rs_opt", "free_opt"):
            r = rows[k]
            lines.append(f"  {name} {k:8} {r['seconds']:7.2f} s {r['nodes']:9d} nodes  optimal={r['optimal']}  "
                         f"RS={r['row_stationary']}  RS^T={r['transposed_row_stationary']}  "
                         f"space={r['space_size']:.3g}")
            lines.append(f"      {r['mapping']}")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objective", default="edp", choices=("edp", "energy", "latency"))
    ap.add_argument("--time-limit-s", type=float, default=None,
                    help="stop each exact search after this long (the result then says optimal=False)")
    ap.add_argument("--max-nodes", type=int, default=None,
                    help="stop each exact search after this many search nodes (deterministic, unlike a time limit)")
    ap.add_argument("--layers", nargs="+", default=list(EYERISS_TABLE_V), choices=list(EYERISS_TABLE_V),
                    help="only these AlexNet layers (default: all five)")
    ap.add_argument("--json", default=None, help="write the per-layer figures here")
    return ap


def announced_scopes(argv: list[str]) -> ProofScopes:
    """The scopes a run with the command-line arguments ``argv`` states in its header,
    without mapping: what a committed output of that command covers."""
    args = parser().parse_args(argv)
    return proof_scopes(args.objective, args.layers)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parser().parse_args(argv)
    scopes = proof_scopes(args.objective, args.layers)
    print(f"Row-stationary baseline: Eyeriss v1 (accelerators.eyeriss_v1, Eyeriss-normalized table), AlexNet "
          f"{'CONV1-5' if args.layers == list(EYERISS_TABLE_V) else ', '.join(args.layers)} at batch {BATCH}, "
          "200 MHz; published = JSSC 2017 Table V")
    print("\n".join(scopes.lines()), flush=True)
    res = run(args.objective, args.time_limit_s, args.layers, scopes, args.max_nodes)
    print(fmt(res))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return res


if __name__ == "__main__":
    main()
