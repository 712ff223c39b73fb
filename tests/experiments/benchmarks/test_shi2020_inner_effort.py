"""The inner-effort benchmark's summary: ratios to the reference, ranking, best point."""

import pytest

from experiments.benchmarks.shi2020_inner_effort import REFERENCE, SETTINGS, summarize
from experiments.reproduce.shi2020 import MAX_NODES


def _row(ref: float, cheap: float, proven: int) -> dict:
    return {REFERENCE: {"edp_uj_ms": ref, "proven": 2, "layers": 2, "cpu_s": 10.0},
            "cheap": {"edp_uj_ms": cheap, "proven": proven, "layers": 2, "cpu_s": 1.0}}


def test_the_reference_is_3m_nodes_and_the_reproductions_limit_is_the_anytime_setting():
    from mappers.anytime import AnytimeMapper
    from mappers.registry import make_mapper

    assert SETTINGS[REFERENCE] == {"name": "exact", "max_nodes": 3_000_000}
    assert make_mapper(SETTINGS["anytime"]).max_nodes == MAX_NODES
    assert make_mapper(SETTINGS["anytime"]) == AnytimeMapper()


def test_summary_of_a_hand_made_case():
    # the cheap setting finds 10 % worse on point 0, equal on 1, and swaps the best point
    rows = [_row(1.0, 1.1, 1), _row(2.0, 2.0, 2), _row(1.05, 1.05, 0)]
    s = summarize([{}, {}, {}], rows, ["cheap", REFERENCE])["summary"]
    assert s[REFERENCE]["median_ratio"] == 1.0 and s[REFERENCE]["same_best"]
    c = s["cheap"]
    assert c["max_ratio"] == pytest.approx(1.1) and c["median_ratio"] == pytest.approx(1.0)
    assert c["proven_share"] == pytest.approx(3 / 6)
    assert not c["same_best"] and c["best_point_ref_ratio"] == pytest.approx(1.05)
    assert c["spearman"] == pytest.approx(0.5)
    assert c["cpu_s_per_point"] == 1.0


def test_a_failed_setting_counts_as_infinitely_worse():
    rows = [_row(1.0, 1.0, 2), _row(2.0, 2.0, 2)]
    rows[1]["cheap"] = {"edp_uj_ms": None, "cpu_s": 1.0}
    s = summarize([{}, {}], rows, ["cheap"])["summary"]["cheap"]
    assert s["max_ratio"] == float("inf") and s["same_best"]


def test_design_layers_certifies_its_gaps_against_the_proof():
    from experiments.benchmarks.shi2020_inner_effort import design_layers
    from experiments.reproduce.shi2020 import EYERISS_POINT

    # conv3 of DQN on Eyeriss v1: 1,000 nodes stop the search, 10 million prove it (fc2,
    # the case before, is proven within 1,000 nodes since issue 41's bounds)
    (row,) = design_layers("dqn", EYERISS_POINT, [1_000, 10_000_000], ["conv3"])
    cut, full = row["1000"], row["10000000"]
    assert full["optimal"] and full["gap"] == 0.0 and not cut["optimal"]
    assert full["edp"] <= cut["edp"] <= full["edp"] * (1 + cut["gap"]) * (1 + 1e-9)
    assert full["edp"] <= row["heuristic_edp"] * (1 + 1e-9)
    with pytest.raises(ValueError, match="conv9"):
        design_layers("dqn", EYERISS_POINT, [1_000], ["conv9"])
