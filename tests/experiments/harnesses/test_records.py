"""``--json FILE`` of each harness (experiments/harnesses/record.py): the record holds
exactly the rows the harness computed, its settings, the commit and the load average."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _common(rec: dict, harness: str) -> None:
    assert rec["record_version"] == 1 and rec["harness"] == harness
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    assert rec["commit"] == head and isinstance(rec["dirty"], bool)
    assert rec["wall_s"] > 0 and 0 <= rec["process_cpu_s"]
    for key in ("load_avg_1_5_15_start", "load_avg_1_5_15_end"):
        assert len(rec[key]) == 3 and all(x >= 0 for x in rec[key])
    assert "json" not in rec["settings"]


def _same(a, b) -> None:
    """``a`` (what the harness returned) equals ``b`` (the record) after a JSON round trip."""
    assert json.loads(json.dumps(a, default=str)) == b


def test_settings_hide_database_passwords():
    from experiments.harnesses.record import public_settings

    ns = argparse.Namespace(postgres="postgresql+psycopg://u:secret@db:5432/x", trials=3,
                            kill_window=(1.0, 2.0), json="out.json")
    s = public_settings(ns)
    assert s == {"postgres": "postgresql+psycopg://u:***@db:5432/x", "trials": 3,
                 "kill_window": [1.0, 2.0]}


def test_chaos_json_holds_the_rows_it_printed(tmp_path):
    from experiments.harnesses import chaos

    out = tmp_path / "chaos.json"
    rows = chaos.main(["--trials", "8", "--kills", "1", "--sleep-s", "0.3", "--kill-window", "2.0",
                       "3.0", "--postgres", "", "--json", str(out)])
    rec = json.loads(out.read_text())
    _common(rec, "experiments.harnesses.chaos")
    assert rec["settings"]["trials"] == 8 and rec["settings"]["kill_window"] == [2.0, 3.0]
    assert rec["ok"] is True and len(rec["rows"]) == 1
    _same(rows, rec["rows"])
    assert rec["rows"][0]["COMPLETE"] == 8 and rec["rows"][0]["kills"] == 1


def test_scaling_json_holds_the_rows_it_printed(tmp_path):
    from experiments.harnesses import scaling

    out = tmp_path / "scaling.json"
    res = scaling.main(["--trials", "4", "--sleep-s", "0.05", "--overhead-trials", "6",
                        "--executors", "process", "--json", str(out)])
    rec = json.loads(out.read_text())
    _common(rec, "experiments.harnesses.scaling")
    assert rec["settings"]["executors"] == ["process"]
    _same(res, rec["rows"])
    assert [(r["executor"], r["workers"]) for r in rec["rows"]["throughput"]] == [("process", 1),
                                                                                   ("process", 2)]
    assert [r["executor"] for r in rec["rows"]["overhead"]] == ["inline", "process", "process"]
    assert all(r["trials"] == 4 for r in rec["rows"]["throughput"])


def test_faults_json_holds_the_rows_it_printed(tmp_path):
    from experiments.harnesses import faults

    out = tmp_path / "race.json"
    rows = faults.main(["race", "--drivers", "2", "--rounds", "1", "--trials", "4",
                        "--postgres", "", "--json", str(out)])
    rec = json.loads(out.read_text())
    _common(rec, "experiments.harnesses.faults race")
    assert rec["settings"]["scenario"] == "race" and rec["settings"]["rounds"] == 1
    assert rec["ok"] is True
    _same(rows, rec["rows"])
    assert rec["rows"][0]["backend"] == "sqlite" and rec["rows"][0]["bad_rounds"] == 0
