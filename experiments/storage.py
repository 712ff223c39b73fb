"""Study and trial storage on a relational database (SQLite embedded default).

Built on SQLAlchemy Core so that the same code serves ``sqlite:///path.db`` today and
``postgresql://...`` for studies shared between hosts. Only the driver process writes.

Schema (two tables):

* ``studies``: id, name (unique), seed, objectives (JSON), space (JSON), config (JSON),
  config_hash, manifest (JSON), created_at.
* ``trials``: id, study_id, number (unique per study), params (JSON), status, metrics
  (JSON), constraints (JSON), reason, traceback, wall_time_s, cpu_time_s, seed, owner, attempts,
  created_at, started_at, finished_at, heartbeat_at, info (JSON: the evaluator's
  ``Evaluation.info``, e.g. a per-layer breakdown; NULL when it gave none).

Stores made by an earlier version lack the later columns (``heartbeat_at``, ``info``,
``cpu_time_s``);
opening one adds them (:func:`_migrate`, additive only), so old databases keep working.

Durability: every state change is one transaction. A trial is inserted RUNNING (with the
driver's ``owner`` token) before it is evaluated, and updated to COMPLETE / INFEASIBLE /
FAILED after. A finish is only accepted from the trial's current owner while it is
RUNNING, so a trial can never complete twice. Trials left RUNNING by a dead owner are
re-queued as WAITING by :meth:`Storage.requeue_stale` and claimed again with the same
parameters and number. SQLite runs in WAL mode with ``BEGIN IMMEDIATE`` transactions.

Details:

* **Transactions.** Every public write method is exactly one ``engine.begin()`` block.
  On SQLite the driver's own transaction handling is switched off
  (``isolation_level = None``) and SQLAlchemy's ``begin`` event emits ``BEGIN IMMEDIATE``,
  so a writer takes the database write lock *before* it reads (e.g. ``max(number)``) and
  two processes can never assign the same trial number. Reads use a plain (deferred)
  ``BEGIN`` and, thanks to WAL, never block or get blocked by the writer. Connections
  run with ``synchronous=NORMAL``, ``foreign_keys=ON`` and a 30 s busy timeout. File
  databases use :class:`~sqlalchemy.pool.NullPool`: no connection outlives an operation,
  so forked children never share one and :meth:`Storage.close` releases the file.
* **PostgreSQL.** Plain engine semantics (READ COMMITTED); number assignment locks the
  study row (``SELECT ... FOR UPDATE``) before computing ``max(number)``, and
  :meth:`Storage.claim_waiting` uses ``FOR UPDATE SKIP LOCKED``.
* **Drivers starting together.** Creating the tables takes a transaction-level advisory
  lock on PostgreSQL (on SQLite ``BEGIN IMMEDIATE`` already serializes it), and
  :meth:`Storage.open_or_create_study` inserts the study with ``ON CONFLICT DO NOTHING``
  (PostgreSQL) or under the write lock (SQLite): any number of processes opening the same
  new study at once get the one study, created once.
* **Lost connections (PostgreSQL).** Every operation is one transaction run by
  :meth:`Storage._run`. When the server goes away (restarted, network down) the
  transaction is run again on a new connection with exponential backoff (0.5 s doubling
  to 8 s, jittered), each retry logged as a warning, for up to ``retry_timeout_s``
  (default :data:`STORAGE_RETRY_TIMEOUT_S`, 120 s); then
  :class:`StorageUnavailableError`. Only errors that mean "connection lost / server not
  ready" are retried (no SQLSTATE, class 08, 57P01-57P03, 40001, 40P01, 53300), never a
  bad password or a constraint violation; opening a storage is not retried either. A
  write whose COMMIT went through but whose answer was lost must not be applied twice:
  each write recognizes its own earlier attempt on retry (rows it created or claimed
  carry its timestamp and owner) and returns what that attempt did. ``pool_pre_ping``
  replaces pooled connections that died meanwhile; libpq's ``connect_timeout`` (10 s)
  and TCP keepalives bound how long a dead peer can hold a connection.
* **A busy SQLite file.** SQLite waits for a lock itself (the busy timeout), except where
  waiting could deadlock; there it answers ``SQLITE_BUSY`` ("database is locked") at once.
  In WAL mode that happens to a connection opening the file while the last connection of
  another process closes it (the closer checkpoints and deletes the WAL under an
  exclusive lock; https://www.sqlite.org/wal.html, "Sometimes Queries Return
  SQLITE_BUSY In WAL Mode") -- routine when drivers start and finish together. Those
  errors (``SQLITE_BUSY`` / ``SQLITE_LOCKED``) are retried like a lost PostgreSQL
  connection, opening the storage included; the failed transaction was rolled back, so
  running it again is safe.
* **JSON.** JSON columns are ``Text`` holding strict JSON (``allow_nan=False``, key order
  kept). Values are sanitized first: tuples become lists, numpy scalars/arrays become
  Python values/lists, dict keys must be strings. In ``metrics`` / ``constraints`` every
  value is converted with ``float()`` and non-finite values (nan, inf) are stored as
  ``null``; everywhere else a non-finite float or a non-JSON value is a
  :class:`StorageError` naming the offending key -- except in a trial's ``info``, which is
  free-form: there non-finite floats become ``null`` and other values their ``repr``
  (an evaluator's extras must never cost it its result).
* **Owners.** An owner token (:func:`make_owner_token`) identifies the driver process that
  holds a RUNNING trial: ``host|pid|process start time|random``. :func:`owner_is_alive`
  checks it on the same host (pid exists and has the same start time, so a reused pid
  does not count); owners on other hosts are alive while they keep heartbeating
  (:meth:`Storage.heartbeat` refreshes ``heartbeat_at`` of an owner's RUNNING trials;
  :meth:`Storage.requeue_stale` with ``stale_after_s`` re-queues silent ones).
* Timestamps are float unix seconds (:func:`time.time`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import math
import operator
import os
import random
import re
import secrets
import socket
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.pool import NullPool, StaticPool

from design_space.suggest import did_you_mean
from optimizer.base import Trial, TrialStatus

__all__ = [
    "Storage",
    "StorageError",
    "StorageFullError",
    "StorageUnavailableError",
    "StudyExistsError",
    "StudyNotFoundError",
    "StudyRecord",
    "TrialRecord",
    "make_owner_token",
    "normalize_url",
    "owner_is_alive",
]

logger = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_S = 30.0
_SUPPORTED = "sqlite:///path/to/study.db (or a plain file path) and postgresql://user@host/dbname"
_IN_CHUNK = 500  # ids per IN (...) list, well below SQLite's bound-parameter limit
_INT64 = 2**63
_BEGIN_OPTION = "coexplore_sqlite_begin"

#: How long a lost database connection (PostgreSQL restarted, network down) is retried
#: before an operation gives up with :class:`StorageUnavailableError`.
STORAGE_RETRY_TIMEOUT_S = 120.0
_RETRY_FIRST_DELAY_S = 0.5
_RETRY_MAX_DELAY_S = 8.0
# SQLSTATEs after which the transaction can simply be run again: admin / crash shutdown,
# server starting up, serialization failure, deadlock, too many connections. Class 08
# (connection exceptions) and errors without a SQLSTATE (connection refused, server
# closed the connection) are transient too; anything else (bad password, no such
# database, constraint violations) is not retried.
_TRANSIENT_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "40001", "40P01", "53300"})
_PG_CONNECT_ARGS = {"connect_timeout": 10, "keepalives": 1, "keepalives_idle": 10,
                    "keepalives_interval": 5, "keepalives_count": 3}
# pg_advisory_xact_lock key that serializes schema creation between drivers
_SCHEMA_LOCK_KEY = 0x636F6578  # "coex"


# -- errors ------------------------------------------------------------------------------
class StorageError(Exception):
    """Any storage problem: bad URL, unserializable values, database errors."""


class StudyExistsError(StorageError):
    """A study with this name already exists."""


class StudyNotFoundError(StorageError):
    """No study with this name (or id); the message lists the studies that exist."""


class StorageUnavailableError(StorageError):
    """The database stayed unreachable for longer than the retry timeout.

    Nothing that was committed is lost: run the same command again to resume once the
    database is back.
    """


class StorageFullError(StorageUnavailableError):
    """The database cannot grow: its disk or quota is full (SQLite ``SQLITE_FULL``,
    PostgreSQL SQLSTATE 53100 ``disk_full``). The failed write was rolled back and
    everything committed before it is kept: free space and run the same command again."""


# -- records -----------------------------------------------------------------------------
@dataclass(frozen=True)
class StudyRecord:
    """One row of ``studies``. ``space``, ``config`` and ``manifest`` are opaque JSON."""

    id: int
    name: str
    seed: int
    objectives: dict[str, str]
    space: dict
    config: dict
    config_hash: str
    manifest: dict
    created_at: float


@dataclass(frozen=True)
class TrialRecord:
    """One row of ``trials``. ``metrics`` / ``constraints`` hold None for non-finite values.
    ``info`` is the evaluator's ``Evaluation.info`` ({} when it gave none, or when the
    trials were read with ``with_info=False``)."""

    study_id: int
    number: int
    params: dict
    status: TrialStatus
    metrics: dict[str, float | None]
    constraints: dict[str, float | None]
    reason: str | None
    traceback: str | None
    wall_time_s: float | None
    seed: int
    owner: str | None
    attempts: int
    created_at: float
    started_at: float | None
    finished_at: float | None
    info: dict = field(default_factory=dict)
    cpu_time_s: float | None = None

    def to_trial(self) -> Trial:
        """The optimizer's view of this row (metrics/constraints stored as null are dropped)."""
        return Trial(
            number=self.number,
            params=dict(self.params),
            status=self.status,
            metrics={k: v for k, v in self.metrics.items() if v is not None},
            constraints={k: v for k, v in self.constraints.items() if v is not None},
            reason=self.reason,
        )


# -- schema ------------------------------------------------------------------------------
_metadata = sa.MetaData()

studies_table = sa.Table(
    "studies",
    _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(255), nullable=False, unique=True),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("objectives", sa.Text, nullable=False),
    sa.Column("space", sa.Text, nullable=False),
    sa.Column("config", sa.Text, nullable=False),
    sa.Column("config_hash", sa.String(128), nullable=False),
    sa.Column("manifest", sa.Text, nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
)

trials_table = sa.Table(
    "trials",
    _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "study_id",
        sa.Integer,
        sa.ForeignKey("studies.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("params", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("metrics", sa.Text, nullable=False),
    sa.Column("constraints", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("traceback", sa.Text, nullable=True),
    sa.Column("wall_time_s", sa.Double, nullable=True),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("owner", sa.String(255), nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("started_at", sa.Double, nullable=True),
    sa.Column("finished_at", sa.Double, nullable=True),
    sa.Column("heartbeat_at", sa.Double, nullable=True),
    sa.Column("info", sa.Text, nullable=True),
    sa.Column("cpu_time_s", sa.Double, nullable=True),
    sa.UniqueConstraint("study_id", "number", name="uq_trials_study_number"),
    sa.Index("ix_trials_study_status", "study_id", "status"),
)


# -- URLs --------------------------------------------------------------------------------
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


def _sqlite_file(url: str) -> str | None:
    """The database file of a sqlite URL, or None for in-memory / URI-mode databases."""
    u = make_url(url)
    db = u.database
    if not db or db == ":memory:" or str(u.query.get("uri", "")).lower() == "true":
        return None
    return db


def _sqlite_uri_file(url: str) -> str | None:
    """The file a URI-mode sqlite URL (``sqlite:///file:x.db?mode=ro&uri=true``) opens, or
    None when it opens none (not URI mode, ``:memory:``, ``mode=memory``)."""
    u = make_url(url)
    db = u.database or ""
    if str(u.query.get("uri", "")).lower() != "true" or str(u.query.get("mode", "")) == "memory":
        return None
    if db.startswith("file:"):
        db = db[len("file:"):]
        if db.startswith("//"):               # file://host/path: the path after the authority
            slash = db.find("/", 2)
            db = db[slash:] if slash >= 0 else ""
    db = unquote(db.split("?", 1)[0].split("#", 1)[0])
    return db if db and db != ":memory:" else None


_DB_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")
_BROKEN_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):(?!//)")
_KNOWN_SCHEMES = ("sqlite", "postgresql", "postgres", "mysql", "mariadb", "oracle", "mssql")


def check_storage_path(text: str) -> None:
    """Refuse a storage string that is not a URL (no ``scheme://``) and not a path to a
    database file, naming what is wrong: a URL with a broken separator (``mysql:/bad``,
    ``sqlite:x.db``), a path that starts with a scheme's name (``sqlite//x.db``: a
    missing ``:``), or a path whose file is neither an existing file nor named like a
    database (``.db``, ``.sqlite``, ``.sqlite3``, ``.db3``). Taken as a path, each of them
    would create a directory and a new database in it."""
    m = _BROKEN_SCHEME_RE.match(text)
    if m is not None:                  # one letter is a Windows drive (C:\\x.db): a path
        raise StorageError(
            f"storage {text!r} is not a URL (a URL is scheme://..., e.g. sqlite:///path/to/study.db) "
            f"nor a database file path; supported: {_SUPPORTED}")
    first = re.split(r"[/\\]", text, maxsplit=1)[0].lower()
    if first in _KNOWN_SCHEMES:
        raise StorageError(
            f"storage {text!r} looks like a URL without its ':' ({first}://...); "
            f"supported: {_SUPPORTED}")
    path = Path(text).expanduser()
    if not path.is_file() and path.suffix.lower() not in _DB_SUFFIXES:
        raise StorageError(
            f"storage {text!r} is neither a URL nor a path to a database file (an existing file, "
            f"or one named *{', *'.join(_DB_SUFFIXES)}); supported: {_SUPPORTED}")


def normalize_url(url_or_path: str | os.PathLike, *, create_dirs: bool = True) -> str:
    """A SQLAlchemy URL for ``url_or_path``.

    ``sqlite:///x.db`` and ``postgresql[+driver]://...`` are returned unchanged
    (``postgres://`` is spelled ``postgresql://``); a plain path such as ``runs/x.db``
    becomes ``sqlite:///<absolute path>``. For SQLite files the parent directory is
    created if missing, unless ``create_dirs`` is false (what read-only commands pass:
    looking at a study never creates a folder). Any other scheme is a
    :class:`StorageError`, and so is a string that is neither a URL nor a path to a
    database file (:func:`check_storage_path`: ``sqlite//x.db``, ``mysql:/bad``), before
    any directory is created, a URL SQLAlchemy cannot parse (``postgresql://h:port/db``)
    and a path the operating system refuses (a NUL byte, a name too long, ``~nobody``,
    a folder that cannot be created); a full disk stays an ``OSError`` (ENOSPC).
    """
    if isinstance(url_or_path, os.PathLike):
        url_or_path = os.fspath(url_or_path)
    if isinstance(url_or_path, bytes):
        url_or_path = os.fsdecode(url_or_path)
    if not isinstance(url_or_path, str) or not url_or_path.strip():
        raise StorageError(
            f"storage URL must be a non-empty string or path, got {url_or_path!r}; "
            f"supported: {_SUPPORTED}"
        )
    text = url_or_path.strip()
    try:
        text.encode("utf-8")     # URLs are rendered and SQLite names passed as UTF-8
    except UnicodeEncodeError as e:
        raise StorageError(f"storage {text!r} is not valid text: {e.reason} at {e.start}") from None
    m = _SCHEME_RE.match(text)
    if m is None:
        with _path_errors(text):
            check_storage_path(text)
            path = Path(text).expanduser().resolve()
            str(path).encode("utf-8")     # SQLite takes UTF-8 names: no lone surrogates
            if create_dirs:
                path.parent.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{path}"
    scheme = m.group(1).lower()
    text = scheme + text[len(scheme):]   # SQLAlchemy knows dialects by lower-case name only
    backend = scheme.split("+", 1)[0]
    if backend == "postgres":  # common alias that SQLAlchemy does not accept
        text = "postgresql" + text[len("postgres") :]
        backend = "postgresql"
    if backend not in ("sqlite", "postgresql"):
        raise StorageError(
            f"unsupported storage URL {text!r} (scheme {scheme!r}); supported: {_SUPPORTED}"
        )
    try:
        make_url(text)
    except (sa.exc.ArgumentError, ValueError) as e:   # ValueError: a port that is no number
        raise StorageError(f"malformed storage URL {text!r}: {e}") from None
    if backend == "sqlite":
        u = make_url(text)
        if u.host or u.username or u.password or u.port:   # sqlite://host/x.db: three slashes lost
            raise StorageError(
                f"malformed storage URL {text!r}: a SQLite URL names no host; write "
                "sqlite:///relative/path.db or sqlite:////absolute/path.db")
        db = _sqlite_file(text)
        if db is not None:
            with _path_errors(text):
                if "\x00" in db:
                    raise ValueError("embedded null byte")
                db.encode("utf-8")
                if create_dirs:   # the file SQLite opens: a URL's path is taken literally (no ~)
                    Path(db).parent.mkdir(parents=True, exist_ok=True)
    return text


def _show(text: str) -> str:
    """``text`` for a one-line message: as is, or its repr when it holds a newline or
    another unprintable character."""
    return text if text.isprintable() else repr(text)


@contextlib.contextmanager
def _path_errors(text: str) -> Iterator[None]:
    """What the OS says about a storage path, as a StorageError (a full disk stays an
    OSError: it is not the user's mistake, see ``coexplore run``'s exit codes)."""
    try:
        yield
    except OSError as e:
        if e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            raise
        raise StorageError(f"storage path {text!r}: {e.strerror or e}") from None
    except (ValueError, RuntimeError) as e:   # NUL byte; ~user without a home directory
        raise StorageError(f"storage path {text!r} is not usable: {e}") from None


# -- JSON sanitizing ---------------------------------------------------------------------
class _NotJsonable(Exception):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def _jsonable(value: Any, path: str) -> Any:
    """A strict-JSON copy of ``value`` (tuples -> lists, numpy -> Python), or _NotJsonable."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotJsonable(path, f"non-finite float {value!r} is not valid JSON")
        return float(value)
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist(), path)
    if isinstance(value, np.generic):
        return _jsonable(value.item(), path)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _NotJsonable(
                    f"{path}[{k!r}]", f"key of type {type(k).__name__} (JSON keys must be str)"
                )
            out[str(k)] = _jsonable(v, f"{path}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{path}[{i}]") for i, v in enumerate(value)]
    raise _NotJsonable(
        path,
        f"value {value!r} of type {type(value).__name__} is not JSON-serializable "
        "(allowed: None, bool, int, float, str, list/tuple, dict with str keys, numpy scalars)",
    )


def _lenient(value: Any) -> Any:
    """A strict-JSON copy of free-form ``value``: like :func:`_jsonable`, but non-finite
    floats become None, non-str keys ``str(key)`` and anything else its ``repr``."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        return _lenient(value.tolist())
    if isinstance(value, np.generic):
        return _lenient(value.item())
    if isinstance(value, Mapping):
        return {str(k): _lenient(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_lenient(v) for v in value]
    return repr(value)


def _info_text(info: Mapping[str, Any] | None) -> str | None:
    """A trial's ``info`` as JSON text (None when empty); never raises on odd values."""
    if info is None:
        return None
    if not isinstance(info, Mapping):
        info = {"value": info}
    return _dumps(_lenient(info)) if info else None


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=False, allow_nan=False)


def _json_text(value: Any, what: str) -> str:
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise StorageError(f"{what} must be a mapping, got {type(value).__name__}")
    try:
        return _dumps(_jsonable(value, what))
    except _NotJsonable as e:
        raise StorageError(f"{what}: key {e.path!r} -> {e.problem}") from None


def _numbers_text(values: Mapping[str, Any] | None, what: str) -> str:
    """Metrics/constraints as JSON: float values, non-finite -> null."""
    if values is None:
        return "{}"
    if not isinstance(values, Mapping):
        raise StorageError(f"{what} must be a mapping, got {type(values).__name__}")
    out: dict[str, float | None] = {}
    for k, v in values.items():
        if not isinstance(k, str):
            raise StorageError(f"{what}: key {k!r} must be a str, got {type(k).__name__}")
        if v is None:
            out[str(k)] = None
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise StorageError(
                f"{what}: key {k!r} has value {v!r} of type {type(v).__name__}, "
                "which is not convertible to float"
            ) from None
        out[str(k)] = f if math.isfinite(f) else None
    return _dumps(out)


def _opt_float(value: Any, what: str) -> float | None:
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise StorageError(f"{what} must be a number, got {value!r}") from None
    return f if math.isfinite(f) else None


def _int64(value: Any, what: str) -> int:
    try:
        i = operator.index(value)
    except TypeError:
        raise StorageError(f"{what} must be an integer, got {value!r}") from None
    if not -_INT64 <= i < _INT64:
        raise StorageError(f"{what} = {i} does not fit in a signed 64-bit integer")
    return i


def _owner(owner: Any) -> str:
    if not isinstance(owner, str) or not owner:
        raise ValueError(f"owner must be a non-empty str token, got {owner!r}")
    return owner


def _loads(text: str | None, default: Any) -> Any:
    return default if text is None else json.loads(text)


def _status(value: str) -> TrialStatus:
    try:
        return TrialStatus(value)
    except ValueError:
        raise StorageError(f"unknown trial status {value!r} in the database") from None


def _chunks(items: Sequence[Any], n: int = _IN_CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _study_from_row(row: Any) -> StudyRecord:
    return StudyRecord(
        id=int(row.id),
        name=row.name,
        seed=int(row.seed),
        objectives=dict(_loads(row.objectives, {})),
        space=_loads(row.space, {}),
        config=_loads(row.config, {}),
        config_hash=row.config_hash,
        manifest=_loads(row.manifest, {}),
        created_at=float(row.created_at),
    )


def _trial_from_row(row: Any) -> TrialRecord:
    return TrialRecord(
        study_id=int(row.study_id),
        number=int(row.number),
        params=_loads(row.params, {}),
        status=_status(row.status),
        metrics=_loads(row.metrics, {}),
        constraints=_loads(row.constraints, {}),
        reason=row.reason,
        traceback=row.traceback,
        wall_time_s=None if row.wall_time_s is None else float(row.wall_time_s),
        cpu_time_s=None if getattr(row, "cpu_time_s", None) is None else float(row.cpu_time_s),
        seed=int(row.seed),
        owner=row.owner,
        attempts=int(row.attempts),
        created_at=float(row.created_at),
        started_at=None if row.started_at is None else float(row.started_at),
        finished_at=None if row.finished_at is None else float(row.finished_at),
        info=_loads(getattr(row, "info", None), {}) or {},
    )


def _status_values(statuses: Iterable[TrialStatus | str]) -> list[str]:
    return [TrialStatus(s).value for s in statuses]


# -- engines -----------------------------------------------------------------------------
def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # Documented SQLAlchemy recipe: take transaction control away from pysqlite so that
    # our ``begin`` listener decides how a transaction starts.
    dbapi_connection.isolation_level = None
    cur = dbapi_connection.cursor()
    try:
        cur.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
    finally:
        cur.close()


def _sqlite_on_begin(conn: Connection) -> None:
    mode = conn.get_execution_options().get(_BEGIN_OPTION, "IMMEDIATE")
    conn.exec_driver_sql("BEGIN" if mode == "DEFERRED" else "BEGIN IMMEDIATE")


def make_engine(url: str) -> Engine:
    backend = make_url(url).get_backend_name()
    try:
        if backend == "sqlite":
            if _sqlite_file(url) is None:  # in-memory: one shared connection
                engine = sa.create_engine(
                    url,
                    poolclass=StaticPool,
                    connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_S},
                )
            else:
                engine = sa.create_engine(
                    url, poolclass=NullPool, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S}
                )
            event.listen(engine, "connect", _sqlite_on_connect)
            event.listen(engine, "begin", _sqlite_on_begin)
            return engine
        # pool_pre_ping: a pooled connection that died (server restarted) is replaced at
        # checkout instead of failing the next statement. libpq's connect_timeout and TCP
        # keepalives bound how long a dead server or network can hold a connect or a query
        # (each applies only where the URL does not set it).
        query = make_url(url).query
        connect_args = {k: v for k, v in _PG_CONNECT_ARGS.items() if k not in query}
        return sa.create_engine(url, pool_pre_ping=True, connect_args=connect_args)
    except sa.exc.NoSuchModuleError:   # postgresql+nosuchdriver://
        raise StorageError(
            f"cannot open {make_url(url).render_as_string(hide_password=True)}: unknown database "
            f"driver {make_url(url).drivername!r}; supported: {_SUPPORTED}"
        ) from None
    except sa.exc.ArgumentError as e:    # an option the dialect refuses
        raise StorageError(
            f"cannot open {make_url(url).render_as_string(hide_password=True)}: "
            f"{_first_line(e)}") from None
    except ImportError as e:
        raise StorageError(
            f"cannot open {make_url(url).render_as_string(hide_password=True)}: database "
            f"driver not installed ({e}); for PostgreSQL install 'psycopg[binary]' "
            "(or name an installed driver in the URL, e.g. postgresql+psycopg2://...)"
        ) from e


def _dispose_after_fork(ref: weakref.ReferenceType[Storage]) -> None:
    storage = ref()
    if storage is not None and storage._engine is not None:
        # Forget (without closing) the parent's pooled connections in a forked child.
        storage._engine.dispose(close=False)


# -- storage -----------------------------------------------------------------------------
def _migrate(conn: Connection) -> None:
    """Add columns that stores created by an earlier version lack (additive only)."""
    have = {c["name"] for c in sa.inspect(conn).get_columns("trials")}
    if "heartbeat_at" not in have:
        kind = "DOUBLE PRECISION" if conn.dialect.name == "postgresql" else "REAL"
        conn.exec_driver_sql(f"ALTER TABLE trials ADD COLUMN heartbeat_at {kind}")
    if "info" not in have:
        conn.exec_driver_sql("ALTER TABLE trials ADD COLUMN info TEXT")
    if "cpu_time_s" not in have:
        kind = "DOUBLE PRECISION" if conn.dialect.name == "postgresql" else "REAL"
        conn.exec_driver_sql(f"ALTER TABLE trials ADD COLUMN cpu_time_s {kind}")


def _first_line(exc: BaseException | None) -> str:
    text = str(exc).strip() if exc is not None else ""
    return text.splitlines()[0] if text else type(exc).__name__


def _read_only_file_problem(db: Path) -> str | None:
    """Why SQLite cannot open an existing file on a read-only medium (or in a folder this
    user may not write), or None when that is not the case. Opening writes: coexplore
    sets WAL mode and checks the schema in a write transaction, and a WAL database
    cannot even be read unless SQLite can create ``NAME-shm`` next to it
    (https://www.sqlite.org/wal.html, "Read-Only Databases")."""
    try:
        with db.open("rb") as f:
            header = f.read(100)
        read_only_fs = bool(os.statvfs(db.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return None
    folder_writable = not read_only_fs and os.access(db.parent, os.W_OK)
    file_writable = not read_only_fs and os.access(db, os.W_OK)
    if folder_writable and file_writable:
        return None
    where = ("is on a read-only file system" if read_only_fs else
             "is in a folder this user cannot write" if not folder_writable else
             "is a file this user cannot write")
    wal = len(header) == 100 and header[:16] == b"SQLite format 3\x00" and header[18:20] == b"\x02\x02"
    if wal:
        why = (f"it is a WAL-mode SQLite database and {where}; SQLite must create "
               f"{db.name}-shm and {db.name}-wal next to it even to read it")
    else:
        why = f"it {where}, and opening a study storage writes to it (journal mode, schema check)"
    return f"{why}. Copy the file to a writable folder and open the copy"


_Body = Callable[[Connection, int], Any]


class Storage:
    """Studies and their trials in one database (see the module docstring).

    Args:
        url: SQLAlchemy URL or SQLite path (see :func:`normalize_url`).
        retry_timeout_s: how long an operation keeps retrying, with exponential backoff,
            when the connection to a PostgreSQL server is lost (server restarted, network
            down) before it raises :class:`StorageUnavailableError`; 0 disables retrying.
            Opening the storage is never retried: an unreachable server at start is an
            error at once.
        create: whether a missing SQLite file (and its folder) may be created; with
            ``False`` (the read-only commands) a missing file is a :class:`StorageError`
            and nothing is created on disk.
    """

    def __init__(self, url: str | os.PathLike, *, retry_timeout_s: float | None = None,
                 create: bool = True) -> None:
        if retry_timeout_s is None:
            retry_timeout_s = STORAGE_RETRY_TIMEOUT_S
        if (isinstance(retry_timeout_s, bool) or not isinstance(retry_timeout_s, (int, float))
                or not 0 <= retry_timeout_s < math.inf):
            raise ValueError(
                f"retry_timeout_s must be a number of seconds >= 0, got {retry_timeout_s!r}"
            )
        self.retry_timeout_s = float(retry_timeout_s)
        self._url = normalize_url(url, create_dirs=create)
        self._display_url = _show(make_url(self._url).render_as_string(hide_password=True))
        db = _sqlite_file(self._url) if self._url.startswith("sqlite") else None
        opened = db if db is not None else (_sqlite_uri_file(self._url)
                                            if self._url.startswith("sqlite") else None)
        if not create and opened is not None:
            with _path_errors(opened):
                if not Path(opened).exists():   # what SQLite opens (no ~ expansion)
                    raise StorageError(f"no such study storage: {_show(opened)}")
        engine = make_engine(self._url)
        self._engine: Engine | None = engine
        self._is_pg = engine.dialect.name == "postgresql"
        if not isinstance(engine.pool, (NullPool, StaticPool)) and hasattr(os, "register_at_fork"):
            ref = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: _dispose_after_fork(ref))
        try:
            # an unreachable server at start is an error at once; a busy SQLite file is not
            self._run(self._create_schema, write=True, retry=not self._is_pg)
        except BaseException as e:
            engine.dispose()
            self._engine = None
            if isinstance(e, StorageError) and db is not None:
                hint = _read_only_file_problem(Path(db))
                if hint is not None:
                    raise StorageError(f"cannot open {self._display_url}: {hint}") from e
            raise

    def _create_schema(self, conn: Connection, attempt: int) -> None:
        if self._is_pg:
            # Two drivers creating the tables at once would both find them missing and one
            # CREATE would fail on the catalog's unique index: take turns (the lock is
            # released at commit; the second then finds the tables and creates nothing).
            conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_SCHEMA_LOCK_KEY)))
        _metadata.create_all(conn)
        _migrate(conn)

    # -- lifecycle -----------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self._url

    @property
    def display_url(self) -> str:
        """The URL with its password masked (``***``): what messages and consoles show."""
        return self._display_url

    def close(self) -> None:
        """Release every connection (and with it the SQLite file). Idempotent."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> Storage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._engine is None else "open"
        return f"Storage({self._display_url!r}, {state})"

    def _require_engine(self) -> Engine:
        if self._engine is None:
            raise StorageError(f"storage {self._display_url} is closed")
        return self._engine

    # -- transactions --------------------------------------------------------------------
    def _transient(self, exc: sa.exc.DBAPIError) -> bool:
        """Whether ``exc`` means "the connection or server went away; try again"."""
        if not self._is_pg:
            # SQLITE_BUSY (5) / SQLITE_LOCKED (6), extended codes in the high bits; see
            # "A busy SQLite file" in the module docstring. A file never "goes away".
            code = getattr(exc.orig, "sqlite_errorcode", None)
            return isinstance(exc, sa.exc.OperationalError) and code is not None and code & 0xFF in (5, 6)
        if exc.connection_invalidated:
            return True
        if not isinstance(exc, (sa.exc.OperationalError, sa.exc.InterfaceError)):
            return False
        code = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
        return code is None or code.startswith("08") or code in _TRANSIENT_SQLSTATES

    def _database_error(self, exc: sa.exc.DBAPIError) -> StorageError:
        if self._is_pg:
            full = (getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)) == "53100"
        else:
            code = getattr(exc.orig, "sqlite_errorcode", None)
            full = code is not None and code & 0xFF == 13      # SQLITE_FULL
        if full:
            return StorageFullError(
                f"{self._display_url}: the disk (or quota) is full ({_first_line(exc.orig)}); the "
                "failed write was rolled back and everything committed before it is kept: free "
                "space, then run the same command again to resume")
        kind = "integrity error" if isinstance(exc, sa.exc.IntegrityError) else "database error"
        return StorageError(f"{kind} on {self._display_url}: {exc.orig}")

    def _run(self, body: _Body, *, write: bool, retry: bool = True) -> Any:
        """Run ``body(conn, attempt)`` in one transaction and return what it returns.

        Write transactions start with ``BEGIN IMMEDIATE`` on SQLite; reads with a deferred
        ``BEGIN`` (a consistent snapshot that never blocks the writer). When the PostgreSQL
        connection is lost (see :meth:`_transient`) the whole transaction is run again on a
        new connection after 0.5, 1, 2, 4, 8, 8, ... s (+-25 % jitter so that drivers do not
        reconnect in lockstep), with a warning on the log each time, until it succeeds or
        ``retry_timeout_s`` has passed since the first failure
        (:class:`StorageUnavailableError`). ``attempt`` (0 first) lets a write check
        whether an earlier attempt committed before its connection dropped, so that a
        retry never applies it twice.
        """
        engine = self._require_engine()
        attempt = 0
        failed_at: float | None = None
        while True:
            try:
                if write:
                    with engine.begin() as conn:
                        out = body(conn, attempt)
                else:
                    with engine.connect() as conn:
                        conn.execution_options(**{_BEGIN_OPTION: "DEFERRED"})
                        with conn.begin():
                            out = body(conn, attempt)
            except sa.exc.DBAPIError as exc:
                if not (retry and self._transient(exc)):
                    raise self._database_error(exc) from exc
                now = time.monotonic()
                failed_at = now if failed_at is None else failed_at
                waited_s = now - failed_at
                if waited_s >= self.retry_timeout_s:
                    what = (f"lost the connection to {self._display_url} and could not get it back within"
                            if self._is_pg else
                            f"{self._display_url} stayed locked by another process for")
                    raise StorageUnavailableError(
                        f"{what} {self.retry_timeout_s:g} s ({_first_line(exc.orig)}); everything "
                        "committed is kept, and the study resumes where it stopped once the "
                        "database is available again"
                    ) from exc
                delay_s = min(_RETRY_MAX_DELAY_S, _RETRY_FIRST_DELAY_S * 2 ** min(attempt, 16))
                delay_s = min(delay_s * random.uniform(0.75, 1.25), self.retry_timeout_s - waited_s)
                logger.warning(
                    "storage %s %s (%s); retry %d in %.1f s (giving up %g s after the "
                    "first failure)", self._display_url, "unreachable" if self._is_pg else "busy",
                    _first_line(exc.orig), attempt + 1, delay_s, self.retry_timeout_s,
                )
                time.sleep(delay_s)
                attempt += 1
                continue
            if failed_at is not None:
                logger.warning("storage %s reachable again after %.1f s (%d retries); continuing",
                               self._display_url, time.monotonic() - failed_at, attempt)
            return out

    # -- studies -------------------------------------------------------------------------
    def _study_row(self, name: str, seed: int, objectives: Mapping[str, str],
                   space: Mapping[str, Any], config: Mapping[str, Any], config_hash: str,
                   manifest: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(name, str) or not name:
            raise StorageError(f"study name must be a non-empty str, got {name!r}")
        if not isinstance(objectives, Mapping):
            raise StorageError(
                f"objectives must be a mapping like {{'edp': 'min'}}, got {objectives!r}"
            )
        objs = {str(k): str(v) for k, v in objectives.items()}
        return {
            "name": name,
            "seed": _int64(seed, "study seed"),
            "objectives": _dumps(objs),
            "space": _json_text(space, "space"),
            "config": _json_text(config, "config"),
            "config_hash": str(config_hash),
            "manifest": _json_text(manifest, "manifest"),
            "created_at": time.time(),
        }

    def _insert_study(self, row: dict[str, Any]) -> tuple[StudyRecord, bool]:
        """Insert ``row`` unless a study of that name exists: (record, inserted)."""
        c = studies_table.c
        by_name = sa.select(studies_table).where(c.name == row["name"])

        def body(conn: Connection, attempt: int) -> tuple[StudyRecord, bool]:
            existing = conn.execute(by_name).first()
            if existing is not None:
                # after a lost connection: our own insert may have committed
                ours = attempt > 0 and float(existing.created_at) == row["created_at"] \
                    and existing.config_hash == row["config_hash"]
                return _study_from_row(existing), ours
            if self._is_pg:
                # Another driver may insert the same name between our SELECT and INSERT:
                # ON CONFLICT waits for its transaction and then inserts nothing, and the
                # SELECT after it (READ COMMITTED: a new snapshot) sees its row.
                from sqlalchemy.dialects.postgresql import insert as pg_insert

                new_id = conn.execute(
                    pg_insert(studies_table).values(**row)
                    .on_conflict_do_nothing(index_elements=[c.name]).returning(c.id)
                ).scalar()
                if new_id is None:
                    return _study_from_row(conn.execute(by_name).one()), False
            else:  # BEGIN IMMEDIATE: nobody else can write between our SELECT and INSERT
                new_id = conn.execute(studies_table.insert().values(**row)).inserted_primary_key[0]
            return _study_from_row(_RowView(id=new_id, **row)), True

        return self._run(body, write=True)

    def create_study(
        self,
        name: str,
        *,
        seed: int,
        objectives: Mapping[str, str],
        space: Mapping[str, Any],
        config: Mapping[str, Any],
        config_hash: str,
        manifest: Mapping[str, Any],
    ) -> StudyRecord:
        """Insert a new study; :class:`StudyExistsError` if ``name`` is taken."""
        record, inserted = self._insert_study(
            self._study_row(name, seed, objectives, space, config, config_hash, manifest))
        if not inserted:
            raise self._exists_error(name)
        return record

    def open_or_create_study(
        self,
        name: str,
        *,
        seed: int,
        objectives: Mapping[str, str],
        space: Mapping[str, Any],
        config: Mapping[str, Any],
        config_hash: str,
        manifest: Mapping[str, Any],
    ) -> tuple[StudyRecord, bool]:
        """The study ``name`` and whether this call created it.

        If it exists, its stored record is returned (and the arguments are not compared
        with it: that is the caller's job); otherwise it is inserted from the arguments.
        Any number of processes may call this at once for the same new name: exactly one
        creates the study and every one gets the same record.
        """
        return self._insert_study(
            self._study_row(name, seed, objectives, space, config, config_hash, manifest))

    def _exists_error(self, name: str) -> StudyExistsError:
        return StudyExistsError(
            f"a study named {name!r} already exists in {self._display_url}; "
            "resume it or choose another name"
        )

    def _not_found(self, conn: Connection, what: str) -> StudyNotFoundError:
        names = conn.execute(sa.select(studies_table.c.name).order_by(studies_table.c.id))
        names = [n for (n,) in names]
        listed = ", ".join(repr(n) for n in names) or "(none)"
        hint = did_you_mean(what.removeprefix("named ").strip("'\""), names)
        return StudyNotFoundError(
            f"no study {what}{hint} in {self._display_url}; existing studies: {listed}"
        )

    def find_study(self, name: str) -> StudyRecord | None:
        """The study called ``name``, or None."""
        q = sa.select(studies_table).where(studies_table.c.name == name)
        row = self._run(lambda conn, _: conn.execute(q).first(), write=False)
        return None if row is None else _study_from_row(row)

    def get_study(self, name: str) -> StudyRecord:
        """The study called ``name``; :class:`StudyNotFoundError` listing the others if none."""
        q = sa.select(studies_table).where(studies_table.c.name == name)

        def body(conn: Connection, attempt: int) -> Any:
            row = conn.execute(q).first()
            if row is None:
                raise self._not_found(conn, f"named {name!r}")
            return row

        return _study_from_row(self._run(body, write=False))

    def list_studies(self) -> list[StudyRecord]:
        """Every study, oldest first."""
        q = sa.select(studies_table).order_by(studies_table.c.id)
        rows = self._run(lambda conn, _: conn.execute(q).all(), write=False)
        return [_study_from_row(r) for r in rows]

    def delete_study(self, name: str) -> None:
        """Remove the study ``name`` and all its trials (one transaction)."""

        def body(conn: Connection, attempt: int) -> None:
            row = conn.execute(
                sa.select(studies_table.c.id).where(studies_table.c.name == name)
            ).first()
            if row is None:
                if attempt > 0:
                    return  # deleted by our attempt whose commit lost its connection
                raise self._not_found(conn, f"named {name!r}")
            conn.execute(trials_table.delete().where(trials_table.c.study_id == row.id))
            conn.execute(studies_table.delete().where(studies_table.c.id == row.id))

        self._run(body, write=True)

    def update_study_config(
        self, study_id: int, update: Callable[[dict[str, Any]], Mapping[str, Any]], *,
        config_hash: str | None = None,
    ) -> StudyRecord:
        """Replace the study's ``config`` by ``update(config)`` (and its ``config_hash`` when
        given), read and written in one transaction with the study row locked, so that
        drivers resuming at once each see the others' changes. ``update`` may run again on
        a retry after a lost connection: it must give the same result for a config that
        already holds its change. Returns the updated record."""
        c = studies_table.c
        q = sa.select(studies_table).where(c.id == study_id)
        if self._is_pg:
            q = q.with_for_update()

        def body(conn: Connection, attempt: int) -> StudyRecord:
            row = conn.execute(q).first()
            if row is None:
                raise self._not_found(conn, f"with id {study_id}")
            values = {"config": _json_text(update(_loads(row.config, {})), "config")}
            if config_hash is not None:
                values["config_hash"] = str(config_hash)
            conn.execute(studies_table.update().where(c.id == study_id).values(**values))
            return _study_from_row(_RowView(**{**row._mapping, **values}))

        return self._run(body, write=True)

    def _lock_study(self, conn: Connection, study_id: int) -> None:
        """Check that the study exists; on PostgreSQL also lock its row until commit."""
        q = sa.select(studies_table.c.id).where(studies_table.c.id == study_id)
        if self._is_pg:
            q = q.with_for_update()
        if conn.execute(q).first() is None:
            raise self._not_found(conn, f"with id {study_id}")

    # -- trials: writes ------------------------------------------------------------------
    def create_trials(
        self,
        study_id: int,
        params_list: Sequence[Mapping[str, Any]],
        seeds: Sequence[int],
        owner: str,
        status: TrialStatus = TrialStatus.RUNNING,
        max_total: int | None = None,
    ) -> list[TrialRecord]:
        """Insert trials numbered ``max(number) + 1, + 2, ...`` (0 first) in one transaction.

        RUNNING trials get ``owner``, ``started_at = now`` and ``attempts = 1``; WAITING
        trials are queued with no owner, ``started_at = None`` and ``attempts = 0``.

        ``max_total`` caps the study's trial count: only the first
        ``max_total - (trials already in the study)`` entries are inserted (possibly none),
        counted under the same study lock as the numbering, so that several drivers
        sharing one study never overshoot its budget. Returns the inserted trials.
        """
        status = TrialStatus(status)
        if status not in (TrialStatus.RUNNING, TrialStatus.WAITING):
            raise ValueError(f"create_trials: status must be RUNNING or WAITING, got {status}")
        owner = _owner(owner)
        params_list = list(params_list)
        seeds = list(seeds)
        if len(params_list) != len(seeds):
            raise ValueError(f"create_trials: {len(params_list)} params but {len(seeds)} seeds")
        params_text = []
        for i, p in enumerate(params_list):
            if not isinstance(p, Mapping):
                raise StorageError(
                    f"params_list[{i}] must be a mapping of parameter values, got {p!r}"
                )
            try:
                params_text.append(_dumps(_jsonable(p, "params")))
            except _NotJsonable as e:
                raise StorageError(
                    f"trial params (params_list[{i}]): key {e.path!r} -> {e.problem}"
                ) from None
        seed_values = [_int64(s, f"seeds[{i}]") for i, s in enumerate(seeds)]
        if max_total is not None and (not isinstance(max_total, int) or max_total < 0):
            raise ValueError(f"create_trials: max_total must be a non-negative int, got {max_total!r}")
        if not params_list:
            return []
        running = status is TrialStatus.RUNNING
        now = time.time()  # also the mark by which a retry recognizes rows it already wrote
        t = trials_table.c

        def body(conn: Connection, attempt: int) -> list[TrialRecord]:
            self._lock_study(conn, study_id)
            if attempt > 0:
                mine = conn.execute(
                    sa.select(trials_table).where(
                        t.study_id == study_id, t.created_at == now,
                        t.owner == owner if running else t.owner.is_(None),
                        t.params.in_(params_text),
                    ).order_by(t.number)
                ).all()
                if mine:
                    return [_trial_from_row(r) for r in mine]
            top, n_rows = conn.execute(
                sa.select(sa.func.max(t.number), sa.func.count()).where(t.study_id == study_id)
            ).one()
            texts, values = params_text, seed_values
            if max_total is not None:
                keep = max(0, max_total - int(n_rows))
                texts, values = texts[:keep], values[:keep]
                if not texts:
                    return []
            first = 0 if top is None else int(top) + 1
            rows = [
                {
                    "study_id": study_id,
                    "number": first + i,
                    "params": text,
                    "status": status.value,
                    "metrics": "{}",
                    "constraints": "{}",
                    "reason": None,
                    "traceback": None,
                    "wall_time_s": None,
                    "cpu_time_s": None,
                    "seed": seed,
                    "owner": owner if running else None,
                    "attempts": 1 if running else 0,
                    "created_at": now,
                    "started_at": now if running else None,
                    "finished_at": None,
                    "heartbeat_at": now if running else None,
                    "info": None,
                }
                for i, (text, seed) in enumerate(zip(texts, values, strict=True))
            ]
            conn.execute(trials_table.insert(), rows)
            return [_trial_from_row(_RowView(**r)) for r in rows]

        return self._run(body, write=True)

    def claim_waiting(self, study_id: int, owner: str, limit: int) -> list[TrialRecord]:
        """Turn the ``limit`` lowest-numbered WAITING trials RUNNING for ``owner``.

        Each claimed trial gets ``attempts + 1`` and ``started_at = now``; its number,
        params and seed are unchanged. Returns them ordered by number.
        """
        owner = _owner(owner)
        if limit <= 0:
            return []
        t = trials_table.c
        now = time.time()

        def body(conn: Connection, attempt: int) -> list[TrialRecord]:
            if attempt > 0:  # an earlier attempt may have committed its claim
                mine = conn.execute(
                    sa.select(trials_table).where(
                        t.study_id == study_id, t.status == TrialStatus.RUNNING.value,
                        t.owner == owner, t.started_at == now,
                    )
                ).all()
                if mine:
                    return [_trial_from_row(r) for r in mine]
            q = (
                sa.select(t.id)
                .where(t.study_id == study_id, t.status == TrialStatus.WAITING.value)
                .order_by(t.number)
                .limit(int(limit))
            )
            if self._is_pg:
                q = q.with_for_update(skip_locked=True)
            ids = [r.id for r in conn.execute(q)]
            rows: list[Any] = []
            for chunk in _chunks(ids):
                conn.execute(
                    trials_table.update()
                    .where(t.id.in_(chunk), t.status == TrialStatus.WAITING.value)
                    .values(
                        status=TrialStatus.RUNNING.value,
                        owner=owner,
                        attempts=t.attempts + 1,
                        started_at=now,
                        finished_at=None,
                        heartbeat_at=now,
                    )
                )
                rows.extend(conn.execute(sa.select(trials_table).where(t.id.in_(chunk))))
            return [_trial_from_row(r) for r in rows]

        return sorted(self._run(body, write=True), key=lambda r: r.number)

    def finish_trial(
        self,
        study_id: int,
        number: int,
        owner: str,
        status: TrialStatus,
        *,
        metrics: Mapping[str, Any] | None = None,
        constraints: Mapping[str, Any] | None = None,
        reason: str | None = None,
        traceback: str | None = None,
        wall_time_s: float | None = None,
        info: Mapping[str, Any] | None = None,
        cpu_time_s: float | None = None,
    ) -> bool:
        """Record the result of a RUNNING trial held by ``owner``.

        ``info`` is the evaluator's free-form extras (``Evaluation.info``), kept as JSON
        (see the module docstring on JSON: lenient here).

        One conditional ``UPDATE ... WHERE status = 'RUNNING' AND owner = :owner``: returns
        True if the trial was updated, False if it is not (any longer) RUNNING under this
        owner -- re-queued, claimed by another owner or already finished; then nothing is
        changed, so a trial can never complete twice.
        """
        status = TrialStatus(status)
        if not status.finished:
            raise ValueError(
                f"finish_trial: status must be COMPLETE, INFEASIBLE or FAILED, got {status}"
            )
        owner = _owner(owner)
        values = {
            "status": status.value,
            "metrics": _numbers_text(metrics, "metrics"),
            "constraints": _numbers_text(constraints, "constraints"),
            "reason": None if reason is None else str(reason),
            "traceback": None if traceback is None else str(traceback),
            "wall_time_s": _opt_float(wall_time_s, "wall_time_s"),
            "cpu_time_s": _opt_float(cpu_time_s, "cpu_time_s"),
            "info": _info_text(info),
        }
        t = trials_table.c
        now = time.time()
        this_trial = (t.study_id == study_id, t.number == int(number), t.owner == owner)

        def body(conn: Connection, attempt: int) -> bool:
            result = conn.execute(
                trials_table.update()
                .where(*this_trial, t.status == TrialStatus.RUNNING.value)
                .values(finished_at=now, **values)
            )
            if result.rowcount == 1:
                return True
            if attempt > 0:  # did our earlier attempt commit before its connection dropped?
                done = conn.execute(sa.select(t.id).where(
                    *this_trial, t.status == status.value, t.finished_at == now)).first()
                return done is not None
            return False

        return self._run(body, write=True)

    def heartbeat(self, study_id: int, owner: str) -> int:
        """Mark every RUNNING trial of ``owner`` alive now; returns how many."""
        t = trials_table.c
        owner = _owner(owner)

        def body(conn: Connection, attempt: int) -> int:
            res = conn.execute(
                trials_table.update()
                .where(t.study_id == study_id, t.status == TrialStatus.RUNNING.value, t.owner == owner)
                .values(heartbeat_at=time.time())
            )
            return int(res.rowcount or 0)

        return self._run(body, write=True)

    def _requeue(self, conn: Connection, ids: Sequence[int]) -> None:
        t = trials_table.c
        for chunk in _chunks(ids):
            conn.execute(
                trials_table.update()
                .where(t.id.in_(chunk), t.status == TrialStatus.RUNNING.value)
                .values(status=TrialStatus.WAITING.value, owner=None, started_at=None,
                        heartbeat_at=None)
            )

    def requeue_stale(self, study_id: int, is_alive: Callable[[str], bool],
                      stale_after_s: float | None = None) -> list[int]:
        """Re-queue (as WAITING, owner and started_at cleared) RUNNING trials of dead owners.

        A trial is stale when its owner is None, ``is_alive(owner)`` is false
        (``is_alive`` is called once per distinct owner), or -- with ``stale_after_s`` --
        its last heartbeat is older than that (the way a driver on another host, whose
        process cannot be checked, is found dead). Returns the re-queued numbers.
        """
        t = trials_table.c

        def body(conn: Connection, attempt: int) -> list[int]:
            now = time.time()
            q = sa.select(t.id, t.number, t.owner, t.heartbeat_at, t.started_at).where(
                t.study_id == study_id, t.status == TrialStatus.RUNNING.value
            )
            if self._is_pg:
                q = q.with_for_update()
            alive: dict[str, bool] = {}
            stale: list[int] = []
            numbers: list[int] = []
            for row in conn.execute(q).all():
                beat = row.heartbeat_at if row.heartbeat_at is not None else row.started_at
                expired = stale_after_s is not None and (beat is None or now - float(beat) > stale_after_s)
                if row.owner is not None and not expired:
                    if row.owner not in alive:
                        alive[row.owner] = bool(is_alive(row.owner))
                    if alive[row.owner]:
                        continue
                stale.append(row.id)
                numbers.append(int(row.number))
            self._requeue(conn, stale)
            return sorted(numbers)

        return self._run(body, write=True)

    def release_trials(self, study_id: int, owner: str, *, retry: bool = False) -> list[int]:
        """Re-queue every RUNNING trial of ``owner`` (a driver giving its in-flight trials
        back as it stops on an error) and return their numbers.

        Tried once by default (``retry=False``): a driver stopping because the database is
        gone should not wait for it again; its trials are then re-queued by the next driver
        to start (its process is gone) or after ``stale_after_s`` from another host.
        """
        owner = _owner(owner)
        t = trials_table.c

        def body(conn: Connection, attempt: int) -> list[int]:
            q = sa.select(t.id, t.number).where(
                t.study_id == study_id, t.status == TrialStatus.RUNNING.value, t.owner == owner)
            if self._is_pg:
                q = q.with_for_update()
            rows = conn.execute(q).all()
            self._requeue(conn, [r.id for r in rows])
            return sorted(int(r.number) for r in rows)

        return self._run(body, write=True, retry=retry)

    # -- trials: reads -------------------------------------------------------------------
    def trials(
        self, study_id: int, statuses: Iterable[TrialStatus] | None = None, *,
        with_info: bool = True,
    ) -> list[TrialRecord]:
        """The study's trials (optionally only those in ``statuses``), ordered by number.

        ``with_info=False`` leaves each record's ``info`` empty and does not read the
        column (cheaper for large studies whose evaluators store big breakdowns)."""
        t = trials_table.c
        cols = [c for c in trials_table.c if with_info or c.name != "info"]
        q = sa.select(*cols).where(t.study_id == study_id)
        if statuses is not None:
            q = q.where(t.status.in_(_status_values(statuses)))
        q = q.order_by(t.number)
        rows = self._run(lambda conn, _: conn.execute(q).all(), write=False)
        return [_trial_from_row(r) for r in rows]

    def trial(self, study_id: int, number: int) -> TrialRecord:
        """One trial by number; ``StorageError`` if it does not exist."""
        t = trials_table.c
        q = sa.select(trials_table).where(t.study_id == study_id, t.number == int(number))
        row = self._run(lambda conn, _: conn.execute(q).first(), write=False)
        if row is None:
            raise StorageError(f"study id {study_id} has no trial number {number}")
        return _trial_from_row(row)

    def change_marker(self, study_id: int) -> tuple:
        """A cheap value that changes whenever the study's trials change (a trial is
        added, claimed, re-queued or finished): trial counts per status with the latest
        start and finish times. Live views poll it and re-read only when it moves."""
        t = trials_table.c
        q = (
            sa.select(t.status, sa.func.count(), sa.func.max(t.started_at),
                      sa.func.max(t.finished_at))
            .where(t.study_id == study_id)
            .group_by(t.status)
            .order_by(t.status)
        )
        rows = self._run(lambda conn, _: conn.execute(q).all(), write=False)
        return tuple((str(s), int(n), None if a is None else float(a),
                      None if b is None else float(b)) for s, n, a, b in rows)

    def count(self, study_id: int, statuses: Iterable[TrialStatus]) -> int:
        """How many of the study's trials are in one of ``statuses``."""
        t = trials_table.c
        q = (
            sa.select(sa.func.count())
            .select_from(trials_table)
            .where(t.study_id == study_id, t.status.in_(_status_values(statuses)))
        )
        return int(self._run(lambda conn, _: conn.execute(q).scalar_one(), write=False))

    def status_counts(self, study_id: int) -> dict[TrialStatus, int]:
        """Trials per status; every :class:`TrialStatus` is a key (0 when none)."""
        t = trials_table.c
        q = sa.select(t.status, sa.func.count()).where(t.study_id == study_id).group_by(t.status)
        counts = dict.fromkeys(TrialStatus, 0)
        for status, n in self._run(lambda conn, _: conn.execute(q).all(), write=False):
            counts[_status(status)] = int(n)
        return counts


class _RowView:
    """Attribute access to a dict of column values (a row we just wrote)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


# -- owner tokens ------------------------------------------------------------------------
def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks) from ``/proc/<pid>/stat``, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
        # Field 2 (comm) is parenthesized and may contain spaces and parentheses.
        rest = data[data.rindex(")") + 2 :].split()
        return rest[0], int(rest[19])  # fields 3 (state) and 22 (starttime)
    except (OSError, ValueError, IndexError):
        return None


def make_owner_token() -> str:
    """``"host|pid|start|random"`` identifying this process as the owner of trials.

    ``start`` is the process start time from ``/proc/<pid>/stat`` (field 22; 0 where
    unavailable) so that a later process reusing the pid is not mistaken for this one;
    8 random hex digits keep tokens unique across owners.
    """
    pid = os.getpid()
    stat = _proc_stat(pid)
    start = stat[1] if stat is not None else 0
    return f"{socket.gethostname()}|{pid}|{start}|{secrets.token_hex(4)}"


def owner_is_alive(token: str) -> bool:
    """Whether the process behind an owner token (see :func:`make_owner_token`) may live.

    * same host: True iff a process with that pid exists (and is not a zombie) and its
      ``/proc`` start time equals the recorded one (guards against pid reuse); where the
      start time is unavailable (recorded as 0, or no ``/proc``) only existence is checked.
    * another host: True -- liveness cannot be checked from here. A later change adds
      heartbeats for owners on other hosts; until then their trials are never re-queued
      automatically.
    * malformed token: False.

    Processes in another pid namespace (containers sharing a host name) are
    indistinguishable from local ones; give such drivers distinct host names.
    """
    if not isinstance(token, str):
        return False
    parts = token.split("|")
    if len(parts) != 4 or not parts[0] or not parts[3]:
        return False
    host, pid_text, start_text, _ = parts
    try:
        pid, start = int(pid_text), int(start_text)
    except ValueError:
        return False
    if pid <= 0 or start < 0:
        return False
    if host != socket.gethostname():
        return True
    if os.name != "posix":  # os.kill(pid, 0) would not be a harmless probe
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    except OSError:
        return False
    stat = _proc_stat(pid)
    if stat is None:
        return True  # no /proc: existence is all we can check
    state, current_start = stat
    if state in ("Z", "X", "x"):
        return False
    return start == 0 or current_start == start
