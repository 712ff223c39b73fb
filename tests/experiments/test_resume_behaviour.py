"""Resuming checks behaviour, not only names (issue 46, item 4).

Each evaluator or constraint function here lives in a module written into the test's
folder, so that a test can change its code under the same ``module:function`` -- what a
user editing their evaluator between two runs does.
"""

from __future__ import annotations

import importlib
import logging
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from design_space import Constraint, DesignSpace, Integer
from experiments.cli import app
from experiments.storage import Storage
from experiments.study import Study, StudyBehaviourChanged, StudyConfigMismatch

EVAL_MOD = "coexplore_h46_eval"
CONS_MOD = "coexplore_h46_cons"


def _write_module(folder: Path, name: str, body: str):
    """(Re)write module ``name`` in ``folder`` and import it fresh."""
    (folder / f"{name}.py").write_text(textwrap.dedent(body))
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module(name)


@pytest.fixture
def modules(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # a rewrite is always read again
    yield tmp_path
    for name in (EVAL_MOD, CONS_MOD):
        sys.modules.pop(name, None)


def _evaluator(folder: Path, scale: str, extra: str = ""):
    return _write_module(
        folder,
        EVAL_MOD,
        f"""
        {extra}
        def evaluate(p, **options):
            return {{"f1": float(p["x"]) * {scale}}}
        """,
    ).evaluate


def _space() -> DesignSpace:
    return DesignSpace(Integer("x", 0, 9))


def _create(url, evaluator, space=None, **kw):
    return Study.create("s", space or _space(), {"f1": "min"}, evaluator, storage=url, **kw)


def test_changed_evaluator_code_is_refused_naming_it(modules, storage_url):
    s = _create(storage_url, _evaluator(modules, "1.0"))
    s.optimize(4, progress=False)
    changed = _evaluator(modules, "1000.0")  # same module:function, 1000x larger
    with pytest.raises(
        StudyBehaviourChanged,
        match=rf"evaluator {EVAL_MOD}:evaluate: its source changed.*--allow-changed",
    ):
        _create(storage_url, changed)
    # a change elsewhere in its module is named as such
    moved = _evaluator(modules, "1.0", extra="UNRELATED = 1")
    with pytest.raises(StudyBehaviourChanged, match=rf"its module {EVAL_MOD} changed"):
        _create(storage_url, moved)
    # the same code again resumes
    same = _evaluator(modules, "1.0")
    _create(storage_url, same).optimize(6, progress=False)
    # Study.load with the changed evaluator is checked the same way
    changed = _evaluator(modules, "1000.0")
    with pytest.raises(StudyBehaviourChanged, match="its source changed"):
        Study.load("s", storage_url, changed, space=_space(), evaluator_options={})


def test_allow_changed_resumes_and_is_recorded(modules, storage_url):
    _create(storage_url, _evaluator(modules, "1.0")).optimize(4, progress=False)
    changed = _evaluator(modules, "1000.0")
    s = _create(storage_url, changed, allow_changed=True)
    s.optimize(6, progress=False)
    log = Storage(storage_url).get_study("s").config["resume_log"]
    assert len(log) == 1 and log[0]["allow_changed"] is True
    assert log[0]["finished_trials_before"] == 4
    assert any("its source changed" in c for c in log[0]["changes"])
    assert log[0]["fingerprints_before"]["evaluator"]["ref"] == f"{EVAL_MOD}:evaluate"
    # the new code is the study's now: resuming with it needs no flag and adds no entry
    _create(storage_url, changed).optimize(7, progress=False)
    assert len(Storage(storage_url).get_study("s").config["resume_log"]) == 1
    # and the first code is now the changed one
    with pytest.raises(StudyBehaviourChanged):
        _create(storage_url, _evaluator(modules, "1.0"))


def test_evaluator_name_and_options_change_needs_the_flag(modules, tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    fn = _evaluator(modules, "1.0")
    _create(url, fn, evaluator_options={"k": 1}).optimize(2, progress=False)
    with pytest.raises(StudyConfigMismatch, match=r"evaluator_options differ.*--allow-changed"):
        _create(url, fn, evaluator_options={"k": 2})
    s = _create(url, fn, evaluator_options={"k": 2}, allow_changed=True)
    assert s.record.config["evaluator_options"] == {"k": 2}
    _create(url, fn, evaluator_options={"k": 2})  # the recorded identity is the new one
    with pytest.raises(StudyConfigMismatch, match="space differ"):  # never allowed
        _create(
            url,
            fn,
            space=DesignSpace(Integer("x", 0, 8)),
            evaluator_options={"k": 2},
            allow_changed=True,
        )


def test_option_arrays_hash_by_every_element(modules, tmp_path):
    """Two arrays whose text numpy abbreviates to the same string: the old hash
    (json.dumps(default=str)) could not tell them apart."""
    a = np.zeros(5000)
    b = a.copy()
    b[2500] = 1.0
    assert str(a) == str(b)
    url = f"sqlite:///{tmp_path / 's.db'}"
    fn = _evaluator(modules, "1.0")
    _create(url, fn, evaluator_options={"w": a}).optimize(2, progress=False)
    _create(url, fn, evaluator_options={"w": a.copy()})  # equal values resume
    with pytest.raises(StudyBehaviourChanged, match="evaluator options: their exact values differ"):
        _create(url, fn, evaluator_options={"w": b})
    with pytest.raises(StudyBehaviourChanged, match="evaluator options"):
        _create(url, fn, evaluator_options={"w": a.astype(np.float32)})


def _constraint(folder: Path, limit: int):
    return _write_module(
        folder,
        CONS_MOD,
        f"""
        def small(cols):
            return cols["x"] <= {limit}
        """,
    ).small


def test_changed_constraint_function_is_refused_and_old_trials_counted(modules, storage_url):
    def space(fn):
        return DesignSpace(Integer("x", 0, 9), constraints=[Constraint("small", fn)])

    fn = _evaluator(modules, "1.0")
    s = _create(storage_url, fn, space=space(_constraint(modules, 9)), optimizer="grid")
    s.optimize(10, progress=False)  # the grid: x = 0..9, every one feasible
    tighter = space(_constraint(modules, 6))
    with pytest.raises(
        StudyBehaviourChanged, match=rf"constraint 'small' {CONS_MOD}:small: its source changed"
    ):
        _create(storage_url, fn, space=tighter, optimizer="grid")
    _create(storage_url, fn, space=tighter, optimizer="grid", allow_changed=True)
    entry = Storage(storage_url).get_study("s").config["resume_log"][-1]
    assert entry["trials_breaking_space_now"] == 3  # x = 7, 8, 9


def test_changed_pareto_is_applied(modules, tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    fn = _evaluator(modules, "1.0")
    s = _create(url, fn, extra_config={"pareto": {"f1": "min"}})
    assert [o.direction for o in s.report_objectives] == ["min"]
    s = _create(url, fn, extra_config={"pareto": {"f1": "max"}})
    assert [o.direction for o in s.report_objectives] == ["max"]
    assert [o.direction for o in Study.load("s", url).report_objectives] == ["max"]


def test_a_study_without_fingerprints_resumes_with_a_warning(modules, tmp_path, caplog):
    """A study stored by an older coexplore has no fingerprints: it resumes, they are
    recorded as unknown, and from then on the current ones are checked."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    fn = _evaluator(modules, "1.0")
    _create(url, fn).optimize(2, progress=False)
    st = Storage(url)
    rec = st.update_study_config(
        st.get_study("s").id, lambda c: {k: v for k, v in c.items() if k != "fingerprints"}
    )
    assert "fingerprints" not in rec.config
    with caplog.at_level(logging.WARNING, logger="experiments.study"):
        _create(url, _evaluator(modules, "2.0")).optimize(3, progress=False)
    assert "recorded as unknown" in caplog.text
    cfg = st.get_study("s").config
    assert cfg["resume_log"][-1]["fingerprints_before"] == "unknown"
    assert cfg["fingerprints"]["evaluator"]["ref"] == f"{EVAL_MOD}:evaluate"
    with pytest.raises(StudyBehaviourChanged):
        _create(url, _evaluator(modules, "3.0"))


CONFIG = """
study: cli
storage: sqlite:///{db}
seed: 0
output: {out}
space:
  parameters:
    - {{name: x, type: integer, low: 0, high: 9}}
objectives: {{f1: min}}
evaluator: {{function: "{mod}:evaluate"}}
optimizer: {{name: random}}
budget: {{n_trials: {n}, workers: 1, executor: inline}}
"""


@pytest.mark.slow
def test_cli_run_refuses_a_changed_evaluator_unless_allowed(modules, tmp_path):
    runner = CliRunner()

    def run(n: int, *flags: str):
        cfg = tmp_path / "c.yaml"
        cfg.write_text(CONFIG.format(db=tmp_path / "c.db", out=tmp_path / "out", mod=EVAL_MOD, n=n))
        return runner.invoke(app, ["run", str(cfg), "--no-progress", *flags])

    _evaluator(modules, "1.0")
    assert run(3).exit_code == 0
    _evaluator(modules, "1000.0")
    res = run(5)
    assert res.exit_code == 2
    assert f"evaluator {EVAL_MOD}:evaluate: its source changed" in res.output
    assert "--allow-changed" in res.output
    res = run(5, "--allow-changed")
    assert res.exit_code == 0, res.output
    cfg = Storage(tmp_path / "c.db").get_study("cli").config
    assert cfg["resume_log"][-1]["finished_trials_before"] == 3
