"""Integer arithmetic in numba, shared by the compiled kernel
(:mod:`evaluators.loopnest.kernel`) and its lower bound
(:mod:`evaluators.loopnest.kernel_bounds`)."""

from __future__ import annotations

from numba import njit

__all__ = ["gcd"]


@njit(cache=True, nogil=True)
def gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a
