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

:func:`check_propagation` says where a propagator is invalid: a pitch below
``lambda / 2`` (spatial frequencies past the propagating band are lost; the notes measured
14 % at dx = 0.53 lambda), the Fresnel transfer function beyond the critical distance
``z_c = M dx^2 / lambda`` (Voelz & Roggemann, Appl. Opt. 48:6132, 2009: the chirp is
under-sampled) and the paraxial phase error of the Fresnel approximation over the grid's
band (the next term of ``2 pi z sqrt(1/lambda^2 - f^2)``, ``pi lambda^3 z f^4 / 4``;
Goodman Sec. 4.2). The notes (``shared/notes/d2nn.md`` §1) measured the consequence: the
Fresnel result differs from the ASM's by a relative L2 of 1.39 at Lin 2018's THz geometry
and 1.2e-3 at LightRidge's visible geometry.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import torch

__all__ = [
    "METHODS",
    "PropagationValidityError",
    "PropagationValidityWarning",
    "Propagator",
    "ValidityReport",
    "asm_transfer",
    "check_propagation",
    "frequencies",
    "fresnel_transfer",
    "propagate",
    "rs_transfer",
    "transfer",
]

METHODS = ("asm", "fresnel", "rs")
#: Paraxial phase-error tolerance of the Fresnel transfer function [rad]: the quarter-wave
#: (pi/2) Rayleigh criterion (Born & Wolf, *Principles of Optics*, Sec. 9.3).
FRESNEL_PHASE_TOL_RAD = math.pi / 2


class PropagationValidityError(ValueError):
    """A propagator used where its approximation does not hold (strict mode)."""


class PropagationValidityWarning(UserWarning):
    """A propagator used where its approximation does not hold (warning mode)."""


def frequencies(m: int, pitch_m: float, device: torch.device | str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """FFT-ordered spatial frequencies ``(fx, fy)`` [1/m] of an ``m x m`` grid, as
    ``(m, m)`` float64 tensors (``fy`` varies along rows)."""
    f = torch.fft.fftfreq(m, d=pitch_m, dtype=torch.float64, device=device)
    fy, fx = torch.meshgrid(f, f, indexing="ij")
    return fx, fy


def band_limit_per_axis(m: int, pitch_m: float, wavelength_m: float, z_m: float) -> float:
    """Matsushima & Shimobaba's band limit [1/m] per axis: ``1 / (lambda sqrt((2 df z)^2 + 1))``."""
    df = 1.0 / (m * pitch_m)
    return 1.0 / (wavelength_m * math.sqrt((2.0 * df * z_m) ** 2 + 1.0))


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


@dataclass(frozen=True)
class ValidityReport:
    """What :func:`check_propagation` found; ``problems`` empty means valid.

    ``fresnel_phase_error_rad``: max over the grid's propagating band of
    ``|2 pi z (sqrt(1/lambda^2 - f^2) - 1/lambda + lambda f^2 / 2)|``.
    """

    method: str
    nyquist_ok: bool
    critical_distance_m: float
    fresnel_phase_error_rad: float
    band_limit_fraction: float
    spread_radius_px: float
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.problems


def fresnel_phase_error_rad(m: int, pitch_m: float, wavelength_m: float, z_m: float) -> float:
    """Largest phase error of the paraxial (Fresnel) transfer function over the grid's
    propagating frequencies, against the exact angular spectrum [rad]."""
    f_nyq = 1.0 / (2.0 * pitch_m)
    f2 = min(2.0 * f_nyq**2, 1.0 / wavelength_m**2)  # radial frequency^2 of the grid's corner
    exact = math.sqrt(max(0.0, 1.0 / wavelength_m**2 - f2))
    parax = 1.0 / wavelength_m - wavelength_m * f2 / 2.0
    return abs(2.0 * math.pi * z_m * (exact - parax))


def check_propagation(wavelength_m: float, pitch_m: float, m: int, z_m: float, method: str = "asm", *,
                      strict: bool = False, warn: bool = True) -> ValidityReport:
    """Check a propagator against its validity limits (see the module docstring).

    Problems: ``pitch < lambda/2`` (any method); for ``fresnel``, ``z > z_c = m dx^2 /
    lambda`` or a paraxial phase error above :data:`FRESNEL_PHASE_TOL_RAD`; for ``rs``, an
    impulse response whose local frequency at the grid edge, ``rho / (lambda sqrt(rho^2 +
    z^2))``, exceeds Nyquist (the sampled kernel aliases; Voelz & Roggemann's short-distance
    case). ``strict``
    raises :class:`PropagationValidityError`; otherwise ``warn`` emits
    :class:`PropagationValidityWarning`. Returns the :class:`ValidityReport`.
    """
    if method not in METHODS:
        raise ValueError(f"unknown propagation method {method!r} (choose from {METHODS})")
    if wavelength_m <= 0 or pitch_m <= 0 or m <= 0:
        raise ValueError("wavelength, pitch and grid size must be positive")
    zc = m * pitch_m**2 / wavelength_m
    nyq = pitch_m >= wavelength_m / 2.0
    perr = fresnel_phase_error_rad(m, pitch_m, wavelength_m, z_m)
    lim = band_limit_per_axis(m, pitch_m, wavelength_m, abs(z_m))
    frac = min(1.0, lim / (1.0 / (2.0 * pitch_m)))
    angle = math.asin(min(1.0, wavelength_m / (2.0 * pitch_m)))
    spread = abs(z_m) * math.tan(angle) / pitch_m if angle < math.pi / 2 else math.inf
    problems = []
    if not nyq:
        problems.append(f"pitch {pitch_m:.3g} m < lambda/2 = {wavelength_m / 2:.3g} m: frequencies past "
                        "the propagating band are lost (evanescent)")
    if method == "fresnel":
        if abs(z_m) > zc:
            problems.append(f"Fresnel transfer function beyond its critical distance: z = {z_m:.3g} m > "
                            f"z_c = M dx^2/lambda = {zc:.3g} m (under-sampled chirp; use 'rs' or 'asm')")
        if perr > FRESNEL_PHASE_TOL_RAD:
            problems.append(f"Fresnel (paraxial) approximation invalid: phase error {perr:.3g} rad > "
                            f"{FRESNEL_PHASE_TOL_RAD:.3g} rad at the grid's highest frequency (diffraction "
                            f"half-angle {math.degrees(angle):.1f} deg); use 'asm'")
    if method == "rs":
        rho = m * pitch_m / 2.0  # the impulse response's local frequency peaks at the grid's edge
        f_edge = rho / (wavelength_m * math.hypot(rho, z_m))
        if f_edge > 1.0 / (2.0 * pitch_m) * (1 + 1e-9):
            problems.append(f"Rayleigh-Sommerfeld impulse response under-sampled: its local frequency at "
                            f"the grid edge, {f_edge:.3g} 1/m, exceeds Nyquist {1 / (2 * pitch_m):.3g} 1/m "
                            f"(z = {z_m:.3g} m < z_c = {zc:.3g} m, Voelz & Roggemann 2009); use 'asm'")
    rep = ValidityReport(method, nyq, zc, perr, frac, spread, tuple(problems))
    if problems:
        msg = "; ".join(problems)
        if strict:
            raise PropagationValidityError(msg)
        if warn:
            warnings.warn(msg, PropagationValidityWarning, stacklevel=2)
    return rep


class Propagator(torch.nn.Module):
    """Free-space hop of ``z_m`` on an ``(N + 2 pad)^2`` grid: zero-pads an ``(..., N, N)``
    field, propagates and crops back to ``N x N``.

    The transfer function is cached per ``(wavelength, z)``; :meth:`forward` accepts
    perturbed values (wavelength drift, axial error) for noise studies.
    """

    def __init__(self, n: int, pad: int, pitch_m: float, wavelength_m: float, z_m: float,
                 method: str = "asm", *, check: str = "warn") -> None:
        super().__init__()
        if check not in ("warn", "strict", "off"):
            raise ValueError("check must be 'warn', 'strict' or 'off'")
        self.n, self.pad, self.pitch_m = int(n), int(pad), float(pitch_m)
        self.wavelength_m, self.z_m, self.method = float(wavelength_m), float(z_m), method
        if check != "off":
            check_propagation(wavelength_m, pitch_m, self.m, z_m, method, strict=check == "strict")
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
