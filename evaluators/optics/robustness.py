"""Robustness of trained diffractive networks: accuracy vs noise level, per component.

:func:`robustness_table` evaluates trained models (no retraining) at every level of every
sweep in :data:`~evaluators.optics.noise.NOISE_SWEEPS` (or the ones given), each level
averaged over ``noise_seeds`` realizations; :func:`plot_robustness` draws one panel per
noise source with the mean +- std over model seeds, one line per model variant (e.g.
plain vs noise-aware training). :data:`NOISE_AWARE` is the noise injected by
noise-aware training (each batch draws levels uniformly up to these).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.noise import NOISE_SWEEPS, Noise
from evaluators.optics.train import TaskData, evaluate

__all__ = ["NOISE_AWARE", "plot_robustness", "robustness_table"]

#: Noise-aware training: the upper ends of :mod:`evaluators.optics.noise`'s sweeps for the
#: continuous sources (laser 10 %, drift 2 %, phase 1 rad, 2 px, 2 % axial), detector SNR
#: from 20 dB up.
NOISE_AWARE = Noise(laser_sigma=0.1, wavelength_shift_rel=0.02, phase_sigma_rad=0.5, lateral_px=2.0,
                    axial_sigma_rel=0.02, detector_snr_db=20.0)


def _level_str(v: Any) -> str:
    return "ideal" if v is None else f"{v:g}"


def robustness_table(models: Mapping[str, Sequence[DiffractiveNetwork]], task: TaskData, *,
                     sweeps: Sequence[tuple[str, str, tuple]] = NOISE_SWEEPS,
                     noise_seeds: Sequence[int] = (0, 1, 2), task_index: int = 0) -> pd.DataFrame:
    """Rows: variant, model_seed, source, field, level (``None`` = ideal), accuracy (mean
    over noise seeds) and its std over the noise seeds."""
    rows = []
    for variant, nets in models.items():
        for ms, net in enumerate(nets):
            for source, field, levels in sweeps:
                for lv in levels:
                    noise = Noise(**{field: lv}) if lv not in (None, 0.0) else Noise()
                    r = evaluate(net, [task] * net.spec.tasks if net.spec.tasks > 1 else [task], noise,
                                 seeds=noise_seeds)
                    rows.append({"variant": variant, "model_seed": ms, "source": source, "field": field,
                                 "level": lv, "level_label": _level_str(lv), "accuracy": r["acc"][task_index],
                                 "accuracy_std_noise": r["acc_std"][task_index], "noise_seeds": r["seeds"]})
    return pd.DataFrame(rows)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over model seeds per (variant, source, level)."""
    g = df.groupby(["variant", "source", "level_label"], sort=False)["accuracy"]
    return g.agg(["mean", "std", "count"]).reset_index()


def plot_robustness(df: pd.DataFrame, path: Path | str, title: str = "") -> Path:
    """One panel per noise source: accuracy (mean +- std over model seeds) vs level."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sources = list(dict.fromkeys(df["source"]))
    cols = 4
    rows = int(np.ceil(len(sources) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, src in zip(axes.flat, sources):
        sub = df[df["source"] == src]
        labels = list(dict.fromkeys(sub["level_label"]))
        x = np.arange(len(labels))
        for variant in dict.fromkeys(sub["variant"]):
            v = sub[sub["variant"] == variant].groupby("level_label", sort=False)["accuracy"]
            mean = v.mean().reindex(labels).to_numpy()
            std = v.std().reindex(labels).fillna(0).to_numpy()
            ax.errorbar(x, mean, yerr=std, marker="o", capsize=3, label=variant)
        ax.set_xticks(x, labels, rotation=30, fontsize=8)
        ax.set_title(f"{src} ({sub['field'].iloc[0]})", fontsize=9)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(sources):]:
        ax.axis("off")
    axes.flat[0].set_ylabel("test accuracy")
    axes.flat[0].legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
