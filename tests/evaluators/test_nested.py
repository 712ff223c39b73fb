"""The nested co-design evaluator (and the joint one): inner mappers, network totals with
repeats, the per-layer breakdown, caching, infeasibility, parallel mapping, studies."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from accelerators import SpatialArray
from design_space import Constraint, DesignSpace, Ordinal, PowerOfTwo
from design_space.compose import product, split
from evaluators.base import Infeasible
from evaluators.loopnest import LOOPNEST, evaluate_batch
from evaluators.loopnest.compulsory import edp_lower_bound
from evaluators.nested import JointEvaluator, NestedEvaluator
from experiments.inner_search import search_mapper  # ask/tell optimizers as mapping searches
from mappers.exhaustive import ExhaustiveMapper
from mappers.heuristic import HeuristicMapper
from mappers.mapping_space import joint_mapping_space, mapping_space
from mappers.registry import make_mapper
from mappers.workloads import conv2d, gemm
from mappers.zoo import dqn

SMALL = SpatialArray(pe_x=4, pe_y=2, rf_w_words=16, rf_i_words=16, rf_o_words=16, glb_kib=2)
POINT = {"pe_x": 4, "pe_y": 2, "rf_w_words": 16, "rf_i_words": 16, "rf_o_words": 16, "glb_kib": 2}


@pytest.mark.parametrize("spec", ["heuristic", {"name": "random", "budget": 25},
                                  {"name": "qlearning", "budget": 25},
                                  {"name": "constrained-bo", "budget": 12,
                                   "options": {"n_init": 5, "pool_size": 100, "n_local": 2}},
                                  {"name": "tpe", "budget": 25}])
def test_every_mapper_returns_legal_good_mappings(spec):
    layer = gemm("g", M=8, N=8, K=8)
    arch = SMALL.to_arch()
    r = search_mapper(spec).map(layer, arch, evaluate_batch, seed=0)
    assert r.mapping.violations(layer, arch) == []
    assert r.edp >= edp_lower_bound(layer, arch)
    opt = ExhaustiveMapper().map(layer, arch, evaluate_batch)
    assert opt.optimal and r.edp >= opt.edp
    assert r.edp <= 5 * opt.edp   # every method gets within a small factor of the optimum


@pytest.mark.parametrize("spec", ["exact", {"name": "exact", "time_limit_s": 30, "bypass": False}])
def test_exact_mapper_by_name_is_the_optimum_and_never_worse_in_a_network(spec):
    """``mapper: exact`` (or ``{name: exact, ...options}``, as a config writes it) gives the
    exhaustive optimum of a small layer (without bypass; with it, at most that), and a
    network no worse than the heuristic's."""
    layer = gemm("g", M=4, N=4, K=4)
    arch = SMALL.to_arch()
    r = make_mapper(spec).map(layer, arch, LOOPNEST, seed=0)
    opt = ExhaustiveMapper(bypass=False).map(layer, arch, evaluate_batch)   # (bypass: test_exact.py)
    assert r.optimal and r.edp <= opt.edp * (1 + 1e-9)
    if isinstance(spec, dict):
        assert r.edp == pytest.approx(opt.edp, rel=1e-9)
    layers = [conv2d("c", K=8, C=4, P=4, Q=4, R=3, S=3), gemm("fc", M=1, N=16, K=32)]
    exact = NestedEvaluator(SpatialArray, layers, spec)(POINT).metrics
    heuristic = NestedEvaluator(SpatialArray, layers, "heuristic")(POINT).metrics
    assert exact["edp_uj_ms"] <= heuristic["edp_uj_ms"] * (1 + 1e-9)


def test_unknown_mapper_is_a_named_error():
    with pytest.raises(ValueError, match="mapper='greedy': 'greedy' is neither a mapper"):
        make_mapper("greedy")
    with pytest.raises(ValueError, match="mapper 'random': bad options"):
        make_mapper({"name": "random", "budjet": 3})
    with pytest.raises(ValueError, match="unknown mapping objective 'power'"):
        NestedEvaluator("spatial", "dqn", objective="power")


def test_network_totals_are_sums_with_repeats_and_the_breakdown_adds_up():
    layers = [conv2d("c", K=8, C=4, P=4, Q=4, R=3, S=3, repeat=3), gemm("fc", M=1, N=16, K=32, repeat=2)]
    ev = NestedEvaluator(SpatialArray, layers, "heuristic")
    out = ev(POINT)
    m = out.metrics
    arch = SpatialArray(**POINT).to_arch()
    per = [HeuristicMapper().map(layer, arch, evaluate_batch) for layer in layers]
    assert m["energy_pj"] == pytest.approx(sum(r.energy_pj * layer.repeat for r, layer in zip(per, layers)))
    assert m["latency_cycles"] == pytest.approx(sum(r.latency_cycles * layer.repeat for r, layer in zip(per, layers)))
    assert m["edp_uj_ms"] == pytest.approx(m["energy_uj"] * m["latency_ms"])
    assert m["power_mw"] == pytest.approx(m["energy_pj"] * 1e-12 / (m["latency_ms"] * 1e-3) * 1e3)
    assert m["area_mm2"] == pytest.approx(SpatialArray(**POINT).area_mm2) and 0 < m["utilization"] <= 1
    bd = out.info["breakdown"]
    assert bd["levels"] == ["RF", "GLB", "DRAM"] and [r["name"] for r in bd["layers"]] == ["c", "fc"]
    for row, r in zip(bd["layers"], per):
        assert row["energy_pj"] == pytest.approx(r.energy_pj)
        assert sum(row["energy_by_level_pj"].values()) == pytest.approx(r.energy_pj)


def test_the_breakdown_stores_each_distinct_chosen_mapping_once():
    """Issue 43 item 3: every layer names its chosen mapping; layers of one shape share one
    record; the record rebuilds the mapping the mapper chose (same figures, JSON-able)."""
    import json

    from mappers.mapping import MappingBatch
    from mappers.mapping_record import loop_nest_text, mapping_from_record

    layers = [conv2d("a", K=8, C=4, P=4, Q=4, R=3, S=3), gemm("fc", M=1, N=16, K=32, repeat=2),
              conv2d("b", K=8, C=4, P=4, Q=4, R=3, S=3, repeat=2)]   # b: a's shape
    bd = json.loads(json.dumps(NestedEvaluator(SpatialArray, layers, "heuristic")(POINT).info["breakdown"]))
    assert [row["mapping"] for row in bd["layers"]] == [0, 1, 0] and len(bd["mappings"]) == 2
    arch = SpatialArray(**POINT).to_arch()
    for layer, row in zip(layers, bd["layers"]):
        chosen = HeuristicMapper().map(layer, arch, evaluate_batch).mapping
        back = mapping_from_record(bd["mappings"][row["mapping"]], arch)
        one = evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, [chosen]))
        two = evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, [back]))
        assert float(one.energy_pj[0]) == float(two.energy_pj[0]) == pytest.approx(row["energy_pj"])
        assert float(one.latency_cycles[0]) == float(two.latency_cycles[0])
    text = loop_nest_text(bd["mappings"][0])
    assert text.splitlines()[0].startswith("DRAM [ W:288 I:144 O:128 ]") and text.endswith("<< Compute >>")
    # the trial stores the loop-nest text beside each record, as the reader sees it
    assert bd["mapping_texts"] == [loop_nest_text(rec) for rec in bd["mappings"]] and bd["mapping_texts"][0] == text


def test_mapping_in_parallel_gives_the_same_numbers():
    layers = [conv2d("c", K=8, C=4, P=4, Q=4, R=3, S=3, repeat=3), gemm("fc", M=1, N=16, K=32, repeat=2)]
    serial = NestedEvaluator(SpatialArray, layers)(POINT).metrics
    calls = []

    def task_map(fn, items):
        calls.append(len(items))
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(fn, items))

    assert NestedEvaluator(SpatialArray, layers, task_map=task_map)(POINT).metrics == pytest.approx(serial)
    assert calls == [2]


def test_layers_of_one_shape_are_mapped_once_and_points_are_cached():
    a = conv2d("a", K=8, C=4, P=4, Q=4, R=3, S=3)
    b = conv2d("b", K=8, C=4, P=4, Q=4, R=3, S=3, repeat=2)          # same shape, another name
    calls = []

    class Counting(HeuristicMapper):
        def map(self, layer, arch, cost, objective="edp", *, seed=0):
            calls.append(layer.name)
            return super().map(layer, arch, cost, objective, seed=seed)

    ev = NestedEvaluator(SpatialArray, [a, b], Counting())
    first = ev(POINT).metrics
    assert calls == ["a"]
    assert ev(POINT, seed=7).metrics == first and calls == ["a"]      # cached per hardware point
    ev(dict(POINT, glb_kib=4))
    assert calls == ["a", "a"]


class NoPsumRoom:
    """An accelerator whose PE registers have no room for partial sums (and which may not
    bypass them): no mapping of any layer is legal."""

    area_mm2 = 1.0

    @classmethod
    def from_point(cls, point):
        return cls()

    def to_arch(self):
        from accelerators.arch import ArchSpec, MemoryLevel

        return ArchSpec("nopsum", (
            MemoryLevel("RF", capacity_words={"W": 4, "I": 4, "O": 0}, instances=4, read_energy_pj=1.0),
            MemoryLevel("GLB", capacity_words=256, fanout_x=2, fanout_y=2, read_energy_pj=6.0),
            MemoryLevel("DRAM", read_energy_pj=200.0),
        ), mac_energy_pj=1.0)


def test_invalid_hardware_and_unmappable_layers_are_infeasible():
    ev = NestedEvaluator("spatial", "dqn")
    with pytest.raises(Infeasible, match=r"invalid hardware: SpatialArray\.pe_x"):
        ev({"pe_x": 0})
    # (the exact mapper with bypass maps it: partial sums skip the RF; without, it cannot)
    for spec in ("heuristic", {"name": "exact", "bypass": False}, {"name": "random", "budget": 5},
                 {"name": "qlearning", "budget": 5}):
        with pytest.raises(Infeasible, match="layer 'c'"):
            NestedEvaluator(NoPsumRoom, [conv2d("c", K=4, C=4, P=4, Q=4, R=3, S=3)], search_mapper(spec))({})
    ev = NestedEvaluator("spatial", "dqn", check=lambda acc: "too big" if acc.glb_kib > 100 else None)
    with pytest.raises(Infeasible, match="generator: too big"):
        ev(dict(POINT, glb_kib=128))


def test_product_space_prefixes_and_keeps_constraints():
    layer = gemm("g", M=4, N=4, K=4)
    arch = SMALL.to_arch()
    sp = product({"L0": mapping_space(layer, arch), "L1": mapping_space(layer, arch)})
    pts = sp.sample(50, seed=0)
    for p in pts:
        assert sp.validate(p) == []
        parts = split(p)
        assert set(parts) == {"L0", "L1"}
        assert mapping_space(layer, arch).validate(parts["L0"]) == []
    bad = dict(pts[0], **{"L1.t_RF_M": 4, "L1.t_GLB_M": 4})
    assert any(v.name.startswith("L1.") for v in sp.validate(bad))


def test_joint_space_and_evaluator():
    hw = DesignSpace(PowerOfTwo("pe_x", 2, 8), PowerOfTwo("pe_y", 2, 4), Ordinal("glb_kib", [2, 8]),
                     constraints=[Constraint("pes", "pe_x * pe_y <= 16")])
    js = joint_mapping_space(hw, SpatialArray, dqn()[:2])
    ev = JointEvaluator(SpatialArray, dqn()[:2], hw.names)
    for p in js.sample(5, seed=1):
        out = ev(p)
        m = out.metrics
        assert m["edp_uj_ms"] > 0 and m["macs"] == sum(layer.macs for layer in dqn()[:2])
        # the joint point's mappings, scored one by one, give the network figures
        per = out.info["breakdown"]["layers"]
        assert m["energy_pj"] == pytest.approx(sum(r["energy_pj"] * r["repeat"] for r in per))
        assert np.isfinite(m["latency_cycles"])


def test_study_over_nested_codesign_from_a_registered_name(tmp_path):
    from experiments import Study

    hw = DesignSpace(PowerOfTwo("pe_x", 2, 8), PowerOfTwo("pe_y", 2, 8), Ordinal("glb_kib", [4, 16, 64]))
    s = Study.create("nest", hw, {"edp_uj_ms": "min"}, "nested", "constrained-bo",
                     optimizer_options={"n_init": 4, "pool_size": 100},
                     evaluator_options={"accelerator": "spatial", "workload": "dqn[0:2]", "mapper": "heuristic"},
                     storage=tmp_path / "n.db", seed=0)
    s.optimize(8, progress=False)
    assert len(s.trials) == 8 and all(t.status.value == "COMPLETE" for t in s.trials)
    assert s.best_trials(k=1)["metrics_edp_uj_ms"].iloc[0] > 0


def test_proof_metrics_say_whether_every_layer_is_proven_and_certify_the_worst_gap():
    """``all_layers_proven`` and ``certified_gap`` (issue 40): 1 and 0 when the exact mapper
    proves every layer; with a node limit that stops a layer, 0 and a gap that bounds the
    distance from the proven optimum (checked against it)."""
    layers = dqn()[3:5]
    proven = NestedEvaluator(SpatialArray, layers, "exact")(POINT).metrics
    assert proven["all_layers_proven"] == 1.0 and proven["certified_gap"] == 0.0
    assert proven["layers_proven"] == len(layers)
    cut = NestedEvaluator(SpatialArray, layers, {"name": "exact", "max_nodes": 5})(POINT)
    m = cut.metrics
    unproven = [r for r in cut.info["breakdown"]["layers"] if not r["optimal"]]
    # each row's bound or proof names its space (issue 45 item 3)
    assert all(r["proof_scope"]["tilings"] == "divisor" and r["proof_scope"]["accounting"] == "coexplore"
               for r in cut.info["breakdown"]["layers"])
    assert unproven and m["all_layers_proven"] == 0.0 and m["layers_proven"] == len(layers) - len(unproven)
    assert 0.0 < m["certified_gap"] < np.inf
    assert m["certified_gap"] == pytest.approx(max(r["edp"] / r["objective_lower_bound"] - 1 for r in unproven))
    assert proven["edp_uj_ms"] <= m["edp_uj_ms"] <= proven["edp_uj_ms"] * (1 + m["certified_gap"]) * (1 + 1e-9)
    # the heuristic proves nothing and knows no bound: no certificate at all
    h = NestedEvaluator(SpatialArray, layers, "heuristic")(POINT).metrics
    assert h["all_layers_proven"] == 0.0 and h["layers_proven"] == 0.0 and h["certified_gap"] == np.inf
