"""Reference networks as exact layer lists (the MAC layers only, with repeat counts).

Every function returns a ``list[Layer]`` of *unique* shapes in network order of first
occurrence; ``repeat`` says how many times that shape occurs in the network (the name is
the one of the first occurrence). Two layers count as the same shape when
:func:`shape_key` says so: same kind, dimensions, operand projections (strides,
dilation) and constructor attributes (input size, padding ...). Non-MAC operators
(pooling, normalisation, activations, softmax, element-wise adds, embedding lookups) are
not modelled. Convolutions are built with :func:`~mappers.workloads.conv2d_from_input`
(input size + padding, as ``torch.nn.Conv2d``), so the lists compare exactly with what
:func:`mappers.from_torch.from_torch` extracts from the equivalent PyTorch modules.

``NETWORKS`` maps a name to its builder and :func:`get` builds one by name.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import pairwise
from typing import Any

from mappers.workloads import Layer, conv2d, conv2d_from_input, conv_output_size, gemm

__all__ = [
    "ALEXNET_CONVS",
    "NETWORKS",
    "alexnet_convs",
    "bert_base_block",
    "dqn",
    "get",
    "merge_repeats",
    "mlp_dlrm",
    "mobilenet_v2",
    "resnet50",
    "resolve",
    "shape_key",
    "xception",
]


def shape_key(layer: Layer) -> Hashable:
    """What makes two layers "the same shape" (everything but ``name`` and ``repeat``)."""
    attrs = repr(sorted(layer.attrs.items()))
    return (layer.kind, tuple(layer.dims.items()), layer.tensors, attrs)


def merge_repeats(layers: Iterable[Layer]) -> list[Layer]:
    """Merge layers of identical shape (:func:`shape_key`) into one, summing ``repeat``.

    The merged layer keeps the position and the name of the first occurrence.
    """
    merged: dict[Hashable, Layer] = {}
    for layer in layers:
        key = shape_key(layer)
        first = merged.get(key)
        merged[key] = layer if first is None else first.with_repeat(first.repeat + layer.repeat)
    return list(merged.values())


def _positive(network: str, **vals: int) -> None:
    for k, v in vals.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{network}: {k} must be a positive integer, got {v!r}")


# --------------------------------------------------------------------------- ResNet-50

RESNET50_MACS_224 = 4_089_184_256
"""Total MACs of :func:`resnet50` at batch 1, 224x224 (53 convolutions + the fc)."""


#: AlexNet's convolutions (Krizhevsky, Sutskever, Hinton, NIPS 2012, with its two GPU halves
#: as groups) as Eyeriss v1 ran them (JSSC 2017 Table III, :data:`accelerators.reference.
#: EYERISS_TABLE_III`): K filters, C input channels (all groups), P = Q output size, R = S
#: filter size, stride, groups.
ALEXNET_CONVS: dict[str, dict[str, int]] = {
    "CONV1": dict(K=96, C=3, P=55, R=11, stride=4, groups=1),
    "CONV2": dict(K=256, C=96, P=27, R=5, stride=1, groups=2),
    "CONV3": dict(K=384, C=256, P=13, R=3, stride=1, groups=1),
    "CONV4": dict(K=384, C=384, P=13, R=3, stride=1, groups=2),
    "CONV5": dict(K=256, C=384, P=13, R=3, stride=1, groups=2),
}


def alexnet_convs(batch: int = 1) -> list[Layer]:
    """AlexNet's five convolutions, ``CONV1`` .. ``CONV5`` (:data:`ALEXNET_CONVS`).

    Unlike the other networks here they are built from their output sizes
    (:func:`~mappers.workloads.conv2d`), as the Eyeriss tables give them, since their
    padded input sizes (Table III's ``H``) fold the padding in; the fully connected layers
    are left out (Eyeriss's AlexNet figures cover the convolutions only).
    """
    _positive("alexnet", batch=batch)
    return [conv2d(name, N=batch, K=c["K"], C=c["C"], P=c["P"], Q=c["P"], R=c["R"], S=c["R"],
                   stride=c["stride"], groups=c["groups"]) for name, c in ALEXNET_CONVS.items()]


def resnet50(batch: int = 1, image: int = 224) -> list[Layer]:
    """ResNet-50 v1.5 (torchvision ``resnet50``): every convolution and the final fc.

    Stem: ``conv1`` 7x7/2 (padding 3, 3 -> 64 channels), then a 3x3/2 max-pool (padding 1;
    not a MAC layer). Four stages of bottlenecks ``[3, 4, 6, 3]`` with widths
    ``64, 128, 256, 512`` and expansion 4: ``conv1`` 1x1, ``conv2`` 3x3 (padding 1),
    ``conv3`` 1x1; the first block of each stage has a ``downsample.0`` 1x1 projection
    convolution. v1.5: in stages 2-4 the stride 2 sits on the 3x3 ``conv2`` (and on the
    downsample convolution), not on ``conv1``. Global average pool, then ``fc``
    2048 -> 1000 as a GEMM with ``M = batch``. Batch norm / ReLU / adds are not modelled.

    That is 53 convolutions (49 in the main path + 4 downsample) and one GEMM; at
    ``batch=1, image=224`` the total is exactly ``4_089_184_256`` MACs
    (:data:`RESNET50_MACS_224`; the well-known "4.1 GMACs" figure): 4,087,136,256 in the
    convolutions plus 2,048,000 in the fc. Layers are named as in torchvision
    (``"conv1"``, ``"layer1.0.conv2"``, ``"layer2.0.downsample.0"``, ``"fc"``).
    """
    _positive("resnet50", batch=batch, image=image)
    layers: list[Layer] = []

    def conv(name: str, c: int, hw: int, k: int, r: int, stride: int = 1, pad: int = 0) -> int:
        layers.append(conv2d_from_input(name, N=batch, C=c, H=hw, W=hw, K=k, R=r,
                                        stride=stride, padding=pad))
        return conv_output_size(hw, r, stride, pad)

    hw = conv("conv1", 3, image, 64, 7, stride=2, pad=3)
    hw = conv_output_size(hw, 3, 2, 1)  # max-pool 3x3/2, padding 1
    if hw < 1:
        raise ValueError(f"resnet50: image={image} is too small")
    channels = 64
    for stage, (blocks, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512)), start=1):
        for b in range(blocks):
            prefix = f"layer{stage}.{b}"
            stride = 2 if stage > 1 and b == 0 else 1
            conv(f"{prefix}.conv1", channels, hw, width, 1)
            out_hw = conv(f"{prefix}.conv2", width, hw, width, 3, stride=stride, pad=1)
            conv(f"{prefix}.conv3", width, out_hw, 4 * width, 1)
            if b == 0:  # projection shortcut (channels change in every first block)
                conv(f"{prefix}.downsample.0", channels, hw, 4 * width, 1, stride=stride)
            channels, hw = 4 * width, out_hw
    layers.append(gemm("fc", M=batch, K=channels, N=1000))
    return merge_repeats(layers)


# --------------------------------------------------------------------------------- DQN

def dqn(batch: int = 1, n_actions: int = 18) -> list[Layer]:
    """Nature DQN (Mnih et al., "Human-level control through deep RL", Nature 2015).

    Input ``4 x 84 x 84`` (four stacked grey frames): ``conv1`` 8x8/4 -> 32 x 20 x 20,
    ``conv2`` 4x4/2 -> 64 x 9 x 9, ``conv3`` 3x3/1 -> 64 x 7 x 7 (no padding anywhere),
    ``fc1`` 3136 -> 512, ``fc2`` 512 -> ``n_actions`` (18 = full Atari action set). At
    batch 1: 3,276,800 + 2,654,208 + 1,806,336 + 1,605,632 + 512 * n_actions MACs.
    """
    _positive("dqn", batch=batch, n_actions=n_actions)
    return merge_repeats([
        conv2d_from_input("conv1", N=batch, C=4, H=84, W=84, K=32, R=8, stride=4),
        conv2d_from_input("conv2", N=batch, C=32, H=20, W=20, K=64, R=4, stride=2),
        conv2d_from_input("conv3", N=batch, C=64, H=9, W=9, K=64, R=3, stride=1),
        gemm("fc1", M=batch, K=64 * 7 * 7, N=512),
        gemm("fc2", M=batch, K=512, N=n_actions),
    ])


# -------------------------------------------------------------------------------- DLRM

DLRM_BOTTOM_MLP = (13, 512, 256, 128)
DLRM_TOP_MLP = (479, 1024, 1024, 512, 256, 1)


def mlp_dlrm(batch: int = 128) -> list[Layer]:
    """The MLPs of DLRM in the MLPerf Training configuration (Criteo Terabyte).

    Source: the MLPerf Training DLRM reference (mlcommons/training
    ``recommendation/dlrm``, i.e. facebookresearch/dlrm ``bench/run_and_time.sh`` with
    ``--data-set=terabyte``): ``--arch-mlp-bot=13-512-256-128``,
    ``--arch-mlp-top=1024-1024-512-256-1``, ``--arch-sparse-feature-size=128``, 26
    categorical features. The top MLP's input is the bottom MLP output (128) concatenated
    with the 27*26/2 = 351 pairwise dot products of the 27 feature vectors: 479.

    Bottom MLP ``13-512-256-128`` (``bot.0`` .. ``bot.2``) and top MLP
    ``479-1024-1024-512-256-1`` (``top.0`` .. ``top.4``) as GEMMs with ``M = batch``,
    ``K`` = input width, ``N`` = output width. ``top.3`` (512 -> 256) has the shape of
    ``bot.1`` and is merged into it (``repeat=2``), so the list has 7 entries for the 8
    fully connected layers. The embedding-table lookups (gathers) and
    the pairwise dot-product feature interaction are not MAC layers of this model and are
    omitted (as are the activations).
    """
    _positive("mlp_dlrm", batch=batch)
    layers = []
    for prefix, widths in (("bot", DLRM_BOTTOM_MLP), ("top", DLRM_TOP_MLP)):
        for i, (k, n) in enumerate(pairwise(widths)):
            layers.append(gemm(f"{prefix}.{i}", M=batch, K=k, N=n))
    return merge_repeats(layers)


# -------------------------------------------------------------------------------- BERT

def bert_base_block(
    seq: int = 512, batch: int = 1, hidden: int = 768, heads: int = 12, ffn: int = 3072,
) -> list[Layer]:
    """One BERT-base encoder block (post-LN transformer layer) as GEMMs.

    With ``T = batch * seq`` tokens, ``h = hidden``, ``d = hidden / heads``:

    * ``attn.q_proj`` -- the Q, K, V projections and the output projection: all four are
      GEMMs ``M=T, K=h, N=h`` of identical shape, hence one layer with ``repeat=4``
      (Q, K, V, then the output projection after the attention);
    * ``attn.qk`` -- ``Q K^T`` per head: batched matmul ``B=batch*heads, M=seq, K=d,
      N=seq``;
    * ``attn.av`` -- attention weights x ``V``: ``B=batch*heads, M=seq, K=seq, N=d``;
    * ``ffn.up`` -- ``M=T, K=h, N=ffn``; ``ffn.down`` -- ``M=T, K=ffn, N=h``.

    Total MACs: ``4*T*h*h + 2*batch*seq*seq*h + 2*T*h*ffn`` (4,026,531,840 at the
    defaults). Softmax, the scaling, LayerNorm, GELU and residual adds are not MAC layers
    and are omitted.
    """
    _positive("bert_base_block", seq=seq, batch=batch, hidden=hidden, heads=heads, ffn=ffn)
    if hidden % heads:
        raise ValueError(f"bert_base_block: heads={heads} must divide hidden={hidden}")
    tokens, d = batch * seq, hidden // heads
    return merge_repeats([
        gemm("attn.q_proj", M=tokens, K=hidden, N=hidden),
        gemm("attn.k_proj", M=tokens, K=hidden, N=hidden),
        gemm("attn.v_proj", M=tokens, K=hidden, N=hidden),
        gemm("attn.qk", B=batch * heads, M=seq, K=d, N=seq),
        gemm("attn.av", B=batch * heads, M=seq, K=seq, N=d),
        gemm("attn.out_proj", M=tokens, K=hidden, N=hidden),
        gemm("ffn.up", M=tokens, K=hidden, N=ffn),
        gemm("ffn.down", M=tokens, K=ffn, N=hidden),
    ])


# ------------------------------------------------------------------------- MobileNetV2

MOBILENET_V2_SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                         (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))
"""The bottleneck stages ``(t, c, n, s)`` of Sandler et al., CVPR 2018, Table 2: expansion
factor, output channels, repeats, stride of the first repeat."""


def mobilenet_v2(batch: int = 1, image: int = 224, n_classes: int = 1000) -> list[Layer]:
    """MobileNetV2 (Sandler, Howard, Zhu, Zhmoginov, Chen, "MobileNetV2: Inverted Residuals
    and Linear Bottlenecks", CVPR 2018), width 1.0, as in its Table 2 and torchvision's
    ``mobilenet_v2``.

    ``features.0``: conv 3x3/2 (padding 1), 3 -> 32. Then the 17 inverted-residual blocks
    of :data:`MOBILENET_V2_SETTINGS` (``features.1`` .. ``features.17``): a 1x1 expansion
    to ``t * c_in`` channels (absent when ``t == 1``), a 3x3 depthwise convolution
    (padding 1, the stage's stride on its first block), a 1x1 linear projection to ``c``.
    ``features.18``: conv 1x1, 320 -> 1280; global average pool; ``classifier`` fc
    1280 -> ``n_classes`` (a GEMM, ``M = batch``). Names: ``features.<i>.expand``,
    ``features.<i>.dw``, ``features.<i>.project``.

    At ``batch=1, image=224``: 300,774,272 MACs (the paper's Table 4 says "300M" MAdds)
    -- 299,494,272 in convolutions (of which 20,716,416 depthwise) plus 1,280,000 in the
    fc (:data:`MOBILENET_V2_MACS_224`). Its weights plus batch-norm scales/offsets and the
    fc bias number 3,504,872 (torchvision's parameter count; the paper rounds to 3.4M).
    """
    _positive("mobilenet_v2", batch=batch, image=image, n_classes=n_classes)
    layers: list[Layer] = []

    def conv(name: str, c: int, hw: int, k: int, r: int, stride: int = 1, groups: int = 1) -> int:
        pad = (r - 1) // 2
        layers.append(conv2d_from_input(name, N=batch, C=c, H=hw, W=hw, K=k, R=r, stride=stride,
                                        padding=pad, groups=groups))
        return conv_output_size(hw, r, stride, pad)

    hw = conv("features.0", 3, image, 32, 3, stride=2)
    channels, block = 32, 1
    for t, c, n, s in MOBILENET_V2_SETTINGS:
        for i in range(n):
            hidden = t * channels
            if t != 1:
                conv(f"features.{block}.expand", channels, hw, hidden, 1)
            hw = conv(f"features.{block}.dw", hidden, hw, hidden, 3, stride=s if i == 0 else 1,
                      groups=hidden)
            conv(f"features.{block}.project", hidden, hw, c, 1)
            channels, block = c, block + 1
    conv(f"features.{block}", channels, hw, 1280, 1)
    layers.append(gemm("classifier", M=batch, K=1280, N=n_classes))
    return merge_repeats(layers)


MOBILENET_V2_MACS_224 = 300_774_272
"""Total MACs of :func:`mobilenet_v2` at batch 1, 224x224."""


# ---------------------------------------------------------------------------- Xception

def xception(batch: int = 1, image: int = 299, n_classes: int = 1000) -> list[Layer]:
    """Xception (Chollet, "Xception: Deep Learning with Depthwise Separable Convolutions",
    CVPR 2017, Figure 5; Keras ``applications.Xception``), default input 299x299.

    Entry flow: ``block1.conv1`` 3x3/2 valid, 3 -> 32; ``block1.conv2`` 3x3 valid,
    32 -> 64; then three blocks (``block2..block4``) of two separable convolutions
    (128, 256, 728 channels) and a 3x3/2 max-pool ("same"), each with a 1x1/2
    projection shortcut (``block<i>.shortcut``). Middle flow: 8 blocks (``block5`` ..
    ``block12``) of three 728-channel separable convolutions, identity shortcuts. Exit
    flow: ``block13`` separable convolutions 728 and 1024, max-pool, 1x1/2 shortcut to
    1024; ``block14`` separable convolutions 1536 and 2048; global average pool; fc
    2048 -> ``n_classes`` (``predictions``).

    A separable convolution ``block<i>.sepconv<j>`` is a 3x3 depthwise convolution
    ("same" padding, stride 1; ``..._dw``) followed by a 1x1 pointwise one
    (``..._pw``). Spatial sizes at 299: 149, 147, 74, 37, 19 (middle flow), 10.

    At ``batch=1, image=299``: 8,357,403,496 MACs (:data:`XCEPTION_MACS_299`; 132,190,344
    of them depthwise, 2,048,000 in the fc). The paper reports parameters, not
    operations: 22,855,952 (its Table 3), which these layers' weights plus the fc bias and
    the batch-norm scales/offsets reproduce exactly. HASCO feeds its Keras models 224x224
    inputs (``image=224``: 4,552,879,072 MACs).
    """
    _positive("xception", batch=batch, image=image, n_classes=n_classes)
    if image < 71:
        raise ValueError(f"xception: image must be >= 71 (Keras's minimum), got {image}")
    layers: list[Layer] = []

    def conv(name: str, c: int, hw: int, k: int, r: int, stride: int = 1, pad: int = 0,
             groups: int = 1) -> int:
        layers.append(conv2d_from_input(name, N=batch, C=c, H=hw, W=hw, K=k, R=r, stride=stride,
                                        padding=pad, groups=groups))
        return conv_output_size(hw, r, stride, pad)

    def sep(name: str, c: int, hw: int, k: int) -> None:
        conv(f"{name}_dw", c, hw, c, 3, pad=1, groups=c)
        conv(f"{name}_pw", c, hw, k, 1)

    def pool(hw: int) -> int:  # max-pool 3x3/2, "same": ceil(hw / 2)
        return -(-hw // 2)

    hw = conv("block1.conv1", 3, image, 32, 3, stride=2)
    hw = conv("block1.conv2", 32, hw, 64, 3)
    channels = 64
    for i, width in zip((2, 3, 4), (128, 256, 728)):
        sep(f"block{i}.sepconv1", channels, hw, width)
        sep(f"block{i}.sepconv2", width, hw, width)
        conv(f"block{i}.shortcut", channels, hw, width, 1, stride=2)
        hw, channels = pool(hw), width
    for i in range(5, 13):
        for j in (1, 2, 3):
            sep(f"block{i}.sepconv{j}", 728, hw, 728)
    sep("block13.sepconv1", 728, hw, 728)
    sep("block13.sepconv2", 728, hw, 1024)
    conv("block13.shortcut", 728, hw, 1024, 1, stride=2)
    hw = pool(hw)
    sep("block14.sepconv1", 1024, hw, 1536)
    sep("block14.sepconv2", 1536, hw, 2048)
    layers.append(gemm("predictions", M=batch, K=2048, N=n_classes))
    return merge_repeats(layers)


XCEPTION_MACS_299 = 8_357_403_496
"""Total MACs of :func:`xception` at batch 1, 299x299."""


# ---------------------------------------------------------------------------- registry

NETWORKS: dict[str, Callable[..., list[Layer]]] = {
    "resnet50": resnet50,
    "dqn": dqn,
    "mlp_dlrm": mlp_dlrm,
    "bert_base_block": bert_base_block,
    "mobilenet_v2": mobilenet_v2,
    "xception": xception,
}


def get(name: str, **kw: Any) -> list[Layer]:
    """Build the network ``name`` of :data:`NETWORKS` with keyword arguments ``kw``."""
    try:
        builder = NETWORKS[name]
    except KeyError:
        known = ", ".join(sorted(NETWORKS))
        raise KeyError(f"unknown network {name!r}; known networks: {known}") from None
    return builder(**kw)


def resolve(workload: Sequence[Layer] | str) -> list[Layer]:
    """A list of layers as given, or a network name of :data:`NETWORKS` with an optional
    batch size and layer selection: ``"resnet50"``, ``"resnet50[0:5]"`` (its first five
    unique layers), ``"dqn[2]"`` (one layer), ``"dqn@32"`` (built with ``batch=32``),
    ``"dqn@32[0:3]"``.

    Raises:
        ValueError: an unknown network, a batch that is not a positive integer, a
            malformed selection or one that selects no layer, or a list that is empty or holds something other than layers.
    """
    if not isinstance(workload, str):
        layers = list(workload)
        if not layers or not all(isinstance(x, Layer) for x in layers):
            raise ValueError("workload must be a non-empty list of Layer objects or a zoo name")
        return layers
    name, _, sel = workload.partition("[")
    name, at, batch = name.strip().partition("@")
    kw: dict[str, Any] = {}
    if at:
        if not batch.strip().isdigit() or int(batch) < 1:
            raise ValueError(f"workload {workload!r}: batch {batch!r} after '@' must be a positive integer")
        kw["batch"] = int(batch)
    try:
        layers = get(name.strip(), **kw)
    except KeyError as e:
        raise ValueError(f"workload {workload!r}: {e.args[0]}") from None
    if sel:
        if not sel.endswith("]"):
            raise ValueError(f"workload {workload!r}: expected name[start:stop]")
        parts = sel[:-1].split(":")
        try:
            idx = [int(x) if x else None for x in parts]
        except ValueError:
            raise ValueError(f"workload {workload!r}: bad layer selection {sel[:-1]!r}") from None
        layers = layers[slice(*idx)] if len(idx) > 1 else [layers[idx[0]]]
        if not layers:
            raise ValueError(f"workload {workload!r} selects no layers")
    return layers
