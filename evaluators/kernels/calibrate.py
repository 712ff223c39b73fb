"""Calibrate an analytical kernel model against measurements, and store the result.

**Fit.** :func:`fit_latency` fits the model's latency constants by
``scipy.optimize.least_squares`` on ``log(predicted) - log(measured)`` (relative error,
so microsecond and second kernels weigh alike) with a robust ``soft_l1`` loss, over the
logarithms of the constants (positive by construction, bounded to sane ranges). :func:`fit_energy` fits the energy
constants, which enter linearly, by non-negative least squares on relative residuals
(``scipy.optimize.nnls``); it runs only where energy was measured (RAPL / NVML).

**Report.** :func:`scores` gives Spearman's rho, Kendall's tau and the MAPE between
predicted and measured values; a calibration reports them on the training set and on
held-out *shapes* (no shape of the held-out set is in the training set), before
(datasheet constants) and after the fit. ``within_shape_spearman`` is the mean Spearman
over the tilings of each held-out GEMM shape: how well the model ranks mappings of one
layer, which is what a mapping search needs (across shapes, size alone makes the rank
correlation high).

**Store.** :class:`Calibration` is a versioned JSON file (``schema_version``, device
kind and name, environment, constants, fit metrics, when) that
:func:`load_calibration` reads back, refusing unknown schema versions and other device
kinds; :meth:`Calibration.model` rebuilds the calibrated model.

:func:`run_cpu` is the whole CPU pipeline behind ``coexplore calibrate --device cpu``:
build a set of kernels (torch conv / GEMM / attention BMM at 1 and 2 threads, and
blocked matmuls of several GEMM shapes with tilings drawn from their tile spaces),
measure them (:mod:`evaluators.kernels.measure`), split by shape, fit, report, save.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.kernels import blocked
from evaluators.kernels.cpu_model import (
    CPUModel,
    Features,
    blocked_features,
    datasheet_model,
    kernel_features,
)
from mappers.workloads import Layer, conv2d, gemm

SCHEMA_VERSION = 1

# Fit bounds (log-space parameters are clipped to these): generous, physical.
LATENCY_BOUNDS = {
    "peak_gflops": (0.1, 1e5),
    "cache_bw_gb_s": (0.1, 1e5),
    "dram_bw_gb_s": (0.01, 1e5),
    "overhead_s": (1e-8, 1e-2),
    "block_overhead_s": (1e-8, 1e-2),
    "thread_scaling": (1e-3, 1.0),
}


# --------------------------------------------------------------------------- metrics


def scores(pred: Sequence[float], meas: Sequence[float]) -> dict[str, float]:
    """Spearman, Kendall, MAPE and its median version MdAPE (%) of ``pred`` against
    ``meas`` (the fit minimizes a robust log-ratio, so MdAPE is the error it targets;
    MAPE weighs a few outliers, e.g. kernels slowed down by load, heavily)."""
    from scipy.stats import kendalltau, spearmanr

    p, m = np.asarray(pred, float), np.asarray(meas, float)
    if len(p) >= 2 and (np.ptp(p) == 0 or np.ptp(m) == 0):  # a rank correlation is undefined
        return {"spearman": math.nan, "kendall": math.nan,
                "mape_pct": float(np.mean(np.abs(p - m) / np.abs(m)) * 100.0),
                "mdape_pct": float(np.median(np.abs(p - m) / np.abs(m)) * 100.0), "n": len(p)}
    if len(p) < 2:
        return {"spearman": math.nan, "kendall": math.nan, "mape_pct": math.nan, "mdape_pct": math.nan,
                "n": len(p)}
    return {
        "spearman": float(spearmanr(p, m).statistic),
        "kendall": float(kendalltau(p, m).statistic),
        "mape_pct": float(np.mean(np.abs(p - m) / np.abs(m)) * 100.0),
        "mdape_pct": float(np.median(np.abs(p - m) / np.abs(m)) * 100.0),
        "n": len(p),
    }


def within_group_spearman(pred: Sequence[float], meas: Sequence[float],
                          groups: Sequence[str]) -> float:
    """Mean Spearman over groups (shapes) with at least three members (NaN if none)."""
    from scipy.stats import spearmanr

    p, m, g = np.asarray(pred, float), np.asarray(meas, float), np.asarray(groups)
    vals = []
    for key in dict.fromkeys(g.tolist()):
        idx = g == key
        if idx.sum() >= 3:
            r = spearmanr(p[idx], m[idx]).statistic
            if np.isfinite(r):
                vals.append(float(r))
    return float(np.mean(vals)) if vals else math.nan


# --------------------------------------------------------------------------- fitting


def fit_latency(model: CPUModel, f: Features, measured_s: Sequence[float],
                params: Sequence[str] = CPUModel.LATENCY, loss: str = "soft_l1",
                f_scale: float = 0.25) -> CPUModel:
    """Fit ``params`` of ``model`` to measured latencies (see module docstring). The
    default robust loss (``soft_l1``: quadratic up to a log-ratio of ``f_scale``, linear
    beyond) keeps a few outliers -- kernels slowed down by other processes on a shared
    machine -- from dragging every constant; ``loss="linear"`` is plain least squares."""
    best = fit_log_ratio(lambda c: model.replace(**c).latency_s(f), measured_s,
                         {p: getattr(model, p) for p in params},
                         {p: LATENCY_BOUNDS[p] for p in params}, loss=loss, f_scale=f_scale)
    return model.replace(**best)


def fit_log_ratio(predict: Callable[[dict[str, float]], np.ndarray], measured: Sequence[float],
                  x0: dict[str, float], bounds: dict[str, tuple[float, float]], *,
                  loss: str = "soft_l1", f_scale: float = 0.25) -> dict[str, float]:
    """The constants (``x0``'s keys, positive, within ``bounds``) minimizing the robust
    sum of ``log(predict(constants)) - log(measured)`` (``scipy.optimize.least_squares``
    over the constants' logarithms). Shared by the CPU and the GPU model."""
    from scipy.optimize import least_squares

    names = list(x0)
    y = np.log(np.asarray(measured, float))
    lo = np.log([bounds[p][0] for p in names])
    hi = np.log([bounds[p][1] for p in names])
    start = np.clip(np.log([x0[p] for p in names]), lo + 1e-9, hi - 1e-9)

    def resid(x: np.ndarray) -> np.ndarray:
        pred = np.asarray(predict(dict(zip(names, np.exp(x).tolist()))), float)
        return np.log(np.clip(pred, 1e-30, 1e30)) - y

    r = least_squares(resid, start, bounds=(lo, hi), x_scale=1.0, method="trf", loss=loss,
                      f_scale=f_scale)
    return dict(zip(names, np.exp(r.x).tolist()))


def fit_energy(model: CPUModel, f: Features, measured_j: Sequence[float]) -> CPUModel:
    """Fit the energy constants (linear, non-negative) to measured energies."""
    from scipy.optimize import nnls

    e = np.asarray(measured_j, float)
    t = model.latency_s(f)
    A = np.column_stack([np.asarray(f.flops) * 1e-12, np.asarray(f.tile_bytes) * 1e-12,
                         np.asarray(f.min_bytes) * 1e-12, t]) / e[:, None]
    x, _ = nnls(A, np.ones_like(e))
    return model.replace(**dict(zip(CPUModel.ENERGY, x.tolist())))


# --------------------------------------------------------------------------- storage


@dataclass
class Calibration:
    """A calibrated model, as stored (see module docstring)."""

    device: str                         # "cpu" | "cuda"
    device_name: str
    model: str                          # the model class, e.g. "CPUModel"
    constants: dict[str, Any]          # numbers (the GPU model adds its GPUAccelerator as a dict)
    uncalibrated: dict[str, Any]
    fit: dict[str, Any]
    env: dict[str, Any] = field(default_factory=dict)
    created: str = ""
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True, default=_json_default) + "\n")
        return p

    def build_model(self) -> Any:
        """The calibrated model object (``CPUModel`` or ``GPUKernelModel``)."""
        if self.model == "CPUModel":
            return CPUModel(**self.constants)
        if self.model == "GPUKernelModel":
            from evaluators.kernels.gpu_model import GPUKernelModel

            return GPUKernelModel.from_constants(self.constants)
        raise ValueError(f"unknown model {self.model!r} in calibration")


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def load_calibration(path: str | Path, device: str | None = None) -> Calibration:
    """Read a calibration file; refuse another schema version or device kind."""
    d = json.loads(Path(path).read_text())
    v = d.get("schema_version")
    if v != SCHEMA_VERSION:
        raise ValueError(f"{path}: calibration schema_version {v!r}, this coexplore reads {SCHEMA_VERSION}")
    if device is not None and d.get("device") != device:
        raise ValueError(f"{path}: a calibration for {d.get('device')!r}, not {device!r}")
    return Calibration(**d)


def default_path(device: str) -> Path:
    return Path("runs") / "calibrations" / f"{device}.json"


# --------------------------------------------------------------------------- CPU pipeline


@dataclass
class Sample:
    """One kernel of the calibration set: what runs, its features, how it measured."""

    name: str
    group: str                         # the shape: train/held-out split unit
    kind: str                          # "blocked" | "torch"
    features: Features
    run: Callable[[], Any]
    threads: int
    point: dict[str, Any] | None = None
    median_s: float = math.nan
    iqr_s: float = math.nan
    best_s: float = math.nan
    energy_j: float | None = None


BLOCKED_SHAPES = [(128, 128, 128), (256, 256, 256), (256, 128, 512), (512, 256, 128),
                  (128, 512, 256), (384, 256, 192), (192, 384, 320), (256, 512, 64)]
QUICK_BLOCKED_SHAPES = [(32, 32, 32), (64, 32, 48), (48, 64, 32), (64, 64, 64)]


def torch_layers(quick: bool = False) -> list[Layer]:
    """Torch-kernel layers of the CPU set: GEMMs (linear / projections), convolutions
    (ResNet-like, one strided, one depthwise) and attention BMMs (BERT-like QK^T, AV)."""
    if quick:
        return [gemm("g32", M=32, N=32, K=32), gemm("g64x16", M=64, N=16, K=48),
                conv2d("c8", K=8, C=8, P=6, Q=6, R=3, S=3),
                gemm("qk", B=2, M=16, N=16, K=8)]
    return [
        gemm("fc_256", M=256, N=256, K=256), gemm("fc_1x1024", M=8, N=1024, K=1024),
        gemm("proj_128x768", M=128, N=768, K=768), gemm("ffn_64x3072", M=64, N=3072, K=768),
        conv2d("conv3x3_64", K=64, C=64, P=28, Q=28, R=3, S=3),
        conv2d("conv1x1_256", K=256, C=64, P=28, Q=28, R=1, S=1),
        conv2d("conv3x3_s2", K=128, C=64, P=14, Q=14, R=3, S=3, stride=2),
        conv2d("dw3x3_128", K=128, C=128, P=28, Q=28, R=3, S=3, groups=128),
        gemm("attn_qk", B=12, M=128, N=128, K=64), gemm("attn_av", B=12, M=128, N=64, K=128),
    ]


def cpu_samples(quick: bool = False, tilings_per_shape: int = 10, seed: int = 0,
                max_blocks: int = 2048, thread_counts: Sequence[int] = (1, 2)) -> list[Sample]:
    """The calibration set (see module docstring); ``quick`` uses tiny shapes."""
    from evaluators.kernels.measure import layer_kernel

    out: list[Sample] = []
    shapes = QUICK_BLOCKED_SHAPES if quick else BLOCKED_SHAPES
    tiles = (8, 16, 32) if quick else blocked.DEFAULT_TILES
    for si, (M, N, K) in enumerate(shapes):
        layer = blocked.gemm_layer(M, N, K)
        space = blocked.tile_space(layer, tiles=tiles, max_blocks=max_blocks)
        n = min(tilings_per_shape, int(space.cardinality()))
        pts = space.sample(n, seed=seed + si)
        feats = blocked_features(layer, pts)
        for i, p in enumerate(pts):
            tag = f"{p['tile_m']}x{p['tile_n']}x{p['tile_k']}:{''.join(p['order'])}"
            out.append(Sample(f"blocked {layer.name} {tag}", layer.name, "blocked",
                              feats.take(slice(i, i + 1)), blocked.blocked_kernel(layer, p), 1, dict(p)))
    for layer in torch_layers(quick):
        for th in thread_counts:
            out.append(Sample(f"torch {layer.name} t{th}", f"torch {layer.name}", "torch",
                              kernel_features(layer, th), layer_kernel(layer, "cpu"), th))
    return out


def measure_samples(samples: Sequence[Sample], *, min_time_s: float = 0.05, max_time_s: float = 0.5,
                    progress: Callable[[int, int, Sample], None] | None = None) -> dict[str, Any]:
    """Measure every sample in place; returns the environment of the last one."""
    from evaluators.kernels.measure import measure

    env: dict[str, Any] = {}
    for i, s in enumerate(samples):
        m = measure(s.run, device="cpu", threads=s.threads, min_time_s=min_time_s,
                    max_time_s=max_time_s, energy=True)
        s.median_s, s.iqr_s, s.best_s, s.energy_j = m.median_s, m.iqr_s, m.best_s, m.energy_j
        env = dict(m.env, energy_method=m.energy_method)
        if progress:
            progress(i, len(samples), s)
    return env


def split_groups(samples: Sequence[Sample], test_fraction: float = 0.4,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Boolean train / held-out masks; whole shapes go to one side, blocked and torch
    shapes split separately so both sides hold both kinds."""
    rng = np.random.default_rng(seed)
    test_groups: set[str] = set()
    for kind in ("blocked", "torch"):
        groups = sorted({s.group for s in samples if s.kind == kind})
        k = max(1, round(test_fraction * len(groups))) if len(groups) > 1 else 0
        test_groups |= set(rng.permutation(groups)[:k].tolist())
    test = np.array([s.group in test_groups for s in samples])
    return ~test, test


def evaluate_fit(before: CPUModel, after: CPUModel, f: Features, meas: np.ndarray,
                 groups: Sequence[str], energy: np.ndarray | None = None,
                 kinds: Sequence[str] | None = None) -> dict[str, Any]:
    """Scores of ``before`` and ``after`` on one set (latency, and energy if measured);
    with ``kinds``, latency scores per kind of kernel too (``latency_<tag>_<kind>``)."""
    out: dict[str, Any] = {}
    for tag, m in (("before", before), ("after", after)):
        pred = m.latency_s(f)
        s = scores(pred, meas)
        s["within_shape_spearman"] = within_group_spearman(pred, meas, groups)
        out[f"latency_{tag}"] = s
        if kinds is not None:
            k = np.asarray(kinds)
            for kind in sorted(set(k.tolist())):
                sel = k == kind
                out[f"latency_{tag}_{kind}"] = scores(pred[sel], meas[sel])
        if energy is not None:
            out[f"energy_{tag}"] = scores(m.energy_j(f), energy)
    return out


def run_cpu(*, quick: bool = False, seed: int = 0, tilings_per_shape: int = 10,
            min_time_s: float = 0.05, max_time_s: float = 0.5,
            thread_counts: Sequence[int] = (1, 2), statistic: str = "median",
            progress: Callable[[int, int, Sample], None] | None = None) -> tuple[Calibration, list[Sample]]:
    """Build, measure, split, fit and score the CPU calibration (module docstring).

    ``statistic`` is the measured figure fitted and scored: ``"median"`` (of the timed
    blocks, default) or ``"best"`` (the fastest block, robust to load on a shared
    machine). The other statistic is fitted and scored too, from the same measurements,
    under ``fit["other_statistic"]``."""
    if statistic not in ("median", "best"):
        raise ValueError(f"statistic must be 'median' or 'best', got {statistic!r}")
    samples = cpu_samples(quick=quick, tilings_per_shape=tilings_per_shape, seed=seed,
                          thread_counts=thread_counts)
    env = measure_samples(samples, min_time_s=min_time_s, max_time_s=max_time_s, progress=progress)
    f = Features.concat([s.features for s in samples])
    meas = np.array([s.best_s if statistic == "best" else s.median_s for s in samples])
    other = "median" if statistic == "best" else "best"
    meas_other = np.array([s.best_s if other == "best" else s.median_s for s in samples])
    groups = [s.group for s in samples]
    has_energy = all(s.energy_j is not None for s in samples)
    energy = np.array([s.energy_j for s in samples], dtype=float) if has_energy else None
    train, test = split_groups(samples, seed=seed)
    prior = datasheet_model()
    fitted = fit_latency(prior, f.take(train), meas[train])
    if energy is not None:
        fitted = fit_energy(fitted, f.take(train), energy[train])
    fitted_other = fit_latency(prior, f.take(train), meas_other[train])
    gtr = [g for g, t in zip(groups, train) if t]
    gte = [g for g, t in zip(groups, test) if t]
    kinds = np.array([f"{s.kind}_t{s.threads}" for s in samples])
    fit = {
        "train": evaluate_fit(prior, fitted, f.take(train), meas[train], gtr,
                              None if energy is None else energy[train], kinds[train]),
        "heldout": evaluate_fit(prior, fitted, f.take(test), meas[test], gte,
                                None if energy is None else energy[test], kinds[test]),
        "statistic": statistic,
        "other_statistic": {
            "statistic": other,
            "constants": fitted_other.constants(),
            "heldout": evaluate_fit(prior, fitted_other, f.take(test), meas_other[test], gte,
                                    None, kinds[test]),
        },
        "energy": "rapl" if energy is not None else "unavailable: no readable RAPL counter (time only)",
        "heldout_groups": sorted(set(gte)),
        "train_groups": sorted(set(gtr)),
        "median_noise_rel": float(np.median([s.iqr_s / s.median_s for s in samples])),
        "quick": quick,
        "seed": seed,
        "thread_counts": list(thread_counts),
        "samples": [{"name": s.name, "group": s.group, "threads": s.threads, "heldout": bool(t),
                     "median_s": s.median_s, "iqr_s": s.iqr_s, "best_s": s.best_s, "energy_j": s.energy_j,
                     "predicted_before_s": float(prior.latency_s(s.features)[0]),
                     "predicted_after_s": float(fitted.latency_s(s.features)[0])}
                    for s, t in zip(samples, test)],
    }
    cal = Calibration(device="cpu", device_name=env.get("device_name", ""), model="CPUModel",
                      constants=fitted.constants(), uncalibrated=prior.constants(), fit=fit, env=env,
                      created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    return cal, samples


def format_report(cal: Calibration) -> str:
    """The calibration's figures as a short plain-text table."""
    lines = [f"device: {cal.device} ({cal.device_name}); torch {cal.env.get('torch')}; "
             f"energy: {cal.fit.get('energy')}",
             f"median relative IQR of the measurements: {cal.fit.get('median_noise_rel', math.nan):.3f}; "
             f"fitted statistic: {cal.fit.get('statistic', 'median')} of the timed blocks"]
    blocks = [(split, cal.fit[split], None) for split in ("train", "heldout")]
    if "other_statistic" in cal.fit:
        o = cal.fit["other_statistic"]
        blocks.append(("heldout", o["heldout"], f"the same measurements, fitted and scored on the "
                                                f"{o['statistic']} of the timed blocks:"))
    for split, block, header in blocks:
        if header:
            lines.append(header)
        for metric in ("latency", "energy"):
            if f"{metric}_before" not in block:
                continue
            for tag in ("before", "after"):
                s = block[f"{metric}_{tag}"]
                ws = s.get("within_shape_spearman")
                extra = f"  within-shape Spearman {ws:.3f}" if ws is not None and not math.isnan(ws) else ""
                lines.append(f"{split:8s} {metric:8s} {tag:6s} n={s['n']:3d}  Spearman {s['spearman']:.3f}  "
                             f"Kendall {s['kendall']:.3f}  MAPE {s['mape_pct']:.1f}%  MdAPE {s['mdape_pct']:.1f}%{extra}")
                if metric != "latency":
                    continue
                for key in sorted(block):
                    if key.startswith(f"latency_{tag}_"):
                        s = block[key]
                        lines.append(f"{'':8s} {'':8s} {'':6s} n={s['n']:3d}  Spearman {s['spearman']:.3f}  "
                                     f"Kendall {s['kendall']:.3f}  MAPE {s['mape_pct']:.1f}%  MdAPE {s['mdape_pct']:.1f}%  "
                                     f"({key.removeprefix(f'latency_{tag}_')} only)")
    lines.append("held-out shapes: " + ", ".join(cal.fit.get("heldout_groups", [])))
    lines.append("constants (uncalibrated -> calibrated):")
    for k, v in cal.constants.items():
        if not isinstance(v, int | float):
            continue
        lines.append(f"  {k:16s} {cal.uncalibrated.get(k, math.nan):12.4g} -> {v:12.4g}")
    return "\n".join(lines)


def load_model(path: str | Path, device: str = "cpu") -> Any:
    """The calibrated model stored at ``path``."""
    return load_calibration(path, device).build_model()

