"""`SpaceView`: a saved space read as data only, its code references not imported.

A study database stores its space's description. Parts of it may name code: a
constraint's ``function: "module:function"``, a joint space's ``software:`` factory. A
database is data that anyone able to write to it controls, so opening a study never imports
those (:func:`design_space.serialization.space_view` builds this view instead). The view has
what the description itself holds -- the parameters with their bounds and choices, the
expression constraints as text, the references as text -- and the names of parameters
seen in the stored trials (a joint space's software parameters, which only its factory
knows). It cannot sample, encode or check points: to continue a study, give the space from
your config or code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SpaceView:
    """A space description as data (see the module docstring).

    Attributes:
        description: the stored description, as stored.
        params: its (hardware) parameters, rebuilt from their plain-data fields.
        other_names: parameter names seen in the stored trials and not among ``params``.
        references: ``(where, "module:attr")`` of each reference, not imported.
        name: the space's name, if it has one.
    """

    description: Mapping[str, Any]
    params: tuple[Any, ...]
    other_names: tuple[str, ...] = ()
    references: tuple[tuple[str, str], ...] = ()
    name: str | None = None

    @property
    def names(self) -> list[str]:
        """Parameter names: the described ones, then the ones only the trials show."""
        return [p.name for p in self.params] + list(self.other_names)

    def bounds(self) -> dict[str, dict[str, Any]]:
        """Each described parameter's fields (type, bounds, choices ...) by name."""
        return {p.name: p.to_dict() for p in self.params}

    def to_dict(self) -> dict[str, Any]:
        """The stored description (references stay text)."""
        return dict(self.description)

    def unresolved(self) -> str:
        """One phrase listing the references that were not imported."""
        return ", ".join(f"{where} {ref!r}" for where, ref in self.references) or "none"

    def __repr__(self) -> str:
        extra = f", {len(self.other_names)} more seen in trials" if self.other_names else ""
        return (
            f"SpaceView({self.name or ''!r}: {len(self.params)} parameters{extra}; "
            f"not imported: {self.unresolved()})"
        )
