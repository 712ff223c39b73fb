"""Tensor computations as index expressions, hardware intrinsics, and HW/SW partitioning.

This is the IR of HASCO (Xiao et al., "HASCO: Towards Agile HArdware and Software
CO-design for Tensor Computation", ISCA 2021): a computation is a perfect loop nest whose
body is ``out[f_o(i)] += in_1[f_1(i)] * in_2[f_2(i)] * ...``, every ``f`` affine in the
loop indices ``i``; a *hardware intrinsic* (the operation a spatial accelerator executes,
e.g. a 16x16x16 GEMM) is written the same way. A *partition* says which loops of the
computation the intrinsic executes -- the rest stay outside as software loops that call
the intrinsic on tiles.

IR
    :class:`Computation` -- ``loops`` (name -> extent, in nest order), an ``output``
    :class:`Operand` and one or more ``inputs``. An operand's ``axes`` are affine
    expressions, each a tuple of ``(loop, coefficient)`` pairs (``stride*p + r`` is
    ``(("p", stride), ("r", 1))``); a loop appears in at most one axis of an operand,
    coefficients are positive integers (an intrinsic template may use a *symbol*, a
    string such as ``"sy"``, bound at match time: a CONV intrinsic whose sliding-window
    stride is configurable). Loops absent from the output are reductions.
    An operand's array has the bounding-box shape ``sum_l c_l (E_l - 1) + 1`` per axis
    (the convention of :mod:`mappers.workloads`).

Builders (computations): :func:`gemm`, :func:`gemv` (batched, as HASCO's ``gemv_compute``),
:func:`dot` (batched dot products), :func:`conv2d` (NHWC / RSCK, stride and dilation),
:func:`depthwise` (with a channel multiplier), :func:`mttkrp`, :func:`ttm`, and
:meth:`Computation.from_layer` for any :class:`~mappers.workloads.Layer`.
Intrinsics (HASCO's ``intrinsic_lib``: GEMM, GEMV, DOT, CONV) by
:func:`intrinsic` ``(kind, **sizes)``.

Matching (:func:`match`), HASCO's two steps:

1. **Index matching** -- every intrinsic index is assigned a distinct computation loop of
   the same *signature*: reduction or not, and in how many operands it occurs. This
   prunes the assignments cheaply (backtracking over candidates).
2. **Structure matching** -- the operator trees must agree (an output and the same number
   of multiplied inputs: ``decompositions`` first split a computation with three or more
   inputs into binary stages, as HASCO splits MTTKRP into a TTM and a GEMV stage), and
   for some pairing of the intrinsic's inputs with the computation's (multiplication
   commutes, so both orders are tried), every intrinsic operand's access function,
   with its indices replaced by the assigned loops, must be what the paired computation
   operand's access function reduces to when the loops *not* assigned to the intrinsic
   are held fixed (they only shift the tile's origin):

   * each intrinsic axis corresponds to one computation axis containing exactly the
     assigned loops of that axis, different intrinsic axes to different computation axes
     (the axis order may differ: software lays the tile out in the scratchpad);
   * computation axes not hit contain no assigned loop;
   * a single-loop intrinsic axis matches ``c * loop`` for any ``c`` (software gathers a
     strided slice into a dense tile); a multi-loop axis (a sliding window ``y + r``)
     must have equal coefficients, a symbolic coefficient binding to the computation's.

   Every consistent assignment is one :class:`Partition`.

A partition executes as the loop nest (:meth:`Partition.execute`, literally, with
numpy): for every value of the software loops -- the unassigned loops and the tile loops
``ceil(E / T)`` of the assigned ones, ``T = min(intrinsic size, E)`` -- gather each input
tile into a dense buffer (zero where the tile runs past a loop's extent: padding), call
the intrinsic on it, and add the valid part of its output tile into the output. Padding
is exact when every padded reduction loop occurs alone in some input axis (its padded
iterations then multiply by zero); :attr:`Partition.unsafe_padding` lists the loops for
which that does not hold (the intrinsic size must then divide their extent); none of the
computations here has one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mappers.workloads import Layer, TensorSpec

__all__ = [
    "INTRINSIC_KINDS",
    "Computation",
    "Intrinsic",
    "Operand",
    "Partition",
    "conv2d",
    "decompositions",
    "depthwise",
    "dot",
    "explain_no_match",
    "gemm",
    "gemv",
    "intrinsic",
    "match",
    "match_stages",
    "mttkrp",
    "ttm",
]

Coef = int | str
Axis = tuple[tuple[str, Coef], ...]


def _check_name(what: str, name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"{what} must be a non-empty string, got {name!r}")
    return name


@dataclass(frozen=True)
class Operand:
    """A tensor and its access function: ``axes[a]`` = ``((loop, coefficient), ...)``."""

    name: str
    axes: tuple[Axis, ...]

    def __post_init__(self) -> None:
        _check_name("Operand.name", self.name)
        try:
            axes = tuple(tuple((lp, c) for lp, c in axis) for axis in self.axes)
        except (TypeError, ValueError):
            raise ValueError(f"operand {self.name!r}: axes must be a tuple of axes, each a tuple of "
                             f"(loop, coefficient) pairs, got {self.axes!r}") from None
        for lp, _ in (t for ax in axes for t in ax):
            _check_name(f"operand {self.name!r}: loop name", lp)
        object.__setattr__(self, "axes", axes)
        seen: set[str] = set()
        expr = _render(self.name, axes)
        for axis in axes:
            if not axis:
                raise ValueError(f"malformed index expression {expr}: operand {self.name!r} has an axis "
                                 "that uses no loop")
            for lp, c in axis:
                if lp in seen:
                    raise ValueError(f"malformed index expression {expr}: loop {lp!r} appears twice in "
                                     f"operand {self.name!r}")
                seen.add(lp)
                if isinstance(c, bool) or not (isinstance(c, str) or (isinstance(c, int) and c >= 1)):
                    raise ValueError(f"malformed index expression {expr}: coefficient of {lp!r} in operand "
                                     f"{self.name!r} must be a positive integer or a symbol name, got {c!r}")

    @property
    def loops(self) -> tuple[str, ...]:
        return tuple(lp for axis in self.axes for lp, _ in axis)

    def axis_of(self, loop: str) -> int | None:
        for a, axis in enumerate(self.axes):
            if any(lp == loop for lp, _ in axis):
                return a
        return None

    def shape(self, extents: Mapping[str, int], bindings: Mapping[str, int] | None = None) -> tuple[int, ...]:
        """Bounding-box shape of the array for loop ``extents``."""
        b = bindings or {}
        return tuple(sum(_coef(c, b) * (extents[lp] - 1) for lp, c in axis) + 1 for axis in self.axes)

    def __str__(self) -> str:
        return _render(self.name, self.axes)


def _render(name: str, axes: Sequence[Sequence[tuple[str, Any]]]) -> str:
    """``A[m, 2*p + r]`` for display, whatever the coefficients (also for messages about
    malformed ones)."""
    def term(lp: str, c: Any) -> str:
        return lp if c == 1 else f"{c}*{lp}"

    return f"{name}[{', '.join(' + '.join(term(lp, c) for lp, c in ax) for ax in axes)}]"


def _coef(c: Coef, bindings: Mapping[str, int]) -> int:
    if isinstance(c, str):
        if c not in bindings:
            raise ValueError(f"coefficient symbol {c!r} is not bound (bindings: {dict(bindings)})")
        return int(bindings[c])
    return c


@dataclass(frozen=True)
class Computation:
    """``output += prod(inputs)`` over the loops (see module docstring).

    Attributes:
        name: label.
        loops: loop -> extent (positive integer), in nest order.
        output: the output operand (its loops are the non-reduction loops).
        inputs: the multiplied operands (at least one).
        kind: ``"gemm"``, ``"conv2d"`` ... (free text, for display).
        repeat: identical instances in a network (as :attr:`mappers.workloads.Layer.repeat`).
    """

    name: str
    loops: Mapping[str, int]
    output: Operand
    inputs: tuple[Operand, ...]
    kind: str = ""
    repeat: int = 1

    def __post_init__(self) -> None:
        _check_name("Computation.name", self.name)
        loops = dict(self.loops)
        object.__setattr__(self, "loops", loops)
        object.__setattr__(self, "inputs", tuple(self.inputs))
        for lp, e in loops.items():
            if isinstance(e, bool) or not isinstance(e, int | np.integer) or e < 1:
                raise ValueError(f"computation {self.name!r}: extent of loop {lp!r} must be a "
                                 f"positive integer, got {e!r}")
            loops[lp] = int(e)
        if not self.inputs:
            raise ValueError(f"computation {self.name!r}: needs at least one input operand")
        expr = self.expression()
        names = [self.output.name] + [o.name for o in self.inputs]
        if len(set(names)) != len(names):
            raise ValueError(f"malformed index expression {expr} of computation {self.name!r}: operand "
                             f"names must be distinct, got {names}")
        used: set[str] = set()
        for op in self.operands:
            for lp in op.loops:
                if lp not in loops:
                    raise ValueError(f"malformed index expression {expr} of computation {self.name!r}: "
                                     f"operand {op.name!r} uses unknown loop {lp!r} (loops: {list(loops)})")
                used.add(lp)
        unused = [lp for lp in loops if lp not in used]
        if unused:
            raise ValueError(f"malformed index expression {expr} of computation {self.name!r}: loops "
                             f"{unused} are used by no operand")
        if isinstance(self.repeat, bool) or not isinstance(self.repeat, int) or self.repeat < 1:
            raise ValueError(f"computation {self.name!r}: repeat must be a positive integer, got {self.repeat!r}")

    # -- views -------------------------------------------------------------------------
    @property
    def operands(self) -> tuple[Operand, ...]:
        return (self.output, *self.inputs)

    def operand(self, name: str) -> Operand:
        for op in self.operands:
            if op.name == name:
                return op
        raise KeyError(f"computation {self.name!r} has no operand {name!r}")

    @property
    def reduction_loops(self) -> tuple[str, ...]:
        out = set(self.output.loops)
        return tuple(lp for lp in self.loops if lp not in out)

    @property
    def macs(self) -> int:
        """Multiply-accumulates of one instance (one multiply chain per iteration)."""
        return math.prod(self.loops.values())

    def shape(self, operand: str, bindings: Mapping[str, int] | None = None) -> tuple[int, ...]:
        return self.operand(operand).shape(self.loops, bindings)

    def with_extents(self, extents: Mapping[str, int]) -> Computation:
        bad = set(extents) - set(self.loops)
        if bad:
            raise ValueError(f"computation {self.name!r}: unknown loops {sorted(bad)}")
        return Computation(self.name, {lp: int(extents.get(lp, e)) for lp, e in self.loops.items()},
                           self.output, self.inputs, self.kind, self.repeat)

    def signature(self, loop: str) -> tuple[bool, int]:
        """(in the output, number of inputs using it): what index matching compares."""
        return (loop in self.output.loops, sum(loop in op.loops for op in self.inputs))

    def expression(self) -> str:
        """The index expression, e.g. ``C[m, n] += A[m, k] * B[k, n]``."""
        return f"{self.output} += {' * '.join(str(o) for o in self.inputs)}"

    def __str__(self) -> str:
        red = self.reduction_loops
        rhs = " * ".join(str(o) for o in self.inputs)
        return f"{self.output} += {rhs}  (sum over {', '.join(red) or 'nothing'}; {self.loops})"

    # -- literal semantics -------------------------------------------------------------
    def execute(self, arrays: Mapping[str, np.ndarray], bindings: Mapping[str, int] | None = None) -> np.ndarray:
        """The output array computed by literally enumerating every loop iteration
        (vectorized over the whole iteration space: for tiny extents only)."""
        b = bindings or {}
        for op in self.inputs:
            if op.name not in arrays:
                raise ValueError(f"execute: missing input array {op.name!r}")
            want = op.shape(self.loops, b)
            if tuple(np.shape(arrays[op.name])) != want:
                raise ValueError(f"execute: array {op.name!r} has shape {np.shape(arrays[op.name])}, "
                                 f"expected {want}")
        names = list(self.loops)
        grids = np.meshgrid(*[np.arange(self.loops[n]) for n in names], indexing="ij", sparse=True)
        idx = dict(zip(names, grids))

        def coords(op: Operand) -> tuple[np.ndarray, ...]:
            return tuple(sum(_coef(c, b) * idx[lp] for lp, c in axis) for axis in op.axes)

        prod: Any = 1
        for op in self.inputs:
            prod = prod * np.asarray(arrays[op.name])[coords(op)]
        dtype = np.result_type(*[np.asarray(arrays[o.name]).dtype for o in self.inputs])
        out = np.zeros(self.output.shape(self.loops, b), dtype=dtype)
        full = np.broadcast_to(prod, tuple(self.loops[n] for n in names))
        oc = tuple(np.broadcast_to(c, full.shape) for c in coords(self.output))
        np.add.at(out, oc, full)
        return out

    # -- conversions -------------------------------------------------------------------
    @classmethod
    def from_layer(cls, layer: Layer) -> Computation:
        """A :class:`~mappers.workloads.Layer` (``O += I * W``) as a computation; every
        dimension becomes a loop, size-1 ones included."""
        def op(t: TensorSpec) -> Operand:
            return Operand(t.name, t.axes)

        return cls(layer.name, dict(layer.dims), op(layer.tensor("O")),
                   (op(layer.tensor("I")), op(layer.tensor("W"))), layer.kind, layer.repeat)

    def shape_key(self) -> tuple:
        """What identifies the computation's schedule space: loops, output and inputs
        (not its name, kind or repeat)."""
        return (tuple(self.loops.items()), self.output, self.inputs)

    def to_layer(self, a: str | None = None, b: str | None = None) -> Layer:
        """This (two-input) computation as a :class:`~mappers.workloads.Layer` for the
        loop-nest cost model: ``I`` = input ``a``, ``W`` = input ``b`` (default: the
        inputs in order), ``O`` = the output. Symbolic coefficients are not allowed."""
        if len(self.inputs) != 2:
            raise ValueError(f"computation {self.name!r}: to_layer needs exactly two inputs, "
                             f"has {len(self.inputs)} (split it with decompositions())")
        a = a or self.inputs[0].name
        b = b or self.inputs[1].name
        if {a, b} != {o.name for o in self.inputs}:
            raise ValueError(f"computation {self.name!r}: a={a!r}, b={b!r} must name its two inputs")
        for o in self.operands:
            if any(isinstance(c, str) for ax in o.axes for _, c in ax):
                raise ValueError(f"computation {self.name!r}: symbolic coefficients cannot be lowered")

        def spec(role: str, o: Operand) -> TensorSpec:
            return TensorSpec(role, tuple(tuple((lp, int(c)) for lp, c in ax) for ax in o.axes))

        tensors = (spec("W", self.operand(b)), spec("I", self.operand(a)), spec("O", self.output))
        return Layer(self.name, self.kind or "tensor", dict(self.loops), tensors, self.repeat,
                     {"computation": str(self)})


# ------------------------------------------------------------------------ computations


def _axes(*specs: Any) -> tuple[Axis, ...]:
    """``"m"`` -> ``(("m", 1),)``; a tuple of pairs stays as is."""
    return tuple(((s, 1),) if isinstance(s, str) else tuple(s) for s in specs)


def _pos(name: str, **vals: Any) -> None:
    for k, v in vals.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}: {k} must be a positive integer, got {v!r}")


def gemm(M: int, N: int, K: int, name: str = "gemm", repeat: int = 1) -> Computation:
    """``C[m, n] += A[m, k] * B[k, n]``."""
    _pos("gemm", M=M, N=N, K=K)
    return Computation(name, {"m": M, "n": N, "k": K}, Operand("C", _axes("m", "n")),
                       (Operand("A", _axes("m", "k")), Operand("B", _axes("k", "n"))), "gemm", repeat)


def gemv(M: int, L: int, B: int = 1, name: str = "gemv", repeat: int = 1) -> Computation:
    """Batched GEMV ``E[m, b] += C[b, m, l] * D[b, l]`` (HASCO's ``gemv_compute``; plain
    GEMV ``y[m] += A[m, l] x[l]`` when ``B == 1``, the ``b`` loop dropped)."""
    _pos("gemv", M=M, L=L, B=B)
    if B == 1:
        return Computation(name, {"m": M, "l": L}, Operand("E", _axes("m")),
                           (Operand("C", _axes("m", "l")), Operand("D", _axes("l"))), "gemv", repeat)
    return Computation(name, {"b": B, "m": M, "l": L}, Operand("E", _axes("m", "b")),
                       (Operand("C", _axes("b", "m", "l")), Operand("D", _axes("b", "l"))), "gemv", repeat)


def dot(N: int, L: int, name: str = "dot", repeat: int = 1) -> Computation:
    """Batched dot products ``c[n] += a[n, l] * b[n, l]``."""
    _pos("dot", N=N, L=L)
    return Computation(name, {"n": N, "l": L}, Operand("c", _axes("n")),
                       (Operand("a", _axes("n", "l")), Operand("b", _axes("n", "l"))), "dot", repeat)


def conv2d(N: int, K: int, C: int, P: int, Q: int, R: int, S: int, stride: int = 1,
           dilation: int = 1, name: str = "conv2d", repeat: int = 1) -> Computation:
    """``O[n, p, q, k] += I[n, st*p + dl*r, st*q + dl*s, c] * W[r, s, c, k]`` (NHWC input,
    RSCK filter, HASCO's layout), by output size ``P x Q``."""
    _pos("conv2d", N=N, K=K, C=C, P=P, Q=Q, R=R, S=S, stride=stride, dilation=dilation)
    st, dl = stride, dilation
    return Computation(
        name, {"n": N, "k": K, "c": C, "p": P, "q": Q, "r": R, "s": S},
        Operand("O", _axes("n", "p", "q", "k")),
        (Operand("I", _axes("n", (("p", st), ("r", dl)), (("q", st), ("s", dl)), "c")),
         Operand("W", _axes("r", "s", "c", "k"))), "conv2d", repeat)


def depthwise(G: int, P: int, Q: int, R: int, S: int, multiplier: int = 1, N: int = 1, stride: int = 1,
              name: str = "depthwise", repeat: int = 1) -> Computation:
    """Depthwise convolution ``O[n, p, q, g, m] += I[n, st*p + r, st*q + s, g] * W[r, s, g, m]``
    (``m``, the channel multiplier, and ``n`` only when > 1)."""
    _pos("depthwise", G=G, P=P, Q=Q, R=R, S=S, multiplier=multiplier, N=N, stride=stride)
    loops = ({"n": N} if N > 1 else {}) | {"g": G} | ({"m": multiplier} if multiplier > 1 else {}) | \
        {"p": P, "q": Q, "r": R, "s": S}
    n = ("n",) if N > 1 else ()
    m = ("m",) if multiplier > 1 else ()
    return Computation(
        name, loops, Operand("O", _axes(*n, "p", "q", "g", *m)),
        (Operand("I", _axes(*n, (("p", stride), ("r", 1)), (("q", stride), ("s", 1)), "g")),
         Operand("W", _axes("r", "s", "g", *m))), "depthwise", repeat)


def mttkrp(M: int, N: int, K: int, L: int, name: str = "mttkrp", repeat: int = 1) -> Computation:
    """``D[m, n] += A[m, k, l] * B[n, k] * C[n, l]`` (HASCO's ``mttkrp_compute``)."""
    _pos("mttkrp", M=M, N=N, K=K, L=L)
    return Computation(name, {"m": M, "n": N, "k": K, "l": L}, Operand("D", _axes("m", "n")),
                       (Operand("A", _axes("m", "k", "l")), Operand("B", _axes("n", "k")),
                        Operand("C", _axes("n", "l"))), "mttkrp", repeat)


def ttm(M: int, N: int, K: int, L: int, name: str = "ttm", repeat: int = 1) -> Computation:
    """Tensor-times-matrix ``C[m, n, k] += A[m, n, l] * B[l, k]`` (HASCO's ``ttm_compute``)."""
    _pos("ttm", M=M, N=N, K=K, L=L)
    return Computation(name, {"m": M, "n": N, "k": K, "l": L}, Operand("C", _axes("m", "n", "k")),
                       (Operand("A", _axes("m", "n", "l")), Operand("B", _axes("l", "k"))), "ttm", repeat)


KERNELS = {"gemm": gemm, "gemv": gemv, "dot": dot, "conv2d": conv2d, "depthwise": depthwise,
           "mttkrp": mttkrp, "ttm": ttm}
"""Computation builders by name."""


# ------------------------------------------------------------------------ intrinsics

INTRINSIC_KINDS = ("GEMM", "GEMV", "DOT", "CONV")
"""HASCO's ``intrinsic_lib``."""


@dataclass(frozen=True)
class Intrinsic:
    """A hardware intrinsic: ``kind`` and its computation template (extents = its size)."""

    kind: str
    computation: Computation

    @property
    def indices(self) -> tuple[str, ...]:
        return tuple(self.computation.loops)

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.computation.loops)

    def with_sizes(self, sizes: Mapping[str, int]) -> Intrinsic:
        return Intrinsic(self.kind, self.computation.with_extents(sizes))

    def __str__(self) -> str:
        return f"{self.kind}{tuple(self.sizes.values())}: {self.computation}"


def intrinsic(kind: str, **sizes: int) -> Intrinsic:
    """A HASCO intrinsic of the given size (every index defaults to 1):

    * ``GEMM``: ``c[i, j] += a[i, k] * b[k, j]`` (indices ``i, j, k``);
    * ``GEMV``: ``c[i] += a[i, j] * b[j]`` (``i, j``);
    * ``DOT`` (batched): ``c[n] += a[n, i] * b[n, i]`` (``n, i``);
    * ``CONV``: ``o[n, y, x, k] += a[n, sy*y + dy*r, sx*x + dx*s, c] * b[r, s, c, k]``
      (``n, y, x, k, r, s, c``; NHWC/RSCK as HASCO's; stride/dilation symbols ``sy, dy,
      sx, dx`` are bound by the matched computation: a strided window engine).
    """
    k = kind.upper() if isinstance(kind, str) else kind
    if k == "GEMM":
        loops = {"i": 1, "j": 1, "k": 1}
        comp = Computation("GEMM", loops, Operand("c", _axes("i", "j")),
                           (Operand("a", _axes("i", "k")), Operand("b", _axes("k", "j"))), "GEMM")
    elif k == "GEMV":
        comp = Computation("GEMV", {"i": 1, "j": 1}, Operand("c", _axes("i")),
                           (Operand("a", _axes("i", "j")), Operand("b", _axes("j"))), "GEMV")
    elif k == "DOT":
        comp = Computation("DOT", {"n": 1, "i": 1}, Operand("c", _axes("n")),
                           (Operand("a", _axes("n", "i")), Operand("b", _axes("n", "i"))), "DOT")
    elif k == "CONV":
        comp = Computation(
            "CONV", {"n": 1, "y": 1, "x": 1, "k": 1, "r": 1, "s": 1, "c": 1},
            Operand("o", _axes("n", "y", "x", "k")),
            (Operand("a", _axes("n", (("y", "sy"), ("r", "dy")), (("x", "sx"), ("s", "dx")), "c")),
             Operand("b", _axes("r", "s", "c", "k"))), "CONV")
    else:
        raise ValueError(f"unknown intrinsic kind {kind!r}; choices: {list(INTRINSIC_KINDS)}")
    unknown = set(sizes) - set(comp.loops)
    if unknown:
        raise ValueError(f"intrinsic {k}: unknown indices {sorted(unknown)} (indices: {list(comp.loops)})")
    return Intrinsic(k, comp.with_extents(sizes))


# ------------------------------------------------------------------------ partitions


@dataclass(frozen=True)
class OperandMatch:
    """Intrinsic operand ``intrinsic`` is the tile of computation operand ``computation``;
    ``axes[a]`` is the computation axis of intrinsic axis ``a``, ``scales[a]`` the stride
    of a single-loop axis in the computation (1 for multi-loop axes)."""

    intrinsic: str
    computation: str
    axes: tuple[int, ...]
    scales: tuple[int, ...]


@dataclass(frozen=True)
class Partition:
    """One HW/SW partition of ``computation`` onto ``intrinsic`` (see module docstring).

    Attributes:
        index_map: ``(intrinsic index, computation loop)`` pairs, in intrinsic order.
        operands: how each intrinsic operand (output first) maps onto the computation's.
        bindings: values of the intrinsic's symbolic coefficients.
    """

    computation: Computation
    intrinsic: Intrinsic
    index_map: tuple[tuple[str, str], ...]
    operands: tuple[OperandMatch, ...]
    bindings: tuple[tuple[str, int], ...] = ()
    unsafe_padding: tuple[str, ...] = field(default=())

    # -- views -------------------------------------------------------------------------
    @property
    def loop_of(self) -> dict[str, str]:
        """intrinsic index -> computation loop."""
        return dict(self.index_map)

    @property
    def index_of(self) -> dict[str, str]:
        """computation loop -> intrinsic index (assigned loops only)."""
        return {lp: i for i, lp in self.index_map}

    @property
    def hardware_loops(self) -> tuple[str, ...]:
        """Computation loops executed inside the intrinsic (tiled to its size)."""
        inside = set(self.index_of)
        return tuple(lp for lp in self.computation.loops if lp in inside)

    @property
    def software_loops(self) -> tuple[str, ...]:
        """Computation loops left entirely to software."""
        inside = set(self.index_of)
        return tuple(lp for lp in self.computation.loops if lp not in inside)

    def operand_of(self, intrinsic_operand: str) -> str:
        for m in self.operands:
            if m.intrinsic == intrinsic_operand:
                return m.computation
        raise KeyError(intrinsic_operand)

    @property
    def key(self) -> str:
        """A short canonical label, e.g. ``GEMM[i=k,j=q,k=c|a=W,b=I]``."""
        idx = ",".join(f"{i}={lp}" for i, lp in self.index_map)
        ops = ",".join(f"{m.intrinsic}={m.computation}" for m in self.operands[1:])
        return f"{self.intrinsic.kind}[{idx}|{ops}]"

    def __str__(self) -> str:
        return self.key

    # -- tiling ------------------------------------------------------------------------
    def tiles(self, sizes: Mapping[str, int] | None = None) -> dict[str, tuple[int, int]]:
        """Computation loop -> ``(tile, number of tiles)``: assigned loops are tiled to
        ``min(intrinsic size, extent)`` (the last tile padded), the others run whole."""
        sz = dict(self.intrinsic.sizes)
        sz.update(sizes or {})
        idx = self.index_of
        out = {}
        for lp, e in self.computation.loops.items():
            if lp in idx:
                t = min(int(sz[idx[lp]]), e)
                if t < 1:
                    raise ValueError(f"partition {self.key}: intrinsic size of {idx[lp]!r} must be >= 1")
                out[lp] = (t, -(-e // t))
            else:
                out[lp] = (1, e)
        return out

    def calls(self, sizes: Mapping[str, int] | None = None) -> int:
        """Intrinsic calls the software issues (product of the tile counts)."""
        return math.prod(n for _, n in self.tiles(sizes).values())

    def padded_macs(self, sizes: Mapping[str, int] | None = None) -> int:
        """MACs executed including padding (calls x the tile's MACs)."""
        return math.prod(t * n for t, n in self.tiles(sizes).values())

    # -- literal execution ----------------------------------------------------------------
    def execute(self, arrays: Mapping[str, np.ndarray], sizes: Mapping[str, int] | None = None) -> np.ndarray:
        """Run the partition's loop nest literally: software loops in Python, each tile
        gathered into a dense buffer, the intrinsic executed on it by
        :meth:`Computation.execute`, its output tile added back (see module docstring).
        For tiny extents (tests)."""
        comp = self.computation
        tiles = self.tiles(sizes)
        for lp in self.unsafe_padding:
            t, _ = tiles[lp]
            if comp.loops[lp] % t:
                raise ValueError(f"partition {self.key}: loop {lp!r} cannot be padded (it occurs alone in no "
                                 f"input axis); its tile {t} must divide its extent {comp.loops[lp]}")
        idx_of = self.index_of
        binds = dict(self.bindings)
        tile_sizes = {i: tiles[lp][0] for i, lp in self.index_map}
        intr = self.intrinsic.computation.with_extents(tile_sizes)
        out_shape = comp.shape(comp.output.name)
        result: np.ndarray | None = None
        sw = list(comp.loops)
        ranges = [range(tiles[lp][1]) for lp in sw]
        for values in itertools.product(*ranges):
            # matched loops: value = tile number -> origin; others: the loop value itself
            origin = {lp: (v * tiles[lp][0] if lp in idx_of else v) for lp, v in zip(sw, values)}
            bufs = {}
            for m in self.operands[1:]:
                bufs[m.intrinsic] = self._gather(m, arrays[m.computation], origin, tiles, intr, binds)
            res = intr.execute(bufs, binds)
            if result is None:
                result = np.zeros(out_shape, dtype=res.dtype)
            self._scatter(self.operands[0], result, res, origin, tiles, intr, binds)
        assert result is not None
        return result

    def _coords(self, m: OperandMatch, origin: Mapping[str, int], tiles: Mapping[str, tuple[int, int]],
                intr: Computation, binds: Mapping[str, int]) -> tuple[list[np.ndarray], np.ndarray]:
        """Computation coordinates (one array per computation axis, broadcast over the
        intrinsic tile) and the validity mask of the tile's elements."""
        comp = self.computation
        c_op = comp.operand(m.computation)
        h_op = intr.operand(m.intrinsic)
        shape = h_op.shape(intr.loops, binds)
        nd = len(shape)
        coords: list[Any] = [None] * len(c_op.axes)
        valid = np.ones(shape, dtype=bool)
        for a, b in enumerate(m.axes):
            e = np.arange(shape[a]).reshape([-1 if j == a else 1 for j in range(nd)])
            axis = c_op.axes[b]
            offset = sum(int(c) * origin[lp] for lp, c in axis)
            coords[b] = offset + m.scales[a] * e
            if len(h_op.axes[a]) == 1:  # one loop: its padded iterations are invalid
                (lp,) = [lp for lp, _ in axis if lp in self.index_of]
                valid &= origin[lp] + e < comp.loops[lp]
        for b, axis in enumerate(c_op.axes):
            if coords[b] is None:  # held fixed by the software loops
                coords[b] = np.full([1] * nd, sum(int(c) * origin[lp] for lp, c in axis))
        full = comp.shape(m.computation)
        for b, cb in enumerate(coords):
            valid &= (cb >= 0) & (cb < full[b])
        return [np.broadcast_to(cb, shape) for cb in coords], valid

    def _gather(self, m: OperandMatch, array: np.ndarray, origin: Mapping[str, int],
                tiles: Mapping[str, tuple[int, int]], intr: Computation, binds: Mapping[str, int]) -> np.ndarray:
        coords, valid = self._coords(m, origin, tiles, intr, binds)
        safe = tuple(np.where(valid, c, 0) for c in coords)
        return np.where(valid, np.asarray(array)[safe], 0).astype(np.asarray(array).dtype)

    def _scatter(self, m: OperandMatch, out: np.ndarray, res: np.ndarray, origin: Mapping[str, int],
                 tiles: Mapping[str, tuple[int, int]], intr: Computation, binds: Mapping[str, int]) -> None:
        coords, valid = self._coords(m, origin, tiles, intr, binds)
        np.add.at(out, tuple(c[valid] for c in coords), res[valid])


# ------------------------------------------------------------------------ matching


def _candidates(comp: Computation, intr: Computation) -> dict[str, list[str]]:
    """Step 1 (index matching): computation loops with each intrinsic index's signature."""
    return {i: [lp for lp in comp.loops if comp.signature(lp) == intr.signature(i)] for i in intr.loops}


def _assignments(cands: Mapping[str, list[str]], order: Sequence[str]) -> Iterator[dict[str, str]]:
    """Injective assignments index -> loop (backtracking, deterministic order)."""
    def rec(k: int, cur: dict[str, str], used: set[str]) -> Iterator[dict[str, str]]:
        if k == len(order):
            yield dict(cur)
            return
        i = order[k]
        for lp in cands[i]:
            if lp not in used:
                cur[i] = lp
                used.add(lp)
                yield from rec(k + 1, cur, used)
                used.discard(lp)
                del cur[i]

    yield from rec(0, {}, set())


def _match_operand(h: Operand, c: Operand, sigma: Mapping[str, str],
                   binds: dict[str, int]) -> OperandMatch | None:
    """Step 2 for one operand pair: the axis correspondence, or None. Extends ``binds``."""
    assigned = set(sigma.values())
    axes, scales = [], []
    for h_axis in h.axes:
        loops = [sigma[i] for i, _ in h_axis]
        b = c.axis_of(loops[0])
        if b is None or b in axes:
            return None
        c_axis = c.axes[b]
        restricted = {lp: int(cf) for lp, cf in c_axis if lp in assigned}
        if set(restricted) != set(loops):
            return None
        if len(h_axis) == 1:
            scales.append(restricted[loops[0]])
        else:
            for (_i, hc), lp in zip(h_axis, loops):
                want = restricted[lp]
                if isinstance(hc, str):
                    if binds.setdefault(hc, want) != want:
                        return None
                elif hc != want:
                    return None
            scales.append(1)
        axes.append(b)
    for b, c_axis in enumerate(c.axes):  # every assigned loop of c is covered
        if b not in axes and any(lp in assigned for lp, _ in c_axis):
            return None
    return OperandMatch(h.name, c.name, tuple(axes), tuple(scales))


def _unsafe_padding(comp: Computation, sigma: Mapping[str, str]) -> tuple[str, ...]:
    out = []
    for lp in sigma.values():
        if lp in comp.output.loops:
            continue
        alone = any(len(comp.inputs[j].axes[a]) == 1
                    for j, op in enumerate(comp.inputs) for a in [op.axis_of(lp)] if a is not None)
        if not alone:
            out.append(lp)
    return tuple(out)


def _check_concrete(comp: Computation, intr: Intrinsic) -> None:
    """A computation's coefficients must be integers (symbols belong to intrinsic
    templates); the error names the expression and the intrinsic tried."""
    for op in comp.operands:
        for axis in op.axes:
            for lp, c in axis:
                if isinstance(c, str):
                    raise ValueError(
                        f"malformed index expression {comp.expression()} of computation {comp.name!r}: "
                        f"operand {op.name!r} gives loop {lp!r} the symbolic coefficient {c!r}, which only an "
                        f"intrinsic template may use (matching it onto the {intr.kind} intrinsic "
                        f"{intr.computation.expression()})")


def explain_no_match(comp: Computation, intr: Intrinsic) -> str:
    """Why ``comp`` has no partition onto ``intr``: a message naming the computation's
    index expression, the intrinsic's and the matching step that failed."""
    h = intr.computation
    head = (f"computation {comp.name!r} ({comp.expression()}) has no partition onto the {intr.kind} "
            f"intrinsic ({h.expression()})")
    if len(comp.inputs) != len(h.inputs):
        return (f"{head}: it multiplies {len(comp.inputs)} inputs, the intrinsic {len(h.inputs)} "
                "(split it into two-input stages with decompositions())")
    cands = _candidates(comp, h)
    empty = [i for i, c in cands.items() if not c]
    if empty:
        def sig(i: str) -> str:
            out, n = h.signature(i)
            return f"{'an output' if out else 'a reduction'} loop used by {n} input(s)"

        return (f"{head}: index matching fails, no loop has the signature of intrinsic index "
                + ", ".join(f"{i!r} ({sig(i)})" for i in empty))
    if next(_assignments(cands, list(h.loops)), None) is None:
        return f"{head}: index matching fails, the intrinsic's indices need distinct loops and too few qualify"
    return (f"{head}: every index assignment fails structure matching (the access functions of the "
            "operands do not reduce to the intrinsic's)")


def match(comp: Computation, intr: Intrinsic) -> list[Partition]:
    """Every partition of ``comp`` onto ``intr`` (see module docstring), in a
    deterministic order (index assignments in the computation's loop order, then the
    input pairings). A computation whose number of inputs differs from the intrinsic's
    has none (split it first: :func:`match_stages`); :func:`explain_no_match` says why
    a computation has none.

    Raises:
        ValueError: a computation coefficient is a symbol (the message names the
            expression and the intrinsic).
    """
    _check_concrete(comp, intr)
    h = intr.computation
    if len(comp.inputs) != len(h.inputs):
        return []
    out: list[Partition] = []
    order = list(h.loops)
    for sigma in _assignments(_candidates(comp, h), order):
        for perm in itertools.permutations(range(len(comp.inputs))):
            binds: dict[str, int] = {}
            m_out = _match_operand(h.output, comp.output, sigma, binds)
            if m_out is None:
                continue
            ms = [m_out]
            for hi, ci in zip(h.inputs, perm):
                m = _match_operand(hi, comp.inputs[ci], sigma, binds)
                if m is None:
                    break
                ms.append(m)
            else:
                out.append(Partition(comp, intr, tuple((i, sigma[i]) for i in order), tuple(ms),
                                     tuple(sorted(binds.items())), _unsafe_padding(comp, sigma)))
    return out


# ------------------------------------------------------------------------ n-ary split


def decompositions(comp: Computation) -> list[tuple[Computation, ...]]:
    """Ways to evaluate ``comp`` as a chain of two-input stages (structure matching of
    the operator tree). A two-input computation is its own single stage. With ``n > 2``
    inputs, a pair ``(X, Y)`` is contracted first into a temporary indexed by the loops
    of ``X`` and ``Y`` that the output or another input still needs (summing the rest),
    recursively: ``[(stage_1, ..., stage_last)]``, temporaries named ``T1, T2, ...``."""
    if len(comp.inputs) <= 2:
        return [(comp,)]
    out: list[tuple[Computation, ...]] = []
    n = len(comp.inputs)
    for i, j in itertools.combinations(range(n), 2):
        x, y = comp.inputs[i], comp.inputs[j]
        rest = [op for k, op in enumerate(comp.inputs) if k not in (i, j)]
        need = set(comp.output.loops).union(*[op.loops for op in rest])
        keep = [lp for lp in comp.loops if lp in need and (lp in x.loops or lp in y.loops)]
        summed = [lp for lp in comp.loops if (lp in x.loops or lp in y.loops) and lp not in need]
        tname = f"T{len(comp.inputs) - 1}"
        while tname in {o.name for o in comp.operands}:
            tname += "_"
        temp = Operand(tname, _axes(*keep))
        stage1 = Computation(f"{comp.name}.stage{tname}", {lp: comp.loops[lp] for lp in keep + summed},
                             temp, (x, y), f"{comp.kind}-stage", comp.repeat)
        rest_loops = [lp for lp in comp.loops if lp not in summed]
        remaining = Computation(f"{comp.name}.after{tname}", {lp: comp.loops[lp] for lp in rest_loops},
                                comp.output, (temp, *rest), comp.kind, comp.repeat)
        for tail in decompositions(remaining):
            out.append((stage1, *tail))
    return out


def match_stages(comp: Computation, intr: Intrinsic) -> list[tuple[Partition, ...]]:
    """Partitions of every stage of every decomposition of ``comp`` onto ``intr``: one
    tuple of partitions per combination, only for decompositions whose every stage
    matches (the accelerator has one intrinsic). A two-input computation gives
    ``[(p,) for p in match(comp, intr)]``."""
    out: list[tuple[Partition, ...]] = []
    for stages in decompositions(comp):
        per_stage = [match(s, intr) for s in stages]
        if all(per_stage):
            out.extend(itertools.product(*per_stage))
    return out


def execute_stages(plan: Sequence[Partition], arrays: Mapping[str, np.ndarray],
                   sizes: Mapping[str, int] | None = None) -> np.ndarray:
    """Run a multi-stage plan literally: each stage's output feeds the later stages."""
    env = dict(arrays)
    res: np.ndarray | None = None
    for p in plan:
        res = p.execute(env, sizes)
        env[p.computation.output.name] = res
    assert res is not None
    return res

