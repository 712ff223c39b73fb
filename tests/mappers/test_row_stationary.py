"""The row-stationary constraint set: the published row-stationary mappings of AlexNet
(JSSC 2017 Table III, as :func:`experiments.benchmarks.silicon_compare.rs_mapping`
encodes them) meet it, each of its statements rejects the mapping that breaks it, and
the exact mapper under it equals brute force over the row-stationary mappings of a
small convolution."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from accelerators import SpatialArray, eyeriss_v1
from evaluators.loopnest import LOOPNEST, evaluate, evaluate_batch
from experiments.benchmarks.silicon_compare import EYERISS_TABLE_III, alexnet_layer, rs_mapping
from mappers.constraints import satisfies
from mappers.exact import ExactMapper
from mappers.exhaustive import enumerate_mappings
from mappers.row_stationary import row_stationary
from mappers.workloads import conv2d, gemm

EYERISS = eyeriss_v1().to_arch()


@pytest.mark.parametrize("name", list(EYERISS_TABLE_III))
def test_the_published_row_stationary_mappings_meet_the_set(name):
    layer = alexnet_layer(name)
    m = rs_mapping(name, layer, EYERISS)
    assert m.violations(layer, EYERISS) == []
    assert satisfies(row_stationary(layer, EYERISS), m, layer, EYERISS).tolist() == [True]


def _replace(m, **levels):
    """``m`` with some levels' fields replaced: ``temporal={1: {...}}`` etc."""
    out = {}
    for f, by_level in levels.items():
        vals = list(getattr(m, f))
        for li, v in by_level.items():
            vals[li] = frozenset(v) if f == "bypass" else dict(v)
        out[f] = tuple(vals)
    return dataclasses.replace(m, **out)


def test_each_statement_rejects_the_mapping_that_breaks_it():
    layer = alexnet_layer("CONV3")
    m = rs_mapping("CONV3", layer, EYERISS)
    rf, glb, dram = (dict(t) for t in m.temporal)
    broken = {
        "filters kept in the GLB": _replace(m, bypass={1: ()}),
        "filter rows R temporal, not down Y": _replace(m, temporal={1: {**glb, "R": 3}}, spatial_y={1: {"K": 4}}),
        "the filter row S split off the RF": _replace(m, temporal={0: {**rf, "S": 1}, 1: {**glb, "S": 3}}),
        "the output row Q split off the GLB": _replace(m, temporal={1: {**glb, "Q": 1}, 2: {**dram, "Q": 13}}),
        "images N across the array": _replace(m, spatial_y={1: {"R": 3, "K": 2, "N": 2}},
                                              temporal={1: {**glb, "N": 2, "K": 2}}),
        "images N in the RF": _replace(m, temporal={0: {"S": 3, "C": 1, "K": 4, "N": 4}, 1: {"K": 4, "Q": 13},
                                                    2: {**dram, "C": dram["C"] * 4}}),
    }
    c = row_stationary(layer, EYERISS)
    for what, b in broken.items():
        assert b.violations(layer, EYERISS) == [], what
        assert satisfies(c, b, layer, EYERISS).tolist() == [False], what


SMALL = SpatialArray(pe_x=3, pe_y=2, rf_w_words=8, rf_i_words=8, rf_o_words=8, glb_kib=0.25,
                     dram_bw_words_per_cycle=2.0, glb_bw_words_per_cycle=4.0).to_arch()


@pytest.mark.parametrize("layer", [
    conv2d("c", N=1, K=2, C=2, P=3, Q=2, R=2, S=2),
    conv2d("c_s2", N=2, K=2, C=1, P=2, Q=2, R=2, S=2, stride=2),
    conv2d("g", N=1, K=4, C=4, P=3, Q=2, R=1, S=2, groups=2),
])
def test_exact_under_row_stationary_equals_brute_force(layer):
    c = row_stationary(layer, SMALL)
    best = {o: math.inf for o in ("edp", "energy", "latency")}
    for batch in enumerate_mappings(layer, SMALL, bypass=True, max_mappings=2_000_000, constraints=c):
        r = evaluate_batch(layer, SMALL, batch)
        ok = np.asarray(r.valid)
        if ok.any():
            best["edp"] = min(best["edp"], float(np.asarray(r.edp)[ok].min()))
            best["energy"] = min(best["energy"], float(np.asarray(r.energy_pj)[ok].min()))
            best["latency"] = min(best["latency"], float(np.asarray(r.latency_cycles)[ok].min()))
    assert math.isfinite(best["edp"])
    # the set bites: the unconstrained optimum (test_exact.py proves the exact mapper's) is better
    free = ExactMapper().map(layer, SMALL, LOOPNEST, "edp")
    assert free.objective("edp") < best["edp"] * (1 - 1e-9)
    assert not satisfies(c, free.batch, layer, SMALL).any()
    for obj, want in best.items():
        r = ExactMapper(constraints=c).map(layer, SMALL, LOOPNEST, obj)
        assert r.optimal and satisfies(c, r.batch, layer, SMALL).all()
        assert r.objective(obj) == pytest.approx(want, rel=1e-9), obj


def test_the_row_stationary_optimum_is_no_worse_than_table_iii_on_conv3():
    """CONV3's Table III mapping has no padding, so it lies in the space the exact mapper
    searches under the set: the optimum is at most its EDP."""
    layer = alexnet_layer("CONV3")
    c = row_stationary(layer, EYERISS)
    table = float(evaluate(layer, EYERISS, rs_mapping("CONV3", layer, EYERISS)).edp[0])
    r = ExactMapper(constraints=c).map(layer, EYERISS, LOOPNEST, "edp")
    assert r.optimal and satisfies(c, r.batch, layer, EYERISS).all()
    assert r.objective("edp") <= table * (1 + 1e-9)


def test_layers_and_arrays_it_does_not_describe_are_refused():
    with pytest.raises(ValueError, match=r"lacks convolution dimensions \['C', 'P', 'Q', 'R', 'S'\]"):
        row_stationary(gemm("g", M=4, N=4, K=4), EYERISS)
    with pytest.raises(ValueError, match=r"filter height R=3 of 'tall' exceeds the 2 PE rows"):
        row_stationary(conv2d("tall", K=2, C=2, P=2, Q=2, R=3, S=3), SMALL)
    from accelerators import SystolicArray
    with pytest.raises(ValueError, match="is not RF -> GLB -> DRAM"):
        row_stationary(conv2d("c", K=2, C=2, P=2, Q=2, R=2, S=2), SystolicArray(rows=4, cols=4).to_arch())
