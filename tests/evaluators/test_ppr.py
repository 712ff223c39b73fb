"""Local PPR (evaluators.ppr): MeLoPPR's decomposition is exact, the BFS-ball truncation
is exact, forward push meets its bound, and the bookkeeping (table, next-stage, counts).

The Planetoid graphs (citeseer, cora, pubmed) ship with coexplore as package data, so no
test here skips for want of them.
"""

from __future__ import annotations

import gzip
import hashlib
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from evaluators.ppr import (
    ALPHA,
    GRAPH_DIR_ENV,
    PACKAGED_GRAPHS,
    PLANETOID_COUNTS,
    bfs_ball,
    diffuse,
    edge_count,
    forward_push,
    from_networkx,
    from_scipy,
    graph_dir,
    graph_path,
    induced,
    load_edgelist,
    load_graph,
    local_ppr,
    meloppr,
    power_iteration_ppr,
    precision_at_k,
    precision_at_k_pprpy,
    synthetic_like,
    synthetic_powerlaw,
)

_CACHE: dict = {}


def planetoid(name: str):
    if name not in _CACHE:
        _CACHE[name] = load_graph(name)
    return _CACHE[name]


@pytest.fixture(scope="module")
def karate():
    return from_networkx(nx.karate_club_graph(), "karate")


def whole_graph_diffusion(g, s, steps):
    e = np.zeros(g.n)
    e[s] = 1.0
    return diffuse(g.adj, e, steps, ALPHA, deg=g.deg)


# ---------------------------------------------------------------- graphs and loaders


#: sha256 of the uncompressed packaged edge lists (evaluators/ppr/data/README.md)
SHA256 = {
    "citeseer": "684969776f9f081debcec07958c09f9e536c02584b3066e36999171831dd008e",
    "cora": "14b91c0632f5050e8e0f6bf6175fcc5960ff04502517ecb83d59c01157649961",
    "pubmed": "4812b0d5c76677db05eec3c8c2f07fcaa1cde6fb5afb330b13224dbfeba72ef6",
}


@pytest.mark.parametrize("name", sorted(PLANETOID_COUNTS))
def test_planetoid_counts_match_table(name, monkeypatch):
    monkeypatch.delenv(GRAPH_DIR_ENV, raising=False)
    path = graph_path(name)
    assert path.name == f"{name}_adj.txt.gz" and path.parent.name == "data"
    with gzip.open(path, "rb") as fh:
        assert hashlib.sha256(fh.read()).hexdigest() == SHA256[name]
    g = planetoid(name)
    assert g.name == name and not g.synthetic
    assert (g.n, g.m) == PLANETOID_COUNTS[name]
    assert (g.adj != g.adj.T).nnz == 0
    assert np.array_equal(g.deg, np.asarray(g.adj.sum(axis=1)).ravel())
    assert g.n_selfloops == {"citeseer": 124, "cora": 0, "pubmed": 3}[name]


def test_packaged_graphs_are_declared_package_data():
    """The edge lists and their README are in pyproject's package-data, so an installed
    coexplore (not only a checkout) has them."""
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "evaluators.ppr"]
    files = sorted(p.name for p in (root / "evaluators" / "ppr" / "data").iterdir())
    assert {f"{n}_adj.txt.gz" for n in PACKAGED_GRAPHS} | {"README.md"} <= set(files)
    for f in files:
        assert any(fnmatch.fnmatch(f"data/{f}", pat) for pat in globs), f


def test_loader_remaps_ids_and_skips_comments(tmp_path):
    p = tmp_path / "toy_adj.txt"
    p.write_bytes(b"# comment\r\n10\t20\r\n20 10\n\n20\t30\n30 30\n")
    g = load_edgelist(p)
    assert g.name == "toy"
    assert g.node_ids.tolist() == [10, 20, 30]
    assert (g.n, g.m, g.n_selfloops) == (3, 3, 1)  # 10-20, 20-30, 30-30
    assert g.deg.tolist() == [1.0, 2.0, 2.0]  # a self-loop adds 1


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("1 2\n3\n", 2, "expected two integer node ids"),
        ("1 2\n# ok\n4 x\n", 3, "must be integers"),
        ("1 2 3\n", 1, "expected two integer node ids"),
        ("1 -2\n", 1, "negative"),
    ],
)
def test_loader_errors_name_file_and_line(tmp_path, text, line, what):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(ValueError, match=what) as exc:
        load_edgelist(p)
    assert f"{p}:{line}:" in str(exc.value)


def test_from_scipy_symmetrizes_and_counts_selfloops_once():
    a = sp.coo_array(([2.0, 1.0, 5.0], ([0, 1, 2], [1, 2, 2])), shape=(4, 4))
    g = from_scipy(a, "tiny")
    assert (g.adj != g.adj.T).nnz == 0 and set(g.adj.data.tolist()) == {1.0}
    assert (g.n, g.m, g.nnz) == (4, 3, 5)
    assert g.deg.tolist() == [1.0, 2.0, 2.0, 0.0]
    assert edge_count(g.adj) == 3
    # an isolated node has no out-edges: its walk stops, only the teleport term is left
    iso = local_ppr(g, 3)
    assert iso.scores == {3: pytest.approx(1 - ALPHA)}
    assert meloppr(g, 3, c=None).scores == iso.scores


def test_bfs_ball_and_induced_match_networkx(karate):
    G = nx.karate_club_graph()
    for s in (0, 16, 33):
        for depth in (0, 1, 2, 3):
            ball, d = bfs_ball(karate, s, depth, return_depth=True)
            ref = nx.single_source_shortest_path_length(G, s, cutoff=depth)
            assert ball[0] == s and len(set(ball.tolist())) == ball.size
            assert dict(zip(ball.tolist(), d.tolist())) == ref
            sub = induced(karate, ball)
            want = nx.to_scipy_sparse_array(G, nodelist=ball.tolist(), weight=None)
            assert (sub != want).nnz == 0
            assert edge_count(sub) == G.subgraph(ball.tolist()).number_of_edges()


def test_synthetic_powerlaw_sizes_and_tail():
    g = synthetic_powerlaw(3000, 8000, seed=1, name="syn")
    assert g.synthetic and g.n == 3000
    assert g.m == 8000  # exactly the edges asked for, and no node isolated
    assert g.deg.min() >= 1
    assert g.deg.max() > 8 * g.deg.mean()  # heavy tail
    assert np.array_equal(synthetic_powerlaw(3000, 8000, seed=1).adj.indices, g.adj.indices)
    small = synthetic_like("amazon", seed=0, scale=0.005)
    assert small.name == "synthetic-amazon-x0.005" and small.synthetic
    assert (small.n, small.m) == (round(334863 * 0.005), round(925872 * 0.005))
    assert small.deg.min() >= 1


# ---------------------------------------------------------------- exactness


def test_local_ppr_is_whole_graph_diffusion_truncated(karate):
    for g in (karate, planetoid("cora")):
        for s in (0, 5, g.n - 1):
            for L in (1, 2, 4, 6):
                res = local_ppr(g, s, L=L)
                S, R = whole_graph_diffusion(g, s, L)
                np.testing.assert_allclose(res.dense(g.n), S, rtol=0, atol=1e-15)
                np.testing.assert_allclose(res.residual_dense(g.n), R, rtol=0, atol=1e-15)
                # nothing outside the ball: the truncation loses no mass
                assert S.sum() == pytest.approx(1.0, abs=1e-12)
                assert np.count_nonzero(S) == res.nodes.size
                # the induced sub-graph's own degrees give the same result on the ball
                ball = bfs_ball(g, s, L)
                e = np.zeros(ball.size)
                e[0] = 1.0
                S_sub, _ = diffuse(induced(g, ball), e, L, ALPHA, deg=None)
                np.testing.assert_allclose(S_sub, res.values, rtol=0, atol=1e-15)


def assert_meloppr_exact(g, sources):
    for s in sources:
        truth = local_ppr(g, int(s), L=6)
        est = meloppr(g, int(s), l1=3, l2=3, next_stage=None, c=None)
        diff = np.abs(truth.dense(g.n) - est.dense(g.n)).max()
        assert diff < 1e-12, (g.name, s, diff)
        assert est.stats.extra["refused"] == 0


def test_meloppr_exact_on_karate(karate):
    assert_meloppr_exact(karate, range(karate.n))
    # other splits of L = 6 as well
    for l1, l2 in ((1, 5), (2, 4), (5, 1)):
        est = meloppr(karate, 0, l1=l1, l2=l2, c=None)
        assert np.abs(est.dense(karate.n) - local_ppr(karate, 0).dense(karate.n)).max() < 1e-12


@pytest.mark.parametrize(("name", "count"), [("citeseer", 6), ("cora", 6), ("pubmed", 3)])
def test_meloppr_exact_on_planetoid(name, count):
    g = planetoid(name)
    rng = np.random.default_rng(2021)
    assert_meloppr_exact(g, rng.choice(g.n, size=count, replace=False))


def test_power_iteration_matches_linear_solve(karate):
    g = karate
    W = (g.adj / g.deg[None, :]).toarray()
    for s in (0, 33):
        e = np.eye(g.n)[s]
        pi = np.linalg.solve(np.eye(g.n) - ALPHA * W, (1 - ALPHA) * e)
        res = power_iteration_ppr(g, s, tol=1e-14)
        np.testing.assert_allclose(res.dense(g.n), pi, rtol=0, atol=1e-12)


@pytest.mark.parametrize("eps", [1e-3, 1e-4])
def test_forward_push_within_bound(karate, eps):
    for g in (karate, planetoid("cora")):
        for s in (0, 7):
            pi = power_iteration_ppr(g, s, tol=1e-14).dense(g.n)
            res = forward_push(g, s, eps=eps)
            p = res.dense(g.n)
            err = pi - p
            slack = 1e-11
            assert err.min() >= -slack  # push never overestimates
            assert np.all(err <= eps * g.deg + slack)  # per node: eps * deg(t)
            assert np.abs(err).max() <= res.stats.extra["error_bound_inf"] + slack
            assert err.sum() == pytest.approx(res.stats.extra["residual_l1"], abs=1e-10)
            assert np.all(res.residual_dense(g.n) <= eps * g.deg + 1e-18)


# ---------------------------------------------------------------- metrics, knobs, stats


def test_precision_at_k_hand_cases():
    assert precision_at_k([1, 2, 3], [3, 2, 1], 3) == 1.0
    assert precision_at_k([1, 2, 3, 9], [3, 4, 5, 1], 4) == 0.5
    assert precision_at_k([1, 2, 3, 4], [1, 2, 9, 8], 2) == 1.0  # only the first k count
    assert precision_at_k([1, 2], [1, 2], 4) == 0.5  # denominator is always k
    assert precision_at_k([], [1], 1) == 0.0
    assert precision_at_k(np.array([5, 6]), np.array([6, 7]), 2) == 0.5
    with pytest.raises(ValueError):
        precision_at_k([1], [1], 0)


def test_precision_pprpy_variant(karate):
    truth = local_ppr(karate, 0)
    assert precision_at_k_pprpy(truth, truth, 200) == 1.0  # 34 nodes: max-size denominator
    assert precision_at_k(truth.top(200), truth.top(200), 200) == 34 / 200


def test_next_stage_count_and_fraction(karate):
    g = karate
    full = meloppr(g, 0, c=None)
    nz = full.stats.extra["nonzero_residual"]
    assert full.stats.extra["next_stage_used"] == nz > 10
    for count in (0, 1, 3, 10, 10_000):
        r = meloppr(g, 0, next_stage=count, c=None)
        used = min(count, nz)
        assert r.stats.extra["next_stage_used"] == used
        assert len(r.stats.stage_sizes) == 1 + used
    for frac in (0.01, 0.25, 0.5, 1.0):
        r = meloppr(g, 0, next_stage=frac, c=None)
        assert r.stats.extra["next_stage_used"] == math.ceil(frac * nz)
    np.testing.assert_allclose(meloppr(g, 0, next_stage=1.0, c=None).values, full.values)
    # stage 1 alone is the (1-alpha) sum_{k<l1} alpha^k W^k e_s part
    S, R = whole_graph_diffusion(g, 0, 3)
    np.testing.assert_allclose(
        meloppr(g, 0, next_stage=0, c=None).dense(g.n), S - ALPHA**3 * R, atol=1e-15
    )
    # next-stage nodes are taken by residual, largest first: more nodes, closer to truth
    truth = local_ppr(g, 0).dense(g.n)
    errs = [np.abs(meloppr(g, 0, next_stage=n, c=None).dense(g.n) - truth).sum()
            for n in (0, 1, 2, 4, 8, nz)]
    assert errs == sorted(errs, reverse=True) and errs[-1] < 1e-12
    for bad in (1.5, 0.0, -1, True, "3"):
        with pytest.raises((ValueError, TypeError)):
            meloppr(g, 0, next_stage=bad)


def test_score_table_bounded_first_come():
    g = synthetic_powerlaw(1500, 4500, seed=3)
    s = int(np.argmax(g.deg))
    unbounded = meloppr(g, s, next_stage=20, c=None, k=10)
    assert unbounded.nodes.size > 3 * 10
    for c in (1, 3):
        r = meloppr(g, s, next_stage=20, c=c, k=10)
        assert r.nodes.size == r.stats.extra["table_entries"] <= c * 10
        assert r.stats.extra["refused"] > 0
        # a node is admitted at its first contribution and then gets all the others,
        # so every kept entry equals the unbounded score
        np.testing.assert_allclose(r.values, unbounded.dense(g.n)[r.nodes], rtol=1e-12)
    # stage 1 is offered by descending S_l1: with a full table the kept nodes are the
    # top-(c k) of the 3-hop stage-1 scores
    ball = bfs_ball(g, s, 3)
    e = np.zeros(ball.size)
    e[0] = 1.0
    S1, _ = diffuse(induced(g, ball), e, 3, ALPHA, deg=g.deg[ball])
    assert ball.size > 30
    best = ball[np.lexsort((ball, -S1))[:30]]
    assert set(meloppr(g, s, next_stage=20, c=3, k=10).nodes.tolist()) == set(best.tolist())


def test_stats_fields(karate):
    r = meloppr(karate, 0, next_stage=3, trace_memory=True)
    st = r.stats
    ball = bfs_ball(karate, 0, 3)
    assert st.stage_sizes[0] == (ball.size, edge_count(induced(karate, ball)))
    assert len(st.stage_sizes) == len(st.stage_nnz) == 4
    assert st.nodes_touched == sum(v for v, _ in st.stage_sizes)
    assert st.edges_touched == sum(e for _, e in st.stage_sizes)
    assert st.tracemalloc_peak_bytes > 0 and st.model_peak_bytes == sum(st.model_parts.values())
    assert st.wall_s >= st.bfs_s + st.diffusion_s - 1e-9
    base = local_ppr(karate, 0)
    assert base.stats.tracemalloc_peak_bytes is None and base.stats.model_peak_bytes > 0
    top = base.top(5)
    assert top[0] == 0 and np.all(np.diff(base.dense(karate.n)[top]) <= 0)


# ---------------------------------------------------------------- graph lookup, integer
# emulation and sub-graph recording (used by the FPGA co-design evaluator)


def test_graph_dir_argument_env_and_missing_file(tmp_path, monkeypatch):
    (tmp_path / "toy_adj.txt").write_text("1 2\n2 3\n")
    monkeypatch.delenv(GRAPH_DIR_ENV, raising=False)
    assert graph_dir() is None and graph_dir(tmp_path) == tmp_path
    assert graph_path("toy", tmp_path) == tmp_path / "toy_adj.txt"
    assert load_graph("toy", tmp_path).m == 2
    with pytest.raises(FileNotFoundError, match=r"'toy'.*COEXPLORE_GRAPH_DIR"):
        load_graph("toy")  # no directory: only the packaged graphs
    monkeypatch.setenv(GRAPH_DIR_ENV, str(tmp_path))
    assert graph_dir() == tmp_path and load_graph("toy").n == 3
    assert load_graph(str(tmp_path / "toy_adj.txt")).name == "toy"
    with pytest.raises(FileNotFoundError, match=r"'nope'.*COEXPLORE_GRAPH_DIR"):
        load_graph("nope")
    # the env directory comes first, the packaged copy is the fallback ...
    with gzip.open(tmp_path / "cora_adj.txt.gz", "wt") as fh:
        fh.write("7\t8\n")
    assert graph_path("cora") == tmp_path / "cora_adj.txt.gz" and load_graph("cora").n == 2
    assert graph_path("citeseer").name == "citeseer_adj.txt.gz" and "citeseer" in PACKAGED_GRAPHS
    assert load_graph("citeseer").n == PLANETOID_COUNTS["citeseer"][0]
    # ... but an explicit directory is the only place looked in
    with pytest.raises(FileNotFoundError, match=rf"'citeseer'.*{tmp_path}"):
        graph_path("citeseer", tmp_path)
    with pytest.raises(FileNotFoundError, match="not found"):
        load_graph(str(tmp_path / "missing_adj.txt"))
    g = load_graph("synthetic-amazon@0.002")
    assert g.synthetic and g.name == "synthetic-amazon-x0.002"
    with pytest.raises(ValueError, match="scale"):
        load_graph("synthetic-amazon@big")


def test_quantized_diffusion_truncates_like_integer_division(karate):
    g = karate
    ball = bfs_ball(g, 0, 3)
    a = induced(g, ball)
    e = np.zeros(ball.size)
    e[0] = 1.0
    S, R = diffuse(a, e, 3, ALPHA, deg=g.deg[ball])
    Sq, _ = diffuse(a, e, 3, ALPHA, deg=g.deg[ball], quantum=2.0**-30)
    np.testing.assert_allclose(Sq, S, atol=1e-8)  # fine grid: floating point to 1e-8
    q = 1 / 64
    Sc, Rc = diffuse(a, e, 3, ALPHA, deg=g.deg[ball], quantum=q)
    assert np.all(Sc <= S + 1e-12) and np.all(Rc <= R + 1e-12)  # floor only loses mass
    assert Sc.sum() < S.sum() - q
    np.testing.assert_allclose(Sc / q, np.round(Sc / q), atol=1e-9)  # integer units
    # by hand, one step from the source: share = floor(64 / deg(0)) units per neighbour
    S1, _ = diffuse(a, e, 1, ALPHA, deg=g.deg[ball], quantum=q)
    share = math.floor(64 / g.deg[0])
    nbr = ball[1]
    want = math.floor(ALPHA * share)  # alpha * (A @ share) rounded down, in units
    assert S1[np.flatnonzero(ball == nbr)[0]] * 64 == want
    with pytest.raises(ValueError, match="quantum"):
        diffuse(a, e, 1, quantum=0.0)


def test_meloppr_records_subgraphs_and_quantum(karate):
    r = meloppr(karate, 0, next_stage=4, record_subgraphs=True)
    degs = r.stats.extra["subgraph_degrees"]
    assert [int(d.sum()) for d in degs] == r.stats.stage_nnz
    assert [d.size for d in degs] == [v for v, _ in r.stats.stage_sizes]
    assert r.stats.extra["next_stage_nodes"].size == 4
    assert "subgraph_degrees" not in meloppr(karate, 0, next_stage=4).stats.extra
    fine = meloppr(karate, 0, next_stage=None, c=None, quantum=2.0**-40)
    exact = local_ppr(karate, 0)
    assert np.abs(fine.dense(karate.n) - exact.dense(karate.n)).max() < 1e-8
    coarse = meloppr(karate, 0, next_stage=None, c=None, quantum=2.0**-8)
    assert coarse.values.sum() < exact.values.sum() - 2.0**-8
