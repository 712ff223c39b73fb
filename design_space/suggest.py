"""``did_you_mean``: the close matches of a misspelt name, for error messages.

Every "unknown name" error in coexplore (a registry's optimizer, mapper, evaluator or
accelerator, a hardware parameter, a config key, a study) ends with the same hint, built
here: ``unknown optimizer 'randon' (did you mean 'random'?)``. The matching is
:func:`difflib.get_close_matches` (Ratcliff/Obershelp similarity >= 0.6), plus a
case-insensitive exact match, which difflib scores low for short names (``TPE`` vs
``tpe``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["close_matches", "did_you_mean"]


def close_matches(name: object, choices: Iterable[object], n: int = 3) -> list[str]:
    """Up to ``n`` names of ``choices`` close to ``name``, closest first."""
    if not isinstance(name, str):
        return []
    options = [c for c in dict.fromkeys(str(c) for c in choices) if c != name]
    same_case = [c for c in options if c.lower() == name.lower()]
    near = difflib.get_close_matches(name, options, n=n, cutoff=0.6)
    return list(dict.fromkeys([*same_case, *near]))[:n]


def did_you_mean(name: object, choices: Iterable[object]) -> str:
    """``" (did you mean 'x'?)"``, ``" (did you mean 'x' or 'y'?)"``, or ``""``."""
    matches = close_matches(name, choices)
    if not matches:
        return ""
    return " (did you mean " + " or ".join(repr(m) for m in matches) + "?)"
