"""MobileNetV2 and Xception layer lists: MACs vs the papers, parameter counts that pin the
architecture exactly, and the same layers extracted from equivalent torch modules."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from mappers import zoo
from mappers.from_torch import from_torch
from mappers.workloads import total_macs


def bn_params(layers, skip_depthwise: bool) -> int:
    """Batch-norm scale + offset after every convolution (Xception: not after the
    depthwise half of a separable convolution, Keras's SeparableConv2D + BN)."""
    return 2 * sum(layer.attrs["K"] * layer.repeat for layer in layers
                   if layer.kind != "gemm" and not (skip_depthwise and layer.kind == "depthwise"))


def weights(layers) -> int:
    return sum(layer.tensor_words("W") * layer.repeat for layer in layers)


def test_mobilenet_v2_macs_and_parameters():
    layers = zoo.mobilenet_v2()
    total = total_macs(layers)
    assert total == zoo.MOBILENET_V2_MACS_224 == 300_774_272
    assert abs(total - 300e6) / 300e6 < 0.005                # paper Table 4: 300M MAdds
    # torchvision mobilenet_v2 has 3,504,872 parameters: conv + fc weights, fc bias, BN
    assert weights(layers) + 1000 + bn_params(layers, skip_depthwise=False) == 3_504_872
    assert sum(layer.repeat for layer in layers if layer.kind == "depthwise") == 17
    assert sum(layer.repeat for layer in layers if layer.kind != "gemm") == 52   # 1 + 17*3 - 1 + 1
    dw = [layer for layer in layers if layer.kind == "depthwise"]
    assert all(layer.dims["K"] == layer.dims["C"] == 1 and layer.dims["R"] == 3 for layer in dw)


def test_xception_macs_and_parameters():
    layers = zoo.xception()
    assert total_macs(layers) == zoo.XCEPTION_MACS_299 == 8_357_403_496
    # Chollet 2017, Table 3: 22,855,952 parameters (Keras: the trainable ones)
    assert weights(layers) + 1000 + bn_params(layers, skip_depthwise=True) == 22_855_952
    # 36 convolutional layers in 14 modules (Figure 5: 2 + 34 separable, plus 4 shortcuts)
    assert sum(layer.repeat for layer in layers if layer.kind == "depthwise") == 34
    assert sum(layer.repeat for layer in layers if layer.name.endswith("shortcut")) == 4
    by = {layer.name: layer for layer in layers}
    # 8 middle blocks x 3, plus block13's first (728 -> 728 at 19x19): one shape
    assert by["block5.sepconv1_pw"].repeat == 25 and by["block5.sepconv1_pw"].dims["P"] == 19
    assert by["block14.sepconv2_pw"].dims["P"] == 10
    assert total_macs(zoo.xception(image=224)) == 4_552_879_072
    with pytest.raises(ValueError, match="image must be >= 71"):
        zoo.xception(image=64)
    with pytest.raises(ValueError, match="batch must be a positive integer"):
        zoo.mobilenet_v2(batch=0)


# --------------------------------------------------- the same networks written in torch


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, t: int) -> None:
        super().__init__()
        hidden = cin * t
        mods: list[nn.Module] = []
        if t != 1:
            mods.append(nn.Conv2d(cin, hidden, 1, bias=False))
        mods += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                 nn.Conv2d(hidden, cout, 1, bias=False)]
        self.conv = nn.Sequential(*mods)

    def forward(self, x):
        return self.conv(x)


class TorchMobileNetV2(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        mods: list[nn.Module] = [nn.Conv2d(3, 32, 3, 2, 1, bias=False)]
        cin = 32
        for t, c, n, s in zoo.MOBILENET_V2_SETTINGS:
            for i in range(n):
                mods.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        mods.append(nn.Conv2d(cin, 1280, 1, bias=False))
        self.features = nn.Sequential(*mods)
        self.classifier = nn.Linear(1280, 1000)

    def forward(self, x):
        return self.classifier(self.features(x).mean((2, 3)))


class Sep(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, 1, 1, groups=cin, bias=False)
        self.pw = nn.Conv2d(cin, cout, 1, bias=False)

    def forward(self, x):
        return self.pw(torch.relu(self.dw(x)))


class Block(nn.Module):
    def __init__(self, cin: int, widths: list[int], down: bool) -> None:
        super().__init__()
        seps, c = [], cin
        for w in widths:
            seps.append(Sep(c, w))
            c = w
        self.seps = nn.Sequential(*seps)
        self.down = down
        self.shortcut = nn.Conv2d(cin, c, 1, 2, bias=False) if down else None

    def forward(self, x):
        y = self.seps(x)
        if self.down:
            y = nn.functional.max_pool2d(y, 3, 2, 1)           # "same": ceil(H / 2)
            return y + self.shortcut(x)
        return y + x


class TorchXception(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, 2, bias=False)
        self.conv2 = nn.Conv2d(32, 64, 3, bias=False)
        blocks = [Block(64, [128, 128], True), Block(128, [256, 256], True), Block(256, [728, 728], True)]
        blocks += [Block(728, [728, 728, 728], False) for _ in range(8)]
        blocks += [Block(728, [728, 1024], True)]
        self.blocks = nn.Sequential(*blocks)
        self.exit = nn.Sequential(Sep(1024, 1536), Sep(1536, 2048))
        self.fc = nn.Linear(2048, 1000)

    def forward(self, x):
        return self.fc(self.exit(self.blocks(self.conv2(self.conv1(x)))).mean((2, 3)))


def shapes(layers):
    return sorted((repr(zoo.shape_key(layer)), layer.repeat) for layer in layers)


def test_layers_equal_those_extracted_from_torch_modules():
    # a small image keeps the forward pass cheap; the strides and paddings are what
    # differ (an odd size for Xception exercises the "same" pooling's ceil)
    image = 64
    torch.manual_seed(0)
    mb = from_torch(TorchMobileNetV2().eval(), torch.zeros(1, 3, image, image))
    assert shapes(mb) == shapes(zoo.mobilenet_v2(image=image))
    xc = from_torch(TorchXception().eval(), torch.zeros(1, 3, image + 19, image + 19))
    assert shapes(xc) == shapes(zoo.xception(image=image + 19))
