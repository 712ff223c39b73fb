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
def least_distinct_sums(cf1: float, base1: float, tb1: float, free1: bool, m1: float,
                        cf2: float, base2: float, tb2: float, free2: bool, m2: float) -> float:
    """The least of :func:`distinct_sums` over the strides a completion may give a
    two-dimension axis: dimension ``k``'s stride is ``cf_k base_k t_k`` with ``t_k`` the
    temporal product below its fanout, a divisor of ``tb_k`` when ``free_k`` (the
    levels below are undecided: any divisor tiling splits ``tb_k``, the placement's
    product there, into a part below and a part above), else ``tb_k`` itself. Lower
    bounds of the multicast groups (:func:`evaluators.loopnest.counts.count`'s
    ``unknown_below``); the numpy model's ``least_two_aps`` is the same loop."""
    best = m1 * m2
    n1 = np.int64(tb1)
    n2 = np.int64(tb2)
    for t1 in range(1, n1 + 1):
        if (free1 and n1 % t1) or (not free1 and t1 != n1):
            continue
        for t2 in range(1, n2 + 1):
            if (free2 and n2 % t2) or (not free2 and t2 != n2):
                continue
            a1 = np.int64(max(cf1 * base1 * t1, 1.0))
            a2 = np.int64(max(cf2 * base2 * t2, 1.0))
            v = distinct_sums(a1, m1, a2, m2)
            if v < best:
                best = v
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
