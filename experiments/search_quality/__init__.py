"""Search-quality studies: how good a search gets within a budget, against a baseline
search and, where the space allows, the exhaustive optimum or a proven bound
(``python -m experiments.search_quality.NAME``).

What goes here: scripts that run several search methods (optimizers, mapping searches,
training schedules) at equal budgets and print what each reached, with seeds and sample
spreads. Not here: how fast our code runs (:mod:`experiments.benchmarks`) or whether a
model agrees with another tool (:mod:`experiments.validation`). A study that varies one
factor of a reproduction lives here too; the reproduction itself
(:mod:`experiments.reproduce`) runs only its paper's experiment.

* :mod:`~experiments.search_quality.bo_enumerable` -- evaluations to the exhaustive optimum
  of an enumerable co-design space; :mod:`~experiments.search_quality.gradient_vs_bo` --
  DOSA-style gradient co-design vs nested constrained BO vs random search.
* :mod:`~experiments.search_quality.inner_feasibility` -- the inner mapping search with
  invalid mappings as unknown constraints: what the feasibility model buys.
* :mod:`~experiments.search_quality.hasco_mobo_hv` -- hypervolume of HASCO's hardware
  search, MOBO vs reject-and-resample vs random;
  :mod:`~experiments.search_quality.hasco_sw_search` -- HASCO's software searches at equal
  numbers of schedules against the exact mapper's bound.
* :mod:`~experiments.search_quality.hil_search` -- hardware-in-the-loop tiling search vs an
  exhaustive sweep of measured kernels.
* :mod:`~experiments.search_quality.d2nn_more_epochs` -- accuracy of a trained D2NN unit
  after more epochs on the same schedule.
"""

__all__: list[str] = []  # scripts: run them as modules
