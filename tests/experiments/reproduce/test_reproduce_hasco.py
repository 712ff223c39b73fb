"""The HASCO reproduction: its pieces (fast) and a --quick run (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from experiments.records import RecordStore, record_key
from experiments.reproduce import REPRODUCTIONS
from experiments.reproduce import hasco as rep
from mappers.base import ProofScope


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


def metrics(latency_ms: float, energy_uj: float) -> dict:
    return {"latency_ms": latency_ms, "energy_uj": energy_uj, "edp_uj_ms": latency_ms * energy_uj}


def designs(co: dict, sep: dict, co_metrics: tuple | None = None, sep_metrics: tuple | None = None) -> dict:
    """The seed record's two designs; with (latency, energy) metrics where given."""
    out = {"codesign": {"point": co}, "separate": {"point": sep}}
    for k, m in (("codesign", co_metrics), ("separate", sep_metrics)):
        if m is not None:
            out[k]["metrics"] = metrics(*m)
    return out


def test_summary_and_table_report_both_definitions_iqr_and_the_oracle(tmp_path, monkeypatch):
    curves = {"heuristic": [[9.0, 6.0], [9.0, 8.0]], "qlearning": [[9.0, 7.0], [9.0, 7.0]],
              "qnetwork": [[9.0, 4.0], [9.0, 5.0]], "random": [[9.0, 6.0], [9.0, 6.0]]}
    finished = [{
        "workload": "gemm", "intrinsic": "GEMM",
        # the reference design: 3 ms, 2 uJ; each seed's co-design at 1 uJ and 1.5 / 3 / 2 ms
        "reference": {"point": {"pe": 16}, "metrics": metrics(3.0, 2.0)},
        "seeds": {0: {"ratio": 1.3, "ratio_reference": 2.0,
                      **designs({"pe": 32, "sp_kib": 64}, {"pe": 32, "sp_kib": 128}, (1.5, 1.0), (1.95, 0.9)),
                      "infeasible": {"mobo": 1, "random": 2}},
                  1: {"ratio": 1.1, "ratio_reference": 1.0, **designs({"pe": 8}, {"pe": 32}, (3.0, 1.0), (3.3, 1.5))},
                  2: {"ratio": None, "ratio_reference": 1.5, "codesign": {"point": {"pe": 8}, "metrics": metrics(2.0, 1.0)},
                      "infeasible": {"mobo": 0, "random": 3}}},
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
    # the made-up designs cannot be built: the bound's space is one stated scope here (the
    # committed run's is computed in test_the_software_tables_state_the_space_of_the_bound)
    scopes = rep.ProofScopes("pair")
    scopes.add("gemm:GEMM", "s", ProofScope("divisor", "coexplore", False, None, "every unrolling", "every order",
                                            "latency"))
    monkeypatch.setattr(rep, "run_bound_scopes", lambda results: scopes)
    rep.write_table(res, tmp_path / "t.md", "coexplore reproduce hasco --seeds 3")
    text = (tmp_path / "t.md").read_text()
    # latency: median [IQR] and the median's bootstrap interval; the resampled medians of
    # (1.3, 1.1) are 1.1, 1.2 and 1.3, of (2.0, 1.0, 1.5) 1.0 to 2.0; ttm has no metrics
    assert ("| gemm | GEMM | 1.20x [1.15, 1.25] | [1.10, 1.30] | 1.50x [1.25, 1.75] | [1.00, 2.00] holds 1.00x |"
            in text)
    assert "| ttm | GEMV | 0.90x [0.85, 0.95] | n/a | 3.00x [3.00, 3.00] | n/a |" in text
    # energy and EDP of the same designs: proxy 0.9 and 1.5 (EDP 1.95 * 0.9 / 1.5 = 1.17 and
    # 3.3 * 1.5 / 3 = 1.65); the reference 2 uJ against 1 uJ in every seed, EDP 6 / (1.5, 3, 2)
    assert ("| gemm | GEMM | 1.20x [0.90, 1.50] holds 1.00x | 1.41x [1.17, 1.65] | 2.00x [2.00, 2.00] | "
            "3.00x [2.00, 4.00] |") in text
    mr = g["metric_ratios"]
    assert mr["proxy"]["energy_uj"]["values"] == [0.9, 1.5, None]
    assert mr["reference"]["edp_uj_ms"]["values"] == pytest.approx([4.0, 2.0, 3.0])
    assert mr["proxy"]["latency_ms"]["summary"]["ci_holds_1"] is False
    assert ov["metric_ratios"]["reference"]["latency_ms"]["pairs_ci_holds_1"] == 1
    assert ov["metric_ratios"]["reference"]["energy_uj"]["pairs_ci_above_1"] == 1
    assert "selection rule: latency only" in text and "10,000 resamples, RNG seed 0" in text
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
    table = (tmp_path / "table.md").read_text()
    assert "1.25x-1.44x" in table and "## Separate / co-design energy and EDP of the same designs" in table
    # the run's own statistics: energy and EDP ratios of its designs, with intervals
    assert saved["settings"]["command"].startswith("coexplore reproduce hasco --quick")
    assert len(pair["metric_ratios"]["proxy"]["energy_uj"]["values"]) == 2
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


def test_bootstrap_median_exact_small_cases():
    # a constant sample: every resample's median is the constant, a zero-width interval
    assert rep.bootstrap_median([1.25] * 7) == (1.25, 1.25)
    assert rep.bootstrap_median([2.0]) == (2.0, 2.0)
    # (0, 1, 10): a resample's median is 0 with probability 7/27, 1 with 13/27, 10 with
    # 7/27, so the 30th and 70th percentiles are 1 and the 2.5th and 97.5th 0 and 10 (the
    # mean's bootstrap would spread over 0 to 10 at every level)
    assert rep.bootstrap_median([0.0, 1.0, 10.0], level=0.4) == (1.0, 1.0)
    assert rep.bootstrap_median([0.0, 1.0, 10.0]) == (0.0, 10.0)
    assert rep.bootstrap_median([0.0, None, 1.0, 10.0], level=0.4) == (1.0, 1.0)      # None dropped
    # fixed RNG seed: the same interval every time, another seed another draw
    v = [0.8, 1.1, 1.3, 0.95, 1.6, 1.02, 1.4, 0.99, 1.2, 1.7]
    a = rep.bootstrap_median(v)
    assert a == rep.bootstrap_median(v) and a[0] < float(np.median(v)) < a[1]
    assert rep.bootstrap_median(v, resamples=200, seed=1) != rep.bootstrap_median(v, resamples=200, seed=2)
    for bad, match in (({"resamples": 0}, "resamples must be a positive integer, got 0"),
                       ({"level": 1.0}, r"level must be in \(0, 1\), got 1.0")):
        with pytest.raises(ValueError, match=match):
            rep.bootstrap_median(v, **bad)
    with pytest.raises(ValueError, match="values: no values"):
        rep.bootstrap_median([None])
    with pytest.raises(ValueError, match="non-finite"):
        rep.bootstrap_median([1.0, float("nan")])


def test_bootstrap_of_the_median_of_medians_resamples_pairs_and_seeds():
    assert rep.bootstrap_median_of_medians([[2.0, 2.0], [2.0, 2.0, 2.0]]) == (2.0, 2.0)
    # two constant pairs: a resample's median of medians is 1, 2 or 3 (probabilities 1/4,
    # 1/2, 1/4), so the 30th and 70th percentiles are 2
    assert rep.bootstrap_median_of_medians([[1.0, 1.0], [3.0, 3.0]], level=0.4) == (2.0, 2.0)
    assert rep.bootstrap_median_of_medians([[1.0, 1.0], [3.0, 3.0]]) == (1.0, 3.0)
    # one pair: only its seeds vary, as the one-level bootstrap of that pair (resampling
    # the pairs alone would give a zero-width interval)
    assert rep.bootstrap_median_of_medians([[0.0, 1.0, 10.0]], level=0.4) == (1.0, 1.0)
    assert rep.bootstrap_median_of_medians([[0.0, 1.0, 10.0]]) == (0.0, 10.0)
    with pytest.raises(ValueError, match="no groups"):
        rep.bootstrap_median_of_medians([])
    with pytest.raises(ValueError, match=r"groups\[1\]: no values"):
        rep.bootstrap_median_of_medians([[1.0], [None]])


def test_a_latency_ratio_that_is_not_its_designs_is_an_error():
    res = {"workload": "gemm", "intrinsic": "GEMM", "reference": {"metrics": metrics(2.0, 1.0)},
           "seeds": {"0": {"ratio": 1.5, "ratio_reference": 2.0, **designs({}, {}, (1.0, 1.0), (1.2, 1.0))}}}
    with pytest.raises(ValueError, match=r"gemm/GEMM seed 0: ratio 1\.5 is not the designs. latency ratio 1\.2"):
        rep.metric_ratios(res)


COMMITTED = Path(__file__).resolve().parents[3] / "docs/reproduction/results/hasco"


def test_the_committed_table_is_rebuilt_from_the_committed_results_byte_for_byte(tmp_path):
    results = json.loads((COMMITTED / "results.json").read_text())
    rep.write_table(results, tmp_path / "table.md")
    assert (tmp_path / "table.md").read_bytes() == (COMMITTED / "table.md").read_bytes()
    # and the derived statistics are those of the recorded designs (retable reproduces them)
    kept = json.loads(json.dumps(results["overall"]["metric_ratios"]))
    pairs = [{k: v for k, v in p.items() if k != "metric_ratios"} for p in results["pairs"]]
    assert json.loads(json.dumps(rep.noise_and_energy(pairs))) == kept
    assert [p["metric_ratios"] for p in pairs] == [p["metric_ratios"] for p in results["pairs"]]


def test_retable_rewrites_the_committed_files_unchanged_and_needs_the_command(tmp_path):
    import shutil

    shutil.copy(COMMITTED / "results.json", tmp_path / "results.json")
    rep.main(["--retable", str(tmp_path)])
    for name in ("results.json", "table.md"):
        assert (tmp_path / name).read_bytes() == (COMMITTED / name).read_bytes(), name
    # a results.json from before the command was stored needs it given
    r = json.loads((tmp_path / "results.json").read_text())
    del r["settings"]["command"], r["overall"]["metric_ratios"]
    (tmp_path / "results.json").write_text(json.dumps(r))
    with pytest.raises(SystemExit, match="does not say which command made it; give --command"):
        rep.main(["--retable", str(tmp_path)])
    rep.main(["--retable", str(tmp_path), "--command", "coexplore reproduce hasco --seeds 10"])
    assert "Command: `coexplore reproduce hasco --seeds 10`" in (tmp_path / "table.md").read_text()
    with pytest.raises(SystemExit, match="not found"):
        rep.main(["--retable", str(tmp_path / "nothing")])


def test_the_in_loop_software_search_reaches_the_evaluator_and_its_record(tmp_path, monkeypatch):
    """--sw-method / --sw-seed (issue 49 item 1): every hardware point's software is the
    named search's, at its seed, and the record says so; the default flow's keys are kept."""
    from collections import OrderedDict

    import mappers.schedule as sched
    from evaluators.intrinsic_codesign import reference_point

    calls = []
    real = sched.ask_tell_schedule

    def spy(problem, search, budget, seed, *a, **k):
        calls.append((search, budget, seed))
        return real(problem, search, budget, seed, *a, **k)

    monkeypatch.setattr(sched, "ask_tell_schedule", spy)
    monkeypatch.setattr(sched, "SEARCH_CACHE", OrderedDict())
    a = rep.run_search("GEMV", "gemv", "random", 0, 2, 1, 12, "search", tmp_path, sw_method="qnetwork", sw_seed=3)
    assert calls and set(calls) == {("qnetwork", 12, 3)}
    settings = rep.search_settings("GEMV", "gemv", "random", 0, 2, 1, 12, "search", "reference", "qnetwork", 3)
    rec = RecordStore(tmp_path).record(rep.KINDS["search"], settings)
    assert rec.value == a and (rec.settings["sw_method"], rec.settings["sw_seed"]) == ("qnetwork", 3)
    assert rec.trials["study"].endswith("sw-qnetwork-3")
    # the committed flow's settings (and so its records' keys) have no in-loop entries, and the
    # proxy's default schedule searches nothing, so its record is shared by every in-loop search
    assert "sw_method" not in rep.search_settings("GEMV", "gemv", "random", 0, 2, 1, 12, "search", "reference")
    assert (rep.search_settings("GEMV", "proxy", "mobo", 0, 2, 1, 12, "default", "reference", "qnetwork", 3)
            == rep.search_settings("GEMV", "proxy", "mobo", 0, 2, 1, 12, "default", "reference"))
    args = ("gemm", "GEMM", [0, 1], 6, 3, 10, 12, tmp_path, True, 1000, None)
    assert rep.finish_settings((*args, "heuristic", 0)) == rep.finish_settings(args)
    assert rep.finish_settings((*args, "qnetwork", "run")) == {**rep.finish_settings(args), "sw_method": "qnetwork",
                                                                "sw_seed": "run"}
    # on the same hardware point, the Q-network's schedules are not the heuristic's (at 20 a layer: at
    # 16 both keep the best of the same warm-up)
    pt = reference_point("GEMM")

    def schedules(method):
        ev = rep.in_loop_evaluator("GEMM", "gemm", 20, method, 0)
        return [row["mapping_info"]["schedules"] for row in ev(pt).info["breakdown"]["layers"]]

    calls.clear()
    assert schedules("qnetwork") != schedules("heuristic")
    assert {c[0] for c in calls} == {"qnetwork"}
    assert rep.sw_method_settings("qnetwork")["optimizer_defaults"]["width"] == 64


def test_ratios_per_seed_group():
    """The seed groups of the software-search benchmark (0-2, 3-5, 6-15), each a median of
    pair medians over the group's seeds; the heuristic's ratios where the records have them."""
    h = {"ratio": 1.0, "ratio_reference": 1.5, "codesign_over_in_loop": 0.9}
    finished = [{"workload": "a", "intrinsic": "GEMM",
                 "seeds": {0: {"ratio": 1.2, "ratio_reference": 2.0, "heuristic": h}, 3: {"ratio": 1.0},
                           4: {"ratio": 1.1}, 9: {"ratio": 0.9}}},
                {"workload": "b", "intrinsic": "GEMV", "seeds": {0: {"ratio": 1.4}, 5: {"ratio": 1.3}}}]
    g = rep.seed_groups(finished)
    assert [x["label"] for x in g] == ["0", "3-5", "9"] and g[1]["seeds"] == [3, 4, 5]
    assert g[0]["ratio"]["median_of_pair_medians"] == pytest.approx(1.3) and g[0]["ratio"]["pairs"] == 2
    assert g[1]["ratio"]["median_of_pair_medians"] == pytest.approx((1.05 + 1.3) / 2)
    assert g[0]["heuristic_codesign_over_in_loop"]["median_of_pair_medians"] == 0.9
    assert g[2]["ratio_reference"] is None and "heuristic_ratio" not in g[2]
    lines = "\n".join(rep._seed_group_lines(g, 0.95))
    assert "| 3-5 | 1.18x [1.02, 1.30] (2 pairs) |" in lines and "0.90x [0.90, 0.90] (1 pair)" in lines


def test_the_software_tables_state_the_space_of_the_bound():
    """"exact bound" and "bound is the optimum" (issue 45 item 3): the table states the space
    beside them, computed from the exact reference's mapper on each pair's stages and
    first-seed design (divisor tilings, coexplore accounting, no bypass choices, no
    constraints); a record whose stages are not the ones this code searches is refused."""
    results = json.loads((COMMITTED / "results.json").read_text())
    scopes = rep.run_bound_scopes(results)
    assert {s.tilings for s in scopes.distinct()} == {"divisor"}
    assert {(s.accounting, s.bypass, s.constraints, s.objective) for s in scopes.distinct()} == {
        ("coexplore", False, None, "latency")}
    covered = {label for _, labels in scopes.applies_to() for label in labels}
    assert covered == {f"{p['workload']}:{p['intrinsic']}" for p in results["pairs"] if "sw_convergence" in p}
    sentence = rep.bound_scope_sentence(scopes)
    assert f"{sentence}." in (COMMITTED / "table.md").read_text().split("\n\n")
    assert rep.bound_scope_phrase(scopes) == "over divisor tilings, coexplore accounting, no bypass choices, no constraints"
    first = results["pairs"][0]
    with pytest.raises(ValueError, match="are not the ones this code searches"):
        rep.sw_bound_scopes([(first["workload"], first["intrinsic"], first["seeds"]["0"]["codesign"]["point"],
                              first["sw_convergence"]["stages"][:1])])
    odd = rep.ProofScopes("pair")
    for label, acc in (("a", "coexplore"), ("b", "timeloop")):
        odd.add(label, "s", ProofScope("divisor", acc, False, None, "every unrolling", "every order", "latency"))
    with pytest.raises(ValueError, match="differ in more than their spatial rules"):
        rep.bound_scope_phrase(odd)
