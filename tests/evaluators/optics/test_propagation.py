"""Propagation physics: energy, H(0,0), ASM vs Fresnel, validity checks, Gaussian beam."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from evaluators.optics.propagation import (
    PropagationValidityError,
    PropagationValidityWarning,
    Propagator,
    asm_transfer,
    check_propagation,
    fresnel_transfer,
    propagate,
    rs_transfer,
)

VIS = {"wavelength_m": 532e-9, "pitch_m": 36e-6}  # LightRidge visible SLM (arXiv 2306.11268)
THZ = {"wavelength_m": 0.75e-3, "pitch_m": 0.4e-3}  # Lin et al., Science 2018, 0.4 THz


def _random_phase_mask(n: int, m: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    u = torch.zeros(m, m, dtype=torch.complex64)
    p = (m - n) // 2
    u[p:p + n, p:p + n] = torch.polar(torch.ones(n, n), 2 * math.pi * torch.rand(n, n, generator=g))
    return u


def _energy(u: torch.Tensor) -> float:
    return float((u.abs() ** 2).sum())


def test_band_limited_asm_conserves_energy_when_nothing_is_evanescent():
    m, z = 256, 0.3
    h = asm_transfer(m, VIS["pitch_m"], VIS["wavelength_m"], z)
    assert bool((h.abs() - 1).abs().max() < 1e-6)  # all-pass here: the band limit > Nyquist
    u = _random_phase_mask(128, m)
    assert _energy(propagate(u, h)) == pytest.approx(_energy(u), rel=1e-4)


def test_asm_loses_evanescent_energy_below_nyquist_ratio():
    # THz: corners of the grid's band are evanescent (an independent check: ~14 % lost at dx = 0.53 lambda)
    m = 128
    h = asm_transfer(m, THZ["pitch_m"], THZ["wavelength_m"], 0.03, band_limit=False)
    lost = 1 - float((h.abs() ** 2).mean())
    assert 0.05 < lost < 0.5


def test_dc_transfer_is_e_jkz():
    lam, z = VIS["wavelength_m"], 0.1234
    want = complex(math.cos(2 * math.pi * z / lam), math.sin(2 * math.pi * z / lam))
    for h in (asm_transfer(64, VIS["pitch_m"], lam, z), fresnel_transfer(64, VIS["pitch_m"], lam, z)):
        assert complex(h[0, 0]) == pytest.approx(want, abs=1e-5)


def test_asm_vs_fresnel_paraxial_visible_geometry():
    # an independent numpy check: relative L2 1.2e-3 at 532 nm / 36 um / 200 (+100 pad) / 0.3 m
    n, m, z = 200, 400, 0.3
    u = _random_phase_mask(n, m)
    a = propagate(u, asm_transfer(m, VIS["pitch_m"], VIS["wavelength_m"], z))
    f = propagate(u, fresnel_transfer(m, VIS["pitch_m"], VIS["wavelength_m"], z))
    rel = float(torch.linalg.vector_norm(a - f) / torch.linalg.vector_norm(a))
    assert 3e-4 < rel < 3e-3
    assert check_propagation(VIS["wavelength_m"], VIS["pitch_m"], m, z, "fresnel", warn=False).ok


def test_asm_vs_fresnel_disagree_and_check_fires_at_thz_geometry():
    n, m, z = 64, 128, 0.03
    u = _random_phase_mask(n, m)
    a = propagate(u, asm_transfer(m, THZ["pitch_m"], THZ["wavelength_m"], z))
    f = propagate(u, fresnel_transfer(m, THZ["pitch_m"], THZ["wavelength_m"], z))
    assert float(torch.linalg.vector_norm(a - f) / torch.linalg.vector_norm(a)) > 0.3
    rep = check_propagation(THZ["wavelength_m"], THZ["pitch_m"], 400, z, "fresnel", warn=False)
    assert not rep.ok and "paraxial" in rep.problems[0]
    with pytest.raises(PropagationValidityError):
        check_propagation(THZ["wavelength_m"], THZ["pitch_m"], 400, z, "fresnel", strict=True)
    with pytest.warns(PropagationValidityWarning):
        Propagator(200, 100, THZ["pitch_m"], THZ["wavelength_m"], z, "fresnel")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_propagation(THZ["wavelength_m"], THZ["pitch_m"], 400, z, "asm").ok


def test_check_refuses_sub_nyquist_pitch_and_fresnel_past_critical_distance():
    rep = check_propagation(1e-6, 0.4e-6, 64, 1e-3, "asm", warn=False)
    assert not rep.nyquist_ok and "lambda/2" in rep.problems[0]
    zc = 128 * VIS["pitch_m"] ** 2 / VIS["wavelength_m"]
    assert check_propagation(VIS["wavelength_m"], VIS["pitch_m"], 128, 0.99 * zc, "fresnel", warn=False).ok
    far = check_propagation(VIS["wavelength_m"], VIS["pitch_m"], 128, 1.5 * zc, "fresnel", warn=False)
    assert far.critical_distance_m == pytest.approx(zc)
    assert any("critical distance" in p for p in far.problems)


def _beam_width(u: torch.Tensor, pitch: float) -> float:
    """Second-moment width over the central half of the grid (the part a padded
    propagation keeps; the sampled RS kernel wraps around at the edges)."""
    q = u.shape[-1] // 4
    u = u[q:-q, q:-q]
    i = u.abs() ** 2
    m = i.shape[-1]
    x = (torch.arange(m, dtype=torch.float64) - m // 2) * pitch
    w = i.sum(0).double()
    var = float((w * x**2).sum() / w.sum())
    return 2 * math.sqrt(var)  # I ~ exp(-2 x^2 / w^2)  ->  <x^2> = w^2 / 4


def _gaussian(m: int, dx: float, w0: float) -> torch.Tensor:
    x = (torch.arange(m, dtype=torch.float64) - m // 2) * dx
    yy, xx = torch.meshgrid(x, x, indexing="ij")
    return torch.exp(-(xx**2 + yy**2) / w0**2).to(torch.complex64)


def _hop(u0: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    return torch.fft.fftshift(torch.fft.ifft2(torch.fft.fft2(torch.fft.ifftshift(u0)) * h))


@pytest.mark.parametrize("method", ["asm", "fresnel", "rs"])
def test_gaussian_beam_width_follows_w_z(method):
    lam, dx, m, w0 = 532e-9, 8e-6, 256, 60e-6
    zr = math.pi * w0**2 / lam
    u0 = _gaussian(m, dx, w0)
    assert _beam_width(u0, dx) == pytest.approx(w0, rel=0.01)
    fn = {"asm": asm_transfer, "fresnel": fresnel_transfer, "rs": rs_transfer}[method]
    # the sampled RS impulse response needs z beyond the critical distance (Voelz 2009)
    # and the Fresnel transfer function and the band-limited ASM z below it (z_c = 1.45 zR here)
    zs = {"rs": (2 * zr, 3 * zr, 4 * zr)}.get(method, (0.5 * zr, zr, 1.4 * zr))
    if method == "asm":  # issue 47: past z_c the band-limited ASM is refused
        assert all(not check_propagation(lam, dx, m, k * zr, "asm", warn=False).ok for k in (2, 3))
    for z in zs:
        assert check_propagation(lam, dx, m, z, method, warn=False).ok
        u = _hop(u0, fn(m, dx, lam, z))
        assert _beam_width(u, dx) == pytest.approx(w0 * math.sqrt(1 + (z / zr) ** 2), rel=0.02)


def test_rs_matches_asm_where_sampled_and_propagator_crops():
    lam, dx, m, w0 = 532e-9, 8e-6, 256, 60e-6
    z = 3 * math.pi * w0**2 / lam
    u0 = _gaussian(m, dx, w0)
    a, r = _hop(u0, asm_transfer(m, dx, lam, z)), _hop(u0, rs_transfer(m, dx, lam, z))
    a, r = a[64:-64, 64:-64], r[64:-64, 64:-64]
    assert float(torch.linalg.vector_norm(a - r) / torch.linalg.vector_norm(a)) < 1e-2
    assert not check_propagation(lam, dx, m, 0.2 * z, "rs", warn=False).ok  # under-sampled kernel
    p = Propagator(32, 16, VIS["pitch_m"], VIS["wavelength_m"], 0.05)
    out = p(torch.ones(3, 32, 32, dtype=torch.complex64))
    assert out.shape == (3, 32, 32) and out.dtype == torch.complex64


def test_propagation_is_differentiable():
    p = Propagator(16, 8, VIS["pitch_m"], VIS["wavelength_m"], 0.05)
    phi = torch.zeros(16, 16, requires_grad=True)
    out = p(torch.polar(torch.ones(16, 16), phi))
    (out.abs() ** 2)[4:8, 4:8].sum().backward()
    assert phi.grad is not None and float(phi.grad.abs().sum()) > 0
