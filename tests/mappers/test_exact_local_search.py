"""The exact mapper's local search (issue 41, item 2): it only offers legal mappings as
soft incumbents, so a search that completes returns what it returns without it, and a
search stopped by a limit returns a mapping at least as good as the heuristic's, with a
true bound."""

from __future__ import annotations

import pytest

import mappers.exact as exact
from accelerators import eyeriss_v1
from evaluators.loopnest import LOOPNEST
from mappers.base import NoLegalMapping
from mappers.exact import ExactMapper
from mappers.heuristic import HeuristicMapper
from mappers.zoo import resolve
from tests.mappers.test_exact import OBJECTIVES, cases

CASES = cases(30, 20261203)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_a_completed_search_returns_the_same_optimum_with_the_local_search(monkeypatch, case):
    layer, arch = CASES[case]
    ran = []
    descent = exact._Search._local_descent

    def counted(self, *a):
        ran.append(1)
        return descent(self, *a)

    for obj in OBJECTIVES:
        try:
            plain = ExactMapper(local_search=False).map(layer, arch, LOOPNEST, obj)
        except NoLegalMapping:
            continue
        with monkeypatch.context() as mp:
            mp.setattr(exact, "_LOCAL_SPACE", 0)            # these small spaces would skip it
            mp.setattr(exact._Search, "_local_descent", counted)
            local = ExactMapper().map(layer, arch, LOOPNEST, obj)
        assert ran, "the local search did not run"
        assert local.optimal and plain.optimal
        assert local.mapping == plain.mapping, (layer, arch.name, obj)
        assert local.energy_pj == plain.energy_pj and local.latency_cycles == plain.latency_cycles
        assert local.lower_bound <= local.objective(obj) * (1 + 1e-9)
        assert local.mapping.violations(layer, arch) == []


def test_a_stopped_search_keeps_the_local_searchs_mapping_with_a_true_bound():
    """DQN conv2 on Eyeriss v1 (about 10^11 mappings): after one node, the result is
    well below the heuristic's, legal, and the bound is below the proven optimum."""
    layer = {x.name: x for x in resolve("dqn")}["conv2"]
    arch = eyeriss_v1().to_arch()
    heur = HeuristicMapper().map(layer, arch, LOOPNEST, "edp")
    off = ExactMapper(max_nodes=1, local_search=False).map(layer, arch, LOOPNEST, "edp")
    on = ExactMapper(max_nodes=1).map(layer, arch, LOOPNEST, "edp")
    assert on.stopped_early and not on.optimal
    assert on.mapping.violations(layer, arch) == []
    assert on.edp < 0.99 * heur.edp and on.edp < off.edp
    opt = ExactMapper().map(layer, arch, LOOPNEST, "edp")
    assert on.lower_bound <= opt.edp * (1 + 1e-9) <= on.edp * (1 + 1e-9)
    assert on.edp <= 1.05 * opt.edp                          # the local search's quality here
    assert opt.mapping == ExactMapper(local_search=False).map(layer, arch, LOOPNEST, "edp").mapping


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_local_search_must_be_a_bool(bad):
    with pytest.raises(ValueError, match="local_search"):
        ExactMapper(local_search=bad)
