"""Inputs that used to blow up or mislead, through the CLI: exit codes and messages.

Exit codes (experiments/cli.py): 2 for the user's mistake (one ``error:`` line), 3 for
the infrastructure (database unreachable, Dask lost, disk full: resumable).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import experiments.storage as storage_mod
from experiments.cli import app
from experiments.storage import Storage, StorageError, StorageFullError, normalize_url
from tests.experiments.conftest import subprocess_env
from tests.experiments.test_cli import GOOD, write

runner = CliRunner()


def _one_error_line(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


CFG = """\
study: s
storage: sqlite:///{db}
seed: {seed}
space:
  parameters:
    - {{name: rows, type: power_of_two, low: 2, high: 64}}
  constraints:
    - {{name: {cname}, expr: "{expr}"}}
evaluator: tests.experiments.study_evaluators:bowl
objectives: {{f1: min}}
"""


def _cfg(tmp_path: Path, seed="0", cname="pe", expr="rows <= 32") -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(CFG.format(db=tmp_path / "s.db", seed=seed, cname=cname, expr=expr))
    return p


# -- read-only commands create nothing ---------------------------------------------------
@pytest.mark.parametrize("command", [["status"], ["studies"], ["export"], ["report"], ["plot"],
                                     ["delete-study", "--study", "x", "--yes"]])
@pytest.mark.parametrize("form", ["path", "url"])
def test_read_only_commands_on_a_missing_storage_create_no_directory(tmp_path, command, form):
    missing = tmp_path / "no" / "such" / "dir" / "study.db"
    target = str(missing) if form == "path" else f"sqlite:///{missing}"
    r = runner.invoke(app, [command[0], target, *command[1:]])
    assert r.exit_code == 2, r.output
    assert "no such study storage" in _one_error_line(r.output)
    assert not (tmp_path / "no").exists()


def test_a_missing_path_with_a_newline_is_one_line(tmp_path):
    with pytest.raises(StorageError, match=r"^no such study storage: '.*\\n0'$"):
        Storage(f"sqlite:///{tmp_path}/x\n0", create=False)
    r = runner.invoke(app, ["status", f"sqlite:///{tmp_path}/x\n0"])
    assert r.exit_code == 2 and "\\n0'" in _one_error_line(r.output)


def test_storage_create_false_and_normalize_url_create_dirs_false(tmp_path):
    missing = tmp_path / "a" / "b.db"
    assert normalize_url(str(missing), create_dirs=False) == f"sqlite:///{missing}"
    assert normalize_url(f"sqlite:///{missing}", create_dirs=False) == f"sqlite:///{missing}"
    with pytest.raises(StorageError, match="no such study storage"):
        Storage(missing, create=False)
    assert not (tmp_path / "a").exists()
    Storage(missing).close()                    # the default still creates (run does)
    assert missing.exists()


# -- a WAL database on read-only media ---------------------------------------------------
def _can_mount_read_only() -> bool:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    r = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"],
                       capture_output=True, timeout=30)
    return r.returncode == 0


@pytest.mark.skipif(not _can_mount_read_only(),
                    reason="needs root and unshare to bind-mount a folder read-only in a private "
                           "mount namespace")
def test_a_wal_database_on_read_only_media_gets_an_accurate_message(tmp_path):
    media = tmp_path / "media"
    media.mkdir()
    db = media / "s.db"
    Storage(db).close()
    with contextlib.closing(sqlite3.connect(db)) as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert not Path(f"{db}-shm").exists()
    # bind the folder read-only in a private mount namespace (nothing leaks to the host)
    script = (f"mount --bind {media} {media} && mount -o remount,bind,ro {media} && "
              f"{sys.executable} -m experiments.cli status {db}")
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                       env=subprocess_env(tmp_path), timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    line = _one_error_line(r.stderr)
    assert "WAL-mode SQLite database and is on a read-only file system" in line
    assert "s.db-shm" in line and "Copy the file to a writable folder" in line
    assert "unable to open database file" not in line


# -- seeds ---------------------------------------------------------------------------------
@pytest.mark.parametrize("seed, fragment", [
    ("-5", "greater than or equal to 0 (got -5)"),
    (str(10**29), "less than or equal to 9223372036854775807"),
    ("1e29", "valid integer (got '1e29')"),
    ("1.0e+29", "valid integer (got 1e+29)"),
    ("true", "valid integer (got True)"),
    ("'3'", "valid integer (got '3')"),
])
def test_seeds_that_run_cannot_use_are_refused_by_validate(tmp_path, seed, fragment):
    r = runner.invoke(app, ["validate", str(_cfg(tmp_path, seed=seed))])
    assert r.exit_code == 2, r.output
    line = _one_error_line(r.output)
    assert ":3: seed:" in line and fragment in line


def test_seed_option_is_bounded(tmp_path):
    cfg = _cfg(tmp_path)
    for bad in ("-5", str(2**63)):
        r = runner.invoke(app, ["run", str(cfg), "--seed", bad, "--n-trials", "1", "--no-progress"])
        assert r.exit_code == 2 and "--seed" in r.output, r.output
    assert not (tmp_path / "s.db").exists()
    assert runner.invoke(app, ["validate", str(_cfg(tmp_path, seed=str(2**63 - 1)))]).exit_code == 0


# -- names ---------------------------------------------------------------------------------
def test_constraint_name_null_is_refused_not_none(tmp_path):
    r = runner.invoke(app, ["validate", str(_cfg(tmp_path, cname="null"))])
    assert r.exit_code == 2, r.output
    assert "space.constraints[0].name: constraint name must be a non-empty string, got None" in \
        _one_error_line(r.output)


def test_parameter_key_null_is_refused_not_none(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("study: s\nspace:\n  parameters:\n    null: {type: integer, low: 0, high: 3}\n"
                 "evaluator: tests.experiments.study_evaluators:bowl\nobjectives: {f1: min}\n")
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2, r.output
    assert "parameter name must be a string, got None" in _one_error_line(r.output)


# -- file contents -------------------------------------------------------------------------
def test_a_config_that_is_not_utf8_names_the_file_and_line(tmp_path):
    p = tmp_path / "latin1.yaml"
    p.write_bytes(_cfg(tmp_path).read_text().replace("s.db", "s\u00e9.db").encode("latin-1"))
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2, r.output
    assert _one_error_line(r.output).startswith(f"error: {p}:2: not UTF-8 text: byte 0xe9")


def test_yaml_bomb_and_cycle_exit_2_fast(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    for name, text in [("bomb", "\n".join(lines) + "\n"), ("cycle", "study: &s [*s]\n")]:
        p = tmp_path / f"{name}.yaml"
        p.write_text(text)
        t0 = time.process_time()
        r = runner.invoke(app, ["validate", str(p)])
        assert time.process_time() - t0 < 2.0
        assert r.exit_code == 2, r.output
        assert _one_error_line(r.output).startswith(f"error: {p}:")


@pytest.mark.parametrize("expr, fragment", [
    ("rows ** 64 > 0", "constraint 'pe': integer overflow: 2 ** 64 is outside int64"),
    ("+".join(["rows"] * 300) + " > 0", "nested more than 200 levels"),
    ("not " * 2400 + "rows", "constraint 'pe'"),
    ("(1, 2) * rows > 0", "only allowed right of 'in'"),
])
def test_expressions_that_overflow_or_nest_too_deep_exit_2_with_one_line(tmp_path, expr, fragment):
    r = runner.invoke(app, ["validate", str(_cfg(tmp_path, expr=expr))])
    assert r.exit_code == 2, r.output
    assert fragment in _one_error_line(r.output)
    assert "0 feasible points" not in r.output


# -- a full disk is exit 3 (resumable), not 2 ----------------------------------------------
def _fill_at(monkeypatch, pages: int) -> None:
    """SQLite's own SQLITE_FULL once the file would grow past ``pages`` pages."""
    real = storage_mod._sqlite_on_connect

    def full(conn, record):
        real(conn, record)
        conn.execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(storage_mod, "_sqlite_on_connect", full)


def test_full_disk_during_a_run_exits_3(tmp_path, monkeypatch):
    cfg = write(tmp_path)
    db = tmp_path / "cli.db"
    Storage(db).close()
    with contextlib.closing(sqlite3.connect(db)) as c:
        pages = c.execute("PRAGMA page_count").fetchone()[0]
    _fill_at(monkeypatch, pages + 3)            # room for the study row and a few trials
    r = runner.invoke(app, ["run", str(cfg), "--no-progress", "--n-trials", "300"])
    assert r.exit_code == 3, r.output
    assert "the disk (or quota) is full" in _one_error_line(r.output)
    assert "free disk space, then run the same command again" in r.output
    with contextlib.closing(sqlite3.connect(db)) as c:
        done = c.execute("SELECT count(*) FROM trials WHERE status = 'COMPLETE'").fetchone()[0]
    assert 0 < done < 300


@pytest.mark.slow
def test_full_disk_exits_3_keeps_trials_and_resumes(tmp_path, monkeypatch):
    cfg = write(tmp_path)
    db = tmp_path / "cli.db"
    r = runner.invoke(app, ["run", str(cfg), "--no-progress", "--n-trials", "2"])
    assert r.exit_code == 0, r.output
    with contextlib.closing(sqlite3.connect(db)) as c:
        pages = c.execute("PRAGMA page_count").fetchone()[0]
    real = storage_mod._sqlite_on_connect

    def full(conn, record):          # SQLite's own SQLITE_FULL once the file would grow
        real(conn, record)
        conn.execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(storage_mod, "_sqlite_on_connect", full)
    r = runner.invoke(app, ["run", str(cfg), "--no-progress", "--n-trials", "300"])
    assert r.exit_code == 3, r.output
    assert "the disk (or quota) is full" in _one_error_line(r.output)
    assert "free disk space, then run the same command again" in r.output
    with contextlib.closing(sqlite3.connect(db)) as c:
        done = c.execute("SELECT count(*) FROM trials WHERE status = 'COMPLETE'").fetchone()[0]
    assert 2 <= done < 300
    monkeypatch.setattr(storage_mod, "_sqlite_on_connect", real)      # space freed
    r = runner.invoke(app, ["run", str(cfg), "--no-progress", "--n-trials", str(done + 2)])
    assert r.exit_code == 0, r.output
    assert f"{done} finished trial(s), target {done + 2}" in r.output


def test_storage_full_error_is_raised_for_sqlite_full(tmp_path, monkeypatch):
    st = Storage(tmp_path / "f.db")
    rec = st.create_study("s", seed=0, objectives={"f": "min"}, space={}, config={}, config_hash="h",
                          manifest={})
    with contextlib.closing(sqlite3.connect(tmp_path / "f.db")) as c:
        pages = c.execute("PRAGMA page_count").fetchone()[0]
    real = storage_mod._sqlite_on_connect
    monkeypatch.setattr(storage_mod, "_sqlite_on_connect",
                        lambda conn, r: (real(conn, r), conn.execute(f"PRAGMA max_page_count = {pages}")))
    st2 = Storage(tmp_path / "f.db")
    with pytest.raises(StorageFullError, match="the disk \\(or quota\\) is full"):
        for i in range(10_000):
            st2.create_trials(rec.id, [{"x": "y" * 200, "i": i}], [i], owner="o")
    st.close()
    st2.close()


def test_full_disk_while_writing_exports_exits_3(tmp_path, monkeypatch):
    import errno

    import experiments.study as study_mod

    cfg = write(tmp_path)

    def no_space(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out" / "trials.csv"))

    monkeypatch.setattr(study_mod.Study, "export", no_space)
    r = runner.invoke(app, ["run", str(cfg), "--no-progress", "--n-trials", "2"])
    assert r.exit_code == 3, r.output
    assert "No space left on device" in _one_error_line(r.output)
    assert "Traceback" not in r.output


@pytest.fixture(scope="module")
def finished_study(tmp_path_factory):
    d = tmp_path_factory.mktemp("finished")
    r = runner.invoke(app, ["run", str(write(d)), "--no-progress", "--n-trials", "3"])
    assert r.exit_code == 0, r.output
    return d


def _no_space(*_a, **_k):
    import errno

    raise OSError(errno.ENOSPC, "No space left on device", "/full/disk/file")


@pytest.mark.parametrize("command", ["export", "export-json", "plot", "report", "show", "map"])
def test_a_full_disk_ends_a_writing_command_with_one_line_and_status_3(
        finished_study, tmp_path, monkeypatch, command):
    # Before: export, plot, report, show -o and map let the OSError (ENOSPC) out as a
    # traceback with status 1; a full disk is not the user's mistake, so 3 (as `run`).
    import matplotlib.figure

    from tests.experiments.test_map_command import PROBLEM, TL_ARCH, TL_ERT

    db = str(finished_study / "cli.db")
    argv = {"export": ["export", db, "-o", str(tmp_path / "t.csv")],
            "export-json": ["export", db, "-o", str(tmp_path / "t.json")],
            "plot": ["plot", db, "-o", str(tmp_path / "p")],
            "report": ["report", db, "-o", str(tmp_path / "r.html")],
            "show": ["show", db, "0", "--format", "json", "-o", str(tmp_path / "t0.json")],
            "map": ["map", str(tmp_path / "arch.yaml"), str(tmp_path / "problem.yaml"),
                    "--ert", str(tmp_path / "ERT.yaml"), "-o", str(tmp_path / "m.yaml")]}[command]
    for name, text in (("arch.yaml", TL_ARCH), ("problem.yaml", PROBLEM), ("ERT.yaml", TL_ERT)):
        (tmp_path / name).write_text(text)
    import experiments.show as show_mod
    import experiments.study as study_mod

    # this study's evaluator stores no mappings to show: what show writes is not the point
    monkeypatch.setattr(show_mod, "show_text", lambda *a: "the mappings")
    monkeypatch.setattr(Path, "write_text", _no_space)
    monkeypatch.setattr(Path, "write_bytes", _no_space)
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", _no_space)
    monkeypatch.setattr(study_mod, "write_table", _no_space)
    r = runner.invoke(app, argv)
    assert r.exit_code == 3, r.output
    assert "No space left on device" in _one_error_line(r.output)
    assert "free disk space" in r.output
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".coexplore-")]   # no temp left


def test_a_path_the_os_refuses_to_write_is_one_line_and_status_2(finished_study, tmp_path):
    (tmp_path / "afile").write_text("")
    for argv in (["export", str(finished_study / "cli.db"), "-o", str(tmp_path / "afile" / "t.csv")],
                 ["report", str(finished_study / "cli.db"), "-o", str(tmp_path)]):
        r = runner.invoke(app, argv)
        assert r.exit_code == 2, r.output
        _one_error_line(r.output)


def test_good_config_still_runs(tmp_path):
    r = runner.invoke(app, ["validate", str(write(tmp_path, GOOD.format(db=tmp_path / "g.db",
                                                                      out=tmp_path / "o")))])
    assert r.exit_code == 0, r.output


# -- storage URLs the fuzzer found --------------------------------------------------------
@pytest.mark.parametrize("text, fragment", [
    ("postgresql://u@h:abc/db", "malformed storage URL"),            # was ValueError
    ("postgresql://[::1/db", "malformed storage URL"),
    ("a\x00.db", "embedded null byte"),                                # was ValueError
    ("sqlite:///x\x00.db", "embedded null byte"),
    ("x" * 5000 + ".db", "File name too long"),                        # was OSError
    ("~nobody-such-user/x.db", "not usable"),                          # was RuntimeError
    ("sqlite:///\udc80.db", "is not valid text: surrogates not allowed"),   # was UnicodeEncodeError
    ("\udc80.db", "is not valid text"),
    ("postgresql+nodriver:///\udc80", "is not valid text"),
    ("sqlite://0", "a SQLite URL names no host"),                      # was a 5-line ArgumentError
    ("sqlite://host/x.db", "a SQLite URL names no host"),
])
def test_storage_paths_the_os_refuses_are_storage_errors(tmp_path, monkeypatch, text, fragment):
    monkeypatch.chdir(tmp_path)
    for create_dirs in (False, True):
        with pytest.raises(StorageError, match=fragment):
            normalize_url(text, create_dirs=create_dirs)
    assert list(tmp_path.iterdir()) == []


def test_a_sqlite_url_path_is_taken_literally_as_sqlite_does(tmp_path, monkeypatch):
    # sqlite:///~ is the file "~" in the working directory for SQLite; a read-only open
    # looked for the home folder instead, found it, and SQLite then created ./~
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StorageError, match="no such study storage: ~"):
        Storage("sqlite:///~", create=False)
    assert list(tmp_path.iterdir()) == []
    Storage("sqlite:///~/sub/x.db").close()       # created where SQLite opens it
    assert (tmp_path / "~" / "sub" / "x.db").is_file()


def test_a_read_only_open_of_a_uri_mode_url_creates_nothing(tmp_path, monkeypatch):
    # sqlite:///db?uri=true: SQLite opens the file "db" (creating it) in URI mode
    monkeypatch.chdir(tmp_path)
    for url in ("sqlite:///db?uri=true", "sqlite:///file:db?uri=true",
                f"sqlite:///file://{tmp_path}/db?uri=true"):
        with pytest.raises(StorageError, match="no such study storage"):
            Storage(url, create=False)
    assert list(tmp_path.iterdir()) == []
    Storage("sqlite:///file:db?mode=memory&uri=true", create=False).close()   # no file at all
    assert list(tmp_path.iterdir()) == []
    Storage("sqlite:///db.db").close()
    Storage("sqlite:///file:db.db?mode=ro&uri=true", create=False).close()


def test_scheme_case_and_unknown_drivers(tmp_path):
    url = normalize_url(f"SQLITE:///{tmp_path / 'u.db'}")
    assert url == f"sqlite:///{tmp_path / 'u.db'}"
    Storage(url).close()                                              # was NoSuchModuleError
    assert normalize_url("Postgres://h/db") == "postgresql://h/db"
    with pytest.raises(StorageError, match=r"unknown database driver 'postgresql\+nodriver'"):
        storage_mod.make_engine("postgresql+nodriver://h/db")


def test_the_cli_never_prints_a_storage_password(tmp_path, pg_url):
    import sqlalchemy as sa

    password = sa.engine.make_url(pg_url).password
    if not password:
        pytest.skip("the test server's URL has no password")
    cfg = write(tmp_path)
    r = runner.invoke(app, ["run", str(cfg), "--no-progress", "--n-trials", "2", "--storage", pg_url])
    assert r.exit_code == 0, r.output
    assert "study storage:  postgresql" in r.output
    r2 = runner.invoke(app, ["studies", pg_url])
    r3 = runner.invoke(app, ["delete-study", pg_url, "--study", "cli", "--yes"])
    # The CI server's password equals its user and database names, so the test looks for the
    # password where a URL or a connection-argument dump would carry it, not for the bare word.
    leaks = (f":{password}@", f"password={password}", f"'password': '{password}'")
    for out in (r.output, r2.output, r3.output, (tmp_path / "out" / "run.log").read_text()):
        assert not [leak for leak in leaks if leak in out], out
    assert ":***@" in r.output


def test_resume_messages_and_logs_never_carry_a_storage_password(tmp_path, pg_url, caplog):
    # Study.create / Study.load named the storage by its raw URL in the "resuming" log line
    # and in the errors of a mismatched resume or an ambiguous study, which the CLI prints.
    import logging

    import sqlalchemy as sa

    from experiments.study import Study

    password = sa.engine.make_url(pg_url).password
    if not password:
        pytest.skip("the test server's URL has no password")
    leaks = (f":{password}@", f"password={password}", f"'password': '{password}'")
    cfg = write(tmp_path)
    r1 = runner.invoke(app, ["run", str(cfg), "--no-progress", "--n-trials", "2", "--storage", pg_url])
    assert r1.exit_code == 0, r1.output
    r2 = runner.invoke(app, ["-v", "run", str(cfg), "--no-progress", "--n-trials", "2", "--storage", pg_url])
    assert r2.exit_code == 0, r2.output
    assert "resuming study 'cli' from postgresql" in r2.output
    changed = write(tmp_path, GOOD.replace("{{f1: min, f2: min}}", "{{f1: max, f2: min}}").format(
        db=tmp_path / "cli.db", out=tmp_path / "out"))
    r3 = runner.invoke(app, ["run", str(changed), "--no-progress", "--n-trials", "2", "--storage", pg_url])
    assert r3.exit_code == 2, r3.output
    assert "was created with a different configuration" in _one_error_line(r3.output)
    runner.invoke(app, ["run", str(cfg), "--no-progress", "--n-trials", "1", "--storage", pg_url,
                        "--study", "second"])
    with caplog.at_level(logging.INFO, logger="experiments.study"), pytest.raises(ValueError) as two:
        Study.load(None, pg_url)
    assert "holds 2 studies" in str(two.value)
    texts = [r1.output, r2.output, r3.output, str(two.value), caplog.text,
             (tmp_path / "out" / "run.log").read_text()]
    for out in texts:
        assert not [leak for leak in leaks if leak in out], out
    assert ":***@" in r2.output and ":***@" in r3.output and ":***@" in str(two.value)
