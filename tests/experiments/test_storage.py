"""Tests for experiments.storage: studies, trial lifecycle, owners, URLs and concurrency."""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from experiments.storage import (
    Storage,
    StorageError,
    StudyExistsError,
    StudyNotFoundError,
    StudyRecord,
    TrialRecord,
    make_owner_token,
    normalize_url,
    owner_is_alive,
)
from optimizer.base import Trial, TrialStatus

OWNER = "hostA|111|222|deadbeef"
OTHER = "hostB|333|444|cafef00d"


def _study(storage: Storage, name: str = "s", **overrides) -> StudyRecord:
    kwargs = {
        "seed": 7,
        "objectives": {"edp": "min", "accuracy": "max"},
        "space": {"params": [{"name": "pe", "values": (4, 8, 16)}]},
        "config": {"budget": 10, "nested": {"a": [1, 2]}},
        "config_hash": "abc123",
        "manifest": {"python": "3.11", "numpy": np.int64(2)},
    }
    kwargs.update(overrides)
    return storage.create_study(name, **kwargs)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "study.db"


@pytest.fixture
def storage(storage_url: str):
    with Storage(storage_url) as s:
        yield s


def _raw(storage: Storage, sql: str) -> list[tuple]:
    """Run SQL on the storage's own database, bypassing the API (SQLite or PostgreSQL)."""
    import sqlalchemy as sa

    engine = sa.create_engine(storage.url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            res = conn.execute(sa.text(sql))
            return [tuple(r) for r in res] if res.returns_rows else []
    finally:
        engine.dispose()


# -- studies ----------------------------------------------------------------------------
def test_create_get_list_studies(storage: Storage) -> None:
    before = time.time()
    rec = _study(storage, "alpha", objectives={"latency_ns": "min", "accuracy": "max"})
    assert rec.name == "alpha"
    assert rec.seed == 7
    assert list(rec.objectives.items()) == [("latency_ns", "min"), ("accuracy", "max")]
    assert rec.space == {"params": [{"name": "pe", "values": [4, 8, 16]}]}
    assert rec.config == {"budget": 10, "nested": {"a": [1, 2]}}
    assert rec.config_hash == "abc123"
    assert rec.manifest == {"python": "3.11", "numpy": 2}
    assert before - 1 <= rec.created_at <= time.time() + 1

    got = storage.get_study("alpha")
    assert got == rec
    assert list(got.objectives) == ["latency_ns", "accuracy"]
    assert storage.find_study("alpha") == rec
    assert storage.find_study("nope") is None

    beta = _study(storage, "beta", seed=2**40)
    assert beta.id != rec.id
    assert [s.name for s in storage.list_studies()] == ["alpha", "beta"]
    assert storage.get_study("beta").seed == 2**40


def test_duplicate_study_name(storage: Storage) -> None:
    _study(storage, "dup")
    with pytest.raises(StudyExistsError, match="dup"):
        _study(storage, "dup", seed=1)
    assert len(storage.list_studies()) == 1
    assert issubclass(StudyExistsError, StorageError)


def test_missing_study_lists_existing(storage: Storage) -> None:
    with pytest.raises(StudyNotFoundError, match=r"\(none\)"):
        storage.get_study("ghost")
    _study(storage, "first")
    _study(storage, "second")
    with pytest.raises(StudyNotFoundError) as info:
        storage.get_study("ghost")
    msg = str(info.value)
    assert "'ghost'" in msg and "'first'" in msg and "'second'" in msg
    assert isinstance(info.value, StorageError)


def test_unserializable_study_fields(storage: Storage) -> None:
    with pytest.raises(StorageError, match="weird"):
        _study(storage, "x", config={"ok": 1, "weird": object()})
    with pytest.raises(StorageError, match="inf"):
        _study(storage, "x", space={"hi": float("inf")})
    assert storage.list_studies() == []


def test_delete_study(storage: Storage) -> None:
    a = _study(storage, "a")
    b = _study(storage, "b")
    storage.create_trials(a.id, [{"x": 1}, {"x": 2}], [1, 2], OWNER)
    storage.create_trials(b.id, [{"x": 3}], [3], OWNER)
    storage.delete_study("a")
    assert [s.name for s in storage.list_studies()] == ["b"]
    assert storage.trials(a.id) == []
    assert [t.params for t in storage.trials(b.id)] == [{"x": 3}]
    with pytest.raises(StudyNotFoundError, match="'b'"):
        storage.delete_study("a")
    # The name is free again and numbering restarts.
    a2 = _study(storage, "a")
    assert [t.number for t in storage.create_trials(a2.id, [{}], [0], OWNER)] == [0]


# -- trials -----------------------------------------------------------------------------
def test_numbering_across_calls_and_studies(storage: Storage) -> None:
    s = _study(storage, "n")
    other = _study(storage, "m")
    created = []
    created += storage.create_trials(s.id, [{"i": 0}], [10], OWNER)
    created += storage.create_trials(s.id, [{"i": 1}, {"i": 2}, {"i": 3}], [11, 12, 13], OWNER)
    assert storage.create_trials(s.id, [], [], OWNER) == []
    created += storage.create_trials(
        s.id, [{"i": 4}, {"i": 5}], [14, 15], OWNER, status=TrialStatus.WAITING
    )
    assert [t.number for t in created] == list(range(6))
    assert [t.number for t in storage.create_trials(other.id, [{"i": 0}], [0], OWNER)] == [0]

    rows = storage.trials(s.id)
    assert rows == created
    assert [t.number for t in rows] == list(range(6))
    assert [t.params for t in rows] == [{"i": i} for i in range(6)]
    assert [t.seed for t in rows] == [10 + i for i in range(6)]

    running, waiting = rows[0], rows[4]
    assert running.status is TrialStatus.RUNNING
    assert running.owner == OWNER and running.attempts == 1
    assert running.started_at is not None and running.finished_at is None
    assert waiting.status is TrialStatus.WAITING
    assert waiting.owner is None and waiting.attempts == 0 and waiting.started_at is None


def test_create_trials_validation(storage: Storage) -> None:
    s = _study(storage)
    with pytest.raises(ValueError):
        storage.create_trials(s.id, [{"a": 1}], [1, 2], OWNER)
    with pytest.raises(ValueError):
        storage.create_trials(s.id, [{"a": 1}], [1], OWNER, status=TrialStatus.COMPLETE)
    with pytest.raises(StorageError, match="bad_key"):
        storage.create_trials(s.id, [{"a": 1}, {"ok": 2, "bad_key": {1, 2}}], [1, 2], OWNER)
    with pytest.raises(StudyNotFoundError):
        storage.create_trials(s.id + 100, [{"a": 1}], [1], OWNER)
    # Nothing was written by the failed calls.
    assert storage.trials(s.id) == []
    # Tuples and numpy values are stored as plain JSON.
    (t,) = storage.create_trials(
        s.id,
        [{"shape": (2, 3), "n": np.int64(4), "f": np.float32(0.5), "b": np.bool_(True)}],
        [np.int64(9)],
        OWNER,
    )
    (back,) = storage.trials(s.id)
    assert back.params == {"shape": [2, 3], "n": 4, "f": 0.5, "b": True} == t.params
    assert type(back.params["n"]) is int and back.seed == 9


def test_finish_trial_ownership_and_single_completion(storage: Storage) -> None:
    s = _study(storage)
    storage.create_trials(s.id, [{"x": 0}, {"x": 1}], [0, 1], OWNER)
    storage.create_trials(s.id, [{"x": 2}], [2], OWNER, status=TrialStatus.WAITING)

    assert not storage.finish_trial(s.id, 0, OTHER, TrialStatus.COMPLETE, metrics={"edp": 1.0})
    assert storage.trials(s.id)[0].status is TrialStatus.RUNNING

    assert not storage.finish_trial(s.id, 2, OWNER, TrialStatus.COMPLETE, metrics={"edp": 1.0})
    assert storage.trials(s.id)[2].status is TrialStatus.WAITING
    assert not storage.finish_trial(s.id, 99, OWNER, TrialStatus.COMPLETE)

    assert storage.finish_trial(
        s.id,
        0,
        OWNER,
        TrialStatus.COMPLETE,
        metrics={"edp": 2.5},
        constraints={"area": -1.0},
        wall_time_s=0.25,
    )
    assert not storage.finish_trial(
        s.id, 0, OWNER, TrialStatus.FAILED, reason="second", traceback="tb"
    )
    first = storage.trials(s.id)[0]
    assert first.status is TrialStatus.COMPLETE
    assert first.metrics == {"edp": 2.5} and first.constraints == {"area": -1.0}
    assert first.reason is None and first.traceback is None
    assert first.wall_time_s == 0.25
    assert first.finished_at is not None and first.finished_at >= first.started_at

    assert storage.finish_trial(
        s.id, 1, OWNER, TrialStatus.FAILED, reason="boom", traceback="Traceback ..."
    )
    failed = storage.trials(s.id)[1]
    assert (failed.status, failed.reason, failed.traceback) == (
        TrialStatus.FAILED,
        "boom",
        "Traceback ...",
    )

    for bad in (TrialStatus.RUNNING, TrialStatus.WAITING):
        with pytest.raises(ValueError):
            storage.finish_trial(s.id, 1, OWNER, bad)


def test_nonfinite_metrics_stored_as_null(storage: Storage) -> None:
    s = _study(storage)
    storage.create_trials(s.id, [{"x": 0}], [0], OWNER)
    assert storage.finish_trial(
        s.id,
        0,
        OWNER,
        TrialStatus.INFEASIBLE,
        metrics={
            "edp": float("nan"),
            "energy_pj": np.float64(3.0),
            "lat": float("inf"),
            "none": None,
            "count": 4,
        },
        constraints={"slack": -float("inf"), "area": np.float32(0.5)},
        reason="does not fit",
    )
    with pytest.raises(StorageError, match="bad"):
        storage.finish_trial(s.id, 0, OWNER, TrialStatus.COMPLETE, metrics={"bad": "abc"})

    # Strict JSON on disk: no NaN / Infinity tokens.
    ((metrics_text, constraints_text),) = _raw(storage, "SELECT metrics, constraints FROM trials")

    def no_constants(name: str) -> None:
        raise AssertionError(f"non-strict JSON constant {name}")

    assert json.loads(metrics_text, parse_constant=no_constants) == {
        "edp": None,
        "energy_pj": 3.0,
        "lat": None,
        "none": None,
        "count": 4.0,
    }
    assert json.loads(constraints_text, parse_constant=no_constants) == {
        "slack": None,
        "area": 0.5,
    }

    (t,) = storage.trials(s.id)
    assert t.metrics["edp"] is None and t.metrics["energy_pj"] == 3.0
    assert t.reason == "does not fit"
    trial = t.to_trial()
    assert isinstance(trial, Trial)
    assert trial == Trial(
        0,
        {"x": 0},
        TrialStatus.INFEASIBLE,
        metrics={"energy_pj": 3.0, "count": 4.0},
        constraints={"area": 0.5},
        reason="does not fit",
    )


def test_requeue_stale_then_claim(storage: Storage) -> None:
    dead, alive, new = "dead|1|1|aa", "alive|2|2|bb", "new|3|3|cc"
    s = _study(storage)
    other = _study(storage, "other")
    storage.create_trials(s.id, [{"i": 0}], [100], dead)  # 0 RUNNING dead
    storage.create_trials(s.id, [{"i": 1}], [101], alive)  # 1 RUNNING alive
    storage.create_trials(s.id, [{"i": 2}], [102], dead)  # 2 -> COMPLETE (dead owner)
    storage.create_trials(s.id, [{"i": 3}], [103], dead, status=TrialStatus.WAITING)
    storage.create_trials(s.id, [{"i": 4}], [104], dead)  # 4 RUNNING dead
    storage.create_trials(other.id, [{"i": 0}], [0], dead)  # other study: untouched
    assert storage.finish_trial(s.id, 2, dead, TrialStatus.COMPLETE, metrics={"edp": 1.0})

    asked: list[str] = []

    def is_alive(owner: str) -> bool:
        asked.append(owner)
        return owner == alive

    assert storage.requeue_stale(s.id, is_alive) == [0, 4]
    assert sorted(asked) == sorted({dead, alive})  # once per distinct owner
    by_number = {t.number: t for t in storage.trials(s.id)}
    assert by_number[0].status is TrialStatus.WAITING
    assert by_number[0].owner is None and by_number[0].started_at is None
    assert by_number[1].status is TrialStatus.RUNNING and by_number[1].owner == alive
    assert by_number[2].status is TrialStatus.COMPLETE and by_number[2].metrics == {"edp": 1.0}
    assert by_number[4].status is TrialStatus.WAITING
    assert storage.trials(other.id)[0].status is TrialStatus.RUNNING
    assert storage.requeue_stale(s.id, is_alive) == []

    claimed = storage.claim_waiting(s.id, new, limit=2)
    assert [t.number for t in claimed] == [0, 3]
    assert [t.attempts for t in claimed] == [2, 1]
    assert [t.params for t in claimed] == [{"i": 0}, {"i": 3}]
    assert [t.seed for t in claimed] == [100, 103]
    assert all(t.status is TrialStatus.RUNNING and t.owner == new for t in claimed)
    assert all(t.started_at is not None for t in claimed)
    assert claimed == [t for t in storage.trials(s.id) if t.number in (0, 3)]

    # The dead owner can no longer finish the re-queued trial; the new owner can.
    assert not storage.finish_trial(s.id, 0, dead, TrialStatus.COMPLETE, metrics={"edp": 9.0})
    assert storage.finish_trial(s.id, 0, new, TrialStatus.COMPLETE, metrics={"edp": 3.0})
    assert storage.trials(s.id)[0].metrics == {"edp": 3.0}

    assert [t.number for t in storage.claim_waiting(s.id, new, limit=10)] == [4]
    assert storage.claim_waiting(s.id, new, limit=10) == []
    assert storage.claim_waiting(s.id, new, limit=0) == []


def test_requeue_ownerless_running(storage: Storage) -> None:
    s = _study(storage)
    storage.create_trials(s.id, [{"i": 0}, {"i": 1}], [0, 1], OWNER)
    _raw(storage, "UPDATE trials SET owner = NULL WHERE number = 1")
    assert storage.requeue_stale(s.id, lambda owner: True) == [1]


def test_status_counts_and_count(storage: Storage) -> None:
    s = _study(storage)
    empty = storage.status_counts(s.id)
    assert empty == dict.fromkeys(TrialStatus, 0)
    storage.create_trials(s.id, [{"i": i} for i in range(5)], list(range(5)), OWNER)
    storage.create_trials(s.id, [{"i": 5}], [5], OWNER, status=TrialStatus.WAITING)
    storage.finish_trial(s.id, 0, OWNER, TrialStatus.COMPLETE)
    storage.finish_trial(s.id, 1, OWNER, TrialStatus.COMPLETE)
    storage.finish_trial(s.id, 2, OWNER, TrialStatus.INFEASIBLE, reason="r")
    storage.finish_trial(s.id, 3, OWNER, TrialStatus.FAILED, reason="r")
    counts = storage.status_counts(s.id)
    assert counts == {
        TrialStatus.WAITING: 1,
        TrialStatus.RUNNING: 1,
        TrialStatus.COMPLETE: 2,
        TrialStatus.INFEASIBLE: 1,
        TrialStatus.FAILED: 1,
    }
    finished = [TrialStatus.COMPLETE, TrialStatus.INFEASIBLE, TrialStatus.FAILED]
    assert storage.count(s.id, finished) == 4
    assert storage.count(s.id, [TrialStatus.RUNNING, TrialStatus.WAITING]) == 2
    assert storage.count(s.id, []) == 0
    assert [t.number for t in storage.trials(s.id, finished)] == [0, 1, 2, 3]
    assert [t.number for t in storage.trials(s.id, [TrialStatus.WAITING])] == [5]


# -- files, URLs, instances -------------------------------------------------------------
def test_normalize_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert normalize_url("sqlite:///x.db") == "sqlite:///x.db"
    assert normalize_url("runs/x.db") == f"sqlite:///{tmp_path / 'runs' / 'x.db'}"
    assert (tmp_path / "runs").is_dir()
    assert normalize_url(Path("y.sqlite")) == f"sqlite:///{tmp_path / 'y.sqlite'}"
    nested = tmp_path / "a" / "b" / "z.db"
    assert normalize_url(f"sqlite:///{nested}") == f"sqlite:///{nested}"
    assert nested.parent.is_dir()
    assert normalize_url("sqlite://") == "sqlite://"
    pg = "postgresql://user:pw@dbhost:5432/studies"
    assert normalize_url(pg) == pg
    assert normalize_url("postgresql+psycopg://h/db") == "postgresql+psycopg://h/db"
    for bad in ("mysql://u@h/db", "foo://bar"):
        with pytest.raises(StorageError) as info:
            normalize_url(bad)
        msg = str(info.value)
        assert bad in msg and "sqlite" in msg and "postgresql" in msg
    with pytest.raises(StorageError):
        normalize_url("")


def test_sqlite_pragmas_and_close(db: Path) -> None:
    s = Storage(db)
    assert s.url == f"sqlite:///{db.resolve()}"
    _study(s)
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "ix_trials_study_status" in names
    s.close()
    s.close()  # idempotent
    with pytest.raises(StorageError, match="closed"):
        s.list_studies()
    # Reopening an existing file keeps the data (create_all is "if missing").
    with Storage(f"sqlite:///{db}") as again:
        assert [x.name for x in again.list_studies()] == ["s"]


def test_in_memory_storage() -> None:
    with Storage("sqlite://") as s:
        rec = _study(s)
        assert [t.number for t in s.create_trials(rec.id, [{}, {}], [1, 2], OWNER)] == [0, 1]
        assert s.count(rec.id, [TrialStatus.RUNNING]) == 2


def test_visible_across_instances(storage_url: str) -> None:
    with Storage(storage_url) as a, Storage(storage_url) as b:
        rec = _study(a, "shared")
        assert b.get_study("shared") == rec
        b.create_trials(rec.id, [{"x": 1}], [1], OWNER)
        assert [t.params for t in a.trials(rec.id)] == [{"x": 1}]
        assert a.finish_trial(rec.id, 0, OWNER, TrialStatus.COMPLETE, metrics={"edp": 1.0})
        assert not b.finish_trial(rec.id, 0, OWNER, TrialStatus.COMPLETE, metrics={"edp": 2.0})
        assert b.trials(rec.id)[0].metrics == {"edp": 1.0}
        with pytest.raises(StudyExistsError):
            _study(b, "shared")


# -- owner tokens -----------------------------------------------------------------------
def test_owner_tokens() -> None:
    token = make_owner_token()
    host, pid, start, rand = token.split("|")
    assert host == socket.gethostname() and int(pid) == os.getpid()
    assert int(start) >= 0 and len(rand) == 8
    assert make_owner_token() != token
    assert owner_is_alive(token)

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert not owner_is_alive(f"{socket.gethostname()}|{proc.pid}|0|00000000")

    if int(start) > 0:  # pid reuse guard: our pid with a different start time is dead
        assert not owner_is_alive(f"{host}|{pid}|{int(start) + 1}|{rand}")
    assert owner_is_alive(f"{host}|{pid}|0|{rand}")  # start time unknown: pid check only

    assert owner_is_alive(f"{host}-elsewhere.invalid|{proc.pid}|0|00000000")
    for bad in ("", "garbage", "h|x|0|ab", "h|1|0", "h|1|0|ab|extra", f"{host}|-5|0|ab"):
        assert not owner_is_alive(bad)


# -- concurrency ------------------------------------------------------------------------
def _writer(url: str, study_id: int, worker: int, n: int, start, errors) -> None:
    try:
        owner = make_owner_token()
        with Storage(url) as s:
            start.wait(10)
            for i in range(n):
                s.create_trials(study_id, [{"worker": worker, "i": i}], [i], owner)
    except BaseException as e:
        errors.put(f"worker {worker}: {e!r}")
        raise


def test_concurrent_writers_get_unique_numbers(storage_url: str) -> None:
    with Storage(storage_url) as s:
        rec = _study(s)
    ctx = mp.get_context("forkserver")   # not fork: this process may hold jax's or torch's threads
    start, errors = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(storage_url, rec.id, w, 50, start, errors))
        for w in range(2)
    ]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
    problems = []
    while not errors.empty():
        problems.append(errors.get())
    assert problems == []
    assert [p.exitcode for p in procs] == [0, 0]

    with Storage(storage_url) as s:
        rows = s.trials(rec.id)
    assert [t.number for t in rows] == list(range(100))
    for w in range(2):
        mine = [t for t in rows if t.params["worker"] == w]
        assert [t.params["i"] for t in mine] == list(range(50))
        assert [t.number for t in mine] == sorted(t.number for t in mine)


def test_records_are_frozen(storage: Storage) -> None:
    rec = _study(storage)
    (t,) = storage.create_trials(rec.id, [{"x": 1}], [1], OWNER)
    assert isinstance(t, TrialRecord)
    with pytest.raises(AttributeError):
        t.number = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        rec.name = "other"  # type: ignore[misc]
    assert not math.isnan(t.created_at)


def _capped_writer(url: str, study_id: int, worker: int, cap: int, start, errors) -> None:
    try:
        owner = make_owner_token()
        with Storage(url) as s:
            start.wait(10)
            for i in range(cap):
                s.create_trials(study_id, [{"worker": worker, "i": i}, {"worker": worker, "i": -i}],
                                [i, i], owner, max_total=cap)
    except BaseException as e:
        errors.put(f"worker {worker}: {e!r}")
        raise


def test_max_total_caps_the_study_across_concurrent_writers(storage_url: str) -> None:
    with Storage(storage_url) as s:
        rec = _study(s)
        assert len(s.create_trials(rec.id, [{"a": 1}, {"a": 2}, {"a": 3}], [1, 2, 3], OWNER,
                                   max_total=2)) == 2
        assert s.create_trials(rec.id, [{"a": 4}], [4], OWNER, max_total=2) == []
        with pytest.raises(ValueError, match="max_total"):
            s.create_trials(rec.id, [{"a": 4}], [4], OWNER, max_total=-1)
        other = _study(s, "other")
    ctx = mp.get_context("forkserver")   # not fork: this process may hold jax's or torch's threads
    start, errors = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_capped_writer, args=(storage_url, other.id, w, 37, start, errors))
             for w in range(3)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
    assert errors.empty() and [p.exitcode for p in procs] == [0, 0, 0]
    with Storage(storage_url) as s:
        assert [t.number for t in s.trials(other.id)] == list(range(37))


def test_heartbeat_keeps_remote_owner_alive_until_silent(storage: Storage) -> None:
    s = _study(storage)
    storage.create_trials(s.id, [{"i": 0}], [0], OTHER)
    storage.create_trials(s.id, [{"i": 1}], [1], OWNER)
    always_alive = lambda owner: True  # noqa: E731 - a remote host's pid cannot be checked
    assert storage.requeue_stale(s.id, always_alive, stale_after_s=60) == []
    _raw(storage, "UPDATE trials SET heartbeat_at = heartbeat_at - 120")
    assert storage.heartbeat(s.id, OWNER) == 1     # OWNER beats again, OTHER stays silent
    assert storage.requeue_stale(s.id, always_alive, stale_after_s=60) == [0]
    by_number = {t.number: t for t in storage.trials(s.id)}
    assert by_number[0].status is TrialStatus.WAITING
    assert by_number[1].status is TrialStatus.RUNNING and by_number[1].owner == OWNER


def test_sqlite_busy_without_waiting_is_retried(db: Path, monkeypatch, caplog) -> None:
    """SQLite answers "database is locked" at once where its busy handler cannot wait
    (drivers opening a WAL file while another process closes it); the storage retries such
    an operation with backoff instead of failing it. Here the busy timeout is cut to 50 ms
    and another connection holds the file exclusively for 1.5 s."""
    import threading

    import experiments.storage as storage_module

    with Storage(f"sqlite:///{db}") as s:
        _study(s, "first")
    monkeypatch.setattr(storage_module, "SQLITE_BUSY_TIMEOUT_S", 0.05)
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        con = sqlite3.connect(db, isolation_level=None)
        con.execute("PRAGMA locking_mode = EXCLUSIVE")
        con.execute("BEGIN EXCLUSIVE")
        locked.set()
        release.wait(10)
        time.sleep(1.5)
        con.execute("COMMIT")
        con.close()

    t = threading.Thread(target=hold)
    t.start()
    try:
        locked.wait(10)
        release.set()                                # the lock goes 1.5 s from now
        with caplog.at_level("WARNING", logger="experiments.storage"), Storage(f"sqlite:///{db}") as s:
            _study(s, "second")                      # waits out the lock, then writes once
            assert [r.name for r in s.list_studies()] == ["first", "second"]
    finally:
        release.set()
        t.join(15)
    assert any("database is locked" in r.getMessage() for r in caplog.records)


def test_sqlite_locked_past_the_retry_timeout_is_a_resumable_error(db: Path, monkeypatch) -> None:
    """A file another process keeps locked for longer than ``retry_timeout_s`` ends the
    operation with :class:`StorageUnavailableError` saying so (not "lost the connection")."""
    import experiments.storage as storage_module
    from experiments.storage import StorageUnavailableError

    with Storage(f"sqlite:///{db}") as s:
        _study(s, "first")
    monkeypatch.setattr(storage_module, "SQLITE_BUSY_TIMEOUT_S", 0.05)
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("PRAGMA locking_mode = EXCLUSIVE")
        con.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StorageUnavailableError, match=r"stayed locked by another process for 0\.5 s "
                                                          r"\(database is locked\).*resumes"):
            Storage(f"sqlite:///{db}", retry_timeout_s=0.5)
    finally:
        con.execute("COMMIT")
        con.close()
