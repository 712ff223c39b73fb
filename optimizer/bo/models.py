"""Surrogates for Bayesian optimization over a design space's encoding.

* :func:`make_kernel` -- a kernel that respects each parameter kind of the encoding
  (:meth:`design_space.DesignSpace.encoding`): a Matern-5/2 with ARD over numeric and
  ordered columns (integers, reals, powers of two, ordinals), an ARD RBF over the one-hot
  columns of categoricals (on one-hot vectors a squared distance is twice the Hamming
  distance, so this is an exponentiated-Hamming kernel), and for every permutation an RBF
  with one shared lengthscale over its pairwise "i before j" features -- the Mallows
  kernel, ``exp(-Kendall tau distance / l^2)``. The factors multiply; lengthscales get
  BoTorch's dimension-scaled log-normal priors (Hvarfner et al. 2024), outcomes are
  standardized, so no output scale is needed.
* :func:`fit_gp` -- a ``SingleTaskGP`` per outcome (float64), fitted by marginal
  likelihood.
* :class:`FeasibilityModel` -- *unknown* feasibility learned from trials: a Gaussian
  process classifier (scikit-learn's ``GaussianProcessClassifier``, Laplace
  approximation, Matern-5/2 kernel) on the encoding, trained on COMPLETE (feasible) vs
  INFEASIBLE/FAILED (infeasible) trials; it gives ``P(feasible | x)``.
* :func:`training_data` -- trials -> encoded arrays (objectives transformed for BoTorch's
  maximization convention; see :func:`objective_transform`).

Past ``max_train`` observations the regression models are fitted on the best
``max_train // 2`` points plus a seeded random subset of the rest (exact GPs are cubic in
the number of points; the best region matters most for EI).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from design_space.space import SpaceLike
from optimizer.base import Objective, Trial, TrialStatus

DTYPE = torch.float64


def make_kernel(space: Any) -> Any:
    """Kernel for ``space.encoding()`` (a ``DesignSpace`` or ``JointSpace``)."""
    from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior
    from gpytorch.kernels import ProductKernel, RBFKernel
    from gpytorch.priors import LogNormalPrior

    groups = encoding_groups(space)
    d = max(int(space.dim), 1)
    numeric = [c for g in groups if g.kind in ("integer", "real", "power_of_two", "ordinal")
               for c in range(g.columns.start, g.columns.stop)]
    onehot = [c for g in groups if g.kind == "categorical" for c in range(g.columns.start, g.columns.stop)]
    parts = []
    if numeric:
        k = get_covar_module_with_dim_scaled_prior(len(numeric), use_rbf_kernel=False, active_dims=numeric)
        parts.append(k)
    if onehot:
        parts.append(get_covar_module_with_dim_scaled_prior(len(onehot), active_dims=onehot))
    for g in groups:
        if g.kind == "permutation" and g.columns.stop > g.columns.start:
            cols = list(range(g.columns.start, g.columns.stop))
            prior = LogNormalPrior(loc=math.sqrt(2) + 0.5 * math.log(d), scale=math.sqrt(3))
            parts.append(RBFKernel(active_dims=cols, lengthscale_prior=prior))
    if not parts:  # a space of fixed parameters only
        parts.append(get_covar_module_with_dim_scaled_prior(1, active_dims=[0]))
    return parts[0] if len(parts) == 1 else ProductKernel(*parts)


def encoding_groups(space: SpaceLike) -> list[Any]:
    """The encoded column groups of a DesignSpace or a JointSpace."""
    return list(space.encoding())


def fit_gp(X: torch.Tensor, y: torch.Tensor, space: Any, seed: int) -> Any:
    """A fitted ``SingleTaskGP`` (standardized outcome) on ``X`` ``(n, d)`` and ``y`` ``(n,)``."""
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Standardize
    from gpytorch.mlls import ExactMarginalLogLikelihood

    torch.manual_seed(seed)
    model = SingleTaskGP(X, y.unsqueeze(-1), covar_module=make_kernel(space),
                         outcome_transform=Standardize(m=1))
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit_gpytorch_mll(mll)
        except Exception:
            model.eval()
    return model


def learned_noise(space: Any, trials: Sequence[Trial], objective: str, seed: int = 0) -> dict[str, float]:
    """Fit the regression GP of ``constrained-bo`` (:func:`fit_gp`: no fixed noise, so its
    ``GaussianLikelihood`` learns a homoskedastic noise level) on the COMPLETE ``trials``'
    ``objective`` (minimized, log-modelled like the optimizer does) and return the noise
    variance it learned, in standardized units (the data's variance is 1), with ``n``.
    For a measured objective this is the GP's estimate of the measurement noise."""
    data = training_data(space, trials, [Objective(objective, "min")])
    if len(data.Y) < 3:
        return {"noise_var_std": math.nan, "n": len(data.Y)}
    model = fit_gp(torch.tensor(data.X_ok, dtype=DTYPE), torch.tensor(data.Y[:, 0], dtype=DTYPE), space, seed)
    return {"noise_var_std": float(model.likelihood.noise.detach().reshape(-1)[0]), "n": len(data.Y)}


def objective_transform(values: np.ndarray, objective: Objective, log: str | bool) -> np.ndarray:
    """Objective values -> the quantity BoTorch maximizes: ``-log y`` for a positive
    minimized objective (``log="auto"`` when every value is > 0), ``-y`` without the
    log, and the same with the sign flipped for maximized ones."""
    v = np.asarray(values, dtype=float)
    use_log = (log is True) or (log == "auto" and v.size and np.all(v > 0))
    z = np.log(v) if use_log else v
    return -objective.sign * z


@dataclass
class TrainingData:
    """Encoded history. ``X_ok``/``Y``: COMPLETE trials with finite objectives (``Y`` in
    maximization space, one column per objective); ``C``: their outcome-constraint values
    (``<= 0`` feasible, NaN if not reported); ``X_all``/``feasible``: every finished
    trial and whether it was COMPLETE; ``X_pending``: RUNNING/WAITING trials."""

    X_ok: np.ndarray
    Y: np.ndarray
    C: np.ndarray
    constraint_names: list[str]
    X_all: np.ndarray
    feasible: np.ndarray
    X_pending: np.ndarray
    keys_seen: set[str]
    raw_ok: np.ndarray                 # untransformed objective values of X_ok rows
    X_bad: np.ndarray                  # INFEASIBLE / FAILED trials (for imputation)


def training_data(space: Any, trials: Sequence[Trial], objectives: Sequence[Objective],
                  log: str | bool = "auto") -> TrainingData:
    finished = [t for t in trials if t.status.finished]
    pending = [t for t in trials if not t.status.finished]
    ok = [t for t in finished if t.status is TrialStatus.COMPLETE
          and all(o.name in t.metrics and np.isfinite(float(t.metrics[o.name])) for o in objectives)]
    cnames = sorted({k for t in ok for k in t.constraints})
    d = space.dim

    def enc(ts: Sequence[Trial]) -> np.ndarray:
        return space.encode([t.params for t in ts]) if ts else np.zeros((0, d))

    raw = np.array([[float(t.metrics[o.name]) for o in objectives] for t in ok]).reshape(len(ok), len(objectives))
    Y = np.column_stack([objective_transform(raw[:, j], o, log) for j, o in enumerate(objectives)]) \
        if ok else np.zeros((0, len(objectives)))
    C = np.array([[t.constraints.get(c, np.nan) for c in cnames] for t in ok], dtype=float).reshape(len(ok), len(cnames))
    X_all = enc(finished)
    feas = np.array([t.status is TrialStatus.COMPLETE for t in finished], dtype=bool)
    keys = {space.point_key(t.params) for t in trials}
    bad = [t for t in finished if t.status is not TrialStatus.COMPLETE]
    return TrainingData(enc(ok), Y, C, cnames, X_all, feas, enc(pending), keys, raw, enc(bad))


def subsample(n: int, y: np.ndarray, max_train: int, rng: np.random.Generator) -> np.ndarray:
    """Indices to fit on: everything up to ``max_train``, else the best half plus a
    random sample of the rest (``y`` in maximization space)."""
    if n <= max_train:
        return np.arange(n)
    best = np.argsort(-y)[: max_train // 2]
    rest = np.setdiff1d(np.arange(n), best)
    return np.sort(np.concatenate([best, rng.choice(rest, max_train - len(best), replace=False)]))


class FeasibilityModel:
    """``P(feasible | x)`` from COMPLETE vs INFEASIBLE/FAILED trials (see module docstring).

    With only feasible observations it returns 1; with only infeasible ones it cannot
    rank candidates by probability and instead prefers points far from the failures
    (``exp(-1 / min distance)``, a monotone stand-in, documented as such).
    """

    def __init__(self, X: np.ndarray, feasible: np.ndarray, seed: int = 0) -> None:
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(feasible, dtype=bool)
        self.model = None
        self.mode = "none"
        if len(self.y) == 0 or self.y.all():
            self.mode = "all_feasible"
        elif not self.y.any():
            self.mode = "all_infeasible"
        else:
            from sklearn.gaussian_process import GaussianProcessClassifier
            from sklearn.gaussian_process.kernels import ConstantKernel, Matern

            kernel = ConstantKernel(1.0, (1e-2, 1e2)) * Matern(length_scale=0.5, length_scale_bounds=(1e-2, 1e2), nu=2.5)
            self.model = GaussianProcessClassifier(kernel=kernel, random_state=seed, n_restarts_optimizer=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.model.fit(self.X, self.y.astype(int))
            self.mode = "gpc"

    def prob(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if self.mode in ("none", "all_feasible"):
            return np.ones(len(X))
        if self.mode == "all_infeasible":
            dist = np.sqrt(((X[:, None, :] - self.X[None, :, :]) ** 2).sum(-1)).min(axis=1)
            return np.exp(-1.0 / np.maximum(dist, 1e-9))
        return self.model.predict_proba(X)[:, 1]
