"""Separate read and write bandwidths (evaluators/loopnest/bandwidth.py): a level's
bandwidth cycles are the largest of (reads + writes) over its shared bandwidth, reads over
its read bandwidth and writes over its write bandwidth, per active instance (Timeloop
v0.4's slowdown rule). By hand on a 2x2 weight-stationary GEMM; against the literal walk
and between the two paths (bit for bit, the parts included) on random layers x
architectures x mappings; the lower bounds stay below every mapping they bound; the
compulsory latency bound holds."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from accelerators.arch import MemoryLevel
from evaluators.loopnest import LOOPNEST, evaluate_batch, latency_lower_bound_cycles
from evaluators.loopnest.dispatch import kernel_available
from evaluators.loopnest.walk import energy_and_latency, simulate
from mappers.mapping import Mapping, MappingBatch
from mappers.workloads import gemm
from tests.evaluators.mapping_gen import random_arch, random_layer, random_mapping
from tests.evaluators.test_loopnest_exact import TOY

PATHS = [False] + ([True] if kernel_available() else [])
GEMM = gemm("g", M=4, N=2, K=2)
WS = Mapping.create(TOY, temporal=[{"M": 4}, {}, {}], spatial_x=[{}, {"N": 2}, {}], spatial_y=[{}, {"K": 2}, {}],
                    bypass=[{"O"}, set(), set()])


def _with(arch, **by_level):
    levels = [dataclasses.replace(lv, **by_level.get(lv.name, {})) for lv in arch.levels]
    return dataclasses.replace(arch, levels=tuple(levels))


# The counts of WS on TOY (tests/evaluators/test_loopnest_exact.py derives each by hand):
# RF (4 instances) reads 16 W, writes 4 W: per instance 4 reads, 1 write; SRAM (1) reads
# 4 + 8 + 8 = 20 and writes 4 + 8 + 8 = 20; DRAM reads 4 W + 8 I = 12 and writes 8 O.
# Compute: 4 cycles.
@pytest.mark.parametrize("kernel", PATHS)
@pytest.mark.parametrize("limits, level, parts, latency", [
    # DRAM reads 12 / 2 = 6, writes 8 / 1 = 8: the writes bind (their sum over 3 would give 20/3)
    ({"DRAM": {"read_bandwidth_words_per_cycle": 2.0, "write_bandwidth_words_per_cycle": 1.0}}, 2, [0, 6, 8], 8),
    # and a shared 2 words/cycle on top: (12 + 8) / 2 = 10 binds
    ({"DRAM": {"read_bandwidth_words_per_cycle": 2.0, "write_bandwidth_words_per_cycle": 1.0,
               "bandwidth_words_per_cycle": 2.0}}, 2, [10, 6, 8], 10),
    # reads alone on the SRAM: 20 / 4 = 5; writes unlimited
    ({"SRAM": {"read_bandwidth_words_per_cycle": 4.0}}, 1, [0, 5, 0], 5),
    # per instance: each RF reads 4 and writes 1; read 0.5 -> 8 cycles, write 0.25 -> 4
    ({"RF": {"read_bandwidth_words_per_cycle": 0.5, "write_bandwidth_words_per_cycle": 0.25}}, 0, [0, 8, 4], 8),
    # every limit loose: compute's 4 cycles
    ({"DRAM": {"read_bandwidth_words_per_cycle": 100.0, "write_bandwidth_words_per_cycle": 100.0}}, 2,
     [0, 0.12, 0.08], 4),
])
def test_hand_computed_read_and_write_limits(kernel, limits, level, parts, latency):
    arch = _with(TOY, **limits)
    assert arch.split_bandwidth
    res = evaluate_batch(GEMM, arch, MappingBatch.from_mappings(GEMM, arch, [WS]), kernel=kernel)
    np.testing.assert_allclose(res.bandwidth_parts[0][:, level], parts, rtol=1e-15)
    assert res.bandwidth_cycles[0][level] == max(parts)
    assert res.latency_cycles[0] == latency
    assert res.edp[0] == res.energy_pj[0] * latency
    assert res.energy_pj[0] == 16 + 20 + 40 * 6 + 20 * 200 + 36 * 2      # bandwidth changes no energy
    assert energy_and_latency(arch, simulate(GEMM, arch, WS))[1] == latency


def test_without_read_or_write_limits_there_are_no_parts():
    for kernel in PATHS:
        res = evaluate_batch(GEMM, TOY, MappingBatch.from_mappings(GEMM, TOY, [WS]), kernel=kernel)
        assert res.bandwidth_parts is None and not TOY.split_bandwidth


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "2", True])
@pytest.mark.parametrize("field", ["read_bandwidth_words_per_cycle", "write_bandwidth_words_per_cycle",
                                   "bandwidth_words_per_cycle"])
def test_a_bandwidth_must_be_a_positive_number(field, bad):
    with pytest.raises(ValueError, match=rf"level 'GLB': {field} must be a number > 0 or None"):
        MemoryLevel("GLB", **{field: bad})


def split_arch(rng: np.random.Generator):
    """:func:`random_arch` with read / write / shared limits (0.25-4 words per cycle) drawn
    per level, low enough to bind now and then."""
    arch = random_arch(rng)
    choice = [None, 0.25, 1.0, 4.0]
    return dataclasses.replace(arch, levels=tuple(dataclasses.replace(
        lv, read_bandwidth_words_per_cycle=choice[int(rng.integers(0, 4))],
        write_bandwidth_words_per_cycle=choice[int(rng.integers(0, 4))],
        bandwidth_words_per_cycle=choice[int(rng.integers(0, 4))]) for lv in arch.levels))


@pytest.mark.parametrize("seed", range(30))
def test_both_paths_equal_the_walk_and_each_other(seed):
    """Latency equals the walk's exact fractions; the kernel's every field (parts
    included) equals the numpy model's bit for bit, the lower bounds' at every
    ``known`` too, and the bounds never exceed the mappings they bound."""
    rng = np.random.default_rng(6100 + seed)
    layer, arch = random_layer(rng), split_arch(rng)
    maps = [random_mapping(rng, layer, arch) for _ in range(4)]
    batch = MappingBatch.from_mappings(layer, arch, maps)
    results = [evaluate_batch(layer, arch, batch, kernel=k) for k in PATHS]
    for i, m in enumerate(maps):
        want = energy_and_latency(arch, simulate(layer, arch, m))[1]
        for res in results:
            assert res.latency_cycles[i] == pytest.approx(want, rel=1e-12)
    exact = results[0]
    if arch.split_bandwidth:
        np.testing.assert_array_equal(np.asarray(exact.bandwidth_parts).max(axis=1), exact.bandwidth_cycles)
    if len(results) == 2:
        a, b = results
        for f in ("bandwidth_cycles", "bandwidth_parts", "latency_cycles", "edp", "energy_pj"):
            np.testing.assert_array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)), err_msg=f)
    for known in range(arch.n_levels + 1):
        bounds = [LOOPNEST.lower_bound(layer, arch, batch, known, kernel=k) for k in PATHS]
        for lb in bounds:
            assert (np.asarray(lb.bandwidth_cycles) <= np.asarray(exact.bandwidth_cycles) * (1 + 1e-9) + 1e-9).all()
            assert (np.asarray(lb.edp) <= np.asarray(exact.edp) * (1 + 1e-9) + 1e-9).all()
        if len(bounds) == 2:
            for f in ("bandwidth_cycles", "bandwidth_parts", "latency_cycles"):
                np.testing.assert_array_equal(np.asarray(getattr(bounds[0], f)), np.asarray(getattr(bounds[1], f)),
                                              err_msg=f"bound known={known} {f}")
    assert (np.asarray(exact.latency_cycles) >= latency_lower_bound_cycles(layer, arch) * (1 - 1e-12)).all()


def test_the_random_sample_has_binding_read_and_write_limits():
    """Not vacuous: in the sample above a read or a write term is some level's bandwidth
    cycles and sets the latency."""
    binding = 0
    for seed in range(30):
        rng = np.random.default_rng(6100 + seed)
        layer, arch = random_layer(rng), split_arch(rng)
        batch = MappingBatch.from_mappings(layer, arch, [random_mapping(rng, layer, arch) for _ in range(4)])
        r = evaluate_batch(layer, arch, batch, kernel=False)
        if r.bandwidth_parts is None:
            continue
        p = np.asarray(r.bandwidth_parts)                                   # (B, 3, L)
        sets = np.asarray(r.latency_cycles) == np.asarray(r.bandwidth_cycles).max(axis=1)
        binding += int((sets & (p[:, 1:].max(axis=(1, 2)) > p[:, 0].max(axis=1))).sum())
    assert binding > 0
