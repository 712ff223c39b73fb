"""experiments.benchmarks.demo_search: the record of the demo's two studies holds every
trial, and its summary (best EDP, elapsed and summed times) is computed from them."""

from __future__ import annotations

import json

import pytest

from design_space import DesignSpace, Real
from experiments import Study
from experiments.benchmarks import demo_search


def edp(p):
    return {"edp_uj_ms": (p["x"] - 1.0) ** 2 + 3.0}


def test_the_record_summarizes_every_trial_of_both_studies(tmp_path, monkeypatch):
    space = DesignSpace(Real("x", -2.0, 2.0))
    db = tmp_path / "demo.db"
    for name, n in (("bo-study", 5), ("random-study", 8)):
        Study.create(name, space, {"edp_uj_ms": "min"}, edp, optimizer="random", storage=db,
                     seed=0).optimize(n, progress=False)
    monkeypatch.setattr(demo_search, "STUDIES", (("constrained-bo", "bo-study"), ("random", "random-study")))
    out = tmp_path / "rec.json"
    rec = demo_search.main([f"sqlite:///{db}", "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(rec))
    for key, n in (("constrained-bo", 5), ("random", 8)):
        s = rec["studies"][key]
        assert s["trials"] == s["complete"] == len(s["rows"]) == n
        assert s["best_edp_uj_ms"] == min(r["edp_uj_ms"] for r in s["rows"]) >= 3.0
        assert s["elapsed_wall_s"] >= max(r["wall_time_s"] for r in s["rows"]) > 0
        assert s["wall_time_summed_s"] == pytest.approx(sum(r["wall_time_s"] for r in s["rows"]))


def test_a_study_without_a_finished_trial_is_refused(tmp_path):
    space = DesignSpace(Real("x", -2.0, 2.0))
    study = Study.create("empty", space, {"edp_uj_ms": "min"}, edp, optimizer="random", storage=tmp_path / "e.db")
    with pytest.raises(SystemExit, match="no COMPLETE trial with edp_uj_ms"):
        demo_search.study_summary(study)
