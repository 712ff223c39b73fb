"""Mapping constraints: what :func:`satisfies` accepts, what :meth:`resolve` refuses, and
the constrained exact mapper against brute force over the enumerated mappings that meet
random constraint sets (the cases of ``test_exact.py``: small layers on random
hierarchies, systolic, spatial and intrinsic arrays)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from accelerators import SpatialArray
from accelerators.arch import OPERANDS
from evaluators.loopnest import LOOPNEST, evaluate_batch
from mappers.base import NoLegalMapping
from mappers.constraints import LevelConstraints, MappingConstraints, satisfies
from mappers.exact import ExactMapper
from mappers.exhaustive import enumerate_mappings
from mappers.mapping import Mapping
from mappers.mapping_space import divisors
from mappers.orders import objective_of
from mappers.workloads import conv2d
from tests.mappers.test_exact import OBJECTIVES, cases

# ---------------------------------------------------------------- satisfies, exact small cases
ARCH = SpatialArray(pe_x=2, pe_y=2, rf_w_words=8, rf_i_words=8, rf_o_words=8, glb_kib=1).to_arch()
LAYER = conv2d("c", K=2, C=2, P=2, Q=2, R=2, S=2)
SET = MappingConstraints.of(
    "test",
    RF=dict(temporal=["S", "C"], temporal_factors={"S": 2}, keep="WIO"),
    GLB=dict(spatial_x=["K"], spatial_y=["R"], max_temporal={"Q": 1}, keep="IO"),
)


def mapping(rf=None, glb=None, dram=None, sx=None, sy=None, bypass_glb=("W",)) -> Mapping:
    return Mapping.create(ARCH, temporal=[rf if rf is not None else {"S": 2, "C": 2},
                                          glb if glb is not None else {"P": 2}, dram if dram is not None else {"Q": 2}],
                          spatial_x=[{}, sx if sx is not None else {"K": 2}, {}],
                          spatial_y=[{}, sy if sy is not None else {"R": 2}, {}], bypass=[(), bypass_glb, ()])


def test_satisfies_accepts_the_mapping_that_meets_every_constraint_and_rejects_each_breach():
    ms = [
        mapping(),                                               # meets all
        mapping(rf={"C": 2}, glb={"P": 2, "S": 2}),              # S not wholly in the RF
        mapping(glb={"P": 2, "Q": 2}, dram={}),                  # Q at the GLB above its cap of 1
        mapping(sx={"P": 2}, glb={}, dram={"Q": 2, "K": 2}),     # P across X, which allows K only
        mapping(bypass_glb=()),                                  # the GLB keeps W too
        mapping(rf={"S": 2, "C": 2, "K": 2}, sx={}),             # K temporal in the RF
    ]
    for m in ms:
        assert m.violations(LAYER, ARCH) == [], m
    assert satisfies(SET, ms, LAYER, ARCH).tolist() == [True, False, False, False, False, False]
    assert satisfies(SET, ms[0], LAYER, ARCH).tolist() == [True]
    assert satisfies(MappingConstraints(), ms, LAYER, ARCH).all()


@pytest.mark.parametrize("bad, match", [
    (dict(level="SRAM"), r"unknown level 'SRAM' .* \['RF', 'GLB', 'DRAM'\]"),
    (dict(level=3), r"level index 3 is out of range"),
    (dict(level="GLB", spatial_x=["Z"]), r"level 'GLB': spatial_x names unknown dimensions \['Z'\]"),
    (dict(level="GLB", temporal_factors={"X": 2}), r"temporal_factors names unknown dimensions \['X'\]"),
    (dict(level="DRAM", keep="IO"), r"backing store keeps every operand"),
    (dict(level="GLB", spatial_x_factors={"K": 2, "C": 2}), r"need 4 > fanout_x = 2"),
    (dict(level="RF", spatial_y_factors={"K": 2}), r"need 2 > fanout_y = 1"),
    (dict(level="GLB", spatial_x=["K"], spatial_x_factors={"C": 2}), r"spatial_x does not allow 'C'"),
    (dict(level="RF", temporal_factors={"S": 3}), r"temporal_factors\['S'\] = 3 exceeds the size 2"),
    (dict(level="RF", temporal_factors={"S": 2}, max_temporal={"S": 1}), r"max_temporal\['S'\] = 1 is below"),
])
def test_resolve_names_the_offending_parameter(bad, match):
    with pytest.raises(ValueError, match=match):
        MappingConstraints((LevelConstraints(**bad),)).resolve(LAYER, ARCH)


def test_bad_values_are_refused_at_construction():
    with pytest.raises(ValueError, match=r"keep names unknown operands \['X'\]"):
        LevelConstraints("RF", keep="WX")
    with pytest.raises(ValueError, match=r"the string 'SC'"):
        LevelConstraints("RF", temporal="SC")
    with pytest.raises(ValueError, match=r"temporal_factors\['S'\] must be a positive integer, got 0"):
        LevelConstraints("RF", temporal_factors={"S": 0})
    with pytest.raises(ValueError, match="given twice"):
        MappingConstraints((LevelConstraints("RF"), LevelConstraints(0))).resolve(LAYER, ARCH)
    with pytest.raises(ValueError, match=r"ExactMapper.constraints must be a MappingConstraints, a constraint rule.s name"):
        ExactMapper(constraints={"RF": {}})


def test_keep_of_an_operand_the_level_cannot_hold_is_refused():
    from tests.mappers.test_exact import random_hierarchy

    rng = np.random.default_rng(3)
    while True:
        arch = random_hierarchy(rng)
        lv = next((lv for lv in arch.levels[:-1] if len(lv.tensors) < 3), None)
        if lv is not None:
            break
    missing = next(op for op in OPERANDS if op not in lv.tensors)
    with pytest.raises(ValueError, match=rf"keep names \['{missing}'\], which '{lv.name}' cannot hold"):
        MappingConstraints((LevelConstraints(lv.name, keep={missing}),)).resolve(LAYER, arch)


# ---------------------------------------------------------------- random constraint sets
def random_constraints(rng: np.random.Generator, layer, arch) -> MappingConstraints:
    """A random valid constraint set: per level (backing store included), maybe allowed
    dimension sets per loop kind, an exact factor, a cap, and (on-chip) the kept operands."""
    live = [d for d, v in layer.dims.items() if v > 1] or list(layer.dims)
    while True:
        out = []
        for li, lv in enumerate(arch.levels):
            if rng.random() < 0.3:
                continue
            kw: dict = {}
            kinds = ["temporal"] + [k for k, fan in (("spatial_x", lv.fanout_x), ("spatial_y", lv.fanout_y)) if fan > 1]
            for kind in kinds:
                if rng.random() < 0.5:
                    kw[kind] = {d for d in live if rng.random() < 0.6}
            if rng.random() < 0.3:
                kind = kinds[int(rng.integers(len(kinds)))]
                d = live[int(rng.integers(len(live)))]
                f = int(rng.choice(divisors(layer.dims[d])))
                kw[f"{kind}_factors"] = {d: f}
                if kw.get(kind) is not None:
                    kw[kind] = kw[kind] | {d}
            if rng.random() < 0.3:
                kind = kinds[int(rng.integers(len(kinds)))]
                d = live[int(rng.integers(len(live)))]
                kw[f"max_{kind}"] = {d: int(rng.integers(1, layer.dims[d] + 1))}
            if li < arch.n_levels - 1 and rng.random() < 0.3:
                kw["keep"] = {op for op in lv.tensors if rng.random() < 0.6}
            out.append(LevelConstraints(lv.name, **kw))
        c = MappingConstraints(tuple(out), "random")
        try:
            c.resolve(layer, arch)
        except ValueError:
            continue
        return c


N_CASES = 60
CASES = cases(N_CASES, 20261126)
SETS = [random_constraints(np.random.default_rng(1000 + i), layer, arch) for i, (layer, arch) in enumerate(CASES)]


@functools.cache
def brute_force(case: int, constrained: bool) -> dict[str, float]:
    layer, arch = CASES[case]
    best = dict.fromkeys(OBJECTIVES, math.inf)
    for batch in enumerate_mappings(layer, arch, bypass=True, max_mappings=400_000,
                                    constraints=SETS[case] if constrained else None):
        r = evaluate_batch(layer, arch, batch)
        ok = np.asarray(r.valid)
        if ok.any():
            for obj in OBJECTIVES:
                v = objective_of(obj, r.energy_pj, r.compute_cycles, r.bandwidth_cycles)[ok]
                best[obj] = min(best[obj], float(v.min()))
    return best


@pytest.mark.parametrize("case", range(N_CASES))
def test_constrained_exact_equals_the_brute_force_minimum_within_the_constraints(case):
    layer, arch = CASES[case]
    c = SETS[case]
    want = brute_force(case, True)
    for obj in OBJECTIVES:
        if not math.isfinite(want[obj]):
            with pytest.raises(NoLegalMapping):
                ExactMapper(constraints=c).map(layer, arch, LOOPNEST, obj)
            continue
        r = ExactMapper(constraints=c).map(layer, arch, LOOPNEST, obj)
        assert r.optimal and not r.stopped_early
        assert r.mapping.violations(layer, arch) == []
        assert satisfies(c, r.batch, layer, arch).all(), (c, r.mapping)
        assert r.objective(obj) == pytest.approx(want[obj], rel=1e-9), (layer, arch.name, obj, c)
        assert r.lower_bound <= r.objective(obj) * (1 + 1e-9)


def test_the_random_constraints_bite():
    """Not vacuous: on many cases the constrained optimum is worse than the unconstrained
    one, and on some no mapping meets the constraints at all."""
    worse = infeasible = 0
    for case in range(N_CASES):
        a, b = brute_force(case, False)["edp"], brute_force(case, True)["edp"]
        if not math.isfinite(a):
            continue
        infeasible += not math.isfinite(b)
        worse += math.isfinite(b) and b > a * (1 + 1e-9)
    assert worse >= N_CASES // 5 and infeasible >= 1, (worse, infeasible)


@pytest.mark.parametrize("case", range(0, N_CASES, 6))
def test_constrained_enumeration_is_the_unconstrained_one_filtered_by_satisfies(case):
    layer, arch = CASES[case]
    c = SETS[case]

    def rows(batches) -> set[bytes]:
        out = set()
        for b in batches:
            for i in range(len(b)):
                out.add(b.temporal[i].tobytes() + b.spatial_x[i].tobytes() + b.spatial_y[i].tobytes()
                        + b.order[i].tobytes() + b.keep[i].tobytes())
        return out

    full = list(enumerate_mappings(layer, arch, bypass=True, max_mappings=400_000))
    kept = rows(b.take(np.flatnonzero(satisfies(c, b, layer, arch))) for b in full)
    assert rows(enumerate_mappings(layer, arch, bypass=True, max_mappings=400_000, constraints=c)) == kept
