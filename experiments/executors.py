"""Where evaluations run: in the driver process or in a pool of local worker processes.

An :class:`Executor` takes :class:`Task` s and gives back :class:`Result` s. Every way an
evaluation can go wrong becomes a result, never an exception out of the executor:
``Infeasible`` -> INFEASIBLE with the reason; any other exception -> FAILED with the
traceback; a non-mapping return or a non-numeric metric -> FAILED with the reason; a
per-trial timeout -> FAILED ("timed out after ... s", the worker is killed and replaced);
a worker process that dies (segfault, OOM kill) -> FAILED with its exit code, and a new
worker takes its place.

The pieces:

* :func:`run_evaluation` -- calls an evaluator on one :class:`Task` and normalizes what
  comes back into a :class:`Result`. Both executors (and the worker processes) use it, so
  the rules are the same everywhere:

  - an evaluator whose signature accepts a ``seed`` keyword (or ``**kwargs``) is called
    as ``f(point, seed=task.seed)``, otherwise as ``f(point)``; the signature is
    inspected once per evaluator and cached;
  - a mapping becomes the metrics; an :class:`~evaluators.base.Evaluation` is copied
    (metrics, constraints, status, reason, info); every metric and constraint value goes
    through ``float()``. Real numbers (``int``, ``float``, numpy/torch scalars, 0-d
    arrays) are accepted, NaN and infinities included -- judging objective values is the
    study's job, not the executor's. Strings, ``None``, complex numbers, arrays and
    containers are rejected, and so is ``bool`` (is ``True`` a 1 or a "yes"?): the trial
    is FAILED with a reason naming the metric, e.g. ``metric 'edp' is not a number: 'abc'``;
  - anything else returned -> FAILED ("evaluator returned str, expected a mapping of
    metrics or an Evaluation");
  - ``Infeasible`` -> INFEASIBLE with its reason and constraints; any other ``Exception``
    -> FAILED with ``"<ExceptionType>: <message>"`` and the formatted traceback.
    ``KeyboardInterrupt`` and ``SystemExit`` are not caught.

  ``wall_time_s`` is measured with :func:`time.perf_counter` around the evaluator call,
  in the process where the evaluation ran, and ``cpu_time_s`` with
  :func:`time.process_time` there (the CPU seconds of that process, all its threads, over
  the call; ``None`` where the driver had to judge the trial itself: a timeout or a dead
  worker).

* :class:`InlineExecutor` -- one evaluation at a time, in the calling thread: ``submit``
  stores the task, ``wait`` runs it. No isolation: a crash of the evaluator is a crash of
  the driver. A per-trial timeout is enforced with ``SIGALRM`` (``setitimer``) when the
  executor is used from the main thread of a POSIX process; elsewhere it runs without a
  timeout and logs a warning once. An in-process timeout only interrupts Python code: an
  evaluator stuck inside a C call that never returns to the interpreter (or one that
  swallows ``BaseException``) cannot be stopped this way -- use :class:`ProcessExecutor`
  for hard isolation.

* :class:`ProcessExecutor` -- a pool of persistent local worker processes, one task per
  worker at a time:

  - the evaluator is serialized once with ``cloudpickle`` (so lambdas, closures and
    functions defined in ``__main__`` work) and handed to every worker when it starts;
    an evaluator cloudpickle cannot serialize is a ``TypeError`` at construction;
  - workers are started lazily (multiprocessing context ``"forkserver"`` by default;
    ``"spawn"`` and ``"fork"`` are accepted), talk to the driver over one
    :func:`multiprocessing.Pipe` each, ignore ``SIGINT`` (Ctrl-C is the driver's to
    handle) and exit as soon as their pipe reaches end-of-file -- also in the middle of
    an evaluation -- so a driver that dies, even by ``SIGKILL``, leaves no worker behind;
  - a trial's timeout clock starts when its worker is ready to evaluate it (the first
    trial of a fresh worker does not pay for the worker's start-up); a worker past its
    deadline is killed (``SIGKILL``), the trial is FAILED ("timed out after 5 s") with the
    wall time measured by the driver, and a replacement worker is started. A worker that
    has not finished loading the evaluator ``60 s`` plus the timeout after it was started
    is treated the same way;
  - a worker that dies while evaluating (segfault, ``os._exit``, OOM kill) gives a FAILED
    result "worker process died (exit code N) while evaluating trial K" and is replaced;
  - a worker that dies while *starting* (before it has loaded the evaluator) did not run
    its trial, so the trial is not failed: it goes to a fresh worker. After
    ``3`` such deaths in a row ``wait`` raises :class:`WorkerStartError` (the workers
    cannot start here: their error output says why), so a driver never waits on
    trials that no worker will run;
  - ``shutdown`` (also run by the context manager, and at interpreter exit or garbage
    collection of a forgotten executor) kills busy workers, closes the pipes and reaps
    every worker.

  Threads in workers: before unpickling the evaluator, each worker sets
  ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` and ``OPENBLAS_NUM_THREADS``. If the driver's
  environment has ``COEXPLORE_WORKER_THREADS`` when the executor is created, all three
  are set to it; otherwise each keeps the driver's value and defaults to ``"1"``, so that
  N workers do not each start a thread per core. The values are taken from the driver at
  construction and passed explicitly, because a forkserver keeps the environment it was
  started with. Numerical libraries that were already imported in the worker before
  that point (while importing the ``experiments`` package) are limited at run time
  through ``threadpoolctl`` and ``torch.set_num_threads`` where those are available.

  The driver's main module is not re-run in the workers. multiprocessing's ``"spawn"``
  and ``"forkserver"`` would import it there (as ``__mp_main__``), so a plain script
  without an ``if __name__ == "__main__":`` guard would start its study again in every
  worker. A worker needs nothing from it: the evaluator travels by value (cloudpickle
  serializes what ``__main__`` defines by value and the rest by reference to importable
  modules), and the workers get the driver's ``sys.path``, so the script's own folder
  imports as in the driver. So the workers are started without the main module (the
  preparation data multiprocessing sends them has its main-module entry removed, for
  this executor's starts only) and the forkserver is asked to preload this module but
  not ``__main__``. What a script does at import time (registering a plugin, say) is
  therefore not done in the workers: put it in a module the evaluator imports.

  No worker is forked from a process whose JAX or torch threads may be running (forking
  a multithreaded process can deadlock the child): ``"fork"`` is refused when ``jax`` or
  ``torch`` is imported in the driver, and the forkserver, a fresh interpreter that
  imports only this module and what it needs (not JAX nor torch), does not load the
  driver's main module, which may import them.

  Forkserver notes: the forkserver process is started by multiprocessing on first use
  and shared by the whole driver process. ``ProcessExecutor`` adds this module to the
  forkserver's preload list (if the forkserver is not running yet), so the ``experiments``
  package and what it imports are imported once in the forkserver and every worker is
  forked with them loaded; with ``"spawn"`` each worker imports them itself (about a
  second for the full package). The forkserver keeps the environment of the moment it
  started; the thread variables above are passed explicitly for that reason.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import logging
import math
import multiprocessing
import multiprocessing.connection
import multiprocessing.util
import numbers
import os
import pickle
import queue
import signal
import sys
import threading
import time
import traceback
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import cloudpickle

from evaluators.base import EvalStatus, Evaluation, Infeasible

__all__ = [
    "Executor",
    "ExecutorLostError",
    "InlineExecutor",
    "ProcessExecutor",
    "Result",
    "Task",
    "WorkerStartError",
    "map_tasks",
    "run_evaluation",
]

log = logging.getLogger(__name__)

Evaluator = Callable[..., Any]

#: Environment variable that sets the BLAS/OpenMP thread count of worker processes.
WORKER_THREADS_ENV = "COEXPLORE_WORKER_THREADS"
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

_START_METHODS = ("forkserver", "spawn", "fork")

# A worker that has not loaded the evaluator this long (plus the trial timeout) after it
# was started is treated as hung.
_STARTUP_GRACE_S = 60.0
# How long shutdown waits for idle workers to exit on their own before killing them.
_SHUTDOWN_GRACE_S = 2.0
# Workers that die while starting, in a row, before wait() gives up (WorkerStartError).
_MAX_START_DEATHS = 3
# Modules whose threads make forking the driver unsafe (checked for start_method="fork").
_THREADED_MODULES = ("jax", "torch")


# --------------------------------------------------------------------------- records


class ExecutorLostError(RuntimeError):
    """The infrastructure that runs evaluations went away (a Dask scheduler died or became
    unreachable). The trials in flight were not evaluated -- not failed, just not run --
    and a study gives them back to be re-run with the same parameters when it resumes."""


class WorkerStartError(RuntimeError):
    """Worker processes die while starting, before they have loaded the evaluator, time
    after time: no trial can run on this executor. The trials in flight were not run (not
    failed); a study gives them back and stops."""


@dataclass(frozen=True)
class Task:
    """One evaluation to run: the trial ``number``, its parameters and its seed."""

    number: int
    params: dict
    seed: int


@dataclass(frozen=True)
class Result:
    """The normalized outcome of one :class:`Task`.

    Attributes:
        number: the trial number of the task.
        status: OK / INFEASIBLE / FAILED.
        metrics: metric values as floats (NaN and infinities pass through).
        constraints: outcome-constraint values as floats, ``<= 0`` feasible.
        reason: human-readable cause for INFEASIBLE / FAILED (or the evaluator's own).
        traceback: formatted traceback when the evaluator raised.
        wall_time_s: duration of the evaluation, measured where it ran (by the driver
            for a timeout or a dead worker).
        cpu_time_s: CPU seconds of the process that ran it, over the evaluation (``None``
            where it was not measured: a timeout, a dead worker).
        info: :attr:`Evaluation.info` passed through (JSON-serializable by convention).
    """

    number: int
    status: EvalStatus
    metrics: dict[str, float] = field(default_factory=dict)
    constraints: dict[str, float] = field(default_factory=dict)
    reason: str | None = None
    traceback: str | None = None
    wall_time_s: float = 0.0
    info: dict = field(default_factory=dict)
    cpu_time_s: float | None = None


def _failed(number: int, reason: str, wall_time_s: float, tb: str | None = None) -> Result:
    return Result(number, EvalStatus.FAILED, reason=reason, traceback=tb, wall_time_s=wall_time_s)


# ------------------------------------------------------------------ run_evaluation

_SEED_CACHE: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def _accepts_seed(evaluator: Evaluator) -> bool:
    """Whether ``evaluator(point, seed=...)`` is a valid call; cached per evaluator."""
    # A bound method is a new object on every attribute access: key on its function.
    key = getattr(evaluator, "__func__", evaluator)
    with contextlib.suppress(KeyError, TypeError):
        return _SEED_CACHE[key]
    try:
        parameters = inspect.signature(evaluator).parameters.values()
    except (TypeError, ValueError):  # no introspectable signature (some builtins)
        accepts = False
    else:
        accepts = any(
            p.kind is inspect.Parameter.VAR_KEYWORD
            or (
                p.name == "seed"
                and p.kind
                in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            )
            for p in parameters
        )
    with contextlib.suppress(TypeError):  # unhashable or not weak-referenceable: no cache
        _SEED_CACHE[key] = accepts
    return accepts


class _BadValue(ValueError):
    """A metric or constraint that is not a real number (the message is the reason)."""


def _short_repr(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real problem
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _safe_str(value: Any) -> str:
    try:
        return str(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def _is_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    dtype = getattr(value, "dtype", None)  # numpy.bool_, bool arrays, torch.bool tensors
    return dtype is not None and (
        getattr(dtype, "kind", None) == "b" or str(dtype) in ("bool", "torch.bool")
    )


def _as_float(kind: str, name: Any, value: Any) -> float:
    """``float(value)`` for a real number; :class:`_BadValue` with the reason otherwise."""
    if not isinstance(name, str):
        raise _BadValue(f"{kind} name {_short_repr(name)} is not a string")
    if _is_bool(value):
        raise _BadValue(
            f"{kind} {name!r} is a bool ({value!r}), expected a real number "
            "(return float(...) if 0/1 is meant)"
        )
    not_a_number = _BadValue(f"{kind} {name!r} is not a number: {_short_repr(value)}")
    if not isinstance(value, numbers.Real):
        if isinstance(value, str | bytes | bytearray | numbers.Complex):
            raise not_a_number
        if not hasattr(type(value), "__float__"):
            raise not_a_number
        dtype = getattr(value, "dtype", None)
        if dtype is not None:  # numpy / torch / jax: only 0-d real arrays
            if tuple(getattr(value, "shape", ())) != ():
                raise not_a_number
            dkind = getattr(dtype, "kind", None)
            real = (
                dkind in ("i", "u", "f")
                if dkind is not None
                else not getattr(dtype, "is_complex", True)
            )
            if not real:
                raise not_a_number
    try:
        return float(value)
    except Exception as exc:
        raise not_a_number from exc


def _floats(kind: str, values: Any, owner: str) -> dict[str, float]:
    if not isinstance(values, Mapping):
        raise _BadValue(f"{owner} is {type(values).__name__}, expected a mapping of {kind}s")
    return {name: _as_float(kind, name, value) for name, value in values.items()}


def _normalize(number: int, out: Any, wall_time_s: float) -> Result:
    """Turn what an evaluator returned into a :class:`Result`."""
    try:
        if isinstance(out, Evaluation):
            try:
                status = EvalStatus(out.status)
            except ValueError:
                return _failed(
                    number,
                    f"evaluator returned an Evaluation with unknown status {_short_repr(out.status)}",
                    wall_time_s,
                )
            if not isinstance(out.info, Mapping):
                raise _BadValue(f"Evaluation.info is {type(out.info).__name__}, expected a mapping")
            return Result(
                number,
                status,
                metrics=_floats("metric", out.metrics, "Evaluation.metrics"),
                constraints=_floats("constraint", out.constraints, "Evaluation.constraints"),
                reason=None if out.reason is None else _safe_str(out.reason),
                wall_time_s=wall_time_s,
                info=dict(out.info),
            )
        if isinstance(out, Mapping):
            return Result(
                number,
                EvalStatus.OK,
                metrics=_floats("metric", out, "the result"),
                wall_time_s=wall_time_s,
            )
    except _BadValue as exc:
        return _failed(number, str(exc), wall_time_s)
    return _failed(
        number,
        f"evaluator returned {type(out).__name__}, expected a mapping of metrics or an Evaluation",
        wall_time_s,
    )


def run_evaluation(evaluator: Evaluator, task: Task) -> Result:
    """Evaluate ``task`` with ``evaluator`` and normalize the outcome into a :class:`Result`.

    Never raises for a failing evaluation (see the module docstring for the rules);
    ``KeyboardInterrupt``, ``SystemExit`` and other non-``Exception`` errors propagate.
    The evaluator gets a shallow copy of ``task.params``.
    """
    kwargs = {"seed": task.seed} if _accepts_seed(evaluator) else {}
    point = dict(task.params)
    cpu0 = time.process_time()
    result = _evaluate(evaluator, task, point, kwargs)
    return dataclasses.replace(result, cpu_time_s=time.process_time() - cpu0)


def _evaluate(evaluator: Evaluator, task: Task, point: dict, kwargs: dict) -> Result:
    """:func:`run_evaluation` without its CPU clock."""
    start = time.perf_counter()
    try:
        out = evaluator(point, **kwargs)
    except Infeasible as exc:
        wall_time_s = time.perf_counter() - start
        try:
            constraints = _floats("constraint", exc.constraints, "Infeasible.constraints")
        except _BadValue as bad:
            return _failed(task.number, str(bad), wall_time_s)
        return Result(
            task.number,
            EvalStatus.INFEASIBLE,
            constraints=constraints,
            reason=_safe_str(getattr(exc, "reason", exc)),
            wall_time_s=wall_time_s,
        )
    except Exception as exc:
        wall_time_s = time.perf_counter() - start
        message = _safe_str(exc)
        reason = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        return _failed(task.number, reason, wall_time_s, tb=traceback.format_exc())
    return _normalize(task.number, out, time.perf_counter() - start)


# ------------------------------------------------------------------------ executors


class Executor(ABC):
    """Runs :class:`Task` s, at most :attr:`capacity` at a time, and hands back results.

    ``submit`` a task while ``n_running < capacity``; ``wait`` blocks until at least one
    result is ready (or its ``timeout`` passes) and returns every result ready now, in no
    particular order. ``wait`` returns ``[]`` at once when nothing is in flight.
    Use as a context manager, or call :meth:`shutdown` (idempotent) when done. An executor
    is driven from one thread; it is not thread-safe.
    """

    capacity: int

    @abstractmethod
    def submit(self, task: Task) -> None:
        """Start ``task``; ``RuntimeError`` if ``capacity`` tasks are already in flight."""

    @abstractmethod
    def wait(self, timeout: float | None = None) -> list[Result]:
        """Block until at least one result is ready (or ``timeout`` s); return all ready."""

    @property
    @abstractmethod
    def n_running(self) -> int:
        """Tasks submitted whose results have not been returned by :meth:`wait` yet."""

    @abstractmethod
    def shutdown(self) -> None:
        """Release the executor's resources; busy workers are killed. Idempotent."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()


def _check_timeout(timeout_s: float | None) -> float | None:
    if timeout_s is None:
        return None
    if (
        isinstance(timeout_s, bool)
        or not isinstance(timeout_s, numbers.Real)
        or not 0 < timeout_s < math.inf
    ):
        raise ValueError(
            f"timeout_s must be a positive number of seconds or None, got {timeout_s!r}"
        )
    return float(timeout_s)


class _TrialTimeout(BaseException):
    """Raised by the SIGALRM handler; a BaseException so ``except Exception`` won't eat it."""


class InlineExecutor(Executor):
    """Runs each task in the calling thread, one at a time (``capacity == 1``).

    ``submit`` stores the task and ``wait`` evaluates it (``wait``'s ``timeout`` does not
    apply: the evaluation runs to completion or to ``timeout_s``). See the module
    docstring for how ``timeout_s`` is enforced and its limits.
    """

    def __init__(self, evaluator: Evaluator, timeout_s: float | None = None) -> None:
        if not callable(evaluator):
            raise TypeError(f"evaluator must be callable, got {_short_repr(evaluator)}")
        self.evaluator = evaluator
        self.timeout_s = _check_timeout(timeout_s)
        self.capacity = 1
        self._task: Task | None = None
        self._closed = False
        self._warned_no_timeout = False

    @property
    def n_running(self) -> int:
        return 0 if self._task is None else 1

    def submit(self, task: Task) -> None:
        if self._closed:
            raise RuntimeError("the executor is shut down")
        if self._task is not None:
            raise RuntimeError(
                "InlineExecutor is at capacity (1 task in flight); call wait() first"
            )
        self._task = task

    def wait(self, timeout: float | None = None) -> list[Result]:
        task, self._task = self._task, None
        if task is None:
            return []
        return [self._run(task)]

    def shutdown(self) -> None:
        self._closed = True
        self._task = None

    def _run(self, task: Task) -> Result:
        if self.timeout_s is None:
            return run_evaluation(self.evaluator, task)
        if (
            not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()
        ):
            if not self._warned_no_timeout:
                self._warned_no_timeout = True
                log.warning(
                    "InlineExecutor: timeout_s=%g cannot be enforced here (SIGALRM needs the main "
                    "thread of a POSIX process); evaluations run without a timeout. Use "
                    "ProcessExecutor for enforced timeouts.",
                    self.timeout_s,
                )
            return run_evaluation(self.evaluator, task)
        return self._run_with_alarm(task, self.timeout_s)

    def _run_with_alarm(self, task: Task, timeout_s: float) -> Result:
        def on_alarm(signum: int, frame: Any) -> None:
            raise _TrialTimeout

        start = time.perf_counter()
        previous_handler = signal.signal(signal.SIGALRM, on_alarm)
        previous_timer = (0.0, 0.0)
        try:
            try:
                previous_timer = signal.setitimer(signal.ITIMER_REAL, timeout_s)
                try:
                    return run_evaluation(self.evaluator, task)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except _TrialTimeout:
                return _failed(
                    task.number, f"timed out after {timeout_s:g} s", time.perf_counter() - start
                )
        finally:
            signal.signal(
                signal.SIGALRM, signal.SIG_DFL if previous_handler is None else previous_handler
            )
            delay, interval = previous_timer
            if delay > 0:  # someone else's timer was armed: re-arm what is left of it
                remaining = max(delay - (time.perf_counter() - start), 1e-3)
                signal.setitimer(signal.ITIMER_REAL, remaining, interval)


# ------------------------------------------------------------------- worker process

_READY = "ready"
_RESULT = "result"


def _worker_thread_env() -> dict[str, str]:
    """The thread-count variables workers should run with, from the driver's environment."""
    threads = os.environ.get(WORKER_THREADS_ENV)
    if threads is not None:
        threads = threads.strip()
        if not threads.isdigit() or int(threads) < 1:
            raise ValueError(f"{WORKER_THREADS_ENV} must be a positive integer, got {threads!r}")
        return dict.fromkeys(_THREAD_VARS, threads)
    return {var: os.environ.get(var, "1") for var in _THREAD_VARS}


def _apply_thread_env(env: Mapping[str, str]) -> None:
    os.environ.update(env)
    try:
        threads = int(env["OMP_NUM_THREADS"])
    except (KeyError, ValueError):
        return
    # Libraries loaded before this point (while importing this package) read the old
    # environment: limit their thread pools at run time where we can.
    if any(name in sys.modules for name in ("numpy", "scipy", "torch", "sklearn")):
        with contextlib.suppress(Exception):
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            torch.set_num_threads(threads)


def _reader_loop(
    conn: Any, inbox: queue.SimpleQueue, stop: threading.Event, busy: threading.Event
) -> None:
    """Worker-side: move messages from the driver into ``inbox``; on EOF, stop the worker.

    When the pipe reaches EOF (the driver shut down or died) an idle worker is told to
    return; a busy one is ended at once with ``os._exit``, so that a dead driver never
    leaves a worker evaluating (or hanging) behind it.
    """
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        except Exception:  # a message that cannot be unpickled: cannot go on
            traceback.print_exc()
            break
        inbox.put(message)
    stop.set()
    inbox.put(None)
    if busy.is_set():
        os._exit(0)


def _send(conn: Any, number: int, result: Result) -> bool:
    """Send a result to the driver; False when the driver is gone."""
    try:
        conn.send((_RESULT, result))
    except OSError:
        return False
    except Exception as exc:  # e.g. an unpicklable object in Evaluation.info
        fallback = _failed(
            number,
            f"the result of trial {number} could not be sent to the driver: "
            f"{type(exc).__name__}: {_safe_str(exc)}",
            result.wall_time_s,
        )
        try:
            conn.send((_RESULT, fallback))
        except OSError:
            return False
    return True


def _worker_main(
    conn: Any,
    payload: bytes,
    env: Mapping[str, str],
    close_in_child: tuple = (),
) -> None:
    """Entry point of a :class:`ProcessExecutor` worker process.

    Protocol: the worker sends ``("ready", load_error)`` once it has loaded the evaluator,
    then answers each ``(number, seed, pickled_params)`` message with
    ``("result", Result)``. It returns when the pipe reaches EOF.
    """
    for stale in close_in_child:  # fork: the driver's ends of the pipes must not linger here
        with contextlib.suppress(OSError):
            stale.close()
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _apply_thread_env(env)

    evaluator: Evaluator | None = None
    load_error: str | None = None
    load_traceback: str | None = None
    try:
        evaluator = cloudpickle.loads(payload)
    except Exception as exc:
        load_error = (
            "could not load the evaluator in the worker process: "
            f"{type(exc).__name__}: {_safe_str(exc)}"
        )
        load_traceback = traceback.format_exc()
    del payload
    try:
        conn.send((_READY, load_error))
    except OSError:
        return

    inbox: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()
    busy = threading.Event()
    reader = threading.Thread(
        target=_reader_loop,
        args=(conn, inbox, stop, busy),
        name="coexplore-pipe-reader",
        daemon=True,
    )
    reader.start()
    while True:
        message = inbox.get()
        if message is None:
            return
        busy.set()  # set before looking at `stop`: see _reader_loop
        if stop.is_set():
            return
        number, seed, blob = message
        start = time.perf_counter()
        try:
            params = pickle.loads(blob)
        except Exception as exc:
            result = _failed(
                number,
                f"could not unpickle the parameters of trial {number} in the worker: "
                f"{type(exc).__name__}: {_safe_str(exc)}",
                time.perf_counter() - start,
                tb=traceback.format_exc(),
            )
        else:
            if evaluator is None:
                result = _failed(number, load_error or "no evaluator", 0.0, tb=load_traceback)
            else:
                result = run_evaluation(evaluator, Task(number, params, seed))
        busy.clear()
        if not _send(conn, number, result):
            return


# ------------------------------------------------------------------ process executor


class _Worker:
    """Driver-side record of one worker process."""

    __slots__ = ("conn", "load_error", "process", "ready", "spawned_at", "started_at", "task")

    def __init__(self, process: Any, conn: Any) -> None:
        self.process = process
        self.conn = conn
        self.task: Task | None = None
        self.ready = False
        self.load_error: str | None = None
        self.spawned_at = time.perf_counter()
        self.started_at: float | None = None  # when the current task's clock started

    def deadline(self, timeout_s: float | None) -> float | None:
        if timeout_s is None or self.task is None:
            return None
        if self.started_at is None:  # still loading the evaluator
            return self.spawned_at + _STARTUP_GRACE_S + timeout_s
        return self.started_at + timeout_s

    def elapsed(self, now: float) -> float:
        return now - (self.started_at if self.started_at is not None else self.spawned_at)


def _reap(worker: _Worker, kill: bool) -> None:
    """Close the driver's end of the pipe and reap the process (killing it if asked)."""
    if kill:
        with contextlib.suppress(Exception):
            worker.process.kill()
    with contextlib.suppress(Exception):
        worker.conn.close()
    with contextlib.suppress(Exception):
        worker.process.join(_SHUTDOWN_GRACE_S)
    if worker.process.exitcode is None:
        with contextlib.suppress(Exception):
            worker.process.kill()
            worker.process.join(_SHUTDOWN_GRACE_S)
    with contextlib.suppress(Exception):
        worker.process.close()


def _shutdown_workers(workers: list[_Worker]) -> None:
    """Kill busy workers, let idle ones exit on EOF, and reap all of them."""
    for worker in workers:
        if worker.task is not None:
            with contextlib.suppress(Exception):
                worker.process.kill()
    for worker in workers:
        with contextlib.suppress(Exception):
            worker.conn.close()
    deadline = time.monotonic() + _SHUTDOWN_GRACE_S
    for worker in workers:
        with contextlib.suppress(Exception):
            worker.process.join(max(0.0, deadline - time.monotonic()))
    for worker in workers:
        _reap(worker, kill=True)
    workers.clear()


def _preload_in_forkserver(ctx: Any) -> None:
    """Have the forkserver import this module (and so the package) once, at its start,
    and not the driver's main module.

    Workers are forked from the forkserver: with the modules already imported there, a
    worker (or a replacement after a timeout) starts in milliseconds instead of paying
    for the package's imports every time. multiprocessing's default preload list is
    ``["__main__"]``, which would run a guard-less driver script in the forkserver (see
    the module docstring); it is replaced by this module, other modules someone added
    are kept. Has no effect once the forkserver is running.
    """
    from multiprocessing import forkserver

    current = list(
        getattr(getattr(forkserver, "_forkserver", None), "_preload_modules", None) or []
    )
    wanted = [m for m in current if m != "__main__"]
    if __name__ not in wanted:
        wanted.append(__name__)
    if wanted != current:
        with contextlib.suppress(Exception):
            ctx.set_forkserver_preload(wanted)


_starting = threading.local()  # set while this module starts a worker process
_MAIN_ENTRIES = ("init_main_from_path", "init_main_from_name")


def _install_no_main_preparation() -> None:
    """Wrap ``multiprocessing.spawn.get_preparation_data`` (once) so that the preparation
    data of the worker processes this module starts has no main-module entry: the child
    then does not import the driver's main module. Other processes' starts (another
    thread's, another library's) are left as they are: the wrapper only acts while
    :func:`_start_without_main` runs in the calling thread."""
    import multiprocessing.spawn as mp_spawn

    original = mp_spawn.get_preparation_data
    if getattr(original, "_coexplore_wrapped", False):
        return

    def get_preparation_data(name: str) -> dict:
        data = original(name)
        if getattr(_starting, "active", False):
            for key in _MAIN_ENTRIES:
                data.pop(key, None)
        return data

    get_preparation_data._coexplore_wrapped = True  # type: ignore[attr-defined]
    mp_spawn.get_preparation_data = get_preparation_data


def _start_without_main(process: Any) -> None:
    """``process.start()`` without the driver's main module in the child (see above)."""
    _install_no_main_preparation()
    _starting.active = True
    try:
        process.start()
    finally:
        _starting.active = False


def _describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "exit code unknown"
    if exitcode < 0:
        try:
            return f"exit code {exitcode}, killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            pass
    return f"exit code {exitcode}"


class ProcessExecutor(Executor):
    """Runs tasks in up to ``workers`` persistent local worker processes.

    See the module docstring for the design (serialization, timeouts, dead workers,
    threads, start methods).

    Args:
        evaluator: the evaluator; must be serializable by cloudpickle.
        workers: number of worker processes (= ``capacity``), started lazily.
        timeout_s: per-trial wall-clock limit in seconds, or None for no limit.
        start_method: multiprocessing start method: ``"forkserver"`` (default),
            ``"spawn"`` or ``"fork"``.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        workers: int = 2,
        timeout_s: float | None = None,
        start_method: str = "forkserver",
    ) -> None:
        if not callable(evaluator):
            raise TypeError(f"evaluator must be callable, got {_short_repr(evaluator)}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
        self.timeout_s = _check_timeout(timeout_s)
        available = [m for m in _START_METHODS if m in multiprocessing.get_all_start_methods()]
        if start_method not in available:
            raise ValueError(
                f"start_method {start_method!r} is not supported here; choose one of {available}"
            )
        threaded = [m for m in _THREADED_MODULES if m in sys.modules]
        if start_method == "fork" and threaded:
            raise ValueError(
                f"start_method 'fork' is refused: {' and '.join(threaded)} "
                f"{'is' if len(threaded) == 1 else 'are'} imported in this "
                "process and its threads may be running, and forking a multithreaded process "
                "can deadlock the child; use 'forkserver' (the default) or 'spawn'"
            )
        try:
            self._payload = cloudpickle.dumps(evaluator)
        except Exception as exc:
            raise TypeError(
                f"cannot send the evaluator {_short_repr(evaluator)} to worker processes: "
                f"cloudpickle failed to serialize it ({type(exc).__name__}: {_safe_str(exc)}). "
                "Use a module-level function, or keep unpicklable state (open files, locks, "
                "connections) out of the evaluator and create it lazily inside the call."
            ) from exc
        self.evaluator = evaluator
        self.capacity = workers
        self.start_method = start_method
        self._ctx = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            _preload_in_forkserver(self._ctx)
        self._env = _worker_thread_env()
        self._workers: list[_Worker] = []
        self._pending: list[Result] = []  # results produced in submit(), returned by wait()
        self._closed = False
        self._warned_load_error = False
        self._start_deaths = 0  # workers in a row that died before they were ready
        # Shut the workers down if the executor is garbage-collected or the interpreter
        # exits without shutdown(): runs before multiprocessing joins its children.
        self._finalizer = multiprocessing.util.Finalize(
            self, _shutdown_workers, args=(self._workers,), exitpriority=10
        )

    # -- public API ------------------------------------------------------------------

    @property
    def n_running(self) -> int:
        return sum(w.task is not None for w in self._workers) + len(self._pending)

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the current worker processes (diagnostics and tests)."""
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    def submit(self, task: Task) -> None:
        if self._closed:
            raise RuntimeError("the executor is shut down")
        if self.n_running >= self.capacity:
            raise RuntimeError(
                f"ProcessExecutor is at capacity ({self.capacity} tasks in flight); call wait() first"
            )
        try:
            blob = pickle.dumps(dict(task.params), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            self._pending.append(
                _failed(
                    task.number,
                    f"the parameters of trial {task.number} cannot be sent to a worker process: "
                    f"{type(exc).__name__}: {_safe_str(exc)}",
                    0.0,
                )
            )
            return
        self._send_task(self._idle_worker(), task, blob)

    def _send_task(self, worker: _Worker, task: Task, blob: bytes) -> None:
        message = (task.number, task.seed, blob)
        try:
            worker.conn.send(message)
        except OSError:  # it died while idle: replace it and try once more
            self._retire(worker, kill=True)
            worker = self._start_worker()
            worker.conn.send(message)
        worker.task = task
        worker.started_at = time.perf_counter() if worker.ready else None

    def wait(self, timeout: float | None = None) -> list[Result]:
        results, self._pending = self._pending, []
        end = None if timeout is None else time.perf_counter() + max(0.0, timeout)
        while True:
            busy = [w for w in self._workers if w.task is not None]
            if not busy:
                return results
            now = time.perf_counter()
            deadlines = [d for d in (w.deadline(self.timeout_s) for w in busy) if d is not None]
            if end is not None:
                deadlines.append(end)
            if results:
                wait_s: float | None = 0.0
            else:
                wait_s = None if not deadlines else max(0.0, min(deadlines) - now)
            handles: list[Any] = []
            for w in busy:
                handles += [w.conn, w.process.sentinel]
            ready = set(multiprocessing.connection.wait(handles, wait_s))
            now = time.perf_counter()
            for w in busy:
                if w.conn in ready or w.process.sentinel in ready:
                    result = self._service(w)
                    if result is not None:
                        results.append(result)
                        continue
                deadline = w.deadline(self.timeout_s)
                if w.task is not None and deadline is not None and now >= deadline:
                    results.append(self._expire(w, now))
            if results or (end is not None and now >= end):
                return results

    def shutdown(self) -> None:
        self._closed = True
        self._pending.clear()
        self._finalizer()  # runs _shutdown_workers once

    # -- internals ---------------------------------------------------------------------

    def _start_worker(self) -> _Worker:
        driver_end, worker_end = self._ctx.Pipe(duplex=True)
        close_in_child: tuple = ()
        if self.start_method == "fork":
            # A forked child inherits every descriptor the driver holds; the driver's
            # ends must be closed there or the workers would never see EOF.
            close_in_child = (driver_end, *(w.conn for w in self._workers))
        process = self._ctx.Process(
            target=_worker_main,
            args=(worker_end, self._payload, self._env, close_in_child),
            name="coexplore-worker",
            daemon=False,  # daemonic processes may not start processes of their own
        )
        try:
            _start_without_main(process)
        finally:
            worker_end.close()
        worker = _Worker(process, driver_end)
        self._workers.append(worker)
        return worker

    def _idle_worker(self) -> _Worker:
        for worker in list(self._workers):
            if worker.task is None:
                if worker.process.exitcode is not None:  # died while idle
                    self._retire(worker, kill=False)
                    continue
                return worker
        return self._start_worker()

    def _retire(self, worker: _Worker, kill: bool) -> None:
        with contextlib.suppress(ValueError):
            self._workers.remove(worker)
        _reap(worker, kill=kill)

    def _replace(self, worker: _Worker, kill: bool) -> None:
        self._retire(worker, kill=kill)
        if not self._closed:
            self._start_worker()

    def _service(self, worker: _Worker) -> Result | None:
        """Handle a busy worker whose pipe or sentinel is ready: a result, or its death."""
        task = worker.task
        assert task is not None
        at_eof = False
        while True:
            try:
                if not worker.conn.poll():
                    break
                kind, body = worker.conn.recv()
            except (EOFError, OSError):
                at_eof = True
                break
            except Exception as exc:  # the result could not be unpickled in the driver
                worker.task = None
                worker.started_at = None
                return _failed(
                    task.number,
                    f"the result of trial {task.number} could not be read from the worker: "
                    f"{type(exc).__name__}: {_safe_str(exc)}",
                    worker.elapsed(time.perf_counter()),
                )
            if kind == _READY:
                worker.ready = True
                self._start_deaths = 0
                worker.started_at = time.perf_counter()
                worker.load_error = body
                if body and not self._warned_load_error:
                    self._warned_load_error = True
                    log.warning("ProcessExecutor: %s", body)
            elif kind == _RESULT:
                worker.task = None
                worker.started_at = None
                return body
        if not at_eof and worker.process.exitcode is None:
            return None  # only a "ready" message: still evaluating
        # The worker is gone (or going: its end of the pipe is closed). Let it finish
        # exiting so that its exit code can be reported; a worker that closed the pipe
        # but keeps running is no use either.
        worker.process.join(1.0)
        if worker.process.exitcode is None:
            with contextlib.suppress(Exception):
                worker.process.kill()
                worker.process.join(1.0)
        if not worker.ready:
            return self._start_death(worker, task)
        result = _failed(
            task.number,
            f"worker process died ({_describe_exit(worker.process.exitcode)}) "
            f"while evaluating trial {task.number}",
            worker.elapsed(time.perf_counter()),
        )
        worker.task = None
        self._replace(worker, kill=True)
        return result

    def _start_death(self, worker: _Worker, task: Task) -> None:
        """A worker died before it was ready: its trial did not run. Give the trial to a
        fresh worker, or, after :data:`_MAX_START_DEATHS` such deaths in a row, raise
        :class:`WorkerStartError` (the executor cannot run anything)."""
        how = _describe_exit(worker.process.exitcode)
        worker.task = None
        self._retire(worker, kill=True)
        self._start_deaths += 1
        if self._start_deaths >= _MAX_START_DEATHS:
            raise WorkerStartError(
                f"worker processes die while starting, before loading the evaluator "
                f"({how}; {self._start_deaths} in a row), so no trial can run; their error "
                "output (stderr) says why"
            )
        log.warning("ProcessExecutor: a worker died while starting (%s); trial %d goes to a "
                    "new worker", how, task.number)
        self._send_task(self._start_worker(), task,
                        pickle.dumps(dict(task.params), protocol=pickle.HIGHEST_PROTOCOL))
        return None

    def _expire(self, worker: _Worker, now: float) -> Result:
        """Kill a worker whose task ran past its deadline and replace it."""
        task = worker.task
        assert task is not None
        if worker.started_at is None:
            reason = (
                f"timed out after {self.timeout_s:g} s: the worker process had not finished "
                f"loading the evaluator after {_STARTUP_GRACE_S + (self.timeout_s or 0.0):g} s"
            )
        else:
            reason = f"timed out after {self.timeout_s:g} s"
        result = _failed(task.number, reason, worker.elapsed(now))
        worker.task = None
        self._replace(worker, kill=True)
        return result


def map_tasks(executor: Executor, tasks: Iterable[Task]) -> Iterator[Result]:
    """Run ``tasks`` on ``executor``, keeping it at capacity, and yield each
    :class:`Result` as it finishes (in no particular order). For work that is not a
    study's trials (a reproduction's re-maps or training units): the caller records each
    result as it comes, so a stopped run keeps the finished ones."""
    todo = iter(tasks)
    exhausted = False
    while True:
        while not exhausted and executor.n_running < executor.capacity:
            task = next(todo, None)
            if task is None:
                exhausted = True
            else:
                executor.submit(task)
        if executor.n_running == 0:
            return
        yield from executor.wait()
