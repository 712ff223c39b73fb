"""Study figures, compute-then-render (as Optuna's visualization module does).

Each ``*_info`` function turns a trials table into the exact numbers a figure shows
(tested directly); each ``plot_*`` function only renders an info object with matplotlib
(Agg backend, PNG). Figures:

* Pareto front: feasible trials (grey), outcome-constraint violators (red x), the
  non-dominated front (coloured, with the attainment staircase for 2 objectives); with 3+
  objectives every pair of objectives gets a panel.
* Optimization history: best-so-far per objective (1 objective) or dominated
  hypervolume (several) against the trial number.
* Parallel coordinates: one vertical axis per parameter and objective, each labelled in
  its own real values (numbers linear, or logarithmic where they span more than a
  decade; categories by name), coloured by the first objective.

Value axes are logarithmic wherever the values shown are all positive and span more than
a decade (:func:`spans_decade`): the Pareto front's axes, the history's values and the
parallel coordinates' numeric axes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.export import (
    objective_columns,
    pareto_dataframe,
    with_objective_columns,
)
from optimizer.base import Objective, TrialStatus
from optimizer.pareto import default_reference_point, hypervolume_history

DECADE = 10.0


def spans_decade(values: Any) -> bool:
    """Whether finite ``values`` are all positive and span more than a decade (max/min >
    10): then a logarithmic axis shows their differences, a linear one hides them."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    return bool(len(v) and np.all(v > 0) and v.max() / v.min() > DECADE)


def _save(fig: Any, path: str | Path) -> Path:
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


@dataclass(frozen=True)
class ParetoInfo:
    objectives: tuple[Objective, ...]
    feasible: np.ndarray        # (n, k) objective values of feasible COMPLETE trials
    violating: np.ndarray       # (m, k) COMPLETE trials violating an outcome constraint
    front: np.ndarray           # (f, k) non-dominated feasible trials, sorted by objective 0
    front_numbers: np.ndarray   # trial numbers of the front


def pareto_front_info(df: pd.DataFrame, objectives: Sequence[Objective]) -> ParetoInfo:
    objectives = tuple(objectives)
    cols = objective_columns(objectives)
    k = len(cols)
    if df.empty:
        z = np.zeros((0, k))
        return ParetoInfo(objectives, z, z, z, np.zeros(0, dtype=int))
    df = with_objective_columns(df, objectives)
    done = df[df["status"] == str(TrialStatus.COMPLETE)]
    y = done[cols].to_numpy(dtype=float)
    fin = np.isfinite(y).all(axis=1)
    feas = done["feasible"].to_numpy(dtype=bool)
    front = pareto_dataframe(df, objectives, feasible_only=True)
    return ParetoInfo(
        objectives,
        y[fin & feas],
        y[fin & ~feas],
        front[cols].to_numpy(dtype=float) if len(front) else np.zeros((0, k)),
        front["number"].to_numpy(dtype=int) if len(front) else np.zeros(0, dtype=int),
    )


def _label(o: Objective) -> str:
    return f"{o.name} ({o.direction})"


def plot_pareto_front(info: ParetoInfo, path: str | Path, title: str = "") -> Path:
    k = len(info.objectives)
    pairs = [(0, 1)] if k == 2 else [(i, j) for i in range(k) for j in range(i + 1, k)]
    if k == 1:
        pairs = [(0, 0)]
    fig, axes = plt.subplots(1, len(pairs), figsize=(5.2 * len(pairs), 4.4), squeeze=False)
    for ax, (i, j) in zip(axes[0], pairs):
        if len(info.feasible):
            ax.scatter(info.feasible[:, i], info.feasible[:, j], s=10, c="0.7", label="feasible")
        if len(info.violating):
            ax.scatter(info.violating[:, i], info.violating[:, j], s=14, c="tab:red",
                       marker="x", label="violates a constraint")
        if len(info.front):
            f = info.front[np.argsort(info.front[:, i])]
            ax.scatter(f[:, i], f[:, j], s=22, c="tab:blue", zorder=3, label="Pareto front")
            if k == 2:
                ax.step(f[:, i], f[:, j], where="post", c="tab:blue", lw=1)
        ax.set_xlabel(_label(info.objectives[i]))
        ax.set_ylabel(_label(info.objectives[j]))
        for a, setter in ((info.objectives[i], ax.set_xscale), (info.objectives[j], ax.set_yscale)):
            col = info.objectives.index(a)
            vals = np.concatenate([info.feasible[:, col], info.violating[:, col]])
            if spans_decade(vals):
                setter("log")
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "linear":
                axis.get_major_formatter().set_powerlimits((-3, 4))
        ax.grid(alpha=0.3)
    if axes[0][0].get_legend_handles_labels()[0]:
        axes[0][0].legend(fontsize=8)
    else:
        axes[0][0].text(0.5, 0.5, "no feasible trials yet", ha="center", va="center",
                        transform=axes[0][0].transAxes)
    fig.suptitle(title or "Pareto front")
    return _save(fig, path)


@dataclass(frozen=True)
class HistoryInfo:
    numbers: np.ndarray          # trial numbers of finished trials, in order
    values: dict[str, np.ndarray]  # objective -> value per trial (NaN if not feasible)
    best: dict[str, np.ndarray]    # objective -> best-so-far (1 objective) or {}
    hypervolume: np.ndarray | None # dominated hypervolume so far (several objectives)
    reference_point: np.ndarray | None


def history_info(df: pd.DataFrame, objectives: Sequence[Objective]) -> HistoryInfo:
    objectives = tuple(objectives)
    if df.empty:
        return HistoryInfo(np.zeros(0, dtype=int), {}, {}, None, None)
    df = with_objective_columns(df, objectives)
    fin = df[df["status"].isin([str(s) for s in TrialStatus if s.finished])].sort_values("number")
    cols = objective_columns(objectives)
    y = fin[cols].to_numpy(dtype=float)
    ok = fin["feasible"].to_numpy(dtype=bool) & np.isfinite(y).all(axis=1)
    y = np.where(ok[:, None], y, np.nan)
    values = {o.name: y[:, i] for i, o in enumerate(objectives)}
    best: dict[str, np.ndarray] = {}
    hv = ref = None
    if len(objectives) == 1:
        o = objectives[0]
        s = o.sign * y[:, 0]
        run = np.fmin.accumulate(np.where(np.isnan(s), np.inf, s))
        best[o.name] = np.where(np.isinf(run), np.nan, o.sign * run)
    elif ok.any():
        dirs = [o.direction for o in objectives]
        ref = default_reference_point(y[ok], dirs)
        hv = hypervolume_history(np.where(ok[:, None], y, np.nan), ref, dirs)
    return HistoryInfo(fin["number"].to_numpy(dtype=int), values, best, hv, ref)


def plot_optimization_history(info: HistoryInfo, objectives: Sequence[Objective],
                              path: str | Path) -> Path:
    fig, ax = plt.subplots(figsize=(6, 4))
    if len(objectives) == 1 and len(info.numbers):
        o = objectives[0]
        ax.scatter(info.numbers, info.values[o.name], s=8, c="0.6", label="trial")
        ax.plot(info.numbers, info.best[o.name], c="tab:blue", label="best so far",
                drawstyle="steps-post")
        ax.set_ylabel(_label(o))
        if spans_decade(info.values[o.name]):
            ax.set_yscale("log")
    elif info.hypervolume is not None:
        ax.plot(info.numbers, info.hypervolume, c="tab:blue")
        ax.set_ylabel("dominated hypervolume")
        ax.set_title(f"reference point {np.array2string(info.reference_point, precision=3)}",
                     fontsize=8)
    ax.set_xlabel("trial number")
    ax.grid(alpha=0.3)
    if len(objectives) == 1 and len(info.numbers):
        ax.legend(fontsize=8)
    return _save(fig, path)


@dataclass(frozen=True)
class ParallelInfo:
    axes: list[str]            # parameter names then objective names
    data: np.ndarray           # (n, len(axes)): positions on each axis, in [0, 1]
    color: np.ndarray          # (n,) first objective (raw)
    color_label: str           # the first objective's name
    ticks: dict[str, list[tuple[float, str]]]  # axis -> (position, real-value label)
    log_axes: frozenset[str] = frozenset()     # numeric axes drawn logarithmically


def _fmt_tick(v: float) -> str:
    if v == 0:
        return "0"
    if float(v).is_integer() and abs(v) < 1e6:
        return str(int(v))
    return f"{v:.3g}"


MIN_TICK_GAP = 0.08
"""Least distance, as a share of an axis, between two ticks labelled with their values:
about two lines of 8-point text on a 300-pixel parallel-coordinates axis."""


def _numeric_ticks(x: np.ndarray, log: bool, lo: float, hi: float) -> list[tuple[float, str]]:
    """Ticks in real values: every distinct value when there are few and they lie apart
    (a power-of-two or ordinal parameter), else round values -- 1-2-5 per decade on a
    log axis, about five steps on a linear one (:func:`experiments.units.axis_ticks`) --
    so that no two labels overlap (:data:`MIN_TICK_GAP`)."""
    from experiments.units import axis_ticks

    f = np.log10 if log else (lambda v: v)
    span = (f(hi) - f(lo)) or 1.0
    pos = lambda v: float((f(v) - f(lo)) / span) if hi > lo else 0.5  # noqa: E731
    distinct = np.unique(x[np.isfinite(x)])
    gaps = np.diff([pos(v) for v in distinct])
    if len(distinct) <= 8 and (not len(gaps) or gaps.min() >= MIN_TICK_GAP):
        vals = list(distinct)
    else:
        vals, _ = axis_ticks(distinct.tolist(), log)
        kept: list[float] = []
        for v in vals:  # a linear step may still be too fine for the axis
            if not kept or pos(v) - pos(kept[-1]) >= MIN_TICK_GAP:
                kept.append(v)
        vals = kept
    return [(pos(float(v)), _fmt_tick(float(v))) for v in vals]


def _scale(col: pd.Series) -> tuple[np.ndarray, list[tuple[float, str]], bool]:
    """Positions in [0, 1] on one axis, its ticks (position, label in real values) and
    whether the axis is logarithmic."""
    vals = col.tolist()
    if all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in vals):
        x = np.asarray(vals, dtype=float)
        lo, hi = float(np.nanmin(x)), float(np.nanmax(x))
        log = spans_decade(x)
        t = np.log10(x) if log else x
        tlo, thi = (math.log10(lo), math.log10(hi)) if log else (lo, hi)
        pos = (t - tlo) / (thi - tlo) if thi > tlo else np.full(len(x), 0.5)
        return pos, _numeric_ticks(x, log, lo, hi), log
    labels = sorted({str(v) for v in vals})
    idx = {lab: i for i, lab in enumerate(labels)}
    n = max(len(labels) - 1, 1)
    pos = (np.array([idx[str(v)] / n for v in vals]) if len(labels) > 1
           else np.full(len(vals), 0.5))
    ticks = [(i / n, lab) for i, lab in enumerate(labels)] if len(labels) > 1 else [(0.5, labels[0])]
    return pos, ticks, False


def parallel_coordinate_info(df: pd.DataFrame, objectives: Sequence[Objective]) -> ParallelInfo:
    cols = objective_columns(objectives)
    df = with_objective_columns(df, objectives) if len(df) else df
    ok = df[(df["status"] == str(TrialStatus.COMPLETE)) & df["feasible"].astype(bool)] if len(df) else df
    if len(ok):
        ok = ok[np.isfinite(ok[cols].to_numpy(dtype=float)).all(axis=1)]
    pcols = [c for c in df.columns if c.startswith("params_")]
    axes, data, ticks, logs = [], [], {}, set()
    for c in pcols + cols:
        if not len(ok):
            break
        col = ok[c]
        if col.isna().any():  # conditional parameter: skip axes that are not always present
            continue
        if col.map(lambda v: isinstance(v, list)).any():
            col = col.map(lambda v: ">".join(map(str, v)))
        if col.nunique() <= 1 and c in pcols:
            continue
        x, t, log = _scale(col)
        name = c.removeprefix("params_").removeprefix("metrics_")
        axes.append(name)
        data.append(x)
        ticks[name] = t
        if log:
            logs.add(name)
    arr = np.column_stack(data) if data else np.zeros((len(ok), 0))
    color = ok[cols[0]].to_numpy(dtype=float) if len(ok) else np.zeros(0)
    return ParallelInfo(axes, arr, color, objectives[0].name if objectives else "", ticks,
                        frozenset(logs))


def plot_parallel_coordinate(info: ParallelInfo, path: str | Path) -> Path:
    fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(info.axes)), 4.4))
    if len(info.axes) and len(info.data):
        c = info.color
        log_c = spans_decade(c)
        cmap = plt.get_cmap("viridis_r")
        norm = (matplotlib.colors.LogNorm(np.nanmin(c), np.nanmax(c)) if log_c
                else plt.Normalize(np.nanmin(c), np.nanmax(c)))
        xs = np.arange(len(info.axes))
        order = np.argsort(-c)  # best (smallest) drawn last
        for i in order:
            ax.plot(xs, info.data[i], c=cmap(norm(c[i])), alpha=0.5, lw=0.8)
        for j, a in enumerate(info.axes):
            ax.axvline(j, c="0.35", lw=0.8, zorder=0)
            for pos, lab in info.ticks.get(a, []):
                ax.plot([j - 0.03, j], [pos, pos], c="0.35", lw=0.8)
                ax.annotate(lab, (j, pos), fontsize=7, xytext=(-5, 0), textcoords="offset points",
                            ha="right", va="center",
                            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})
        labels = [f"{a}\n(log)" if a in info.log_axes else a for a in info.axes]
        ax.set_xticks(xs, labels, rotation=25, ha="right", fontsize=8)
        ax.set_xlim(-0.5, len(info.axes) - 0.5)
        sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
        fig.colorbar(sm, ax=ax, label=info.color_label)
    ax.set_ylim(-0.05, 1.05)
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_title("parallel coordinates (feasible trials; each axis in its own units)", fontsize=9)
    return _save(fig, path)


def plot_study(study: Any, out_dir: str | Path) -> list[Path]:
    """Write ``pareto_front.png`` (over the study's report objectives), ``history.png``
    (best-so-far of the objective, or hypervolume) and ``parallel_coordinate.png``."""
    out = Path(out_dir)
    df = study.trials_dataframe()
    objs = study.objectives
    front_objs = getattr(study, "report_objectives", objs)
    return [
        plot_pareto_front(pareto_front_info(df, front_objs), out / "pareto_front.png",
                          title=f"{study.name}: Pareto front"),
        plot_optimization_history(history_info(df, objs), objs, out / "history.png"),
        plot_parallel_coordinate(parallel_coordinate_info(df, objs), out / "parallel_coordinate.png"),
    ]
