"""Module-level evaluators for the executor tests.

They live in an importable module (not in the test file) so that worker processes can
import them by reference, as a real study's evaluator would be.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from evaluators.base import Evaluation, Infeasible

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def quadratic(point):
    """A well-behaved evaluator: two metrics from two parameters."""
    x, y = point["x"], point["y"]
    return {"edp": (x - 1.0) ** 2 + y, "area_mm2": 2 * x}


def with_seed(point, seed):
    return {"seed": seed}


def with_kwargs(point, **kwargs):
    return {"seed": kwargs.get("seed", -1)}


def without_seed(point):
    return {"seed": -1}


def keyword_only_seed(point, *, seed=0):
    return {"seed": seed}


def dispatch(point):
    """Behaves as ``point["action"]`` says: one evaluator for many failure modes."""
    action = point.get("action", "ok")
    if action == "ok":
        return {"value": float(point.get("value", 1.0)), "pid": os.getpid()}
    if action == "infeasible":
        raise Infeasible("does not fit in SRAM", sram_overflow_kb=12.5)
    if action == "raise":
        raise ValueError(f"bad tile size {point.get('tile', 7)}")
    if action == "string":
        return "edp=1"
    if action == "none":
        return None
    if action == "bad_metric":
        return {"edp": "abc"}
    if action == "bool_metric":
        return {"fits": True}
    if action == "nan":
        return {"edp": float("nan"), "energy_pj": float("inf")}
    if action == "evaluation":
        return Evaluation(
            metrics={"edp": 2},
            constraints={"area_excess_mm2": -0.5},
            info={"how": "analytical", "layers": [1, 2]},
        )
    if action == "sleep":
        if point.get("announce"):
            # one write(2) of < PIPE_BUF bytes: atomic, never interleaved with other processes
            os.write(1, f"started {os.getpid()}\n".encode())
        time.sleep(point["sleep_s"])
        return {"slept_s": point["sleep_s"]}
    if action == "rendezvous":
        # Announce this task in point["dir"], then wait until point["n"] tasks have: only
        # tasks that run at the same time can all meet (gives up after 60 s: met = 0).
        meet = Path(point["dir"])
        (meet / f"{os.getpid()}-{time.time_ns()}").touch()
        deadline = time.monotonic() + 60.0
        while len(list(meet.iterdir())) < point["n"]:
            if time.monotonic() > deadline:
                return {"met": 0.0, "pid": os.getpid()}
            time.sleep(0.01)
        return {"met": 1.0, "pid": os.getpid()}
    if action == "gate":
        # Wait until the file point["open"] exists (at most 60 s), then write
        # point["open"] + ".passed-<pid>" if "mark" is set and return.
        gate = Path(point["open"])
        deadline = time.monotonic() + 60.0
        while not gate.exists():
            if time.monotonic() > deadline:
                return {"opened": 0.0}
            time.sleep(0.01)
        if point.get("mark"):
            Path(f"{gate}.passed-{os.getpid()}").touch()
        return {"opened": 1.0}
    if action == "exit":
        os._exit(point.get("code", 3))
    if action == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(10)
    if action == "unsendable_info":
        return Evaluation(metrics={"edp": 1.0}, info={"callback": lambda: None})
    if action == "thread_env":
        return Evaluation(metrics={"edp": 0.0}, info={v: os.environ.get(v) for v in THREAD_VARS})
    raise AssertionError(f"unknown action {action!r}")


def _explode(message):
    raise RuntimeError(message)


class DiesOnLoad:
    """Pickles fine in the driver; unpickling it ends the worker process (exit code 7)
    before the worker is ready: a worker that dies while starting."""

    def __call__(self, point):
        return {"value": 1.0}

    def __reduce__(self):
        return (os._exit, (7,))


class FailsToLoad:
    """Pickles fine in the driver but cannot be unpickled in a worker."""

    def __call__(self, point):
        return {"value": 1.0}

    def __reduce__(self):
        return (_explode, ("cannot load me",))
