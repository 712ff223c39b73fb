"""Workloads named in files and configs: zoo names, torch models, ONNX models, Timeloop
problems -- each through the layer extraction coexplore already has.

:func:`load_workload` takes

* a zoo name with its selection, ``"resnet50[0:6]"`` or ``{"zoo": "dqn@32"}``
  (:func:`mappers.zoo.resolve`);
* a torch model, ``{"torch": "package.module:factory", "input_shape": [1, 3, 224, 224],
  "kwargs": {...}}``: ``factory(**kwargs)`` must return a ``torch.nn.Module``; it is put in
  eval mode and run once on zeros of ``input_shape`` (``input_shapes``: one shape per
  positional input) by :func:`mappers.from_torch.from_torch`;
* an ONNX model, ``"model.onnx"`` or ``{"onnx": "model.onnx", "input_shapes": {"x":
  [1, 3, 224, 224]}}`` (shapes for inputs whose dimensions are symbolic), read with the
  ``onnx`` package (``pip install coexplore[onnx]``): shapes are inferred by ONNX's shape
  inference, and ``Conv`` (2-D), ``Gemm`` and ``MatMul`` nodes become layers by the same
  rules as the torch extraction (its convolution builder and its matmul flattening rule,
  :func:`mappers.from_torch.matmul_dims`); identical shapes are merged into one layer
  with a ``repeat`` count (:func:`mappers.zoo.merge_repeats`);
* a Timeloop v0.4 problem, ``{"timeloop": "problem.yaml"}`` (one layer,
  :func:`mappers.interop.timeloop.layer_from_timeloop`);
* a ZigZag 3.x workload, ``{"zigzag": "workload.yaml"}`` (its MAC layers,
  :func:`mappers.interop.zigzag.layers_from_zigzag`; ``"ignore": [...]`` names what it
  may drop rather than refuse, e.g. ``mac_free_layers``, and the layers' list says what
  it dropped);
* an AccelForge workload, ``{"accelforge": "workload.yaml", "einsum": "Matmul1"}`` (one
  einsum, :func:`mappers.interop.accelforge.layer_from_accelforge`).

**An unsupported operator is an error that names it**: for ONNX, any node that is
neither a layer above nor in :data:`ONNX_NON_MAC_OPS` (element-wise, normalization,
pooling and shape operators, which do no multiply-accumulates) -- ``ConvTranspose``, a 1-D
or 3-D ``Conv``, ``Einsum``, the recurrent and quantized operators ...; for torch, every
MAC operator :func:`~mappers.from_torch.from_torch` does not model (its
:class:`~mappers.from_torch.UnmodelledOpWarning` becomes this error).

Nothing is downloaded: the files are read from disk and the torch factory is the user's
code.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mappers.workloads import Layer, conv2d

__all__ = ["ONNX_NON_MAC_OPS", "UnsupportedOperator", "from_onnx", "load_workload", "resolve_workload"]

ONNX_NON_MAC_OPS = frozenset({
    "Abs", "Add", "And", "ArgMax", "ArgMin", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Celu", "Clip",
    "Concat", "Constant", "ConstantOfShape", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp", "Expand", "Flatten",
    "Floor", "Gather", "GatherElements", "Gelu", "GlobalAveragePool", "GlobalMaxPool", "Greater", "HardSigmoid",
    "HardSwish", "Identity", "InstanceNormalization", "LRN", "LayerNormalization", "LeakyRelu", "Less", "Log",
    "LogSoftmax", "Max", "MaxPool", "Mean", "Min", "Mish", "Mul", "Neg", "Not", "Or", "PRelu", "Pad", "Pow",
    "Range", "Reciprocal", "ReduceL2", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "Relu",
    "Reshape", "Resize", "Round", "Selu", "Shape", "Sigmoid", "Sign", "Slice", "Softmax", "Softplus", "Split",
    "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "Tile", "TopK", "Transpose", "Unsqueeze", "Upsample", "Where",
})
"""ONNX operators that do no multiply-accumulates: skipped, as the torch extraction skips
element-wise operators, normalization, pooling and softmax."""


class UnsupportedOperator(ValueError):
    """A workload holds an operator coexplore cannot turn into layers (named in the message)."""


# --------------------------------------------------------------------------- ONNX

def _shape(info: Any) -> list[int] | None:
    t = info.type.tensor_type
    if not t.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    return None if any(d is None for d in dims) else [int(d) for d in dims]


def _attrs(node: Any) -> dict[str, Any]:
    import onnx

    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def from_onnx(path: str | Path, input_shapes: Mapping[str, Sequence[int]] | None = None, *,
              merge_repeats: bool = True) -> list[Layer]:
    """The MAC layers of an ONNX model, in graph order (module docstring)."""
    try:
        import onnx
    except ImportError:  # pragma: no cover - the onnx extra
        raise ImportError("reading ONNX models needs the onnx package: pip install 'coexplore[onnx]'") from None
    import torch

    from mappers.from_torch import conv2d_layer, gemm_layer, matmul_dims
    from mappers.zoo import merge_repeats as _merge

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"ONNX model {str(p)!r}: no such file")
    model = onnx.load(str(p))
    init_names = {t.name for t in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in init_names:
            continue
        want = (input_shapes or {}).get(inp.name)
        if want is not None:
            dims = inp.type.tensor_type.shape.dim
            if len(dims) != len(want):
                raise ValueError(f"ONNX model {p.name}: input {inp.name!r} has {len(dims)} dimensions, "
                                 f"input_shapes gives {list(want)}")
            for d, v in zip(dims, want):
                d.ClearField("dim_param")
                d.dim_value = int(v)
    unknown = sorted(set(input_shapes or {}) - {i.name for i in model.graph.input})
    if unknown:
        raise ValueError(f"ONNX model {p.name}: input_shapes names {unknown}, not among its inputs "
                         f"{[i.name for i in model.graph.input if i.name not in init_names]}")
    model = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    shapes: dict[str, list[int] | None] = {}
    for info in list(model.graph.input) + list(model.graph.value_info) + list(model.graph.output):
        shapes[info.name] = _shape(info)
    for t in model.graph.initializer:
        shapes[t.name] = [int(d) for d in t.dims]

    def shape_of(name: str, node: str) -> list[int]:
        s = shapes.get(name)
        if s is None:
            raise ValueError(f"ONNX model {p.name}: the shape of {name!r} (an input of node {node!r}) is not known "
                             "after shape inference; give the model's input shapes (input_shapes)")
        return s

    layers: list[Layer] = []
    for i, node in enumerate(model.graph.node):
        name = node.name or f"{node.op_type}{i}"
        op = node.op_type
        if node.domain not in ("", "ai.onnx"):
            raise UnsupportedOperator(f"ONNX model {p.name}: node {name!r} is operator {node.domain}.{op}, not "
                                      "supported (only standard ONNX operators are)")
        if op == "Conv":
            x, w = shape_of(node.input[0], name), shape_of(node.input[1], name)
            if len(w) != 4:
                raise UnsupportedOperator(f"ONNX model {p.name}: node {name!r} is a {len(w) - 2}-D Conv; only "
                                          "2-D convolutions are supported")
            a = _attrs(node)
            strides = list(a.get("strides", [1, 1]))
            dil = list(a.get("dilations", [1, 1]))
            group = int(a.get("group", 1))
            auto = a.get("auto_pad", b"NOTSET")
            auto = auto.decode() if isinstance(auto, bytes) else str(auto)
            r, s = w[2], w[3]
            if auto in ("SAME_UPPER", "SAME_LOWER"):
                padding: Any = "same" if strides == [1, 1] else None
                if padding is None:
                    n, c, h, wd = x
                    p_out, q_out = math.ceil(h / strides[0]), math.ceil(wd / strides[1])
                    lay = conv2d(name, N=n, K=w[0], C=c, P=p_out, Q=q_out, R=r, S=s, stride=tuple(strides),
                                 dilation=tuple(dil), groups=group)
                    layers.append(Layer(lay.name, lay.kind, lay.dims, lay.tensors, 1,
                                        dict(lay.attrs, H=h, W=wd, padding="same")))
                    continue
            elif auto == "VALID":
                padding = (0, 0)
            else:
                pads = list(a.get("pads", [0, 0, 0, 0]))
                if pads[0] != pads[2] or pads[1] != pads[3]:
                    n, c, h, wd = x
                    p_out = (h + pads[0] + pads[2] - dil[0] * (r - 1) - 1) // strides[0] + 1
                    q_out = (wd + pads[1] + pads[3] - dil[1] * (s - 1) - 1) // strides[1] + 1
                    lay = conv2d(name, N=n, K=w[0], C=c, P=p_out, Q=q_out, R=r, S=s, stride=tuple(strides),
                                 dilation=tuple(dil), groups=group)
                    layers.append(Layer(lay.name, lay.kind, lay.dims, lay.tensors, 1,
                                        dict(lay.attrs, H=h, W=wd, padding=tuple(pads))))
                    continue
                padding = (pads[0], pads[1])
            meta = "meta"
            layers.append(conv2d_layer(name, torch.empty(x, device=meta), torch.empty(w, device=meta),
                                        tuple(strides), padding, tuple(dil), group))
        elif op == "Gemm":
            a_s, b_s = shape_of(node.input[0], name), shape_of(node.input[1], name)
            at = _attrs(node)
            m, k = (a_s[1], a_s[0]) if at.get("transA", 0) else (a_s[0], a_s[1])
            n = b_s[0] if at.get("transB", 0) else b_s[1]
            lay = gemm_layer(name, {"M": m, "K": k, "N": n})
            if lay is not None:
                layers.append(lay)
        elif op == "MatMul":
            lay = gemm_layer(name, matmul_dims(shape_of(node.input[0], name), shape_of(node.input[1], name)))
            if lay is not None:
                layers.append(lay)
        elif op not in ONNX_NON_MAC_OPS:
            raise UnsupportedOperator(f"ONNX model {p.name}: node {name!r} is operator {op!r}, which coexplore "
                                      "cannot turn into layers (supported: Conv (2-D), Gemm, MatMul; skipped as "
                                      "MAC-free: see mappers.workload_files.ONNX_NON_MAC_OPS)")
    if not layers:
        raise ValueError(f"ONNX model {p.name}: no Conv, Gemm or MatMul node, so no layer")
    return _merge(layers) if merge_repeats else layers


# --------------------------------------------------------------------------- torch

def _from_torch_factory(spec: Mapping[str, Any]) -> list[Layer]:
    import torch

    from design_space.errors import SpaceDefinitionError
    from design_space.references import import_ref
    from mappers.from_torch import UnmodelledOpWarning, from_torch

    ref = spec["torch"]
    try:
        factory = import_ref(str(ref), "torch model factory")
    except SpaceDefinitionError as e:
        raise ValueError(str(e)) from None
    shapes = spec.get("input_shapes")
    if shapes is None:
        if "input_shape" not in spec:
            raise ValueError(f"workload {{torch: {ref!r}}}: give input_shape (e.g. [1, 3, 224, 224]) or input_shapes")
        shapes = [spec["input_shape"]]
    try:
        inputs = [torch.zeros([int(d) for d in s]) for s in shapes]
    except (TypeError, ValueError):
        raise ValueError(f"workload {{torch: {ref!r}}}: input shapes must be lists of positive integers, "
                         f"got {shapes!r}") from None
    module = factory(**dict(spec.get("kwargs") or {}))
    if not isinstance(module, torch.nn.Module):
        raise ValueError(f"workload {{torch: {ref!r}}}: the factory returned {type(module).__name__}, not a "
                         "torch.nn.Module")
    module.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnmodelledOpWarning)
        try:
            layers = from_torch(module, tuple(inputs))
        except UnmodelledOpWarning as w:
            raise UnsupportedOperator(f"workload {{torch: {ref!r}}}: {w}") from None
    if not layers:
        raise ValueError(f"workload {{torch: {ref!r}}}: the model ran no MAC operator, so no layer")
    return layers


# --------------------------------------------------------------------------- entry

_KEYS = {"zoo": (), "torch": ("input_shape", "input_shapes", "kwargs"), "onnx": ("input_shapes",),
         "timeloop": (), "zigzag": ("ignore",), "accelforge": ("einsum",)}


def load_workload(spec: str | Mapping[str, Any], base_dir: str | Path | None = None) -> list[Layer]:
    """The layers of a workload spec (module docstring); relative file paths are read
    from ``base_dir`` (default: the working directory). Every problem is a
    ``ValueError`` naming the spec part (:class:`UnsupportedOperator` for an operator)."""
    base = Path(base_dir) if base_dir is not None else Path()

    def path(v: Any) -> Path:
        q = Path(str(v))
        return q if q.is_absolute() else base / q

    if isinstance(spec, str):
        if spec.endswith(".onnx"):
            return from_onnx(path(spec))
        from mappers import zoo

        return zoo.resolve(spec)
    if not isinstance(spec, Mapping):
        raise ValueError(f"a workload is a zoo name, a path to an .onnx file or a mapping, got {type(spec).__name__}")
    kinds = [k for k in _KEYS if k in spec]
    if len(kinds) != 1:
        raise ValueError(f"a workload mapping names exactly one of {list(_KEYS)}, got keys {sorted(spec)}")
    kind = kinds[0]
    extra = sorted(set(spec) - {kind, *_KEYS[kind]})
    if extra:
        raise ValueError(f"workload {{{kind}: ...}}: unknown keys {extra}; known: {[kind, *_KEYS[kind]]}")
    if kind == "zoo":
        from mappers import zoo

        return zoo.resolve(str(spec["zoo"]))
    if kind == "onnx":
        return from_onnx(path(spec["onnx"]), spec.get("input_shapes"))
    if kind == "timeloop":
        from accelerators.interop.timeloop import load_timeloop_yaml
        from mappers.interop.timeloop import layer_from_timeloop

        return [layer_from_timeloop(load_timeloop_yaml(path(spec["timeloop"])))[0]]
    if kind == "zigzag":
        from design_space.yamlio import load_yaml_file
        from mappers.interop.zigzag import layers_from_zigzag

        ignore = spec.get("ignore") or ()
        if not isinstance(ignore, list | tuple) or not all(isinstance(k, str) for k in ignore):
            raise ValueError(f"workload {{zigzag: ...}}: ignore must be a list of key names, got {ignore!r}")
        return layers_from_zigzag(load_yaml_file(path(spec["zigzag"]))[0], ignore=tuple(ignore))
    if kind == "accelforge":
        from accelerators.interop.timeloop import load_timeloop_yaml
        from mappers.interop.accelforge import layer_from_accelforge

        return [layer_from_accelforge(load_timeloop_yaml(path(spec["accelforge"])), spec.get("einsum"))[0]]
    return _from_torch_factory(spec)


def resolve_workload(workload: Any, base_dir: str | Path | None = None) -> list[Layer]:
    """A list of layers as given, else :func:`load_workload`."""
    if isinstance(workload, str | Mapping):
        return load_workload(workload, base_dir)
    return list(workload)
