"""Hardware-in-the-loop search: study evaluators that measure real kernels, and the
screen-then-measure multi-fidelity scheme.

**Measuring evaluator.** :class:`MeasuredKernelEvaluator` is a study evaluator ``point
-> Evaluation`` for the tilings of one GEMM: it runs the kernel the point describes
(``backend="blocked"``: the CPU blocked matmul; ``"triton"``: the Triton GEMM on CUDA),
``repeats`` independent times (each a median over blocks of calls,
:func:`~evaluators.kernels.measure.measure`), and reports the **median of the repeat
medians** as ``latency_s`` (with ``statistic="best"``: the median of the repeats'
fastest blocks), with ``latency_iqr_s`` and ``noise_rel`` (IQR / median over
all timed blocks) so the noise is visible in the study. Points already measured in this
process are served from a cache (``cache_hits``), so an optimizer proposing a point twice
costs one measurement.

**Noise-aware surrogate.** Coexplore's ``constrained-bo`` surrogate is BoTorch's
``SingleTaskGP`` with no fixed observation noise: its ``GaussianLikelihood`` *learns* a
homoskedastic noise level by marginal likelihood (with BoTorch's default prior), which is
what a noisy measured objective needs. :func:`optimizer.bo.models.learned_noise` refits that GP on a study's
trials and returns the noise variance it learned (in the GP's standardized units) next to
the measured ``noise_rel``, so the two can be compared.

**Multi-fidelity, screen-then-measure** (:func:`screen_then_measure`; not BoTorch's
multi-fidelity acquisition). The cheap fidelity is the calibrated analytical model, the
expensive one the measurement:

1. predict the latency of *every* candidate of the tile space with the model (array
   code, milliseconds for thousands of tilings);
2. measure the ``n_screen`` best-predicted candidates;
3. spend the rest of the measurement budget on the untested neighbours
   (:meth:`DesignSpace.neighbors`) of the best *measured* points, best-predicted first
   -- a local search that corrects the model where it is wrong near the optimum. It
   stops early, with budget left, once the neighbourhoods of the three best measured
   points are all measured (a local optimum of the measurements);
4. return the best measured point.

Without calibration the scheme still works with the datasheet model, only with a worse
screen.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluators.base import Evaluation


def point_key(point: Mapping[str, Any]) -> str:
    return json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in sorted(point.items())})


class MeasuredKernelEvaluator:
    """Callable ``point -> Evaluation`` measuring a GEMM tiling (module docstring).

    Args:
        M, N, K: the GEMM.
        backend: ``"blocked"`` (CPU) or ``"triton"`` (CUDA, needs the gpu extra).
        repeats: independent measurements per point; their median is the objective.
        min_time_s, max_time_s: per-repeat timing budget (:func:`measure`).
        threads: torch threads (CPU).
        statistic: the per-repeat figure: ``"median"`` (default) of the timed blocks, or
            ``"best"``, the fastest block (robust to load on a shared machine, where
            interference only adds time).
    """

    def __init__(self, M: int, N: int, K: int, *, backend: str = "blocked", repeats: int = 3,
                 min_time_s: float = 0.02, max_time_s: float = 0.2, threads: int | None = 1,
                 statistic: str = "median") -> None:
        if backend not in ("blocked", "triton"):
            raise ValueError(f"backend must be 'blocked' or 'triton', got {backend!r}")
        if repeats < 1:
            raise ValueError("repeats must be >= 1")
        if statistic not in ("median", "best"):
            raise ValueError(f"statistic must be 'median' or 'best', got {statistic!r}")
        self.statistic = statistic
        self.M, self.N, self.K = int(M), int(N), int(K)
        self.backend = backend
        self.repeats = int(repeats)
        self.min_time_s, self.max_time_s = float(min_time_s), float(max_time_s)
        self.threads = threads
        self.cache: dict[str, Evaluation] = {}
        self.cache_hits = 0
        self.n_measured = 0

    @property
    def device(self) -> str:
        return "cuda" if self.backend == "triton" else "cpu"

    def kernel(self, point: Mapping[str, Any]) -> Callable[[], Any]:
        if self.backend == "triton":
            from evaluators.kernels.triton_gemm import gemm_kernel

            return gemm_kernel(self.M, self.N, self.K, point)
        from evaluators.kernels.blocked import blocked_kernel, gemm_layer

        return blocked_kernel(gemm_layer(self.M, self.N, self.K), point)

    def __call__(self, point: Mapping[str, Any], seed: int | None = None) -> Evaluation:
        key = point_key(point)
        if key in self.cache:
            self.cache_hits += 1
            return self.cache[key]
        from evaluators.base import Infeasible
        from evaluators.kernels.measure import measure

        try:
            fn = self.kernel(point)
        except ValueError as e:  # e.g. a Triton tiling that exceeds shared memory
            raise Infeasible(str(e)) from None
        meds, bests, times = [], [], []
        env: dict[str, Any] = {}
        energy: list[float] = []
        for _ in range(self.repeats):
            m = measure(fn, device=self.device, threads=self.threads, min_time_s=self.min_time_s,
                        max_time_s=self.max_time_s, energy=self.device == "cuda")
            meds.append(m.median_s)
            bests.append(m.best_s)
            times.extend(m.times_s)
            env = m.env
            if m.energy_j is not None:
                energy.append(m.energy_j)
        self.n_measured += 1
        q1, q3 = np.percentile(times, [25, 75])
        med = float(np.median(meds))
        value = med if self.statistic == "median" else float(np.median(bests))
        metrics = {"latency_s": value, "latency_median_s": med, "latency_best_s": float(np.median(bests)),
                   "latency_iqr_s": float(q3 - q1),
                   "noise_rel": float((q3 - q1) / med) if med > 0 else math.inf,
                   "gflops": 2.0 * self.M * self.N * self.K / value * 1e-9}
        if energy:
            metrics["energy_j"] = float(np.median(energy))
        ev = Evaluation(metrics=metrics, info={"method": f"{self.backend}: median of {self.repeats} "
                                               f"repeat {self.statistic}s (torch.utils.benchmark)",
                                               "repeat_medians_s": meds, "env": env})
        self.cache[key] = ev
        return ev


# --------------------------------------------------------------------------- multi-fidelity


@dataclass
class ScreenResult:
    """What :func:`screen_then_measure` measured, in order, and its pick."""

    best_point: dict[str, Any]
    best_measured_s: float
    measured: list[tuple[dict[str, Any], float]] = field(default_factory=list)
    n_candidates: int = 0

    @property
    def n_measurements(self) -> int:
        return len(self.measured)


def screen_then_measure(candidates: Sequence[Mapping[str, Any]],
                        predict_s: Callable[[Sequence[Mapping[str, Any]]], np.ndarray],
                        measure_s: Callable[[Mapping[str, Any]], float], *, budget: int,
                        n_screen: int | None = None,
                        neighbors: Callable[[Mapping[str, Any]], Sequence[Mapping[str, Any]]] | None = None,
                        ) -> ScreenResult:
    """The screen-then-measure scheme (module docstring). ``predict_s`` maps a list of
    points to predicted seconds (the cheap fidelity); ``measure_s`` measures one point
    (the expensive one); at most ``budget`` measurements; ``n_screen`` defaults to half
    the budget when ``neighbors`` is given, else the whole budget."""
    cands = [dict(c) for c in candidates]
    if not cands or budget < 1:
        raise ValueError("screen_then_measure needs candidates and a budget >= 1")
    pred = np.asarray(predict_s(cands), dtype=float)
    keys = [point_key(c) for c in cands]
    pred_of = dict(zip(keys, pred.tolist()))
    n_screen = min(budget, n_screen if n_screen is not None else
                   (max(1, budget // 2) if neighbors else budget))
    done: dict[str, float] = {}
    measured: list[tuple[dict[str, Any], float]] = []

    def run(p: dict[str, Any]) -> None:
        k = point_key(p)
        if k in done or len(measured) >= budget:
            return
        v = float(measure_s(p))
        done[k] = v
        measured.append((p, v))

    for i in np.argsort(pred, kind="stable")[:n_screen]:
        run(cands[i])
    while neighbors is not None and len(measured) < budget:
        frontier: dict[str, dict[str, Any]] = {}
        for p, _ in sorted(measured, key=lambda t: t[1])[:3]:
            for q in neighbors(p):
                k = point_key(q)
                if k not in done and k in pred_of:
                    frontier[k] = dict(q)
        if not frontier:
            break
        nxt = min(frontier, key=lambda k: pred_of[k])
        run(frontier[nxt])
    best_p, best_v = min(measured, key=lambda t: t[1])
    return ScreenResult(best_p, best_v, measured, len(cands))


# --------------------------------------------------------------------------- cheap fidelity


class PredictedKernelEvaluator:
    """The cheap fidelity as a study evaluator: ``point -> {"latency_s": predicted}`` for
    the tilings of one GEMM, from a calibration file (:mod:`evaluators.kernels.calibrate`)
    or, with ``calibration=None`` or a missing file, the datasheet model. ``device`` is
    ``"cpu"`` (blocked matmul, :class:`~evaluators.kernels.cpu_model.CPUModel`) or
    ``"cuda"`` (Triton tilings, :class:`~evaluators.kernels.gpu_model.GPUKernelModel`)."""

    def __init__(self, M: int, N: int, K: int, *, device: str = "cpu",
                 calibration: str | None = None) -> None:
        from pathlib import Path

        from evaluators.kernels.calibrate import load_model

        if device not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
        self.M, self.N, self.K, self.device = int(M), int(N), int(K), device
        self.source = "datasheet"
        if calibration is not None and Path(calibration).exists():
            self.model = load_model(calibration, device)
            self.source = str(calibration)
        elif device == "cuda":
            from evaluators.kernels.gpu_model import GPUKernelModel

            self.model = GPUKernelModel.datasheet()
        else:
            from evaluators.kernels.cpu_model import datasheet_model

            self.model = datasheet_model()

    def predict_s(self, points: Sequence[Mapping[str, Any]]) -> np.ndarray:
        if self.device == "cuda":
            return self.model.latency_s(self.M, self.N, self.K, points)
        from evaluators.kernels.blocked import gemm_layer
        from evaluators.kernels.cpu_model import blocked_features

        return self.model.latency_s(blocked_features(gemm_layer(self.M, self.N, self.K), points))

    def __call__(self, point: Mapping[str, Any], seed: int | None = None) -> Evaluation:
        from evaluators.base import Infeasible

        t = float(self.predict_s([point])[0])
        if not math.isfinite(t):
            raise Infeasible("the model says this tiling cannot run (shared memory)")
        return Evaluation(metrics={"latency_s": t}, info={"method": f"predicted ({self.source})"})
