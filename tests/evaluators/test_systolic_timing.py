"""The systolic-array cycle model (evaluators.systolic_timing), checked by hand and by properties.

The formulas come from SCALE-Sim 3.0.0's compute classes (see the module docstring of
evaluators.systolic_timing). One fold of a ``rows x cols`` array lasts as many cycles as its
demand matrices have rows:

* OS (``systolic_compute_os.create_ifmap_demand_mat``): ``T`` rows of operands, a
  ``cols - 1`` row drain suffix, then ``skew_matrix`` adds ``rows - 1``:
  ``T + rows + cols - 2``;
* WS / IS (``systolic_compute_ws.create_ifmap_demand_mat``,
  ``systolic_compute_is.create_filter_demand_mat``): a ``rows`` row prefix that loads the
  stationary operand, ``T`` rows, a ``cols - 1`` suffix, ``rows - 1`` of skew:
  ``2*rows + cols + T - 2``;

and a layer runs ``ceil(Sr/rows) * ceil(Sc/cols)`` such folds back to back, edge folds
padded to the full array.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.systolic_timing import (
    DATAFLOWS,
    fold_counts,
    fold_cycles,
    gemm_view,
    mapping_efficiency,
    operand_shape,
    repetitions,
    systolic_compute_cycles,
    utilization,
)
from mappers.workloads import conv2d, conv2d_from_input, gemm

# --- hand-computed cases ------------------------------------------------------------------


def test_gemm_on_2x2_array_by_hand():
    # C[3, 5] = A[3, 4] @ B[4, 5]: M = 3, N = 5, K = 4, on a 2 x 2 array.
    layer = gemm("g", M=3, N=5, K=4)
    # OS: Sr = M = 3, Sc = N = 5, T = K = 4.
    #   folds = ceil(3/2) * ceil(5/2) = 2 * 3 = 6; one fold = T + rows + cols - 2 = 4 + 2 + 2 - 2 = 6
    assert operand_shape(layer, "os") == (3, 5, 4)
    assert fold_counts(layer, 2, 2, "os") == (2, 3)
    assert systolic_compute_cycles(layer, 2, 2, "os") == 6 * 6 == 36
    # WS: Sr = K = 4, Sc = N = 5, T = M = 3.
    #   folds = ceil(4/2) * ceil(5/2) = 2 * 3 = 6; one fold = 2*rows + cols + T - 2 = 4 + 2 + 3 - 2 = 7
    assert operand_shape(layer, "ws") == (4, 5, 3)
    assert systolic_compute_cycles(layer, 2, 2, "ws") == 6 * 7 == 42
    # IS: Sr = K = 4, Sc = M = 3, T = N = 5.
    #   folds = ceil(4/2) * ceil(3/2) = 2 * 2 = 4; one fold = 4 + 2 + 5 - 2 = 9
    assert operand_shape(layer, "is") == (4, 3, 5)
    assert systolic_compute_cycles(layer, 2, 2, "is") == 4 * 9 == 36


def test_conv_on_2x2_array_by_hand():
    # 4x4 input, 3x3 filter, stride 1, no padding -> P = Q = 2; C = 2, K = 3.
    # im2col: M = P*Q = 4 output pixels, Kr = C*R*S = 18 (window), Nf = K = 3 filters.
    layer = conv2d_from_input("c", C=2, H=4, W=4, K=3, R=3)
    assert gemm_view(layer) == (1, 4, 3, 18)
    # OS: (Sr, Sc, T) = (4, 3, 18): folds 2 * 2 = 4, fold 18 + 2 + 2 - 2 = 20 -> 80
    assert systolic_compute_cycles(layer, 2, 2, "os") == 80
    # WS: (18, 3, 4): folds 9 * 2 = 18, fold 4 + 2 + 4 - 2 = 8 -> 144
    assert systolic_compute_cycles(layer, 2, 2, "ws") == 144
    # IS: (18, 4, 3): folds 9 * 2 = 18, fold 4 + 2 + 3 - 2 = 7 -> 126
    assert systolic_compute_cycles(layer, 2, 2, "is") == 126


def test_non_square_array_by_hand():
    # The same GEMM on 2 rows x 4 cols and 4 rows x 2 cols: rows and cols are not symmetric.
    layer = gemm("g", M=3, N=5, K=4)
    # OS 2x4: folds ceil(3/2)*ceil(5/4) = 2*2, fold 4 + 2 + 4 - 2 = 8 -> 32
    assert systolic_compute_cycles(layer, 2, 4, "os") == 32
    # OS 4x2: folds 1*3, fold 4 + 4 + 2 - 2 = 8 -> 24
    assert systolic_compute_cycles(layer, 4, 2, "os") == 24
    # WS 2x4: (4, 5, 3): folds 2*2, fold 4 + 4 + 3 - 2 = 9 -> 36
    assert systolic_compute_cycles(layer, 2, 4, "ws") == 36
    # WS 4x2: folds 1*3, fold 8 + 2 + 3 - 2 = 11 -> 33
    assert systolic_compute_cycles(layer, 4, 2, "ws") == 33
    # IS 2x4: (4, 3, 5): folds 2*1, fold 4 + 4 + 5 - 2 = 11 -> 22
    assert systolic_compute_cycles(layer, 2, 4, "is") == 22


# SCALE-Sim 3.0.0 COMPUTE_REPORT "Total Cycles" (CALC bandwidth mode, 0 stall cycles) for
# small layers, recorded from runs of experiments.validation.scalesim_compare; SCALE-Sim
# reports the 0-based last cycle, so its count of cycles is the total plus one.
RECORDED = [
    # (layer, rows, cols, dataflow, SCALE-Sim Total Cycles, SCALE-Sim Mapping Efficiency %)
    (conv2d_from_input("L0", C=2, H=7, W=7, K=5, R=3), 4, 4, "os", 335, 55.80357142857143),
    (conv2d_from_input("L0", C=2, H=7, W=7, K=5, R=3), 4, 4, "ws", 349, 56.25),
    (conv2d_from_input("L0", C=2, H=7, W=7, K=5, R=3), 4, 4, "is", 524, 80.35714285714286),
    (conv2d_from_input("t", C=5, H=15, W=13, K=7, R=3, stride=2, padding=1), 8, 8, "os", 412, None),
    (conv2d_from_input("t", C=5, H=15, W=13, K=7, R=3, stride=2, padding=1), 4, 16, "ws", 935, None),
    (conv2d_from_input("t", C=5, H=15, W=13, K=7, R=3, stride=2, padding=1), 4, 16, "is", 1391, None),
    (gemm("g", M=13, N=11, K=9), 8, 8, "os", 91, None),
    (gemm("g", M=13, N=11, K=9), 4, 16, "ws", 104, None),
    (gemm("g", M=13, N=11, K=9), 8, 8, "is", 131, None),
    (conv2d_from_input("s7", C=3, H=20, W=20, K=9, R=7, stride=2, padding=3), 8, 8, "os", 4185, None),
    (conv2d_from_input("s7", C=3, H=20, W=20, K=9, R=7, stride=2, padding=3), 4, 16, "ws", 4513, None),
    (conv2d_from_input("s7", C=3, H=20, W=20, K=9, R=7, stride=2, padding=3), 4, 16, "is", 8028, None),
]


@pytest.mark.parametrize(("layer", "rows", "cols", "df", "ss_total", "ss_map_eff"), RECORDED)
def test_matches_recorded_scalesim_runs(layer, rows, cols, df, ss_total, ss_map_eff):
    assert systolic_compute_cycles(layer, rows, cols, df) == ss_total + 1
    if ss_map_eff is not None:
        assert 100 * mapping_efficiency(layer, rows, cols, df) == pytest.approx(ss_map_eff, rel=1e-12)


# --- folding ------------------------------------------------------------------------------


@pytest.mark.parametrize("df", DATAFLOWS)
def test_ceil_folding_charges_edge_folds_fully(df):
    # One more row or column of the operand than the array holds costs a whole extra fold:
    # SCALE-Sim pads the edge fold with null requests to the full array.
    rows, cols = 8, 4
    base = gemm("b", M=8, N=8, K=8)  # every Sr, Sc is a multiple of 8 or 4
    sr, sc, t = operand_shape(base, df)
    assert fold_counts(base, rows, cols, df) == (sr // rows, sc // cols)
    one = fold_cycles(rows, cols, t, df, rows, cols)
    assert systolic_compute_cycles(base, rows, cols, df) == (sr // rows) * (sc // cols) * one
    # grow the dimension on the spatial rows by one: ceil adds a full fold per column fold
    grow_rows = {"os": dict(M=9), "ws": dict(K=9), "is": dict(K=9)}[df]
    bigger = gemm("b", **{**dict(M=8, N=8, K=8), **grow_rows})
    sr2, sc2, t2 = operand_shape(bigger, df)
    assert fold_counts(bigger, rows, cols, df) == (math.ceil(sr2 / rows), math.ceil(sc2 / cols))
    assert (sr2, sc2, t2) == (9, sc, t)
    assert systolic_compute_cycles(bigger, rows, cols, df) == 2 * (sc // cols) * one
    # ... and 16 rows cost the same as 9
    full = gemm("b", **{**dict(M=8, N=8, K=8), **{k: 16 for k in grow_rows}})
    assert systolic_compute_cycles(full, rows, cols, df) == systolic_compute_cycles(bigger, rows, cols, df)


@pytest.mark.parametrize("df", DATAFLOWS)
def test_edge_fold_costs_the_same(df):
    # rows_used / cols_used do not change one fold's cycles (null-padded to the full array)
    assert fold_cycles(1, 1, 10, df, 8, 8) == fold_cycles(8, 8, 10, df, 8, 8)
    assert fold_cycles(3, 5, 10, df, 8, 8) == fold_cycles(8, 8, 10, df, 8, 8)


def test_fold_cycles_formulas():
    assert fold_cycles(4, 4, 10, "os", 4, 4) == 10 + 4 + 4 - 2
    assert fold_cycles(4, 4, 10, "ws", 4, 4) == 2 * 4 + 4 + 10 - 2
    assert fold_cycles(4, 4, 10, "is", 4, 4) == 2 * 4 + 4 + 10 - 2
    assert fold_cycles(2, 8, 10, "WS", 2, 8) == 2 * 2 + 8 + 10 - 2  # case-insensitive
    # a 1x1 array: OS fold is T cycles, WS/IS 1 (load) + T
    assert fold_cycles(1, 1, 7, "os", 1, 1) == 7
    assert fold_cycles(1, 1, 7, "ws", 1, 1) == 8


def test_conv_output_size_comes_from_the_layer():
    # ResNet-50 conv1: 224 + 2*3 padded, 7x7 stride 2 -> 112x112 (PyTorch); SCALE-Sim given
    # the read extent (112-1)*2 + 7 = 229 computes the same, given 230 it would compute 113.
    layer = conv2d_from_input("conv1", C=3, H=224, W=224, K=64, R=7, stride=2, padding=3)
    assert (layer.dims["P"], layer.dims["Q"]) == (112, 112)
    assert layer.tensor("I").extent(layer.dims)[-2:] == (229, 229)
    assert operand_shape(layer, "os") == (112 * 112, 64, 3 * 7 * 7)
    assert math.ceil((229 - 7 + 2) / 2) == 112 and math.ceil((230 - 7 + 2) / 2) == 113


# --- extensions: batch, groups, batched matmul --------------------------------------------


@pytest.mark.parametrize("df", DATAFLOWS)
def test_batch_stacks_into_output_pixels(df):
    conv = conv2d("c", N=3, K=6, C=4, P=5, Q=7, R=3, S=3)
    flat = gemm("g", M=3 * 5 * 7, N=6, K=4 * 3 * 3)
    assert operand_shape(conv, df) == operand_shape(flat, df)
    assert systolic_compute_cycles(conv, 8, 4, df) == systolic_compute_cycles(flat, 8, 4, df)


@pytest.mark.parametrize("df", DATAFLOWS)
def test_groups_and_bmm_batch_are_repetitions(df):
    grouped = conv2d("g", K=12, C=8, P=6, Q=6, R=3, S=3, groups=4)  # 4 groups of 3 <- 2 channels
    one_group = conv2d("g1", K=3, C=2, P=6, Q=6, R=3, S=3)
    assert repetitions(grouped) == 4
    assert operand_shape(grouped, df) == operand_shape(one_group, df)
    assert systolic_compute_cycles(grouped, 4, 4, df) == 4 * systolic_compute_cycles(one_group, 4, 4, df)

    dw = conv2d("dw", K=32, C=32, P=14, Q=14, R=3, S=3, groups=32)  # depthwise
    single = conv2d("one", K=1, C=1, P=14, Q=14, R=3, S=3)
    assert dw.kind == "depthwise"
    assert systolic_compute_cycles(dw, 8, 8, df) == 32 * systolic_compute_cycles(single, 8, 8, df)

    bmm = gemm("bmm", B=5, M=7, N=9, K=11)
    mm = gemm("mm", M=7, N=9, K=11)
    assert systolic_compute_cycles(bmm, 4, 8, df) == 5 * systolic_compute_cycles(mm, 4, 8, df)


def test_repeat_is_not_applied():
    layer = gemm("g", M=30, N=20, K=10)
    assert systolic_compute_cycles(layer.with_repeat(3), 4, 4, "os") == systolic_compute_cycles(layer, 4, 4, "os")


# --- utilization and mapping efficiency ---------------------------------------------------


def test_utilization_and_mapping_efficiency_by_hand():
    layer = gemm("g", M=3, N=5, K=4)  # 60 MACs
    # OS on 2x2: 36 cycles -> 60 / (36 * 4)
    assert utilization(layer, 2, 2, "os") == pytest.approx(60 / (36 * 4))
    # OS: Sr*Sc = 15 of 6 folds * 4 PEs
    assert mapping_efficiency(layer, 2, 2, "os") == pytest.approx(15 / 24)
    # IS: (4, 3) of 4 folds * 4 PEs
    assert mapping_efficiency(layer, 2, 2, "is") == pytest.approx(12 / 16)


@settings(max_examples=150, deadline=None)
@given(m=st.integers(1, 300), n=st.integers(1, 300), k=st.integers(1, 300),
       rows=st.integers(1, 64), cols=st.integers(1, 64), df=st.sampled_from(DATAFLOWS))
def test_utilization_in_unit_interval(m, n, k, rows, cols, df):
    layer = gemm("g", M=m, N=n, K=k)
    u = utilization(layer, rows, cols, df)
    e = mapping_efficiency(layer, rows, cols, df)
    assert 0 < u <= 1 and 0 < e <= 1
    assert u <= e  # fill/drain only lowers utilization below the occupied fraction


# --- monotonicity -------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(m=st.integers(1, 200), n=st.integers(1, 200), k=st.integers(1, 200),
       dim=st.sampled_from("MNK"), extra=st.integers(1, 100),
       rows=st.integers(1, 48), cols=st.integers(1, 48), df=st.sampled_from(DATAFLOWS))
def test_more_work_never_takes_fewer_cycles(m, n, k, dim, extra, rows, cols, df):
    sizes = dict(M=m, N=n, K=k)
    small = gemm("s", **sizes)
    sizes[dim] += extra
    big = gemm("b", **sizes)
    assert systolic_compute_cycles(big, rows, cols, df) >= systolic_compute_cycles(small, rows, cols, df)


@settings(max_examples=100, deadline=None)
@given(c=st.integers(1, 16), k=st.integers(1, 16), h=st.integers(3, 20), r=st.sampled_from([1, 3]),
       stride=st.sampled_from([1, 2]), df=st.sampled_from(DATAFLOWS))
def test_conv_monotone_in_channels_and_size(c, k, h, r, stride, df):
    base = conv2d_from_input("b", C=c, H=h, W=h, K=k, R=r, stride=stride, padding=r // 2)
    for grown in (dict(C=c + 3, H=h, K=k), dict(C=c, H=h + 5, K=k), dict(C=c, H=h, K=k + 2)):
        big = conv2d_from_input("g", C=grown["C"], H=grown["H"], W=grown["H"], K=grown["K"], R=r,
                                stride=stride, padding=r // 2)
        assert systolic_compute_cycles(big, 8, 16, df) >= systolic_compute_cycles(base, 8, 16, df)


@pytest.mark.parametrize("df", DATAFLOWS)
def test_bigger_array_is_not_always_faster(df):
    # fill and drain span the whole array: a tiny GEMM on a huge array is slower
    layer = gemm("tiny", M=2, N=2, K=2)
    assert systolic_compute_cycles(layer, 256, 256, df) > systolic_compute_cycles(layer, 2, 2, df)


# --- vectorized == scalar -----------------------------------------------------------------


@pytest.mark.parametrize("df", DATAFLOWS)
def test_vectorized_equals_scalar(df):
    layer = conv2d_from_input("c", C=64, H=56, W=56, K=64, R=3, padding=1)
    rows = np.array([4, 8, 16, 32, 128, 17])
    cols = np.array([[4], [16], [64], [33]])
    got = systolic_compute_cycles(layer, rows, cols, df)
    assert isinstance(got, np.ndarray) and got.shape == (4, 6) and got.dtype == np.int64
    for i, c in enumerate(cols[:, 0]):
        for j, r in enumerate(rows):
            want = systolic_compute_cycles(layer, int(r), int(c), df)
            assert isinstance(want, int)
            assert got[i, j] == want
    util = utilization(layer, rows, cols, df)
    eff = mapping_efficiency(layer, rows, cols, df)
    assert util.shape == eff.shape == (4, 6)
    assert util[1, 2] == utilization(layer, 16, 16, df)
    assert eff[3, 5] == mapping_efficiency(layer, 17, 33, df)
    fr, fc = fold_counts(layer, rows, cols, df)
    assert np.array_equal(fr, -(-operand_shape(layer, df)[0] // rows))
    assert np.array_equal(fc, -(-operand_shape(layer, df)[1] // cols))


@pytest.mark.parametrize("df", DATAFLOWS)
def test_fold_cycles_vectorized(df):
    rng = np.random.default_rng(0)
    rows = rng.integers(1, 64, size=50)
    cols = rng.integers(1, 64, size=50)
    t = rng.integers(1, 5000, size=50)
    ru = np.minimum(rows, rng.integers(1, 64, size=50))
    cu = np.minimum(cols, rng.integers(1, 64, size=50))
    got = fold_cycles(ru, cu, t, df, rows, cols)
    want = [fold_cycles(int(a), int(b), int(c), df, int(d), int(e))
            for a, b, c, d, e in zip(ru, cu, t, rows, cols)]
    assert got.tolist() == want
    # broadcasting over a scalar t and a column of arrays
    grid = fold_cycles(1, 1, 100, df, np.array([[2], [4]]), np.array([2, 4, 8]))
    assert grid.shape == (2, 3)


# --- errors -------------------------------------------------------------------------------


def test_errors():
    layer = gemm("g", M=3, N=5, K=4)
    with pytest.raises(ValueError, match="dataflow"):
        systolic_compute_cycles(layer, 2, 2, "rs")
    with pytest.raises(ValueError, match="rows"):
        systolic_compute_cycles(layer, 0, 2, "os")
    with pytest.raises(ValueError, match="integer"):
        systolic_compute_cycles(layer, 2.5, 2, "os")
    with pytest.raises(ValueError, match="more rows"):
        fold_cycles(3, 1, 5, "os", 2, 2)
    with pytest.raises(ValueError, match="t must"):
        fold_cycles(1, 1, 0, "os", 2, 2)
