"""Executors by name: :func:`make_executor` builds the one a study runs its trials on.

Its own module so that :mod:`experiments.executors` (the protocol, the inline and the
process-pool executors) and :mod:`experiments.dask_executor` (built on that protocol) do
not import each other: this module is the one place that knows every kind.
"""

from __future__ import annotations

from experiments.executors import Evaluator, Executor, InlineExecutor, ProcessExecutor

__all__ = ["EXECUTOR_KINDS", "make_executor"]

EXECUTOR_KINDS = ("dask", "inline", "process", "auto")
"""The names :func:`make_executor` takes."""


def make_executor(
    kind: str,
    evaluator: Evaluator,
    workers: int = 1,
    timeout_s: float | None = None,
    cluster: str | None = None,
) -> Executor:
    """Build an executor by name.

    ``"inline"`` -> :class:`InlineExecutor` (``workers`` must be 1); ``"process"`` ->
    :class:`ProcessExecutor` with ``workers`` workers; ``"auto"`` -> inline when
    ``workers == 1`` and there is no timeout, a process pool otherwise (a timeout is only
    reliably enforced in a separate process); ``"dask"`` ->
    :class:`~experiments.dask_executor.DaskExecutor` on the scheduler at ``cluster``, or
    on a new ``LocalCluster`` of ``workers`` processes.
    """
    if kind == "dask" or cluster is not None:
        from experiments.dask_executor import DaskExecutor

        return DaskExecutor(evaluator, workers=workers, timeout_s=timeout_s, address=cluster)
    if kind not in EXECUTOR_KINDS:
        raise ValueError(f"unknown executor kind {kind!r}; choose one of {list(EXECUTOR_KINDS)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if kind == "auto":
        kind = "inline" if workers == 1 and timeout_s is None else "process"
    if kind == "inline":
        if workers != 1:
            raise ValueError(
                f"the inline executor runs one evaluation at a time; got workers={workers} "
                "(use kind='process' or 'auto' for parallel workers)"
            )
        return InlineExecutor(evaluator, timeout_s=timeout_s)
    return ProcessExecutor(evaluator, workers=workers, timeout_s=timeout_s)
