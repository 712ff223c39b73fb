"""Bayesian-optimization internals, split as BoTorch splits them.

* :mod:`optimizer.bo.models` -- surrogates: the mixed kernel for a space's encoding, the
  objective/constraint GPs, the unknown-feasibility classifier, the training data.
* :mod:`optimizer.bo.acquisition` -- qLogNEI / qLogNEHVI with outcome constraints and
  pending points, times P(feasible).
* :mod:`optimizer.bo.candidates` -- the Sobol initial design and the acquisition
  optimizer over feasible candidates (pools + local search).
* :mod:`optimizer.bo.driver` -- the loop the BO optimizers share.
"""

__all__: list[str] = []  # internals: import the modules by name
