"""Layer / TensorSpec model: dims, operand sizes, MACs and validation, by hand and vs torch."""

from __future__ import annotations

import random

import pytest
import torch
from torch import nn

from mappers.workloads import (
    Layer,
    TensorSpec,
    conv2d,
    conv2d_from_input,
    conv_output_size,
    gemm,
    total_macs,
)


def words(layer: Layer) -> dict[str, int]:
    return {t: layer.tensor_words(t) for t in ("W", "I", "O")}


# ---------------------------------------------------------------------- conv2d


def test_conv2d_stride2_by_hand():
    layer = conv2d("c", N=2, K=8, C=4, P=5, Q=6, R=3, S=3, stride=2)
    assert layer.kind == "conv"
    assert list(layer.dims.items()) == [("N", 2), ("K", 8), ("C", 4), ("P", 5), ("Q", 6),
                                        ("R", 3), ("S", 3)]
    # I rows: 2*(5-1) + 3 = 11, columns: 2*(6-1) + 3 = 13.
    assert words(layer) == {"W": 8 * 4 * 9, "I": 2 * 4 * 11 * 13, "O": 2 * 8 * 5 * 6}
    assert layer.macs == 2 * 8 * 4 * 5 * 6 * 9 == 17280
    assert layer.reduction_dims == ("C", "R", "S")
    assert layer.relevant("I") == frozenset("NCPQRS")
    assert layer.relevant("W") == frozenset("KCRS")
    assert layer.relevant("O") == frozenset("NKPQ")
    assert layer.tensor("I").coefficient(2, "P") == 2
    assert layer.tensor("I").coefficient(2, "R") == 1


def test_conv2d_asymmetric_stride_and_dilation():
    layer = conv2d("c", K=4, C=2, P=4, Q=3, R=3, S=2, stride=(1, 2), dilation=(2, 3))
    # rows: 1*(4-1) + 2*(3-1) + 1 = 8; columns: 2*(3-1) + 3*(2-1) + 1 = 8.
    assert layer.tensor("I").extent(layer.dims) == (1, 2, 8, 8)
    assert words(layer)["I"] == 2 * 8 * 8
    assert layer.attrs["stride"] == (1, 2) and layer.attrs["dilation"] == (2, 3)


def test_conv2d_dilation2_by_hand():
    layer = conv2d("c", K=4, C=2, P=4, Q=4, R=3, S=3, dilation=2)
    # (4-1) + 2*(3-1) + 1 = 8 per spatial axis.
    assert words(layer) == {"W": 4 * 2 * 9, "I": 2 * 8 * 8, "O": 4 * 4 * 4}
    assert layer.macs == 4 * 2 * 16 * 9


def test_conv2d_groups_by_hand():
    layer = conv2d("g", K=8, C=4, P=3, Q=3, R=3, S=3, groups=2)
    assert layer.kind == "conv"
    assert dict(layer.dims) == {"N": 1, "G": 2, "K": 4, "C": 2, "P": 3, "Q": 3, "R": 3, "S": 3}
    assert words(layer) == {"W": 2 * 4 * 2 * 9, "I": 2 * 2 * 5 * 5, "O": 2 * 4 * 9}
    assert layer.macs == 2 * 4 * 2 * 9 * 9
    assert layer.relevant("W") == frozenset("GKCRS")
    assert layer.attrs["K"] == 8 and layer.attrs["C"] == 4 and layer.attrs["groups"] == 2


def test_conv2d_depthwise_by_hand():
    layer = conv2d("dw", K=6, C=6, P=7, Q=7, R=3, S=3, groups=6)
    assert layer.kind == "depthwise"
    assert dict(layer.dims) == {"N": 1, "G": 6, "K": 1, "C": 1, "P": 7, "Q": 7, "R": 3, "S": 3}
    assert words(layer) == {"W": 6 * 9, "I": 6 * 9 * 9, "O": 6 * 49}
    assert layer.macs == 6 * 49 * 9
    # A channel multiplier (K = 2C) is a grouped conv, not depthwise.
    assert conv2d("m", K=12, C=6, P=7, Q=7, R=3, S=3, groups=6).kind == "conv"


def test_conv_output_size_formula():
    assert conv_output_size(224, 7, 2, 3) == 112
    assert conv_output_size(84, 8, 4, 0) == 20
    assert conv_output_size(10, 3, 1, 2, dilation=2) == 10
    assert conv_output_size(7, 2, 2, 0) == 3  # floor


def test_conv2d_from_input_by_hand():
    layer = conv2d_from_input("c", N=1, C=3, H=224, W=224, K=64, R=7, stride=2, padding=3)
    assert (layer.dims["P"], layer.dims["Q"], layer.dims["S"]) == (112, 112, 7)
    assert layer.attrs["H"] == 224 and layer.attrs["padding"] == 3
    assert layer.macs == 64 * 3 * 112 * 112 * 49 == 118_013_952
    # The I footprint is the padded input actually read: 2*(112-1) + 7 = 229 <= 224 + 2*3.
    assert layer.tensor("I").extent(layer.dims) == (1, 3, 229, 229)


@pytest.mark.parametrize("seed", range(8))
def test_conv2d_from_input_matches_torch(seed):
    rng = random.Random(seed)
    groups = rng.choice([1, 1, 2, 4])
    c = groups * rng.randint(1, 3)
    k = groups * rng.randint(1, 3)
    r, s = rng.randint(1, 4), rng.randint(1, 4)
    stride, padding, dilation = rng.randint(1, 3), rng.randint(0, 2), rng.randint(1, 2)
    h = rng.randint(dilation * (r - 1) + 1, 20)
    w = rng.randint(dilation * (s - 1) + 1, 20)
    n = rng.randint(1, 2)
    conv = nn.Conv2d(c, k, (r, s), stride=stride, padding=padding, dilation=dilation,
                     groups=groups)
    with torch.no_grad():
        out = conv(torch.zeros(n, c, h, w))
    layer = conv2d_from_input("x", N=n, C=c, H=h, W=w, K=k, R=r, S=s, stride=stride,
                              padding=padding, dilation=dilation, groups=groups)
    d = layer.dims
    assert (d["N"], d.get("G", 1) * d["K"], d["P"], d["Q"]) == tuple(out.shape)
    assert d.get("G", 1) * d["C"] == c and (d["R"], d["S"]) == (r, s)
    # MACs = outputs x (C/groups) x R x S
    assert layer.macs == out.numel() * (c // groups) * r * s


# ------------------------------------------------------------------------ gemm


def test_gemm_by_hand():
    layer = gemm("g", M=3, N=4, K=5)
    assert layer.kind == "gemm"
    assert list(layer.dims.items()) == [("M", 3), ("N", 4), ("K", 5)]
    assert words(layer) == {"W": 5 * 4, "I": 3 * 5, "O": 3 * 4}
    assert layer.macs == 60
    assert layer.reduction_dims == ("K",)
    assert layer.relevant("W") == frozenset("KN") and layer.relevant("I") == frozenset("MK")


def test_batched_gemm_by_hand():
    layer = gemm("b", B=2, M=3, N=4, K=5)
    assert layer.kind == "bmm"
    assert list(layer.dims) == ["B", "M", "N", "K"]
    assert words(layer) == {"W": 2 * 20, "I": 2 * 15, "O": 2 * 12}
    assert layer.macs == 120
    assert gemm("b1", B=1, M=3, N=4, K=5).kind == "gemm"  # B=1 is not a dimension


def test_total_macs_counts_repeats():
    layers = [gemm("a", M=2, N=3, K=4, repeat=3), conv2d("c", K=2, C=2, P=2, Q=2, R=1, S=1)]
    assert total_macs(layers) == 3 * 24 + 16
    assert layers[0].with_repeat(5).repeat == 5 and layers[0].with_repeat(5).name == "a"
    assert "x3" in repr(layers[0])


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: conv2d("c", K=4, C=4, P=2, Q=2, R=1, S=1, groups=3), "groups=3"),
        (lambda: conv2d("c", K=6, C=4, P=2, Q=2, R=1, S=1, groups=3), "groups=3"),
        (lambda: conv2d("c", K=0, C=4, P=2, Q=2, R=1, S=1), "K must be a positive"),
        (lambda: conv2d("c", K=4, C=4, P=0, Q=2, R=1, S=1), "P must be a positive"),
        (lambda: conv2d("c", K=4, C=4, P=2, Q=2, R=1, S=1, stride=0), "stride_h"),
        (lambda: conv2d("c", K=4, C=4, P=2, Q=2, R=1, S=1, dilation=(1, 0)), "dilation_w"),
        (lambda: conv2d("c", K=4, C=4, P=2, Q=2, R=1, S=1, repeat=0), "repeat"),
        (lambda: conv2d("c", K=4, C=4, P=2, Q=2, R=1, S=1.5), "S must"),
        (lambda: conv2d_from_input("c", C=4, H=0, W=8, K=4, R=1, padding=1), "H must"),
        (lambda: conv2d_from_input("c", C=4, H=8, W=8, K=4, R=3, stride=0), "stride must"),
        (lambda: conv2d_from_input("c", C=4, H=8, W=8, K=4, R=3, padding=-1), "padding"),
        (lambda: conv2d_from_input("c", C=4, H=2, W=8, K=4, R=3), "smaller than the 3x3"),
        (lambda: gemm("g", M=0, N=1, K=1), "M must"),
        (lambda: gemm("g", M=1, N=1, K=1, B=0), "B must"),
    ],
)
def test_errors_name_the_parameter(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_error_names_the_layer():
    with pytest.raises(ValueError, match="'conv7'"):
        conv2d("conv7", K=4, C=4, P=2, Q=2, R=1, S=0)


def test_layer_validation():
    ok = gemm("g", M=2, N=2, K=2)
    W, I, O = ok.tensors  # noqa: E741
    with pytest.raises(ValueError, match="operands must be named"):
        Layer("x", "gemm", ok.dims, (I, W, O))
    with pytest.raises(ValueError, match="unknown dimension 'Z'"):
        Layer("x", "gemm", ok.dims, (TensorSpec("W", ((("Z", 1),),)), I, O))
    with pytest.raises(ValueError, match="appears twice"):
        Layer("x", "gemm", ok.dims, (TensorSpec("W", ((("K", 1),), (("K", 1),))), I, O))
    with pytest.raises(ValueError, match="dimension M must be a positive integer"):
        Layer("x", "gemm", {"M": 0, "N": 2, "K": 2}, ok.tensors)
    with pytest.raises(ValueError, match="repeat"):
        Layer("x", "gemm", ok.dims, ok.tensors, repeat=0)
