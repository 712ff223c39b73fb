"""evaluators.ppr.networkx_cpu: the NetworkX-style CPU code computes exactly what the
vectorized CSR code computes (it differs only in cost), on small graphs and on cora."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from evaluators.ppr import from_networkx, load_graph, local_ppr, meloppr, synthetic_powerlaw
from evaluators.ppr.networkx_cpu import (
    local_ppr_networkx,
    meloppr_networkx,
    subgraph_csr,
    to_networkx,
)


@pytest.fixture(scope="module")
def graphs():
    karate = from_networkx(nx.karate_club_graph(), "karate")
    loops = from_networkx(nx.Graph([(0, 0), (0, 1), (1, 2), (2, 2), (2, 3), (3, 4), (5, 6)]), "loops")
    return [karate, loops, synthetic_powerlaw(400, 1100, seed=5), load_graph("cora")]


def test_to_networkx_keeps_every_edge_and_self_loop(graphs):
    for g in graphs:
        G = to_networkx(g)
        assert sorted(G.nodes) == list(range(g.n))
        assert G.number_of_edges() == g.m and nx.number_of_selfloops(G) == g.n_selfloops
        back = from_networkx(G)
        assert (back.adj != g.adj).nnz == 0


def test_subgraph_csr_is_the_bfs_ball_and_its_induced_adjacency(graphs):
    from evaluators.ppr import bfs_ball, induced

    g = graphs[3]
    G = to_networkx(g)
    for s in (0, 17, 1000):
        for d in (0, 1, 3):
            nodes, a = subgraph_csr(G, s, d)
            assert nodes[0] == s and set(nodes) == set(bfs_ball(g, s, d).tolist())
            assert (a != induced(g, np.asarray(nodes))).nnz == 0


def test_local_ppr_networkx_equals_csr_version(graphs):
    for g in graphs:
        G = to_networkx(g)
        for s in (0, 3, g.n - 1):
            for L in (1, 3, 6):
                want = local_ppr(g, s, L=L).dense(g.n)
                got = local_ppr_networkx(G, s, L=L)
                np.testing.assert_allclose(got.dense(g.n), want, rtol=0, atol=1e-14)
                assert got.stats.stage_sizes == local_ppr(g, s, L=L).stats.stage_sizes


@pytest.mark.parametrize(("next_stage", "c", "k"), [(None, None, 200), (1, 10, 200), (4, 10, 200),
                                                     (13, 1, 20), (None, 2, 10), (0, None, 200)])
def test_meloppr_networkx_equals_csr_version(graphs, next_stage, c, k):
    """Same next-stage order and table admission: the same nodes and scores (to rounding),
    even when a small table refuses most nodes."""
    for g in graphs if next_stage is not None else graphs[:2]:  # every next-stage node: small graphs
        G = to_networkx(g)
        for s in (0, 5, g.n // 2):
            want = meloppr(g, s, next_stage=next_stage, c=c, k=k)
            got = meloppr_networkx(G, s, next_stage=next_stage, c=c, k=k)
            assert set(got.nodes.tolist()) == set(want.nodes.tolist()), (g.name, s)
            np.testing.assert_allclose(got.dense(g.n), want.dense(g.n), rtol=0, atol=1e-13)
            for key in ("next_stage_used", "nonzero_residual", "table_entries", "refused"):
                assert got.stats.extra[key] == want.stats.extra[key], (g.name, s, key)
            assert got.stats.stage_sizes == want.stats.stage_sizes


def test_stats_and_errors(graphs):
    G = to_networkx(graphs[0])
    r = meloppr_networkx(G, 0, next_stage=3, trace_memory=True)
    assert r.stats.tracemalloc_peak_bytes > 0 and r.stats.cpu_s > 0
    assert r.stats.wall_s >= r.stats.bfs_s + r.stats.diffusion_s - 1e-9
    assert local_ppr_networkx(G, 0).stats.tracemalloc_peak_bytes is None
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="next_stage"):
            meloppr_networkx(G, 0, next_stage=bad)
    with pytest.raises(ValueError, match="l1"):
        meloppr_networkx(G, 0, l1=0)
