"""The study explorer: an interactive, self-contained HTML report of a study.

``coexplore report STORAGE -o report.html`` writes one HTML file that opens without a
network (plotly.js is inlined). ``coexplore dashboard STORAGE`` (:mod:`experiments.dashboard`)
serves the same page, fed live from the storage. Both show:

* **Pareto front** over the study's report objectives (the config's ``pareto`` entry, else
  its objectives): feasible trials, outcome-constraint violators and the front with its
  staircase; three or more objectives get one panel per pair. Hovering a point names the
  trial and lists its parameters and metrics; clicking selects it.
* **Optimization history**: every feasible trial's value and the best so far, per
  objective (with the dominated hypervolume for several objectives).
* **Parallel coordinates**: one axis per parameter and objective, labelled in real values
  (the same axes as the PNG: :func:`experiments.plots.parallel_coordinate_info`).
* **Trials**: a sortable, filterable table of every trial with its status and the reason
  of failed and infeasible ones. Clicking a row selects the design.
* **Selected designs**: the parameters and metrics of one design, or two side by side
  (shift-click adds a second), and where the evaluator provides one, their breakdown:
  energy by layer and memory level, energy per level, latency and utilization by layer.

Every value axis is logarithmic where its values are positive and span more than a decade
(:func:`experiments.plots.spans_decade`). The charts are plotly figures built here in
Python; the page's script (``static/explorer.js``) only hands them to plotly.js, runs
the table and builds the breakdown bars from the data below.

Large studies: each scatter shows at most ``max_points`` trials (every Pareto-optimal and
every best-so-far trial is kept, the rest is a seeded sample), the parallel coordinates at
most ``max_lines`` (the best first), and the page says when it thinned a chart. The table
always holds every trial, paged in the browser.

The breakdown (``Evaluation.info["breakdown"]``)
-------------------------------------------------
An evaluator that returns :class:`evaluators.base.Evaluation` may put in ``info`` a
``"breakdown"`` of this shape (the nested co-design evaluator's)::

    {"levels": ["RF", "GLB", "DRAM"],
     "layers": [{"name": str, "repeat": int, "macs": int,
                 "energy_pj": float, "latency_cycles": float, "utilization": float,
                 "energy_by_level_pj": {"MAC": float, "RF": float, "GLB": float,
                                        "DRAM": float}},
                ...]}

Per-layer figures are for one instance of the layer; the report multiplies energy,
latency and MACs by ``repeat`` to give the network's share. ``levels`` orders the memory
levels (``MAC`` first when present; levels found only in ``energy_by_level_pj`` follow).
A missing breakdown shows as "this evaluator gives no breakdown"; a malformed one as a
message naming what is wrong -- never an error of the report. Network utilization is the
latency-weighted mean of the layers' (busy MAC cycles over all MAC cycles).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.export import objective_columns, pareto_dataframe, with_objective_columns
from experiments.plots import history_info, parallel_coordinate_info, spans_decade
from optimizer.base import Objective, TrialStatus

__all__ = [
    "MAX_DETAILS",
    "MAX_LINES",
    "MAX_POINTS",
    "normalize_breakdown",
    "page_html",
    "study_view",
    "trial_detail",
    "write_report",
]

MAX_POINTS = 4000    # scatter points per chart
MAX_LINES = 1500     # parallel-coordinate lines
MAX_DETAILS = 1000   # breakdowns embedded in a static report

FEASIBLE = "#9aa0a6"
VIOLATING = "#d62728"
FRONT = "#1f77b4"


# -- breakdown -----------------------------------------------------------------------------
class BreakdownError(ValueError):
    """``info["breakdown"]`` does not follow the documented schema."""


def _num(v: Any, where: str) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise BreakdownError(f"{where} is {v!r}, expected a number")
    return float(v)


def normalize_breakdown(info: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The breakdown of a trial's ``info`` as network totals per layer, ready to plot, or
    None when the evaluator gave none. Raises :class:`BreakdownError` naming the offending
    entry when it does not follow the schema (module docstring).

    Returns ``{"levels", "layers", "repeat", "macs", "energy_pj", "latency_cycles",
    "utilization", "energy_by_level_pj": {level: [...]}, "totals": {...}}``, lists per
    layer; energy, latency and MACs multiplied by ``repeat``, utilization as given.
    """
    if not info or "breakdown" not in info or info["breakdown"] is None:
        return None
    b = info["breakdown"]
    if not isinstance(b, Mapping):
        raise BreakdownError(f"breakdown is {type(b).__name__}, expected a mapping")
    layers = b.get("layers")
    if not isinstance(layers, list) or not layers:
        raise BreakdownError("breakdown['layers'] must be a non-empty list")
    declared = b.get("levels") or []
    if not isinstance(declared, list) or not all(isinstance(x, str) for x in declared):
        raise BreakdownError(f"breakdown['levels'] is {declared!r}, expected a list of names")
    names, reps, macs, energy, latency, util = [], [], [], [], [], []
    by_level: dict[str, list[float]] = {}
    for i, layer in enumerate(layers):
        where = f"breakdown['layers'][{i}]"
        if not isinstance(layer, Mapping):
            raise BreakdownError(f"{where} is {type(layer).__name__}, expected a mapping")
        rep = layer.get("repeat", 1)
        if isinstance(rep, bool) or not isinstance(rep, int | float) or rep < 0:
            raise BreakdownError(f"{where}['repeat'] is {rep!r}, expected a count >= 0")
        names.append(str(layer.get("name", f"layer {i}")))
        reps.append(int(rep))
        macs.append(_num(layer.get("macs"), f"{where}['macs']") * rep)
        latency.append(_num(layer.get("latency_cycles"), f"{where}['latency_cycles']") * rep)
        util.append(_num(layer.get("utilization"), f"{where}['utilization']"))
        levels = layer.get("energy_by_level_pj") or {}
        if not isinstance(levels, Mapping):
            raise BreakdownError(f"{where}['energy_by_level_pj'] must be a mapping of level -> pJ")
        for lv, e in levels.items():
            by_level.setdefault(str(lv), [math.nan] * i).append(
                _num(e, f"{where}['energy_by_level_pj'][{lv!r}]") * rep)
        for col in by_level.values():  # a level this layer does not report
            if len(col) < i + 1:
                col.append(math.nan)
        e = layer.get("energy_pj")
        energy.append(_num(e, f"{where}['energy_pj']") * rep if e is not None
                      else float(np.nansum([v[i] for v in by_level.values()])) if by_level
                      else math.nan)
    order = (["MAC"] if "MAC" in by_level else []) + [lv for lv in declared if lv != "MAC"]
    order += [lv for lv in by_level if lv not in order]
    level_totals = {lv: float(np.nansum(by_level.get(lv, []))) for lv in order}
    lat = np.array(latency)
    u = np.array(util)
    ok = np.isfinite(lat) & np.isfinite(u)
    overall_u = float((u[ok] * lat[ok]).sum() / lat[ok].sum()) if ok.any() and lat[ok].sum() > 0 else math.nan
    return {
        "levels": order,
        "layers": names,
        "repeat": reps,
        "macs": macs,
        "energy_pj": energy,
        "latency_cycles": latency,
        "utilization": util,
        "energy_by_level_pj": {lv: by_level.get(lv, [math.nan] * len(names)) for lv in order},
        "totals": {"energy_pj": float(np.nansum(energy)), "latency_cycles": float(np.nansum(lat)),
                   "macs": float(np.nansum(macs)), "utilization": overall_u,
                   "energy_by_level_pj": level_totals},
    }


def _plain(v: Any) -> Any:
    """JSON-ready: NaN/inf -> None, numpy -> Python, tuples -> lists."""
    if isinstance(v, float | np.floating):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple | np.ndarray):
        return [_plain(x) for x in v]
    if v is pd.NaT:
        return None
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    return v


def trial_detail(record: Any) -> dict[str, Any]:
    """What the page shows of one design (a :class:`~experiments.storage.TrialRecord`
    read with its info): parameters, metrics, status, reason and normalized breakdown."""
    out = {
        "number": int(record.number),
        "status": str(record.status),
        "params": _plain(dict(record.params)),
        "metrics": _plain(dict(record.metrics or {})),
        "constraints": _plain(dict(record.constraints or {})),
        "reason": record.reason,
        "breakdown": None,
        "breakdown_error": None,
    }
    try:
        out["breakdown"] = _plain(normalize_breakdown(record.info))
    except BreakdownError as e:
        out["breakdown_error"] = str(e)
    return out


# -- helpers -------------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    if isinstance(v, float | np.floating):
        return f"{v:.4g}" if math.isfinite(v) else "n/a"
    if isinstance(v, list | tuple):
        return ">".join(map(str, v))
    return str(v)


def _label(o: Objective) -> str:
    return f"{o.name} ({o.direction})"


def _hover(df: pd.DataFrame, metric_cols: Sequence[str], param_cols: Sequence[str]) -> list[str]:
    """One hover text per row: the trial, its metrics, then its parameters (built column by
    column: tens of thousands of rows stay fast)."""
    parts = [[f"<b>trial {int(n)}</b>" for n in df["number"]]]
    for c in metric_cols:
        name = c.removeprefix("metrics_")
        parts.append([f"{name} = {_fmt(float(v))}" for v in df[c]])
    for c in param_cols:
        name = c.removeprefix("params_")
        parts.append(["" if isinstance(v, float) and math.isnan(v) else f"{name}: {_fmt(v)}"
                      for v in df[c]])
    return ["<br>".join(p for p in row if p) for row in zip(*parts)]


def _thin(n: int, keep: np.ndarray, limit: int, seed: int = 0) -> np.ndarray:
    """Sorted row indices: every ``keep`` index plus a seeded sample of the others, at most
    ``max(limit, len(keep))`` in all."""
    keep = np.unique(np.asarray(keep, dtype=int))
    if n <= limit:
        return np.arange(n)
    rest = np.setdiff1d(np.arange(n), keep)
    k = max(limit - len(keep), 0)
    pick = np.random.default_rng(seed).choice(rest, size=min(k, len(rest)), replace=False)
    return np.sort(np.concatenate([keep, pick]))


def _fig_json(fig: Any) -> dict[str, Any]:
    import plotly.io as pio

    return json.loads(pio.to_json(fig, validate=False))


def _base_layout(**kw: Any) -> dict[str, Any]:
    layout = {"template": "plotly_white", "uirevision": "keep", "hovermode": "closest",
              "margin": {"l": 70, "r": 20, "t": 40, "b": 55}, "font": {"size": 12},
              "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0}}
    layout.update(kw)
    return layout


# -- figures -------------------------------------------------------------------------------
def pareto_figure(df: pd.DataFrame, objectives: Sequence[Objective], max_points: int = MAX_POINTS
                  ) -> tuple[dict[str, Any] | None, str]:
    """The Pareto-front figure (plotly JSON) and a note on what it shows."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    objectives = tuple(objectives)
    k = len(objectives)
    if k < 2:
        return None, "one objective: its history below is the whole story"
    if df.empty:
        return None, "no trials yet"
    df = with_objective_columns(df, objectives)
    cols = objective_columns(objectives)
    done = df[df["status"] == str(TrialStatus.COMPLETE)]
    done = done[np.isfinite(done[cols].to_numpy(dtype=float)).all(axis=1)].reset_index(drop=True)
    if done.empty:
        return None, "no completed trial with every objective yet"
    front = pareto_dataframe(done, objectives, feasible_only=True)
    front_numbers = set(front["number"].tolist())
    on_front = done["number"].isin(front_numbers).to_numpy()
    idx = _thin(len(done), np.flatnonzero(on_front), max_points)
    shown = done.iloc[idx].reset_index(drop=True)
    note = (f"{len(done)} completed trials, {len(front)} on the front"
            + (f"; showing {len(shown)} (every front trial and a sample of the rest)"
               if len(shown) < len(done) else ""))
    pcols = [c for c in df.columns if c.startswith("params_")]
    hover = np.array(_hover(shown, cols + [c for c in df.columns if c.startswith("constraints_")],
                            pcols), dtype=object)
    feas = shown["feasible"].to_numpy(dtype=bool)
    front_mask = shown["number"].isin(front_numbers).to_numpy()
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    ncols = min(3, len(pairs))
    nrows = math.ceil(len(pairs) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, horizontal_spacing=0.08, vertical_spacing=0.14)
    groups = [("feasible", feas & ~front_mask, {"color": FEASIBLE, "size": 6}),
              ("violates a constraint", ~feas, {"color": VIOLATING, "size": 7, "symbol": "x"}),
              ("Pareto front", front_mask, {"color": FRONT, "size": 9,
                                            "line": {"color": "white", "width": 1}})]
    for p, (i, j) in enumerate(pairs):
        row, col = p // ncols + 1, p % ncols + 1
        for name, mask, marker in groups:
            sub = shown[mask]
            if name == "Pareto front" and k == 2:
                sub = sub.sort_values(cols[i])
            fig.add_trace(go.Scatter(
                x=sub[cols[i]].to_numpy(dtype=float), y=sub[cols[j]].to_numpy(dtype=float),
                mode="lines+markers" if name == "Pareto front" and k == 2 else "markers",
                line={"shape": "hv" if objectives[i].direction == "min" else "vh", "width": 1.5}
                if name == "Pareto front" and k == 2 else None,
                marker=marker, name=name, legendgroup=name, showlegend=p == 0,
                text=[hover[t] for t in sub.index.to_numpy()],
                customdata=sub["number"].to_numpy(dtype=int),
                hovertemplate="%{text}<extra></extra>",
            ), row=row, col=col)
        for axis, o, c in (("x", objectives[i], cols[i]), ("y", objectives[j], cols[j])):
            kw = {"title_text": _label(o), "type": "log" if spans_decade(shown[c]) else "linear"}
            (fig.update_xaxes if axis == "x" else fig.update_yaxes)(row=row, col=col, **kw)
    fig.update_layout(**_base_layout(height=430 * nrows))
    return _fig_json(fig), note


def history_figure(df: pd.DataFrame, objectives: Sequence[Objective], max_points: int = MAX_POINTS
                   ) -> tuple[dict[str, Any] | None, str]:
    """Per objective: each feasible trial's value and the best so far (log axis past a
    decade); with several objectives also the dominated hypervolume."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    objectives = tuple(objectives)
    info = history_info(df, objectives)
    if not len(info.numbers):
        return None, "no finished trials yet"
    k = len(objectives)
    rows = k + (1 if k > 1 and info.hypervolume is not None else 0)
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.06)
    fin = df[df["status"].isin([str(s) for s in TrialStatus if s.finished])].sort_values("number")
    fin = fin.reset_index(drop=True)
    pcols = [c for c in df.columns if c.startswith("params_")]
    notes = []
    for r, o in enumerate(objectives, start=1):
        v = info.values[o.name]
        ok = np.isfinite(v)
        s = o.sign * np.where(ok, v, np.inf)
        run = np.minimum.accumulate(s)
        improved = np.flatnonzero(ok & (s <= run) & np.r_[True, s[1:] < run[:-1]])
        idx_ok = np.flatnonzero(ok)
        sel = idx_ok[_thin(len(idx_ok), np.searchsorted(idx_ok, improved), max_points)]
        if len(sel) < len(idx_ok):
            notes.append(f"{o.name}: showing {len(sel)} of {len(idx_ok)} feasible trials "
                         "(every improvement kept)")
        fig.add_trace(go.Scatter(
            x=info.numbers[sel], y=v[sel], mode="markers", name="trial", legendgroup="trial",
            showlegend=r == 1, marker={"color": FEASIBLE, "size": 5},
            text=_hover(fin.iloc[sel], objective_columns(objectives), pcols),
            customdata=info.numbers[sel], hovertemplate="%{text}<extra></extra>"), row=r, col=1)
        best = info.best.get(o.name)
        if best is None:  # several objectives: the best so far of each on its own
            best = np.where(np.isinf(run), np.nan, o.sign * run)
        steps = np.r_[improved, len(best) - 1] if len(improved) else np.array([len(best) - 1])
        fig.add_trace(go.Scatter(
            x=info.numbers[steps], y=best[steps], mode="lines", line={"shape": "hv", "color": FRONT},
            name="best so far", legendgroup="best", showlegend=r == 1,
            hovertemplate="best so far %{y:.4g} at trial %{x}<extra></extra>"), row=r, col=1)
        fig.update_yaxes(title_text=_label(o), type="log" if spans_decade(v) else "linear", row=r, col=1)
    if rows > k:
        steps = np.r_[np.flatnonzero(np.diff(info.hypervolume) != 0) + 1, 0, len(info.numbers) - 1]
        steps = np.unique(steps)
        fig.add_trace(go.Scatter(
            x=info.numbers[steps], y=info.hypervolume[steps], mode="lines",
            line={"shape": "hv", "color": "#2ca02c"}, name="dominated hypervolume",
            hovertemplate="hypervolume %{y:.4g} at trial %{x}<extra></extra>"), row=rows, col=1)
        ref = ", ".join(f"{x:.4g}" for x in info.reference_point)
        fig.update_yaxes(title_text="hypervolume", row=rows, col=1)
        notes.append(f"hypervolume reference point ({ref})")
    fig.update_xaxes(title_text="trial number", row=rows, col=1)
    fig.update_layout(**_base_layout(height=max(320, 250 * rows)))
    return _fig_json(fig), "; ".join(notes)


def parallel_figure(df: pd.DataFrame, objectives: Sequence[Objective], max_lines: int = MAX_LINES
                    ) -> tuple[dict[str, Any] | None, str]:
    """Parallel coordinates of the feasible trials, each axis in its real values."""
    import plotly.graph_objects as go

    objectives = tuple(objectives)
    if df.empty:
        return None, "no trials yet"
    df = with_objective_columns(df, objectives)
    cols = objective_columns(objectives)
    ok = df[(df["status"] == str(TrialStatus.COMPLETE)) & df["feasible"].astype(bool)]
    ok = ok[np.isfinite(ok[cols].to_numpy(dtype=float)).all(axis=1)]
    if ok.empty:
        return None, "no feasible trials yet"
    note = f"{len(ok)} feasible trials"
    if len(ok) > max_lines:
        o = objectives[0]
        ok = ok.iloc[np.argsort(o.sign * ok[cols[0]].to_numpy(dtype=float), kind="stable")[:max_lines]]
        note += f"; showing the best {max_lines} by {o.name}"
    info = parallel_coordinate_info(ok, objectives)
    dims = []
    for j, a in enumerate(info.axes):
        ticks = info.ticks.get(a, [])
        dims.append({"label": f"{a} (log)" if a in info.log_axes else a,
                     "values": info.data[:, j], "range": [0.0, 1.0],
                     "tickvals": [p for p, _ in ticks], "ticktext": [t for _, t in ticks]})
    c = info.color
    log_c = spans_decade(c)
    cval = np.log10(c) if log_c else c
    cticks = np.unique(np.quantile(cval, [0, 0.25, 0.5, 0.75, 1.0]))
    line = {"color": cval, "colorscale": "Viridis", "reversescale": objectives[0].direction == "min",
            "showscale": True,
            "colorbar": {"title": {"text": info.color_label}, "tickvals": cticks,
                         "ticktext": [_fmt(float(10 ** t if log_c else t)) for t in cticks]}}
    fig = go.Figure(go.Parcoords(dimensions=dims, line=line, labelangle=-20, labelside="bottom"))
    fig.update_layout(**_base_layout(height=460, margin={"l": 60, "r": 60, "t": 50, "b": 70}))
    return _fig_json(fig), note


# -- the table -----------------------------------------------------------------------------
def trials_table(df: pd.DataFrame, objectives: Sequence[Objective]) -> dict[str, Any]:
    """Every trial as ``{"columns": [...], "kinds": [...], "rows": [[...], ...]}``."""
    if df.empty:
        return {"columns": [], "kinds": [], "groups": [], "rows": []}
    ocols = objective_columns(objectives)
    mcols = [c for c in df.columns if c.startswith("metrics_") and c not in ocols]
    ccols = [c for c in df.columns if c.startswith("constraints_")]
    pcols = [c for c in df.columns if c.startswith("params_")]
    cols = ["number", "status", *[c for c in ocols if c in df], *mcols, *ccols, *pcols,
            "reason", "wall_time_s", "attempts"]
    cols = [c for c in cols if c in df.columns]
    columns, kinds = [], []
    for c in cols:
        col = df[c]
        if pd.api.types.is_numeric_dtype(col) and col.dtype != bool:
            x = col.to_numpy(dtype=float)
            ints = np.isfinite(x) & (np.abs(x) < 2**53) & (x == np.round(x))
            vals = [int(v) if i else (float(v) if f else None)
                    for v, i, f in zip(x.tolist(), ints.tolist(), np.isfinite(x).tolist())]
            kinds.append("number")
        else:
            vals = [None if v is None or (isinstance(v, float) and math.isnan(v)) else _fmt(v)
                    for v in col.tolist()]
            kinds.append("text")
        columns.append(vals)
    rows = [list(r) for r in zip(*columns)]
    names = [c.removeprefix("metrics_").removeprefix("params_") for c in cols]
    groups = ["objective" if c in ocols else "metric" if c.startswith("metrics_")
              else "constraint" if c.startswith("constraints_") else "param"
              if c.startswith("params_") else "trial" for c in cols]
    return {"columns": names, "kinds": kinds, "groups": groups, "rows": rows}


# -- the whole view --------------------------------------------------------------------------
def _summary(study: Any, df: pd.DataFrame) -> dict[str, Any]:
    counts = {str(k): int(v) for k, v in study.status_counts().items()}
    rec = study.record
    from sqlalchemy.engine import make_url

    return {
        "name": study.name,
        "optimizer": study.optimizer_name,
        "seed": study.seed,
        "objectives": [{"name": o.name, "direction": o.direction} for o in study.objectives],
        "report_objectives": [{"name": o.name, "direction": o.direction}
                              for o in study.report_objectives],
        "counts": counts,
        "n_trials": len(df),
        "storage": make_url(study.storage.url).render_as_string(hide_password=True),
        "created_at": _dt.datetime.fromtimestamp(rec.created_at, _dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "generated_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "git_revision": (rec.manifest or {}).get("git_revision"),
        "config_file": (rec.config or {}).get("config_file"),
    }


def _highlights(df: pd.DataFrame, study: Any) -> list[int]:
    """Trials worth a breakdown first: the report front, then the best by each objective."""
    if df.empty:
        return []
    out: list[int] = []
    objs = tuple(study.report_objectives)
    if len(objs) > 1:
        out += pareto_dataframe(df, objs)["number"].astype(int).tolist()
    ok = df[df["feasible"].astype(bool)]
    for o in study.objectives:
        c = f"metrics_{o.name}"
        if c in ok and len(ok):
            vals = ok[c].to_numpy(dtype=float)
            order = np.argsort(np.where(np.isfinite(vals), o.sign * vals, np.inf), kind="stable")
            out += ok["number"].to_numpy(dtype=int)[order].tolist()
    seen: set[int] = set()
    return [n for n in out if not (n in seen or seen.add(n))]


def study_view(study: Any, *, max_points: int = MAX_POINTS, max_lines: int = MAX_LINES,
               max_details: int = 0) -> dict[str, Any]:
    """Everything the page shows of ``study`` (an :class:`experiments.study.Study`), as
    JSON-ready data. ``max_details`` > 0 embeds the details (with breakdowns) of that many
    designs: the front and the best first (a static report cannot fetch them later)."""
    df = study.trials_dataframe(with_info=False)
    objs = tuple(study.objectives)
    rep = tuple(study.report_objectives)
    figures, notes = {}, {}
    figures["pareto"], notes["pareto"] = pareto_figure(df, rep, max_points)
    figures["history"], notes["history"] = history_figure(df, objs, max_points)
    figures["parallel"], notes["parallel"] = parallel_figure(df, objs, max_lines)
    view = {
        "summary": _summary(study, df),
        "figures": figures,
        "notes": notes,
        "table": trials_table(df, objs),
        "highlights": _highlights(df, study)[:50],
        "details": {},
        "details_embedded": max_details > 0,
    }
    if max_details > 0:
        wanted = _highlights(df, study)[:max_details]
        for n in wanted:
            view["details"][str(n)] = trial_detail(study.trial(n))
        view["details_limit"] = max_details
        view["has_breakdowns"] = any(d["breakdown"] for d in view["details"].values())
    return view


# -- the page ------------------------------------------------------------------------------
def _static(name: str) -> str:
    return resources.files("experiments").joinpath("static", name).read_text(encoding="utf-8")


def _script_json(obj: Any) -> str:
    """JSON safe inside a <script> element."""
    text = json.dumps(obj, allow_nan=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def page_html(*, title: str, config: Mapping[str, Any], view: Mapping[str, Any] | None = None,
              plotly_src: str | None = None) -> str:
    """The explorer page. With ``plotly_src`` None, plotly.js is inlined (a file that needs
    no network); else loaded from that URL (the dashboard serves it itself)."""
    plotly_tag = (f"<script>{plotly_js()}</script>" if plotly_src is None
                  else f'<script src="{html.escape(plotly_src)}"></script>')
    data = _script_json(view) if view is not None else "null"
    return (_static("explorer.html")
            .replace("{{TITLE}}", html.escape(title))
            .replace("{{CSS}}", _static("explorer.css"))
            .replace("{{PLOTLY}}", plotly_tag)
            .replace("{{CONFIG}}", _script_json(dict(config)))
            .replace("{{DATA}}", data)
            .replace("{{APP}}", _static("explorer.js")))


def write_report(study: Any, path: str | Path, *, max_points: int = MAX_POINTS,
                 max_lines: int = MAX_LINES, max_details: int = MAX_DETAILS) -> Path:
    """Write the self-contained HTML report of ``study`` to ``path``."""
    path = Path(path)
    view = study_view(study, max_points=max_points, max_lines=max_lines,
                      max_details=max(int(max_details), 0))
    page = page_html(title=f"coexplore: {study.name}", config={"mode": "static"}, view=view)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
