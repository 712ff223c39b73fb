"""Fault and scale harnesses: the study engine under kills, races, restarts and load
(``python -m experiments.harnesses.NAME``).

What goes here: scripts that run real ``coexplore run`` processes against SQLite,
PostgreSQL or Dask, inject a fault or a load, and check the storage afterwards (exactly
the trials asked for, none lost, none twice), exiting non-zero when a check fails.

* :mod:`~experiments.harnesses.chaos` -- SIGKILL the driver at random moments, resume,
  count.
* :mod:`~experiments.harnesses.faults` -- drivers started together, PostgreSQL restarted,
  the Dask scheduler lost.
* :mod:`~experiments.harnesses.scaling` -- sweep throughput at 1 and 2 workers and each
  executor's cost per trial.

Each takes ``--json FILE``: the rows it prints, its settings, the commit, its wall time and
the load average at its start and end (:mod:`~experiments.harnesses.record`); the tables
of docs/howto/scale-out.md are rendered from those records.
"""

__all__: list[str] = []  # scripts: run them as modules
