"""The study engine (storage, execution, resume, export, plots, CLI) and, in folders by
kind, the scripts that run on it.

The study layer is the only place that owns storage and execution:

* :mod:`experiments.storage` -- trial rows in SQLite (embedded default) through SQLAlchemy;
  every state change is one transaction (RUNNING before evaluation, finished after).
* :mod:`experiments.executors` -- in-process and local process-pool execution with
  per-trial timeouts; a raising, hanging or crashing evaluation becomes a FAILED result
  (``map_tasks`` runs work that is not a study's trials, e.g. a reproduction's, on them).
* :mod:`experiments.records` -- the record store: finished pieces of work as plain JSON
  records keyed by their settings, written atomically; what the reproductions resume
  from and commit.
* :mod:`experiments.provenance` -- the git commit (and local changes) of the checkout that
  wrote a study's manifest or a benchmark's record.
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
* :mod:`experiments.proof_scopes` -- the space a script's "proven"/"optimal" covers, stated
  in its header (:class:`~experiments.proof_scopes.ProofScopes`), shared by the scripts of
  every folder below.
* ``examples/`` and ``configs/`` -- the evaluators and YAML studies shipped as examples.

Scripts, one kind per folder, each a leaf: no library module and no test of one imports
them (import-linter's "Scripts are leaves" contract in ``pyproject.toml``):

* :mod:`experiments.reproduce` -- one module per seed paper, its experiment only;
* :mod:`experiments.validation` -- our models against other tools and silicon;
* :mod:`experiments.benchmarks` -- speed and memory of our own code;
* :mod:`experiments.search_quality` -- what a search reaches within a budget;
* :mod:`experiments.harnesses` -- the engine under faults and load.
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
