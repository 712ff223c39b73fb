"""Noise of every system component of a diffractive accelerator [inferred design].

The names follow torchonn's noise hooks (github.com/JeremieMelo/pytorch-onn); the sweep
ranges are ours, with the +-2 % wavelength drift of github.com/rknzhl/D2NN's robustness
check and lateral shifts of a few pixels as in arXiv 2407.16456.

A :class:`Noise` holds *levels*; the model draws a fresh realization on every forward
pass from the generator it is given. Zero everywhere (the default) is the ideal system.

=====================  =========================================================  =============
component              model                                                      sweep
=====================  =========================================================  =============
laser intensity        input intensity times ``(1 + e)``, ``e ~ N(0, sigma^2)``     0-10 %
                       per pixel (beam non-uniformity and relative intensity
                       noise; a uniform factor would not change the argmax)
                       [inferred]
laser wavelength       ``lambda' = lambda (1 + d)``: every hop propagates at        +-2 %
                       ``lambda'`` and a thin layer designed at ``lambda`` shows
                       ``phi lambda / lambda'`` (dispersion of the material
                       neglected)
layer phase            ``phi + delta``, ``delta ~ N(0, sigma^2)`` per pixel and     0-1 rad
                       layer; quantization of the trained phase to ``P`` levels     P 2-256
lateral misalignment   each layer shifted by ``s`` px in a random direction         0-4 px
                       (rounded to whole pixels; ``torch.roll``)
axial misalignment     each hop's ``z (1 + d)``, ``d ~ N(0, sigma^2)``               0-5 %
detector               additive Gaussian on the region intensities at SNR (dB,      10-40 dB
                       signal = the sample's rms region intensity); shot noise at
                       ``photons`` per region (Gaussian approximation of Poisson);
                       ADC of ``bits`` with full scale = the sample's brightest     8-12 bit
                       region (auto-exposure)
=====================  =========================================================  =============

:meth:`Noise.sample_training` draws levels uniformly up to the given ones, batch by batch,
for noise-aware training.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import torch

__all__ = ["NOISE_SWEEPS", "Noise"]


@dataclass(frozen=True)
class Noise:
    """Noise levels (see the module docstring); every field 0 / ``None`` = off."""

    laser_sigma: float = 0.0
    wavelength_shift_rel: float = 0.0
    phase_sigma_rad: float = 0.0
    phase_levels: int | None = None
    lateral_px: float = 0.0
    axial_sigma_rel: float = 0.0
    detector_snr_db: float | None = None
    photons: float | None = None
    adc_bits: int | None = None

    @property
    def is_ideal(self) -> bool:
        return self == Noise()

    def with_(self, **kw: Any) -> Noise:
        return replace(self, **kw)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sample_training(self, generator: torch.Generator) -> Noise:
        """Levels drawn uniformly in ``[0, level]`` (wavelength shift in ``[-d, d]``,
        detector SNR in ``[snr, snr + 20]`` dB) for one training batch."""

        def u(hi: float) -> float:
            return float(torch.rand((), generator=generator)) * hi

        kw: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None or v == 0:
                kw[f.name] = v
            elif f.name == "wavelength_shift_rel":
                kw[f.name] = (2 * float(torch.rand((), generator=generator)) - 1) * v
            elif f.name == "detector_snr_db":
                kw[f.name] = v + u(20.0)
            elif f.name in ("phase_levels", "adc_bits", "photons"):
                kw[f.name] = v
            else:
                kw[f.name] = u(v)
        return Noise(**kw)

    # ---------------------------------------------------------------- realizations
    def perturb_input(self, u: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        if not self.laser_sigma:
            return u
        e = torch.randn(u.shape, generator=generator, device="cpu").to(u.device) * self.laser_sigma
        return u * torch.sqrt(torch.clamp(1.0 + e, min=0.0))

    def layer_phase_noise(self, n: int, device: torch.device, generator: torch.Generator | None) -> torch.Tensor | None:
        if not self.phase_sigma_rad:
            return None
        return (torch.randn(n, n, generator=generator) * self.phase_sigma_rad).to(device)

    def lateral_shift(self, generator: torch.Generator | None) -> tuple[int, int]:
        if not self.lateral_px:
            return 0, 0
        theta = float(torch.rand((), generator=generator)) * 2 * math.pi
        return round(self.lateral_px * math.sin(theta)), round(self.lateral_px * math.cos(theta))

    def hop_z(self, z_m: float, generator: torch.Generator | None) -> float:
        if not self.axial_sigma_rel:
            return z_m
        return z_m * (1.0 + float(torch.randn((), generator=generator)) * self.axial_sigma_rel)

    def perturb_readout(self, s: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        """Detector noise on region intensities ``s`` (``(..., K)``)."""
        if self.photons:
            scale = self.photons / torch.clamp(s.mean(-1, keepdim=True), min=1e-12)
            counts = s * scale
            noise = torch.randn(s.shape, generator=generator).to(s.device) * torch.sqrt(torch.clamp(counts, min=0))
            s = torch.clamp(counts + noise, min=0.0) / scale
        if self.detector_snr_db is not None:
            rms = torch.sqrt((s**2).mean(-1, keepdim=True))
            sigma = rms / (10.0 ** (self.detector_snr_db / 20.0))
            s = s + torch.randn(s.shape, generator=generator).to(s.device) * sigma
        if self.adc_bits:
            full = torch.clamp(s.amax(-1, keepdim=True), min=1e-12)
            levels = 2**self.adc_bits - 1
            q = torch.round(torch.clamp(s / full, 0.0, 1.0) * levels) / levels * full
            s = s + (q - s).detach()
        return s


#: The robustness sweeps: (name, field, levels). The wavelength sweep is signed.
NOISE_SWEEPS: tuple[tuple[str, str, tuple], ...] = (
    ("laser intensity", "laser_sigma", (0.0, 0.02, 0.05, 0.1, 0.2)),
    ("wavelength drift", "wavelength_shift_rel", (-0.02, -0.01, 0.0, 0.01, 0.02)),
    ("phase noise", "phase_sigma_rad", (0.0, 0.25, 0.5, 0.75, 1.0)),
    ("phase quantization", "phase_levels", (None, 256, 64, 16, 8, 4, 2)),
    ("lateral misalignment", "lateral_px", (0.0, 1.0, 2.0, 3.0, 4.0)),
    ("axial misalignment", "axial_sigma_rel", (0.0, 0.01, 0.02, 0.05)),
    ("detector noise", "detector_snr_db", (None, 40.0, 30.0, 20.0, 10.0)),
    ("ADC bits", "adc_bits", (None, 12, 8, 6, 4, 2)),
)
