"""Studies: storage, execution, resume, export, plots, CLI, reproductions and benchmarks.

The study layer is the only place that owns storage and execution:

* :mod:`experiments.storage` -- trial rows in SQLite (embedded default) through SQLAlchemy;
  every state change is one transaction (RUNNING before evaluation, finished after).
* :mod:`experiments.executors` -- in-process and local process-pool execution with
  per-trial timeouts; a raising, hanging or crashing evaluation becomes a FAILED result
  (``map_tasks`` runs work that is not a study's trials, e.g. a reproduction's, on them).
* :mod:`experiments.records` -- the record store: finished pieces of work as plain JSON
  records keyed by their settings, written atomically; what the reproductions resume
  from and commit.
* :mod:`experiments.study` -- :class:`Study`: space + objectives + evaluator + optimizer +
  seed + storage; ``optimize`` drives ask/evaluate/tell and resumes after a kill.
* :mod:`experiments.config` -- YAML study configs (pydantic), errors with key and line.
* :mod:`experiments.export` -- trials/Pareto data frames and CSV/JSON/Parquet files.
* :mod:`experiments.plots` -- compute-then-render matplotlib figures.
* :mod:`experiments.cli` -- the ``coexplore`` command.
* :mod:`experiments.inner_search` -- every ask/tell optimizer offered as a mapping search
  strategy (imported here, so that it is in effect wherever the study layer is).
* :mod:`experiments.plugins` -- imports the plugin modules a config lists.
"""

from typing import Any

from experiments import inner_search as _inner_search  # noqa: F401  (registers the resolver)

__all__ = ["Study", "load_study"]


def __getattr__(name: str) -> Any:
    # Lazy, so that worker processes importing experiments.executors do not pay for
    # pandas/SQLAlchemy/matplotlib (PEP 562).
    if name in __all__:
        from experiments import study

        return getattr(study, name)
    raise AttributeError(f"module 'experiments' has no attribute {name!r}")
