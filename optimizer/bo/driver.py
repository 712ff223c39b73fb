"""The BO loop shared by :class:`~optimizer.constrained_bo.ConstrainedBO` and
:class:`~optimizer.mobo.MOBO`: initial design, data, feasibility model, batch proposals.

Proposal ``i`` (trial number ``i``) is a deterministic function of ``(seed, i, history)``:
trial numbers below ``n_init`` take the ``i``-th point of a seeded Sobol design (skipping
points already in the study); later ones fit the surrogates on every finished trial
(RUNNING/WAITING ones enter as pending points), seed torch and the candidate pool from
``(seed, i)``, and maximize the acquisition. A batch (``ask(n)``) fits once and picks its
points greedily, each chosen point joining the pending set of the next.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from optimizer.base import Optimizer, Point, Trial, proposal_rng
from optimizer.bo.acquisition import score
from optimizer.bo.candidates import candidate_pool, initial_design, maximize
from optimizer.bo.models import (
    DTYPE,
    FeasibilityModel,
    TrainingData,
    fit_gp,
    subsample,
    training_data,
)

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run torch with ``n`` intra-op threads, restoring the previous setting. BO's
    matrices are tiny (hundreds of points): extra threads only add synchronization, and
    with the study's worker processes already busy they slow fitting several-fold."""
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _unconstrained(space: Any) -> Any:
    """``space``'s parameters without its known constraints (a :class:`DesignSpace` only)."""
    from design_space.space import DesignSpace

    if not isinstance(space, DesignSpace):
        raise ValueError(f"known_constraints=False needs a DesignSpace, got {type(space).__name__}")
    return DesignSpace(*space.params, name=f"{space.name or 'space'}-unconstrained")


def _seed(seed: int, number: int, stream: int) -> int:
    return int(np.random.SeedSequence(entropy=seed, spawn_key=(stream, number)).generate_state(1)[0])


class BODriver(Optimizer):
    """Common machinery; subclasses implement :meth:`_acquisition`."""

    def __init__(self, space: Any, objectives: Any = None, seed: int = 0, *, n_init: int = 10,
                 pool_size: int = 2000, n_local: int = 5, local_steps: int = 5,
                 mc_samples: int = 128, max_train: int = 1000, log_objective: str | bool = "auto",
                 n_incumbents: int = 3, impute_infeasible: bool = True, feasibility_model: bool = True,
                 known_constraints: bool = True, initial_points: Sequence[Mapping[str, Any]] = (),
                 torch_threads: int = 1) -> None:
        super().__init__(space, objectives, seed)
        for name, v, lo in (("n_init", n_init, 1), ("pool_size", pool_size, 1), ("n_local", n_local, 0),
                            ("local_steps", local_steps, 0), ("mc_samples", mc_samples, 1),
                            ("max_train", max_train, 2), ("n_incumbents", n_incumbents, 0)):
            if not isinstance(v, int) or v < lo:
                raise ValueError(f"{type(self).__name__}: {name} must be an integer >= {lo}, got {v!r}")
        if log_objective not in ("auto", True, False):
            raise ValueError(f"log_objective must be 'auto', True or False, got {log_objective!r}")
        if not self.objectives:
            raise ValueError(f"{type(self).__name__} needs at least one objective")
        self.n_init, self.pool_size, self.n_local = n_init, pool_size, n_local
        self.local_steps, self.mc_samples, self.max_train = local_steps, mc_samples, max_train
        self.log_objective, self.n_incumbents = log_objective, n_incumbents
        self.impute_infeasible = bool(impute_infeasible)
        if not isinstance(feasibility_model, bool):
            raise ValueError(f"{type(self).__name__}: feasibility_model must be True or False, "
                             f"got {feasibility_model!r}")
        self.feasibility_model = feasibility_model
        if not isinstance(known_constraints, bool):
            raise ValueError(f"{type(self).__name__}: known_constraints must be True or False, "
                             f"got {known_constraints!r}")
        self.known_constraints = known_constraints
        # where candidates come from: the space itself, or (known_constraints=False, an
        # ablation) the same parameters without the known constraints, so that proposals
        # may violate them; the study then records such a proposal as INFEASIBLE without
        # evaluating it (experiments.study), and the optimizer learns of it only through
        # the feasibility model and the imputation, if they are on
        self.candidate_space = space if known_constraints else _unconstrained(space)
        self.initial_points = self._check_initial(initial_points)
        if len(self.initial_points) > n_init:
            raise ValueError(f"{type(self).__name__}: initial_points has {len(self.initial_points)} points, "
                             f"more than n_init={n_init}")
        self.torch_threads = int(torch_threads)
        self._init: list[Point] | None = None
        self.timings: list[dict[str, float]] = []

    def _check_initial(self, points: Sequence[Mapping[str, Any]]) -> list[Point]:
        if isinstance(points, Mapping) or isinstance(points, str):
            raise ValueError(f"{type(self).__name__}: initial_points must be a list of points, got {points!r}")
        out = []
        for i, p in enumerate(points):
            if not isinstance(p, Mapping):
                raise ValueError(f"{type(self).__name__}: initial_points[{i}] must be a point (a mapping), got {p!r}")
            bad = self.candidate_space.validate(p)
            if bad:
                raise ValueError(f"{type(self).__name__}: initial_points[{i}] = {dict(p)!r} is not a point of "
                                 f"the space: {'; '.join(map(str, bad))}")
            out.append(self.candidate_space.normalize(p))
        return out

    # ------------------------------------------------------------------ proposals
    def _initial(self, number: int, exclude: set[str]) -> Point | None:
        if self._init is None:
            # the given initial points first (a warm start), then the Sobol design
            # (the first n_init - len(initial_points) points of the design a run without
            # them would use, so a warm-started run and a cold one share those)
            sobol = initial_design(self.candidate_space, self.n_init, _seed(self.seed, 0, 7))
            self._init = [*self.initial_points, *sobol[: self.n_init - len(self.initial_points)]]
        for p in self._init[number:] + self._init[:number]:
            if self.space.point_key(p) not in exclude:
                return p
        return None

    def _propose(self, n: int, first_number: int) -> list[Point]:
        with torch_threads(self.torch_threads):
            return self._propose_batch(n, first_number)

    def _propose_batch(self, n: int, first_number: int) -> list[Point]:
        history = self.trials
        exclude = {self.space.point_key(t.params) for t in history}
        out: list[Point] = []
        fitted = None
        for k in range(n):
            number = first_number + k
            if number < self.n_init:
                p = self._initial(number, exclude)
            else:
                if fitted is None:
                    t0 = time.perf_counter()
                    fitted = self._fit(history, number)
                    fitted["fit_s"] = time.perf_counter() - t0
                p = self._bo_point(fitted, out, exclude, number)
            if p is None:
                break
            exclude.add(self.space.point_key(p))
            out.append(p)
        return out

    def _fit(self, history: list[Trial], number: int) -> dict[str, Any]:
        data = training_data(self.candidate_space, history, self.objectives, self.log_objective)
        # without the feasibility model (an ablation) P(feasible) is 1 everywhere: the
        # acquisition alone chooses, and failures reach it only through imputation
        feas = FeasibilityModel(data.X_all, data.feasible if self.feasibility_model else np.ones(len(data.feasible), bool),
                                seed=_seed(self.seed, number, 3))
        models = self._fit_models(data, number)
        return {"data": data, "feas": feas, "models": models}

    def _fit_models(self, data: TrainingData, number: int) -> dict[str, Any] | None:
        """Objective and constraint GPs, or None while there are fewer than 2 usable
        observations (the acquisition is then P(feasible) alone)."""
        if len(data.Y) < 2:
            return None
        rng = np.random.default_rng(_seed(self.seed, number, 4))
        idx = subsample(len(data.Y), data.Y[:, 0], self.max_train, rng)
        X = torch.as_tensor(data.X_ok[idx], dtype=DTYPE)
        Xo, Yo = data.X_ok[idx], data.Y[idx]
        if self.impute_infeasible and len(data.X_bad):
            # infeasible points enter the objective GPs at the worst observed value, so
            # the surrogate stops promising improvement where evaluations fail
            worst = Yo.min(axis=0, keepdims=True)
            Xo = np.vstack([Xo, data.X_bad])
            Yo = np.vstack([Yo, np.repeat(worst, len(data.X_bad), axis=0)])
        Xt = torch.as_tensor(Xo, dtype=DTYPE)
        objs = [fit_gp(Xt, torch.as_tensor(Yo[:, j], dtype=DTYPE), self.space, _seed(self.seed, number, 5 + j))
                for j in range(data.Y.shape[1])]
        cons = []
        for j, _ in enumerate(data.constraint_names):
            col = data.C[idx, j]
            good = np.isfinite(col)
            if good.sum() >= 2:
                cons.append(fit_gp(X[torch.as_tensor(good)], torch.as_tensor(col[good], dtype=DTYPE),
                                   self.space, _seed(self.seed, number, 50 + j)))
        return {"objectives": objs, "constraints": cons, "X": X, "idx": idx}

    def _bo_point(self, fitted: dict[str, Any], chosen: list[Point], exclude: set[str],
                  number: int) -> Point | None:
        data: TrainingData = fitted["data"]
        rng = proposal_rng(self.seed, number)
        pending = data.X_pending
        if chosen:
            pending = np.vstack([pending, self.candidate_space.encode(chosen)]) if len(pending) else self.candidate_space.encode(chosen)
        t0 = time.perf_counter()
        acqf = None
        if fitted["models"] is not None:
            acqf = self._acquisition(fitted, torch.as_tensor(pending, dtype=DTYPE) if len(pending) else None,
                                     _seed(self.seed, number, 6))
        incumbents = self._incumbents(data)
        pool = candidate_pool(self.candidate_space, rng, self.pool_size, incumbents)
        feas = fitted["feas"]
        p, _ = maximize(lambda X: score(acqf, X, feas.prob(X)), self.candidate_space, rng, pool, exclude,
                        n_local=self.n_local, local_steps=self.local_steps)
        self.timings.append({"number": number, "fit_s": fitted.get("fit_s", 0.0),
                             "acq_s": time.perf_counter() - t0, "n_train": len(data.Y)})
        logger.info("%s trial %d: fit %.2fs, acquisition %.2fs on %d observations", self.name,
                    number, fitted.get("fit_s", 0.0), time.perf_counter() - t0, len(data.Y))
        fitted["fit_s"] = 0.0
        return p

    def _incumbents(self, data: TrainingData) -> list[Point]:
        if not len(data.Y) or self.n_incumbents == 0:
            return []
        ok = [t for t in self.trials if t.feasible and all(o.name in t.metrics for o in self.objectives)]
        if not ok:
            return []
        s = np.array([sum(o.sign * float(t.metrics[o.name]) for o in self.objectives[:1]) for t in ok])
        return [ok[i].params for i in np.argsort(s, kind="stable")[: self.n_incumbents]]

    def _acquisition(self, fitted: dict[str, Any], X_pending: torch.Tensor | None, seed: int) -> Any:
        raise NotImplementedError
