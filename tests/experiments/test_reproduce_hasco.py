"""The HASCO reproduction: its pieces (fast) and a --quick run (slow)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.reproduce import REPRODUCTIONS
from experiments.reproduce import hasco as rep


def rec(lat, power, area, ok=True):
    if not ok:
        return {"point": {}, "status": "INFEASIBLE", "metrics": {}, "reason": "generator"}
    return {"point": {"lat": lat}, "status": "COMPLETE",
            "metrics": {"latency_ms": lat, "power_mw": power, "area_mm2": area}, "reason": None}


def test_selection_under_the_area_cap():
    rs = [rec(5, 1, 1), rec(1, 1, 9), rec(3, 1, 2), rec(0, 0, 0, ok=False)]
    assert rep.select(rs, area_cap=2.0)["point"] == {"lat": 3}
    assert rep.select(rs, area_cap=10)["point"] == {"lat": 1}
    assert rep.select(rs, area_cap=0.5) is None


def test_hypervolume_history_on_normalized_log_objectives():
    m = rep.objective_matrix([rec(1, 1, 1, ok=False), rec(10, 10, 10), rec(1, 1, 1)])
    assert np.isnan(m[0]).all()
    lo, hi = rep.normalizer([m])
    np.testing.assert_array_equal(lo, [0, 0, 0])
    np.testing.assert_array_equal(hi, [1, 1, 1])
    h = rep.hv_history(m, lo, hi)
    # nothing, then the worst corner (normalized 1: a 0.1^3 box), then the best (1.1^3)
    np.testing.assert_allclose(h, [0.0, 0.1 ** 3, 1.1 ** 3])


def test_table_has_paper_ours_and_command(tmp_path):
    results = {"settings": {"budget": 8}, "pairs": [{
        "workload": "gemm", "intrinsic": "GEMM",
        "seeds": {0: {"ratio": 1.3}, 1: {"ratio": 1.1}, 2: {"ratio": None}},
        "hv_final_median": {"mobo": 0.5, "random": 0.4},
        "sw_convergence": {"budget": 10, "curves": {m: [[3.0, 2.0], [4.0, 1.0]] for m in
                                                     ("heuristic", "qlearning", "random")}}}]}
    rep.write_table(results, tmp_path / "t.md", "coexplore reproduce hasco")
    text = (tmp_path / "t.md").read_text()
    assert "| gemm | GEMM | latency, separate / co-design | 1.25x-1.44x | 1.20x (seeds: 1.30, 1.10) |" in text
    assert "0.500 / 0.400" in text and "1.5 / 1.5 / 1.5" in text
    assert "`coexplore reproduce hasco`" in text and "hasco" in REPRODUCTIONS


def test_run_search_records_and_caches(tmp_path):
    a = rep.run_search("GEMV", "gemv", "random", 0, 4, 2, 5, "search", tmp_path)
    assert len(a) == 4 and {r["status"] for r in a} <= {"COMPLETE", "INFEASIBLE"}
    for r in a:
        if r["status"] == "COMPLETE":
            assert set(rep.OBJECTIVES) <= set(r["metrics"])
        else:
            assert "generator" in r["reason"]
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1
    assert rep.run_search("GEMV", "gemv", "random", 0, 4, 2, 5, "search", tmp_path) == a
    with pytest.raises(ValueError, match="unknown hardware optimizer 'tpe'"):
        rep.run_search("GEMV", "gemv", "tpe", 0, 1, 1, 5)


@pytest.mark.slow
def test_quick_reproduction_runs_end_to_end(tmp_path):
    res = rep.main(["--quick", "--pairs", "gemm:GEMM", "--seeds", "2", "--budget", "6", "--n-init", "3",
                    "--sw-budget", "10", "--sw-conv-budget", "12", "--out", str(tmp_path)])
    (pair,) = res["pairs"]
    assert pair["workload"] == "gemm" and len(pair["seeds"]) == 2
    assert set(pair["hv_final_median"]) == {"mobo", "random"}
    assert set(pair["sw_convergence"]["curves"]) == {"heuristic", "qlearning", "random"}
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["settings"]["budget"] == 6
    assert (tmp_path / "pareto_gemm_GEMM.png").stat().st_size > 1000
    assert (tmp_path / "sw_convergence_gemm_GEMM.png").stat().st_size > 1000
    assert "1.25x-1.44x" in (tmp_path / "table.md").read_text()
