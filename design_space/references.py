"""``"package.module:attr"`` references: import one back, and name a callable by one.

Configs, saved spaces and registries name Python objects by such strings (a constraint's
``function: "mypkg.models:area_ok"``, a joint space's ``software:``, a registry's lazy
built-in ``"mappers.exact:ExactMapper"``). This module is the one place that turns a
reference into the object and back; it sits at the bottom of :mod:`design_space` (it
imports nothing of coexplore but the errors) so that every module may use it.

A reference is resolved when it is used, never at import time, and it only ever points
at code the caller names: a package's own modules never use one to reach a package above
them (that would be an import the layer contracts cannot see).
"""

from __future__ import annotations

import importlib
from typing import Any

from design_space.errors import SpaceDefinitionError

__all__ = ["callable_ref", "import_ref"]


def import_ref(ref: str, what: str) -> Any:
    """Import ``"package.module:attr"`` (``attr`` may be dotted); errors name ``what`` and
    the reference.

    Raises:
        SpaceDefinitionError: no ``:``, a module that does not import, or a missing attribute.
    """
    if not isinstance(ref, str) or ":" not in ref:
        raise SpaceDefinitionError(f"{what}: expected 'module:function', got {ref!r}")
    mod, _, attr = ref.partition(":")
    try:
        obj: Any = importlib.import_module(mod)
    except ImportError as e:
        raise SpaceDefinitionError(f"{what}: cannot import module {mod!r}: {e}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SpaceDefinitionError(f"{what}: module {mod!r} has no attribute {attr!r}") from None
    return obj


def callable_ref(fn: Any) -> str | None:
    """``"module:qualname"`` if ``fn`` can be imported back by that name, else ``None``."""
    mod = getattr(fn, "__module__", None)
    qual = getattr(fn, "__qualname__", None)
    if not mod or not qual or "<" in qual or mod == "__main__":
        return None
    try:
        back = import_ref(f"{mod}:{qual}", "ref")
    except SpaceDefinitionError:
        return None
    return f"{mod}:{qual}" if back is fn else None
