"""The accelerator conformance suite: checks every registered accelerator model must pass.

Library code, like ``optuna.testing``, so that a plugin's author runs on their model what
coexplore runs on its own (``tests/conformance``). In the plugin's own tests
(``tests/experiments/test_plugins.py`` does this for its toy plugin)::

    from accelerators.testing import check_accelerator

    def test_my_array_conforms():
        check_accelerator(MyArray, MyArray(rows=4, cols=4))

The model is a (frozen) dataclass built by ``from_point``; ``example`` is a valid instance.
Each check raises :class:`ConformanceError` (an ``AssertionError``) naming what broke:

* :func:`check_validate_names_parameter` -- for every scalar field, out-of-range values
  (``0``, ``-1`` for numbers, an unknown string for strings) are either accepted or
  rejected with a ``ValueError`` whose message holds the field's name and the value's
  ``repr`` (:class:`~accelerators.base.InvalidParameter`'s form); at least one field is
  checked at all.
* :func:`check_area_vectorized` -- ``cls.area_mm2_of(columns)`` of a batch equals
  ``cls.from_point(p).area_mm2`` of each point (the known-constraint path and the scalar
  path are one model).
* :func:`check_round_trip` -- ``from_point`` of an instance's point is that instance;
  where the model lowers (``to_arch``), the architecture is the same for both, survives a
  pickle round trip, and carries the accelerator's area.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import pickle
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ConformanceError", "check_accelerator", "check_area_vectorized", "check_round_trip",
           "check_validate_names_parameter", "point_of", "variants"]


class ConformanceError(AssertionError):
    """An entry broke its registry's protocol (the message names the check)."""


def _scalar(v: Any) -> bool:
    return isinstance(v, bool | int | float | str | np.integer | np.floating)


def point_of(acc: Any) -> dict[str, Any]:
    """The design point of ``acc``: its scalar fields (numbers, strings, bools)."""
    return {f.name: getattr(acc, f.name) for f in dataclasses.fields(acc) if _scalar(getattr(acc, f.name))}


def _bad_values(v: Any) -> list[Any]:
    if isinstance(v, bool):
        return ["yes"]
    if isinstance(v, int | np.integer):
        return [0, -1]
    if isinstance(v, float | np.floating):
        return [0.0, -1.0, math.nan]
    if isinstance(v, str):
        return ["no-such-value"]
    return []


def _build_or_error(cls: type, example: Any, name: str, value: Any) -> Exception | None:
    try:
        acc = dataclasses.replace(example, **{name: value})
        acc.validate()
    except (ValueError, TypeError) as e:
        return e
    return None


def check_validate_names_parameter(cls: type, example: Any, skip: Sequence[str] = ()) -> list[str]:
    """Every rejected bad value is named with its field (see the module docstring);
    returns the fields found checked."""
    checked = []
    for f in dataclasses.fields(example):
        if f.name in skip or not f.init:
            continue
        for bad in _bad_values(getattr(example, f.name)):
            err = _build_or_error(cls, example, f.name, bad)
            if err is None:
                continue
            msg = str(err).lower()  # (a model may normalize the case of a string it names)
            if f.name.lower() not in msg or (repr(bad).lower() not in msg and str(bad).lower() not in msg):
                raise ConformanceError(f"{cls.__name__}: {f.name}={bad!r} is rejected, but the error does not "
                                       f"name the parameter and the value: {type(err).__name__}: {err}")
            checked.append(f.name)
    if not checked:
        raise ConformanceError(f"{cls.__name__}.validate rejects no out-of-range value of any field")
    return sorted(set(checked))


def variants(cls: type, example: Any, n: int = 40) -> list[dict[str, Any]]:
    """Up to ``n`` valid points near ``example``: the example's own, then each numeric
    field halved and doubled alone, then neighbouring pairs of fields scaled together."""
    base = point_of(example)
    nums = [k for k, v in base.items() if isinstance(v, int | float) and not isinstance(v, bool) and v > 0]
    moves = [((k,), f) for k in nums for f in (2, 0.5)]
    moves += [((a, b), f) for a, b in itertools.pairwise(nums) for f in (2, 0.5)]
    out = [base]
    for keys, factor in moves:
        p = dict(base)
        for key in keys:
            v = base[key] * factor
            p[key] = int(v) if isinstance(base[key], int) else float(v)
        try:
            cls.from_point(p)
        except (ValueError, TypeError):
            continue
        out.append(p)
        if len(out) >= n:
            break
    return out


def check_area_vectorized(cls: type, points: Sequence[Mapping[str, Any]]) -> None:
    """The batch area equals the area of each point's accelerator."""
    if not hasattr(cls, "area_mm2_of"):
        return
    scalar = np.array([float(cls.from_point(p).area_mm2) for p in points])
    cols = {k: np.asarray([p[k] for p in points]) for k in points[0]}
    vec = np.asarray(cls.area_mm2_of(cols), dtype=float)
    vec = np.broadcast_to(vec, scalar.shape)
    if not np.allclose(vec, scalar, rtol=1e-9, atol=0.0):
        i = int(np.argmax(np.abs(vec - scalar)))
        raise ConformanceError(f"{cls.__name__}.area_mm2_of gives {vec[i]!r} mm2 for {dict(points[i])!r}, "
                               f"the accelerator's area_mm2 is {scalar[i]!r}")


def check_round_trip(cls: type, example: Any) -> None:
    """``from_point(point_of(acc)) == acc``; the lowered architecture is the same, pickles and
    carries the area."""
    back = cls.from_point(point_of(example))
    if back != example:
        raise ConformanceError(f"{cls.__name__}.from_point(point) of {example!r} built {back!r}")
    if not hasattr(example, "to_arch"):
        return
    arch = example.to_arch()
    if back.to_arch() != arch:
        raise ConformanceError(f"{cls.__name__}.to_arch differs between equal accelerators")
    if pickle.loads(pickle.dumps(arch)) != arch:
        raise ConformanceError(f"{cls.__name__}.to_arch(): the architecture does not survive pickling")
    area = getattr(example, "area_mm2", None)
    arch_area = getattr(arch, "area_mm2", None)
    if area is not None and arch_area is not None and not math.isclose(float(area), float(arch_area),
                                                                       rel_tol=1e-9):
        raise ConformanceError(f"{cls.__name__}: area_mm2 {area!r} but to_arch().area_mm2 {arch_area!r}")


def check_accelerator(cls: type, example: Any, *, skip: Sequence[str] = ()) -> None:
    """Every check of this suite."""
    check_validate_names_parameter(cls, example, skip)
    check_area_vectorized(cls, variants(cls, example))
    check_round_trip(cls, example)
