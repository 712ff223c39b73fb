"""experiments.reproduce.meloppr: the pieces on a small graph (fast) and the --quick run
end to end (slow)."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from accelerators.ppr_fpga import PPRFpgaEngine
from experiments.records import RecordStore
from experiments.reproduce import REPRODUCTIONS
from experiments.reproduce import meloppr as rep


@pytest.fixture(scope="module")
def g():
    from evaluators.ppr import from_networkx

    return from_networkx(nx.powerlaw_cluster_graph(400, 2, 0.3, seed=2), "toy")


def test_registered():
    assert "meloppr" in REPRODUCTIONS and callable(rep.main)


def test_exactness_is_rounding_error(g):
    assert rep.exactness(g, [0, 7, 99]) < 1e-12


def _engines():
    from accelerators.ppr_fpga import NUMPY_HOST, HostModel, PPRFpgaEngine

    return {"native": PPRFpgaEngine(), "numpy": PPRFpgaEngine(host=NUMPY_HOST),
            "networkx": PPRFpgaEngine(host=HostModel(cpu_us_per_subgraph=100.0, cpu_ns_per_entry=2000.0))}


def test_measure_and_summaries(g):
    from evaluators.ppr.networkx_cpu import to_networkx

    sources = [0, 5, 17, 42]
    meas = rep.measure_graph(g, sources, [1, 4, 40], k=20, memory=True, nx_graph=to_networkx(g),
                             nx_sources=3, nx_ns=[1, 4])
    assert len(meas["base"]["lat_ms"]) == len(meas["base"]["mem_kib"]) == 4
    assert len(meas["base"]["nx_lat_ms"]) == len(meas["base"]["nx_mem_kib"]) == meas["nx_sources"] == 3
    assert len(meas["rows"][4]["nx_lat_ms"]) == 3 and meas["rows"][40]["nx_lat_ms"] == []
    cpu = rep.summarize_cpu(meas, [1, 4, 40])
    per = cpu["per_ns"]
    assert per[40]["prec_k"] >= per[1]["prec_k"]  # more next-stage nodes, better precision
    for d in per.values():
        assert 0 <= d["prec_k"] <= d["prec_min"] + 1e-12 <= 1 + 1e-12
        assert d["speedup"] == pytest.approx(cpu["baseline_lat_ms"] / d["lat_ms"])
        assert d["mem_reduction"] == pytest.approx(cpu["baseline_mem_kib"] / d["mem_kib"])
    b = meas["base"]
    assert per[4]["speedup_nx"] == pytest.approx(np.mean(b["nx_lat_ms"]) / np.mean(meas["rows"][4]["nx_lat_ms"]))
    assert cpu["baseline_nx_over_scipy_lat"] == pytest.approx(np.mean(b["nx_lat_ms"]) / np.mean(b["lat_ms"][:3]))
    assert "speedup_nx" not in per[40]
    # each query's sub-graphs: the stage-1 ball, then one ball per next-stage node used
    r = meas["rows"][4]
    assert [len(s) for s in r["subs"]] == [1 + u for u in r["used"]]
    fp = rep.fpga_figures(_engines(), meas, [1, 4, 40])
    one, many = fp["per_ns"][1], fp["per_ns"][40]
    assert many["latency_ms"] > one["latency_ms"] > 0
    assert one["fpga_only_vs_scipy"] > one["speedup_vs_scipy"]
    # a slower host can only slow the query down: native < numpy, native < NetworkX-like
    assert one["speedup_vs_scipy"] > one["speedup_vs_scipy_numpy_host"]
    assert one["speedup_vs_nx"] > one["speedup_vs_nx_networkx_host"]
    native = [_engines()["native"].query_latency(subs, "split", result_entries=rep.C * rep.K).latency_ms
              for subs in meas["rows"][1]["subs"]]
    assert one["latency_ms"] == pytest.approx(np.mean(native))
    assert one["speedup_vs_nx"] == pytest.approx(np.mean(b["nx_lat_ms"]) / np.mean(native[:3]))
    t = rep.at_targets(cpu, key="prec_k", targets=(0.0,), fpga=fp)[0.0]
    assert t["ns"] == 1 and t["fpga_speedup_vs_scipy"] == one["speedup_vs_scipy"]


def test_at_targets_picks_the_first_count_reaching_the_target():
    cpu = {"per_ns": {1: {"prec_pprpy": 0.7, "speedup": 2.0}, 3: {"prec_pprpy": 0.82, "speedup": 1.0},
                      13: {"prec_pprpy": 0.88, "speedup": 0.5}}}
    t = rep.at_targets(cpu)
    assert t[0.8] == {"ns": 3, "speedup": 1.0, "prec": 0.82}
    assert t[0.9] == {"ns": None, "speedup": None, "best_prec": 0.88, "best_ns": 13}


def test_fraction_curves_rules_and_fig5(g):
    fr = rep.fraction_curves(g, [0, 3, 9], [0.02, 1.0], k=20)
    assert set(fr) == set(rep.FIG6_RULES)
    for rule in rep.FIG6_RULES:
        assert fr[rule][1.0]["prec_k"] >= fr[rule][0.02]["prec_k"]
        assert set(fr[rule][0.02]) == {*rep.FIG6_METRICS, "used"}
    # 100 % of any set means every non-zero-residual node: the three rules agree
    assert fr["residual"][1.0] == fr["ball"][1.0] == fr["graph"][1.0]
    # 2 % of the whole graph is at least as many nodes as 2 % of the stage-1 ball
    assert fr["graph"][0.02]["used"] >= fr["ball"][0.02]["used"] >= fr["residual"][0.02]["used"] >= 1
    with pytest.raises(ValueError, match="unknown rules"):
        rep.fraction_curves(g, [0], [0.1], rules=("everything",))
    f5 = rep.fig5(g, (1, 2, 16))
    assert f5["ms"][1] > f5["ms"][2] > f5["ms"][16]
    # the RTL-checked model's stalls (the paper's Fig. 5 bounds, < 20 % / < 40 %, do not
    # hold for the authors' RTL: docs/validation/meloppr_rtl.md)
    assert f5["overhead"][1] == 0 and f5["overhead"][2] > 0 and f5["overhead"][16] > 0


def test_cached_results_round_trip(tmp_path):
    res = {"cpu": {"per_ns": {1: {"speedup": 2.0}, 13: {"speedup": 0.5}}},
           "targets": {0.8: {"ns": 3}, 0.9: {"ns": None}}, "fig6": {"ball": {0.01: {"prec_k": 0.5}}},
           "key": "cora", "n": 2708}
    sig = {"graph": "cora", "sources": 100}
    store = RecordStore(tmp_path / "records")
    rep._store(store, rep.KINDS["graph"], sig, {**res, "seconds": 2.5}, cpu_s=2.0)
    assert rep._cached(store, rep.KINDS["graph"], sig) == {**res, "seconds": 2.5}
    assert rep._cached(store, rep.KINDS["graph"], {**sig, "sources": 10}) is None  # other settings: recomputed
    assert rep._cached(RecordStore(tmp_path / "none"), rep.KINDS["graph"], sig) is None
    rep._store(store, rep.KINDS["graph"], sig, {**res, "seconds": 2.5, "table_bound": {}})   # an update
    rec = store.record(rep.KINDS["graph"], sig)
    assert rec.value["table_bound"] == {} and rec.wall_s == 2.5 and rec.cpu_s == 2.0
    assert len(store.keys()) == 1


def test_table_has_paper_ours_command_and_escapes_pipes(g, tmp_path):
    from evaluators.ppr.networkx_cpu import to_networkx

    meas = rep.measure_graph(g, [0, 1], [1, 13], k=20, nx_graph=to_networkx(g))
    cpu = rep.summarize_cpu(meas, [1, 13])
    fp = rep.fpga_figures(_engines(), meas, [1, 13])
    res = {"exactness": {"cora": 1e-16},
           "graphs": {"cora": {"key": "cora", "synthetic": False, "scale": 1.0, "n": g.n, "m": g.m,
                               "sources": 2, "cpu": cpu, "targets": rep.at_targets(cpu, fpga=fp), "fpga": fp}},
           "fig6": {"residual": {0.01: {"prec_k": 0.5, "prec_pprpy": 0.6, "prec_min": 0.55, "used": 1.0}}},
           "resources": {16: PPRFpgaEngine().utilization()}, "fig5": rep.fig5(g, (1, 2, 16))}
    path = tmp_path / "t.md"
    rep.write_table(res, path, "coexplore reproduce meloppr")
    lines = path.read_text().splitlines()
    assert lines[0] == "| quantity | graph | paper | ours | command | note |"
    for line in lines[2:]:
        assert line.replace("\\|", "").count("|") == 7, line
        assert "`coexplore reproduce meloppr`" in line
    text = path.read_text()
    assert "4.18x" in text and "0.89" in text and "70.6%" in text and "0.738" in text  # paper values shown
    # every speed and memory row gives both baselines
    for line in lines:
        if "speedup vs" in line or "memory reduction" in line:
            assert "NetworkX" in line and "scipy" in line, line


@pytest.mark.slow
def test_quick_reproduction_end_to_end(tmp_path):
    """The --quick run on a bare checkout: the packaged graphs, both CPU baselines, three
    host models, Fig. 6 side by side, the synthetic stand-ins and the co-design."""
    out = tmp_path / "meloppr"
    res = rep.main(["--quick", "--out", str(out)])
    data = json.loads((out / "results.json").read_text())
    assert (out / "table.md").exists() and (out / "fig6_rules.png").exists()
    assert data["settings"]["quick"] is True
    assert set(data["host_models"]) == {"native", "numpy", "networkx"}
    for name in rep.PLANETOID:
        assert res["exactness"][name] < 1e-12
        gr = data["graphs"][name]
        assert gr["sources"] == 10
        assert gr["cpu"]["nx_sources"] == (rep.LARGE_GRAPH_NX_SOURCES if name == "pubmed" else 10)
        assert gr["cpu"]["per_ns"]["1"]["speedup_nx"] > 0 and gr["fpga"]["per_ns"]["1"]["speedup_vs_nx"] > 0
    assert set(data["fig6"]) == set(rep.FIG6_RULES)
    syn = [k for k, v in data["graphs"].items() if v["synthetic"]]
    assert len(syn) == 3 and all(k.startswith("synthetic-") for k in syn)
    # the full run finds the stand-ins' operating points too, under both rules
    sop = data["synthetic_operating_points"]["graphs"]
    assert set(sop) == set(syn) and all(set(o["points"]) == set(o["unbounded"]["points"]) == {"0.8", "0.9"}
                                        for o in sop.values())
    cd = data["codesign"]
    assert cd["front_size"] >= 1 and np.isfinite(cd["paper_point_metrics"]["precision"])
    assert (out / "codesign_front_vs_paper.png").exists()
    # a second run keeps the finished graphs instead of measuring them again
    again = rep.main(["--quick", "--out", str(out), "--no-synthetic", "--codesign-trials", "0"])
    assert again["graphs"]["cora"] == res["graphs"]["cora"]


def test_table_ladder_steps_fit_the_kc705_up_to_160():
    """TABLE_LADDER's bounded steps: the paper's 2,000-entry table is 4 BRAM36 (324 with
    16 PEs); c = 160 still fits the KC705 beside 16 PEs (63 BRAM36, 383 in all), the next
    step of 4 (640) does not (570: docs/reproduction/meloppr.md quotes both, and no record
    holds the step that was not run)."""
    assert rep.TABLE_LADDER[0] == rep.C and rep.TABLE_LADDER[-1] is None
    paper = rep.table_resources(rep.C * rep.K)
    assert (paper["table_bram36"], paper["bram36"], paper["fits_kc705"]) == (4, 324, True)
    bounded = [c for c in rep.TABLE_LADDER if c is not None]
    assert all(rep.table_resources(c * rep.K)["fits_kc705"] for c in bounded)
    last = rep.table_resources(bounded[-1] * rep.K)
    assert (bounded[-1], last["table_bram36"], last["bram36"]) == (160, 63, 383)
    beyond = rep.table_resources(4 * bounded[-1] * rep.K)
    assert (beyond["bram36"], beyond["fits_kc705"]) == (570, False)
    assert rep.table_resources(32000)["table_bram36"] > rep.table_resources(8000)["table_bram36"]


def test_synthetic_operating_points_rule_and_table_size(g):
    """The operating point is the first capacity of the ladder at which some count
    reaches the target, then the smallest such count; the table size it reports is
    c * k, or for an unbounded table the most entries any query filled."""
    from evaluators.ppr import local_ppr, meloppr, precision_at_k_pprpy
    from evaluators.ppr.networkx_cpu import to_networkx

    sources, k, ladder, counts, targets = [0, 5, 17, 42], 20, (1, 2, None), (1, 2, 4, 8, 16), (0.7, 0.78)
    truths = {s: local_ppr(g, s) for s in sources}

    def mean_prec(c, ns):
        return float(np.mean([precision_at_k_pprpy(meloppr(g, s, k=k, next_stage=ns, c=c), truths[s], k)
                              for s in sources]))

    brute = {c: {ns: mean_prec(c, ns) for ns in counts} for c in ladder}
    expected = {}
    for t in targets:
        c = next(c for c in ladder if max(brute[c].values()) >= t)
        expected[t] = ("unbounded" if c is None else c, min(ns for ns in counts if brute[c][ns] >= t))
    assert len({c for c, _ in expected.values()}) == 2  # the two targets need different tables here

    ops = rep.synthetic_operating_points(g, sources, _engines(), ns_values=counts, capacities=ladder,
                                         targets=targets, k=k, nx_graph=to_networkx(g), nx_sources=2, nx_max_ns=2)
    for t in targets:
        p = ops["points"][t]
        assert (p["c"], p["ns"]) == expected[t]
        assert p["prec"] >= t and p["prec"] == pytest.approx(brute[None if p["c"] == "unbounded" else p["c"]][p["ns"]])
        assert p["cpu"]["speedup"] > 0 and p["fpga"]["speedup_vs_scipy"] > 0 and p["cpu"]["mem_reduction"] > 0
        assert p["networkx"] == (p["ns"] <= 2) and ("speedup_nx" in p["cpu"]) == p["networkx"]
        assert p["fpga"]["speedup_vs_nx"] > 0  # the NetworkX baseline is measured whatever the count
        if p["c"] == "unbounded":
            filled = max(meloppr(g, s, k=k, next_stage=p["ns"], c=None).stats.extra["table_entries"] for s in sources)
            assert p["capacity"] is None and p["table"]["entries"] == filled
        else:
            assert p["capacity"] == p["table"]["entries"] == p["c"] * k
        assert p["table"] == rep.table_resources(p["table"]["entries"])
    # a capacity's sweep stops at the first count that reaches every target still open
    assert list(ops["search"]["unbounded"]) == [ns for ns in counts if ns <= expected[0.78][1]]
    assert list(ops["search"][1]) == list(counts)
    assert set(ops["points_prec_k"]) == set(targets)
    # the second rule: an unbounded table, the fewest next-stage nodes; a point measured
    # already is reused, the others are measured
    unb = rep.unbounded_operating_points(g, sources, _engines(), ops, targets=targets, k=k)
    for t in targets:
        p = unb["points"][t]
        assert (p["c"], p["ns"]) == ("unbounded", min(ns for ns in counts if brute[None][ns] >= t))
        assert p["prec"] == pytest.approx(brute[None][p["ns"]]) and p["capacity"] is None
        assert p.get("reused", False) == (ops["points"][t]["c"] == "unbounded" and ops["points"][t]["ns"] == p["ns"])
        assert p["cpu"]["speedup"] > 0 and p["table"]["entries"] > 0
    assert any(p.get("reused") for p in unb["points"].values())
    assert any(not p.get("reused") for p in unb["points"].values())
    # where the ladder never got to the unbounded table, its counts are swept here
    small = rep.synthetic_operating_points(g, sources, _engines(), ns_values=counts, capacities=(2,),
                                           targets=(0.7,), k=k, memory=False)
    assert "unbounded" not in small["search"]
    again = rep.unbounded_operating_points(g, sources, _engines(), small, targets=(0.7,), k=k, memory=False)
    assert again["points"][0.7]["ns"] == min(ns for ns in counts if brute[None][ns] >= 0.7)
    assert list(again["search"]) == [ns for ns in counts if ns <= again["points"][0.7]["ns"]]
    # an unreachable target is reported as such, with the best precision seen
    none = rep.synthetic_operating_points(g, sources[:2], _engines(), ns_values=(1, 2), capacities=(1,),
                                          targets=(1.01,), k=k, memory=False)
    assert none["points"][1.01]["ns"] is None and none["points"][1.01]["best_at"][0] == 1


def test_operating_point_rows_carry_their_own_command(g, tmp_path):
    from evaluators.ppr.networkx_cpu import to_networkx

    meas = rep.measure_graph(g, [0, 1], [1, 13], k=20, nx_graph=to_networkx(g))
    cpu = rep.summarize_cpu(meas, [1, 13])
    res = {"graphs": {"cora": {"key": "cora", "synthetic": False, "scale": 1.0, "n": g.n, "m": g.m, "sources": 2,
                               "cpu": cpu, "targets": rep.at_targets(cpu), "fpga": rep.fpga_figures(
                                   _engines(), meas, [1, 13])}}}
    before = tmp_path / "before.md"
    rep.write_table(res, before, "coexplore reproduce meloppr")
    ops = rep.synthetic_operating_points(g, [0, 5], _engines(), ns_values=(1, 4), capacities=(1, None),
                                         targets=(0.5,), k=20)
    ops.update(key="dblp", n=g.n, m=g.m, scale=1.0, date="2026-01-01")
    res["synthetic_operating_points"] = {"command": "coexplore reproduce meloppr --operating-points-only",
                                         "date": "2026-01-01", "graphs": {"synthetic-dblp": ops}}
    after = tmp_path / "after.md"
    rep.write_table(res, after, "coexplore reproduce meloppr")
    old, new = before.read_text().splitlines(), after.read_text().splitlines()
    assert new[: len(old)] == old  # merging the operating points changes no earlier row
    added = new[len(old):]
    assert len(added) >= 5
    for line in added:
        assert "`coexplore reproduce meloppr --operating-points-only`" in line and "SYNTHETIC" in line, line
        assert line.replace("\\|", "").count("|") == 7, line
    assert any("BRAM36" in line and "KC705" in line for line in added)


def test_operating_points_only_merges_into_a_finished_run(tmp_path):
    """--operating-points-only --merge-into DIR adds one key to DIR/results.json, costed
    with DIR's host models, and leaves every other figure there as it was."""
    from accelerators.ppr_fpga import HostModel

    done = tmp_path / "done"
    done.mkdir()
    host = HostModel(cpu_us_per_subgraph=7.0, cpu_ns_per_entry=9.0).__dict__
    before = {"settings": {"quick": False}, "exactness": {"cora": 1e-16}, "host_models": {"native": host},
              "graphs": {}}
    (done / "results.json").write_text(json.dumps(before, indent=1))
    with pytest.raises(SystemExit):
        rep.main(["--merge-into", str(done), "--out", str(tmp_path / "x")])  # needs --operating-points-only
    rep.main(["--operating-points-only", "--synthetic-graphs", "dblp", "--synthetic-scale", "0.003",
              "--synthetic-seeds", "2", "--no-networkx", "--merge-into", str(done), "--out", str(tmp_path / "o")])
    after = json.loads((done / "results.json").read_text())
    sop = after.pop("synthetic_operating_points")
    assert after == before
    assert sop["host_models"] == {"native": host} and sop["command"].endswith(f"--merge-into {done}")
    assert list(sop["graphs"]) == ["synthetic-dblp-x0.003"]
    table = (done / "table.md").read_text()
    assert "synthetic-dblp-x0.003 (SYNTHETIC" in table and f"--merge-into {done}`" in table
    # the finished run's rows keep its own command
    assert "| cora | exact (Eq. 8) | 1.0e-16 | `coexplore reproduce meloppr` |" in table


def test_old_graph_caches_convert_into_records(tmp_path):
    from experiments.reproduce.migrate_records import migrate_meloppr

    sig = {"graph": "cora", "sources": 100, "version": rep.CACHE_VERSION}
    res = {"cpu": {"per_ns": {"1": {"speedup": 2.0}}}, "seconds": 12.5}
    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "cora.json").write_text(json.dumps({"signature": sig, "result": res}))
    ops_sig = {"graph": "synthetic-dblp", "part": "unbounded"}
    (tmp_path / "graphs" / "synthetic-dblp-operating-points-unbounded.json").write_text(
        json.dumps({"signature": ops_sig, "result": {"points": {}}}))
    (tmp_path / "host_models.json").write_text(json.dumps({"native": {"cpu_us_per_subgraph": 1.0}}))
    store = migrate_meloppr(tmp_path)
    assert rep._cached(store, rep.KINDS["graph"], sig) == {"cpu": {"per_ns": {1: {"speedup": 2.0}}}, "seconds": 12.5}
    assert store.record(rep.KINDS["graph"], sig).wall_s == 12.5
    assert rep._cached(store, rep.KINDS["operating_points"], ops_sig) == {"points": {}}
    assert len(store.keys(rep.KINDS["hosts"])) == 1


# ----------------------------------------------------------------- the FPGA rerun (issue 48)

RESULTS_DIR = __import__("pathlib").Path(__file__).resolve().parents[3] / "docs/reproduction/results/meloppr"


def _engines_v1():
    from dataclasses import replace

    return {k: replace(e, cycle_model="v1") for k, e in _engines().items()}


def _toy_run(g):
    sources = [0, 5, 17, 42]
    meas = rep.measure_graph(g, sources, [1, 4], k=20, memory=False)
    return sources, meas, rep.summarize_cpu(meas, [1, 4])


def test_fpga_figures_from_given_latencies_equal_costing_them_there(g):
    _, meas, _ = _toy_run(g)
    for cap in (rep.C * rep.K, None):
        here = rep.fpga_figures(_engines(), meas, [1, 4], table_capacity=cap)
        lat = rep.fpga_latencies(_engines(), meas, [1, 4], table_capacity=cap)
        bare = {"base": {k: v for k, v in meas["base"].items() if k != "sub"},
                "rows": {ns: {k: v for k, v in r.items() if k != "subs"} for ns, r in meas["rows"].items()},
                "nx_sources": meas["nx_sources"]}
        assert rep.fpga_figures(_engines(), bare, [1, 4], table_capacity=cap, latencies=lat) == here
    # an unbounded table sends back what each query filled, so it differs from c*k's
    unb = rep.fpga_figures(_engines(), meas, [4], table_capacity=None)["per_ns"][4]
    assert unb["latency_ms"] != rep.fpga_figures(_engines(), meas, [4])["per_ns"][4]["latency_ms"]


def test_the_rerun_costs_queries_as_the_reproduction_does(g):
    """The rerun streams queries one at a time and summarizes against the CPU means; it
    must give the reproduction's figures for the same queries, under either model."""
    from evaluators.ppr import meloppr
    from evaluators.ppr.engine_evaluator import baseline_subgraph, meloppr_subgraphs
    from experiments.reproduce import meloppr_fpga_rerun as rr

    sources, meas, cpu = _toy_run(g)
    costs = rr._Costs({"v1": _engines_v1(), "rtl": _engines()})
    for s in sources:
        costs.base(baseline_subgraph(g, s, 6))
        for ns in (1, 4):
            est = meloppr(g, s, l1=3, l2=3, k=20, next_stage=ns, c=rep.C, record_subgraphs=True)
            costs.query(ns, meloppr_subgraphs(est, 3, 3), rep.C * rep.K)
    for model, eng in (("v1", _engines_v1()), ("rtl", _engines())):
        want = rep.fpga_figures(eng, meas, [1, 4])
        got = costs.figures(model, cpu, [1, 4], rep.C * rep.K)
        assert got.keys() == want.keys() and got["per_ns"].keys() == want["per_ns"].keys()
        for ns in (1, 4):
            assert got["per_ns"][ns] == pytest.approx(want["per_ns"][ns], rel=1e-12)
        assert got["baseline_on_fpga_ms"] == pytest.approx(want["baseline_on_fpga_ms"], rel=1e-12)
    c = {m: costs.cycles(m, 4) for m in ("v1", "rtl")}
    assert c["rtl"]["fpga_cycles"] != c["v1"]["fpga_cycles"]  # the two models do differ
    assert rr._ratios(c)["rtl_over_v1_cycles"] == c["rtl"]["fpga_cycles"] / c["v1"]["fpga_cycles"]
    # a changed committed figure is named
    bad = rr._compare(costs.figures("v1", cpu, [1], rep.C * rep.K)["per_ns"][1],
                      dict(rep.fpga_figures(_engines_v1(), meas, [1])["per_ns"][1], latency_ms=1.0), "x")
    assert len(bad) == 1 and bad[0].startswith("x.latency_ms")


def test_merge_puts_rtl_first_keeps_v1_beside_and_refuses_a_failed_check(g):
    from experiments.reproduce import jsonable
    from experiments.reproduce import meloppr_fpga_rerun as rr

    _, meas, cpu = _toy_run(g)
    fv1, frtl = rep.fpga_figures(_engines_v1(), meas, [1, 4]), rep.fpga_figures(_engines(), meas, [1, 4])
    res = json.loads(json.dumps(jsonable({
        "graphs": {"toy": {"cpu": cpu, "fpga": fv1, "targets": rep.at_targets(cpu, fpga=fv1),
                           "targets_prec_k": rep.at_targets(cpu, "prec_k", fpga=fv1)}},
        "fig5": rep.fig5(g, (1, 16), cycle_model="v1")})))
    out = json.loads(json.dumps(jsonable({
        "graphs": {"toy": {"fpga": frtl, "v1_matches_committed": True}},
        "fig5": {"rtl": rep.fig5(g, (1, 16)), "v1_matches_committed": True},
        "merge_command": "the command", "date": "2026-12-03", "cpu_s": 1.0})))
    merged = rr.merge(res, out)
    gr = merged["graphs"]["toy"]
    assert gr["fpga"] == out["graphs"]["toy"]["fpga"] and gr["fpga_v1"] == res["graphs"]["toy"]["fpga"]
    assert gr["targets_v1"] == res["graphs"]["toy"]["targets"]
    assert merged["fig5"] == out["fig5"]["rtl"] and merged["fig5_v1"] == res["fig5"]
    assert merged["fpga_rerun"]["cycle_model"] == "rtl" and merged["fpga_rerun"]["command"] == "the command"
    assert res["graphs"]["toy"]["fpga"] == json.loads(json.dumps(jsonable(fv1)))  # the input is not changed
    with pytest.raises(RuntimeError, match="already holds"):
        rr.merge(merged, out)
    out["graphs"]["toy"]["v1_matches_committed"] = False
    with pytest.raises(RuntimeError, match="differs from the committed"):
        rr.merge(res, out)


def test_the_rerun_refuses_merging_part_of_the_graphs(tmp_path):
    from experiments.reproduce import meloppr_fpga_rerun as rr

    with pytest.raises(SystemExit):
        rr.main(["--graphs", "cora", "--merge-into", str(tmp_path)])


def test_committed_table_is_rebuilt_byte_for_byte_from_committed_results(tmp_path):
    """docs/reproduction/results/meloppr/table.md is write_table of the committed
    results.json, the rerun's rtl FPGA figures included (their rows name the rerun)."""
    raw = json.loads((RESULTS_DIR / "results.json").read_text())
    rep.write_table(rep._restore_keys(raw), tmp_path / "table.md", "coexplore reproduce meloppr")
    committed = (RESULTS_DIR / "table.md").read_bytes()
    assert (tmp_path / "table.md").read_bytes() == committed
    text = committed.decode()
    rerun = raw["fpga_rerun"]
    assert rerun["cycle_model"] == "rtl" and f"`{rerun['command']}`" in text
    for name in ("citeseer", "cora", "pubmed"):
        new, old = raw["graphs"][name]["fpga"]["per_ns"]["1"], raw["graphs"][name]["fpga_v1"]["per_ns"]["1"]
        row = next(x for x in text.splitlines()
                   if x.startswith(f"| FPGA speedup vs CPU baseline, 1 next-stage node(s) (Fig. 7; model, P=16) | {name} |"))
        assert f"vs scipy: {new['speedup_vs_scipy']:.1f}x end to end" in row
        assert f"{new['speedup_vs_scipy']:.1f}" != f"{old['speedup_vs_scipy']:.1f}"  # the model changed them
        assert "FPGA cycle model rtl" in row and rerun["command"] in row
    for ops in raw["synthetic_operating_points"]["graphs"].values():
        for p in ops["points"].values():
            if p["ns"] is not None:
                assert f"vs scipy: {p['fpga']['speedup_vs_scipy']:.1f}x end to end ({p['fpga']['latency_ms']:.2f} ms" in text
