"""The diffractive network (single- and multi-task) built from a
:class:`~accelerators.diffractive.DiffractiveAccelerator`.

Forward model (LightRidge's pipeline, Li et al., ASPLOS 2024, arXiv 2306.11268, and
github.com/lightridge/lightridge ``source/layers.py``, with an intensity readout): the
``N x N`` input image is the field amplitude (zero phase), scaled so that the mean input
intensity is 1 (a fixed photon budget per inference); then for each layer
``u <- t_l * P_z(u)`` (one free-space hop then the layer's transmission), and a last hop
to the detector plane.

Multi-task (Li et al., Sci. Rep. 11:11013, 2021; patent application US 20230359879):
``K_s`` shared trunk layers, then a 1:T beam splitter (field ``/ sqrt(T)``) into ``T``
branches of ``L - K_s`` layers, each ending on its own detector plane. Every input lights
all planes; task ``t`` reads its class from plane ``t``, and the task being shown is
recognized as the plane holding the brightest region over all ``T K`` regions
[inferred].

Logits: task ``t``'s readout ``s`` times ``a_t^{2L}`` -- multiplying each of the path's
``L`` layers by LightRidge's amplitude factor ``a_t`` scales the intensity by ``a_t^{2L}``
[inferred from ``source/layers.py``], so ``a_t`` acts as the inverse softmax temperature
of task ``t``: the per-branch knob of the multi-task regularization, with the per-task
loss weights.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from accelerators.diffractive import DiffractiveAccelerator
from evaluators.optics.layers import Detector, PhaseLayer, lightridge_layout
from evaluators.optics.noise import Noise
from evaluators.optics.propagation import Propagator

__all__ = ["DiffractiveNetwork", "resize_images"]


def resize_images(x: torch.Tensor, n: int) -> torch.Tensor:
    """``(B, H, W)`` images in [0, 1] -> ``(B, n, n)`` (bilinear, antialiased)."""
    if x.shape[-1] == n and x.shape[-2] == n:
        return x
    return torch.nn.functional.interpolate(x[:, None].float(), size=(n, n), mode="bilinear",
                                           antialias=True, align_corners=False)[:, 0]


class DiffractiveNetwork(torch.nn.Module):
    """Single-task (``spec.tasks == 1``) or multi-task diffractive network.

    ``forward(x)`` takes ``(B, N, N)`` real amplitudes and returns the region intensities
    ``(B, T, K)`` (``K`` class scores per task plane; differential pairs combined).
    """

    def __init__(self, spec: DiffractiveAccelerator, *, amplitude_factors: Sequence[float] | float = 1.5,
                 seed: int = 0, check: str = "warn", layout: Sequence[tuple[int, int, int]] | None = None,
                 init_scale_rad: float = 0.5) -> None:
        super().__init__()
        problems = spec.problems(propagation=False)  # the propagator checks itself (``check``)
        if problems:
            raise ValueError("invalid diffractive accelerator: " + "; ".join(problems))
        self.spec = spec
        g = torch.Generator().manual_seed(seed)
        # the padding-error check of ``spec.padding_tol``; ``spec.planned()`` gives a spec that meets it
        self.prop = Propagator(spec.n, spec.pad, spec.pitch_m, spec.wavelength_m, spec.z_m,
                               spec.propagation, check=check, tol=spec.padding_tol)

        def layer() -> PhaseLayer:
            return PhaseLayer(spec.n, spec.phase_levels, spec.phase_range_rad, spec.modulation,
                              spec.amplitude_min, init_scale_rad=init_scale_rad, generator=g)

        self.trunk = torch.nn.ModuleList(layer() for _ in range(spec.k_shared))
        self.branches = torch.nn.ModuleList(
            torch.nn.ModuleList(layer() for _ in range(spec.layers - spec.k_shared)) for _ in range(spec.tasks))
        if layout is None:
            k = spec.detector_regions * (2 if spec.differential else 1)
            if k == 10:
                layout = lightridge_layout(spec.n, spec.detector_px)
            else:
                from evaluators.optics.layers import grid_layout

                layout = grid_layout(spec.n, k, spec.detector_px)
        self.detector = Detector(spec.n, layout, spec.differential)
        af = [float(amplitude_factors)] * spec.tasks if isinstance(amplitude_factors, int | float) \
            else [float(a) for a in amplitude_factors]
        if len(af) != spec.tasks:
            raise ValueError(f"need {spec.tasks} amplitude factors, got {len(af)}")
        self.amplitude_factors = af

    # ------------------------------------------------------------------ physics
    def _hop(self, u: torch.Tensor, noise: Noise, g: torch.Generator | None) -> torch.Tensor:
        lam = self.spec.wavelength_m * (1.0 + noise.wavelength_shift_rel)
        z = noise.hop_z(self.spec.z_m, g)
        if lam == self.spec.wavelength_m and z == self.spec.z_m:
            return self.prop(u)
        return self.prop(u, wavelength_m=lam, z_m=z)

    def _layer(self, u: torch.Tensor, layer: PhaseLayer, noise: Noise, g: torch.Generator | None) -> torch.Tensor:
        t = layer.transmission(levels=noise.phase_levels,
                               phase_noise=noise.layer_phase_noise(layer.n, u.device, g),
                               phase_scale=1.0 / (1.0 + noise.wavelength_shift_rel))
        dy, dx = noise.lateral_shift(g)
        if dy or dx:
            t = torch.roll(t, shifts=(dy, dx), dims=(-2, -1))
        return u * t

    def fields(self, x: torch.Tensor, noise: Noise | None = None,
               generator: torch.Generator | None = None) -> list[torch.Tensor]:
        """The detector-plane fields, one ``(B, N, N)`` complex tensor per task."""
        noise = noise or Noise()
        x = x.to(torch.float32)
        norm = torch.sqrt(torch.clamp((x**2).mean(dim=(-2, -1), keepdim=True), min=1e-12))
        u = noise.perturb_input(x / norm, generator).to(torch.complex64)
        for layer in self.trunk:
            u = self._layer(self._hop(u, noise, generator), layer, noise, generator)
        out = []
        split = u / (self.spec.tasks ** 0.5)
        for branch in self.branches:
            v = split
            for layer in branch:
                v = self._layer(self._hop(v, noise, generator), layer, noise, generator)
            out.append(self._hop(v, noise, generator))
        return out

    def forward(self, x: torch.Tensor, noise: Noise | None = None,
                generator: torch.Generator | None = None) -> torch.Tensor:
        """Region intensities (detector noise applied) ``(B, T, K)``."""
        noise = noise or Noise()
        s = torch.stack([self.detector.intensity(f) for f in self.fields(x, noise, generator)], dim=1)
        s = noise.perturb_readout(s.flatten(1), generator).view_as(s)
        return self.detector.readout(s)

    def logits(self, s: torch.Tensor) -> torch.Tensor:
        """Per-task logits ``s_t a_t^{2L}`` from readouts ``(B, T, K)``."""
        gain = torch.tensor([a ** (2 * self.spec.layers) for a in self.amplitude_factors],
                            device=s.device, dtype=s.dtype)
        return s * gain[None, :, None]

    @staticmethod
    def recognize(s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Task and class from the brightest of all ``T K`` regions: ``(task, class)``."""
        b, t, k = s.shape
        idx = s.reshape(b, t * k).argmax(-1)
        return idx // k, idx % k
