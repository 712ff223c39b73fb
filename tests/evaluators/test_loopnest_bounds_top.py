"""The top-level screen of the exact mapper (evaluators/loopnest/bounds_top.py): never
above the full bound of the children it screens, its table equal to their own top-level
counts, on random layers, architectures, bypass choices, bandwidths and accountings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from accelerators.arch import ArchSpec
from evaluators.loopnest import LoopNestCost
from evaluators.loopnest.bounds_top import TopFillTable, applies, top_level_bound
from mappers.mapping import MappingBatch
from mappers.orders import OrderStructure, canonical_orders
from mappers.sampling import random_mappings
from tests.evaluators.mapping_gen import random_arch, random_buffered_case, random_layer


def _three_or_more_levels(rng: np.random.Generator) -> ArchSpec:
    """A random hierarchy with at least three levels (the screen's domain)."""
    while True:
        arch = random_arch(rng)
        if arch.n_levels >= 3:
            return arch


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(4100 + seed)
    layer = random_layer(rng)
    arch = _three_or_more_levels(rng)
    top = arch.levels[-1]
    kind = seed % 3                            # the top level's bandwidth: none, shared, read/write apart
    if kind == 1:
        top = dataclasses.replace(top, bandwidth_words_per_cycle=float(rng.integers(1, 5)))
    elif kind == 2:
        top = dataclasses.replace(top, bandwidth_words_per_cycle=float(rng.integers(2, 6)),
                                  read_bandwidth_words_per_cycle=float(rng.integers(1, 4)),
                                  write_bandwidth_words_per_cycle=float(rng.integers(1, 3)))
    arch = ArchSpec(arch.name, (*arch.levels[:-1], top), mac_energy_pj=arch.mac_energy_pj)
    return layer, arch, random_mappings(layer, arch, 24, seed=seed, bypass=True)


def _placed(b: MappingBatch, known: int) -> MappingBatch:
    """Levels >= known kept; the factors below multiplied into level 0."""
    T = b.temporal.copy()
    T[:, 0] = np.prod(T[:, :known], axis=1)
    T[:, 1:known] = 1
    return MappingBatch(b.dims, T, b.spatial_x, b.spatial_y, b.order, b.keep)


@pytest.mark.parametrize("accounting", ["coexplore", "timeloop", "zigzag"])
@pytest.mark.parametrize("seed", range(12))
def test_the_screen_never_exceeds_the_childrens_bound(seed, accounting):
    layer, arch, batch = _case(seed)
    assert applies(arch)
    cost = LoopNestCost(accounting)
    L = arch.n_levels
    cands = np.stack(canonical_orders(OrderStructure.of(layer)))
    children = _placed(batch, L - 1)
    parents = _placed(batch, L)                 # the same rows with the top level's factors free too
    table = TopFillTable(layer, arch, cands, cost.conventions)
    for objective in ("edp", "energy", "latency"):
        screen = top_level_bound(layer, arch, parents, children, np.arange(len(batch)), table, objective,
                                 conventions=cost.conventions)
        full, _ = cost.least_lower_bound(layer, arch, children, L - 1, [L - 1], cands, objective)
        assert (screen <= full * (1 + 1e-9) + 1e-12).all(), (objective, screen / full)
        parent_alone, _ = cost.least_lower_bound(layer, arch, parents, L, [L - 1], cands[:1], objective)
        assert (screen >= parent_alone * (1 - 1e-9)).all()          # it only adds to the parent's counts
    # the table is the children's own top-level counts where the tile below keeps the operand
    rows = table.rows(children.temporal[:, L - 1])
    for k, cand in enumerate(cands):
        order = children.order.copy()
        order[:, L - 1] = cand
        r = cost.lower_bound(layer, arch, MappingBatch(children.dims, children.temporal, children.spatial_x,
                                                       children.spatial_y, order, children.keep), L - 1)
        kept = children.keep[:, L - 2]
        np.testing.assert_allclose(np.where(kept, table.reads[rows, k], 0), np.where(kept, r.reads[:, L - 1], 0),
                                   rtol=1e-12)
        np.testing.assert_allclose(np.where(kept, table.writes[rows, k], 0),
                                   np.where(kept, r.writes[:, L - 1], 0), rtol=1e-12)


def test_the_screen_declines_what_its_arithmetic_does_not_cover():
    rng = np.random.default_rng(7)
    arch = _three_or_more_levels(rng)
    assert applies(arch)
    leaky = ArchSpec(arch.name, (dataclasses.replace(arch.levels[0], leakage_pj_per_cycle=0.1), *arch.levels[1:]),
                     mac_energy_pj=1.0)
    vec = ArchSpec(arch.name, (*arch.levels[:-1], dataclasses.replace(arch.levels[-1], vector_words=4)),
                   mac_energy_pj=1.0)
    two = ArchSpec(arch.name, arch.levels[-2:], mac_energy_pj=1.0)
    assert not applies(leaky) and not applies(vec) and not applies(two)


def _Unscreened() -> LoopNestCost:
    """The same cost without the screen: the exact mapper bounds every child in full."""
    return LoopNestCost(screen_top=False)


def _same_search(layer, arch, objective: str) -> int:
    """Assert the exact search with and without the screen agree; its children screened."""
    from mappers.exact import ExactMapper

    a = ExactMapper().map(layer, arch, LoopNestCost(), objective)
    b = ExactMapper().map(layer, arch, _Unscreened(), objective)
    assert a.optimal and b.optimal
    assert a.objective(objective) == b.objective(objective)
    assert a.mapping == b.mapping
    assert a.info["nodes"] == b.info["nodes"] and a.info["leaves"] == b.info["leaves"]
    assert b.info["screened"] == 0
    return a.info["screened"]


def test_the_exact_search_is_the_same_with_and_without_the_screen():
    """The screen only drops children whose own bound would be at or above the bar (it is
    at most that bound), so the heap, the nodes and the result are those of a search
    without it, bit for bit: on 60 register-file / buffer / DRAM cases, several of which it
    screens, and on 16 of the random hierarchies."""
    screened = 0
    for seed in range(60):
        layer, arch = random_buffered_case(np.random.default_rng(seed))
        screened += _same_search(layer, arch, ("edp", "energy", "latency")[seed % 3]) > 0
    assert screened >= 3
    for seed in range(16):
        rng = np.random.default_rng(5200 + seed)
        layer = random_layer(rng)
        arch = _three_or_more_levels(rng)
        _same_search(layer, arch, ("edp", "energy", "latency")[seed % 3])


def test_the_screen_drops_children_on_a_co_design_point():
    """On a Shi et al. iso-resource point (3 x 18 PEs, register files of 12/384/96 words,
    a 55,296-word buffer), DQN's conv3: the screen drops children, and the search is the same."""
    from accelerators.arch import MemoryLevel
    from mappers.exact import ExactMapper
    from mappers.workloads import conv2d

    rf = MemoryLevel("RF", capacity_words={"W": 12, "I": 384, "O": 96}, instances=54, read_energy_pj=0.4,
                     write_energy_pj=0.4)
    glb = MemoryLevel("GLB", capacity_words=55296, fanout_x=3, fanout_y=18, read_energy_pj=8.8,
                      write_energy_pj=8.8, bandwidth_words_per_cycle=32.0, noc_energy_pj=1.7)
    dram = MemoryLevel("DRAM", read_energy_pj=320.0, write_energy_pj=320.0, bandwidth_words_per_cycle=4.0)
    arch = ArchSpec("shi-like", (rf, glb, dram), mac_energy_pj=0.2)
    layer = conv2d("conv3", K=64, C=64, P=7, Q=7, R=3, S=3)
    a = ExactMapper().map(layer, arch, LoopNestCost(), "edp")
    b = ExactMapper().map(layer, arch, _Unscreened(), "edp")
    assert a.optimal and a.objective("edp") == b.objective("edp") and a.info["nodes"] == b.info["nodes"]
    assert a.info["screened"] > 0
