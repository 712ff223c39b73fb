"""Pareto fronts and hypervolumes for ``k`` objectives with mixed min/max directions.

Conventions
-----------
* ``y`` is an ``(n, k)`` array (numpy, torch or nested lists) of objective values in
  their *original* units; ``directions`` gives ``"min"``/``"max"`` (or
  :class:`~optimizer.base.Objective` objects) per column and defaults to all ``"min"``.
* Internally every column is turned into one to be minimized (``"max"`` columns are
  negated, see :func:`to_minimization`).
* A row dominates another if it is ``<=`` in every minimized objective and ``<`` in at
  least one. Rows containing NaN are never on the front and never dominate anything.
* Reference points are given in the original units and directions of ``y``: for a
  ``"max"`` objective the reference value is a lower bound.

The hypervolume itself is computed with BoTorch (2-D box decomposition for ``k == 2``,
the HSO dimension sweep of :class:`botorch.utils.multi_objective.hypervolume.Hypervolume`
otherwise). BoTorch/torch are imported lazily so that importing this module is cheap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from optimizer.base import Objective

__all__ = [
    "default_reference_point",
    "hypervolume",
    "hypervolume_history",
    "pareto_mask",
    "to_minimization",
]

# Below this many distinct rows (k >= 3) BoTorch's all-pairs ``is_non_dominated`` is used;
# above it, a front-peeling loop whose cost scales with (front size x n) instead of n^2.
_PAIRWISE_MAX_ROWS = 512


# -- input handling --------------------------------------------------------------------
def _as_array(y: Any) -> np.ndarray:
    """``y`` (numpy, torch, lists) as a float64 numpy array (a copy for torch input)."""
    if hasattr(y, "detach") and hasattr(y, "cpu"):  # torch.Tensor, without importing torch
        y = y.detach().cpu().double().numpy()
    return np.asarray(y, dtype=np.float64)


def _as_matrix(y: Any, k_hint: int | None) -> np.ndarray:
    """``y`` as an ``(n, k)`` float64 matrix; an empty 1-D input becomes ``(0, k_hint)``."""
    arr = _as_array(y)
    if arr.ndim == 1 and arr.size == 0:
        return arr.reshape(0, k_hint or 0)
    if arr.ndim != 2:
        raise ValueError(f"expected an (n, k) array of objective values, got shape {arr.shape}")
    return arr


def _signs(directions: Sequence[str] | Sequence[Objective]) -> np.ndarray:
    """+1 for each ``"min"``, -1 for each ``"max"`` direction."""
    if isinstance(directions, str):
        raise TypeError(
            f"directions must be a sequence with one entry per objective, got the string "
            f"{directions!r} (write [{directions!r}] for a single objective)"
        )
    signs = []
    for d in directions:
        if isinstance(d, Objective):
            signs.append(d.sign)
        elif d == "min":
            signs.append(1.0)
        elif d == "max":
            signs.append(-1.0)
        else:
            raise ValueError(f"direction must be 'min' or 'max', got {d!r}")
    return np.asarray(signs, dtype=np.float64)


def _n_directions(directions: Sequence[str] | Sequence[Objective] | None) -> int | None:
    return None if directions is None or isinstance(directions, str) else len(directions)


def _minimized(
    y: Any, directions: Sequence[str] | Sequence[Objective] | None, k_hint: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(y_min, signs)``: ``y`` as an ``(n, k)`` all-minimize matrix and the column signs."""
    if k_hint is None:
        k_hint = _n_directions(directions)
    arr = _as_matrix(y, k_hint)
    if directions is None:
        signs = np.ones(arr.shape[1])
    else:
        signs = _signs(directions)
        if signs.shape[0] != arr.shape[1]:
            raise ValueError(
                f"y has {arr.shape[1]} objective column(s) but {signs.shape[0]} "
                f"direction(s) were given"
            )
    # ``+ 0.0`` turns -0.0 into 0.0 so that equal values compare and deduplicate as equal.
    return arr * signs + 0.0, signs


def _reference_minimized(ref_point: Any, signs: np.ndarray) -> np.ndarray:
    ref = _as_array(ref_point).reshape(-1)
    if ref.shape[0] != signs.shape[0]:
        raise ValueError(
            f"ref_point has {ref.shape[0]} entries but there are {signs.shape[0]} objective(s)"
        )
    if not np.isfinite(ref).all():
        raise ValueError(f"ref_point must be finite, got {ref.tolist()}")
    return ref * signs + 0.0


def to_minimization(y: np.ndarray, directions: Sequence[str] | Sequence[Objective]) -> np.ndarray:
    """``(n, k)`` values -> ``(n, k)`` float64 values where every column is minimized.

    ``"max"`` columns are negated. Raises ``ValueError`` if ``k != len(directions)`` or a
    direction is neither ``"min"`` nor ``"max"``.
    """
    return _minimized(y, directions)[0]


# -- Pareto front ------------------------------------------------------------------------
def _nondominated_sorted_unique(u: np.ndarray) -> np.ndarray:
    """Non-dominated mask of distinct, NaN-free rows sorted lexicographically (minimize).

    Because the rows are distinct, weak dominance (``<=`` everywhere) is strict
    dominance, and a row can only be dominated by a row that sorts before it.
    """
    m, k = u.shape
    nd = np.zeros(m, dtype=bool)
    if m == 0:
        return nd
    if k == 1:
        nd[0] = True  # the unique minimum
    elif k == 2:
        # Sweep in order of increasing f0: a row is non-dominated iff its f1 is strictly
        # below the f1 of every row before it. O(n) after the O(n log n) sort.
        nd[0] = True
        best_f1 = np.minimum.accumulate(u[:, 1])
        nd[1:] = u[1:, 1] < best_f1[:-1]
    elif m <= _PAIRWISE_MAX_ROWS:
        import torch
        from botorch.utils.multi_objective.pareto import is_non_dominated

        nd = is_non_dominated(torch.from_numpy(u), maximize=False, deduplicate=False).numpy()
    else:
        # Front peeling: the lexicographically smallest remaining row is non-dominated
        # (any dominator sorts before it and would have been removed together with it);
        # drop every remaining row it dominates and repeat.
        idx = np.arange(m)
        rest = u
        while idx.size:
            nd[idx[0]] = True
            keep = (rest[1:] < rest[0]).any(axis=1)
            idx = idx[1:][keep]
            rest = rest[1:][keep]
    return np.asarray(nd, dtype=bool)


def _pareto_mask_minimized(ym: np.ndarray, keep_duplicates: bool) -> np.ndarray:
    n = ym.shape[0]
    mask = np.zeros(n, dtype=bool)
    if n == 0:
        return mask
    if ym.shape[1] == 0:
        raise ValueError("pareto_mask: y must have at least one objective column")
    rows = np.flatnonzero(~np.isnan(ym).any(axis=1))
    if rows.size == 0:
        return mask
    # Distinct rows, sorted lexicographically; ``first`` is each one's first occurrence
    # (np.unique sorts stably when return_index=True).
    uniq, first, inverse = np.unique(ym[rows], axis=0, return_index=True, return_inverse=True)
    nd = _nondominated_sorted_unique(uniq)
    if keep_duplicates:
        mask[rows] = nd[inverse.reshape(-1)]
    else:
        mask[rows[first[nd]]] = True
    return mask


def pareto_mask(
    y: Any,
    directions: Sequence[str] | Sequence[Objective] | None = None,
    *,
    keep_duplicates: bool = True,
) -> np.ndarray:
    """Boolean mask of the non-dominated rows of the ``(n, k)`` array ``y``.

    ``directions`` defaults to all ``"min"``. Rows containing NaN are never on the front.
    With ``keep_duplicates=True`` every copy of an identical non-dominated row is kept
    (a front of trials: ties are all reported); with ``False`` only the first occurrence.

    Cost: O(n log n) for ``k <= 2``; for ``k >= 3`` O(n log n + n * front size).
    """
    ym, _ = _minimized(y, directions)
    return _pareto_mask_minimized(ym, keep_duplicates)


# -- hypervolume -------------------------------------------------------------------------
def _front_hypervolume(front: np.ndarray, ref: np.ndarray) -> float:
    """Hypervolume of a minimization front (distinct, mutually non-dominated rows, each
    strictly better than ``ref`` in every objective) w.r.t. ``ref``."""
    if front.shape[0] == 0:
        return 0.0
    if np.isneginf(front).any():
        return math.inf
    import torch

    # BoTorch maximizes: shift so the reference point is the origin and flip signs.
    gains = torch.from_numpy(np.ascontiguousarray(ref - front))
    origin = torch.zeros(front.shape[1], dtype=torch.float64)
    if front.shape[1] == 2:
        from botorch.utils.multi_objective.box_decompositions.utils import (
            compute_dominated_hypercell_bounds_2d,
        )

        order = torch.argsort(gains[:, 0])  # increasing first objective, as required
        bounds = compute_dominated_hypercell_bounds_2d(gains[order], origin)
        return float((bounds[1] - bounds[0]).prod(dim=-1).sum())
    from botorch.utils.multi_objective.hypervolume import Hypervolume

    return float(Hypervolume(origin).compute(gains))


def hypervolume(
    y: Any,
    ref_point: Any,
    directions: Sequence[str] | Sequence[Objective] | None = None,
) -> float:
    """Hypervolume dominated by the rows of ``y`` and bounded by ``ref_point``.

    ``ref_point`` is in the original units/directions of ``y`` (for a ``"max"`` objective
    it is a lower bound). Rows that do not strictly dominate the reference point
    contribute nothing, NaN rows are ignored and an empty ``y`` gives ``0.0``.
    """
    k_hint = _n_directions(directions)
    if k_hint is None:
        k_hint = _as_array(ref_point).reshape(-1).shape[0]
    ym, signs = _minimized(y, directions, k_hint)
    ref = _reference_minimized(ref_point, signs)
    if ym.shape[0] == 0:
        return 0.0
    useful = ym[(ym < ref).all(axis=1)]  # NaN rows fail the comparison
    front = useful[_pareto_mask_minimized(useful, keep_duplicates=False)]
    return _front_hypervolume(front, ref)


def hypervolume_history(
    y: Any,
    ref_point: Any,
    directions: Sequence[str] | Sequence[Objective] | None = None,
) -> np.ndarray:
    """``h[i] = hypervolume(y[:i+1], ref_point, directions)`` for every ``i``.

    Incremental: the front is updated point by point and the hypervolume recomputed
    only when a new point is not weakly dominated by the current front.
    """
    k_hint = _n_directions(directions)
    if k_hint is None:
        k_hint = _as_array(ref_point).reshape(-1).shape[0]
    ym, signs = _minimized(y, directions, k_hint)
    ref = _reference_minimized(ref_point, signs)
    n, k = ym.shape
    out = np.zeros(n, dtype=np.float64)
    front = np.empty((0, k), dtype=np.float64)
    hv = 0.0
    useful = (ym < ref).all(axis=1)  # False for NaN rows
    for i in range(n):
        if useful[i]:
            p = ym[i]
            if not (front <= p).all(axis=1).any():
                front = np.vstack([front[~(p <= front).all(axis=1)], p])
                hv = _front_hypervolume(front, ref)
        out[i] = hv
    return out


def default_reference_point(
    y: Any,
    directions: Sequence[str] | Sequence[Objective] | None = None,
    margin: float = 0.1,
) -> np.ndarray:
    """A reference point slightly worse than every finite row of ``y``.

    The nadir (worst value per objective, in the original directions) of the rows whose
    values are all finite, pushed outward by ``margin * range`` per objective (or by
    ``margin * max(|nadir|, 1)`` where the range is 0). With ``margin > 0`` every finite
    row strictly dominates the result. Raises ``ValueError`` if there is no finite row.
    """
    if not (margin >= 0 and math.isfinite(margin)):
        raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
    ym, signs = _minimized(y, directions)
    if ym.shape[1] == 0:
        raise ValueError("default_reference_point: y must have at least one objective column")
    finite = ym[np.isfinite(ym).all(axis=1)]
    if finite.shape[0] == 0:
        raise ValueError("default_reference_point: y has no row with all values finite")
    nadir = finite.max(axis=0)
    span = nadir - finite.min(axis=0)
    step = np.where(span > 0, span, np.maximum(np.abs(nadir), 1.0)) * margin
    ref = nadir + step
    if margin > 0:
        # Guard against the step being lost to rounding for huge |nadir|.
        ref = np.maximum(ref, np.nextafter(nadir, np.inf))
    return ref * signs + 0.0
