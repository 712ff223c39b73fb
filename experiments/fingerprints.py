"""What a study's results depend on beyond names: the code of its functions and the exact
value of its evaluator's options.

A study stores, besides the names of its evaluator and of the functions its space calls
(constraint functions, a joint space's software factory, a proposal or repair), a
fingerprint of each one's code, and an exact hash of the evaluator's options. Resuming
compares them (:mod:`experiments.study`), so that a study never mixes trials of two
evaluators that share a name.

* :func:`code_fingerprint` -- a function or class defined in a source file (your code, or
  coexplore run from a checkout): the SHA-256 of its own source and of its module's file.
  An object from an installed distribution (under ``site-packages``): the distribution's
  name and version and, when it was installed from a VCS, the commit it records. Code in
  *other* modules that the function calls is covered only through those (an installed
  package's version); a callable instance is fingerprinted by its class and its state, a
  ``functools.partial`` by its function and arguments, a closure by its function and the
  values it closes over.
* :func:`exact_hash` -- SHA-256 of a canonical, typed encoding: numpy arrays hash by
  dtype, shape and bytes (never by their abbreviated text), floats by their exact value,
  and ``1``, ``1.0``, ``True`` and ``"1"`` all differ.
* :func:`fingerprint_changes` -- one phrase per thing that differs between two
  fingerprints, naming it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import inspect
import json
import math
import pickle
import platform
import re
import struct
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["code_fingerprint", "exact_hash", "fingerprint_changes"]

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_MAX_DEPTH = 4


# -- exact hash ------------------------------------------------------------------------
def _feed(h: Any, value: Any, depth: int = 0) -> None:
    """Write a typed, unambiguous encoding of ``value`` into the hash ``h``."""

    def tag(t: str, payload: bytes = b"") -> None:
        h.update(t.encode() + b":" + str(len(payload)).encode() + b":" + payload)

    if depth > 64:
        raise ValueError("exact_hash: value nested more than 64 levels deep")
    if value is None:
        tag("none")
    elif isinstance(value, bool):
        tag("bool", b"1" if value else b"0")
    elif isinstance(value, int):
        tag("int", str(value).encode())
    elif isinstance(value, float):
        # the exact binary value; every NaN is one value
        tag("float", b"nan" if math.isnan(value) else struct.pack("<d", value))
    elif isinstance(value, complex):
        tag("complex", struct.pack("<dd", value.real, value.imag))
    elif isinstance(value, str):
        tag("str", value.encode("utf-8", "surrogatepass"))
    elif isinstance(value, bytes | bytearray):
        tag("bytes", bytes(value))
    elif isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = np.asarray(value)
        if arr.dtype.hasobject:
            tag("objarray", f"{arr.shape}".encode())
            for v in arr.ravel().tolist():
                _feed(h, v, depth + 1)
        else:
            tag(
                "ndarray" if isinstance(value, np.ndarray) else "npscalar",
                f"{arr.dtype.str}|{arr.shape}".encode(),
            )
            tag("data", np.ascontiguousarray(arr).tobytes())
    elif isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: (type(kv[0]).__name__, repr(kv[0])))
        tag("map", str(len(items)).encode())
        for k, v in items:
            _feed(h, k, depth + 1)
            _feed(h, v, depth + 1)
    elif isinstance(value, list | tuple):
        tag("list" if isinstance(value, list) else "tuple", str(len(value)).encode())
        for v in value:
            _feed(h, v, depth + 1)
    elif isinstance(value, set | frozenset):
        inner = sorted(exact_hash(v) for v in value)
        tag("set", ",".join(inner).encode())
    elif isinstance(value, Path):
        tag("path", str(value).encode())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        tag("dataclass", _qualified(type(value)).encode())
        _feed(h, {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, depth + 1)
    elif hasattr(value, "__array__") and not callable(value):
        try:
            arr = np.asarray(value)
        except Exception:
            arr = None
        if arr is not None and not arr.dtype.hasobject:
            tag("array-like", _qualified(type(value)).encode())
            _feed(h, arr, depth + 1)
        else:
            _feed_object(h, value, tag)
    elif callable(value):
        tag("callable")
        _feed(h, code_fingerprint(value), depth + 1)
    else:
        _feed_object(h, value, tag)


def _feed_object(h: Any, value: Any, tag: Any) -> None:
    """Any other object: its type and its pickle (deterministic for plain state), else its
    ``repr`` with object addresses removed."""
    tag("object", _qualified(type(value)).encode())
    try:
        tag("pickle", pickle.dumps(value, protocol=4))
    except Exception:
        tag("repr", _ADDRESS.sub("", repr(value)).encode())


def exact_hash(value: Any) -> str:
    """SHA-256 (hex) of a canonical encoding of ``value`` (see the module docstring):
    equal for equal values of equal types, different whenever one element differs."""
    h = hashlib.sha256()
    _feed(h, value)
    return h.hexdigest()


# -- code fingerprints -----------------------------------------------------------------
def _qualified(obj: Any) -> str:
    return f"{getattr(obj, '__module__', None) or '?'}:{getattr(obj, '__qualname__', None) or type(obj).__name__}"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.cache
def _site_roots() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get("purelib"), paths.get("platlib")}
    roots.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    out = []
    for r in roots:
        if r:
            try:
                out.append(Path(r).resolve())
            except OSError:
                continue
    return tuple(out)


@functools.cache
def _packages() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _installed(module: Any) -> dict[str, Any] | None:
    """``{"package", "version", "revision"}`` for a module of an installed distribution
    (its file is under site-packages), else None."""
    file = getattr(module, "__file__", None)
    if not file:
        return None
    try:
        path = Path(file).resolve()
    except OSError:
        return None
    if not any(path.is_relative_to(r) for r in _site_roots()):
        return None
    top = module.__name__.partition(".")[0]
    for dist_name in _packages().get(top, []):
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            continue
        revision = None
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
            revision = (direct.get("vcs_info") or {}).get("commit_id")
        except (OSError, ValueError, AttributeError):
            revision = None
        return {
            "package": dist.metadata["Name"] or dist_name,
            "version": dist.version,
            "revision": revision,
        }
    return None


def _module_file_hash(module: Any) -> str | None:
    file = getattr(module, "__file__", None)
    if not file:
        return None
    try:
        return _sha256(Path(file).read_bytes())
    except OSError:
        return None


def _source_hash(obj: Any) -> str | None:
    try:
        return _sha256(inspect.getsource(obj).encode())
    except (OSError, TypeError):
        return None


def _state_hash(obj: Any) -> str | None:
    """Hash of an instance's attributes (None when it has none we can read)."""
    try:
        state = vars(obj)
    except TypeError:
        return None
    try:
        return exact_hash(state)
    except (ValueError, RecursionError):
        return None


def code_fingerprint(obj: Any, *, state: bool = True, _depth: int = 0) -> dict[str, Any]:
    """A JSON-able fingerprint of the code ``obj`` runs (see the module docstring).

    ``ref`` names the object (``module:qualname``); ``kind`` is ``source`` (with
    ``source_sha256`` and ``module_sha256``), ``package`` (``package``, ``version``,
    ``revision``), ``builtin`` (the Python version) or ``partial``; an instance adds
    ``state_sha256`` (its attributes; ``state=False`` leaves them out, for an instance
    built from options that are hashed on their own) and a closure ``closure``.
    """
    if isinstance(obj, functools.partial):
        return {
            "kind": "partial",
            "ref": _qualified(obj.func),
            "func": code_fingerprint(obj.func, _depth=_depth + 1),
            "arguments_sha256": exact_hash([list(obj.args), dict(obj.keywords)]),
        }
    target = obj
    if inspect.ismethod(target):
        target = target.__func__
    target = inspect.unwrap(target) if inspect.isfunction(target) else target
    instance = not (
        inspect.isfunction(target)
        or inspect.isclass(target)
        or inspect.isbuiltin(target)
        or inspect.ismethoddescriptor(target)
    )
    cls_or_fn = type(target) if instance else target
    module = inspect.getmodule(cls_or_fn)
    fp: dict[str, Any] = {"ref": _qualified(cls_or_fn)}
    pkg = _installed(module) if module is not None else None
    if pkg is not None:
        fp.update(kind="package", **pkg)
    elif inspect.isbuiltin(cls_or_fn) or module is None or not getattr(module, "__file__", None):
        fp.update(
            kind="builtin", python=platform.python_version(), implementation=sys.implementation.name
        )
    else:
        fp.update(
            kind="source",
            module=module.__name__,
            source_sha256=_source_hash(cls_or_fn),
            module_sha256=_module_file_hash(module),
        )
    if instance and state:
        fp["state_sha256"] = _state_hash(target)
    closure = getattr(target, "__closure__", None) if inspect.isfunction(target) else None
    if closure and _depth < _MAX_DEPTH:
        cells = []
        for cell in closure:
            try:
                v = cell.cell_contents
            except ValueError:  # an empty cell
                cells.append(None)
                continue
            if callable(v) and not isinstance(v, type):
                cells.append(code_fingerprint(v, _depth=_depth + 1))
            else:
                try:
                    cells.append(exact_hash(v))
                except (ValueError, RecursionError):
                    cells.append(_qualified(type(v)))
        fp["closure"] = cells
    return fp


def fingerprint_changes(
    what: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
) -> list[str]:
    """Phrases naming how the fingerprint of ``what`` changed (empty when it did not)."""
    if old == new:
        return []
    if old is None or new is None:
        return [f"{what}: {'added' if old is None else 'removed'}"]
    ref_old, ref_new = old.get("ref"), new.get("ref")
    if ref_old != ref_new:
        return [f"{what}: is now {ref_new}, was {ref_old}"]
    name = f"{what} {ref_new}"
    out = []
    if old.get("kind") != new.get("kind"):
        out.append(f"{name}: now {_where(new)}, was {_where(old)}")
    elif new.get("kind") == "source":
        if old.get("source_sha256") != new.get("source_sha256"):
            out.append(f"{name}: its source changed")
        elif old.get("module_sha256") != new.get("module_sha256"):
            out.append(f"{name}: its module {new.get('module')} changed (its own source did not)")
    elif new.get("kind") == "package":
        if (old.get("package"), old.get("version")) != (new.get("package"), new.get("version")):
            out.append(
                f"{name}: package {old.get('package')} {old.get('version')} -> "
                f"{new.get('package')} {new.get('version')}"
            )
        if old.get("revision") != new.get("revision"):
            out.append(
                f"{name}: installed from revision {new.get('revision')}, was {old.get('revision')}"
            )
    elif new.get("kind") == "builtin":
        if old.get("python") != new.get("python"):
            out.append(f"{name}: Python {old.get('python')} -> {new.get('python')}")
    elif new.get("kind") == "partial":
        out += fingerprint_changes(what, old.get("func"), new.get("func"))
        if old.get("arguments_sha256") != new.get("arguments_sha256"):
            out.append(f"{name}: its bound arguments changed")
    if old.get("state_sha256") != new.get("state_sha256"):
        out.append(f"{name}: the instance's attributes changed")
    if old.get("closure") != new.get("closure"):
        out.append(f"{name}: the values it closes over changed")
    return out or [f"{name}: its code changed"]


def _where(fp: Mapping[str, Any]) -> str:
    if fp.get("kind") == "package":
        return f"from package {fp.get('package')} {fp.get('version')}"
    if fp.get("kind") == "source":
        return f"from source in {fp.get('module')}"
    return str(fp.get("kind"))
