"""The exact mapper's local search, measured against the same search without it, layer
by layer in one process: CPU seconds to proof, whether the results are equal, and the
incumbent at 0.5 CPU s.

The local search (:mod:`mappers.exact`, issue 41 item 2) runs before the tree where the
space is large; it changes no completed result but costs CPU time. This benchmark maps
every unique layer of DQN at batch 1 and 32 on the hardware points of
:func:`experiments.benchmarks.mapper_codesign.designs` (``--points`` within each space)
twice, ``ExactMapper(local_search=False)`` then ``ExactMapper()``, with the same wall-clock
limit per layer, and prints per layer map the CPU seconds of each (``time.process_time``;
BLAS threads 1), their ratio, whether both results are equal (EDP, when both are proven),
and each run's incumbent at 0.5 CPU s over the better of the two results; then medians and
sums of CPU seconds and the shares within 2 % at 0.5 s. The two runs of a layer follow
each other, so a change of the machine's load affects both alike.

The header states the space the proofs cover (:func:`announce`, from the mappers and
layers, before mapping; each result is checked against it).

Run: ``python -m experiments.benchmarks.mapper_local_search [--points 0 1 2 3]
[--spaces shi-iso shi-free demo eyeriss] [--layers NAME ...] [--time-limit-s 10] [--json FILE]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from evaluators.loopnest import LOOPNEST  # noqa: E402
from experiments.benchmarks.jit_warmup import warm_exact_mapper  # noqa: E402
from experiments.benchmarks.mapper_codesign import OBJECTIVE, WORKLOADS, anytime, designs  # noqa: E402
from experiments.proof_scopes import ProofScopes  # noqa: E402
from experiments.provenance import checkout  # noqa: E402
from mappers.base import MappingResult  # noqa: E402
from mappers.exact import ExactMapper  # noqa: E402
from mappers.zoo import resolve  # noqa: E402


def one(layer: Any, arch: Any, mapper: ExactMapper, check: Callable[[MappingResult], None]) -> dict[str, Any]:
    c0 = time.process_time()
    r = mapper.map(layer, arch, LOOPNEST, OBJECTIVE)
    check(r)
    return {"cpu_s": time.process_time() - c0, "edp": r.objective(OBJECTIVE), "proven": bool(r.optimal),
            "nodes": int(r.info.get("nodes", 0)), "trace": [tuple(x) for x in r.info.get("incumbents", [])]}


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spaces", nargs="+", default=["shi-iso", "shi-free"],
                    choices=["shi-iso", "shi-free", "demo", "eyeriss"])
    ap.add_argument("--points", nargs="+", type=int, default=[0, 1, 2, 3], help="indices within each space")
    ap.add_argument("--workloads", nargs="+", default=["dqn", "dqn@32"], choices=list(WORKLOADS))
    ap.add_argument("--layers", nargs="+", default=None, help="map only layers of these names (default: all)")
    ap.add_argument("--time-limit-s", type=float, default=10.0, help="wall-clock cap per layer and run")
    ap.add_argument("--json", type=Path, default=None)
    return ap


def workload_layers(args: argparse.Namespace, wl: str) -> list[Any]:
    """The unique layers of workload ``wl`` a run with ``args`` maps (``--layers``)."""
    return [x for x in resolve(WORKLOADS[wl]) if not args.layers or x.name in args.layers]


def chosen_designs(args: argparse.Namespace) -> list[tuple[str, str, Any]]:
    """The ``(space, point label, ArchSpec)`` a run with ``args`` maps."""
    archs = []
    for space, label, arch in designs(15, 10):
        m = re.match(r"[a-z]+(\d+):", label)            # "iso3:...", "demo0:..."; Eyeriss v1 is point 0
        k = int(m.group(1)) if m else 0
        if space in args.spaces and k in args.points:
            archs.append((space, label, arch))
    return archs


def run_mappers(args: argparse.Namespace) -> tuple[ExactMapper, ExactMapper]:
    """The two mappers of each layer map: without the local search, then with it."""
    return (ExactMapper(time_limit_s=args.time_limit_s, local_search=False),
            ExactMapper(time_limit_s=args.time_limit_s))


def announce(args: argparse.Namespace, archs: list[tuple[str, str, Any]],
             mappers: tuple[ExactMapper, ...]) -> ProofScopes:
    """The scopes of every layer map of both runs, by space and point, without searching
    (the header; each result is checked against it)."""
    scopes = ProofScopes("space (or point)")
    for space, label, arch in archs:
        for wl in args.workloads:
            for layer in workload_layers(args, wl):
                for m in mappers:
                    scopes.announce(space, label.split(":")[0], m, layer, arch, LOOPNEST, OBJECTIVE)
    return scopes


def announced_scopes(argv: list[str]) -> ProofScopes:
    """The scopes a run with the command-line arguments ``argv`` states in its header,
    without searching: what a committed output of that command covers."""
    args = parser().parse_args(argv)
    return announce(args, chosen_designs(args), run_mappers(args))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = parser()
    args = ap.parse_args(argv)
    if not args.time_limit_s > 0:
        ap.error(f"--time-limit-s must be > 0, got {args.time_limit_s}")
    archs = chosen_designs(args)
    warm_exact_mapper(archs[0][2])
    load0 = os.getloadavg()
    print(f"exact mapper without / with the local search; spaces {args.spaces}, points {args.points}, workloads "
          f"{args.workloads}; limit {args.time_limit_s} s wall per layer and run; {platform.machine()}, "
          f"load {load0[0]:.1f}")
    mappers = run_mappers(args)
    scopes = announce(args, archs, mappers)
    print("\n".join(scopes.lines()))
    print(f"{'space':<9} {'point':<7} {'workload':<8} {'layer':<8} {'CPU s off':>9} {'on':>8} {'on/off':>7} "
          f"{'equal':>6} {'@0.5 off':>9} {'on':>6}")
    rows = []
    for space, label, arch in archs:
        for wl in args.workloads:
            for layer in workload_layers(args, wl):
                check = partial(scopes.check, space, label.split(":")[0])
                off, on = (one(layer, arch, m, check) for m in mappers)
                best = min(off["edp"], on["edp"])
                row = {"space": space, "point": label, "workload": wl, "layer": layer.name,
                       "off": {k: v for k, v in off.items() if k != "trace"},
                       "on": {k: v for k, v in on.items() if k != "trace"},
                       "equal": (off["edp"] == on["edp"]) if off["proven"] and on["proven"] else None,
                       "anytime_0.5_off": anytime(off["trace"], best, 0.5),
                       "anytime_0.5_on": anytime(on["trace"], best, 0.5)}
                rows.append(row)
                eq = {True: "yes", False: "NO", None: "--"}[row["equal"]]
                print(f"{space:<9} {label.split(':')[0]:<7} {wl:<8} {layer.name:<8} {off['cpu_s']:>9.3f} "
                      f"{on['cpu_s']:>8.3f} {on['cpu_s'] / off['cpu_s']:>7.2f} {eq:>6} "
                      f"{row['anytime_0.5_off']:>9.3f} {row['anytime_0.5_on']:>6.3f}", flush=True)
    off_s = np.array([r["off"]["cpu_s"] for r in rows])
    on_s = np.array([r["on"]["cpu_s"] for r in rows])
    both = [r for r in rows if r["equal"] is not None]
    summary = {
        "layer_maps": len(rows), "both_proven": len(both), "equal_when_both_proven": sum(r["equal"] for r in both),
        "cpu_s_median_off": float(np.median(off_s)), "cpu_s_median_on": float(np.median(on_s)),
        "cpu_s_total_off": float(off_s.sum()), "cpu_s_total_on": float(on_s.sum()),
        "within_2pct_at_0.5s_off": float(np.mean([r["anytime_0.5_off"] <= 1.02 for r in rows])),
        "within_2pct_at_0.5s_on": float(np.mean([r["anytime_0.5_on"] <= 1.02 for r in rows])),
    }
    load1 = os.getloadavg()
    print(f"\nsummary ({len(rows)} layer maps, CPU s of one core; load {load0[0]:.1f} at the start, {load1[0]:.1f} "
          f"at the end): CPU s median off {summary['cpu_s_median_off']:.3f}, on {summary['cpu_s_median_on']:.3f}; "
          f"total off {summary['cpu_s_total_off']:.0f}, on {summary['cpu_s_total_on']:.0f}; equal results "
          f"{summary['equal_when_both_proven']} of the {summary['both_proven']} proven by both; incumbent within 2 % "
          f"of the better result at 0.5 s: off {100 * summary['within_2pct_at_0.5s_off']:.1f} %, on "
          f"{100 * summary['within_2pct_at_0.5s_on']:.1f} %")
    out = {"settings": vars(args) | {"json": str(args.json) if args.json else None}, "commit": checkout(),
           "load_before": load0, "load_after": load1, "rows": rows, "summary": summary,
           "scopes": scopes.records()}
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=float))
    return out


if __name__ == "__main__":
    main()
