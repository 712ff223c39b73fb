"""A blocked matmul on CPU whose block sizes and loop order come from a coexplore mapping.

``C[M, N] = A[M, K] @ B[K, N]`` is computed tile by tile::

    for <outer loops over the M, N, K blocks, in ``order``, outermost first>:
        C[m0:m1, n0:n1] += A[m0:m1, k0:k1] @ B[k0:k1, n0:n1]     # one torch.addmm_ call

The tile ``(tile_m, tile_n, tile_k)`` is what one call works on (it lives in cache); the
order of the block loops decides which operand tile is reused between consecutive calls.
Edge blocks are smaller when a tile does not divide its dimension. Every block is one
torch kernel call, so small tiles pay per-call dispatch overhead and poor micro-kernel
efficiency, large tiles spill the cache: the trade-off a mapping search explores.

A *tiling point* is a dict ``{"tile_m", "tile_n", "tile_k", "order"}`` (``order`` a
permutation of ``("M", "N", "K")``), the point of :func:`tile_space`. It converts both
ways with a :class:`~mappers.mapping.Mapping` on :func:`cpu_arch` (level 0 = the cache
tile, level 1 = memory): :func:`to_mapping` / :func:`from_mapping`. So the loop-nest
model (:mod:`evaluators.loopnest`) counts the tile traffic of exactly the loop nest that
runs, and a mapping chosen by coexplore's mappers on that arch runs for real.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping as MappingT
from collections.abc import Sequence
from typing import Any

from accelerators.arch import ArchSpec, MemoryLevel, backing_store
from mappers.mapping import Mapping, tile_dims
from mappers.workloads import Layer, gemm

DIMS = ("M", "N", "K")
TILE_KEYS = {"M": "tile_m", "N": "tile_n", "K": "tile_k"}
DEFAULT_TILES = (16, 32, 64, 128, 256)


def _check(layer: Layer) -> None:
    if layer.kind != "gemm":
        raise ValueError(f"layer {layer.name!r}: the blocked matmul runs GEMMs (kind 'gemm'), "
                         f"not {layer.kind!r}")


def tiles_of(point: MappingT[str, Any]) -> dict[str, int]:
    return {d: int(point[TILE_KEYS[d]]) for d in DIMS}


def n_blocks(layer: Layer, point: MappingT[str, Any]) -> int:
    """Kernel calls the blocked matmul makes (one per block)."""
    t = tiles_of(point)
    return math.prod(math.ceil(layer.dims[d] / t[d]) for d in DIMS)


def blocked_matmul(a: Any, b: Any, point: MappingT[str, Any]) -> Any:
    """``a @ b`` computed block by block as ``point`` says (see module docstring)."""
    import torch

    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {tuple(a.shape)} @ {tuple(b.shape)}")
    t = tiles_of(point)
    order = tuple(point.get("order", DIMS))
    if sorted(order) != sorted(DIMS):
        raise ValueError(f"order must be a permutation of {DIMS}, got {order!r}")
    size = {"M": M, "N": N, "K": K}
    ranges = {d: [(s, min(s + t[d], size[d])) for s in range(0, size[d], t[d])] for d in DIMS}
    c = torch.zeros(M, N, dtype=a.dtype, device=a.device)
    for blocks in itertools.product(*(ranges[d] for d in order)):
        r = dict(zip(order, blocks))
        (m0, m1), (n0, n1), (k0, k1) = r["M"], r["N"], r["K"]
        c[m0:m1, n0:n1].addmm_(a[m0:m1, k0:k1], b[k0:k1, n0:n1])
    return c


def blocked_kernel(layer: Layer, point: MappingT[str, Any], seed: int = 0) -> Any:
    """A closure running the blocked matmul of ``layer`` (float32, CPU) once."""
    import torch

    _check(layer)
    g = torch.Generator().manual_seed(seed)
    d = layer.dims
    a = torch.randn(d["M"], d["K"], generator=g)
    b = torch.randn(d["K"], d["N"], generator=g)
    return lambda: blocked_matmul(a, b, point)


# --------------------------------------------------------------------------- spaces


def tile_space(layer: Layer, tiles: Sequence[int] = DEFAULT_TILES, max_blocks: int | None = None,
               orders: bool = True, max_tile_words: int | None = None,
               distinct_orders: bool = False) -> Any:
    """The tilings of a GEMM as a :class:`~design_space.DesignSpace`: ``tile_m/n/k`` from
    ``tiles`` (those not above the dimension, plus the dimension itself as one block) and,
    with ``orders``, the block-loop ``order``. Known constraints: ``max_blocks`` bounds
    the kernel calls (so tiny tiles on big shapes do not take seconds to run);
    ``max_tile_words`` bounds one block's working set ``tm*tk + tk*tn + tm*tn`` (a cache
    budget, e.g. 131,072 fp32 words for a 512 KiB L2), as a mapper bounds tiles by a
    buffer's capacity. ``distinct_orders`` keeps one order per distinct loop nest: loops
    of one block do not change the nest, so only the order of the multi-block dimensions
    matters (the representative puts the single-block ones last, in M, N, K order)."""
    from design_space import Constraint, DesignSpace, Ordinal, Permutation

    _check(layer)
    params = []
    for d in DIMS:
        size = layer.dims[d]
        vals = sorted({t for t in tiles if t < size} | {size})
        params.append(Ordinal(TILE_KEYS[d], vals))
    if orders:
        params.append(Permutation("order", list(DIMS)))
    cons = []
    if max_blocks is not None:
        dims = dict(layer.dims)

        def blocks_ok(p: Any) -> Any:
            import numpy as np

            n = np.ones_like(np.asarray(p["tile_m"]), dtype=np.int64)
            for d in DIMS:
                n = n * -(-dims[d] // np.asarray(p[TILE_KEYS[d]], dtype=np.int64))
            return n <= max_blocks

        cons.append(Constraint("max_blocks", blocks_ok))
    if max_tile_words is not None:
        def tile_fits(p: Any) -> Any:
            import numpy as np

            tm, tn, tk = (np.asarray(p[TILE_KEYS[d]], dtype=np.int64) for d in DIMS)
            return tm * tk + tk * tn + tm * tn <= max_tile_words

        cons.append(Constraint("cache_budget", tile_fits))
    if orders and distinct_orders:
        sizes = dict(layer.dims)

        def canonical(p: Any) -> Any:
            import numpy as np

            nb = {d: -(-sizes[d] // np.asarray(p[TILE_KEYS[d]], dtype=np.int64)) for d in DIMS}
            out = np.empty(len(p["order"]), dtype=bool)
            for i, o in enumerate(p["order"]):
                multi = [d for d in o if nb[d][i] > 1]
                out[i] = tuple(o) == (*multi, *(d for d in DIMS if nb[d][i] == 1))
            return out

        cons.append(Constraint("distinct_orders", canonical))
    return DesignSpace(*params, constraints=cons)


# --------------------------------------------------------------------------- mappings


def cpu_arch(cache_words: int | None = None, name: str = "cpu") -> ArchSpec:
    """Two levels as the loop-nest model sees the blocked matmul: the cache tile (level 0,
    unbounded unless ``cache_words``) and memory (level 1). Energies are zero here; the
    CPU model (:mod:`evaluators.kernels.cpu_model`) prices the traffic."""
    return ArchSpec(name, (MemoryLevel("cache", capacity_words=cache_words),
                           backing_store(0.0, None, "memory")), mac_energy_pj=0.0, word_bits=32)


def to_mapping(layer: Layer, point: MappingT[str, Any], arch: ArchSpec | None = None) -> Mapping:
    """The tiling point as a :class:`Mapping` on :func:`cpu_arch` (edge tiles padded)."""
    _check(layer)
    arch = arch or cpu_arch()
    t = tiles_of(point)
    outer = {d: math.ceil(layer.dims[d] / t[d]) for d in DIMS}
    inner = {d: t[d] if outer[d] > 1 else layer.dims[d] for d in DIMS}
    return Mapping.create(arch, temporal=[inner, outer],
                          order=[DIMS, tuple(point.get("order", DIMS))])


def from_mapping(layer: Layer, mapping: Mapping) -> dict[str, Any]:
    """The tiling point a :class:`Mapping` on a two-level arch denotes: level-0 tile and
    level-1 loop order (so a mapping chosen by a coexplore mapper runs for real)."""
    _check(layer)
    tile = tile_dims(mapping, layer, 0)
    order = tuple(d for d in mapping.full_order(1, layer.dim_names) if d in DIMS)
    return {"tile_m": tile["M"], "tile_n": tile["N"], "tile_k": tile["K"], "order": order}


def gemm_layer(M: int, N: int, K: int) -> Layer:
    return gemm(f"gemm_{M}x{N}x{K}", M=M, N=N, K=K)
