"""The loop-nest model equals a literal loop-nest walk, count for count: the numpy code
and, where numba is installed, the compiled kernel (evaluators/loopnest/kernel.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from accelerators.arch import ArchSpec, MemoryLevel
from evaluators.loopnest import ACCOUNTING, Conventions, evaluate_batch, kernel_available
from evaluators.loopnest.walk import energy_and_latency, simulate
from mappers.mapping import Mapping, MappingBatch
from mappers.workloads import conv2d, gemm
from tests.evaluators.mapping_gen import random_arch, random_layer, random_mapping

PATHS = [False] + ([True] if kernel_available() else [])


def compare(layer, arch, mappings):
    """Both paths (numpy, kernel) against the walk; returns the last path's result."""
    batch = MappingBatch.from_mappings(layer, arch, mappings)
    results = [evaluate_batch(layer, arch, batch, kernel=k) for k in PATHS]
    for i, m in enumerate(mappings):
        ref = simulate(layer, arch, m)
        for kernel, res in zip(PATHS, results):
            ctx = f" (kernel={kernel})\n{layer}\n{m}"
            np.testing.assert_array_equal(res.reads[i], ref.reads, err_msg="reads" + ctx)
            np.testing.assert_array_equal(res.writes[i], ref.writes, err_msg="writes" + ctx)
            np.testing.assert_array_equal(res.noc_words[i], ref.noc_words, err_msg="noc" + ctx)
            assert res.macs_executed[i] == ref.iterations * ref.mac_instances
    return results[-1]


@pytest.mark.parametrize("seed", range(60))
def test_random_layers_archs_mappings_match_reference(seed):
    rng = np.random.default_rng(seed)
    layer = random_layer(rng)
    arch = random_arch(rng)
    maps = [random_mapping(rng, layer, arch) for _ in range(3)]
    compare(layer, arch, maps)


@pytest.mark.parametrize("seed", [4402, 5771])
def test_rare_multi_level_unrolling_matches_reference(seed, monkeypatch):
    """Seeds (found by search) where one dimension of a two-dimension input axis is
    unrolled at two fanout levels of one segment: the exact enumeration path (the numpy
    model's, checked to run here; the kernel enumerates under the same condition)."""
    from evaluators.loopnest import counts

    calls = []
    orig = counts.fix_multi
    monkeypatch.setattr(counts, "fix_multi", lambda *a, **k: calls.append(1) or orig(*a, **k))
    rng = np.random.default_rng(seed)
    layer = random_layer(rng)
    arch = random_arch(rng)
    compare(layer, arch, [random_mapping(rng, layer, arch) for _ in range(2)])
    assert calls, "the enumeration path was not exercised"


TOY = ArchSpec("toy2x2", (
    MemoryLevel("RF", capacity_words={"W": 1, "I": 0, "O": 1}, tensors=frozenset({"W", "O"}), instances=4,
                read_energy_pj=1.0, write_energy_pj=1.0),
    MemoryLevel("SRAM", capacity_words=1024, fanout_x=2, fanout_y=2, read_energy_pj=6.0,
                write_energy_pj=6.0, noc_energy_pj=2.0),
    MemoryLevel("DRAM", read_energy_pj=200.0, write_energy_pj=200.0),
), mac_energy_pj=1.0)


def test_hand_computed_gemm_on_2x2_weight_stationary():
    """C[4x2] = A[4x2] B[2x2] on a 2x2 array, weight stationary: B[k, n] sits in the RF
    of PE (k, n) (K on the Y rows, N on the X columns); the 4 rows m of A stream through
    (the temporal M loop of the RF level); I and O bypass the RF, so A is read from SRAM
    every cycle (multicast along a row) and partial sums are reduced down the columns
    into SRAM. Every expected number below is derived by hand in its comment."""
    layer = gemm("g", M=4, N=2, K=2)
    m = Mapping.create(TOY, temporal=[{"M": 4}, {}, {}], spatial_x=[{}, {"N": 2}, {}],
                       spatial_y=[{}, {"K": 2}, {}], bypass=[{"O"}, set(), set()])
    assert m.violations(layer, TOY) == []
    res = compare(layer, TOY, [m])
    r, w = res.reads[0], res.writes[0]
    # W: each PE's RF loads its one weight once (RF writes 4; SRAM reads 4 distinct
    # weights, SRAM writes 4, DRAM reads 4); the MAC reads it every iteration: 4 x 4 = 16
    assert (r[0, 0], w[0, 0], r[1, 0], w[1, 0], r[2, 0]) == (16, 4, 4, 4, 4)
    # I: bypasses RF; MAC operands from SRAM: 4 iterations x 2 distinct rows = 8
    assert (r[0, 1], w[0, 1], r[1, 1], w[1, 1], r[2, 1]) == (0, 0, 8, 8, 8)
    # O: bypasses RF; per iteration 2 reduced updates (one per column) into SRAM over 4
    # iterations = 8 writes, never read back (each C[m, n] is produced once, fully
    # reduced); SRAM tile is all of C (8 words) -> evicted once to DRAM: SRAM reads 8,
    # DRAM writes 8.
    assert (w[1, 2], r[1, 2], w[2, 2], r[2, 2]) == (8, 8, 8, 0)
    # compute cycles = 4 temporal iterations; utilization 16 MACs / (4 cycles x 4 PEs)
    assert res.compute_cycles[0] == 4 and res.utilization[0] == 1.0
    # energy by hand: MACs 16 x 1; RF (16 + 4) x 1; SRAM (4+8+8 reads + 4+8+8 writes) x 6;
    # DRAM (4 + 8 reads + 8 writes) x 200; NoC: W 4 + I 16 (each PE receives A[m,k]) + O 16
    # deliveries (every MAC's partial sum crosses the array) = 36 x 2
    expect = 16 + 20 + 40 * 6 + 20 * 200 + 36 * 2
    assert res.energy_pj[0] == expect


def test_sliding_window_reuse_is_counted():
    """1-D conv, P=4, R=3 on one buffer: with P outside R at DRAM level and the buffer
    holding one output column's window, each step of P fetches only the one new input."""
    layer = conv2d("c1", K=1, C=1, P=4, Q=1, R=3, S=1)
    arch = ArchSpec("a", (MemoryLevel("B", capacity_words=100, read_energy_pj=1.0, write_energy_pj=1.0),
                          MemoryLevel("DRAM", read_energy_pj=10.0, write_energy_pj=10.0)), mac_energy_pj=1.0)
    m = Mapping.create(arch, temporal=[{"R": 3}, {"P": 4}])
    res = compare(layer, arch, [m])
    # input tile = 3 words; first fill 3, then 3 steps x 1 new word = 6 DRAM reads of I
    assert res.reads[0][1, 1] == 6 and res.writes[0][0, 1] == 6
    # weights (3 words) fetched once and reused across P: the P loop is irrelevant to W
    assert res.reads[0][1, 0] == 3


def test_padding_counts_wasted_iterations():
    layer = gemm("g", M=5, N=1, K=1)
    arch = ArchSpec("a", (MemoryLevel("B", capacity_words=100, fanout_x=2, read_energy_pj=1.0),
                          MemoryLevel("DRAM", read_energy_pj=10.0)), mac_energy_pj=1.0)
    m = Mapping.create(arch, temporal=[{}, {"M": 3}], spatial_x=[{"M": 2}, {}])
    assert m.violations(layer, arch) == []
    res = compare(layer, arch, [m])
    assert res.macs_executed[0] == 6 and res.compute_cycles[0] == 3
    assert res.utilization[0] == pytest.approx(5 / 6)
    bad = Mapping.create(arch, temporal=[{}, {"M": 4}], spatial_x=[{"M": 2}, {}])
    assert any("padding more than one outer step" in v for v in bad.violations(layer, arch))


def _leaky(arch, leak_pj_per_cycle, **dram):
    """``arch`` with each level's leakage (pJ per instance per cycle) and DRAM fields."""
    levels = [dataclasses.replace(lv, leakage_pj_per_cycle=x) for lv, x in zip(arch.levels, leak_pj_per_cycle)]
    levels[-1] = dataclasses.replace(levels[-1], **dram)
    return dataclasses.replace(arch, levels=tuple(levels))


@pytest.mark.parametrize("kernel", PATHS)
def test_hand_computed_leakage_scales_with_instances_and_latency(kernel):
    """The GEMM of the test above on TOY with leakage 0.5 pJ/cycle per RF (4 instances)
    and 3 pJ/cycle on the SRAM (1 instance), none on DRAM. Unlimited bandwidth: latency
    is the 4 compute cycles, so leakage is RF 0.5 x 4 x 4 = 8 and SRAM 3 x 1 x 4 = 12
    pJ. With DRAM at 1 word/cycle its 4 + 8 + 8 = 20 accesses take 20 cycles, so the
    latency is 20 and leakage RF 0.5 x 4 x 20 = 40, SRAM 3 x 20 = 60 pJ. The dynamic
    energy (4,348 pJ, derived above) and the per-level dynamic energy do not change."""
    layer = gemm("g", M=4, N=2, K=2)
    m = Mapping.create(TOY, temporal=[{"M": 4}, {}, {}], spatial_x=[{}, {"N": 2}, {}],
                       spatial_y=[{}, {"K": 2}, {}], bypass=[{"O"}, set(), set()])
    dynamic = 16 + 20 + 40 * 6 + 20 * 200 + 36 * 2
    base = evaluate_batch(layer, TOY, MappingBatch.from_mappings(layer, TOY, [m]), kernel=kernel)
    np.testing.assert_array_equal(base.leakage_energy_pj, [[0.0, 0.0, 0.0]])
    for dram, latency, leak in (({}, 4, [8.0, 12.0, 0.0]),
                                ({"bandwidth_words_per_cycle": 1.0}, 20, [40.0, 60.0, 0.0])):
        arch = _leaky(TOY, [0.5, 3.0, 0.0], **dram)
        res = evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, [m]), kernel=kernel)
        assert res.latency_cycles[0] == latency
        np.testing.assert_array_equal(res.leakage_energy_pj, [leak])
        np.testing.assert_array_equal(res.level_energy_pj, base.level_energy_pj)
        assert res.energy_pj[0] == dynamic + sum(leak)
        assert res.edp[0] == (dynamic + sum(leak)) * latency


def test_zero_leakage_leaves_every_result_bit_identical():
    rng = np.random.default_rng(7)
    layer, arch = random_layer(rng), random_arch(rng)
    batch = MappingBatch.from_mappings(layer, arch, [random_mapping(rng, layer, arch) for _ in range(6)])
    zero = _leaky(arch, [0.0] * arch.n_levels)
    for kernel in PATHS:
        a, b = evaluate_batch(layer, arch, batch, kernel=kernel), evaluate_batch(layer, zero, batch, kernel=kernel)
        for f in ("energy_pj", "edp", "latency_cycles", "level_energy_pj"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "1", True])
def test_leakage_must_be_a_finite_non_negative_number(bad):
    with pytest.raises(ValueError, match=r"level 'GLB': leakage_pj_per_cycle must be a finite number >= 0"):
        MemoryLevel("GLB", leakage_pj_per_cycle=bad)


@pytest.mark.parametrize("seed", range(40))
def test_energy_and_latency_with_leakage_and_vectors_match_the_walk(seed):
    """Random layers, hierarchies and mappings with leakage, bandwidth limits and access
    widths of 1-4 words on random levels: energy and latency of both paths equal the
    walk's (evaluators/loopnest/walk.energy_and_latency, exact fractions)."""
    rng = np.random.default_rng(3000 + seed)
    layer, arch = random_layer(rng), random_arch(rng)
    arch = dataclasses.replace(arch, levels=tuple(dataclasses.replace(
        lv, leakage_pj_per_cycle=float(rng.choice([0.0, 0.25, 3.0])), vector_words=int(rng.integers(1, 5)),
        bandwidth_words_per_cycle=lv.bandwidth_words_per_cycle or (float(rng.choice([0.5, 2.0, 4.0]))
                                                                    if rng.random() < 0.4 else None))
        for lv in arch.levels))
    if arch.dataflow is not None:
        return
    maps = [random_mapping(rng, layer, arch) for _ in range(3)]
    batch = MappingBatch.from_mappings(layer, arch, maps)
    results = [evaluate_batch(layer, arch, batch, kernel=k) for k in PATHS]
    for i, m in enumerate(maps):
        want_e, want_t = energy_and_latency(arch, simulate(layer, arch, m))
        for res in results:
            assert res.latency_cycles[i] == pytest.approx(want_t, rel=1e-12)
            assert res.energy_pj[i] == pytest.approx(want_e, rel=1e-12)


@pytest.mark.parametrize("seed", range(24))
def test_leakage_on_utilized_instances_and_the_accountings_match_the_walk(seed):
    """Energy and latency of both paths under ``leakage="utilized_instances"`` alone, the
    Timeloop accounting (which uses it) and the ZigZag one, with leakage, bandwidth
    limits and 1-4-word accesses, equal the walk's under the same conventions (its counts
    from ``simulate(..., conventions)``, its energy from ``energy_and_latency(...,
    conventions)``: leakage x the instances the walk enumerated). The sample must hold
    mappings that leave instances idle, where the two leakage rules differ."""
    rng = np.random.default_rng(9100 + seed)
    layer, arch = random_layer(rng), random_arch(rng)
    arch = dataclasses.replace(arch, levels=tuple(dataclasses.replace(
        lv, leakage_pj_per_cycle=float(rng.choice([0.25, 3.0])), vector_words=int(rng.integers(1, 5)),
        bandwidth_words_per_cycle=lv.bandwidth_words_per_cycle or (float(rng.choice([0.5, 2.0, 4.0]))
                                                                    if rng.random() < 0.4 else None))
        for lv in arch.levels))
    if arch.dataflow is not None:
        return
    maps = [random_mapping(rng, layer, arch) for _ in range(3)]
    batch = MappingBatch.from_mappings(layer, arch, maps)
    for conv in (Conventions(leakage="utilized_instances"), ACCOUNTING["timeloop"], ACCOUNTING["zigzag"]):
        results = [evaluate_batch(layer, arch, batch, kernel=k, accounting=conv) for k in PATHS]
        for i, m in enumerate(maps):
            want_e, want_t = energy_and_latency(arch, simulate(layer, arch, m, conv), conv)
            for res in results:
                assert res.latency_cycles[i] == pytest.approx(want_t, rel=1e-12), conv
                assert res.energy_pj[i] == pytest.approx(want_e, rel=1e-12), conv


def test_leakage_rules_differ_where_instances_are_idle():
    """One of 4 RF instances used (no spatial factor): all-instances leakage charges 4 x
    the RF's rate, Timeloop's rule 1 x; the walk's oracle says the same."""
    layer = gemm("g", M=4, N=2, K=2)
    arch = dataclasses.replace(TOY, levels=tuple(dataclasses.replace(lv, leakage_pj_per_cycle=1.0)
                                                 for lv in TOY.levels))
    m = Mapping.create(arch, temporal=[{"M": 4}, {"N": 2, "K": 2}, {}], bypass=[{"O"}, set(), set()])
    batch = MappingBatch.from_mappings(layer, arch, [m])
    n_rf = arch.levels[0].instances
    assert n_rf == 4
    for kernel in PATHS:
        every = evaluate_batch(layer, arch, batch, kernel=kernel)
        used = evaluate_batch(layer, arch, batch, kernel=kernel, accounting=Conventions(leakage="utilized_instances"))
        lat = every.latency_cycles[0]
        np.testing.assert_array_equal(every.leakage_energy_pj[0], [4 * lat, lat, lat])
        np.testing.assert_array_equal(used.leakage_energy_pj[0], [lat, lat, lat])
        assert every.energy_pj[0] - used.energy_pj[0] == 3 * lat
        conv = Conventions(leakage="utilized_instances")
        assert used.energy_pj[0] == pytest.approx(energy_and_latency(arch, simulate(layer, arch, m), conv)[0])


@pytest.mark.parametrize("kernel", PATHS)
def test_hand_computed_vector_accesses(kernel):
    """The weight-stationary GEMM above with 4-word accesses at the SRAM (one instance)
    and 3-word accesses at the RFs (4 instances). SRAM words (derived above): W reads 4,
    writes 4; I reads 8, writes 8; O reads 8, writes 8 -> ceil(4/4) = 1, ceil(8/4) = 2
    vector accesses each: 1 + 1 + 2 + 2 + 2 + 2 = 10 instead of 40 words. RF words: W
    reads 16 (4 per PE), writes 4 (1 per PE) -> per PE ceil(4/3) = 2 and ceil(1/3) = 1:
    4 x 2 + 4 x 1 = 12 accesses. Energies per access as before (SRAM 6, RF 1): energy =
    4,348 - 40 x 6 + 10 x 6 - 20 x 1 + 12 x 1 = 4,160 pJ."""
    layer = gemm("g", M=4, N=2, K=2)
    arch = dataclasses.replace(TOY, levels=(dataclasses.replace(TOY.levels[0], vector_words=3),
                                            dataclasses.replace(TOY.levels[1], vector_words=4), TOY.levels[2]))
    m = Mapping.create(arch, temporal=[{"M": 4}, {}, {}], spatial_x=[{}, {"N": 2}, {}],
                       spatial_y=[{}, {"K": 2}, {}], bypass=[{"O"}, set(), set()])
    res = evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, [m]), kernel=kernel)
    np.testing.assert_array_equal(res.read_vectors[0][:2], [[8, 0, 0], [1, 2, 2]])
    np.testing.assert_array_equal(res.write_vectors[0][:2], [[4, 0, 0], [1, 2, 2]])
    assert res.energy_pj[0] == 4348 - 40 * 6 + 10 * 6 - 20 + 12
    assert evaluate_batch(layer, TOY, MappingBatch.from_mappings(layer, TOY, [m]), kernel=kernel).read_vectors is None


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4", True])
def test_vector_words_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match=r"level 'GLB': vector_words must be an integer >= 1, got"):
        MemoryLevel("GLB", vector_words=bad)
