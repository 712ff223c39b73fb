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
from tests.experiments.conftest import subprocess_env  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _dask_scratch_in_tmp(tmp_path_factory):
    """Dask's scratch space (locks, worker directories) in this module's temporary folder."""
    import dask

    with dask.config.set({"temporary-directory": str(tmp_path_factory.mktemp("dask"))}):
        yield


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


def test_a_task_cancelled_by_the_cluster_is_submitted_again(dask_ex, tmp_path, caplog):
    """Someone cancels our task on a cluster that stays up (e.g. a cluster restart): the
    trial is not FAILED -- it is submitted again and its result comes back once."""
    gate = tmp_path / "open"
    dask_ex.submit(Task(7, {"action": "gate", "open": str(gate)}, 0))
    (fut,) = dask_ex._futures
    dask_ex.client.cancel([fut])
    deadline = time.monotonic() + 60
    with caplog.at_level("WARNING", logger="experiments.dask_executor"):
        while "trial 7 was cancelled by the Dask cluster" not in caplog.text:
            assert dask_ex.wait(timeout=1.0) == []      # resubmitted, not a result
            assert time.monotonic() < deadline
    assert dask_ex.n_running == 1
    gate.touch()
    (result,) = drain(dask_ex, 1)
    assert result.number == 7 and result.status is EvalStatus.OK
    assert result.metrics == {"opened": 1.0}


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


DASK_CONFIG = """
study: dask-faults
storage: sqlite:///{db}
output: {out}
seed: 6
space:
  parameters:
    - {{name: x, type: real, low: -3.0, high: 3.0}}
    - {{name: y, type: integer, low: 0, high: 1000}}
evaluator: {{function: "tests.experiments.study_evaluators:gated_bowl", options: {{gate_dir: "{gate}", free_calls: 3}}}}
objectives: {{f1: min, f2: min}}
optimizer: random
budget: {{n_trials: 10, workers: 2}}
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Cluster:
    """A Dask scheduler and a 2-process worker, as separate processes (an external
    cluster that can be killed independently of the driver)."""

    def __init__(self, port: int, workdir):
        import subprocess
        import sys

        env = subprocess_env(workdir, DASK_DISTRIBUTED__WORKER__DAEMON="False")
        self.address = f"tcp://127.0.0.1:{port}"
        common = dict(cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", str(port), "--no-dashboard"], **common)
        self.workers = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nworkers", "2",
             "--nthreads", "1", "--no-dashboard", "--local-directory", str(workdir)], **common)

    def kill(self) -> None:
        for p in (self.scheduler, self.workers):
            if p.poll() is None:
                p.kill()
            p.wait(30)


def test_a_killed_scheduler_stops_the_driver_and_the_same_command_resumes(tmp_path):
    """SIGKILL the scheduler of an external cluster while two trials are in flight: the
    driver stops (exit 3, a clear message), the two trials go back to the study, not
    FAILED; the same command on a new cluster at that address finishes the study."""
    import subprocess
    import sys

    from experiments.storage import Storage
    from tests.experiments.test_faults import wait_for_state

    gate = tmp_path / "gate"
    gate.mkdir()
    db = tmp_path / "d.db"
    cfg = tmp_path / "study.yaml"
    cfg.write_text(DASK_CONFIG.format(db=db, out=tmp_path / "out", gate=gate))
    port = _free_port()
    cmd = [sys.executable, "-m", "experiments.cli", "run", str(cfg), "--no-progress",
           "--cluster", f"tcp://127.0.0.1:{port}"]
    env = subprocess_env(tmp_path)
    first = _Cluster(port, tmp_path)
    try:
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        wait_for_state(f"sqlite:///{db}", "dask-faults", 3, 2, proc)   # 2 held on the workers
        first.scheduler.kill()
        out, err = proc.communicate(timeout=120)
    finally:
        first.kill()
    assert proc.returncode == 3, (out, err)
    assert f"lost the Dask scheduler at tcp://127.0.0.1:{port}" in err
    assert "the study is resumable" in err and "Traceback" not in err
    with Storage(db) as st:
        before = st.trials(st.get_study("dask-faults").id)
    assert sorted(t.status.value for t in before) == ["COMPLETE"] * 3 + ["WAITING"] * 2
    held = {t.number: t.params for t in before if t.status is TrialStatus.WAITING}

    (gate / "release").touch()
    second = _Cluster(port, tmp_path)
    try:
        again = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=240)
    finally:
        second.kill()
    assert again.returncode == 0, (again.stdout, again.stderr)
    with Storage(db) as st:
        after = st.trials(st.get_study("dask-faults").id)
    assert [t.number for t in after] == list(range(10))
    assert all(t.status is TrialStatus.COMPLETE for t in after)         # none FAILED
    done = {t.number: (t.params, t.metrics) for t in after}
    assert all(done[t.number] == (t.params, t.metrics) for t in before
               if t.status is TrialStatus.COMPLETE)                      # unchanged
    assert all(done[n][0] == p and after[n].attempts == 2 for n, p in held.items())
