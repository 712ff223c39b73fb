"""`Study`: a named co-design sweep kept in storage.

A study binds a space, objectives (``{"edp": "min"}``), an evaluator, an optimizer and one
seed to a storage URL. :meth:`Study.optimize` runs the ask -> evaluate -> tell loop:

1. re-queue trials left RUNNING by a dead driver (same number, same parameters);
2. rebuild the optimizer from ``(seed, stored history)``;
3. while fewer than ``n_trials`` trials are finished: fill free executor slots with
   re-queued trials first, then with new proposals (each inserted RUNNING in its own
   transaction *before* it is evaluated); take finished results, judge the objectives
   (missing / NaN / inf -> FAILED) and write them in one transaction each.

``n_trials`` is the *total* budget of finished trials (COMPLETE + INFEASIBLE + FAILED),
so running the same call again after a kill resumes the study to the same total instead
of adding more. A finished trial is never evaluated again and never lost.

Several drivers (processes, or hosts sharing a PostgreSQL study) may run ``optimize`` on
one study at once: new trials are only inserted while the study holds fewer than
``n_trials`` trials, counted under the study lock (:meth:`Storage.create_trials`
``max_total``), so together they finish exactly ``n_trials``; a driver whose own work is
done waits for the others' RUNNING trials, re-queueing those of a driver that died
(dead process on this host, or no heartbeat for ``stale_after_s``) and running them itself.
They may all be started at the same moment on a study that does not exist yet: one of
them creates it and the others join it (:meth:`Storage.open_or_create_study`). Exports
and plots are written under a temporary name and renamed into place, so drivers sharing
an output directory never leave a half-written file.

Seeds: every random generator derives from the study seed with
``numpy.random.SeedSequence`` -- the optimizer's from ``(seed, 0)`` and trial ``i``'s
evaluator seed from ``(seed, 1, i)``. A serial run (one worker) is exactly reproducible;
with several workers the set of points of seed-driven optimizers (random, grid) is the
same but the completion order may differ.

A study also stores a manifest: the configuration and its hash, the seed, package
versions, Python, host and the git revision of the working directory.

Resuming checks behaviour, not only names. The configuration stores ``fingerprints``
(:mod:`experiments.fingerprints`): the code of the evaluator and of every function the
space calls (constraint functions, a joint space's software factory, a proposal or
repair), and an exact hash of the evaluator's options. A resume whose evaluator (name,
options or code) or space functions' code differ is refused with
:class:`StudyBehaviourChanged` naming each difference, unless ``allow_changed=True``
(``coexplore run --allow-changed``): then the change is recorded in the study's
``config["resume_log"]`` (what changed, the previous fingerprints, how many trials were
finished before, and how many stored trials break the space as it is now) and the new
fingerprints become the study's. A study stored before fingerprints existed resumes with
a warning, its previous fingerprints recorded as ``"unknown"``. A changed space,
objectives, optimizer or seed is always refused. The config's ``pareto``, ``output`` and
``config_file`` are reporting choices, not results: a changed one is applied (stored, with
a warning for ``pareto``), and the exported front, plots and report use it.

Opening a stored study (:meth:`Study.load`) never imports or calls code the database
names: a space whose description holds references (``function:``, ``software:``) is read as
a :class:`~design_space.space_view.SpaceView` -- data only -- unless the caller passes the
space itself or trusts the references (``trust_references``), and stored evaluator options
are handed to an evaluator only when trusted too.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import inspect
import json
import logging
import math
import os
import platform
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from design_space.errors import SpaceDefinitionError
from design_space.references import callable_ref, import_ref
from design_space.serialization import space_from_dict, space_references, space_to_dict, space_view
from design_space.space_view import SpaceView
from design_space.suggest import did_you_mean
from evaluators.base import EvalStatus
from experiments.executor_factory import make_executor
from experiments.executors import Result, Task
from experiments.export import pareto_dataframe, trials_dataframe, write_table
from experiments.fingerprints import code_fingerprint, exact_hash, fingerprint_changes
from experiments.inner_search import wire_evaluator_options
from experiments.provenance import checkout
from experiments.storage import (
    Storage,
    StorageError,
    StudyRecord,
    TrialRecord,
    make_owner_token,
    owner_is_alive,
)
from optimizer.base import Objective, Optimizer, TrialStatus, parse_objectives
from optimizer.registry import available_optimizers, make_optimizer

logger = logging.getLogger(__name__)

DEFAULT_STORAGE = "sqlite:///coexplore.db"


class StudyConfigMismatch(ValueError):
    """Resuming a study with a different space / objectives / optimizer / seed."""


class StudyBehaviourChanged(StudyConfigMismatch):
    """Resuming a study whose evaluator (name, options, code) or space functions' code
    changed, without ``allow_changed`` (the message names each change)."""


class BadStartError(ValueError):
    """Every trial of the initial design is INFEASIBLE or FAILED: the study stops before
    spending the rest of its budget (``Study.optimize(stop_if_start_fails=...)``); the
    message gives the most common reasons."""


_TRIAL_NUMBER = re.compile(r"\btrial \d+")


def common_reasons(reasons: Sequence[str | None], top: int = 3) -> list[tuple[str, int]]:
    """The ``top`` most common reasons with their counts, most common first; the trial
    number in a reason ("... while evaluating trial 7") is written ``trial N`` so that the
    same cause counts once."""
    counts: dict[str, int] = {}
    for r in reasons:
        text = (r or "").strip()
        key = _TRIAL_NUMBER.sub("trial N", text.splitlines()[0]) if text else "no reason given"
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def refuse_reimported_main() -> None:
    """Stop a study that a child process is starting while it re-imports the driver's
    main module (a ``multiprocessing`` child started with ``spawn`` or ``forkserver`` by
    some other pool -- a Dask ``LocalCluster``, a user's ``ProcessPoolExecutor`` -- runs
    a guard-less script again): one line naming the fix, before anything is stored.
    coexplore's own workers never re-run the main module
    (:mod:`experiments.executors`)."""
    import multiprocessing
    import sys

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        main = getattr(sys.modules.get("__main__"), "__file__", None) or "the main script"
        raise RuntimeError(
            f"a child process is re-running {main} while it starts, and so the study again: "
            'put the code that runs the study under `if __name__ == "__main__":`'
        )


def derived_seed(seed: int, *key: int) -> int:
    """A 32-bit seed derived from the study seed and a key path (reproducible)."""
    return int(np.random.SeedSequence(entropy=int(seed), spawn_key=key).generate_state(1)[0])


class BoundEvaluator:
    """``fn(point, **options)`` as a picklable callable (keeps ``seed`` passing working)."""

    def __init__(self, fn: Callable[..., Any], options: Mapping[str, Any]) -> None:
        self.fn = fn
        self.options = dict(options)
        try:
            params = inspect.signature(fn).parameters
            self._takes_seed = "seed" in params or any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
            )
        except (TypeError, ValueError):
            self._takes_seed = False

    def __call__(self, point: dict, seed: int | None = None) -> Any:
        if self._takes_seed and seed is not None:
            return self.fn(point, seed=seed, **self.options)
        return self.fn(point, **self.options)


def resolve_evaluator(spec: Any, options: Mapping[str, Any] | None = None) -> Callable[..., Any]:
    """A callable from ``"module:function"`` / ``"module:Class"`` or a registered name
    (:data:`evaluators.registry.EVALUATORS`; a class is instantiated with ``options``, a
    function bound with them) or a callable (bound with ``options``). A class's declared
    mapper and search options are wired to the ask/tell optimizers first
    (:func:`experiments.inner_search.wire_evaluator_options`: ``mapper: constrained-bo``)."""
    options = dict(options or {})
    obj = spec
    if isinstance(spec, str) and ":" not in spec:
        from evaluators.registry import EVALUATORS

        obj = EVALUATORS.get(spec)
    elif isinstance(spec, str):
        try:
            obj = import_ref(spec, "evaluator")
        except SpaceDefinitionError as e:
            raise ValueError(str(e)) from None
    if isinstance(obj, type):
        options = wire_evaluator_options(obj, options)  # ask/tell optimizers as mapping searches
        try:
            return obj(**options)
        except TypeError as e:
            raise ValueError(f"evaluator {spec!r}: cannot instantiate with {options}: {e}") from None
    if not callable(obj):
        raise ValueError(f"evaluator {spec!r} is not callable")
    return BoundEvaluator(obj, options) if options else obj


def _evaluator_id(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    target = spec.fn if isinstance(spec, BoundEvaluator) else spec
    return callable_ref(target) or getattr(target, "__qualname__", None) or type(target).__name__


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _space_json(space: Any) -> dict[str, Any]:
    """The space's identity: its serialized form, or for a space that cannot be saved (a
    joint space whose software factory is a closure) its description with object addresses
    removed, so that the same space built in another process resumes the same study."""
    try:
        return space_to_dict(space)
    except SpaceDefinitionError as e:
        return {"unserializable": _ADDRESS.sub("", str(e)), "repr": _ADDRESS.sub("", repr(space))}


def _canonical_hash(obj: Any) -> str:
    # The hash of the names-level identity, as every stored study has it (kept as it was
    # so that those studies resume); exact values and code are in `fingerprints`.
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


FINGERPRINTS_VERSION = 1
_CHANGEABLE = ("evaluator", "evaluator_options")
"""Identity parts that ``allow_changed`` lets a resume change (the evaluator's)."""


def _safe_fingerprint(obj: Any, *, state: bool = True) -> dict[str, Any]:
    try:
        return code_fingerprint(obj, state=state)
    except Exception as e:  # a fingerprint must never stop a study; say what is unknown
        return {"ref": getattr(obj, "__qualname__", type(obj).__name__), "kind": "unknown",
                "error": f"{type(e).__name__}: {e}"}


def space_functions(space: Any) -> list[tuple[str, Any]]:
    """``(label, callable)`` of every function ``space`` calls: its constraint functions
    (expressions are part of the space's description), proposal and repair, and a joint
    space's software factory and hardware functions."""
    out: list[tuple[str, Any]] = []
    software = getattr(space, "software", None)
    hardware = getattr(space, "hardware", None)
    if callable(software) and hardware is not None:
        out.append(("software", software))
        out += [(f"hardware {label}", fn) for label, fn in space_functions(hardware)]
        return out
    for c in getattr(space, "constraints", ()) or ():
        if getattr(c, "expression", None) is None and callable(getattr(c, "predicate", None)):
            out.append((f"constraint {c.name!r}", c.predicate))
    for what in ("proposal", "repair"):
        fn = getattr(space, what, None)
        if callable(fn):
            out.append((what, fn))
    return out


def behaviour_fingerprints(spec: Any, evaluator: Any, options: Mapping[str, Any] | None,
                           space: Any) -> dict[str, Any]:
    """What the study's results depend on beyond names (module docstring): the code of
    the evaluator (``spec`` resolved to ``evaluator``) and of the space's functions, and
    the exact hash of the evaluator's options."""
    fps: dict[str, Any] = {"version": FINGERPRINTS_VERSION}
    if evaluator is not None:
        target = evaluator.fn if isinstance(evaluator, BoundEvaluator) else evaluator
        # an instance coexplore built from a name and options: the options say its state
        built = isinstance(spec, str) and not isinstance(evaluator, BoundEvaluator)
        fps["evaluator"] = _safe_fingerprint(target, state=not built)
    else:
        fps["evaluator"] = None
    try:
        fps["evaluator_options_sha256"] = exact_hash(dict(options or {}))
    except (ValueError, RecursionError) as e:
        fps["evaluator_options_sha256"] = f"unknown ({e})"
    fps["functions"] = {label: _safe_fingerprint(fn) for label, fn in space_functions(space)}
    return fps


def behaviour_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """One phrase per difference between two :func:`behaviour_fingerprints`."""
    out = fingerprint_changes("evaluator", old.get("evaluator"), new.get("evaluator"))
    if old.get("evaluator_options_sha256") != new.get("evaluator_options_sha256"):
        out.append("evaluator options: their exact values differ (an exact hash that reads "
                   "every element of an array)")
    fo, fn = old.get("functions") or {}, new.get("functions") or {}
    for label in sorted(set(fo) | set(fn)):
        out += fingerprint_changes(label, fo.get(label), fn.get(label))
    return out


def _plain(value: Any) -> Any:
    """``value`` as it reads back from storage (numpy -> Python, tuples -> lists)."""
    if isinstance(value, np.ndarray | np.generic):
        return _plain(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _same(a: Any, b: Any) -> bool:
    """Equal as stored data (the names-level comparison; exact values are fingerprinted)."""
    return (json.dumps(_plain(a), sort_keys=True, default=str)
            == json.dumps(_plain(b), sort_keys=True, default=str))


def _short(value: Any, limit: int = 120) -> str:
    text = repr(_plain(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _broken_trials(space: Any, trials: Sequence[TrialRecord]) -> tuple[int, str | None]:
    """How many stored trials the space rejects as it is now, and the first reason."""
    if not hasattr(space, "validate"):
        return 0, None
    n, first = 0, None
    for r in trials:
        try:
            problems = space.validate(r.params)
        except Exception as e:  # the stored point no longer even fits the space
            problems = [f"{type(e).__name__}: {e}"]
        if problems:
            n += 1
            first = first or f"trial {r.number}: " + "; ".join(map(str, problems))
    return n, first


def _reconcile(st: Storage, record: StudyRecord, *, identity: Mapping[str, Any], chash: str,
               fingerprints: Mapping[str, Any], reporting: Mapping[str, Any],
               allow_changed: bool, space: Any) -> StudyRecord:
    """Check a resume's behaviour against the stored study and record what it changes
    (module docstring); returns the record as stored afterwards."""
    name = record.name
    changed_ids: list[str] = []
    changes: list[str] = []
    if record.config_hash != chash:
        old = {k: record.config.get(k) for k in identity}
        diff = [k for k in identity if not _same(old[k], identity[k])]
        fixed = [k for k in diff if k not in _CHANGEABLE]
        if diff and (fixed or not allow_changed):
            raise StudyConfigMismatch(
                f"study {name!r} in {st.display_url} was created with a different configuration "
                f"({', '.join(diff) or 'configuration'} differ); resume it with the "
                "original configuration, or use a new study name"
                + ("" if fixed else
                   "; or pass --allow-changed (allow_changed=True) to continue it with the "
                   "changed evaluator, which is recorded in the study")
            )
        changed_ids = diff
        changes += [f"{k}: {_short(old[k])} -> {_short(identity[k])}" for k in diff]
    stored = record.config.get("fingerprints")
    if stored is None:
        logger.warning(
            "study %r was stored without code fingerprints (by an older coexplore): the code "
            "of the evaluator and constraint functions its %d trial(s) ran with is unknown, "
            "so a change cannot be detected this time; recorded as unknown, and the current "
            "fingerprints are checked from now on", name,
            st.count(record.id, list(TrialStatus)))
    else:
        changes += [c for c in behaviour_changes(stored, fingerprints) if c not in changes]
    if changes and not allow_changed:
        raise StudyBehaviourChanged(
            f"study {name!r} in {st.display_url} was run with a different evaluator or space "
            f"function: {'; '.join(changes)}. Its trials would mix results of two codes. "
            "Resume it with the original code, use a new study name, or pass "
            "--allow-changed (allow_changed=True) to continue anyway, which is recorded in "
            "the study"
        )
    entry: dict[str, Any] | None = None
    if stored is None:
        entry = {"at": time.time(), "fingerprints_before": "unknown", "changes": changes,
                 "allow_changed": bool(changes)}
    elif changes:
        trials = st.trials(record.id, with_info=False)
        finished = [r for r in trials if r.status in (TrialStatus.COMPLETE, TrialStatus.INFEASIBLE,
                                                       TrialStatus.FAILED)]
        n_broken, example = _broken_trials(space, finished)
        logger.warning(
            "study %r resumes with --allow-changed: %s; its %d finished trial(s) before "
            "this point ran with the previous code (recorded in the study's resume_log)%s",
            name, "; ".join(changes), len(finished),
            f"; {n_broken} of them break the space as it is now (first: {example})"
            if n_broken else "")
        entry = {"at": time.time(), "allow_changed": True, "changes": changes,
                 "fingerprints_before": stored, "finished_trials_before": len(finished),
                 "trials_breaking_space_now": n_broken}
    updates = {k: v for k, v in reporting.items() if not _same(record.config.get(k), v)}
    if "pareto" in updates:
        logger.warning("study %r: the config's pareto changed from %r to %r; applied: the "
                       "exported front, plots and report use the new one",
                       name, record.config.get("pareto"), updates["pareto"])
    if entry is None and not updates and not changed_ids:
        return record

    def apply(cfg: dict[str, Any]) -> dict[str, Any]:
        cfg = dict(cfg)
        cfg.update(updates)
        cfg.update({k: identity[k] for k in changed_ids})
        # several drivers resuming at once: the first records the change, the others
        # find the fingerprints already current and add nothing
        if entry is not None and not _same(cfg.get("fingerprints"), fingerprints):
            cfg["resume_log"] = [*(cfg.get("resume_log") or []), entry]
        cfg["fingerprints"] = dict(fingerprints)
        return cfg

    return st.update_study_config(record.id, apply, config_hash=chash if changed_ids else None)


def _trusted(ref: str, trust: bool | Sequence[str] | frozenset[str]) -> bool:
    """Whether ``trust_references`` admits ``ref`` (all, or its exact text or module)."""
    if isinstance(trust, bool):
        return trust
    return ref in trust or ref.partition(":")[0] in trust


def _stored_space(st: Storage, record: StudyRecord,
                  trust: bool | Sequence[str] | frozenset[str]) -> Any:
    """The stored space: rebuilt when it names no code (or only trusted code), else a
    data-only :class:`SpaceView`; ``None`` when it was not stored."""
    data = record.space
    if "unserializable" in data:
        return None
    refs = space_references(data)
    if all(_trusted(ref, trust) for _, ref in refs):
        def resolve(ref: str, what: str) -> Any:
            if not _trusted(ref, trust):  # what space_references did not list
                raise SpaceDefinitionError(f"{what}: {ref!r} is stored in the database and "
                                           "not trusted; it is not imported")
            return import_ref(ref, what)

        try:
            return space_from_dict(data, resolve=resolve)
        except Exception as e:
            logger.warning("study %r: cannot rebuild its space: %s", record.name, e)
    seen: list[str] = []
    if any(where == "software" for where, _ in refs) and st.count(record.id, list(TrialStatus)):
        with contextlib.suppress(StorageError):  # the first trial names every parameter
            seen = list(st.trial(record.id, 0).params)
    try:
        return space_view(data, seen)
    except Exception as e:
        logger.warning("study %r: cannot read its stored space: %s", record.name, e)
        return None


def _git_revision() -> str | None:
    """The manifest's ``git_revision``: HEAD, with ``-dirty`` where tracked files changed."""
    head, dirty = checkout(timeout_s=5.0)   # at every run start: a hung git must not hold it long
    return None if head is None else head + ("-dirty" if dirty else "")


def build_manifest(config: Mapping[str, Any], config_hash: str, seed: int) -> dict[str, Any]:
    versions = {}
    for pkg in ("coexplore", "numpy", "scipy", "torch", "botorch", "gpytorch", "pandas",
                "scikit-learn", "jax", "sqlalchemy"):
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = None
    return {
        "config": dict(config),
        "config_hash": config_hash,
        "seed": seed,
        "versions": versions,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "git_revision": _git_revision(),
        "created_at": time.time(),
    }


def judge(result: Result, objectives: Sequence[Objective]) -> tuple[TrialStatus, str | None]:
    """Map an executor result to a trial status; objectives must be present and finite."""
    if result.status is EvalStatus.INFEASIBLE:
        return TrialStatus.INFEASIBLE, result.reason or "infeasible"
    if result.status is EvalStatus.FAILED:
        return TrialStatus.FAILED, result.reason or "failed"
    for o in objectives:
        if o.name not in result.metrics:
            return TrialStatus.FAILED, (
                f"objective {o.name!r} is missing from the evaluator's result "
                f"(metrics: {sorted(result.metrics)})"
            )
        v = result.metrics[o.name]
        if math.isnan(v):
            return TrialStatus.FAILED, f"objective {o.name!r} is NaN"
        if math.isinf(v):
            return TrialStatus.FAILED, f"objective {o.name!r} is {v}"
    for k, v in result.constraints.items():
        if not math.isfinite(v):
            return TrialStatus.FAILED, f"constraint {k!r} is {v}"
    return TrialStatus.COMPLETE, None


class Study:
    """A co-design sweep bound to storage. Build with :meth:`create` or :meth:`load`."""

    def __init__(
        self,
        record: StudyRecord,
        storage: Storage,
        space: Any,
        evaluator: Callable[..., Any] | None,
        optimizer: str,
        optimizer_options: Mapping[str, Any],
        timeout_s: float | None = None,
    ) -> None:
        self._record = record
        self.storage = storage
        self.space = space
        self.evaluator = evaluator
        self.optimizer_name = optimizer
        self.optimizer_options = dict(optimizer_options)
        self.objectives = parse_objectives(record.objectives)
        self.timeout_s = timeout_s

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(
        cls,
        name: str,
        space: Any,
        objectives: Mapping[str, str] | Sequence[str] | str,
        evaluator: Any = None,
        optimizer: str | Mapping[str, Any] = "random",
        *,
        optimizer_options: Mapping[str, Any] | None = None,
        evaluator_options: Mapping[str, Any] | None = None,
        storage: str | Path | Storage = DEFAULT_STORAGE,
        seed: int = 0,
        timeout_s: float | None = None,
        load_if_exists: bool = True,
        extra_config: Mapping[str, Any] | None = None,
        allow_changed: bool = False,
    ) -> Study:
        """Create the study ``name`` in ``storage``, or load it if it exists with the same
        configuration (space, objectives, evaluator, optimizer and seed) and the same
        behaviour (the code of the evaluator and of the space's functions, the exact
        evaluator options: see the module docstring).

        ``optimizer``: a registered name, or the config's form ``{"name": ..., "options":
        {...}}`` (then without ``optimizer_options``).
        ``allow_changed``: resume even though the evaluator (name, options or code) or the
        code of a space function changed; the change is recorded in the study.
        ``extra_config``: reporting choices stored with the study (``pareto``, ``output``,
        ``config_file``); on a resume, changed ones are applied.

        Raises:
            StudyConfigMismatch: it exists with a different configuration (the message
                says which parts differ).
            StudyBehaviourChanged: it exists with another evaluator or space-function
                code, and ``allow_changed`` is false (the message names each change).
            ValueError: unknown optimizer (lists the known ones), an optimizer mapping
                with other keys than name and options, options that are not a mapping,
                bad objectives, an evaluator that cannot be imported.
        """
        refuse_reimported_main()
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"study name must be a non-empty string, got {name!r}")
        optimizer, optimizer_options = _optimizer_spec(optimizer, optimizer_options)
        if evaluator_options is not None and not isinstance(evaluator_options, Mapping):
            raise ValueError(f"evaluator_options must be a mapping of option name to value, got "
                             f"{type(evaluator_options).__name__} {_short(evaluator_options)}")
        objs = parse_objectives(objectives)
        st = storage if isinstance(storage, Storage) else Storage(storage)
        ev = resolve_evaluator(evaluator, evaluator_options) if evaluator is not None else None
        opts = dict(optimizer_options or {})
        # build once now so that a bad name or option fails before anything is stored
        make_optimizer(optimizer, space, objs, derived_seed(seed, 0), opts)
        identity = {
            "space": _space_json(space),
            "objectives": {o.name: o.direction for o in objs},
            "evaluator": _evaluator_id(evaluator) if evaluator is not None else None,
            "evaluator_options": dict(evaluator_options or {}),
            "optimizer": {"name": optimizer, "options": opts},
            "seed": int(seed),
        }
        fingerprints = behaviour_fingerprints(evaluator, ev, evaluator_options, space)
        config = {**identity, **dict(extra_config or {}), "fingerprints": fingerprints}
        chash = _canonical_hash(identity)
        record = st.find_study(name)
        created = False
        if record is None:
            # Several drivers started at once on a new study all get here: one creates it
            # and the others join it, exactly as if it had existed before they started.
            record, created = st.open_or_create_study(
                name,
                seed=int(seed),
                objectives={o.name: o.direction for o in objs},
                space=_space_json(space),
                config=config,
                config_hash=chash,
                manifest=build_manifest(config, chash, int(seed)),
            )
        if not created:
            if not load_if_exists:
                raise ValueError(f"study {name!r} already exists in {st.display_url}")
            record = _reconcile(st, record, identity=identity, chash=chash,
                                fingerprints=fingerprints, reporting=dict(extra_config or {}),
                                allow_changed=allow_changed, space=space)
            logger.info("resuming study %r from %s", name, st.display_url)
        return cls(record, st, space, ev, optimizer, opts, timeout_s)

    @classmethod
    def load(
        cls,
        name: str | None,
        storage: str | Path | Storage,
        evaluator: Any = None,
        *,
        evaluator_options: Mapping[str, Any] | None = None,
        space: Any = None,
        trust_references: bool | Sequence[str] = False,
        allow_changed: bool = False,
    ) -> Study:
        """Open an existing study (for inspection, export, or to continue it).

        ``name`` may be ``None`` when the storage holds exactly one study.

        Nothing the database names is imported or called (see the module docstring): the
        stored space is rebuilt when its description names no code, and otherwise read
        as a data-only :class:`~design_space.space_view.SpaceView` (its parameters, and
        its references as text), which suffices for every read (trials, fronts, export,
        plots, report) but not to continue the study. To continue it, pass ``space`` (the
        space from your config or code; it must describe the stored one), or
        ``trust_references``: ``True`` or the references (``"module:attr"``) or module
        names you trust to be imported. ``evaluator`` (your code) is given
        ``evaluator_options``; the stored options are used only when those are not given
        and they are empty or ``trust_references`` is ``True`` (a list of references does
        not cover them). The evaluator and space
        functions are checked like a resume by :meth:`create` (``allow_changed``).

        Raises:
            StudyConfigMismatch: ``space`` or ``evaluator`` is not the stored one.
            StudyBehaviourChanged: the evaluator's or a space function's code changed and
                ``allow_changed`` is false.
        """
        st = storage if isinstance(storage, Storage) else Storage(storage)
        if name is None:
            studies = st.list_studies()
            if len(studies) != 1:
                raise ValueError(
                    f"{st.display_url} holds {len(studies)} studies "
                    f"({[s.name for s in studies]}); name one with --study"
                )
            record = studies[0]
        else:
            record = st.get_study(name)
        cfg = record.config
        if isinstance(trust_references, str):
            trust_references = [trust_references]
        trust = trust_references if isinstance(trust_references, bool) else frozenset(trust_references)
        if space is not None:
            if not _same(_space_json(space), record.space):
                raise StudyConfigMismatch(
                    f"study {record.name!r} in {st.display_url}: the space given is not the one stored "
                    "with the study; give the space it was created with")
        else:
            space = _stored_space(st, record, trust)
        opt = cfg.get("optimizer", {}) or {}
        if evaluator is None:
            return cls(record, st, space, None, opt.get("name", "random"), opt.get("options", {}))
        if evaluator_options is None:
            stored_options = cfg.get("evaluator_options") or {}
            if stored_options and trust is not True:
                raise ValueError(
                    f"study {record.name!r}: its stored evaluator options are data from the "
                    "database and are not handed to code unless you trust them; pass "
                    "evaluator_options= (from your config), or trust_references=True")
            evaluator_options = stored_options
        ev = resolve_evaluator(evaluator, evaluator_options)
        if not isinstance(space, SpaceView) and space is not None:
            # the stored identity with this evaluator in it: only the evaluator can differ
            identity = {k: cfg.get(k) for k in ("space", "objectives", "optimizer", "seed")}
            identity.update(evaluator=_evaluator_id(evaluator),
                            evaluator_options=dict(evaluator_options))
            record = _reconcile(
                st, record, identity=identity, chash=_canonical_hash(identity),
                fingerprints=behaviour_fingerprints(evaluator, ev, evaluator_options, space),
                reporting={}, allow_changed=allow_changed, space=space)
        return cls(record, st, space, ev, opt.get("name", "random"), opt.get("options", {}))

    # ------------------------------------------------------------------ properties
    @property
    def name(self) -> str:
        return self._record.name

    @property
    def seed(self) -> int:
        return self._record.seed

    @property
    def manifest(self) -> dict[str, Any]:
        return self._record.manifest

    @property
    def trials(self) -> list[TrialRecord]:
        return self.storage.trials(self._record.id)

    @property
    def record(self) -> StudyRecord:
        return self._record

    def trial(self, number: int) -> TrialRecord:
        """One trial, with its ``info``."""
        return self.storage.trial(self._record.id, number)

    def status_counts(self) -> dict[TrialStatus, int]:
        return self.storage.status_counts(self._record.id)

    def reasons(self, top: int = 3) -> dict[TrialStatus, list[tuple[str, int]]]:
        """Per status with trials (INFEASIBLE, FAILED), its ``top`` most common reasons
        and their counts (:func:`common_reasons`)."""
        out = {}
        for status in (TrialStatus.INFEASIBLE, TrialStatus.FAILED):
            recs = self.storage.trials(self._record.id, [status], with_info=False)
            if recs:
                out[status] = common_reasons([r.reason for r in recs], top)
        return out

    def _check_start(self, n_initial: int) -> None:
        """:class:`BadStartError` when the study has at least ``n_initial`` finished
        trials and none of them is COMPLETE."""
        counts = self.status_counts()
        bad = counts[TrialStatus.INFEASIBLE] + counts[TrialStatus.FAILED]
        if counts[TrialStatus.COMPLETE] or bad < n_initial:
            return
        parts = "; ".join(f"{status.value.lower()}: " + ", ".join(f"{n} x {r}" for r, n in rs)
                          for status, rs in self.reasons().items())
        raise BadStartError(
            f"study {self.name!r}: all {bad} trials of the initial design are infeasible or "
            f"failed, so the run stops before spending the rest of its budget; most common "
            f"reasons -- {parts}")

    def n_finished(self) -> int:
        return self.storage.count(
            self._record.id, [TrialStatus.COMPLETE, TrialStatus.INFEASIBLE, TrialStatus.FAILED]
        )

    # ------------------------------------------------------------------ the loop
    def _make_optimizer(self) -> Optimizer:
        if self.space is None:
            raise ValueError(f"study {self.name!r}: no space available to optimize over")
        if isinstance(self.space, SpaceView):
            raise ValueError(
                f"study {self.name!r}: its stored space names code ({self.space.unresolved()}) "
                "that opening a study does not import; to continue it, pass the space from "
                "your config (coexplore run CONFIG, Study.create, or Study.load(space=...)) or "
                "trust those references (Study.load(trust_references=...))")
        return make_optimizer(
            self.optimizer_name, self.space, self.objectives, derived_seed(self.seed, 0),
            self.optimizer_options,
        )

    def optimize(
        self,
        n_trials: int,
        *,
        workers: int = 1,
        executor: str = "auto",
        timeout_s: float | None = None,
        progress: bool = True,
        batch_size: int = 1,
        cluster: str | None = None,
        heartbeat_s: float = 30.0,
        stale_after_s: float = 300.0,
        stop_if_start_fails: int | None = None,
    ) -> None:
        """Run until ``n_trials`` trials of this study are finished (total, see module
        docstring).

        Args:
            workers: parallel evaluations (local processes when > 1).
            executor: ``"auto"`` (in-process for 1 worker without timeout, else
                processes), ``"inline"`` or ``"process"``.
            timeout_s: per-trial limit; a trial past it is FAILED and the sweep goes on.
            progress: show a progress bar with the best value so far.
            batch_size: points asked from the optimizer at once when several slots are
                free (1 = one at a time, with the in-flight points pending).
            cluster: address of an existing Dask scheduler (``tcp://host:8786``); implies
                ``executor="dask"``. ``executor="dask"`` without it starts a
                ``LocalCluster`` of ``workers`` worker processes.
            heartbeat_s: how often this driver marks its RUNNING trials alive.
            stale_after_s: RUNNING trials whose driver has not heartbeaten for this long
                (on any host) are re-queued; a driver on this host whose process is gone
                is detected at once.
            stop_if_start_fails: the size of the initial design: once the study has this
                many finished trials and none is COMPLETE, raise :class:`BadStartError`
                (with the most common reasons) instead of spending the rest of the
                budget; ``None``: never stop for that.

        Raises:
            BadStartError: see ``stop_if_start_fails``.
            experiments.executors.WorkerStartError: the worker processes cannot start.
        """
        refuse_reimported_main()
        if not isinstance(n_trials, int) or n_trials < 0:
            raise ValueError(f"n_trials must be a non-negative integer, got {n_trials!r}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be >= 1 (an integer), got {workers!r}")
        if self.evaluator is None:
            raise ValueError(f"study {self.name!r}: no evaluator given")
        sid = self._record.id
        owner = make_owner_token()
        requeued = self.storage.requeue_stale(sid, owner_is_alive, stale_after_s)
        if requeued:
            logger.warning("re-queued %d trial(s) left RUNNING by a dead process: %s",
                           len(requeued), requeued)
        if stop_if_start_fails is not None:
            if isinstance(stop_if_start_fails, bool) or not isinstance(stop_if_start_fails, int) \
                    or stop_if_start_fails < 1:
                raise ValueError(f"stop_if_start_fails must be an integer >= 1 or None, got "
                                 f"{stop_if_start_fails!r}")
            stop_if_start_fails = min(stop_if_start_fails, n_trials) or None
        opt = self._make_optimizer()
        opt.tell([r.to_trial() for r in self.storage.trials(sid)])
        finished = self.n_finished()
        if finished >= n_trials:
            return
        if stop_if_start_fails:
            self._check_start(stop_if_start_fails)
        timeout = timeout_s if timeout_s is not None else self.timeout_s
        bar = _Progress(n_trials, finished, self.objectives, enabled=progress)
        for r in self.storage.trials(sid, [TrialStatus.COMPLETE]):
            bar.observe(r.metrics)
        if cluster is not None:
            executor = "dask"
        ex = make_executor(executor, self.evaluator, workers=workers, timeout_s=timeout, cluster=cluster)
        exhausted = False
        last_beat = time.monotonic()
        try:
            while True:
                if time.monotonic() - last_beat > heartbeat_s:
                    self.storage.heartbeat(sid, owner)
                    last_beat = time.monotonic()
                while not exhausted and ex.n_running < ex.capacity:
                    room = ex.capacity - ex.n_running
                    tasks, exhausted = self._next_tasks(opt, owner, min(room, max(batch_size, 1)),
                                                        n_trials)
                    if not tasks:
                        break
                    for t in tasks:
                        ex.submit(t)
                if ex.n_running == 0:
                    if exhausted or self.n_finished() >= n_trials:
                        break
                    # The rest of the budget is RUNNING on other drivers sharing this
                    # study: wait for them, or for them to be declared dead and re-queued.
                    if not self.storage.requeue_stale(sid, owner_is_alive, stale_after_s):
                        time.sleep(min(1.0, heartbeat_s))
                    continue
                for res in ex.wait(timeout=1.0):
                    status, reason = judge(res, self.objectives)
                    ok = self.storage.finish_trial(
                        sid, res.number, owner, status,
                        metrics=res.metrics, constraints=res.constraints, reason=reason,
                        traceback=res.traceback, wall_time_s=res.wall_time_s,
                        info=res.info, cpu_time_s=res.cpu_time_s,
                    )
                    if not ok:
                        logger.warning("trial %d was taken over by another process; its "
                                       "result here is discarded", res.number)
                        continue
                    finished += 1
                    rec = self.storage.trial(sid, res.number)
                    opt.tell([rec.to_trial()])
                    if status is TrialStatus.COMPLETE:
                        bar.observe(rec.metrics)
                        stop_if_start_fails = None     # a feasible trial: the start is fine
                    bar.advance(status)
                    if stop_if_start_fails:
                        self._check_start(stop_if_start_fails)
            if exhausted and finished < n_trials:
                logger.info("optimizer %r has no more points (space exhausted after %d "
                            "finished trials)", self.optimizer_name, finished)
        except BaseException:
            # give our in-flight trials back so a resume re-runs them with the same params
            ex.shutdown()
            try:
                back = self.storage.release_trials(sid, owner)
            except StorageError as e:
                logger.warning(
                    "stopping: could not give this driver's running trials back (%s); the next "
                    "driver to start on this host re-queues them at once, one on another host "
                    "after stale_after_s (%g s)", e, stale_after_s)
            else:
                if back:
                    logger.warning("stopping: %d trial(s) in flight given back to the study %s; "
                                   "resuming re-runs them with the same parameters",
                                   len(back), back)
            raise
        finally:
            ex.shutdown()
            bar.close()

    def _next_tasks(self, opt: Optimizer, owner: str, n: int,
                    n_trials: int) -> tuple[list[Task], bool]:
        """Up to ``n`` trials to run now: re-queued (WAITING) ones first, then new points
        from the optimizer while the study holds fewer than ``n_trials`` trials (counted
        across every driver). Returns them and whether the optimizer is exhausted."""
        sid = self._record.id
        claimed = self.storage.claim_waiting(sid, owner, n)
        tasks = [Task(r.number, r.params, r.seed) for r in claimed]
        need = min(n - len(tasks), n_trials - self.storage.count(sid, list(TrialStatus)))
        if need <= 0:
            return tasks, False
        expected = opt.next_number
        points = opt.ask(need)
        if not points:
            return tasks, True
        bad = []
        for p in points:
            v = self.space.validate(p)
            if v:
                bad.append((p, "; ".join(map(str, v))))
        numbers = list(range(expected, expected + len(points)))
        seeds = [derived_seed(self.seed, 1, i) for i in numbers]
        recs = self.storage.create_trials(
            sid, [self.space.to_jsonable(p) for p in points], seeds, owner, max_total=n_trials
        )
        if [r.number for r in recs] != numbers:
            # Another driver inserted trials meanwhile (ours got other numbers, or the
            # budget filled up): adopt the storage's view, pending trials included.
            logger.info("trial numbers moved (another driver); resynchronising the optimizer")
            opt.forget_pending()
            opt.tell([r.to_trial() for r in self.storage.trials(sid)])
        bad_keys = {json.dumps(self.space.to_jsonable(p), sort_keys=True, default=str): why
                    for p, why in bad}
        for r in recs:
            why = bad_keys.get(json.dumps(r.params, sort_keys=True, default=str))
            if why is not None:
                # an optimizer bug must not reach the evaluator: record and move on
                self.storage.finish_trial(sid, r.number, owner, TrialStatus.INFEASIBLE,
                                          reason=f"proposal violates the space: {why}")
                opt.tell([self.storage.trial(sid, r.number).to_trial()])
                continue
            tasks.append(Task(r.number, self.space.normalize(r.params), r.seed))
        return tasks, False

    # ------------------------------------------------------------------ results
    def trials_dataframe(self, with_info: bool = True) -> pd.DataFrame:
        """All trials as a table (:func:`experiments.export.trials_dataframe`); its
        ``info`` column holds each trial's ``Evaluation.info`` (when any trial has one)."""
        return trials_dataframe(self.storage.trials(self._record.id, with_info=with_info),
                                self.objectives)

    @property
    def report_objectives(self) -> tuple[Objective, ...]:
        """The metrics of the exported Pareto front and plots: the config's ``pareto``
        entry if it has one, else the objectives."""
        rep = self._record.config.get("pareto")
        return parse_objectives(rep) if rep else self.objectives

    def pareto_front(self, feasible_only: bool = True,
                     objectives: Mapping[str, str] | Sequence[str] | None = None) -> pd.DataFrame:
        """Non-dominated COMPLETE trials (see :func:`experiments.export.pareto_dataframe`)
        over ``objectives`` (default: the study's objectives)."""
        objs = parse_objectives(objectives) if objectives else self.objectives
        return pareto_dataframe(self.trials_dataframe(), objs, feasible_only=feasible_only)

    def best_trials(self, k: int = 5) -> pd.DataFrame:
        """Single objective: the ``k`` best feasible trials; several: the Pareto front."""
        front = self.pareto_front()
        if len(self.objectives) > 1:
            return front
        df = self.trials_dataframe()
        o = self.objectives[0]
        df = df[df["feasible"].astype(bool)]
        return df.sort_values(f"metrics_{o.name}", ascending=o.direction == "min").head(k)

    def export(self, path: str | Path, *, pareto: bool = False, format: str | None = None,
               feasible_only: bool = True,
               objectives: Mapping[str, str] | Sequence[str] | None = None) -> Path:
        """Write all trials, or (``pareto=True``) the front over ``objectives`` (default:
        :attr:`report_objectives`)."""
        if pareto:
            df = self.pareto_front(feasible_only, objectives or [
                f"{'+' if o.direction == 'max' else '-'}{o.name}" for o in self.report_objectives])
        else:
            df = self.trials_dataframe()
        path = Path(path)
        fmt = format or path.suffix.lstrip(".")
        # Written under a temporary name and renamed into place, so that drivers sharing a
        # study and an output directory never leave a file that interleaves their writes.
        with _atomic_dir(path.parent) as tmp:
            os.replace(write_table(df, tmp / path.name, fmt), path)
        return path

    def plot(self, out_dir: str | Path) -> list[Path]:
        """Write the plots of :func:`experiments.plots.plot_study` into ``out_dir``
        (each drawn under a temporary name and renamed into place)."""
        from experiments.plots import plot_study

        out = Path(out_dir)
        with _atomic_dir(out) as tmp:
            drawn = plot_study(self, tmp)
            for p in drawn:
                os.replace(p, out / p.name)
        return [out / p.name for p in drawn]

    def report(self, path: str | Path, **options: Any) -> Path:
        """Write the interactive, self-contained HTML report (:mod:`experiments.report`),
        under a temporary name renamed into place like :meth:`export`."""
        from experiments.report import write_report

        path = Path(path)
        with _atomic_dir(path.parent) as tmp:
            os.replace(write_report(self, tmp / path.name, **options), path)
        return path


def _optimizer_spec(optimizer: Any, options: Any) -> tuple[str, dict[str, Any]]:
    """``Study.create``'s ``optimizer`` and ``optimizer_options`` as (name, options): a
    name, or the config's ``{name, options}`` mapping; anything else a ValueError naming
    the parameter and the value."""
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"optimizer_options must be a mapping of option name to value, got "
                         f"{type(options).__name__} {_short(options)}")
    if isinstance(optimizer, Mapping):
        unknown = sorted(map(str, set(optimizer) - {"name", "options"}))
        if unknown:
            raise ValueError(f"optimizer {_short(dict(optimizer))}: unknown key {unknown[0]!r}"
                             f"{did_you_mean(unknown[0], ['name', 'options'])}; an optimizer mapping "
                             "has 'name' and optionally 'options'")
        if "name" not in optimizer:
            raise ValueError(f"optimizer {_short(dict(optimizer))}: needs a 'name' (one of "
                             f"{available_optimizers()})")
        inner = optimizer.get("options")
        if inner is not None and not isinstance(inner, Mapping):
            raise ValueError(f"optimizer options must be a mapping of option name to value, got "
                             f"{type(inner).__name__} {_short(inner)}")
        if inner and options:
            raise ValueError("optimizer: options given twice, in the optimizer mapping and as "
                             "optimizer_options; give them in one place")
        optimizer, options = optimizer["name"], inner or options
    if not isinstance(optimizer, str):
        raise ValueError(f"optimizer must be a name (one of {available_optimizers()}) or a mapping "
                         f"{{name, options}}, got {type(optimizer).__name__} {_short(optimizer)}")
    return optimizer, dict(options or {})


@contextlib.contextmanager
def _atomic_dir(parent: Path) -> Iterator[Path]:
    """A fresh hidden directory inside ``parent`` (created if missing), removed after."""
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".coexplore-", dir=parent))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_study(name: str | None, storage: str | Path | Storage, evaluator: Any = None) -> Study:
    return Study.load(name, storage, evaluator)


class _Progress:
    """tqdm bar with the best value (one objective) or the Pareto-front size (several)."""

    def __init__(self, total: int, initial: int, objectives: Sequence[Objective], enabled: bool):
        self.objectives = objectives
        self.best: float | None = None
        self.front: list[np.ndarray] = []  # minimized-direction objective vectors
        self.counts = {"failed": 0, "infeasible": 0}
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=initial, unit="trial", dynamic_ncols=True)

    def observe(self, metrics: Mapping[str, Any]) -> None:
        vals = [metrics.get(o.name) for o in self.objectives]
        if any(v is None or not math.isfinite(v) for v in vals):
            return
        y = np.array([o.sign * float(v) for o, v in zip(self.objectives, vals)])
        if len(self.objectives) == 1:
            if self.best is None or y[0] < self.objectives[0].sign * self.best:
                self.best = float(vals[0])
            return
        if any(np.all(f <= y) for f in self.front):
            return
        self.front = [f for f in self.front if not (np.all(y <= f) and np.any(y < f))] + [y]

    def advance(self, status: TrialStatus) -> None:
        if status is TrialStatus.FAILED:
            self.counts["failed"] += 1
        elif status is TrialStatus.INFEASIBLE:
            self.counts["infeasible"] += 1
        if self.bar is None:
            return
        post: dict[str, Any] = {}
        if self.best is not None:
            post[f"best {self.objectives[0].name}"] = f"{self.best:.4g}"
        elif self.front:
            post["front"] = len(self.front)
        post.update({k: v for k, v in self.counts.items() if v})
        self.bar.set_postfix(post, refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
