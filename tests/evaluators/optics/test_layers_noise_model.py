"""Layers, detector, noise and the (multi-task) network: exact small cases."""

from __future__ import annotations

import math

import pytest
import torch

from accelerators.diffractive import DiffractiveAccelerator
from evaluators.optics.layers import (
    Detector,
    PhaseLayer,
    grid_layout,
    lightridge_layout,
    quantize_ste,
)
from evaluators.optics.model import DiffractiveNetwork
from evaluators.optics.noise import NOISE_SWEEPS, Noise
from evaluators.optics.train import resolve_device

SMALL = DiffractiveAccelerator(n=32, pad=16, z_m=0.05, layers=2, detector_size_px=3)


def test_quantize_ste_forward_rounds_backward_is_identity():
    x = torch.tensor([0.1, 0.9, 1.6], requires_grad=True)
    q = quantize_ste(x, 0.5)
    assert q.tolist() == pytest.approx([0.0, 1.0, 1.5])
    q.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_phase_layer_levels_and_amplitude_coupling():
    layer = PhaseLayer(8, phase_levels=4)
    phi = layer.device_phase()
    assert set(torch.round(phi / (math.pi / 2)).long().unique().tolist()) <= {0, 1, 2, 3}
    assert float(layer.transmission().detach().abs().max()) == pytest.approx(1.0)
    coupled = PhaseLayer(8, modulation="coupled", amplitude_min=0.41, phase_range_rad=5.33)
    amp = coupled.transmission().detach().abs()
    assert 0.41 - 1e-6 <= float(amp.min()) and float(amp.max()) <= 1 + 1e-6
    assert float(PhaseLayer(8, modulation="complex").transmission().detach().abs().max()) < 1


def test_detector_layouts_and_readout():
    lr = lightridge_layout(200, 20)
    assert (lr[0][0] + 10, lr[0][1] + 10) == (40, 40) and len(lr) == 10
    assert len(grid_layout(64, 10, 6)) == 10
    with pytest.raises(ValueError, match="overlap"):
        Detector(10, [(0, 0, 4), (2, 2, 4)])
    det = Detector(4, [(0, 0, 2), (2, 2, 2)])
    u = torch.zeros(1, 4, 4, dtype=torch.complex64)
    u[0, 0, 0] = 2.0  # intensity 4 in region 0 (mean over 4 px = 1)
    assert det(u).tolist() == [[1.0, 0.0]]
    diff = Detector(4, [(0, 0, 2), (2, 2, 2)], differential=True)
    assert diff(u)[0].tolist() == pytest.approx([1.0])


def test_network_shapes_energy_bound_and_task_split():
    net = DiffractiveNetwork(SMALL.with_(tasks=2, shared_layers=1), seed=0)
    x = torch.rand(5, 32, 32)
    with torch.no_grad():
        s = net(x)
    assert s.shape == (5, 2, 10)
    # a phase-only system with a 50/50 split cannot put more power on the planes than it gets
    with torch.no_grad():
        f = net.fields(x)
    tot = sum(float((v.abs() ** 2).sum()) for v in f)
    assert tot <= 32 * 32 * 5 * (1 + 1e-4)
    task, cls = DiffractiveNetwork.recognize(s)
    assert task.shape == cls.shape == (5,) and int(task.max()) <= 1
    assert len(list(net.parameters())) == 1 + 2 * 1
    assert float(net.logits(s)[0, 0, 0]) == pytest.approx(float(s[0, 0, 0]) * 1.5**4)


def test_noise_changes_output_and_ideal_is_deterministic():
    net = DiffractiveNetwork(SMALL, seed=1)
    x = torch.rand(3, 32, 32)
    base = net(x)
    assert torch.equal(base, net(x, Noise()))
    for _name, field, levels in NOISE_SWEEPS:
        worst = [v for v in levels if v not in (None, 0.0)][-1]
        if field == "phase_levels":
            net2 = DiffractiveNetwork(SMALL, seed=1, init_scale_rad=2.0)
            out, ref = net2(x, Noise(phase_levels=worst)), net2(x)
        else:
            out, ref = net(x, Noise(**{field: worst}), torch.Generator().manual_seed(0)), base
        assert not torch.allclose(out, ref), field


def test_training_noise_draws_stay_within_levels():
    g = torch.Generator().manual_seed(0)
    n = Noise(phase_sigma_rad=0.5, wavelength_shift_rel=0.02, lateral_px=2).sample_training(g)
    assert 0 <= n.phase_sigma_rad <= 0.5 and abs(n.wavelength_shift_rel) <= 0.02 and 0 <= n.lateral_px <= 2


def test_cuda_request_fails_clearly_without_cuda():
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        resolve_device("cuda")
