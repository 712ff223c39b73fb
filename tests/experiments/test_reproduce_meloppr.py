"""experiments.reproduce.meloppr: the pieces on a small graph (fast) and the --quick run
end to end (slow)."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from accelerators.ppr_fpga import PPRFpgaEngine
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
    assert 0 < f5["overhead"][2] < f5["overhead"][16] < 0.4


def test_cached_results_round_trip(tmp_path):
    res = {"cpu": {"per_ns": {1: {"speedup": 2.0}, 13: {"speedup": 0.5}}},
           "targets": {0.8: {"ns": 3}, 0.9: {"ns": None}}, "fig6": {"ball": {0.01: {"prec_k": 0.5}}},
           "key": "cora", "n": 2708}
    sig = {"graph": "cora", "sources": 100}
    path = tmp_path / "graphs" / "cora.json"
    rep._store(path, sig, res)
    assert rep._cached(path, sig) == res
    assert rep._cached(path, {**sig, "sources": 10}) is None  # other settings: recomputed
    assert rep._cached(tmp_path / "none.json", sig) is None


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
    cd = data["codesign"]
    assert cd["front_size"] >= 1 and np.isfinite(cd["paper_point_metrics"]["precision"])
    assert (out / "codesign_front_vs_paper.png").exists()
    # a second run keeps the finished graphs instead of measuring them again
    again = rep.main(["--quick", "--out", str(out), "--no-synthetic", "--codesign-trials", "0"])
    assert again["graphs"]["cora"] == res["graphs"]["cora"]
