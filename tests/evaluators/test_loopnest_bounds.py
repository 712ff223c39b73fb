"""The loop-nest model's order separability and its bounds on partial mappings.

* Separability: every count, hence energy and each level's bandwidth cycles, is a
  constant plus one term per level that depends on that level's loop order alone, so
  changing the orders of two levels at once changes the figures by the sum of changing
  each alone.
* Bounds: ``LOOPNEST.lower_bound(layer, arch, batch, known)`` is at most the figures of
  the mapping itself, for every ``known`` (the mapping is one completion of its own
  partial mapping).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from evaluators.loopnest import LOOPNEST, evaluate_batch
from mappers.mapping import MappingBatch
from tests.evaluators.mapping_gen import random_arch, random_layer, random_mapping


def _with_orders(b: MappingBatch, order: np.ndarray) -> MappingBatch:
    return MappingBatch(b.dims, b.temporal, b.spatial_x, b.spatial_y, order, b.keep)


@pytest.mark.parametrize("seed", range(30))
def test_counts_are_separable_over_the_levels_orders(seed):
    rng = np.random.default_rng(seed)
    layer, arch = random_layer(rng), random_arch(rng)
    if arch.n_levels < 3:
        return
    maps = [random_mapping(rng, layer, arch) for _ in range(8)]
    base = MappingBatch.from_mappings(layer, arch, maps)
    L, D = arch.n_levels, len(base.dims)
    r0 = evaluate_batch(layer, arch, base)
    a, b = L - 1, L - 2
    oa = base.order.copy()
    oa[:, a, :] = np.array([rng.permutation(D) for _ in range(len(maps))])
    ob = base.order.copy()
    ob[:, b, :] = np.array([rng.permutation(D) for _ in range(len(maps))])
    both = base.order.copy()
    both[:, a, :], both[:, b, :] = oa[:, a, :], ob[:, b, :]
    ra, rb, rab = (evaluate_batch(layer, arch, _with_orders(base, o)) for o in (oa, ob, both))
    for field in ("reads", "writes", "noc_words", "energy_pj", "bandwidth_cycles"):
        x0, xa, xb, xab = (np.asarray(getattr(r, field), dtype=float) for r in (r0, ra, rb, rab))
        np.testing.assert_allclose(xab, xa + xb - x0, rtol=1e-9, atol=1e-6, err_msg=field)


@pytest.mark.parametrize("seed", range(40))
def test_bounds_never_exceed_the_mapping_itself(seed):
    rng = np.random.default_rng(100 + seed)
    layer, arch = random_layer(rng), random_arch(rng)
    maps = [random_mapping(rng, layer, arch) for _ in range(12)]
    batch = MappingBatch.from_mappings(layer, arch, maps)
    exact = evaluate_batch(layer, arch, batch)
    for known in range(arch.n_levels + 1):
        lb = LOOPNEST.lower_bound(layer, arch, batch, known)
        assert (np.asarray(lb.energy_pj) <= np.asarray(exact.energy_pj) * (1 + 1e-9) + 1e-9).all(), known
        assert (np.asarray(lb.bandwidth_cycles) <= np.asarray(exact.bandwidth_cycles) * (1 + 1e-9) + 1e-9).all()
        assert (np.asarray(lb.compute_cycles) <= np.asarray(exact.compute_cycles) * (1 + 1e-9)).all()


def _placed_low(batch: MappingBatch, known: int) -> MappingBatch:
    """The partial mapping the exact mapper bounds: the temporal factors of levels
    ``>= known`` kept, those of the levels below multiplied together and put at level 0
    (as low as they go, :func:`lower_bound`'s proviso)."""
    T = batch.temporal.copy()
    if known > 0:
        T[:, 0, :] = np.prod(T[:, :known, :], axis=1)
        T[:, 1:known, :] = 1
    return MappingBatch(batch.dims, T, batch.spatial_x, batch.spatial_y, batch.order, batch.keep)


@pytest.mark.parametrize("seed", range(40))
def test_bounds_with_the_free_factors_placed_low_never_exceed_a_completion(seed):
    """The mapper passes the free factors as low as they go, whatever the completion:
    the bound must then hold for every completion, here the mapping itself. (It once
    did not: the multicast groups of a sliding-window axis unrolled at a fanout were
    counted from the placement's large tiles, above what a completion with small tiles
    has; DQN-like stride-2 convolutions with P and R both unrolled showed it.)"""
    rng = np.random.default_rng(900 + seed)
    layer, arch = random_layer(rng), random_arch(rng)
    maps = [random_mapping(rng, layer, arch) for _ in range(12)]
    batch = MappingBatch.from_mappings(layer, arch, maps)
    exact = evaluate_batch(layer, arch, batch)
    for known in range(1, arch.n_levels + 1):
        lb = LOOPNEST.lower_bound(layer, arch, _placed_low(batch, known), known)
        assert (np.asarray(lb.energy_pj) <= np.asarray(exact.energy_pj) * (1 + 1e-9) + 1e-9).all(), known
        assert (np.asarray(lb.bandwidth_cycles) <= np.asarray(exact.bandwidth_cycles) * (1 + 1e-9) + 1e-9).all()


@pytest.mark.parametrize("kernel", [False, True])
def test_a_sliding_axis_unrolled_above_an_undecided_tile_is_bounded_by_the_sumset(kernel):
    """Eyeriss v1, a stride-2 3x3 convolution (MobileNetV2's first layer, smaller): the
    PE array unrolls R, S on X and C, Q on Y, so one GLB read of an input word serves
    the PEs whose windows overlap. With 1-word RF tiles, 9 distinct input offsets along
    W serve 12 PEs (strides 2 and 1); the bound at the root, whose free factors all sit
    in the RF (large tiles: no overlap), must not count 12."""
    from accelerators import eyeriss_v1
    from mappers.mapping import Mapping
    from mappers.workloads import conv2d

    arch = eyeriss_v1().to_arch()
    layer = conv2d("f0", K=4, C=3, P=8, Q=8, R=3, S=3, stride=2)
    m = Mapping.create(arch, ({"K": 4}, {"P": 8}, {"Q": 2}), ({}, {"R": 3, "S": 3}, {}),
                       ({}, {"C": 3, "Q": 4}, {}), None,
                       (frozenset("O"), frozenset("WO"), frozenset()))
    assert not m.violations(layer, arch)
    batch = MappingBatch.from_mappings(layer, arch, [m])
    exact = evaluate_batch(layer, arch, batch)
    for known in range(1, arch.n_levels + 1):
        lb = LOOPNEST.lower_bound(layer, arch, _placed_low(batch, known), known, kernel=kernel)
        assert float(lb.energy_pj[0]) <= float(exact.energy_pj[0]) * (1 + 1e-12), known
        assert float(lb.edp[0]) <= float(exact.edp[0]) * (1 + 1e-12), known
    # the least over the completions' strides is attained: this mapping's own 1-word RF
    # tiles give 9 offsets, and the root bound's GLB input reads equal the mapping's
    lb = LOOPNEST.lower_bound(layer, arch, _placed_low(batch, arch.n_levels), arch.n_levels, kernel=kernel)
    assert float(lb.reads[0][1][1]) == float(exact.reads[0][1][1])
    if kernel:     # the compiled bound equals the numpy one
        ref = LOOPNEST.lower_bound(layer, arch, _placed_low(batch, arch.n_levels), arch.n_levels, kernel=False)
        for f in ("reads", "writes", "noc_words", "energy_pj", "bandwidth_cycles"):
            np.testing.assert_array_equal(np.asarray(getattr(lb, f)), np.asarray(getattr(ref, f)), err_msg=f)


def _stationary(layer, batch: MappingBatch, level: int) -> np.ndarray:
    """Per mapping, the operand the innermost loop (factor > 1) of ``level`` is
    irrelevant to (0 when the level has no such loop: then any choice is right)."""
    from mappers.orders import OrderStructure

    irrelevant_to = OrderStructure.of(layer).irrelevant_to
    out = np.zeros(len(batch), dtype=np.int64)
    for i in range(len(batch)):
        loops = [d for d in batch.order[i, level] if batch.temporal[i, level, d] > 1]
        if loops:
            out[i] = max(irrelevant_to[loops[-1]], 0)
    return out


@pytest.mark.parametrize("seed", range(16))
def test_bounds_with_capacities_and_the_stationary_operand(seed):
    """With binding capacities (the sweep terms) and, for the level below the last known
    tile, the operand the next level leaves stationary and the exact mapper's table of
    the largest irrelevant extents of a tile that fits: still at most every legal
    mapping's figures."""
    from mappers.exact import irrelevant_tile_table
    from mappers.exhaustive import enumerate_mappings
    from tests.mappers.test_exact import small_arch, small_layer

    rng = np.random.default_rng(500 + seed)
    layer, arch = small_layer(rng), small_arch(rng)
    try:
        batch = next(iter(enumerate_mappings(layer, arch, bypass=True, orders=True, max_mappings=400_000)), None)
    except ValueError:                                   # too many to list: without bypass
        batch = next(iter(enumerate_mappings(layer, arch, bypass=False, orders=True, max_mappings=4_000_000)),
                     None)
    if batch is None:
        return
    r = evaluate_batch(layer, arch, batch)
    ok = np.flatnonzero(np.asarray(r.valid))
    if not len(ok):
        return
    ok = ok[rng.permutation(len(ok))[:1500]]
    batch = batch.take(ok)
    exact = evaluate_batch(layer, arch, batch)
    L = arch.n_levels
    for known in range(L + 1):
        c = known - 2
        if 0 <= c < L - 1:
            irr = irrelevant_tile_table(layer, arch, c, batch.keep[:, c, :])
            stationary = _stationary(layer, batch, known - 1)
            rows = [np.flatnonzero(stationary == s) for s in range(3) if (stationary == s).any()]
            lb = [LOOPNEST.lower_bound(layer, arch, batch.take(idx), known, stationary=int(stationary[idx[0]]),
                                       irrelevant_tile=irr[idx]) for idx in rows]
        else:
            lb, rows = [LOOPNEST.lower_bound(layer, arch, batch, known)], [np.arange(len(batch))]
        for res, idx in zip(lb, rows):
            for field in ("energy_pj", "compute_cycles"):
                got, want = np.asarray(getattr(res, field)), np.asarray(getattr(exact, field))[idx]
                assert (got <= want * (1 + 1e-9) + 1e-9).all(), (known, field)
            got, want = np.asarray(res.bandwidth_cycles), np.asarray(exact.bandwidth_cycles)[idx]
            assert (got <= want * (1 + 1e-9) + 1e-9).all(), (known, "bandwidth")


@pytest.mark.parametrize("seed", range(12))
def test_bounds_with_leakage_never_exceed_the_mapping_itself(seed):
    """Leakage enters the bound as leakage x the latency bound (at most the latency)."""
    rng = np.random.default_rng(900 + seed)
    layer, arch = random_layer(rng), random_arch(rng)
    levels = [dataclasses.replace(lv, leakage_pj_per_cycle=float(rng.uniform(0.5, 50))) for lv in arch.levels]
    levels[-1] = dataclasses.replace(levels[-1], bandwidth_words_per_cycle=float(rng.choice([0.5, 2.0, 8.0])))
    arch = dataclasses.replace(arch, levels=tuple(levels))
    maps = [random_mapping(rng, layer, arch) for _ in range(12)]
    batch = MappingBatch.from_mappings(layer, arch, maps)
    exact = evaluate_batch(layer, arch, batch)
    assert (np.asarray(exact.leakage_energy_pj) > 0).all()
    for known in range(arch.n_levels + 1):
        lb = LOOPNEST.lower_bound(layer, arch, batch, known)
        assert (np.asarray(lb.energy_pj) <= np.asarray(exact.energy_pj) * (1 + 1e-9) + 1e-9).all(), known
        assert (np.asarray(lb.leakage_energy_pj) <= np.asarray(exact.leakage_energy_pj) * (1 + 1e-9)).all()


def _stationary_above(layer, batch: MappingBatch, c: int) -> np.ndarray:
    """Per mapping, the operand the innermost loop (factor > 1) above level ``c`` -- the
    innermost of the first level above ``c`` that has one -- is irrelevant to (-1: none,
    or no such loop)."""
    from mappers.orders import OrderStructure

    irrelevant_to = OrderStructure.of(layer).irrelevant_to
    out = np.full(len(batch), -1, dtype=np.int64)
    for i in range(len(batch)):
        for lvl in range(c + 1, batch.temporal.shape[1]):
            loops = [d for d in batch.order[i, lvl] if batch.temporal[i, lvl, d] > 1]
            if loops:
                out[i] = irrelevant_to[loops[-1]]
                break
    return out


@pytest.mark.parametrize("seed", range(16))
def test_bounds_with_the_stationary_operand_at_every_level(seed):
    """The refinement at every level ``c`` below the last known tile (issue 41), each with
    the operand the loops directly above it leave stationary (as the mapping's own orders
    have it) and the exact mapper's table for that level: at most every legal mapping's
    figures, on the small layers x architectures of the exact mapper's certification."""
    from mappers.exact import irrelevant_tile_table
    from mappers.exhaustive import enumerate_mappings
    from tests.mappers.test_exact import small_arch, small_layer

    rng = np.random.default_rng(7100 + seed)
    layer, arch = small_layer(rng), small_arch(rng)
    try:
        batch = next(iter(enumerate_mappings(layer, arch, bypass=True, orders=True, max_mappings=400_000)), None)
    except ValueError:
        batch = next(iter(enumerate_mappings(layer, arch, bypass=False, orders=True, max_mappings=4_000_000)),
                     None)
    if batch is None:
        return
    ok = np.flatnonzero(np.asarray(evaluate_batch(layer, arch, batch).valid))
    if not len(ok):
        return
    batch = batch.take(ok[rng.permutation(len(ok))[:1500]])
    exact = evaluate_batch(layer, arch, batch)
    L = arch.n_levels
    for known in range(2, L + 1):
        refined = [c for c in range(known - 1) if c < L - 1]
        table = np.full((len(batch), L, 3), -1.0)
        for c in refined:
            t = irrelevant_tile_table(layer, arch, c, batch.keep[:, c, :])
            if t is not None:
                table[:, c] = t
        st = np.stack([_stationary_above(layer, batch, c) for c in range(L)], axis=1)     # (n, L)
        st[:, [c for c in range(L) if c not in refined]] = -1
        codes, inverse = np.unique(st, axis=0, return_inverse=True)
        for r, code in enumerate(codes):
            idx = np.flatnonzero(inverse.ravel() == r)
            res = LOOPNEST.lower_bound(layer, arch, batch.take(idx), known, stationary=[int(s) for s in code],
                                       irrelevant_tile=table[idx])
            for field in ("energy_pj", "compute_cycles", "bandwidth_cycles"):
                got, want = np.asarray(getattr(res, field)), np.asarray(getattr(exact, field))[idx]
                assert (got <= want * (1 + 1e-9) + 1e-9).all(), (known, field, code)


@pytest.mark.parametrize("seed", range(8))
def test_spatial_floor_bounds_every_mapping(seed):
    """:meth:`LoopNestCost.spatial_floor` (compulsory energy x MACs / spatial product) is
    at most the EDP and the latency of random mappings on architectures without a
    dataflow, and declines (``None``) for energy and for a systolic dataflow."""
    rng = np.random.default_rng(7300 + seed)
    layer, arch = random_layer(rng), random_arch(rng)
    maps = [random_mapping(rng, layer, arch) for _ in range(20)]
    batch = MappingBatch.from_mappings(layer, arch, maps)
    r = evaluate_batch(layer, arch, batch)
    prod = np.prod(batch.spatial_x * batch.spatial_y, axis=(1, 2))
    assert LOOPNEST.spatial_floor(layer, arch, "energy", prod) is None
    assert arch.dataflow is None
    for objective, want in (("edp", r.edp), ("latency", r.latency_cycles)):
        f = LOOPNEST.spatial_floor(layer, arch, objective, prod)
        assert (f <= np.asarray(want) * (1 + 1e-12)).all(), objective
    # tight in cycles where the factors multiply to the sizes (the exact mapper's space):
    # compute cycles are exactly MACs / product there
    sizes = np.array([layer.dims[d] for d in batch.dims])
    exact = (np.prod(batch.temporal * batch.spatial_x * batch.spatial_y, axis=1) == sizes).all(axis=1)
    np.testing.assert_allclose(np.asarray(r.compute_cycles)[exact], (layer.macs / prod)[exact])


def test_spatial_floor_declines_a_systolic_dataflow():
    """A systolic array's compute cycles include its fold cycles: no floor there."""
    from accelerators import SystolicArray

    arch = SystolicArray(rows=8, cols=8, dataflow="OS", ifmap_sram_kib=8, filter_sram_kib=8,
                         ofmap_sram_kib=8).to_arch()
    assert arch.dataflow is not None
    assert LOOPNEST.spatial_floor(random_layer(np.random.default_rng(0)), arch, "edp", np.ones(2)) is None


def _sliding_refinement_raised(n_cases: int, seed: int, per_chunk: int, wide: bool = False) -> int:
    """The capacity-aware bound of a sliding-window input (issue 41) at every refined
    level, with each mapping's own stationary operands: at most every legal mapping's
    figures, on strided convolutions with small register files and bypass (every mapping
    enumerated); and it raises the input's bounded traffic on some of them (else this
    test could not fail for it). ``wide``: windows of stride 1 to 3 and filter 1 to 4
    (:func:`tests.mappers.test_exact.sliding_layer_wide`)."""
    from mappers.exact import irrelevant_tile_table
    from mappers.exhaustive import enumerate_mappings
    from tests.mappers.test_exact import sliding_cases, sliding_layer, sliding_layer_wide

    raised = 0
    rng = np.random.default_rng(seed + 1)
    for layer, arch in sliding_cases(n_cases, seed, layers=sliding_layer_wide if wide else sliding_layer):
        valid = []
        for chunk in enumerate_mappings(layer, arch, bypass=True, orders=True, max_mappings=400_000):
            ok = np.flatnonzero(np.asarray(evaluate_batch(layer, arch, chunk).valid))
            if len(ok):
                valid.append(chunk.take(ok[rng.permutation(len(ok))[:per_chunk]]))
        if not valid:
            continue
        batch = MappingBatch(valid[0].dims, *(np.concatenate([getattr(b, f) for b in valid])
                                              for f in ("temporal", "spatial_x", "spatial_y", "order", "keep")))
        exact = evaluate_batch(layer, arch, batch)
        L = arch.n_levels
        for known in range(2, L + 1):
            refined = [c for c in range(known - 1) if c < L - 1]
            table = np.full((len(batch), L, 3), -1.0)
            for c in refined:
                table[:, c] = irrelevant_tile_table(layer, arch, c, batch.keep[:, c, :])
            plain = table.copy()
            plain[:, :, 1] = -1.0                        # the input's column unrefined
            st = np.stack([_stationary_above(layer, batch, c) for c in range(L)], axis=1)
            st[:, [c for c in range(L) if c not in refined]] = -1
            codes, inverse = np.unique(st, axis=0, return_inverse=True)
            for r, code in enumerate(codes):
                idx = np.flatnonzero(inverse.ravel() == r)
                kw = {"stationary": [int(s) for s in code]}
                res = LOOPNEST.lower_bound(layer, arch, batch.take(idx), known, irrelevant_tile=table[idx], **kw)
                base = LOOPNEST.lower_bound(layer, arch, batch.take(idx), known, irrelevant_tile=plain[idx], **kw)
                for field in ("energy_pj", "compute_cycles", "bandwidth_cycles"):
                    got, want = np.asarray(getattr(res, field)), np.asarray(getattr(exact, field))[idx]
                    assert (got <= want * (1 + 1e-9) + 1e-9).all(), (layer, known, field, code)
                raised += int((np.asarray(res.writes)[:, :, 1] > np.asarray(base.writes)[:, :, 1] + 0.5).any(
                    axis=1).sum())
    return raised


def test_the_sliding_input_refinement_is_a_bound_and_is_active():
    assert _sliding_refinement_raised(3, 7700, 150) > 0


@pytest.mark.slow
def test_the_sliding_input_refinement_is_a_bound_on_many_more_cases():
    assert _sliding_refinement_raised(40, 7800, 2000) > 0


def test_the_sliding_input_refinement_is_a_bound_on_windows_of_stride_1_to_3_and_filter_1_to_4():
    assert _sliding_refinement_raised(3, 7902, 300, wide=True) > 0


@pytest.mark.slow
def test_the_sliding_input_refinement_is_a_bound_on_many_more_wide_windows():
    assert _sliding_refinement_raised(40, 7902, 2000, wide=True) > 0


def _gate_case():
    """A stride-3 convolution whose register file holds 3 input words, under a 2 x 2
    fanout: the partial mapping (row 35 of 400 random ones, known = 2) splits the window
    axis ``3 P + R`` spatially, so an instance's share of the input has at least
    ``X_P + X_R - 1 = 3`` distinct words (the sumset bound) but a bounding box of more
    than 3 words."""
    from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
    from mappers.sampling import random_mappings
    from mappers.workloads import conv2d

    layer = conv2d("gate", N=1, K=4, C=1, P=4, Q=1, R=2, S=1, stride=3, dilation=1)
    rf = MemoryLevel("RF", tensors=frozenset(OPERANDS), capacity_words={"W": 1, "I": 3, "O": 1}, instances=4,
                     read_energy_pj=0.5, write_energy_pj=0.5, bandwidth_words_per_cycle=None)
    glb = MemoryLevel("GLB", tensors=frozenset(OPERANDS), capacity_words=200, instances=1, fanout_x=2, fanout_y=2,
                      read_energy_pj=5.0, write_energy_pj=5.0, multicast=True, bandwidth_words_per_cycle=4.0)
    dram = MemoryLevel("DRAM", read_energy_pj=100.0, write_energy_pj=100.0, bandwidth_words_per_cycle=2.0)
    arch = ArchSpec("gate", (rf, glb, dram), mac_energy_pj=1.0)
    return layer, arch, random_mappings(layer, arch, 400, seed=35, bypass=True).take(np.array([35]))


def test_the_sliding_refinement_applies_where_the_shares_box_does_not_fit():
    """The sliding input's capacity-aware bound is gated on the bounding box of an
    instance's share (the tile the level would hold were no loop above it over the
    input's dimensions > 1), not on the sumset bound of its distinct words, which may fit
    where the box does not: on :func:`_gate_case` the refinement raises the input's fills
    (a gate on the distinct words left them at the unrefined bound), and the least bound
    over the stationary operands stays at most every completion of the partial mapping
    (every split of its undecided factors between the register file and the buffer, every
    loop order of the buffer)."""
    import itertools

    from mappers.exact import irrelevant_tile_table
    from mappers.mapping_space import divisors

    layer, arch, row = _gate_case()
    known, L = 2, arch.n_levels
    table = np.full((1, L, 3), -1.0)
    table[:, 0] = irrelevant_tile_table(layer, arch, 0, row.keep[:, 0, :])
    plain = table.copy()
    plain[:, :, 1] = -1.0
    refined = LOOPNEST.lower_bound(layer, arch, row, known, stationary=[0, -1, -1], irrelevant_tile=table)
    base = LOOPNEST.lower_bound(layer, arch, row, known, stationary=[0, -1, -1], irrelevant_tile=plain)
    assert np.asarray(refined.writes)[0, 0, 1] > np.asarray(base.writes)[0, 0, 1] + 0.5
    # every completion: the undecided factors (levels 0 and 1) split every way, every order of level 1
    rem = row.temporal[0, 0] * row.temporal[0, 1]
    D = len(row.dims)
    splits = list(itertools.product(*[divisors(int(r)) for r in rem]))
    perms = np.array(list(itertools.permutations(range(D))))
    T = np.repeat(row.temporal, len(splits) * len(perms), axis=0)
    lower = np.repeat(np.array(splits, dtype=np.int64), len(perms), axis=0)
    T[:, 0], T[:, 1] = lower, rem[None, :] // lower
    order = np.repeat(row.order, len(T), axis=0)
    order[:, 1] = np.tile(perms, (len(splits), 1))
    n = len(T)
    comps = MappingBatch(row.dims, T, np.repeat(row.spatial_x, n, 0), np.repeat(row.spatial_y, n, 0), order,
                         np.repeat(row.keep, n, 0))
    exact = evaluate_batch(layer, arch, comps)
    ok = np.asarray(exact.valid)
    assert ok.any()
    least = {f: np.inf for f in ("energy_pj", "compute_cycles", "bandwidth_cycles")}
    for s in range(3):
        r = LOOPNEST.lower_bound(layer, arch, row, known, stationary=[s, -1, -1], irrelevant_tile=table)
        for f in least:
            least[f] = np.minimum(least[f], np.asarray(getattr(r, f))[0])
    for f, bound in least.items():
        got = np.asarray(getattr(exact, f))[ok]
        assert (np.asarray(bound) <= got * (1 + 1e-9) + 1e-9).all(), f
