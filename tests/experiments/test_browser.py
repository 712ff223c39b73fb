"""The report and the dashboard in a real browser: headless Chromium (Debian's chromium
and chromium-driver, driven by selenium) opens them and we check what a person would see.

Skipped, with the command that installs it, where Chromium or its driver is missing
(``.ci/run`` installs both)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from experiments.browser import chromium, missing_reason, rendered, wait_for
from experiments.report import default_selection
from tests.experiments.test_report import make_study

REASON = missing_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"browser tests need Chromium: {REASON}")
ROOT = Path(__file__).resolve().parents[2]


def _count(drv, selector: str) -> int:
    return drv.execute_script(f"return document.querySelectorAll({selector!r}).length")


def _not_blank(png: bytes) -> float:
    """Share of pixels that are not the page background (a blank page gives ~0)."""
    from PIL import Image

    hist = Image.open(io.BytesIO(png)).convert("L").histogram()
    return sum(hist[:235]) / sum(hist)


def test_report_renders_in_chromium(tmp_path):
    s = make_study(tmp_path / "s.db", n=30)
    df = s.trials_dataframe()
    n_complete = int((df["status"] == "COMPLETE").sum())
    n_infeasible = int((df["status"] == "INFEASIBLE").sum())
    front = s.pareto_front()["number"].tolist()
    path = s.report(tmp_path / "report.html")
    with chromium(1300, 1000) as drv:
        drv.get(path.as_uri())
        rendered(drv)
        # the Pareto chart holds one SVG point per completed trial, and the selected design's star
        assert _count(drv, "#fig-pareto .scatterlayer .point") == n_complete + 1
        # the history: one panel per objective, each with every completed trial and the star
        assert _count(drv, "#fig-history .scatterlayer .point") == 2 * n_complete + 2
        # parallel coordinates: one axis per varying parameter and objective, real values
        assert _count(drv, "#fig-parallel .y-axis") == 5
        ticks = drv.execute_script(
            "return Array.from(document.querySelectorAll('#fig-parallel .tick text')).map(t => t.textContent)")
        assert {"8", "128", "OS", "WS"} <= set(ticks)
        # nothing was fetched from anywhere: the file is self-contained
        assert drv.execute_script("return performance.getEntriesByType('resource').length") == 0
        # the table: every trial, sortable, filterable
        assert drv.find_element("id", "table-count").text == f"{len(df)} of {len(df)} trials"
        first = lambda: drv.execute_script(  # noqa: E731
            "return document.querySelector('#trials tbody tr').dataset.number")
        assert first() == "0"
        drv.execute_script("document.querySelector('#trials th[data-col=\"0\"]').click()")
        assert first() == str(len(df) - 1)  # number, now descending
        box = drv.find_element("id", "table-filter")
        box.send_keys("status=INFEASIBLE")
        wait_for(drv, f"return document.getElementById('table-count').textContent.startsWith('{n_infeasible} of')")
        texts = drv.execute_script(
            "return Array.from(document.querySelectorAll('#trials tbody tr')).map(r => r.textContent)")
        assert len(texts) == min(n_infeasible, 50) and all("cannot feed" in t for t in texts)
        box.clear()
        drv.execute_script("var e = document.getElementById('table-filter'); e.value='';"
                           "e.dispatchEvent(new Event('input'))")
        # a design is selected at start (the front's nearest to the ideal point), with its breakdown bars
        wait_for(drv, "return window.coexplore.detailRenders > 0")
        assert drv.execute_script("return window.coexplore.state.sel[0]") == default_selection(df, s.objectives)
        assert drv.execute_script("return window.coexplore.state.sel[0]") in front
        assert _count(drv, "#fig-bd-energy .bars .point") > 0
        assert _count(drv, "#fig-bd-util .bars .point") == 3  # three layers
        # shift-click a second design in the table: compared side by side
        first = drv.execute_script("return window.coexplore.state.sel[0]")
        other = next(int(n) for n in df[df["status"] == "COMPLETE"]["number"] if n != first)
        before = drv.execute_script("return window.coexplore.detailRenders")
        drv.execute_script(
            f"document.querySelector('#trials tbody tr[data-number=\"{other}\"]')"
            ".dispatchEvent(new MouseEvent('click', {bubbles: true, shiftKey: true}))")
        wait_for(drv, f"return window.coexplore.detailRenders > {before}")
        assert drv.execute_script("return window.coexplore.state.sel") == [first, other]
        assert _count(drv, "#fig-bd-util .bars .point") == 6  # three layers x two designs
        assert f"trial {other}" in drv.find_element("id", "detail-tables").text
        png = drv.get_screenshot_as_png()
    assert _not_blank(png) > 0.05


def _extend(url: str, name: str, total: int) -> subprocess.Popen:
    """Run the study ``name`` up to ``total`` trials in another process."""
    code = textwrap.dedent(f"""
        from experiments.study import Study
        from tests.experiments.test_report import space
        s = Study.create({name!r}, space(), {{"energy_uj": "min", "latency_ms": "min"}},
                         "tests.experiments.breakdown_evaluator:evaluate", "random",
                         storage={url!r}, seed=3)
        s.optimize({total}, workers=1, progress=False)
    """)
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_dashboard_shows_trials_added_after_the_page_opened(storage_url):
    from experiments.dashboard import Dashboard
    from experiments.storage import Storage

    s = make_study(storage_url, n=5, name="live")
    st = Storage(storage_url)
    with Dashboard(st, None, port=0, poll_s=0.3).start() as board, chromium(1300, 900) as drv:
        drv.get(board.url)
        rendered(drv)
        assert drv.find_element("id", "n-trials").text == "5"
        assert drv.find_element("id", "table-count").text == "5 of 5 trials"
        points_before = _count(drv, "#fig-history .scatterlayer .point")
        renders = drv.execute_script("return window.coexplore.renders")
        time.sleep(1.0)  # several polls with nothing new: no re-render
        assert drv.execute_script("return window.coexplore.renders") == renders
        proc = _extend(storage_url, "live", 9)
        try:
            assert proc.wait(timeout=120) == 0
        finally:
            proc.kill()
        # the other process has finished: within a few polls the page shows all 9 trials
        # finished (a poll may first catch the 9th trial still RUNNING)
        n_complete = int((s.trials_dataframe()["status"] == "COMPLETE").sum())
        wait_for(drv, "return document.getElementById('n-trials').textContent === '9' && "
                 "document.querySelectorAll('#fig-history .scatterlayer .point').length === "
                 f"{2 * n_complete + 2}", 30, "the 4 trials added by the other process")  # + the stars
        assert drv.find_element("id", "table-count").text == "9 of 9 trials"
        assert 2 * n_complete > points_before
        assert "live" in drv.find_element("id", "live-status").text
        # a design's breakdown comes from the server on demand
        last = drv.execute_script("return window.coexplore.state.sel[0]")
        detail = drv.execute_async_script(
            "const done = arguments[0];"
            f"fetch('api/trial?study=live&number={last}').then(r => r.json()).then(done)")
        assert detail["number"] == last and detail["breakdown"]["layers"] == ["conv1", "conv2_x", "fc"]
        assert _count(drv, "#fig-bd-energy .bars .point") > 0
        # the dashboard has the importances and slices too
        assert _count(drv, "#fig-importance .bars .point") == 3 * 2
        assert _count(drv, "#fig-slice .scatterlayer .point") > 0
        png = drv.get_screenshot_as_png()
    st.close()
    assert _not_blank(png) > 0.05


def test_dashboard_cli_serves_the_api(tmp_path):
    """`coexplore dashboard` prints its URL and answers; unknown pages are 404s."""
    import json
    import urllib.error
    import urllib.request

    make_study(tmp_path / "s.db", n=4)
    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", "dashboard",
                             str(tmp_path / "s.db"), "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        line = proc.stdout.readline()
        assert line.startswith("dashboard: http://127.0.0.1:"), line
        url = line.split()[1]
        studies = json.load(urllib.request.urlopen(url + "api/studies", timeout=30))
        assert studies == [{"name": "bd", "n_trials": 4}]
        view = json.load(urllib.request.urlopen(url + "api/view?study=bd", timeout=30))
        assert len(view["view"]["table"]["rows"]) == 4
        again = json.load(urllib.request.urlopen(
            url + "api/view?study=bd&since=" + urllib.parse.quote(view["marker"]), timeout=30))
        assert again["view"] is None and again["marker"] == view["marker"]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url + "api/view?study=nope", timeout=30)
        assert e.value.code == 404 and "nope" in e.value.read().decode()
        assert "Plotly" in urllib.request.urlopen(url + "plotly.min.js", timeout=30).read(2000).decode()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _texts(drv, selector: str) -> list[str]:
    return drv.execute_script(
        f"return Array.from(document.querySelectorAll({selector!r})).map(t => t.textContent)")


def test_report_views_of_issue_43(tmp_path):
    """Issue 43 item 6 in the browser: parameters first, numbers with their units (the
    page's formatter agrees with experiments/units.py), readable log ticks, the selected
    design starred on every chart and on top of the parallel coordinates in the reserved
    colour, parameter importances and slice plots that follow a new selection."""
    from experiments.units import format_value, unit_of

    s = make_study(tmp_path / "s.db", n=30)
    df = s.trials_dataframe()
    ok = df[(df["status"] == "COMPLETE") & df["feasible"].astype(bool)]
    path = s.report(tmp_path / "report.html")
    with chromium(1300, 1000) as drv:
        drv.get(path.as_uri())
        rendered(drv)
        wait_for(drv, "return window.coexplore.detailRenders > 0")
        # the table: number, status, then the parameters, then the objectives
        heads = _texts(drv, "#trials thead th")
        assert heads[:6] == ["number", "status", "rows", "glb_kib", "dataflow", "energy_uj"]
        # numbers with units: the page's formatter is the Python one
        cases = [(5646000000.0, "energy_pj"), (0.0123, "energy_uj"), (0.5, "latency_ms"), (5.646e9, "latency_cycles"),
                 (1234.0, "latency_cycles"), (3.14159, "area_mm2"), (0.8765, "utilization"), (123456.7, "edp_uj_ms"),
                 (64, "rows"), (0.000123456, "x"), (1500.0, "power_mw"), (256, "glb_kib"), (999.99, "energy_uj"),
                 (-2.5e-5, "energy_uj"), (1.23456e7, "edp_uj_ms"), (float("inf"), "energy_uj")]
        for v, name in cases:
            unit = unit_of(name)
            js = drv.execute_script("return window.coexplore.formatValue(arguments[0], arguments[1])",
                                    v if v != float("inf") else None, unit.as_json() if unit else None)
            assert js == (format_value(v, unit) if v != float("inf") else ""), (v, name, js)
        # ... and so are its axis ticks
        from experiments.units import axis_ticks

        for values, log, name in [([3, 900, 40], True, "energy_uj"), ([3, 9e9], True, "energy_pj"),
                                  ([0.13, 0.87], False, "utilization"), ([3.2, 4.1], True, "x"),
                                  ([0, 1.7e6], False, "latency_cycles"), ([12.0, 12.0], False, "area_mm2"),
                                  ([0.3, 0.1, 0.7], False, "x")]:
            unit = unit_of(name)
            js = drv.execute_script("return window.coexplore.axisTicks(arguments[0], arguments[1], arguments[2])",
                                    values, log, unit.as_json() if unit else None)
            vals, text = axis_ticks(values, log, unit)
            assert js["ticktext"] == text and js["tickvals"] == pytest.approx(vals), (values, log, name)
        # the breakdown's latency bars (a log axis here) are ticked with units, not bare mantissas
        lat = _texts(drv, "#fig-bd-latency .ytick text")
        assert lat and all(t.endswith("cycles") for t in lat), lat
        # the table writes the selected design's energy with its unit
        sel = drv.execute_script("return window.coexplore.state.sel[0]")
        row = _texts(drv, f'#trials tbody tr[data-number="{sel}"] td')
        energy = float(df.set_index("number").loc[sel, "metrics_energy_uj"])
        assert format_value(energy, unit_of("energy_uj")) in row and row[5].endswith("J")
        # log ticks read as values with units, 1-2-5 per decade: never a bare mantissa
        ticks = _texts(drv, "#fig-pareto .xtick text, #fig-pareto .ytick text, #fig-history .ytick text")
        assert ticks and not any(t.strip().isdigit() and len(t.strip()) == 1 for t in ticks)
        assert any(t.endswith(("J", "s")) for t in ticks)
        # the selected design is starred on the Pareto, history and slice charts ...
        n_slices = 2 * 3  # two objectives x three parameters
        for fig, n in (("pareto", 1), ("history", 2), ("slice", n_slices)):
            names = drv.execute_script(
                f"return document.getElementById('fig-{fig}').data.filter(t => t.meta === 'coexplore-selected')"
                ".map(t => t.x[0] + '/' + t.y[0])")
            assert len(names) == n, (fig, names)
        # ... and drawn last, in the reserved colour, on the parallel coordinates
        par = drv.execute_script("const t = document.getElementById('fig-parallel').data[0];"
                                 "return [t.line.color[t.line.color.length - 1], t.line.cmax]")
        assert par[0] == par[1]
        # the slice panels: every feasible trial in each, plus the star
        assert _count(drv, "#fig-slice .scatterlayer .point") == n_slices * len(ok) + n_slices
        # importances: one bar per parameter and objective, the most important first
        assert _count(drv, "#fig-importance .bars .point") == 3 * 2
        # a new selection moves every star
        other = int(ok["number"].iloc[0] if int(ok["number"].iloc[0]) != sel else ok["number"].iloc[1])
        before = drv.execute_script("return window.coexplore.markRenders")
        drv.execute_script(f"document.querySelector('#trials tbody tr[data-number=\"{other}\"]').click()")
        wait_for(drv, f"return window.coexplore.markRenders > {before}")
        xs = drv.execute_script("return document.getElementById('fig-history').data"
                                ".filter(t => t.meta === 'coexplore-selected').map(t => t.x[0])")
        assert xs == [other, other]
        png = drv.get_screenshot_as_png()
    assert _not_blank(png) > 0.05


def test_parallel_coordinates_labels_do_not_overlap(tmp_path):
    """Issue 43 item 6, readable ticks, as drawn: on every parallel-coordinates axis and
    on its colour bar no two tick labels cover each other (8 trials, two of them 2 % of
    the energy axis apart: test_report.test_parallel_coordinates_ticks_never_overlap)."""
    s = make_study(tmp_path / "s.db", n=8)
    path = s.report(tmp_path / "report.html")
    with chromium(1300, 1000) as drv:
        drv.get(path.as_uri())
        rendered(drv)
        wait_for(drv, "return window.coexplore.detailRenders > 0")
        df = s.trials_dataframe().dropna(subset=["metrics_latency_ms"])
        slowest = int(df.loc[df["metrics_latency_ms"].idxmax(), "number"])  # its layers take 100k+ cycles
        before = drv.execute_script("return window.coexplore.detailRenders")
        drv.execute_script(f"document.querySelector('#trials tbody tr[data-number=\"{slowest}\"]').click()")
        wait_for(drv, f"return window.coexplore.detailRenders > {before}")
        boxes = drv.execute_script("""
            const groups = [];
            for (const g of document.querySelectorAll('#fig-parallel .y-axis, #fig-parallel .colorbar')) {
              groups.push(Array.from(g.querySelectorAll('.tick text, .cbaxis .ytick text, text.ytick'))
                .map(t => { const r = t.getBoundingClientRect();
                            return [t.textContent, r.top, r.bottom, r.left, r.right]; })
                .filter(b => b[0] && b[2] > b[1]));
            }
            return groups;""")
        # and every tick label of every chart lies inside its chart (a 6-digit cycle count
        # once lost its first digits past the latency chart's left edge)
        outside = drv.execute_script("""
            const bad = [];
            for (const fig of document.querySelectorAll('.js-plotly-plot')) {
              const f = fig.getBoundingClientRect();
              for (const t of fig.querySelectorAll('.xtick text, .ytick text')) {
                const r = t.getBoundingClientRect();
                if (t.textContent && (r.left < f.left - 1 || r.right > f.right + 1)) bad.push([fig.id, t.textContent]);
              }
            }
            return bad;""")
        lat = _texts(drv, "#fig-bd-latency .ytick text")
    assert outside == [], outside
    assert any(len(t.split()[0]) >= 6 for t in lat), lat  # the case: labels like '200000 cycles'
    assert len(boxes) >= 6 and sum(len(b) for b in boxes) >= 20, boxes
    for labels in boxes:
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                apart = a[2] <= b[1] or b[2] <= a[1] or a[4] <= b[3] or b[4] <= a[3]
                assert apart, (a, b)


@pytest.mark.slow  # ~16 s wall; test_show.py and test_report.py check the same data without a browser
def test_report_shows_each_layers_mapping(tmp_path):
    """Issue 43 item 3: the selected design's panel lists every distinct stored mapping of a
    nested co-design study as its loop nest, with the layers that use it."""
    from design_space import DesignSpace, Ordinal, PowerOfTwo
    from experiments.show import layer_mappings
    from experiments.study import Study
    from mappers.mapping_record import loop_nest_text

    hw = DesignSpace(PowerOfTwo("pe_x", 2, 8), PowerOfTwo("pe_y", 2, 8), Ordinal("glb_kib", [4, 16, 64]))
    s = Study.create("nest", hw, {"edp_uj_ms": "min"}, "nested", "random",
                     evaluator_options={"accelerator": "spatial", "workload": "dqn"}, storage=tmp_path / "n.db", seed=0)
    s.optimize(6, workers=1, progress=False)
    path = s.report(tmp_path / "report.html")
    best = default_selection(s.trials_dataframe(), s.objectives)
    want = {}
    for x in layer_mappings(s.trial(best).info):
        want.setdefault(x["index"], (loop_nest_text(x["mapping"]), []))[1].append(x["name"])
    with chromium(1300, 1000) as drv:
        drv.get(path.as_uri())
        rendered(drv)
        wait_for(drv, "return window.coexplore.detailRenders > 0")
        assert drv.execute_script("return window.coexplore.state.sel[0]") == best
        assert _texts(drv, "#mappings pre.loopnest") == [t for t, _ in want.values()]
        assert _texts(drv, "#mappings summary") == [", ".join(names) for _, names in want.values()]
        assert drv.find_element("css selector", "#mappings pre.loopnest").is_displayed()


@pytest.mark.slow  # ~16 s wall; test_show.py and test_report.py check the same data without a browser
def test_stored_strings_cannot_change_the_page(tmp_path):
    """Issue 46 item 5: a study whose name, parameter values and reasons hold template
    slots, script end tags and comment openers renders whole, shows them as text, and
    runs none of them."""
    from design_space import Categorical, DesignSpace, PowerOfTwo
    from experiments.study import Study

    nasty = ["{{APP}}", "</script><script>window.pwned=1</script>", "<!--<script>", "{{DATA}}\u2028"]
    space = DesignSpace(PowerOfTwo("rows", 8, 128), Categorical("dataflow", nasty))
    s = Study.create("x{{APP}}</script><img src=x onerror=window.pwned=2>", space,
                     {"energy_uj": "min", "latency_ms": "min"},
                     "tests.experiments.study_evaluators:nasty_strings", "random", storage=tmp_path / "s.db", seed=1)
    s.optimize(12, workers=1, progress=False)
    path = s.report(tmp_path / "report.html")
    with chromium(1300, 1000) as drv:
        drv.get(path.as_uri())
        rendered(drv)
        assert drv.execute_script("return window.pwned === undefined")
        assert drv.find_element("id", "study-name").text == s.name
        assert drv.find_element("id", "table-count").text == "12 of 12 trials"
        cells = set(_texts(drv, "#trials tbody td"))
        assert {"{{APP}}", "</script><script>window.pwned=1</script>"} & cells
        assert drv.execute_script("return document.querySelectorAll('script').length") == 4
