"""The Shi et al. 2020 reproduction: spaces, the row-stationary baseline, the bound and the
summaries (fast); a --quick run whose decomposition must be ordered as it has to be (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from accelerators import spaces
from experiments.records import RecordStore, record_key, trials_ref
from experiments.reproduce import shi2020
from mappers import zoo


def test_iso_space_respects_eyeriss_resources():
    sp = shi2020.hardware_space("iso")
    assert sp.validate(shi2020.EYERISS_POINT) == []                      # Eyeriss itself is in the space
    assert shi2020.EYERISS_PES == 168
    assert shi2020.EYERISS_STORAGE_BYTES == 168 * 260 * 2 + 108 * 1024
    for p in sp.sample(500, seed=0):
        assert p["pe_x"] * p["pe_y"] <= 168
        assert spaces.storage_bytes(p) <= shi2020.EYERISS_STORAGE_BYTES
    free = shi2020.hardware_space("free").sample(500, seed=0)
    assert max(p["pe_x"] * p["pe_y"] for p in free) > 168
    with pytest.raises(ValueError, match="mode must be 'iso' or 'free'"):
        shi2020.hardware_space("big")


def test_the_baseline_is_the_best_row_stationary_mapping_and_software_only_beats_it():
    """A GEMM batch of the MLP: the row-stationary set keeps the batch off the array, so the
    unconstrained optimum (software only) is strictly better, and every mapping is proven
    optimal; both are costed with the capacity-dependent table."""
    spec = "mlp_dlrm@32[0:1]"
    base = shi2020.figures(spec, shi2020.EYERISS_POINT, shi2020.RS_MAPPER)
    sw = shi2020.figures(spec, shi2020.EYERISS_POINT, shi2020.EXACT_MAPPER)
    assert base["all_layers_proven_optimal"] and sw["all_layers_proven_optimal"]
    assert sw["edp_uj_ms"] < base["edp_uj_ms"] * (1 - 1e-6)
    norm = shi2020.figures(spec, shi2020.EYERISS_POINT, shi2020.RS_MAPPER, tech=shi2020.ABLATION_TECH)
    assert norm["energy_uj"] != pytest.approx(base["energy_uj"], rel=1e-3)


def test_the_bound_is_below_every_design():
    spec = "dqn[2:4]"
    b_iso, b_free = shi2020.bound(spec, shi2020.EYERISS_PES), shi2020.bound(spec, shi2020.FREE_MAX_PES)
    assert b_iso["pes"] == 168 and b_free["pes"] == 1024
    assert b_free["latency_ms"] <= b_iso["latency_ms"] and b_free["energy_uj"] == pytest.approx(b_iso["energy_uj"])
    sw = shi2020.figures(spec, shi2020.EYERISS_POINT, shi2020.EXACT_MAPPER)
    for k in ("edp_uj_ms", "energy_uj", "latency_ms"):
        assert b_iso[k] <= sw[k]
    macs = sum(layer.macs * layer.repeat for layer in zoo.resolve(spec))
    assert b_iso["latency_ms"] >= macs / 168 / (shi2020.EYERISS.clock_mhz * 1e3) * (1 - 1e-12)


def test_summaries_count_evaluations_to_beat_and_changes():
    base = {"edp_uj_ms": 10.0, "energy_uj": 5.0, "latency_ms": 2.0}
    sw = {"edp_uj_ms": 8.0, "energy_uj": 4.0, "latency_ms": 2.0}
    runs = [{"curve": [12.0, 9.0, 7.0], "best": {"edp_uj_ms": 7.0, "energy_uj": 3.5, "latency_ms": 2.0},
             "seconds": 3.0, "failed": 0, "best_point": {}},
            {"curve": [11.0, 11.0, 9.5], "best": {"edp_uj_ms": 9.5, "energy_uj": 5.0, "latency_ms": 1.9},
             "seconds": 5.0, "failed": 1, "best_point": {}}]
    s = shi2020.summarize_runs(runs, base, sw)
    assert s["evals_to_beat_baseline"] == [2, 3]
    assert s["evals_to_beat_software_only"] == [3, None]
    assert s["edp_uj_ms"]["changes"] == pytest.approx([-0.3, -0.05])
    assert s["edp_uj_ms"]["change_mean"] == pytest.approx(-0.175)
    assert s["latency_ms"]["changes"] == pytest.approx([0.0, -0.05])


def _decomposed(base: float, sw: float, both_change: float | None, bound: float) -> dict:
    both = {} if both_change is None else {"iso": {"constrained-bo": {"edp_uj_ms": {"change_mean": both_change}}}}
    return {"baseline": {"edp_uj_ms": base}, "software_only": {"edp_uj_ms": sw}, "both": both,
            "bound": {"iso": {"edp_uj_ms": bound}}}


def test_against_paper_splits_the_result_into_mapping_and_hardware_factors():
    # baseline 10, software only 9 (x0.9), both -28 % (x0.72 = 0.9 x 0.8), bound 5: paper -18 % reached
    a = shi2020.against_paper(_decomposed(10.0, 9.0, -0.28, 5.0), -0.18)
    assert a["mapping"] == pytest.approx(0.9) and a["hardware"] == pytest.approx(0.8)
    assert a["ours"] == pytest.approx(a["mapping"] * a["hardware"])
    assert a["bound"] == pytest.approx(0.5) and a["paper_over_bound"] == pytest.approx(0.82 / 0.5)
    assert a["shortfall_points"] == pytest.approx(-0.10)
    assert a["room_used"] == pytest.approx((0.9 - 0.72) / (0.9 - 0.5))
    assert a["reading"] == "reached"
    # the same search against a paper figure that needs more: short by 12 points
    assert shi2020.against_paper(_decomposed(10.0, 9.0, -0.28, 5.0), -0.40)["reading"] == "short"
    # a paper figure below the bound: no design reaches it, whatever the search did
    b = shi2020.against_paper(_decomposed(10.0, 9.8, -0.05, 9.2), -0.40)
    assert b["reading"] == "below the bound" and b["paper_over_bound"] == pytest.approx(0.6 / 0.92)
    # without a search the factors that exist are still given
    c = shi2020.against_paper(_decomposed(10.0, 9.0, None, 5.0), -0.18)
    assert c["ours"] is None and c["hardware"] is None and c["mapping"] == pytest.approx(0.9)
    assert c["reading"] == "no search"
    assert shi2020.paper_change("dqn@32") == shi2020.paper_change("dqn") == -0.40
    assert shi2020.paper_change("mlp") is None


def test_against_paper_section_lists_the_workloads_with_a_paper_figure():
    res = {"workloads": {"dqn": {"against_paper": shi2020.against_paper(_decomposed(10.0, 9.8, -0.05, 9.2), -0.40)},
                         "mlp": {}}}
    lines = shi2020.against_paper_lines(res)
    rows = [x for x in lines if x.startswith("| dqn")]
    assert len(rows) == 1 and "below the bound" in rows[0] and "| -40.0 % | -5.0 % | +35.0 |" in rows[0]
    assert not any(x.startswith("| mlp") for x in lines)
    assert shi2020.against_paper_lines({"workloads": {"mlp": {}}}) == []


def _remap_jobs(points: list[dict], mapper: dict) -> list[tuple[dict, dict]]:
    return [(shi2020.remap_settings("exact", "dqn[2:4]", "dqn[2:4]", shi2020.TECH, "iso", "random", seed, p, mapper),
             trials_ref(f"study-s{seed}", [seed])) for seed, p in enumerate(points)]


def test_remap_on_two_processes_gives_the_sequential_figures_and_records_each(tmp_path):
    points = [dict(shi2020.EYERISS_POINT), {**shi2020.EYERISS_POINT, "pe_x": 8, "glb_kib": 64}]
    mapper = shi2020.search_mapper(0.0, 200_000)
    jobs = _remap_jobs(points, mapper)
    seq = shi2020.remap("dqn[2:4]", jobs, mapper, shi2020.TECH, 1, RecordStore(tmp_path / "seq"))
    par_store = RecordStore(tmp_path / "par")
    par = shi2020.remap("dqn[2:4]", jobs, mapper, shi2020.TECH, 2, par_store)
    kept = RecordStore(tmp_path / "kept")
    kept.put(shi2020.KINDS["remap"], jobs[0][0], {"edp_uj_ms": -1.0})      # what is recorded is not mapped again
    k = shi2020.remap("dqn[2:4]", jobs, mapper, shi2020.TECH, 2, kept)
    assert k[0] == {"edp_uj_ms": -1.0} and k[1]["edp_uj_ms"] == seq[1]["edp_uj_ms"]
    for a, b in zip(par, seq):
        assert a["edp_uj_ms"] == b["edp_uj_ms"] and a["worst_layer_gap"] == b["worst_layer_gap"]
    assert seq[0]["edp_uj_ms"] != seq[1]["edp_uj_ms"]
    rec = par_store.record(shi2020.KINDS["remap"], jobs[1][0])     # each record: its time and trial
    assert rec.value["edp_uj_ms"] == seq[1]["edp_uj_ms"] and rec.wall_s > 0 and rec.cpu_s > 0
    assert rec.trials == {"study": "study-s1", "storage": None, "numbers": [1]}


def test_steps_only_gives_baseline_software_only_and_bounds_without_searching(tmp_path):
    res = shi2020.main(["--steps-only", "--skip", "rs-check", "--workloads", "dqn[2:4]", "--mode", "both",
                        "--out", str(tmp_path)])
    d = res["workloads"]["dqn[2:4]"]
    assert d["both"] == {"iso": {}, "free": {}}
    assert d["software_only"]["edp_uj_ms"] <= d["baseline"]["edp_uj_ms"] * (1 + 1e-9)
    assert d["bound"]["free"]["edp_uj_ms"] <= d["bound"]["iso"]["edp_uj_ms"] <= d["software_only"]["edp_uj_ms"]
    table = (tmp_path / "table.md").read_text()
    assert "compulsory-traffic bound (168 PEs)" in table and "compulsory-traffic bound (1024 PEs)" in table
    assert "co-designed" not in table and "`coexplore reproduce shi2020 --steps-only`" in table
    assert "against_paper" not in d and "Against the paper" not in table     # a slice of DQN is not the paper's DQN
    assert not list(tmp_path.glob("convergence_*.png"))


@pytest.mark.slow
def test_quick_reproduction_decomposes_the_gain_in_order(tmp_path):
    res = shi2020.main(["--quick", "--workloads", "dqn", "--seeds", "1", "--budget", "6", "--workers", "1",
                        "--inner-bo-outer-budget", "2", "--inner-bo-budget", "6", "--max-nodes", "300000",
                        "--final-max-nodes", "1000000",
                        "--out", str(tmp_path)])
    d = res["workloads"]["dqn"]
    base, sw = d["baseline"], d["software_only"]
    assert sw["edp_uj_ms"] <= base["edp_uj_ms"] * (1 + 1e-9)          # dropping a constraint never hurts
    s = d["both"]["iso"]["constrained-bo"]
    bound = d["bound"]["iso"]
    for k in ("edp_uj_ms", "energy_uj", "latency_ms"):
        assert all(v >= bound[k] * (1 - 1e-9) for v in s[k]["values"])
    # the reported design is the run's best point re-mapped exactly
    best = shi2020.figures("dqn", s["best_points"][0], shi2020.search_mapper(0.0, 1_000_000))
    assert s["edp_uj_ms"]["values"][0] == pytest.approx(best["edp_uj_ms"], rel=1e-9)
    assert s["edp_uj_ms"]["values"][0] <= s["curves"][0][-1] * (1 + 1e-9)   # exact never worse than within-gap
    assert 0 < s["layer_mappings_proven_share"] <= 1
    ib = res["inner_bo"]["runs"][0]
    assert 0 < ib["inner_proposals"] and 0 <= ib["inner_infeasible"] <= ib["inner_proposals"]
    assert ib["inner_bo_design_remapped_exactly_edp"] <= ib["inner_bo_best_edp"] * (1 + 1e-9)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["settings"]["budgets"] == {"dqn": 6}
    table = (tmp_path / "table.md").read_text()
    change = 100 * s["edp_uj_ms"]["change_mean"]
    assert f"| {change:+.1f} % ±" in table
    a = d["against_paper"]
    assert a["ours"] == pytest.approx(1 + s["edp_uj_ms"]["change_mean"]) and a["paper"] == pytest.approx(0.6)
    assert "Against the paper" in table and a["reading"] in table
    assert np.isfinite(res["rs_check"]["CONV1"]["latency_ms"]["ratio"])
    assert (tmp_path / "convergence_dqn.png").stat().st_size > 1000


def test_a_finished_search_is_kept_as_a_record_and_not_run_again(tmp_path, monkeypatch):
    """A run survives the loss of its studies.db: once its study has the whole budget its
    record is in steps.json, and a later invocation takes it without touching a study."""
    mapper = shi2020.search_mapper(0.0, 20_000)
    args = ("dqn[3:4]", "dqn[3:4]", "random", 0, "iso", 2, mapper)
    storage = f"sqlite:///{tmp_path / 'studies.db'}"
    store = RecordStore(tmp_path / "records")
    rec = shi2020.search_run(*args, storage, 1, shi2020.TECH, "", store)
    assert len(rec["curve"]) == 2 and set(rec) == set(shi2020.RUN_FIELDS)
    assert len(rec["trial_seconds"]) == 2 and rec["seconds"] == pytest.approx(sum(rec["trial_seconds"]))
    settings = shi2020.search_settings("dqn[3:4]", "dqn[3:4]", "random", 0, "iso", 2, mapper, shi2020.TECH)
    assert RecordStore(tmp_path / "records").keys() == [record_key(shi2020.KINDS["search"], settings)]
    saved = RecordStore(tmp_path / "records").record(shi2020.KINDS["search"], settings)
    assert saved.value == rec and saved.wall_s == pytest.approx(rec["seconds"])
    assert saved.trials == {"study": "dqn[3:4]-iso-random-s0", "storage": storage, "numbers": [0, 1]}
    (tmp_path / "studies.db").unlink()

    def no_study(*a, **k):
        raise AssertionError("a finished run must not be searched again")

    monkeypatch.setattr(shi2020, "run_study", no_study)
    assert shi2020.search_run(*args, storage, 1, shi2020.TECH, "", store) == rec
    with pytest.raises(AssertionError):                 # another budget is another run
        shi2020.search_run(*args[:5], 3, mapper, storage, 1, shi2020.TECH, "", store)


def test_stop_after_runs_the_first_evaluations_of_a_search_that_the_whole_budget_resumes(tmp_path):
    """Step 5 compares with the first evaluations of step 3's search: stopping it early
    keeps no record (the run is unfinished), and resuming it later gives one study whose
    first trials are those evaluations."""
    mapper = shi2020.search_mapper(0.0, 20_000)
    storage = f"sqlite:///{tmp_path / 'studies.db'}"
    args = ("dqn[3:4]", "dqn[3:4]", "random", 0, "iso", 3, mapper, storage, 1, shi2020.TECH, "")
    store = RecordStore(tmp_path / "records")
    early = shi2020.search_run(*args, store, stop_after=2)
    assert len(early["curve"]) == 2 and store.keys() == []
    whole = shi2020.search_run(*args, store)
    settings = shi2020.search_settings("dqn[3:4]", "dqn[3:4]", "random", 0, "iso", 3, mapper, shi2020.TECH)
    assert len(whole["curve"]) == 3 and store.keys() == [record_key(shi2020.KINDS["search"], settings)]
    assert whole["curve"][:2] == early["curve"] and whole["trial_seconds"][:2] == early["trial_seconds"]


def test_cache_from_takes_an_earlier_invocations_steps(tmp_path, monkeypatch):
    first = shi2020.main(["--steps-only", "--skip", "rs-check", "--workloads", "dqn[3:4]", "--out",
                          str(tmp_path / "a")])

    def no_mapping(*a, **k):
        raise AssertionError("cached steps must not be mapped again")

    monkeypatch.setattr(shi2020, "figures", no_mapping)
    again = shi2020.main(["--steps-only", "--skip", "rs-check", "--workloads", "dqn[3:4]", "--out",
                          str(tmp_path / "b"), "--cache-from", str(tmp_path / "a" / "records")])
    assert again["workloads"] == first["workloads"]
    assert RecordStore(tmp_path / "b" / "records").keys() == RecordStore(tmp_path / "a" / "records").keys()
    with pytest.raises(AssertionError):
        shi2020.main(["--steps-only", "--skip", "rs-check", "--workloads", "dqn[3:4]", "--out", str(tmp_path / "c")])


def _earlier(seeds: int = 2, **settings) -> dict:
    runs = {"curves": [[1.0]] * seeds}
    return {"settings": {"quick": False, "steps_only": False, "seeds": 2, "budgets": {"dqn": 30},
                         "optimizers": ["constrained-bo"], "gap": 0.0, "tech": shi2020.TECH, **settings},
            "workloads": {"dqn": {"spec": "dqn", "both": {"iso": {"constrained-bo": runs},
                                                          "free": {"constrained-bo": runs}}}}}


def test_reuse_takes_only_workloads_finished_with_the_same_settings():
    now = {"quick": False, "steps_only": False, "seeds": 2, "budgets": {"dqn": 30}, "optimizers": ["constrained-bo"],
           "gap": 0.0, "tech": shi2020.TECH, "max_nodes": 3_000_000, "final_max_nodes": 0,
           "modes": ["iso", "free"]}
    # settings recorded before max_nodes / final_max_nodes were are the defaults of the time
    assert shi2020.reusable(_earlier(), now, "dqn", "dqn") is not None
    assert shi2020.reusable(_earlier(max_nodes=3_000_000, final_max_nodes=0), now, "dqn", "dqn") is not None
    # ... which is not today's search limit (the fast default's since issue 42)
    assert shi2020.MAX_NODES == 40_000
    assert shi2020.reusable(_earlier(), {**now, "max_nodes": shi2020.MAX_NODES}, "dqn", "dqn") is None
    assert shi2020.reusable(_earlier(), now, "dqn@32", "dqn@32") is None            # not in the file
    assert shi2020.reusable(_earlier(), now, "dqn", "dqn[0:2]") is None             # another spec
    assert shi2020.reusable(_earlier(budgets={"dqn": 8}), now, "dqn", "dqn") is None
    assert shi2020.reusable(_earlier(max_nodes=300_000), now, "dqn", "dqn") is None
    assert shi2020.reusable(_earlier(final_max_nodes=10**6), now, "dqn", "dqn") is None
    # the final node limit is per workload since FINAL_MAX_NODES: only this workload's counts
    per = {**now, "final_max_nodes": {"dqn": 0, "dqn@32": 30_000_000}}
    assert shi2020.reusable(_earlier(), per, "dqn", "dqn") is not None
    assert shi2020.reusable(_earlier(final_max_nodes={"dqn": 0, "dqn@32": 5}), per, "dqn", "dqn") is not None
    assert shi2020.reusable(_earlier(final_max_nodes={"dqn": 10**6}), per, "dqn", "dqn") is None
    assert shi2020.reusable(_earlier(seeds=1), now, "dqn", "dqn") is None           # a seed missing
    assert shi2020.reusable(_earlier(quick=True), now, "dqn", "dqn") is None
    assert shi2020.reusable(None, now, "dqn", "dqn") is None


def test_final_node_limit_per_workload_and_the_table_states_what_it_left_unproven():
    args = shi2020.argparse.Namespace(final_max_nodes=None)
    assert shi2020.final_nodes_of("dqn@32", args) == shi2020.FINAL_MAX_NODES["dqn@32"] > 0
    assert shi2020.final_nodes_of("dqn", args) == 0
    assert shi2020.final_mapper("dqn", args) == shi2020.EXACT_MAPPER
    # a limited re-map is recorded apart from an unlimited one
    def key(nodes):
        return record_key(shi2020.KINDS["remap"], shi2020.remap_settings(
            "exact", "dqn", "dqn", shi2020.TECH, "iso", "constrained-bo", 0, shi2020.EYERISS_POINT,
            shi2020.search_mapper(0.0, nodes)))
    assert len({key(0), key(30), key(31)}) == 3
    args.final_max_nodes = 7
    assert shi2020.final_nodes_of("dqn", args) == 7 and shi2020.final_mapper("dqn", args)["max_nodes"] == 7
    s = {"layer_mappings_proven_share": 0.5, "final_proven": [True, False, False],
         "final_worst_layer_gap": [0.0, 0.1, 0.33]}
    assert shi2020._proven(s) == "50.0 %; final: 2/3 not proven, within 33 %"
    assert shi2020._proven({**s, "final_proven": [True] * 3}) == "50.0 %"
    assert shi2020._proven({"layer_mappings_proven_share": 1.0}) == "100.0 %"      # a reused earlier entry


def test_figures_gap_is_zero_when_proven_and_certified_when_a_node_limit_stops_a_layer():
    proven = shi2020.figures("dqn[4:5]", shi2020.EYERISS_POINT, shi2020.EXACT_MAPPER)
    assert proven["all_layers_proven_optimal"] and proven["worst_layer_gap"] == 0.0
    cut = shi2020.figures("dqn[4:5]", shi2020.EYERISS_POINT, shi2020.search_mapper(0.0, 5))
    assert not cut["all_layers_proven_optimal"]
    # the stopped layer's figure is within its certified gap of the optimum
    assert cut["edp_uj_ms"] >= proven["edp_uj_ms"] * (1 - 1e-9)
    assert cut["edp_uj_ms"] <= proven["edp_uj_ms"] * (1 + cut["worst_layer_gap"]) * (1 + 1e-9)


def test_recorded_hours_sums_every_search_and_step_once():
    run = {"seconds": [1800.0, 3600.0]}
    wl = {"baseline": {"seconds": 360.0}, "software_only": {"seconds": 720.0},
          "both": {"iso": {"constrained-bo": run, "random": {"seconds": [360.0]}}, "free": {"constrained-bo": run}}}
    results = {"workloads": {"a": wl, "b": {"baseline": {"seconds": 3600.0}, "software_only": {"seconds": 0.0}}},
               "ablation_table": {"a": {"baseline": {"seconds": 1800.0}, "software_only": {"seconds": 1800.0}}},
               "inner_bo": {"runs": [{"seconds": 3600.0, "exact_seconds": 1800.0}]}}
    # a: 0.1 + 0.2 + 1.5 + 0.1 + 1.5; b: 1; ablation: 1; inner BO: 1 (its exact beside it is a's search)
    assert shi2020.recorded_hours(results) == pytest.approx(6.4)
    assert shi2020.recorded_hours({"workloads": {}}) == 0.0


RESULTS = Path(__file__).resolve().parents[3] / "docs" / "reproduction" / "results" / "shi2020"


def test_the_committed_records_reassemble_the_committed_table_byte_for_byte(tmp_path, monkeypatch):
    """The command docs/reproduction/shi2020.md gives for continuing from committed state,
    with nothing mapped or searched: every step, search and re-map is a committed record."""
    def nothing(*a, **k):
        raise AssertionError("the committed records hold every result")

    monkeypatch.setattr(shi2020, "figures", nothing)
    monkeypatch.setattr(shi2020, "run_study", nothing)
    monkeypatch.setattr(shi2020, "rs_check", nothing)
    shi2020.main(["--max-nodes", "3000000", "--reuse", str(RESULTS / "results.json"), "--cache-from", str(RESULTS / "records"),
                  "--out", str(tmp_path)])
    assert (tmp_path / "table.md").read_bytes() == (RESULTS / "table.md").read_bytes()


def test_an_old_steps_json_is_refused_with_the_converter_named(tmp_path):
    (tmp_path / "steps.json").write_text("{}")
    with pytest.raises(SystemExit, match="migrate_records shi2020"):
        shi2020.main(["--steps-only", "--workloads", "dqn[3:4]", "--out", str(tmp_path)])


def test_old_steps_keys_parse_into_the_records_settings():
    from experiments.reproduce.migrate_records import parse_shi2020_key

    kind, st, trials = parse_shi2020_key(
        'dqn@32:iso:constrained-bo:s4:run:b30:{"max_nodes": 3000000, "name": "exact"}', {"curve": [1.0] * 30}, None)
    assert kind == shi2020.KINDS["search"] and st == shi2020.search_settings(
        "dqn@32", "dqn@32", "constrained-bo", 4, "iso", 30, {"name": "exact", "max_nodes": 3_000_000}, shi2020.TECH)
    assert trials["study"] == "dqn@32-iso-constrained-bo-s4" and trials["numbers"] == list(range(30))
    point = "[('glb_kib', 128), ('pe_x', 8), ('pe_y', 21), ('rf_i_words', 128), ('rf_o_words', 16), ('rf_w_words', 32)]"
    kind, st, _ = parse_shi2020_key(f"dqn@32-eyeriss_normalized:iso:constrained-bo:s0:best{point}:max_nodes=30000000",
                                    {}, None)
    assert kind == shi2020.KINDS["remap"] and st["tech"] == "eyeriss_normalized" and st["point"]["pe_y"] == 21
    assert st["mapper"] == {"name": "exact", "max_nodes": 30_000_000} and st["spec"] == "dqn@32"
    kind, st, _ = parse_shi2020_key(f"innerbo:s1:{point}", {}, None)
    assert kind == shi2020.KINDS["remap"] and st["search"] == "inner-bo" and st["mapper"] == {"name": "exact"}
    assert parse_shi2020_key("mlp:baseline", {}, None)[1] == shi2020.step_settings(
        "baseline", "mlp", "mlp_dlrm@1", shi2020.TECH)
    with pytest.raises(ValueError):
        parse_shi2020_key("innerbo:s1:[__import__('os')]", {}, None)


def test_the_reproduction_takes_its_space_from_the_library():
    assert shi2020.hardware_space is spaces.shi2020_space
    assert shi2020.EYERISS_PES == spaces.EYERISS_PES and shi2020.MODES == spaces.SHI2020_MODES


def test_a_search_states_the_space_its_proven_share_covers(tmp_path, capsys):
    """Issue 45 item 3: the share of layer mappings "proven optimal" is followed by the space
    the proofs cover, computed from the search's mapper on the run's best designs (the
    accounting and constraints by name), as announced_scopes computes it from the
    results.json the run writes."""
    from experiments.proof_scopes import PREFIX

    shi2020.main(["--workloads", "dqn[3:4]", "--mode", "iso", "--optimizers", "random", "--seeds", "1",
                  "--budget", "2", "--workers", "1", "--max-nodes", "20000", "--final-max-nodes", "20000",
                  "--skip", "rs-check", "inner-bo", "table-ablation", "--out", str(tmp_path)])
    out = capsys.readouterr().out.splitlines()
    i = next(i for i, ln in enumerate(out) if "layer mappings proven optimal" in ln)
    assert out[i].endswith("layer mappings proven optimal, over the space on its best designs:")
    assert out[i + 1].startswith(f"    {PREFIX}: edp over divisor tilings, coexplore accounting, bypass searched, "
                                 "no constraints;")
    res = json.loads((tmp_path / "results.json").read_text())
    assert shi2020.announced_scopes(res).lines() == [out[i + 1].strip()]


def test_the_tables_proof_scope_is_computed_from_the_mappers_the_steps_ran(monkeypatch):
    """table.md's "proven optimal" sentence is each step's mapper's scope on its design,
    not typed: the committed run's baseline proves within the row-stationary set and the
    other steps without constraints; a baseline mapped without the row-stationary rule
    joins the other steps' scope."""
    results = json.loads((RESULTS / "results.json").read_text())
    sentence = shi2020.scope_sentence(shi2020.table_scopes(results))
    base, rest = sentence.split("]; ", 1)
    assert base.endswith("constraints row-stationary; spatial: every divisor unrolling within each fanout; "
                         "loop orders: every order at every level (exact order search at each leaf)")
    assert "the baseline [" in base and rest.startswith("the software-only step, the searches, the final re-maps [")
    assert "no constraints" in rest and "row-stationary" not in rest
    monkeypatch.setattr(shi2020, "RS_MAPPER", {"name": "exact"})
    changed = shi2020.scope_sentence(shi2020.table_scopes(results))
    assert "]; " not in changed and "row-stationary" not in changed
    assert changed.split(": ", 1)[1] == "the baseline, " + rest


def test_each_table_states_the_proof_scope_of_its_own_rows():
    """The ablation table's "proven optimal" column and the baseline check's "row-stationary
    optimum" each state their space beside them (issue 45 item 3), computed: the ablation's
    from its own rows' mappers and designs (table_scopes of that table alone), the check's
    from the check's mapper on AlexNet's layers (within the row-stationary set)."""
    results = json.loads((RESULTS / "results.json").read_text())
    main = shi2020.scope_sentence(shi2020.table_scopes(results, ("workloads",)))
    ablation = shi2020.scope_sentence(shi2020.table_scopes(results, ("ablation_table",)))
    assert main == shi2020.scope_sentence(shi2020.table_scopes(results))    # the same spaces here
    assert "the searches" in ablation and "constraints row-stationary" in ablation
    no_ablation = dict(results, ablation_table={})
    assert shi2020.scope_sentence(shi2020.table_scopes(no_ablation, ("ablation_table",))).endswith(
        "nothing (no step claims a proof)")
    check = shi2020.scope_sentence(shi2020.rs_check_scopes(), "the mapper the check ran")
    assert check.startswith("Proven optimal (computed from the mapper the check ran, no padded edge tiles): "
                            "the RS check [edp over divisor tilings, coexplore accounting, bypass searched, "
                            "constraints row-stationary;")
    table = (RESULTS / "table.md").read_text().split("\n\n")
    assert any(p.startswith("Ablation: ") and p.endswith(f"{ablation}.") for p in table)
    assert any(p.startswith("Baseline check: ") and p.endswith(f"{check}.") for p in table)


def test_the_search_limit_is_what_the_committed_records_choose():
    """MAX_NODES is the limit issue 42's rule picks from its two committed records (the
    figure computes the verdict): the fast default's where the rule holds, else 3 M."""
    from experiments.figures import benchmarks
    from mappers.anytime import ANYTIME_NODES

    root = Path(__file__).resolve().parents[3]
    holds = "The rule holds on every workload" in benchmarks.inner_mapper_choice(root)
    assert shi2020.MAX_NODES == (ANYTIME_NODES if holds else 3_000_000)
