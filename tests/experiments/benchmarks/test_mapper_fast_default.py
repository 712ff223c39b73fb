"""The fast-default benchmark's figures: ratios against the reference (or the better result
where the reference is worse), the fast default never behind the heuristic, and shares and
percentiles that are the rows'."""

from __future__ import annotations

import pytest

from experiments.benchmarks import mapper_fast_default as fd
from mappers.anytime import AnytimeMapper
from mappers.testing import tiny_case


def test_a_pair_is_scored_against_the_reference_or_the_better_result():
    layer, arch = tiny_case()
    r = fd.map_pair(layer, arch, None, AnytimeMapper())
    assert r["fast_proven"] and r["fast_over_ref"] == 1.0 and r["heuristic_over_ref"] >= 1.0
    worse = fd.map_pair(layer, arch, {"edp": 1e300, "proven": False}, AnytimeMapper())
    assert worse["fast_over_ref"] == 1.0 and not worse["ref_proven"]            # the better result here
    edp = AnytimeMapper().map(layer, arch, fd.LOOPNEST, fd.OBJECTIVE).objective(fd.OBJECTIVE)
    half = fd.map_pair(layer, arch, {"edp": edp / 2, "proven": True}, AnytimeMapper())   # a better reference
    assert half["ref_found"] and half["fast_over_ref"] == pytest.approx(2.0)
    assert half["heuristic_over_ref"] == pytest.approx(2 * r["heuristic_over_ref"])


def test_the_summary_is_the_rows():
    rows = [{"heuristic_cpu_s": c, "fast_cpu_s": 10 * c, "heuristic_over_ref": h, "fast_over_ref": f,
             "fast_proven": p} for c, h, f, p in [(0.1, 1.0, 1.0, True), (0.2, 1.03, 1.01, False),
                                                  (0.3, 1.5, 1.03, False), (0.4, 2.0, 1.0, True)]]
    s = fd.summarize(rows)
    assert s["layer_maps"] == 4 and s["fast_proven"] == 0.5
    assert s["heuristic"]["within_2pct"] == 0.25 and s["heuristic"]["within_5pct"] == 0.5
    assert s["fast"]["within_2pct"] == 0.75 and s["fast"]["within_5pct"] == 1.0
    assert s["heuristic"]["cpu_s_median"] == pytest.approx(0.25) and s["fast"]["cpu_s_total"] == pytest.approx(10.0)
    assert s["heuristic"]["ratio_max"] == 2.0 and s["fast"]["ratio_median"] == pytest.approx(1.005)
