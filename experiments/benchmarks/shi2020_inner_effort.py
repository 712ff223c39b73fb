"""How much search the co-design's inner mapper needs: EDP, ranking and time of random
hardware points of the Shi 2020 reproduction mapped at several effort limits.

The outer search of :mod:`experiments.reproduce.shi2020` (step 3) maps every layer of every
hardware point it proposes with the exact mapper (:class:`mappers.exact.ExactMapper`) under
an effort limit. What the outer search needs from the inner one is the EDP of each point
close to its optimum and, above all, points ranked as their optima rank them; what it pays
is time per point. For ``--designs`` points drawn at random (``--seed``) from the
reproduction's hardware space (``--mode``: iso or free resources) and one workload, the
script maps every point with each setting:

* ``nodes=N``: at most N search nodes per layer (deterministic; the last one, 3 M, is the
  reference: the reproduction's limit until issue 42);
* ``gap=g``: nodes pruned once their bound is within ``1 + g`` of the incumbent (so each
  layer's mapping is proven within ``1 + g`` of its optimum when the search finishes),
  still at most the reference's nodes;
* ``heuristic``: the greedy mapper (:class:`mappers.heuristic.HeuristicMapper`), no search;
* ``anytime``: the fast default (:class:`mappers.anytime.AnytimeMapper`, the exact mapper at
  :data:`mappers.anytime.ANYTIME_NODES` nodes), the reproduction's search limit since issue
  42 (:data:`experiments.reproduce.shi2020.MAX_NODES`).

With ``--eyeriss-layers`` it instead maps each unique layer of the workload on Eyeriss v1
(the reproduction's baseline hardware) at each node limit of :data:`LAYER_LIMITS` and
without a limit, and prints each limit's EDP over the proven optimum, whether it was
proven, and its CPU seconds: where a limit stops a proof, how far from the optimum the
search still is.

With ``--point JSON`` (a hardware point of the reproduction's space) it maps each layer of
the workload (``--layers``: a subset by name) on that design with the heuristic mapper and
with the exact mapper at each node limit of ``--limits``, and prints each one's EDP over the
heuristic's, whether it was proven, its certified gap (EDP over the search's least open
bound), its search nodes and CPU seconds: what a node limit buys on a searched design, where
there is no affordable proof to compare with (how
:data:`experiments.reproduce.shi2020.FINAL_MAX_NODES` was chosen).

Otherwise it prints per setting: the network EDP over the reference's (median and largest over the
points), the share of layer mappings proven (optimal, or within the gap), the Spearman rank
correlation of the points' EDPs with the reference's, whether the best point is the
reference's best, and the CPU seconds per point. Each point runs in its own process
(``--workers``); the seconds are the process's CPU time, so they hold when other work shares
the machine.

Each report states, in its header, the space its proofs cover (:func:`run_scopes`, from
the mappers, layers and hardware points, before mapping; each result is checked against
it; :func:`announced_scopes` gives it for a command line without running it).

Run: ``python -m experiments.benchmarks.shi2020_inner_effort [--workload dqn] [--designs 12]
[--mode iso] [--eyeriss-layers] [--out FILE.json]``; the committed runs are
docs/benchmarks/shi2020_inner_effort.txt (DQN, 12 designs, 14 min) and
docs/benchmarks/shi2020_inner_effort_resnet50_layers.txt (``--workload resnet50
--eyeriss-layers``, 6 min).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

from experiments.proof_scopes import ProofScopes  # noqa: E402

SETTINGS: dict[str, dict[str, Any]] = {
    "heuristic": {"name": "heuristic"},
    "anytime": {"name": "anytime"},
    "nodes=100k": {"name": "exact", "max_nodes": 100_000},
    "nodes=300k": {"name": "exact", "max_nodes": 300_000},
    "nodes=1M": {"name": "exact", "max_nodes": 1_000_000},
    "gap=0.02": {"name": "exact", "gap": 0.02, "max_nodes": 3_000_000},
    "gap=0.05": {"name": "exact", "gap": 0.05, "max_nodes": 3_000_000},
    "nodes=3M": {"name": "exact", "max_nodes": 3_000_000},
}
REFERENCE = "nodes=3M"
LAYER_LIMITS = (100_000, 300_000, 1_000_000, 3_000_000)


def point_arch(point: dict[str, Any]) -> Any:
    """The Shi et al. spatial array of ``point`` (the reproduction's fixed parameters)."""
    from accelerators.spatial import SpatialArray
    from experiments.reproduce.shi2020 import fixed

    return SpatialArray(**point, **fixed()).to_arch()


def exact_scopes(arch: Any, layers: list[Any], limits: Sequence[int | None]) -> ProofScopes:
    """The spaces the exact mapper at each node limit of ``limits`` proves ``layers`` over
    on ``arch`` (stated before the searches, each result checked against them)."""
    from evaluators.loopnest import LOOPNEST
    from mappers.exact import ExactMapper

    scopes = ProofScopes("node limit")
    for n in limits:
        for layer in layers:
            scopes.announce(f"{n or 'no'} nodes", layer.name, ExactMapper(max_nodes=n), layer, arch, LOOPNEST, "edp")
    return scopes


def eyeriss_layers(layers: list[Any], scopes: ProofScopes | None = None) -> list[dict[str, Any]]:
    """Each of ``layers`` (a workload's unique layers, :func:`point_layers`) on Eyeriss v1
    mapped at each of :data:`LAYER_LIMITS` and without a limit: EDP over the unlimited
    search's, proven or not, CPU seconds (``scopes``: :func:`exact_scopes`, each result
    checked against it)."""
    from evaluators.loopnest import LOOPNEST
    from experiments.reproduce.shi2020 import EYERISS_POINT
    from mappers.exact import ExactMapper

    arch = point_arch(EYERISS_POINT)
    rows = []
    for layer in layers:
        runs = {}
        for n in (*LAYER_LIMITS, None):
            t = time.process_time()
            r = ExactMapper(max_nodes=n).map(layer, arch, LOOPNEST, "edp")
            if scopes is not None:
                scopes.check(f"{n or 'no'} nodes", layer.name, r)
            runs[n or "none"] = {"edp": r.edp, "optimal": r.optimal, "cpu_s": time.process_time() - t}
        rows.append({"layer": layer.name, **{str(k): v for k, v in runs.items()}})
        ratios = " ".join(f"{runs[n]['edp'] / runs['none']['edp']:>9.4f}{'*' if runs[n]['optimal'] else ' '}"
                          for n in LAYER_LIMITS)
        print(f"{layer.name:<22} {ratios} {runs['none']['cpu_s']:>8.1f} {runs['none']['optimal']!s:>7}", flush=True)
    return rows


def point_layers(spec: str, names: list[str] | None) -> list[Any]:
    """The unique layers of ``spec`` (those named in ``names``, if given)."""
    from mappers import zoo

    layers = [x for x in zoo.resolve(spec) if names is None or x.name in names]
    if names is not None and len(layers) != len(set(names)):
        raise ValueError(f"--layers {names}: {spec} has {[x.name for x in zoo.resolve(spec)]}")
    return layers


def design_layers(spec: str, point: dict[str, Any], limits: list[int], names: list[str] | None,
                  scopes: ProofScopes | None = None) -> list[dict]:
    """Each layer of ``spec`` (those named in ``names``, if given) on ``point``: the
    heuristic mapper's EDP, and the exact mapper's at each node limit of ``limits``
    (``EDP``, proven, certified gap, nodes, CPU seconds; ``scopes``: :func:`exact_scopes`,
    each result checked against it)."""
    from evaluators.loopnest import LOOPNEST
    from evaluators.nested import unit_gap
    from mappers.exact import ExactMapper
    from mappers.heuristic import HeuristicMapper

    arch = point_arch(point)
    layers = point_layers(spec, names)
    rows = []
    for layer in layers:
        heur = HeuristicMapper().map(layer, arch, LOOPNEST, "edp").edp
        row = {"layer": layer.name, "heuristic_edp": heur}
        for n in limits:
            t = time.process_time()
            r = ExactMapper(max_nodes=n).map(layer, arch, LOOPNEST, "edp")
            if scopes is not None:
                scopes.check(f"{n or 'no'} nodes", layer.name, r)
            row[str(n)] = {"edp": r.edp, "optimal": r.optimal, "gap": unit_gap(r, "edp"),
                           "nodes": r.info["nodes"], "cpu_s": time.process_time() - t}
            x = row[str(n)]
            print(f"{layer.name:<10} {n:>12,} {x['edp'] / heur:>12.4f} {x['optimal']!s:>7} {100 * x['gap']:>7.1f} % "
                  f"{x['nodes']:>12,} {x['cpu_s']:>8.1f}", flush=True)
        rows.append(row)
    return rows


def map_point(spec: str, point: dict[str, Any], settings: list[str]) -> dict[str, Any]:
    """The network EDP, proven share and CPU seconds of ``point`` under each setting."""
    from evaluators.nested import NestedEvaluator
    from experiments.reproduce.shi2020 import fixed

    out = {}
    for name in settings:
        t = time.process_time()
        ev = NestedEvaluator("spatial", spec, SETTINGS[name], fixed=fixed())(point)
        sec = time.process_time() - t
        if ev.status.value != "ok":
            out[name] = {"edp_uj_ms": None, "reason": ev.reason, "cpu_s": sec}
            continue
        layers = ev.info["breakdown"]["layers"]
        limit = SETTINGS[name].get("max_nodes", 0)
        # with a gap, a search that ended before its node limit is proven within the gap
        proven = sum(bool(r.get("optimal")) or (r.get("mapping_info", {}).get("gap", 0) > 0
                                                and r["mapping_info"].get("nodes", 0) < limit) for r in layers)
        out[name] = {"edp_uj_ms": ev.metrics["edp_uj_ms"], "proven": proven, "layers": len(layers), "cpu_s": sec,
                     "proof_scopes": list({json.dumps(r["proof_scope"], sort_keys=True): r["proof_scope"]
                                           for r in layers if r.get("proof_scope")}.values())}
    return out


def design_points(args: Any) -> list[dict[str, Any]]:
    """The random hardware points a designs run with ``args`` maps (``--designs`` from the
    ``--mode`` space, ``--seed``)."""
    from experiments.reproduce.shi2020 import hardware_space

    points = hardware_space(args.mode).sample(args.designs, seed=args.seed)
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in p.items()} for p in points]


def design_settings(args: Any) -> list[str]:
    """The settings a designs run maps each point with (``--settings`` and the reference)."""
    return list(dict.fromkeys([*args.settings, REFERENCE]))


def design_scopes(spec: str, points: list[dict[str, Any]], settings: list[str]) -> ProofScopes:
    """The spaces each setting's mapper proves the layers of ``spec`` over on each of
    ``points``, by setting and point, without mapping (the nested evaluator's mapper's
    ``proof_scope``; the heuristic proves nothing): what :func:`settings_scopes` must find
    in the results."""
    from evaluators.nested import NestedEvaluator
    from experiments.reproduce.shi2020 import fixed

    scopes = ProofScopes("setting (or point)")
    for name in settings:
        ev = NestedEvaluator("spatial", spec, SETTINGS[name], fixed=fixed())
        for i, p in enumerate(points):
            scopes.announce_nested(name, f"point {i}", ev, p)
    return scopes


def settings_scopes(rows: list[dict[str, Any]], settings: list[str]) -> ProofScopes:
    """The spaces the proofs of each setting cover, from :func:`map_point`'s rows (the
    nested evaluator's per-layer ``proof_scope``), by setting and point."""
    scopes = ProofScopes("setting (or point)")
    for i, row in enumerate(rows):
        for name in settings:
            for sc in row[name].get("proof_scopes", ()):
                scopes.add(name, f"point {i}", sc)
    return scopes


def summarize(points: list[dict[str, Any]], rows: list[dict[str, Any]], settings: list[str]) -> dict[str, Any]:
    """Per setting: EDP over the reference's, proven share, rank correlation, best point kept."""
    ok = [i for i, r in enumerate(rows) if r[REFERENCE]["edp_uj_ms"] is not None]
    ref = np.array([rows[i][REFERENCE]["edp_uj_ms"] for i in ok])
    summary = {}
    for name in settings:
        vals = np.array([rows[i][name]["edp_uj_ms"] or np.inf for i in ok])
        ratio = vals / ref
        summary[name] = {
            "median_ratio": float(np.median(ratio)), "max_ratio": float(ratio.max()),
            "min_ratio": float(ratio.min()),
            "proven_share": sum(rows[i][name].get("proven", 0) for i in ok)
            / max(1, sum(rows[i][name].get("layers", 0) for i in ok)),
            "spearman": float(spearmanr(vals, ref).statistic) if len(ok) > 2 else None,
            "same_best": bool(np.argmin(vals) == np.argmin(ref)),
            "best_point_ref_ratio": float(ref[np.argmin(vals)] / ref.min()),
            "cpu_s_per_point": float(np.mean([rows[i][name]["cpu_s"] for i in ok])),
        }
    return {"points": points, "rows": rows, "summary": summary}


def parser() -> argparse.ArgumentParser:
    from experiments.reproduce.shi2020 import WORKLOADS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="dqn", choices=sorted(WORKLOADS))
    ap.add_argument("--designs", type=int, default=12)
    ap.add_argument("--mode", default="iso", choices=("iso", "free"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    ap.add_argument("--eyeriss-layers", action="store_true",
                    help="per layer on Eyeriss v1: each node limit against the unlimited (proven) search")
    ap.add_argument("--point", type=json.loads, default=None,
                    help="per layer on this hardware point (JSON): heuristic vs the exact mapper at --limits")
    ap.add_argument("--limits", type=int, nargs="+", default=list(LAYER_LIMITS))
    ap.add_argument("--layers", nargs="+", default=None, help="with --point: only these layers")
    return ap


def workload_spec(args: Any) -> str:
    """The workload spec of ``--workload``."""
    from experiments.reproduce.shi2020 import WORKLOADS

    return WORKLOADS[args.workload][0]


def run_scopes(args: Any, points: list[dict[str, Any]] | None = None) -> ProofScopes:
    """The scopes a run with ``args`` states, without mapping: :func:`exact_scopes` of its
    layers and limits (``--point``, ``--eyeriss-layers``), else :func:`design_scopes` of
    its points (``points``: :func:`design_points` unless given)."""
    from experiments.reproduce.shi2020 import EYERISS_POINT

    spec = workload_spec(args)
    if args.point is not None:
        return exact_scopes(point_arch(args.point), point_layers(spec, args.layers), args.limits)
    if args.eyeriss_layers:
        return exact_scopes(point_arch(EYERISS_POINT), point_layers(spec, None), (*LAYER_LIMITS, None))
    return design_scopes(spec, design_points(args) if points is None else points, design_settings(args))


def announced_scopes(argv: list[str]) -> ProofScopes:
    """The scopes a run with the command-line arguments ``argv`` states, without mapping:
    what a committed output of that command covers."""
    return run_scopes(parser().parse_args(argv))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parser().parse_args(argv)
    spec = workload_spec(args)
    if args.point is not None:
        res = point_report(args, spec)
    else:
        res = (layers_report if args.eyeriss_layers else designs_report)(args, spec)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1, default=float)
    return res


def layers_report(args: Any, spec: str) -> dict[str, Any]:
    """``--eyeriss-layers``: print and return :func:`eyeriss_layers` with a summary per limit."""
    scopes = run_scopes(args)
    print(f"{args.workload} ({spec}) on Eyeriss v1: EDP at each node limit / without a limit "
          "(* = proven optimal within the limit); CPU s and proven without a limit")
    print("\n".join(scopes.lines()))
    print(f"{'layer':<22} " + " ".join(f"{f'{n:,}':>10}" for n in LAYER_LIMITS) + f" {'CPU s':>8} {'proven':>7}")
    layers = eyeriss_layers(point_layers(spec, None), scopes)
    for n in LAYER_LIMITS:
        r = [x[str(n)]["edp"] / x["none"]["edp"] for x in layers]
        print(f"{n:>10,} nodes: {sum(x[str(n)]['optimal'] for x in layers)}/{len(layers)} layers proven; "
              f"EDP / optimum median {np.median(r):.4f}, max {max(r):.4f}")
    return {"workload": args.workload, "spec": spec, "layers": layers, "scopes": scopes.records()}


def point_report(args: Any, spec: str) -> dict[str, Any]:
    """``--point``: print and return :func:`design_layers`."""
    print(f"{args.workload} ({spec}) on {args.point}: the exact mapper at each node limit; EDP over the "
          "heuristic mapper's, proven, certified gap (EDP / least open bound - 1), nodes, CPU s")
    scopes = run_scopes(args)
    print("\n".join(scopes.lines()))
    print(f"{'layer':<10} {'node limit':>12} {'EDP/heur':>12} {'proven':>7} {'gap':>9} {'nodes':>12} {'CPU s':>8}")
    rows = design_layers(spec, args.point, args.limits, args.layers, scopes)
    return {"workload": args.workload, "spec": spec, "point": args.point, "limits": args.limits, "layers": rows,
            "scopes": scopes.records()}


def designs_report(args: Any, spec: str) -> dict[str, Any]:
    """Random designs mapped at each setting: print and return :func:`summarize`'s figures."""
    settings = design_settings(args)
    points = design_points(args)
    scopes = run_scopes(args, points)
    t0 = time.perf_counter()
    # forkserver, not the platform default fork: this process may hold torch's threads
    with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
        rows = list(pool.map(map_point, [spec] * len(points), points, [settings] * len(points)))
    res = summarize(points, rows, settings)
    res.update(workload=args.workload, spec=spec, mode=args.mode, seed=args.seed,
               wall_s=time.perf_counter() - t0, reference=REFERENCE)
    print(f"{args.workload} ({spec}), {len(points)} random {args.mode} designs (seed {args.seed}); "
          f"reference {REFERENCE}; wall {res['wall_s']:.0f} s with {args.workers} workers, "
          f"load {os.getloadavg()[0]:.1f}")
    scopes.check_all(settings_scopes(rows, settings))       # the results prove over what is stated
    res["scopes"] = scopes.records()
    print("\n".join(scopes.lines()))
    print(f"{'setting':<11} {'EDP/ref med':>11} {'min':>6} {'max':>6} {'proven':>7} {'spearman':>8} "
          f"{'best kept':>9} {'best/ref best':>13} {'CPU s/pt':>8}")
    for name in settings:
        s = res["summary"][name]
        sp = "--" if s["spearman"] is None else f"{s['spearman']:.3f}"
        print(f"{name:<11} {s['median_ratio']:>11.4f} {s['min_ratio']:>6.3f} {s['max_ratio']:>6.3f} "
              f"{s['proven_share']:>7.0%} {sp:>8} {s['same_best']!s:>9} {s['best_point_ref_ratio']:>13.4f} "
              f"{s['cpu_s_per_point']:>8.1f}")
    return res


if __name__ == "__main__":
    main()
