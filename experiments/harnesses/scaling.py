"""Sweep throughput for 1 and 2 workers, and what each executor costs per trial.

Two measurements, all in one run on this machine, each a fresh random-search study on a
temporary SQLite file:

* **Throughput** (trials/minute) with an evaluator that takes ``--sleep-s`` seconds
  (default 0.5 s, standing in for a real simulator call), for the ``process`` and ``dask``
  executors at 1 and 2 workers. "end-to-end" includes the executor's start-up (worker
  processes, a Dask ``LocalCluster``); "steady" is measured from the first finished trial
  on. The ideal is ``workers * 60 / sleep_s``.
* **Overhead per trial** with an evaluator that does no work: wall time per trial of each
  executor minus the ``inline`` executor's (the driver's own cost: optimizer ask/tell and
  two SQLite transactions per trial, measured in the same run). That difference is what
  shipping a trial to a worker and back costs.

Run: ``python -m experiments.harnesses.scaling [--trials 40] [--sleep-s 0.5] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from design_space import DesignSpace, Integer, Real
from experiments.harnesses.record import Run, public_settings


class Work:
    """A bowl that takes ``sleep_s`` seconds (0: no work at all)."""

    def __init__(self, sleep_s: float = 0.0) -> None:
        self.sleep_s = float(sleep_s)

    def __call__(self, p: dict) -> dict:
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return {"f": float(p["x"]) ** 2 + float(p["y"])}


def _space() -> DesignSpace:
    return DesignSpace(Real("x", -3.0, 3.0), Integer("y", 0, 10**6))


def measure(executor: str, workers: int, trials: int, sleep_s: float, tmp: Path) -> dict:
    """One study; returns end-to-end and steady-state trials/minute and s/trial."""
    from experiments import Study

    name = f"{executor}-{workers}-{sleep_s:g}"
    study = Study.create(name, _space(), {"f": "min"}, "experiments.harnesses.scaling:Work",
                         evaluator_options={"sleep_s": sleep_s},
                         storage=f"sqlite:///{tmp / (name + '.db')}", seed=1)
    t0 = time.time()
    study.optimize(trials, workers=workers, executor=executor, progress=False)
    t1 = time.time()
    ends = sorted(t.finished_at for t in study.trials if t.finished_at is not None)
    first = ends[0]
    steady = (len(ends) - 1) / max(ends[-1] - first, 1e-9) * 60.0
    return {"executor": executor, "workers": workers, "trials": len(ends), "wall_s": t1 - t0,
            "per_min": len(ends) / (t1 - t0) * 60.0, "steady_per_min": steady,
            "s_per_trial": (t1 - t0) / len(ends),
            "steady_s_per_trial": (ends[-1] - first) / max(len(ends) - 1, 1)}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=40, help="trials per throughput run")
    ap.add_argument("--sleep-s", type=float, default=0.5, help="seconds per evaluation")
    ap.add_argument("--overhead-trials", type=int, default=200)
    ap.add_argument("--executors", nargs="+", default=["process", "dask"])
    ap.add_argument("--json", metavar="FILE", help="also write the rows, settings, commit, wall time "
                    "and load average to FILE (experiments/harnesses/record.py)")
    args = ap.parse_args(argv)
    run = Run("experiments.harnesses.scaling", public_settings(args))
    tmp = Path(tempfile.mkdtemp())
    out: dict = {"throughput": [], "overhead": []}

    print(f"# throughput: {args.trials} trials of a {args.sleep_s:g} s evaluation, random search, "
          "SQLite")
    print(f"{'executor':8} {'workers':>7} {'end-to-end /min':>16} {'steady /min':>12} "
          f"{'ideal /min':>11} {'steady eff.':>11}")
    for ex in args.executors:
        for w in (1, 2):
            r = measure(ex, w, args.trials, args.sleep_s, tmp)
            ideal = w * 60.0 / args.sleep_s
            r["ideal_per_min"] = ideal
            out["throughput"].append(r)
            print(f"{ex:8} {w:>7} {r['per_min']:>16.1f} {r['steady_per_min']:>12.1f} {ideal:>11.1f} "
                  f"{r['steady_per_min'] / ideal:>11.0%}")
    for ex in args.executors:
        one = next(r for r in out["throughput"] if r["executor"] == ex and r["workers"] == 1)
        two = next(r for r in out["throughput"] if r["executor"] == ex and r["workers"] == 2)
        print(f"{ex}: 2 workers / 1 worker = {two['steady_per_min'] / one['steady_per_min']:.2f}x "
              "(steady state)")

    print(f"\n# overhead per trial: {args.overhead_trials} trials of a no-op evaluation")
    base = measure("inline", 1, args.overhead_trials, 0.0, tmp)
    out["overhead"].append(dict(base, overhead_ms=0.0))
    print(f"{'executor':8} {'workers':>7} {'ms/trial':>9} {'overhead ms/trial':>18}")
    print(f"{'inline':8} {1:>7} {1e3 * base['steady_s_per_trial']:>9.2f} {'(driver only)':>18}")
    for ex in args.executors:
        for w in (1, 2):
            r = measure(ex, w, args.overhead_trials, 0.0, tmp)
            r["overhead_ms"] = 1e3 * (r["steady_s_per_trial"] - base["steady_s_per_trial"])
            out["overhead"].append(r)
            print(f"{ex:8} {w:>7} {1e3 * r['steady_s_per_trial']:>9.2f} {r['overhead_ms']:>18.2f}")
    run.write(args.json, out, True)
    return out


if __name__ == "__main__":
    main()
