"""Trials on a Dask distributed cluster: an existing one, or a local one we start.

``DaskExecutor(evaluator, address="tcp://scheduler:8786")`` submits each trial as one task
to an existing cluster; without an address it starts a ``LocalCluster`` of ``workers``
worker processes (one thread each, so CPU-bound evaluators do not share the GIL).
Only the driver talks to storage: workers just evaluate and return a
:class:`~experiments.executors.Result`.

* **Evaluator shipping**: the evaluator is serialized once with cloudpickle. Up to 1 MiB it
  travels with every task (so a worker restarted after a crash never lacks it); larger
  ones are scattered to every worker once. Each worker process unpickles it once (cached
  by its hash).
* **Timeouts on the workers**: Dask cannot kill a running task, so with ``timeout_s`` each
  worker evaluates through a one-slot :class:`~experiments.executors.ProcessExecutor`
  (created lazily and kept for the worker's life) that kills and replaces its child on
  timeout -- the trial becomes FAILED "timed out after ... s" and the worker stays usable.
  That needs non-daemonic workers: the local cluster is started so; for an existing
  cluster start workers with ``DASK_DISTRIBUTED__WORKER__DAEMON=False`` (otherwise the
  trial runs without a timeout and its ``info`` says so).
* **Dead workers**: when a worker process dies mid-trial, the scheduler re-runs its tasks on
  other workers (the nanny restarts the dead one); the driver sees one result per trial,
  never two. A task that has killed ``distributed.scheduler.allowed-failures`` workers
  (default 3) fails with ``KilledWorker``, recorded as a FAILED trial.
* **Lost scheduler**: when the scheduler dies or becomes unreachable, Dask cancels every
  task in flight. That is not the evaluations' fault, so they are not recorded as FAILED:
  results that arrived before are handed back, then :meth:`DaskExecutor.wait` (and
  ``submit``) raise :class:`~experiments.executors.ExecutorLostError`, naming the scheduler.
  The study gives its in-flight trials back to storage (WAITING, same number, parameters
  and seed) and stops; the same command resumes once a scheduler runs at that address
  again (or with another ``--cluster``, or a local one). A task cancelled by the cluster
  while the scheduler stays connected (someone restarted the cluster) is submitted again,
  up to :data:`MAX_RESUBMITS` times, then recorded FAILED.
* **Asynchronous**: the study asks the optimizer for a new point whenever a task finishes,
  with every in-flight trial pending, so no worker waits for a batch. Consequently the
  order in which results arrive -- and what an adaptive optimizer has seen when it
  proposes -- depends on timing; the *set* of points of seed-driven optimizers (random,
  grid) does not.

Requires the ``dask`` extra (``dask[distributed]``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
import uuid
from concurrent.futures import CancelledError
from typing import Any

from evaluators.base import EvalStatus
from experiments.executors import (
    Executor,
    ExecutorLostError,
    ProcessExecutor,
    Result,
    Task,
    run_evaluation,
)

logger = logging.getLogger(__name__)

INLINE_PAYLOAD_BYTES = 1 << 20  # evaluators up to 1 MiB pickled are sent with each task
MAX_RESUBMITS = 3  # times a task cancelled by a connected cluster is submitted again
_CONNECTION_LOST = "scheduler-connection-lost"  # distributed's cancel reason
_CACHE: dict[Any, Any] = {}   # per worker process: evaluator / timeout executor by payload hash


def _remote_evaluate(payload: bytes, task: Task, timeout_s: float | None) -> Result:
    """Runs on a Dask worker."""
    import cloudpickle

    key = hashlib.sha256(payload).hexdigest()
    ev = _CACHE.get(key)
    if ev is None:
        ev = _CACHE[key] = cloudpickle.loads(payload)
    if timeout_s is None:
        return run_evaluation(ev, task)
    import multiprocessing

    if multiprocessing.current_process().daemon:
        # a daemonic worker may not start the child that enforces the timeout
        r = run_evaluation(ev, task)
        note = ("timeout not enforced: daemonic Dask worker (start workers with "
                "DASK_DISTRIBUTED__WORKER__DAEMON=False)")
        return dataclasses.replace(r, info={**r.info, "executor_note": note})
    pkey = (key, "timeout", timeout_s)
    pex = _CACHE.get(pkey)
    if pex is None:
        pex = _CACHE[pkey] = ProcessExecutor(ev, workers=1, timeout_s=timeout_s)
    pex.submit(task)
    while True:
        out = pex.wait(timeout=None)
        if out:
            return out[0]


class DaskExecutor(Executor):
    """See the module docstring. ``capacity`` = the cluster's total worker threads."""

    def __init__(self, evaluator: Any, workers: int = 2, timeout_s: float | None = None,
                 address: str | None = None) -> None:
        try:
            import cloudpickle
            from distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("the Dask executor needs the 'dask' extra: pip install 'coexplore[dask]'") from e
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
        self.timeout_s = timeout_s
        self._cluster = None
        self._lost: str | None = None  # why the scheduler is gone, once it is
        self._resubmits: dict[int, int] = {}
        if address:
            try:
                self.client = Client(address, timeout="30s")
            except OSError as e:
                raise ValueError(f"cannot connect to the Dask scheduler at {address!r}: {e}") from None
        else:
            if workers < 1:
                raise ValueError(f"workers must be >= 1, got {workers!r}")
            import dask

            # non-daemonic workers may start the child process that enforces timeouts
            with dask.config.set({"distributed.worker.daemon": False}):
                self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                             dashboard_address=None, silence_logs=logging.WARNING)
            self.client = Client(self._cluster)
        self.address = address or self._cluster.scheduler_address
        self.client.wait_for_workers(1, timeout=60)
        try:
            payload = cloudpickle.dumps(evaluator)
        except Exception as e:
            self.shutdown()
            raise TypeError(f"cannot serialize evaluator {evaluator!r} for Dask workers: {e}") from None
        # Small evaluators travel with every task: a restarted worker then never misses
        # them. Large ones are scattered to every worker once (a worker that joins later
        # fetches a replica from another one).
        self._payload: Any = (payload if len(payload) <= INLINE_PAYLOAD_BYTES
                              else self.client.scatter(payload, broadcast=True))
        self._futures: dict[Any, Task] = {}
        self._started: dict[Any, float] = {}
        self._capacity = workers if self._cluster is not None else self._threads()
        self._capacity_at = time.monotonic()

    def _threads(self) -> int:
        return max(sum(self.client.nthreads().values()), 1)

    @property
    def capacity(self) -> int:  # type: ignore[override]
        """Tasks to keep in flight: the local cluster's worker count, or an existing
        cluster's worker threads (re-read at most every 5 s). A worker that dies and is
        restarted does not shrink it: its tasks wait on the scheduler meanwhile."""
        if (self._cluster is None and time.monotonic() - self._capacity_at > 5.0
                and self._connected()):
            try:
                self._capacity = self._threads()
            except (OSError, TimeoutError):  # the scheduler is going: wait() will say so
                pass
            self._capacity_at = time.monotonic()
        return self._capacity

    def _connected(self) -> bool:
        return self._lost is None and self.client.status == "running"

    def _lost_error(self) -> ExecutorLostError:
        why = self._lost or f"client {self.client.status}"
        return ExecutorLostError(
            f"lost the Dask scheduler at {self.address} ({why}); {len(self._futures)} trial(s) "
            "in flight were not evaluated"
        )

    @property
    def n_running(self) -> int:
        return len(self._futures)

    def worker_pids(self) -> dict[str, int]:
        import os

        return self.client.run(os.getpid)

    def submit(self, task: Task) -> None:
        if self.n_running >= self._capacity:
            raise RuntimeError(f"DaskExecutor is at capacity ({self._capacity} tasks in flight)")
        if not self._connected():
            raise self._lost_error()
        self._submit(task)

    def _submit(self, task: Task) -> None:
        fut = self.client.submit(_remote_evaluate, self._payload, task, self.timeout_s, pure=False,
                                 key=f"trial-{task.number}-{uuid.uuid4().hex[:8]}")
        self._futures[fut] = task
        self._started[fut] = time.monotonic()

    def wait(self, timeout: float | None = None) -> list[Result]:
        """Results ready now (see :meth:`Executor.wait`); :class:`ExecutorLostError` once
        the scheduler is gone and every result that arrived before has been handed back."""
        if not self._futures:
            return []
        if self._lost is not None:
            raise self._lost_error()
        from distributed import wait as dwait

        try:
            done, _ = dwait(list(self._futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            done = set()
        except CancelledError:  # some were cancelled: look at each below
            done = {f for f in self._futures if f.done()}
        out = []
        for fut in done:
            task = self._futures[fut]
            try:
                result = fut.result()
            except CancelledError as e:
                if getattr(e, "reason", None) == _CONNECTION_LOST or self.client.status != "running":
                    self._lost = "connection lost"
                    continue  # stays in flight: never evaluated, not FAILED
                del self._futures[fut]
                t0 = self._started.pop(fut)
                tries = self._resubmits[task.number] = self._resubmits.get(task.number, 0) + 1
                if tries <= MAX_RESUBMITS:
                    logger.warning("trial %d was cancelled by the Dask cluster (%s); submitting "
                                   "it again (%d of %d)", task.number, e, tries, MAX_RESUBMITS)
                    self._submit(task)
                    continue
                out.append(Result(task.number, EvalStatus.FAILED, {}, {},
                                  f"Dask task cancelled {tries} times by the cluster: {e}", None,
                                  time.monotonic() - t0, {}))
                continue
            except Exception as e:  # KilledWorker, an error while fetching the result, ...
                if not self._connected():
                    self._lost = self._lost or f"{type(e).__name__}: {e}"
                    continue
                result = Result(task.number, EvalStatus.FAILED, {}, {},
                                f"Dask task failed: {type(e).__name__}: {e}", None,
                                time.monotonic() - self._started[fut], {})
            del self._futures[fut]
            self._started.pop(fut)
            self._resubmits.pop(task.number, None)
            out.append(result)
        if not out and not self._connected():
            if self._lost is None:
                self._lost = f"client {self.client.status}"
            raise self._lost_error()
        return out

    def shutdown(self) -> None:
        futs = list(getattr(self, "_futures", {}))
        if futs:
            try:
                self.client.cancel(futs)
            except Exception:
                pass
            self._futures.clear()
        # A client whose scheduler is gone is still trying to reconnect; closing it cancels
        # that, which distributed logs as an error with a traceback: our own ExecutorLostError
        # has already said what happened, so keep its log quiet meanwhile.
        quiet = getattr(self, "_lost", None) is not None or (
            getattr(self, "client", None) is not None and self.client.status != "running")
        client_log = logging.getLogger("distributed.client")
        level = client_log.level
        if quiet:
            client_log.setLevel(logging.CRITICAL)
        try:
            for closer in (getattr(self, "client", None), self._cluster):
                if closer is not None:
                    try:
                        closer.close()
                    except Exception:
                        pass
        finally:
            client_log.setLevel(level)
        self._cluster = None
