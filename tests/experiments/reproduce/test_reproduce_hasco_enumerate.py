"""The enumeration of HASCO's GEMM and GEMV spaces: the exact random-search distribution,
the regrets against the optimum, resuming from records, and the committed results."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from experiments.records import RecordStore
from experiments.reproduce import hasco_enumerate as en

INF = math.inf


def test_random_best_distribution_exact_small_cases():
    # three designs, one infeasible: one draw finds each with probability 1/3
    d = en.random_best_distribution([2.0, INF, 1.0], 1)
    assert d["values"] == [1.0, 2.0] and d["p"] == pytest.approx([1 / 3, 1 / 3]) and d["p_none"] == pytest.approx(1 / 3)
    assert d["median"] == 2.0 and d["p_optimum"] == pytest.approx(1 / 3)
    # two draws without replacement: the best is missed only by the pair {2, inf}
    d = en.random_best_distribution([2.0, INF, 1.0], 2)
    assert d["p"] == pytest.approx([2 / 3, 1 / 3]) and d["p_none"] == 0.0 and d["median"] == 1.0
    assert en.random_best_distribution([2.0, INF, 1.0], 3)["p"] == pytest.approx([1.0, 0.0])
    # ties at the optimum count once: two of four designs at 1.0, P(missing both in 1 draw) = 1/2
    d = en.random_best_distribution([1.0, 1.0, 3.0, 5.0], 1)
    assert d["values"] == [1.0, 3.0, 5.0] and d["p"] == pytest.approx([0.5, 0.25, 0.25])
    # with replacement it would be 1 - (3/4)^2 = 0.4375; without, 1 - C(3,2)/C(4,2) = 0.5
    assert en.random_best_distribution([1.0, 2.0, 3.0, 4.0], 2)["p_optimum"] == pytest.approx(0.5)
    # against a simulation of sampling without replacement
    rng = np.random.default_rng(0)
    lat = np.array([3.0, 1.5, INF, 1.5, 7.0, 2.0, INF, 9.0])
    sims = [lat[rng.choice(len(lat), 3, replace=False)].min() for _ in range(20000)]
    d = en.random_best_distribution(lat.tolist(), 3)
    for v, p in zip(d["values"], d["p"]):
        assert np.mean(np.array(sims) == v) == pytest.approx(p, abs=0.012)
    assert d["p_none"] == pytest.approx(0.0)
    assert en.random_best_distribution([INF, INF, 1.0], 1)["median"] == INF        # none drawn 2/3 of the time
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 3\]"):
        en.random_best_distribution([1.0, 2.0, 3.0], 4)
    with pytest.raises(ValueError, match="NaN"):
        en.random_best_distribution([1.0, float("nan")], 1)


def ev(pe: int, lat: float | None) -> dict:
    if lat is None:
        return {"point": {"pe": pe}, "status": "INFEASIBLE", "metrics": {}, "reason": "bank"}
    return {"point": {"pe": pe}, "status": "COMPLETE", "metrics": {"latency_ms": lat}, "reason": None}


def pick(pe: int, lat: float) -> dict:
    return {"point": {"pe": pe}, "metrics": {"latency_ms": lat}}


def test_regrets_against_the_optimum():
    evals = [ev(8, 4.0), ev(16, 2.0), ev(32, 1.0), ev(64, None)]
    pair = {"workload": "gemm", "intrinsic": "GEMM", "reference": pick(16, 2.0),
            "seeds": {"0": {"codesign": pick(32, 1.0), "separate": pick(8, 4.0)},
                      "1": {"codesign": pick(16, 2.0), "separate": pick(32, 1.0)}},
            "front_seed0": {"mobo": [pick(8, 4.0), pick(32, 1.0)], "random": [pick(16, 2.0)]}}
    r = en.summarize_pair(evals, pair, budgets=(1, 2, 5))
    assert r["optimum_ms"] == 1.0 and r["optimum_points"] == [{"pe": 32}] and r["feasible"] == 3
    assert [m["regret"] for m in r["mobo_25"]["seeds"]] == [1.0, 2.0] and r["mobo_25"]["found_optimum"] == 1
    assert [m["rank"] for m in r["separate_proxy"]["seeds"]] == [3, 1] and r["separate_proxy"]["is_optimum"] == 1
    assert r["reference"] == {"regret": 2.0, "rank": 2}
    assert r["random"]["1"]["p_optimum"] == pytest.approx(0.25) and "5" not in r["random"]   # 4 designs
    # conditional on a feasible draw, one draw's expected best is (1 + 2 + 4) / 3
    assert r["random"]["1"]["expected_regret_if_found"] == pytest.approx(7 / 3)
    assert r["seed0_committed"]["mobo"]["best_so_far_regret"] == [4.0, 1.0]
    # a recorded latency that is not the enumeration's, or a design outside the space, is refused
    bad = json.loads(json.dumps(pair))
    bad["seeds"]["1"]["codesign"]["metrics"]["latency_ms"] = 2.5
    with pytest.raises(ValueError, match=r"gemm/GEMM seed 1 co-design: latency 2\.5 recorded, 2\.0 enumerated"):
        en.summarize_pair(evals, bad)
    bad["seeds"]["1"]["codesign"] = pick(4, 2.0)
    with pytest.raises(ValueError, match=r"\{'pe': 4\} is not a legal design"):
        en.summarize_pair(evals, bad)


def test_enumeration_resumes_from_its_chunk_records(tmp_path, monkeypatch):
    calls = []

    def fake(kind, workload, points, sw_budget):
        calls.append(len(points))
        return [{"point": dict(p), "status": "COMPLETE", "metrics": {"latency_ms": float(i)}, "reason": None,
                 "seconds": 0.0} for i, p in enumerate(points)]

    monkeypatch.setattr(en, "evaluate_designs", fake)
    store = RecordStore(tmp_path)
    a = en.enumerate_pair("GEMV", "gemv", 60, store, log=False)
    assert len(a) == 142 == len(en.designs("GEMV")) and calls == [71, 71]
    assert len(store.keys(en.KIND)) == 2
    assert en.enumerate_pair("GEMV", "gemv", 60, store, log=False) == a and calls == [71, 71]   # nothing again
    # a lost chunk is the only one evaluated again
    Path(store.path(store.keys(en.KIND)[0])).unlink()
    assert en.enumerate_pair("GEMV", "gemv", 60, store, log=False) == a and calls == [71, 71, 71]
    # a record whose designs are not the space's chunk is an error, not silently taken
    s = en.chunk_settings("GEMV", "gemm", 60, 0, 142)
    store.put(en.KIND, s, [{"point": {"pe": 1}}])
    with pytest.raises(ValueError, match="not the space's chunk 0"):
        en.enumerate_pair("GEMV", "gemm", 60, store, log=False)


def test_the_spaces_have_the_counted_designs():
    assert (len(en.designs("GEMM")), len(en.designs("GEMV"))) == (284, 142)


COMMITTED = Path(__file__).resolve().parents[3] / "docs/reproduction/results/hasco-enumerate"


@pytest.mark.skipif(not (COMMITTED / "results.json").is_file(), reason="enumeration not committed")
def test_the_committed_enumeration_table_is_rebuilt_from_its_results(tmp_path, monkeypatch):
    def no_evaluation(*a, **k):
        raise AssertionError("a committed chunk is evaluated again")

    monkeypatch.setattr(en, "evaluate_designs", no_evaluation)
    results = json.loads((COMMITTED / "results.json").read_text())
    en.write_table(results, tmp_path / "table.md")
    assert (tmp_path / "table.md").read_bytes() == (COMMITTED / "table.md").read_bytes()
    # every pair's optimum is its records' lowest latency
    store = RecordStore(COMMITTED / "records")
    for r in results["pairs"]:
        evals = en.enumerate_pair(r["intrinsic"], r["workload"], 60, store, log=False)
        assert min(e["metrics"]["latency_ms"] for e in evals if e["status"] == "COMPLETE") == r["optimum_ms"]
