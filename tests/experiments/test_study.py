"""Study: the ask/evaluate/tell loop, failure handling, resume, reproducibility, export."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from design_space import Categorical, Constraint, DesignSpace, Integer, Real
from experiments import Study
from experiments.storage import Storage, make_owner_token
from experiments.study import StudyConfigMismatch
from optimizer import TrialStatus
from tests.experiments import study_evaluators as ev


def bowl_space() -> DesignSpace:
    return DesignSpace(Real("x", -3.0, 3.0), Integer("y", 0, 4),
                       constraints=[Constraint("band", "x > -2.5")])


def make(tmp_path, name="s", evaluator=ev.bowl, **kw):
    kw.setdefault("objectives", {"f1": "min", "f2": "min"})
    return Study.create(name, kw.pop("space", bowl_space()), kw.pop("objectives"), evaluator,
                        storage=tmp_path / "s.db", **kw)


def test_serial_sweep_completes_exact_count_and_is_reproducible(tmp_path):
    a = make(tmp_path, "a", seed=5)
    a.optimize(25, progress=False)
    b = make(tmp_path, "b", seed=5)
    b.optimize(25, progress=False)
    ta, tb = a.trials, b.trials
    assert [t.number for t in ta] == list(range(25))
    assert all(t.status is TrialStatus.COMPLETE for t in ta)
    assert [t.params for t in ta] == [t.params for t in tb]
    assert [t.metrics for t in ta] == [t.metrics for t in tb]
    c = make(tmp_path, "c", seed=6)
    c.optimize(5, progress=False)
    assert [t.params for t in c.trials] != [t.params for t in ta[:5]]
    assert all(t.params["x"] > -2.5 for t in ta)


def test_every_failure_mode_is_recorded_and_the_sweep_goes_on(tmp_path):
    modes = ["ok", "raise", "nan", "inf", "missing", "infeasible", "hang", "badtype", "strval",
             "boolval", "arrayval", "wrongname"]
    space = DesignSpace(Integer("x", 0, 1), Categorical("mode", modes))
    s = Study.create("t", space, {"edp": "min"}, ev.troublemaker, optimizer="grid",
                     storage=tmp_path / "t.db")
    s.optimize(len(modes) * 2, workers=2, timeout_s=2.0, progress=False)
    by_mode: dict[str, list] = {}
    for t in s.trials:
        by_mode.setdefault(t.params["mode"], []).append(t)
    assert sum(len(v) for v in by_mode.values()) == len(modes) * 2
    expect = {
        "ok": (TrialStatus.COMPLETE, None),
        "raise": (TrialStatus.FAILED, "RuntimeError: simulator crashed"),
        "nan": (TrialStatus.FAILED, "objective 'edp' is NaN"),
        "inf": (TrialStatus.FAILED, "objective 'edp' is inf"),
        "missing": (TrialStatus.FAILED, "objective 'edp' is missing from the evaluator's result (metrics: ['energy_pj'])"),
        "infeasible": (TrialStatus.INFEASIBLE, "mapping does not fit"),
        "hang": (TrialStatus.FAILED, "timed out after 2 s"),
        "badtype": (TrialStatus.FAILED, "evaluator returned list"),
        "strval": (TrialStatus.FAILED, "metric 'edp' is not a number: 'fast'"),
        "boolval": (TrialStatus.FAILED, "metric 'fits' is a bool (True)"),
        "arrayval": (TrialStatus.FAILED, "metric 'edp' is not a number"),
        "wrongname": (TrialStatus.FAILED, "objective 'edp' is missing from the evaluator's result "
                                          "(metrics: ['EDP'])"),
    }
    for mode, (status, reason) in expect.items():
        for t in by_mode[mode]:
            assert t.status is status, (mode, t)
            if reason:
                assert reason in t.reason, (mode, t.reason)
    raised = by_mode["raise"][0]
    assert "simulator crashed" in raised.traceback
    assert by_mode["infeasible"][0].constraints == {"overflow_kib": 3.0}


def test_resume_continues_like_an_uninterrupted_run(tmp_path):
    whole = make(tmp_path, "whole", seed=1)
    whole.optimize(30, progress=False)
    part = make(tmp_path, "part", seed=1)
    part.optimize(12, progress=False)
    again = make(tmp_path, "part", seed=1)  # same call again: resumes
    again.optimize(30, progress=False)
    assert [t.params for t in again.trials] == [t.params for t in whole.trials]
    again.optimize(30, progress=False)  # already done: nothing more
    assert len(again.trials) == 30


def test_running_trials_of_a_dead_driver_are_requeued_with_same_params(tmp_path):
    s = make(tmp_path, seed=2)
    s.optimize(5, progress=False)
    st = s.storage
    dead = make_owner_token().split("|")
    dead[1], dead[2] = "999999", "1"  # a pid that does not exist
    ghost = st.create_trials(s._record.id, [{"x": 0.5, "y": 1}], [123], "|".join(dead))[0]
    assert ghost.status is TrialStatus.RUNNING
    s.optimize(8, progress=False)
    t = {r.number: r for r in s.trials}
    assert t[ghost.number].status is TrialStatus.COMPLETE
    assert t[ghost.number].params == {"x": 0.5, "y": 1} and t[ghost.number].seed == 123
    assert t[ghost.number].attempts == 2
    assert len(t) == 8 and sorted(t) == list(range(8))


def test_resume_with_a_different_configuration_is_refused(tmp_path):
    make(tmp_path, seed=0).optimize(2, progress=False)
    with pytest.raises(StudyConfigMismatch, match="space differ"):
        make(tmp_path, space=DesignSpace(Real("x", -3.0, 2.0), Integer("y", 0, 4)), seed=0)
    with pytest.raises(StudyConfigMismatch, match="seed differ"):
        make(tmp_path, seed=1)
    with pytest.raises(StudyConfigMismatch, match="objectives differ"):
        make(tmp_path, seed=0, objectives={"f1": "max", "f2": "min"})


def test_a_joint_space_with_a_closure_factory_resumes_when_rebuilt(tmp_path):
    """Regression: the identity of an unserializable joint space used to contain the
    closure's memory address, so rebuilding the same space (as a new process does) refused
    to resume with 'space differ'."""
    from design_space import JointSpace

    def joint(hi: int) -> JointSpace:
        def software(hw: dict) -> DesignSpace:  # a fresh function object on every call
            return DesignSpace(Integer("m", 0, hw["y"] + hi))
        return JointSpace(DesignSpace(Integer("y", 0, 4)), software)

    first, second = joint(1), joint(1)
    assert first.software is not second.software
    common = dict(objectives={"f": "min"}, evaluator=lambda p: {"f": float(p["y"] + p["m"])})
    Study.create("j", first, storage=tmp_path / "j.db", seed=0, **common).optimize(3, progress=False)
    again = Study.create("j", second, storage=tmp_path / "j.db", seed=0, **common)
    again.optimize(5, progress=False)
    assert len(again.trials) == 5


def test_bad_inputs_are_named_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown optimizer 'tpe-x'"):
        make(tmp_path, optimizer="tpe-x")
    with pytest.raises(ValueError, match=r"evaluator: cannot import module 'no\.such'"):
        make(tmp_path, evaluator="no.such:thing")
    with pytest.raises(ValueError, match="direction must be 'min' or 'max'"):
        make(tmp_path, objectives={"f1": "minimise"})
    s = make(tmp_path)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        s.optimize(3, workers=0)


@pytest.mark.parametrize("kw, message", [
    # an optimizer mapping (the config's form) with a bad key was "unhashable type: 'dict'"
    ({"optimizer": {"name": "random", "bogus": 1}}, r"optimizer \{'name': 'random', 'bogus': 1\}: unknown key 'bogus'"),
    ({"optimizer": {"nme": "random"}}, r"unknown key 'nme' \(did you mean 'name'\?\)"),
    ({"optimizer": {"options": {}}}, r"optimizer \{'options': \{\}\}: needs a 'name'"),
    ({"optimizer": {"name": "nope"}}, r"unknown optimizer 'nope'"),
    ({"optimizer": {"name": "random", "options": [1]}}, r"optimizer options must be a mapping .* got list \[1\]"),
    ({"optimizer": {"name": "random", "options": {"a": 1}}, "optimizer_options": {"b": 2}}, "options given twice"),
    ({"optimizer": 5}, r"optimizer must be a name .* got int 5"),
    ({"optimizer": "random", "optimizer_options": [1]}, r"optimizer_options must be a mapping .* got list \[1\]"),
    ({"optimizer": "random", "optimizer_options": {"bogus": 1}}, r"optimizer 'random': bad options \{'bogus': 1\}"),
    ({"evaluator_options": [1]}, r"evaluator_options must be a mapping .* got list \[1\]"),
])
def test_a_bad_optimizer_or_options_is_a_named_error(tmp_path, kw, message):
    with pytest.raises(ValueError, match=message):
        make(tmp_path, **kw)
    assert not Storage(tmp_path / "s.db").list_studies()      # refused before anything is stored


def test_an_optimizer_mapping_is_the_name_with_its_options(tmp_path):
    s = make(tmp_path, optimizer={"name": "constrained-bo", "options": {"n_init": 2}})
    assert s.optimizer_name == "constrained-bo"
    assert s.record.config["optimizer"] == {"name": "constrained-bo", "options": {"n_init": 2}}
    again = make(tmp_path, optimizer="constrained-bo", optimizer_options={"n_init": 2})   # the same study
    assert again.record.id == s.record.id


def test_trial_seeds_are_derived_and_passed(tmp_path):
    space = DesignSpace(Integer("x", 0, 0))
    s = Study.create("n", space, {"edp": "min"}, ev.noisy, storage=tmp_path / "n.db", seed=9)
    s.optimize(4, progress=False)
    seeds = [t.seed for t in s.trials]
    assert len(set(seeds)) == 4
    for t in s.trials:
        assert t.metrics["edp"] == pytest.approx(np.random.default_rng(t.seed).normal())


def test_grid_study_stops_when_the_space_is_exhausted(tmp_path):
    space = DesignSpace(Integer("x", 0, 2), Integer("y", 0, 1))
    s = Study.create("g", space, {"f1": "min", "f2": "min"}, ev.bowl, optimizer="grid",
                     storage=tmp_path / "g.db")
    s.optimize(100, progress=False)
    assert len(s.trials) == 6
    assert len({json.dumps(t.params, sort_keys=True) for t in s.trials}) == 6


def test_process_pool_sweep_exact_count(tmp_path):
    s = make(tmp_path, "pp", evaluator=ev.slow_bowl, seed=3)
    s.optimize(16, workers=2, progress=False)
    nums = [t.number for t in s.trials]
    assert nums == list(range(16))
    assert all(t.status is TrialStatus.COMPLETE for t in s.trials)
    # the set of points equals the serial run's (random search ignores results)
    serial = make(tmp_path, "serial", evaluator=ev.bowl, seed=3)
    serial.optimize(16, progress=False)
    assert [t.params for t in s.trials] == [t.params for t in serial.trials]


def test_pareto_front_matches_brute_force(tmp_path):
    s = make(tmp_path, seed=4)
    s.optimize(60, progress=False)
    df = s.trials_dataframe()
    front = s.pareto_front()
    pts = df[["metrics_f1", "metrics_f2"]].to_numpy()
    nd = [i for i in range(len(pts))
          if not any((pts[j] <= pts[i]).all() and (pts[j] < pts[i]).any() for j in range(len(pts)))]
    assert sorted(front["number"]) == sorted(df["number"].iloc[nd])


def test_manifest_and_dataframe_columns(tmp_path):
    s = make(tmp_path)
    s.optimize(3, progress=False)
    m = s.manifest
    assert m["seed"] == 0 and len(m["config_hash"]) == 64
    assert m["versions"]["numpy"] and m["versions"]["botorch"]
    assert m["config"]["optimizer"] == {"name": "random", "options": {}}
    df = s.trials_dataframe()
    for col in ("number", "status", "feasible", "params_x", "params_y", "metrics_f1",
                "metrics_f2", "wall_time_s", "seed", "created_at", "finished_at"):
        assert col in df.columns
    assert isinstance(df["finished_at"].iloc[0], pd.Timestamp)


def test_load_rebuilds_space_and_exports(tmp_path):
    s = make(tmp_path)
    s.optimize(10, progress=False)
    loaded = Study.load(None, tmp_path / "s.db")
    assert loaded.space == s.space
    for fmt in ("csv", "json", "parquet"):
        out = loaded.export(tmp_path / f"front.{fmt}", pareto=True)
        assert out.exists() and out.stat().st_size > 0
    back = pd.read_parquet(tmp_path / "front.parquet")
    assert list(back["number"]) == list(loaded.pareto_front()["number"])
    recs = json.loads((tmp_path / "front.json").read_text())
    assert [r["number"] for r in recs] == list(back["number"])
    with pytest.raises(ValueError, match="unknown export format 'xlsx'"):
        loaded.export(tmp_path / "f.xlsx")


def test_only_complete_feasible_trials_on_front(tmp_path):
    space = DesignSpace(Categorical("mode", ["ok", "infeasible", "raise"]), Integer("x", 0, 5))
    s = Study.create("f", space, {"edp": "min"}, ev.troublemaker, optimizer="grid",
                     storage=Storage(tmp_path / "f.db"))
    s.optimize(18, progress=False)
    front = s.pareto_front()
    assert list(front["params_mode"]) == ["ok"] and list(front["metrics_edp"]) == [0.0]
    counts = s.status_counts()
    assert counts[TrialStatus.COMPLETE] == 6 and counts[TrialStatus.INFEASIBLE] == 6
    assert counts[TrialStatus.FAILED] == 6
    assert list(itertools.chain(s.best_trials(k=2)["metrics_edp"])) == [0.0, 1.0]


def _shared(url: str, optimizer: str, meet_dir: str) -> Study:
    # a small candidate pool keeps three BO drivers fitting at once affordable on 2 cores
    options = {"pool_size": 200} if optimizer == "constrained-bo" else {}
    return Study.create("shared", bowl_space(), {"f1": "min", "f2": "min"}, ev.meeting_bowl,
                        optimizer=optimizer, optimizer_options=options, storage=url, seed=4,
                        evaluator_options={"meet_dir": meet_dir, "processes": 3})


def _driver(url: str, n_trials: int, optimizer: str, meet_dir: str, start, errors) -> None:
    try:
        s = _shared(url, optimizer, meet_dir)
        start.wait(30)
        s.optimize(n_trials, workers=1, executor="inline", progress=False)
    except BaseException as e:
        errors.put(repr(e))
        raise


@pytest.mark.parametrize("optimizer", ["random", "constrained-bo"])
def test_concurrent_drivers_share_one_study_exactly(storage_url, optimizer, tmp_path):
    """Three drivers on one study (as on three hosts sharing PostgreSQL) finish exactly
    n_trials between them: no overshoot, no duplicate numbers, each trial run once.

    Each driver's first evaluation waits until all three have started one (however late
    a driver starts on a loaded machine), so all three must have a share of the trials."""
    import multiprocessing as mp

    n = 24 if optimizer == "random" else 14
    meet = tmp_path / "meet"
    meet.mkdir()
    _shared(storage_url, optimizer, str(meet))
    ctx = mp.get_context("forkserver")
    start, errors = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_driver, args=(storage_url, n, optimizer, str(meet), start, errors))
             for _ in range(3)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(240)
    assert errors.empty() and [p.exitcode for p in procs] == [0, 0, 0]
    with Storage(storage_url) as st:
        rec = st.find_study("shared")
        trials = st.trials(rec.id)
    assert [t.number for t in trials] == list(range(n))
    assert all(t.status is TrialStatus.COMPLETE and t.attempts == 1 for t in trials)
    assert len({t.owner for t in trials}) == 3        # the work really was shared
    assert len(list(meet.iterdir())) == 3
