"""Reuse across hardware points (issue 41, item 4): a Shi et al. DQN@32 search, with and
without :class:`evaluators.nested.NestedEvaluator`'s ``reuse``.

Runs a constrained-BO search of ``--points`` evaluations over the iso space as
:mod:`experiments.reproduce.shi2020` sets its searches up (``hardware_space("iso")``,
``NestedEvaluator("spatial", "dqn@32", exact mapper with --max-nodes, fixed=fixed())``)
with reuse, then replays the same points in the same order in this process without
reuse and with it, and prints wall and CPU seconds of each replay, the machine's load, the
reuse counters, and how the network EDPs and the per-layer results compare (proven
layers must be equal; node-limited ones may differ). Before the replays it states the
space the proofs cover (:func:`announced_scopes`, from the points and the mapper, without
mapping; each layer's ``proof_scope`` is checked against it). ``--out`` keeps the study's
database and a JSON of every point's figures.

Run: ``python -m experiments.benchmarks.nested_reuse [--points 30] [--max-nodes 300000]
[--out /tmp/nested_reuse]`` (at the reproduction's 3,000,000 nodes, 30 points take about an
hour per replay on this machine's cores).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from evaluators.nested import NestedEvaluator
from experiments.proof_scopes import ProofScopes
from experiments.reproduce.shi2020 import fixed, hardware_space, search_mapper

WORKLOAD: Any = "dqn@32"
"""The workload of the study and both replays (a test swaps in one small layer)."""


def replay(points: list[dict[str, Any]], mapper: Any, reuse: bool) -> dict[str, Any]:
    """Evaluate ``points`` in order with one evaluator; per-point and total figures."""
    ev = NestedEvaluator("spatial", WORKLOAD, mapper, fixed=fixed(), reuse=reuse)
    rows = []
    t0, c0 = time.perf_counter(), time.process_time()
    for p in points:
        a, b = time.perf_counter(), time.process_time()
        e = ev(p)
        layers = e.info["breakdown"]["layers"] if e.status.value == "ok" else []
        rows.append({"status": e.status.value, "wall_s": time.perf_counter() - a, "cpu_s": time.process_time() - b,
                     "edp_uj_ms": e.metrics.get("edp_uj_ms"),
                     "layers": [{"name": r["name"], "edp": r["edp"], "optimal": r["optimal"],
                                 "proof_scope": r.get("proof_scope"),
                                 **{k: r.get("mapping_info", {}).get(k) for k in ("warm_legal", "warm_used", "reused")}}
                                for r in layers]})
    return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "stats": dict(ev.reuse_stats),
            "load": os.getloadavg(), "rows": rows}


def announced_scopes(points: list[dict[str, Any]], max_nodes: int | None) -> ProofScopes:
    """The scopes both replays of ``points`` (the study's, in order) with the mapper of
    ``--max-nodes max_nodes`` prove over, by replay and point, without mapping: the header
    of a run, and what a committed output of one covers."""
    ev = NestedEvaluator("spatial", WORKLOAD, search_mapper(0.0, max_nodes), fixed=fixed())
    scopes = ProofScopes("replay (or point)")
    for name in ("without", "with"):
        for i, p in enumerate(points):
            scopes.announce_nested(f"{name} reuse", f"point {i}", ev, p)
    return scopes


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=30)
    ap.add_argument("--max-nodes", type=int, default=300_000)
    ap.add_argument("--out", default="/tmp/nested_reuse")
    args = ap.parse_args(argv)
    from experiments.study import Study

    mapper = search_mapper(0.0, args.max_nodes)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    study = Study.create(f"dqn32-iso-bo-reuse-{args.max_nodes}", hardware_space("iso"), {"edp_uj_ms": "min"},
                         "nested", "constrained-bo",
                         optimizer_options={"n_init": max(5, args.points // 6), "pool_size": 1000},
                         evaluator_options={"accelerator": "spatial", "workload": WORKLOAD, "mapper": mapper,
                                            "fixed": fixed(), "reuse": True},
                         storage=f"sqlite:///{out / 'study.db'}", seed=0)
    study.optimize(args.points, workers=1, progress=False, timeout_s=3600)
    points = [dict(t.params) for t in sorted(study.trials, key=lambda r: r.number)][:args.points]
    return compare(points, args.max_nodes, out)


def compare(points: list[dict[str, Any]], max_nodes: int | None, out: Path) -> dict[str, Any]:
    """Replay ``points`` without reuse and with it, print the header (the proofs' scope)
    and the comparison, and write ``out``/results.json; the figures."""
    mapper = search_mapper(0.0, max_nodes)
    res: dict[str, Any] = {"max_nodes": max_nodes, "points": points}
    scopes = announced_scopes(points, max_nodes)
    print("\n".join(scopes.lines()), flush=True)
    for name, reuse in (("without", False), ("with", True)):
        res[name] = replay(points, mapper, reuse)
        r = res[name]
        print(f"{name} reuse: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} CPU s, load {r['load']}, {r['stats']}",
              flush=True)
    for name in ("without", "with"):
        for i, row in enumerate(res[name]["rows"]):
            for layer in row["layers"]:
                scopes.check(f"{name} reuse", f"point {i}", layer["proof_scope"])
    res["scopes"] = scopes.records()
    (out / "results.json").write_text(json.dumps(res, indent=1, default=str))
    a, b = res["without"]["rows"], res["with"]["rows"]
    lower = sum((y["edp_uj_ms"] or 0) < (x["edp_uj_ms"] or 0) for x, y in zip(a, b))
    higher = sum((y["edp_uj_ms"] or 0) > (x["edp_uj_ms"] or 0) for x, y in zip(a, b))
    la = [v for x in a for v in x["layers"]]
    lb = [v for x in b for v in x["layers"]]
    proven_equal = all(u["edp"] == v["edp"] for u, v in zip(la, lb) if u["optimal"] and v["optimal"])
    print(f"network EDP with reuse: {lower} lower, {higher} higher, {len(a) - lower - higher} equal; "
          f"proven layers equal: {proven_equal}; layer maps with a legal warm candidate: "
          f"{sum((v['warm_legal'] or 0) > 0 for v in lb)} of {len(lb)}")
    return res


if __name__ == "__main__":
    main()
