"""The interactive report's data: breakdowns, figures, thinning, the table, the CLI.

What the browser shows of them is checked in ``test_browser.py``."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from design_space import Categorical, DesignSpace, Ordinal, PowerOfTwo
from experiments.cli import app
from experiments.export import trials_dataframe
from experiments.report import (
    BreakdownError,
    history_figure,
    normalize_breakdown,
    pareto_figure,
    study_view,
)
from experiments.storage import TrialRecord
from experiments.study import Study
from optimizer import Objective, TrialStatus
from tests.experiments.breakdown_evaluator import evaluate

runner = CliRunner()
OBJS = (Objective("energy_uj"), Objective("latency_ms"))


def space() -> DesignSpace:
    return DesignSpace(PowerOfTwo("rows", 8, 128), Ordinal("glb_kib", [16, 64, 256]),
                       Categorical("dataflow", ["OS", "WS", "IS"]))


def make_study(path: Path, n: int = 24, evaluator: str = "evaluate", name: str = "bd") -> Study:
    s = Study.create(name, space(), {"energy_uj": "min", "latency_ms": "min"},
                     f"tests.experiments.breakdown_evaluator:{evaluator}", "random",
                     storage=path, seed=3)
    s.optimize(n, workers=1, progress=False)
    return s


# -- breakdown -------------------------------------------------------------------------------
def test_breakdown_is_normalized_to_network_totals():
    info = evaluate({"rows": 32, "glb_kib": 64, "dataflow": "WS"}).info
    raw = info["breakdown"]["layers"]
    bd = normalize_breakdown(info)
    assert bd["levels"] == ["MAC", "RF", "GLB", "DRAM"]  # MAC first, then the declared order
    assert bd["layers"] == ["conv1", "conv2_x", "fc"] and bd["repeat"] == [1, 3, 1]
    # conv2_x repeats 3 times: its network share is 3x the per-instance figure
    assert bd["energy_pj"][1] == pytest.approx(3 * raw[1]["energy_pj"])
    assert bd["latency_cycles"][1] == pytest.approx(3 * raw[1]["latency_cycles"])
    assert bd["energy_by_level_pj"]["DRAM"][1] == pytest.approx(3 * raw[1]["energy_by_level_pj"]["DRAM"])
    assert bd["utilization"][1] == raw[1]["utilization"]  # a ratio: not multiplied
    metrics = evaluate({"rows": 32, "glb_kib": 64, "dataflow": "WS"}).metrics
    assert bd["totals"]["energy_pj"] * 1e-6 == pytest.approx(metrics["energy_uj"])
    assert sum(bd["totals"]["energy_by_level_pj"].values()) == pytest.approx(bd["totals"]["energy_pj"])
    lat = np.array(bd["latency_cycles"])
    assert bd["totals"]["utilization"] == pytest.approx(float((np.array(bd["utilization"]) * lat).sum() / lat.sum()))


def test_breakdown_absent_or_malformed():
    assert normalize_breakdown({}) is None and normalize_breakdown({"mapper": "x"}) is None
    with pytest.raises(BreakdownError, match=r"layers"):
        normalize_breakdown({"breakdown": {"levels": ["RF"], "layers": []}})
    with pytest.raises(BreakdownError, match=r"\['layers'\]\[0\]\['latency_cycles'\]"):
        normalize_breakdown({"breakdown": {"layers": [{"name": "a", "latency_cycles": "slow"}]}})
    # a level only some layers report: NaN for the others, order kept
    bd = normalize_breakdown({"breakdown": {"levels": ["GLB"], "layers": [
        {"name": "a", "energy_by_level_pj": {"GLB": 1.0}},
        {"name": "b", "repeat": 2, "energy_by_level_pj": {"GLB": 1.0, "SRAM": 4.0}}]}})
    assert bd["levels"] == ["GLB", "SRAM"]
    assert math.isnan(bd["energy_by_level_pj"]["SRAM"][0]) and bd["energy_by_level_pj"]["SRAM"][1] == 8.0
    assert bd["energy_pj"] == [1.0, 10.0]  # no energy_pj given: the sum of its levels


# -- figures ---------------------------------------------------------------------------------
def _traces(fig, name):
    return [t for t in fig["data"] if t.get("name") == name]


def _values(v):
    """A plotly JSON array (plain list or base64 typed array) as a numpy array."""
    if isinstance(v, dict) and "bdata" in v:
        import base64

        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v)


def test_view_of_a_small_study(tmp_path):
    s = make_study(tmp_path / "s.db")
    df = s.trials_dataframe()
    view = study_view(s, max_details=1000)
    pareto = view["figures"]["pareto"]
    front = s.pareto_front()
    (tr,) = _traces(pareto, "Pareto front")
    assert sorted(_values(tr["customdata"]).tolist()) == sorted(front["number"].tolist())
    n_complete = int((df["status"] == "COMPLETE").sum())
    shown = sum(len(_values(t["customdata"])) for t in pareto["data"])
    assert shown == n_complete  # small study: every completed trial drawn
    assert "rows: " in tr["text"][0] and "energy_uj = " in tr["text"][0]
    # the table holds every trial, with the reason of the infeasible ones
    table = view["table"]
    assert len(table["rows"]) == len(df)
    st, reason = table["columns"].index("status"), table["columns"].index("reason")
    infeasible = [r for r in table["rows"] if r[st] == "INFEASIBLE"]
    assert infeasible and all("cannot feed" in r[reason] for r in infeasible)
    # details: embedded for the front first, with the normalized breakdown
    first = view["highlights"][0]
    assert first in set(front["number"])
    d = view["details"][str(first)]
    assert d["breakdown"]["layers"] == ["conv1", "conv2_x", "fc"]
    par = view["figures"]["parallel"]["data"][0]
    labels = [dim["label"] for dim in par["dimensions"]]
    assert labels[:3] == ["rows (log)", "glb_kib (log)", "dataflow"]  # 16-256: 16x
    assert par["dimensions"][0]["ticktext"][0] == "8"
    json.dumps(view, allow_nan=False)  # strict JSON: what the page parses


def test_history_log_axis_and_best_so_far():
    recs = [TrialRecord(1, i, {"a": i}, TrialStatus.COMPLETE, {"energy_uj": v}, {}, None, None,
                        0.1, i, None, 1, 0.0, 0.0, 0.0)
            for i, v in enumerate([500.0, 900.0, 40.0, 60.0, 3.0, 8.0])]
    fig, _ = history_figure(trials_dataframe(recs, OBJS[:1]), OBJS[:1])
    assert fig["layout"]["yaxis"]["type"] == "log"
    (best,) = _traces(fig, "best so far")
    assert _values(best["y"]).tolist() == [500.0, 40.0, 3.0, 3.0]  # the steps, then the end
    assert _values(best["x"]).tolist() == [0, 2, 4, 5]
    flat = [TrialRecord(**{**r.__dict__, "metrics": {"energy_uj": 5.0 + r.number}}) for r in recs]
    fig, _ = history_figure(trials_dataframe(flat, OBJS[:1]), OBJS[:1])
    assert fig["layout"]["yaxis"]["type"] == "linear"


def test_large_study_is_thinned_but_keeps_the_front():
    rng = np.random.default_rng(0)
    n = 30_000
    e = 10 ** rng.uniform(0, 3, n)
    lat = 10 ** rng.uniform(0, 3, n)
    recs = [TrialRecord(1, i, {"a": int(i % 7)}, TrialStatus.COMPLETE,
                        {"energy_uj": float(e[i]), "latency_ms": float(lat[i])}, {}, None, None,
                        0.1, i, None, 1, 0.0, 0.0, 0.0) for i in range(n)]
    df = trials_dataframe(recs, OBJS)
    fig, note = pareto_figure(df, OBJS, max_points=2000)
    drawn = np.concatenate([_values(t["customdata"]) for t in fig["data"]])
    from experiments.export import pareto_dataframe

    front = set(pareto_dataframe(df, OBJS)["number"])
    assert len(drawn) <= 2000 and len(set(drawn.tolist())) == len(drawn)
    assert front <= set(drawn.tolist())
    assert re.search(r"30000 completed trials, \d+ on the front; showing \d+", note)
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis"]["type"] == "log"
    hist, hnote = history_figure(df, OBJS[:1], max_points=2000)
    (pts,) = _traces(hist, "trial")
    assert len(_values(pts["x"])) <= 2000 and "showing" in hnote
    (best,) = _traces(hist, "best so far")
    # every improvement of the best so far is drawn
    run = np.minimum.accumulate(e)
    improvements = np.flatnonzero(np.r_[True, run[1:] < run[:-1]])
    assert set(improvements.tolist()) <= set(_values(pts["x"]).tolist())
    assert _values(best["y"])[-1] == pytest.approx(e.min())


# -- the CLI and the file ----------------------------------------------------------------------
def test_report_command_writes_a_self_contained_file(tmp_path):
    make_study(tmp_path / "s.db", n=12)
    out = tmp_path / "r" / "report.html"
    res = runner.invoke(app, ["report", str(tmp_path / "s.db"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert str(out) in res.output
    # nothing to fetch: no external script, stylesheet or image
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text)
    assert "Plotly" in text and '"mode":"static"' in text
    data = re.search(r'<script id="coexplore-data" type="application/json">(.*?)</script>', text, re.S)
    view = json.loads(data.group(1))
    assert view["summary"]["name"] == "bd" and len(view["table"]["rows"]) == 12


def test_report_and_dashboard_user_errors(tmp_path):
    res = runner.invoke(app, ["report", str(tmp_path / "missing.db"), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 2 and "no such study storage" in res.output
    assert not (tmp_path / "missing.db").exists()
    make_study(tmp_path / "s.db", n=3)
    res = runner.invoke(app, ["report", str(tmp_path / "s.db"), "--study", "nope", "-o", "x.html"])
    assert res.exit_code == 2 and "no study named 'nope'" in res.output and "'bd'" in res.output
    res = runner.invoke(app, ["report", str(tmp_path / "s.db"), "--max-points", "0", "-o", "x.html"])
    assert res.exit_code == 2 and "--max-points" in res.output
    res = runner.invoke(app, ["dashboard", str(tmp_path / "s.db"), "--study", "nope"])
    assert res.exit_code == 2 and "no study named 'nope'" in res.output
    res = runner.invoke(app, ["dashboard", str(tmp_path / "s.db"), "--port", "70000"])
    assert res.exit_code == 2 and "--port" in res.output


def test_view_without_breakdowns(tmp_path):
    s = make_study(tmp_path / "p.db", n=6, evaluator="evaluate_plain")
    view = study_view(s, max_details=10)
    assert view["has_breakdowns"] is False
    d = next(iter(view["details"].values()))
    assert d["breakdown"] is None and d["breakdown_error"] is None


# -- issue 46 item 5: the page's structure is the template's ------------------------------------
def test_template_is_filled_in_one_pass_and_stored_strings_stay_data():
    from experiments.report import fill_template, page_html

    nasty = "{{APP}} {{DATA}} </script><script>alert(1)</script> <!-- <script> \u2028 & >"
    view = {"summary": {"name": nasty}, "table": {"rows": [[nasty]]}}
    page = page_html(title=nasty, config={"mode": "static", "study": nasty}, view=view)
    data = re.search(r'<script id="coexplore-data" type="application/json">(.*?)</script>', page, re.S)
    assert json.loads(data.group(1)) == view  # the same strings, and the element not cut short
    conf = re.search(r'<script id="coexplore-config" type="application/json">(.*?)</script>', page, re.S)
    assert json.loads(conf.group(1))["study"] == nasty
    assert page.count("<script") == 4 and page.count("</script>") == 4  # plotly, config, data, app
    assert page.count("<!--") == 0 and "(function () {" in page  # the app is there once
    assert page.count("(function () {\n  \"use strict\";\n  const CONFIG") == 1
    assert "<title>" + "{{APP}}" in page  # the title keeps the text, escaped, unfilled
    assert fill_template("{{A}}{{B}}", {"A": "{{B}}", "B": "x"}) == "{{B}}x"
    with pytest.raises(KeyError, match="C"):
        fill_template("{{C}}", {})


# -- issue 43 item 6 ---------------------------------------------------------------------------
def test_table_puts_parameters_before_metrics_and_names_units(tmp_path):
    s = make_study(tmp_path / "s.db", n=6)
    t = study_view(s)["table"]
    groups = t["groups"]
    assert t["columns"][:5] == ["number", "status", "rows", "glb_kib", "dataflow"]
    assert groups.index("param") < groups.index("objective") < groups.index("metric")
    assert max(i for i, g in enumerate(groups) if g == "param") < groups.index("objective")
    assert t["units"]["energy_uj"] == {"symbol": "\u00b5J", "kind": "si", "base": "J", "scale": 1e-6}
    assert t["units"]["glb_kib"]["symbol"] == "KiB" and "rows" not in t["units"]


def _recs(values, params):
    return [TrialRecord(1, i, p, TrialStatus.COMPLETE, m, {}, None, None, 0.1, i, None, 1, 0.0, 0.0, 0.0)
            for i, (m, p) in enumerate(zip(values, params))]


def test_default_selection_is_the_best_on_the_objective():
    from experiments.report import default_selection

    one = (Objective("edp"),)
    df = trials_dataframe(_recs([{"edp": v} for v in (5.0, 2.0, 9.0, 2.5)], [{"a": i} for i in range(4)]), one)
    assert default_selection(df, one) == 1
    assert default_selection(df, (Objective("edp", "max"),)) == 2
    # two objectives: the front member nearest the ideal point once both are scaled to [0, 1]
    pts = [(1.0, 100.0), (2.0, 10.0), (3.0, 9.0), (100.0, 1.0), (50.0, 50.0)]
    df = trials_dataframe(_recs([{"energy_uj": e, "latency_ms": lat} for e, lat in pts],
                                [{"a": i} for i in range(5)]), OBJS)
    # log10 (both span a decade) scaled to [0, 1] over the front: trial 1 is at (0.15, 0.5),
    # trial 2 at (0.24, 0.48), so trial 1 is nearest the ideal point
    assert default_selection(df, OBJS) == 1
    assert default_selection(df.iloc[:0], OBJS) is None


def test_every_design_chart_says_where_to_mark_the_selection(tmp_path):
    s = make_study(tmp_path / "s.db", n=20)
    view = study_view(s)
    f = view["figures"]
    assert f["pareto"]["layout"]["meta"]["coexplore_marks"] == [
        {"x": "energy_uj", "y": "latency_ms", "xaxis": "x", "yaxis": "y"}]
    assert [m["y"] for m in f["history"]["layout"]["meta"]["coexplore_marks"]] == ["energy_uj", "latency_ms"]
    marks = f["slice"]["layout"]["meta"]["coexplore_marks"]
    assert len(marks) == 2 * 3 and {m["x"] for m in marks} == {"rows", "glb_kib", "dataflow"}
    assert len({(m["xaxis"], m["yaxis"]) for m in marks}) == 6  # one panel each
    par = f["parallel"]
    numbers = par["layout"]["meta"]["coexplore_parallel"]["numbers"]
    assert len(numbers) == len(par["data"][0]["line"]["color"])
    assert par["layout"]["meta"]["coexplore_parallel"]["selected_value"] > max(par["data"][0]["line"]["color"])
    # the columns the marks read are in the table
    cols = set(view["table"]["columns"])
    assert all({m["x"], m["y"]} <= cols | {"number"} for m in marks)
    assert view["selected"] == view["highlights"][0]


def test_log_axes_have_unit_ticks_at_1_2_5():
    recs = _recs([{"energy_uj": v} for v in (500.0, 900.0, 40.0, 60.0, 3.0, 8.0)], [{"a": i} for i in range(6)])
    fig, _ = history_figure(trials_dataframe(recs, OBJS[:1]), OBJS[:1])
    y = fig["layout"]["yaxis"]
    assert y["type"] == "log" and y["tickvals"] == [5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
    assert y["ticktext"] == ["5 \u00b5J", "10 \u00b5J", "20 \u00b5J", "50 \u00b5J", "100 \u00b5J", "200 \u00b5J",
                             "500 \u00b5J"]


def test_parameter_importances_find_what_matters():
    from experiments.report import importance_figure, parameter_importances, slice_figure

    rng = np.random.default_rng(0)
    n = 80
    a = rng.choice([1, 2, 4, 8, 16, 32, 64], n)
    b = rng.choice([10, 20, 30], n)             # does nothing
    c = rng.choice(["OS", "WS", "IS"], n)       # matters for the second objective only
    e = 100.0 * a
    lat = np.where(c == "OS", 1.0, 5.0) + 0.001 * rng.random(n)
    recs = _recs([{"energy_uj": float(x), "latency_ms": float(y)} for x, y in zip(e, lat)],
                 [{"a": int(x), "b": int(y), "c": str(z)} for x, y, z in zip(a, b, c)])
    df = trials_dataframe(recs, OBJS)
    imp, note = parameter_importances(df, OBJS)
    assert imp["params"][0] == "a" and "80 feasible trials" in note
    share = {o: dict(zip(imp["params"], imp["objectives"][o]["mean"])) for o in ("energy_uj", "latency_ms")}
    assert share["energy_uj"]["a"] > 0.95 and share["energy_uj"]["b"] < 0.02
    assert share["latency_ms"]["c"] > 0.95 and share["latency_ms"]["a"] < 0.03
    for o in share:
        assert sum(share[o].values()) == pytest.approx(1.0)
    fig = importance_figure(imp)
    assert [t["name"] for t in fig["data"]] == ["energy_uj", "latency_ms"]
    sl, _ = slice_figure(df, OBJS, imp["params"])
    assert len(sl["data"]) == 2 * 3
    assert sl["layout"]["xaxis4"]["title"]["text"] == "a"  # the most important first (bottom row titled)
    # too few trials: no importances, a note saying how many are needed
    none, why = parameter_importances(df.iloc[:5], OBJS)
    assert none is None and "8 feasible trials" in why


def test_parallel_coordinates_ticks_never_overlap(tmp_path):
    """Issue 43 item 6, readable ticks: with few trials an objective axis once ticked every
    trial's value (here 2566 and 2597 uJ, 2 % of the axis apart, printed over each other),
    and the colour bar ticked quartiles of the data. Now every axis and the colour bar
    tick values at least 8 % of their length apart: the parameters' own values where they
    lie apart, else round values with units."""
    from experiments.report import parallel_figure

    s = make_study(tmp_path / "s.db", n=8)
    df = s.trials_dataframe()
    energy = sorted(df["metrics_energy_uj"].dropna().unique())
    assert min(np.diff(energy)) / (energy[-1] - energy[0]) < 0.05  # the case: two trials close together
    fig, _ = parallel_figure(df, s.objectives)
    trace = fig["data"][0]
    for dim in trace["dimensions"]:
        pos = dim["tickvals"]
        assert pos == sorted(pos) and len(pos) >= 2, dim["label"]
        assert min(np.diff(pos)) >= 0.08, (dim["label"], dim["ticktext"])
    by_label = {d["label"]: d for d in trace["dimensions"]}
    assert by_label["rows (log)"]["ticktext"] == ["8", "16", "32", "64", "128"]  # a parameter's values
    assert by_label["energy_uj"]["ticktext"] == ["2 mJ", "2.5 mJ", "3 mJ", "3.5 mJ"]  # round, with units
    bar = trace["line"]["colorbar"]
    assert bar["ticktext"] == ["2 mJ", "2.5 mJ", "3 mJ", "3.5 mJ", "selected"]
    span = trace["line"]["cmax"] - trace["line"]["cmin"]
    assert min(np.diff(bar["tickvals"])) >= 0.08 * span
