"""The loop-nest cost model compiled with numba, one mapping at a time.

Scope: the numba code of the model (:func:`evaluate_rows`) and the packing of a
(layer, architecture) pair into its arrays (:func:`pack`, :class:`Packed`,
:func:`columns`). Which calls run it, and how its output becomes a result, is
:mod:`evaluators.loopnest.dispatch`; its lower-bound fills are
:mod:`evaluators.loopnest.kernel_bounds`.

:func:`evaluators.loopnest.evaluate_batch` (numpy, exact integers, no custom ``fills``
hook or ``fold_cycles``, any counting conventions: ``accounting="timeloop"``,
``"zigzag"`` or any :class:`~evaluators.loopnest.Conventions`, passed as codes,
:func:`convention_codes`; so also :data:`evaluators.loopnest.LOOPNEST` when scoring) and
:meth:`evaluators.loopnest.LoopNestCost.lower_bound` run this kernel when numba is
importable; the array code (:mod:`evaluators.loopnest.counts`,
:mod:`evaluators.loopnest.reference`) stays the reference (and the ``jax`` path). The
kernel applies the same rules and formulas (the docstring and the comments of
:func:`evaluators.loopnest.counts.count`) to the scalars of one mapping and
gives the same numbers, bit for bit: counts are integers below 2**53 (exact in float64
whatever the order of the sums), energies are summed in the numpy model's order. What
differs is how much work it does:

* **Only loops that move count.** A temporal loop of factor 1 never increments
  (``n_trans = 0``) and spans nothing, so it adds nothing to any fill: the kernel keeps
  the nest's loops of factor > 1 (a handful instead of ``L x D``).
* **One-dimension axes do not overlap once they move.** When a loop above level ``c``
  increments, a dimension's offset moves by the loop's step if the loop is over it
  (``step >= e_d(c)``: it strides over everything inside it), or back by the span of its
  loops inside (at least the step of the innermost, again ``>= e_d(c)``). An axis over
  that one dimension (coefficient ``cf``: extent ``1 + cf (e - 1) <= cf e``) then
  shares no index with the old tile. So from the innermost loop that moves one of an
  operand's one-dimension axes outwards every overlap is 0 and those loops add
  ``n_trans_j x words`` (for an operand whose axes are all one dimension, the whole fill
  count is ``words x (1 + sum of those n_trans_j)``); only the loops inside it are walked,
  and only the two-dimension (sliding-window) axes are evaluated there.
* **Distinct child tiles** of one-dimension axes are a product of spatial factors,
  precomputed per level.
* **The conventions' rules on the same structure.** Timeloop's window rule
  (``innermost``) changes only the loops inside the innermost one over a one-dimension
  axis (outside it nothing overlaps under any rule), so it is the walk above with each
  loop's two-dimension translations compared with the innermost moving loop's; ZigZag's
  (``none``) is the same closed form as the one-dimension axes' with the operand's
  dimensions; a MAC's operand read on change is the fill rule with a one-word tile.
  Multicast by index, refills to every child, drains as parent updates and per-word first
  accumulations change only the parents' arithmetic. Leakage (either rule) and
  whole-vector energy are left to :mod:`evaluators.loopnest.dispatch`, which applies the
  numpy model's arithmetic (:mod:`evaluators.loopnest.energy`) to the kernel's counts.
* **Per (layer, architecture) constants** (axes, level tables, energies) are packed
  once into a few arrays (:func:`pack`); :mod:`evaluators.loopnest.dispatch` caches them.
* **Compiled per shape for large batches.** :func:`shaped_rows` is the same code
  compiled with the numbers of levels, dimensions and axes as constants
  (:func:`_rows_kernel`), so every scratch array has a constant shape and LLVM unrolls
  the loops over them; :mod:`evaluators.loopnest.dispatch` scores batches of
  :data:`~evaluators.loopnest.dispatch.SHAPED_MIN_ROWS` rows or more with it (one
  compilation per shape, cached by numba) and everything else, bounds included, with
  the generic :func:`evaluate_rows`.

The results go to two float64 arrays laid out by :func:`columns`: the per-level blocks
row by row, ``(B, 12 L)`` (a row's figures in one run of memory: writing them field by
field into a batch-last array took about twice as long), and the seven scalar fields
batch-last, ``(7, B)`` (each contiguous, as the numpy model's), and a ``(B,)`` bool
validity array.

Lower-bound mode: the fill count of every (operand, level) pair is replaced as the numpy
``fills`` hook :func:`evaluators.loopnest.bounds.bound_hook` does, by
:func:`evaluators.loopnest.kernel_bounds.bound_fill`, the one place to change when that
bound changes (``tests/evaluators/test_loopnest_kernel.py``
checks that the two agree exactly, the stationary operand and the irrelevant-tile table
included). Its fills need not be integers, so the NoC deliveries are summed operand by
operand, in the numpy model's order. numba inlines it here and keys its on-disk cache of
this module's functions by this file alone: a change to ``kernel_bounds.py`` that leaves
this file untouched runs the old bound from a warm cache (delete this package's
``__pycache__/kernel*.nbi`` and ``*.nbc``, or change this file, e.g. this line: bound
revision 2, issue 41's box gate of the sliding input).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from evaluators.loopnest.kernel_bounds import bound_fill, mac_change_fill
from evaluators.loopnest.kernel_common import distinct_sums, last_slot_over, least_distinct_sums

__all__ = ["Packed", "columns", "convention_codes", "evaluate_rows", "pack", "shaped_rows"]

# column blocks of the output row, in order: (name, width in units of L, or 0 for scalar)
_BLOCKS = (("reads", 3), ("writes", 3), ("tile_words", 3), ("noc_words", 1),
           ("bandwidth_cycles", 1), ("level_energy_pj", 1), ("energy_pj", 0),
           ("latency_cycles", 0), ("compute_cycles", 0), ("edp", 0), ("utilization", 0),
           ("macs_executed", 0), ("mac_energy_pj", 0))
# level table columns (lv_i int64, lv_f float64)
_HOLDS, _FAN, _MCAST, _FX, _FY = 0, 3, 4, 5, 6
_ER, _EW, _ENOC, _BW, _CAP, _CAPSH, _BWR, _BWW = 0, 3, 6, 7, 8, 11, 12, 13
# dataflow codes
_DF_NONE, _DF_OS, _DF_WS_IS = 0, 1, 2


def columns(L: int) -> dict[str, tuple[int, int]]:
    """``name -> (first column, width)`` of the output row for ``L`` levels."""
    out, at = {}, 0
    for name, w in _BLOCKS:
        width = 3 * L if w == 3 else (L if w == 1 else 1)
        out[name] = (at, width)
        at += width
    return out


@dataclass(frozen=True)
class Packed:
    """A (layer, architecture) pair as the kernel's arrays (see :func:`pack`). An operand
    axis (over at least one dimension) is a record ``(d1, d2, cf1, cf2)``, the index
    ``cf1 d1 + cf2 d2``; ``d2 = D`` (and ``cf2 = 0``) marks a one-dimension axis."""

    L: int
    D: int
    axes_i: np.ndarray      # (3, 1 + 2A) int64 per operand: number of axes, their d1 (A),
    #                         their d2 (A)
    axes_f: np.ndarray      # (3, 2A) float64: cf1 (A), cf2 (A)
    dims_i: np.ndarray      # (7, D) int64: relevant to W, I, O; in a one-dimension axis of
    #                         W, I, O; size
    lv_i: np.ndarray        # (L, 7 + L) int64: holds W/I/O, fanout > 1, multicast, fanout
    #                         x, y; then [c + 1, 7 + p]: every level c < q <= p multicasts
    lv_f: np.ndarray        # (L, 14) float64: e_read x3, e_write x3, e_noc, bandwidth, cap
    #                         x3, cap shared, read bandwidth, write bandwidth (inf unlimited)
    sc: np.ndarray          # (7,) float64: mac energy, MAC units, layer MACs, PE-array level,
    #                         dataflow code, array rows, array cols
    n_fields: int

    @property
    def A(self) -> int:
        """The most axes of one operand (the width of the axis records)."""
        return (self.axes_i.shape[1] - 1) // 2


def pack(st: Any, dataflow: str | None, rows: int, cols: int) -> Packed:
    """Pack ``st`` (an :class:`evaluators.loopnest.counts.LayerArch`) and the systolic timing
    parameters (``dataflow`` ``None`` for none) into a :class:`Packed`."""
    L, D = st.L, st.D
    A = max(1, max(c.shape[0] for c in st.coef))
    axes_i = np.zeros((3, 1 + 2 * A), dtype=np.int64)
    axes_f = np.zeros((3, 2 * A))
    dims_i = np.zeros((7, D), dtype=np.int64)
    dims_i[0:3] = np.asarray(st.relevant, dtype=bool)
    dims_i[6] = np.asarray(st.sizes)
    for t in range(3):
        C = np.asarray(st.coef[t])
        for a in range(C.shape[0]):
            ds = [d for d in range(D) if C[a, d] != 0]
            if not ds:
                continue
            if len(ds) > 2:
                raise NotImplementedError("more than two dimensions on one tensor axis")
            k = axes_i[t, 0]
            axes_i[t, 0] += 1
            axes_i[t, 1 + k] = ds[0]
            axes_f[t, k] = float(C[a, ds[0]])
            axes_i[t, 1 + A + k] = ds[1] if len(ds) == 2 else D
            axes_f[t, A + k] = float(C[a, ds[1]]) if len(ds) == 2 else 0.0
            if len(ds) == 1:
                dims_i[3 + t, ds[0]] = 1
    mc = np.asarray(st.multicast, dtype=bool)
    lv_i = np.zeros((L, 7 + L), dtype=np.int64)
    lv_i[:, _HOLDS:_HOLDS + 3] = np.asarray(st.holds)
    lv_i[:, _FAN] = (np.asarray(st.fanout_x) * np.asarray(st.fanout_y)) > 1
    lv_i[:, _MCAST] = mc
    lv_i[:, _FX] = st.fanout_x
    lv_i[:, _FY] = st.fanout_y
    for lo in range(L):                          # lo = c + 1: the segment lo..p
        for p in range(lo, L):
            lv_i[lo, 7 + p] = bool(mc[lo:p + 1].all())
    lv_f = np.zeros((L, 14))
    lv_f[:, _ER:_ER + 3] = st.e_read
    lv_f[:, _EW:_EW + 3] = st.e_write
    lv_f[:, _ENOC] = st.e_noc
    lv_f[:, _BW] = st.bandwidth
    lv_f[:, _CAP:_CAP + 3] = st.cap
    lv_f[:, _CAPSH] = st.cap_shared
    lv_f[:, _BWR] = st.read_bandwidth if len(st.read_bandwidth) else np.inf
    lv_f[:, _BWW] = st.write_bandwidth if len(st.write_bandwidth) else np.inf
    code = _DF_NONE if dataflow is None else (_DF_OS if str(dataflow).lower() == "os" else _DF_WS_IS)
    sc = np.array([st.mac_energy, st.n_macs, st.macs, st.pe_level, code, rows, cols], dtype=np.float64)
    return Packed(L=L, D=D, axes_i=axes_i, axes_f=axes_f, dims_i=dims_i, lv_i=lv_i, lv_f=lv_f, sc=sc,
                  n_fields=sum(w for _, w in columns(L).values()))


@njit(cache=True, nogil=True)
def _heapsort(a: Any, n: int) -> None:
    """Sort ``a[:n]`` in place (a few lines instead of ``np.sort``, whose compiled code
    took a quarter of the kernel's compile time)."""
    for start in range(n // 2 - 1, -1, -1):
        _sift(a, start, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift(a, 0, end)


@njit(cache=True, nogil=True)
def _sift(a: Any, root: int, n: int) -> None:
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and a[child + 1] > a[child]:
            child += 1
        if a[root] >= a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child


@njit(cache=True, nogil=True)
def _enumerated(SX: Any, SY: Any, Eb: Any, row: int, d1: int, d2: int, cf1: float, cf2: float,
                c: int, p: int) -> float:
    """Distinct values of one two-dimension axis over a parent's children, by listing the
    child offsets (a dimension unrolled at several levels of the segment ``c < q <= p``
    is no single progression); the numpy model's :func:`evaluators.loopnest.counts.fix_multi`."""
    n = 1
    for q in range(c + 1, p + 1):
        n *= SX[row, q, d1] * SY[row, q, d1] * SX[row, q, d2] * SY[row, q, d2]
    vals = np.zeros(n)
    m = 1
    for k in range(2):
        d = d1 if k == 0 else d2
        cf = cf1 if k == 0 else cf2
        for q in range(c + 1, p + 1):
            sx, sy = SX[row, q, d], SY[row, q, d]
            unit = cf * Eb[q, d]
            if sx * sy == 1:
                continue
            # every existing offset plus every (kx, ky) of this pair of spatial loops
            for j in range(m - 1, -1, -1):
                base = vals[j]
                for kx in range(sx):
                    for ky in range(sy):
                        vals[j * sx * sy + kx * sy + ky] = base + unit * (kx * sy + ky)
            m *= sx * sy
    _heapsort(vals, m)
    distinct = 1
    for j in range(1, m):
        if vals[j] != vals[j - 1]:
            distinct += 1
    return float(distinct)


@njit(cache=True, nogil=True)
def _two_axis(c: int, p: int, row: int, d1: int, d2: int, cf1: float, cf2: float, m1: float, m2: float,
              SX: Any, SY: Any, SPf: Any, Eb: Any, unknown_below: int) -> float:
    """Distinct values of a two-dimension axis ``cf1 d1 + cf2 d2`` over a parent's
    children when both dimensions are unrolled (``m1``, ``m2`` > 1) between levels ``c``
    and ``p``: ``|{a1 i + a2 j}| = m1 m2 - max(0, m1 - a2/g) max(0, m2 - a1/g)`` for the
    progressions' strides ``a1``, ``a2`` and ``g = gcd(a1, a2)``, or by enumeration when
    a dimension is unrolled at several levels (the numpy model's ``distinct_two_aps``
    and ``fix_multi``). Lower-bound mode (``unknown_below`` > 0: the tiles of levels
    below ``unknown_below - 1`` are not decided): where a fanout level ``q`` with
    ``0 < q < unknown_below`` unrolls ``d1`` or ``d2``, the strides depend on the
    undecided tile below it: the least count over the strides a divisor completion may
    give (:func:`~evaluators.loopnest.kernel_common.least_distinct_sums`), or, where a
    dimension is unrolled at several levels, ``m1 + m2 - 1``, true of any strides (a
    sumset of integer sets: ``|A + B| >= |A| + |B| - 1``)."""
    st1, st2, nl1, nl2, q1, q2 = 1.0, 1.0, 0, 0, 0, 0
    for q in range(c + 1, p + 1):
        if SPf[q, d1] > 1:
            q1 = q
        if SPf[q, d2] > 1:
            q2 = q
    if unknown_below > 0 and ((0 < q1 < unknown_below) or (0 < q2 < unknown_below)):
        for q in range(c + 1, p + 1):
            nl1 += 1 if SPf[q, d1] > 1 else 0
            nl2 += 1 if SPf[q, d2] > 1 else 0
        if nl1 > 1 or nl2 > 1:
            return m1 + m2 - 1.0
        b1, b2 = 1.0, 1.0
        for li in range(q1):
            b1 *= SPf[li, d1]
        for li in range(q2):
            b2 *= SPf[li, d2]
        return least_distinct_sums(cf1, b1, Eb[q1, d1] / b1, 0 < q1 < unknown_below, m1,
                                   cf2, b2, Eb[q2, d2] / b2, 0 < q2 < unknown_below, m2)
    for q in range(c + 1, p + 1):
        if SPf[q, d1] > 1:
            st1 *= Eb[q, d1]
            nl1 += 1
        if SPf[q, d2] > 1:
            st2 *= Eb[q, d2]
            nl2 += 1
    if nl1 > 1 or nl2 > 1:
        return _enumerated(SX, SY, Eb, row, d1, d2, cf1, cf2, c, p)
    a1 = np.int64(max(cf1 * st1, 1.0))
    a2 = np.int64(max(cf2 * st2, 1.0))
    return distinct_sums(a1, m1, a2, m2)


@njit(cache=True, nogil=True, inline="always")
def _level_slots(li: int, seq: Any, start: int, prefix: float, Tf: Any, Eb: Any, SPf: Any, slot_dim: Any,
                 slot_lvl: Any, slot_step: Any, slot_span: Any, ntr: Any) -> tuple[int, float]:
    """Write the loops of level ``li`` that move (factor > 1) in the order ``seq``
    (outermost first) into the slot arrays from position ``start``, ``prefix`` the
    product of the factors above the level (the slot layout of :func:`evaluate_rows`);
    returns the next free position and the product of the factors at and above the
    level. Branch-free (random factors make "> 1" unpredictable): a loop of factor 1 is
    written to the spare last slot (the arrays hold one more than the nest's loops), so
    the layout below and above the level is untouched. (Its locals are named apart from
    :func:`evaluate_rows`'s: see the note on inlining there.)"""
    pos = start
    above = prefix
    spare = slot_dim.shape[0] - 1
    for ls_r in range(seq.shape[0]):
        ls_d = seq[ls_r]
        ls_f = Tf[li, ls_d]
        ls_moves = ls_f > 1                         # only loops that move have a slot
        ls_at = pos if ls_moves else spare
        ls_step = Eb[li, ls_d] * SPf[li, ls_d]
        slot_dim[ls_at] = ls_d
        slot_lvl[ls_at] = li
        slot_step[ls_at] = ls_step
        slot_span[ls_at] = (ls_f - 1) * ls_step
        ntr[ls_at] = above * (ls_f - 1)
        pos += np.int64(ls_moves)
        above *= ls_f
    return pos, above


# convention codes (:func:`convention_codes`): the index of each field's choice in
# evaluators.loopnest.conventions.CONVENTION_CHOICES, in this order
_CV_FIELDS = ("window_reuse", "multicast", "psum_refill", "mac_operand_reads", "output_drain",
              "first_accumulation", "leakage")
_WIN, _MC, _PSUM, _MACR, _DRAIN, _FIRST, _LEAK = 0, 1, 2, 3, 4, 5, 6
_WIN_ANY, _WIN_INNERMOST, _WIN_NONE = 0, 1, 2


def convention_codes(conv: Any) -> np.ndarray:
    """``(7,)`` int64: per field of ``conv`` (a :class:`evaluators.loopnest.Conventions`,
    fields in :data:`_CV_FIELDS`' order), the index of its choice in
    :data:`evaluators.loopnest.conventions.CONVENTION_CHOICES` (0: coexplore's)."""
    from evaluators.loopnest.conventions import CONVENTION_CHOICES

    return np.array([CONVENTION_CHOICES[f].index(getattr(conv, f)) for f in _CV_FIELDS], dtype=np.int64)


@njit(cache=True, nogil=True)
def _convention_fill(t: int, w: float, c: int, mac: bool, nab: int, win: int, axes_i: Any, axes_f: Any,
                     ext: Any, dims_i: Any, slot_dim: Any, slot_step: Any, slot_span: Any, ntr: Any, sh: Any,
                     trm: Any) -> float:
    """Per-instance fills of operand ``t``'s tile of ``w`` words at level ``c`` (``mac``:
    the one word a MAC holds at its input, every axis of extent 1) under a window rule
    ``win`` other than the default's fast path, over the ``nab`` moving loops above the
    level (the slot arrays of :func:`evaluate_rows`; ``sh`` zeros on entry and exit):
    the numpy model's :func:`evaluators.loopnest.counts.convention_fill`. ``any_step``:
    ``w + sum_j n_trans_j (w - overlap_j)``; ``innermost`` (Timeloop's): the overlap is
    kept only where loop ``j`` translates the tile, axis by axis, exactly as the
    innermost moving loop above the level does, else the whole tile is fetched; ``none``
    (ZigZag's): the whole tile at every step of a loop that is, or has inside it, a loop
    over one of the operand's dimensions (only moving loops have slots, so that is every
    loop from the innermost one over such a dimension outwards)."""
    D = dims_i.shape[1]
    A = (axes_i.shape[1] - 1) // 2
    n_axes = axes_i[t, 0]
    if win == _WIN_NONE:
        if n_axes == 0:
            return w
        jr = last_slot_over(dims_i[t], nab, slot_dim)
        outer = 0.0
        for j in range(jr + 1):
            outer += ntr[j]
        return w + w * outer
    F = w
    for j in range(nab - 1, -1, -1):
        dj = slot_dim[j]
        stepj = slot_step[j]
        sh[dj] += stepj
        ov = 1.0
        same = True
        for k in range(n_axes):
            d1, d2 = axes_i[t, 1 + k], axes_i[t, 1 + A + k]
            if d2 == D:
                tr = 0 + axes_f[t, k] * sh[d1]
            else:
                tr = 0 + axes_f[t, k] * sh[d1] + axes_f[t, A + k] * sh[d2]
            if j == nab - 1:
                trm[k] = tr
            elif tr != trm[k]:
                same = False
            e = 1.0 if mac else ext[t, k, c]
            ov *= max(e - abs(tr), 0.0)
        moved = w - ov if (same or win == _WIN_ANY) else w
        F = F + ntr[j] * moved
        sh[dj] -= stepj + slot_span[j]
    for j in range(nab):
        sh[slot_dim[j]] = 0.0
    return F


def _rows_kernel(shape_L: int, shape_D: int, shape_A: int) -> Any:
    """:func:`evaluate_rows` compiled for ``shape_L`` levels, ``shape_D`` dimensions and
    ``shape_A`` axes per operand (all 0: for any shape, read from the arguments). The
    three are the closure's constants, so numba (LLVM) sees them at compile time: every
    scratch array has a constant shape and the loops over levels, dimensions and axes
    have constant trip counts, which LLVM unrolls and folds (``shape_L, shape_D,
    shape_A = 3, 7, 4``: 0.79-0.84 of the generic kernel's CPU time on the throughput
    benchmark's batches of 100,000, ``docs/benchmarks/evaluator_throughput.txt``, paths
    ``kernel`` and ``kernel/gen``).
    The code is the same; numba's cache keys a closure by its constants too, so each shape
    is compiled once and cached (:func:`shaped_rows`)."""

    @njit(cache=True, nogil=True, error_model="numpy")
    def evaluate_rows(T: Any, SX: Any, SY: Any, order: Any, keep: Any, axes_i: Any,
                      axes_f: Any, dims_i: Any, lv_i: Any, lv_f: Any, sc: Any, cv: Any, out_l: Any, out_s: Any,
                      valid: Any,
                      b: int, stationary: int, irr: Any, live: Any, alt: Any, alt_levels: Any, objective: int,
                      leak_rates: Any, best: Any, choice: Any) -> int:
        """Score every mapping of a batch (``T``, ``SX``, ``SY``, ``order`` int64 ``(B, L, D)``,
        ``keep`` bool ``(B, L, 3)``) into ``out_l`` ``(B, 12 L)`` (the per-level blocks of
        :func:`columns`, row by row: one row's figures are one run of memory) and ``out_s``
        ``(7, B)`` (the scalar fields, batch-last: each field contiguous), and
        ``valid`` ``(B,)``; ``cv`` the counting conventions (:func:`convention_codes`; the
        lower bound takes the relaxed ones of
        :func:`evaluators.loopnest.bounds_conventions.relaxed_conventions`, with a MAC's reads
        on change bounded by :func:`evaluators.loopnest.kernel_bounds.mac_change_fill`); the other arrays are a :class:`Packed`'s. ``live`` ``None``: the
        model's own counts; else the lower bound's fills (:func:`bound_fill`) with
        ``b = known - 1``, the ``stationary`` operands per level (two bits a level, level 0
        lowest: the operand + 1, 0 for none; :func:`evaluators.loopnest.bounds.stationary_code`),
        ``irr`` the ``(B, 3 L)`` per-level irrelevant-tile table (level-major, < 0: none at that
        level; ``(0, 3)``: none) and ``live`` ``(B, D)`` the dimensions the
        numpy model keeps in each row's block. ``live`` is ``None`` or not by type, so numba
        compiles the two modes apart and the scoring code carries no bound code.

        ``alt_levels`` (int64 ``(n,)``; empty, or ``None`` with ``alt``, ``best`` and
        ``choice`` ``None``: score each row's own orders, ``None`` compiling the scoring
        code without the order search) and ``alt``
        (``(K, D)`` candidate orders): score every combination of one candidate per listed
        level (the row's orders elsewhere) and keep, per row, the one of least ``objective``
        (0 energy, 1 latency, 2 EDP; the energy plus each level's ``leak_rates`` x latency,
        times its active instances under ``leakage="utilized_instances"``), its value
        in ``best`` and its index (mixed radix ``K``, the first level most significant) in
        ``choice``; ``out_l`` and ``out_s`` (then ``(0, 12 L)`` and ``(7, 0)``) are not written
        (:meth:`evaluators.loopnest.LoopNestCost.least_lower_bound`).

        Returns the number of mappings whose spatial factors at a systolic array's PE level
        exceed its rows or columns (the numpy model raises on those).

        Note: numba's ``inline="always"`` (:func:`bound_fill` and its helper,
        :func:`_level_slots`) shares local names between the inlined function and this one:
        a caller variable named like one of the callee's locals may hold the callee's value
        after the call (a loop index here named ``k`` did). Names live across an inlined
        call must not be used in the callees; the kernel-vs-numpy tests catch a clash."""
        B = T.shape[0]
        L = shape_L if shape_L > 0 else T.shape[1]    # compile-time constants when shaped
        D = shape_D if shape_D > 0 else T.shape[2]
        A = shape_A if shape_A > 0 else (axes_i.shape[1] - 1) // 2
        if T.shape[1] != L or T.shape[2] != D or axes_i.shape[1] != 1 + 2 * A:
            raise ValueError("evaluate_rows: the batch or the axes do not have the shape this kernel was compiled for")
        mac_e, n_macs, layer_macs = sc[0], sc[1], sc[2]
        fl, df, arr_rows, arr_cols = int(sc[3]), int(sc[4]), sc[5], sc[6]
        o_R, o_W, o_TW = 0, 3 * L, 6 * L
        o_noc, o_bw, o_le = 9 * L, 10 * L, 11 * L
        S = L * D
        Tf = np.empty((L, D))
        SPf = np.empty((L, D))
        E = np.empty((L, D))
        Eb = np.empty((L, D))
        inst = np.empty(L)
        PX = np.empty(L, dtype=np.int64)
        PY = np.empty(L, dtype=np.int64)
        prodS = np.empty((3, L))                           # spatial product of t's one-dim axes' dims
        slot_dim = np.empty(S + 1, dtype=np.int64)           # + 1: _level_slots' spare slot
        slot_step = np.empty(S + 1)
        slot_span = np.empty(S + 1)
        ntr = np.empty(S + 1)
        last_sgl = np.empty((3, S + 1), dtype=np.int64)      # per operand: last_slot_over(sgl[t], j + 1)
        cum_ntr = np.empty(S + 1)                            # sum of ntr[:j + 1]
        n_above = np.empty(L, dtype=np.int64)
        ext = np.empty((3, A, L))
        words = np.empty((3, L))
        par = np.empty((L, 3), dtype=np.int64)
        R = np.empty((L, 3))
        Wr = np.empty((L, 3))
        noc = np.empty(L)
        deliv = np.empty((3, L))
        dact = np.zeros((3, L), dtype=np.bool_)
        sh = np.zeros(D)
        Fc = np.empty(3)
        act = np.empty(3, dtype=np.bool_)
        # per operand: its one-dimension axes' dims (sgl), whether it has two-dimension axes
        sgl = np.empty((3, D), dtype=np.bool_)
        has_two = np.zeros(3, dtype=np.bool_)
        for t in range(3):
            for d in range(D):
                sgl[t, d] = dims_i[3 + t, d] != 0
            for k in range(axes_i[t, 0]):
                if axes_i[t, 1 + A + k] != D:
                    has_two[t] = True
        # per operand, the dimensions of its one-dimension axes
        sgl_d = np.zeros((3, D), dtype=np.int64)
        n_sgl = np.zeros(3, dtype=np.int64)
        for t in range(3):
            for d in range(D):
                if sgl[t, d]:
                    sgl_d[t, n_sgl[t]] = d
                    n_sgl[t] += 1
        # the output's dimensions
        o_rel = np.zeros(D, dtype=np.int64)
        n_orel = 0
        for d in range(D):
            if dims_i[2, d] != 0:
                o_rel[n_orel] = d
                n_orel += 1
        # per operand, its two-dimension axes (the only ones a loop inside js overlaps)
        two_k = np.zeros((3, max(A, 1)), dtype=np.int64)
        n_two = np.zeros(3, dtype=np.int64)
        for t in range(3):
            for k in range(axes_i[t, 0]):
                if axes_i[t, 1 + A + k] != D:
                    two_k[t, n_two[t]] = k
                    n_two[t] += 1
        # lower-bound mode: per row, the operands' live axes (dims -1 where none)
        n_ax = np.zeros(3, dtype=np.int64)
        ax_d = np.full((3, max(A, 1), 2), -1, dtype=np.int64)
        ax_cf = np.zeros((3, max(A, 1), 2))
        single_r = np.empty(3, dtype=np.bool_)
        bdim_r = np.zeros((3, D), dtype=np.bool_)
        bits = np.zeros(D, dtype=np.int64)
        steps = np.empty((L, D))
        slot_lvl = np.empty(S + 1, dtype=np.int64)
        has_irr = irr.shape[0] > 0
        ws = np.empty((9, max(L, D, A, 1)))              # bound_fill's scratch space
        span_ws = np.empty((L, D))
        idx_ws = np.empty(D, dtype=np.int64)
        bwl = np.empty(L)
        has_leak = False
        for li in range(leak_rates.shape[0]):
            if leak_rates[li] != 0:
                has_leak = True
        grp = np.empty((3, L))                          # per operand and level: distinct child tiles x parents
        uu = np.empty(L)                                # per level: the output's first touches
        lel = np.empty(L)
        if alt_levels is None:                          # scoring: numba prunes the order search
            n_alt = 0
            K = 1
        else:
            n_alt = alt_levels.shape[0]
            K = alt.shape[0]
        eff = np.empty((max(K, 1), D), dtype=np.int64)
        eff_ok = np.zeros((max(n_alt, 1), max(K, 1)), dtype=np.bool_)
        pre_alt = np.empty(max(n_alt, 1))
        digit = np.zeros(max(n_alt, 1), dtype=np.int64)
        bad_folds = 0
        win, mc_same, psum_all = cv[_WIN], cv[_MC] != 0, cv[_PSUM] != 0
        on_change, drain_parent, per_word = cv[_MACR] != 0, cv[_DRAIN] != 0, cv[_FIRST] != 0
        utilized_leak = cv[_LEAK] != 0
        trm = np.empty(max(A, 1))
        for row in range(B):
            # ---- extents e_d(l) and e_d(l - 1), spatial products, active instances
            for li in range(L):
                px = 1
                py = 1
                for d in range(D):
                    x_ = SX[row, li, d]
                    y_ = SY[row, li, d]
                    px *= x_
                    py *= y_
                    t_ = float(T[row, li, d])
                    sp = float(x_ * y_)
                    below = 1.0 if li == 0 else E[li - 1, d]
                    Tf[li, d] = t_
                    SPf[li, d] = sp
                    Eb[li, d] = below
                    E[li, d] = below * (t_ * sp)
                for t in range(3):
                    ps = 1.0
                    for k in range(n_sgl[t]):
                        ps *= SPf[li, sgl_d[t, k]]
                    prodS[t, li] = ps
                PX[li] = px
                PY[li] = py
            # the output's first touches per level c1 - 1 (U of the reduction rule): per output
            # dimension, its extent at c1 - 1 (1 at the MACs) times the temporal factors at and
            # above c1 (integers: the order of the products does not change them)
            for li in range(L):
                uu[li] = 1.0
            for k in range(n_orel):
                d = o_rel[k]
                tab = 1.0
                for li in range(L - 1, -1, -1):
                    tab = tab * Tf[li, d]
                    uu[li] = uu[li] * ((E[li - 1, d] if li > 0 else 1.0) * tab)
            inst[L - 1] = 1.0
            for li in range(L - 1, 0, -1):
                inst[li - 1] = inst[li] * float(PX[li] * PY[li])
            inst_mac = inst[0] * float(PX[0] * PY[0])
            # ---- the temporal loops that move (factor > 1), outermost first; n_above[l]:
            # how many are above level l
            ns = 0
            prefix = 1.0
            for li in range(L - 1, -1, -1):
                n_above[li] = ns
                ns, prefix = _level_slots(li, order[row, li], ns, prefix, Tf, Eb, SPf, slot_dim, slot_lvl, slot_step,
                                          slot_span, ntr)
            iters = prefix
            # ---- tiles: axis extents and words of every operand at every level
            for t in range(3):
                for li in range(L):
                    w = 1.0
                    for k in range(axes_i[t, 0]):
                        d1, d2 = axes_i[t, 1 + k], axes_i[t, 1 + A + k]
                        if d2 == D:
                            e = 1 + axes_f[t, k] * (E[li, d1] - 1)
                        else:
                            e = 1 + (axes_f[t, k] * (E[li, d1] - 1) + axes_f[t, A + k] * (E[li, d2] - 1))
                        ext[t, k, li] = e
                        w = w * e
                    words[t, li] = w
            if live is not None:
                for t in range(3):
                    n_ax[t] = 0
                    single_r[t] = True
                    for d in range(D):
                        bdim_r[t, d] = False
                    for k in range(axes_i[t, 0]):
                        m = 0
                        for which in range(2):
                            d = axes_i[t, 1 + which * A + k]
                            if d < D and live[row, d]:
                                ax_d[t, n_ax[t], m] = d
                                ax_cf[t, n_ax[t], m] = axes_f[t, which * A + k]
                                m += 1
                        if m == 0:
                            continue
                        if m == 1:
                            ax_d[t, n_ax[t], 1] = -1
                            bdim_r[t, ax_d[t, n_ax[t], 0]] = True
                        else:
                            single_r[t] = False
                        n_ax[t] += 1
                for d in range(D):
                    bits[d] = 0
                    for t in range(3):
                        if dims_i[t, d] == 0:
                            bits[d] += 1 << t
                    for li in range(L):
                        steps[li, d] = Eb[li, d] * SPf[li, d]
            # ---- parents: the next level above c that keeps the operand (c + 1 if none),
            # at par[c + 1]
            for t in range(3):
                nxt = -1
                for lo in range(L - 1, -1, -1):
                    if keep[row, lo, t]:
                        nxt = lo
                    par[lo, t] = nxt if nxt >= 0 else lo
            # ---- compute cycles (systolic: folds x SCALE-Sim's cycles per fold)
            compute = iters
            if df != _DF_NONE:
                rows_used = float(PY[fl])
                cols_used = float(PX[fl])
                stream = 1.0
                for li in range(fl):
                    for d in range(D):
                        stream *= Tf[li, d]
                if rows_used > arr_rows or cols_used > arr_cols:
                    bad_folds += 1
                folds = np.round(iters / stream)
                if df == _DF_OS:
                    per_fold = stream + (arr_rows + arr_cols - 2)
                else:
                    per_fold = 2 * arr_rows + arr_cols + stream - 2
                compute = folds * per_fold
            # ---- the loop orders scored: the row's own, or each combination of one candidate
            # order ``alt[k]`` per level of ``alt_levels`` (the first level's candidate the
            # most significant digit of the combination's index), keeping the one of least
            # objective; every figure above is order-independent. A candidate that moves a
            # level's loops of factor > 1 in the same order as an earlier one scores the same
            # at that level: combinations with it are skipped.
            n_opt = 1
            if alt_levels is not None:
                for a in range(n_alt):
                    lvl_a = alt_levels[a]
                    pre_alt[a] = 1.0                            # the factors above the level
                    for li in range(L - 1, lvl_a, -1):
                        for d in range(D):
                            pre_alt[a] *= Tf[li, d]
                    for ko in range(K):
                        m = 0
                        for r in range(D):
                            if Tf[lvl_a, alt[ko, r]] > 1:
                                eff[ko, m] = alt[ko, r]
                                m += 1
                        dup = False
                        for q in range(ko):
                            if not dup and eff_ok[a, q]:
                                same = True
                                for r in range(m):
                                    if eff[q, r] != eff[ko, r]:
                                        same = False
                                dup = same
                        eff_ok[a, ko] = not dup
                    n_opt *= K
            best_v = np.inf
            best_k = 0
            energy_best = 0.0
            latency_best = 0.0
            cached = False
            for ko in range(n_opt):
                if alt_levels is None:
                    pass
                elif n_alt > 0:
                    rest = ko
                    skip = False
                    for a in range(n_alt - 1, -1, -1):
                        digit[a] = rest % K
                        rest //= K
                        if not eff_ok[a, digit[a]]:
                            skip = True
                    if skip:
                        continue
                    for a in range(n_alt):
                        _level_slots(alt_levels[a], alt[digit[a]], n_above[alt_levels[a]], pre_alt[a], Tf, Eb, SPf,
                                     slot_dim, slot_lvl, slot_step, slot_span, ntr)
                # per operand, the innermost slot (among the first j + 1) over one of its
                # one-dimension axes' dimensions, and the running sum of the n_trans: the fill
                # rule's js and outer sum at every level, in one pass
                run = 0.0
                lw0, lw1, lw2 = -1, -1, -1
                for j in range(ns):
                    dj = slot_dim[j]
                    run += ntr[j]
                    cum_ntr[j] = run
                    lw0 = j if sgl[0, dj] else lw0
                    lw1 = j if sgl[1, dj] else lw1
                    lw2 = j if sgl[2, dj] else lw2
                    last_sgl[0, j] = lw0
                    last_sgl[1, j] = lw1
                    last_sgl[2, j] = lw2
                for li in range(L):
                    noc[li] = 0.0
                    for t in range(3):
                        R[li, t] = 0.0
                        Wr[li, t] = 0.0
                        if live is not None:
                            dact[t, li] = False
                # ---- fills, parents' reads, multicast, reductions: level c = c1 - 1 from -1
                # (the MACs) to L - 2
                for c1 in range(L):
                    c = c1 - 1
                    if c1 == 0:
                        for t in range(3):
                            act[t] = True
                            Fc[t] = iters                      # a MAC stores nothing
                            if on_change and t != 2:
                                # behind a fanout, the operand held at the MAC's input (a
                                # one-word tile) is read when it changes
                                p = par[0, t]
                                behind = False
                                for q in range(p + 1):
                                    if lv_i[q, _FAN] != 0:
                                        behind = True
                                if behind and live is not None:
                                    # lower bound: the distinct words one MAC instance uses
                                    Fc[t] = mac_change_fill(n_ax[t], ax_d[t], ax_cf[t], Tf, SPf)
                                elif behind and win == _WIN_NONE:
                                    Fc[t] = _convention_fill(t, 1.0, 0, True, ns, win, axes_i, axes_f, ext, dims_i,
                                                             slot_dim, slot_step, slot_span, ntr, sh, trm)
                                elif behind:
                                    # the fill rule below with a one-word tile (every axis of
                                    # extent 1) under all ns loops: from the innermost loop over
                                    # a one-dimension axis outwards every step changes the word;
                                    # inside it only the two-dimension axes can leave it in place
                                    jm = last_sgl[t, ns - 1] if ns > 0 else -1
                                    Fm = 1.0 + (cum_ntr[jm] if jm >= 0 else 0.0)
                                    if has_two[t] and jm < ns - 1:
                                        accm = 0.0
                                        for j in range(ns - 1, jm, -1):
                                            dj = slot_dim[j]
                                            stepj = slot_step[j]
                                            sh[dj] += stepj
                                            ovm = 1.0
                                            samem = True
                                            for k2 in range(n_two[t]):
                                                k = two_k[t, k2]
                                                d1, d2 = axes_i[t, 1 + k], axes_i[t, 1 + A + k]
                                                tr = 0 + axes_f[t, k] * sh[d1] + axes_f[t, A + k] * sh[d2]
                                                if win == _WIN_INNERMOST:
                                                    if j == ns - 1:
                                                        trm[k2] = tr
                                                    elif tr != trm[k2]:
                                                        samem = False
                                                ovm *= max(1.0 - abs(tr), 0.0)
                                            accm = ((1.0 - ovm) if samem else 1.0) * ntr[j] + accm
                                            sh[dj] -= stepj + slot_span[j]
                                        for j in range(jm + 1, ns):
                                            sh[slot_dim[j]] = 0.0
                                        Fm = Fm + accm
                                    Fc[t] = Fm
                        inst_c = inst_mac
                    else:
                        n_act = 0
                        for t in range(3):
                            act[t] = lv_i[c, _HOLDS + t] != 0 and keep[row, c, t]
                            n_act += 1 if act[t] else 0
                        if n_act == 0:
                            continue
                        inst_c = inst[c]
                        nab = n_above[c]
                        for t in range(3):
                            if not act[t]:
                                continue
                            # F = w + sum_j n_trans_j (w - overlap_j) over the loops j above c.
                            # The offset of a dimension shifts by at least its extent at c when
                            # it moves (a loop of it, or one inside j wrapping): a one-dimension
                            # axis then shares nothing with the old tile. So from the innermost
                            # loop js that moves one of them outwards, overlap_j = 0; inside js
                            # only two-dimension (sliding) axes can overlap partially.
                            w = words[t, c]
                            # the bound uses the model's fill only for a single-dimension
                            # operand whose tile is known (bound_fill): skip it otherwise
                            F = 0.0
                            if win == _WIN_NONE:                   # (never in bound mode)
                                F = _convention_fill(t, w, c, False, nab, win, axes_i, axes_f, ext, dims_i, slot_dim,
                                                     slot_step, slot_span, ntr, sh, trm)
                            elif live is None or (c >= b and single_r[t]):
                                js = last_sgl[t, nab - 1] if nab > 0 else -1
                                outer = cum_ntr[js] if js >= 0 else 0.0
                                F = w + w * outer
                                if has_two[t] and js < nab - 1:
                                    # loops inside js: the one-dimension axes keep their extent
                                    # (their product, ov1); sh[d]: minus the span of d's loops
                                    # inside j (they wrap to 0), plus step_j while j itself is d's.
                                    # Every factor is an integer, so the order of the products
                                    # does not change them.
                                    ov1 = 1.0
                                    for k in range(axes_i[t, 0]):
                                        if axes_i[t, 1 + A + k] == D:
                                            ov1 *= ext[t, k, c]
                                    # Timeloop's window rule (innermost): a loop keeps the overlap
                                    # only if it translates the tile as the innermost moving loop
                                    # above c (slot nab - 1) does; the one-dimension axes do not
                                    # move inside js, and from js outwards nothing overlaps, so
                                    # only the two-dimension axes' translations are compared
                                    acc = 0.0
                                    for j in range(nab - 1, js, -1):
                                        dj = slot_dim[j]
                                        stepj = slot_step[j]
                                        sh[dj] += stepj
                                        ov = ov1
                                        same = True
                                        for k2 in range(n_two[t]):
                                            k = two_k[t, k2]
                                            d1, d2 = axes_i[t, 1 + k], axes_i[t, 1 + A + k]
                                            tr = 0 + axes_f[t, k] * sh[d1] + axes_f[t, A + k] * sh[d2]
                                            if win == _WIN_INNERMOST:
                                                if j == nab - 1:
                                                    trm[k2] = tr
                                                elif tr != trm[k2]:
                                                    same = False
                                            o = ext[t, k, c] - abs(tr)
                                            ov *= max(o, 0.0)
                                        acc = ((w - ov) if same else w) * ntr[j] + acc
                                        sh[dj] -= stepj + slot_span[j]
                                    for j in range(js + 1, nab):
                                        sh[slot_dim[j]] = 0.0
                                    F = F + acc
                            if live is not None:
                                F = bound_fill(t, c, b, F, w, single_r[t], bdim_r[t], n_ax[t], ax_d[t], ax_cf[t], bits,
                                               n_above, slot_dim, slot_lvl, ntr, Tf, SPf, E, steps, lv_f[c, _CAP + t],
                                               ((stationary >> (2 * c)) & 3) - 1,
                                               irr[row, 3 * c + t] if has_irr else -1.0, ws, span_ws, idx_ws)
                            Fc[t] = F
                    for t in range(3):
                        if not act[t]:
                            continue
                        F = Fc[t]
                        p = par[c1, t]
                        # distinct child tiles among one parent's children (spatial loops of
                        # levels c < q <= p): the product of the one-dimension axes' spatial
                        # factors; per two-dimension axis, the two-progression count
                        # (order-independent: computed for a row's first order, then reused)
                        if cached:
                            groups = grp[t, c1]
                        elif mc_same:
                            # only children that differ in dimensions irrelevant to the operand
                            nd = 1.0
                            for d in range(D):
                                if dims_i[t, d] != 0:
                                    m_d = SPf[c1, d]
                                    for q in range(c1 + 1, p + 1):
                                        m_d *= SPf[q, d]
                                    nd = nd * m_d
                            groups = nd * inst[p]
                            grp[t, c1] = groups
                        else:
                            nd = prodS[t, c1]
                            for q in range(c1 + 1, p + 1):
                                nd = nd * prodS[t, q]
                            if has_two[t]:
                                for k in range(axes_i[t, 0]):
                                    d1, d2 = axes_i[t, 1 + k], axes_i[t, 1 + A + k]
                                    if d2 == D:
                                        continue
                                    m1 = SPf[c1, d1]
                                    m2 = SPf[c1, d2]
                                    for q in range(c1 + 1, p + 1):
                                        m1 *= SPf[q, d1]
                                        m2 *= SPf[q, d2]
                                    if m1 > 1 and m2 > 1:
                                        nd = nd * _two_axis(c, p, row, d1, d2, axes_f[t, k], axes_f[t, A + k],
                                                            m1, m2, SX, SY, SPf, Eb,
                                                            b + 1 if live is not None else 0)
                                    else:
                                        nd = nd * m1 * m2
                            groups = nd * inst[p]
                            grp[t, c1] = groups
                        child_total = F * inst_c
                        if t == 2:
                            # words already holding a partial sum are fetched back; U counts the
                            # first touches (per output dimension, the extent at c times the
                            # temporal factors above c)
                            U = uu[c1]
                            refill = (F - U) * groups
                            # old partial sums to one child per group, or (Timeloop) to all
                            to_child = (F - U) * inst_c if psum_all else refill
                            if c1 == 0 and per_word:
                                # every MAC group's accumulation reads but the first into each word
                                refill = F * groups - words[2, L - 1]
                                to_child = refill * inst_c / groups if psum_all else refill
                            Wr[p, 2] += F * groups
                            R[p, 2] += refill
                            if c1 > 0:
                                if not drain_parent:
                                    R[c, 2] += child_total         # evictions
                                Wr[c, 2] += to_child
                            deliveries = child_total + to_child
                        else:
                            R[p, t] += F * (groups if lv_i[c1, 7 + p] != 0 else inst_c)
                            if c1 > 0:
                                Wr[c, t] += child_total
                            deliveries = child_total
                        if live is None:
                            for q in range(c1, p + 1):
                                if lv_i[q, _FAN] != 0:
                                    noc[q] += deliveries
                        else:
                            deliv[t, c1] = deliveries
                            dact[t, c1] = True
                cached = True
                # ---- lower bound: NoC deliveries summed operand by operand as the numpy model
                # does (the bound's fills need not be integers, so the order of the sums matters;
                # the model's own counts are integers, summed above as they come)
                for t in range(3 if live is not None else 0):
                    for c1 in range(L):
                        if dact[t, c1]:
                            for q in range(c1, par[c1, t] + 1):
                                if lv_i[q, _FAN] != 0:
                                    noc[q] += deliv[t, c1]
                # ---- energy, bandwidth cycles (sums in the numpy model's order)
                energy = 0.0
                bw_max = 0.0
                for li in range(L):
                    r0, r1, r2 = R[li, 0], R[li, 1], R[li, 2]
                    w0, w1, w2 = Wr[li, 0], Wr[li, 1], Wr[li, 2]
                    le = (((r0 * lv_f[li, _ER] + w0 * lv_f[li, _EW]) + (r1 * lv_f[li, _ER + 1] + w1 * lv_f[li, _EW + 1]))
                          + (r2 * lv_f[li, _ER + 2] + w2 * lv_f[li, _EW + 2])) + noc[li] * lv_f[li, _ENOC]
                    energy = le if li == 0 else energy + le
                    # evaluators.loopnest.bandwidth: the largest of the shared, read and write
                    # terms (an unlimited one is x / inf = 0), sums in the numpy model's order
                    n_act = max(inst[li], 1.0)
                    bw = (((r0 + w0) + (r1 + w1)) + (r2 + w2)) / n_act / lv_f[li, _BW]
                    bw = max(bw, ((r0 + r1) + r2) / n_act / lv_f[li, _BWR])
                    bw = max(bw, ((w0 + w1) + w2) / n_act / lv_f[li, _BWW])
                    if li == 0 or bw > bw_max:
                        bw_max = bw
                    bwl[li] = bw
                    lel[li] = le
                macs_exec = iters * inst_mac
                energy = energy + macs_exec * mac_e
                latency = max(compute, bw_max)
                total = energy
                if has_leak:                               # as evaluators.loopnest.energy.add_leakage sums it
                    static = 0.0
                    for li in range(L):
                        # leakage on the utilized instances: one instance's rate x the active ones
                        rate = leak_rates[li] * inst[li] if utilized_leak else leak_rates[li]
                        static = rate * latency if li == 0 else static + rate * latency
                    total = energy + static
                v = total if objective == 0 else (latency if objective == 1 else total * latency)
                if ko > 0 and not v < best_v:
                    continue
                best_v = v
                best_k = ko
                energy_best = energy
                latency_best = latency
                for li in range(L if n_alt == 0 else 0):       # least mode returns the value only
                    out_l[row, o_R + 3 * li] = R[li, 0]
                    out_l[row, o_R + 3 * li + 1] = R[li, 1]
                    out_l[row, o_R + 3 * li + 2] = R[li, 2]
                    out_l[row, o_W + 3 * li] = Wr[li, 0]
                    out_l[row, o_W + 3 * li + 1] = Wr[li, 1]
                    out_l[row, o_W + 3 * li + 2] = Wr[li, 2]
                    out_l[row, o_TW + 3 * li] = words[0, li]
                    out_l[row, o_TW + 3 * li + 1] = words[1, li]
                    out_l[row, o_TW + 3 * li + 2] = words[2, li]
                    out_l[row, o_noc + li] = noc[li]
                    out_l[row, o_bw + li] = bwl[li]
                    out_l[row, o_le + li] = lel[li]
            if alt_levels is None:
                pass
            elif n_alt > 0:
                choice[row] = best_k
                best[row] = best_v
            energy = energy_best
            latency = latency_best
            macs_exec = iters * inst_mac
            # ---- validity: coverage, fanouts, capacities
            ok = True
            for d in range(D):
                if E[L - 1, d] < dims_i[6, d]:
                    ok = False
            for li in range(L):
                if PX[li] > lv_i[li, _FX] or PY[li] > lv_i[li, _FY]:
                    ok = False
                tot = 0.0
                for t in range(3):
                    held = words[t, li] if keep[row, li, t] else 0.0
                    tot = tot + held
                    if held > lv_f[li, _CAP + t]:
                        ok = False
                if tot > lv_f[li, _CAPSH]:
                    ok = False
            valid[row] = ok
            if n_alt > 0:
                continue
            out_s[0, row] = energy
            out_s[1, row] = latency
            out_s[2, row] = compute
            out_s[3, row] = energy * latency
            out_s[4, row] = layer_macs / (compute * n_macs)
            out_s[5, row] = macs_exec
            out_s[6, row] = macs_exec * mac_e
        return bad_folds
    return evaluate_rows


evaluate_rows = _rows_kernel(0, 0, 0)
_shaped: dict[tuple[int, int, int], Any] = {}
_shaped_lock = threading.Lock()


def shaped_rows(L: int, D: int, A: int) -> Any:
    """:func:`evaluate_rows` compiled for ``L`` levels, ``D`` dimensions and ``A`` axes per
    operand (:func:`_rows_kernel`), made on the first request for the shape and kept.
    Its first call compiles it (or loads it from numba's cache); it raises
    ``ValueError`` on arrays of another shape."""
    for name, v in (("L", L), ("D", D), ("A", A)):
        if int(v) != v or v < 1:
            raise ValueError(f"shaped_rows: {name}={v!r} is not a positive integer")
    key = (int(L), int(D), int(A))
    with _shaped_lock:
        fn = _shaped.get(key)
        if fn is None:
            fn = _shaped[key] = _rows_kernel(*key)
    return fn
