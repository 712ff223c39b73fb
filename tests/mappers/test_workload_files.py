"""Workloads as files (mappers/workload_files.py): zoo names, torch ``module:factory``
models, ONNX models through the same layer extraction as torch, Timeloop problems; an
unsupported operator is an error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from mappers import zoo
from mappers.from_torch import from_torch
from mappers.workload_files import UnsupportedOperator, from_onnx, load_workload, resolve_workload
from mappers.workloads import conv2d, gemm

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

DATA = Path(__file__).parent / "data" / "timeloop"


class SmallNet(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 8 * 8, classes)

    def forward(self, x):
        return self.fc(torch.flatten(torch.relu(self.conv(x)), 1))


def small_net(classes: int = 10) -> nn.Module:
    return SmallNet(classes)


def conv1d_net() -> nn.Module:
    return nn.Sequential(nn.Conv1d(3, 4, 3))


def _shape_of(layers):
    return [(layer.dims, layer.tensors, layer.repeat) for layer in layers]


def test_zoo_names_are_the_zoo():
    assert load_workload("dqn[0:2]") == zoo.resolve("dqn[0:2]") == load_workload({"zoo": "dqn[0:2]"})


def test_a_torch_factory_is_extracted_as_the_module_it_builds():
    layers = load_workload({"torch": "tests.mappers.test_workload_files:small_net", "input_shape": [2, 3, 16, 16],
                            "kwargs": {"classes": 5}})
    want = [conv2d("conv", N=2, K=8, C=3, P=8, Q=8, R=3, S=3, stride=2), gemm("fc", M=2, K=512, N=5)]
    assert _shape_of(layers) == _shape_of(want) and [x.name for x in layers] == ["conv", "fc"]


def test_a_torch_model_with_an_unsupported_operator_is_an_error_naming_it():
    with pytest.raises(UnsupportedOperator, match="conv1d"):
        load_workload({"torch": "tests.mappers.test_workload_files:conv1d_net", "input_shape": [1, 3, 10]})
    with pytest.raises(ValueError, match="give input_shape"):
        load_workload({"torch": "tests.mappers.test_workload_files:small_net"})
    with pytest.raises(ValueError, match="unknown keys"):
        load_workload({"torch": "tests.mappers.test_workload_files:small_net", "input_shape": [1], "shape": 1})


def _onnx_small_net(path: Path, batch: int | str = 2, pads=(1, 1, 1, 1), extra: list | None = None) -> Path:
    """SmallNet as an ONNX graph written by hand: Conv (3 -> 8, 3x3, stride 2) -> Relu ->
    Flatten -> Gemm (transB, as torch.nn.Linear exports)."""
    net = SmallNet()
    w = numpy_helper.from_array(net.conv.weight.detach().numpy(), "w")
    b = numpy_helper.from_array(net.conv.bias.detach().numpy(), "b")
    fw = numpy_helper.from_array(net.fc.weight.detach().numpy(), "fw")
    fb = numpy_helper.from_array(net.fc.bias.detach().numpy(), "fb")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", strides=[2, 2], pads=list(pads),
                              kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat", axis=1),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], name="fc", transB=1)] + (extra or [])
    out = "y" if not extra else extra[-1].output[0]
    graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 16, 16])],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], [w, b, fw, fb])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_an_onnx_model_gives_the_layers_of_the_same_torch_model(tmp_path):
    p = _onnx_small_net(tmp_path / "small.onnx")
    from_file = load_workload(str(p))
    traced = from_torch(SmallNet().eval(), torch.zeros(2, 3, 16, 16))
    assert _shape_of(from_file) == _shape_of(traced) and [x.name for x in from_file] == ["conv", "fc"]
    assert load_workload({"onnx": "small.onnx"}, base_dir=tmp_path) == from_file


def test_onnx_matmul_follows_the_torch_flattening_rule(tmp_path):
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 6, 5])
    bw = numpy_helper.from_array(torch.zeros(5, 7).numpy(), "bw")
    bb = helper.make_tensor_value_info("bb", TensorProto.FLOAT, [4, 5, 3])
    nodes = [helper.make_node("MatMul", ["a", "bw"], ["y1"], name="shared"),      # (4,6,5) @ (5,7): M = 24
             helper.make_node("MatMul", ["a", "bb"], ["y2"], name="batched")]     # (4,6,5) @ (4,5,3): B = 4
    graph = helper.make_graph(nodes, "mm", [a, bb], [helper.make_tensor_value_info("y1", TensorProto.FLOAT, None),
                                                     helper.make_tensor_value_info("y2", TensorProto.FLOAT, None)], [bw])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "mm.onnx"))
    got = from_onnx(tmp_path / "mm.onnx")
    assert _shape_of(got) == _shape_of([gemm("shared", M=24, K=5, N=7), gemm("batched", B=4, M=6, K=5, N=3)])


def test_onnx_asymmetric_padding_and_symbolic_inputs(tmp_path):
    # pads (top, left, bottom, right) = (0, 0, 1, 1): out = (16 + 1 - 3) // 2 + 1 = 8 on both axes
    got = from_onnx(_onnx_small_net(tmp_path / "asym.onnx", pads=(0, 0, 1, 1)))
    assert got[0].dims == conv2d("c", N=2, K=8, C=3, P=8, Q=8, R=3, S=3, stride=2).dims
    sym = _onnx_small_net(tmp_path / "sym.onnx", batch="batch")
    with pytest.raises(ValueError, match="give the model's input shapes"):
        from_onnx(sym)
    plain = load_workload(str(_onnx_small_net(tmp_path / "plain.onnx")))
    assert _shape_of(from_onnx(sym, {"x": [2, 3, 16, 16]})) == _shape_of(plain)
    with pytest.raises(ValueError, match=r"input_shapes names \['z'\]"):
        from_onnx(sym, {"z": [1]})


def test_an_unsupported_onnx_operator_is_an_error_naming_it(tmp_path):
    up = numpy_helper.from_array(torch.zeros(10, 4, 3, 3).numpy(), "uw")
    extra = [helper.make_node("Reshape", ["y", "shape"], ["y4"], name="reshape"),
             helper.make_node("ConvTranspose", ["y4", "uw"], ["z"], name="deconv")]
    p = _onnx_small_net(tmp_path / "bad.onnx", extra=extra)
    m = onnx.load(str(p))
    m.graph.initializer.extend([up, numpy_helper.from_array(torch.tensor([2, 10, 1, 1]).numpy(), "shape")])
    onnx.save(m, str(p))
    with pytest.raises(UnsupportedOperator, match="node 'deconv' is operator 'ConvTranspose'"):
        from_onnx(p)


def test_a_timeloop_problem_is_one_layer():
    (layer,) = load_workload({"timeloop": str(DATA / "problem.yaml")})
    assert layer.macs == 10838016
    assert resolve_workload([layer]) == [layer]
    with pytest.raises(ValueError, match="names exactly one of"):
        load_workload({"onnx": "a.onnx", "zoo": "dqn"})
