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

**The band-limited angular spectrum** (the default propagator) has two further limits,
both on the padded grid ``M = N + 2 pad`` (issue 47):

* *Past its critical distance* ``z_c = M dx^2 / lambda`` Matsushima & Shimobaba's band
  limit falls below the grid's Nyquist frequency: it keeps about ``M z_c / z`` frequency
  samples per axis of the band the output needs, and the result is wrong by tens of
  per cent (a random-phase field: 50 % at 1.3 z_c, 42 % at 4.5 z_c; measured with
  :func:`padding_error`). :func:`check_propagation` refuses ``asm`` past ``z_c``.
* *Wrap-around of the padding*: the FFT convolution is circular with period ``M``, so the
  kernel's tails from the periodic copies of the grid land in the ``N x N`` output. The
  discrete kernel's tails decay slowly (the transfer function's derivative jumps at the
  band edge), so the error falls only as about ``pad^-1.5`` for a random-phase field:
  1.6e-2 at pad N/2 in the reproduction's geometry (532 nm, 36 um, N = 64, 0.1 m), 2.8e-3
  at pad 2N.

:func:`padding_error` measures both at once: the expected relative L2 error of the
``N x N`` output of one hop of a *random-phase* field (independent uniform phases, unit
amplitude: the broadest spectrum a layer of ``N^2`` pixels emits; a hard-edged aperture
comes out 30-100 times lower) against the same method converged: for the ASM the
band-limited ASM on a grid large enough that ``z <= z_c`` and the tails no longer wrap
(Fresnel likewise), for RS the brute-force sum over its sampled impulse response. It is exact in
expectation: for ``out = h * u`` with ``E[u_x conj(u_y)] = delta_xy``,
``E||out_M - out_ref||^2 / E||out_ref||^2 = sum_s c(s) |h_M(s) - h_ref(s)|^2 /
sum_s c(s) |h_ref(s)|^2`` over the output-input offsets ``s`` in ``(-N, N)^2``, with
``c(s) = prod_i (N - |s_i|)`` the number of pairs at offset ``s`` and ``h`` the circular
kernels (``ifft2`` of the transfer functions). A tolerance :data:`PADDING_TOL` (5 %, a choice:
no source sets one) applies by default; :func:`plan_propagation` picks, per geometry, the
cheapest method and pad that meet a tolerance, or refuses with the numbers.

These checks use only the geometry (wavelength, pitch, grid, distance), so the
accelerator model (:mod:`accelerators.diffractive`) applies them when it validates a
design, and the propagation code (:mod:`evaluators.optics.propagation`) when it builds
a transfer function.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "FRESNEL_PHASE_TOL_RAD",
    "MAX_GRID",
    "METHODS",
    "PADDING_TOL",
    "PropagationPlan",
    "PropagationValidityError",
    "PropagationValidityWarning",
    "ValidityReport",
    "asm_critical_distance_m",
    "band_limit_per_axis",
    "check_propagation",
    "fresnel_phase_error_rad",
    "padding_error",
    "plan_propagation",
    "transfer_np",
]

METHODS = ("asm", "fresnel", "rs")
#: Paraxial phase-error tolerance of the Fresnel transfer function [rad]: the quarter-wave
#: (pi/2) Rayleigh criterion (Born & Wolf, *Principles of Optics*, Sec. 9.3).
FRESNEL_PHASE_TOL_RAD = math.pi / 2
#: Default tolerance of :func:`padding_error` (relative L2 of one hop's ``N x N`` output for a
#: random-phase field). A choice, not from a source: it admits the reproduction's geometry
#: (1.6e-2) and refuses what issue 47 found wrong (pad N/2 at 0.3 m: 0.10; the THz geometry
#: of Lin et al. 2018 at pad N/2: 0.13; every band-limited ASM past z_c: > 0.1). A user
#: passes ``tol`` to ask for another.
PADDING_TOL = 0.05
#: Largest simulation grid side :func:`plan_propagation` considers (and the cap on the
#: reference grid of :func:`padding_error`): 4096^2 complex128 is 256 MiB.
MAX_GRID = 4096


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

    ``padding_error``: :func:`padding_error` (when the aperture was given), against ``tol``.

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
    #: :func:`padding_error` of the geometry (``nan`` when the aperture ``n`` was not given).
    padding_error: float = math.nan
    tol: float = PADDING_TOL

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


def asm_critical_distance_m(m: int, pitch_m: float, wavelength_m: float) -> float:
    """The band-limited ASM's critical distance ``z_c = m dx^2 / lambda`` on an ``m``-sample
    grid: past it the band limit ``1 / (lambda sqrt((2 df z)^2 + 1))`` falls below
    ``dx / lambda`` of Nyquist, ``M z_c / z`` samples per axis of the band that reaches the output."""
    return m * pitch_m**2 / wavelength_m


def _full_band_distance_m(m: int, pitch_m: float, wavelength_m: float) -> float:
    """Largest ``z`` at which the band limit keeps the whole grid band (``lim >= 1 / (2 dx)``):
    ``z_c sqrt(1 - (lambda / 2 dx)^2)``; the converged reference of :func:`padding_error` stays
    within it."""
    s = wavelength_m / (2.0 * pitch_m)
    return asm_critical_distance_m(m, pitch_m, wavelength_m) * math.sqrt(max(0.0, 1.0 - s * s))


# ------------------------------------------------------------------ the padding error
def _fast_len(k: int) -> int:
    """Smallest ``2^a 3^b 5^c >= k`` (an FFT-friendly grid side)."""
    best, p5 = 1 << max(0, k - 1).bit_length(), 1
    while p5 < 2 * k:
        p35 = p5
        while p35 < 2 * k:
            p = p35
            while p < k:
                p *= 2
            best = min(best, p)
            p35 *= 3
        p5 *= 5
    return best


def transfer_np(method: str, m: int, pitch_m: float, wavelength_m: float, z_m: float) -> np.ndarray:
    """The transfer functions of :mod:`evaluators.optics.propagation` in numpy complex128
    (FFT order): band-limited ASM, Fresnel, sampled RS impulse response (the test suite
    checks that they equal the torch ones)."""
    f = np.fft.fftfreq(m, d=pitch_m)
    fy, fx = np.meshgrid(f, f, indexing="ij")
    if method == "asm":
        arg = 1.0 / wavelength_m**2 - fx**2 - fy**2
        lim = band_limit_per_axis(m, pitch_m, wavelength_m, abs(z_m))
        keep = (arg > 0) & (np.abs(fx) <= lim) & (np.abs(fy) <= lim)
        return np.where(keep, np.exp(2j * np.pi * z_m * np.sqrt(np.maximum(arg, 0.0))), 0.0)
    if method == "fresnel":
        return np.exp(1j * (2 * np.pi * z_m / wavelength_m - np.pi * wavelength_m * z_m * (fx**2 + fy**2)))
    c = np.fft.fftfreq(m, d=1.0 / m) * pitch_m
    y, x = np.meshgrid(c, c, indexing="ij")
    r = np.sqrt(x**2 + y**2 + z_m**2)
    h = (z_m / r**2) * (1.0 / (2 * np.pi * r) - 1j / wavelength_m) * np.exp(2j * np.pi * r / wavelength_m)
    return np.fft.fft2(h) * pitch_m**2


def _kernel_offsets(transfer: np.ndarray, n: int) -> np.ndarray:
    """The circular kernel ``ifft2(H)`` at the offsets ``(-(n-1) .. n-1)^2`` that an
    ``n x n`` output takes from an ``n x n`` input (index ``s mod m``)."""
    m = transfer.shape[0]
    h = np.fft.ifft2(transfer)
    s = np.arange(-(n - 1), n) % m
    return h[np.ix_(s, s)]


def reference_grid(n: int, pad: int, pitch_m: float, wavelength_m: float, z_m: float) -> int:
    """The converged reference's grid side for :func:`padding_error`: ``z`` within its
    :func:`_full_band_distance_m`, room for twice the kernel's geometric reach
    ``z tan(asin(lambda / 2 dx)) / dx`` on each side, and for 8 times the tested padding (at least 8 N)
    beyond the aperture, so that the reference's own wrap-around is ``8^-1.5``, about 4 %, of
    the error it measures [the ``pad^-1.5`` decay, measured]; capped at :data:`MAX_GRID`."""
    m = n + 2 * pad
    s = wavelength_m / (2.0 * pitch_m)
    root = math.sqrt(max(1e-12, 1.0 - s * s))
    need_zc = abs(z_m) * wavelength_m / pitch_m**2 / root * 1.01 + 2
    spread_px = abs(z_m) * s / root / pitch_m  # z tan(theta_max) / dx per axis
    return min(MAX_GRID, _fast_len(int(max(need_zc, n + 8 * max(m - n, n), n + 4 * spread_px))))


@functools.lru_cache(maxsize=64)
def _reference_kernel(method: str, n: int, mref: int, pitch_m: float, wavelength_m: float, z_m: float) -> np.ndarray:
    if method == "rs":  # the linear convolution with the sampled impulse response: the brute-force RS sum
        c = np.arange(-(n - 1), n) * pitch_m
        y, x = np.meshgrid(c, c, indexing="ij")
        r = np.sqrt(x**2 + y**2 + z_m**2)
        h = (z_m / r**2) * (1.0 / (2 * np.pi * r) - 1j / wavelength_m) * np.exp(2j * np.pi * r / wavelength_m)
        return h * pitch_m**2
    return _kernel_offsets(transfer_np(method, mref, pitch_m, wavelength_m, z_m), n)


@functools.lru_cache(maxsize=256)
def padding_error(wavelength_m: float, pitch_m: float, n: int, pad: int, z_m: float, method: str = "asm") -> float:
    """Expected relative L2 error of one hop's ``n x n`` output for a random-phase field
    against the same method converged (module docstring): ``asm`` and ``fresnel`` on the
    grid of :func:`reference_grid`, ``rs`` the linear (brute-force) sum with its sampled
    impulse response, which the FFT reproduces exactly once ``pad >= (n - 1) / 2``. ``inf``
    when the reference would need a grid past :data:`MAX_GRID` to reach ``z_c``. What the
    methods' models leave out (the paraxial error, an under-sampled RS kernel, evanescent
    waves) is :func:`check_propagation`'s other rules."""
    if method not in METHODS:
        raise ValueError(f"unknown propagation method {method!r} (choose from {METHODS})")
    if n < 1 or pad < 0:
        raise ValueError(f"need n >= 1 and pad >= 0, got n={n!r}, pad={pad!r}")
    mref = reference_grid(n, pad, pitch_m, wavelength_m, z_m)
    if method != "rs" and abs(z_m) > _full_band_distance_m(mref, pitch_m, wavelength_m):
        return math.inf
    href = _reference_kernel(method, n, mref, pitch_m, wavelength_m, z_m)
    hm = _kernel_offsets(transfer_np(method, n + 2 * pad, pitch_m, wavelength_m, z_m), n)
    w1 = (n - np.abs(np.arange(-(n - 1), n))).astype(float)
    w = np.outer(w1, w1)
    den = float((w * np.abs(href) ** 2).sum())
    return math.sqrt(float((w * np.abs(hm - href) ** 2).sum()) / den) if den > 0 else math.inf


def check_propagation(wavelength_m: float, pitch_m: float, m: int, z_m: float, method: str = "asm", *,
                      strict: bool = False, warn: bool = True, n: int | None = None,
                      tol: float = PADDING_TOL) -> ValidityReport:
    """Check a propagator against its validity limits (see the module docstring).

    Problems: ``pitch < lambda/2`` (any method); for ``asm``, ``z > z_c = m dx^2 / lambda``;
    for ``fresnel``, ``z > z_c`` or a paraxial phase error above :data:`FRESNEL_PHASE_TOL_RAD`; for ``rs``, an
    impulse response whose local frequency at the grid edge, ``rho / (lambda sqrt(rho^2 +
    z^2))``, exceeds Nyquist (the sampled kernel aliases; Voelz & Roggemann's short-distance
    case). With the aperture ``n`` (so ``pad = (m - n) / 2``), also a :func:`padding_error`
    above ``tol`` (any method). ``strict`` raises :class:`PropagationValidityError`; otherwise
    ``warn`` emits :class:`PropagationValidityWarning`. Returns the :class:`ValidityReport`.
    """
    if method not in METHODS:
        raise ValueError(f"unknown propagation method {method!r} (choose from {METHODS})")
    if wavelength_m <= 0 or pitch_m <= 0 or m <= 0:
        raise ValueError("wavelength, pitch and grid size must be positive")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
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
    if method == "asm" and nyq and abs(z_m) > zc:
        m_need = math.ceil(abs(z_m) / asm_critical_distance_m(1, pitch_m, wavelength_m))
        problems.append(f"band-limited angular spectrum beyond its critical distance: z = {z_m:.3g} m > "
                        f"z_c = M dx^2/lambda = {zc:.3g} m (M = {m}, z/z_c = {abs(z_m) / zc:.2f}): the band "
                        f"limit keeps {100 * frac:.0f} % of the grid's band per axis; pad to M >= {m_need} "
                        "or use 'rs'")
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
    perr_pad = math.nan
    if n is not None:
        if not (1 <= n <= m and (m - n) % 2 == 0):
            raise ValueError(f"aperture n={n!r} must be in [1, m={m}] with m - n even")
        if nyq:
            perr_pad = padding_error(wavelength_m, pitch_m, int(n), (m - n) // 2, float(z_m), method)
            if not perr_pad <= tol:
                problems.append(f"{method} on {m} = {n} + 2 x {(m - n) // 2} samples: expected error "
                                f"{perr_pad:.3g} (relative L2, random-phase field, against the method "
                                f"converged) > tol {tol:.3g}; pad more or use "
                                "plan_propagation(...) to choose")
    rep = ValidityReport(method, nyq, zc, perr, frac, spread, tuple(problems), perr_pad, tol)
    if problems:
        msg = "; ".join(problems)
        if strict:
            raise PropagationValidityError(msg)
        if warn:
            warnings.warn(msg, PropagationValidityWarning, stacklevel=2)
    return rep


@dataclass(frozen=True)
class PropagationPlan:
    """What :func:`plan_propagation` chose: ``method`` on ``n + 2 pad`` samples with the
    expected error ``error`` (<= ``tol``); ``tried`` lists every ``(method, pad, error,
    problems)`` it evaluated, in order."""

    n: int
    method: str
    pad: int
    error: float
    tol: float
    tried: tuple[tuple[str, int, float, tuple[str, ...]], ...]

    @property
    def grid(self) -> int:
        """The simulation grid side ``n + 2 pad``."""
        return self.n + 2 * self.pad


def _pad_ladder(n: int, first: int | None, max_grid: int) -> list[int]:
    pads = [] if first is None else [int(first)]
    p = max(1, n // 2)
    while n + 2 * p <= max_grid:
        if p not in pads:
            pads.append(p)
        p = math.ceil(p * 1.5)
    return sorted(pads)


def plan_propagation(wavelength_m: float, pitch_m: float, n: int, z_m: float, *, method: str | None = None,
                     pad: int | None = None, tol: float = PADDING_TOL, max_grid: int = MAX_GRID,
                     prefer: tuple[str, int] | None = None) -> PropagationPlan:
    """The cheapest propagation of an ``n x n`` aperture over ``z`` whose
    :func:`check_propagation` passes with the padding error at most ``tol``.

    ``method`` / ``pad`` fix one or both; otherwise ``asm`` and ``rs`` are tried on pads
    ``n/2, 3n/4, ...`` (factor 1.5; ``n + 2 pad <= max_grid``), smallest grid first, ``asm``
    before ``rs`` on the same grid. ``prefer = (method, pad)`` is tried first and kept when
    it passes (a configuration's stated default stays as it was wherever it is valid).
    Raises :class:`PropagationValidityError` with the numbers of every candidate when none
    passes.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    methods = [method] if method else ["asm", "rs"]
    for mt in methods:
        if mt not in METHODS:
            raise ValueError(f"unknown propagation method {mt!r} (choose from {METHODS})")
    pads = [int(pad)] if pad is not None else _pad_ladder(n, None, max_grid)
    cands = [(n + 2 * p, i, mt, p) for p in pads for i, mt in enumerate(methods)]
    cands.sort()
    order = [(mt, p) for _, _, mt, p in cands]
    if prefer is not None and prefer in order:
        order.remove(prefer)
        order.insert(0, prefer)
    tried = []
    for mt, p in order:
        rep = check_propagation(wavelength_m, pitch_m, n + 2 * p, z_m, mt, warn=False, n=n, tol=tol)
        tried.append((mt, p, rep.padding_error, rep.problems))
        if rep.ok:
            return PropagationPlan(n, mt, p, rep.padding_error, tol, tuple(tried))
    lines = "; ".join(f"{mt} pad {p}: error {e:.3g}" for mt, p, e, _ in tried)
    raise PropagationValidityError(
        f"no propagation of an {n} x {n} aperture over z = {z_m:.3g} m at {pitch_m:.3g} m pitch, "
        f"lambda = {wavelength_m:.3g} m meets tol {tol:.3g} on grids up to {max_grid}: {lines}")
