"""The loop-nest model under jax: ``jit``, ``vmap`` and ``grad`` through a relaxation.

:func:`relaxed_model` returns a pure jax function of one mapping's *continuous* tile
factors and of the on-chip buffer capacities, built on the same core as the exact numpy
model (:func:`evaluators.loopnest.count` with ``xp=jax.numpy``). Loop orders and bypass
choices are discrete and fixed when the function is built. This is what a DOSA-style
gradient co-design optimizer (Hong et al., MICRO 2023) descends: relax integer factors to
reals, follow ``grad(log EDP)`` with a penalty on buffer overflow, round back to legal
mappings.

The relaxation: factors are positive reals; every count formula is a polynomial or a
piecewise-linear (``max(0, .)``) function of them, so it is differentiable almost
everywhere. Two discrete pieces are smoothed: the distinct-offset count of two unrolled
dimensions sharing a tensor axis treats their strides as coprime, and systolic fill/drain
is charged per fold with the same closed form as the exact model. Buffer capacity enters
through ``energy_of_capacity`` (per-word access energy as a function of capacity, e.g.
``accelerators.tech``'s SRAM law written in jnp) and through ``overflow_words``
(``sum(relu(tile - capacity))``), which a caller adds as a penalty.

With integer inputs (and no coprimality smoothing involved) the relaxed model returns
exactly the numpy model's numbers; ``tests/evaluators/test_differentiable.py`` checks it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from accelerators.arch import ArchSpec
from evaluators.loopnest import count, prepare
from mappers.workloads import Layer

__all__ = ["DATAFLOW_OVERHEAD", "relaxed_model"]

DATAFLOW_OVERHEAD = {"OS": lambda r, c: r + c - 2, "WS": lambda r, c: 2 * r + c - 2,
                     "IS": lambda r, c: 2 * r + c - 2}
"""Systolic fill/skew/drain cycles per fold beyond the streamed ones, ``(rows, cols) ->
cycles``: :func:`evaluators.systolic_timing.fold_cycles` minus ``t`` (written for jnp and
real-valued array sizes)."""


def relaxed_model(
    layer: Layer,
    arch: ArchSpec,
    order: np.ndarray,
    keep: np.ndarray,
    *,
    energy_of_capacity: Callable[[Any], tuple[Any, Any]] | None = None,
) -> Callable[..., dict[str, Any]]:
    """``f(T, SX, SY, capacity_words) -> {energy_pj, latency_cycles, edp, overflow_words}``.

    Args:
        order: ``(L, D)`` int loop orders (dimension indices, outermost first).
        keep: ``(L, 3)`` bool operand kept per level.
        energy_of_capacity: ``capacity_words (L,) -> (e_read (L, 3), e_write (L, 3))`` in
            jnp; default: the architecture's fixed per-word energies.

    ``T``, ``SX``, ``SY``: ``(L, D)`` float factors; ``capacity_words``: ``(L,)`` float
    (entries of unbounded levels are ignored). Use ``jax.vmap`` over a batch; call inside
    ``jax.enable_x64(True)`` for float64 accuracy.
    """
    import jax.numpy as jnp

    st0 = prepare(layer, arch)
    order_b = jnp.asarray(np.asarray(order)[:, :, None])
    keep_b = jnp.asarray(np.asarray(keep)[:, :, None])
    df, rows, cols = arch.dataflow, arch.array_rows, arch.array_cols
    bounded = np.array([lv.capacity_words is not None for lv in arch.levels])
    partitioned = np.array([lv.capacity_words is not None and not lv.shared for lv in arch.levels])
    # share of a partitioned level's capacity each operand gets (fixed proportions)
    share = np.where(np.isfinite(st0.cap), st0.cap, 0.0)
    share = share / np.maximum(share.sum(axis=1, keepdims=True), 1.0)

    def f(T: Any, SX: Any, SY: Any, capacity_words: Any) -> dict[str, Any]:
        st = st0
        if energy_of_capacity is not None:
            e_r, e_w = energy_of_capacity(capacity_words)
            st = replace(st0, e_read=e_r, e_write=e_w)
        out = count(jnp, st, T[:, :, None], SX[:, :, None], SY[:, :, None], order_b, keep_b,
                    integer=False)
        iters = out["iters"][0]
        compute = iters
        if df is not None:
            fl = st0.pe_level
            stream = jnp.prod(T[:fl]) if fl else 1.0
            compute = iters / stream * (stream + DATAFLOW_OVERHEAD[df](rows, cols))
        latency = jnp.maximum(compute, jnp.max(out["BW"][:, 0]))
        energy = out["energy"][0]
        tiles = out["TW"][:, :, 0] * keep_b[:, :, 0]                     # (L, 3)
        cap = jnp.asarray(capacity_words)
        over_part = jnp.sum(jnp.maximum(0.0, tiles - cap[:, None] * share), axis=1)
        over_shared = jnp.maximum(0.0, jnp.sum(tiles, axis=1) - cap)
        over = jnp.where(jnp.asarray(partitioned), over_part, over_shared)
        overflow = jnp.sum(jnp.where(jnp.asarray(bounded), over, 0.0))
        return {"energy_pj": energy, "latency_cycles": latency, "edp": energy * latency,
                "overflow_words": overflow}

    return f
