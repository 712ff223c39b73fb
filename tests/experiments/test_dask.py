"""The Dask executor on a real LocalCluster of 2 worker processes."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

distributed = pytest.importorskip("distributed")

from design_space import DesignSpace, Integer  # noqa: E402
from evaluators.base import EvalStatus  # noqa: E402
from experiments import Study  # noqa: E402
from experiments.dask_executor import DaskExecutor  # noqa: E402
from experiments.executors import Task  # noqa: E402
from optimizer import TrialStatus  # noqa: E402
from tests.experiments import evaluators_for_tests as ev  # noqa: E402
from tests.experiments import study_evaluators as sev  # noqa: E402


@pytest.fixture(scope="module")
def dask_ex():
    ex = DaskExecutor(ev.dispatch, workers=2, timeout_s=3.0)
    yield ex
    ex.shutdown()


def drain(ex, n, limit=60):
    out, t0 = [], time.monotonic()
    while len(out) < n and time.monotonic() - t0 < limit:
        out.extend(ex.wait(timeout=1.0))
    return out


def test_results_failures_and_timeouts_on_workers(dask_ex):
    assert dask_ex.capacity == 2
    dask_ex.submit(Task(0, {"action": "ok", "value": 2.5}, 0))
    dask_ex.submit(Task(1, {"action": "raise"}, 0))
    res = {r.number: r for r in drain(dask_ex, 2)}
    assert res[0].status is EvalStatus.OK and res[0].metrics["value"] == 2.5
    assert res[1].status is EvalStatus.FAILED and "bad tile size" in res[1].reason
    dask_ex.submit(Task(2, {"action": "sleep", "sleep_s": 30}, 0))   # killed on the worker
    dask_ex.submit(Task(3, {"action": "infeasible"}, 0))
    res = {r.number: r for r in drain(dask_ex, 2)}
    assert res[2].status is EvalStatus.FAILED and "timed out after 3 s" in res[2].reason
    assert res[3].status is EvalStatus.INFEASIBLE
    dask_ex.submit(Task(4, {"action": "ok", "value": 1.0}, 0))       # the worker survived
    assert drain(dask_ex, 1)[0].status is EvalStatus.OK


def test_killing_a_worker_mid_trial_loses_nothing(tmp_path):
    pidfile = tmp_path / "pids"
    ex = DaskExecutor(sev.slow_pid, workers=2)
    try:
        for i in range(ex.capacity):  # one slow trial per worker
            ex.submit(Task(i, {"x": i, "sleep_s": 1.5, "pidfile": str(pidfile)}, 0))
        # kill the worker process of the first trial to start, while it sleeps
        t0 = time.monotonic()
        while not pidfile.exists() or not pidfile.read_text().strip():
            assert time.monotonic() - t0 < 30
            time.sleep(0.05)
        victim = int(pidfile.read_text().split()[0])
        os.kill(victim, signal.SIGKILL)
        results, submitted = [], ex.capacity
        t0 = time.monotonic()
        while len(results) < 6 and time.monotonic() - t0 < 120:
            results.extend(ex.wait(timeout=1.0))
            while submitted < 6 and ex.n_running < ex.capacity:
                ex.submit(Task(submitted, {"x": submitted, "sleep_s": 0.2, "pidfile": str(pidfile)}, 0))
                submitted += 1
        numbers = sorted(r.number for r in results)
        assert numbers == list(range(6))                      # each trial once
        assert all(r.status is EvalStatus.OK for r in results)  # the killed one was re-run
        assert {int(r.metrics["pid"]) for r in results if r.number == 0} != {victim}
    finally:
        ex.shutdown()


def test_async_bo_study_exact_count_and_reproducible_random(tmp_path):
    space = DesignSpace(Integer("x", 0, 40), Integer("y", 0, 40))
    s = Study.create("bo", space, {"f1": "min"}, sev.bowl, "constrained-bo",
                     optimizer_options={"n_init": 4, "pool_size": 200}, storage=tmp_path / "d.db", seed=0)
    s.optimize(14, workers=2, executor="dask", progress=False)
    nums = [t.number for t in s.trials]
    assert nums == list(range(14)) and all(t.status is TrialStatus.COMPLETE for t in s.trials)
    sets = []
    for name in ("r1", "r2"):
        r = Study.create(name, space, {"f1": "min"}, sev.bowl, "random", storage=tmp_path / "d.db", seed=3)
        r.optimize(10, workers=2, executor="dask", progress=False)
        sets.append(sorted(tuple(sorted(t.params.items())) for t in r.trials))
    assert sets[0] == sets[1]


def test_existing_scheduler_address(tmp_path):
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        s = Study.create("remote", DesignSpace(Integer("x", 0, 5), Integer("y", 0, 2)), {"f1": "min"},
                         sev.bowl, "grid", storage=tmp_path / "r.db")
        s.optimize(18, cluster=cluster.scheduler_address, progress=False)
        assert len(s.trials) == 18
    finally:
        cluster.close()
    with pytest.raises(ValueError, match="cannot connect to the Dask scheduler"):
        DaskExecutor(sev.bowl, address="tcp://127.0.0.1:1")


def test_study_threads_do_not_leak():
    # a driver's executor threads end with shutdown (guards the fixture-based tests above)
    assert all(not t.name.startswith("Dask-") or not t.is_alive() or t.daemon
               for t in threading.enumerate())


def test_async_bo_study_survives_a_killed_worker(tmp_path):
    """A worker process SIGKILLed mid-trial during an asynchronous-BO study: the study still
    ends with exactly its budget, all COMPLETE, the interrupted trial re-run elsewhere."""
    pidfile = tmp_path / "pids"
    space = DesignSpace(Integer("x", 0, 40), Integer("y", 0, 40))
    s = Study.create("bo-kill", space, {"f1": "min"}, sev.PidRecorder, "constrained-bo",
                     optimizer_options={"n_init": 4, "pool_size": 200},
                     evaluator_options={"pidfile": str(pidfile), "sleep_s": 0.6},
                     storage=tmp_path / "k.db", seed=0)
    killed: list[int] = []

    def killer():
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60:
            pids = pidfile.read_text().split() if pidfile.exists() else []
            if len(pids) >= 3:            # mid-run: a few trials in
                killed.append(int(pids[-1]))
                os.kill(killed[0], signal.SIGKILL)
                return
            time.sleep(0.05)

    th = threading.Thread(target=killer)
    th.start()
    s.optimize(12, workers=2, executor="dask", progress=False)
    th.join()
    assert killed, "the worker was never killed"
    trials = s.trials
    assert [t.number for t in trials] == list(range(12))
    assert all(t.status is TrialStatus.COMPLETE for t in trials), [t.reason for t in trials]
    starts = pidfile.read_text().split()
    assert len(starts) > 12                  # the interrupted evaluation was started again ...
    assert sum(int(t.metrics["pid"]) == killed[0] for t in trials) < starts.count(str(killed[0]))
    # ... and the killed worker's last evaluation is not among the results
