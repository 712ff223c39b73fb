"""`MOBO`: multi-objective Bayesian optimization (qLogNEHVI) for 2-3 objectives, with
the same known/unknown constraint handling as :class:`~optimizer.constrained_bo.ConstrainedBO`.

One GP per objective (each in log space when positive, standardized, sign-adjusted so
all are maximized), one per outcome constraint, the GP feasibility classifier, and
BoTorch's ``qLogNoisyExpectedHypervolumeImprovement``. The reference point (in the
transformed space) is the worst observed value of each objective minus 10 % of its
observed range, so every observed point counts. After each batch the optimizer logs the
current Pareto front size and its hypervolume (original units, reference = the nadir
pushed out by 10 %), also available as :meth:`front` and :meth:`hypervolume`.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import torch

from optimizer.base import Point, objective_matrix
from optimizer.bo.acquisition import log_nehvi
from optimizer.bo.driver import BODriver
from optimizer.bo.models import FeasibilityModel
from optimizer.pareto import default_reference_point, hypervolume, pareto_mask

logger = logging.getLogger(__name__)


class MOBO(BODriver):
    """Multi-objective BO (see the module docstring).

    ``infeasible``: how points the evaluator reported INFEASIBLE/FAILED are handled --
    ``"model"`` (default): the GP feasibility classifier weights the acquisition and
    they enter the objective GPs at the worst observed values; ``"reject"``: HASCO's
    reject-and-resample (``explorer.codesign`` marks the trial abandoned and asks again):
    the models never see them, they are only excluded from being proposed again.
    """

    name = "mobo"

    def __init__(self, space: Any, objectives: Any = None, seed: int = 0, *, infeasible: str = "model",
                 **kw: Any) -> None:
        if infeasible not in ("model", "reject"):
            raise ValueError(f"MOBO: infeasible must be 'model' or 'reject', got {infeasible!r}")
        if infeasible == "reject":
            kw["impute_infeasible"] = False
        super().__init__(space, objectives, seed, **kw)
        self.infeasible = infeasible
        if not 2 <= len(self.objectives) <= 4:
            raise ValueError(f"MOBO needs 2-4 objectives, got {len(self.objectives)}")

    def _fit(self, history: Any, number: int) -> dict[str, Any]:
        fitted = super()._fit(history, number)
        if self.infeasible == "reject":  # no feasibility model: P(feasible) = 1 everywhere
            fitted["feas"] = FeasibilityModel(np.zeros((0, 1)), np.zeros(0, dtype=bool))
        return fitted

    def _acquisition(self, fitted: dict[str, Any], X_pending: torch.Tensor | None, seed: int) -> Any:
        m = fitted["models"]
        Y = fitted["data"].Y[m["idx"]]
        lo, hi = Y.min(axis=0), Y.max(axis=0)
        ref = lo - 0.1 * np.maximum(hi - lo, 1e-9)
        return log_nehvi(m["objectives"], m["constraints"], ref.tolist(), m["X"], X_pending,
                         self.mc_samples, seed)

    def _propose(self, n: int, first_number: int) -> list[Point]:
        out = super()._propose(n, first_number)
        front = self.front()
        if len(front):
            logger.info("mobo: %d points on the front, hypervolume %.6g", len(front), self.hypervolume())
        return out

    def _feasible_values(self) -> tuple[list[Any], np.ndarray]:
        ok = [t for t in self.finished_trials if t.feasible]
        y = objective_matrix(ok, self.objectives)
        keep = np.isfinite(y).all(axis=1)
        return [t for t, k in zip(ok, keep) if k], y[keep]

    def front(self) -> list[Any]:
        """The non-dominated feasible trials so far."""
        ok, y = self._feasible_values()
        if not len(ok):
            return []
        mask = pareto_mask(y, [o.direction for o in self.objectives])
        return [t for t, m in zip(ok, mask) if m]

    def hypervolume(self) -> float:
        """Dominated hypervolume of the feasible trials (reference: nadir + 10 % range)."""
        _, y = self._feasible_values()
        if not len(y):
            return 0.0
        dirs = [o.direction for o in self.objectives]
        return hypervolume(y, default_reference_point(y, dirs), dirs)
