"""Ask/tell search strategies by name, for the mappers that drive one.

A *search strategy* is a factory ``(space, objectives, seed, **options) -> strategy`` whose
result has ``ask(n) -> points`` and ``tell(trials)`` (the protocol of :mod:`optimizer`).
:class:`~mappers.asktell.AskTellMapper` runs one over a layer's mapping space and
:class:`~mappers.schedule.ScheduleMapper` over a HASCO schedule space. Each takes the
factory itself (``factory=``) or a name looked up here.

:data:`SEARCHES` (entry-point group ``coexplore.searches``) lists what is registered
explicitly: ``register_search(name, factory)`` from Python, or a plugin's entry point.
Nothing is built in and nothing is added behind the caller's back: mappers import no
optimizer (the layer contracts in ``pyproject.toml``: optimizer and mappers only meet in
:mod:`experiments`), so the ask/tell optimizers of :mod:`optimizer.registry` are not
strategies here by name. The study layer hands them down as factories
(:mod:`experiments.inner_search`: a config's or ``Study.create``'s ``mapper:
constrained-bo`` becomes an ``AskTellMapper`` with that optimizer's factory), and a Python
caller does the same, explicitly::

    from experiments.inner_search import OptimizerSearch, search_mapper
    NestedEvaluator("spatial", "dqn", mapper=search_mapper({"name": "constrained-bo", "budget": 50}))
    AskTellMapper("constrained-bo", factory=OptimizerSearch("constrained-bo"))

An unknown name raises a ``ValueError`` that names the parameter, the value and these
two ways.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from design_space.registry import Registry

__all__ = ["SEARCHES", "register_search", "search_factory", "unknown_search_help"]

SEARCHES: Registry[Callable[..., Any]] = Registry("search strategy", "coexplore.searches")


def register_search(name: str, factory: Callable[..., Any], *, replace: bool = False) -> Callable[..., Any]:
    """Make an ask/tell strategy factory available as search ``name``."""
    return SEARCHES.register(name, factory, replace=replace)


def unknown_search_help(name: Any, param: str = "search") -> str:
    """What to pass instead of ``param=name`` when no strategy ``name`` is registered."""
    return (f"an ask/tell optimizer is not looked up by name below the study layer (mappers import "
            f"no optimizer): pass its factory, factory=experiments.inner_search.OptimizerSearch("
            f"{name!r}), or build the mapper with experiments.inner_search.search_mapper(...) "
            f"(as Study and study configs do), or register a strategy with "
            f"mappers.searches.register_search({name!r}, factory)")


def search_factory(name: str, param: str = "search") -> Callable[..., Any]:
    """The registered strategy factory called ``name``.

    Raises:
        ValueError: no such strategy; the message names ``param`` and ``name``, lists the
            registered strategies and says what to pass instead.
    """
    if isinstance(name, str) and name in SEARCHES:
        return SEARCHES.get(name)
    raise ValueError(f"{param}={name!r}: no search strategy of that name is registered "
                     f"(mappers.searches.SEARCHES: {SEARCHES.names()}); {unknown_search_help(name, param)}")
