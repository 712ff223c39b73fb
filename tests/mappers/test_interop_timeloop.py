"""Timeloop/Accelergy v0.4 specs read into ArchSpec + Layer + Mapping
(accelerators/interop/timeloop.py, mappers/interop/timeloop.py), on two example designs
of the public Timeloop exercises committed in tests/mappers/data/timeloop (README there):
the translation equals a hand-built ArchSpec; the reference mapping, evaluated with
``accounting="timeloop"``, gives Timeloop's cycles, every read, fill and update of every
level and data space, and its energies; a mapping written as Timeloop mapping YAML reads
back identically; what cannot be expressed is refused by name."""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from accelerators.arch import ArchSpec, MemoryLevel
from accelerators.interop.timeloop import arch_from_timeloop, load_timeloop_yaml
from evaluators.loopnest import LoopNestCost
from mappers.interop.timeloop import (
    canonical,
    layer_from_timeloop,
    layer_to_timeloop,
    mapping_from_timeloop,
    mapping_to_timeloop,
    stats_from_timeloop,
)
from mappers.mapping import MappingBatch
from mappers.workloads import conv2d, gemm
from tests.evaluators.mapping_gen import random_arch, random_layer, random_mapping

DATA = Path(__file__).parent / "data" / "timeloop"
DESIGNS = ("eyeriss_like", "simple_weight_stationary")


def _load(design: str, **kw):
    layer, roles = layer_from_timeloop(load_timeloop_yaml(DATA / "problem.yaml"))
    d = DATA / design
    tl = arch_from_timeloop(load_timeloop_yaml(d / "arch.yaml"), load_timeloop_yaml(d / "ERT.yaml"),
                            load_timeloop_yaml(d / "ART.yaml"), roles=roles, **kw)
    return layer, tl


def test_the_problem_is_the_convolution_it_describes():
    layer, roles = layer_from_timeloop(load_timeloop_yaml(DATA / "problem.yaml"))
    assert roles == {"Weights": "W", "Inputs": "I", "Outputs": "O"}
    assert layer.dims == {"C": 3, "M": 32, "R": 3, "S": 3, "N": 1, "P": 112, "Q": 112}
    # Inputs[n][c][R*1 + P*2][S*1 + Q*2]: the problem's Wstride / Hstride are 2
    assert layer.tensor("I").axes == ((("N", 1),), (("C", 1),), (("R", 1), ("P", 2)), (("S", 1), ("Q", 2)))
    assert layer.tensor_words("I") == 3 * 225 * 225 and layer.macs == 10838016  # Timeloop's "Computes"


def test_eyeriss_like_is_the_hand_built_archspec():
    _, tl = _load("eyeriss_like")
    a = tl.arch
    # ERT energies per access (an access moves width / datawidth words); read_bandwidth /
    # write_bandwidth as they are (arch.yaml: 2 and 2 on the spads, 16 and 16 on the GLB)
    want = ArchSpec("system", (
        MemoryLevel("psum_spad", frozenset("O"), 16, instances=168, read_energy_pj=0.2513, write_energy_pj=0.2191,
                    read_bandwidth_words_per_cycle=2.0, write_bandwidth_words_per_cycle=2.0, leakage_pj_per_cycle=0.000134, vector_words=1),
        MemoryLevel("weights_spad", frozenset("W"), 384, instances=168, read_energy_pj=1.976602,
                    write_energy_pj=1.881657, read_bandwidth_words_per_cycle=2.0, write_bandwidth_words_per_cycle=2.0, leakage_pj_per_cycle=0.001592,
                    vector_words=2),
        MemoryLevel("ifmap_spad", frozenset("I"), 24, instances=168, read_energy_pj=0.202442,
                    write_energy_pj=0.176713, read_bandwidth_words_per_cycle=2.0, write_bandwidth_words_per_cycle=2.0, leakage_pj_per_cycle=0.000101,
                    vector_words=2),
        MemoryLevel("inter_PE_spatial", frozenset(), 0, instances=14, fanout_y=12),
        MemoryLevel("inter_PE_column_spatial", frozenset(), 0, instances=1, fanout_x=14),
        MemoryLevel("shared_glb", frozenset("IO"), 131072, read_energy_pj=18.183829, write_energy_pj=14.137929,
                    read_bandwidth_words_per_cycle=16.0,
                    write_bandwidth_words_per_cycle=16.0, leakage_pj_per_cycle=0.005652, vector_words=8),
        MemoryLevel("DRAM", read_energy_pj=512.0, write_energy_pj=512.0, vector_words=8),
    ), mac_energy_pj=0.207692, word_bits=8, clock_mhz=1000.0, kind="timeloop")
    strip = [dataclasses.replace(lv, area_mm2=0.0) for lv in a.levels]
    assert dataclasses.replace(a, levels=tuple(strip), area_mm2=0.0) == want
    art = {lv.name: lv.area_mm2 for lv in a.levels}
    # ART: um^2 per instance x instances; the whole design adds the 168 MACs, and the ART's
    # 1 um^2 of each of the 1 + 14 instances of the two fanout levels (Timeloop's dummy buffers)
    assert math.isclose(art["psum_spad"], 123.627348 * 168 * 1e-6) and art["DRAM"] == 0.0
    assert math.isclose(art["inter_PE_spatial"], 14e-6) and math.isclose(art["inter_PE_column_spatial"], 1e-6)
    assert math.isclose(a.area_mm2, (217363.36892 + 168 * (70.091961 + 5816.44278 + 123.627348 + 191.82) + 15)
                        * 1e-6)
    assert tl.level_names[3:5] == ("inter_PE_spatial", "inter_PE_column_spatial") and a.n_macs == 168


@pytest.mark.parametrize("design", DESIGNS)
def test_the_reference_mapping_gives_timeloops_counts_cycles_and_energy(design):
    layer, tl = _load(design)
    m = mapping_from_timeloop(load_timeloop_yaml(DATA / design / "map.yaml"), tl, layer)
    assert m.violations(layer, tl.arch) == []
    ref = stats_from_timeloop((DATA / design / "stats.txt").read_text())
    r = LoopNestCost("timeloop")(layer, tl.arch, MappingBatch.from_mappings(layer, tl.arch, [m]))
    assert float(r.latency_cycles[0]) == ref["cycles"]
    assert float(r.macs_executed[0]) == ref["computes"]
    ops = {"Weights": 0, "Inputs": 1, "Outputs": 2}
    compared = 0
    total = ref["mac_energy_pj"]
    for li, lv in enumerate(tl.arch.levels):
        if lv.name not in ref["levels"]:
            assert not lv.tensors          # only the tensor-less inter_*_spatial levels have no stats
            continue
        stats = ref["levels"][lv.name]
        for ds, s in stats["dataspaces"].items():
            k, n = ops[ds], s["utilized_instances"]
            assert float(r.reads[0, li, k]) == s["reads"] * n, (lv.name, ds, "reads")
            assert float(r.writes[0, li, k]) == (s["fills"] + s["updates"]) * n, (lv.name, ds, "writes")
            compared += 1
            total += s["energy_pj"]
        # Timeloop prints energies to 0.01 pJ
        assert math.isclose(float(r.level_energy_pj[0, li]), sum(s["energy_pj"] for s in stats["dataspaces"].values()),
                            rel_tol=1e-8, abs_tol=0.01 * len(stats["dataspaces"])), lv.name
        assert math.isclose(float(r.leakage_energy_pj[0, li]), stats["leakage_pj"], abs_tol=0.01), lv.name
        total += stats["leakage_pj"]
    assert compared >= 8
    assert math.isclose(float(r.mac_energy_pj[0]), ref["mac_energy_pj"], abs_tol=0.01)
    assert math.isclose(float(r.energy_pj[0]), total, rel_tol=1e-8)
    # coexplore's own accounting counts differently on the same mapping (its window, drain and MAC rules)
    d = LoopNestCost("coexplore")(layer, tl.arch, MappingBatch.from_mappings(layer, tl.arch, [m]))
    assert float(d.energy_pj[0]) != float(r.energy_pj[0])


@pytest.mark.parametrize("design", DESIGNS)
def test_a_mapping_written_as_timeloop_yaml_reads_back_identically(design, tmp_path):
    layer, tl = _load(design)
    m = mapping_from_timeloop(load_timeloop_yaml(DATA / design / "map.yaml"), tl, layer)
    p = tmp_path / "map.yaml"
    p.write_text(yaml.safe_dump({"mapping": mapping_to_timeloop(m, tl, layer)}, sort_keys=False))
    back = mapping_from_timeloop(load_timeloop_yaml(p), tl, layer)
    assert back == m
    cost = LoopNestCost("timeloop")
    one = cost(layer, tl.arch, MappingBatch.from_mappings(layer, tl.arch, [m]))
    two = cost(layer, tl.arch, MappingBatch.from_mappings(layer, tl.arch, [back]))
    assert float(one.energy_pj[0]) == float(two.energy_pj[0])


def test_random_mappings_round_trip_through_timeloop_yaml():
    rng = np.random.default_rng(44)
    done = tries = 0
    while done < 60 and tries < 2000:
        tries += 1
        layer, arch = random_layer(rng), random_arch(rng)
        m = random_mapping(rng, layer, arch)
        if any(set(x) & set(y) for x, y in zip(m.spatial_x, m.spatial_y)):
            with pytest.raises(ValueError, match="on both X and Y"):
                mapping_to_timeloop(m, arch, layer)
            continue
        text = yaml.safe_dump(mapping_to_timeloop(m, arch, layer))
        tl = _as_translation(arch)
        if m.violations(layer, arch, check_capacity=False):     # an illegal factorization: refused
            with pytest.raises(ValueError, match=r"dimension|factors of"):
                mapping_from_timeloop(yaml.safe_load(text), tl, layer)
            continue
        back = mapping_from_timeloop(yaml.safe_load(text), tl, layer)
        assert back == canonical(m, layer, arch)
        a = LoopNestCost()(layer, arch, MappingBatch.from_mappings(layer, arch, [m]))
        b = LoopNestCost()(layer, arch, MappingBatch.from_mappings(layer, arch, [back]))
        assert float(a.energy_pj[0]) == float(b.energy_pj[0]) and float(a.latency_cycles[0]) == float(b.latency_cycles[0])
        done += 1
    assert done == 60


def _as_translation(arch: ArchSpec):
    from accelerators.interop.timeloop import DATASPACE_ROLES, TimeloopTranslation

    return TimeloopTranslation(arch, tuple(lv.name for lv in arch.levels), dict(DATASPACE_ROLES))


@pytest.mark.parametrize("layer", [conv2d("c", N=2, K=4, C=3, P=5, Q=4, R=3, S=2, stride=(2, 1), dilation=(1, 2)),
                                   gemm("g", M=6, N=5, K=7)])
def test_a_layer_written_as_a_timeloop_problem_reads_back_equal(layer):
    back, roles = layer_from_timeloop(yaml.safe_load(yaml.safe_dump(layer_to_timeloop(layer))))
    assert back.dims == layer.dims and back.tensors == layer.tensors and roles["Outputs"] == "O"


def _arch_text(design: str) -> dict:
    return load_timeloop_yaml(DATA / design / "arch.yaml")


def _ert(design: str) -> dict:
    return load_timeloop_yaml(DATA / design / "ERT.yaml")


def _component(tree: dict, name: str) -> dict:
    def walk(nodes):
        for n in nodes:
            if n.get("name") == name:
                return n
            if "nodes" in n:
                hit = walk(n["nodes"])
                if hit is not None:
                    return hit
        return None

    return walk(tree["architecture"]["nodes"])


def test_what_cannot_be_expressed_is_refused_by_name():
    arch, ert = _arch_text("eyeriss_like"), _ert("eyeriss_like")
    a = copy.deepcopy(arch)
    _component(a, "shared_glb")["attributes"]["cluster_size"] = 4
    with pytest.raises(ValueError, match=r"'shared_glb': cluster_size = 4 cannot be expressed"):
        arch_from_timeloop(a, ert)
    a = copy.deepcopy(arch)
    _component(a, "ifmap_spad")["constraints"]["dataspace"] = {}
    with pytest.raises(ValueError, match=r"!Parallel component 'ifmap_spad': keeps \['I', 'O', 'W'\]"):
        arch_from_timeloop(a, ert)
    a = copy.deepcopy(arch)
    _component(a, "shared_glb")["attributes"]["metadata_storage_width"] = 4
    with pytest.raises(ValueError, match=r"attribute metadata_storage_width .* cannot be expressed"):
        arch_from_timeloop(a, ert)
    a = copy.deepcopy(arch)
    a["architecture"]["version"] = 0.3
    with pytest.raises(ValueError, match=r"only version 0.4"):
        arch_from_timeloop(a, ert)
    e = copy.deepcopy(ert)
    for t in e["ERT"]["tables"]:
        if t["name"].endswith("psum_spad[1..168]"):
            for act in t["actions"]:
                if act["name"] == "update":
                    act["energy"] = 9.0
    with pytest.raises(ValueError, match=r"'psum_spad' update energy 9.0 differs from its write energy"):
        arch_from_timeloop(arch, e)
    _, tl = _load("simple_weight_stationary")
    with pytest.raises(ValueError, match=r"compute unit 'mac' leaks 0.0036 pJ/cycle"):
        _load("simple_weight_stationary", mac_leakage="refuse")
    inner = _load("simple_weight_stationary", mac_leakage="innermost")[1].arch.levels[0]
    assert math.isclose(inner.leakage_pj_per_cycle, tl.arch.levels[0].leakage_pj_per_cycle + 0.0036)


def test_a_mapping_that_cannot_be_read_is_refused_by_name():
    layer, tl = _load("eyeriss_like")
    good = load_timeloop_yaml(DATA / "eyeriss_like" / "map.yaml")
    bad = copy.deepcopy(good)
    bad["mapping"].append({"target": "nowhere", "type": "temporal", "factors": "C1"})
    with pytest.raises(ValueError, match="targets 'nowhere', which is no level"):
        mapping_from_timeloop(bad, tl, layer)
    bad = copy.deepcopy(good)
    for d in bad["mapping"]:
        if d["target"] == "DRAM" and d["type"] == "temporal":
            d["factors"] = d["factors"].replace("M4", "M2")
    with pytest.raises(ValueError, match="factors of M multiply to 16, less than its size 32"):
        mapping_from_timeloop(bad, tl, layer)
