"""The compiled helpers shared by the kernel and its bound, against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.loopnest.kernel_common import distinct_sums, least_distinct_sums


def _count(a1: int, m1: int, a2: int, m2: int) -> int:
    return len({a1 * i + a2 * j for i in range(m1) for j in range(m2)})


def _least_by_enumeration(cf1, b1, tb1, free1, m1, cf2, b2, tb2, free2, m2) -> int:
    t1s = [t for t in range(1, tb1 + 1) if tb1 % t == 0] if free1 else [tb1]
    t2s = [t for t in range(1, tb2 + 1) if tb2 % t == 0] if free2 else [tb2]
    return min(_count(max(int(cf1 * b1 * t1), 1), m1, max(int(cf2 * b2 * t2), 1), m2)
               for t1 in t1s for t2 in t2s)


def test_distinct_sums_counts_the_set() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        a1, a2 = (int(v) for v in rng.integers(1, 13, 2))
        m1, m2 = (int(v) for v in rng.integers(1, 9, 2))
        assert distinct_sums(a1, float(m1), a2, float(m2)) == _count(a1, m1, a2, m2)


@pytest.mark.parametrize("seed", range(4))
def test_least_distinct_sums_is_the_least_over_every_divisor_stride(seed: int) -> None:
    """Walking divisor pairs up to sqrt(n) and stopping at the sumset floor gives the same
    least as enumerating every divisor of both temporal products (a walk that skipped the
    large divisor of a pair, or stopped above the floor, would differ on some draw)."""
    rng = np.random.default_rng(seed)
    for _ in range(250):
        cf1, cf2 = (int(v) for v in rng.integers(1, 4, 2))
        b1, b2 = (int(v) for v in rng.integers(1, 5, 2))
        tb1, tb2 = (int(rng.choice([1, 2, 3, 4, 6, 8, 9, 12, 16, 18, 24, 36, 49, 60])) for _ in range(2))
        free1, free2 = (bool(v) for v in rng.integers(0, 2, 2))
        m1, m2 = (int(v) for v in rng.integers(1, 9, 2))
        want = _least_by_enumeration(cf1, b1, tb1, free1, m1, cf2, b2, tb2, free2, m2)
        got = least_distinct_sums(float(cf1), float(b1), float(tb1), free1, float(m1),
                                  float(cf2), float(b2), float(tb2), free2, float(m2))
        assert got == want, (cf1, b1, tb1, free1, m1, cf2, b2, tb2, free2, m2)
        assert got >= m1 + m2 - 1
