"""Named factories that a user's package can extend without editing coexplore.

Configs and the command line name things by strings: ``optimizer: constrained-bo``,
``accelerator: systolic``, ``mapper: heuristic``, ``evaluator: nested``. Each package that
owns such a kind keeps one :class:`Registry` of them (:mod:`optimizer.registry`,
:mod:`accelerators.registry`, :mod:`mappers.registry`, :mod:`evaluators.registry`); this
module is the one implementation they share.

A name reaches a registry in one of three ways, looked up in this order:

1. **Built in**: entries the owning package lists, given as objects or as lazy
   ``"module:attr"`` references (imported on first use, so that naming Optuna's sampler
   does not import Optuna until it is built). A package lists only its own modules or
   those of packages below it (a reference is an import the layer contracts cannot see).
2. **Registered from Python**: ``registry.register("my-opt", MyOptimizer)`` -- typically
   at import time of a user module. A study config lists such modules under
   ``plugins:``; :mod:`experiments.config` imports them *before* it validates any name.
3. **Entry points**: an installed distribution that declares, in its ``pyproject.toml``,

   .. code-block:: toml

       [project.entry-points."coexplore.optimizers"]
       my-opt = "mypkg.search:MyOptimizer"

   is found by :func:`importlib.metadata.entry_points` under the registry's group
   (``coexplore.optimizers``, ``coexplore.accelerators``, ``coexplore.mappers``,
   ``coexplore.searches``, ``coexplore.evaluators``) on the first lookup; the object is
   imported when first used.

So what a registry holds depends only on its own package, the user's registrations and
the installed plugins -- never on which other coexplore package happens to have been
imported. (Where one package's entries must be used through another's -- every ask/tell
optimizer as a mapping search -- the layer that sees both wires them explicitly:
:mod:`experiments.inner_search`.)

The class lives in :mod:`design_space` because that is the bottom package, which every
package that owns a registry may import; it knows nothing of spaces.

Errors name the kind, the name and what is available (``unknown optimizer 'bayes'
(available: [...])``); a plugin that fails to import names its entry point.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from design_space.errors import SpaceDefinitionError
from design_space.references import import_ref
from design_space.suggest import did_you_mean

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Named objects of one kind (see the module docstring).

    Args:
        kind: what the entries are, for messages (``"optimizer"``).
        group: the entry-point group scanned for plugins (``"coexplore.optimizers"``).
        builtins: name -> object or lazy ``"module:attr"`` reference.
    """

    def __init__(self, kind: str, group: str, builtins: Mapping[str, T | str] | None = None) -> None:
        self.kind = kind
        self.group = group
        self._entries: dict[str, T | str] = dict(builtins or {})
        self._origin: dict[str, str] = dict.fromkeys(self._entries, "built in")
        self._entry_points: dict[str, importlib.metadata.EntryPoint] | None = None

    # ------------------------------------------------------------------ extension
    def register(self, name: str, obj: T, *, replace: bool = False) -> T:
        """Make ``obj`` available as ``name``; returns ``obj`` (usable as a decorator via
        ``functools.partial``). Registering a taken name raises ``ValueError`` naming
        both, unless ``replace``."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} registry: a name must be a non-empty string, got {name!r}")
        if name in self._entries and not replace and self._entries[name] is not obj:
            raise ValueError(f"{self.kind} {name!r} is already registered ({self._origin[name]}); "
                             "pass replace=True to override it")
        self._entries[name] = obj
        self._origin[name] = getattr(obj, "__module__", None) or "registered"
        return obj

    # ------------------------------------------------------------------ lookup
    def _plugins(self) -> dict[str, importlib.metadata.EntryPoint]:
        if self._entry_points is None:
            self._entry_points = {ep.name: ep for ep in importlib.metadata.entry_points(group=self.group)}
        return self._entry_points

    def get(self, name: str) -> T:
        """The object called ``name``; ``ValueError`` listing the available names if none."""
        if name in self._entries:
            obj = self._entries[name]
            if isinstance(obj, str):
                try:
                    obj = import_ref(obj, f"{self.kind} {name!r}")
                except SpaceDefinitionError as e:
                    raise ValueError(str(e)) from None
                self._entries[name] = obj
            return obj  # type: ignore[return-value]
        ep = self._plugins().get(name)
        if ep is not None:
            try:
                loaded = ep.load()
            except Exception as e:  # a plugin's import error is the user's to see, named
                raise ValueError(f"{self.kind} {name!r}: plugin entry point {ep.value!r} (group "
                                 f"{self.group!r}) failed to load: {type(e).__name__}: {e}") from None
            self._entries[name] = loaded
            self._origin[name] = f"entry point {ep.value}"
            return loaded
        raise ValueError(f"unknown {self.kind} {name!r}{did_you_mean(name, self.names())} "
                         f"(available: {self.names()})")

    def names(self) -> list[str]:
        """Every name an entry or an installed plugin provides."""
        return sorted(set(self._entries) | set(self._plugins()))

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name in self._entries or name in self._plugins()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, group={self.group!r}, names={self.names()})"

