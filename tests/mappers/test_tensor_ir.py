"""HASCO's IR: matching enumerations against hand-derived lists, and every partition's
loop nest, executed literally with numpy, against an einsum reference."""

from __future__ import annotations

import numpy as np
import pytest

from mappers import tensor_ir as ir
from mappers import zoo
from mappers.tensor_ir import INTRINSIC_KINDS, intrinsic, match, match_stages


def keyset(parts):
    """A partition as (index assignment, intrinsic input -> computation input)."""
    return {(p.index_map, tuple((m.intrinsic, m.computation) for m in p.operands[1:])) for p in parts}


def gemm_row(i, j, k, a, b):
    return ((("i", i), ("j", j), ("k", k)), (("a", a), ("b", b)))


def gemv_row(i, j, a, b):
    return ((("i", i), ("j", j)), (("a", a), ("b", b)))


# ----------------------------------------------------------------- hand-derived lists
#
# conv2d: O[n,p,q,k] += I[n, p+r, q+s, c] * W[r,s,c,k]. Loop signatures (in output?,
# number of inputs using it): n, p, q -> (yes, 1: I); k -> (yes, 1: W); c, r, s -> (no, 2).
#
# GEMM c[i,j] += a[i,k] b[k,j]: i, j -> (yes, 1), k -> (no, 2). So k is one of c, r, s and
# i, j come from {n, p, q, k}.
#  * a = I, b = W: i must index a's tensor I and the output, so i in {n, p, q}; j must
#    be in W and O: j = k. a[i, k] -> I: the intrinsic's two axes must hit two different
#    axes of I that contain no other assigned loop. i = n: k = c, r or s all fine
#    (n and the reduction loop sit on different axes) -> 3. i = p: k = c or s; k = r
#    puts p and r on one axis (p + r) while a keeps them apart -> 2. i = q: k = c or r,
#    not s -> 2. Seven.
#  * a = W, b = I: mirror image (i = k, j in {n, p, q}): seven more. Total 14.
CONV2D_GEMM = {
    gemm_row("n", "k", "c", "I", "W"), gemm_row("n", "k", "r", "I", "W"), gemm_row("n", "k", "s", "I", "W"),
    gemm_row("p", "k", "c", "I", "W"), gemm_row("p", "k", "s", "I", "W"),
    gemm_row("q", "k", "c", "I", "W"), gemm_row("q", "k", "r", "I", "W"),
    gemm_row("k", "n", "c", "W", "I"), gemm_row("k", "n", "r", "W", "I"), gemm_row("k", "n", "s", "W", "I"),
    gemm_row("k", "p", "c", "W", "I"), gemm_row("k", "p", "s", "W", "I"),
    gemm_row("k", "q", "c", "W", "I"), gemm_row("k", "q", "r", "W", "I"),
}
# GEMV c[i] += a[i,j] b[j]: i -> (yes, 1), j -> (no, 2).
#  * a = I, b = W: i in {n, p, q}, j in {c, r, s} with the same axis rule as above: 7.
#    b[j] -> W has only j assigned; W's k is not assigned (software loop): fine.
#  * a = W, b = I: i = k, j in {c, r, s}: b[j] -> I has one assigned loop on one axis: 3.
CONV2D_GEMV = {
    gemv_row("n", "c", "I", "W"), gemv_row("n", "r", "I", "W"), gemv_row("n", "s", "I", "W"),
    gemv_row("p", "c", "I", "W"), gemv_row("p", "s", "I", "W"),
    gemv_row("q", "c", "I", "W"), gemv_row("q", "r", "I", "W"),
    gemv_row("k", "c", "W", "I"), gemv_row("k", "r", "W", "I"), gemv_row("k", "s", "W", "I"),
}
# DOT c[n] += a[n,i] b[n,i]: its n is in the output and in both inputs; no conv loop is
# (every output loop is in exactly one input), so there is no DOT partition.
#
# CONV o[n,y,x,k] += a[n, y+r, x+s, c] * b[r,s,c,k]. a = W is impossible: y and x would
# both need W's only output loop k. With a = I: n = n, k = k, c = c, and the two window
# axes y+r, x+s must land on the two window axes p+r, q+s: (y,r) = (p,r), (x,s) = (q,s),
# or the transposed (y,r) = (q,s), (x,s) = (p,r). Two.
CONV2D_CONV = {
    ((("n", "n"), ("y", "p"), ("x", "q"), ("k", "k"), ("r", "r"), ("s", "s"), ("c", "c")),
     (("a", "I"), ("b", "W"))),
    ((("n", "n"), ("y", "q"), ("x", "p"), ("k", "k"), ("r", "s"), ("s", "r"), ("c", "c")),
     (("a", "I"), ("b", "W"))),
}
# GEMM computation C[m,n] += A[m,k] B[k,n]: m, n -> (yes, 1), k -> (no, 2).
#  * GEMM intrinsic: k = k; (i, j) = (m, n) with a = A, b = B, or (n, m) with a = B,
#    b = A (C^T = B^T A^T, a's axes permuted). 2.
#  * GEMV: j = k; i = m (a = A, b = B: B's n is a software loop) or i = n (a = B,
#    b = A). 2.
#  * DOT: no loop is in all three operands. 0. CONV: 7 indices, 3 loops. 0.
GEMM_GEMM = {gemm_row("m", "n", "k", "A", "B"), gemm_row("n", "m", "k", "B", "A")}
GEMM_GEMV = {gemv_row("m", "k", "A", "B"), gemv_row("n", "k", "B", "A")}


def test_conv2d_enumeration_matches_hand_derivation():
    c = ir.conv2d(N=1, K=2, C=3, P=3, Q=3, R=2, S=2)
    assert keyset(match(c, intrinsic("GEMM"))) == CONV2D_GEMM
    assert keyset(match(c, intrinsic("GEMV"))) == CONV2D_GEMV
    assert match(c, intrinsic("DOT")) == []
    assert keyset(match(c, intrinsic("CONV"))) == CONV2D_CONV
    assert len(match(c, intrinsic("GEMM"))) == 14                    # no duplicates
    for p in match(c, intrinsic("CONV")):
        assert dict(p.bindings) == {"sy": 1, "dy": 1, "sx": 1, "dx": 1}


def test_gemm_enumeration_matches_hand_derivation():
    g = ir.gemm(M=3, N=4, K=5)
    assert keyset(match(g, intrinsic("GEMM"))) == GEMM_GEMM
    assert keyset(match(g, intrinsic("GEMV"))) == GEMM_GEMV
    assert match(g, intrinsic("DOT")) == [] and match(g, intrinsic("CONV")) == []


def test_strided_conv_binds_the_window_stride_and_keeps_single_loop_axes():
    c = ir.conv2d(N=1, K=2, C=2, P=3, Q=3, R=3, S=3, stride=2)
    conv = match(c, intrinsic("CONV"))
    assert {dict(p.bindings)["sy"] for p in conv} == {2} and len(conv) == 2
    # GEMM onto a strided conv: a single-loop intrinsic axis takes the strided p (a
    # strided gather), so the count is the same 14 as stride 1
    assert keyset(match(c, intrinsic("GEMM"))) == CONV2D_GEMM
    dil = ir.conv2d(N=1, K=2, C=2, P=2, Q=2, R=2, S=2, dilation=2)
    assert {dict(p.bindings)["dy"] for p in match(dil, intrinsic("CONV"))} == {2}


def test_signatures_prune_and_structure_rejects():
    # batched DOT computation: DOT matches, GEMM does not (no index is in all operands)
    d = ir.dot(N=4, L=6)
    assert keyset(match(d, intrinsic("DOT"))) == {((("n", "n"), ("i", "l")), (("a", "a"), ("b", "b"))),
                                                  ((("n", "n"), ("i", "l")), (("a", "b"), ("b", "a")))}
    assert match(d, intrinsic("GEMM")) == [] and match(d, intrinsic("GEMV")) == []
    # depthwise conv: DOT (n = g) and GEMV, never GEMM or CONV (no dense k/c loops)
    dw = ir.depthwise(G=3, P=3, Q=3, R=2, S=2)
    assert match(dw, intrinsic("GEMM")) == [] and match(dw, intrinsic("CONV")) == []
    assert {p.loop_of["n"] for p in match(dw, intrinsic("DOT"))} == {"g"}
    assert len(match(dw, intrinsic("GEMV"))) > 0


def test_mttkrp_splits_into_stages_and_only_gemv_covers_every_stage():
    m = ir.mttkrp(M=2, N=3, K=4, L=5)
    decs = ir.decompositions(m)
    assert len(decs) == 3 and all(len(d) == 2 for d in decs)
    assert match(m, intrinsic("GEMV")) == []                         # 3 inputs: not directly
    plans = {k: match_stages(m, intrinsic(k)) for k in INTRINSIC_KINDS}
    # (A,B) first: TTM stage + GEMV stage; (A,C) first: the same by symmetry; (B,C) first
    # is an element-wise Khatri-Rao stage (no reduction): matches no MAC intrinsic
    assert len(plans["GEMV"]) == 6 and not plans["GEMM"] and not plans["DOT"] and not plans["CONV"]


# ----------------------------------------------------------------- literal execution


def _conv_ref(I, W, stride=1, dilation=1):  # noqa: E741
    R, S = W.shape[0], W.shape[1]
    P = (I.shape[1] - dilation * (R - 1) - 1) // stride + 1
    Q = (I.shape[2] - dilation * (S - 1) - 1) // stride + 1
    p = np.arange(P)[:, None, None, None]
    q = np.arange(Q)[None, :, None, None]
    r = np.arange(R)[None, None, :, None]
    s = np.arange(S)[None, None, None, :]
    win = I[:, stride * p + dilation * r, stride * q + dilation * s, :]    # n p q r s c
    return win, np.einsum("npqrsc,rsck->npqk", win, W)


def reference(comp, arrays):
    k = comp.kind
    a = arrays
    if k == "gemm":
        return np.einsum("mk,kn->mn", a["A"], a["B"])
    if k == "gemv":
        if "b" in comp.loops:
            return np.einsum("bml,bl->mb", a["C"], a["D"])
        return np.einsum("ml,l->m", a["C"], a["D"])
    if k == "dot":
        return np.einsum("nl,nl->n", a["a"], a["b"])
    if k == "conv2d":
        st = dict(comp.inputs[0].axes[1])["p"]
        dl = dict(comp.inputs[0].axes[1])["r"]
        return _conv_ref(a["I"], a["W"], st, dl)[1]
    if k == "depthwise":
        I, W = a["I"], a["W"]  # noqa: E741
        win, _ = _conv_ref(I[None], np.ones((W.shape[0], W.shape[1], I.shape[-1], 1), dtype=I.dtype))
        if W.ndim == 3:
            return np.einsum("pqrsg,rsg->pqg", win[0], W)
        return np.einsum("pqrsg,rsgm->pqgm", win[0], W)
    if k == "mttkrp":
        return np.einsum("mkl,nk,nl->mn", a["A"], a["B"], a["C"])
    if k == "ttm":
        return np.einsum("mnl,lk->mnk", a["A"], a["B"])
    raise AssertionError(k)


COMPUTATIONS = [
    ir.gemm(M=5, N=3, K=7),
    ir.gemv(M=5, L=7),
    ir.gemv(M=3, L=5, B=2),
    ir.dot(N=5, L=7),
    ir.conv2d(N=2, K=3, C=3, P=3, Q=4, R=3, S=2),
    ir.conv2d(N=1, K=2, C=3, P=3, Q=2, R=3, S=3, stride=2),
    ir.depthwise(G=3, P=3, Q=4, R=3, S=2),
    ir.depthwise(G=2, P=3, Q=2, R=2, S=2, multiplier=2),
    ir.mttkrp(M=3, N=2, K=3, L=5),
    ir.ttm(M=3, N=2, K=3, L=5),
]
# sizes that divide nothing above (3 vs 5/7/4; 2 vs 3/5/7) and one of 1
SIZES = {"GEMM": {"i": 2, "j": 3, "k": 2}, "GEMV": {"i": 3, "j": 2}, "DOT": {"n": 2, "i": 3},
         "CONV": {"n": 1, "y": 2, "x": 3, "k": 2, "r": 2, "s": 1, "c": 2}}


@pytest.mark.parametrize("comp", COMPUTATIONS, ids=lambda c: f"{c.kind}-{'x'.join(map(str, c.loops.values()))}")
def test_every_partition_executed_literally_equals_einsum(comp):
    rng = np.random.default_rng(0)
    arrays = {op.name: rng.integers(-4, 5, size=comp.shape(op.name)) for op in comp.inputs}
    ref = reference(comp, arrays)
    np.testing.assert_array_equal(comp.execute(arrays), ref)       # the IR's own semantics
    n_plans = 0
    for kind in INTRINSIC_KINDS:
        for plan in match_stages(comp, intrinsic(kind, **SIZES[kind])):
            got = ir.execute_stages(plan, arrays)
            np.testing.assert_array_equal(got, ref, err_msg=" then ".join(p.key for p in plan))
            assert all(not p.unsafe_padding for p in plan)
            n_plans += 1
    assert n_plans > 0


def test_padding_is_counted_in_calls_and_macs():
    g = ir.gemm(M=5, N=3, K=7)
    p = match(g, intrinsic("GEMM", i=2, j=2, k=4))[0]
    assert p.tiles() == {"m": (2, 3), "n": (2, 2), "k": (4, 2)}
    assert p.calls() == 12 and p.padded_macs() == 6 * 4 * 8 >= g.macs
    # an intrinsic larger than the loop is clamped to it (the call is masked)
    big = match(g, intrinsic("GEMM", i=64, j=64, k=64))[0]
    assert big.calls() == 1 and big.padded_macs() == g.macs


def test_layers_from_the_zoo_convert_and_lower_back():
    layer = zoo.resnet50()[1]                                       # layer1.0.conv1 (1x1)
    comp = ir.Computation.from_layer(layer)
    assert comp.macs == layer.macs and set(comp.loops) == set(layer.dims)
    parts = match(comp, intrinsic("GEMM"))
    assert parts
    back = comp.to_layer(parts[0].operand_of("a"), parts[0].operand_of("b"))
    assert back.macs == layer.macs and back.tensor("O").axes == layer.tensor("O").axes
    # every ResNet-50 layer has CONV or GEMM partitions (the fc is a GEMM)
    for lay in zoo.resnet50():
        c = ir.Computation.from_layer(lay)
        assert match(c, intrinsic("GEMM")), lay.name


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="M must be a positive integer"):
        ir.gemm(M=0, N=1, K=1)
    with pytest.raises(ValueError, match="unknown intrinsic kind 'TPU'"):
        intrinsic("TPU")
    with pytest.raises(ValueError, match="unknown indices"):
        intrinsic("GEMM", z=4)
    with pytest.raises(ValueError, match="extent of loop 'k'"):
        ir.gemm(M=2, N=2, K=2).with_extents({"k": 0})
    with pytest.raises(ValueError, match="unknown loop 'z'"):
        ir.Computation("bad", {"i": 2}, ir.Operand("o", ((("i", 1),),)), (ir.Operand("a", ((("z", 1),),)),))
    with pytest.raises(ValueError, match="axes must be a tuple of axes"):
        ir.Operand("o", (("i", 1),))
    with pytest.raises(ValueError, match="appears twice"):
        ir.Operand("a", ((("i", 1),), (("i", 1),)))
    with pytest.raises(ValueError, match="array 'A' has shape"):
        ir.gemm(M=2, N=2, K=2).execute({"A": np.zeros((3, 2)), "B": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="needs exactly two inputs"):
        ir.mttkrp(M=2, N=2, K=2, L=2).to_layer()


def test_no_match_is_explained_with_both_expressions_and_the_failing_step():
    gemm = intrinsic("GEMM")
    three = ir.mttkrp(M=2, N=2, K=2, L=2)
    assert match(three, gemm) == []
    msg = ir.explain_no_match(three, gemm)
    assert str(three.output) in msg and "c[i, j] += a[i, k] * b[k, j]" in msg
    assert "multiplies 3 inputs, the intrinsic 2" in msg
    dot = ir.dot(N=4, L=4)
    assert match(dot, gemm) == []
    msg = ir.explain_no_match(dot, gemm)
    assert "c[n] += a[n, l] * b[n, l]" in msg and "no loop has the signature of intrinsic index 'i'" in msg
    dw = ir.depthwise(G=8, P=4, Q=4, R=3, S=3)
    assert match(dw, gemm) == []
    assert "fails structure matching" in ir.explain_no_match(dw, gemm)


def test_malformed_index_expressions_name_the_expression():
    with pytest.raises(ValueError, match=r"malformed index expression a\[i, i\]: loop 'i' appears twice"):
        ir.Operand("a", ((("i", 1),), (("i", 1),)))
    with pytest.raises(ValueError, match=r"malformed index expression a\[0\*i\]: coefficient of 'i'"):
        ir.Operand("a", ((("i", 0),),))
    with pytest.raises(ValueError, match=r"malformed index expression o\[i\] \+= a\[z\] .*unknown loop 'z'"):
        ir.Computation("bad", {"i": 2}, ir.Operand("o", ((("i", 1),),)), (ir.Operand("a", ((("z", 1),),)),))
    # a symbolic coefficient belongs to intrinsic templates: matching a computation that has one
    # names the computation's expression and the intrinsic tried
    sym = ir.Computation("sym", {"i": 4, "k": 4}, ir.Operand("o", ((("i", 1),),)),
                         (ir.Operand("a", ((("i", "s"), ("k", 1)),)), ir.Operand("b", ((("k", 1),),))))
    with pytest.raises(ValueError, match=r"o\[i\] \+= a\[s\*i \+ k\] \* b\[k\].*symbolic coefficient 's'.*GEMV"):
        match(sym, intrinsic("GEMV"))
