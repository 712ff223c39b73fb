"""Mappers by name, so configs can say ``mapper: heuristic``.

:data:`MAPPERS` (a :class:`design_space.registry.Registry`, entry-point group
``coexplore.mappers``): classes whose instances implement :class:`~mappers.base.Mapper` --
``heuristic``, ``random``, ``exhaustive``, ``exact`` (provably optimal,
:mod:`mappers.exact`), ``anytime`` (the exact mapper at a fixed effort, the fast default:
:mod:`mappers.anytime`), ``schedule`` (HASCO's) and ``asktell`` (any ask/tell strategy,
:mod:`mappers.asktell`) built in.

Search strategies by name are :data:`mappers.searches.SEARCHES` (re-exported here); only
strategies registered there explicitly are names (see :mod:`mappers.searches` for why the
ask/tell optimizers are handed down as factories by the study layer instead).

:func:`make_mapper` builds a mapper from a spec: a mapper object as is; a name (a mapper,
or a registered strategy -- then an :class:`~mappers.asktell.AskTellMapper` over the
layer's mapping space); or ``{"name": ..., **options}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from design_space.registry import Registry
from design_space.suggest import did_you_mean
from mappers.asktell import AskTellMapper
from mappers.base import Mapper
from mappers.searches import SEARCHES, register_search, search_factory, unknown_search_help

__all__ = ["MAPPERS", "SEARCHES", "make_mapper", "register_mapper", "register_search", "search_factory"]

MAPPERS: Registry[Callable[..., Mapper]] = Registry("mapper", "coexplore.mappers", {
    "heuristic": "mappers.heuristic:HeuristicMapper",
    "random": "mappers.sampling:RandomMapper",
    "exhaustive": "mappers.exhaustive:ExhaustiveMapper",
    "exact": "mappers.exact:ExactMapper",
    "anytime": "mappers.anytime:AnytimeMapper",
    "schedule": "mappers.schedule:ScheduleMapper",
    "asktell": AskTellMapper,
})


def register_mapper(name: str, cls: Callable[..., Mapper], *, replace: bool = False) -> Callable[..., Mapper]:
    """Make ``cls(**options)`` available as mapper ``name``."""
    return MAPPERS.register(name, cls, replace=replace)


def make_mapper(spec: Any, param: str = "mapper") -> Mapper:
    """A mapper from an object, a name or ``{"name": ..., **options}`` (see module docstring).

    Args:
        spec: the mapper or its spec.
        param: the caller's parameter name, for messages.

    Raises:
        ValueError: an unknown name (naming ``param``, listing the mappers and saying how
            to search with an ask/tell optimizer), or options the mapper does not take.
    """
    if isinstance(spec, Mapper):
        return spec
    if isinstance(spec, Mapping):
        opts = dict(spec)
        name = opts.pop("name", None)
        if not isinstance(name, str):
            raise ValueError(f"{param}={dict(spec)!r}: a mapper spec needs a 'name'")
    elif isinstance(spec, str):
        name, opts = spec, {}
    else:
        raise ValueError(f"{param} must be a Mapper, a name or a mapping with a 'name', got {spec!r}")
    if name in MAPPERS.names():
        return _build(MAPPERS.get(name), name, opts)
    if name in SEARCHES:
        return _build(AskTellMapper, name, dict(opts, search=name))
    hint = did_you_mean(name, [*MAPPERS.names(), *SEARCHES.names()])
    raise ValueError(f"{param}={spec!r}: {name!r}{hint} is neither a mapper (MAPPERS: {MAPPERS.names()}) nor a "
                     f"registered search strategy (SEARCHES: {SEARCHES.names()}); if it is an ask/tell "
                     f"optimizer, pass {param}=experiments.inner_search.search_mapper({spec!r}) -- "
                     f"{unknown_search_help(name, param)}")


def _build(cls: Callable[..., Mapper], name: str, opts: Mapping[str, Any]) -> Mapper:
    try:
        return cls(**opts)
    except TypeError as e:
        raise ValueError(f"mapper {name!r}: bad options {dict(opts)}: {e}") from None
