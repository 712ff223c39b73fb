"""Plugins: user modules that register optimizers, accelerators, mappers or evaluators.

A study config may list modules under ``plugins:``; :func:`load_plugins` imports them
before anything in the config is validated, so the names they register (with
``optimizer.registry.register``, ``accelerators.registry.register``,
``mappers.registry.register_mapper`` / ``register_search``, ``evaluators.registry.register``)
are known by then. Installed packages can instead declare entry points (groups
``coexplore.optimizers``, ``coexplore.accelerators``, ``coexplore.mappers``,
``coexplore.searches``, ``coexplore.evaluators``); those are found without being listed
(:mod:`design_space.registry`).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

__all__ = ["load_plugins"]


def load_plugins(modules: Sequence[str]) -> list[str]:
    """Import every module of ``modules`` (dotted names); returns them.

    Raises:
        ValueError: a name that is not a string or a module that fails to import (the
            message names it and the error).
    """
    done = []
    for name in modules:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a plugin must be a module name, got {name!r}")
        try:
            importlib.import_module(name.strip())
        except Exception as e:  # the plugin's own import error, named
            raise ValueError(f"plugin {name!r} failed to import: {type(e).__name__}: {e}") from None
        done.append(name.strip())
    return done
