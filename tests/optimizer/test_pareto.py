"""Tests for optimizer.pareto: fronts, hypervolumes and reference points vs brute force."""

from __future__ import annotations

import itertools
import math
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optimizer import pareto
from optimizer.base import Objective
from optimizer.pareto import (
    default_reference_point,
    hypervolume,
    hypervolume_history,
    pareto_mask,
    to_minimization,
)

NAN = float("nan")
DIRECTIONS = st.sampled_from(["min", "max"])


# -- brute-force references (written in original units, independent of to_minimization) --
def _better_eq(a: float, b: float, d: str) -> bool:
    return a <= b if d == "min" else a >= b


def _better(a: float, b: float, d: str) -> bool:
    return a < b if d == "min" else a > b


def brute_pareto_mask(y: np.ndarray, directions: list[str], keep_duplicates: bool) -> np.ndarray:
    n = len(y)
    has_nan = [any(math.isnan(v) for v in row) for row in y]
    out = np.zeros(n, dtype=bool)
    for i in range(n):
        if has_nan[i]:
            continue
        dominated = False
        for j in range(n):
            if j == i or has_nan[j]:
                continue
            pairs = list(zip(y[j], y[i], directions))
            if all(_better_eq(a, b, d) for a, b, d in pairs) and any(
                _better(a, b, d) for a, b, d in pairs
            ):
                dominated = True
                break
            if not keep_duplicates and j < i and all(a == b for a, b, _ in pairs):
                dominated = True  # an earlier copy of the same row represents it
                break
        out[i] = not dominated
    return out


def brute_hypervolume(points: np.ndarray, ref: list[int], directions: list[str]) -> float:
    """Count the unit cells of the integer grid that the points dominate.

    All coordinates are integers, so the dominated region (the union of the boxes between
    each point and the reference point) is a union of unit cells. A "min" cell
    ``[c, c+1]`` is covered by ``p`` iff ``p <= c`` (and ``c + 1 <= ref``); a "max"
    cell ``[c, c+1]`` iff ``p >= c + 1`` (and ``c >= ref``).
    """
    pts = [row for row in points if not any(math.isnan(v) for v in row)]
    if not pts:
        return 0.0
    axes = []
    for j, d in enumerate(directions):
        col = [p[j] for p in pts]
        if d == "min":
            axes.append(range(int(min(min(col), ref[j])), int(ref[j])))
        else:
            axes.append(range(int(ref[j]), int(max(max(col), ref[j]))))
    count = 0
    for cell in itertools.product(*axes):
        for p in pts:
            if all(
                (p[j] <= c) if d == "min" else (p[j] >= c + 1)
                for j, (c, d) in enumerate(zip(cell, directions))
            ):
                count += 1
                break
    return float(count)


def pairwise_nondominated(ym: np.ndarray) -> np.ndarray:
    """Vectorized O(n^2) check on an all-minimize NaN-free array (for larger n)."""
    le = (ym[:, None, :] <= ym[None, :, :]).all(-1)  # le[j, i]: j <= i everywhere
    lt = (ym[:, None, :] < ym[None, :, :]).any(-1)
    return ~(le & lt).any(axis=0)


@st.composite
def int_matrices(draw, max_k: int = 4, max_n: int = 30, lo: int = -3, hi: int = 3):
    k = draw(st.integers(1, max_k))
    n = draw(st.integers(0, max_n))
    vals = draw(st.lists(st.integers(lo, hi), min_size=n * k, max_size=n * k))
    y = np.asarray(vals, dtype=float).reshape(n, k)
    if n:
        for i, j in draw(
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, k - 1)), max_size=3)
        ):
            y[i, j] = NAN
    directions = draw(st.lists(DIRECTIONS, min_size=k, max_size=k))
    return y, directions


# -- to_minimization -----------------------------------------------------------------------
def test_to_minimization_negates_max_columns():
    y = np.array([[1.0, 2.0, 3.0], [-4.0, 5.0, 0.0]])
    out = to_minimization(y, ["min", "max", Objective("c", "max")])
    np.testing.assert_array_equal(out, [[1.0, -2.0, -3.0], [-4.0, -5.0, 0.0]])
    assert out.dtype == np.float64
    np.testing.assert_array_equal(y[0], [1.0, 2.0, 3.0])  # input untouched


def test_to_minimization_validates():
    with pytest.raises(ValueError, match=r"3.*2"):
        to_minimization(np.zeros((4, 3)), ["min", "max"])
    with pytest.raises(ValueError, match="maximize"):
        to_minimization(np.zeros((4, 2)), ["min", "maximize"])
    with pytest.raises(ValueError, match="shape"):
        to_minimization(np.zeros((2, 2, 2)), ["min", "min"])


def test_to_minimization_accepts_torch():
    out = to_minimization(torch.tensor([[1.0, 2.0]], dtype=torch.float32), ["max", "min"])
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    np.testing.assert_array_equal(out, [[-1.0, 2.0]])


# -- pareto_mask ---------------------------------------------------------------------------
def test_pareto_mask_hand_cases():
    y = np.array([[1, 2], [2, 1], [2, 2], [1, 2]], dtype=float)
    np.testing.assert_array_equal(pareto_mask(y), [True, True, False, True])
    np.testing.assert_array_equal(pareto_mask(y, ["min", "min"]), [True, True, False, True])
    np.testing.assert_array_equal(pareto_mask(y, keep_duplicates=False), [True, True, False, False])
    # maximizing both: (2, 2) dominates everything else
    np.testing.assert_array_equal(pareto_mask(y, ["max", "max"]), [False, False, True, False])
    # mixed: minimize first, maximize second -> (1, 2) twice
    np.testing.assert_array_equal(
        pareto_mask(y, ["min", Objective("b", "max")]), [True, False, False, True]
    )


def test_pareto_mask_nan_rows_and_edge_cases():
    y = np.array([[NAN, 0.0], [1.0, 1.0], [0.0, NAN], [NAN, NAN]])
    np.testing.assert_array_equal(pareto_mask(y), [False, True, False, False])
    assert pareto_mask(np.full((3, 2), NAN)).tolist() == [False] * 3
    empty = pareto_mask(np.empty((0, 3)))
    assert empty.shape == (0,) and empty.dtype == bool
    assert pareto_mask([], ["min", "max"]).shape == (0,)
    # -0.0 and 0.0 are the same value
    np.testing.assert_array_equal(
        pareto_mask(np.array([[0.0, 1.0], [-0.0, 1.0]]), keep_duplicates=False), [True, False]
    )
    # infinities compare like any other value
    np.testing.assert_array_equal(
        pareto_mask(np.array([[np.inf, 0.0], [0.0, np.inf], [-np.inf, 5.0]])),
        [True, False, True],
    )


def test_pareto_mask_torch_input_matches_numpy():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, size=(50, 3)).astype(float)
    expected = pareto_mask(y, ["min", "max", "min"])
    got = pareto_mask(torch.from_numpy(y), ["min", "max", "min"])
    assert isinstance(got, np.ndarray) and got.dtype == bool
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=int_matrices(), keep_duplicates=st.booleans(), force_peeling=st.booleans())
def test_pareto_mask_matches_brute_force(data, keep_duplicates, force_peeling):
    y, directions = data
    expected = brute_pareto_mask(y, directions, keep_duplicates)
    # force_peeling: use the large-n algorithm for k >= 3 even on small inputs
    limit = 0 if force_peeling else pareto._PAIRWISE_MAX_ROWS
    with mock.patch.object(pareto, "_PAIRWISE_MAX_ROWS", limit):
        got = pareto_mask(y, directions, keep_duplicates=keep_duplicates)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_pareto_mask_large_n_matches_pairwise(k):
    # > _PAIRWISE_MAX_ROWS distinct rows, with many duplicates and ties
    rng = np.random.default_rng(k)
    y = rng.integers(0, 15, size=(2500, k)).astype(float)
    y[rng.integers(0, 2500, size=20), rng.integers(0, k, size=20)] = NAN
    directions = ["max"] + ["min"] * (k - 1)
    ym = to_minimization(y, directions)
    valid = ~np.isnan(ym).any(axis=1)
    expected = np.zeros(len(y), dtype=bool)
    expected[valid] = pairwise_nondominated(ym[valid])
    got = pareto_mask(y, directions)
    np.testing.assert_array_equal(got, expected)
    assert got.sum() > 1
    # keep_duplicates=False: exactly one row (the first) per distinct front value
    dedup = pareto_mask(y, directions, keep_duplicates=False)
    assert not (dedup & ~got).any()
    front_rows = [tuple(r) for r in y[got]]
    assert dedup.sum() == len(set(front_rows))
    first = {}
    for i in np.flatnonzero(got):
        first.setdefault(tuple(y[i]), i)
    assert sorted(first.values()) == np.flatnonzero(dedup).tolist()


def test_pareto_mask_whole_front_k3():
    # every point of the plane x + y + z = 40 is non-dominated (worst case for peeling)
    pts = [(a, b, 40 - a - b) for a in range(41) for b in range(41 - a)]
    y = np.asarray(pts, dtype=float)
    assert len(y) > pareto._PAIRWISE_MAX_ROWS
    assert pareto_mask(y).all()
    y2 = np.vstack([y, y + 1.0])  # shifted copies are all dominated
    np.testing.assert_array_equal(pareto_mask(y2), [True] * len(y) + [False] * len(y))


@pytest.mark.parametrize("k", [2, 3])
def test_pareto_mask_100k_runs(k):
    """Performance sanity check (not timed): 100k random points."""
    rng = np.random.default_rng(42)
    y = rng.random((100_000, k))
    mask = pareto_mask(y, ["min"] * (k - 1) + ["max"])
    assert mask.shape == (100_000,) and 0 < mask.sum() < 10_000
    # spot-check: no front point is dominated by any point
    ym = to_minimization(y, ["min"] * (k - 1) + ["max"])
    for i in np.flatnonzero(mask)[:20]:
        dominated = (ym <= ym[i]).all(axis=1) & (ym < ym[i]).any(axis=1)
        assert not dominated.any()


# -- hypervolume ---------------------------------------------------------------------------
def test_hypervolume_hand_cases():
    pts = np.array([[1, 3], [2, 2], [3, 1]], dtype=float)
    assert hypervolume(pts, [4, 4]) == pytest.approx(6.0)
    assert hypervolume(pts, [4, 4], ["min", "min"]) == pytest.approx(6.0)
    assert hypervolume(-pts, [-4, -4], ["max", "max"]) == pytest.approx(6.0)
    assert hypervolume(pts * [1, -1], [4, -4], ["min", "max"]) == pytest.approx(6.0)
    # torch input, duplicates, dominated points, NaN rows and points beyond ref change nothing
    noisy = np.vstack([pts, pts, [[3, 3], [NAN, 0.0], [0.0, 5.0], [4.0, 0.0]]])
    assert hypervolume(torch.from_numpy(noisy), [4, 4]) == pytest.approx(6.0)
    # a point on the reference boundary does not strictly dominate it
    assert hypervolume([[4.0, 0.0], [0.0, 4.0]], [4, 4]) == 0.0
    assert hypervolume(np.empty((0, 2)), [4, 4]) == 0.0
    assert hypervolume([], [4, 4]) == 0.0
    assert hypervolume([[NAN, NAN]], [4, 4]) == 0.0
    # one objective: the distance from the best value to the reference
    assert hypervolume([[3.0], [1.0]], [5.0]) == pytest.approx(4.0)
    assert hypervolume([[3.0], [1.0]], [0.0], ["max"]) == pytest.approx(3.0)
    # three objectives: a unit cube and two overlapping boxes
    assert hypervolume([[0, 0, 0]], [1, 1, 1]) == pytest.approx(1.0)
    assert hypervolume([[0, 0, 1], [1, 0, 0]], [2, 2, 2]) == pytest.approx(6.0)
    assert isinstance(hypervolume(pts, [4, 4]), float)


def test_hypervolume_validates_reference():
    with pytest.raises(ValueError, match="ref_point"):
        hypervolume([[1.0, 2.0]], [3.0])
    with pytest.raises(ValueError, match="ref_point"):
        hypervolume([[1.0, 2.0]], [3.0, np.inf])
    with pytest.raises(ValueError, match=r"2.*3"):
        hypervolume([[1.0, 2.0]], [3.0, 3.0], ["min", "min", "min"])


@settings(max_examples=150, deadline=None)
@given(
    k=st.integers(2, 3),
    data=st.data(),
)
def test_hypervolume_matches_cell_count(k, data):
    n = data.draw(st.integers(0, 12))
    vals = data.draw(st.lists(st.integers(0, 5), min_size=n * k, max_size=n * k))
    y = np.asarray(vals, dtype=float).reshape(n, k)
    if n and data.draw(st.booleans()):
        y[data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, k - 1))] = NAN
    directions = data.draw(st.lists(DIRECTIONS, min_size=k, max_size=k))
    ref = data.draw(st.lists(st.integers(0, 5), min_size=k, max_size=k))
    expected = brute_hypervolume(y, ref, directions)
    assert hypervolume(y, ref, directions) == pytest.approx(expected, abs=1e-9)


def test_hypervolume_matches_cell_count_wider_fronts():
    # larger fronts than the hypothesis test (k=3 goes through BoTorch's HSO sweep)
    rng = np.random.default_rng(7)
    for k, n, hi in [(2, 60, 12), (3, 40, 7)]:
        y = rng.integers(0, hi, size=(n, k)).astype(float)
        directions = list(rng.choice(["min", "max"], size=k))
        ref = [hi if d == "min" else -1 for d in directions]
        assert hypervolume(y, ref, directions) == pytest.approx(
            brute_hypervolume(y, ref, directions)
        )


# -- hypervolume_history -------------------------------------------------------------------
@pytest.mark.parametrize(("k", "n"), [(1, 50), (2, 300), (3, 60)])
def test_hypervolume_history_matches_prefixes(k, n):
    rng = np.random.default_rng(k)
    y = rng.normal(size=(n, k))
    y[rng.integers(0, n, size=5), rng.integers(0, k, size=5)] = NAN
    y[rng.integers(0, n, size=3)] = y[rng.integers(0, n, size=3)]  # exact duplicates
    directions = list(rng.choice(["min", "max"], size=k))
    ref = np.array([1.0 if d == "min" else -1.0 for d in directions])  # excludes some points
    hist = hypervolume_history(y, ref, directions)
    assert hist.shape == (n,) and hist.dtype == np.float64
    expected = [hypervolume(y[: i + 1], ref, directions) for i in range(n)]
    np.testing.assert_allclose(hist, expected, rtol=1e-12, atol=1e-12)
    assert np.all(np.diff(hist) >= 0)
    assert hist[-1] == pytest.approx(hypervolume(y, ref, directions))
    assert hist[-1] > 0


def test_hypervolume_history_hand_case():
    y = np.array([[5, 5], [3, 1], [NAN, 0], [3, 1], [4, 4], [1, 3], [2, 2]], dtype=float)
    np.testing.assert_allclose(hypervolume_history(y, [4, 4]), [0.0, 3.0, 3.0, 3.0, 3.0, 5.0, 6.0])
    assert hypervolume_history(np.empty((0, 2)), [4, 4]).shape == (0,)


def test_hypervolume_history_many_front_points():
    # every point improves the front: the incremental path recomputes each time
    n = 1000
    t = np.linspace(0.0, 1.0, n)
    y = np.column_stack([t, 1.0 - t])
    y = y[np.random.default_rng(0).permutation(n)]
    hist = hypervolume_history(y, [1.1, 1.1])
    assert np.all(np.diff(hist) > 0)
    assert hist[-1] == pytest.approx(hypervolume(y, [1.1, 1.1]))
    assert hist[-1] == pytest.approx(1.1**2 - 1.0 / 2 - 1.0 / (2 * (n - 1)), rel=1e-9)


# -- default_reference_point ---------------------------------------------------------------
def test_default_reference_point_hand_cases():
    y = np.array([[0.0, 10.0], [2.0, 20.0], [NAN, 100.0], [np.inf, 0.0]])
    np.testing.assert_allclose(default_reference_point(y), [2.2, 21.0])
    np.testing.assert_allclose(default_reference_point(y, ["min", "max"]), [2.2, 9.0])
    np.testing.assert_allclose(default_reference_point(y, margin=0.5), [3.0, 25.0])
    # zero range: margin * max(|nadir|, 1)
    np.testing.assert_allclose(default_reference_point([[5.0, -2.0, 0.5]]), [5.5, -1.8, 0.6])
    np.testing.assert_allclose(default_reference_point([[3.0]], ["max"]), [2.7])
    with pytest.raises(ValueError, match="finite"):
        default_reference_point([[NAN, 1.0], [np.inf, 2.0]])
    with pytest.raises(ValueError, match="finite"):
        default_reference_point(np.empty((0, 2)))
    with pytest.raises(ValueError, match="margin"):
        default_reference_point([[1.0]], margin=-0.1)


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    k=st.integers(1, 4),
    margin=st.floats(1e-6, 2.0),
)
def test_default_reference_point_is_dominated_by_every_finite_row(data, k, margin):
    value = st.one_of(
        # tiny magnitudes excluded: a volume of (1e-191)^2 underflows to 0.0 in float64
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).filter(
            lambda v: v == 0 or abs(v) > 1e-30
        ),
        st.sampled_from([NAN, np.inf, -np.inf, 0.0, -0.0, 1e15]),
    )
    rows = data.draw(st.lists(st.lists(value, min_size=k, max_size=k), min_size=1, max_size=20))
    directions = data.draw(st.lists(DIRECTIONS, min_size=k, max_size=k))
    y = np.asarray(rows, dtype=float)
    finite = y[np.isfinite(y).all(axis=1)]
    if len(finite) == 0:
        with pytest.raises(ValueError):
            default_reference_point(y, directions, margin)
        return
    ref = default_reference_point(y, directions, margin)
    assert ref.shape == (k,) and np.isfinite(ref).all()
    for j, d in enumerate(directions):
        if d == "min":
            assert (finite[:, j] < ref[j]).all()
        else:
            assert (finite[:, j] > ref[j]).all()
    # hence every finite row contributes volume
    assert hypervolume(finite, ref, directions) > 0
