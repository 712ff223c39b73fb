"""The exact mapper against brute force: on small layers x architectures where every
mapping can be enumerated (every divisor factorization, every loop order, every bypass
choice), its objective equals the brute-force minimum, for EDP, energy and latency.

Cases (seeded): convolutions (strided, dilated, grouped, depthwise), GEMM and batched
matmul on random hierarchies (1-3 on-chip levels, fanouts at any level, partitioned or
shared capacities, with or without multicast, bandwidth limits), on systolic arrays of
every dataflow, on Eyeriss-like spatial arrays and on HASCO's intrinsic arrays.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from accelerators import SpatialArray, SystolicArray
from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from accelerators.intrinsic import IntrinsicAccelerator
from evaluators.loopnest import LOOPNEST, evaluate_batch
from mappers.base import NoLegalMapping
from mappers.exact import ExactMapper
from mappers.exhaustive import enumerate_mappings
from mappers.orders import objective_of
from mappers.workloads import conv2d, gemm

OBJECTIVES = ("edp", "energy", "latency")
N_CASES = 100          # x 3 objectives: 300 certified cases in the default suite
N_SLOW = 1000          # more, with another seed, in the slow suite


def small_layer(rng: np.random.Generator):
    kind = int(rng.integers(0, 6))
    r = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    if kind == 0:
        return conv2d("conv", N=r(1, 2), K=r(1, 4), C=r(1, 3), P=r(1, 4), Q=r(1, 3), R=r(1, 3), S=r(1, 2),
                      stride=r(1, 2), dilation=r(1, 2))
    if kind == 1:
        ch = r(2, 4)
        return conv2d("depthwise", K=ch, C=ch, groups=ch, P=r(1, 4), Q=r(1, 2), R=r(1, 3), S=1, stride=r(1, 2))
    if kind == 2:
        g = 2
        return conv2d("grouped", K=2 * g, C=2 * g, groups=g, P=r(1, 3), Q=r(1, 2), R=r(1, 2), S=1)
    if kind == 3:
        return gemm("gemm", M=r(1, 6), N=r(1, 6), K=r(1, 6))
    if kind == 4:
        return gemm("bmm", B=r(2, 3), M=r(1, 4), N=r(1, 3), K=r(1, 4))
    return conv2d("conv1x1s2", K=r(1, 4), C=r(1, 4), P=r(1, 4), Q=r(1, 3), R=1, S=1, stride=2)


def random_hierarchy(rng: np.random.Generator) -> ArchSpec:
    n_on = int(rng.integers(1, 4))
    fx = [int(rng.integers(1, 4)) for _ in range(n_on)]
    fy = [int(rng.integers(1, 3)) for _ in range(n_on)]
    inst = [1] * (n_on + 1)
    for li in range(n_on - 1, -1, -1):
        up = li + 1
        inst[li] = inst[up] * (fx[up] * fy[up] if up < n_on else 1)
    levels = []
    for li in range(n_on):
        holds = frozenset(op for op in OPERANDS if rng.random() < 0.85) or frozenset({"O"})
        if rng.random() < 0.5:
            cap = {op: int(rng.integers(1, 40)) * (li + 1) for op in OPERANDS if op in holds}  # a fixed order: draws do not depend on PYTHONHASHSEED
        else:
            cap = int(rng.integers(8, 120)) * (li + 1)
        levels.append(MemoryLevel(
            f"L{li}", tensors=holds, capacity_words=cap, instances=inst[li], fanout_x=fx[li], fanout_y=fy[li],
            read_energy_pj=float(rng.uniform(0.5, 3)) * (li + 1), write_energy_pj=float(rng.uniform(0.5, 3)) * (li + 1),
            multicast=bool(rng.random() < 0.7), noc_energy_pj=float(rng.uniform(0, 2)) * (fx[li] * fy[li] > 1),
            bandwidth_words_per_cycle=float(rng.integers(1, 9)) if rng.random() < 0.5 else None))
    levels.append(MemoryLevel("DRAM", read_energy_pj=100.0, write_energy_pj=100.0,
                              bandwidth_words_per_cycle=float(rng.integers(1, 5)) if rng.random() < 0.7 else None))
    return ArchSpec("hier", tuple(levels), mac_energy_pj=1.0)


def small_arch(rng: np.random.Generator) -> ArchSpec:
    kind = int(rng.integers(0, 5))
    if kind <= 1:
        return random_hierarchy(rng)
    if kind == 2:
        df = ("OS", "WS", "IS")[int(rng.integers(0, 3))]
        return SystolicArray(rows=int(rng.integers(1, 4)), cols=int(rng.integers(1, 4)), dataflow=df,
                             ifmap_sram_kib=0.03, filter_sram_kib=0.03, ofmap_sram_kib=0.03,
                             dram_bw_words_per_cycle=float(rng.integers(1, 4))).to_arch()
    if kind == 3:
        return SpatialArray(pe_x=int(rng.integers(1, 4)), pe_y=int(rng.integers(1, 3)), rf_w_words=int(rng.integers(2, 9)),
                            rf_i_words=int(rng.integers(2, 9)), rf_o_words=int(rng.integers(2, 9)), glb_kib=0.1,
                            dram_bw_words_per_cycle=2.0, glb_bw_words_per_cycle=4.0).to_arch()
    return IntrinsicAccelerator("GEMM", pe_x=int(rng.integers(1, 4)), pe_y=int(rng.integers(1, 3)), sp_kib=0.1,
                                local_kib=0.1, dataflow=("OS", "WS")[int(rng.integers(0, 2))], sp_banks=1,
                                dma_bus_bits=16).to_arch()


def brute_force(layer, arch, conv=None, batches=None) -> dict[str, float]:
    """The least valid objective of each kind over ``batches`` (default: every mapping
    :func:`~mappers.exhaustive.enumerate_mappings` lists, bypass included), scored under the
    counting conventions ``conv`` (default coexplore's)."""
    if batches is None:
        batches = enumerate_mappings(layer, arch, bypass=True, max_mappings=400_000)
    best = dict.fromkeys(OBJECTIVES, math.inf)
    for batch in batches:
        r = evaluate_batch(layer, arch, batch, accounting=conv)
        ok = np.asarray(r.valid)
        if not ok.any():
            continue
        for obj in OBJECTIVES:
            v = objective_of(obj, r.energy_pj, r.compute_cycles, r.bandwidth_cycles)[ok]
            best[obj] = min(best[obj], float(v.min()))
    return best


def cases(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        layer, arch = small_layer(rng), small_arch(rng)
        try:
            size = sum(len(b) for b in enumerate_mappings(layer, arch, bypass=True, orders=False,
                                                          max_mappings=400_000))
        except ValueError:
            continue
        if size <= 800:
            out.append((layer, arch))
    return out


CASES = cases(N_CASES, 20261124)


def check(layer, arch, cost=LOOPNEST, want=None, note=None) -> None:
    """The exact mapper under ``cost`` proves the brute-force minimum ``want`` (default
    :func:`brute_force` under the default conventions) of every objective, or finds no
    legal mapping where there is none; ``note`` labels a failure."""
    want = brute_force(layer, arch) if want is None else want
    for obj in OBJECTIVES:
        if not math.isfinite(want[obj]):
            with pytest.raises(NoLegalMapping):
                ExactMapper().map(layer, arch, cost, obj)
            continue
        r = ExactMapper().map(layer, arch, cost, obj)
        assert r.optimal and not r.stopped_early
        assert r.mapping.violations(layer, arch) == []
        assert r.objective(obj) == pytest.approx(want[obj], rel=1e-9), (layer, arch.name, obj, note)
        assert r.lower_bound <= r.objective(obj) * (1 + 1e-9)


@pytest.mark.parametrize("case", range(N_CASES))
def test_exact_equals_the_brute_force_minimum(case):
    check(*CASES[case])


@pytest.mark.slow
def test_exact_equals_the_brute_force_minimum_on_many_more_cases():
    for layer, arch in cases(N_SLOW, 4711):
        check(layer, arch)


@pytest.mark.parametrize("case", range(0, N_CASES, 5))
def test_a_gap_gives_a_mapping_within_it_and_a_true_bound(case):
    layer, arch = CASES[case]
    want = brute_force(layer, arch)["edp"]
    if not math.isfinite(want):
        return
    r = ExactMapper(gap=0.3).map(layer, arch, LOOPNEST, "edp")
    assert not r.optimal and not r.stopped_early
    assert want * (1 - 1e-9) <= r.objective("edp") <= want * 1.3 * (1 + 1e-9)
    assert r.lower_bound <= want * (1 + 1e-9)
    assert r.objective("edp") <= r.lower_bound * 1.3 * (1 + 1e-6)


def test_a_node_limit_stops_early_with_a_true_bound_and_the_same_result_every_time():
    """An effort limit: a stopped search's bound is still below the true optimum and its
    mapping is legal; the same limit gives the same mapping (unlike a time limit); a
    limit the search never reaches gives the optimum."""
    from accelerators import eyeriss_v1
    from mappers import zoo

    layer, arch = zoo.resolve("dqn[2]")[0], eyeriss_v1().to_arch()
    full = ExactMapper().map(layer, arch, LOOPNEST, "edp")
    assert full.optimal and full.info["nodes"] > 10
    a = ExactMapper(max_nodes=5).map(layer, arch, LOOPNEST, "edp")
    b = ExactMapper(max_nodes=5).map(layer, arch, LOOPNEST, "edp")
    assert a.stopped_early and not a.optimal
    assert a.mapping == b.mapping and a.lower_bound == b.lower_bound
    assert a.mapping.violations(layer, arch) == []
    assert a.lower_bound <= full.objective("edp") * (1 + 1e-9) <= a.objective("edp") * (1 + 1e-9)
    c = ExactMapper(max_nodes=full.info["nodes"] + 1).map(layer, arch, LOOPNEST, "edp")
    assert c.optimal and c.objective("edp") == pytest.approx(full.objective("edp"), rel=1e-12)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="max_nodes"):
            ExactMapper(max_nodes=bad)


@pytest.mark.parametrize("spec", ["dqn[2]", "mlp_dlrm@32"])
def test_roots_bounded_in_chunks_search_exactly_as_one_batch(monkeypatch, spec):
    """The roots are bounded a chunk at a time and only those below the bar kept (a
    large array has tens of millions). A chunk size that splits them unevenly gives the
    same search, node for node: the same mapping, bound, node and model-call counts,
    under a node limit (where the order of expansion decides the result) and to the
    proof. (``mlp_dlrm`` has size-1 dimensions, which the model's bound treats per
    block of rows.)"""
    import mappers.exact as exact
    from accelerators import eyeriss_v1
    from mappers import zoo

    layer, arch = zoo.resolve(spec)[0], eyeriss_v1().to_arch()

    def runs() -> list:
        return [ExactMapper(max_nodes=n).map(layer, arch, LOOPNEST, "edp") for n in (500, None)]

    whole = runs()
    monkeypatch.setattr(exact, "_ROOT_CHUNK", 7)
    root_batches = []
    bound = exact._Search._bound

    def spy(self, p, nodes, known, **kw):
        if known == arch.n_levels and kw.get("stages") != 0:   # not the local search's starts (_multistart)
            root_batches.append(len(nodes))
        return bound(self, p, nodes, known, **kw)

    monkeypatch.setattr(exact._Search, "_bound", spy)
    chunked = runs()
    assert len(root_batches) > 2 * 2 and max(root_batches) <= 7      # several chunks in each run
    for a, b in zip(whole, chunked):
        assert a.mapping == b.mapping and a.edp == b.edp
        assert a.lower_bound == b.lower_bound and a.optimal == b.optimal
        assert a.info["nodes"] == b.info["nodes"] and a.evaluated == b.evaluated


def test_bad_gap_is_refused():
    for bad in (-0.1, float("nan"), "5%"):
        with pytest.raises(ValueError, match="gap"):
            ExactMapper(gap=bad)


def leaky(arch: ArchSpec, rng: np.random.Generator) -> ArchSpec:
    """``arch`` with leakage on every level (pJ per instance per cycle), large enough
    to matter: about the DRAM's energy of a few words per cycle on the backing store and
    a fraction of a word's access energy per cycle on the other levels."""
    levels = [dataclasses.replace(lv, leakage_pj_per_cycle=float(rng.uniform(0.05, 2.0)) * (50.0 if i == len(
        arch.levels) - 1 else 1.0)) for i, lv in enumerate(arch.levels)]
    return dataclasses.replace(arch, levels=tuple(levels))


LEAKY_CASES = [(layer, leaky(arch, np.random.default_rng(i))) for i, (layer, arch) in enumerate(CASES[:40])]


@pytest.mark.parametrize("case", range(len(LEAKY_CASES)))
def test_exact_equals_the_brute_force_minimum_with_leakage(case):
    """Leakage is static power x latency, a maximum over levels: the exact mapper still
    finds the brute-force minimum (its order search adds each combination's leakage back
    from its own latency, mappers/orders.py)."""
    layer, arch = LEAKY_CASES[case]
    assert arch.leaks
    check(layer, arch)


def test_leakage_changes_the_optimum_and_the_mapper_follows():
    """Not vacuous: on some leaky case the best mapping differs from the best without
    leakage, and the exact mapper returns the leaky optimum there."""
    changed = 0
    for (layer, plain), (_, arch) in zip(CASES[:40], LEAKY_CASES):
        a, b = brute_force(layer, plain), brute_force(layer, arch)
        if not math.isfinite(a["edp"]):
            continue
        r = ExactMapper().map(layer, plain, LOOPNEST, "edp")
        leaky_value = evaluate_batch(layer, arch, r.batch).edp[0]
        changed += int(leaky_value > b["edp"] * (1 + 1e-6))
    assert changed > 0


def split_bandwidths(arch: ArchSpec, rng: np.random.Generator) -> ArchSpec:
    """``arch`` with separate read and write bandwidths (0.5-4 words per cycle) on about
    two levels in three, the shared bandwidth kept on half of those: a level's cycles are
    then the largest of its reads, its writes and both over their limits, a maximum of
    sums (the order search combines the sums, mappers/orders.bandwidth_columns)."""
    levels = []
    for lv in arch.levels:
        if rng.random() < 0.67:
            lv = dataclasses.replace(
                lv, read_bandwidth_words_per_cycle=float(rng.choice([0.5, 1.0, 2.0, 4.0])),
                write_bandwidth_words_per_cycle=float(rng.choice([0.5, 1.0, 2.0, 4.0])),
                bandwidth_words_per_cycle=lv.bandwidth_words_per_cycle if rng.random() < 0.5 else None)
        levels.append(lv)
    return dataclasses.replace(arch, levels=tuple(levels))


SPLIT_CASES = [(layer, split_bandwidths(arch, np.random.default_rng(100 + i))) for i, (layer, arch)
               in enumerate(CASES[:30])]


@pytest.mark.parametrize("case", range(len(SPLIT_CASES)))
def test_exact_equals_the_brute_force_minimum_with_separate_read_and_write_bandwidths(case):
    layer, arch = SPLIT_CASES[case]
    check(layer, arch)


def test_separate_bandwidths_bind_and_change_the_optimum():
    """Not vacuous: on some case a read or write limit sets a level's bandwidth cycles
    above its shared term, and the optimum differs from the one with reads and writes
    summed into one bandwidth (the approximation this replaces)."""
    binding = changed = 0
    for (layer, arch) in SPLIT_CASES:
        if not arch.split_bandwidth:
            continue
        summed = dataclasses.replace(arch, levels=tuple(dataclasses.replace(
            lv, read_bandwidth_words_per_cycle=None, write_bandwidth_words_per_cycle=None,
            bandwidth_words_per_cycle=(lv.read_bandwidth_words_per_cycle + lv.write_bandwidth_words_per_cycle
                                       if lv.split_bandwidth and lv.bandwidth_words_per_cycle is None
                                       else lv.bandwidth_words_per_cycle)) for lv in arch.levels))
        r = ExactMapper().map(layer, arch, LOOPNEST, "latency")
        res = evaluate_batch(layer, arch, r.batch)
        parts = np.asarray(res.bandwidth_parts)[0]
        binding += int((parts[1:].max(axis=0) > parts[0]).any())
        changed += int(abs(r.latency_cycles - ExactMapper().map(layer, summed, LOOPNEST, "latency").latency_cycles)
                       > 1e-9 * r.latency_cycles)
    assert binding > 0 and changed > 0, (binding, changed)


def test_whole_vector_accesses_are_searched_exactly():
    """Rounding each instance's words up to whole vectors is a ceiling of a sum of
    per-level order terms: not separable, so the exact mapper's leaves use the coupled
    order search (certified against brute force in tests/mappers/test_exact_coupled.py);
    the heuristic still maps (without its order polish)."""
    arch = SpatialArray(pe_x=2, pe_y=2, rf_w_words=4, rf_i_words=4, rf_o_words=4, glb_kib=1).to_arch()
    levels = list(arch.levels)
    levels[1] = dataclasses.replace(levels[1], vector_words=4)
    wide = dataclasses.replace(arch, levels=tuple(levels))
    r = ExactMapper().map(gemm("g", M=2, N=2, K=2), wide, LOOPNEST, "edp")
    assert r.optimal and r.lower_bound <= r.objective("edp") * (1 + 1e-9)
    from mappers.heuristic import HeuristicMapper
    assert HeuristicMapper().map(gemm("g", M=2, N=2, K=2), wide, LOOPNEST, "edp").energy_pj > 0


def _symmetric_conv(rng: np.random.Generator):
    r = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    pq, rs = r(2, 3), r(1, 2)
    return conv2d("square", N=1, K=r(1, 2), C=r(1, 2), P=pq, Q=pq, R=rs, S=rs, stride=r(1, 2),
                  dilation=r(1, 2))


@pytest.mark.parametrize("seed", range(6))
def test_the_mirror_image_of_a_mapping_scores_the_same(seed):
    """The basis of the mirror rule (:func:`mappers.exact._mirror_canonical`): on a
    convolution with ``P = Q`` and ``R = S``, exchanging ``P <-> Q`` and ``R <-> S`` in every
    factor and loop order gives the same energy, compute and bandwidth cycles."""
    rng = np.random.default_rng(8100 + seed)
    layer, arch = _symmetric_conv(rng), small_arch(rng)
    if arch.dataflow is not None:
        pytest.skip("a dataflow's rules name dimensions: the mirror rule is not applied there")
    names = list(layer.dim_names)
    swap = {"P": "Q", "Q": "P", "R": "S", "S": "R"}
    sigma = np.array([names.index(swap.get(d, d)) for d in names])
    from mappers.mapping import MappingBatch
    from mappers.sampling import random_mappings

    batch = random_mappings(layer, arch, 3000, seed=seed, bypass=True)
    inv = np.argsort(sigma)

    mirrored = MappingBatch(batch.dims, batch.temporal[:, :, sigma], batch.spatial_x[:, :, sigma],
                            batch.spatial_y[:, :, sigma], inv[batch.order], batch.keep)
    a, b = evaluate_batch(layer, arch, batch), evaluate_batch(layer, arch, mirrored)
    for f in ("energy_pj", "compute_cycles", "bandwidth_cycles"):
        np.testing.assert_allclose(np.asarray(getattr(b, f)), np.asarray(getattr(a, f)), rtol=1e-12, err_msg=f)
    np.testing.assert_array_equal(np.asarray(a.valid), np.asarray(b.valid))


@pytest.mark.parametrize("seed", range(10))
def test_symmetric_convolutions_against_brute_force(seed):
    """With the mirror rule active (square convolutions, no constraints), the exact mapper
    still finds the brute-force optimum, every objective."""
    rng = np.random.default_rng(8200 + seed)
    layer, arch = _symmetric_conv(rng), small_arch(rng)
    try:
        want = brute_force(layer, arch)
    except ValueError:                                   # too many mappings to list
        pytest.skip("space too large for brute force")
    for obj in OBJECTIVES:
        if not math.isfinite(want[obj]):
            continue
        r = ExactMapper().map(layer, arch, LOOPNEST, obj)
        assert r.optimal
        assert want[obj] * (1 - 1e-9) <= r.objective(obj) <= want[obj] * (1 + 1e-9), (obj, layer, arch)
        assert r.lower_bound <= want[obj] * (1 + 1e-9)


def sliding_layer(rng: np.random.Generator):
    """A small strided convolution whose input is a sliding window on both axes (stride
    and filter > 1): the operand the capacity-aware sliding refinement bounds."""
    r = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    return conv2d("strided", N=1, K=int(rng.choice([2, 4])), C=r(1, 2), P=int(rng.choice([2, 4])), Q=r(1, 2),
                  R=r(2, 3), S=r(1, 2), stride=r(2, 3), dilation=1)


def sliding_layer_wide(rng: np.random.Generator):
    """A small convolution over the wider range of sliding windows the issue-41 bounds
    must hold on: stride 1 to 3 and filter 1 to 4 along the first axis (a stride above the
    filter leaves gaps between windows, one at or below it makes them overlap)."""
    r = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    return conv2d("sliding", N=1, K=int(rng.choice([1, 2, 4])), C=r(1, 2), P=int(rng.choice([2, 3, 4])), Q=r(1, 2),
                  R=r(1, 4), S=r(1, 2), stride=r(1, 3), dilation=1)


def small_capacity_hierarchy(rng: np.random.Generator) -> ArchSpec:
    """A register file (per-operand words, a few) under a shared buffer, with a 2 x 1 or
    2 x 2 fanout and bypass: the input tile of a strided convolution rarely fits, so the
    refinement is active, and the buffer's bypass choices make the register file refill
    from DRAM."""
    fx, fy = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    rf = MemoryLevel("RF", tensors=frozenset(OPERANDS),
                     capacity_words={op: int(rng.integers(1, 4)) for op in OPERANDS}, instances=fx * fy,
                     read_energy_pj=float(rng.uniform(0.1, 1)), write_energy_pj=float(rng.uniform(0.1, 1)),
                     bandwidth_words_per_cycle=None)
    glb = MemoryLevel("GLB", tensors=frozenset(OPERANDS), capacity_words=int(rng.integers(8, 60)), instances=1,
                      fanout_x=fx, fanout_y=fy, read_energy_pj=float(rng.uniform(2, 10)),
                      write_energy_pj=float(rng.uniform(2, 10)), multicast=bool(rng.random() < 0.7),
                      bandwidth_words_per_cycle=float(rng.integers(2, 9)))
    dram = MemoryLevel("DRAM", read_energy_pj=100.0, write_energy_pj=100.0,
                       bandwidth_words_per_cycle=float(rng.integers(1, 5)))
    return ArchSpec("small-rf", (rf, glb, dram), mac_energy_pj=1.0)


def sliding_cases(n: int, seed: int, limit: int = 3000, layers=sliding_layer) -> list:
    """``n`` (strided convolution, small-capacity hierarchy) pairs small enough to
    enumerate (at most ``limit`` factorizations x bypass choices, orders aside);
    ``layers``: the layer generator (:func:`sliding_layer` or :func:`sliding_layer_wide`)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        layer, arch = layers(rng), small_capacity_hierarchy(rng)
        try:
            size = sum(len(b) for b in enumerate_mappings(layer, arch, bypass=True, orders=False,
                                                          max_mappings=limit))
        except ValueError:                  # more than limit (found before enumerating)
            continue
        if size:
            out.append((layer, arch))
    return out


SLIDING_CASES = sliding_cases(12, 20261202)


@pytest.mark.parametrize("case", range(len(SLIDING_CASES)))
def test_strided_convolutions_on_small_register_files_against_brute_force(case):
    """Strided convolutions with filters > 1 on register files of a few words under a
    bypassable buffer: the exact mapper, with the sliding input's capacity-aware bound,
    proves the brute-force minimum."""
    check(*SLIDING_CASES[case])


WIDE_SLIDING_CASES = sliding_cases(8, 20261203, layers=sliding_layer_wide)


@pytest.mark.parametrize("case", range(len(WIDE_SLIDING_CASES)))
def test_sliding_windows_of_stride_1_to_3_and_filter_1_to_4_against_brute_force(case):
    """The wider range of sliding windows (stride 1 to 3, filter 1 to 4: gaps, abutting
    and overlapping windows) on the same small register files: the exact mapper proves
    the brute-force minimum (a bound that overshoots some mapping prunes it)."""
    check(*WIDE_SLIDING_CASES[case])


@pytest.mark.slow
def test_sliding_windows_of_stride_1_to_3_and_filter_1_to_4_on_many_more_cases():
    for layer, arch in sliding_cases(120, 4713, layers=sliding_layer_wide):
        check(layer, arch)


@pytest.mark.slow
def test_strided_convolutions_on_small_register_files_on_many_more_cases():
    for layer, arch in sliding_cases(150, 4712):
        check(layer, arch)
