"""The record store (experiments/records.py): keys, atomic writes, two writers, resume,
fallbacks, and refusal of anything that is not plain JSON."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from experiments import records
from experiments.records import RecordStore, plain, record_key

SETTINGS = {"workload": "dqn@32", "seed": 3, "mapper": {"name": "exact", "max_nodes": 3_000_000}}


# ------------------------------------------------------------------------ keys
def test_key_is_canonical_in_the_settings_order_and_readable():
    a = record_key("shi2020.search", SETTINGS)
    b = record_key("shi2020.search", {"mapper": {"max_nodes": 3_000_000, "name": "exact"}, "seed": 3,
                                      "workload": "dqn@32"})
    assert a == b
    kind, name = a.split("/")
    label, digest = name.split("~")
    assert kind == "shi2020.search" and label == "3,dqn@32" and len(digest) == 16
    assert all(c in "0123456789abcdef" for c in digest)


@pytest.mark.parametrize("other", [
    {**SETTINGS, "seed": 4},
    {**SETTINGS, "mapper": {"name": "exact"}},
    {**SETTINGS, "seed": 3.0},            # 3 and 3.0 are different JSON
    {k: v for k, v in SETTINGS.items() if k != "seed"},
])
def test_key_changes_with_any_setting(other):
    assert record_key("shi2020.search", other) != record_key("shi2020.search", SETTINGS)


def test_key_depends_on_the_kind_and_refuses_bad_kinds():
    assert record_key("a.search", SETTINGS) != record_key("b.search", SETTINGS)
    for bad in ("", "A", "x/y", "../up", "a b"):
        with pytest.raises(ValueError):
            record_key(bad, SETTINGS)


def test_the_label_carries_no_path_separators(tmp_path):
    key = record_key("k", {"spec": "resnet50[0:4]/../../etc", "x": "a b"})
    assert key.count("/") == 1 and " " not in key
    path = RecordStore(tmp_path).path(key)
    assert path.parent == tmp_path / "k" and path.resolve().is_relative_to(tmp_path.resolve())
    with pytest.raises(ValueError):
        RecordStore(tmp_path).path("k/../../x")


# ------------------------------------------------------------------------ safety
@pytest.mark.parametrize("bad", [(1, 2), np.float64(1.0), np.int64(1), object(), {1: "a"}, {"a": {2.5}},
                                 b"bytes", [1, {"x": lambda: 0}]])
def test_non_json_values_are_refused_and_nothing_is_written(tmp_path, bad):
    store = RecordStore(tmp_path)
    with pytest.raises(TypeError):
        store.put("k", {"i": 1}, bad)
    with pytest.raises(TypeError):
        store.put("k", {"i": bad}, 1)
    assert store.keys() == [] and not list(tmp_path.rglob("*.tmp-*"))


def test_plain_converts_numpy_and_tuples():
    out = plain({"a": (np.float64(1.5), np.int64(2)), "b": np.arange(2), "c": np.bool_(True)})
    assert out == {"a": [1.5, 2], "b": [0, 1], "c": True}
    assert type(out["a"][1]) is int and type(out["a"][0]) is float
    records.check_plain(out)


def test_a_record_is_plain_json_on_disk_with_its_provenance(tmp_path):
    store = RecordStore(tmp_path)
    rec = store.put("k", SETTINGS, {"curve": [float("inf"), 2.0]}, wall_s=1.5, cpu_s=1.25,
                    trials=records.trials_ref("dqn-iso-s0", [0, 1], "sqlite:///x.db"))
    data = json.loads(store.path(rec.key).read_text())
    assert data == {"schema": records.SCHEMA, "key": rec.key, "kind": "k", "settings": SETTINGS,
                    "value": {"curve": [float("inf"), 2.0]}, "wall_s": 1.5, "cpu_s": 1.25,
                    "trials": {"study": "dqn-iso-s0", "storage": "sqlite:///x.db", "numbers": [0, 1]},
                    "note": None}
    assert store.get("k", SETTINGS) == {"curve": [float("inf"), 2.0]}


def test_an_edited_or_misplaced_record_is_refused(tmp_path):
    store = RecordStore(tmp_path)
    rec = store.put("k", SETTINGS, 1)
    path = store.path(rec.key)
    data = json.loads(path.read_text())
    data["settings"]["seed"] = 4                       # the file no longer matches its key
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="do not give its key"):
        store.get("k", SETTINGS)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a"):
        store.get("k", SETTINGS)


def test_bad_seconds_are_refused(tmp_path):
    with pytest.raises(ValueError):
        RecordStore(tmp_path).put("k", {}, 1, wall_s=-1.0)
    with pytest.raises(ValueError):
        RecordStore(tmp_path).put("k", {}, 1, cpu_s=float("nan"))


# ------------------------------------------------------------------------ resume, fallbacks
def test_compute_runs_once_and_records_its_time(tmp_path):
    calls = []

    def work():
        calls.append(1)
        sum(range(200_000))
        return {"x": 1}

    store = RecordStore(tmp_path)
    assert store.compute("k", SETTINGS, work) == {"x": 1}
    assert RecordStore(tmp_path).compute("k", SETTINGS, work) == {"x": 1}      # a new process, say
    assert calls == [1]
    rec = store.record("k", SETTINGS)
    assert rec.wall_s > 0 and rec.cpu_s > 0


def test_first_writer_wins_and_the_second_is_kept_as_a_duplicate(tmp_path):
    store = RecordStore(tmp_path)
    first = store.put("k", SETTINGS, "first")
    again = store.put("k", SETTINGS, "second")
    assert again.value == "first" and store.get("k", SETTINGS) == "first"
    (dup,) = store.duplicates()
    assert json.loads(dup.read_text())["value"] == "second"
    assert store.keys() == [first.key]
    assert store.put("k", SETTINGS, "third", replace=True).value == "third"
    assert store.get("k", SETTINGS) == "third"


def test_fallback_records_are_copied_into_the_run_store(tmp_path):
    committed = RecordStore(tmp_path / "committed")
    committed.put("k", SETTINGS, {"v": 1}, wall_s=2.0)
    run = RecordStore(tmp_path / "run", fallbacks=[tmp_path / "committed"])
    assert run.keys() == []
    assert run.get("k", SETTINGS) == {"v": 1}
    assert run.keys() == committed.keys()
    assert RecordStore(tmp_path / "run").record("k", SETTINGS).wall_s == 2.0   # now without the fallback
    assert run.get("k", {**SETTINGS, "seed": 9}, "missing") == "missing"


# ------------------------------------------------------------------------ crashes
_CHILD = r"""
import os, sys
from experiments.records import RecordStore
from experiments import records
store = RecordStore(sys.argv[1])
store.put("k", {"i": 1}, "old")
real = os.replace
def die(*a):               # killed after the new record is written, before it is published
    os._exit(9)
records.os.replace = die
store.put("k", {"i": 1}, "x" * 100_000, replace=True)
"""


def test_a_writer_killed_before_publishing_leaves_the_old_record(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    r = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path)], env=env, timeout=60)
    assert r.returncode == 9
    store = RecordStore(tmp_path)
    assert store.get("k", {"i": 1}) == "old"
    assert len(store.clean()) == 1                    # the unpublished temporary, now removed
    assert not list(tmp_path.rglob(".*"))


_LOOP = r"""
import sys
from experiments.records import RecordStore
store = RecordStore(sys.argv[1])
i = 0
while True:
    i += 1
    store.put("k", {"i": 1}, {"n": i, "pad": "y" * 200_000}, replace=True)
    store.put("k", {"i": i}, {"n": i, "pad": "z" * 50_000})
"""


def test_kill_9_at_any_moment_never_leaves_half_a_record(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    rng = np.random.default_rng(0)
    for _ in range(5):
        p = subprocess.Popen([sys.executable, "-c", _LOOP, str(tmp_path)], env=env)
        time.sleep(0.8 + float(rng.uniform(0, 0.4)))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        store = RecordStore(tmp_path)
        for rec in store:                              # every published record reads back whole
            assert len(rec.value["pad"]) in (200_000, 50_000)
        assert store.get("k", {"i": 1})["n"] >= 1
    assert len(RecordStore(tmp_path).keys("k")) > 2


# ------------------------------------------------------------------------ two processes
def _writer(root: str, who: int, barrier, n: int) -> None:
    store = RecordStore(root)
    barrier.wait()
    for i in range(n):
        store.put("shared", {"i": i}, {"who": who, "i": i})           # both write every key
        store.put("own", {"who": who, "i": i}, {"who": who, "i": i})   # and keys of their own


def test_two_processes_writing_the_same_keys(tmp_path):
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    n = 40
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), who, barrier, n)) for who in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = RecordStore(tmp_path)
    assert len(store.keys("own")) == 2 * n
    assert len(store.keys("shared")) == n
    for i in range(n):
        assert store.get("shared", {"i": i})["i"] == i
    dups = store.duplicates()
    assert len(dups) == n                              # the other writer's record of each shared key
    assert all(json.loads(d.read_text())["value"]["i"] in range(n) for d in dups)
    assert not list(tmp_path.rglob(".*.tmp-*"))
