"""The HASCO reproduction: its pieces (fast) and a --quick run (slow)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.records import RecordStore, record_key
from experiments.reproduce import REPRODUCTIONS
from experiments.reproduce import hasco as rep


def rec(lat, power, area, ok=True):
    if not ok:
        return {"point": {}, "status": "INFEASIBLE", "metrics": {}, "reason": "generator"}
    return {"point": {"lat": lat}, "status": "COMPLETE",
            "metrics": {"latency_ms": lat, "power_mw": power, "area_mm2": area}, "reason": None}


def test_selection_under_the_area_cap():
    rs = [rec(5, 1, 1), rec(1, 1, 9), rec(3, 1, 2), rec(0, 0, 0, ok=False)]
    assert rep.select(rs, area_cap=2.0)["point"] == {"lat": 3}
    assert rep.select(rs, area_cap=10)["point"] == {"lat": 1}
    assert rep.select(rs, area_cap=0.5) is None


def test_hypervolume_history_on_normalized_log_objectives():
    m = rep.objective_matrix([rec(1, 1, 1, ok=False), rec(10, 10, 10), rec(1, 1, 1)])
    assert np.isnan(m[0]).all()
    lo, hi = rep.normalizer([m])
    np.testing.assert_array_equal(lo, [0, 0, 0])
    np.testing.assert_array_equal(hi, [1, 1, 1])
    h = rep.hv_history(m, lo, hi)
    # nothing, then the worst corner (normalized 1: a 0.1^3 box), then the best (1.1^3)
    np.testing.assert_allclose(h, [0.0, 0.1 ** 3, 1.1 ** 3])


def test_quartiles():
    q = rep.quartiles([1.0, 2.0, None, 3.0, 4.0, 5.0])
    assert q == {"median": 3.0, "q25": 2.0, "q75": 4.0, "min": 1.0, "max": 5.0, "n": 5}
    assert rep.quartiles([None]) is None


def designs(co: dict, sep: dict) -> dict:
    return {"codesign": {"point": co}, "separate": {"point": sep}}


def test_summary_and_table_report_both_definitions_iqr_and_the_oracle(tmp_path):
    curves = {"heuristic": [[9.0, 6.0], [9.0, 8.0]], "qlearning": [[9.0, 7.0], [9.0, 7.0]],
              "qnetwork": [[9.0, 4.0], [9.0, 5.0]], "random": [[9.0, 6.0], [9.0, 6.0]]}
    finished = [{
        "workload": "gemm", "intrinsic": "GEMM",
        "seeds": {0: {"ratio": 1.3, "ratio_reference": 2.0, **designs({"pe": 32, "sp_kib": 64}, {"pe": 32, "sp_kib": 128}),
                      "infeasible": {"mobo": 1, "random": 2}},
                  1: {"ratio": 1.1, "ratio_reference": 1.0, **designs({"pe": 8}, {"pe": 32})},
                  2: {"ratio": None, "ratio_reference": 1.5, "infeasible": {"mobo": 0, "random": 3}}},
        "sw_convergence": {"budget": 2, "curves": curves, "oracle": {"bound": 4.0, "optimum": True, "stages": []}},
    }, {
        "workload": "ttm", "intrinsic": "GEMV",
        "seeds": {0: {"ratio": 1.0, "ratio_reference": 3.0, **designs({"pe_x": 4, "pe_y": 8}, {"pe_x": 4, "pe_y": 8})},
                  1: {"ratio": 0.8, "ratio_reference": 3.0, **designs({"pe_x": 4, "pe_y": 8}, {"pe_x": 8, "pe_y": 4})}},
    }]
    res = rep.summarize(finished, tmp_path, 8, 4, 10, [0, 1, 2], with_random=False)
    g = res["pairs"][0]
    assert g["ratio_stats"]["median"] == pytest.approx(1.2) and g["ratio_stats"]["n"] == 2
    assert g["ratio_reference_stats"] == {"median": 1.5, "q25": 1.25, "q75": 1.75, "min": 1.0, "max": 2.0, "n": 3}
    assert g["sw_final_median_cycles"] == {"heuristic": 7.0, "qlearning": 7.0, "qnetwork": 4.5, "random": 6.0}
    assert g["sw_final_over_bound"]["qnetwork"] == pytest.approx(4.5 / 4.0)
    ov = res["overall"]
    assert ov["ratio"]["median_of_pair_medians"] == pytest.approx((1.2 + 0.9) / 2)
    # the same array (pe, or pe_x x pe_y; a rotated array is another) in seed 0 of gemm
    # and of ttm, another in the other two; the co-designed point itself once
    b = ov["proxy_breakdown"]
    assert b["comparisons"] == 4 and b["same_array"]["n"] == 2 and b["other_array"]["n"] == 2
    assert b["same_array"]["median"] == pytest.approx((1.3 + 1.0) / 2)
    assert b["other_array"]["median"] == pytest.approx((1.1 + 0.8) / 2)
    assert (b["below_1"], b["exactly_1"], b["same_point"]) == (1, 1, 1)
    assert b["infeasible_evaluations"] == {"mobo": 1, "random": 5}
    assert ov["ratio_reference"]["median_of_pair_medians"] == pytest.approx((1.5 + 3.0) / 2)
    assert ov["ratio_reference"]["pairs_with_median_at_least_1.25"] == 2
    assert ov["sw"]["qnetwork_beats_random"] == 1 and ov["sw"]["qlearning_beats_random"] == 0
    res["settings"] = {"seeds": [0, 1, 2], "budget": 8, "n_init": 4, "sw_budget": 10, "sw_conv_budget": 2}
    rep.write_table(res, tmp_path / "t.md", "coexplore reproduce hasco --seeds 3")
    text = (tmp_path / "t.md").read_text()
    assert "| gemm | GEMM | 1.20x [1.15, 1.25] | 1.50x [1.25, 1.75] |" in text
    assert "| ttm | GEMV | 0.90x [0.85, 0.95] | 3.00x [3.00, 3.00] |" in text
    assert "co-designed PE array in 2 comparisons, median 1.150x; with another array in 2" in text
    assert "4.5 (1.12x)" in text and "| yes |" in text
    assert "Q-network beats random search on 1 of 1 pairs" in text
    assert "1.25x-1.44x" in text and "`coexplore reproduce hasco --seeds 3`" in text and "hasco" in REPRODUCTIONS


def test_run_search_is_a_study_whose_trials_are_recorded(tmp_path, monkeypatch):
    a = rep.run_search("GEMV", "gemv", "random", 0, 4, 2, 5, "search", tmp_path)
    assert len(a) == 4 and {r["status"] for r in a} <= {"COMPLETE", "INFEASIBLE"}
    for r in a:
        if r["status"] == "COMPLETE":
            assert set(rep.OBJECTIVES) <= set(r["metrics"])
        else:
            assert "generator" in r["reason"]
        assert r["seconds"]["evaluate"] > 0 and r["seconds"]["ask"] >= 0
    store = RecordStore(tmp_path)
    (key,) = store.keys()
    rec = store.record(rep.KINDS["search"], rep.search_settings("GEMV", "gemv", "random", 0, 4, 2, 5, "search",
                                                                "reference"))
    assert rec.key == key and rec.value == a and rec.wall_s > 0 and rec.cpu_s > 0
    assert rec.trials["numbers"] == [0, 1, 2, 3] and rec.trials["study"].startswith("hasco-gemv-GEMV-random")
    # the evaluations are a Study's: the same points as the study run directly
    from evaluators.intrinsic_codesign import hardware_space, reference_area_mm2
    from experiments.study import Study

    st = Study.create("direct", hardware_space("GEMV", reference_area_mm2("GEMV")), rep.OBJECTIVES, "hasco",
                      "random", evaluator_options={"intrinsic": "GEMV", "workload": "gemv", "sw_budget": 5,
                                                   "schedule": "search"}, storage="sqlite:///:memory:", seed=0)
    st.optimize(4, progress=False)
    assert [dict(t.params) for t in sorted(st.trials, key=lambda t: t.number)] == [r["point"] for r in a]

    def no_study(*a, **k):
        raise AssertionError("a recorded search is not run again")

    monkeypatch.setattr(Study, "create", no_study)
    assert rep.run_search("GEMV", "gemv", "random", 0, 4, 2, 5, "search", tmp_path) == a
    with pytest.raises(ValueError, match="unknown hardware optimizer 'tpe'"):
        rep.run_search("GEMV", "gemv", "tpe", 0, 1, 1, 5)


def test_finished_pairs_are_recorded_per_setting_and_round_trip(tmp_path):
    args = ("gemm", "GEMM", [0, 1], 6, 3, 10, 12, tmp_path, True, 1000, None)
    settings = rep.finish_settings(args)
    key = record_key(rep.KINDS["finish"], settings)
    # every setting the result depends on changes the key
    for i, v in ((2, [0, 1, 2]), (3, 7), (4, 4), (5, 11), (6, 13), (8, False), (9, 2000), (10, 30.0)):
        other = list(args)
        other[i] = v
        assert record_key(rep.KINDS["finish"], rep.finish_settings(tuple(other))) != key
    store = RecordStore(tmp_path)
    out = {"workload": "gemm", "intrinsic": "GEMM",
           "seeds": {0: {"ratio": np.float64(1.5), "infeasible": {"mobo": np.int64(2)}}, 1: {"ratio": None}},
           "sw_convergence": {"curves": {"random": [np.inf, 3.0, np.nan]}, "oracle": {"optimum": np.bool_(True)}},
           "space_size": np.int64(12)}
    rep.save_finished(store, settings, out)
    back = rep.load_finished(store, settings)
    assert set(back["seeds"]) == {0, 1} and back["seeds"][0]["ratio"] == 1.5
    assert back["seeds"][0]["infeasible"]["mobo"] == 2 and back["space_size"] == 12
    c = back["sw_convergence"]["curves"]["random"]
    assert c[0] == np.inf and c[1] == 3.0 and np.isnan(c[2])
    assert back["sw_convergence"]["oracle"]["optimum"] is True
    assert store.keys() == [key] and not list(tmp_path.rglob(".*"))     # no temporary left
    # a recorded pair is returned as stored, nothing recomputed
    assert rep._finish_task(args)["seeds"][0]["ratio"] == 1.5
    with pytest.raises(TypeError, match="cannot store object"):
        rep.save_finished(store, {**settings, "seeds": [9]}, {"seeds": {}, "x": object()})


@pytest.mark.slow
def test_quick_reproduction_runs_end_to_end(tmp_path):
    res = rep.main(["--quick", "--pairs", "gemm:GEMM", "--seeds", "2", "--budget", "6", "--n-init", "3",
                    "--sw-budget", "10", "--sw-conv-budget", "12", "--out", str(tmp_path)])
    (pair,) = res["pairs"]
    assert pair["workload"] == "gemm" and len(pair["seeds"]) == 2
    assert set(pair["hv_final_median"]) == {"mobo", "random"}
    assert set(pair["sw_convergence"]["curves"]) == set(rep.SW_METHODS)
    assert all(r.get("ratio_reference") for r in pair["seeds"].values())
    assert pair["sw_convergence"]["oracle"]["bound"] > 0
    # the exact mapper's bound is below every search's best (gemm 512^3 pads nothing)
    assert min(pair["sw_final_over_bound"].values()) >= 1 - 1e-9
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["settings"]["budget"] == 6
    assert (tmp_path / "pareto_gemm_GEMM.png").stat().st_size > 1000
    assert (tmp_path / "sw_convergence_gemm_GEMM.png").stat().st_size > 1000
    assert "1.25x-1.44x" in (tmp_path / "table.md").read_text()
    # the finish phase is cached per pair: a second run reads it back unchanged
    assert len(RecordStore(tmp_path / "records").keys(rep.KINDS["finish"])) == 1
    again = rep.main(["--quick", "--pairs", "gemm:GEMM", "--seeds", "2", "--budget", "6", "--n-init", "3",
                      "--sw-budget", "10", "--sw-conv-budget", "12", "--out", str(tmp_path)])
    assert again["pairs"][0]["seeds"] == pair["seeds"]
    assert again["pairs"][0]["sw_convergence"]["oracle"] == pair["sw_convergence"]["oracle"]


def test_attainment_takes_a_search_that_reaches_the_proven_bound_as_witness():
    from types import SimpleNamespace as NS

    exact_is_schedule = NS(attained=True, proved=True, bound=100.0)
    assert rep.attainment(exact_is_schedule, {"random": 120.0}) == {"attained": True, "witness": "exact"}
    # the exact mapper's optimal mapping is not a schedule, but a search found one at the bound
    other = NS(attained=False, proved=True, bound=100.0)
    assert rep.attainment(other, {"random": 120.0, "qnetwork": 100.0}) == {"attained": True, "witness": "qnetwork"}
    assert rep.attainment(other, {"random": 120.0, "qnetwork": 101.0}) == {"attained": False, "witness": None}
    # a bound that is not proven (search stopped) certifies nothing, even where a search meets it
    stopped = NS(attained=False, proved=False, bound=100.0)
    assert rep.attainment(stopped, {"random": 100.0}) == {"attained": False, "witness": None}
