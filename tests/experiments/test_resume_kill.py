"""A CLI sweep SIGKILLed mid-run and resumed ends with exactly the requested trials."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.experiments.conftest import subprocess_env

CONFIG = """
study: killme
storage: sqlite:///{db}
output: {out}
seed: 11
space:
  parameters:
    - {{name: x, type: real, low: -3.0, high: 3.0}}
    - {{name: y, type: integer, low: 0, high: 1000}}
evaluator: tests.experiments.study_evaluators:slow_bowl
objectives: {{f1: min, f2: min}}
optimizer: random
budget: {{n_trials: 60, workers: 2, timeout_s: 30}}
"""


def _counts(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    con = sqlite3.connect(db, timeout=30)
    try:
        rows = con.execute("select status, count(*) from trials group by status").fetchall()
    except sqlite3.OperationalError:
        return {}
    finally:
        con.close()
    return dict(rows)


def _completed(db: Path) -> dict[int, tuple]:
    con = sqlite3.connect(db, timeout=30)
    try:
        rows = con.execute(
            "select number, params, metrics, finished_at from trials where status='COMPLETE'"
        ).fetchall()
    finally:
        con.close()
    return {r[0]: r[1:] for r in rows}


def _start(cfg: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", "run", str(cfg), "--no-progress"],
        cwd=cfg.parent, env=subprocess_env(cfg.parent), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )


def test_sigkill_and_resume_gives_exact_distinct_trials(tmp_path):
    db = tmp_path / "kill.db"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG.format(db=db, out=tmp_path / "out"))
    kills = 0
    snapshot: dict[int, tuple] = {}
    for threshold in (8, 25):
        proc = _start(cfg)
        deadline = time.time() + 120
        while _counts(db).get("COMPLETE", 0) < threshold:
            assert proc.poll() is None, proc.stdout.read()
            assert time.time() < deadline, "sweep made no progress"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # the driver only; its workers must notice
        proc.wait()
        kills += 1
        before = _completed(db)
        # nothing completed earlier was lost or changed by the kill
        assert all(before[k] == v for k, v in snapshot.items())
        snapshot = before
    proc = _start(cfg)
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, out
    assert kills == 2
    counts = _counts(db)
    assert counts == {"COMPLETE": 60}, counts
    final = _completed(db)
    assert sorted(final) == list(range(60))
    assert all(final[k] == v for k, v in snapshot.items())
    assert len({v[0] for v in final.values()}) == 60  # distinct parameter sets
    assert "pareto front:" in out


