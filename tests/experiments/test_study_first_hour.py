"""Issue 43 at the study level: the driver never waits on trials no worker runs, a study
is not started again by a child process re-running a guard-less script, and a start
that is all infeasible stops the run (``stop_if_start_fails``)."""

from __future__ import annotations

import multiprocessing

import pytest

from experiments.executors import WorkerStartError
from experiments.study import BadStartError, common_reasons
from optimizer import TrialStatus
from tests.experiments import evaluators_for_tests as exev
from tests.experiments import study_evaluators as ev
from tests.experiments.test_study import make


def test_workers_that_cannot_start_stop_the_study_and_fail_no_trial(tmp_path):
    s = make(tmp_path, evaluator=exev.DiesOnLoad())
    with pytest.raises(WorkerStartError, match="die while starting"):
        s.optimize(10, workers=2, executor="process", progress=False)
    counts = s.status_counts()
    assert counts[TrialStatus.FAILED] == 0 and counts[TrialStatus.RUNNING] == 0, counts
    assert counts[TrialStatus.WAITING] >= 1            # given back, to run on a resume


def test_a_child_re_running_the_script_does_not_start_the_study(tmp_path, monkeypatch):
    """While a multiprocessing child imports the parent's main module (``_inheriting``),
    creating or running a study is refused with the fix, before anything is stored."""
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    with pytest.raises(RuntimeError, match=r'put the code that runs the study under `if __name__ == "__main__":`'):
        make(tmp_path)
    assert not (tmp_path / "s.db").exists()
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", False)
    s = make(tmp_path)
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True)
    with pytest.raises(RuntimeError, match="re-running"):
        s.optimize(2, progress=False)
    assert s.n_finished() == 0


def test_an_infeasible_start_stops_after_the_initial_design(tmp_path):
    s = make(tmp_path, evaluator=ev.always_infeasible)
    with pytest.raises(BadStartError, match=r"all 5 trials of the initial design.*needs more"):
        s.optimize(50, progress=False, stop_if_start_fails=5)
    assert s.n_finished() == 5
    ok = make(tmp_path, name="ok")
    ok.optimize(8, progress=False, stop_if_start_fails=5)  # feasible trials: runs to the end
    assert ok.n_finished() == 8
    with pytest.raises(ValueError, match="stop_if_start_fails must be an integer >= 1"):
        ok.optimize(9, progress=False, stop_if_start_fails=0)


def test_common_reasons_count_one_cause_once():
    reasons = ["worker process died (exit code 1) while evaluating trial 3",
               "worker process died (exit code 1) while evaluating trial 12", "too big\ntraceback", None, "too big"]
    assert common_reasons(reasons) == [
        ("too big", 2), ("worker process died (exit code 1) while evaluating trial N", 2), ("no reason given", 1)]
