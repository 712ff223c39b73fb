"""Where a free-space propagator is valid for a diffractive accelerator's geometry.

:func:`check_propagation` says where a propagator is invalid: a pitch below
``lambda / 2`` (spatial frequencies past the propagating band are lost: 14 % of the
energy at dx = 0.53 lambda, docs/reproduction/d2nn.md), the Fresnel transfer function beyond the critical distance
``z_c = M dx^2 / lambda`` (Voelz & Roggemann, Appl. Opt. 48:6132, 2009: the chirp is
under-sampled) and the paraxial phase error of the Fresnel approximation over the grid's
band (the next term of ``2 pi z sqrt(1/lambda^2 - f^2)``, ``pi lambda^3 z f^4 / 4``;
Goodman Sec. 4.2). The consequence (docs/reproduction/d2nn.md, measured with
:mod:`evaluators.optics.propagation`): the Fresnel result differs from the ASM's by a
relative L2 of 1.39 at Lin 2018's THz geometry and 1.2e-3 at LightRidge's visible one.

These checks use only the geometry (wavelength, pitch, grid, distance), so the
accelerator model (:mod:`accelerators.diffractive`) applies them when it validates a
design, and the propagation code (:mod:`evaluators.optics.propagation`) when it builds
a transfer function.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

__all__ = [
    "FRESNEL_PHASE_TOL_RAD",
    "METHODS",
    "PropagationValidityError",
    "PropagationValidityWarning",
    "ValidityReport",
    "band_limit_per_axis",
    "check_propagation",
    "fresnel_phase_error_rad",
]

METHODS = ("asm", "fresnel", "rs")
#: Paraxial phase-error tolerance of the Fresnel transfer function [rad]: the quarter-wave
#: (pi/2) Rayleigh criterion (Born & Wolf, *Principles of Optics*, Sec. 9.3).
FRESNEL_PHASE_TOL_RAD = math.pi / 2


class PropagationValidityError(ValueError):
    """A propagator used where its approximation does not hold (strict mode)."""


class PropagationValidityWarning(UserWarning):
    """A propagator used where its approximation does not hold (warning mode)."""


def band_limit_per_axis(m: int, pitch_m: float, wavelength_m: float, z_m: float) -> float:
    """Matsushima & Shimobaba's band limit [1/m] per axis: ``1 / (lambda sqrt((2 df z)^2 + 1))``."""
    df = 1.0 / (m * pitch_m)
    return 1.0 / (wavelength_m * math.sqrt((2.0 * df * z_m) ** 2 + 1.0))


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
