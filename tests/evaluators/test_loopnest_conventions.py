"""The counting conventions (evaluators.loopnest.Conventions): every choice equals the
literal walk extended to it (evaluators/loopnest/walk.py), on random cases and on one
small case per rule whose counts are derived by hand below; the timeloop mode selects
Timeloop's rule for each."""

from __future__ import annotations

import numpy as np
import pytest

from accelerators.arch import ArchSpec, MemoryLevel
from evaluators.loopnest import (
    ACCOUNTING,
    CONVENTION_CHOICES,
    LOOPNEST,
    Conventions,
    LoopNestCost,
    evaluate_batch,
    kernel_available,
)
from evaluators.loopnest.walk import simulate
from mappers.mapping import Mapping, MappingBatch
from mappers.workloads import conv2d, gemm
from tests.evaluators.mapping_gen import random_arch, random_layer, random_mapping

PATHS = [False] + ([True] if kernel_available() else [])
CONVENTIONS = ([Conventions()] + [Conventions(**{k: c}) for k, v in CONVENTION_CHOICES.items() for c in v[1:]]
               + [ACCOUNTING["timeloop"], ACCOUNTING["zigzag"],
                  Conventions(window_reuse="none", mac_operand_reads="on_change"),
                  Conventions(first_accumulation="per_word", psum_refill="every_child", multicast="same_index")])


def run(layer, arch, m, conv):
    """The model's counts under ``conv`` (numpy path, and the compiled kernel where numba
    is installed), checked equal to the walk's; returns the numpy path's."""
    ref = simulate(layer, arch, m, conv)
    out = None
    for kernel in PATHS:
        res = evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, [m]), kernel=kernel,
                             accounting=conv)
        np.testing.assert_array_equal(res.reads[0], ref.reads, err_msg=f"reads {conv} kernel={kernel}")
        np.testing.assert_array_equal(res.writes[0], ref.writes, err_msg=f"writes {conv} kernel={kernel}")
        np.testing.assert_array_equal(res.noc_words[0], ref.noc_words, err_msg=f"noc {conv} kernel={kernel}")
        out = res if out is None else out
    return out


@pytest.mark.parametrize("seed", range(30))
def test_every_convention_matches_the_walk_on_random_cases(seed):
    rng = np.random.default_rng(7000 + seed)
    layer, arch = random_layer(rng), random_arch(rng)
    maps = [random_mapping(rng, layer, arch) for _ in range(2)]
    for conv in CONVENTIONS:
        for m in maps:
            run(layer, arch, m, conv)


def test_named_modes():
    tl = ACCOUNTING["timeloop"]
    assert (tl.window_reuse, tl.multicast, tl.psum_refill, tl.mac_operand_reads, tl.output_drain,
            tl.first_accumulation, tl.leakage) == ("innermost", "same_index", "every_child", "on_change",
                                                   "parent_update", "per_instance", "utilized_instances")
    assert Conventions.of("timeloop") is tl and Conventions.of(None) == Conventions() == ACCOUNTING["coexplore"]
    assert Conventions.of("zigzag") == Conventions(window_reuse="none", first_accumulation="per_word")
    assert Conventions().leakage == "all_instances"


BUF = ArchSpec("buf", (MemoryLevel("B", capacity_words=100, read_energy_pj=1.0, write_energy_pj=1.0),
                       MemoryLevel("DRAM", read_energy_pj=10.0, write_energy_pj=10.0)), mac_energy_pj=1.0)


def test_window_reuse_after_an_irrelevant_inner_loop():
    """1-D conv K=2, P=4, R=3; the buffer holds one window of 3 inputs (R at level 0);
    above it P (outer) and K (inner, irrelevant to the input). K's steps leave the window
    in place; each of P's 3 steps moves it by one. Coexplore keeps the overlap of 2:
    input fills 3 + 3 x 1 = 6. Timeloop's rule: the innermost loop K moved it by 0, so
    P's +1 is a new translation and the window is refetched whole: 3 + 3 x 3 = 12."""
    layer = conv2d("c", K=2, C=1, P=4, Q=1, R=3, S=1)
    m = Mapping.create(BUF, temporal=[{"R": 3}, {"P": 4, "K": 2}], order=[[], ["P", "K"]])
    for conv, fills in ((Conventions(), 6), (Conventions(window_reuse="innermost"), 12)):
        res = run(layer, BUF, m, conv)
        assert res.writes[0][0, 1] == fills and res.reads[0][1, 1] == fills


def test_no_window_reuse():
    """ZigZag's rule on the layer above. P outer, K inner: K's steps change no input index
    (nothing fetched), each of P's 3 steps refetches the window: 3 + 3 x 3 = 12 (Timeloop's
    rule: 12, coexplore's: 6). K outer, P inner: all 7 steps change an input index (6 of P,
    and K's, which wraps P back), so 3 + 7 x 3 = 24; coexplore keeps 2 of 3 words at each of
    P's 6 steps and nothing at K's (the window jumps back by 3): 3 + 6 x 1 + 3 = 12, as
    Timeloop's rule (P is the innermost moving loop, K's jump is another translation)."""
    layer = conv2d("c", K=2, C=1, P=4, Q=1, R=3, S=1)
    for order, fills in ((["P", "K"], (6, 12, 12)), (["K", "P"], (12, 12, 24))):
        m = Mapping.create(BUF, temporal=[{"R": 3}, {"P": 4, "K": 2}], order=[[], order])
        for rule, n in zip(("any_step", "innermost", "none"), fills):
            res = run(layer, BUF, m, Conventions(window_reuse=rule))
            assert res.writes[0][0, 1] == n and res.reads[0][1, 1] == n, (order, rule)


def test_diagonal_multicast():
    """1-D conv P=2, R=2 on a 2 x 2 array, P on X and R on Y: PE (p, r) needs input p + r,
    so PEs (0, 1) and (1, 0) hold the same word. Coincident tiles share one GLB read: 3
    reads (inputs 0, 1, 2); by identical index only: 4."""
    layer = conv2d("c", K=1, C=1, P=2, Q=1, R=2, S=1)
    arch = ArchSpec("a", (
        MemoryLevel("RF", capacity_words=4, instances=4, read_energy_pj=1.0, write_energy_pj=1.0),
        MemoryLevel("GLB", capacity_words=64, fanout_x=2, fanout_y=2, read_energy_pj=5.0, write_energy_pj=5.0),
        MemoryLevel("DRAM", read_energy_pj=100.0, write_energy_pj=100.0)), mac_energy_pj=1.0)
    m = Mapping.create(arch, spatial_x=[{}, {"P": 2}, {}], spatial_y=[{}, {"R": 2}, {}])
    for conv, reads in ((Conventions(), 3), (Conventions(multicast="same_index"), 4)):
        assert run(layer, arch, m, conv).reads[0][1, 1] == reads


def _reduction_group_case():
    """GEMM M=2, N=1, K=6 on 3 PEs whose RFs hold one output word: K=3 unrolled over them,
    K=2 (outer) and M=2 (inner) at the GLB."""
    layer = gemm("g", M=2, N=1, K=6)
    arch = ArchSpec("r", (
        MemoryLevel("RF", tensors=frozenset({"O"}), capacity_words=1, instances=3, read_energy_pj=1.0,
                    write_energy_pj=1.0),
        MemoryLevel("GLB", capacity_words=64, fanout_y=3, read_energy_pj=5.0, write_energy_pj=5.0),
        MemoryLevel("DRAM", read_energy_pj=100.0, write_energy_pj=100.0)), mac_energy_pj=1.0)
    m = Mapping.create(arch, temporal=[{}, {"K": 2, "M": 2}, {}], spatial_y=[{}, {"K": 3}, {}],
                       order=[[], ["K", "M"], []])
    return layer, arch, m


def test_partial_sums_back_into_a_reduction_group():
    """GEMM M=2, N=1, K=6: K=3 unrolled over 3 PEs whose RFs hold one output word; at the
    GLB, K=2 (outer) and M=2 (inner). Each RF's output tile moves 4 times (4 fills), 2 of
    them to a word that already holds a partial sum: 2 refills per reduction group (one
    group: the 3 PEs reduce into the same word). GLB reads of O: those 2 refills plus its 2
    output words drained to DRAM, 4 either way. RF writes of O: the MACs' 4 iterations x 3
    updates = 12, plus the refills: 2 into one child (14), or 6 into every child (18)."""
    layer, arch, m = _reduction_group_case()
    for conv, rf_writes in ((Conventions(), 14), (Conventions(psum_refill="every_child"), 18)):
        res = run(layer, arch, m, conv)
        assert res.reads[0][1, 2] == 4 and res.writes[0][0, 2] == rf_writes


def test_first_accumulation_per_word():
    """The layer and mapping above: 3 PEs x 4 steps = 12 accumulations into the 2 output
    words. RF reads of O: per instance, each PE's first accumulation into each word reads
    nothing (3 x 2 = 6 of them), so the MACs read 6, plus every PE's 4 evictions: 18. Per
    word, only the first accumulation into each of the 2 words reads nothing: 10 + 12 = 22.
    The writes do not change."""
    layer, arch, m = _reduction_group_case()
    for rule, rf_reads in (("per_instance", 18), ("per_word", 22)):
        res = run(layer, arch, m, Conventions(first_accumulation=rule))
        assert res.reads[0][0, 2] == rf_reads and res.writes[0][0, 2] == 14 and res.reads[0][1, 2] == 4


def test_operand_held_at_the_mac():
    """GEMM M=1, N=4, K=2 on a 2 x 2 array without registers: N=2 on X, K=2 on Y, N=2 in
    time at the buffer. MAC (k, n) multiplies A[0, k], which does not change over the two
    steps: read every step, the buffer's input reads are 2 steps x 2 distinct words = 4;
    read on change, 2. B[k, n] changes every step: 8 reads either way."""
    layer = gemm("g", M=1, N=4, K=2)
    arch = ArchSpec("m", (
        MemoryLevel("BUF", capacity_words=64, fanout_x=2, fanout_y=2, read_energy_pj=5.0, write_energy_pj=5.0),
        MemoryLevel("DRAM", read_energy_pj=100.0, write_energy_pj=100.0)), mac_energy_pj=1.0)
    m = Mapping.create(arch, temporal=[{"N": 2}, {}], spatial_x=[{"N": 2}, {}], spatial_y=[{"K": 2}, {}])
    for conv, i_reads in ((Conventions(), 4), (Conventions(mac_operand_reads="on_change"), 2)):
        res = run(layer, arch, m, conv)
        assert res.reads[0][0, 1] == i_reads and res.reads[0][0, 0] == 8


def test_output_drain():
    """The weight-stationary GEMM of test_loopnest_exact.py: the SRAM's 8 output words
    drain to DRAM once. The child reads them (8 SRAM reads of O) and DRAM updates them (8
    writes); counted as parent updates only, the SRAM reads are 0, the DRAM writes 8."""
    from tests.evaluators.test_loopnest_exact import TOY
    layer = gemm("g", M=4, N=2, K=2)
    m = Mapping.create(TOY, temporal=[{"M": 4}, {}, {}], spatial_x=[{}, {"N": 2}, {}],
                       spatial_y=[{}, {"K": 2}, {}], bypass=[{"O"}, set(), set()])
    for conv, sram_reads in ((Conventions(), 8), (Conventions(output_drain="parent_update"), 0)):
        res = run(layer, TOY, m, conv)
        assert res.reads[0][1, 2] == sram_reads and res.writes[0][2, 2] == 8


def test_options_and_paths_are_checked():
    with pytest.raises(ValueError, match=r"Conventions.window_reuse must be one of \['any_step', 'innermost', "
                                         r"'none'\], got 'sometimes'"):
        Conventions(window_reuse="sometimes")
    with pytest.raises(ValueError, match=r"Conventions.first_accumulation must be one of \['per_instance', "
                                         r"'per_word'\], got 'never'"):
        Conventions(first_accumulation="never")
    with pytest.raises(ValueError, match=r"accounting must be a Conventions or one of \['coexplore', 'timeloop', "
                                         r"'zigzag'\], got 'maestro'"):
        LoopNestCost("maestro")
    layer = gemm("g", M=2, N=1, K=1)
    m = Mapping.create(BUF, temporal=[{"M": 2}, {}])
    batch = MappingBatch.from_mappings(layer, BUF, [m])
    from mappers.exact import ExactMapper
    for mode in ("timeloop", "zigzag"):
        # the compiled kernel runs every accounting (tests/evaluators/test_loopnest_kernel.py)
        np.testing.assert_array_equal(evaluate_batch(layer, BUF, batch, kernel=True, accounting=mode).reads,
                                      evaluate_batch(layer, BUF, batch, kernel=False, accounting=mode).reads)
    # Timeloop's rules are neither order-separable nor bounded by the default's counts:
    # they have their own bound rules and a coupled order search
    # (tests/mappers/test_exact_coupled.py certifies the mapper); ZigZag's are both
    # (tests/mappers/test_exact_accountings.py)
    cost = LoopNestCost("timeloop")
    assert not cost.separable_orders and not cost.bounded_by_default and LOOPNEST.separable_orders
    assert cost.order_coupling.innermost and cost.order_coupling.inner_level
    assert cost.lower_bound(layer, BUF, batch, 1).energy_pj[0] <= evaluate_batch(
        layer, BUF, batch, accounting="timeloop").energy_pj[0]
    assert ExactMapper().map(layer, BUF, cost, "edp").optimal
    assert LoopNestCost("zigzag").separable_orders and LoopNestCost("zigzag").bounded_by_default
