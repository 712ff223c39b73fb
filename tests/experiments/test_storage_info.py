"""The trials' ``info`` column: the evaluator's extras (breakdowns) persisted, read back,
exported, and databases made before the column existed still open."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pandas as pd

from design_space import Categorical, DesignSpace, Ordinal, PowerOfTwo
from experiments.storage import Storage
from experiments.study import Study
from optimizer.base import TrialStatus

OWNER = "hostA|111|222|deadbeef"


def _space() -> DesignSpace:
    return DesignSpace(PowerOfTwo("rows", 8, 128), Ordinal("glb_kib", [16, 64, 256]),
                       Categorical("dataflow", ["OS", "WS", "IS"]))


def _new_study(st: Storage):
    return st.create_study("s", seed=0, objectives={"edp": "min"}, space={}, config={},
                           config_hash="h", manifest={})


def test_info_round_trip_and_lenient_values(storage_url: str) -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<Opaque thing>"

    with Storage(storage_url) as st:
        sid = _new_study(st).id
        st.create_trials(sid, [{"x": 1}, {"x": 2}, {"x": 3}], [1, 2, 3], OWNER)
        info = {"breakdown": {"levels": ["RF"], "layers": [{"name": "c1", "energy_pj": 2.5}]},
                "bad": math.inf, "obj": Opaque(), 3: "int key"}
        assert st.finish_trial(sid, 0, OWNER, TrialStatus.COMPLETE, metrics={"edp": 1.0}, info=info)
        assert st.finish_trial(sid, 1, OWNER, TrialStatus.COMPLETE, metrics={"edp": 2.0})
        got = st.trial(sid, 0).info
        assert got["breakdown"] == info["breakdown"]
        assert got["bad"] is None and got["obj"] == "<Opaque thing>" and got["3"] == "int key"
        assert st.trial(sid, 1).info == {}      # no info given
        assert st.trial(sid, 2).info == {}      # still RUNNING
        assert [r.info != {} for r in st.trials(sid)] == [True, False, False]
        assert all(r.info == {} for r in st.trials(sid, with_info=False))


def _old_database(path: Path) -> None:
    """The schema as the first released version created it: no heartbeat_at, no info."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE studies (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(255) NOT NULL UNIQUE,
            seed BIGINT NOT NULL, objectives TEXT NOT NULL, space TEXT NOT NULL, config TEXT NOT NULL,
            config_hash VARCHAR(128) NOT NULL, manifest TEXT NOT NULL, created_at FLOAT NOT NULL);
        CREATE TABLE trials (id INTEGER PRIMARY KEY AUTOINCREMENT, study_id INTEGER NOT NULL
            REFERENCES studies (id) ON DELETE CASCADE, number INTEGER NOT NULL, params TEXT NOT NULL,
            status VARCHAR(16) NOT NULL, metrics TEXT NOT NULL, constraints TEXT NOT NULL, reason TEXT,
            traceback TEXT, wall_time_s FLOAT, seed BIGINT NOT NULL, owner VARCHAR(255),
            attempts INTEGER NOT NULL, created_at FLOAT NOT NULL, started_at FLOAT, finished_at FLOAT,
            CONSTRAINT uq_trials_study_number UNIQUE (study_id, number));
        INSERT INTO studies VALUES (1, 'old', 0, '{"edp": "min"}', '{}', '{}', 'h', '{}', 1.0);
        INSERT INTO trials VALUES (1, 1, 0, '{"x": 1}', 'COMPLETE', '{"edp": 3.0}', '{}', NULL, NULL,
            0.1, 5, NULL, 1, 1.0, 1.0, 1.1);
    """)
    con.commit()
    con.close()


def test_old_database_opens_and_gains_the_info_column(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    _old_database(db)
    with Storage(db) as st:
        sid = st.get_study("old").id
        (old,) = st.trials(sid)
        assert old.info == {} and old.metrics == {"edp": 3.0}
        st.create_trials(sid, [{"x": 2}], [6], OWNER)
        assert st.finish_trial(sid, 1, OWNER, TrialStatus.COMPLETE, metrics={"edp": 1.0},
                               info={"k": [1, 2]})
        assert st.trial(sid, 1).info == {"k": [1, 2]}
    cols = [r[1] for r in sqlite3.connect(db).execute("PRAGMA table_info(trials)")]
    assert "info" in cols and "heartbeat_at" in cols and "cpu_time_s" in cols
    with Storage(db) as st:                 # the old trial has no CPU time; a new one keeps its own
        sid = st.get_study("old").id
        assert st.trial(sid, 0).cpu_time_s is None
        st.create_trials(sid, [{"x": 3}], [7], OWNER)
        assert st.finish_trial(sid, 2, OWNER, TrialStatus.COMPLETE, metrics={"edp": 2.0}, cpu_time_s=0.25)
        assert st.trial(sid, 2).cpu_time_s == 0.25


def test_study_persists_evaluation_info_and_exports_it(tmp_path: Path) -> None:
    s = Study.create("b", _space(), {"edp_uj_ms": "min"},
                     "tests.experiments.breakdown_evaluator:evaluate", "random",
                     storage=tmp_path / "b.db", seed=1)
    s.optimize(8, workers=1, progress=False)
    df = s.trials_dataframe()
    done = df[df["status"] == "COMPLETE"]
    assert len(done) >= 1
    for _, row in done.iterrows():
        layers = row["info"]["breakdown"]["layers"]
        assert [x["name"] for x in layers] == ["conv1", "conv2_x", "fc"]
        assert row["info"]["nan_is_fine"] is None
    assert "info" not in s.trials_dataframe(with_info=False).columns
    csv = pd.read_csv(s.export(tmp_path / "t.csv"))
    first = csv[csv["status"] == "COMPLETE"]["info"].iloc[0]
    assert json.loads(first)["breakdown"]["levels"] == ["RF", "GLB", "DRAM"]
    js = json.loads(s.export(tmp_path / "t.json").read_text())
    assert any(r["info"] and r["info"]["mapper"] == "made-up" for r in js)
