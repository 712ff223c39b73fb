"""Compute-then-render plots and file export: test the numbers the figures show."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from experiments.export import pareto_dataframe, trials_dataframe, write_table
from experiments.plots import (
    history_info,
    parallel_coordinate_info,
    pareto_front_info,
    plot_optimization_history,
    plot_parallel_coordinate,
    plot_pareto_front,
)
from experiments.storage import TrialRecord
from optimizer import Objective, TrialStatus
from optimizer.pareto import hypervolume


def rec(number, status, metrics=None, constraints=None, **params):
    return TrialRecord(
        study_id=1, number=number, params=params or {"a": number}, status=status,
        metrics=metrics or {}, constraints=constraints or {}, reason=None, traceback=None,
        wall_time_s=0.1, seed=number, owner=None, attempts=1, created_at=1.7e9 + number,
        started_at=1.7e9 + number, finished_at=1.7e9 + number + 0.1,
    )


OBJS = (Objective("energy_pj"), Objective("latency_cycles"))
RECORDS = [
    rec(0, TrialStatus.COMPLETE, {"energy_pj": 1.0, "latency_cycles": 5.0}, a=1, order=("K", "C")),
    rec(1, TrialStatus.COMPLETE, {"energy_pj": 2.0, "latency_cycles": 2.0}, a=2, order=("C", "K")),
    rec(2, TrialStatus.COMPLETE, {"energy_pj": 3.0, "latency_cycles": 3.0}, a=3, order=("K", "C")),
    rec(3, TrialStatus.COMPLETE, {"energy_pj": 0.5, "latency_cycles": 1.0}, {"area": 0.5}, a=4, order=("K", "C")),
    rec(4, TrialStatus.INFEASIBLE, a=5, order=("K", "C")),
    rec(5, TrialStatus.FAILED, {"energy_pj": None, "latency_cycles": 1.0}, a=6, order=("C", "K")),
    rec(6, TrialStatus.COMPLETE, {"energy_pj": 5.0, "latency_cycles": 0.5}, {"area": -1.0}, a=7, order=("C", "K")),
]


def test_trials_dataframe_and_front():
    df = trials_dataframe(RECORDS, OBJS)
    assert list(df["number"]) == list(range(7))
    assert list(df["feasible"]) == [True, True, True, False, False, False, True]
    assert math.isnan(df.loc[5, "metrics_energy_pj"])
    assert df.loc[0, "params_order"] == ["K", "C"]
    front = pareto_dataframe(df, OBJS)
    assert list(front["number"]) == [0, 1, 6]  # trial 3 dominates all but violates "area"
    assert list(pareto_dataframe(df, OBJS, feasible_only=False)["number"]) == [3, 6]


def test_pareto_info_separates_feasible_violating_front():
    info = pareto_front_info(trials_dataframe(RECORDS, OBJS), OBJS)
    assert info.feasible.tolist() == [[1, 5], [2, 2], [3, 3], [5, 0.5]]
    assert info.violating.tolist() == [[0.5, 1]]
    assert info.front.tolist() == [[1, 5], [2, 2], [5, 0.5]]
    assert info.front_numbers.tolist() == [0, 1, 6]


def test_history_info_single_and_multi_objective():
    df = trials_dataframe(RECORDS, OBJS)
    one = history_info(df, OBJS[:1])
    assert one.numbers.tolist() == list(range(7))
    best = one.best["energy_pj"]
    assert np.allclose(best[:3], [1, 1, 1]) and best[6] == 1.0  # infeasible 0.5 never counts
    multi = history_info(df, OBJS)
    y = np.array([[1, 5], [2, 2], [3, 3], [5, 0.5]])
    assert multi.hypervolume[-1] == pytest.approx(hypervolume(y, multi.reference_point))
    assert np.all(np.diff(multi.hypervolume) >= 0)


def test_parallel_coordinates_scale_to_unit_interval():
    info = parallel_coordinate_info(trials_dataframe(RECORDS, OBJS), OBJS)
    assert info.axes == ["a", "order", "energy_pj", "latency_cycles"]
    assert info.data.min() == 0.0 and info.data.max() == 1.0
    assert dict(info.ticks["order"]) == {0.0: "C>K", 1.0: "K>C"}
    assert info.color_label == "energy_pj"
    assert info.color.tolist() == [1.0, 2.0, 3.0, 5.0]  # feasible COMPLETE trials only


def test_renderers_write_pngs(tmp_path):
    df = trials_dataframe(RECORDS, OBJS)
    for path in (
        plot_pareto_front(pareto_front_info(df, OBJS), tmp_path / "p.png"),
        plot_optimization_history(history_info(df, OBJS), OBJS, tmp_path / "h.png"),
        plot_optimization_history(history_info(df, OBJS[:1]), OBJS[:1], tmp_path / "h1.png"),
        plot_parallel_coordinate(parallel_coordinate_info(df, OBJS), tmp_path / "c.png"),
        plot_pareto_front(pareto_front_info(df, (*OBJS, Objective("area_mm2"))), tmp_path / "p3.png"),
        plot_pareto_front(pareto_front_info(trials_dataframe([], OBJS), OBJS), tmp_path / "empty.png"),
    ):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_write_table_formats(tmp_path):
    df = trials_dataframe(RECORDS, OBJS)
    write_table(df, tmp_path / "t.csv")
    write_table(df, tmp_path / "t.json")
    write_table(df, tmp_path / "t.parquet")
    assert len(pd.read_csv(tmp_path / "t.csv")) == 7
    recs = json.loads((tmp_path / "t.json").read_text())  # strict JSON: NaN became null
    assert recs[5]["metrics_energy_pj"] is None and recs[0]["params_order"] == ["K", "C"]
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert list(back["params_order"].iloc[0]) == ["K", "C"]
    with pytest.raises(ValueError, match=r"unknown export format 'txt' \(formats: \['csv', 'json', 'parquet'\]\)"):
        write_table(df, tmp_path / "t.txt")


def test_spans_decade_decides_log_axes():
    from experiments.plots import spans_decade

    assert spans_decade([1.0, 10.5]) and not spans_decade([1.0, 10.0])
    assert not spans_decade([-1.0, 100.0]) and not spans_decade([])
    assert spans_decade([np.nan, 2.0, 300.0])


def test_static_plots_use_log_axes_past_a_decade(monkeypatch, tmp_path):
    """The history of values spanning two decades and a front spanning 50x get log axes;
    a front within one decade keeps linear ones."""
    import matplotlib.pyplot as plt

    from experiments import plots

    scales = []
    real_save = plots._save

    def spy(fig, path):
        scales.extend((ax.get_xscale(), ax.get_yscale()) for ax in fig.axes if ax.get_label() != "<colorbar>")
        return real_save(fig, path)

    monkeypatch.setattr(plots, "_save", spy)
    wide = [rec(i, TrialStatus.COMPLETE, {"energy_pj": 100.0 / (i + 1), "latency_cycles": 1.0 + i})
            for i in range(60)]
    df = trials_dataframe(wide, OBJS)
    plot_optimization_history(history_info(df, OBJS[:1]), OBJS[:1], tmp_path / "h.png")
    assert scales[-1] == ("linear", "log")
    plot_pareto_front(pareto_front_info(df, OBJS), tmp_path / "p.png")
    assert scales[-1] == ("log", "log")
    narrow = [rec(i, TrialStatus.COMPLETE, {"energy_pj": 5.0 + i, "latency_cycles": 9.0 - i})
              for i in range(5)]
    plot_pareto_front(pareto_front_info(trials_dataframe(narrow, OBJS), OBJS), tmp_path / "n.png")
    assert scales[-1] == ("linear", "linear")
    plt.close("all")


def test_parallel_coordinates_label_axes_with_real_values():
    rows = [rec(i, TrialStatus.COMPLETE, {"energy_pj": 10.0 ** (i % 4), "latency_cycles": 3.0 + i},
                rows=2 ** (3 + i % 5), sram=[16, 32, 64][i % 3], flow=["OS", "WS"][i % 2])
            for i in range(20)]
    info = parallel_coordinate_info(trials_dataframe(rows, OBJS), OBJS)
    assert info.axes == ["rows", "sram", "flow", "energy_pj", "latency_cycles"]
    # powers of two from 8 to 128 span 16x: a log axis labelled with the values themselves
    assert "rows" in info.log_axes
    assert [lab for _, lab in info.ticks["rows"]] == ["8", "16", "32", "64", "128"]
    pos = [p for p, _ in info.ticks["rows"]]
    assert pos[0] == 0.0 and pos[-1] == 1.0 and np.allclose(np.diff(pos), 0.25)
    assert "sram" not in info.log_axes   # 16..64 stays within a decade: linear
    assert dict(info.ticks["sram"]) == {0.0: "16", 16 / 48: "32", 1.0: "64"}
    assert dict(info.ticks["flow"]) == {0.0: "OS", 1.0: "WS"}
    assert "energy_pj" in info.log_axes
    assert {lab for _, lab in info.ticks["energy_pj"]} == {"1", "10", "100", "1000"}
    # the data sit where their tick labels say
    i = next(k for k, r in enumerate(rows) if r.params["rows"] == 32)
    assert info.data[i, 0] == pytest.approx(0.5)
