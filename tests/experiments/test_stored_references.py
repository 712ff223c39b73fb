"""A study database is data: opening a study never imports or calls code it names.

Each test crafts a database whose stored space names code, as an attacker who can write to
a shared study would:

* a joint space whose ``software:`` is ``subprocess:Popen`` with hardware parameters named
  ``touch`` and a marker path -- built as a JointSpace, Popen would be called with those
  names as its argument list and create the marker (the exploit of issue 46);
* a constraint ``function:`` in a module of this test's folder that creates another marker
  when it is imported.

Then every reader -- ``Study.load``, ``status``, ``export``, ``report``, ``plot`` and the
dashboard's ``/api/view`` -- must show the study from its stored data and neither marker
may exist. On SQLite, and on PostgreSQL when ``COEXPLORE_TEST_POSTGRES_URL`` is set.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from design_space import Constraint, DesignSpace, Integer
from design_space.space_view import SpaceView
from experiments.cli import app
from experiments.storage import Storage
from experiments.study import Study
from optimizer.base import TrialStatus
from tests.experiments import study_evaluators as ev

SENTINEL = "coexplore_h46_sentinel"


def _craft(url: str, tmp_path: Path) -> tuple[Path, Path]:
    """Two crafted studies in ``url``; returns the two marker paths (must stay absent)."""
    popen_marker = tmp_path / "popen-ran"
    import_marker = tmp_path / "sentinel-imported"
    (tmp_path / f"{SENTINEL}.py").write_text(
        f"open({str(import_marker)!r}, 'w').write('imported')\ndef check(cols):\n    return True\n"
    )
    st = Storage(url)
    joint = {
        "hardware": {
            "parameters": [
                {"name": "touch", "type": "fixed", "value": 1},
                {"name": str(popen_marker), "type": "fixed", "value": 1},
            ],
            "constraints": [{"name": "hw_ok", "function": f"{SENTINEL}:check"}],
        },
        "software": "subprocess:Popen",
    }
    plain = {
        "parameters": [{"name": "x", "type": "integer", "low": 0, "high": 9}],
        "constraints": [
            {"name": "ok", "function": f"{SENTINEL}:check"},
            {"name": "small", "expr": "x <= 8"},
        ],
    }
    for name, space, params in (
        ("joint", joint, [{"touch": 1, str(popen_marker): 1, "tile": 4}]),
        ("plain", plain, [{"x": 3}, {"x": 5}]),
    ):
        config = {
            "space": space,
            "objectives": {"f": "min"},
            "evaluator": f"{SENTINEL}:check",
            "evaluator_options": {"accelerator": f"{SENTINEL}:check"},
            "optimizer": {"name": "random", "options": {}},
            "seed": 0,
            "pareto": {"f": "min"},
        }
        rec = st.create_study(
            name,
            seed=0,
            objectives={"f": "min"},
            space=space,
            config=config,
            config_hash="crafted",
            manifest={},
        )
        trials = st.create_trials(rec.id, params, [1] * len(params), "owner")
        for i, t in enumerate(trials):
            st.finish_trial(
                rec.id, t.number, "owner", TrialStatus.COMPLETE, metrics={"f": float(i)}
            )
    st.close()
    return popen_marker, import_marker


def _nothing_ran(*markers: Path) -> None:
    assert SENTINEL not in sys.modules, "a module named by the database was imported"
    for m in markers:
        assert not m.exists(), f"code named by the database ran: {m.name} exists"


@pytest.fixture
def crafted(storage_url, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))  # the sentinel module *could* be imported
    monkeypatch.delitem(sys.modules, SENTINEL, raising=False)
    markers = _craft(storage_url, tmp_path)
    yield storage_url, markers
    sys.modules.pop(SENTINEL, None)


def test_the_sentinel_would_be_seen(tmp_path, monkeypatch):
    """The markers do detect the code running: importing the stored space as a config
    would (this is what Study.load did before), so the other tests can fail."""
    from design_space.serialization import space_from_dict

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, SENTINEL, raising=False)
    url = f"sqlite:///{tmp_path / 'probe.db'}"
    _, import_marker = _craft(url, tmp_path)
    st = Storage(url)
    space_from_dict(st.get_study("plain").space)  # the config path: imports on purpose
    st.close()
    assert import_marker.exists() and SENTINEL in sys.modules
    sys.modules.pop(SENTINEL, None)


def test_load_reads_the_stored_space_as_data(crafted):
    url, markers = crafted
    joint = Study.load("joint", url)
    plain = Study.load("plain", url)
    _nothing_ran(*markers)
    assert isinstance(joint.space, SpaceView) and isinstance(plain.space, SpaceView)
    # names: the described parameters, then those only the stored trials show
    assert joint.space.names == ["touch", str(markers[0]), "tile"]
    assert plain.space.bounds() == {"x": {"name": "x", "type": "integer", "low": 0, "high": 9}}
    assert ("software", "subprocess:Popen") in joint.space.references
    assert ("constraint 'ok'", f"{SENTINEL}:check") in plain.space.references
    assert list(plain.trials_dataframe()["params_x"]) == [3, 5]
    assert list(plain.pareto_front()["number"]) == [0]
    # continuing needs the space from the user's own config or code
    with pytest.raises(ValueError, match=r"names code .*subprocess:Popen.* not import"):
        Study.load("joint", url, ev.bowl, evaluator_options={}).optimize(3, progress=False)
    # stored evaluator options are data: not handed to an evaluator unless trusted
    with pytest.raises(ValueError, match="stored evaluator options"):
        Study.load("plain", url, ev.bowl)
    _nothing_ran(*markers)


def test_read_only_commands_show_the_study(crafted, tmp_path):
    url, markers = crafted
    runner = CliRunner()
    res = runner.invoke(app, ["status", url])
    assert res.exit_code == 0, res.output
    assert "study 'joint'" in res.output and "study 'plain'" in res.output
    assert "not imported: software 'subprocess:Popen'" in res.output
    for cmd in (
        ["export", url, "--study", "plain", "-o", str(tmp_path / "t.csv")],
        ["export", url, "--study", "joint", "--pareto", "-o", str(tmp_path / "p.json")],
        ["report", url, "--study", "joint", "-o", str(tmp_path / "r.html")],
        ["plot", url, "--study", "plain", "-o", str(tmp_path / "plots")],
    ):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 0, (cmd, res.output)
    assert "tile" in (tmp_path / "r.html").read_text()
    assert json.loads((tmp_path / "p.json").read_text())[0]["params_tile"] == 4
    _nothing_ran(*markers)


def test_dashboard_view_imports_nothing(crafted):
    from experiments.dashboard import Dashboard

    url, markers = crafted
    with Dashboard(Storage(url), None, port=0, poll_s=0.5).start() as board:
        for name in ("joint", "plain"):
            with urllib.request.urlopen(f"{board.url}api/view?study={name}", timeout=30) as r:
                view = json.loads(r.read())
            assert view["view"] is not None
    _nothing_ran(*markers)


def test_trusted_references_are_imported_and_the_study_continues(tmp_path):
    """A reference the caller trusts (by module) is imported; one it does not, is not."""
    from tests.design_space import helpers

    space = DesignSpace(
        Integer("x", 0, 9), Integer("y", 0, 9), constraints=[Constraint("ok", helpers.always_ok)]
    )
    url = f"sqlite:///{tmp_path / 's.db'}"
    s = Study.create("t", space, {"f1": "min", "f2": "min"}, ev.bowl, storage=url)
    s.optimize(2, progress=False)
    assert isinstance(Study.load("t", url).space, SpaceView)
    assert isinstance(Study.load("t", url, trust_references=["other.module"]).space, SpaceView)
    trusted = Study.load("t", url, ev.bowl, trust_references=["tests.design_space.helpers"])
    assert trusted.space == space
    trusted.optimize(4, progress=False)
    given = Study.load("t", url, ev.bowl, space=space, evaluator_options={})
    given.optimize(5, progress=False)
    assert given.n_finished() == 5
    with pytest.raises(ValueError, match="not the one stored"):
        Study.load("t", url, space=DesignSpace(Integer("x", 0, 9), Integer("y", 0, 9)))


def test_a_space_without_references_is_rebuilt(tmp_path):
    space = DesignSpace(
        Integer("x", 0, 9), Integer("y", 0, 3), constraints=[Constraint("small", "x <= 8")]
    )
    url = f"sqlite:///{tmp_path / 's.db'}"
    Study.create("t", space, {"f1": "min"}, ev.bowl, storage=url)
    assert Study.load("t", url).space == space


def test_a_malformed_stored_space_still_shows(tmp_path):
    """A stored description that is not a valid space: the study still shows, from its
    trials, with a warning naming what is wrong."""
    url = f"sqlite:///{tmp_path / 'bad.db'}"
    st = Storage(url)
    bad = {
        "parameters": [{"name": "a", "type": "integer", "low": 0, "high": "zz"}],
        "constraints": [{"name": "c", "function": f"{SENTINEL}:check"}],
    }
    rec = st.create_study(
        "bad",
        seed=0,
        objectives={"f": "min"},
        space=bad,
        config={"optimizer": {"name": "random"}},
        config_hash="x",
        manifest={},
    )
    st.create_trials(rec.id, [{"a": 1}], [0], "o")
    st.finish_trial(rec.id, 0, "o", TrialStatus.COMPLETE, metrics={"f": 2.0})
    assert Study.load("bad", url).space is None
    res = CliRunner().invoke(app, ["status", url])
    assert res.exit_code == 0 and "complete 1" in res.output, res.output
    assert SENTINEL not in sys.modules
