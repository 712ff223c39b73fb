"""The row-stationary constraint set: the published row-stationary mappings of AlexNet
(JSSC 2017 Table III, as :func:`mappers.row_stationary.table_iii_mapping`
encodes them) meet it, each of its statements rejects the mapping that breaks it, and
the exact mapper under it equals brute force over the row-stationary mappings of a
small convolution."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from accelerators import SpatialArray, eyeriss_v1
from accelerators.reference import EYERISS_TABLE_III
from evaluators.loopnest import LOOPNEST, evaluate, evaluate_batch
from mappers.constraints import satisfies
from mappers.exact import ExactMapper
from mappers.exhaustive import ExhaustiveMapper, enumerate_mappings
from mappers.row_stationary import row_stationary, table_iii_mapping
from mappers.workloads import conv2d, gemm
from mappers.zoo import alexnet_convs

EYERISS = eyeriss_v1().to_arch()


def alexnet_layer(name: str):
    """AlexNet's convolution ``name`` at Table V's batch of 4."""
    return {layer.name: layer for layer in alexnet_convs(batch=4)}[name]


def test_the_zoo_alexnet_has_table_iii_shapes():
    """The zoo's AlexNet (from Krizhevsky 2012) is the layer Eyeriss ran (JSSC 2017 Table III:
    H input rows with padding, R, E, C per group, M, stride U)."""
    for layer in alexnet_convs(batch=4):
        t, d, g = EYERISS_TABLE_III[layer.name], layer.dims, layer.dims.get("G", 1)
        assert (d["R"], d["S"], d["P"], d["Q"], d["K"] * g, d["C"]) == (t["R"], t["R"], t["E"], t["E"], t["M"], t["C"])
        assert (d["P"] - 1) * t["U"] + t["R"] == t["H"]       # the padded input height
        assert d["N"] == 4


@pytest.mark.parametrize("name", list(EYERISS_TABLE_III))
def test_the_published_row_stationary_mappings_meet_the_set(name):
    layer = alexnet_layer(name)
    m = table_iii_mapping(name, layer, EYERISS)
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
    m = table_iii_mapping("CONV3", layer, EYERISS)
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
    table = float(evaluate(layer, EYERISS, table_iii_mapping("CONV3", layer, EYERISS)).edp[0])
    r = ExactMapper(constraints=c).map(layer, EYERISS, LOOPNEST, "edp")
    assert r.optimal and satisfies(c, r.batch, layer, EYERISS).all()
    assert r.objective("edp") <= table * (1 + 1e-9)


@pytest.mark.parametrize("M,N,K", [(2, 3, 4), (1, 6, 4), (4, 2, 6)])
def test_a_gemm_is_mapped_as_the_fully_connected_convolution(M, N, K):
    """JSSC 2017's FC rule: the GEMM's RS optimum equals that of the convolution with C = K,
    K = N, batch M and a 1 x 1 everything (the same computation, the same counts), for
    every objective, and equals brute force over the GEMM's RS mappings."""
    g = gemm("g", M=M, N=N, K=K)
    c = conv2d("c", N=M, C=K, K=N, P=1, Q=1, R=1, S=1)
    cg, cc = row_stationary(g, SMALL), row_stationary(c, SMALL)
    for obj in ("edp", "energy", "latency"):
        rg = ExactMapper(constraints=cg).map(g, SMALL, LOOPNEST, obj)
        rc = ExactMapper(constraints=cc).map(c, SMALL, LOOPNEST, obj)
        assert rg.optimal and rc.optimal
        assert rg.objective(obj) == pytest.approx(rc.objective(obj), rel=1e-12), obj
    brute = math.inf
    for batch in enumerate_mappings(g, SMALL, bypass=True, max_mappings=2_000_000, constraints=cg):
        r = evaluate_batch(g, SMALL, batch)
        ok = np.asarray(r.valid)
        if ok.any():
            brute = min(brute, float(np.asarray(r.edp)[ok].min()))
    assert ExactMapper(constraints=cg).map(g, SMALL, LOOPNEST, "edp").objective("edp") == pytest.approx(brute, rel=1e-9)


def test_the_gemm_set_keeps_the_batch_off_the_array_and_the_weights_out_of_the_glb():
    g = gemm("g", M=4, N=4, K=6)
    c = row_stationary(g, SMALL)
    r = ExactMapper(constraints=c).map(g, SMALL, LOOPNEST, "edp")
    m = r.mapping
    assert all(m.spatial_x[li].get("M", 1) == 1 and m.spatial_y[li].get("M", 1) == 1 for li in range(3))
    assert "W" in m.bypass[1]
    assert set(m.temporal[0]) <= {"K", "N"}
    # the unconstrained optimum loops over the batch in the RF here: the set changes the answer
    free = ExactMapper().map(g, SMALL, LOOPNEST, "edp")
    assert not satisfies(c, free.batch, g, SMALL).any()
    assert free.objective("edp") < r.objective("edp") * (1 - 1e-9)


def test_a_rule_by_name_equals_the_set_it_gives():
    layer = conv2d("c", N=1, K=2, C=2, P=3, Q=2, R=2, S=2)
    by_set = ExactMapper(constraints=row_stationary(layer, SMALL)).map(layer, SMALL, LOOPNEST, "edp")
    by_name = ExactMapper(constraints="row-stationary").map(layer, SMALL, LOOPNEST, "edp")
    assert by_name.objective("edp") == by_set.objective("edp")
    assert by_name.info["constraints"] == "row-stationary"
    with pytest.raises(ValueError, match=r"ExactMapper.constraints: unknown constraint rule 'row-stationery'"):
        ExactMapper(constraints="row-stationery")
    with pytest.raises(ValueError, match=r"ExhaustiveMapper.constraints must be"):
        ExhaustiveMapper(constraints=3)
    from mappers.registry import make_mapper
    assert make_mapper({"name": "exact", "constraints": "row-stationary"}).constraints == "row-stationary"


def test_layers_and_arrays_it_does_not_describe_are_refused():
    with pytest.raises(ValueError, match=r"lacks convolution dimensions \['C', 'P', 'Q', 'R', 'S'\] .* not a GEMM"):
        row_stationary(dataclasses.replace(gemm("g", M=4, N=4, K=4), kind="elementwise"), EYERISS)
    with pytest.raises(ValueError, match=r"filter height R=3 of 'tall' exceeds the 2 PE rows"):
        row_stationary(conv2d("tall", K=2, C=2, P=2, Q=2, R=3, S=3), SMALL)
    from accelerators import SystolicArray
    with pytest.raises(ValueError, match="is not RF -> GLB -> DRAM"):
        row_stationary(conv2d("c", K=2, C=2, P=2, Q=2, R=2, S=2), SystolicArray(rows=4, cols=4).to_arch())
