"""Drivers started together on one new study all join it (issue 22, item 1).

Starting the same command several times is how a study is scaled out on one machine (or
on several hosts sharing PostgreSQL). Every driver then races the others to create the
tables, the study row and the trial numbers; whatever the interleaving, they must end
with exactly the budget of finished trials, each number once, and no driver failing.

* ``test_drivers_released_together_join_one_study``: four driver processes, imports done,
  wait at a barrier and then all open the storage, create-or-join the study and optimize
  in the same instant; 20 rounds on SQLite and PostgreSQL each, each round on a new
  database (SQLite file / PostgreSQL schema), so the tables are created concurrently too.
  ``python -m experiments.harnesses.faults race`` runs the same check 20 times with
  ``coexplore run`` processes and prints the figures.
* ``test_cli_runs_started_together_join_one_study``: the issue's reproduction, four
  ``coexplore run`` processes of the same config started at once (SQLite).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

import pandas as pd
import pytest

from design_space import DesignSpace, Integer, Real
from experiments import Study
from experiments.storage import Storage
from optimizer import TrialStatus
from tests.experiments import study_evaluators as ev
from tests.experiments.conftest import pg_base_url, pg_schema, subprocess_env

DRIVERS = 4
ROUNDS = 20
N_TRIALS = 12


def _space() -> DesignSpace:
    return DesignSpace(Real("x", -3.0, 3.0), Integer("y", 0, 4))


def _driver_loop(jobs, results, barrier) -> None:
    """One driver process: for each job, wait for the others, then create-or-join and run."""
    while True:
        job = jobs.get()
        if job is None:
            return
        url, name = job
        error = None
        try:
            barrier.wait(120)
            s = Study.create(name, _space(), {"f1": "min", "f2": "min"}, ev.bowl,
                             storage=url, seed=5)
            s.optimize(N_TRIALS, workers=1, executor="inline", progress=False, heartbeat_s=0.2)
            s.storage.close()
        except BaseException as e:  # reported, not raised: the loop serves the next round
            error = f"{type(e).__name__}: {e}"
        results.put((os.getpid(), error))


def _check_round(url: str, name: str) -> None:
    with Storage(url) as st:
        assert [s.name for s in st.list_studies()] == [name]
        trials = st.trials(st.get_study(name).id)
    numbers = [t.number for t in trials]
    assert numbers == list(range(N_TRIALS)), numbers            # the budget, each number once
    assert all(t.status is TrialStatus.COMPLETE and t.attempts == 1 for t in trials)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_drivers_released_together_join_one_study(backend, tmp_path, request):
    import multiprocessing as mp

    if backend == "postgresql":
        base = pg_base_url()
        request.getfixturevalue("pg_lock")
    ctx = mp.get_context("forkserver")
    jobs, results, barrier = ctx.Queue(), ctx.Queue(), ctx.Barrier(DRIVERS)
    procs = [ctx.Process(target=_driver_loop, args=(jobs, results, barrier))
             for _ in range(DRIVERS)]
    for p in procs:
        p.start()
    try:
        for r in range(ROUNDS):
            name = f"together-{r}"
            with (pg_schema(base) if backend == "postgresql"
                  else contextlib.nullcontext(f"sqlite:///{tmp_path / f'round{r}.db'}")) as url:
                for _ in range(DRIVERS):
                    jobs.put((url, name))
                outcomes = [results.get(timeout=180) for _ in range(DRIVERS)]
                assert len({pid for pid, _ in outcomes}) == DRIVERS   # four distinct drivers
                assert [e for _, e in outcomes] == [None] * DRIVERS, (r, outcomes)
                _check_round(url, name)
    finally:
        for _ in procs:
            jobs.put(None)
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    assert [p.exitcode for p in procs] == [0] * DRIVERS


CONFIG = """
study: together
storage: "{url}"
output: {out}
seed: 3
space:
  parameters:
    - {{name: x, type: real, low: -3.0, high: 3.0}}
    - {{name: y, type: integer, low: 0, high: 1000}}
evaluator: tests.experiments.study_evaluators:bowl
objectives: {{f1: min, f2: min}}
optimizer: random
budget: {{n_trials: {n}, workers: 2, timeout_s: 60}}
"""


def test_cli_runs_started_together_join_one_study(tmp_path):
    """Four `coexplore run` of one config started at once (the issue's reproduction: the
    third used to exit with "a study named ... already exists"). SQLite only here: four
    CLI processes take ~20 s on 2 cores, and PostgreSQL runs the same code path in the
    barrier test above (``experiments.harnesses.faults race`` runs the CLI on both)."""
    storage_url = f"sqlite:///{tmp_path / 'study.db'}"
    out = tmp_path / "out"
    cfg = tmp_path / "study.yaml"
    cfg.write_text(CONFIG.format(url=storage_url, out=out, n=20))
    env = subprocess_env(tmp_path)
    cmd = [sys.executable, "-m", "experiments.cli", "run", str(cfg), "--no-progress"]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for _ in range(DRIVERS)]
    outputs = [p.communicate(timeout=240)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * DRIVERS, outputs
    with Storage(storage_url) as st:
        trials = st.trials(st.get_study("together").id)
    assert [t.number for t in trials] == list(range(20))
    assert all(t.status is TrialStatus.COMPLETE for t in trials)
    # the four drivers wrote the same exports into one directory: whole files, never mixed
    assert len(pd.read_csv(out / "trials.csv")) == 20
    front = pd.read_csv(out / "pareto_front.csv")
    assert len(front) >= 1 and set(front["number"]) <= set(range(20))
    assert (out / "report.html").read_text().rstrip().endswith("</html>")
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporaries left
