"""The exact mapper's lower bound in the compiled kernel: :func:`bound_fill`, the numba
copy of :func:`evaluators.loopnest.bounds.bound_hook`, rule for rule.

Scope: the fill count of one (operand, level) pair of one mapping when the tiles of the
levels ``>= known - 1`` are decided; :func:`evaluators.loopnest.kernel.evaluate_rows`
calls it (inlined) in its lower-bound mode. Change it together with
:mod:`evaluators.loopnest.bounds` (``tests/evaluators/test_loopnest_kernel.py`` checks
the two agree exactly, the stationary operand and the irrelevant-tile table included).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from evaluators.loopnest.kernel_common import distinct_sums, last_slot_over

__all__ = ["bound_fill", "mac_change_fill"]


@njit(cache=True, nogil=True, inline="always")
def _multiplier(bdim: Any, level: int, n_above: Any, slot_dim: Any, ntr: Any) -> float:
    """``FillContext.multiplier(dims, level)``: ``1 + sum n_trans_j`` over the loops above
    ``level`` that are over ``dims`` (``bdim[d]``) or enclose such a loop (every kept
    loop has factor > 1)."""
    if level >= n_above.shape[0]:
        return 1.0
    last = last_slot_over(bdim, n_above[level], slot_dim)
    acc = 0.0
    for j in range(last + 1):
        acc += ntr[j]
    return 1.0 + acc


@njit(cache=True, nogil=True, inline="always")
def _run_words(c: int, n_ax: Any, ax_d: Any, ax_cf: Any, E: Any, SPf: Any) -> float:
    """The distinct words of the operand an instance of level ``c`` uses over the whole
    run: :func:`evaluators.loopnest.bounds.distinct_words` of the instance's share of the
    layer (the top tile's extents over the spatial factors of the levels above ``c``; a
    dimension none of them splits takes a contiguous range), the same rules in the same
    order as ``bound_fill``'s words of one share. (Its locals are named apart from
    ``bound_fill``'s, see the note on inlining in
    :func:`evaluators.loopnest.kernel.evaluate_rows`.)"""
    rw_top = E.shape[0] - 1
    rw_out = 1.0
    for rw_k in range(n_ax):
        rw_d1, rw_d2 = ax_d[rw_k, 0], ax_d[rw_k, 1]
        rw_s1 = 1.0
        for rw_q in range(c + 1, rw_top + 1):
            rw_s1 *= SPf[rw_q, rw_d1]
        rw_x1 = E[rw_top, rw_d1] / rw_s1
        if rw_d2 < 0:
            rw_out = rw_out * rw_x1
            continue
        rw_s2 = 1.0
        for rw_q in range(c + 1, rw_top + 1):
            rw_s2 *= SPf[rw_q, rw_d2]
        rw_x2 = E[rw_top, rw_d2] / rw_s2
        rw_a, rw_b = ax_cf[rw_k, 0], ax_cf[rw_k, 1]
        rw_words = (rw_x1 + rw_x2) - 1
        if rw_s1 == 1 and rw_s2 == 1:
            rw_words = max(rw_words, distinct_sums(np.int64(rw_a), rw_x1, np.int64(rw_b), rw_x2))
        if rw_b == 1 and rw_s2 == 1:
            rw_words = max(rw_words, rw_x2 + (rw_x1 - 1) * min(rw_a, rw_x2))
        if rw_a == 1 and rw_s1 == 1:
            rw_words = max(rw_words, rw_x1 + (rw_x2 - 1) * min(rw_b, rw_x1))
        rw_out = rw_out * rw_words
    return rw_out


@njit(cache=True, nogil=True, inline="always")
def bound_fill(t: int, c: int, b: int, F: float, w: float, single: bool, bdim: Any, n_ax: Any,
               ax_d: Any, ax_cf: Any, bits: Any, n_above: Any, slot_dim: Any, slot_lvl: Any, ntr: Any,
               Tf: Any, SPf: Any, E: Any, steps: Any, cap: float, stationary: int, irr: float,
               ws: Any, span: Any, idx: Any) -> float:
    """The lower bound's fill count of operand ``t`` at level ``c`` when the tiles of the
    levels ``>= b = known - 1`` are decided: the numpy
    ``fills`` hook :func:`evaluators.loopnest.bounds.bound_hook` for one mapping, rule for rule
    (its docstring and :func:`evaluators.loopnest.bounds.lower_bound` give the
    arguments; ``tests/evaluators/test_loopnest_kernel.py`` checks the two agree exactly).

    ``F``, ``w``: the model's fill count and tile words at ``c``; ``single``: every live
    axis of the operand is one dimension; ``bdim``: the dimensions of its one-dimension
    axes; ``n_ax``, ``ax_d``, ``ax_cf``: its live axes (dimensions of size 1 that the
    numpy model drops are left out); ``bits[d]``: the operands ``d`` is irrelevant to
    (bit ``t``); ``cap``: ``c``'s capacity for the operand; ``stationary``: the operand
    the loops above ``c`` leave stationary, or -1; ``irr``: the irrelevant-tile bound of
    level ``c``, or -1 for none (then ``c`` is not refined; any level below ``b`` may be). Every quantity but
    ``spread`` is an integer below 2**53, exact in float64 in any order of the sums.

    ``ws`` (float ``(9, max(L, D, axes))``), ``span`` (float ``(L, D)``) and ``idx`` (int
    ``(D,)``) are scratch space the caller allocates once per batch: the function is
    called per row, operand and level, and allocating its work arrays on every call
    cost more than the arithmetic."""
    L, D = Tf.shape
    if c >= b:
        if single:
            return F
        # per level above c: max(w x moves along the one-dimension axes, Smith's-rule
        # floor of the level's sliding fetches)
        last = last_slot_over(bdim, n_above[c], slot_dim)
        mv = ws[0]
        for li in range(L):
            mv[li] = 0.0
        for j in range(last + 1):
            mv[slot_lvl[j]] += ntr[j]
        for li in range(L):
            for d in range(D):
                span[li, d] = (Tf[li, d] - 1) * steps[li, d]
        ext = ws[1]
        for k in range(n_ax):
            e = 0.0
            for m in range(2):
                d = ax_d[k, m]
                if d >= 0:
                    e += ax_cf[k, m] * (E[c, d] - 1)
            ext[k] = 1 + e
        low = ws[2]
        best = ws[3]
        forced0 = ws[4]
        forced1 = ws[5]
        floors = ws[6]
        total = 0.0
        above = 1.0
        for lvl in range(L - 1, c, -1):
            for d in range(D):
                low[d] = 0.0
                for li in range(c + 1, lvl):
                    low[d] += span[li, d]
            n_lo, n_hi = n_above[lvl], n_above[lvl - 1]
            inner_bits = bits[slot_dim[n_hi - 1]] if n_hi > n_lo else 0
            for j in range(D):
                floors[j] = 0.0
                if Tf[lvl, j] <= 1:
                    continue
                free = 1.0
                for k in range(n_ax):
                    # subsets of the axis's other dimensions that move at lvl
                    oth0, oth1 = -1, -1
                    for m in range(2):
                        d = ax_d[k, m]
                        if d >= 0 and d != j and span[lvl, d] > 0:
                            if oth0 < 0:
                                oth0 = m
                            else:
                                oth1 = m
                    bk = 0.0
                    forced0[k] = 0.0
                    forced1[k] = 0.0
                    for sub in range(4):
                        if (sub & 1 and oth0 < 0) or (sub & 2 and oth1 < 0):
                            continue
                        moved = 0.0
                        for m in range(2):
                            d = ax_d[k, m]
                            if d < 0:
                                continue
                            insub = (sub & 1 and m == oth0) or (sub & 2 and m == oth1)
                            moved += ax_cf[k, m] * ((-low[d] + (steps[lvl, j] if d == j else 0.0))
                                                    - (span[lvl, d] if insub else 0.0))
                        g_ov = max(0.0, ext[k] - abs(moved))
                        bk = max(bk, g_ov)
                        if sub & 1:
                            if oth0 == 0:
                                forced0[k] = max(forced0[k], g_ov)
                            else:
                                forced1[k] = max(forced1[k], g_ov)
                        if sub & 2:
                            if oth1 == 0:
                                forced0[k] = max(forced0[k], g_ov)
                            else:
                                forced1[k] = max(forced1[k], g_ov)
                    best[k] = bk
                    free *= bk
                allowed_j = (bits[j] & ~inner_bits) == 0
                held = -1.0
                for d in range(D):
                    if d == j or Tf[lvl, d] <= 1 or (bits[d] & ~inner_bits) != 0:
                        continue
                    gi, gm = -1, -1
                    for k in range(n_ax):
                        for m in range(2):
                            if ax_d[k, m] == d:
                                gi, gm = k, m
                    if gi < 0:
                        v = free
                    else:
                        v = forced0[gi] if gm == 0 else forced1[gi]
                        rest = 1.0
                        for k in range(n_ax):
                            if k != gi:
                                rest *= best[k]
                        v = v * rest
                    held = max(held, v)
                ov = free if (allowed_j or held < 0) else held
                floors[j] = w - ov
            # Smith's rule: the largest floors outermost (stable; ties give equal sums)
            for j in range(D):
                idx[j] = j
            for i in range(1, D):
                k = i
                while k > 0 and floors[idx[k - 1]] < floors[idx[k]]:
                    idx[k - 1], idx[k] = idx[k], idx[k - 1]
                    k -= 1
            acc = 0.0
            before = 1.0
            for i in range(D):
                fj = Tf[lvl, idx[i]]
                acc += before * (fj - 1) * floors[idx[i]]
                before *= fj
            sliding = above * acc
            for d in range(D):
                above *= Tf[lvl, d]
            total += max(w * mv[lvl], sliding)
        return max(w + total, _run_words(c, n_ax, ax_d, ax_cf, E, SPf))
    # tile of c unknown: distinct words an instance of c touches within b's tile
    ex = ws[7]
    whole = ws[8]                                   # 1.0: the dimension takes a contiguous range
    for d in range(D):
        sb = 1.0
        for q in range(c + 1, b + 1):
            sb *= SPf[q, d]
        ex[d] = E[b, d] / sb
        whole[d] = 1.0 if sb == 1 else 0.0
    inner = 1.0
    for k in range(n_ax):
        d1, d2 = ax_d[k, 0], ax_d[k, 1]
        if d2 < 0:
            inner = inner * ex[d1]
            continue
        a, bb = ax_cf[k, 0], ax_cf[k, 1]
        x1, x2 = ex[d1], ex[d2]
        words = (x1 + x2) - 1
        if whole[d1] != 0 and whole[d2] != 0:
            words = max(words, distinct_sums(np.int64(a), x1, np.int64(bb), x2))
        if bb == 1 and whole[d2] != 0:
            words = max(words, x2 + (x1 - 1) * min(a, x2))
        if a == 1 and whole[d1] != 0:
            words = max(words, x1 + (x2 - 1) * min(bb, x1))
        inner = inner * words
    mult = _multiplier(bdim, b, n_above, slot_dim, ntr)
    plain = mult * inner
    out_all = 1.0
    for d in range(D):
        for li in range(b + 1, L):
            out_all *= Tf[li, d]
    if single:
        extra = inner if inner > cap else 0.0
    else:
        extra = max(inner - cap, 0.0)
    sweeps = max(plain + (out_all - mult) * extra, _run_words(c, n_ax, ax_d, ax_cf, E, SPf))
    if irr < 0:                                     # irr < 0: no refinement at c
        return sweeps
    if not single:                                  # a sliding operand the loops above c move
        # where the share's bounding box (c's tile were no loop of c + 1 .. b over the
        # operand's dimensions > 1) does not fit c
        box = 1.0
        for k in range(n_ax):
            x = 1.0 + ax_cf[k, 0] * (ex[ax_d[k, 0]] - 1.0)
            if ax_d[k, 1] >= 0:
                x = x + ax_cf[k, 1] * (ex[ax_d[k, 1]] - 1.0)
            box = box * x
        if box <= cap or t == stationary or irr <= 0:
            return sweeps
        volume = 1.0
        for d in range(D):
            volume = volume * ex[d]
        return max(sweeps, out_all * volume / irr)
    if inner <= cap:
        return sweeps
    reach = 1.0
    for d in range(D):
        if not bdim[d]:
            reach *= ex[d]
    spread = max(reach / min(irr, reach), 1.0)
    moving = out_all * inner * (1.0 if t == stationary else spread)
    return max(sweeps, moving)


@njit(cache=True, nogil=True, inline="always")
def mac_change_fill(n_ax: Any, ax_d: Any, ax_cf: Any, Tf: Any, SPf: Any) -> float:
    """The lower bound of a MAC instance's reads of an operand counted on change
    (``Conventions.mac_operand_reads="on_change"``): the numba copy of
    :func:`evaluators.loopnest.bounds_conventions.mac_change_bound` (its docstring gives
    the argument), for one mapping: the distinct words of the operand one MAC instance
    uses, per live axis (``n_ax``, ``ax_d``, ``ax_cf`` as in :func:`bound_fill`) the
    product of a dimension's temporal factors over all levels, or for a two-dimension
    axis at least ``X_p + X_r - 1``, exactly the two-progression count where neither
    dimension is unrolled spatially. Integers, exact in float64. (Its locals are named
    apart from its caller's, see the note on inlining in
    :func:`evaluators.loopnest.kernel.evaluate_rows`.)"""
    mcf_nl = Tf.shape[0]
    mcf_out = 1.0
    for mcf_k in range(n_ax):
        mcf_d1, mcf_d2 = ax_d[mcf_k, 0], ax_d[mcf_k, 1]
        mcf_x1 = 1.0
        mcf_s1 = 1.0
        for mcf_l in range(mcf_nl):
            mcf_x1 *= Tf[mcf_l, mcf_d1]
            mcf_s1 *= SPf[mcf_l, mcf_d1]
        if mcf_d2 < 0:
            mcf_out = mcf_out * mcf_x1
            continue
        mcf_x2 = 1.0
        mcf_s2 = 1.0
        for mcf_l in range(mcf_nl):
            mcf_x2 *= Tf[mcf_l, mcf_d2]
            mcf_s2 *= SPf[mcf_l, mcf_d2]
        mcf_w = (mcf_x1 + mcf_x2) - 1.0
        if mcf_s1 == 1 and mcf_s2 == 1:
            mcf_w = max(mcf_w, distinct_sums(np.int64(ax_cf[mcf_k, 0]), mcf_x1, np.int64(ax_cf[mcf_k, 1]), mcf_x2))
        mcf_out = mcf_out * mcf_w
    return mcf_out
