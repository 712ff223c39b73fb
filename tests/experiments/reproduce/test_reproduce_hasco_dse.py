"""NSGA-II against HASCO's MOBO and random search (issue 49, item 5): the hypervolume, the
recovered normalization, the lookup evaluator against the live one, and the committed
records, results and table."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from experiments.records import RecordStore
from experiments.reproduce import hasco
from experiments.reproduce import hasco_dse as dse
from experiments.reproduce import hasco_enumerate as en

ROOT = Path(__file__).resolve().parents[3]
COMMITTED = ROOT / "docs/reproduction/results/hasco-dse"


def test_hypervolume_of_a_known_set():
    # log10 bounds 0..1 on every axis: a point is its own normalized coordinates
    lo, hi = np.zeros(3), np.ones(3)
    z = np.array([[0.5, 0.5, 0.5], [np.nan] * 3, [0.0, 0.5, 1.0], [0.6, 0.6, 0.6], [0.2, 1.2, 0.2]])
    h = hasco.hv_history(10.0 ** z, lo, hi)
    # 0.6^3; then + 1.1 * 0.6 * 0.1 - the overlap 0.6 * 0.6 * 0.1; a NaN row, a dominated
    # point and one beyond the reference point (1.2 > 1.1) add nothing
    assert h == pytest.approx([0.216, 0.216, 0.246, 0.246, 0.246], abs=1e-12)


def synthetic_pair(rng: np.random.Generator) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
    """A committed-like pair: 3 seeds of 'mobo' and 'random' runs in log10 space, histories
    normalized by the bounds of all of them; only seed 0's feasible points kept."""
    runs = {o: [rng.uniform([0, 1, -1], [2, 2.5, 0], size=(12, 3)) for _ in range(3)] for o in ("mobo", "random")}
    allv = np.vstack([m for ms in runs.values() for m in ms])
    lo, hi = allv.min(axis=0), allv.max(axis=0)
    pair = {"workload": "w", "intrinsic": "K", "hv": {}, "front_seed0": {}}
    for o, ms in runs.items():
        mats = [10.0 ** m for m in ms]
        mats[0][3] = np.nan                                   # an infeasible evaluation of seed 0
        pair["hv"][o] = [hasco.hv_history(m, lo, hi).tolist() for m in mats]
        pair["front_seed0"][o] = [{"metrics": dict(zip(hasco.OBJECTIVES, r))} for r in mats[0]
                                  if np.isfinite(r).all()]
    return pair, lo, hi, allv


def test_recovered_normalization_gives_the_committed_hypervolumes():
    pair, lo, hi, allv = synthetic_pair(np.random.default_rng(3))
    norm = dse.recover_normalizer(pair)
    assert norm["residual"] <= 1e-12
    # the fitted bounds are not the true ones (seed 0 does not determine them) ...
    assert not np.allclose(norm["lo_log10"], lo, atol=1e-3)
    # ... but they have the true reference point and width product, so any other set --
    # one point better than every committed one on an objective included -- gets the
    # hypervolume the true bounds give it
    assert norm["ref_log10"] == pytest.approx(lo + 1.1 * (hi - lo), abs=1e-9)
    assert norm["width_product"] == pytest.approx(np.prod(hi - lo), rel=1e-9)
    other = np.random.default_rng(4).uniform([0, 1, -1], [2, 2.5, 0], size=(25, 3))
    other[7] = [lo[0] - 0.3, hi[1] - 0.1, lo[2] + 0.2]
    want = hasco.hv_history(10.0 ** other, lo, hi)
    got = dse.hv_histories(10.0 ** other, norm)
    assert got == pytest.approx(want, abs=1e-9) and want[-1] > want[6]
    # the values of every design of the space pin the true bounds
    exact = dse.enumerated_bounds(np.asarray(norm["ref_log10"]), norm["width_product"], allv,
                                  np.log10(np.vstack([[r["metrics"][k] for k in hasco.OBJECTIVES]
                                                      for o in ("mobo", "random")
                                                      for r in pair["front_seed0"][o]])).min(axis=0),
                                  np.log10(np.vstack([[r["metrics"][k] for k in hasco.OBJECTIVES]
                                                      for o in ("mobo", "random")
                                                      for r in pair["front_seed0"][o]])).max(axis=0))
    assert exact is not None
    assert exact["lo_log10"] == pytest.approx(lo, abs=1e-12) and exact["hi_log10"] == pytest.approx(hi, abs=1e-12)
    assert dse.beyond_bounds(10.0 ** other, exact) == 1
    # a committed history the seed-0 points cannot give is refused
    bad = json.loads(json.dumps(pair))
    bad["hv"]["mobo"][0] = [x * 1.01 for x in bad["hv"]["mobo"][0]]
    with pytest.raises(ValueError, match="w/K: no bounds reproduce the committed seed-0"):
        dse.recover_normalizer(bad)


def test_leader_counts_a_tie_as_a_tie():
    assert dse.leader({"mobo": 0.5, "random": 0.4, "nsga2": 0.45}) == "mobo"
    assert dse.leader({"mobo": 0.5, "random": 0.4, "nsga2": 0.5}) == "tie"


def test_lookup_evaluator_equals_the_live_one(monkeypatch):
    from evaluators.base import Infeasible
    from evaluators.intrinsic_codesign import HascoCoDesign

    monkeypatch.chdir(ROOT)
    look = en.EnumeratedHasco("GEMV", "gemv")
    live = HascoCoDesign("GEMV", "gemv", sw_budget=60)
    pts = en.designs("GEMV")
    infeasible = next(p for p in pts if look._rows[look.space.point_key(p)]["status"] != "COMPLETE")
    for p in (pts[0], pts[40], pts[-1]):
        a, b = look(p).metrics, live(p).metrics
        assert set(a) == set(b)
        for k in a:
            assert a[k] == b[k] or (math.isinf(a[k]) and math.isinf(b[k])), k
    with pytest.raises(Infeasible) as e_look:
        look(infeasible)
    with pytest.raises(Infeasible) as e_live:
        live(infeasible)
    assert e_look.value.reason == e_live.value.reason
    with pytest.raises(ValueError, match="is not a legal design"):
        look({**pts[0], "pe": 4096})
    with pytest.raises(ValueError, match=r"no hasco\.enumerate record of gemv/GEMV chunk 0"):
        en.EnumeratedHasco("GEMV", "gemv", records=os.devnull)
    with pytest.raises(ValueError, match="enumerated spaces"):
        en.EnumeratedHasco("CONV", "conv2d")


def test_nsga2_settings_are_recorded_and_a_rerun_reproduces_a_committed_search(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert hasco.NSGA2_OPTIONS == {"sampler_options": {"population_size": 5}}
    settings = hasco.search_settings("GEMV", "gemv", "nsga2", 0, 25, 5, 60, "search", "reference")
    assert settings["optimizer_options"] == hasco.NSGA2_OPTIONS
    committed = RecordStore(COMMITTED / "records").record(hasco.KINDS["search"], settings)
    assert committed is not None and "looked up" in committed.note
    again = dse.run_nsga2("gemv", "GEMV", 0, RecordStore(tmp_path))
    assert [(r["point"], r["status"], r["metrics"]) for r in again] == \
        [(r["point"], r["status"], r["metrics"]) for r in committed.value]
    assert len(again) == 25


def test_committed_table_is_rebuilt_from_the_committed_results(tmp_path):
    results = json.loads((COMMITTED / "results.json").read_text())
    dse.write_table(results, tmp_path / "table.md")
    assert (tmp_path / "table.md").read_bytes() == (COMMITTED / "table.md").read_bytes()


def test_committed_results_follow_from_the_records(monkeypatch):
    monkeypatch.chdir(ROOT)
    results = json.loads((COMMITTED / "results.json").read_text())
    committed = json.loads(dse.HASCO_RESULTS.read_text())
    pair = ("gemv", "GEMV")
    got = dse.summarize(committed, RecordStore(COMMITTED / "records"), [pair])["pairs"][0]
    want = next(p for p in results["pairs"] if (p["workload"], p["intrinsic"]) == pair)
    assert got["leader_25"] == want["leader_25"] and got["nsga2_beyond_bounds"] == want["nsga2_beyond_bounds"]
    assert got["normalizer"]["bounds_exact"] == want["normalizer"]["bounds_exact"]
    for m in dse.METHODS:
        assert np.allclose(got["hv"][m], want["hv"][m], rtol=0, atol=1e-12)
        for k in dse.AT:
            assert got["at"][m][str(k)]["median"] == pytest.approx(want["at"][m][str(k)]["median"], abs=1e-12)
    ov = results["overall"]
    assert sum(ov["leads_25"].values()) + ov["ties_25"] == ov["pairs"] == len(results["pairs"])
    assert ov["leads_25"] == {m: sum(p["leader_25"] == m for p in results["pairs"]) for m in dse.METHODS}
