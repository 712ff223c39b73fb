"""Robustness of trained diffractive networks: accuracy vs noise level, per component.

:func:`robustness_rows` evaluates one trained model (no retraining) at every level of
every sweep in :data:`~evaluators.optics.noise.NOISE_SWEEPS` (or the ones given), each
level averaged over ``noise_seeds`` realizations, with one row per task: a multi-task
model is shown each task's own test images and read on that task's plane, and its rows
also carry the task-recognition accuracy under the same noise. :func:`robustness_table`
does it for groups of models (variant -> model seeds); :func:`plot_robustness` draws one
panel per noise source with the mean +- std over model seeds, one line per model variant
(e.g. plain vs noise-aware training, or single-task vs each shared depth).
:data:`NOISE_AWARE` is the noise injected by noise-aware training (each batch draws
levels uniformly up to these).
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

__all__ = ["NOISE_AWARE", "plot_robustness", "plot_robustness_models", "robustness_rows", "robustness_table",
           "summarize"]

#: Noise-aware training: the upper ends of :mod:`evaluators.optics.noise`'s sweeps for the
#: continuous sources (laser 10 %, drift 2 %, phase 1 rad, 2 px, 2 % axial), detector SNR
#: from 20 dB up.
NOISE_AWARE = Noise(laser_sigma=0.1, wavelength_shift_rel=0.02, phase_sigma_rad=0.5, lateral_px=2.0,
                    axial_sigma_rel=0.02, detector_snr_db=20.0)


def _level_str(v: Any) -> str:
    return "ideal" if v is None else f"{v:g}"


def robustness_rows(net: DiffractiveNetwork, tasks: Sequence[TaskData], *,
                    sweeps: Sequence[tuple[str, str, tuple]] = NOISE_SWEEPS,
                    noise_seeds: Sequence[int] = (0, 1, 2)) -> list[dict[str, Any]]:
    """Accuracy of ``net`` under every level of every sweep, one row per (source, level,
    task): ``source``, ``field``, ``level`` (``None`` = ideal), ``level_label``, ``task``
    (the task's name), ``plane`` (its index), ``accuracy`` (mean over the noise seeds),
    ``accuracy_std_noise`` and, for a multi-task model, ``recognition`` (share of that task's inputs whose task
    is recognized). ``tasks`` holds one task per task plane of ``net``, in order."""
    if len(tasks) != net.spec.tasks:
        raise ValueError(f"the model has {net.spec.tasks} task planes, got {len(tasks)} tasks")
    rows = []
    done: dict[Noise, dict[str, Any]] = {}  # the ideal level of every sweep is evaluated once
    for source, field, levels in sweeps:
        for lv in levels:
            noise = Noise(**{field: lv}) if lv not in (None, 0.0) else Noise()
            if noise not in done:
                done[noise] = evaluate(net, list(tasks), noise, seeds=noise_seeds)
            r = done[noise]
            for ti, task in enumerate(tasks):
                row = {"source": source, "field": field, "level": lv, "level_label": _level_str(lv),
                       "task": task.name, "plane": ti, "accuracy": r["acc"][ti],
                       "accuracy_std_noise": r["acc_std"][ti], "noise_seeds": r["seeds"]}
                if net.spec.tasks > 1:
                    row["recognition"] = r["recognition"][ti]
                rows.append(row)
    return rows


def robustness_table(models: Mapping[str, Sequence[DiffractiveNetwork]], task: TaskData, *,
                     sweeps: Sequence[tuple[str, str, tuple]] = NOISE_SWEEPS,
                     noise_seeds: Sequence[int] = (0, 1, 2), task_index: int = 0) -> pd.DataFrame:
    """Rows: variant, model_seed, source, field, level (``None`` = ideal), accuracy (mean
    over noise seeds) and its std over the noise seeds, for single-task models (or
    multi-task ones shown ``task`` on every plane and read on plane ``task_index``)."""
    rows = []
    for variant, nets in models.items():
        for ms, net in enumerate(nets):
            for r in robustness_rows(net, [task] * net.spec.tasks, sweeps=sweeps, noise_seeds=noise_seeds):
                if r["plane"] == (task_index if net.spec.tasks > 1 else 0):
                    rows.append({"variant": variant, "model_seed": ms, **r})
    return pd.DataFrame(rows)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over model seeds per (variant, source, level)."""
    g = df.groupby(["variant", "source", "level_label"], sort=False)["accuracy"]
    return g.agg(["mean", "std", "count"]).reset_index()


def plot_robustness(df: pd.DataFrame, path: Path | str, title: str = "") -> Path:
    """One panel per noise source: accuracy (mean +- std over model seeds) vs level."""
    plt = _pyplot()
    fig, axes, sources = _source_panels(plt, df, 4.0, 3.2)
    for ax, src in zip(axes.flat, sources):
        sub = df[df["source"] == src]
        labels = list(dict.fromkeys(sub["level_label"]))
        x = np.arange(len(labels))
        for variant in dict.fromkeys(sub["variant"]):
            v = sub[sub["variant"] == variant].groupby("level_label", sort=False)["accuracy"]
            mean = v.mean().reindex(labels).to_numpy()
            std = v.std().reindex(labels).fillna(0).to_numpy()
            ax.errorbar(x, mean, yerr=std, marker="o", capsize=3, label=variant)
        _style_panel(ax, x, labels, src, sub)
    axes.flat[0].legend(fontsize=8)
    return _save_panels(plt, fig, axes, len(sources), path, title, dpi=110)


def plot_robustness_models(df: pd.DataFrame, path: Path | str, title: str = "") -> Path:
    """One panel per noise source for one task: accuracy (mean over model seeds; the band
    is +- std) vs level, one colour per ``model`` (e.g. single-task, each shared depth),
    solid for the ``plain`` variant and dashed for the others (noise-aware)."""
    plt = _pyplot()
    models = list(dict.fromkeys(df["model"]))
    colours = plt.get_cmap("viridis")(np.linspace(0, 0.9, max(1, len(models))))
    fig, axes, sources = _source_panels(plt, df, 4.2, 3.3)
    for ax, src in zip(axes.flat, sources):
        sub = df[df["source"] == src]
        labels = list(dict.fromkeys(sub["level_label"]))
        x = np.arange(len(labels))
        for (model, variant), d in sub.groupby(["model", "variant"], sort=False):
            v = d.groupby("level_label", sort=False)["accuracy"]
            mean = v.mean().reindex(labels).to_numpy()
            std = v.std().reindex(labels).fillna(0).to_numpy()
            c = colours[models.index(model)]
            ls = "-" if variant == "plain" else "--"
            ax.plot(x, mean, ls, marker="o", ms=3, color=c, label=f"{model}, {variant}")
            ax.fill_between(x, mean - std, mean + std, color=c, alpha=0.08)
        _style_panel(ax, x, labels, src, sub)
    handles, labs = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labs, loc="lower right", fontsize=7, ncol=2)
    return _save_panels(plt, fig, axes, len(sources), path, title, dpi=100)


def _source_panels(plt: Any, df: pd.DataFrame, panel_w: float, panel_h: float) -> tuple[Any, Any, list[str]]:
    """A grid of 4 panels a row, one per noise source of ``df`` (in order of appearance)."""
    sources = list(dict.fromkeys(df["source"]))
    cols = 4
    rows = int(np.ceil(len(sources) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(panel_w * cols, panel_h * rows), squeeze=False)
    return fig, axes, sources


def _style_panel(ax: Any, x: np.ndarray, labels: list[str], src: str, sub: pd.DataFrame) -> None:
    ax.set_xticks(x, labels, rotation=30, fontsize=8)
    ax.set_title(f"{src} ({sub['field'].iloc[0]})", fontsize=9)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)


def _save_panels(plt: Any, fig: Any, axes: Any, used: int, path: Path | str, title: str, dpi: int) -> Path:
    """Blank the unused panels, label, title and write the figure to ``path``."""
    for ax in list(axes.flat)[used:]:
        ax.axis("off")
    axes.flat[0].set_ylabel("test accuracy")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
