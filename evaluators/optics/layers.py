"""Diffractive modulation layers and the detector plane.

* :class:`PhaseLayer` -- one diffractive layer of ``N x N`` pixels: a learnable phase
  ``phi`` wrapped into ``[0, phase_range)``, optionally quantized to ``P`` device levels
  with a straight-through estimator (forward: nearest level; backward: identity;
  Bengio et al., arXiv:1308.3432, 2013), optionally with an amplitude coupled to the
  phase (a liquid-crystal SLM's amplitude follows its phase: the measured LUT that
  LightRidge ships, github.com/lightridge/lightridge ``ASPLOS2024_AE/phase.csv`` and
  ``intensity.csv``, spans 0.41-1.0 over 0-5.33 rad; we model it as linear in phase,
  ``A = a_min + (1 - a_min) phi / phase_range`` [inferred]) or a free learnable amplitude
  in ``(0, 1]`` (complex modulation). Every layer also multiplies by the amplitude factor ``a`` of its
  branch (LightRidge's ``amplitude_factor``, a training-time gain; Li et al., ASPLOS 2024,
  arXiv 2306.11268, and LightRidge's ``source/layers.py``).
* :class:`Detector` -- ``K`` square regions on the output plane; the readout of region
  ``k`` is the mean intensity ``|u|^2`` over it. With ``differential=True`` each class has a
  positive and a negative region and the readout is ``(I+ - I-) / (I+ + I-)`` (Li et al.,
  Adv. Photon. 1:046001, 2019).
* :func:`lightridge_layout` -- LightRidge's 3-4-3 layout of 10 regions on a 200-px plane
  (LightRidge's ``Detector_10``), scaled to ``N``; :func:`grid_layout` -- ``K`` regions on
  a regular grid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

__all__ = [
    "Detector",
    "PhaseLayer",
    "grid_layout",
    "lightridge_layout",
    "quantize_ste",
]

TWO_PI = 2.0 * math.pi
#: LightRidge's default detector centres on a 200-px plane, (row, col) = (x, y) of
#: ``Detector_10`` (github.com/lightridge/lightridge ``source/layers.py``:
#: x = [40,40,40,90,90,90,90,140,140,140],
#: y = [40,90,140,30,70,110,150,40,90,140]); region size 20 px.
LIGHTRIDGE_CENTRES_200 = (
    (40, 40), (40, 90), (40, 140), (90, 30), (90, 70), (90, 110), (90, 150), (140, 40), (140, 90), (140, 140))


def quantize_ste(x: torch.Tensor, step: float) -> torch.Tensor:
    """Round ``x`` to multiples of ``step`` in the forward pass; identity gradient."""
    q = torch.round(x / step) * step
    return x + (q - x).detach()


def lightridge_layout(n: int, size: int | None = None) -> list[tuple[int, int, int]]:
    """LightRidge's 10-region 3-4-3 layout scaled to an ``n``-px plane: ``(row0, col0,
    size)`` of each square (top-left corner). ``size`` defaults to ``n / 10``."""
    s = max(1, round(n / 10)) if size is None else int(size)
    out = []
    for r, c in LIGHTRIDGE_CENTRES_200:
        rr, cc = round(r * n / 200), round(c * n / 200)
        out.append((rr - s // 2, cc - s // 2, s))
    _check_layout(out, n)
    return out


def grid_layout(n: int, k: int, size: int, rows: int | None = None) -> list[tuple[int, int, int]]:
    """``k`` squares of ``size`` px spread evenly on a ``rows x ceil(k/rows)`` grid."""
    rows = rows or max(1, math.floor(math.sqrt(k)))
    cols = math.ceil(k / rows)
    out = []
    for i in range(k):
        r, c = divmod(i, cols)
        cr = (r + 1) * n / (rows + 1)
        cc = (c + 1) * n / (cols + 1)
        out.append((round(cr - size / 2), round(cc - size / 2), int(size)))
    _check_layout(out, n)
    return out


def _check_layout(regions: Sequence[tuple[int, int, int]], n: int) -> None:
    for i, (r, c, s) in enumerate(regions):
        if s < 1 or r < 0 or c < 0 or r + s > n or c + s > n:
            raise ValueError(f"detector region {i} ({r}, {c}, size {s}) is not inside the {n}x{n} plane")
    for i in range(len(regions)):
        for j in range(i + 1, len(regions)):
            a, b = regions[i], regions[j]
            if a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[2] and b[1] < a[1] + a[2]:
                raise ValueError(f"detector regions {i} and {j} overlap")


class PhaseLayer(torch.nn.Module):
    """A diffractive layer (see the module docstring).

    Args:
        n: pixels per side.
        phase_levels: ``P`` device levels (``None`` = continuous phase).
        phase_range_rad: phase span of the device (``2 pi``; a measured LC-SLM reaches
            about 5.33 rad, LightRidge's ``ASPLOS2024_AE/phase.csv``).
        modulation: ``"phase"`` (unit amplitude), ``"coupled"`` (amplitude tied to phase,
            ``amplitude_min`` at 0), or ``"complex"`` (free amplitude in ``(0, 1]``).
        amplitude_min: the coupled amplitude at phase 0 (LightRidge's measured SLM LUT,
            ``ASPLOS2024_AE/intensity.csv``: 0.41).
        init_scale_rad: std of the initial phase around 0 (a nearly flat layer; LightRidge
            starts at 2 pi xavier-uniform, about +-0.77 rad at N = 200).
    """

    def __init__(self, n: int, phase_levels: int | None = None, phase_range_rad: float = TWO_PI,
                 modulation: str = "phase", amplitude_min: float = 0.41, init_scale_rad: float = 0.5,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        if modulation not in ("phase", "coupled", "complex"):
            raise ValueError(f"modulation must be 'phase', 'coupled' or 'complex', got {modulation!r}")
        if phase_levels is not None and phase_levels < 2:
            raise ValueError("phase_levels must be >= 2 or None")
        self.n, self.phase_levels, self.phase_range_rad = int(n), phase_levels, float(phase_range_rad)
        self.modulation, self.amplitude_min = modulation, float(amplitude_min)
        init = torch.randn(n, n, generator=generator) * init_scale_rad
        self.phase = torch.nn.Parameter(init)
        self.amp_logit = torch.nn.Parameter(torch.full((n, n), 3.0)) if modulation == "complex" else None

    def device_phase(self, levels: int | None = None) -> torch.Tensor:
        """The phase the device shows [rad]: wrapped into ``[0, phase_range)``, then
        quantized to ``levels`` (default: the layer's own ``phase_levels``)."""
        levels = self.phase_levels if levels is None else levels
        phi = torch.remainder(self.phase, TWO_PI)
        if self.phase_range_rad < TWO_PI:
            phi = torch.clamp(phi, max=self.phase_range_rad)
        if levels:
            step = self.phase_range_rad / levels if self.phase_range_rad < TWO_PI else TWO_PI / levels
            phi = torch.remainder(quantize_ste(phi, step), TWO_PI)
        return phi

    def amplitude(self, phi: torch.Tensor) -> torch.Tensor | None:
        if self.modulation == "coupled":
            return self.amplitude_min + (1.0 - self.amplitude_min) * phi / self.phase_range_rad
        if self.modulation == "complex":
            return torch.sigmoid(self.amp_logit)
        return None

    def transmission(self, levels: int | None = None, phase_noise: torch.Tensor | None = None,
                     phase_scale: float = 1.0) -> torch.Tensor:
        """Complex transmission ``A e^{j phi}`` (``(n, n)`` complex64). ``phase_noise`` is
        added to the device phase; ``phase_scale`` multiplies it (a thin element designed at
        lambda shows ``phi lambda / lambda'`` at lambda')."""
        phi = self.device_phase(levels)
        amp = self.amplitude(phi)
        shown = phi * phase_scale
        if phase_noise is not None:
            shown = shown + phase_noise
        t = torch.polar(torch.ones_like(shown), shown)
        return t if amp is None else t * amp


class Detector(torch.nn.Module):
    """``K`` detector regions (``(row0, col0, size)`` squares) reading mean intensity.

    ``differential=True`` expects ``2K`` regions (class ``k``'s positive region is
    ``regions[2k]``, its negative ``regions[2k+1]``) and returns ``K`` normalized
    differences in ``[-1, 1]``.
    """

    def __init__(self, n: int, regions: Sequence[tuple[int, int, int]], differential: bool = False) -> None:
        super().__init__()
        regions = [tuple(int(v) for v in r) for r in regions]
        _check_layout(regions, n)
        if differential and len(regions) % 2:
            raise ValueError("differential detection needs an even number of regions")
        self.n, self.regions, self.differential = int(n), regions, differential
        masks = torch.zeros(len(regions), n, n)
        for i, (r, c, s) in enumerate(regions):
            masks[i, r:r + s, c:c + s] = 1.0 / (s * s)
        self.register_buffer("masks", masks, persistent=False)

    @property
    def k(self) -> int:
        return len(self.regions) // 2 if self.differential else len(self.regions)

    def intensity(self, u: torch.Tensor) -> torch.Tensor:
        """Mean intensity per region, ``(..., len(regions))``."""
        inten = u.real**2 + u.imag**2
        return torch.einsum("...ij,kij->...k", inten, self.masks)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        return self.readout(self.intensity(u))

    def readout(self, s: torch.Tensor) -> torch.Tensor:
        """Class scores from region intensities (differential pairs combined)."""
        if not self.differential:
            return s
        pos, neg = s[..., 0::2], s[..., 1::2]
        return (pos - neg) / (pos + neg + 1e-12)
