"""Mappers and search strategies by name, so configs can say ``mapper: heuristic``.

Two :class:`design_space.registry.Registry` s:

* :data:`MAPPERS` (entry-point group ``coexplore.mappers``): classes whose instances
  implement :class:`~mappers.base.Mapper` -- ``heuristic``, ``random``, ``exhaustive``,
  ``exact`` (provably optimal, :mod:`mappers.exact`), ``schedule`` (HASCO's) built in.
* :data:`SEARCHES` (group ``coexplore.searches``): ask/tell search strategies, factories
  ``(space, objectives, seed, **options) -> strategy`` with ``ask`` and ``tell``. None is
  built in here: mappers import no optimizer. The study layer adds a resolver that offers
  every registered optimizer (:mod:`experiments.inner_search`), so once :mod:`experiments`
  is imported ``constrained-bo``, ``qlearning``, ``tpe`` ... are strategies.

:func:`make_mapper` builds a mapper from a spec: a mapper object as is; a name (a mapper,
or a strategy -- then an :class:`~mappers.asktell.AskTellMapper` over the layer's mapping
space); or ``{"name": ..., **options}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from design_space.registry import Registry
from mappers.base import Mapper

__all__ = ["MAPPERS", "SEARCHES", "make_mapper", "register_mapper", "register_search", "search_factory"]

MAPPERS: Registry[Callable[..., Mapper]] = Registry("mapper", "coexplore.mappers", {
    "heuristic": "mappers.heuristic:HeuristicMapper",
    "random": "mappers.sampling:RandomMapper",
    "exhaustive": "mappers.exhaustive:ExhaustiveMapper",
    "exact": "mappers.exact:ExactMapper",
    "schedule": "mappers.schedule:ScheduleMapper",
})

SEARCHES: Registry[Callable[..., Any]] = Registry("search strategy", "coexplore.searches")


def register_mapper(name: str, cls: Callable[..., Mapper], *, replace: bool = False) -> Callable[..., Mapper]:
    """Make ``cls(**options)`` available as mapper ``name``."""
    return MAPPERS.register(name, cls, replace=replace)


def register_search(name: str, factory: Callable[..., Any], *, replace: bool = False) -> Callable[..., Any]:
    """Make an ask/tell strategy factory available as search ``name``."""
    return SEARCHES.register(name, factory, replace=replace)


def search_factory(name: str) -> Callable[..., Any]:
    """The strategy factory called ``name``; the error says where strategies come from."""
    try:
        return SEARCHES.get(name)
    except ValueError:
        raise ValueError(f"unknown search strategy {name!r} (registered: {SEARCHES.names()}; every "
                         "ask/tell optimizer is one once the experiments package is imported)") from None


def make_mapper(spec: Any) -> Mapper:
    """A mapper from an object, a name or ``{"name": ..., **options}`` (see module docstring).

    Raises:
        ValueError: an unknown name (listing the mappers), or options the mapper does not
            take (naming them).
    """
    if isinstance(spec, Mapper):
        return spec
    if isinstance(spec, Mapping):
        opts = dict(spec)
        name = opts.pop("name", None)
        if not isinstance(name, str):
            raise ValueError(f"mapper spec {dict(spec)!r} needs a 'name'")
    elif isinstance(spec, str):
        name, opts = spec, {}
    else:
        raise ValueError(f"a mapper must be a Mapper, a name or a mapping with a 'name', got {spec!r}")
    if name in MAPPERS.names():
        cls = MAPPERS.get(name)
    elif name in SEARCHES:
        from mappers.asktell import AskTellMapper

        return _build(AskTellMapper, name, dict(opts, search=name))
    else:
        raise ValueError(f"unknown mapper {name!r} (available: {MAPPERS.names()}; every ask/tell "
                         "optimizer is also a mapper once the experiments package is imported)")
    return _build(cls, name, opts)


def _build(cls: Callable[..., Mapper], name: str, opts: Mapping[str, Any]) -> Mapper:
    try:
        return cls(**opts)
    except TypeError as e:
        raise ValueError(f"mapper {name!r}: bad options {dict(opts)}: {e}") from None
