"""Fault injection: SIGKILL the driver of a sweep at random moments, resume, count.

For each storage backend (SQLite always; PostgreSQL when ``--postgres URL`` or
``COEXPLORE_TEST_POSTGRES_URL`` is given) a ``--trials``-trial random-search study with a
slow evaluator runs as ``coexplore run`` on ``--workers`` worker processes. The driver is
SIGKILLed ``--kills`` times, each time after a random delay, and restarted with the same
command; finally it runs to completion. The script then checks, from the storage:
exactly ``--trials`` COMPLETE trials, numbers ``0..n-1`` each once, distinct parameter
sets, nothing left RUNNING or WAITING -- and prints the figures.

Run: ``python -m experiments.harnesses.chaos [--trials 200] [--kills 10] [--postgres URL]
[--executor dask --kill-window 4 12] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from experiments.harnesses.record import Run, public_settings

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """\
study: {study}
storage: {storage}
output: {out}
seed: 7
space:
  parameters:
    - {{name: x, type: real, low: -3.0, high: 3.0}}
    - {{name: y, type: integer, low: 0, high: 100000}}
evaluator: {{function: "experiments.harnesses.chaos:SleepyBowl", options: {{sleep_s: {sleep_s}}}}}
objectives: {{f1: min, f2: min}}
optimizer: {optimizer}
budget: {{n_trials: {trials}, workers: {workers}, timeout_s: 60, executor: {executor}}}
"""


class SleepyBowl:
    """Two-objective bowl that takes ``sleep_s`` seconds, so kills land mid-evaluation."""

    def __init__(self, sleep_s: float = 0.25) -> None:
        self.sleep_s = float(sleep_s)

    def __call__(self, p: dict) -> dict:
        time.sleep(self.sleep_s)
        x, y = float(p["x"]), float(p["y"]) / 1e5
        return {"f1": x * x + y, "f2": (x - 1.0) ** 2 + (1.0 - y)}


def counts(storage_url: str, study: str) -> dict:
    from experiments.storage import Storage

    with Storage(storage_url) as st:
        rec = st.find_study(study)
        if rec is None:
            return {"COMPLETE": 0}
        trials = st.trials(rec.id)
        c = {s.value: n for s, n in st.status_counts(rec.id).items()}
        done = [t for t in trials if t.status.value == "COMPLETE"]
        c["numbers_ok"] = sorted(t.number for t in done) == list(range(len(done)))
        c["distinct_params"] = len({json.dumps(t.params, sort_keys=True) for t in done})
        c["max_attempts"] = max((t.attempts for t in trials), default=0)
        c["requeued"] = sum(1 for t in trials if t.attempts > 1)
        return c


def run_backend(name: str, storage_url: str, trials: int, kills: int, workers: int, seed: int,
                sleep_s: float = 0.25, optimizer: str = "random",
                window_s: tuple[float, float] = (1.5, 6.0), executor: str = "process",
                workdir: Path | None = None) -> dict:
    """Kill-and-resume one study ``kills`` times on ``storage_url``; returns the counts.
    The config and outputs go to ``workdir`` (default: a new temporary directory)."""
    study = f"chaos-{uuid.uuid4().hex[:8]}"
    tmp = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp())
    tmp.mkdir(parents=True, exist_ok=True)
    cfg = tmp / "chaos.yaml"
    cfg.write_text(CONFIG.format(study=study, storage=storage_url, out=tmp / "out", trials=trials,
                                 workers=workers, sleep_s=sleep_s, optimizer=optimizer,
                                 executor=executor))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if workdir is not None and len(str(tmp)) < 75:
        # a SIGKILLed driver leaves its multiprocessing socket directory (pymp-*) in TMPDIR:
        # keep it in the work directory (when its path leaves room for a socket name)
        env["TMPDIR"] = str(tmp)
    cmd = [sys.executable, "-m", "experiments.cli", "run", str(cfg), "--no-progress"]
    rng = random.Random(seed)
    done_kills, t0, at_kill = 0, time.monotonic(), []
    while done_kills < kills:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(*window_s))    # includes start-up: some kills land early
        if proc.poll() is not None:
            err = proc.stderr.read().decode()[-2000:]
            if counts(storage_url, study).get("COMPLETE", 0) >= trials:
                break
            raise RuntimeError(f"driver exited early ({proc.returncode}): {err}")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done_kills += 1
        at_kill.append(counts(storage_url, study).get("COMPLETE", 0))
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"final run failed: {proc.stderr[-2000:]}")
    c = counts(storage_url, study)
    c.update(executor=executor, backend=name, kills=done_kills, wall_s=time.monotonic() - t0, trials=trials,
             complete_at_each_kill=at_kill)
    c["ok"] = (c.get("COMPLETE") == trials and c["numbers_ok"] and c["distinct_params"] == trials
               and c.get("RUNNING", 0) == 0 and c.get("WAITING", 0) == 0)
    return c


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sleep-s", type=float, default=0.25, help="seconds per evaluation")
    ap.add_argument("--optimizer", default="random")
    ap.add_argument("--executor", default="process", choices=["process", "dask"])
    ap.add_argument("--kill-window", type=float, nargs=2, default=(1.5, 6.0), metavar=("LO", "HI"),
                    help="each kill comes a uniform LO..HI seconds after the driver starts")
    ap.add_argument("--postgres", default=os.environ.get("COEXPLORE_TEST_POSTGRES_URL"),
                    help="SQLAlchemy URL of a PostgreSQL database to test as well")
    ap.add_argument("--json", metavar="FILE", help="also write the rows, settings, commit, wall time "
                    "and load average to FILE (experiments/harnesses/record.py)")
    args = ap.parse_args(argv)
    run = Run("experiments.harnesses.chaos", public_settings(args))
    backends = [("sqlite", f"sqlite:///{Path(tempfile.mkdtemp()) / 'chaos.db'}")]
    if args.postgres:
        backends.append(("postgresql", args.postgres))
    else:
        print("# PostgreSQL: skipped (no --postgres URL / COEXPLORE_TEST_POSTGRES_URL)")
    rows = []
    for name, url in backends:
        rows.append(run_backend(name, url, args.trials, args.kills, args.workers, args.seed,
                                args.sleep_s, args.optimizer, tuple(args.kill_window), args.executor))
    print(f"# executor {args.executor}, optimizer {args.optimizer}, {args.workers} workers, "
          f"{args.sleep_s:g} s per evaluation")
    print(f"{'backend':11} {'kills':>5} {'complete':>9} {'distinct':>9} {'re-run':>7} {'max att.':>8} "
          f"{'wall s':>7}  result")
    for r in rows:
        print(f"{r['backend']:11} {r['kills']:>5} {r.get('COMPLETE', 0):>9} {r['distinct_params']:>9} "
              f"{r['requeued']:>7} {r['max_attempts']:>8} {r['wall_s']:>7.1f}  "
              f"{'exact: every trial once, none lost' if r['ok'] else 'MISMATCH'}")
        print(f"{'':11} COMPLETE trials at each kill: {r['complete_at_each_kill']}")
    print(json.dumps(rows, default=str))
    run.write(args.json, rows, all(r["ok"] for r in rows))
    if not all(r["ok"] for r in rows):
        sys.exit(1)
    return rows


if __name__ == "__main__":
    main()
