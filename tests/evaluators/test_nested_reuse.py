"""Reuse across hardware points in the nested evaluator (issue 41, item 4): the problem-keyed
cache (a hit is what a fresh search returns; what changes the optimum misses) and the warm
start (completed exact searches unchanged; serial runs reproducible)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from accelerators import SpatialArray
from accelerators.arch import ArchSpec
from evaluators.loopnest import LOOPNEST
from evaluators.nested import NestedEvaluator, full_words, problem_key
from mappers.exact import ExactMapper
from mappers.workloads import conv2d, gemm

BASE = SpatialArray(pe_x=4, pe_y=2, rf_w_words=16, rf_i_words=16, rf_o_words=16, glb_kib=4).to_arch()
LAYERS = [conv2d("c1", N=1, K=8, C=4, P=6, Q=6, R=3, S=3), gemm("g1", M=8, N=16, K=8)]


def with_glb(arch: ArchSpec, words: int, **level_changes) -> ArchSpec:
    """``arch`` with the global buffer's capacity (and other fields) changed, renamed, with
    another area: a different hardware point."""
    glb = dataclasses.replace(arch.levels[1], capacity_words=words, area_mm2=arch.levels[1].area_mm2 + words,
                              **level_changes)
    return dataclasses.replace(arch, name=f"{arch.name}_glb{words}", levels=(arch.levels[0], glb, arch.levels[2]),
                               area_mm2=arch.area_mm2 + words)


def test_full_words_bounds_the_largest_tile():
    layer = LAYERS[0]
    assert full_words(layer) == {"W": 8 * 4 * 9, "I": 4 * 8 * 8, "O": 8 * 36}


def test_the_key_keeps_what_changes_the_optimum_and_drops_what_cannot():
    layer = LAYERS[0]
    need = sum(full_words(layer).values())
    a, b = with_glb(BASE, need), with_glb(BASE, 4 * need)           # both hold the whole layer
    assert problem_key(layer, a) != problem_key(layer, b)            # raw capacities differ
    assert problem_key(layer, a, canonical=True) == problem_key(layer, b, canonical=True)
    assert problem_key(layer, dataclasses.replace(a, name="x", area_mm2=9.0, tech="t")) == problem_key(layer, a)
    binding = with_glb(BASE, need - 1)                               # one word short: binding
    assert problem_key(layer, binding, canonical=True) != problem_key(layer, a, canonical=True)
    for changed in (with_glb(BASE, need, read_energy_pj=9.0), with_glb(BASE, need, bandwidth_words_per_cycle=3.0),
                    with_glb(BASE, need, leakage_pj_per_cycle=0.5), dataclasses.replace(a, mac_energy_pj=2.0)):
        assert problem_key(layer, changed, canonical=True) != problem_key(layer, a, canonical=True)
    # a per-operand (partitioned) capacity: the RF holds 16 words of each operand; the layer's
    # weights alone are 288 words, so the RF's capacity binds and stays in the key
    rf = dataclasses.replace(a.levels[0], capacity_words={"W": 17, "I": 16, "O": 16})
    assert problem_key(layer, dataclasses.replace(a, levels=(rf, *a.levels[1:])), canonical=True) != \
        problem_key(layer, a, canonical=True)


def test_on_a_non_binding_capacity_a_fresh_search_is_the_cached_one_bit_for_bit():
    # the argument of the cache: same legal mappings, same costs, and the search reads the
    # capacity only through tests that all pass -- the same run
    for layer in LAYERS:
        need = sum(full_words(layer).values())
        a = ExactMapper().map(layer, with_glb(BASE, need), LOOPNEST)
        b = ExactMapper().map(layer, with_glb(BASE, 7 * need), LOOPNEST)
        assert a.optimal and b.optimal
        assert (a.mapping, a.energy_pj, a.latency_cycles, a.edp, a.lower_bound, a.info["nodes"]) == \
            (b.mapping, b.energy_pj, b.latency_cycles, b.edp, b.lower_bound, b.info["nodes"])


@dataclass
class Fixed:
    """An accelerator that is an ArchSpec (the test picks the architecture of each point)."""

    arch: ArchSpec

    def to_arch(self) -> ArchSpec:
        return self.arch

    @property
    def area_mm2(self) -> float:
        return self.arch.area_mm2


def evaluator(archs: dict[int, ArchSpec], reuse: bool = True) -> NestedEvaluator:
    return NestedEvaluator(lambda p: Fixed(archs[p["hw"]]), LAYERS, "exact", reuse=reuse)


def test_a_cache_hit_is_what_a_fresh_evaluation_gives_and_a_binding_change_misses():
    need = max(sum(full_words(u).values()) for u in LAYERS)
    archs = {0: with_glb(BASE, need), 1: with_glb(BASE, 3 * need), 2: with_glb(BASE, 100)}
    ev = evaluator(archs)
    ev({"hw": 0})
    e1 = ev({"hw": 1})                                   # another point, the same problems
    assert ev.reuse_stats["cache_hits"] == len(LAYERS)
    assert all(r["mapping_info"].get("reused") == "cache" for r in e1.info["breakdown"]["layers"])
    fresh = evaluator(archs, reuse=False)({"hw": 1})
    assert e1.metrics == fresh.metrics
    e2 = ev({"hw": 2})                                   # a binding buffer: searched again
    assert ev.reuse_stats["cache_hits"] == len(LAYERS)
    assert e2.metrics == evaluator(archs, reuse=False)({"hw": 2}).metrics


POINTS = [dict(pe_x=x, pe_y=y, rf_w_words=w, rf_i_words=i, rf_o_words=o, glb_kib=g)
          for x, y, w, i, o, g in [(4, 2, 16, 16, 16, 4), (4, 4, 16, 8, 16, 4), (2, 4, 32, 16, 16, 2),
                                   (4, 2, 16, 16, 16, 8), (4, 4, 16, 8, 16, 4)]]


@pytest.mark.parametrize("mapper", ["exact", {"name": "exact", "max_nodes": 50}])
def test_serial_runs_are_reproducible_and_completed_searches_equal_a_cold_run(mapper):
    def run(reuse):
        ev = NestedEvaluator("spatial", LAYERS, mapper, reuse=reuse)
        evs = [ev(p) for p in POINTS]
        return [e.metrics for e in evs], ev.reuse_stats, evs

    first, stats, evs = run(True)
    assert run(True)[0] == first                          # bit-reproducible
    cold = run(False)[0]
    assert stats["warm_offered"] > 0
    if mapper == "exact":                                 # completed searches: the cold figures
        assert first == cold
    else:                                                 # stopped ones: still a true certificate
        rows = [r for e in evs for r in e.info["breakdown"]["layers"]]
        assert any(not r["optimal"] for r in rows)
        assert all(r["objective_lower_bound"] <= r["edp"] for r in rows)


def test_reuse_off_keeps_the_old_behaviour_and_bad_values_are_refused():
    ev = NestedEvaluator("spatial", LAYERS, "exact")                   # off by default
    ev(POINTS[0])
    ev(POINTS[3])
    assert ev.reuse_stats == {"searched": 0, "cache_hits": 0, "warm_offered": 0, "warm_used": 0}
    with pytest.raises(ValueError, match="reuse"):
        NestedEvaluator("spatial", LAYERS, "exact", reuse="yes")
