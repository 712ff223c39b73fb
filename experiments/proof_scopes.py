"""The space a script's proofs cover, stated once in its header and kept in its JSON
(issue 45, item 3: claims carry their scope).

Used by the benchmarks, validations and search-quality studies alike, so it sits beside
them rather than inside one: a validation importing :mod:`experiments.benchmarks` would
close an import circle (the benchmarks import the reproductions, which import the
validations), and :mod:`experiments.benchmarks.stated_scopes` imports every script whose
committed output it states a scope for.

A script that prints "proven" or "optimal" says so of a space: the divisor (or padded)
tilings, the cost model's accounting, whether bypass choices were searched, the
constraints, the spatial unrollings and loop orders (:class:`mappers.base.ProofScope`).
:class:`ProofScopes` collects that space as data, per row of the script's output, from
the mapper (:meth:`announce`: :meth:`mappers.exact.ExactMapper.proof_scope`, the function
the results' ``scope`` comes from, so the header can precede the rows) or from the results
themselves (:meth:`add`: a :class:`~mappers.base.MappingResult`'s ``scope`` or a nested
evaluator's ``proof_scope`` record); :meth:`announce_nested` states, before mapping, what a
nested evaluator's mapper will prove a hardware point's layers over; :meth:`check` (and
:meth:`check_all`) hold each result to what the header announced. :meth:`lines` prints
the space once when every row shares it, else one line per distinct space naming the
groups (or rows) it covers; :meth:`records` is the same for a JSON output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluators.base import Infeasible
from mappers.base import MappingResult, MappingRuleRefusal, ProofScope

__all__ = ["ProofScopes"]

PREFIX = "proofs and bounds cover"


def _scope(x: ProofScope | Mapping[str, Any] | None) -> ProofScope | None:
    if x is None or isinstance(x, ProofScope):
        return x
    return ProofScope(**{k: x[k] for k in ("tilings", "accounting", "bypass", "constraints", "spatial",
                                            "loop_orders", "objective")})


class ProofScopes:
    """The proof scope of each row of a benchmark, by ``(group, row)`` (module docstring).

    Args:
        per: what a group is, in words (``"accounting"``, ``"space"``), for the header
            when the groups' scopes differ.
    """

    def __init__(self, per: str = "group") -> None:
        self.per = per
        self._rows: dict[tuple[str, str], ProofScope] = {}

    def add(self, group: str, row: str, scope: ProofScope | Mapping[str, Any] | MappingResult | None) -> None:
        """Record the scope of row ``row`` of ``group`` (``None``: the row claims no proof)."""
        if isinstance(scope, MappingResult):
            scope = scope.scope
        s, key = _scope(scope), (str(group), str(row))
        if s is None:
            return
        if self._rows.setdefault(key, s) != s:
            raise ValueError(f"{group}/{row} has two proof scopes ({self._rows[key].describe()}; {s.describe()}): "
                             "name its rows finer")

    def announce(self, group: str, row: str, mapper: Any, layer: Any, arch: Any, cost: Any,
                 objective: str) -> None:
        """Record the scope ``mapper.map(layer, arch, cost, objective)`` will prove over,
        before mapping (a constraint rule's refusal: no proof, nothing recorded)."""
        try:
            self.add(group, row, mapper.proof_scope(layer, arch, cost, objective))
        except MappingRuleRefusal:
            pass

    def announce_nested(self, group: str, row: str, evaluator: Any, point: Mapping[str, Any]) -> None:
        """Record the scope ``evaluator(point)`` will prove its layers over, before mapping:
        its mapper's ``proof_scope`` of each unit on the point's architecture
        (``evaluator``: a :class:`evaluators.nested.NestedEvaluator`; a mapper that proves
        nothing, such as the heuristic, or a point that cannot be built: nothing recorded)."""
        if getattr(evaluator.mapper, "proof_scope", None) is None:
            return
        try:
            arch = evaluator.build(point).to_arch()
        except Infeasible:
            return
        for unit in evaluator.units:
            self.announce(group, row, evaluator.mapper, unit, arch, evaluator.cost, evaluator.objective)

    def check(self, group: str, row: str,
              result: MappingResult | ProofScope | Mapping[str, Any] | None) -> None:
        """A ``RuntimeError`` unless ``result``'s scope (a result's ``scope``, or a scope or
        its record, as a nested evaluator's ``proof_scope``) is the one announced for the
        row (a header that misstates its rows' space is worse than none)."""
        scope = result.scope if isinstance(result, MappingResult) else _scope(result)
        if scope is None:
            return
        said = self._rows.get((str(group), str(row)))
        if said != scope:
            raise RuntimeError(f"{group}/{row}: the result's proof covers {scope.describe()}, but the header "
                               f"said {said.describe() if said else 'nothing'}")

    def check_all(self, got: ProofScopes) -> None:
        """:meth:`check` every row of ``got`` (scopes collected from the results)."""
        for (group, row), scope in got._rows.items():
            self.check(group, row, scope)

    def distinct(self) -> list[ProofScope]:
        """The distinct scopes, in the order of their first row."""
        return list(dict.fromkeys(self._rows.values()))

    def applies_to(self) -> list[tuple[ProofScope, list[str]]]:
        """Each distinct scope with the groups it covers (``group/row`` where a group's rows
        differ), in the order of their first row."""
        groups: dict[str, set[ProofScope]] = {}
        for (g, _), s in self._rows.items():
            groups.setdefault(g, set()).add(s)
        out: dict[ProofScope, list[str]] = {s: [] for s in self.distinct()}
        for (g, r), s in self._rows.items():
            label = g if len(groups[g]) == 1 else f"{g}/{r}"
            if label not in out[s]:
                out[s].append(label)
        return list(out.items())

    def bracketed(self) -> str:
        """Every distinct scope in one line: the groups it covers, then its space in
        brackets, ``"; "`` between scopes (empty where no row claims a proof)."""
        return "; ".join(f"{', '.join(labels)} [{scope.describe()}]" for scope, labels in self.applies_to())

    def lines(self) -> list[str]:
        """The header: one line when every row shares one scope, else one per scope."""
        scopes = self.applies_to()
        if not scopes:
            return [f"{PREFIX}: nothing (no result claims a proof or a bound)"]
        if len(scopes) == 1:
            return [f"{PREFIX}: {scopes[0][0].describe()}"]
        return [f"{PREFIX}, per {self.per}:"] + [f"  {', '.join(labels)}: {s.describe()}" for s, labels in scopes]

    def records(self) -> list[dict[str, Any]]:
        """Each distinct scope's fields (:meth:`~mappers.base.ProofScope.as_dict`) and the
        groups (or ``group/row``) it ``applies_to``, for a JSON output."""
        return [s.as_dict() | {"applies_to": labels} for s, labels in self.applies_to()]
