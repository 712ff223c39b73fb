"""Nested and joint co-design: inner searches, network totals, infeasibility, studies."""

from __future__ import annotations

import pytest

from accelerators import SpatialArray
from design_space import Constraint, DesignSpace, Ordinal, PowerOfTwo
from design_space.compose import product, split
from evaluators.base import Infeasible
from evaluators.bounds import edp_lower_bound
from mappers.search import exhaustive_search, heuristic_mapping
from mappers.space import mapping_space
from mappers.workloads import conv2d, gemm
from mappers.zoo import dqn
from optimizer.codesign import JointCoDesign, NestedCoDesign, inner_search, joint_space

SMALL = SpatialArray(pe_x=4, pe_y=2, rf_w_words=16, rf_i_words=16, rf_o_words=16, glb_kib=2)


@pytest.mark.parametrize("method", ["heuristic", "random", "qlearning", "constrained-bo", "tpe"])
def test_inner_search_methods_return_legal_good_mappings(method):
    layer = gemm("g", M=8, N=8, K=8)
    arch = SMALL.to_arch()
    bo = method == "constrained-bo"
    r = inner_search(layer, arch, method, budget=12 if bo else 25, seed=0,
                     options={"n_init": 5, "pool_size": 100, "n_local": 2} if bo else None)
    assert r.mapping.violations(layer, arch) == []
    assert r.edp >= edp_lower_bound(layer, arch)
    opt = exhaustive_search(layer, arch).edp
    assert r.edp <= 5 * opt   # every method gets within a small factor of the optimum


def test_nested_network_totals_are_sums_with_repeats():
    layers = [conv2d("c", K=8, C=4, P=4, Q=4, R=3, S=3, repeat=3), gemm("fc", M=1, N=16, K=32, repeat=2)]
    ev = NestedCoDesign(SpatialArray, layers, inner="heuristic")
    point = {"pe_x": 4, "pe_y": 2, "rf_w_words": 16, "rf_i_words": 16, "rf_o_words": 16, "glb_kib": 2}
    m = ev(point)
    arch = SpatialArray(**point).to_arch()
    per = [heuristic_mapping(layer, arch) for layer in layers]
    assert m["energy_pj"] == pytest.approx(sum(r.energy_pj * layer.repeat for r, layer in zip(per, layers)))
    assert m["latency_cycles"] == pytest.approx(sum(r.latency_cycles * layer.repeat for r, layer in zip(per, layers)))
    assert m["edp_uj_ms"] == pytest.approx(m["energy_uj"] * m["latency_ms"])
    assert 0 < m["utilization"] <= 1
    # parallel layers give the same numbers
    assert NestedCoDesign(SpatialArray, layers, layer_workers=2)(point) == pytest.approx(m)


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
    ev = NestedCoDesign("spatial", "dqn")
    with pytest.raises(Infeasible, match=r"invalid hardware: SpatialArray\.pe_x"):
        ev({"pe_x": 0})
    for inner in ("heuristic", "random", "qlearning"):
        with pytest.raises(Infeasible, match="layer 'c'"):
            NestedCoDesign(NoPsumRoom, [conv2d("c", K=4, C=4, P=4, Q=4, R=3, S=3)], inner=inner,
                           inner_budget=5)({})


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
    js = joint_space(hw, SpatialArray, dqn()[:2])
    ev = JointCoDesign(SpatialArray, dqn()[:2], hw.names)
    for p in js.sample(5, seed=1):
        m = ev(p)
        assert m["edp_uj_ms"] > 0 and m["macs"] == sum(layer.macs for layer in dqn()[:2])


def test_study_over_nested_codesign(tmp_path):
    from experiments import Study

    hw = DesignSpace(PowerOfTwo("pe_x", 2, 8), PowerOfTwo("pe_y", 2, 8), Ordinal("glb_kib", [4, 16, 64]))
    s = Study.create("nest", hw, {"edp_uj_ms": "min"}, "optimizer.codesign:NestedCoDesign", "constrained-bo",
                     optimizer_options={"n_init": 4, "pool_size": 100},
                     evaluator_options={"accelerator": "spatial", "workload": "dqn[0:2]"},
                     storage=tmp_path / "n.db", seed=0)
    s.optimize(8, progress=False)
    assert len(s.trials) == 8 and all(t.status.value == "COMPLETE" for t in s.trials)
    assert s.best_trials(k=1)["metrics_edp_uj_ms"].iloc[0] > 0
