"""Bounds hold for every mapping; mapping spaces contain only legal mappings; the
exhaustive mapper is optimal and enumerates every exact mapping; the heuristic is sane."""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import pytest

from accelerators import SystolicArray, eyeriss_v1
from accelerators.arch import ArchSpec, MemoryLevel
from evaluators.loopnest import evaluate_batch
from evaluators.loopnest.compulsory import (
    edp_lower_bound,
    energy_lower_bound_pj,
    latency_lower_bound_cycles,
    touched_words,
)
from evaluators.loopnest.walk import simulate
from mappers.exhaustive import ExhaustiveMapper, enumerate_mappings, factorizations
from mappers.heuristic import HeuristicMapper
from mappers.mapping import MappingBatch
from mappers.mapping_space import batch_from_columns, mapping_space, prime_factors
from mappers.sampling import RandomMapper, random_mappings
from mappers.workloads import conv2d, gemm
from tests.evaluators.mapping_gen import random_arch, random_layer, random_mapping

TOY = ArchSpec("toy", (
    MemoryLevel("RF", capacity_words={"W": 8, "I": 8, "O": 8}, instances=4, read_energy_pj=1.0,
                write_energy_pj=1.0),
    MemoryLevel("GLB", capacity_words=64, fanout_x=2, fanout_y=2, read_energy_pj=6.0,
                write_energy_pj=6.0, noc_energy_pj=2.0, bandwidth_words_per_cycle=4),
    MemoryLevel("DRAM", read_energy_pj=200.0, write_energy_pj=200.0, bandwidth_words_per_cycle=1),
), mac_energy_pj=1.0)


def systolic(df: str) -> ArchSpec:
    return SystolicArray(rows=16, cols=8, dataflow=df, ifmap_sram_kib=64, filter_sram_kib=64,
                         ofmap_sram_kib=64, dram_bw_words_per_cycle=8).to_arch()


def test_touched_words_by_brute_force():
    for layer in (conv2d("s2", K=2, C=3, P=5, Q=4, R=1, S=1, stride=2),
                  conv2d("d2", K=1, C=1, P=4, Q=3, R=3, S=2, stride=3, dilation=2),
                  conv2d("dw", K=3, C=3, groups=3, P=3, Q=3, R=3, S=3)):
        dims = layer.dims
        for op in ("W", "I", "O"):
            t = layer.tensor(op)
            seen = {tuple(sum(c * idx[d] for d, c in axis) for axis in t.axes)
                    for idx in (dict(zip(dims, v)) for v in product(*(range(n) for n in dims.values())))}
            assert touched_words(layer, op) == len(seen), (layer, op)


@pytest.mark.parametrize("seed", range(40))
def test_no_mapping_beats_the_bounds(seed):
    rng = np.random.default_rng(seed)
    layer = random_layer(rng)
    arch = random_arch(rng)
    levels = list(arch.levels)
    levels[-1] = MemoryLevel("DRAM", read_energy_pj=100.0, write_energy_pj=100.0,
                             bandwidth_words_per_cycle=float(rng.integers(1, 4)))
    arch = ArchSpec(arch.name, tuple(levels), mac_energy_pj=1.0)
    maps = [random_mapping(rng, layer, arch) for _ in range(20)]
    r = evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, maps))
    assert (r.energy_pj >= energy_lower_bound_pj(layer, arch) - 1e-9).all()
    assert (r.latency_cycles >= latency_lower_bound_cycles(layer, arch) - 1e-9).all()
    assert (r.edp >= edp_lower_bound(layer, arch) * (1 - 1e-12)).all()


def test_bounds_are_attained_by_an_ideal_case():
    """One level holding everything, DRAM read once per word: the bound is exact."""
    layer = gemm("g", M=2, N=2, K=2)
    arch = ArchSpec("a", (MemoryLevel("B", capacity_words=100, read_energy_pj=0.0, write_energy_pj=0.0),
                          MemoryLevel("DRAM", read_energy_pj=10.0, write_energy_pj=10.0)), mac_energy_pj=1.0)
    r = ExhaustiveMapper().map(layer, arch, evaluate_batch)
    assert r.energy_pj == energy_lower_bound_pj(layer, arch) == 8 + 12 * 10
    assert r.latency_cycles == latency_lower_bound_cycles(layer, arch) == 8


@pytest.mark.parametrize("arch_factory", [lambda: TOY, eyeriss_v1().to_arch, lambda: systolic("OS"),
                                          lambda: systolic("WS"), lambda: systolic("IS")])
def test_mapping_space_samples_are_legal(arch_factory):
    arch = arch_factory()
    for layer in (conv2d("c", K=8, C=6, P=7, Q=7, R=3, S=3), gemm("g", M=12, N=10, K=8),
                  conv2d("dw", K=8, C=8, groups=8, P=5, Q=5, R=3, S=3)):
        space = mapping_space(layer, arch)
        pts = space.sample(200, seed=1)
        batch = batch_from_columns(layer, arch, space.columns(pts))
        res = evaluate_batch(layer, arch, batch)
        assert res.valid.all()
        for i in range(0, 200, 17):
            assert batch.mapping(i).violations(layer, arch) == []
            assert space.validate(pts[i]) == []


def test_systolic_dataflow_rules_hold_in_samples():
    layer = conv2d("c", K=8, C=6, P=7, Q=7, R=3, S=3)
    dims = layer.dim_names
    for df, rows, cols, pe in (("OS", {"N", "P", "Q"}, {"K"}, {"C", "R", "S"}),
                               ("WS", {"C", "R", "S"}, {"K"}, {"N", "P", "Q"}),
                               ("IS", {"C", "R", "S"}, {"N", "P", "Q"}, {"K"})):
        arch = systolic(df)
        b = random_mappings(layer, arch, 500, seed=0)
        used_y = {dims[j] for j in range(len(dims)) if (b.spatial_y[:, 1, j] > 1).any()}
        used_x = {dims[j] for j in range(len(dims)) if (b.spatial_x[:, 1, j] > 1).any()}
        used_pe = {dims[j] for j in range(len(dims)) if (b.temporal[:, 0, j] > 1).any()}
        assert used_y <= rows and used_x <= cols and used_pe <= pe, df
        stationary = {"OS": 2, "WS": 0, "IS": 1}[df]
        assert b.keep[:, 0, stationary].all() and not np.delete(b.keep[:, 0], stationary, axis=1).any()


def test_factorizations_count_matches_formula():
    for n, k in ((12, 3), (64, 4), (56, 5), (7, 2), (1, 3)):
        fs = factorizations(n, k)
        assert all(math.prod(f) == n for f in fs) and len(set(fs)) == len(fs)
        primes = {p: prime_factors(n).count(p) for p in set(prime_factors(n))}
        assert len(fs) == math.prod(math.comb(e + k - 1, k - 1) for e in primes.values())


def test_exhaustive_is_optimal_and_heuristic_close():
    layer = gemm("g", M=4, N=4, K=6)
    ex = ExhaustiveMapper().map(layer, TOY, evaluate_batch)
    n = sum(len(b) for b in enumerate_mappings(layer, TOY))
    assert ex.evaluated == n
    rnd = evaluate_batch(layer, TOY, random_mappings(layer, TOY, 3000, seed=1))
    assert np.min(np.where(rnd.valid, rnd.edp, np.inf)) >= ex.edp
    h = HeuristicMapper().map(layer, TOY, evaluate_batch)
    assert h.edp <= 1.1 * ex.edp and h.evaluated < n / 10
    # the best mapping's counts are exact too
    ref = simulate(layer, TOY, ex.mapping)
    np.testing.assert_array_equal(evaluate_batch(layer, TOY, ex.batch).reads[0], ref.reads)


def test_heuristic_beats_random_on_a_resnet_layer():
    layer = conv2d("res3x3", K=64, C=64, P=56, Q=56, R=3, S=3)
    for arch in (eyeriss_v1().to_arch(), systolic("WS")):
        h = HeuristicMapper().map(layer, arch, evaluate_batch)
        r = RandomMapper(5000).map(layer, arch, evaluate_batch, seed=0)
        assert h.edp <= r.edp and h.evaluated < 5000
        assert h.edp >= edp_lower_bound(layer, arch)
