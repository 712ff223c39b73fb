"""The record store: finished pieces of work (a search, a re-map, a trained model, a graph's
measurements) kept as plain JSON, keyed by their settings, so that a stopped run resumes
and a new checkout continues from committed state.

Design
======

**One record per file.** A store is a directory; record ``KEY`` lives in
``ROOT/KEY.json``. There is no index file, so there is nothing shared to lock and nothing
to rewrite when a record is added: the store is the set of files. Listing a store is a
directory walk (:meth:`RecordStore.keys`).

**One key format** (:func:`record_key`), a pure function of the record's ``kind`` and
``settings`` (a JSON object: everything the result depends on)::

    KIND/LABEL~DIGEST        e.g. shi2020.search/constrained-bo,iso,3,dqn~1f0c4e2a9b7d3c11

* ``KIND``: what the record is, ``[a-z0-9_.-]+`` (``shi2020.search``, ``d2nn.unit``);
* ``DIGEST``: the first 16 hex digits of SHA-256 over the canonical JSON of
  ``{"kind": KIND, "settings": SETTINGS}`` (:func:`canonical_json`: keys sorted, no
  whitespace, UTF-8, integers and floats as Python's ``json`` writes them), so two
  settings that are equal as JSON have one key, whatever their key order;
* ``LABEL``: for people reading the folder, the settings' scalar values (strings, numbers,
  booleans) in sorted-name order, joined by ``,``, each reduced to ``[A-Za-z0-9@._=+-]``,
  at most 60 characters. It is derived from the settings too (never chosen by the caller),
  so it carries no information the digest does not.

A record read back must carry the same ``kind`` and ``settings`` as the key it is read
under; one that does not (a digest collision, a hand-edited or corrupt file) is an error,
never silently taken.

**Written atomically.** :meth:`RecordStore.put` writes the record to a temporary file in
the same directory (``.NAME.tmp-PID-RANDOM``, ignored by readers), flushes and
``fsync`` s it, then publishes it under its name with one system call: ``os.link``
(first writer wins; ``FileExistsError`` if a record is already there) or, for
:meth:`RecordStore.put` with ``replace=True``, ``os.replace``. A process killed at any
point (``kill -9`` included) leaves either the old record or the new one, never half of
one; a left-over temporary file is only litter (:meth:`RecordStore.clean`).

**Two processes.** Two writers of different keys never touch the same file. Two writers of
one key both write complete temporary files; the first ``link`` publishes its record, the
second finds the name taken and keeps its record beside it as ``NAME.dup-RANDOM.json``
(:meth:`RecordStore.duplicates`), so nothing evaluated is lost, and gets the published
record back (both processes then use one and the same record). With ``replace=True`` the
last rename wins; both records are complete.

**Resumable.** A run asks :meth:`RecordStore.get` (or :meth:`RecordStore.compute`) before
doing a piece of work; only pieces without a record run.

**Carried across checkouts.** A reproduction commits its store under
``docs/reproduction/results/NAME/records/``; a later run names it as a fallback
(``RecordStore(out / "records", fallbacks=[committed])``): a record missing from the run's
own store is taken from the first fallback that has it and copied into the run's store, so
the run's store ends up holding every record its results were made of.

**Never executed.** Records are JSON and nothing else: values are checked before they are
written (:func:`check_plain`: ``dict`` with ``str`` keys, ``list``, ``str``, ``int``,
``float``, ``bool``, ``None``; anything else -- a tuple, a numpy scalar, an object -- is a
``TypeError`` naming where it is; :func:`plain` converts numpy scalars and tuples for
callers that have them) and read with :func:`json.loads`. No pickle, no ``eval``, no
``literal_eval``. Files that are not records (a model's weights) may live beside them,
referenced by name from a record's value, and are loaded by their own safe loaders (for
torch, ``torch.load(..., weights_only=True)``). Non-finite floats are written as JSON's
customary ``Infinity`` / ``NaN`` (a search's curve starts at infinity until a point is
feasible), which :func:`json.loads` reads back.

Record schema (the file)::

    {"schema": "coexplore.record/1",
     "key": KEY, "kind": KIND, "settings": {...},   # what the value depends on
     "value": ...,                                  # the result (plain JSON)
     "wall_s": float | null,                        # wall seconds the work took
     "cpu_s": float | null,                         # CPU seconds, where measured
     "trials": {"study": NAME, "storage": URL | null, "numbers": [int, ...]} | null,
     "note": str | null}                            # e.g. where a migrated record came from

``wall_s`` / ``cpu_s`` are ``null`` only where they were not measured (a study's trials
record wall time alone, so a search's CPU seconds are unknown; records migrated from a
format that did not keep them). ``trials`` names the study trials the value was made of
(``null`` for work outside a study).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SCHEMA", "Record", "RecordStore", "canonical_json", "check_plain", "plain", "record_key",
           "trials_ref"]

SCHEMA = "coexplore.record/1"
_KIND = re.compile(r"^[a-z0-9_.-]+$")
_LABEL_BAD = re.compile(r"[^A-Za-z0-9@._=+-]+")
_LABEL_MAX = 60


def check_plain(value: Any, where: str = "value") -> None:
    """Raise ``TypeError`` naming the first part of ``value`` that is not plain JSON
    (``dict`` with ``str`` keys, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``)."""
    if value is None or isinstance(value, bool | str):
        return
    if isinstance(value, int | float) and type(value) in (int, float):
        return
    if isinstance(value, list):
        for i, v in enumerate(value):
            check_plain(v, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where}: key {k!r} is {type(k).__name__}, not str")
            check_plain(v, f"{where}[{k!r}]")
        return
    raise TypeError(f"{where} is {type(value).__name__}, not plain JSON (dict, list, str, int, float, bool, None)")


def plain(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers (integers as ``int``, the rest as
    ``float``), numpy arrays and tuples as lists, recursively; anything else as it is (and
    :func:`check_plain` refuses what is still not JSON)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def canonical_json(obj: Any) -> str:
    """``obj`` as canonical JSON: keys sorted, no whitespace (the text a key is hashed from)."""
    check_plain(obj, "settings")
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)


def _label(settings: Mapping[str, Any]) -> str:
    parts = []
    for name in sorted(settings):
        v = settings[name]
        if isinstance(v, bool | int | float | str) and v is not None:
            parts.append(_LABEL_BAD.sub("_", str(v)).strip("_") or "_")
    return ",".join(parts)[:_LABEL_MAX].lstrip(".") or "_"   # never a hidden file


def record_key(kind: str, settings: Mapping[str, Any]) -> str:
    """The key of the record of ``kind`` with ``settings`` (see the module docstring)."""
    if not isinstance(kind, str) or not _KIND.match(kind):
        raise ValueError(f"record kind must match [a-z0-9_.-]+, got {kind!r}")
    if not isinstance(settings, Mapping):
        raise TypeError(f"settings must be a mapping, got {type(settings).__name__}")
    settings = dict(settings)
    digest = hashlib.sha256(canonical_json({"kind": kind, "settings": settings}).encode()).hexdigest()[:16]
    return f"{kind}/{_label(settings)}~{digest}"


def trials_ref(study: str, numbers: Sequence[int], storage: str | None = None) -> dict[str, Any]:
    """A record's ``trials`` field: the study ``study`` (at ``storage``) and its trial numbers."""
    return {"study": study, "storage": storage, "numbers": [int(n) for n in numbers]}


@dataclass(frozen=True)
class Record:
    """One stored record (the file's fields; see the module docstring)."""

    key: str
    kind: str
    settings: dict[str, Any]
    value: Any
    wall_s: float | None = None
    cpu_s: float | None = None
    trials: dict[str, Any] | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "key": self.key, "kind": self.kind, "settings": self.settings,
                "value": self.value, "wall_s": self.wall_s, "cpu_s": self.cpu_s, "trials": self.trials,
                "note": self.note}


def _seconds(v: float | None, name: str) -> float | None:
    if v is None:
        return None
    v = float(v)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number of seconds >= 0, got {v!r}")
    return v


class RecordStore:
    """Records under ``root`` (created on first write), with read-only ``fallbacks`` whose
    records are copied in when first read (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str], fallbacks: Sequence[RecordStore | str | os.PathLike[str]] = ()):
        self.root = Path(root)
        self.fallbacks = [f if isinstance(f, RecordStore) else RecordStore(f) for f in fallbacks]

    def __repr__(self) -> str:
        return f"RecordStore({str(self.root)!r}, fallbacks={[str(f.root) for f in self.fallbacks]})"

    # ---------------------------------------------------------------- paths and listing
    def path(self, key: str) -> Path:
        kind, _, name = key.partition("/")
        if not _KIND.match(kind) or not name or "/" in name or name.startswith("."):
            raise ValueError(f"not a record key: {key!r}")
        return self.root / kind / f"{name}.json"

    def keys(self, kind: str | None = None) -> list[str]:
        """Every record's key in this store (not the fallbacks'), sorted; of ``kind`` only if given."""
        if not self.root.is_dir():
            return []
        dirs = [self.root / kind] if kind else sorted(p for p in self.root.iterdir() if p.is_dir())
        out = []
        for d in dirs:
            if d.is_dir():
                out += [f"{d.name}/{p.name[:-5]}" for p in d.glob("*.json")
                        if not p.name.startswith(".") and ".dup-" not in p.name]
        return sorted(out)

    def __iter__(self) -> Iterator[Record]:
        for key in self.keys():
            yield self._read(self.path(key), key)

    def duplicates(self) -> list[Path]:
        """Records a second writer of an existing key kept beside it (see the docstring)."""
        return sorted(self.root.glob("*/*.dup-*.json")) if self.root.is_dir() else []

    def clean(self) -> list[Path]:
        """Remove temporary files left by writers that were killed; returns them."""
        left = sorted(self.root.glob("*/.*.tmp-*")) if self.root.is_dir() else []
        for p in left:
            p.unlink(missing_ok=True)
        return left

    # ---------------------------------------------------------------- reading
    def _read(self, path: Path, key: str) -> Record:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"{path}: not a {SCHEMA} record")
        if data.get("key") != key or record_key(data.get("kind", ""), data.get("settings") or {}) != key:
            raise ValueError(f"{path}: its kind and settings do not give its key {key!r} (corrupt or edited)")
        return Record(key, data["kind"], data["settings"], data.get("value"), data.get("wall_s"),
                      data.get("cpu_s"), data.get("trials"), data.get("note"))

    def record(self, kind: str, settings: Mapping[str, Any]) -> Record | None:
        """The record of ``kind`` with ``settings``: this store's, else the first fallback's
        (copied into this store), else ``None``."""
        key = record_key(kind, settings)
        path = self.path(key)
        if path.exists():
            return self._read(path, key)
        for fb in self.fallbacks:
            rec = fb.record(kind, settings)
            if rec is not None:
                return self._publish(rec, replace=False)
        return None

    def get(self, kind: str, settings: Mapping[str, Any], default: Any = None) -> Any:
        """The value of the record of ``kind`` with ``settings``, else ``default``."""
        rec = self.record(kind, settings)
        return default if rec is None else rec.value

    def has(self, kind: str, settings: Mapping[str, Any]) -> bool:
        return self.record(kind, settings) is not None

    # ---------------------------------------------------------------- writing
    def put(self, kind: str, settings: Mapping[str, Any], value: Any, *, wall_s: float | None = None,
            cpu_s: float | None = None, trials: Mapping[str, Any] | None = None, note: str | None = None,
            replace: bool = False) -> Record:
        """Store ``value`` as the record of ``kind`` with ``settings``; returns the record now
        stored under its key: this one, or (``replace=False``) an earlier writer's, in which
        case this one is kept as a duplicate (see the module docstring)."""
        settings = dict(settings)
        check_plain(settings, "settings")
        check_plain(value, "value")
        if trials is not None:
            trials = dict(trials)
            check_plain(trials, "trials")
        rec = Record(record_key(kind, settings), kind, settings, value, _seconds(wall_s, "wall_s"),
                     _seconds(cpu_s, "cpu_s"), trials, note)
        return self._publish(rec, replace)

    def compute(self, kind: str, settings: Mapping[str, Any], fn: Callable[[], Any], *,
                trials: Mapping[str, Any] | None = None) -> Any:
        """The value of the record of ``kind`` with ``settings``; without one, ``fn()``
        stored with its wall and CPU seconds (of this process) first."""
        rec = self.record(kind, settings)
        if rec is None:
            t, c = time.perf_counter(), time.process_time()
            value = fn()
            rec = self.put(kind, settings, value, wall_s=time.perf_counter() - t, cpu_s=time.process_time() - c,
                           trials=trials)
        return rec.value

    def _publish(self, rec: Record, replace: bool) -> Record:
        path = self.path(rec.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(rec.to_json(), indent=1, sort_keys=False, allow_nan=True) + "\n"
        token = secrets.token_hex(4)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{token}")
        try:
            with open(tmp, "x", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            if replace:
                os.replace(tmp, path)
            else:
                try:
                    os.link(tmp, path)
                except FileExistsError:
                    os.replace(tmp, path.with_name(f"{path.name[:-5]}.dup-{token}.json"))
                    return self._read(path, rec.key)
                os.unlink(tmp)
        finally:
            if tmp.exists():
                tmp.unlink()
        _fsync_dir(path.parent)
        return rec


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
