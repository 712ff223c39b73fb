"""evaluators.ppr.native: the compiled extractor returns exactly the BFS balls and induced
sub-graphs of the numpy code, and the host calibration fits each extractor."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from accelerators.ppr_fpga import HostModel
from evaluators.ppr import bfs_ball, from_networkx, induced, load_graph, synthetic_powerlaw
from evaluators.ppr.engine_evaluator import HOST_EXTRACTORS, calibrate_host
from evaluators.ppr.native import NativeExtractor


@pytest.fixture(scope="module")
def graphs():
    karate = from_networkx(nx.karate_club_graph(), "karate")
    # self-loops, a path and an isolated pair: BFS must stop at the component's edge
    odd = from_networkx(nx.Graph([(0, 0), (0, 1), (1, 2), (2, 2), (2, 3), (3, 4), (5, 6)]), "odd")
    return [karate, odd, load_graph("citeseer"), synthetic_powerlaw(2000, 6000, seed=2)]


def test_balls_and_subgraphs_equal_the_numpy_code(graphs):
    for g in graphs:
        ex = NativeExtractor(g)
        rng = np.random.default_rng(0)
        for s in rng.choice(g.n, size=min(g.n, 8), replace=False).tolist():
            for depth in (0, 1, 2, 3, 6):
                want, want_depth = bfs_ball(g, s, depth, return_depth=True)
                nodes, a = ex.extract(s, depth)
                assert nodes[0] == s and nodes.size == want.size
                assert set(nodes.tolist()) == set(want.tolist())
                # BFS order: hop distance never decreases along the ball
                dist = dict(zip(want.tolist(), want_depth.tolist()))
                assert np.all(np.diff([dist[v] for v in nodes.tolist()]) >= 0)
                assert (a != induced(g, nodes)).nnz == 0
                assert np.array_equal(ex.ball(s, depth), nodes)


def test_scratch_is_reset_between_calls(graphs):
    g = graphs[2]
    ex = NativeExtractor(g)
    first = ex.extract(0, 3)[0]
    other = ex.extract(1, 2)[0]
    again = ex.extract(0, 3)[0]
    assert np.array_equal(first, again)
    assert set(other.tolist()) == set(bfs_ball(g, 1, 2).tolist())


def test_errors_name_the_value(graphs):
    ex = NativeExtractor(graphs[0])
    with pytest.raises(IndexError, match="source 34"):
        ex.extract(34, 1)
    with pytest.raises(ValueError, match="depth must be >= 0, got -1"):
        ex.ball(0, -1)


@pytest.mark.parametrize("kind", HOST_EXTRACTORS)
def test_calibrate_host_each_extractor(graphs, kind):
    h = calibrate_host(graphs[0], n_sources=4, depths=(1, 3), repeats=1, extractor=kind)
    assert isinstance(h, HostModel)
    assert min(h.cpu_us_per_subgraph, h.cpu_us_per_hop, h.cpu_ns_per_entry) >= 0
    assert h.cpu_us(100, 300, 3) > 0
    # the native and NetworkX extractions produce the PE tables themselves
    assert (h.cpu_ns_per_format_word == 0) == (kind != "numpy")


def test_calibrate_host_rejects_unknown_extractor(graphs):
    with pytest.raises(ValueError, match="extractor must be one of"):
        calibrate_host(graphs[0], extractor="fortran")
