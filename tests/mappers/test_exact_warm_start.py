"""The exact mapper's warm start (``ExactMapper.map(..., incumbents=...)``, issue 41 item 4):
a search that completes returns what a cold search returns, bit for bit, whatever the
candidates; illegal candidates are ignored; a search stopped by a limit keeps the best
legal candidate, with a true bound."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from accelerators import SpatialArray
from evaluators.loopnest import LOOPNEST
from mappers.base import NoLegalMapping
from mappers.exact import ExactMapper
from mappers.exhaustive import enumerate_mappings
from mappers.workloads import conv2d, gemm
from tests.mappers.test_exact import OBJECTIVES, cases

CASES = cases(40, 20261201)


def same_result(a, b) -> bool:
    return (a.mapping == b.mapping and a.energy_pj == b.energy_pj and a.latency_cycles == b.latency_cycles
            and a.edp == b.edp and a.optimal == b.optimal and a.lower_bound == b.lower_bound)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_a_completed_search_returns_the_cold_result_whatever_the_candidates(case):
    layer, arch = CASES[case]
    rng = np.random.default_rng(case)
    batch = next(iter(enumerate_mappings(layer, arch, bypass=True, max_mappings=5000)))
    for obj in OBJECTIVES:
        try:
            cold = ExactMapper().map(layer, arch, LOOPNEST, obj)
        except NoLegalMapping:
            continue
        random = batch.take(rng.choice(len(batch), size=min(6, len(batch)), replace=False))
        # random mappings (some overflow a buffer), the cold optimum itself, both
        for cands in ([random], [cold.batch], [cold.mapping, random]):
            warm = ExactMapper().map(layer, arch, LOOPNEST, obj, incumbents=cands)
            assert warm.info["warm_legal"] >= 1 or cands == [random]
            assert not warm.info["warm_used"]
            assert same_result(warm, cold), (layer, arch.name, obj)


ARCH = SpatialArray(pe_x=4, pe_y=2, rf_w_words=16, rf_i_words=16, rf_o_words=16, glb_kib=2).to_arch()
WIDE = SpatialArray(pe_x=8, pe_y=4, rf_w_words=16, rf_i_words=16, rf_o_words=16, glb_kib=2).to_arch()
LAYER = conv2d("c", N=1, K=16, C=8, P=8, Q=8, R=3, S=3)


def test_illegal_candidates_are_ignored():
    on_wide = ExactMapper().map(LAYER, WIDE, LOOPNEST)
    assert np.prod(on_wide.batch.spatial_x, axis=2).max() > ARCH.levels[1].fanout_x or \
        np.prod(on_wide.batch.spatial_y, axis=2).max() > ARCH.levels[1].fanout_y   # beyond ARCH's fanouts
    other = ExactMapper().map(gemm("g", M=8, N=8, K=8), ARCH, LOOPNEST)          # another layer
    cold = ExactMapper().map(LAYER, ARCH, LOOPNEST)
    warm = ExactMapper().map(LAYER, ARCH, LOOPNEST, incumbents=[on_wide.batch, other.batch, other.mapping])
    assert warm.info["warm_offered"] == 3 and warm.info["warm_legal"] == 0
    assert same_result(warm, cold)
    # a candidate whose orders are not permutations, or with a factor in no slot
    bad = dataclasses.replace(cold.batch, order=np.zeros_like(cold.batch.order))
    assert ExactMapper().map(LAYER, ARCH, LOOPNEST, incumbents=[bad]).info["warm_legal"] == 0


def test_a_stopped_search_keeps_the_best_candidate_with_a_true_bound():
    cold = ExactMapper().map(LAYER, ARCH, LOOPNEST)
    stopped = ExactMapper(max_nodes=1).map(LAYER, ARCH, LOOPNEST)
    assert stopped.stopped_early and stopped.edp > cold.edp            # the heuristic's, here
    warm = ExactMapper(max_nodes=1).map(LAYER, ARCH, LOOPNEST, incumbents=[stopped.batch, cold.batch])
    assert warm.stopped_early and not warm.optimal and warm.info["warm_used"]
    assert warm.edp == cold.edp and warm.mapping == cold.mapping
    assert warm.lower_bound <= warm.edp                                 # the true objective, not the slack
    assert warm.info["incumbents"][-1][1] == warm.edp
