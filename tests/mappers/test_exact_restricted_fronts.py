"""The per-node reuse fronts of the exact mapper's refinement (mappers.exact.restricted_fronts):
checked against brute force over every tile shape."""

from __future__ import annotations

import numpy as np
import pytest

from accelerators.arch import OPERANDS
from mappers.exact import restricted_fronts, reuse_fronts, tile_reuse, tile_shapes
from tests.evaluators.mapping_gen import random_buffered_case


def _words(layer, tiles: np.ndarray) -> np.ndarray:
    """Each operand's bounding-box words per tile, from the layer's tensor axes (written here)."""
    dims = list(layer.dim_names)
    out = np.ones((len(tiles), 3))
    for k, op in enumerate(OPERANDS):
        for axis in layer.tensor(op).axes:
            out[:, k] *= 1 + sum(c * (tiles[:, dims.index(d)] - 1) for d, c in axis)
    return out


def _fits(level, keep: np.ndarray, words: np.ndarray) -> np.ndarray:
    held = np.where(keep[None, :], words, 0.0)
    if level.capacity_words is None:
        return np.ones(len(words), dtype=bool)
    if level.shared:
        return held.sum(axis=1) <= level.capacity_of("W")
    return (held <= np.array([level.capacity_of(op) for op in OPERANDS])[None, :]).all(axis=1)


def _divisors(n: int) -> list[int]:
    return [f for f in range(1, n + 1) if n % f == 0]


@pytest.mark.parametrize("seed", range(30))
def test_restricted_fronts_dominate_every_allowed_tile_and_no_other(seed):
    rng = np.random.default_rng(seed)
    layer, arch = random_buffered_case(rng)
    sizes = np.array([layer.dims[d] for d in layer.dim_names])
    tiles = tile_shapes(layer)
    level = int(rng.integers(0, 2))
    keep = rng.random(3) < 0.8
    # random nodes: spatial factors at and below the level and what is left, per dimension
    U = 12
    sp = np.ones((U, len(sizes)), dtype=np.int64)
    rem = np.ones((U, len(sizes)), dtype=np.int64)
    for u in range(U):
        for d, n in enumerate(sizes):
            a = int(rng.choice(_divisors(int(n))))
            b = int(rng.choice(_divisors(int(n) // a)))
            sp[u, d], rem[u, d] = a, b
    got = restricted_fronts(layer, arch, level, keep, sp, rem, tiles, 4)
    words = _words(layer, tiles)
    fit = _fits(arch.levels[level], keep, words)
    reuse = tile_reuse(layer, tiles, words)
    reuse = np.where(np.isfinite(reuse), reuse, np.where(reuse > 0, np.inf, 0.0))
    full = reuse_fronts(layer, arch, level, keep, tiles, 4)
    for u in range(U):
        allowed = fit & np.array([all(t[d] % sp[u, d] == 0 and rem[u, d] % (t[d] // sp[u, d]) == 0
                                      for d in range(len(sizes))) for t in tiles.astype(np.int64)])
        if not allowed.any():
            assert (got[u] == 1.0).all()
            continue
        for s in range(3):
            others = [k for k in range(3) if k != s]
            rows = got[u, s][:, others]
            for r in reuse[allowed][:, others]:          # every allowed tile is dominated by a row
                assert (rows >= r - 1e-9).all(axis=1).any()
            # no row claims more than the allowed tiles reach in either operand
            assert (rows <= reuse[allowed][:, others].max(axis=0) + 1e-9).all()
            # and every row is within what the unrestricted fronts give (a subset of tiles)
            for row in rows:
                assert (full[s][:, others] >= row - 1e-9).all(axis=1).any()


def test_restricting_tightens_a_register_file_front():
    """A node that leaves 10 of P = Q = 20 (the other 2 unrolled above): the register file's
    tiles 20 outputs wide are not its completions', and the front drops their reuse
    (the case of issue 41's analysis: a Shi et al. iso point, DQN conv1)."""
    from accelerators.arch import ArchSpec, MemoryLevel
    from mappers.workloads import conv2d

    layer = conv2d("conv1", K=32, C=4, P=20, Q=20, R=8, S=8, stride=4)
    rf = MemoryLevel("RF", capacity_words={"W": 12, "I": 384, "O": 96}, instances=54, read_energy_pj=0.4,
                     write_energy_pj=0.4)
    glb = MemoryLevel("GLB", capacity_words=55296, fanout_x=3, fanout_y=18, read_energy_pj=8.8, write_energy_pj=8.8)
    arch = ArchSpec("shi-like", (rf, glb, MemoryLevel("DRAM", read_energy_pj=320.0, write_energy_pj=320.0)),
                    mac_energy_pj=0.2)
    keep = np.ones(3, dtype=bool)
    dims = list(layer.dim_names)
    sizes = np.array([layer.dims[d] for d in dims])
    every = restricted_fronts(layer, arch, 0, keep, np.ones((1, len(dims)), dtype=np.int64), sizes[None, :])
    rem = sizes.copy()
    rem[dims.index("P")] = rem[dims.index("Q")] = 10
    tight = restricted_fronts(layer, arch, 0, keep, np.ones((1, len(dims)), dtype=np.int64), rem[None, :])
    # the output stationary: the rows that credit the input with its largest reuse per
    # fetched word (160: a tile 20 outputs wide, or 10 wide with K 8, stepping R by one)
    # credit the weights with 20 (P or Q 20 wide) over every tile, with 10 over the node's
    def weights_beside_best_input(f):
        rows = f[0, 2]
        return rows[rows[:, 1] == rows[:, 1].max(), 0].max()

    assert every[0, 2, :, 1].max() == tight[0, 2, :, 1].max() == 160.0
    assert weights_beside_best_input(every) == 20.0 and weights_beside_best_input(tight) == 10.0
