"""How long ``coexplore report`` takes on a large study, and how large the page is.

Generates a study of ``--trials`` finished trials in a new SQLite file (random points of
a four-parameter space; two objectives, ``energy_uj`` and ``latency_ms``, from a made-up
formula with log-normal noise, so the front has some hundreds of points; 2 % of the trials
INFEASIBLE, no ``info`` breakdowns; the file lies in ``/dev/shm`` where there is one, so
that generating is not a disk benchmark), then times, in this process:

* ``load_s``: opening the study (:meth:`experiments.study.Study.load`);
* ``write_s``: :func:`experiments.report.write_report` with its defaults (what
  ``coexplore report`` runs), wall seconds and CPU seconds (``time.process_time``);

``--repeats`` times each, and records the page's size in bytes. Generating the study is
not timed. ``--json FILE`` writes the figures with the settings, commit, wall and CPU
time of the whole run and the load average (the record of
:mod:`experiments.harnesses.record`; docs/guide/report.md renders
``docs/benchmarks/report_size.json``). Browser-side times (rendering, sorting the table)
are not measured here; ``tests/experiments/test_browser.py`` checks that behaviour.

Run: ``python -m experiments.benchmarks.report_size [--trials 50000] [--repeats 3] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from design_space import Categorical, DesignSpace, Ordinal, PowerOfTwo
from experiments.harnesses.record import Run, public_settings
from experiments.report import write_report
from experiments.storage import Storage
from experiments.study import Study
from optimizer import TrialStatus

STUDY = "report-size"
OWNER = "report-size-benchmark"
BATCH = 1000


def space() -> DesignSpace:
    return DesignSpace(PowerOfTwo("rows", 4, 128), PowerOfTwo("cols", 4, 128),
                       Ordinal("glb_kib", [16, 32, 64, 128, 256, 512]),
                       Categorical("dataflow", ["OS", "WS", "IS"]))


def metrics_of(point: dict[str, Any], rng: np.random.Generator) -> dict[str, float]:
    """A made-up trade-off: more PEs and buffer cost energy and save time."""
    pes = point["rows"] * point["cols"]
    flow = {"OS": 1.0, "WS": 1.2, "IS": 0.9}[point["dataflow"]]
    energy = (50.0 + 0.05 * pes + 0.4 * point["glb_kib"]) * flow * rng.lognormal(0.0, 0.3)
    latency = (2e4 / pes + 200.0 / point["glb_kib"]) / flow * rng.lognormal(0.0, 0.3)
    return {"energy_uj": float(energy), "latency_ms": float(latency)}


def generate(url: str, trials: int, seed: int) -> None:
    """The study ``STUDY`` with ``trials`` finished trials in the storage at ``url``."""
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials!r}")
    sp = space()
    rng = np.random.default_rng(seed)
    study = Study.create(STUDY, sp, {"energy_uj": "min", "latency_ms": "min"}, None, "random",
                         storage=url, seed=seed)
    st = study.storage
    sid = study._record.id
    points = sp.sample(trials, seed=seed)
    for start in range(0, trials, BATCH):
        batch = points[start:start + BATCH]
        made = st.create_trials(sid, batch, list(range(start, start + len(batch))), OWNER)
        for rec, point in zip(made, batch):
            if rng.random() < 0.02:
                st.finish_trial(sid, rec.number, OWNER, TrialStatus.INFEASIBLE, reason="made up",
                                wall_time_s=0.0)
            else:
                st.finish_trial(sid, rec.number, OWNER, TrialStatus.COMPLETE,
                                metrics=metrics_of(point, rng), wall_time_s=0.0)
    st.close()


def measure(url: str, out: Path, repeats: int) -> dict[str, Any]:
    rows = []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        study = Study.load(STUDY, url)
        load = (time.perf_counter() - t, time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        write_report(study, out)
        write = (time.perf_counter() - t, time.process_time() - c)
        study.storage.close()
        rows.append({"load_wall_s": load[0], "load_cpu_s": load[1], "write_wall_s": write[0],
                     "write_cpu_s": write[1], "bytes": out.stat().st_size})
    return {"runs": rows,
            "write_wall_s_median": statistics.median(r["write_wall_s"] for r in rows),
            "write_cpu_s_median": statistics.median(r["write_cpu_s"] for r in rows),
            "load_wall_s_median": statistics.median(r["load_wall_s"] for r in rows),
            "bytes": rows[-1]["bytes"]}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=50_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="FILE", default=None,
                    help="also write the figures, settings, commit, wall/CPU time and load average here")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error(f"--repeats must be at least 1, got {args.repeats}")
    record = Run("experiments.benchmarks.report_size", public_settings(args))
    shm = Path("/dev/shm")
    scratch = str(shm) if shm.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="report-size-", dir=scratch) as tmp:
        url = f"sqlite:///{Path(tmp) / 'study.db'}"
        t = time.perf_counter()
        generate(url, args.trials, args.seed)
        gen_s = time.perf_counter() - t
        with Storage(url) as st:
            counts = {s.value: n for s, n in st.status_counts(st.get_study(STUDY).id).items()}
        result = {"trials": args.trials, "status_counts": counts, "generate_wall_s": gen_s,
                  **measure(url, Path(tmp) / "report.html", args.repeats)}
    print(f"{args.trials} trials ({counts}), generated in {gen_s:.1f} s")
    for r in result["runs"]:
        print(f"load {r['load_wall_s']:.2f} s ({r['load_cpu_s']:.2f} CPU s); report written in "
              f"{r['write_wall_s']:.2f} s ({r['write_cpu_s']:.2f} CPU s); {r['bytes'] / 1e6:.1f} MB")
    record.write(args.json, result, ok=True)
    return result


if __name__ == "__main__":
    main()
