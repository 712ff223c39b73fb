"""The fast default mapper against the heuristic on the designs a co-design search visits
(issue 41 item 2: "the heuristic mapper is either made as good or replaced by this anytime
mode as the fast default").

Per layer map it runs :class:`~mappers.heuristic.HeuristicMapper` and
:class:`~mappers.anytime.AnytimeMapper` (the exact mapper stopped at
:data:`~mappers.anytime.ANYTIME_NODES` nodes), each timed by ``time.process_time`` of this
process (BLAS threads 1), and scores each result against the reference: the EDP of the same
layer map in the committed full co-design benchmark (``--reference``, default
``docs/benchmarks/mapper_codesign_full.jsonl``: the proven optimum where that run proved
it, else its best mapping at the 3 M-node cap, so the ratio is then against an upper bound
of the optimum), or the better of the two results here where the reference is worse. It
prints per map the CPU seconds and the ratio of each, and a summary per space and
workload: median and 95th percentile of CPU seconds, the share within 2 % and 5 % of the
reference, the median and worst ratio, and the share the fast default proves.

The designs, fixed before the run: the first :data:`SHI_POINTS` points of each Shi et al.
space, the demo's 10 points and Eyeriss v1, the points and labels of
:mod:`experiments.benchmarks.mapper_codesign` (the same draws), every unique layer of its
four workloads.

Run: ``python -m experiments.benchmarks.mapper_fast_default [--spaces ...] [--points 0 1]
[--json FILE]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from evaluators.loopnest import LOOPNEST  # noqa: E402
from experiments.benchmarks import mapper_codesign as codesign  # noqa: E402
from experiments.benchmarks.jit_warmup import warm_exact_mapper  # noqa: E402
from experiments.proof_scopes import ProofScopes  # noqa: E402
from mappers.anytime import ANYTIME_NODES, AnytimeMapper  # noqa: E402
from mappers.heuristic import HeuristicMapper  # noqa: E402

__all__ = ["SHI_POINTS", "announced_scopes", "main", "map_pair", "reference_rows", "summarize"]

SHI_POINTS = 3
"""Points of each Shi et al. space mapped (the first of the benchmark's 15 draws)."""

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "mapper_codesign_full.jsonl"
OBJECTIVE = codesign.OBJECTIVE


def reference_rows(path: Path) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """The layer maps of a co-design rows file by ``(space, point, workload, layer)``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(x) for x in lines[1:] if x.strip()]
    return {(r["space"], r["point"], r["workload"], r["layer"]): r for r in rows}


def _timed(mapper: Any, layer: Any, arch: Any) -> tuple[Any, float]:
    c0 = time.process_time()
    r = mapper.map(layer, arch, LOOPNEST, OBJECTIVE)
    return r, time.process_time() - c0


def map_pair(layer: Any, arch: Any, ref: dict[str, Any] | None, fast: AnytimeMapper) -> dict[str, Any]:
    """One layer map by the heuristic and by ``fast``: CPU seconds and EDP over the
    reference (``ref``'s EDP, or the better result here where that is lower)."""
    h, h_s = _timed(HeuristicMapper(), layer, arch)
    a, a_s = _timed(fast, layer, arch)
    h_edp, a_edp = h.objective(OBJECTIVE), a.objective(OBJECTIVE)
    best = min(h_edp, a_edp, ref["edp"] if ref else np.inf)
    return {"heuristic_cpu_s": h_s, "fast_cpu_s": a_s, "heuristic_over_ref": h_edp / best,
            "fast_over_ref": a_edp / best, "fast_proven": bool(a.optimal),
            "fast_gap": codesign.certified_gap(a),
            "ref_proven": bool(ref["proven"]) if ref else False, "ref_found": ref is not None}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per mapper: CPU-second median and 95th percentile, shares within 2 % and 5 % of the
    reference, median and worst ratio; the share the fast default proves."""
    out: dict[str, Any] = {"layer_maps": len(rows),
                           "fast_proven": float(np.mean([r["fast_proven"] for r in rows]))}
    for who in ("heuristic", "fast"):
        cpu = np.array([r[f"{who}_cpu_s"] for r in rows])
        ratio = np.array([r[f"{who}_over_ref"] for r in rows])
        out[who] = {"cpu_s_median": float(np.median(cpu)), "cpu_s_p95": float(np.percentile(cpu, 95)),
                    "cpu_s_total": float(cpu.sum()), "within_2pct": float(np.mean(ratio <= 1.02)),
                    "within_5pct": float(np.mean(ratio <= 1.05)), "ratio_median": float(np.median(ratio)),
                    "ratio_max": float(ratio.max())}
    return out


def fmt_summary(name: str, s: dict[str, Any]) -> str:
    h, f = s["heuristic"], s["fast"]
    return (f"{name:<11} {s['layer_maps']:>4} maps | heuristic: CPU s median {h['cpu_s_median']:.3f} p95 "
            f"{h['cpu_s_p95']:.2f}, within 2 % {100 * h['within_2pct']:.1f} %, 5 % {100 * h['within_5pct']:.1f} %, "
            f"ratio median {h['ratio_median']:.3f} max {h['ratio_max']:.2f} | fast default: CPU s median "
            f"{f['cpu_s_median']:.3f} p95 {f['cpu_s_p95']:.2f}, within 2 % {100 * f['within_2pct']:.1f} %, 5 % "
            f"{100 * f['within_5pct']:.1f} %, ratio median {f['ratio_median']:.3f} max {f['ratio_max']:.2f}, "
            f"proven {100 * s['fast_proven']:.1f} %")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spaces", nargs="+", default=None, choices=["shi-iso", "shi-free", "demo", "eyeriss"])
    ap.add_argument("--points", nargs="+", type=int, default=None,
                    help="indices within each space (default: the first SHI_POINTS Shi points, every other point)")
    ap.add_argument("--layers", nargs="+", default=None, help="only layers of these names")
    ap.add_argument("--reference", type=Path, default=REFERENCE, help="the co-design rows file scored against")
    ap.add_argument("--json", type=Path, default=None, help="write every row and the summary here")
    return ap


def _codesign_args(args: argparse.Namespace) -> argparse.Namespace:
    """The co-design benchmark's arguments for the same draws (its default point counts)."""
    return codesign.parser().parse_args(
        (["--spaces", *args.spaces] if args.spaces else [])
        + (["--points", *map(str, args.points)] if args.points is not None else [])
        + (["--layers", *args.layers] if args.layers else []))


def _chosen(args: argparse.Namespace, cargs: argparse.Namespace) -> list[tuple[str, str, Any]]:
    """The designs mapped: the co-design benchmark's, the Shi spaces cut to their first
    :data:`SHI_POINTS` unless ``--points`` names indices."""
    chosen = codesign.chosen_designs(cargs)
    if args.points is not None:
        return chosen
    seen: dict[str, int] = {}
    out = []
    for space, label, arch in chosen:
        k = seen[space] = seen.get(space, -1) + 1
        if not space.startswith("shi-") or k < SHI_POINTS:
            out.append((space, label, arch))
    return out


def announced_scopes(argv: list[str]) -> ProofScopes:
    """The scopes of the fast default's proofs in a run with ``argv``, without mapping."""
    args = parser().parse_args(argv)
    cargs = _codesign_args(args)
    _, _, layers = codesign.setup(cargs)
    return codesign.announce(cargs, AnytimeMapper(), LOOPNEST, layers, _chosen(args, cargs))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parser().parse_args(argv)
    cargs = _codesign_args(args)
    _, _, layers = codesign.setup(cargs)
    fast = AnytimeMapper()
    ref = reference_rows(args.reference)
    chosen = _chosen(args, cargs)
    scopes = codesign.announce(cargs, fast, LOOPNEST, layers, chosen)
    print(f"fast default (AnytimeMapper, max_nodes={ANYTIME_NODES}) against the heuristic; objective {OBJECTIVE}; "
          f"reference {args.reference.name}; {platform.processor() or platform.machine()}, load "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    print("\n".join(scopes.lines()), flush=True)
    print(f"numba warm-up: {warm_exact_mapper(chosen[0][2], (OBJECTIVE,)):.1f} CPU s (not counted)", flush=True)
    print(f"{'space':<9} {'workload':<9} {'layer':<28}{'heur s':>8}{'heur/ref':>9}{'fast s':>8}{'fast/ref':>9} "
          "proven", flush=True)
    rows: list[dict[str, Any]] = []
    for space, label, arch in chosen:
        for w, ls in layers.items():
            for layer in ls:
                if args.layers and layer.name not in args.layers:
                    continue
                r = map_pair(layer, arch, ref.get((space, label, w, layer.name)), fast)
                r.update(space=space, point=label, workload=w, layer=layer.name)
                rows.append(r)
                print(f"{space:<9} {w:<9} {layer.name[:27]:<28}{r['heuristic_cpu_s']:>8.3f}"
                      f"{r['heuristic_over_ref']:>9.3f}{r['fast_cpu_s']:>8.3f}{r['fast_over_ref']:>9.3f} "
                      f"{'yes' if r['fast_proven'] else 'no':>6}", flush=True)
    print("\nsummary (CPU seconds per layer map, one core; ratio = EDP over the reference):")
    out: dict[str, Any] = {"settings": {"anytime_nodes": ANYTIME_NODES, "shi_points": SHI_POINTS,
                                        "spaces": args.spaces, "points": args.points, "layers": args.layers,
                                        "reference": args.reference.name},
                           "missing_reference": sum(not r["ref_found"] for r in rows),
                           "load_after": os.getloadavg()[0], "summary": {}, "rows": rows, "scopes": scopes.records()}
    for name, g in codesign.row_groups(rows, layers).items():
        if g:
            out["summary"][name] = summarize(g)
            print(fmt_summary(name, out["summary"][name]))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=float))
    return out


if __name__ == "__main__":
    main()
