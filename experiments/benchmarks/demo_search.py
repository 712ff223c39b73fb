"""The demo's search figures as a committed record: constrained BO (``make demo``) against
random search on the same space, the best network EDP each found and what each run cost.

The two studies come from::

    coexplore run experiments/configs/demo.yaml
    coexplore run experiments/configs/demo.yaml --optimizer random --n-trials 120 --study demo-random

(the same storage, seed 0, 2 workers). This command reads them back and writes the record
the docs render from (``docs/benchmarks/demo_search.json``, the ``demo-search`` figure)::

    python -m experiments.benchmarks.demo_search sqlite:///runs/demo.db --out docs/benchmarks/demo_search.json

Per study the record keeps every trial's number, status, ``edp_uj_ms``, wall and CPU
seconds and start and end times, and derives: the best EDP over the finished trials, the
elapsed wall time (first start to last end, so one invocation's: a resumed study's pauses
count too), the wall time summed over the trials (worker time: two workers run side by
side) and the summed worker CPU time. With 2 workers the sequence of points depends on
the order in which evaluations finish, so a rerun gives other figures; a serial run
(``--workers 1``) repeats exactly.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from experiments.provenance import checkout
from experiments.study import Study

STUDIES = (("constrained-bo", "systolic-resnet50"), ("random", "demo-random"))
"""(optimizer, study name) of the two runs, as the commands above name them."""

METRIC = "edp_uj_ms"


def study_summary(study: Study) -> dict[str, Any]:
    """The record of one study (module docstring)."""
    trials = sorted(study.trials, key=lambda t: t.number)
    rows = [{"number": t.number, "status": t.status.value, METRIC: t.metrics.get(METRIC),
             "wall_time_s": t.wall_time_s, "cpu_time_s": t.cpu_time_s,
             "started_at": t.started_at, "finished_at": t.finished_at} for t in trials]
    done = [r for r in rows if r["status"] == "COMPLETE" and r[METRIC] is not None]
    if not done:
        raise SystemExit(f"study {study.name!r}: no COMPLETE trial with {METRIC}")
    starts = [r["started_at"] for r in rows if r["started_at"] is not None]
    ends = [r["finished_at"] for r in rows if r["finished_at"] is not None]
    cpu = [r["cpu_time_s"] for r in rows if r["status"] == "COMPLETE"]
    return {
        "study": study.name, "trials": len(rows), "complete": len(done),
        "best_" + METRIC: min(r[METRIC] for r in done),
        "elapsed_wall_s": max(ends) - min(starts),
        "wall_time_summed_s": sum(r["wall_time_s"] or 0.0 for r in rows),
        "cpu_time_summed_s": None if any(c is None for c in cpu) else sum(cpu),
        "rows": rows,
    }


def _commit() -> str | None:
    head, _ = checkout()
    return head[:7] if head else None


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("storage", help="the storage both demo studies are in (e.g. sqlite:///runs/demo.db)")
    ap.add_argument("--out", type=Path, default=None, help="write the record here (JSON)")
    ap.add_argument("--workers", type=int, default=2, help="the workers both runs used (recorded, not checked)")
    args = ap.parse_args(argv)
    record: dict[str, Any] = {"config": "experiments/configs/demo.yaml", "workers": args.workers, "seed": 0,
                              "commit": _commit(), "load_average_at_export": list(os.getloadavg()),
                              "studies": {}}
    for optimizer, name in STUDIES:
        s = study_summary(Study.load(name, args.storage))
        record["studies"][optimizer] = s
        cpu = s["cpu_time_summed_s"]
        print(f"{optimizer:>15} ({name}): {s['complete']}/{s['trials']} trials, best {METRIC} "
              f"{s['best_' + METRIC]:.1f}; elapsed {s['elapsed_wall_s'] / 60:.1f} min wall, "
              f"{s['wall_time_summed_s'] / 60:.1f} min of trial wall time summed, "
              + ("CPU not recorded" if cpu is None else f"{cpu / 60:.1f} min of worker CPU time summed"))
    if args.out:
        args.out.write_text(json.dumps(record, indent=1) + "\n")
    return record


if __name__ == "__main__":
    main()
