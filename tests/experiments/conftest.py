"""Storage back-ends for the experiments tests.

SQLite always runs. PostgreSQL runs against a real server when
``COEXPLORE_TEST_POSTGRES_URL`` names one (``.ci/run`` installs and starts a local server
and sets it); each test gets its own schema, dropped afterwards, so parallel test
workers never see each other's tables. Without the variable the PostgreSQL cases skip
with a message that says how to enable them.

One test restarts that server (``test_faults.py``); every test that uses it holds a shared
lock on a file in this session's pytest temporary directory while it runs, and the
restart test holds it exclusively, so that no other test (in any xdist worker) loses its
connections to the restart.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_ENV = "COEXPLORE_TEST_POSTGRES_URL"
ROOT = Path(__file__).resolve().parents[2]
# room that multiprocessing needs under TMPDIR for a forkserver socket, within the
# 107-byte limit of a Unix socket path: "/pymp-xxxxxxxx/listener-xxxxxxxx"
_SOCKET_SUFFIX_BYTES = 32


def subprocess_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment for a coexplore process that a test starts: the repository
    importable, and its temporary files in the test's folder -- multiprocessing's
    ``pymp-*`` directories (which a SIGKILLed driver cannot remove) when the folder's path
    leaves room for a socket name, and Dask's scratch space."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), DASK_TEMPORARY_DIRECTORY=str(tmp_path), **extra)
    if len(os.fsencode(str(tmp_path))) + _SOCKET_SUFFIX_BYTES < 107:
        env["TMPDIR"] = str(tmp_path)
    return env


def pg_base_url() -> str:
    """The server's URL, or a skip that says how to enable the PostgreSQL tests."""
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"PostgreSQL tests need a server: set {PG_ENV}="
                    "postgresql+psycopg://user:password@host:5432/db (.ci/run starts one)")
    return base


@contextlib.contextmanager
def pg_schema(base: str) -> Iterator[str]:
    """A URL on ``base`` whose ``search_path`` is a fresh schema, dropped afterwards."""
    import sqlalchemy as sa

    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base, poolclass=sa.pool.NullPool)
    with admin.begin() as conn:  # a set-but-unreachable server fails here, loudly
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = sa.engine.make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@contextlib.contextmanager
def pg_server_lock(tmp_path_factory: pytest.TempPathFactory, exclusive: bool) -> Iterator[None]:
    """Shared (a test using the server) or exclusive (a test restarting it) file lock,
    common to every xdist worker of this session."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's directory, above each worker's own
    with open(root / "coexplore-postgres.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@pytest.fixture
def pg_lock(tmp_path_factory):
    """Hold the shared PostgreSQL lock for the whole test (see the module docstring)."""
    with pg_server_lock(tmp_path_factory, exclusive=False):
        yield


@pytest.fixture
def pg_url(pg_lock):
    """A PostgreSQL URL whose ``search_path`` is a fresh, private schema."""
    with pg_schema(pg_base_url()) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def storage_url(request, tmp_path: Path) -> str:
    """The URL of an empty database on each back-end."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return request.getfixturevalue("pg_url")
