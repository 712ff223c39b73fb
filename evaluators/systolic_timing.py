"""Compute cycles of a systolic array, as SCALE-Sim v3 (``scalesim==3.0.0``) counts them.

The model is a closed form of what SCALE-Sim's compute classes build row by row
(``scalesim/compute/systolic_compute_{os,ws,is}.py``); it agrees with SCALE-Sim's
compute-cycle count exactly (``experiments/validation/scalesim_compare.py`` checks it on
ResNet-50 layers, ``tests/evaluators/test_scalesim_agreement.py`` in CI when
``.venv-scalesim`` exists).

**Operand matrices.** A layer is a GEMM ``O[M, Nf] = I[M, Kr] @ W[Kr, Nf]``
(``scalesim/compute/operand_matrix.py``: the im2col ifmap matrix is
``ofmap pixels x conv window``, the filter matrix ``conv window x filters``):

* convolution: ``M = N*P*Q`` output pixels (batch included), ``Kr = C*R*S`` the
  convolution window (per group), ``Nf = K`` filters (per group);
* GEMM ``C[M, N] = A[M, K] @ B[K, N]``: ``M = M``, ``Kr = K``, ``Nf = N`` (SCALE-Sim's GEMM
  mode, ``topology_utils.load_arrays_gemm``, turns ``M, N, K`` into an ``M x K`` ifmap
  with one ``1 x K`` filter per output column: the same three sizes).

Each dataflow pins one of ``M``, ``Kr``, ``Nf`` to time and spreads the other two over the
rows and columns of the array (``topology_utils.calc_spatio_temporal_params`` and the
``set_params`` of each compute class), giving ``(Sr, Sc, T)``:

======  ==========  ==========  ==========
 flow    Sr (rows)   Sc (cols)   T (time)
======  ==========  ==========  ==========
 OS      M           Nf          Kr
 WS      Kr          Nf          M
 IS      Kr          M           Nf
======  ==========  ==========  ==========

**Folding.** An ``Sr x Sc`` operand larger than the ``rows x cols`` array runs in
``ceil(Sr/rows) * ceil(Sc/cols)`` folds, one after another (``T`` is never folded). Edge
folds that occupy fewer rows or columns are padded with null requests to the full array
(``delta > 0`` branches), so *every fold costs the same*.

**Cycles of one fold** (the number of rows of that fold's demand matrices):

* OS: ``T + rows + cols - 2`` -- ``T`` operand rows, an ``cols - 1`` row drain suffix,
  and ``skew_matrix`` adds ``rows - 1`` (``systolic_compute_os.create_ifmap_demand_mat``);
* WS and IS: ``2*rows + cols + T - 2`` -- a ``rows`` row prefix to load the stationary
  operand, ``T`` streaming rows, a ``cols - 1`` drain suffix, and ``rows - 1`` of skew
  (``systolic_compute_ws.create_ifmap_demand_mat``, ``systolic_compute_is
  .create_filter_demand_mat``; the other operand's and the ofmap's demand matrices have the
  same number of rows).

Fill and drain are charged on every fold and folds never overlap (each fold's demand
block is concatenated after the previous one). The layer's compute cycles are
``reps * ceil(Sr/rows) * ceil(Sc/cols) * fold_cycles``.

**Conventions, and how they differ from SCALE-Sim's own.**

* SCALE-Sim's COMPUTE_REPORT ``Total Cycles`` is ``int(max(ofmap_serviced_cycles))``
  (``memory/double_buffered_scratchpad_mem.service_memory_requests``): the 0-based index of
  the cycle that serves the last demand row, plus memory stalls. With no stalls it is one
  less than the number of cycles computed here; ``Stall Cycles`` are reported separately.
  So ``ours == Total Cycles - Stall Cycles + 1`` exactly (a 1-cycle difference on counts of
  hundreds to millions, i.e. at most 1/count relative). Stalls are not modelled here: in
  SCALE-Sim's default ``InterfaceBandwidth = CALC`` mode the read buffers
  (``memory/read_buffer_estimate_bw.ReadBufferEstimateBw.service_reads``) never stall
  and the ofmap write buffer drains ``cols`` words per cycle, as fast as the array can
  write; only a write buffer too small for that can stall, and it did on none of the
  ResNet-50 runs checked.
* Padding and output size: SCALE-Sim's topology CSV takes the *padded* ifmap height and
  width (no padding field) and one stride, and computes
  ``ofmap = ceil((H_in - R + stride) / stride)`` (``topology_utils.topo_calc_hyperparams``)
  -- a ceiling where PyTorch (:func:`mappers.workloads.conv_output_size`) floors. Given
  ``H_in = H + 2*pad`` it counts one output row/column more whenever ``stride`` does not
  divide ``H + 2*pad - R``: ResNet-50's conv1 (230 padded, 7x7/2) becomes 113x113 instead
  of 112x112 (+1.8 % output pixels), a 3x3/2 on 58 padded 29x29 instead of 28x28 (+7 %);
  the extra windows hang over the edge and read nothing (address -1) but take cycles. A
  :class:`Layer` carries its true output size ``P x Q`` and the model uses it, so to
  describe a layer to SCALE-Sim give it the input extent the windows read,
  ``(P - 1)*stride + R`` (``layer.tensor("I").extent``), for which the two formulas agree
  (``experiments.validation.scalesim_compare`` does; ``--raw-padding`` shows the other
  choice). SCALE-Sim has no dilation; dilation changes addresses, not operand sizes, so it
  does not change cycles here.
* Batch ``N``: SCALE-Sim 3.0.0 fixes ``batch_size = 1`` in ``operand_matrix.set_params``;
  its (disabled) batching stacks the batch into the ifmap matrix rows, which is what
  ``M = N*P*Q`` does.
* Groups ``G`` (grouped and depthwise convolution) and the batch ``B`` of a batched matmul
  are independent repetitions: ``reps = G`` or ``B`` identical sub-problems run one after
  another, each of the per-group / per-matrix size. SCALE-Sim runs a depthwise layer (a
  topology row whose name contains ``DP``) the same way, as ``C`` single-channel layers
  one after another (``topology_utils.load_arrays_conv``).
* ``Layer.repeat`` (identical layers in a network) is not applied: like ``Layer.macs``,
  the cycles are those of one instance.

:func:`utilization` is ``MACs / (cycles * rows * cols)``, SCALE-Sim's "Overall Util" with
our cycle count (SCALE-Sim divides by its reported, one smaller, total);
:func:`mapping_efficiency` is the mean over folds of the occupied fraction of the array,
SCALE-Sim's "Mapping Efficiency" (equal for all three dataflows).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mappers.workloads import Layer

DATAFLOWS = ("os", "ws", "is")

__all__ = [
    "DATAFLOWS",
    "fold_counts",
    "fold_cycles",
    "gemm_view",
    "mapping_efficiency",
    "operand_shape",
    "repetitions",
    "systolic_compute_cycles",
    "utilization",
]


def _dataflow(dataflow: str) -> str:
    df = str(dataflow).lower()
    if df not in DATAFLOWS:
        raise ValueError(f"unknown dataflow {dataflow!r}; expected one of {DATAFLOWS} (any case)")
    return df


def gemm_view(layer: Layer) -> tuple[int, int, int, int]:
    """``(reps, M, Nf, Kr)``: the layer as ``reps`` independent GEMMs ``[M, Kr] @ [Kr, Nf]``.

    Convolution (``conv``/``depthwise``): ``reps = G``, ``M = N*P*Q``, ``Nf = K``,
    ``Kr = C*R*S`` (``K``, ``C`` per group). GEMM/batched matmul: ``reps = B``, ``M``,
    ``Nf = N``, ``Kr = K``.
    """
    d = layer.dims
    if layer.kind in ("conv", "depthwise"):
        return (d.get("G", 1), d["N"] * d["P"] * d["Q"], d["K"], d["C"] * d["R"] * d["S"])
    if layer.kind in ("gemm", "bmm"):
        return (d.get("B", 1), d["M"], d["N"], d["K"])
    raise ValueError(f"layer {layer.name!r}: no systolic mapping for kind {layer.kind!r}")


def repetitions(layer: Layer) -> int:
    """Independent sub-problems run one after another: groups ``G`` or matmul batch ``B``."""
    return gemm_view(layer)[0]


def operand_shape(layer: Layer, dataflow: str) -> tuple[int, int, int]:
    """SCALE-Sim's ``(Sr, Sc, T)``: spatial rows, spatial columns and temporal size.

    For one repetition (one group of a grouped convolution, one matrix of a batched
    matmul); see :func:`repetitions`. OS ``(M, Nf, Kr)``, WS ``(Kr, Nf, M)``, IS
    ``(Kr, M, Nf)`` with ``M, Nf, Kr`` from :func:`gemm_view`.
    """
    _, m, nf, kr = gemm_view(layer)
    df = _dataflow(dataflow)
    if df == "os":
        return (m, nf, kr)
    if df == "ws":
        return (kr, nf, m)
    return (kr, m, nf)


def _positive_int_array(name: str, value: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.floor(arr))):
        raise ValueError(f"{name} must be integer-valued, got {value!r}")
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        raise ValueError(f"{name} must be >= 1, got {value!r}")
    return arr


def _ret(arr: np.ndarray) -> Any:
    return int(arr) if arr.ndim == 0 else arr


def fold_cycles(rows_used: Any, cols_used: Any, t: Any, dataflow: str, rows: Any, cols: Any) -> Any:
    """Cycles of one fold that occupies ``rows_used x cols_used`` of a ``rows x cols`` array.

    OS: ``t + rows + cols - 2``; WS/IS: ``2*rows + cols + t - 2``. SCALE-Sim pads an edge
    fold's unused rows and columns with null requests, so ``rows_used``/``cols_used``
    (checked to lie in ``[1, rows]``/``[1, cols]``) do not change the count: fill, skew and
    drain always span the whole array. Vectorized: all numeric arguments broadcast (numpy
    arrays or scalars); returns an ``int`` for all-scalar input, else an int64 array.
    """
    df = _dataflow(dataflow)
    ru = _positive_int_array("rows_used", rows_used)
    cu = _positive_int_array("cols_used", cols_used)
    tt = _positive_int_array("t", t)
    r = _positive_int_array("rows", rows)
    c = _positive_int_array("cols", cols)
    if np.any(ru > r) or np.any(cu > c):
        raise ValueError("a fold cannot use more rows/cols than the array has")
    if df == "os":
        cycles = tt + r + c - 2
    else:
        cycles = 2 * r + c + tt - 2
    # broadcast the used sizes in too, so the output shape covers every argument
    cycles = cycles + 0 * ru + 0 * cu
    return _ret(cycles)


def fold_counts(layer: Layer, rows: Any, cols: Any, dataflow: str) -> tuple[Any, Any]:
    """``(ceil(Sr/rows), ceil(Sc/cols))``: row and column folds of one repetition."""
    sr, sc, _ = operand_shape(layer, dataflow)
    r = _positive_int_array("rows", rows)
    c = _positive_int_array("cols", cols)
    return _ret(-(-sr // r)), _ret(-(-sc // c))


def systolic_compute_cycles(layer: Layer, rows: Any, cols: Any, dataflow: str) -> Any:
    """Compute cycles of one instance of ``layer`` on a ``rows x cols`` array.

    ``reps * ceil(Sr/rows) * ceil(Sc/cols) * fold_cycles`` -- SCALE-Sim's count of cycles
    (its reported ``Total Cycles`` is this minus one, see the module docstring). ``rows``
    and ``cols`` may be numpy arrays (a sweep over array shapes): the result is then an
    int64 array of their broadcast shape, else an ``int``.
    """
    sr, sc, t = operand_shape(layer, dataflow)
    r = _positive_int_array("rows", rows)
    c = _positive_int_array("cols", cols)
    fr, fc = -(-sr // r), -(-sc // c)
    per_fold = np.asarray(fold_cycles(np.minimum(sr, r), np.minimum(sc, c), t, dataflow, r, c))
    return _ret(repetitions(layer) * fr * fc * per_fold)


def utilization(layer: Layer, rows: Any, cols: Any, dataflow: str) -> Any:
    """Fraction of PE-cycles doing a MAC: ``MACs / (cycles * rows * cols)``, in ``(0, 1]``."""
    cycles = np.asarray(systolic_compute_cycles(layer, rows, cols, dataflow), dtype=np.float64)
    r = _positive_int_array("rows", rows)
    c = _positive_int_array("cols", cols)
    u = layer.macs / (cycles * r * c)
    return float(u) if u.ndim == 0 else u


def mapping_efficiency(layer: Layer, rows: Any, cols: Any, dataflow: str) -> Any:
    """Mean over folds of the occupied fraction of the array (SCALE-Sim's mapping efficiency).

    Every ``(row, col)`` of the ``Sr x Sc`` operand lands in exactly one fold, so the mean is
    ``Sr * Sc / (folds * rows * cols)``.
    """
    sr, sc, _ = operand_shape(layer, dataflow)
    r = _positive_int_array("rows", rows)
    c = _positive_int_array("cols", cols)
    folds = (-(-sr // r)) * (-(-sc // c))
    e = (sr * sc) / (folds * r * c).astype(np.float64)
    return float(e) if np.ndim(e) == 0 else e
