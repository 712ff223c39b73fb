"""Free-space diffractive optical accelerator (D2NN) and its cost model.

A :class:`DiffractiveAccelerator` is ``L`` diffractive layers of ``N x N`` pixels at pitch
``dx``, spaced ``z`` apart, lit by a laser of wavelength ``lambda`` and read by a detector
plane of ``K`` regions. With ``T`` tasks it is the multi-task form of Li et al. (Sci. Rep.
11:11013, 2021; patent application US 20230359879: "an overlap optical path" where the
tasks' paths overlap): the first ``K_s`` layers (the trunk) are shared, then a beam
splitter sends the light into ``T`` branches of ``L - K_s`` layers, each with its own
detector plane. Every task's path is ``L`` layers deep.

**Cost model** ([inferred] from the geometry, with LightRidge's and Lin et al.'s reference
designs as examples; each constant below names its source):

* ``area_m2 = physical_layers (N dx)^2`` -- the modulating area that must be fabricated
  (LightRidge: 5 x 51.8 mm^2; Lin 2018: 5 x 64 cm^2).
* ``physical_layers = K_s + T (L - K_s)`` against ``T L`` for ``T`` separate systems
  (``layers_saved``); T = 2, L = 5, K_s = 3 gives 7 vs 10.
* ``length_m = (L + 1) z`` (input plane, L layers, detector) and the optical latency
  ``(L + 1) z / c`` (6.0 ns for LightRidge's defaults, 0.6 ns for Lin 2018).
* ``throughput_hz = min(input modulator rate, camera frame rate)``: the optics take
  nanoseconds, the electro-optic ends take milliseconds. The input SLM's rate defaults to
  130 Hz (parallel-aligned LCoS with small phase changes; about 32 Hz for the largest ones
  and 205 Hz with a dynamic LUT -- "Dynamic calibration for improving the speed of a
  parallel-aligned ..." LCoS SLM, studylib.net/doc/18095781); the camera's frame rate is
  an *assumed* 1000 frame/s (a high-speed CMOS camera; no source -- set it).
* ``energy_j`` -- the optical energy at the shot-noise floor: every one of the
  ``detectors`` regions must collect ``photons_per_detector`` photoelectrons (1e4, i.e. a
  shot-noise SNR of 100 [inferred]) at quantum efficiency ``eta`` (0.1 [inferred], a
  conservative value for a CMOS sensor), so the laser must deliver
  ``detectors n_ph h c / (lambda eta)`` per inference (0.37 pJ for 10 detectors at 532 nm, 1/(T) of it per task since a beam splitter feeds all branches --
  we charge all ``T K`` detectors). Electrical energy of the SLM driver, camera and ADC is
  not modelled (no figures in the sources); ``input_energy_j`` / ``readout_energy_j`` add
  them when known. Passive (printed) layers draw no power.

**Known constraints** (vectorized predicates usable in a :class:`~design_space.DesignSpace`):
:func:`nyquist_ok` (``dx >= lambda / 2``), :func:`shared_depth_ok` (``K_s <= L``),
:func:`propagator_ok` (the chosen propagator's validity, see
:func:`accelerators.diffraction_limits.check_propagation`) and :func:`codesign_ok` (all).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from accelerators.diffraction_limits import (
    FRESNEL_PHASE_TOL_RAD,
    PADDING_TOL,
    check_propagation,
    plan_propagation,
)

__all__ = [
    "C_M_PER_S",
    "H_J_S",
    "LIGHTRIDGE_VISIBLE",
    "LIN2018_THZ",
    "DiffractiveAccelerator",
    "codesign_ok",
    "nyquist_ok",
    "propagator_ok",
    "shared_depth_ok",
]

#: Speed of light in vacuum [m/s] (exact, SI 2019).
C_M_PER_S = 299_792_458.0
#: Planck constant [J s] (exact, SI 2019).
H_J_S = 6.626_070_15e-34
#: Input SLM refresh [Hz]: parallel-aligned LCoS, small phase changes (the LCoS
#: dynamic-calibration study cited in the module docstring).
SLM_RATE_HZ = 130.0
#: Camera frame rate [Hz]: an assumption (high-speed CMOS), not from a source.
CAMERA_FPS_ASSUMED = 1000.0
#: Photoelectrons per detector region for a shot-noise SNR of sqrt(1e4) = 100 [inferred].
PHOTONS_PER_DETECTOR = 1e4
#: Detector quantum efficiency [inferred: a conservative value for a CMOS sensor].
QUANTUM_EFFICIENCY = 0.1


@dataclass(frozen=True)
class DiffractiveAccelerator:
    """A (multi-task) diffractive accelerator; see the module docstring for the model.

    Lengths in metres. ``shared_layers`` defaults to ``layers`` (one trunk, no branches);
    with ``tasks == 1`` it must equal ``layers``. ``detector_size_px`` defaults to
    ``N / 10`` (LightRidge's 20 px on 200). ``padding_tol`` is the tolerance of the
    propagator's padding error (:func:`accelerators.diffraction_limits.padding_error`) that
    :meth:`problems` applies; :meth:`planned` picks a pad and method that meet it.
    """

    wavelength_m: float = 532e-9
    pitch_m: float = 36e-6
    n: int = 200
    pad: int = 100
    z_m: float = 0.3
    layers: int = 5
    tasks: int = 1
    shared_layers: int | None = None
    phase_levels: int | None = None
    phase_range_rad: float = 2 * math.pi
    modulation: str = "phase"
    amplitude_min: float = 0.41
    detector_regions: int = 10
    detector_size_px: int | None = None
    differential: bool = False
    propagation: str = "asm"
    input_modulator_hz: float = SLM_RATE_HZ
    camera_fps: float = CAMERA_FPS_ASSUMED
    photons_per_detector: float = PHOTONS_PER_DETECTOR
    quantum_efficiency: float = QUANTUM_EFFICIENCY
    input_energy_j: float = 0.0
    readout_energy_j: float = 0.0
    padding_tol: float = PADDING_TOL

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_point(cls, point: Mapping[str, Any], **overrides: Any) -> DiffractiveAccelerator:
        """Build from a design point; ``pitch_um``, ``wavelength_nm``, ``z_mm`` are
        accepted as unit-named aliases; unknown keys are ignored."""
        names = {f.name for f in fields(cls)}
        kw: dict[str, Any] = {k: v for k, v in point.items() if k in names}
        if "pitch_um" in point:
            kw["pitch_m"] = float(point["pitch_um"]) * 1e-6
        if "wavelength_nm" in point:
            kw["wavelength_m"] = float(point["wavelength_nm"]) * 1e-9
        if "z_mm" in point:
            kw["z_m"] = float(point["z_mm"]) * 1e-3
        if "shared_depth" in point:
            kw["shared_layers"] = int(point["shared_depth"])
        for k in ("n", "pad", "layers", "tasks", "detector_regions"):
            if k in kw:
                kw[k] = int(kw[k])
        if kw.get("phase_levels") in (0, "none", "continuous"):
            kw["phase_levels"] = None
        kw.update(overrides)
        return cls(**kw)

    def with_(self, **kw: Any) -> DiffractiveAccelerator:
        return replace(self, **kw)

    def planned(self, tol: float | None = None) -> DiffractiveAccelerator:
        """This design with the pad and propagator of
        :func:`~accelerators.diffraction_limits.plan_propagation` at ``tol`` (default
        ``padding_tol``): its own ``(propagation, pad)`` where they meet the tolerance, else the
        cheapest that does (more padding, or ``rs``). Raises
        :class:`~accelerators.diffraction_limits.PropagationValidityError` with the numbers
        when nothing does."""
        t = self.padding_tol if tol is None else float(tol)
        plan = plan_propagation(self.wavelength_m, self.pitch_m, self.n, self.z_m, tol=t,
                                prefer=(self.propagation, self.pad))
        return replace(self, pad=plan.pad, propagation=plan.method, padding_tol=t)

    # ---------------------------------------------------------------- derived sizes
    @property
    def k_shared(self) -> int:
        return self.layers if self.shared_layers is None else int(self.shared_layers)

    @property
    def grid(self) -> int:
        """Simulation grid side ``N + 2 pad``."""
        return self.n + 2 * self.pad

    @property
    def detector_px(self) -> int:
        return self.detector_size_px or max(1, round(self.n / 10))

    @property
    def physical_layers(self) -> int:
        return self.k_shared + self.tasks * (self.layers - self.k_shared)

    @property
    def separate_layers(self) -> int:
        """Layers of ``tasks`` separate single-task systems of the same depth."""
        return self.tasks * self.layers

    @property
    def layers_saved(self) -> int:
        return self.separate_layers - self.physical_layers

    @property
    def detectors(self) -> int:
        """Detector regions read per inference, over all task planes."""
        return self.tasks * self.detector_regions * (2 if self.differential else 1)

    # ---------------------------------------------------------------- cost model
    @property
    def layer_area_m2(self) -> float:
        return (self.n * self.pitch_m) ** 2

    @property
    def area_m2(self) -> float:
        return self.physical_layers * self.layer_area_m2

    @property
    def area_mm2(self) -> float:
        return self.area_m2 * 1e6

    @staticmethod
    def area_mm2_of(p: Mapping[str, Any]) -> np.ndarray:
        """Modulating area (mm^2) of a batch of designs: ``physical_layers (N dx)^2`` with
        ``physical_layers = K_s + T (L - K_s)``. Columns: ``layers``, ``n`` (default
        200), the pitch (``pitch_um`` or ``pitch_m``, default 36 um), ``tasks`` (default
        1) and the shared depth (``shared_depth`` or ``shared_layers``; default all
        layers)."""
        layers = np.asarray(p["layers"], dtype=float)
        tasks = _col(p, "tasks", 1.0)
        shared = _shared_depth(p) if ("shared_depth" in p or "shared_layers" in p) else layers
        _, pitch = _lambda_pitch(p)
        side_mm = _col(p, "n", 200.0) * pitch * 1e3
        return np.asarray((shared + tasks * (layers - shared)) * side_mm**2)

    @property
    def length_m(self) -> float:
        """Input plane to detector plane along one task's path: ``(L + 1) z``."""
        return (self.layers + 1) * self.z_m

    @property
    def latency_s(self) -> float:
        """Optical time of flight ``(L + 1) z / c``."""
        return self.length_m / C_M_PER_S

    @property
    def throughput_hz(self) -> float:
        """Inferences per second, bound by the input modulator and the camera."""
        return min(self.input_modulator_hz, self.camera_fps)

    @property
    def photon_energy_j(self) -> float:
        return H_J_S * C_M_PER_S / self.wavelength_m

    @property
    def optical_energy_j(self) -> float:
        """Laser energy per inference at the shot-noise floor (module docstring)."""
        return self.detectors * self.photons_per_detector * self.photon_energy_j / self.quantum_efficiency

    @property
    def energy_j(self) -> float:
        return self.optical_energy_j + self.input_energy_j + self.readout_energy_j

    @property
    def neurons(self) -> int:
        return self.physical_layers * self.n * self.n

    @property
    def spread_radius_px(self) -> float:
        """Lateral reach of one hop in pixels, ``z tan(asin(lambda / 2 dx)) / dx``."""
        s = self.wavelength_m / (2 * self.pitch_m)
        if s >= 1:
            return math.inf
        return self.z_m * math.tan(math.asin(s)) / self.pitch_m

    def cost(self) -> dict[str, float]:
        """The cost model as named metrics (units in the names)."""
        return {
            "area_mm2": self.area_mm2, "physical_layers": float(self.physical_layers),
            "separate_layers": float(self.separate_layers), "layers_saved": float(self.layers_saved),
            "length_m": self.length_m, "latency_ns": self.latency_s * 1e9,
            "throughput_hz": self.throughput_hz, "energy_pj": self.energy_j * 1e12,
            "neurons": float(self.neurons), "spread_radius_px": self.spread_radius_px,
        }

    # ---------------------------------------------------------------- validity
    def problems(self, propagation: bool = True) -> list[str]:
        """Named reasons why this design cannot be built or simulated faithfully
        (``propagation=False``: the structural ones only, without the propagator check)."""
        out = []
        c = type(self).__name__
        for name in ("wavelength_m", "pitch_m", "z_m"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
                out.append(f"{c}.{name} must be a positive finite length, got {v!r}")
        for name, low in (("n", 1), ("pad", 0), ("layers", 1), ("tasks", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                out.append(f"{c}.{name} must be an integer >= {low}, got {v!r}")
        if out:  # the checks below need these
            return out
        if not 0 <= self.k_shared <= self.layers:
            out.append(f"shared_layers {self.k_shared} not in [0, layers={self.layers}]")
        if self.tasks == 1 and self.k_shared != self.layers:
            out.append("a single-task system shares all its layers (shared_layers == layers)")
        if self.phase_levels is not None and self.phase_levels < 2:
            out.append(f"{c}.phase_levels must be >= 2 or None, got {self.phase_levels!r}")
        if self.modulation not in ("phase", "coupled", "complex"):
            out.append(f"{c}.modulation must be 'phase', 'coupled' or 'complex', got {self.modulation!r}")
        tol_ok = isinstance(self.padding_tol, (int, float)) and not isinstance(self.padding_tol, bool) \
            and math.isfinite(self.padding_tol) and self.padding_tol > 0
        if not tol_ok:
            out.append(f"{c}.padding_tol must be a finite number > 0, got {self.padding_tol!r}")
        if propagation and tol_ok:
            rep = check_propagation(self.wavelength_m, self.pitch_m, self.grid, self.z_m, self.propagation,
                                    warn=False, n=self.n, tol=self.padding_tol)
            out.extend(rep.problems)
        return out

    def validate(self) -> DiffractiveAccelerator:
        """Raise ``ValueError`` listing every named problem (:meth:`problems`); return
        ``self`` when there is none."""
        p = self.problems()
        if p:
            raise ValueError("invalid diffractive accelerator: " + "; ".join(p))
        return self


#: LightRidge's visible SLM reference (Li et al., ASPLOS 2024, arXiv 2306.11268; defaults of
#: github.com/lightridge/lightridge ``ASPLOS2024_AE/README.md``): 532 nm, 36 um, 200 + 100
#: padding each side, 0.3 m, 5 layers, 64 SLM levels in the co-design tutorial.
LIGHTRIDGE_VISIBLE = DiffractiveAccelerator()
#: Lin et al. 2018's 3D-printed THz system (Science 361:1004, 2018): 0.75 mm (0.4 THz),
#: 0.4 mm pitch, 200 px (8 x 8 cm layers), 3 cm spacing, 5 layers.
LIN2018_THZ = DiffractiveAccelerator(wavelength_m=0.75e-3, pitch_m=0.4e-3, n=200, pad=100, z_m=0.03)


# -------------------------------------------------------------------- vectorized constraints
def _col(p: Mapping[str, Any], name: str, default: float, scale: float = 1.0) -> np.ndarray:
    return np.asarray(p[name], dtype=float) * scale if name in p else np.asarray(default, dtype=float)


def _lambda_pitch(p: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    lam = _col(p, "wavelength_nm", 0.0, 1e-9) if "wavelength_nm" in p else _col(p, "wavelength_m", 532e-9)
    pitch = _col(p, "pitch_um", 0.0, 1e-6) if "pitch_um" in p else _col(p, "pitch_m", 36e-6)
    return lam, pitch


def nyquist_ok(p: Mapping[str, Any]) -> Any:
    """``pitch >= lambda / 2`` (columns ``pitch_um`` or ``pitch_m``, ``wavelength_nm`` or
    ``wavelength_m``; wavelength defaults to 532 nm)."""
    lam, pitch = _lambda_pitch(p)
    return pitch >= lam / 2


def _shared_depth(p: Mapping[str, Any]) -> Any:
    """The column ``shared_depth`` (config name) or ``shared_layers`` (spec name), as floats."""
    return np.asarray(p["shared_depth"] if "shared_depth" in p else p["shared_layers"], dtype=float)


def shared_depth_ok(p: Mapping[str, Any]) -> Any:
    """``0 <= shared_depth <= layers``."""
    s = _shared_depth(p)
    return (s >= 0) & (s <= np.asarray(p["layers"], dtype=float))


def propagator_ok(p: Mapping[str, Any]) -> Any:
    """The propagator (column ``propagation``) is valid for the geometry, by the closed-form
    rules of :func:`accelerators.diffraction_limits.check_propagation`: Nyquist for all; for
    ``fresnel`` also ``z <= N_grid dx^2 / lambda`` and the paraxial phase error <= pi/2; for
    ``asm`` ``z <= N_grid dx^2 / lambda`` (the band-limited ASM's critical distance) on
    the padded grid (pad column ``pad``, default ``n / 2``). Without a ``propagation`` column
    only Nyquist: the evaluator then plans the propagator per point
    (:meth:`DiffractiveAccelerator.planned`, which also bounds the padding error -- a
    numerical check, not vectorized here)."""
    lam, pitch = _lambda_pitch(p)
    z = _col(p, "z_mm", 0.0, 1e-3) if "z_mm" in p else _col(p, "z_m", 0.3)
    n = _col(p, "n", 200)
    pad = _col(p, "pad", 0.0) if "pad" in p else n / 2
    m = n + 2 * pad
    ok = pitch >= lam / 2
    if "propagation" in p:
        method = np.asarray(p["propagation"])
        fres = method == "fresnel"
        f2 = np.minimum(2 * (1 / (2 * pitch)) ** 2, 1 / lam**2)
        err = np.abs(2 * np.pi * z * (np.sqrt(np.maximum(0, 1 / lam**2 - f2)) - 1 / lam + lam * f2 / 2))
        fres_ok = (z <= m * pitch**2 / lam) & (err <= FRESNEL_PHASE_TOL_RAD)
        asm_ok = z <= m * pitch**2 / lam
        ok = ok & (~fres | fres_ok) & ((method != "asm") | asm_ok)
    return ok


def task_branches_ok(p: Mapping[str, Any]) -> Any:
    """``shared_depth < layers``: every task keeps at least one layer of its own. With all
    layers shared, both tasks' detector planes see the same field, so the readout cannot
    tell which task's input is shown (measured: task recognition at chance, 50 %, in
    ``coexplore reproduce d2nn``); a multi-task co-design excludes such points up front."""
    return _shared_depth(p) < np.asarray(p["layers"], dtype=float)


def codesign_ok(p: Mapping[str, Any]) -> Any:
    """All known constraints of the co-design space (``experiments/configs/d2nn_codesign.yaml``):
    Nyquist pitch, a valid sharing depth with a branch per task, propagator validity."""
    return nyquist_ok(p) & shared_depth_ok(p) & task_branches_ok(p) & propagator_ok(p)
