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

Jitter: NEI samples the *joint* posterior of the (pruned) observed points and each
candidate. With a deterministic evaluator the GPs learn the noise floor, so the
posterior at observed points is nearly exact, and with a smooth fit (an outcome
constraint linear in the inputs, say) that joint covariance is singular to rounding
(eigenvalues ~1e-15 of its largest). GPyTorch then adds 1e-8 to its diagonal and warns
(``NumericalWarning: A not p.d., added jitter``) -- the documented remedy, and the
candidates' scores are unaffected at that scale. It is not a defect of the training data
(inputs in [0, 1], outcomes standardized, no duplicate points), so :func:`score` does not
print it: it counts it and logs one INFO line per scoring (``coexplore --verbose``).

No compilation at run time: BoTorch 0.18 builds a fused C++ kernel for qLogNEHVI the
first time one is constructed (``torch.utils.cpp_extension.load`` with ``-march=native``,
into ``~/.cache/torch_extensions``). A study must not depend on a compiler, build
machine-specific code, or wait on that build's file lock -- a build killed half-way leaves
the lock behind and every later process waits on it for ever (this hung CI). We mark the
load as already attempted so BoTorch takes its pure-PyTorch path, which computes the
same quantity.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from optimizer.bo.models import DTYPE

logger = logging.getLogger(__name__)


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


def _no_fused_kernel() -> None:
    from botorch.acquisition.multi_objective import logei

    # BoTorch's own "already tried, do not retry" flag (botorch 0.18,
    # acquisition/multi_objective/logei.py); with _C left None the Python path is used.
    if getattr(logei, "_C", None) is None:
        logei._load_attempted = True


def log_nehvi(objective_models: Sequence[Any], constraint_models: Sequence[Any],
              ref_point: Sequence[float], X_baseline: torch.Tensor,
              X_pending: torch.Tensor | None, mc_samples: int, seed: int) -> Any:
    from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
    from botorch.acquisition.multi_objective.objective import IdentityMCMultiOutputObjective

    _no_fused_kernel()
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
    from linear_operator.utils.warnings import NumericalWarning

    out = np.empty(len(X))
    Xt = torch.as_tensor(X, dtype=DTYPE)
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always", NumericalWarning)
        for s in range(0, len(X), chunk):
            out[s:s + chunk] = acqf(Xt[s:s + chunk].unsqueeze(1)).detach().cpu().numpy()
    jitter = 0
    for w in caught:
        if issubclass(w.category, NumericalWarning) and "jitter" in str(w.message):
            jitter += 1
        else:  # anything else is passed on as it came
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if jitter:
        logger.info("acquisition: the joint posterior needed diagonal jitter in %d of %d "
                    "candidate chunks (near-exact posterior at observed points; harmless)",
                    jitter, -(-len(X) // chunk))
    return out + logp
