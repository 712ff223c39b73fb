"""numba helpers shared by the compiled kernel (:mod:`evaluators.loopnest.kernel`) and
its lower bound (:mod:`evaluators.loopnest.kernel_bounds`): each rule they both apply,
written once."""

from __future__ import annotations

from typing import Any

from numba import njit

__all__ = ["distinct_sums", "gcd", "last_slot_over"]


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
