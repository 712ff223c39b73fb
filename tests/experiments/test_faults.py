"""The database going away in the middle of a study (issue 22, item 2).

* Storage-level: a write whose COMMIT succeeded but whose answer was lost (the server died
  in between) is retried without being applied twice -- trial numbers, claims, finishes
  and study creation each happen once. Non-transient errors are not retried.
* A sweep whose PostgreSQL connections are cut mid-study (through a TCP proxy that drops
  every connection and refuses new ones, as a stopped server does) retries with backoff,
  says so, and finishes with nothing lost or counted twice.
* A connection that stays down past ``--storage-retry-s`` ends ``coexplore run`` with exit
  status 3 and a clear message; the same command resumes the study when it is back.
* The real thing: the PostgreSQL *server* stopped and started while a sweep runs. This one
  restarts the server named by ``COEXPLORE_TEST_POSTGRES_URL``, which disconnects all its
  clients, so it runs only where that is allowed (``COEXPLORE_TEST_PG_RESTART=1``, which
  ``.ci/run`` sets for the server it started) and possible (root, ``service``, a server on
  this host); it holds the PostgreSQL lock exclusively meanwhile (see ``conftest.py``).

Every fault is triggered by an event (a trial gated in flight, a warning seen on the log),
never by a sleep of some length, so the tests hold on a loaded machine.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from design_space import DesignSpace, Integer, Real
from experiments import Study
from experiments.storage import Storage, StorageError, StorageUnavailableError, make_owner_token
from optimizer import TrialStatus
from tests.experiments import study_evaluators as ev
from tests.experiments.conftest import pg_base_url, pg_schema, pg_server_lock, subprocess_env

OWNER = make_owner_token()
OBJECTIVES = {"f1": "min", "f2": "min"}


def _space() -> DesignSpace:
    return DesignSpace(Real("x", -3.0, 3.0), Integer("y", 0, 4))


def _study_fields(**kw) -> dict:
    fields = dict(seed=1, objectives=OBJECTIVES, space={"p": 1}, config={}, config_hash="h",
                  manifest={})
    fields.update(kw)
    return fields


# ---------------------------------------------------------------- helpers


class TcpProxy:
    """Forwards ``127.0.0.1:port`` to ``target``. :meth:`cut` closes every connection and
    stops listening (new connections are refused, as by a stopped server); :meth:`restore`
    listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self.restore()

    def restore(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(64)
        sock.settimeout(0.05)
        self.port = sock.getsockname()[1]
        self._listener = sock
        self._acceptor = threading.Thread(target=self._accept, args=(sock,), daemon=True)
        self._acceptor.start()

    def cut(self) -> None:
        listener, self._listener = self._listener, None
        if self._acceptor is not None:
            self._acceptor.join()  # out of accept(): the socket really stops listening
        if listener is not None:
            listener.close()
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self.cut()

    def _accept(self, listener: socket.socket) -> None:
        while self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            client.settimeout(None)
            upstream.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # cut meanwhile
                    client.close()
                    upstream.close()
                    return
                self._conns |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)


def _proxied(url: str) -> tuple[TcpProxy, str]:
    u = sa.engine.make_url(url)
    proxy = TcpProxy((u.host or "localhost", u.port or 5432))
    return proxy, u.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)


class _LostAfterCommit:
    """Stands in for a Storage's engine: the next ``n`` write transactions commit, then
    report a lost connection -- as when the server dies between COMMIT and its answer."""

    def __init__(self, engine, n: int = 1, orig: Exception | None = None,
                 invalidated: bool = True) -> None:
        self.engine, self.n, self.raised = engine, n, 0
        self.orig = orig or ConnectionResetError("server closed the connection unexpectedly")
        self.invalidated = invalidated

    @contextlib.contextmanager
    def begin(self):
        with self.engine.begin() as conn:
            yield conn
        if self.n:
            self.n -= 1
            self.raised += 1
            raise sa.exc.OperationalError("COMMIT", None, self.orig,
                                          connection_invalidated=self.invalidated)

    def connect(self):
        return self.engine.connect()

    def dispose(self):
        self.engine.dispose()


# ---------------------------------------------------------------- storage level


def test_writes_whose_commit_answer_was_lost_apply_once(pg_url, caplog):
    st = Storage(pg_url, retry_timeout_s=30)
    real = st._engine
    try:
        rec = st.create_study("s", **_study_fields())
        st._engine = lost = _LostAfterCommit(real, n=1)
        with caplog.at_level(logging.WARNING, logger="experiments.storage"):
            other = st.create_study("s2", **_study_fields())   # not "already exists"
        assert other.name == "s2" and lost.raised == 1
        assert "unreachable" in caplog.text and "reachable again" in caplog.text

        lost.n = 1
        made = st.create_trials(rec.id, [{"i": 0}, {"i": 1}], [10, 11], OWNER)
        assert [t.number for t in made] == [0, 1] and lost.raised == 2
        assert [t.number for t in st.trials(rec.id)] == [0, 1]      # not four trials

        st.create_trials(rec.id, [{"i": 2}, {"i": 3}], [12, 13], OWNER, status=TrialStatus.WAITING)
        lost.n = 1
        claimed = st.claim_waiting(rec.id, OWNER, 1)
        assert [t.number for t in claimed] == [2] and lost.raised == 3
        assert st.status_counts(rec.id)[TrialStatus.WAITING] == 1  # trial 3 not claimed too

        lost.n = 1
        assert st.finish_trial(rec.id, 0, OWNER, TrialStatus.COMPLETE, metrics={"f1": 1.0})
        assert lost.raised == 4
        assert st.trial(rec.id, 0).status is TrialStatus.COMPLETE
        # a second, genuine finish of the same trial is still refused
        assert not st.finish_trial(rec.id, 0, OWNER, TrialStatus.COMPLETE, metrics={"f1": 2.0})
        assert st.trial(rec.id, 0).metrics == {"f1": 1.0}
    finally:
        st._engine = real
        st.close()


def test_only_lost_connections_are_retried(pg_url):
    st = Storage(pg_url, retry_timeout_s=30)
    real = st._engine
    try:
        rec = st.create_study("s", **_study_fields())

        class Refused(Exception):
            sqlstate = "23505"  # unique_violation: retrying cannot help

        st._engine = lost = _LostAfterCommit(real, n=5, orig=Refused("duplicate key"),
                                             invalidated=False)
        with pytest.raises(StorageError, match="duplicate key") as info:
            st.heartbeat(rec.id, OWNER)
        assert lost.raised == 1 and not isinstance(info.value, StorageUnavailableError)
    finally:
        st._engine = real
        st.close()
    quick = Storage(pg_url, retry_timeout_s=0)   # 0: a lost connection is an error at once
    quick._engine = _LostAfterCommit(quick._engine, n=5)
    with pytest.raises(StorageUnavailableError, match="the study resumes where it stopped"):
        quick.heartbeat(rec.id, OWNER)
    with pytest.raises(ValueError, match="retry_timeout_s"):
        Storage(pg_url, retry_timeout_s=-1)


def test_an_unreachable_server_at_start_is_an_error_at_once(pg_url, caplog):
    proxy, url = _proxied(pg_url)
    proxy.cut()                                     # nothing listens on that port now
    with caplog.at_level(logging.WARNING, logger="experiments.storage"), \
            pytest.raises(StorageError, match="database error") as info:
        Storage(url, retry_timeout_s=60)
    assert not isinstance(info.value, StorageUnavailableError)
    assert "Connection refused" in str(info.value)
    assert "unreachable" not in caplog.text         # opening is not retried


# ---------------------------------------------------------------- a sweep


def test_a_sweep_survives_its_connections_being_cut(pg_url, caplog):
    """Cut every connection while trial 5 is being evaluated; reconnect only after the
    driver has said twice that it is retrying. The sweep must finish by itself."""
    proxy, url = _proxied(pg_url)
    retries = threading.Event()

    class Seen(logging.Handler):
        def emit(self, record):
            if "unreachable" in record.getMessage() and "retry 2 " in record.getMessage():
                retries.set()

    def restore_after_retries():
        assert retries.wait(120)
        proxy.restore()

    calls = []

    def evaluator(p):
        calls.append(p)
        if len(calls) == 6:
            proxy.cut()
            threading.Thread(target=restore_after_retries, daemon=True).start()
        return ev.bowl(p)

    handler = Seen()
    logging.getLogger("experiments.storage").addHandler(handler)
    try:
        s = Study.create("cut", _space(), OBJECTIVES, evaluator,
                         storage=Storage(url, retry_timeout_s=120), seed=2)
        with caplog.at_level(logging.WARNING, logger="experiments.storage"):
            s.optimize(15, workers=1, executor="inline", progress=False)
    finally:
        logging.getLogger("experiments.storage").removeHandler(handler)
        proxy.close()
    assert retries.is_set()
    assert "reachable again" in caplog.text
    with Storage(pg_url) as st:
        trials = st.trials(st.get_study("cut").id)
    assert [t.number for t in trials] == list(range(15))
    assert all(t.status is TrialStatus.COMPLETE and t.attempts == 1 for t in trials)
    assert len(calls) == 15                                   # nothing evaluated twice


CONFIG = """
study: faults
storage: "{url}"
output: {out}
seed: 4
space:
  parameters:
    - {{name: x, type: real, low: -3.0, high: 3.0}}
    - {{name: y, type: integer, low: 0, high: 1000}}
evaluator: {{function: "tests.experiments.study_evaluators:gated_bowl", options: {{gate_dir: "{gate}", free_calls: 3}}}}
objectives: {{f1: min, f2: min}}
optimizer: random
budget: {{n_trials: {n}, workers: 1, executor: process}}
"""


def _cli(cfg: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", "run", str(cfg), "--no-progress", *extra],
        cwd=cfg.parent, env=subprocess_env(cfg.parent), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def wait_for_state(url: str, name: str, complete: int, running: int,
                   proc: subprocess.Popen) -> None:
    """Until the study holds ``complete`` COMPLETE and ``running`` RUNNING trials (with the
    gated evaluator: the free calls done, the next trials held in flight)."""
    deadline = time.monotonic() + 180
    with Storage(url) as st:
        while True:
            rec = st.find_study(name)
            if rec is not None:
                counts = st.status_counts(rec.id)
                if (counts[TrialStatus.COMPLETE], counts[TrialStatus.RUNNING]) == (complete, running):
                    return
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"never {complete} COMPLETE + {running} RUNNING"
            time.sleep(0.05)


def _trials(url: str, name: str):
    with Storage(url) as st:
        return st.trials(st.get_study(name).id)


def test_an_outage_past_the_retry_timeout_stops_and_the_same_command_resumes(pg_url, tmp_path):
    proxy, url = _proxied(pg_url)
    gate = tmp_path / "gate"
    gate.mkdir()
    cfg = tmp_path / "study.yaml"
    cfg.write_text(CONFIG.format(url=url, out=tmp_path / "out", gate=gate, n=10))
    try:
        proc = _cli(cfg, "--storage-retry-s", "2")
        wait_for_state(pg_url, "faults", 3, 1, proc)  # 3 done, the 4th held in flight
        proxy.cut()
        (gate / "release").touch()
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 3, (out, err)
        assert "retry 1 " in err                                   # it did retry first
        assert "could not get it back within 2 s" in err
        assert "the study is resumable" in err
        assert "Traceback" not in err
        before = _trials(pg_url, "faults")
        assert [t.status for t in before] == [TrialStatus.COMPLETE] * 3 + [TrialStatus.RUNNING]

        proxy.restore()
        proc = _cli(cfg, "--storage-retry-s", "2")                 # the same command
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, (out, err)
    finally:
        proxy.close()
    after = _trials(pg_url, "faults")
    assert [t.number for t in after] == list(range(10))
    assert all(t.status is TrialStatus.COMPLETE for t in after)
    assert [(t.params, t.metrics) for t in after[:3]] == [(t.params, t.metrics) for t in before[:3]]
    assert after[3].params == before[3].params and after[3].attempts == 2  # re-run, same point
    assert all(t.attempts == 1 for t in after if t.number != 3)


# ---------------------------------------------------------------- a real restart


def _restart_allowed(url: str) -> str | None:
    """Why the PostgreSQL server cannot be restarted here, or None."""
    if os.environ.get("COEXPLORE_TEST_PG_RESTART") != "1":
        return ("restarting PostgreSQL disconnects every client of the server: set "
                "COEXPLORE_TEST_PG_RESTART=1 to allow it (.ci/run does, for the server it starts)")
    if os.geteuid() != 0:
        return "restarting PostgreSQL with `service postgresql stop/start` needs root"
    if shutil.which("service") is None:
        return "no `service` command to restart PostgreSQL with"
    host = sa.engine.make_url(url).host or "localhost"
    if host not in ("localhost", "127.0.0.1", "::1"):
        return f"the PostgreSQL server is on {host!r}, not on this host"
    return None


def _service(action: str) -> None:
    subprocess.run(["service", "postgresql", action], check=True, capture_output=True, timeout=120)


def test_a_sweep_survives_a_postgresql_restart(tmp_path, tmp_path_factory):
    """Stop the server while a trial is in flight, start it again once the driver has said
    it is retrying: the sweep finishes by itself, each trial once, each evaluated once."""
    base = pg_base_url()
    why = _restart_allowed(base)
    if why:
        pytest.skip(why)
    with pg_server_lock(tmp_path_factory, exclusive=True), pg_schema(base) as url:
        gate = tmp_path / "gate"
        gate.mkdir()
        cfg = tmp_path / "study.yaml"
        cfg.write_text(CONFIG.format(url=url, out=tmp_path / "out", gate=gate, n=10))
        proc = _cli(cfg)
        lines: list[str] = []
        retrying = threading.Event()

        def read_stderr():
            for line in proc.stderr:
                lines.append(line)
                if "unreachable" in line:
                    retrying.set()

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        try:
            wait_for_state(url, "faults", 3, 1, proc)
            _service("stop")
            (gate / "release").touch()          # trial 3 finishes while the server is down
            assert retrying.wait(120), "".join(lines)
        finally:
            _service("start")
        out = proc.stdout.read()
        assert proc.wait(timeout=240) == 0, (out, "".join(lines))
        reader.join(10)
        err = "".join(lines)
        assert "unreachable" in err and "reachable again" in err
        trials = _trials(url, "faults")
        assert [t.number for t in trials] == list(range(10))
        assert all(t.status is TrialStatus.COMPLETE and t.attempts == 1 for t in trials)
        assert len(list(gate.glob("call-*"))) == 10               # each evaluated once
