"""Co-design evaluator: a multi-task diffractive accelerator trained at a cheap fidelity.

:class:`D2NNCoDesign` is an evaluator (``point -> Evaluation``) for the space of
``experiments/configs/d2nn_codesign.yaml``: ``layers`` (path depth L), ``shared_depth``
(K_s), ``n``, ``pitch_um``, ``z_mm``, ``phase_levels`` (0 = continuous) and
``loss_ratio`` (lambda_1 / lambda_2; the weights are ``(2 r / (1 + r), 2 / (1 + r))``).
Fixed: 532 nm, 10 detector regions of ``n / 10`` px per task plane, amplitude factor
``amplitude_factor`` on both branches. Propagation: band-limited ASM with padding ``n / 2``
wherever its padding error is within ``padding_tol`` (default
:data:`~accelerators.diffraction_limits.PADDING_TOL`); elsewhere (past the padded grid's
critical distance, or a wrap-around error above the tolerance) the cheapest pad and method
that meet it (:meth:`~accelerators.diffractive.DiffractiveAccelerator.planned`: more padding,
or Rayleigh-Sommerfeld); ``info['propagation']`` states the choice and its expected error.
``padding_tol=None`` keeps ASM at ``n / 2`` everywhere unchecked (the behaviour before
issue 47).

For each point it builds the :class:`~accelerators.diffractive.DiffractiveAccelerator`
(``tasks = 2``), trains a :class:`~evaluators.optics.model.DiffractiveNetwork` on
``train_samples`` stratified images per task for ``epochs`` epochs (the cheap fidelity;
stated in ``info``) and reports on ``test_samples`` test images per task:

* ``acc_task1`` (MNIST), ``acc_task2`` (Fashion-MNIST) -- each read on its own plane;
* ``recognition`` -- fraction of test inputs whose task is recognized (brightest region);
* the cost model: ``physical_layers``, ``area_mm2``, ``latency_ns``, ``energy_pj``,
  ``layers_saved`` (against two separate systems of the same depth);
* ``train_s`` -- measured training seconds (``info`` has the device and threads).

With ``min_recognition`` set (a fraction in ``(0, 1]``), the evaluation also returns the
outcome constraint ``recognition_shortfall = min_recognition - recognition`` (``<= 0``
feasible): a design whose readout cannot tell the tasks apart is infeasible however
accurate each plane is on its own task, so a constrained optimizer (``mobo``,
``constrained_bo``) keeps it off the front.

A design whose propagator is invalid or whose structure is impossible
(``shared_depth > layers``) raises :class:`~evaluators.Infeasible` with the reason
(normally the space's known constraint rejects it first). Data are loaded once per
evaluator object (one per worker process).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from accelerators.diffraction_limits import PADDING_TOL, PropagationValidityError
from accelerators.diffractive import DiffractiveAccelerator
from evaluators.base import Evaluation, Infeasible
from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.train import TaskData, TrainConfig, evaluate, prepare_tasks, train

__all__ = ["D2NNCoDesign", "loss_weights"]


def loss_weights(ratio: float) -> tuple[float, float]:
    """``(lambda_1, lambda_2)`` with ``lambda_1 / lambda_2 = ratio`` and mean 1."""
    r = float(ratio)
    return 2 * r / (1 + r), 2 / (1 + r)


class D2NNCoDesign:
    """See the module docstring."""

    def __init__(self, tasks: Sequence[str] = ("mnist", "fashion"), train_samples: int = 1000,
                 test_samples: int = 500, epochs: int = 1, batch_size: int = 64, lr: float = 0.05,
                 amplitude_factor: float = 1.2, wavelength_nm: float = 532.0, device: str = "cpu",
                 data_seed: int = 0, threads: int | None = None, min_recognition: float | None = None,
                 padding_tol: float | None = PADDING_TOL) -> None:
        if min_recognition is not None and not 0.0 < float(min_recognition) <= 1.0:
            raise ValueError(f"min_recognition must be a fraction in (0, 1], got {min_recognition!r}")
        self.min_recognition = None if min_recognition is None else float(min_recognition)
        if padding_tol is not None and not float(padding_tol) > 0:
            raise ValueError(f"padding_tol must be > 0 or None, got {padding_tol!r}")
        self.padding_tol = None if padding_tol is None else float(padding_tol)
        self.task_names = tuple(tasks)
        self.train_samples, self.test_samples, self.epochs = train_samples, test_samples, epochs
        self.batch_size, self.lr, self.amplitude_factor = batch_size, lr, amplitude_factor
        self.wavelength_nm, self.device, self.data_seed, self.threads = wavelength_nm, device, data_seed, threads
        self._tasks: list[TaskData] | None = None

    def spec(self, point: Mapping[str, Any]) -> DiffractiveAccelerator:
        n = int(point["n"])
        levels = int(point.get("phase_levels", 0)) or None
        spec = DiffractiveAccelerator(
            wavelength_m=self.wavelength_nm * 1e-9, pitch_m=float(point["pitch_um"]) * 1e-6, n=n,
            pad=n // 2, z_m=float(point["z_mm"]) * 1e-3, layers=int(point["layers"]), tasks=len(self.task_names),
            shared_layers=int(point["shared_depth"]), phase_levels=levels, detector_size_px=max(2, n // 10))
        if self.padding_tol is None or spec.problems(propagation=False) or spec.pitch_m < spec.wavelength_m / 2:
            return spec
        try:
            return spec.planned(self.padding_tol)
        except PropagationValidityError:
            return spec.with_(padding_tol=self.padding_tol)  # __call__ reports the numbers

    def __call__(self, point: Mapping[str, Any], seed: int | None = None) -> Evaluation:
        spec = self.spec(point)
        if self.padding_tol is not None:
            problems = spec.problems()
        else:  # the behaviour before issue 47: the Nyquist pitch only
            problems = spec.problems(propagation=False) + [
                p for p in spec.with_(propagation="rs", z_m=1e9).problems() if "lambda/2" in p]
        if problems:
            raise Infeasible("; ".join(problems))
        if self._tasks is None:
            self._tasks = prepare_tasks(self.task_names, self.train_samples, self.test_samples, self.data_seed)
        if self.threads:
            torch.set_num_threads(self.threads)
        s = 0 if seed is None else int(seed) % (2**31)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            net = DiffractiveNetwork(spec, amplitude_factors=self.amplitude_factor, seed=s, check="off")
        cfg = TrainConfig(epochs=self.epochs, batch_size=self.batch_size, lr=self.lr,
                          loss_weights=loss_weights(float(point.get("loss_ratio", 1.0))), seed=s, device=self.device)
        res = train(net, self._tasks, cfg)
        ev = evaluate(net, self._tasks)
        metrics = {"acc_task1": ev["acc"][0], "acc_task2": ev["acc"][1],
                   "recognition": float(sum(ev["recognition"]) / len(ev["recognition"])),
                   "train_s": res.seconds}
        metrics.update({k: spec.cost()[k] for k in ("physical_layers", "area_mm2", "latency_ns", "energy_pj",
                                                    "layers_saved")})
        info = {"fidelity": {"train_samples_per_task": len(self._tasks[0].train_y), "epochs": self.epochs,
                             "test_samples_per_task": len(self._tasks[0].test_y)},
                "data": [t.source for t in self._tasks], "device": res.device, "threads": res.threads,
                "steps": res.steps,
                "propagation": {"method": spec.propagation, "pad": spec.pad, "padding_tol": self.padding_tol}}
        constraints = {} if self.min_recognition is None else {
            "recognition_shortfall": self.min_recognition - metrics["recognition"]}
        return Evaluation(metrics=metrics, constraints=constraints, info=info)
