"""The stored form of a chosen mapping (mappers/mapping_record.py): the record rebuilds a
mapping the cost model scores to the same figures, its Timeloop YAML reads back to the
canonical mapping, its loop-nest text lists exactly the loops that iterate, and a
malformed record is refused by name."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from accelerators.interop.timeloop import DATASPACE_ROLES, TimeloopTranslation
from evaluators.loopnest import LoopNestCost
from mappers.interop.timeloop import canonical, mapping_from_timeloop
from mappers.mapping import Mapping, MappingBatch, tile_words
from mappers.mapping_record import (
    RecordError,
    loop_nest_lines,
    mapping_from_record,
    mapping_record,
    record_arch,
    timeloop_yaml,
)
from mappers.workloads import conv2d
from tests.evaluators.mapping_gen import random_arch, random_layer, random_mapping


def _legal_random(n: int, seed: int):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        layer, arch = random_layer(rng), random_arch(rng)
        m = random_mapping(rng, layer, arch)
        if not m.violations(layer, arch, check_capacity=False):
            out.append((layer, arch, m))
    return out


def test_record_rebuilds_a_mapping_with_the_same_figures():
    cost = LoopNestCost()
    for layer, arch, m in _legal_random(60, 43):
        rec = mapping_record(m, layer, arch)
        rec = json.loads(json.dumps(rec))  # what the storage gives back
        back = mapping_from_record(rec, arch)
        a = cost(layer, arch, MappingBatch.from_mappings(layer, arch, [m]))
        b = cost(layer, arch, MappingBatch.from_mappings(layer, arch, [back]))
        for f in ("energy_pj", "latency_cycles", "utilization"):
            assert float(getattr(a, f)[0]) == float(getattr(b, f)[0]), f
        # the loops that iterate are the same, in the same order
        for li in range(arch.n_levels):
            assert back.temporal[li] == {d: f for d, f in m.temporal[li].items() if f > 1}
            it = [d for d in m.full_order(li, list(layer.dims)) if m.temporal[li].get(d, 1) > 1]
            assert list(back.order[li]) == it
            assert {op for op in "WIO" if back.keeps(arch, li, op)} == {op for op in "WIO" if m.keeps(arch, li, op)}
        # the architecture rebuilt from the record alone keeps the same operands
        lite = record_arch(rec)
        assert [lv.name for lv in lite.levels] == [lv.name for lv in arch.levels]
        assert [(lv.fanout_x, lv.fanout_y, lv.instances) for lv in lite.levels] == \
            [(lv.fanout_x, lv.fanout_y, lv.instances) for lv in arch.levels]
        # tile words as the mapping module counts them; the backing store holds everything
        for li, lv in enumerate(rec["levels"][:-1]):
            for op, w in lv["tile_words"].items():
                assert w == tile_words(m, layer, li, op)
        assert rec["levels"][-1]["tile_words"] == {op: layer.tensor_words(op) for op in "WIO"}


def test_timeloop_export_reads_back_to_the_canonical_mapping():
    cost = LoopNestCost()
    done = 0
    for layer, arch, m in _legal_random(80, 46):
        rec = mapping_record(m, layer, arch)
        if any(set(x) & set(y) for x, y in zip(m.spatial_x, m.spatial_y)):
            with pytest.raises(ValueError, match="on both X and Y"):
                timeloop_yaml(rec)
            continue
        tl = TimeloopTranslation(arch, tuple(lv.name for lv in arch.levels), dict(DATASPACE_ROLES))
        back = mapping_from_timeloop(yaml.safe_load(timeloop_yaml(rec)), tl, layer)
        # the record's mapping exactly (loops of one iteration keep the canonical order)
        assert back == canonical(mapping_from_record(rec, arch), layer, arch)
        a = cost(layer, arch, MappingBatch.from_mappings(layer, arch, [m]))
        b = cost(layer, arch, MappingBatch.from_mappings(layer, arch, [back]))
        assert float(a.energy_pj[0]) == float(b.energy_pj[0])
        assert float(a.latency_cycles[0]) == float(b.latency_cycles[0])
        done += 1
    assert done > 30


def test_loop_nest_text_of_a_known_mapping():
    from accelerators.arch import ArchSpec, MemoryLevel

    arch = ArchSpec("t", (MemoryLevel("RF", instances=4, capacity_words=64),
                          MemoryLevel("GLB", fanout_x=4, capacity_words=4096, tensors=frozenset("IO")),
                          MemoryLevel("DRAM")), mac_energy_pj=1.0)
    layer = conv2d("c", N=1, K=8, C=2, P=4, Q=4, R=3, S=3)
    m = Mapping.create(arch, temporal=[{"R": 3, "S": 3}, {"C": 2, "Q": 4}, {"K": 2, "P": 4}],
                       spatial_x=[{}, {"K": 4}, {}], order=[("S", "R"), ("Q", "C"), ("P", "K")],
                       bypass=[{"I"}, set(), set()])
    rec = mapping_record(m, layer, arch)
    assert rec["levels"][1] == {"name": "GLB", "instances": 1, "fanout": [4, 1], "holds": ["I", "O"],
                                "tile_words": {"I": 2 * 3 * 6, "O": 4 * 1 * 4},  # C, P+R-1, Q+S-1; K, P, Q
                                "temporal": {"C": 2, "Q": 4}, "order": ["Q", "C"], "spatial_x": {"K": 4}}
    assert rec["levels"][0]["keep"] == ["W", "O"]
    assert loop_nest_lines(rec) == [
        "DRAM [ W:144 I:72 O:128 ]",
        "| for P in [0:4)",
        "|   for K in [0:2)",
        "GLB [ I:36 O:16 ]",
        "|     for Q in [0:4)",
        "|       for C in [0:2)",
        "|         for K in [0:4) (Spatial-X)",
        "RF [ W:9 O:1 ]",
        "|           for S in [0:3)",
        "|             for R in [0:3)",
        "|               << Compute >>",
    ]
    assert len(json.dumps(rec, separators=(",", ":"))) < 600  # compact


def test_malformed_records_are_refused_by_name():
    with pytest.raises(RecordError, match="levels"):
        loop_nest_lines({"dims": {"K": 2}, "levels": []})
    with pytest.raises(RecordError, match=r"levels\[0\]\['temporal'\]"):
        loop_nest_lines({"dims": {"K": 2}, "levels": [{"name": "A", "temporal": {"Z": 2}}, {"name": "B"}]})
    with pytest.raises(RecordError, match="dims"):
        mapping_from_record({"dims": {"K": 0}, "levels": [{"name": "A"}, {"name": "B"}]})
    with pytest.raises(RecordError, match="architecture"):  # instances that do not chain
        record_arch({"dims": {"K": 2}, "levels": [{"name": "A", "instances": 3}, {"name": "B"}]})
