"""numba helpers shared by the compiled kernel (:mod:`evaluators.loopnest.kernel`) and
its lower bound (:mod:`evaluators.loopnest.kernel_bounds`): each rule they both apply,
written once."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

__all__ = ["distinct_sums", "gcd", "last_slot_over", "least_distinct_sums"]


@njit(cache=True, nogil=True)
def gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


@njit(cache=True, nogil=True)
def distinct_sums(a: int, m: float, b: int, n: float) -> float:
    """``|{a i + b j : 0 <= i < m, 0 <= j < n}|`` for positive integer steps ``a``,
    ``b`` (``m``, ``n`` integers held in floats): pairs ``(i, j)`` and
    ``(i + b/g, j - a/g)`` give the same value (``g = gcd(a, b)``), so
    ``m n - max(0, m - b/g) max(0, n - a/g)`` values are distinct (the numpy model's
    :func:`evaluators.loopnest.counts.distinct_two_aps`)."""
    g = gcd(a, b)
    return m * n - max(0.0, m - b // g) * max(0.0, n - a // g)


@njit(cache=True, nogil=True)
def _least_over_t2(a1: int, m1: float, s2: float, n2: int, free2: bool, m2: float,
                   best: float, floor: float) -> float:
    """The least of ``best`` and :func:`distinct_sums` ``(a1, m1, s2 t2, m2)`` over the
    strides ``t2`` may take (a divisor of ``n2`` when ``free2``, else ``n2``), walking the
    divisors in pairs ``(d, n2 / d)`` up to ``sqrt(n2)`` and stopping once ``floor`` is
    reached."""
    if not free2:
        return min(best, distinct_sums(a1, m1, np.int64(max(s2 * n2, 1.0)), m2))
    d = 1
    while d * d <= n2:
        if n2 % d == 0:
            best = min(best, distinct_sums(a1, m1, np.int64(max(s2 * d, 1.0)), m2))
            e = n2 // d
            if e != d:
                best = min(best, distinct_sums(a1, m1, np.int64(max(s2 * e, 1.0)), m2))
            if best <= floor:
                return best
        d += 1
    return best


@njit(cache=True, nogil=True)
def least_distinct_sums(cf1: float, base1: float, tb1: float, free1: bool, m1: float,
                        cf2: float, base2: float, tb2: float, free2: bool, m2: float) -> float:
    """The least of :func:`distinct_sums` over the strides a completion may give a
    two-dimension axis: dimension ``k``'s stride is ``cf_k base_k t_k`` with ``t_k`` the
    temporal product below its fanout, a divisor of ``tb_k`` when ``free_k`` (the
    levels below are undecided: any divisor tiling splits ``tb_k``, the placement's
    product there, into a part below and a part above), else ``tb_k`` itself. Lower
    bounds of the multicast groups (:func:`evaluators.loopnest.counts.count`'s
    ``unknown_below``); the numpy model's ``least_two_aps`` takes the same minimum.

    Only divisors are visited (pairs ``(d, n / d)``, ``d <= sqrt(n)``), and the walk
    stops at the sumset floor ``m1 + m2 - 1``, which no pair of strides goes below
    (``|A + B| >= |A| + |B| - 1`` for finite sets of integers)."""
    best = m1 * m2
    floor = m1 + m2 - 1.0
    if best <= floor:
        return best
    n1 = np.int64(tb1)
    n2 = np.int64(tb2)
    s1 = cf1 * base1
    s2 = cf2 * base2
    if not free1:
        return _least_over_t2(np.int64(max(s1 * n1, 1.0)), m1, s2, n2, free2, m2, best, floor)
    d = 1
    while d * d <= n1:
        if n1 % d == 0:
            best = _least_over_t2(np.int64(max(s1 * d, 1.0)), m1, s2, n2, free2, m2, best, floor)
            e = n1 // d
            if e != d and best > floor:
                best = _least_over_t2(np.int64(max(s1 * e, 1.0)), m1, s2, n2, free2, m2, best, floor)
            if best <= floor:
                return best
        d += 1
    return best


@njit(cache=True, nogil=True, inline="always")
def last_slot_over(mask: Any, n: int, slot_dim: Any) -> int:
    """The innermost of the first ``n`` loop slots (outermost first) whose dimension
    ``mask`` marks, or -1. With ``mask`` the dimensions of an operand's one-dimension
    axes, every loop from it outwards moves the tile to disjoint words (a transition
    fetches it whole): the fill rule of the kernel and of its bound. (Its locals are
    named apart from its callers', see the note on inlining in
    :func:`evaluators.loopnest.kernel.evaluate_rows`.)"""
    lso_last = -1
    for lso_j in range(n):
        if mask[slot_dim[lso_j]]:
            lso_last = lso_j
    return lso_last
