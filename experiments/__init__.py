"""Studies: storage, execution, resume, export, plots, CLI, reproductions and benchmarks.

The study layer is the only place that owns storage and execution:

* :mod:`experiments.storage` -- trial rows in SQLite (embedded default) through SQLAlchemy;
  every state change is one transaction (RUNNING before evaluation, finished after).
* :mod:`experiments.executors` -- in-process and local process-pool execution with
  per-trial timeouts; a raising, hanging or crashing evaluation becomes a FAILED result.
* :mod:`experiments.study` -- :class:`Study`: space + objectives + evaluator + optimizer +
  seed + storage; ``optimize`` drives ask/evaluate/tell and resumes after a kill.
* :mod:`experiments.config` -- YAML study configs (pydantic), errors with key and line.
* :mod:`experiments.export` -- trials/Pareto data frames and CSV/JSON/Parquet files.
* :mod:`experiments.plots` -- compute-then-render matplotlib figures.
* :mod:`experiments.cli` -- the ``coexplore`` command.
* :mod:`experiments.inner_search` -- the explicit wiring of every ask/tell optimizer as a
  mapping search strategy (:func:`~experiments.inner_search.search_mapper`,
  :class:`~experiments.inner_search.OptimizerSearch`); studies and configs apply it to
  their evaluator's options. Importing it registers nothing.
* :mod:`experiments.plugins` -- imports the plugin modules a config lists.
"""

from typing import Any

__all__ = ["Study", "load_study"]


def __getattr__(name: str) -> Any:
    # Lazy, so that worker processes importing experiments.executors do not pay for
    # pandas/SQLAlchemy/matplotlib (PEP 562).
    if name in __all__:
        from experiments import study

        return getattr(study, name)
    raise AttributeError(f"module 'experiments' has no attribute {name!r}")
