"""Every ask/tell optimizer as a mapping search strategy: the explicit wiring.

Mappers drive ask/tell strategies (:class:`~mappers.asktell.AskTellMapper` over a layer's
mapping space, :class:`~mappers.schedule.ScheduleMapper` over a HASCO schedule space), and
the optimizers of :mod:`optimizer` are such strategies, but the two packages never import
each other (the layer contracts: mappers sit below optimizer's layer, and an optimizer
knows only its space and history). This package, above both, is where they meet.

**The design, and why.** The wiring is an explicit call at this layer, not a registration
made as a side effect of importing it. Before, importing :mod:`experiments` added a resolver
to the mappers' search registry, so ``NestedEvaluator(..., mapper="constrained-bo")``
worked or raised depending on whether something had imported :mod:`experiments` first.
The alternatives were worse: a lazy ``"optimizer.registry:..."`` reference inside mappers
is an upward import the layer contracts cannot see; moving the optimizer registry down
into mappers would make mappers know every optimizer. So:

* :class:`OptimizerSearch` -- the strategy factory ``(space, objectives, seed, **options)
  -> Optimizer`` of one registered optimizer (picklable: it travels inside a mapper to
  worker processes). Hand it to ``AskTellMapper(..., factory=)``, ``ScheduleMapper(...,
  factory=)``, ``HascoCoDesign(..., sw_factory=)``.
* :func:`search_mapper` -- a mapper spec (a name or ``{"name": ..., **options}``) to a
  :class:`~mappers.base.Mapper`: mapper names as :func:`mappers.registry.make_mapper`
  builds them, an optimizer's name as an ``AskTellMapper`` with its factory, and a
  ``search:`` option naming an optimizer given that optimizer's factory.
* :func:`optimizer_searches` -- ``name -> OptimizerSearch`` for every registered optimizer
  (e.g. for :func:`mappers.schedule.search_curves`).
* :func:`wire_evaluator_options` -- what the study layer does to an evaluator's options
  before it instantiates a registered or referenced evaluator class
  (:func:`experiments.study.resolve_evaluator`, so every ``Study`` and study config): the
  options the class declares in ``MAPPER_OPTIONS`` go through :func:`search_mapper`, and
  for each ``name_option -> factory_option`` of its ``SEARCH_OPTIONS`` an optimizer's name
  gets its factory. The stored options (a study's identity) stay the plain spec.

A Python caller below this layer who names an optimizer without its factory gets a
``ValueError`` naming the parameter and the value and pointing here
(:func:`mappers.searches.search_factory`, :func:`mappers.registry.make_mapper`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from design_space.trials import Objective
from mappers.base import Mapper
from mappers.registry import MAPPERS, make_mapper
from mappers.searches import SEARCHES
from optimizer.base import Optimizer
from optimizer.registry import OPTIMIZERS, make_optimizer

__all__ = ["OptimizerSearch", "optimizer_searches", "search_mapper", "wire_evaluator_options"]


class OptimizerSearch:
    """``(space, objectives, seed, **options) -> Optimizer`` for the optimizer ``name``
    (picklable: it travels inside a mapper to worker processes).

    Raises:
        ValueError: ``name`` is not a registered optimizer (listing them).
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or name not in OPTIMIZERS:
            raise ValueError(f"OptimizerSearch: name={name!r} is not a registered optimizer "
                             f"(available: {OPTIMIZERS.names()})")
        self.name = name

    def __call__(self, space: Any, objectives: Sequence[Objective], seed: int, **options: Any) -> Optimizer:
        return make_optimizer(self.name, space, objectives, seed, options)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OptimizerSearch) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("OptimizerSearch", self.name))

    def __repr__(self) -> str:
        return f"OptimizerSearch({self.name!r})"


def _optimizer_factory(name: Any) -> OptimizerSearch | None:
    """The factory for ``name`` where it is an optimizer and no strategy of that name is
    registered with the mappers (an explicit registration there wins, as it did before)."""
    if isinstance(name, str) and name not in SEARCHES and name in OPTIMIZERS:
        return OptimizerSearch(name)
    return None


def optimizer_searches() -> dict[str, OptimizerSearch]:
    """``name -> OptimizerSearch(name)`` for every registered optimizer."""
    return {name: OptimizerSearch(name) for name in OPTIMIZERS.names()}


def search_mapper(spec: Any, param: str = "mapper") -> Mapper:
    """The mapper of ``spec`` with ask/tell optimizers wired in (see the module docstring).

    ``spec``: a :class:`~mappers.base.Mapper` (returned as is), a name, or ``{"name": ...,
    **options}``. Mapper names win over optimizer names (``random`` is the random mapper),
    as in :func:`mappers.registry.make_mapper`.

    Raises:
        ValueError: a name that is neither a mapper, a registered strategy nor an
            optimizer, or options the mapper does not take (naming ``param``).
    """
    if isinstance(spec, Mapper):
        return spec
    if isinstance(spec, Mapping):
        opts = dict(spec)
        name = opts.get("name")
    else:
        name, opts = spec, None
    if isinstance(name, str) and name not in MAPPERS.names():
        factory = _optimizer_factory(name)
        if factory is not None:
            rest = {k: v for k, v in (opts or {}).items() if k != "name"}
            return make_mapper({"name": "asktell", "search": name, "factory": factory, **rest}, param)
    if opts is not None and "factory" not in opts:
        factory = _optimizer_factory(opts.get("search"))
        if factory is not None:
            opts["factory"] = factory
        return make_mapper(opts, param)
    return make_mapper(spec, param)


def wire_evaluator_options(cls: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` for instantiating the evaluator class ``cls``, with the mapper specs and
    search names it declares wired to their optimizers (see the module docstring)."""
    out = dict(options)
    for key in getattr(cls, "MAPPER_OPTIONS", ()):
        if key in out:
            out[key] = search_mapper(out[key], key)
    for key, factory_key in dict(getattr(cls, "SEARCH_OPTIONS", {})).items():
        if key in out and out.get(factory_key) is None:
            factory = _optimizer_factory(out[key])
            if factory is not None:
                out[factory_key] = factory
    return out
