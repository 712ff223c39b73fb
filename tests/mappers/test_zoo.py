"""Reference networks: exact shapes, repeat counts and MAC totals, computed by hand."""

from __future__ import annotations

import pytest

from mappers import zoo
from mappers.workloads import Layer, conv2d_from_input, gemm, total_macs


def by_name(layers: list[Layer]) -> dict[str, Layer]:
    return {layer.name: layer for layer in layers}


def revalidate(layer: Layer) -> Layer:
    """Rebuild through Layer.__post_init__ (raises if anything is inconsistent)."""
    return Layer(layer.name, layer.kind, layer.dims, layer.tensors, layer.repeat, layer.attrs)


# ------------------------------------------------------------------- ResNet-50


def test_resnet50_total_macs():
    layers = zoo.resnet50()
    total = total_macs(layers)
    assert total == 4_089_184_256 == zoo.RESNET50_MACS_224
    assert abs(total - 4.09e9) / 4.09e9 < 0.01
    convs = sum(layer.macs * layer.repeat for layer in layers if layer.kind == "conv")
    assert convs == 4_087_136_256
    assert total - convs == 2048 * 1000  # the fc


def test_resnet50_layer_counts():
    layers = zoo.resnet50()
    assert sum(layer.repeat for layer in layers if layer.kind == "conv") == 53  # 49 + 4 downsample
    assert [(layer.name, layer.repeat) for layer in layers if layer.kind != "conv"] == [("fc", 1)]
    assert len({zoo.shape_key(layer) for layer in layers}) == len(layers)  # unique shapes
    assert len(layers) == 24


def test_resnet50_repeats_and_strides():
    layers = by_name(zoo.resnet50())
    # 3x3 convs of identical shape within a stage; conv3 merges with layer1's downsample
    # (both 64 -> 256, 1x1, stride 1 at 56x56).
    assert {n: layers[n].repeat for n in ("layer1.0.conv2", "layer1.0.conv3", "layer1.1.conv1",
                                         "layer2.1.conv2", "layer3.0.conv3", "layer3.1.conv1",
                                         "layer4.1.conv2")} == {
        "layer1.0.conv2": 3, "layer1.0.conv3": 4, "layer1.1.conv1": 2,
        "layer2.1.conv2": 3, "layer3.0.conv3": 6, "layer3.1.conv1": 5, "layer4.1.conv2": 2}
    assert "layer1.0.downsample.0" not in layers
    # v1.5: the stride is on the 3x3 conv and the downsample conv.
    s2 = layers["layer2.0.conv2"]
    assert s2.attrs["stride"] == (2, 2) and s2.attrs["H"] == 56 and s2.dims["P"] == 28
    assert layers["layer2.0.conv1"].attrs["stride"] == (1, 1)
    assert layers["layer2.0.conv1"].dims["P"] == 56
    ds = layers["layer4.0.downsample.0"]
    assert dict(ds.dims) == {"N": 1, "K": 2048, "C": 1024, "P": 7, "Q": 7, "R": 1, "S": 1}
    assert ds.attrs["stride"] == (2, 2)
    assert layers["conv1"] == conv2d_from_input("conv1", C=3, H=224, W=224, K=64, R=7,
                                                stride=2, padding=3)
    assert dict(layers["fc"].dims) == {"M": 1, "N": 1000, "K": 2048}


def test_resnet50_batch_and_image():
    assert total_macs(zoo.resnet50(batch=4)) == 4 * 4_089_184_256
    small = by_name(zoo.resnet50(image=64))
    # 64 -> conv1 32 -> maxpool 16 -> stages at 16, 8, 4, 2.
    assert small["layer1.0.conv2"].dims["P"] == 16
    assert small["layer4.1.conv2"].dims["P"] == 2
    with pytest.raises(ValueError, match="batch"):
        zoo.resnet50(batch=0)


# ------------------------------------------------------------------------- DQN


def test_dqn_shapes_and_macs():
    layers = zoo.dqn()
    assert [(layer.name, dict(layer.dims)) for layer in layers] == [
        ("conv1", {"N": 1, "K": 32, "C": 4, "P": 20, "Q": 20, "R": 8, "S": 8}),
        ("conv2", {"N": 1, "K": 64, "C": 32, "P": 9, "Q": 9, "R": 4, "S": 4}),
        ("conv3", {"N": 1, "K": 64, "C": 64, "P": 7, "Q": 7, "R": 3, "S": 3}),
        ("fc1", {"M": 1, "N": 512, "K": 3136}),
        ("fc2", {"M": 1, "N": 18, "K": 512}),
    ]
    assert [layer.attrs.get("stride") for layer in layers[:3]] == [(4, 4), (2, 2), (1, 1)]
    assert [layer.macs for layer in layers] == [
        32 * 4 * 400 * 64,  # 3,276,800
        64 * 32 * 81 * 16,  # 2,654,208
        64 * 64 * 49 * 9,  # 1,806,336
        3136 * 512,
        512 * 18,
    ]
    assert total_macs(layers) == 9_352_192
    assert total_macs(zoo.dqn(batch=32, n_actions=4)) == 32 * (9_352_192 - 512 * 14)


# ------------------------------------------------------------------------ DLRM


def test_dlrm_mlps():
    layers = zoo.mlp_dlrm()
    assert 128 + 27 * 26 // 2 == 479  # bottom output + pairwise interactions of 27 vectors
    # top.3 (512 -> 256) has the shape of bot.1 and is merged into it.
    assert [(layer.name, layer.dims["K"], layer.dims["N"], layer.repeat) for layer in layers] == [
        ("bot.0", 13, 512, 1), ("bot.1", 512, 256, 2), ("bot.2", 256, 128, 1),
        ("top.0", 479, 1024, 1), ("top.1", 1024, 1024, 1), ("top.2", 1024, 512, 1),
        ("top.4", 256, 1, 1),
    ]
    assert all(layer.dims["M"] == 128 and layer.kind == "gemm" for layer in layers)
    per_sample = (13 * 512 + 512 * 256 + 256 * 128
                  + 479 * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 256 + 256 * 1)
    assert per_sample == 2_365_184
    assert total_macs(layers) == 128 * per_sample
    assert total_macs(zoo.mlp_dlrm(batch=1)) == per_sample


# ------------------------------------------------------------------------ BERT


def bert_formula(seq: int, batch: int, hidden: int, ffn: int) -> int:
    tokens = batch * seq
    return 4 * tokens * hidden * hidden + 2 * batch * seq * seq * hidden + 2 * tokens * hidden * ffn


def test_bert_block_shapes():
    layers = zoo.bert_base_block()
    assert [(layer.name, layer.kind, dict(layer.dims), layer.repeat) for layer in layers] == [
        ("attn.q_proj", "gemm", {"M": 512, "N": 768, "K": 768}, 4),  # Q, K, V, out
        ("attn.qk", "bmm", {"B": 12, "M": 512, "N": 512, "K": 64}, 1),
        ("attn.av", "bmm", {"B": 12, "M": 512, "N": 64, "K": 512}, 1),
        ("ffn.up", "gemm", {"M": 512, "N": 3072, "K": 768}, 1),
        ("ffn.down", "gemm", {"M": 512, "N": 768, "K": 3072}, 1),
    ]


@pytest.mark.parametrize(("seq", "batch", "hidden", "heads", "ffn"),
                         [(512, 1, 768, 12, 3072), (128, 2, 256, 4, 1024), (64, 3, 96, 6, 384)])
def test_bert_block_macs(seq, batch, hidden, heads, ffn):
    layers = zoo.bert_base_block(seq=seq, batch=batch, hidden=hidden, heads=heads, ffn=ffn)
    assert total_macs(layers) == bert_formula(seq, batch, hidden, ffn)
    assert by_name(layers)["attn.qk"].dims["B"] == batch * heads


def test_bert_block_default_total():
    assert total_macs(zoo.bert_base_block()) == 4_026_531_840


def test_bert_block_heads_must_divide_hidden():
    with pytest.raises(ValueError, match="heads=5"):
        zoo.bert_base_block(heads=5)


# -------------------------------------------------------------------- registry


@pytest.mark.parametrize("name", sorted(zoo.NETWORKS))
def test_every_layer_validates(name):
    layers = zoo.get(name)
    assert layers and all(isinstance(layer, Layer) for layer in layers)
    for layer in layers:
        assert revalidate(layer) == layer
        assert layer.macs > 0 and layer.repeat >= 1
        assert all(layer.tensor_words(t) > 0 for t in ("W", "I", "O"))
    assert len({zoo.shape_key(layer) for layer in layers}) == len(layers)


def test_get_passes_kwargs_and_rejects_unknown():
    assert zoo.get("dqn", n_actions=4) == zoo.dqn(n_actions=4)
    assert set(zoo.NETWORKS) == {"resnet50", "dqn", "mlp_dlrm", "bert_base_block", "mobilenet_v2", "xception"}
    with pytest.raises(KeyError, match=r"unknown network 'vgg16'.*bert_base_block.*resnet50"):
        zoo.get("vgg16")


def test_merge_repeats():
    a, b = gemm("a", M=2, N=3, K=4), gemm("b", M=2, N=3, K=5)
    a2, c = gemm("a2", M=2, N=3, K=4, repeat=2), gemm("c", M=2, N=3, K=4, B=2)
    merged = zoo.merge_repeats([a, b, a2, c, b])
    assert [(layer.name, layer.repeat) for layer in merged] == [("a", 3), ("b", 2), ("c", 1)]
    # Same dims but different stride or padding are different shapes.
    x = conv2d_from_input("x", C=2, H=8, W=8, K=2, R=3, padding=1)
    y = conv2d_from_input("y", C=2, H=10, W=10, K=2, R=3, padding=0)
    assert x.dims == y.dims and len(zoo.merge_repeats([x, y])) == 2


def test_resolve_takes_a_batch_after_at():
    b32 = zoo.resolve("dqn@32")
    assert [layer.dims for layer in b32] == [layer.dims for layer in zoo.dqn(batch=32)]
    assert total_macs(b32) == 32 * total_macs(zoo.dqn())
    assert [layer.name for layer in zoo.resolve("dqn@32[3:]")] == ["fc1", "fc2"]
    assert zoo.resolve("mlp_dlrm@1")[0].dims["M"] == 1
    for bad in ("dqn@0", "dqn@x", "dqn@"):
        with pytest.raises(ValueError, match=r"batch .* after '@' must be a positive integer"):
            zoo.resolve(bad)
