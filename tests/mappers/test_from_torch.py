"""from_torch: real torch modules traced into layers, checked against the zoo and by hand."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from mappers import zoo
from mappers.from_torch import UnmodelledOpWarning, from_torch, matmul_dims
from mappers.workloads import Layer, total_macs


def key(layer: Layer) -> tuple:
    """Canonical comparison key: everything but the name."""
    return (layer.kind, tuple(layer.dims.items()), layer.tensors, layer.repeat)


def keys(layers: list[Layer]) -> list[tuple]:
    return [key(layer) for layer in layers]


def torch_flops(module: nn.Module, *args: torch.Tensor) -> int:
    """Independent oracle: PyTorch's own dispatcher-level FLOP counter (2 per MAC).

    It does not count the fused MHA kernels nor the CPU flash-attention kernel, so the
    fast path is off and attention uses the math backend (plain bmm) here.
    """
    fast = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with (torch.no_grad(), sdpa_kernel(SDPBackend.MATH),
              FlopCounterMode(display=False) as counter):
            module(*args)
    finally:
        torch.backends.mha.set_fastpath_enabled(fast)
    return counter.get_total_flops()


# ------------------------------------------------------------------ torch models


class Bottleneck(nn.Module):
    """torchvision-style ResNet v1.5 bottleneck (stride on the 3x3)."""

    def __init__(self, cin: int, width: int, stride: int) -> None:
        super().__init__()
        cout = 4 * width
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class ResNet50(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        cin = 64
        for i, (blocks, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512)), start=1):
            stage = []
            for b in range(blocks):
                stage.append(Bottleneck(cin, width, 2 if i > 1 and b == 0 else 1))
                cin = 4 * width
            setattr(self, f"layer{i}", nn.Sequential(*stage))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2048, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class NatureDQN(nn.Module):
    def __init__(self, n_actions: int = 18) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(4, 32, 8, stride=4)
        self.conv2 = nn.Conv2d(32, 64, 4, stride=2)
        self.conv3 = nn.Conv2d(64, 64, 3, stride=1)
        self.fc1 = nn.Linear(3136, 512)
        self.fc2 = nn.Linear(512, n_actions)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x))
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


# --------------------------------------------------------------- vs the zoo


@pytest.fixture(scope="module", autouse=True)
def single_thread():
    """These models are small: intra-op threads only add contention on a busy CPU."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def resnet_model() -> nn.Module:
    torch.manual_seed(0)
    return ResNet50().eval()


@pytest.fixture(scope="module")
def resnet_traced(resnet_model) -> list[Layer]:
    return from_torch(resnet_model, torch.randn(1, 3, 224, 224))


def test_resnet50_matches_zoo(resnet_traced):
    ref = zoo.resnet50()
    assert keys(resnet_traced) == keys(ref)
    assert [layer.name for layer in resnet_traced] == [layer.name for layer in ref]
    assert [layer.attrs for layer in resnet_traced] == [layer.attrs for layer in ref]
    assert total_macs(resnet_traced) == 4_089_184_256


def test_resnet50_unmerged_is_every_call(resnet_model):
    model = resnet_model
    x = torch.randn(1, 3, 64, 64)
    flat = from_torch(model, x, merge_repeats=False)
    assert len(flat) == 54 and all(layer.repeat == 1 for layer in flat)
    assert keys(zoo.merge_repeats(flat)) == keys(zoo.resnet50(image=64))
    # Independent oracle: torch's own FLOP counter on the same forward.
    assert 2 * total_macs(flat) == torch_flops(model, x)


def test_dqn_matches_zoo():
    model = NatureDQN(n_actions=6)
    got = from_torch(model, torch.randn(2, 4, 84, 84))
    ref = zoo.dqn(batch=2, n_actions=6)
    assert keys(got) == keys(ref)
    assert [layer.name for layer in got] == ["conv1", "conv2", "conv3", "fc1", "fc2"]


def test_transformer_encoder_layer_matches_bert_block():
    layer = nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072,
                                       batch_first=True).eval()
    x = torch.randn(1, 512, 768)
    fast_before = torch.backends.mha.get_fastpath_enabled()
    got = from_torch(layer, x)
    assert torch.backends.mha.get_fastpath_enabled() == fast_before  # restored
    assert keys(got) == keys(zoo.bert_base_block())
    assert [g.name for g in got] == ["self_attn.q_proj", "self_attn.qk", "self_attn.av",
                                     "linear1", "linear2"]
    assert 2 * total_macs(got) == torch_flops(layer, x)


@pytest.mark.parametrize("training", [False, True])
def test_multihead_attention_expansion(training):
    # Cross-attention with kdim/vdim, bias_kv and zero-attention: S = 7 + 1 + 1.
    mha = nn.MultiheadAttention(64, 4, kdim=32, vdim=16, add_bias_kv=True,
                                add_zero_attn=True).train(training)
    q, k, v = torch.randn(5, 2, 64), torch.randn(7, 2, 32), torch.randn(7, 2, 16)
    got = from_torch(mha, (q, k, v), merge_repeats=False)
    dims = {layer.name.split(".")[-1]: dict(layer.dims) for layer in got}
    assert dims == {
        "q_proj": {"M": 10, "N": 64, "K": 64},
        "k_proj": {"M": 14, "N": 64, "K": 32},
        "v_proj": {"M": 14, "N": 64, "K": 16},
        "qk": {"B": 8, "M": 5, "N": 9, "K": 16},
        "av": {"B": 8, "M": 5, "N": 16, "K": 9},
        "out_proj": {"M": 10, "N": 64, "K": 64},
    }
    assert 2 * total_macs(got) == torch_flops(mha, q, k, v)


def test_sdpa_and_custom_attention_names():
    class Attn(nn.Module):
        def forward(self, q, k, v):
            s = q @ k.transpose(-2, -1)  # batched matmul B=2*3
            o = torch.softmax(s, -1) @ v
            return torch.nn.functional.scaled_dot_product_attention(o, k, v)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn = Attn()

        def forward(self, q, k, v):
            return self.attn(q, k, v)

    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 8)
    got = from_torch(Net(), (q, k, v), merge_repeats=False)
    assert [(g.name, dict(g.dims)) for g in got] == [
        ("attn", {"B": 6, "M": 5, "N": 7, "K": 8}),
        ("attn.matmul2", {"B": 6, "M": 5, "N": 8, "K": 7}),
        ("attn.sdpa3.qk", {"B": 6, "M": 5, "N": 7, "K": 8}),
        ("attn.sdpa3.av", {"B": 6, "M": 5, "N": 8, "K": 7}),
    ]
    merged = from_torch(Net(), (q, k, v))
    assert [(g.name, g.repeat) for g in merged] == [("attn", 2), ("attn.matmul2", 2)]


def test_root_ops_are_named_op_n():
    got = from_torch(nn.Linear(8, 4), torch.randn(3, 5, 8), merge_repeats=False)
    assert [(g.name, dict(g.dims)) for g in got] == [("op0", {"M": 15, "N": 4, "K": 8})]


# ----------------------------------------------------------------- matmul rules


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((4, 5), (5, 6), dict(B=1, M=4, K=5, N=6)),
        ((2, 3, 4, 5), (5, 6), dict(B=1, M=24, K=5, N=6)),  # shared B folds batch into M
        ((2, 3, 4, 5), (3, 5, 6), dict(B=6, M=4, K=5, N=6)),  # broadcast batch
        ((2, 1, 4, 5), (3, 5, 6), dict(B=6, M=4, K=5, N=6)),
        ((4, 5), (2, 5, 6), dict(B=2, M=4, K=5, N=6)),
        ((5,), (5,), dict(B=1, M=1, K=5, N=1)),  # dot product
        ((5,), (2, 5, 6), dict(B=2, M=1, K=5, N=6)),
        ((2, 4, 5), (5,), dict(B=1, M=8, K=5, N=1)),
    ],
)
def test_matmul_dims_flattening(a, b, expected):
    assert matmul_dims(a, b) == expected
    got = from_torch(_Fn(torch.matmul), (torch.randn(a), torch.randn(b)))
    layer = got[0]
    assert layer.kind == ("bmm" if expected["B"] > 1 else "gemm")
    assert layer.macs == expected["B"] * expected["M"] * expected["K"] * expected["N"]
    if len(a) > 1 and len(b) > 1:  # torch's counter ignores dot / mv
        assert 2 * layer.macs == torch_flops(_Fn(torch.matmul), torch.randn(a), torch.randn(b))


def test_matmul_dims_rejects_mismatch():
    with pytest.raises(ValueError, match="inner sizes"):
        matmul_dims((4, 5), (6, 7))


class _Fn(nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


@pytest.mark.parametrize(
    ("fn", "shapes", "dims"),
    [
        (lambda a, b: a @ b, [(3, 4), (4, 5)], {"M": 3, "N": 5, "K": 4}),
        (torch.mm, [(3, 4), (4, 5)], {"M": 3, "N": 5, "K": 4}),
        (torch.bmm, [(2, 3, 4), (2, 4, 5)], {"B": 2, "M": 3, "N": 5, "K": 4}),
        (lambda c, a, b: torch.addmm(c, a, b), [(5,), (3, 4), (4, 5)], {"M": 3, "N": 5, "K": 4}),
        (lambda c, a, b: c.baddbmm(a, b), [(2, 3, 5), (2, 3, 4), (2, 4, 5)],
         {"B": 2, "M": 3, "N": 5, "K": 4}),
        (lambda a, b: b.__rmatmul__(a), [(3, 4), (4, 5)], {"M": 3, "N": 5, "K": 4}),
        (torch.mv, [(3, 4), (4,)], {"M": 3, "N": 1, "K": 4}),
    ],
)
def test_matmul_family(fn, shapes, dims):
    got = from_torch(_Fn(fn), tuple(torch.randn(s) for s in shapes))
    assert [dict(g.dims) for g in got] == [dims]


def test_conv2d_variants():
    net = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding="same"),
        nn.Conv2d(8, 8, (2, 3), stride=(1, 2), padding=(0, 1)),  # asymmetric
        nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8),  # dilated depthwise
        nn.Conv2d(8, 16, 3, stride=2, groups=2),
    )
    x = torch.randn(2, 3, 10, 11)
    shapes = []
    with torch.no_grad():
        for conv in net:
            x = conv(x)
            shapes.append(tuple(x.shape))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's padding='same' note
        got = from_torch(net, torch.randn(2, 3, 10, 11), merge_repeats=False)
    assert [g.name for g in got] == ["0", "1", "2", "3"]
    for layer, (n, k, p, q) in zip(got, shapes):
        g = layer.dims.get("G", 1)
        assert (layer.dims["N"], g * layer.dims["K"], layer.dims["P"], layer.dims["Q"]) == (n, k, p, q)
    assert got[1].attrs["stride"] == (1, 2) and got[1].attrs["padding"] == (0, 1)
    assert got[2].kind == "depthwise" and got[2].attrs["dilation"] == (2, 2)
    assert got[3].dims["G"] == 2 and got[3].dims["C"] == 4
    assert 2 * total_macs(got) == torch_flops(net, torch.randn(2, 3, 10, 11))


def test_unsupported_op_warns_once_per_type():
    net = nn.Sequential(nn.Conv1d(3, 4, 3), nn.Conv1d(4, 4, 3), nn.Linear(6, 2))
    with pytest.warns(UnmodelledOpWarning, match="conv1d") as record:
        got = from_torch(net, torch.randn(1, 3, 10))
    assert sum("conv1d" in str(w.message) for w in record) == 1
    assert [(g.name, dict(g.dims)) for g in got] == [("2", {"M": 4, "N": 2, "K": 6})]


def test_modelled_ops_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnmodelledOpWarning)
        from_torch(NatureDQN(), torch.randn(1, 4, 84, 84))


def test_hooks_removed_and_module_unchanged():
    model = NatureDQN()
    model.eval()
    from_torch(model, torch.randn(1, 4, 84, 84))
    assert not model.training
    assert all(not m._forward_pre_hooks and not m._forward_hooks for m in model.modules())


def test_bad_module_type():
    with pytest.raises(TypeError, match=r"torch\.nn\.Module"):
        from_torch(lambda x: x, torch.randn(2))  # type: ignore[arg-type]
