"""Executors: every way an evaluation can go wrong becomes a Result, never an exception.

Covers run_evaluation (normalization, seed passing), InlineExecutor and ProcessExecutor
(OK / INFEASIBLE / FAILED, timeouts, dead workers, concurrency, cloudpickle) and the
guarantee that a SIGKILLed driver leaves no worker process behind.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from evaluators.base import EvalStatus, Evaluation
from experiments.executor_factory import make_executor
from experiments.executors import (
    Executor,
    InlineExecutor,
    ProcessExecutor,
    Result,
    Task,
    WorkerStartError,
    run_evaluation,
)
from tests.experiments import evaluators_for_tests as ev
from tests.experiments.conftest import subprocess_env

# The directory from which the helper module imports under its own name (the repo root
# when tests/ is a package): worker processes and the driver script must find it too.
HELPERS_ROOT = Path(ev.__file__).resolve().parents[ev.__name__.count(".")]
KINDS = ["inline", "process"]


# ----------------------------------------------------------------------------- helpers


@pytest.fixture
def make():
    """Build executors by kind; all of them are shut down after the test."""
    made: list[Executor] = []

    def build(kind: str, evaluator, **kwargs) -> Executor:
        if kind == "inline":
            executor: Executor = InlineExecutor(evaluator, **kwargs)
        else:
            kwargs.setdefault("workers", 1)
            executor = ProcessExecutor(evaluator, **kwargs)
        made.append(executor)
        return executor

    yield build
    for executor in made:
        executor.shutdown()


def collect(executor: Executor, n: int, limit_s: float = 30.0) -> list[Result]:
    results: list[Result] = []
    deadline = time.monotonic() + limit_s
    while len(results) < n:
        assert time.monotonic() < deadline, f"only {len(results)} of {n} results after {limit_s} s"
        results += executor.wait(timeout=1.0)
    return sorted(results, key=lambda r: r.number)


def run_one(
    executor: Executor, params: dict | None = None, number: int = 0, seed: int = 0
) -> Result:
    executor.submit(Task(number, dict(params or {}), seed))
    (result,) = collect(executor, 1)
    assert result.number == number
    return result


def evaluate(evaluator, params: dict | None = None, seed: int = 0) -> Result:
    return run_evaluation(evaluator, Task(0, dict(params or {}), seed))


def is_gone(pid: int) -> bool:
    """No such process, or a zombie (exited, waiting to be reaped by its new parent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    state = next((line.split()[1] for line in status.splitlines() if line.startswith("State:")), "")
    return state.startswith(("Z", "X"))


def wait_gone(pids: list[int], limit_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + limit_s
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if not is_gone(pid)]
        time.sleep(0.05)
    return alive


needs_main_thread = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"),
    reason="the inline timeout uses SIGALRM in the main thread",
)


# ------------------------------------------------------------------ run_evaluation


def test_mapping_becomes_float_metrics():
    result = evaluate(
        lambda p: {"edp": 3, "energy_pj": np.float32(1.5), "n": np.int64(4), "z": np.array(2.0)}
    )
    assert result.status is EvalStatus.OK
    assert result.metrics == {"edp": 3.0, "energy_pj": 1.5, "n": 4.0, "z": 2.0}
    assert all(type(v) is float for v in result.metrics.values())
    assert result.reason is None and result.traceback is None
    assert result.wall_time_s >= 0.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("abc", "metric 'edp' is not a number: 'abc'"),
        (None, "metric 'edp' is not a number: None"),
        ([1.0, 2.0], "metric 'edp' is not a number: [1.0, 2.0]"),
        (1 + 2j, "metric 'edp' is not a number: (1+2j)"),
        (np.array([1.0, 2.0]), "metric 'edp' is not a number: array([1., 2.])"),
        (True, "metric 'edp' is a bool (True)"),
        (np.bool_(False), "metric 'edp' is a bool"),
    ],
)
def test_non_numeric_metric_fails_with_precise_reason(value, expected):
    result = evaluate(lambda p: {"edp": value})
    assert result.status is EvalStatus.FAILED
    assert result.reason is not None and result.reason.startswith(expected), result.reason
    assert result.metrics == {}


def test_nan_and_inf_pass_through():
    result = evaluate(ev.dispatch, {"action": "nan"})
    assert result.status is EvalStatus.OK
    assert math.isnan(result.metrics["edp"]) and result.metrics["energy_pj"] == math.inf


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("string", "evaluator returned str, expected a mapping of metrics or an Evaluation"),
        ("none", "evaluator returned NoneType, expected a mapping of metrics or an Evaluation"),
        ("bad_metric", "metric 'edp' is not a number: 'abc'"),
    ],
)
def test_bad_returns_fail(action, reason):
    result = evaluate(ev.dispatch, {"action": action})
    assert (result.status, result.reason) == (EvalStatus.FAILED, reason)


def test_evaluation_is_copied():
    result = evaluate(ev.dispatch, {"action": "evaluation"})
    assert result.status is EvalStatus.OK
    assert result.metrics == {"edp": 2.0}
    assert result.constraints == {"area_excess_mm2": -0.5}
    assert result.info == {"how": "analytical", "layers": [1, 2]}

    result = evaluate(
        lambda p: Evaluation(
            status=EvalStatus.INFEASIBLE, reason="no mapping", constraints={"c": 1}
        )
    )
    assert (result.status, result.reason, result.constraints) == (
        EvalStatus.INFEASIBLE,
        "no mapping",
        {"c": 1.0},
    )

    result = evaluate(lambda p: Evaluation(metrics={"edp": 1.0}, constraints={"slack": "x"}))
    assert result.status is EvalStatus.FAILED
    assert result.reason == "constraint 'slack' is not a number: 'x'"


def test_infeasible_and_exceptions():
    result = evaluate(ev.dispatch, {"action": "infeasible"})
    assert result.status is EvalStatus.INFEASIBLE
    assert result.reason == "does not fit in SRAM"
    assert result.constraints == {"sram_overflow_kb": 12.5}
    assert result.traceback is None

    result = evaluate(ev.dispatch, {"action": "raise", "tile": 9})
    assert result.status is EvalStatus.FAILED
    assert result.reason == "ValueError: bad tile size 9"
    assert "bad tile size 9" in result.traceback and "dispatch" in result.traceback


def test_keyboard_interrupt_and_system_exit_propagate():
    def interrupted(point):
        raise KeyboardInterrupt

    def exits(point):
        raise SystemExit(2)

    with pytest.raises(KeyboardInterrupt):
        evaluate(interrupted)
    with pytest.raises(SystemExit):
        evaluate(exits)


class _SeededModel:
    def __call__(self, point, seed=None):
        return {"seed": seed}

    def evaluate(self, point, seed):
        return {"seed": seed}


@pytest.mark.parametrize(
    ("evaluator", "expected"),
    [
        (ev.with_seed, 42.0),
        (ev.with_kwargs, 42.0),
        (ev.keyword_only_seed, 42.0),
        (ev.without_seed, -1.0),
        (lambda point: {"seed": -1}, -1.0),
        (_SeededModel(), 42.0),
        (_SeededModel().evaluate, 42.0),
    ],
)
def test_seed_is_passed_only_when_accepted(evaluator, expected):
    for _ in range(2):  # the second call goes through the signature cache
        assert evaluate(evaluator, seed=42).metrics == {"seed": expected}


def test_evaluator_gets_a_copy_of_the_params():
    def mutates(point):
        point["x"] = 99
        return {"x": point["x"]}

    task = Task(0, {"x": 1}, 0)
    assert run_evaluation(mutates, task).metrics == {"x": 99.0}
    assert task.params == {"x": 1}


# ------------------------------------------------------------ both executors


@pytest.mark.parametrize("kind", KINDS)
def test_ok_infeasible_failed(make, kind):
    executor = make(kind, ev.dispatch)
    ok = run_one(executor, {"action": "ok", "value": 2.5}, number=1)
    assert (ok.status, ok.metrics["value"]) == (EvalStatus.OK, 2.5)
    assert ok.wall_time_s >= 0.0
    # inline runs in this process, process in a worker
    assert (ok.metrics["pid"] == os.getpid()) == (kind == "inline")

    infeasible = run_one(executor, {"action": "infeasible"}, number=2)
    assert infeasible.status is EvalStatus.INFEASIBLE
    assert infeasible.reason == "does not fit in SRAM"
    assert infeasible.constraints == {"sram_overflow_kb": 12.5}

    failed = run_one(executor, {"action": "raise"}, number=3)
    assert failed.status is EvalStatus.FAILED
    assert failed.reason == "ValueError: bad tile size 7"
    assert "bad tile size 7" in failed.traceback

    for action, reason in [
        ("string", "evaluator returned str, expected a mapping of metrics or an Evaluation"),
        ("none", "evaluator returned NoneType, expected a mapping of metrics or an Evaluation"),
        ("bad_metric", "metric 'edp' is not a number: 'abc'"),
    ]:
        result = run_one(executor, {"action": action}, number=4)
        assert (result.status, result.reason) == (EvalStatus.FAILED, reason)
    bool_metric = run_one(executor, {"action": "bool_metric"}, number=5)
    assert bool_metric.status is EvalStatus.FAILED and "'fits' is a bool" in bool_metric.reason

    nan = run_one(executor, {"action": "nan"}, number=6)
    assert nan.status is EvalStatus.OK and math.isnan(nan.metrics["edp"])

    evaluation = run_one(executor, {"action": "evaluation"}, number=7)
    assert evaluation.info == {"how": "analytical", "layers": [1, 2]}
    assert evaluation.constraints == {"area_excess_mm2": -0.5}
    assert executor.n_running == 0


@pytest.mark.parametrize("kind", KINDS)
def test_seed_passing(make, kind):
    assert run_one(make(kind, ev.with_seed), seed=7).metrics == {"seed": 7.0}
    assert run_one(make(kind, ev.without_seed), seed=7).metrics == {"seed": -1.0}


@pytest.mark.parametrize("kind", KINDS)
def test_capacity_and_wait_when_idle(make, kind):
    executor = make(kind, ev.dispatch)
    assert executor.wait(timeout=0.1) == []  # nothing in flight: returns at once
    executor.submit(Task(0, {}, 0))
    assert executor.n_running == 1
    with pytest.raises(RuntimeError, match="capacity"):
        executor.submit(Task(1, {}, 0))
    assert [r.number for r in collect(executor, 1)] == [0]
    executor.shutdown()
    executor.shutdown()  # idempotent
    with pytest.raises(RuntimeError, match="shut down"):
        executor.submit(Task(2, {}, 0))


@pytest.mark.parametrize("kind", [pytest.param("inline", marks=needs_main_thread), "process"])
def test_hanging_evaluation_times_out_and_executor_recovers(make, kind):
    before = signal.getsignal(signal.SIGALRM)
    executor = make(kind, ev.dispatch, timeout_s=1)
    result = run_one(executor, {"action": "sleep", "sleep_s": 60}, number=1)
    assert result.status is EvalStatus.FAILED
    assert result.reason == "timed out after 1 s"
    # not before the timeout, and cut short: the 60 s sleep never ran to its end
    assert 0.9 <= result.wall_time_s < 60.0
    assert run_one(executor, {"action": "ok"}, number=2).status is EvalStatus.OK
    assert signal.getsignal(signal.SIGALRM) is before


def test_inline_timeout_outside_main_thread_warns_and_runs_unbounded(caplog):
    executor = InlineExecutor(ev.dispatch, timeout_s=0.05)
    results: list[Result] = []

    def work():
        for number in range(2):
            executor.submit(Task(number, {"action": "sleep", "sleep_s": 0.15}, 0))
            results.extend(executor.wait())

    with caplog.at_level(logging.WARNING, logger="experiments.executors"):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join(10)
    assert [r.status for r in results] == [EvalStatus.OK, EvalStatus.OK]
    warnings = [r for r in caplog.records if "without a timeout" in r.getMessage()]
    assert len(warnings) == 1


# ------------------------------------------------------------ process executor


def test_worker_death_is_a_failed_result_and_worker_is_replaced(make):
    executor = make("process", ev.dispatch)
    first_pid = run_one(executor, {"action": "ok"}).metrics["pid"]
    died = run_one(executor, {"action": "exit", "code": 3}, number=1)
    assert died.status is EvalStatus.FAILED
    assert died.reason == "worker process died (exit code 3) while evaluating trial 1"
    after = run_one(executor, {"action": "ok"}, number=2)
    assert after.status is EvalStatus.OK and after.metrics["pid"] != first_pid

    segv = run_one(executor, {"action": "segv"}, number=3)
    assert segv.status is EvalStatus.FAILED
    assert "exit code -11, killed by SIGSEGV" in segv.reason
    assert run_one(executor, {"action": "ok"}, number=4).status is EvalStatus.OK


def test_two_workers_run_concurrently(make, tmp_path):
    executor = make("process", ev.dispatch, workers=2)
    for number in range(2):  # warm both workers up
        executor.submit(Task(number, {"action": "ok"}, 0))
    assert len({r.metrics["pid"] for r in collect(executor, 2)}) == 2

    # Each task waits until both have started: they can only meet if they run at once.
    meet = tmp_path / "meet"
    meet.mkdir()
    for number in range(2):
        executor.submit(Task(number, {"action": "rendezvous", "dir": str(meet), "n": 2}, 0))
    results = collect(executor, 2, limit_s=90)
    assert [r.metrics["met"] for r in results] == [1.0, 1.0]
    assert len({r.metrics["pid"] for r in results}) == 2

    sleep_s = 0.3
    executor.submit(Task(2, {"action": "sleep", "sleep_s": sleep_s}, 0))
    assert collect(executor, 1)[0].wall_time_s >= sleep_s  # measured in the worker

    # wait() hands back every result that is ready ...
    for number in range(2):
        executor.submit(Task(number, {"action": "ok"}, 0))
    deadline = time.monotonic() + 30
    while not all(w.conn.poll() for w in executor._workers):  # both answers are in the pipes
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert len(executor.wait(timeout=0)) == 2
    # ... and times out with [] while none is
    gate = tmp_path / "open"
    executor.submit(Task(3, {"action": "gate", "open": str(gate)}, 0))
    assert executor.wait(timeout=0.05) == []
    gate.touch()
    (result,) = collect(executor, 1)
    assert result.number == 3 and result.metrics == {"opened": 1.0}


def test_lambda_and_closure_go_through_cloudpickle(make):
    scale = 3.0

    def closure(point):
        return {"y": scale * point["x"]}

    assert run_one(make("process", lambda p: {"y": p["x"] + 1}), {"x": 1}).metrics == {"y": 2.0}
    assert run_one(make("process", closure), {"x": 2}).metrics == {"y": 6.0}


def test_unpicklable_evaluator_is_a_type_error():
    lock = threading.Lock()

    def holds_a_lock(point):
        with lock:
            return {"y": 1.0}

    with pytest.raises(TypeError, match="holds_a_lock") as info:
        ProcessExecutor(holds_a_lock)
    assert "_thread.lock" in str(info.value)


def test_evaluator_that_cannot_load_in_the_worker(make):
    result = run_one(make("process", ev.FailsToLoad()))
    assert result.status is EvalStatus.FAILED
    assert result.reason == (
        "could not load the evaluator in the worker process: RuntimeError: cannot load me"
    )


def test_unsendable_params_and_results(make):
    executor = make("process", ev.dispatch)
    bad_params = run_one(executor, {"lock": threading.Lock()})
    assert bad_params.status is EvalStatus.FAILED
    assert "parameters of trial 0 cannot be sent" in bad_params.reason

    bad_info = run_one(executor, {"action": "unsendable_info"}, number=1)
    assert bad_info.status is EvalStatus.FAILED
    assert "result of trial 1 could not be sent to the driver" in bad_info.reason
    assert run_one(executor, {"action": "ok"}, number=2).status is EvalStatus.OK


def test_worker_thread_environment(make, monkeypatch):
    for var in ev.THREAD_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("COEXPLORE_WORKER_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    info = run_one(make("process", ev.dispatch), {"action": "thread_env"}).info
    assert info == {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}

    monkeypatch.setenv("COEXPLORE_WORKER_THREADS", "3")
    info = run_one(make("process", ev.dispatch), {"action": "thread_env"}).info
    assert info == dict.fromkeys(ev.THREAD_VARS, "3")

    monkeypatch.setenv("COEXPLORE_WORKER_THREADS", "many")
    with pytest.raises(ValueError, match="COEXPLORE_WORKER_THREADS"):
        ProcessExecutor(ev.dispatch)


def test_shutdown_kills_busy_workers_promptly(tmp_path):
    """Busy workers are killed, not waited for: once shutdown() returns they are gone,
    and their evaluations (held at a gate that opens only afterwards) never finish."""
    executor = ProcessExecutor(ev.dispatch, workers=2)
    gate = tmp_path / "open"
    for number in range(2):
        executor.submit(Task(number, {"action": "gate", "open": str(gate), "mark": True}, 0))
    assert executor.wait(timeout=0.3) == []
    pids = executor.worker_pids
    assert len(pids) == 2
    executor.shutdown()
    assert [pid for pid in pids if not is_gone(pid)] == []  # reaped before shutdown returned
    assert executor.n_running == 0
    gate.touch()
    assert not list(tmp_path.glob("open.passed-*"))


@pytest.mark.parametrize("start_method", ["forkserver", "spawn", "fork"])
def test_start_methods(make, start_method):
    if start_method == "fork" and ("jax" in sys.modules or "torch" in sys.modules):
        with pytest.raises(ValueError, match="start_method 'fork' is refused"):
            make("process", ev.quadratic, start_method=start_method)
        return
    executor = make("process", ev.quadratic, start_method=start_method)
    assert run_one(executor, {"x": 2.0, "y": 1.0}).metrics == {"edp": 2.0, "area_mm2": 4.0}


@pytest.mark.parametrize("module", ["jax", "torch"])
def test_fork_is_refused_while_jax_or_torch_is_imported(monkeypatch, module):
    """Forking a process whose JAX or torch threads run can deadlock the child."""
    monkeypatch.setitem(sys.modules, module, sys.modules.get(module) or object())
    other = {"jax": "torch", "torch": "jax"}[module]
    monkeypatch.delitem(sys.modules, other, raising=False)   # only `module` is loaded
    with pytest.raises(ValueError, match=f"{module} is imported in this process"):
        ProcessExecutor(ev.quadratic, start_method="fork")
    ProcessExecutor(ev.quadratic, start_method="forkserver").shutdown()  # the default is fine


def test_workers_that_die_while_starting_stop_the_executor(make, caplog):
    """A worker that dies before it has loaded the evaluator did not run its trial: the
    trial is not FAILED, it is retried on a new worker, and after 3 such deaths in a row
    wait() raises instead of failing trials (or waiting) forever."""
    executor = make("process", ev.DiesOnLoad(), workers=2)
    executor.submit(Task(0, {}, 0))
    executor.submit(Task(1, {}, 0))
    results: list[Result] = []
    deadline = time.monotonic() + 60
    with pytest.raises(WorkerStartError, match=r"exit code 7; 3 in a row"):
        while time.monotonic() < deadline:
            results += executor.wait(timeout=1.0)
    assert results == []
    retried = [r for r in caplog.records if "died while starting" in r.getMessage()]
    assert len(retried) == 2


GUARDLESS = textwrap.dedent(
    """
    import os, sys
    from experiments.executors import ProcessExecutor, Task, map_tasks
    print("top-level ran in", os.getpid(), flush=True)
    ex = ProcessExecutor(lambda p: {"y": p["x"] * 2.0, "pid": float(os.getpid())},
                         workers=2, start_method=sys.argv[1])
    out = sorted(r.metrics["y"] for r in map_tasks(ex, [Task(i, {"x": i}, 0) for i in range(6)]))
    ex.shutdown()
    print("results", out, flush=True)
    """
)


@pytest.mark.parametrize("start_method", ["forkserver", "spawn"])
def test_a_script_without_main_guard_runs_its_workers_once(tmp_path, start_method):
    """A plain script (no ``if __name__ == "__main__":``) run with ``python FILE``: its
    workers do not run it again, so its top level runs once and every task is OK."""
    script = tmp_path / "plain.py"
    script.write_text(GUARDLESS)
    out = subprocess.run([sys.executable, str(script), start_method], cwd=tmp_path,
                         env=subprocess_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("top-level ran in") == 1, out.stdout + out.stderr
    assert "results [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]" in out.stdout


DRIVER = textwrap.dedent(
    """
    import importlib
    import os
    import sys
    import time

    from experiments.executors import ProcessExecutor, Task

    if __name__ == "__main__":
        ev = importlib.import_module(sys.argv[2])
        executor = ProcessExecutor(ev.dispatch, workers=2, start_method=sys.argv[1])
        for number in range(2):
            executor.submit(Task(number, {"action": "sleep", "sleep_s": 60, "announce": True}, 0))
        os.write(1, ("pids " + " ".join(map(str, executor.worker_pids)) + "\\n").encode())
        time.sleep(120)
    """
)


@pytest.mark.parametrize("start_method", ["forkserver", "fork"])
def test_sigkilled_driver_leaves_no_worker_alive(tmp_path, start_method):
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    env = subprocess_env(tmp_path)  # its pymp-* directory stays in tmp_path after the SIGKILL
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HELPERS_ROOT), os.environ.get("PYTHONPATH")]))
    driver = subprocess.Popen(
        [sys.executable, str(script), start_method, ev.__name__],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in driver.stdout], daemon=True
    ).start()
    try:
        pids: list[int] = []
        started: set[int] = set()
        deadline = time.monotonic() + 20
        while not (pids and started == set(pids)):  # both workers are mid-evaluation
            line = lines.get(timeout=max(0.1, deadline - time.monotonic())).split()
            if line[0] == "pids":
                pids = [int(pid) for pid in line[1:]]
            elif line[0] == "started":
                started.add(int(line[1]))
        assert len(pids) == 2
    finally:
        driver.kill()  # SIGKILL: no cleanup code runs in the driver
        driver.wait(10)
    assert wait_gone(pids, 5.0) == []


# ----------------------------------------------------------------------- factory


def test_make_executor():
    with make_executor("auto", ev.quadratic) as executor:
        assert isinstance(executor, InlineExecutor)
    with make_executor("auto", ev.quadratic, timeout_s=5) as executor:
        assert isinstance(executor, ProcessExecutor) and executor.capacity == 1
    with make_executor("auto", ev.quadratic, workers=3) as executor:
        assert isinstance(executor, ProcessExecutor) and executor.capacity == 3
    with make_executor("inline", ev.quadratic, timeout_s=5) as executor:
        assert isinstance(executor, InlineExecutor) and executor.timeout_s == 5
    with make_executor("process", ev.quadratic) as executor:
        assert isinstance(executor, ProcessExecutor)

    with pytest.raises(ValueError, match=r"'threads'.*'dask', 'inline', 'process', 'auto'"):
        make_executor("threads", ev.quadratic)
    with pytest.raises(ValueError, match="workers"):
        make_executor("process", ev.quadratic, workers=0)
    with pytest.raises(ValueError, match="workers"):
        make_executor("inline", ev.quadratic, workers=2)
    with pytest.raises(ValueError, match="timeout_s"):
        make_executor("process", ev.quadratic, timeout_s=-1)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_trial_records_the_cpu_seconds_of_its_evaluation_beside_its_wall_time(tmp_path, workers):
    """Wall and CPU time are both kept: an evaluation asleep for 0.3 s costs wall time but
    almost no CPU; one spinning until it has used 0.2 CPU seconds costs both (measured in
    the process that ran it, inline or in a worker)."""
    from design_space import Categorical, DesignSpace
    from experiments import Study

    space = DesignSpace(Categorical("work", ["sleep", "spin"]))
    s = Study.create("cpu", space, {"seconds_s": "min"}, "tests.experiments.study_evaluators:sleeps_or_spins",
                     "grid", storage=tmp_path / "cpu.db", seed=0)
    s.optimize(2, workers=workers, progress=False)
    df = s.trials_dataframe().set_index("params_work")
    assert df.loc["sleep", "wall_time_s"] >= 0.3 and df.loc["sleep", "cpu_time_s"] < 0.1
    assert df.loc["spin", "cpu_time_s"] >= 0.2 and df.loc["spin", "wall_time_s"] >= 0.2
