"""The scale-out.md figures (experiments/figures/scale_out.py) on small made-up records:
each cell comes from the record, and a record whose 'ok' disagrees with its counts is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.figures.records import RecordError
from experiments.figures.scale_out import CHAOS_DASK, CHAOS_PROCESS, SCALING, chaos, scaling


def _record(harness: str, settings: dict, rows, ok: bool = True) -> dict:
    return {"record_version": 1, "harness": harness, "settings": settings, "commit": "abcdef0123",
            "dirty": False, "started_at": "2026-12-03T08:00:00+00:00", "wall_s": 120.0,
            "load_avg_1_5_15_start": [5.5, 5, 5], "load_avg_1_5_15_end": [7.25, 6, 5],
            "cpu_count": 2, "ok": ok, "rows": rows}


def _write(root: Path, rel: str, rec: dict) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(json.dumps(rec))


def _chaos_row(executor: str, backend: str, requeued: int, complete: int = 50) -> dict:
    return {"executor": executor, "backend": backend, "kills": 4, "trials": 50, "COMPLETE": complete,
            "numbers_ok": True, "distinct_params": complete, "requeued": requeued, "RUNNING": 0,
            "complete_at_each_kill": [0, 3, 10, 30],
            "WAITING": 0, "max_attempts": 2, "ok": complete == 50}


def _chaos_settings(executor: str) -> dict:
    return {"trials": 50, "kills": 4, "workers": 2, "seed": 0, "sleep_s": 0.25,
            "optimizer": "random", "executor": executor, "kill_window": [1.5, 6.0]}


def test_chaos_table_is_the_records_rows(tmp_path):
    _write(tmp_path, CHAOS_PROCESS, _record("experiments.harnesses.chaos", _chaos_settings("process"),
                                            [_chaos_row("process", "sqlite", 7),
                                             _chaos_row("process", "postgresql", 9, complete=49)],
                                            ok=False))
    _write(tmp_path, CHAOS_DASK, _record("experiments.harnesses.chaos", _chaos_settings("dask"),
                                         [_chaos_row("dask", "sqlite", 3)]))
    text = chaos(tmp_path)
    assert "| process | SQLite | 4 | 0, 3, 10, 30 | 50 | 50 | 7 | every trial once, none lost |" in text
    assert "| process | PostgreSQL | 4 | 0, 3, 10, 30 | 49 | 49 | 9 | MISMATCH |" in text
    assert "| dask | SQLite | 4 | 0, 3, 10, 30 | 50 | 50 | 3 |" in text
    assert "commit abcdef0" in text and "load average 5.5 at its start and 7.2 at its end" in text


def test_a_chaos_row_whose_ok_disagrees_with_its_counts_is_refused(tmp_path):
    bad = _chaos_row("process", "sqlite", 7, complete=49)
    bad["ok"] = True
    _write(tmp_path, CHAOS_PROCESS, _record("experiments.harnesses.chaos", _chaos_settings("process"), [bad]))
    _write(tmp_path, CHAOS_DASK, _record("experiments.harnesses.chaos", _chaos_settings("dask"),
                                         [_chaos_row("dask", "sqlite", 3)]))
    with pytest.raises(RecordError, match="disagrees"):
        chaos(tmp_path)


def test_scaling_table_pairs_throughput_with_overhead(tmp_path):
    def t(ex, w, per_min, steady):
        return {"executor": ex, "workers": w, "per_min": per_min, "steady_per_min": steady}

    def o(ex, w, ms, steady_s=0.012):
        return {"executor": ex, "workers": w, "overhead_ms": ms, "steady_s_per_trial": steady_s}

    rows = {"throughput": [t("process", 1, 100.04, 110.0), t("dask", 1, 90.0, 100.0)],
            "overhead": [o("inline", 1, 0.0, 0.0104), o("process", 1, 2.0), o("dask", 1, 12.5)]}
    _write(tmp_path, SCALING, _record("experiments.harnesses.scaling",
                                      {"trials": 40, "sleep_s": 0.5, "overhead_trials": 200,
                                       "executors": ["process", "dask"]}, rows))
    text = scaling(tmp_path)
    assert "| process | 1 | 100.0 | 110.0 | 2.0 |" in text and "| dask | 1 | 90.0 | 100.0 | 12.5 |" in text
    assert "at 10.4 ms/trial" in text and "ideal is 120 trials/min" in text
    assert "Dask costs 10.5 ms more per trial" in text
    assert "on 2 cores" in text and "negative overhead" not in text
    rows["overhead"][1]["overhead_ms"] = -3.0
    _write(tmp_path, SCALING, _record("experiments.harnesses.scaling",
                                      {"trials": 40, "sleep_s": 0.5, "overhead_trials": 200,
                                       "executors": ["process", "dask"]}, rows))
    assert "| process | 1 | 100.0 | 110.0 | \u22123.0 |" in scaling(tmp_path)
    assert "negative overhead" in scaling(tmp_path)


def test_a_record_of_another_harness_is_refused(tmp_path):
    _write(tmp_path, SCALING, _record("experiments.harnesses.chaos", {}, []))
    with pytest.raises(RecordError, match="written by"):
        scaling(tmp_path)


def test_faults_table_from_the_race_and_scheduler_records(tmp_path):
    from experiments.figures.scale_out import FAULTS_DASK, FAULTS_RACE, faults

    def race_row(backend, bad):
        return {"scenario": "race", "backend": backend, "drivers": 4, "rounds": 5, "trials": 20,
                "bad_rounds": bad, "failed_drivers": 0, "mean_round_s": 30.04, "max_round_s": 41.0,
                "duplicate_points_per_round": 3.5}

    kills = [{"kill": i + 1, "driver_exit": 3, "exit_after_s": 1.5 + i, "COMPLETE": 5 * i,
              "WAITING": 2, "RUNNING": 0, "FAILED": 0, "said_lost": True} for i in range(2)]
    dask_row = {"scenario": "dask-scheduler", "kills": kills, "final_exit": 0, "wall_s": 99.0,
                "COMPLETE": 40, "numbers_ok": True, "FAILED": 0, "requeued": 4}
    race_set = {"scenario": "race", "drivers": 4, "rounds": 5, "trials": 20, "workers": 2, "sleep_s": 0.0}
    dask_set = {"scenario": "dask-scheduler", "kills": 2, "trials": 40, "workers": 2, "sleep_s": 0.5}
    _write(tmp_path, FAULTS_RACE, _record("experiments.harnesses.faults race", race_set,
                                          [race_row("sqlite", 0), race_row("postgresql", 1)], ok=False))
    _write(tmp_path, FAULTS_DASK, _record("experiments.harnesses.faults dask-scheduler", dask_set, [dask_row]))
    text = faults(tmp_path)
    assert "5 rounds per backend" in text and "no-op evaluations" in text
    assert "PostgreSQL: 1 of 5 rounds wrong, 0 of 20 drivers failed (a round took 30.0 s" in text
    assert "| MISMATCH |" in text   # one bad round
    assert "exited 3 within 1.50, 2.50 s, with 2, 2 trials WAITING" in text
    assert "40 COMPLETE, numbers 0..39 once, 0 FAILED" in text
    dask_row["kills"][0]["FAILED"] = 1
    _write(tmp_path, FAULTS_DASK, _record("experiments.harnesses.faults dask-scheduler", dask_set, [dask_row]))
    with pytest.raises(RecordError, match="disagrees"):
        faults(tmp_path)


def _pg_records(tmp_path: Path, *, requeued: int = 1, restart_ok: bool = True) -> None:
    from experiments.figures.scale_out import PG_RESTART, PG_TIMEOUT

    restart = {"scenario": "pg-restart", "restarts": 2, "outages_s": [7.04, 9.5], "driver_exit": 0,
               "retry_warnings": 9, "recovered_after_s": [6.5, 8.25], "recovered_retries": [3, 5],
               "wall_s": 51.25, "WAITING": 0, "RUNNING": 0, "COMPLETE": 40, "FAILED": 0,
               "numbers_ok": True, "max_attempts": 1, "requeued": 0}
    timeout = {"scenario": "pg-timeout", "retry_s": 4.0, "driver_exit": 3, "stopped_after_s": 5.55,
               "message": "error: lost ...\nstopped: ... the study is resumable", "complete_when_stopped": 11,
               "resume_exit": 0, "WAITING": 0, "RUNNING": 0, "COMPLETE": 25, "FAILED": 0,
               "numbers_ok": True, "max_attempts": 2, "requeued": requeued}
    _write(tmp_path, PG_RESTART, _record("experiments.harnesses.faults pg-restart",
                                         {"restarts": 2, "down_s": 4.0, "trials": 40, "workers": 2,
                                          "sleep_s": 0.25}, [restart], ok=restart_ok))
    _write(tmp_path, PG_TIMEOUT, _record("experiments.harnesses.faults pg-timeout",
                                         {"retry_s": 4.0, "down_s": 12.0, "trials": 25, "workers": 2,
                                          "sleep_s": 0.25}, [timeout]))


def test_pg_outage_rows_come_from_the_restart_and_timeout_records(tmp_path):
    from experiments.figures.scale_out import pg_outages

    _pg_records(tmp_path)
    text = pg_outages(tmp_path)
    assert "PostgreSQL stopped 2 times for 4 s (7.0–9.5 s from `service postgresql stop`" in text
    assert "during a 40-trial sweep" in text
    assert "warned 9 times, was back 6.5 and 8.2 s after its first failure (3, 5 retries)" in text
    assert "exited 0; 51.2 s in all | 40 COMPLETE, numbers 0..39 once, none evaluated twice |" in text
    assert "PostgreSQL stopped for 12 s during a 25-trial sweep" in text and "`--storage-retry-s 4`" in text
    assert "exited 3 after 5.5 s with 11 trials COMPLETE" in text
    assert "25 COMPLETE, numbers 0..24 once; 1 trial in flight at the stop re-run |" in text
    assert "commit abcdef0" in text
    _pg_records(tmp_path, requeued=3)
    assert "3 trials in flight at the stop re-run" in pg_outages(tmp_path)


def test_a_pg_record_whose_ok_disagrees_with_its_row_is_refused(tmp_path):
    from experiments.figures.scale_out import pg_outages

    _pg_records(tmp_path, restart_ok=False)
    with pytest.raises(RecordError, match="disagrees"):
        pg_outages(tmp_path)
