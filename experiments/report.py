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
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.export import objective_columns, pareto_dataframe, with_objective_columns
from experiments.plots import MIN_TICK_GAP, history_info, parallel_coordinate_info, spans_decade
from experiments.show import layer_mappings
from experiments.units import axis_ticks, format_value, unit_of, units_of
from mappers.mapping_record import RecordError, loop_nest_text
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
SELECTED = "#e8175d"  # the selected design, on every chart
_BAND = 0.9           # share of the parallel coordinates' colour scale the data uses
_VIRIDIS = ("#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58",
            "#b5de2b", "#fde725")  # plotly's Viridis stops


def _relabel(label: str, unit: Any) -> str:
    """A parallel-coordinates tick label (a number as :mod:`experiments.plots` writes it)
    rewritten with its unit."""
    if unit is None:
        return label
    try:
        return format_value(float(label), unit)
    except ValueError:
        return label


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
    out["mappings"], out["mappings_error"] = None, None
    try:
        groups: dict[int, dict[str, Any]] = {}
        for x in layer_mappings(record.info):
            g = groups.setdefault(x["index"], {"layers": [], "text": loop_nest_text(x["mapping"])})
            g["layers"].append(x["name"])
        out["mappings"] = list(groups.values()) or None
    except RecordError as e:
        out["mappings_error"] = str(e)
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
    """One hover text per row: the trial, its parameters, then its metrics with their
    units (built column by column: tens of thousands of rows stay fast)."""
    parts = [[f"<b>trial {int(n)}</b>" for n in df["number"]]]
    for c in param_cols:
        name, unit = c.removeprefix("params_"), unit_of(c)
        parts.append(["" if isinstance(v, float) and math.isnan(v) else
                      f"{html.escape(name)}: {html.escape(_fmt(v) if isinstance(v, list | tuple | str) else format_value(v, unit))}"
                      for v in df[c]])
    for c in metric_cols:
        name, unit = c.removeprefix("metrics_"), unit_of(c)
        parts.append([f"{html.escape(name)} = {html.escape(format_value(float(v), unit))}" for v in df[c]])
    return ["<br>".join(p for p in row if p) for row in zip(*parts)]


def _axis(values: Any, name: str, log: bool | None = None) -> dict[str, Any]:
    """A value axis of column ``name``: logarithmic past a decade, ticks written with the
    column's unit (:func:`experiments.units.axis_ticks`)."""
    v = np.asarray(values, dtype=float)
    log = spans_decade(v) if log is None else log
    distinct = np.unique(v[np.isfinite(v)])
    if name.startswith("params_") and 1 < len(distinct) <= 8:  # a parameter's few values: each one
        vals, text = distinct.tolist(), [format_value(x, unit_of(name)) for x in distinct.tolist()]
    else:
        vals, text = axis_ticks(v[np.isfinite(v)].tolist(), log, unit_of(name))
    out: dict[str, Any] = {"type": "log" if log else "linear"}
    if vals:
        out.update(tickmode="array", tickvals=vals, ticktext=text)
    return out


def _ref(fig: Any, row: int, col: int) -> tuple[str, str]:
    """The trace axis references (``"x2"``, ``"y2"``) of subplot ``(row, col)``."""
    sp = fig.get_subplot(row, col)
    return (sp.xaxis.plotly_name.replace("axis", ""), sp.yaxis.plotly_name.replace("axis", ""))


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
    marks = []
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
            kw = {"title_text": _label(o), **_axis(done[c], c, spans_decade(shown[c]))}
            (fig.update_xaxes if axis == "x" else fig.update_yaxes)(row=row, col=col, **kw)
        xref, yref = _ref(fig, row, col)
        marks.append({"x": objectives[i].name, "y": objectives[j].name, "xaxis": xref, "yaxis": yref})
    fig.update_layout(**_base_layout(height=430 * nrows, meta={"coexplore_marks": marks}))
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
    marks: list[dict[str, str]] = []
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
            text=[format_value(float(b), unit_of(o.name)) for b in best[steps]],
            hovertemplate="best so far %{text} at trial %{x}<extra></extra>"), row=r, col=1)
        fig.update_yaxes(title_text=_label(o), row=r, col=1, **_axis(v, o.name))
        xref, yref = _ref(fig, r, 1)
        marks.append({"x": "number", "y": o.name, "xaxis": xref, "yaxis": yref})
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
    fig.update_layout(**_base_layout(height=max(320, 250 * rows), meta={"coexplore_marks": marks}))
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
        unit = unit_of(a) if a in {o.name for o in objectives} else None
        dims.append({"label": f"{a} (log)" if a in info.log_axes else a,
                     "values": info.data[:, j].tolist(), "range": [0.0, 1.0],
                     "tickvals": [p for p, _ in ticks],
                     "ticktext": [_relabel(t, unit) for _, t in ticks]})
    c = info.color
    log_c = spans_decade(c)
    cval = np.log10(c) if log_c else c
    lo, hi = float(cval.min()), float(cval.max())
    span = (hi - lo) or 1.0
    cmax = lo + span / _BAND  # the band above the data's colours is the selected design's
    unit = unit_of(objectives[0].name)
    cvals, ctext = axis_ticks(c.tolist(), log_c, unit)  # round values, as on every other axis
    cticks, keep = [float(np.log10(v)) if log_c else float(v) for v in cvals], []
    for t, text in zip(cticks, ctext, strict=True):  # labels apart, and apart from "selected"
        if (not keep or t - keep[-1][0] >= MIN_TICK_GAP * (cmax - lo)) and cmax - t >= MIN_TICK_GAP * (cmax - lo):
            keep.append((t, text))
    cticks, ctext = [t for t, _ in keep], [text for _, text in keep]
    colors = list(_VIRIDIS if objectives[0].direction == "max" else _VIRIDIS[::-1])
    scale = [[_BAND * i / (len(colors) - 1), col] for i, col in enumerate(colors)]
    scale += [[_BAND + 1e-6, SELECTED], [1.0, SELECTED]]
    line = {"color": cval.tolist(), "colorscale": scale, "cmin": lo, "cmax": cmax, "showscale": True,
            "colorbar": {"title": {"text": info.color_label},
                         "tickvals": [*cticks, cmax], "ticktext": [*ctext, "selected"]}}
    fig = go.Figure(go.Parcoords(dimensions=dims, line=line, labelangle=-20, labelside="bottom"))
    fig.update_layout(**_base_layout(height=460, margin={"l": 60, "r": 60, "t": 50, "b": 70},
                                     meta={"coexplore_parallel": {"numbers": ok["number"].astype(int).tolist(),
                                                                  "selected_value": cmax}}))
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
    cols = ["number", "status", *pcols, *[c for c in ocols if c in df], *mcols, *ccols,
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
    return {"columns": names, "kinds": kinds, "groups": groups, "rows": rows,
            "units": units_of([n for n, g in zip(names, groups) if g != "trial"] + ["wall_time_s"])}


# -- importances and slices ------------------------------------------------------------------
MIN_IMPORTANCE_TRIALS = 8
MAX_IMPORTANCE_ROWS = 1000


def _feasible(df: pd.DataFrame, objectives: Sequence[Objective]) -> pd.DataFrame:
    df = with_objective_columns(df, objectives)
    cols = objective_columns(objectives)
    ok = df[(df["status"] == str(TrialStatus.COMPLETE)) & df["feasible"].astype(bool)]
    return ok[np.isfinite(ok[cols].to_numpy(dtype=float)).all(axis=1)].reset_index(drop=True)


def _varying_params(ok: pd.DataFrame) -> list[str]:
    return [c for c in ok.columns if c.startswith("params_")
            and ok[c].map(lambda v: str(v)).nunique() > 1]


def _encode(col: pd.Series) -> np.ndarray:
    """A parameter column as numbers a forest can split: numeric values (log10 past a
    decade), other values (categories, lists) as their sorted labels' ranks; a missing
    conditional value as -1 below the rest."""
    vals = col.tolist()
    if all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in vals):
        x = np.asarray(vals, dtype=float)
        fin = x[np.isfinite(x)]
        if len(fin) and spans_decade(fin):
            x = np.where(np.isfinite(x), np.log10(np.where(x > 0, x, np.nan)), np.nan)
        lo = np.nanmin(x) if np.isfinite(x).any() else 0.0
        return np.where(np.isfinite(x), x, lo - 1.0)
    labels = sorted({_fmt(v) for v in vals if not (isinstance(v, float) and math.isnan(v))})
    rank = {lab: i for i, lab in enumerate(labels)}
    return np.array([-1.0 if isinstance(v, float) and math.isnan(v) else float(rank[_fmt(v)]) for v in vals])


def parameter_importances(df: pd.DataFrame, objectives: Sequence[Objective], *, seed: int = 0,
                          max_rows: int = MAX_IMPORTANCE_ROWS) -> tuple[dict[str, Any] | None, str]:
    """Per objective, each varying parameter's share of the permutation importance of a
    random forest fitted to the feasible trials (scikit-learn's ``RandomForestRegressor``
    and ``permutation_importance``, in-sample, 5 repeats; objectives spanning a decade in
    log10). ``({"params": [...], "objectives": {name: {"mean": [...], "std": [...]}}}, note)``,
    shares summing to 1 per objective, parameters most important first (by the first
    objective); None with a note when there are fewer than
    :data:`MIN_IMPORTANCE_TRIALS` feasible trials or no parameter varies."""
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.inspection import permutation_importance

    objectives = tuple(objectives)
    ok = _feasible(df, objectives)
    pcols = _varying_params(ok)
    if len(ok) < MIN_IMPORTANCE_TRIALS or not pcols:
        return None, (f"parameter importances need {MIN_IMPORTANCE_TRIALS} feasible trials with a varying "
                      f"parameter ({len(ok)} so far)")
    if len(ok) > max_rows:
        ok = ok.iloc[np.sort(np.random.default_rng(seed).choice(len(ok), max_rows, replace=False))]
    X = np.column_stack([_encode(ok[c]) for c in pcols])
    out: dict[str, dict[str, list[float]]] = {}
    for o in objectives:
        y = ok[f"metrics_{o.name}"].to_numpy(dtype=float)
        if spans_decade(y):
            y = np.log10(y)
        if np.ptp(y) == 0:
            out[o.name] = {"mean": [0.0] * len(pcols), "std": [0.0] * len(pcols)}
            continue
        forest = RandomForestRegressor(n_estimators=48, min_samples_leaf=2, random_state=seed, n_jobs=1)
        forest.fit(X, y)
        r = permutation_importance(forest, X, y, n_repeats=5, random_state=seed, n_jobs=1)
        mean = np.clip(r.importances_mean, 0.0, None)
        total = mean.sum() or 1.0
        out[o.name] = {"mean": (mean / total).tolist(), "std": (r.importances_std / total).tolist()}
    order = np.argsort(-np.asarray(out[objectives[0].name]["mean"]), kind="stable")
    names = [pcols[i].removeprefix("params_") for i in order]
    res = {"params": names, "objectives": {k: {f: [v[f][i] for i in order] for f in ("mean", "std")}
                                           for k, v in out.items()}}
    note = (f"random forest fitted to {len(ok)} feasible trials; permutation importance (share of the "
            "total, mean of 5 shuffles; error bars: their standard deviation)")
    return res, note


def importance_figure(imp: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Horizontal bars of :func:`parameter_importances`, one colour per objective."""
    import plotly.graph_objects as go

    if imp is None:
        return None
    fig = go.Figure()
    for k, name in enumerate(imp["objectives"]):
        v = imp["objectives"][name]
        fig.add_trace(go.Bar(y=list(imp["params"]), x=v["mean"], orientation="h", name=name,
                             error_x={"type": "data", "array": v["std"], "visible": True},
                             marker={"color": _VIRIDIS[(3 + 4 * k) % len(_VIRIDIS)]},
                             hovertemplate="%{y}: %{x:.1%}<extra>" + html.escape(name) + "</extra>"))
    fig.update_layout(**_base_layout(height=max(220, 60 + 34 * len(imp["params"]) * max(1, len(imp["objectives"]) // 2)),
                                     barmode="group", margin={"l": 120, "r": 20, "t": 40, "b": 45}))
    fig.update_xaxes(title_text="share of the importance", tickformat=".0%", rangemode="tozero")
    fig.update_yaxes(autorange="reversed")
    return _fig_json(fig)


def slice_figure(df: pd.DataFrame, objectives: Sequence[Objective], params: Sequence[str] | None = None,
                 max_points: int = MAX_POINTS) -> tuple[dict[str, Any] | None, str]:
    """Slice plots: each objective (rows, at most 3) against each varying parameter
    (columns, at most 8; ``params`` orders them, e.g. by importance), one point per feasible
    trial coloured by trial number (at most ``max_points // 4`` trials, a seeded sample,
    since every panel draws them all)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    objectives = tuple(objectives)[:3]
    ok = _feasible(df, objectives)
    pcols = _varying_params(ok)
    if ok.empty or not pcols:
        return None, "no feasible trials with a varying parameter yet"
    if params:
        rank = {p: i for i, p in enumerate(params)}
        pcols.sort(key=lambda c: rank.get(c.removeprefix("params_"), len(rank)))
    dropped = len(pcols) - 8
    pcols = pcols[:8]
    cols = objective_columns(objectives)
    # every panel draws the same points: at most a quarter of a scatter's, a seeded sample
    idx = _thin(len(ok), np.array([], dtype=int), max(max_points // 4, 1))
    shown = ok.iloc[idx].reset_index(drop=True)
    hover = _hover(shown, cols, [c for c in ok.columns if c.startswith("params_")])
    fig = make_subplots(rows=len(objectives), cols=len(pcols), horizontal_spacing=0.04,
                        vertical_spacing=0.08, shared_yaxes=True)
    marks = []
    numbers = shown["number"].to_numpy(dtype=int)
    for r, (o, c) in enumerate(zip(objectives, cols), start=1):
        for k, pc in enumerate(pcols, start=1):
            col = shown[pc]
            numeric = all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in col)
            x = col.to_numpy(dtype=float) if numeric else np.array([_fmt(v) for v in col], dtype=object)
            fig.add_trace(go.Scatter(
                x=x.tolist(), y=shown[c].to_numpy(dtype=float).tolist(), mode="markers", showlegend=False,
                marker={"color": numbers.tolist(), "colorscale": "Blues", "size": 6,
                        "line": {"color": "#5f6b7a", "width": 0.5},
                        "showscale": r == 1 and k == len(pcols),
                        "colorbar": {"title": {"text": "trial"}, "len": 0.5}},
                text=hover, customdata=numbers.tolist(), hovertemplate="%{text}<extra></extra>"),
                row=r, col=k)
            name = pc.removeprefix("params_")
            if numeric:
                fig.update_xaxes(row=r, col=k, **_axis(x, pc))
            else:
                fig.update_xaxes(row=r, col=k, type="category",
                                 categoryorder="array", categoryarray=sorted(set(x.tolist())))
            if r == len(objectives):
                fig.update_xaxes(row=r, col=k, title_text=name)
            xref, yref = _ref(fig, r, k)
            marks.append({"x": name, "y": o.name, "xaxis": xref, "yaxis": yref})
        fig.update_yaxes(row=r, col=1, title_text=_label(o), **_axis(ok[c], o.name))
    fig.update_layout(**_base_layout(height=60 + 260 * len(objectives), meta={"coexplore_marks": marks}))
    note = f"{len(ok)} feasible trials" + (f"; showing {len(shown)}" if len(shown) < len(ok) else "")
    if dropped > 0:
        note += f"; the {len(pcols)} most important parameters ({dropped} more not shown)"
    return _fig_json(fig), note


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


def default_selection(df: pd.DataFrame, objectives: Sequence[Objective]) -> int | None:
    """The design the page selects first: the best feasible trial on the study's objective;
    with several objectives, the Pareto-optimal trial nearest the ideal point, each
    objective scaled to [0, 1] over the front (log10 where it spans a decade). None when
    no trial is feasible."""
    objectives = tuple(objectives)
    ok = _feasible(df, objectives) if len(df) else df
    if not len(ok):
        return None
    if len(objectives) == 1:
        o = objectives[0]
        v = o.sign * ok[f"metrics_{o.name}"].to_numpy(dtype=float)
        return int(ok["number"].to_numpy(dtype=int)[int(np.argmin(v))])
    front = pareto_dataframe(ok, objectives).reset_index(drop=True)
    dist = np.zeros(len(front))
    for o in objectives:
        v = front[f"metrics_{o.name}"].to_numpy(dtype=float)
        if spans_decade(v):
            v = np.log10(v)
        v = o.sign * v
        span = np.ptp(v)
        dist += ((v - v.min()) / span) ** 2 if span > 0 else 0.0
    return int(front["number"].to_numpy(dtype=int)[int(np.argmin(dist))])


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
    imp, notes["importance"] = parameter_importances(df, objs, seed=0)
    figures["importance"] = importance_figure(imp)
    figures["slice"], notes["slice"] = slice_figure(df, objs, imp["params"] if imp else None, max_points)
    selected = default_selection(df, objs)
    highlights = _highlights(df, study)
    if selected is not None:
        highlights = [selected] + [n for n in highlights if n != selected]
    view = {
        "summary": _summary(study, df),
        "figures": figures,
        "notes": notes,
        "table": trials_table(df, objs),
        "importances": imp,
        "selected": selected,
        "highlights": highlights[:50],
        "details": {},
        "details_embedded": max_details > 0,
    }
    if max_details > 0:
        wanted = highlights[:max_details]
        for n in wanted:
            view["details"][str(n)] = trial_detail(study.trial(n))
        view["details_limit"] = max_details
        view["has_breakdowns"] = any(d["breakdown"] for d in view["details"].values())
    return view


# -- the page ------------------------------------------------------------------------------
def _static(name: str) -> str:
    return resources.files("experiments").joinpath("static", name).read_text(encoding="utf-8")


def _script_json(obj: Any) -> str:
    """JSON safe inside a <script> element: every ``<`` written ``\\u003c`` (so no string
    can close the element, open a comment or a nested script), and the two line separators
    JavaScript once treated as newlines escaped too. ``JSON.parse`` reads back the same
    strings."""
    text = json.dumps(obj, allow_nan=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def page_html(*, title: str, config: Mapping[str, Any], view: Mapping[str, Any] | None = None,
              plotly_src: str | None = None) -> str:
    """The explorer page. With ``plotly_src`` None, plotly.js is inlined (a file that needs
    no network); else loaded from that URL (the dashboard serves it itself)."""
    plotly_tag = (f"<script>{_script_text(plotly_js())}</script>" if plotly_src is None
                  else f'<script src="{html.escape(plotly_src)}"></script>')
    data = _script_json(view) if view is not None else "null"
    parts = {"TITLE": html.escape(title), "CSS": _static("explorer.css").replace("</", "<\\/"),
             "PLOTLY": plotly_tag, "CONFIG": _script_json(dict(config)), "DATA": data,
             "APP": _script_text(_static("explorer.js"))}
    return fill_template(_static("explorer.html"), parts)


_SLOT = re.compile(r"\{\{([A-Z]+)\}\}")


def fill_template(template: str, parts: Mapping[str, str]) -> str:
    """``template`` with every ``{{NAME}}`` replaced by ``parts[NAME]`` in one pass: text
    put in is never searched again, so a stored string that reads ``{{APP}}`` stays that
    string. A slot without a part is an error (a template and its filler out of step)."""
    missing = sorted(set(_SLOT.findall(template)) - set(parts))
    if missing:
        raise KeyError(f"explorer template slots without a value: {missing}")
    return _SLOT.sub(lambda m: parts[m.group(1)], template)


def _script_text(code: str) -> str:
    """Script source safe inside a <script> element: the sequences that would end it or
    switch the parser's script states are refused (our own code and plotly.js have none
    that matter; the check keeps it so)."""
    low = code.lower()
    if "</script" in low:
        raise ValueError("script text contains '</script'")
    return code


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
