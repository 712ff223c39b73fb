"""evaluators.ppr.engine_evaluator: scoring joint FPGA x MeLoPPR-plan points."""

from __future__ import annotations

import cloudpickle
import networkx as nx
import numpy as np
import pytest

from accelerators.ppr_fpga import HostModel, PPRFpgaEngine
from evaluators import Infeasible
from evaluators.ppr import load_edgelist, local_ppr, meloppr, precision_at_k
from evaluators.ppr.engine_evaluator import (
    MeLoPPRCoDesign,
    baseline_subgraph,
    calibrate_host,
    int_quantum,
    meloppr_subgraphs,
)
from mappers.ppr_plan import codesign_space

PAPER = {"n_pes": 16, "bram_words_per_table": 8192, "int_bits": 32, "clock_mhz": 100.0, "L": 6,
         "l1": 3, "ns_mode": "count", "ns_count": 13, "c": 10, "k": 200, "pe_assignment": "split"}


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    """A 600-node heavy-tailed graph as an edge list (no shared data needed)."""
    G = nx.powerlaw_cluster_graph(600, 2, 0.3, seed=4)
    p = tmp_path_factory.mktemp("g") / "toy_adj.txt"
    p.write_text("".join(f"{u}\t{v}\n{v}\t{u}\n" for u, v in G.edges()))
    return p


@pytest.fixture(scope="module")
def ev(graph_file):
    return MeLoPPRCoDesign(str(graph_file), n_queries=8, query_seed=3)


def test_metrics_match_a_direct_computation(ev, graph_file):
    point = dict(PAPER, k=20, ns_count=4)
    r = ev(point)
    m = r.metrics
    g = load_edgelist(graph_file)
    src = np.random.default_rng(3).choice(g.n, 8, replace=False)
    assert np.array_equal(ev.sources, src)
    q = int_quantum(32)
    precs, lats = [], []
    engine = PPRFpgaEngine.from_point(point)
    for s in src.tolist():
        est = meloppr(g, s, next_stage=4, c=10, k=20, quantum=q, record_subgraphs=True)
        precs.append(precision_at_k(est.top(20), local_ppr(g, s).top(20), 20))
        lats.append(engine.query_latency(meloppr_subgraphs(est, 3, 3), "split", 200).latency_ms)
    assert m["precision"] == pytest.approx(np.mean(precs))
    assert m["latency_ms"] == pytest.approx(np.mean(lats))
    assert m["bram36"] == engine.resources()["bram36"] == 16 * 20 + 1  # c*k = 200: 1 BRAM36
    assert 0 <= m["precision"] <= 1 and m["subgraphs"] == 5
    assert m["latency_ms"] >= m["cpu_ms"] > 0 and m["fpga_ms"] > 0
    assert r.info["n_queries"] == 8 and r.feasible


def test_all_next_stage_nodes_without_quantization_is_exact(graph_file):
    ev = MeLoPPRCoDesign(str(graph_file), n_queries=6, quantize=False)
    m = ev(dict(PAPER, k=20, ns_mode="fraction", ns_fraction=1.0, ns_count=None, c=100)).metrics
    assert m["precision"] == 1.0


def test_knobs_move_the_metrics_the_right_way(ev):
    few = ev(dict(PAPER, k=20, ns_count=1)).metrics
    many = ev(dict(PAPER, k=20, ns_count=24)).metrics
    assert many["precision"] > few["precision"]
    assert many["latency_ms"] > few["latency_ms"] and many["subgraphs"] > few["subgraphs"]
    narrow = ev(dict(PAPER, k=20, int_bits=16)).metrics
    assert narrow["precision"] < ev(dict(PAPER, k=20)).metrics["precision"]
    small = ev(dict(PAPER, k=20, n_pes=2)).metrics
    assert small["bram36"] < ev(dict(PAPER, k=20)).metrics["bram36"]


def test_hardware_only_changes_reuse_the_software_cache(graph_file):
    ev = MeLoPPRCoDesign(str(graph_file), n_queries=4)
    ev(PAPER)
    n = len(ev._soft)
    for P in (1, 2, 4, 8):
        for a in ("split", "round_robin", "least_loaded"):
            ev(dict(PAPER, n_pes=P, pe_assignment=a))
    assert len(ev._soft) == n == 1
    ev(dict(PAPER, c=4))
    assert len(ev._soft) == 2
    # shipping to a worker carries the configuration, not the caches
    clone = cloudpickle.loads(cloudpickle.dumps(ev))
    assert clone._soft == {} and clone._g is None
    assert clone(PAPER).metrics == ev(PAPER).metrics


def test_infeasible_points(ev):
    with pytest.raises(Infeasible, match="does not fit") as exc:
        ev(dict(PAPER, n_pes=32))
    assert exc.value.constraints["lut_excess"] > 0
    with pytest.raises(Infeasible, match="on-chip tables") as exc:
        ev(dict(PAPER, n_pes=1, bram_words_per_table=64, int_bits=32, l1=5, ns_count=1))
    assert 0 < exc.value.constraints["capacity_violation"] <= 1
    out = ev.evaluate([PAPER, dict(PAPER, n_pes=32)])
    assert out[0].feasible and out[1].status.value == "infeasible" and "LUT" in out[1].reason


def test_bad_options_name_the_parameter(graph_file, tmp_path):
    with pytest.raises(ValueError, match="n_queries"):
        MeLoPPRCoDesign(str(graph_file), n_queries=0)
    with pytest.raises(ValueError, match="precision"):
        MeLoPPRCoDesign(str(graph_file), precision="f1")
    with pytest.raises(FileNotFoundError, match=r"graph 'cora'.*graph_dir"):
        MeLoPPRCoDesign("cora", graph_dir=str(tmp_path))
    with pytest.raises(ValueError, match="host"):
        MeLoPPRCoDesign(str(graph_file), host=3)
    assert MeLoPPRCoDesign(str(graph_file), host={"link_gb_per_s": 1.0}).host.link_gb_per_s == 1.0


def test_sampled_space_points_evaluate(ev):
    sp = codesign_space()
    ok = 0
    for p in sp.sample(6, seed=5):
        try:
            m = ev(dict(p, k=20)).metrics
        except Infeasible as e:
            assert e.reason
            continue
        ok += 1
        assert all(np.isfinite(v) for v in m.values())
    assert ok >= 1


def test_helpers(graph_file):
    g = load_edgelist(graph_file)
    sg = baseline_subgraph(g, 0, 6)
    assert sg.steps == 6 and sg.n_nodes == local_ppr(g, 0).nodes.size
    with pytest.raises(ValueError, match="record_subgraphs"):
        meloppr_subgraphs(meloppr(g, 0), 3, 3)
    assert int_quantum(None) is None and int_quantum(32) == 2.0**-30
    with pytest.raises(ValueError, match="int_bits"):
        int_quantum(2)
    h = calibrate_host(g, n_sources=3, depths=(1, 3), repeats=1)
    formatting_only = HostModel(cpu_us_per_subgraph=0, cpu_us_per_hop=0, cpu_ns_per_entry=0)
    assert isinstance(h, HostModel) and h.cpu_us(100, 300, 3) > formatting_only.cpu_us(100, 300, 3)
