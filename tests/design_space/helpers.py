"""Importable helpers for design-space tests (constraints and software factories by reference)."""

from __future__ import annotations

import numpy as np

from design_space import Constraint, DesignSpace, Integer, Ordinal, Permutation, PowerOfTwo


def always_ok(p):
    return np.ones(len(next(iter(p.values()))), dtype=bool)


def hw() -> DesignSpace:
    return DesignSpace(
        PowerOfTwo("rows", 2, 8),
        Ordinal("buf_words", [16, 32, 64]),
        constraints=[Constraint("small", "rows * buf_words <= 256")],
    )


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


K = 12


def sw_for(h: dict) -> DesignSpace:
    """Tile factor of a K=12 loop: a divisor of 12 that is <= rows, and a loop order;
    the tile must fit in the buffer together with its double-buffered copy."""
    tiles = [d for d in divisors(K) if d <= h["rows"]]
    return DesignSpace(
        Ordinal("tile_k", tiles),
        Integer("unroll", 1, h["rows"]),
        Permutation("order", ["k", "n"]),
        constraints=[Constraint("fits", f"2 * tile_k * unroll <= {h['buf_words']}")],
    )
