"""``coexplore calibrate --device cuda``: Triton GEMM tilings measured on the GPU, the
:class:`~evaluators.kernels.gpu_model.GPUKernelModel` fitted to them.

The set: :data:`SHAPES` (7 GEMM shapes; ``quick``: 5 small ones) x ``tilings_per_shape``
tilings drawn from :func:`~evaluators.kernels.triton_gemm.tile_space` (12 each, so 84
tilings; tilings that fail to compile are dropped and counted). Each is timed by
:func:`~evaluators.kernels.measure.measure` (median of blocks, CUDA-synchronized) and its
energy read from NVML with idle power subtracted (:mod:`evaluators.kernels.nvml`), when
``nvidia-ml-py`` is installed. Whole shapes are held out (40 %), the latency constants
(``tc_eff``, ``hbm_eff``, ``l2_gb_s``, ``launch_s``, ``c_hide``) are fitted on the rest
with the same robust log-ratio least squares as the CPU model
(:func:`~evaluators.kernels.calibrate.fit_log_ratio`), the energy constants by
non-negative least squares on relative residuals, and the held-out Spearman / Kendall /
MAPE are reported before and after, overall and within each shape (the ranking of
tilings of one GEMM, what a tiling search needs).

Not run in this repository's CI: it needs CUDA (the tests that exercise it are marked
``gpu`` and skipped without a device).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from evaluators.kernels.calibrate import Calibration, fit_log_ratio, scores, within_group_spearman
from evaluators.kernels.gpu_model import ENERGY, FREE, GPUKernelModel

SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (4096, 1024, 4096),
          (1024, 4096, 2048), (8192, 2048, 1024), (512, 8192, 4096)]
QUICK_SHAPES = [(256, 256, 256), (512, 512, 512), (1024, 512, 256), (512, 1024, 768), (768, 256, 1024)]
BOUNDS = {"tc_eff": (0.02, 1.0), "hbm_eff": (0.05, 1.0), "l2_gb_s": (100.0, 1e5),
          "launch_s": (1e-7, 1e-3), "c_hide": (0.01, 1e3)}


def _split(shapes: list[tuple[int, int, int]], seed: int, frac: float = 0.4) -> set[tuple[int, int, int]]:
    rng = np.random.default_rng(seed)
    k = max(1, round(frac * len(shapes)))
    return {shapes[i] for i in rng.permutation(len(shapes))[:k]}


def _fit_energy(model: GPUKernelModel, rows: list[dict[str, Any]]) -> GPUKernelModel:
    from scipy.optimize import nnls

    e = np.array([r["energy_j"] for r in rows])
    feats = []
    for r in rows:
        tr = model.traffic(*r["shape"], [r["point"]])
        t = float(model.latency_s(*r["shape"], [r["point"]])[0])
        feats.append([tr["flops"][0] * 1e-12, tr["l2_bytes"][0] * 1e-12, tr["hbm_bytes"][0] * 1e-12, t])
    A = np.array(feats) / e[:, None]
    x, _ = nnls(A, np.ones_like(e))
    return model.replace(**dict(zip(ENERGY, x.tolist())))


def _predict(model: GPUKernelModel, rows: list[dict[str, Any]]) -> np.ndarray:
    return np.array([float(model.latency_s(*r["shape"], [r["point"]])[0]) for r in rows])


def run_cuda(*, quick: bool = False, seed: int = 0, tilings_per_shape: int = 12,
             progress: Callable[[int, int, dict[str, Any]], None] | None = None
             ) -> tuple[Calibration, list[dict[str, Any]]]:
    """Measure, split by shape, fit, score (module docstring)."""
    from evaluators.kernels import nvml, triton_gemm
    from evaluators.kernels.measure import environment, measure, require_device

    require_device("cuda")
    if not triton_gemm.available():
        raise RuntimeError("calibrate --device cuda needs triton (pip install -e '.[gpu]')")
    shapes = QUICK_SHAPES if quick else SHAPES
    prior = GPUKernelModel.datasheet()
    rows: list[dict[str, Any]] = []
    failed = 0
    total = len(shapes) * tilings_per_shape
    for si, shape in enumerate(shapes):
        space = triton_gemm.tile_space(*shape, quick=quick, smem_limit_kib=prior.gpu.smem_per_block_kib)
        pts = space.sample(min(tilings_per_shape, int(space.cardinality())), seed=seed + si)
        for p in pts:
            try:
                fn = triton_gemm.gemm_kernel(*shape, p)
            except ValueError:
                failed += 1
                continue
            m = measure(fn, device="cuda", min_time_s=0.05 if quick else 0.2, max_time_s=1.0,
                        energy=nvml.available())
            rows.append({"shape": list(shape), "point": dict(p), "median_s": m.median_s,
                         "iqr_s": m.iqr_s, "energy_j": m.energy_j, "energy_method": m.energy_method})
            if progress:
                progress(len(rows), total, rows[-1])
    test_shapes = _split(list(shapes), seed)
    test = np.array([tuple(r["shape"]) in test_shapes for r in rows])
    train_rows = [r for r, t in zip(rows, test) if not t]
    test_rows = [r for r, t in zip(rows, test) if t]
    meas_tr = np.array([r["median_s"] for r in train_rows])

    def predict_train(c: dict[str, float]) -> np.ndarray:
        return _predict(prior.replace(**c), train_rows)

    fitted = prior.replace(**fit_log_ratio(predict_train, meas_tr, {k: getattr(prior, k) for k in FREE}, BOUNDS))
    has_energy = bool(rows) and all(r["energy_j"] is not None for r in rows)
    if has_energy and train_rows:
        fitted = _fit_energy(fitted, train_rows)
    fit: dict[str, Any] = {"energy": "nvml (idle power subtracted)" if has_energy else "unavailable (no nvidia-ml-py)",
                           "failed_tilings": failed, "heldout_groups": sorted(str(s) for s in test_shapes),
                           "quick": quick, "seed": seed}
    for split, rs in (("train", train_rows), ("heldout", test_rows)):
        meas = np.array([r["median_s"] for r in rs])
        groups = [str(r["shape"]) for r in rs]
        block: dict[str, Any] = {}
        for tag, model in (("before", prior), ("after", fitted)):
            pred = _predict(model, rs)
            s = scores(pred, meas)
            s["within_shape_spearman"] = within_group_spearman(pred, meas, groups)
            block[f"latency_{tag}"] = s
            if has_energy:
                e = np.array([r["energy_j"] for r in rs])
                pe = np.array([float(model.energy_j(*r["shape"], [r["point"]])[0]) for r in rs])
                block[f"energy_{tag}"] = scores(pe, e)
        fit[split] = block
    for r in rows:
        r["predicted_before_s"] = float(_predict(prior, [r])[0])
        r["predicted_after_s"] = float(_predict(fitted, [r])[0])
    fit["samples"] = rows
    fit["median_noise_rel"] = float(np.median([r["iqr_s"] / r["median_s"] for r in rows])) if rows else math.nan
    env = environment("cuda")
    cal = Calibration(device="cuda", device_name=env.get("device_name", ""), model="GPUKernelModel",
                      constants=fitted.constants(), uncalibrated=prior.constants(), fit=fit, env=env,
                      created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    return cal, rows
