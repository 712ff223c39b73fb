"""The exact mapper on the designs a co-design search visits: time to proof, nodes and
anytime quality of every unique layer map.

A co-design search maps every layer of its workload on every hardware point it
proposes, so the mapper's speed has to hold across the space, not on one reference
design. This benchmark maps every unique layer of DQN at batch 1 and 32, ResNet-50
(batch 1) and the BERT-base block (:mod:`mappers.zoo`) with
:class:`mappers.exact.ExactMapper` (EDP, the loop-nest model
:data:`evaluators.loopnest.LOOPNEST`) on

* ``--shi-points`` hardware points drawn from each of the Shi et al. 2020 iso- and
  free-resource spaces (:func:`experiments.reproduce.shi2020.hardware_space`; seeds 0 and
  1, the reproduction's fixed clock, bandwidths and energy table);
* ``--demo-points`` points of the demo's systolic space (``experiments/configs/demo.yaml``,
  seed 0, its area budget enforced);
* Eyeriss v1 (:func:`accelerators.eyeriss_v1`).

Per layer map it prints the CPU seconds of the search (``time.process_time`` of this
process; BLAS threads are set to 1), the search nodes expanded, whether the layer was
proven optimal, the certified gap of an unproven one (its EDP over the least open bound,
minus 1), the heuristic mapper's EDP over the result, and the anytime incumbent's ratio
to the final result at 0.1, 0.5 and 2 CPU seconds (from the search's incumbent trace;
``inf`` before the first incumbent). The summary gives the share proven, the median, 90th
and 95th percentiles and the maximum of CPU seconds, and the share of layer maps whose
incumbent at 0.5 s is within 2 % of the final result (a lower bound on "of the optimum"
only where the result is proven). Without limits the run maps until every layer is
proven; ``--max-nodes`` / ``--time-limit-s`` (wall clock, per layer) cap each search, and
``--no-screen`` runs the exact mapper without its top-level screen
(:mod:`evaluators.loopnest.bounds_top`: the same searches, so the same nodes and results,
without the screen's saving), the baseline for its CPU time; a capped layer counts as
unproven at its certified gap (``--max-nodes`` is the cap to use for a
record: it stops every search at the same node whatever the machine's load). ``--spaces``,
``--points`` (indices within each space) and ``--layers`` (names) map a subset, to iterate
on hard cases. ``--rows FILE`` makes a long run resumable: every layer map is appended to
FILE (JSON lines) as it finishes, a rerun with the same FILE skips the maps it holds and
reads them back, and the summary covers every chosen map, old and new. The header states
the space the proofs cover, per space or point where they differ (:func:`announce`, from
the mapper, cost model, layers and designs, before mapping; each result is checked
against it; :func:`announced_scopes` gives it for a command line without running it).

Run: ``python -m experiments.benchmarks.mapper_codesign [--shi-points 15] [--demo-points 10]
[--workloads dqn dqn@32 resnet50 bert] [--spaces shi-iso shi-free demo eyeriss]
[--points 0 1] [--layers conv1 conv2] [--max-nodes N] [--time-limit-s S] [--rows FILE.jsonl]
[--json FILE]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from accelerators import eyeriss_v1  # noqa: E402
from evaluators.loopnest import LOOPNEST, LoopNestCost  # noqa: E402
from evaluators.nested import NestedEvaluator  # noqa: E402
from experiments.benchmarks.jit_warmup import warm_exact_mapper  # noqa: E402
from experiments.config import load_config  # noqa: E402
from experiments.proof_scopes import ProofScopes  # noqa: E402
from experiments.reproduce import shi2020  # noqa: E402
from mappers.base import MappingResult  # noqa: E402
from mappers.exact import ExactMapper  # noqa: E402
from mappers.heuristic import HeuristicMapper  # noqa: E402
from mappers.zoo import resolve  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "configs" / "demo.yaml"
WORKLOADS = {"dqn": "dqn", "dqn@32": "dqn@32", "resnet50": "resnet50", "bert": "bert_base_block"}
"""name -> zoo spec (:func:`mappers.zoo.resolve`)."""
CHECKPOINTS_S = (0.1, 0.5, 2.0)
"""CPU seconds at which the anytime incumbent is read."""
OBJECTIVE = "edp"


def designs(shi_points: int, demo_points: int) -> Iterator[tuple[str, str, Any]]:
    """``(space, point label, ArchSpec)`` of every hardware point of the benchmark."""
    fixed = shi2020.fixed()
    shi = NestedEvaluator("spatial", "dqn", "heuristic", fixed=fixed)
    for seed, mode in enumerate(shi2020.MODES):
        for k, p in enumerate(shi2020.hardware_space(mode).sample(shi_points, seed=seed)):
            yield f"shi-{mode}", f"{mode}{k}:" + ",".join(f"{v}" for v in p.values()), shi.build(p).to_arch()
    loaded = load_config(DEMO)
    opts = loaded.config.evaluator.options
    demo = NestedEvaluator(opts["accelerator"], "dqn", "heuristic")
    for k, p in enumerate(loaded.space.sample(demo_points, seed=0)):
        yield "demo", f"demo{k}:" + ",".join(f"{v}" for v in p.values()), demo.build(p).to_arch()
    yield "eyeriss", "eyeriss_v1", eyeriss_v1().to_arch()


def anytime(trace: list[tuple[float, float]], final: float, at_s: float) -> float:
    """The incumbent at ``at_s`` CPU seconds over ``final`` (``inf`` before the first)."""
    best = math.inf
    for t, v in trace:
        if t > at_s:
            break
        best = v
    return best / final


def certified_gap(r: MappingResult) -> float:
    """How far ``r`` may be from the optimum: 0 when proven, else its objective over its
    search's least open bound, minus 1 (``inf`` without a bound)."""
    if r.optimal:
        return 0.0
    return r.objective(OBJECTIVE) / r.lower_bound - 1.0 if r.lower_bound else math.inf


def map_one(layer: Any, arch: Any, mapper: ExactMapper,
            check: Callable[[MappingResult], None] | None = None, cost: Any = LOOPNEST) -> dict[str, Any]:
    """One layer map: the exact search's figures and the heuristic's EDP beside them
    (``check``: called with the exact result, e.g. :meth:`ProofScopes.check`)."""
    h = HeuristicMapper().map(layer, arch, LOOPNEST, OBJECTIVE)
    c0, w0 = time.process_time(), time.perf_counter()
    r = mapper.map(layer, arch, cost, OBJECTIVE)
    cpu_s, wall_s = time.process_time() - c0, time.perf_counter() - w0
    if check is not None:
        check(r)
    final = r.objective(OBJECTIVE)
    gap = certified_gap(r)
    trace = [tuple(x) for x in r.info.get("incumbents", [])]
    return {"cpu_s": cpu_s, "wall_s": wall_s, "nodes": int(r.info.get("nodes", 0)), "proven": bool(r.optimal),
            "edp": final, "lower_bound": r.lower_bound, "gap": gap,
            "heuristic_over_result": h.objective(OBJECTIVE) / final,
            "anytime": {str(s): anytime(trace, final, s) for s in CHECKPOINTS_S}}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Shares proven and within 2 % at 0.5 s, and CPU-second percentiles, of ``rows``."""
    cpu = np.array([r["cpu_s"] for r in rows])
    return {
        "layer_maps": len(rows), "proven": int(sum(r["proven"] for r in rows)),
        "cpu_s_median": float(np.median(cpu)), "cpu_s_p90": float(np.percentile(cpu, 90)),
        "cpu_s_p95": float(np.percentile(cpu, 95)), "cpu_s_max": float(cpu.max()),
        "cpu_s_total": float(cpu.sum()),
        "within_2pct_at_0.5s": float(np.mean([r["anytime"]["0.5"] <= 1.02 for r in rows])),
        "worst_gap_unproven": max((r["gap"] for r in rows if not r["proven"]), default=0.0),
        "heuristic_over_result_median": float(np.median([r["heuristic_over_result"] for r in rows])),
        "heuristic_over_result_max": float(max(r["heuristic_over_result"] for r in rows)),
    }


def row_groups(rows: list[dict[str, Any]], workloads: Any) -> dict[str, list[dict[str, Any]]]:
    """The summary's groups of ``rows``: ``all``, each space in order of first appearance
    and ``w:<workload>`` for each of ``workloads``."""
    groups = {"all": rows} | {s: [r for r in rows if r["space"] == s] for s in dict.fromkeys(r["space"] for r in rows)}
    return groups | {f"w:{w}": [r for r in rows if r["workload"] == w] for w in workloads}


def fmt_summary(name: str, s: dict[str, Any]) -> str:
    return (f"{name:<10} {s['layer_maps']:>5} maps, proven {s['proven']:>5} "
            f"({100 * s['proven'] / s['layer_maps']:.1f} %); CPU s median {s['cpu_s_median']:.3f}, "
            f"p90 {s['cpu_s_p90']:.2f}, p95 {s['cpu_s_p95']:.2f}, max {s['cpu_s_max']:.1f}, "
            f"total {s['cpu_s_total']:.0f}; incumbent within 2 % at 0.5 s: {100 * s['within_2pct_at_0.5s']:.1f} %; "
            f"heuristic/result median {s['heuristic_over_result_median']:.3f}, max "
            f"{s['heuristic_over_result_max']:.2f}")


RESUME_SETTINGS = ("max_nodes", "time_limit_s", "no_screen")
"""Settings a resumed run must share with the rows it reads back (they change the rows)."""


def read_rows(path: Path, args: argparse.Namespace) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """The layer maps ``path`` (JSON lines, ``--rows``) holds, by ``(space, point,
    workload, layer)``; the file's first line records the settings that change a row, and a
    rerun with other ones is refused (``ValueError`` naming the setting and both values).
    A missing file is created with that line; a last line cut short by a kill is dropped."""
    head = {"settings": {k: getattr(args, k) for k in RESUME_SETTINGS}}
    if not path.exists() or path.stat().st_size == 0:
        path.write_text(json.dumps(head) + "\n", encoding="utf-8")
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0]).get("settings", {})
    for k in RESUME_SETTINGS:
        if first.get(k) != head["settings"][k]:
            raise ValueError(f"--rows {path}: its rows were mapped with {k}={first.get(k)!r}, this run has "
                             f"{k}={head['settings'][k]!r}")
    out: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for i, line in enumerate(lines[1:], start=2):
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            if i != len(lines):
                raise ValueError(f"--rows {path}: line {i} is not JSON") from None
            # the last map, cut short by a kill: dropped here and mapped again
            path.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
            break
        out[(r["space"], r["point"], r["workload"], r["layer"])] = r
    return out


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shi-points", type=int, default=15, help="points drawn from each Shi space (iso, free)")
    ap.add_argument("--demo-points", type=int, default=10, help="points drawn from the demo's systolic space")
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--spaces", nargs="+", default=None, choices=["shi-iso", "shi-free", "demo", "eyeriss"],
                    help="map only these spaces' points (default: all)")
    ap.add_argument("--points", nargs="+", type=int, default=None,
                    help="map only the points of these indices within each space (default: all)")
    ap.add_argument("--layers", nargs="+", default=None, help="map only layers of these names (default: all)")
    ap.add_argument("--max-nodes", type=int, default=None, help="cap per layer (default: none)")
    ap.add_argument("--time-limit-s", type=float, default=None, help="wall-clock cap per layer (default: none)")
    ap.add_argument("--no-screen", action="store_true",
                    help="the exact mapper without its top-level screen (LoopNestCost(screen_top=False)): the same "
                         "searches, the baseline of the screen's CPU time")
    ap.add_argument("--rows", type=Path, default=None,
                    help="JSON lines: append each layer map as it finishes; maps already there are skipped (resume)")
    ap.add_argument("--json", type=Path, default=None, help="write every row and the summary here")
    return ap


def chosen_designs(args: argparse.Namespace) -> list[tuple[str, str, Any]]:
    """The ``(space, point label, ArchSpec)`` of :func:`designs` a run with ``args`` maps."""
    chosen, seen = [], {}
    for space, label, arch in designs(args.shi_points, args.demo_points):
        k = seen[space] = seen.get(space, -1) + 1
        if not ((args.spaces and space not in args.spaces) or (args.points is not None and k not in args.points)):
            chosen.append((space, label, arch))
    return chosen


def announce(args: argparse.Namespace, mapper: ExactMapper, cost: Any, layers: dict[str, list[Any]],
             chosen: list[tuple[str, str, Any]]) -> ProofScopes:
    """The scopes of every layer map of a run with ``args``, by space and point, without
    searching (the header; each result is checked against it)."""
    scopes = ProofScopes("space (or point)")
    for space, label, arch in chosen:
        for ls in layers.values():
            for layer in ls:
                if not args.layers or layer.name in args.layers:
                    scopes.announce(space, label.split(":")[0], mapper, layer, arch, cost, OBJECTIVE)
    return scopes


def setup(args: argparse.Namespace) -> tuple[ExactMapper, Any, dict[str, list[Any]]]:
    """The mapper, cost model and unique layers by workload a run with ``args`` uses."""
    mapper = ExactMapper(max_nodes=args.max_nodes, time_limit_s=args.time_limit_s)
    cost = LoopNestCost(screen_top=not args.no_screen)
    return mapper, cost, {w: resolve(WORKLOADS[w]) for w in args.workloads}


def announced_scopes(argv: list[str]) -> ProofScopes:
    """The scopes a run with the command-line arguments ``argv`` states in its header,
    without searching: what a committed output of that command covers."""
    args = parser().parse_args(argv)
    return announce(args, *setup(args), chosen_designs(args))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = parser()
    args = ap.parse_args(argv)
    for name in ("shi_points", "demo_points"):
        if getattr(args, name) < 0:
            ap.error(f"--{name.replace('_', '-')}: must be >= 0, got {getattr(args, name)}")
    mapper, cost, layers = setup(args)
    print(f"exact mapper on co-design points: {args.shi_points} x 2 Shi, {args.demo_points} demo, Eyeriss v1; "
          f"workloads {args.workloads} ({sum(len(v) for v in layers.values())} unique layers); objective "
          f"{OBJECTIVE}; limits max_nodes={args.max_nodes} time_limit_s={args.time_limit_s}; "
          f"{platform.processor() or platform.machine()}, load {os.getloadavg()[0]:.1f}", flush=True)
    chosen = chosen_designs(args)
    scopes = announce(args, mapper, cost, layers, chosen)
    print("\n".join(scopes.lines()), flush=True)
    print(f"{'space':<9} {'workload':<9} {'layer':<28}{'CPU s':>8}{'nodes':>10} proven {'gap':>7}"
          f"{'heur/res':>9}  anytime@{'/'.join(str(s) for s in CHECKPOINTS_S)}", flush=True)
    rows: list[dict[str, Any]] = []
    done = read_rows(args.rows, args) if args.rows else {}
    warm_cpu_s: float | None = None
    for space, label, arch in chosen:
        for w, ls in layers.items():
            for layer in ls:
                if args.layers and layer.name not in args.layers:
                    continue
                key = (space, label, w, layer.name)
                if key in done:
                    rows.append(done[key])
                    continue
                if warm_cpu_s is None:
                    warm_cpu_s = warm_exact_mapper(arch, (OBJECTIVE,))
                    print(f"numba warm-up: {warm_cpu_s:.1f} CPU s (not counted)", flush=True)
                r = map_one(layer, arch, mapper, partial(scopes.check, space, label.split(":")[0]), cost)
                r.update(space=space, point=label, workload=w, layer=layer.name)
                rows.append(r)
                if args.rows:
                    with args.rows.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(r, default=float) + "\n")
                at = "/".join(f"{r['anytime'][str(s)]:.3f}" for s in CHECKPOINTS_S)
                print(f"{space:<9} {w:<9} {layer.name[:27]:<28}{r['cpu_s']:>8.3f}{r['nodes']:>10} "
                      f"{'yes' if r['proven'] else 'NO ':>6} {r['gap']:>7.3f}{r['heuristic_over_result']:>9.3f}  {at}",
                      flush=True)
    out: dict[str, Any] = {"settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                           "load_after": os.getloadavg()[0], "warmup_cpu_s": warm_cpu_s, "summary": {}, "rows": rows,
                           "scopes": scopes.records()}
    print("\nsummary (CPU seconds per layer map, one core):")
    for name, g in row_groups(rows, args.workloads).items():
        if g:
            out["summary"][name] = summarize(g)
            print(fmt_summary(name, out["summary"][name]))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=float))
    return out


if __name__ == "__main__":
    main()
