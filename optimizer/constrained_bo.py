"""`ConstrainedBO`: single-objective Bayesian optimization with known and unknown
constraints over any design space (Shi et al. 2020's formulation).

* **Surrogate**: a GP over the space's encoding with a kernel per parameter kind
  (Matern-5/2 ARD on ordered columns, exponentiated Hamming on one-hot categoricals, the
  Mallows kernel on permutations), on the objective in log space (``log_objective=
  "auto"``: when every observed value is positive), standardized.
* **Known constraints** (input constraints) are never violated: candidates come only
  from the space's feasible sampler and ``neighbors`` (:mod:`optimizer.bo.candidates`).
* **Unknown constraints** (output constraints): points the evaluator reported INFEASIBLE
  or FAILED train a GP classifier; outcome constraint values an evaluator returns
  (``<= 0`` feasible) are each modelled by a GP and enter qLogNEI as constraints.
  The acquisition is ``log qLogNEI(x) + log P(feasible | x)``; until two observations
  with an objective exist it is ``P(feasible)`` alone.
* **Batches**: ``ask(n)`` returns ``n`` points chosen greedily with the earlier ones (and
  every RUNNING trial) as pending points, so several workers stay busy.
* **Scale**: exact GPs; past ``max_train`` (default 1,000) observations the fit uses the
  best half plus a random subset. Fit and acquisition times are logged and kept in
  ``timings``.

Hyperparameters: ``n_init`` (Sobol initial points, 10), ``pool_size`` (random feasible
candidates per proposal, 2,000), ``n_local`` / ``local_steps`` (hill climbs from the best
candidates, 5 x 5), ``mc_samples`` (QMC samples of the acquisition, 128), ``max_train``,
``impute_infeasible`` (INFEASIBLE/FAILED points also enter the objective GP at the worst
observed value, True: without it EI keeps probing failures near the boundary -- measured
on ``tests/optimizer/test_bo.py``'s disk problem), ``feasibility_model`` (True; False
drops the classifier, ``P(feasible) = 1``: the ablation that
``experiments/search_quality/inner_feasibility.py`` measures; a failure then still
enters the objective GP at the worst value unless ``impute_infeasible=False`` too),
``known_constraints`` (True; False draws the initial design, the candidate pool and the
hill climbs from the space's parameters without its known constraints, so proposals may
violate them: the study records each such proposal as INFEASIBLE without evaluating it.
With ``feasibility_model=False, impute_infeasible=False`` too this is BO without
constraint handling, invalid points rejected and resampled: a rejected point enters no
model, is never proposed again, and the next proposal is drawn afresh), ``initial_points``
(points evaluated first, e.g. a known design as a warm start: trial ``i < len`` takes the
``i``-th, the Sobol design fills the rest of the ``n_init`` initial trials), ``torch_threads``
(1; BO's matrices are small).

Nothing depends on how many evaluations the study will run in all: trial ``i``'s proposal
is a function of ``(seed, i, options, history)``, so the first ``k`` trials of a longer
study are a study of ``k`` trials.
"""

from __future__ import annotations

from typing import Any

import torch

from optimizer.bo.acquisition import log_nei
from optimizer.bo.driver import BODriver


class ConstrainedBO(BODriver):
    name = "constrained-bo"

    def _acquisition(self, fitted: dict[str, Any], X_pending: torch.Tensor | None, seed: int) -> Any:
        m = fitted["models"]
        return log_nei(m["objectives"][0], m["constraints"], m["X"], X_pending, self.mc_samples, seed)
