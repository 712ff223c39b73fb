"""A layer and a mapping written in ZigZag's schemas, and ZigZag's spatial mappings read
back (mappers/interop/zigzag.py); no ZigZag needed."""

from __future__ import annotations

import pytest

from accelerators.interop.zigzag import arch_from_zigzag
from mappers.interop.zigzag import (
    spatial_from_zigzag,
    zigzag_spatial,
    zigzag_temporal,
    zigzag_workload,
)
from mappers.mapping import Mapping
from mappers.workloads import conv2d
from tests.accelerators.test_interop_zigzag import toy


def test_each_operands_loops_sit_at_the_memories_that_hold_it():
    tr = arch_from_zigzag(toy())
    layer = conv2d("t", K=4, C=4, P=4, Q=4, R=1, S=1)
    m = Mapping.create(tr.arch, temporal=[{"C": 2}, {"C": 2}, {"P": 2}, {"Q": 4}],
                       spatial_x=[{}, {"P": 2}, {"K": 4}, {}])
    t = zigzag_temporal(layer, tr.arch, m)
    # reg_o keeps only O, reg_w only W: the other operands' loops move up to their next memory
    assert t["W"] == [[["C", 2], ["C", 2]], [["OY", 2], ["OX", 4]]]
    assert t["I"] == [[["C", 2], ["C", 2], ["OY", 2]], [["OX", 4]]]
    assert t["O"] == [[["C", 2]], [["C", 2], ["OY", 2]], [["OX", 4]]]
    assert zigzag_spatial(m, tr.axes, ["D1", "D2"], tr.arch.n_levels) == {"D1": ["K, 4"], "D2": ["OY, 2"]}


def test_an_unrolling_on_an_axis_without_an_array_dimension_is_refused():
    tr = arch_from_zigzag(toy())
    m = Mapping.create(tr.arch, temporal=[{}, {}, {}, {"C": 4, "P": 4, "Q": 4}],
                       spatial_x=[{"K": 4}, {}, {}, {}])
    with pytest.raises(ValueError, match="level 0 axis x, which has no array dimension"):
        zigzag_spatial(m, tr.axes, ["D1", "D2"], tr.arch.n_levels)


def test_spatial_mappings_read_back_in_our_dimensions():
    assert spatial_from_zigzag([{"name": "default", "spatial_mapping": {"D1": ["K, 32"], "D2": ["OX, 8"]}}]) == {
        "D1": [("K", 32)], "D2": [("Q", 8)]}
    assert spatial_from_zigzag(None) is None
    with pytest.raises(ValueError, match="dimension 'Z'"):
        spatial_from_zigzag([{"name": "default", "spatial_mapping": {"D1": ["Z, 2"]}}])
    with pytest.raises(ValueError, match="no 'default' entry"):
        spatial_from_zigzag([{"name": "Conv", "spatial_mapping": {}}])


def test_the_workload_gives_the_input_window_of_a_strided_conv():
    (w,) = zigzag_workload(conv2d("t", K=8, C=3, P=5, Q=6, R=3, S=3, stride=2), bits=8)
    assert w["loop_sizes"] == [1, 8, 3, 5, 6, 3, 3]
    assert w["dimension_relations"] == ["ix=2*ox+1*fx", "iy=2*oy+1*fy"]
    assert w["pr_loop_sizes"] == [(6 - 1) * 2 + 3, (5 - 1) * 2 + 3]
    assert w["operand_precision"]["W"] == 8
