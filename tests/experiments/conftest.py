"""Storage back-ends for the experiments tests.

SQLite always runs. PostgreSQL runs against a real server when
``COEXPLORE_TEST_POSTGRES_URL`` names one (``.ci/run`` installs and starts a local server
and sets it); each test gets its own schema, dropped afterwards, so parallel test
workers never see each other's tables. Without the variable the PostgreSQL cases skip
with a message that says how to enable them.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

PG_ENV = "COEXPLORE_TEST_POSTGRES_URL"


@pytest.fixture
def pg_url():
    """A PostgreSQL URL whose ``search_path`` is a fresh, private schema."""
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"PostgreSQL tests need a server: set {PG_ENV}="
                    "postgresql+psycopg://user:password@host:5432/db (.ci/run starts one)")
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


@pytest.fixture(params=["sqlite", "postgresql"])
def storage_url(request, tmp_path: Path) -> str:
    """The URL of an empty database on each back-end."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return request.getfixturevalue("pg_url")
