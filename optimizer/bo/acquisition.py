"""Acquisition functions, evaluated over candidate sets (no gradients needed).

* :func:`log_nei` -- BoTorch's ``qLogNoisyExpectedImprovement`` on the objective GP, with
  every outcome constraint (a GP per evaluator-reported constraint value, ``<= 0``
  feasible) as a constraint callable and the in-flight points as ``X_pending``.
* :func:`log_nehvi` -- ``qLogNoisyExpectedHypervolumeImprovement`` for 2-3 objectives
  with the same constraints and pending points.
* Unknown feasibility multiplies in: the score of a candidate is
  ``log acquisition(x) + log P(feasible | x)`` (constrained EI of Gelbart, Snoek &
  Adams 2014, in log space).

Scores are computed in chunks under ``torch.no_grad``; a quasi-Monte-Carlo sampler with
a fixed seed makes them deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from optimizer.bo.models import DTYPE


def _sampler(mc_samples: int, seed: int) -> Any:
    from botorch.sampling import SobolQMCNormalSampler

    return SobolQMCNormalSampler(sample_shape=torch.Size([mc_samples]), seed=seed)


def _model_list(models: Sequence[Any]) -> Any:
    from botorch.models import ModelListGP

    return models[0] if len(models) == 1 else ModelListGP(*models)


def _constraints(first: int, n: int) -> list[Any]:
    return [lambda Z, i=i: Z[..., first + i] for i in range(n)]


def log_nei(objective_model: Any, constraint_models: Sequence[Any], X_baseline: torch.Tensor,
            X_pending: torch.Tensor | None, mc_samples: int, seed: int) -> Any:
    from botorch.acquisition.logei import qLogNoisyExpectedImprovement
    from botorch.acquisition.objective import GenericMCObjective

    model = _model_list([objective_model, *constraint_models])
    return qLogNoisyExpectedImprovement(
        model=model, X_baseline=X_baseline, sampler=_sampler(mc_samples, seed),
        objective=GenericMCObjective(lambda Z, X=None: Z[..., 0]),
        constraints=_constraints(1, len(constraint_models)) or None,
        X_pending=X_pending if X_pending is not None and len(X_pending) else None,
        prune_baseline=True, cache_root=False,
    )


def log_nehvi(objective_models: Sequence[Any], constraint_models: Sequence[Any],
              ref_point: Sequence[float], X_baseline: torch.Tensor,
              X_pending: torch.Tensor | None, mc_samples: int, seed: int) -> Any:
    from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
    from botorch.acquisition.multi_objective.objective import IdentityMCMultiOutputObjective

    k = len(objective_models)
    model = _model_list([*objective_models, *constraint_models])
    return qLogNoisyExpectedHypervolumeImprovement(
        model=model, ref_point=list(ref_point), X_baseline=X_baseline,
        sampler=_sampler(mc_samples, seed),
        objective=IdentityMCMultiOutputObjective(outcomes=list(range(k))),
        constraints=_constraints(k, len(constraint_models)) or None,
        X_pending=X_pending if X_pending is not None and len(X_pending) else None,
        prune_baseline=True, cache_root=False,
    )


def score(acqf: Any | None, X: np.ndarray, p_feasible: np.ndarray, chunk: int = 256) -> np.ndarray:
    """``log acq(x) + log P(feasible | x)`` for every row of ``X`` (acq may be None:
    then only the feasibility term counts -- used before any feasible observation)."""
    logp = np.log(np.clip(p_feasible, 1e-12, 1.0))
    if acqf is None or len(X) == 0:
        return logp
    out = np.empty(len(X))
    Xt = torch.as_tensor(X, dtype=DTYPE)
    with torch.no_grad():
        for s in range(0, len(X), chunk):
            out[s:s + chunk] = acqf(Xt[s:s + chunk].unsqueeze(1)).detach().cpu().numpy()
    return out + logp
