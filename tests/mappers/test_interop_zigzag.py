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


def _same_nest(a: Mapping, b: Mapping, layer) -> bool:
    """Equal factors and bypass, and per level the same order of its loops of factor > 1
    (where loops of factor 1 sit changes nothing)."""
    def moving(m):
        return [tuple(d for d in m.full_order(li, list(layer.dims)) if m.temporal[li].get(d, 1) > 1)
                for li in range(m.n_levels)]
    return (a.temporal, a.spatial_x, a.spatial_y, a.bypass, moving(a)) == (b.temporal, b.spatial_x, b.spatial_y,
                                                                           b.bypass, moving(b))


def _toy_mapping():
    tr = arch_from_zigzag(toy())
    layer = conv2d("t", K=4, C=4, P=4, Q=4, R=1, S=1)
    m = Mapping.create(tr.arch, temporal=[{"C": 2}, {"C": 2}, {"P": 2}, {"Q": 4}],
                       spatial_x=[{}, {"P": 2}, {"K": 4}, {}])
    return tr, layer, m


def test_a_zigzag_temporal_mapping_reads_back_to_the_mapping_written():
    from mappers.interop.timeloop import canonical
    from mappers.interop.zigzag import mapping_from_zigzag

    tr, layer, m = _toy_mapping()
    spatial = spatial_from_zigzag([{"name": "default",
                                    "spatial_mapping": zigzag_spatial(m, tr.axes, ["D1", "D2"], tr.arch.n_levels)}])
    back = mapping_from_zigzag(zigzag_temporal(layer, tr.arch, m), tr, layer, spatial)
    assert _same_nest(back, canonical(m, layer, tr.arch), layer)
    # ZigZag's printed form of the same mapping (CostModelEvaluation JSON: str of each pair)
    printed = {op: [[str(tuple(loop)) for loop in lv] for lv in lists]
               for op, lists in zigzag_temporal(layer, tr.arch, m).items()}
    assert mapping_from_zigzag(printed, tr, layer, spatial) == back


def test_random_mappings_round_trip_through_zigzag_temporal_mappings():
    """Random divisor mappings (no bypass: ZigZag's hierarchy is per operand) of small
    convolutions on the toy accelerator: written by zigzag_temporal / zigzag_spatial and
    read back, the canonical mapping."""
    import numpy as np

    from evaluators.loopnest import evaluate_batch
    from mappers.interop.timeloop import canonical
    from mappers.interop.zigzag import mapping_from_zigzag
    from mappers.mapping import MappingBatch
    from mappers.mapping_space import divisors

    tr = arch_from_zigzag(toy())
    rng = np.random.default_rng(44)
    done = 0
    for _ in range(60):
        dims = {"K": int(rng.choice([2, 4, 8])), "C": int(rng.choice([1, 2, 4])), "P": int(rng.choice([2, 4])),
                "Q": int(rng.choice([1, 3])), "R": 1, "S": 1}
        layer = conv2d("t", **dims)
        temporal = [{} for _ in range(4)]
        sx = [{} for _ in range(4)]
        for d, size in dims.items():
            left = size
            if d in ("K", "P") and rng.random() < 0.5:
                li = 2 if d == "K" else 1
                f = int(rng.choice([x for x in divisors(left) if x <= tr.arch.levels[li].fanout_x]))
                if f > 1 and not sx[li]:
                    sx[li][d] = f
                    left //= f
            for li in range(3):
                f = int(rng.choice(divisors(left)))
                if f > 1:
                    temporal[li][d] = f
                    left //= f
            if left > 1:
                temporal[3][d] = left
        order = [tuple(rng.permutation(list(dims))) for _ in range(4)]
        m = canonical(Mapping.create(tr.arch, temporal, sx, order=order), layer, tr.arch)
        spatial = spatial_from_zigzag([{"name": "default", "spatial_mapping": zigzag_spatial(
            m, tr.axes, ["D1", "D2"], tr.arch.n_levels)}])
        back = mapping_from_zigzag(zigzag_temporal(layer, tr.arch, m), tr, layer, spatial)
        assert _same_nest(back, m, layer)
        a, b = (evaluate_batch(layer, tr.arch, MappingBatch.from_mappings(layer, tr.arch, [x])) for x in (m, back))
        np.testing.assert_array_equal(a.reads, b.reads)
        np.testing.assert_array_equal(a.writes, b.writes)
        done += 1
    assert done == 60


@pytest.mark.parametrize("edit, msg", [
    (lambda t: {**t, "I": [t["I"][0][:2], t["I"][0][2:] + t["I"][1]]},
     r"at 'buf' the memories of 'I' and 'O' end at different loops \(loop 2 and 3"),
    (lambda t: {**t, "I": [t["I"][0][::-1], t["I"][1]]}, r"the loops of 'I' .* are not one loop nest"),
    (lambda t: {**t, "O": t["O"][:2]}, r"operand 'O' has 2 memory levels; 'toy' holds it at 3"),
    (lambda t: [["C", 4], ["K", "*"]], r"temporal_ordering is a loop order whose memory levels ZigZag's memory "
                                         r"allocator chooses"),
    (lambda t: {"name": "default", "temporal_ordering": [["C", 4]]}, r"temporal_ordering"),
    (lambda t: {**t, "W": [t["W"][0], [["OY", 2]]]}, r"at 'dram' the memories of 'W' and 'I' end at different"),
])
def test_what_a_zigzag_mapping_cannot_express_is_refused(edit, msg):
    from mappers.interop.zigzag import mapping_from_zigzag

    tr, layer, m = _toy_mapping()
    spatial = {"D1": [("K", 4)], "D2": [("P", 2)]}
    with pytest.raises(ValueError, match=msg):
        mapping_from_zigzag(edit(zigzag_temporal(layer, tr.arch, m)), tr, layer, spatial)
    with pytest.raises(ValueError, match=r"the factors of 'K' multiply to 1, not its size 4"):
        mapping_from_zigzag(zigzag_temporal(layer, tr.arch, m), tr, layer, {"D2": [("P", 2)]})


def test_a_mapping_file_entry_is_chosen_as_zigzag_chooses_and_read_strictly():
    entries = [{"name": "default", "spatial_mapping": {"D1": ["K, 4"]}},
               {"name": "Conv", "spatial_mapping": {"D1": ["C, 4"]}},
               {"name": "conv1", "spatial_mapping": {"D1": ["OX, 4"]}, "temporal_ordering": [["K", 2]]}]
    assert spatial_from_zigzag(entries, "conv2", "Conv") == {"D1": [("C", 4)]}       # by operator, then default
    assert spatial_from_zigzag(entries, "conv2", "Gemm") == {"D1": [("K", 4)]}
    with pytest.raises(ValueError, match=r"entry 'conv1': temporal_ordering = \[\['K', 2\]\]: an entry's loop order.*"
                                         r"ignore=\('temporal_ordering',\)"):
        spatial_from_zigzag(entries, "conv1", "Conv")
    got = spatial_from_zigzag(entries, "conv1", "Conv", ignore=("temporal_ordering",))
    assert got == {"D1": [("Q", 4)]} and got.dropped == ("conv1.temporal_ordering = [['K', 2]]",)
    with pytest.raises(ValueError, match=r"entry 'default': key 'bogus_key' is not one coexplore reads"):
        spatial_from_zigzag([{"name": "default", "spatial_mapping": {}, "bogus_key": 1}])
    with pytest.raises(ValueError, match=r"memory_operand_links .* another linking cannot be expressed"):
        spatial_from_zigzag([{"name": "default", "memory_operand_links": {"O": "O", "I": "I2", "W": "I1"}}])


def test_a_temporal_mapping_with_a_key_other_than_an_operand_is_refused():
    from mappers.interop.zigzag import mapping_from_zigzag

    tr, layer, m = _toy_mapping()
    with pytest.raises(ValueError, match=r"key 'X' is not an operand W, I or O"):
        mapping_from_zigzag({**zigzag_temporal(layer, tr.arch, m), "X": []}, tr, layer, {"D1": [("K", 4)]})
