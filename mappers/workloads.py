"""Tensor workloads as loop nests with affine operand projections (Timeloop's "problem").

A :class:`Layer` is a perfectly nested loop over named dimensions (``dims``, in canonical
order) computing ``O += W * I`` at every point. Each operand is a :class:`TensorSpec`
whose axes are affine combinations of dimensions with non-negative integer
coefficients, e.g. the input row of a convolution is ``stride * P + dilation * R``.
Every layer has exactly three operands with fixed roles and names:

* ``W`` -- the weight-like operand (filters; the second GEMM operand),
* ``I`` -- the input activation (the first GEMM operand),
* ``O`` -- the output (partial sums accumulate into it).

A dimension is *relevant* to a tensor if it appears in one of its axes; a dimension that
appears in an axis together with another one (``P`` and ``R`` in ``stride*P + R``) is
*partially relevant* (sliding window). Each dimension appears in at most one axis of a
tensor, so a box of iterations maps to a box of tensor elements whose extent along axis
``a`` is ``sum_d c[a,d] * (t_d - 1) + 1`` (the bounding box; strided gaps inside it count).

Convolution dimensions: ``N`` batch, ``G`` groups, ``K`` output channels per group, ``C``
input channels per group, ``P``/``Q`` output rows/columns, ``R``/``S`` filter
rows/columns (``G`` only when ``groups > 1``; depthwise is ``G = channels, K = C = 1``).
GEMM / batched matmul ``C[b, m, n] = sum_k A[b, m, k] B[b, k, n]``: dimensions ``B``
(only when > 1), ``M``, ``N``, ``K``; ``I = A``, ``W = B``, ``O = C``.

Sizes are counted in *words* (one word = one element at the accelerator's precision).
``repeat`` says how many identical instances of the layer a network contains.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

ROLES = ("W", "I", "O")


@dataclass(frozen=True)
class TensorSpec:
    """One operand: ``axes[a]`` is a tuple of ``(dim, coefficient)`` pairs."""

    name: str
    axes: tuple[tuple[tuple[str, int], ...], ...]

    @property
    def dims(self) -> tuple[str, ...]:
        """Dimensions that index this tensor (its relevant dimensions)."""
        return tuple(d for axis in self.axes for d, _ in axis)

    def coefficient(self, axis: int, dim: str) -> int:
        return dict(self.axes[axis]).get(dim, 0)

    def extent(self, sizes: Mapping[str, int]) -> tuple[int, ...]:
        """Bounding-box extent of every axis for a box of iterations of ``sizes``."""
        return tuple(sum(c * (sizes.get(d, 1) - 1) for d, c in axis) + 1 for axis in self.axes)

    def words(self, sizes: Mapping[str, int]) -> int:
        return math.prod(self.extent(sizes))


@dataclass(frozen=True)
class Layer:
    """A tensor operation: dimensions with sizes and three operands (``W``, ``I``, ``O``).

    Attributes:
        name: label (e.g. ``"res2a_branch2b"``).
        kind: ``"conv"``, ``"depthwise"``, ``"gemm"`` or ``"bmm"``.
        dims: dimension -> size, in canonical order.
        tensors: the ``W``, ``I``, ``O`` specs, in that order.
        repeat: number of identical instances in the network.
        attrs: the constructor arguments (stride, padding ...), for display and export.
    """

    name: str
    kind: str
    dims: Mapping[str, int]
    tensors: tuple[TensorSpec, TensorSpec, TensorSpec]
    repeat: int = 1
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dims", dict(self.dims))
        for d, v in self.dims.items():
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"layer {self.name!r}: dimension {d} must be a positive integer, got {v!r}")
        if tuple(t.name for t in self.tensors) != ROLES:
            raise ValueError(f"layer {self.name!r}: operands must be named {ROLES}")
        for t in self.tensors:
            seen: set[str] = set()
            for d in t.dims:
                if d not in self.dims:
                    raise ValueError(f"layer {self.name!r}: tensor {t.name} uses unknown dimension {d!r}")
                if d in seen:
                    raise ValueError(f"layer {self.name!r}: dimension {d!r} appears twice in {t.name}")
                seen.add(d)
        if not isinstance(self.repeat, int) or self.repeat < 1:
            raise ValueError(f"layer {self.name!r}: repeat must be a positive integer, got {self.repeat!r}")

    @property
    def dim_names(self) -> tuple[str, ...]:
        return tuple(self.dims)

    @property
    def macs(self) -> int:
        """Multiply-accumulates of one instance of the layer."""
        return math.prod(self.dims.values())

    def tensor(self, name: str) -> TensorSpec:
        return self.tensors[ROLES.index(name)]

    def tensor_words(self, name: str) -> int:
        """Size of a whole operand in words (for ``I`` the padded input footprint)."""
        return self.tensor(name).words(self.dims)

    def relevant(self, name: str) -> frozenset[str]:
        return frozenset(self.tensor(name).dims)

    @property
    def reduction_dims(self) -> tuple[str, ...]:
        """Dimensions irrelevant to the output (summed over)."""
        out = self.relevant("O")
        return tuple(d for d in self.dims if d not in out)

    def with_repeat(self, repeat: int) -> Layer:
        return Layer(self.name, self.kind, self.dims, self.tensors, repeat, self.attrs)

    def __repr__(self) -> str:
        shape = " ".join(f"{d}={v}" for d, v in self.dims.items())
        rep = f" x{self.repeat}" if self.repeat != 1 else ""
        return f"Layer({self.name!r}, {self.kind}: {shape}{rep})"


def _positive(name: str, **vals: int) -> None:
    for k, v in vals.items():
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"layer {name!r}: {k} must be a positive integer, got {v!r}")


def conv2d(
    name: str,
    *,
    N: int = 1,
    K: int,
    C: int,
    P: int,
    Q: int,
    R: int,
    S: int,
    stride: int | tuple[int, int] = 1,
    dilation: int | tuple[int, int] = 1,
    groups: int = 1,
    repeat: int = 1,
) -> Layer:
    """A 2-D convolution by its *output* size ``P x Q``.

    ``K`` and ``C`` are the total output/input channels; with ``groups > 1`` each group
    maps ``C/groups`` inputs to ``K/groups`` outputs (depthwise: ``groups == C == K``).
    Use :func:`conv2d_from_input` to give the input size and padding instead.
    """
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    _positive(name, N=N, K=K, C=C, P=P, Q=Q, R=R, S=S, stride_h=sh, stride_w=sw,
              dilation_h=dh, dilation_w=dw, groups=groups, repeat=repeat)
    if K % groups or C % groups:
        raise ValueError(f"layer {name!r}: groups={groups} must divide K={K} and C={C}")
    k, c = K // groups, C // groups
    dims: dict[str, int] = {"N": N}
    if groups > 1:
        dims["G"] = groups
    dims.update(K=k, C=c, P=P, Q=Q, R=R, S=S)
    g = (("G", 1),) if groups > 1 else ()
    gax = (g,) if g else ()
    W = TensorSpec("W", (*gax, (("K", 1),), (("C", 1),), (("R", 1),), (("S", 1),)))
    I = TensorSpec("I", ((("N", 1),), *gax, (("C", 1),), (("P", sh), ("R", dh)), (("Q", sw), ("S", dw))))  # noqa: E741
    O = TensorSpec("O", ((("N", 1),), *gax, (("K", 1),), (("P", 1),), (("Q", 1),)))  # noqa: E741
    kind = "depthwise" if groups > 1 and k == 1 and c == 1 else "conv"
    attrs = dict(N=N, K=K, C=C, P=P, Q=Q, R=R, S=S, stride=(sh, sw), dilation=(dh, dw), groups=groups)
    return Layer(name, kind, dims, (W, I, O), repeat, attrs)


def conv_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int = 1) -> int:
    """PyTorch's output-size formula (floor)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv2d_from_input(
    name: str, *, N: int = 1, C: int, H: int, W: int, K: int, R: int, S: int | None = None,
    stride: int = 1, padding: int = 0, dilation: int = 1, groups: int = 1, repeat: int = 1,
) -> Layer:
    """A convolution given its input ``H x W`` and padding (as ``torch.nn.Conv2d``)."""
    S = R if S is None else S
    # Validate before the output-size formula (a zero stride would divide by zero, a zero
    # input with padding would give a positive output size).
    _positive(name, H=H, W=W, R=R, S=S, stride=stride, dilation=dilation)
    if not isinstance(padding, int) or padding < 0:
        raise ValueError(f"layer {name!r}: padding must be a non-negative integer, got {padding!r}")
    P = conv_output_size(H, R, stride, padding, dilation)
    Q = conv_output_size(W, S, stride, padding, dilation)
    if P < 1 or Q < 1:
        raise ValueError(f"layer {name!r}: input {H}x{W} is smaller than the {R}x{S} kernel")
    layer = conv2d(name, N=N, K=K, C=C, P=P, Q=Q, R=R, S=S, stride=stride, dilation=dilation,
                   groups=groups, repeat=repeat)
    attrs = dict(layer.attrs, H=H, W=W, padding=padding)
    return Layer(layer.name, layer.kind, layer.dims, layer.tensors, layer.repeat, attrs)


def gemm(name: str, *, M: int, N: int, K: int, B: int = 1, repeat: int = 1) -> Layer:
    """``C[b, m, n] = sum_k A[b, m, k] * B[b, k, n]`` (``B > 1``: batched matmul)."""
    _positive(name, M=M, N=N, K=K, B=B, repeat=repeat)
    dims: dict[str, int] = {}
    if B > 1:
        dims["B"] = B
    dims.update(M=M, N=N, K=K)
    b = ((("B", 1),),) if B > 1 else ()
    I = TensorSpec("I", (*b, (("M", 1),), (("K", 1),)))  # noqa: E741
    W = TensorSpec("W", (*b, (("K", 1),), (("N", 1),)))
    O = TensorSpec("O", (*b, (("M", 1),), (("N", 1),)))  # noqa: E741
    return Layer(name, "bmm" if B > 1 else "gemm", dims, (W, I, O), repeat,
                 dict(M=M, N=N, K=K, B=B))


def total_macs(layers: Sequence[Layer]) -> int:
    """MACs of a network, repeat counts included."""
    return sum(layer.macs * layer.repeat for layer in layers)
