"""Reuse across hardware points (issue 41, item 4): a Shi et al. DQN@32 search, with and
without :class:`evaluators.nested.NestedEvaluator`'s ``reuse``.

Runs a constrained-BO search of ``--points`` evaluations over the iso space as
:mod:`experiments.reproduce.shi2020` sets its searches up (``hardware_space("iso")``,
``NestedEvaluator("spatial", "dqn@32", exact mapper with --max-nodes, fixed=fixed())``)
with reuse, then replays the same points in the same order in this process without
reuse and with it, and prints wall and CPU seconds of each replay, the machine's load, the
reuse counters, and how the network EDPs and the per-layer results compare (proven
layers must be equal; node-limited ones may differ). ``--out`` keeps the study's database
and a JSON of every point's figures.

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
from experiments.benchmarks.proof_scopes import ProofScopes
from experiments.reproduce.shi2020 import fixed, hardware_space, search_mapper


def replay(points: list[dict[str, Any]], mapper: Any, reuse: bool) -> dict[str, Any]:
    """Evaluate ``points`` in order with one evaluator; per-point and total figures."""
    ev = NestedEvaluator("spatial", "dqn@32", mapper, fixed=fixed(), reuse=reuse)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=30)
    ap.add_argument("--max-nodes", type=int, default=300_000)
    ap.add_argument("--out", default="/tmp/nested_reuse")
    args = ap.parse_args()
    from experiments.study import Study

    mapper = search_mapper(0.0, args.max_nodes)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    study = Study.create(f"dqn32-iso-bo-reuse-{args.max_nodes}", hardware_space("iso"), {"edp_uj_ms": "min"},
                         "nested", "constrained-bo",
                         optimizer_options={"n_init": max(5, args.points // 6), "pool_size": 1000},
                         evaluator_options={"accelerator": "spatial", "workload": "dqn@32", "mapper": mapper,
                                            "fixed": fixed(), "reuse": True},
                         storage=f"sqlite:///{out / 'study.db'}", seed=0)
    study.optimize(args.points, workers=1, progress=False, timeout_s=3600)
    points = [dict(t.params) for t in sorted(study.trials, key=lambda r: r.number)][:args.points]
    res: dict[str, Any] = {"max_nodes": args.max_nodes, "points": points}
    for name, reuse in (("without", False), ("with", True)):
        res[name] = replay(points, mapper, reuse)
        r = res[name]
        print(f"{name} reuse: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} CPU s, load {r['load']}, {r['stats']}",
              flush=True)
    scopes = ProofScopes("replay (or point)")
    for name in ("without", "with"):
        for i, row in enumerate(res[name]["rows"]):
            for layer in row["layers"]:
                scopes.add(f"{name} reuse", f"point {i}", layer["proof_scope"])
    res["scopes"] = scopes.records()
    (out / "results.json").write_text(json.dumps(res, indent=1, default=str))
    print("\n".join(scopes.lines()))
    a, b = res["without"]["rows"], res["with"]["rows"]
    lower = sum((y["edp_uj_ms"] or 0) < (x["edp_uj_ms"] or 0) for x, y in zip(a, b))
    higher = sum((y["edp_uj_ms"] or 0) > (x["edp_uj_ms"] or 0) for x, y in zip(a, b))
    la = [v for x in a for v in x["layers"]]
    lb = [v for x in b for v in x["layers"]]
    proven_equal = all(u["edp"] == v["edp"] for u, v in zip(la, lb) if u["optimal"] and v["optimal"])
    print(f"network EDP with reuse: {lower} lower, {higher} higher, {len(a) - lower - higher} equal; "
          f"proven layers equal: {proven_equal}; layer maps with a legal warm candidate: "
          f"{sum((v['warm_legal'] or 0) > 0 for v in lb)} of {len(lb)}")


if __name__ == "__main__":
    main()
