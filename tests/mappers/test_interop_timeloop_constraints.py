"""Timeloop mapspace constraints read as coexplore mapping constraints
(mappers/interop/timeloop.py: constraints_from_timeloop): Timeloop's committed mapping
meets the translated constraints; each of Timeloop's rules (factor 0 = the full
dimension, a factor above the dimension ignored, the spatial split over prefix + free +
suffix, keep/bypass) gives what Timeloop's mapper allows; what cannot be expressed is
refused by name; the exact mapper searches within them."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

from accelerators.interop.timeloop import arch_from_timeloop, load_timeloop_yaml
from evaluators.loopnest import LoopNestCost
from mappers.base import SearchStoppedEmpty
from mappers.constraints import satisfies
from mappers.exact import ExactMapper
from mappers.interop.timeloop import (
    constraints_from_timeloop,
    layer_from_timeloop,
    mapping_from_timeloop,
    spatial_axes,
)

DATA = Path(__file__).parent / "data" / "timeloop"


def _load(design: str):
    layer, roles = layer_from_timeloop(load_timeloop_yaml(DATA / "problem.yaml"))
    d = DATA / design
    tl = arch_from_timeloop(load_timeloop_yaml(d / "arch.yaml"), load_timeloop_yaml(d / "ERT.yaml"),
                            load_timeloop_yaml(d / "ART.yaml"), roles=roles)
    return layer, tl, d


def _processed(tl, targets):
    """The translation with the processed form's constraint targets ``targets``."""
    return dataclasses.replace(tl, constraints=list(targets), constraints_form="processed")


def _level(tc, tl, name):
    li = tl.level_of(name)
    return next(lc for lc in tc.constraints.levels if lc.level == li)


def test_eyeriss_like_constraints_hold_timeloops_mapping_and_say_what_its_spec_says():
    layer, tl, d = _load("eyeriss_like")
    tc = constraints_from_timeloop(tl, layer)
    mapping = mapping_from_timeloop(load_timeloop_yaml(d / "map.yaml"), tl, layer)
    assert satisfies(tc.constraints, mapping, layer, tl.arch)[0]
    # arch.yaml: psum_spad factors N=1 C=1 R=1 S=1 P=1 Q=1 leave only M; keep Outputs
    psum = _level(tc, tl, "psum_spad")
    assert psum.temporal == {"M"} and psum.keep == {"O"}
    # inter_PE_column_spatial: every dimension listed, split 999 -> all on X; N C P R S fixed to 1
    col = _level(tc, tl, "inter_PE_column_spatial")
    assert col.spatial_x == {"Q", "M"} and col.spatial_y == set()
    # inter_PE_spatial: split 0 -> all on Y; N P Q R fixed to 1
    row = _level(tc, tl, "inter_PE_spatial")
    assert row.spatial_x == set() and row.spatial_y == {"S", "C", "M"}
    # shared_glb keeps Inputs and Outputs and bypasses Weights: exactly {I, O}
    assert _level(tc, tl, "shared_glb").keep == {"I", "O"}
    # weights_spad's permutation orders C and R, both free there: a relaxed order constraint
    assert tc.relaxed == ("weights_spad",)
    # a mapping that puts M on the column's Y axis breaks them
    bad = dataclasses.replace(mapping, spatial_x=tuple({} for _ in mapping.spatial_x),
                              spatial_y=tuple({"M": 2} if i == tl.level_of("inter_PE_column_spatial") else {}
                                              for i in range(tl.arch.n_levels)))
    assert not satisfies(tc.constraints, bad, layer, tl.arch)[0]


def test_a_partial_spatial_permutation_with_a_split_in_the_tree_form_is_refused():
    layer, tl, _ = _load("simple_weight_stationary")
    with pytest.raises(ValueError, match="partial spatial permutation with a split"):
        constraints_from_timeloop(tl, layer)


def test_factor_zero_is_the_full_dimension_and_a_factor_above_it_is_ignored():
    layer, tl, _ = _load("eyeriss_like")
    tl = _processed(tl, [{"target": "shared_glb", "type": "temporal", "factors": "P=0 Q=999 C=1"}])
    tc = constraints_from_timeloop(tl, layer)
    glb = _level(tc, tl, "shared_glb")
    assert dict(glb.temporal_factors) == {"P": 112}
    assert "C" not in glb.temporal and "Q" in glb.temporal
    assert len(tc.notes) == 1 and "Q=999" in tc.notes[0] and "ignored" in tc.notes[0]


@pytest.mark.parametrize("prefix,suffix,split", [
    (["C", "M"], [], 1), ([], [], 3), (["N", "C", "P"], ["M"], 2), (["C"], ["M", "Q"], 6), (["C"], ["M"], 0),
    (["R", "S"], [], 5), ([], ["C"], 7)])
def test_the_spatial_split_rule_is_timeloops_over_every_free_order(prefix, suffix, split):
    """Brute force of Timeloop's rule: the full permutation is prefix + the free
    dimensions in any order + suffix, and positions before split are X."""
    dims = ["N", "C", "M", "P", "Q", "R", "S"]
    free = [d for d in dims if d not in prefix and d not in suffix]
    on_x, on_y = set(), set()
    for order in itertools.permutations(free):
        full = prefix + list(order) + suffix
        on_x |= set(full[:split])
        on_y |= set(full[split:])

    class Fan:
        fanout_x, fanout_y = 4, 4

    t = {"split": split}
    assert spatial_axes(t, prefix, suffix, dims, Fan(), tree=False, where="t") == (on_x, on_y)


def test_prefix_and_suffix_permutations_are_read():
    layer, tl, _ = _load("eyeriss_like")
    tl = _processed(tl, [{"target": "inter_PE_spatial", "type": "spatial", "permutation": "C_M", "split": 1}])
    row = _level(constraints_from_timeloop(tl, layer), tl, "inter_PE_spatial")
    # positions: C first (X), M last (Y), the five free dimensions between: on Y only
    assert row.spatial_x == {"C"} and row.spatial_y == set(layer.dims) - {"C"}


@pytest.mark.parametrize("target,message", [
    ({"target": "shared_glb", "type": "bypass", "keep": ["Inputs"]}, "keep at least"),
    ({"target": "shared_glb", "type": "temporal", "factors_only": "P=2"}, "factors_only"),
    ({"target": "shared_glb", "type": "temporal", "factors": "P<12"}, "P<12"),
    ({"target": "shared_glb", "type": "utilization", "min": 0.5}, "'min'"),
    ({"target": "nowhere", "type": "temporal", "factors": "P=1"}, "nowhere"),
    ({"target": "shared_glb", "type": "bypass", "keep": ["Weights"], "bypass": ["Inputs", "Outputs"]},
     "cannot hold"),
])
def test_what_cannot_be_expressed_is_refused_by_name(target, message):
    layer, tl, _ = _load("eyeriss_like")
    with pytest.raises(ValueError, match=message):
        constraints_from_timeloop(_processed(tl, [target]), layer)


def _problem(**sizes):
    doc = load_timeloop_yaml(DATA / "problem.yaml")
    doc["problem"]["instance"].update(sizes)
    return layer_from_timeloop(doc)[0]


def test_the_exact_mapper_searches_within_them_and_a_limit_before_any_mapping_is_no_proof():
    _, tl, _ = _load("eyeriss_like")
    layer = _problem(M=2, P=2, Q=2, C=1)
    tc = constraints_from_timeloop(tl, layer)
    res = ExactMapper(time_limit_s=20, constraints=tc.constraints).map(layer, tl.arch, LoopNestCost(), "edp")
    assert satisfies(tc.constraints, res.mapping, layer, tl.arch)[0]
    free = ExactMapper(time_limit_s=20).map(layer, tl.arch, LoopNestCost(), "edp")
    assert res.optimal and free.optimal
    assert res.edp >= free.edp * (1 - 1e-12)    # a subset's optimum cannot beat the whole space's
    assert not satisfies(tc.constraints, free.mapping, layer, tl.arch)[0] or res.edp <= free.edp * (1 + 1e-12)
    # the local search may find mappings outside the tree (it expands no nodes): without
    # it, one node reaches no mapping within the constraints, and the error says that is no proof
    import mappers.exact as exact
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exact._Search, "_multistart", lambda self, p, sx, sy: None)
        with pytest.raises(SearchStoppedEmpty, match="no proof"):
            ExactMapper(max_nodes=1, constraints=tc.constraints).map(
                _problem(C=64, M=64, P=56, Q=56), tl.arch, LoopNestCost(), "edp")


def test_a_first_legal_mapping_is_found_where_the_dives_find_none():
    # simple_output_stationary (the exercises' processed input, README): four single-word
    # registers and a 192-word scratchpad under seven levels of mapspace constraints. The
    # heuristic's mapping breaks them, and before the depth-first search for a first legal
    # mapping (ExactMapper's _first_legal) a search of this budget stopped with none
    # (SearchStoppedEmpty; the exercises' table: none in 164 CPU s); now it returns one that
    # meets them, with a finite certified gap.
    import mappers.exact as exact

    d = DATA / "simple_output_stationary_processed"
    proc = load_timeloop_yaml(d / "parsed-processed-input.yaml")
    layer, roles = layer_from_timeloop(proc)
    tl = arch_from_timeloop(proc, load_timeloop_yaml(d / "ERT.yaml"), None, roles=roles)
    tc = constraints_from_timeloop(tl, layer)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exact._Search, "_multistart", lambda self, p, sx, sy: None)
        res = ExactMapper(max_nodes=2000, constraints=tc.constraints).map(layer, tl.arch, LoopNestCost(), "edp")
    assert satisfies(tc.constraints, res.mapping, layer, tl.arch)[0]
    assert not res.optimal and 0 < res.lower_bound <= res.edp
