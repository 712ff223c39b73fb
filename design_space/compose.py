"""Building spaces from spaces: a product of independently named sub-spaces.

``product({"L0": s0, "L1": s1})`` is one :class:`DesignSpace` whose parameters are
``L0.<name>`` and ``L1.<name>``; every sub-space's known constraints and proposal carry
over, reading their own (unprefixed) columns. Joint co-design of a network uses it to put
every layer's mapping space next to the others. :func:`split` goes back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from design_space.constraints import Columns, Constraint
from design_space.errors import SpaceDefinitionError
from design_space.space import DesignSpace


def _renamed(p: Any, prefix: str) -> Any:
    cond = {f"{prefix}.{k}": list(v) for k, v in p.active_if} if p.active_if else None
    return replace(p, name=f"{prefix}.{p.name}", active_if=cond)


def _sub_columns(cols: Mapping[str, np.ndarray], prefix: str) -> Columns:
    n = len(prefix) + 1
    sub = {k[n:]: v for k, v in cols.items() if k.startswith(prefix + ".")}
    return Columns(sub, len(next(iter(sub.values()))) if sub else 0)


def product(spaces: Mapping[str, DesignSpace], name: str | None = None) -> DesignSpace:
    """The product of ``spaces``, parameters renamed ``<key>.<name>`` (see module doc)."""
    if not spaces:
        raise SpaceDefinitionError("product: no spaces given")
    params, cons = [], []
    for prefix, sp in spaces.items():
        if "." in prefix or not prefix:
            raise SpaceDefinitionError(f"product: bad prefix {prefix!r} (non-empty, no dots)")
        params.extend(_renamed(p, prefix) for p in sp.params)
        for c in sp.constraints:
            cons.append(Constraint(f"{prefix}.{c.name}",
                                   lambda cols, c=c, prefix=prefix: c.evaluate(_sub_columns(cols, prefix))))
    proposals = {k: sp.proposal for k, sp in spaces.items() if sp.proposal is not None}

    def proposal(n: int, rng: np.random.Generator) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for prefix, prop in proposals.items():   # the other sub-spaces sample per parameter
            out.update({f"{prefix}.{k}": v for k, v in prop(n, rng).items()})
        return out

    return DesignSpace(*params, constraints=cons, name=name, proposal=proposal if proposals else None)


def split(point: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"L0.a": 1, "L1.a": 2}`` -> ``{"L0": {"a": 1}, "L1": {"a": 2}}``."""
    out: dict[str, dict[str, Any]] = {}
    for k, v in point.items():
        prefix, _, name = k.partition(".")
        out.setdefault(prefix, {})[name] = v
    return out
