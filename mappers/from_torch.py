"""Extract the MAC layers of a real ``torch.nn.Module`` from one forward pass.

:func:`from_torch` runs ``module(example_input)`` once under ``torch.no_grad()`` inside a
:class:`torch.overrides.TorchFunctionMode` that sees every torch function call with its
actual runtime arguments, and turns the multiply-accumulate operators into
:class:`~mappers.workloads.Layer` objects:

* ``torch.nn.functional.conv2d`` (= ``torch.conv2d``): weight shape, stride, padding
  (int, pair, ``"valid"`` or ``"same"``), dilation and groups ->
  :func:`~mappers.workloads.conv2d_from_input` (or :func:`~mappers.workloads.conv2d`
  with the input size in ``attrs`` when stride/padding/dilation differ between the two
  spatial axes or ``"same"`` padding is asymmetric);
* ``torch.nn.functional.linear``: a GEMM with ``K = in_features``, ``N = out_features``
  and all leading dimensions of the input flattened into ``M``;
* ``torch.matmul`` / ``Tensor.matmul`` / ``@`` / ``torch.linalg.matmul``, ``torch.mm``,
  ``torch.bmm``, ``torch.addmm``, ``torch.baddbmm``, ``torch.mv``, ``torch.dot`` (and
  their ``Tensor`` methods): see *matmul flattening rule* below;
* ``torch.nn.functional.scaled_dot_product_attention``: expanded into its two batched
  matmuls, ``<name>.qk`` (``Q K^T``: ``B, M=L, K=E, N=S``) and ``<name>.av`` (weights x
  ``V``: ``B, M=L, K=S, N=Ev``), ``B`` = the product of the broadcast batch dimensions;
* ``torch.nn.functional.multi_head_attention_forward`` (what ``nn.MultiheadAttention``,
  hence ``nn.TransformerEncoderLayer`` / ``nn.Transformer``, calls): expanded from its
  arguments into ``q_proj``, ``k_proj``, ``v_proj`` (GEMMs; the packed ``in_proj_weight``
  is three logical projections), ``qk``, ``av`` (batched matmuls with
  ``B = batch * num_heads``) and ``out_proj``. This expansion is needed because that
  function is a Python-level torch function: a torch-function mode receives it as one
  call and runs its body with the mode switched off, so the ``linear``/``bmm`` calls
  inside would otherwise be invisible.

**Matmul flattening rule** (``A @ B`` with ``A: (*a, m, k)``, ``B: (*b, k, n)``; a 1-D
``A`` is a row ``(1, k)``, a 1-D ``B`` a column ``(k, 1)``, as in ``torch.matmul``):

* if ``B`` has no batch dimensions (it is 1-D or 2-D) it is shared by every batch entry
  of ``A`` and ``A``'s batch dimensions fold into ``M``: ``(2,3,4,5) @ (5,6)`` is a GEMM
  ``M=24, K=5, N=6`` (what ``torch.matmul`` itself does, and the same as ``linear``);
* otherwise it is a batched matmul with ``B`` = the product of the *broadcast* batch
  shape: ``(2,3,4,5) @ (3,5,6)`` and ``(2,1,4,5) @ (3,5,6)`` are ``B=6, M=4, K=5, N=6``;
  ``(4,5) @ (2,5,6)`` is ``B=2, M=4, K=5, N=6``.

Operations with no multiply-accumulates (any size 0) are skipped.

**Fused fast paths.** In eval mode ``nn.MultiheadAttention`` and
``nn.TransformerEncoderLayer`` / ``nn.TransformerEncoder`` may call fused kernels
(``torch._native_multi_head_attention``, ``torch._transformer_encoder_layer_fwd``) that
hide the GEMMs. :func:`from_torch` disables them for the duration of the forward with
``torch.backends.mha.set_fastpath_enabled(False)`` (restored afterwards; it is a
process-wide flag). PyTorch also skips them whenever a torch-function mode is active
("some Tensor argument has_torch_function"), so they are doubly excluded; should a fused
kernel still run it is reported as not modelled (see below). The module's
``training`` flags are not touched: eval-mode modules are traced in eval mode.

**Not modelled.** Other MAC-bearing operators (``conv1d``, ``conv3d``, transposed
convolutions, ``bilinear``, ``einsum``, ``tensordot``, ``addbmm``, ``addmv``, the fused
attention kernels ...) are ignored with one :class:`UnmodelledOpWarning` per operator
per call. Element-wise operators, normalisation, pooling, softmax are not MAC layers and
are ignored silently.

**Names.** Forward pre-hooks keep a stack of the qualified names of the modules being
executed; a layer is named after the innermost one (``"layer1.0.conv2"``,
``"self_attn.q_proj"``). When one module invocation executes several MAC operators the
second and later ones get ``"<module>.<op><i>"`` (``"attn.matmul2"``). Operators outside
any named submodule are named ``"op<N>"`` (``N`` counts the recorded operator calls from
0).
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from mappers.workloads import Layer, conv2d, conv2d_from_input, conv_output_size, gemm
from mappers.zoo import merge_repeats as _merge_repeats

__all__ = ["UnmodelledOpWarning", "conv2d_layer", "from_torch", "gemm_layer", "matmul_dims"]


class UnmodelledOpWarning(UserWarning):
    """A multiply-accumulate operator that :func:`from_torch` does not turn into a layer."""


# ------------------------------------------------------------------------ shape rules

def matmul_dims(a_shape: Sequence[int], b_shape: Sequence[int]) -> dict[str, int]:
    """``{"B", "M", "K", "N"}`` of ``torch.matmul(A, B)`` by the module's flattening rule."""
    a, b = [int(x) for x in a_shape], [int(x) for x in b_shape]
    if not a or not b:
        raise ValueError(f"matmul of 0-d tensors: shapes {tuple(a)} and {tuple(b)}")
    if len(a) == 1:
        a = [1, *a]
    if len(b) == 1:
        b = [*b, 1]
    m, k = a[-2], a[-1]
    n = b[-1]
    if b[-2] != k:
        raise ValueError(f"matmul: inner sizes differ, shapes {tuple(a_shape)} @ {tuple(b_shape)}")
    batch_a, batch_b = a[:-2], b[:-2]
    if not batch_b:  # B shared by all of A's batch entries: one GEMM with a taller M
        return {"B": 1, "M": m * math.prod(batch_a), "K": k, "N": n}
    batch = torch.broadcast_shapes(torch.Size(batch_a), torch.Size(batch_b))
    return {"B": math.prod(batch), "M": m, "K": k, "N": n}


def _pair(value: Any, what: str) -> tuple[int, int]:
    if isinstance(value, int):
        return (value, value)
    vals = tuple(int(v) for v in value)
    if len(vals) == 1:
        return (vals[0], vals[0])
    if len(vals) != 2:
        raise ValueError(f"conv2d: {what} must have 1 or 2 entries, got {value!r}")
    return vals  # type: ignore[return-value]


def conv2d_layer(name: str, x: torch.Tensor, weight: torch.Tensor, stride: Any, padding: Any,
                 dilation: Any, groups: int) -> Layer:
    """The layer of ``conv2d(x, weight, stride, padding, dilation, groups)`` (shapes only
    are read: ``x`` and ``weight`` may be meta tensors; :mod:`mappers.workload_files` reads
    ONNX convolutions through it)."""
    if x.dim() == 3:  # unbatched (C, H, W)
        n, (c, h, w) = 1, x.shape
    else:
        n, c, h, w = x.shape
    k, _, r, s = weight.shape
    n, c, h, w, k, r, s, groups = (int(v) for v in (n, c, h, w, k, r, s, groups))
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    same = False
    if isinstance(padding, str):
        if padding == "valid":
            pads: tuple[int, int] | None = (0, 0)
        elif padding == "same":
            same = True
            total = (dh * (r - 1), dw * (s - 1))
            pads = (total[0] // 2, total[1] // 2) if not (total[0] % 2 or total[1] % 2) else None
        else:
            raise ValueError(f"conv2d: unknown padding {padding!r}")
    else:
        pads = _pair(padding, "padding")
    if pads is not None and sh == sw and dh == dw and pads[0] == pads[1]:
        return conv2d_from_input(name, N=n, C=c, H=h, W=w, K=k, R=r, S=s, stride=sh,
                                 padding=pads[0], dilation=dh, groups=groups)
    if same or pads is None:
        p, q = h, w
    else:
        p = conv_output_size(h, r, sh, pads[0], dh)
        q = conv_output_size(w, s, sw, pads[1], dw)
    layer = conv2d(name, N=n, K=k, C=c, P=p, Q=q, R=r, S=s, stride=(sh, sw), dilation=(dh, dw),
                   groups=groups)
    attrs = dict(layer.attrs, H=h, W=w, padding=pads if pads is not None else "same")
    return Layer(layer.name, layer.kind, layer.dims, layer.tensors, layer.repeat, attrs)


def gemm_layer(name: str, dims: Mapping[str, int]) -> Layer | None:
    """The GEMM / batched matmul of :func:`matmul_dims`' ``dims`` (``None`` if it has no MACs)."""
    if math.prod(dims.values()) == 0:
        return None
    return gemm(name, M=dims["M"], N=dims["N"], K=dims["K"], B=dims.get("B", 1))


# --------------------------------------------------------------------------- recorder

def _arg(args: Sequence[Any], kwargs: Mapping[str, Any], i: int, name: str,
         default: Any = None) -> Any:
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


class _Recorder(TorchFunctionMode):
    """Records the MAC operators of a forward pass as layers (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.layers: list[Layer] = []
        self.scopes: list[list[Any]] = []  # [qualified module name, MAC ops recorded in it]
        self.n_calls = 0
        self.warned: set[str] = set()

    # -- scope stack (driven by module hooks)
    def push(self, name: str) -> None:
        self.scopes.append([name, 0])

    def pop(self) -> None:
        if self.scopes:
            self.scopes.pop()

    def base_name(self, op: str) -> str:
        """Name for the next recorded operator call (``op``: its short name)."""
        index = self.n_calls
        self.n_calls += 1
        scope = next((s for s in reversed(self.scopes) if s[0]), None)
        if scope is None:
            return f"op{index}"
        scope[1] += 1
        return scope[0] if scope[1] == 1 else f"{scope[0]}.{op}{scope[1]}"

    def add(self, layer: Layer | None) -> None:
        if layer is not None:
            self.layers.append(layer)

    def warn(self, op: str) -> None:
        if op not in self.warned:
            self.warned.add(op)
            warnings.warn(f"from_torch: {op} is not modelled; its MACs are not counted",
                          UnmodelledOpWarning, stacklevel=3)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)  # torch validates the arguments first
        handler = _HANDLERS.get(func)
        if handler is not None:
            handler(self, args, kwargs)
        else:
            unmodelled = _UNMODELLED.get(func)
            if unmodelled is not None:
                self.warn(unmodelled)
        return out


# ------------------------------------------------------------------------- handlers

def _h_conv2d(rec: _Recorder, args: Sequence[Any], kw: Mapping[str, Any]) -> None:
    x, weight = _arg(args, kw, 0, "input"), _arg(args, kw, 1, "weight")
    rec.add(conv2d_layer(rec.base_name("conv2d"), x, weight,
                          _arg(args, kw, 3, "stride", 1), _arg(args, kw, 4, "padding", 0),
                          _arg(args, kw, 5, "dilation", 1), _arg(args, kw, 6, "groups", 1)))


def _h_linear(rec: _Recorder, args: Sequence[Any], kw: Mapping[str, Any]) -> None:
    x, weight = _arg(args, kw, 0, "input"), _arg(args, kw, 1, "weight")
    k = int(x.shape[-1])
    n = int(weight.shape[0]) if weight.dim() == 2 else 1
    m = math.prod(int(v) for v in x.shape[:-1])
    rec.add(gemm_layer(rec.base_name("linear"), {"M": m, "K": k, "N": n}))


def _matmul_handler(op: str, first: int, second: int, names: tuple[str, str],
                    swap: bool = False) -> Callable[[_Recorder, Sequence[Any], Mapping[str, Any]], None]:
    def handler(rec: _Recorder, args: Sequence[Any], kw: Mapping[str, Any]) -> None:
        a, b = _arg(args, kw, first, names[0]), _arg(args, kw, second, names[1])
        if swap:  # Tensor.__rmatmul__(self, other) computes other @ self
            a, b = b, a
        if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
            return
        rec.add(gemm_layer(rec.base_name(op), matmul_dims(a.shape, b.shape)))
    return handler


def _h_sdpa(rec: _Recorder, args: Sequence[Any], kw: Mapping[str, Any]) -> None:
    q, k, v = (_arg(args, kw, i, n) for i, n in enumerate(("query", "key", "value")))
    lead = [tuple(int(d) for d in t.shape[:-2]) for t in (q, k, v)]
    try:
        batch = math.prod(torch.broadcast_shapes(*lead))
    except RuntimeError:  # grouped-query attention: every query head does its matmuls
        batch = math.prod(lead[0])
    seq_q, e = int(q.shape[-2]), int(q.shape[-1])
    seq_k, ev = int(k.shape[-2]), int(v.shape[-1])
    base = rec.base_name("sdpa")
    rec.add(gemm_layer(f"{base}.qk", {"B": batch, "M": seq_q, "K": e, "N": seq_k}))
    rec.add(gemm_layer(f"{base}.av", {"B": batch, "M": seq_q, "K": seq_k, "N": ev}))


_MHA_SIGNATURE = inspect.signature(F.multi_head_attention_forward)


def _h_mha(rec: _Recorder, args: Sequence[Any], kw: Mapping[str, Any]) -> None:
    """``F.multi_head_attention_forward``, expanded as its slow path computes it."""
    a = _MHA_SIGNATURE.bind(*args, **kw)
    a.apply_defaults()
    p = a.arguments
    query, key, value = p["query"], p["key"], p["value"]
    batched = query.dim() == 3
    batch = int(query.shape[1]) if batched else 1
    seq_q, embed = int(query.shape[0]), int(query.shape[-1])
    seq_k = int(key.shape[0])
    heads = int(p["num_heads"])
    head_dim = embed // heads
    if p["use_separate_proj_weight"]:
        kdim = int(p["k_proj_weight"].shape[1])
        vdim = int(p["v_proj_weight"].shape[1])
    else:
        kdim = vdim = embed
    base = rec.base_name("mha")
    layers = [gemm_layer(f"{base}.q_proj", {"M": seq_q * batch, "K": embed, "N": embed})]
    if p["static_k"] is None:
        layers.append(gemm_layer(f"{base}.k_proj", {"M": seq_k * batch, "K": kdim, "N": embed}))
    else:
        seq_k = int(p["static_k"].shape[1])
    if p["static_v"] is None:
        layers.append(gemm_layer(f"{base}.v_proj", {"M": int(value.shape[0]) * batch,
                                                       "K": vdim, "N": embed}))
    if p["bias_k"] is not None and p["bias_v"] is not None:
        seq_k += 1  # the learned bias key/value is appended after the projection
    if p["add_zero_attn"]:
        seq_k += 1
    bh = batch * heads
    layers.append(gemm_layer(f"{base}.qk", {"B": bh, "M": seq_q, "K": head_dim, "N": seq_k}))
    layers.append(gemm_layer(f"{base}.av", {"B": bh, "M": seq_q, "K": seq_k, "N": head_dim}))
    out_w = p["out_proj_weight"]
    layers.append(gemm_layer(f"{base}.out_proj", {"M": seq_q * batch, "K": int(out_w.shape[1]),
                                                   "N": int(out_w.shape[0])}))
    for layer in layers:
        rec.add(layer)


_Handler = Callable[[_Recorder, Sequence[Any], Mapping[str, Any]], None]


def _handlers() -> dict[Any, _Handler]:
    T = torch.Tensor
    two = _matmul_handler
    table: list[tuple[tuple[Any, ...], _Handler]] = [
        ((F.conv2d, torch.conv2d), _h_conv2d),
        ((F.linear,), _h_linear),
        ((torch.matmul, T.matmul, T.__matmul__, torch.linalg.matmul),
         two("matmul", 0, 1, ("input", "other"))),
        ((T.__rmatmul__,), two("matmul", 0, 1, ("self", "other"), swap=True)),
        ((torch.mm, T.mm), two("mm", 0, 1, ("input", "mat2"))),
        ((torch.bmm, T.bmm), two("bmm", 0, 1, ("input", "mat2"))),
        ((torch.mv, T.mv), two("mv", 0, 1, ("input", "vec"))),
        ((torch.dot, T.dot), two("dot", 0, 1, ("input", "tensor"))),
        ((torch.addmm, T.addmm, T.addmm_), two("addmm", 1, 2, ("mat1", "mat2"))),
        ((torch.baddbmm, T.baddbmm, T.baddbmm_), two("baddbmm", 1, 2, ("batch1", "batch2"))),
        ((F.scaled_dot_product_attention,), _h_sdpa),
        ((F.multi_head_attention_forward,), _h_mha),
    ]
    return {f: h for funcs, h in table for f in funcs}


def _unmodelled() -> dict[Any, str]:
    names = {
        F: ("conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
            "bilinear", "conv_tbc"),
        torch: ("einsum", "tensordot", "addbmm", "addmv", "addr", "chain_matmul", "inner",
                "_native_multi_head_attention", "_transformer_encoder_layer_fwd",
                "convolution", "_convolution"),
        torch.Tensor: ("addbmm", "addmv", "inner"),
        torch.linalg: ("multi_dot", "vecdot"),
    }
    prefix = {F: "torch.nn.functional", torch: "torch", torch.Tensor: "torch.Tensor",
              torch.linalg: "torch.linalg"}
    out: dict[Any, str] = {}
    for owner, attrs in names.items():
        for attr in attrs:
            func = getattr(owner, attr, None)
            if func is not None and func not in _HANDLERS:
                out.setdefault(func, f"{prefix[owner]}.{attr}")
    return out


_HANDLERS = _handlers()
_UNMODELLED = _unmodelled()


# ------------------------------------------------------------------------------ entry

def from_torch(module: torch.nn.Module, example_input: Any, *,
               merge_repeats: bool = True) -> list[Layer]:
    """The MAC layers of ``module`` on ``example_input``, in execution order.

    ``example_input``: a tensor (``module(x)``), a tuple/list of positional arguments
    (``module(*x)``) or a dict of keyword arguments (``module(**x)``). The forward runs
    once under ``torch.no_grad()`` with the MHA fast path disabled (see the module
    docstring); the module itself (training flags, parameters) is left unchanged.

    With ``merge_repeats`` identical shapes (:func:`mappers.zoo.shape_key`: kind, dims,
    strides, dilation, input size, padding) are merged into one layer named after the
    first occurrence, with ``repeat`` = number of occurrences; otherwise every operator
    call is one layer with ``repeat=1``.
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"from_torch: module must be a torch.nn.Module, got {type(module).__name__}")
    if isinstance(example_input, Mapping):
        call_args: tuple[Any, ...] = ()
        call_kwargs: dict[str, Any] = dict(example_input)
    elif isinstance(example_input, tuple | list):
        call_args, call_kwargs = tuple(example_input), {}
    else:
        call_args, call_kwargs = (example_input,), {}

    rec = _Recorder()
    handles = []
    for name, sub in module.named_modules():
        handles.append(sub.register_forward_pre_hook(lambda _m, _a, n=name: rec.push(n)))
        handles.append(sub.register_forward_hook(lambda _m, _a, _o: rec.pop(), always_call=True))
    mha = getattr(torch.backends, "mha", None)  # the switch exists since torch 2.3
    fastpath = mha.get_fastpath_enabled() if mha is not None else None
    try:
        if mha is not None:
            mha.set_fastpath_enabled(False)
        with torch.no_grad(), rec:
            module(*call_args, **call_kwargs)
    finally:
        if mha is not None:
            mha.set_fastpath_enabled(fastpath)
        for handle in handles:
            handle.remove()
    return _merge_repeats(rec.layers) if merge_repeats else list(rec.layers)
