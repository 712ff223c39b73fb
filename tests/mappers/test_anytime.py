"""The fast default (mappers/anytime.py): the exact mapper at a fixed node limit. Its
default is the limit it states, a layer the tree finishes within it is the exact
mapper's proven optimum, and a stopped one is no worse than the heuristic's mapping, with
a true bound, the same every run."""

from __future__ import annotations

import pytest

from accelerators import eyeriss_v1
from evaluators.loopnest import LOOPNEST
from evaluators.nested import NestedEvaluator
from mappers import zoo
from mappers.anytime import ANYTIME_NODES, AnytimeMapper
from mappers.exact import ExactMapper
from mappers.heuristic import HeuristicMapper
from mappers.registry import make_mapper
from mappers.testing import brute_force_best, tiny_case


def test_its_default_is_the_stated_node_limit_and_none_makes_it_exact():
    assert AnytimeMapper().max_nodes == ANYTIME_NODES == 40_000
    assert make_mapper("anytime") == AnytimeMapper()
    assert AnytimeMapper(max_nodes=None).max_nodes is None
    with pytest.raises(ValueError, match="max_nodes"):
        AnytimeMapper(max_nodes=0)


def test_a_small_layer_is_the_exact_mappers_proven_optimum():
    layer, arch = tiny_case()
    r = AnytimeMapper().map(layer, arch, LOOPNEST, "edp")
    exact = ExactMapper().map(layer, arch, LOOPNEST, "edp")
    assert r.optimal and r.mapping == exact.mapping and r.scope == exact.scope
    no_bypass = AnytimeMapper(bypass=False).map(layer, arch, LOOPNEST, "edp")     # the enumerable space
    assert no_bypass.optimal and no_bypass.edp == pytest.approx(brute_force_best(layer, arch, LOOPNEST), rel=1e-9)


def test_stopped_it_is_no_worse_than_the_heuristic_with_a_true_bound():
    layer, arch = zoo.resolve("dqn[2]")[0], eyeriss_v1().to_arch()
    full = ExactMapper().map(layer, arch, LOOPNEST, "edp")
    a, b = (AnytimeMapper(max_nodes=5).map(layer, arch, LOOPNEST, "edp") for _ in range(2))
    h = HeuristicMapper().map(layer, arch, LOOPNEST, "edp")
    assert a.stopped_early and not a.optimal and a.mapping == b.mapping
    assert a.objective("edp") <= h.objective("edp") * (1 + 1e-12)
    assert a.lower_bound <= full.objective("edp") * (1 + 1e-9) <= a.objective("edp") * (1 + 1e-9)


def test_it_is_the_nested_evaluators_default():
    ev = NestedEvaluator("spatial", "dqn")
    assert ev.mapper == AnytimeMapper()
