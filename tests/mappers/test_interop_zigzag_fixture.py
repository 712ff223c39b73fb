"""mapping_from_zigzag on mappings ZigZag itself chose and evaluated, not ones coexplore wrote.

tests/mappers/data/zigzag/loma_mapping.yaml was written by ZigZag 3.9.1 (its header gives
the command; make_loma_mapping.py beside it runs ZigZag's API: LOMA's search, its memory
allocator and cost model). For each accelerator it holds ZigZag's allocated temporal
mapping, its spatial unrolling and its element moves per operand and memory. No ZigZag is
needed here: the file is read as data.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from accelerators.interop.zigzag import MEMORY_OPERAND, arch_from_zigzag
from evaluators.loopnest import evaluate_batch
from mappers.interop.zigzag import (
    layers_from_zigzag,
    mapping_from_zigzag,
    spatial_from_zigzag,
    zigzag_temporal,
)
from mappers.mapping import Mapping, MappingBatch

FIXTURE = Path(__file__).parent / "data" / "zigzag" / "loma_mapping.yaml"


def _case(name: str):
    case = yaml.safe_load(FIXTURE.read_text())[name]
    tr = arch_from_zigzag(case["accelerator"], ignore=("latency",))     # ZigZag's validator requires latency
    (layer,) = layers_from_zigzag(case["workload"])
    spatial = spatial_from_zigzag([{"name": "default", "spatial_mapping": case["spatial_mapping"]}])
    return case, tr, layer, spatial


def test_the_fixture_says_which_zigzag_wrote_it_and_how():
    head = FIXTURE.read_text().splitlines()[:4]
    assert head[0].startswith("# Written by ZigZag 3.9.1 (zigzag-dse)")
    assert head[3] == ("#   .venv-zigzag/bin/python tests/mappers/data/zigzag/make_loma_mapping.py > "
                       "tests/mappers/data/zigzag/loma_mapping.yaml")


def test_zigzags_own_mapping_reads_as_the_loop_nest_it_evaluated():
    case, tr, layer, spatial = _case("shared_register")
    got = mapping_from_zigzag(case["temporal_mapping"], tr, layer, spatial)
    # ZigZag's loops, innermost first: (OX 3, OY 2, C 2) in the weight/output register, where every operand of it
    # ends (temporal_mapping_type even); then (C 4, OX 2, K 4) in the input/output buffer; K 4 on D1 (x) and
    # OY 2 on D2 (y) across the buffer's fanout; nothing left for DRAM
    assert [lv.name for lv in tr.arch.levels] == ["reg", "buf", "dram"]
    assert got.temporal == ({"Q": 3, "P": 2, "C": 2}, {"C": 4, "Q": 2, "K": 4}, {})
    assert (got.spatial_x, got.spatial_y) == (({}, {"K": 4}, {}), ({}, {"P": 2}, {}))
    moving = [tuple(d for d in got.order[li] if got.temporal[li].get(d, 1) > 1) for li in range(3)]
    assert moving == [("C", "P", "Q"), ("K", "Q", "C"), ()]                         # outermost first
    assert got.bypass == (frozenset(), frozenset(), frozenset()) and got.violations(layer, tr.arch) == []
    # written back, it is the mapping ZigZag gave (its loops per operand and memory, in its order)
    back = zigzag_temporal(layer, tr.arch, got)
    rename = {"N": "B", "K": "K", "C": "C", "P": "OY", "Q": "OX", "R": "FY", "S": "FX"}
    assert back == {op: [[[d, f] for d, f in lv] for lv in levels] for op, levels in case["temporal_mapping"].items()}
    assert all(d in rename.values() for levels in back.values() for lv in levels for d, _ in lv)


def test_its_counts_are_zigzags_counts():
    """Reads and writes per operand and memory equal ZigZag's element moves for this
    mapping, but for one row: ZigZag's API evaluates with
    ``access_same_data_considered_as_no_access`` (the fixture says so), under which a weight
    read out of the innermost memory for consecutive MACs that reuse it counts once: the
    register's weight reads are ours over the innermost weight-irrelevant loops (OX 3 x OY 2)."""
    case, tr, layer, spatial = _case("shared_register")
    m = mapping_from_zigzag(case["temporal_mapping"], tr, layer, spatial)
    assert case["zigzag"]["access_same_data_considered_as_no_access"] is True
    res = evaluate_batch(layer, tr.arch, MappingBatch.from_mappings(layer, tr.arch, [m]), accounting="zigzag")
    assert float(res.compute_cycles[0]) == case["zigzag"]["ideal_temporal_cycle"]
    mems = case["accelerator"]["memories"]
    rows = 0
    for ti, op in enumerate(("W", "I", "O")):
        for zi, mem in enumerate(n for n in mems if MEMORY_OPERAND[op] in mems[n]["operands"]):
            lv, z = tr.level_of[mem], case["zigzag"]["elem_moves"][op][zi]
            reads, writes = float(res.reads[0][lv][ti]), float(res.writes[0][lv][ti])
            z_reads = z["rd_out_to_low"] + z["rd_out_to_high"]
            assert writes == z["wr_in_by_high"] + z["wr_in_by_low"], (op, mem)
            assert reads == (z_reads * 3 * 2 if (op, mem) == ("W", "reg") else z_reads), (op, mem)
            rows += 1
    assert rows == 7


def test_a_wrong_reading_of_the_same_file_would_not_pass():
    """The checks above tell readers apart: ZigZag's loops placed one memory up (a reader
    that takes an operand's k-th memory for level k+1), or its spatial dimensions swapped,
    give another mapping with other counts."""
    case, tr, layer, spatial = _case("shared_register")
    right = mapping_from_zigzag(case["temporal_mapping"], tr, layer, spatial)
    up = Mapping.create(tr.arch, temporal=[{}, dict(right.temporal[0]), dict(right.temporal[1])],
                        spatial_x=list(right.spatial_x), spatial_y=list(right.spatial_y))
    swapped = mapping_from_zigzag(case["temporal_mapping"], tr, layer, {"D1": [("P", 2)], "D2": [("K", 4)]})
    assert up.temporal != right.temporal and swapped.spatial_x != right.spatial_x
    assert swapped.violations(layer, tr.arch) != []                     # K 4 across D2, which is 2 wide
    a, b = (evaluate_batch(layer, tr.arch, MappingBatch.from_mappings(layer, tr.arch, [x]), accounting="zigzag")
            for x in (right, up))
    assert (a.reads != b.reads).any()
    with pytest.raises(ValueError, match=r"the factors of 'K' multiply to 4, not its size 16"):
        mapping_from_zigzag(case["temporal_mapping"], tr, layer, {"D2": [("P", 2)]})


def test_zigzags_stationary_form_and_a_non_nested_mapping_are_refused_by_name():
    case, tr, layer, spatial = _case("shared_register")
    # what ZigZag writes to its JSON: the output's C 4 merged into the register below, not the weights'
    with pytest.raises(ValueError, match=r"at 'reg' the memories of 'W' and 'O' end at different loops \(loop 3 and 4"):
        mapping_from_zigzag(case["temporal_mapping_stationary"], tr, layer, spatial)
    # the toy: ZigZag's weight register (shared over D2, so above the output register) ends below the output
    # register's loops -- per-operand hierarchies that do not nest
    case, tr, layer, spatial = _case("toy")
    with pytest.raises(ValueError, match=r"'reg_w' ends at loop 3, below the level under it \(loop 4\): ZigZag's "
                                         r"per-operand memory hierarchies need not nest"):
        mapping_from_zigzag(case["temporal_mapping"], tr, layer, spatial)
