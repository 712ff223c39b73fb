"""The reference path of :func:`evaluators.loopnest.evaluate_batch`: numpy (or jax)
array code over blocks of mappings.

Scope: cutting a batch into blocks of :data:`BLOCK_ROWS`, dropping the size-1 dimensions
no mapping of a block uses (:func:`dropped_dims`), the counts of
:func:`evaluators.loopnest.counts.count`, then latency (compute cycles, systolic fold
timing, bandwidth), leakage, validity and the ``(B, ...)`` result layout
(:func:`finish`). It is the reference the compiled kernel
(:mod:`evaluators.loopnest.dispatch`) must equal field for field, and the only path for
jax, relaxed factors, ``fills`` hooks, ``fold_cycles`` and non-default conventions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from accelerators.arch import ArchSpec
from evaluators.loopnest.conventions import Conventions
from evaluators.loopnest.counts import FillContext, LayerArch, count, product_of
from evaluators.loopnest.energy import add_leakage, leak_rates_pj_per_cycle
from evaluators.loopnest.result import LoopNestResult, batch_rows, concat_results
from evaluators.systolic_timing import fold_cycles as systolic_fold_cycles
from mappers.mapping import MappingBatch

__all__ = ["BLOCK_ROWS", "dropped_dims", "evaluate_block", "evaluate_reference", "finish"]

BLOCK_ROWS = 16384
"""Mappings per block of the numpy path (keeps temporaries in cache)."""


def evaluate_reference(xp: Any, st: LayerArch, arch: ArchSpec, batch: MappingBatch, integer: bool,
                       fold_cycles: Any, fills: Callable[[FillContext], Any] | None, conv: Conventions,
                       block: int = BLOCK_ROWS, unknown_below: int = 0) -> LoopNestResult:
    """Score ``batch`` with the array code, numpy in blocks of ``block`` rows (arguments
    as :func:`evaluators.loopnest.evaluate_batch`'s; ``st`` the pair's
    :class:`~evaluators.loopnest.counts.LayerArch`; ``unknown_below``: lower bounds,
    :func:`~evaluators.loopnest.counts.count`'s)."""
    B = len(batch)
    if xp is np and B > block:
        return concat_results([evaluate_block(xp, st, arch, batch_rows(batch, i, min(i + block, B)),
                                              integer, fold_cycles, fills, conv, unknown_below)
                               for i in range(0, B, block)])
    return evaluate_block(xp, st, arch, batch, integer, fold_cycles, fills, conv, unknown_below)


def dropped_dims(sizes: np.ndarray, batch: MappingBatch) -> np.ndarray:
    """``(D,)`` bool: the dimensions the numpy path drops for ``batch`` (one block):
    those of size 1 that no mapping of it unrolls or tiles, which contribute nothing to
    any count (batch-size-1 layers lose N); none when that would be every dimension."""
    unit = (sizes == 1) & ~((batch.temporal > 1) | (batch.spatial_x > 1) | (batch.spatial_y > 1)).any(axis=(0, 1))
    return unit if unit.any() and not unit.all() else np.zeros_like(unit)


def evaluate_block(xp: Any, st: LayerArch, arch: ArchSpec, batch: MappingBatch, integer: bool,
                    fold_cycles: Any, fills: Callable[[FillContext], Any] | None = None,
                    conv: Conventions | None = None, unknown_below: int = 0) -> LoopNestResult:
    def cast(a: Any, dtype: Any = float) -> Any:
        moved = np.moveaxis(np.asarray(a), 0, -1)             # (B, ...) -> (..., B)
        return xp.asarray(np.ascontiguousarray(moved), dtype=dtype)

    if xp is np:
        unit = dropped_dims(st.sizes, batch)
        if unit.any():
            live = np.flatnonzero(~unit)
            remap = np.full(st.D, -1)
            remap[live] = np.arange(len(live))
            order = batch.order
            kept = order[~unit[order]].reshape(order.shape[0], order.shape[1], len(live))
            batch = MappingBatch(tuple(batch.dims[i] for i in live), batch.temporal[:, :, live],
                                 batch.spatial_x[:, :, live], batch.spatial_y[:, :, live],
                                 remap[kept], batch.keep)
            st = replace(st, D=len(live), coef=tuple(c[:, live] for c in st.coef),
                         relevant=st.relevant[:, live], sizes=st.sizes[live])
    out = count(xp, st, cast(batch.temporal), cast(batch.spatial_x), cast(batch.spatial_y),
                cast(batch.order, np.int64), cast(batch.keep, bool), integer, fills, conv, unknown_below)
    return finish(xp, st, arch, out, integer, fold_cycles, conv)


def finish(xp: Any, st: LayerArch, arch: ArchSpec, out: dict[str, Any], integer: bool,
            fold_cycles: Any, conv: Conventions | None = None) -> LoopNestResult:
    """Latency, leakage (``conv.leakage``), validity and the (B, ...) result layout from
    the batch-last core output."""
    iters = out["iters"]
    compute = iters
    df = arch.dataflow
    if fold_cycles is None and df is not None:
        rows, cols = arch.array_rows, arch.array_cols

        def fold_cycles(r: Any, c_: Any, tt: Any) -> Any:
            return systolic_fold_cycles(r, c_, tt, df, rows, cols)

    if fold_cycles is not None:
        fl = st.pe_level
        rows_used = product_of(list(out["SY"][fl]))
        cols_used = product_of(list(out["SX"][fl]))
        stream = product_of([product_of(list(out["T"][li])) for li in range(fl)]) if fl else xp.ones_like(iters)
        folds = xp.round(iters / stream) if integer else iters / stream
        compute = folds * fold_cycles(rows_used, cols_used, stream)
    BW = out["BW"]                                            # (L, B)
    latency = xp.maximum(compute, xp.max(BW, axis=0))
    utilized = conv is not None and conv.leakage == "utilized_instances"
    leak, energy = add_leakage(xp, leak_rates_pj_per_cycle(arch, utilized), latency, out["energy"],
                               out["inst"] if utilized else None)
    # ---- validity (discrete; numpy)
    SX, SY = np.asarray(out["SX"]), np.asarray(out["SY"])
    TW, kp = np.asarray(out["TW"]), np.asarray(out["keep"])
    padded = np.asarray(out["padded"])
    valid = np.ones(padded.shape[-1], dtype=bool)
    for d in range(len(st.sizes)):                            # row loops: short axes are slow
        valid &= padded[d] >= st.sizes[d]
    for li in range(st.L):
        if st.fanout_x[li] > 1 or SX[li].max() > 1:
            valid &= product_of(list(SX[li])) <= st.fanout_x[li]
        if st.fanout_y[li] > 1 or SY[li].max() > 1:
            valid &= product_of(list(SY[li])) <= st.fanout_y[li]
        tot = 0.0
        for t in range(3):
            held = np.where(kp[li, t], TW[li, t], 0)
            tot = tot + held
            if np.isfinite(st.cap[li, t]):
                valid &= held <= st.cap[li, t]
        if np.isfinite(st.cap_shared[li]):
            valid &= tot <= st.cap_shared[li]
    util = st.macs / (compute * st.n_macs)

    def bl(a: Any) -> Any:   # (..., B) -> (B, ...)
        return xp.moveaxis(a, -1, 0)

    return LoopNestResult(
        energy_pj=energy, latency_cycles=latency, compute_cycles=compute, edp=energy * latency,
        utilization=util, macs_executed=out["macs_exec"], valid=valid, reads=bl(out["R"]),
        writes=bl(out["Wr"]), noc_words=bl(out["noc"]), bandwidth_cycles=bl(BW),
        bandwidth_parts=None if out.get("BW_parts") is None else bl(out["BW_parts"]),
        level_energy_pj=bl(out["level_energy"]), mac_energy_pj=out["macs_exec"] * st.mac_energy,
        tile_words=bl(out["TW"]), leakage_energy_pj=bl(leak),
        read_vectors=None if out["vectors"] is None else bl(out["vectors"][0]),
        write_vectors=None if out["vectors"] is None else bl(out["vectors"][1]),
    )


