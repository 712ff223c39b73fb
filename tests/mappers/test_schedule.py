"""Schedule spaces of a computation on an intrinsic accelerator, and their searches."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from accelerators.intrinsic import IntrinsicAccelerator
from evaluators.loopnest import LOOPNEST, evaluate_batch
from experiments.inner_search import OptimizerSearch  # the optimizers' factories, handed in
from mappers import schedule as sch
from mappers import tensor_ir as ir
from mappers.schedule import ScheduleMapper, ScheduleProblem, default_schedule, search_schedule

METHODS = ("heuristic", "qlearning", "random")
FACTORIES = {"qlearning": OptimizerSearch("qlearning")}
QNETWORK = OptimizerSearch("qnetwork")


def problem(comp, acc):
    return ScheduleProblem(comp, acc.to_arch(), evaluate_batch)


@pytest.fixture(scope="module")
def conv_problem():
    acc = IntrinsicAccelerator("GEMM", 16, 16, sp_kib=128, local_kib=64, dataflow="WS", sp_banks=4)
    return problem(ir.conv2d(N=1, K=64, C=32, P=28, Q=28, R=3, S=3), acc)


def test_tile_candidates():
    assert sch.tile_candidates(56) == [1, 2, 4, 7, 8, 14, 28, 56]
    assert sch.tile_candidates(30) == [1, 2, 3, 4, 5, 6, 8, 10, 15, 30]
    assert sch.tile_candidates(1) == [1]
    with pytest.raises(ValueError, match="extent must be a positive integer"):
        sch.tile_candidates(0)


def test_space_follows_the_partitions(conv_problem):
    pr = conv_problem
    assert len(pr.parts) == 14 and pr.space["partition"].choices == tuple(pr.keys)
    # WS: the stream index is GEMM's i, which partitions put on n, p, q or k
    assert set(pr.stream_loops) == {"k", "p", "q"}
    pts = pr.sample(200, 0)
    cols = pr.space.columns(pts)
    pi = pr._pidx(cols)
    for d in pr.loops:
        j = pr.dims.index(d)
        inner = pr.spatial_x[pi, j] * pr.spatial_y[pi, j] * cols[f"acc_{d}"] * cols[f"sp_{d}"] * \
            (cols[f"stream_{d}"] if d in pr.stream_loops else 1)
        assert (inner <= pr.extent[j]).all()
        if d in pr.stream_loops:
            assert ((cols[f"stream_{d}"] == 1) | pr.stream_ok[pi, j]).all()
    r = pr.evaluate(pts)
    assert r["valid"].all() and np.isfinite(r["latency_cycles"]).all()


def test_capacity_constraint_and_double_buffering(conv_problem):
    pr = conv_problem
    p = default_schedule(pr)
    assert pr.space.validate(p) == [] and pr.evaluate([p])["valid"][0]
    big = dict(p, **{f"sp_{d}": int(pr.cands[d][-1]) for d in ("p", "q")}, sp_c=32)
    names = {v.name for v in pr.space.validate(big)}
    assert "capacity_SP" in names or any(n.startswith("fits_") for n in names)
    r = pr.evaluate([big])
    assert not r["valid"][0] and r["latency_cycles"][0] == np.inf
    # turning double buffering off frees half of each buffer
    halves = [q for q in pr.sample(400, 3) if q["double_buffer"] is False]
    fits_single = [q for q in halves if pr.space.validate(dict(q, double_buffer=True)) != []]
    assert fits_single                                                    # some need the full buffer


def test_searches_respect_the_budget_and_improve(conv_problem):
    pr = conv_problem
    for m in METHODS:
        res = search_schedule(pr, m, 40, seed=1, factory=FACTORIES.get(m))
        assert res.evaluated == 40 and len(res.history) == 40
        h = np.asarray(res.history)
        assert (np.diff(h) <= 0).all() and h[-1] == res.latency_cycles
        assert res.latency_cycles == pr.evaluate([res.point])["latency_cycles"][0]
        again = search_schedule(pr, m, 40, seed=1, factory=FACTORIES.get(m))
        assert again.latency_cycles == res.latency_cycles and again.point == res.point
    start = default_schedule(pr)
    res = search_schedule(pr, "heuristic", 60, seed=0, start=[start])
    assert res.latency_cycles <= pr.evaluate([start])["latency_cycles"][0]


def test_cache_by_shape():
    acc = IntrinsicAccelerator("GEMV", 8, 8, dataflow="FIXED")
    a = ir.gemv(M=64, L=32, name="first")
    b = ir.gemv(M=64, L=32, name="second", repeat=3)
    arch, mapper = acc.to_arch(), ScheduleMapper("random", 20)
    n0 = len(sch.SEARCH_CACHE)
    r1 = mapper.map(a, arch, evaluate_batch)
    assert len(sch.SEARCH_CACHE) == n0 + 1
    r2 = mapper.map(b, arch, evaluate_batch)                 # same shape: no new search
    assert len(sch.SEARCH_CACHE) == n0 + 1 and r2.info == r1.info
    mapper.map(ir.gemv(M=64, L=16), arch, evaluate_batch)
    assert len(sch.SEARCH_CACHE) == n0 + 2


def test_errors_name_the_problem():
    acc = IntrinsicAccelerator("GEMM", 8, 8, dataflow="OS")
    with pytest.raises(ValueError, match="no partition onto the GEMM intrinsic"):
        problem(ir.dot(N=4, L=4), acc)
    with pytest.raises(ValueError, match="has 3 inputs"):
        problem(ir.mttkrp(M=2, N=2, K=2, L=2), acc)
    pr = problem(ir.gemm(M=8, N=8, K=8), acc)
    with pytest.raises(ValueError, match=r"search='anneal': no search strategy of that name is registered"):
        search_schedule(pr, "anneal", 10)
    with pytest.raises(ValueError, match="budget must be a positive integer"):
        search_schedule(pr, "random", 0)


def test_no_partition_error_names_both_expressions():
    acc = IntrinsicAccelerator("GEMM", 8, 8, dataflow="OS")
    with pytest.raises(ValueError, match=r"'dot' \(c\[n\] \+= a\[n, l\] \* b\[n, l\]\).*GEMM intrinsic "
                                         r"\(c\[i, j\] \+= a\[i, k\] \* b\[k, j\]\): index matching fails"):
        problem(ir.dot(N=4, L=4), acc)


def test_features_determine_the_score_and_keys_merge_equivalent_orders(conv_problem):
    pr = conv_problem
    pts = pr.sample(300, 3)
    f = pr.features(pts)
    assert f.shape == (300, pr.n_features) and np.isfinite(f).all()
    lat = pr.values(pts)
    by_key: dict[bytes, float] = {}
    for k, v in zip(pr.state_keys(pts), lat):
        assert by_key.setdefault(k, v) == v        # equal keys, equal latency
    # schedules that differ only in the order of loops whose factor at ACC is 1 are one state
    base = dict(default_schedule(pr), **{f"acc_{d}": 1 for d in pr.loops})
    other = dict(base, order_acc=tuple(reversed(base["order_acc"])))
    assert pr.space.validate(base) == [] and pr.space.validate(other) == []
    assert pr.state_keys([base]) == pr.state_keys([other]) and pr.values([base]) == pr.values([other])
    # ... but a change of a tile factor is not
    moved = [m for m in (dict(base, **{f"sp_{d}": 1}) for d in pr.loops) if m != base]
    assert moved and all(pr.space.validate(m) == [] and pr.state_keys([m]) != pr.state_keys([base]) for m in moved)


def test_repair_makes_a_partition_switch_fit(conv_problem):
    """The schedule space's repair: a schedule moved to another partition keeps its
    partition and becomes feasible by shrinking tile factors (or is dropped)."""
    pr = conv_problem
    moved = [dict(p, partition=k) for p in pr.sample(40, 5) for k in pr.keys[:6] if k != p["partition"]]
    bad = [p for p, ok in zip(moved, pr.space.feasible_mask(moved)) if not ok]
    assert len(bad) > 20
    fixed = pr.space.repair(bad)
    kept = [(b, f) for b, f in zip(bad, fixed) if f is not None]
    assert len(kept) > len(bad) // 2
    assert pr.space.feasible_mask([f for _, f in kept]).all()
    for b, f in kept:
        assert f["partition"] == b["partition"] and f["order_acc"] == b["order_acc"]
        assert all(f[n] <= b[n] for n in b if n.startswith(("acc_", "sp_", "stream_")))


def test_exact_reference_effort_limit_is_deterministic_and_still_a_bound():
    """A node limit, unlike a time limit, stops the search at the same point on any machine:
    the stopped reference is the same twice, proves nothing, and its bound is still no
    higher than the optimum."""
    # small buffers and a narrow bus: memory-bound, so the proof takes ~10,000 nodes per group
    acc = IntrinsicAccelerator("GEMM", 8, 8, sp_kib=4, local_kib=2, dataflow="WS", sp_banks=1, dma_bus_bits=16)
    pr = problem(ir.gemm(M=96, N=120, K=360), acc)
    full = sch.exact_reference(pr, LOOPNEST, max_nodes=None)
    a, b = (sch.exact_reference(pr, LOOPNEST, max_nodes=500) for _ in range(2))
    assert full.proved and not a.proved and not a.attained
    assert (a.bound, a.mapping_latency) == (b.bound, b.mapping_latency)
    assert a.bound <= full.bound * (1 + 1e-12) and a.mapping_latency >= full.mapping_latency


def test_exact_reference_bounds_every_schedule_and_is_attained():
    """On a GEMM whose extents are powers of two nothing pads, so the exact mapper's optimum
    is a lower bound of every schedule; here its best mapping is a schedule that attains it."""
    acc = IntrinsicAccelerator("GEMM", 16, 16, sp_kib=128, local_kib=64, dataflow="WS", sp_banks=4)
    pr = problem(ir.gemm(M=64, N=128, K=256), acc)
    ref = sch.exact_reference(pr, LOOPNEST)
    assert ref.proved and not ref.padded and ref.attained
    assert pr.space.validate(ref.schedule) == [] and pr.values([ref.schedule])[0] == ref.bound
    lat = np.array(pr.values(pr.sample(1500, 2)))
    assert (lat[np.isfinite(lat)] >= ref.bound).all()
    for search in ("random", "heuristic"):
        assert search_schedule(pr, search, 60, 0).latency_cycles >= ref.bound


def test_qnetwork_searches_a_schedule_space_with_its_features(conv_problem):
    res = search_schedule(conv_problem, "qnetwork", 40, 0, {"epochs": 2}, factory=QNETWORK)
    assert res.evaluated <= 40 and len(res.history) == 40 and np.isfinite(res.latency_cycles)
    assert conv_problem.space.validate(res.point) == []
    assert conv_problem.values([res.point])[0] == res.latency_cycles


def _split(pr, p, d):
    """Loop ``d``'s factors by level (the DRAM one implicit), and the partition's spatial factor."""
    pi = pr._key_index.get(p["partition"], 0) if len(pr.parts) > 1 else 0
    j = pr.dims.index(d)
    f = {lv: int(p[f"{lv}_{d}"]) for lv in pr.split_levels(d)[:-1]}
    f["dram"] = pr._dram_factor(p, d)
    return f, int(pr.spatial_x[pi, j] * pr.spatial_y[pi, j])


def test_transfers_keep_the_product_stay_legal_and_are_complete(conv_problem):
    """FlexTensor's split moves: one prime factor moves between two levels of one loop's
    split; the other loops and parameters are untouched, the product of the two levels is
    kept (of all levels, where the split pads nothing), every move is a feasible schedule,
    and every such feasible exchange of a prime is a move."""
    pr = conv_problem
    acts = set(pr.transfer_actions)
    assert len(acts) == len(pr.transfer_actions)
    pts = [default_schedule(pr)] + [p for p in pr.sample(30, 7)]
    n_moves = 0
    for p in pts:
        moves = pr.transfers(p)
        got = {pr.space.point_key(m) for _, m in moves}
        assert pr.space.feasible_mask([m for _, m in moves]).all()
        for (_, d, src, dst, q), m in moves:
            n_moves += 1
            changed = {k for k in p if p[k] != m[k]}
            assert changed <= {f"{src}_{d}", f"{dst}_{d}"} and changed
            before, sx = _split(pr, p, d)
            after, _ = _split(pr, m, d)
            if src != "dram" and dst != "dram":
                assert before[src] * before[dst] == after[src] * after[dst]
                assert after[dst] == before[dst] * q and after["dram"] == before["dram"]
            ext = pr.extent[pr.dims.index(d)]
            if math.prod(before.values()) * sx == ext and math.prod(after.values()) * sx == ext:
                assert math.prod(before.values()) == math.prod(after.values())
        # complete: every feasible exchange of one prime between two levels is a move
        for d in pr.loops:
            f, _ = _split(pr, p, d)
            for src in pr.split_levels(d):
                for dst in pr.split_levels(d):
                    for q in (2, 3, 5, 7):
                        if src == dst or f[src] % q:
                            continue
                        m = dict(p)
                        if src != "dram":
                            m[f"{src}_{d}"] = f[src] // q
                        if dst != "dram":
                            m[f"{dst}_{d}"] = f[dst] * q
                        if all(int(m[f"{lv}_{d}"]) in pr.cands[d] for lv in pr.split_levels(d)[:-1]) \
                                and pr.space.feasible_mask([m])[0]:
                            assert ("transfer", d, src, dst, q) in acts
                            assert pr.space.point_key(pr.space.normalize(m)) in got, (d, src, dst, q)
    assert n_moves > 100


def test_transfers_reach_every_split_of_a_loop():
    """From a split of a loop that pads nothing, split moves alone reach every other such
    split of it (on a buffer large enough that every split fits)."""
    acc = IntrinsicAccelerator("GEMM", 4, 4, sp_kib=512, local_kib=256, dataflow="WS", sp_banks=4)
    pr = problem(ir.gemm(M=48, N=8, K=8), acc)
    start = dict(default_schedule(pr), double_buffer=False)
    d = next(x for x in pr.stream_loops if pr.stream_ok[pr._key_index.get(start["partition"], 0), pr.dims.index(x)])
    names = [f"{lv}_{d}" for lv in pr.split_levels(d)[:-1]]
    others = {k: v for k, v in start.items() if k not in names}
    every = {tuple(v) for v in itertools.product(*[pr.cands[d].tolist()] * len(names))
             if pr.space.feasible_mask([dict(others, **dict(zip(names, v)))])[0]
             and pr.extent[pr.dims.index(d)] % math.prod(v) == 0}
    seen, todo = {tuple(start[n] for n in names)}, [start]
    while todo:
        p = todo.pop()
        for (_, dd, _, _, _), m in pr.transfers(p):
            key = tuple(m[n] for n in names)
            if dd == d and key not in seen:
                seen.add(key)
                todo.append(m)
    assert len(every) > 10 and seen == every


def test_qnetwork_walk_is_deterministic_and_uses_the_split_moves(conv_problem):
    a = search_schedule(conv_problem, "qnetwork", 50, 3, {"epochs": 1}, factory=QNETWORK)
    b = search_schedule(conv_problem, "qnetwork", 50, 3, {"epochs": 1}, factory=QNETWORK)
    c = search_schedule(conv_problem, "qnetwork", 50, 4, {"epochs": 1}, factory=QNETWORK)
    assert a == b and a.history != c.history
