"""Why a layer cannot be mapped (:mod:`mappers.fit`): exact small cases, soundness against
brute force over random constraint sets, the mappers' messages, the heuristic's fallback
to the smallest tiles, and a constraint rule's refusal as a NoLegalMapping."""

from __future__ import annotations

import dataclasses
import math

import pytest

from accelerators import SpatialArray
from evaluators.loopnest import LOOPNEST
from mappers.base import MappingRuleRefusal, NoLegalMapping
from mappers.constraints import constraints_for
from mappers.exact import ExactMapper
from mappers.exhaustive import ExhaustiveMapper
from mappers.fit import Shortfall, explain_unmappable, smallest_tile_shortfalls
from mappers.heuristic import HeuristicMapper
from mappers.workloads import conv2d
from tests.mappers.test_constraints import CASES, SETS, brute_force

LAYER = conv2d("c", K=8, C=4, P=6, Q=6, R=3, S=5)


def test_row_stationary_needs_a_filter_row_in_the_rf():
    """Row-stationary fixes S = 5 at the RF: the RF's W tile is at least 5 words and its
    I tile 5 (a 1 x 5 input row, stride 1); an RF holding 3 weights is 2 words short."""
    arch = SpatialArray(rf_w_words=3, rf_i_words=5).to_arch()
    assert smallest_tile_shortfalls(LAYER, arch, "row-stationary") == [Shortfall("RF", "W", 5, 3)]
    assert str(Shortfall("RF", "W", 5, 3)) == (
        "level 'RF' is 2 words too small for W: its smallest W tile is 5 words, it holds 3")
    assert smallest_tile_shortfalls(LAYER, SpatialArray(rf_w_words=3, rf_i_words=4).to_arch(),
                                    "row-stationary") == [Shortfall("RF", "W", 5, 3), Shortfall("RF", "I", 5, 4)]
    assert smallest_tile_shortfalls(LAYER, SpatialArray(rf_w_words=5, rf_i_words=5).to_arch(),
                                    "row-stationary") == []
    assert smallest_tile_shortfalls(LAYER, arch) == []        # unconstrained: one word each fits
    with pytest.raises(NoLegalMapping, match=r"row-stationary: level 'RF' is 2 words too small for W"):
        ExactMapper(constraints="row-stationary").map(LAYER, arch, LOOPNEST)


def test_a_shared_capacity_counts_the_kept_operands_together():
    """The GLB is one shared buffer: under row-stationary it keeps I and O (its Q loop
    is whole: 6 output columns; the 3 x 1 set of rows below) and W bypasses it."""
    arch = SpatialArray(glb_kib=0.0009765625 * 8).to_arch()    # 8 B: 4 words of 16 bits
    short = smallest_tile_shortfalls(LAYER, arch, "row-stationary")
    rc = constraints_for("row-stationary", LAYER, arch).resolve(LAYER, arch)
    assert not rc.keep[1][0] and rc.keep[1][1] and rc.keep[1][2]      # GLB keeps I, O
    # GLB tile: S=5 (RF) x R=3 (Y) x Q=6 (GLB temporal); I: 3 rows x (6 + 5 - 1) cols = 30,
    # O: 1 x 6 = 6 -> 36 words against 4
    assert short == [Shortfall("GLB", "I+O", 36, 4)]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_a_reported_shortfall_means_no_mapping_at_all(case):
    """Soundness: where the smallest tiles do not fit, brute force over every mapping
    that meets the constraints (bypass choices included) finds none legal."""
    layer, arch = CASES[case]
    try:
        short = smallest_tile_shortfalls(layer, arch, SETS[case], bypass=True)
    except ValueError:
        return
    if short:
        assert all(not math.isfinite(v) for v in brute_force(case, True).values()), short


def test_the_random_cases_report_some_shortfalls():
    """Not vacuous: some random constraint sets leave no room."""
    n = 0
    for (layer, arch), c in zip(CASES, SETS):
        try:
            n += bool(smallest_tile_shortfalls(layer, arch, c, bypass=True))
        except ValueError:
            pass
    assert n >= 1


def _no_rf_weights():
    arch = SpatialArray().to_arch()
    rf = dataclasses.replace(arch.levels[0], capacity_words={"W": 0, "I": 12, "O": 24})
    return dataclasses.replace(arch, levels=(rf, *arch.levels[1:]))


def test_mappers_say_which_level_and_operand_is_too_small():
    arch = _no_rf_weights()
    layer = conv2d("c", K=8, C=4, P=6, Q=6, R=3, S=3)
    want = r"level 'RF' is 1 words too small for W: its smallest W tile is 1 words, it holds 0"
    with pytest.raises(NoLegalMapping, match=r"heuristic found no legal mapping of 'c' .*: " + want):
        HeuristicMapper().map(layer, arch, LOOPNEST)
    with pytest.raises(NoLegalMapping, match=want):
        ExhaustiveMapper().map(conv2d("s", K=2, C=1, P=2, Q=1, R=1, S=1), arch, LOOPNEST)
    assert explain_unmappable(layer, arch).startswith("level 'RF' is 1 words too small")


def test_the_heuristic_falls_back_to_the_smallest_tiles():
    """A 5-word global buffer cannot hold the tiles of the maximum-utilization start
    (every PE's share), and no single move fixes that; from the smallest tiles the
    descent finds a legal mapping."""
    arch = SpatialArray(glb_kib=0.01).to_arch()
    assert arch.levels[1].capacity_words == 5
    layer = conv2d("c", K=8, C=4, P=6, Q=6, R=3, S=3)
    r = HeuristicMapper().map(layer, arch, LOOPNEST)
    assert math.isfinite(r.edp) and r.mapping.violations(layer, arch) == []
    assert bool(LOOPNEST(layer, arch, r.batch).valid[0])


def test_a_rule_refusal_is_a_no_legal_mapping():
    """Row-stationary refuses a filter taller than the array: no mapping under the rule,
    so the mapper's caller sees a NoLegalMapping (an infeasible design), not a bug."""
    arch = SpatialArray().to_arch()                   # 12 PE rows
    tall = conv2d("tall", K=2, C=2, P=2, Q=2, R=13, S=1)
    with pytest.raises(MappingRuleRefusal, match=r"rule 'row-stationary' refuses layer 'tall'.*R=13"):
        ExactMapper(constraints="row-stationary").map(tall, arch, LOOPNEST)
    assert "exceeds the 12 PE rows" in explain_unmappable(tall, arch, "row-stationary")
