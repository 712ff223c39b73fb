"""experiments.reproduce.meloppr: the pieces on a small graph (fast) and the --quick run
end to end (slow)."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

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


def test_measure_and_summaries(g):
    sources = [0, 5, 17, 42]
    meas = rep.measure_graph(g, sources, [1, 4, 40], k=20, memory=True)
    assert len(meas["base"]["lat_ms"]) == len(meas["base"]["mem_kib"]) == 4
    cpu = rep.summarize_cpu(meas, [1, 4, 40])
    per = cpu["per_ns"]
    assert per[40]["prec_k"] >= per[1]["prec_k"]  # more next-stage nodes, better precision
    for d in per.values():
        assert 0 <= d["prec_k"] <= d["prec_min"] + 1e-12 <= 1 + 1e-12
        assert d["speedup"] == pytest.approx(cpu["baseline_lat_ms"] / d["lat_ms"])
        assert d["mem_reduction"] == pytest.approx(cpu["baseline_mem_kib"] / d["mem_kib"])
    # each query's sub-graphs: the stage-1 ball, then one ball per next-stage node used
    r = meas["rows"][4]
    assert [len(s) for s in r["subs"]] == [1 + u for u in r["used"]]
    from accelerators.ppr_fpga import PPRFpgaEngine

    fp = rep.fpga_figures(PPRFpgaEngine(), meas, [1, 4, 40])
    assert fp["per_ns"][40]["latency_ms"] > fp["per_ns"][1]["latency_ms"] > 0
    assert fp["per_ns"][1]["speedup_fpga_busy_only"] > fp["per_ns"][1]["speedup_vs_cpu_baseline"]


def test_at_targets_picks_the_first_count_reaching_the_target():
    cpu = {"per_ns": {1: {"prec_pprpy": 0.7, "speedup": 2.0}, 3: {"prec_pprpy": 0.82, "speedup": 1.0},
                      13: {"prec_pprpy": 0.88, "speedup": 0.5}}}
    t = rep.at_targets(cpu)
    assert t[0.8] == {"ns": 3, "speedup": 1.0, "prec": 0.82}
    assert t[0.9] == {"ns": None, "speedup": None, "best_prec": 0.88, "best_ns": 13}


def test_fraction_curve_and_fig5(g):
    fr = rep.fraction_curve(g, [0, 3, 9], [0.02, 1.0], k=20)
    assert fr[1.0]["prec_k"] >= fr[0.02]["prec_k"]
    f5 = rep.fig5(g, (1, 2, 16))
    assert f5["ms"][1] > f5["ms"][2] > f5["ms"][16]
    assert 0 < f5["overhead"][2] < f5["overhead"][16] < 0.4


def test_table_has_paper_ours_command_and_escapes_pipes(g, tmp_path):
    meas = rep.measure_graph(g, [0, 1], [1, 13], k=20)
    cpu = rep.summarize_cpu(meas, [1, 13])
    from accelerators.ppr_fpga import PPRFpgaEngine

    res = {"exactness": {"cora": 1e-16},
           "graphs": {"cora": {"key": "cora", "synthetic": False, "scale": 1.0, "cpu": cpu,
                               "targets": rep.at_targets(cpu),
                               "fpga": rep.fpga_figures(PPRFpgaEngine(), meas, [1, 13])}},
           "resources": {16: PPRFpgaEngine().utilization()}, "fig5": rep.fig5(g, (1, 2, 16))}
    path = tmp_path / "t.md"
    rep.write_table(res, path, "coexplore reproduce meloppr")
    lines = path.read_text().splitlines()
    assert lines[0] == "| quantity | graph | paper | ours | command | note |"
    for line in lines[2:]:
        assert line.replace("\\|", "").count("|") == 7, line
        assert "`coexplore reproduce meloppr`" in line
    text = path.read_text()
    assert "4.18x" in text and "0.89" in text and "70.6%" in text  # paper values shown


@pytest.mark.slow
def test_quick_reproduction_end_to_end(tmp_path):
    from evaluators.ppr import shared_graph_path

    out = tmp_path / "meloppr"
    res = rep.main(["--quick", "--out", str(out)])
    data = json.loads((out / "results.json").read_text())
    assert (out / "table.md").exists()
    assert data["settings"]["quick"] is True
    have = [n for n in rep.PLANETOID if shared_graph_path(n).exists()]
    for name in have:
        assert res["exactness"][name] < 1e-12
        assert name in data["graphs"]
    syn = [k for k, v in data["graphs"].items() if v["synthetic"]]
    assert len(syn) == 3 and all(k.startswith("synthetic-") for k in syn)
    if "cora" in have:
        cd = data["codesign"]
        assert cd["front_size"] >= 1 and np.isfinite(cd["paper_point_metrics"]["precision"])
        assert (out / "codesign_front_vs_paper.png").exists()
