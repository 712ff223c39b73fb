"""Scalar free-space propagation between diffractive layers (torch, complex64, batched).

Three transfer functions on an ``M x M`` grid of pitch ``dx`` (``M = N + 2 pad``); a
field ``u`` (``(..., M, M)``, complex) propagates as ``ifft2(fft2(u) * H)``:

* :func:`asm_transfer` -- the angular spectrum (exact scalar diffraction),
  ``H = exp(j 2 pi z sqrt(1/lambda^2 - fx^2 - fy^2))``, zero for evanescent waves; with
  ``band_limit=True`` also zero beyond Matsushima & Shimobaba's limit
  ``|f| <= 1 / (lambda sqrt((2 df z)^2 + 1))``, ``df = 1 / (M dx)`` per axis (Opt. Express
  17:19662, 2009, Eq. 13), which removes the aliasing of a long-distance transfer function.
* :func:`fresnel_transfer` -- the paraxial Fresnel transfer function
  ``H = exp(jkz) exp(-j pi lambda z (fx^2 + fy^2))`` (Goodman, *Introduction to Fourier
  Optics*, 3rd ed., Eq. 4-21).
* :func:`rs_transfer` -- the first Rayleigh-Sommerfeld impulse response
  ``h = (z / r^2) (1/(2 pi r) + 1/(j lambda)) exp(j k r)`` (Lin et al., Science 361:1004,
  2018, Eq. 1; Goodman Eq. 4-9 without the paraxial step), sampled on the grid and
  transformed (``H = FFT(h) dx^2``): a circular convolution, so the padding must hold
  the spread of the light.

:func:`~accelerators.diffraction_limits.check_propagation` (re-exported here) says where a
propagator is invalid, including the band-limited ASM past the padded grid's critical
distance and the wrap-around error of the padding
(:func:`~accelerators.diffraction_limits.padding_error`, tolerance ``tol``, default
:data:`~accelerators.diffraction_limits.PADDING_TOL`);
:func:`~accelerators.diffraction_limits.plan_propagation` picks a method and pad that meet a
tolerance. They live with the accelerator model, which refuses to be built with a geometry
its propagator cannot simulate. A :class:`Propagator` built with ``pad="auto"`` and/or
``method="auto"`` takes the plan's choice.
"""

from __future__ import annotations

import math

import torch

from accelerators.diffraction_limits import (
    FRESNEL_PHASE_TOL_RAD,
    METHODS,
    PADDING_TOL,
    PropagationPlan,
    PropagationValidityError,
    PropagationValidityWarning,
    ValidityReport,
    band_limit_per_axis,
    check_propagation,
    padding_error,
    plan_propagation,
)

__all__ = [
    "FRESNEL_PHASE_TOL_RAD",
    "METHODS",
    "PADDING_TOL",
    "PropagationPlan",
    "PropagationValidityError",
    "PropagationValidityWarning",
    "Propagator",
    "ValidityReport",
    "asm_transfer",
    "band_limit_per_axis",
    "check_propagation",
    "frequencies",
    "fresnel_transfer",
    "padding_error",
    "plan_propagation",
    "propagate",
    "rs_transfer",
    "transfer",
]

def frequencies(m: int, pitch_m: float, device: torch.device | str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """FFT-ordered spatial frequencies ``(fx, fy)`` [1/m] of an ``m x m`` grid, as
    ``(m, m)`` float64 tensors (``fy`` varies along rows)."""
    f = torch.fft.fftfreq(m, d=pitch_m, dtype=torch.float64, device=device)
    fy, fx = torch.meshgrid(f, f, indexing="ij")
    return fx, fy


def asm_transfer(m: int, pitch_m: float, wavelength_m: float, z_m: float, *, band_limit: bool = True,
                 device: torch.device | str | None = None) -> torch.Tensor:
    """Angular-spectrum transfer function (complex64, ``(m, m)``, FFT order); evanescent
    components and (``band_limit``) frequencies past the M&S limit are set to 0."""
    fx, fy = frequencies(m, pitch_m, device)
    arg = 1.0 / wavelength_m**2 - fx**2 - fy**2
    prop = arg > 0
    phase = 2.0 * math.pi * z_m * torch.sqrt(torch.clamp(arg, min=0.0))
    keep = prop
    if band_limit:
        lim = band_limit_per_axis(m, pitch_m, wavelength_m, abs(z_m))
        keep = keep & (fx.abs() <= lim) & (fy.abs() <= lim)
    h = torch.polar(keep.to(torch.float64), phase)
    return h.to(torch.complex64)


def fresnel_transfer(m: int, pitch_m: float, wavelength_m: float, z_m: float,
                     device: torch.device | str | None = None) -> torch.Tensor:
    """Fresnel transfer function ``exp(jkz) exp(-j pi lambda z f^2)`` (complex64, FFT order)."""
    fx, fy = frequencies(m, pitch_m, device)
    k = 2.0 * math.pi / wavelength_m
    phase = k * z_m - math.pi * wavelength_m * z_m * (fx**2 + fy**2)
    return torch.polar(torch.ones_like(phase), phase).to(torch.complex64)


def rs_transfer(m: int, pitch_m: float, wavelength_m: float, z_m: float,
                device: torch.device | str | None = None) -> torch.Tensor:
    """Transfer function of the sampled first Rayleigh-Sommerfeld impulse response
    (complex64, FFT order): ``FFT(h) dx^2`` with ``h`` centred at index 0 (circular)."""
    c = torch.fft.fftfreq(m, d=1.0 / m, dtype=torch.float64, device=device) * pitch_m  # m*dx*f -> coords
    y, x = torch.meshgrid(c, c, indexing="ij")
    r = torch.sqrt(x**2 + y**2 + z_m**2)
    k = 2.0 * math.pi / wavelength_m
    amp = (z_m / r**2) * torch.complex(1.0 / (2.0 * math.pi * r), -torch.ones_like(r) / wavelength_m)
    h = amp * torch.polar(torch.ones_like(r), k * r)
    return (torch.fft.fft2(h) * pitch_m**2).to(torch.complex64)


def transfer(method: str, m: int, pitch_m: float, wavelength_m: float, z_m: float, *,
             device: torch.device | str | None = None) -> torch.Tensor:
    """The transfer function of ``method`` (``asm`` = band-limited ASM, ``fresnel``, ``rs``)."""
    if method == "asm":
        return asm_transfer(m, pitch_m, wavelength_m, z_m, band_limit=True, device=device)
    if method == "fresnel":
        return fresnel_transfer(m, pitch_m, wavelength_m, z_m, device=device)
    if method == "rs":
        return rs_transfer(m, pitch_m, wavelength_m, z_m, device=device)
    raise ValueError(f"unknown propagation method {method!r} (choose from {METHODS})")


def propagate(u: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """``ifft2(fft2(u) * H)`` over the last two axes (batched, differentiable)."""
    return torch.fft.ifft2(torch.fft.fft2(u) * h)


class Propagator(torch.nn.Module):
    """Free-space hop of ``z_m`` on an ``(N + 2 pad)^2`` grid: zero-pads an ``(..., N, N)``
    field, propagates and crops back to ``N x N``.

    The transfer function is cached per ``(wavelength, z)``; :meth:`forward` accepts
    perturbed values (wavelength drift, axial error) for noise studies.

    ``check`` (``warn`` / ``strict`` / ``off``) applies
    :func:`~accelerators.diffraction_limits.check_propagation` with the aperture ``n`` and
    tolerance ``tol``: a geometry whose expected padding error exceeds ``tol`` warns (or, strict,
    is refused) with the numbers. ``pad="auto"`` / ``method="auto"``: the smallest pad
    (``>= n/2``) and/or the method (``asm``, else ``rs``) that meet ``tol``
    (:func:`~accelerators.diffraction_limits.plan_propagation`; refused with the numbers of
    every candidate when none does); ``self.plan`` keeps the choice.
    """

    def __init__(self, n: int, pad: int | str, pitch_m: float, wavelength_m: float, z_m: float,
                 method: str = "asm", *, check: str = "warn", tol: float = PADDING_TOL) -> None:
        super().__init__()
        if check not in ("warn", "strict", "off"):
            raise ValueError("check must be 'warn', 'strict' or 'off'")
        self.plan: PropagationPlan | None = None
        if pad == "auto" or method == "auto":
            self.plan = plan_propagation(wavelength_m, pitch_m, int(n), z_m,
                                         method=None if method == "auto" else method,
                                         pad=None if pad == "auto" else int(pad), tol=tol)
            pad, method = self.plan.pad, self.plan.method
        if method not in METHODS:
            raise ValueError(f"unknown propagation method {method!r} (choose from {METHODS} or 'auto')")
        self.n, self.pad, self.pitch_m = int(n), int(pad), float(pitch_m)
        self.wavelength_m, self.z_m, self.method = float(wavelength_m), float(z_m), method
        self.tol = float(tol)
        if check != "off" and self.plan is None:
            check_propagation(wavelength_m, pitch_m, self.m, z_m, method, strict=check == "strict",
                              n=self.n, tol=tol)
        self._cache: dict[tuple, torch.Tensor] = {}

    @property
    def m(self) -> int:
        return self.n + 2 * self.pad

    def transfer(self, device: torch.device, wavelength_m: float | None = None,
                 z_m: float | None = None) -> torch.Tensor:
        lam = self.wavelength_m if wavelength_m is None else float(wavelength_m)
        z = self.z_m if z_m is None else float(z_m)
        key = (str(device), lam, z)
        h = self._cache.get(key)
        if h is None:
            if len(self._cache) > 16:
                self._cache.clear()
            h = transfer(self.method, self.m, self.pitch_m, lam, z, device=device)
            self._cache[key] = h
        return h

    def forward(self, u: torch.Tensor, wavelength_m: float | None = None, z_m: float | None = None) -> torch.Tensor:
        p = self.pad
        if p:
            u = torch.nn.functional.pad(u, (p, p, p, p))
        out = propagate(u, self.transfer(u.device, wavelength_m, z_m))
        return out[..., p:p + self.n, p:p + self.n] if p else out
