"""Propagation validity at six reference geometries (issue 47; the table of
docs/reproduction/d2nn.md, "Propagation validity"), computed from the library's own checks.

Each geometry is propagated as stated -- the band-limited ASM on the pad ``N / 2`` -- and
:func:`accelerators.diffraction_limits.check_propagation` gives its critical distance
``z_c = M dx^2 / lambda`` (``M = 2 N``) and its ``padding_error``: the expected relative L2
error of one hop's ``N x N`` output for a random-phase field against the ASM converged.
That error is the closed-form expectation over the random phases (the module docstring of
:mod:`accelerators.diffraction_limits`), so no field is drawn and the record has no seed:
two runs write the same file. :func:`~accelerators.diffraction_limits.plan_propagation`
(with the stated propagation preferred, at ``--tol``) gives the method and pad a model would
use there and their error. Where a geometry asks for it (:attr:`Geometry.aperture`), the
relative L2 error of one hard-edged aperture (:func:`aperture_field`) is measured too, with
the same circular kernels: :func:`~accelerators.diffraction_limits.transfer_np` on the
stated grid against the grid of :func:`~accelerators.diffraction_limits.reference_grid`.

Run: ``python -m experiments.reproduce.d2nn_propagation_geometries
--out docs/reproduction/results/d2nn/propagation_geometries.json``
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from accelerators.diffraction_limits import (
    PADDING_TOL,
    check_propagation,
    plan_propagation,
    reference_grid,
    transfer_np,
)
from accelerators.diffractive import LIGHTRIDGE_VISIBLE, LIN2018_THZ
from experiments.reproduce import jsonable, write_atomic
from experiments.reproduce.d2nn import cpu_spec, settings_for

__all__ = ["GEOMETRIES", "Geometry", "aperture_error", "aperture_field", "main", "row", "rows"]

#: The propagation every geometry is stated with: the band-limited ASM on pad ``N / 2``.
STATED_METHOD = "asm"


@dataclass(frozen=True)
class Geometry:
    """One geometry of the table: a short ``label`` (may be empty), where it comes from,
    and whether the hard-edged aperture's error is measured too."""

    name: str
    label: str
    source: str
    wavelength_m: float
    pitch_m: float
    n: int
    z_m: float
    aperture: bool = False

    @property
    def pad(self) -> int:
        """The stated pad, ``N / 2`` (every geometry's; LightRidge's and Lin et al.'s too)."""
        return self.n // 2


_REPRO = cpu_spec(settings_for(False))
_CODESIGN = "experiments/configs/d2nn_codesign.yaml"

#: The table's geometries, in its order.
GEOMETRIES: tuple[Geometry, ...] = (
    Geometry("near-field", "near field",
             "the reproduction's geometry (experiments.reproduce.d2nn.cpu_spec(settings_for(False))) at 10 mm, "
             "below the co-design space's 20 mm",
             _REPRO.wavelength_m, _REPRO.pitch_m, _REPRO.n, 0.01),
    Geometry("reproduction", "the reproduction",
             "experiments.reproduce.d2nn.cpu_spec(settings_for(False)): 532 nm, 36 um, N = 64, z = 0.1 m",
             _REPRO.wavelength_m, _REPRO.pitch_m, _REPRO.n, _REPRO.z_m, aperture=True),
    Geometry("reproduction-0.3m", "",
             "the reproduction's geometry at LightRidge's 0.3 m (the co-design space's largest z, 300 mm)",
             _REPRO.wavelength_m, _REPRO.pitch_m, _REPRO.n, LIGHTRIDGE_VISIBLE.z_m),
    Geometry("lightridge-visible", "LightRidge's default",
             "accelerators.diffractive.LIGHTRIDGE_VISIBLE: LightRidge's defaults (Li et al., ASPLOS 2024, "
             "arXiv 2306.11268; github.com/lightridge/lightridge ASPLOS2024_AE/README.md)",
             LIGHTRIDGE_VISIBLE.wavelength_m, LIGHTRIDGE_VISIBLE.pitch_m, LIGHTRIDGE_VISIBLE.n, LIGHTRIDGE_VISIBLE.z_m),
    Geometry("lin2018-thz", "Lin et al. 2018 THz",
             "accelerators.diffractive.LIN2018_THZ: Lin et al., Science 361:1004, 2018 (0.4 THz, 0.4 mm pitch, "
             "200 px, 3 cm between planes)",
             LIN2018_THZ.wavelength_m, LIN2018_THZ.pitch_m, LIN2018_THZ.n, LIN2018_THZ.z_m),
    Geometry("far-corner", "far corner",
             f"the co-design space ({_CODESIGN}) at its smallest pitch (12 um) and N (32), 532 nm, at 78 mm "
             "(4.5 z_c; the propagation tests' far_4.5zc)",
             532e-9, 12e-6, 32, 0.078),
)


def aperture_field(n: int) -> np.ndarray:
    """A hard-edged square aperture of half the side, centred (the propagation tests'
    ``_fields``): ones on ``[n/4, n - n/4)^2``, zeros elsewhere."""
    u = np.zeros((n, n), complex)
    q = n // 4
    u[q:n - q, q:n - q] = 1.0
    return u


def _hop(u: np.ndarray, m: int, g: Geometry) -> np.ndarray:
    """One ASM hop of ``u`` on an ``m``-sample grid (circular, so the field's place in the
    grid does not matter), cropped to the ``N x N`` output."""
    n = u.shape[0]
    big = np.zeros((m, m), complex)
    big[:n, :n] = u
    out = np.fft.ifft2(np.fft.fft2(big) * transfer_np(STATED_METHOD, m, g.pitch_m, g.wavelength_m, g.z_m))
    return out[:n, :n]


def aperture_error(g: Geometry) -> float:
    """Relative L2 error of one hop of :func:`aperture_field` on the stated grid ``N + 2 pad``
    against the same ASM on :func:`~accelerators.diffraction_limits.reference_grid` (the
    converged reference of ``padding_error``)."""
    u = aperture_field(g.n)
    ref = _hop(u, reference_grid(g.n, g.pad, g.pitch_m, g.wavelength_m, g.z_m), g)
    got = _hop(u, g.n + 2 * g.pad, g)
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def row(g: Geometry, tol: float = PADDING_TOL) -> dict[str, Any]:
    """The record's row of ``g``: the stated propagation's ``check_propagation`` report and
    the plan at ``tol``."""
    m = g.n + 2 * g.pad
    rep = check_propagation(g.wavelength_m, g.pitch_m, m, g.z_m, STATED_METHOD, warn=False, n=g.n, tol=tol)
    plan = plan_propagation(g.wavelength_m, g.pitch_m, g.n, g.z_m, tol=tol, prefer=(STATED_METHOD, g.pad))
    return {
        "name": g.name, "label": g.label, "source": g.source,
        "wavelength_m": g.wavelength_m, "pitch_m": g.pitch_m, "n": g.n, "pad": g.pad, "grid": m, "z_m": g.z_m,
        "method": STATED_METHOD, "z_c_m": rep.critical_distance_m, "z_over_zc": g.z_m / rep.critical_distance_m,
        "padding_error": rep.padding_error, "aperture_error": aperture_error(g) if g.aperture else None,
        "problems": list(rep.problems),
        "plan": {"method": plan.method, "pad": plan.pad, "grid": plan.grid, "error": plan.error},
    }


def rows(tol: float = PADDING_TOL) -> list[dict[str, Any]]:
    """Every geometry's row, in :data:`GEOMETRIES`' order."""
    return [row(g, tol) for g in GEOMETRIES]


def _parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m experiments.reproduce.d2nn_propagation_geometries",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--tol", type=float, default=PADDING_TOL,
                    help=f"padding-error tolerance of the check and the plan (default {PADDING_TOL})")
    ap.add_argument("--out", type=Path, default=Path("runs/reproduce/d2nn/propagation_geometries.json"),
                    help="the JSON record written")
    a = ap.parse_args(argv)
    if not (math.isfinite(a.tol) and a.tol > 0):
        raise SystemExit(f"error: --tol must be a finite number > 0, got {a.tol}")
    if a.out.suffix != ".json":
        raise SystemExit(f"error: --out must name a .json file, got {str(a.out)!r}")
    return a


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Compute every row and write ``--out``; returns the record."""
    argv = sys.argv[1:] if argv is None else list(argv)
    a = _parse(argv)
    c0 = time.process_time()
    out = jsonable({
        "command": "python -m experiments.reproduce.d2nn_propagation_geometries " + shlex.join(argv),
        "tol": a.tol,
        "stated": f"{STATED_METHOD} on pad N/2",
        "padding_error": "accelerators.diffraction_limits.check_propagation(...).padding_error: expected relative "
                         "L2 error of one hop's N x N output, random-phase field (closed form; no field drawn), "
                         "against the method converged",
        "aperture_error": "relative L2 error of one hop of a centred hard-edged square of half the side, stated "
                          "grid against reference_grid(...)",
        "plan": f"plan_propagation(..., tol={a.tol:g}, prefer=('{STATED_METHOD}', N/2))",
        "rows": rows(a.tol),
    })
    a.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(a.out, json.dumps(out, indent=1) + "\n")
    for r in out["rows"]:
        p = r["plan"]
        print(f"{r['name']}: z/z_c {r['z_over_zc']:.3g}, padding_error {r['padding_error']:.3g}; "
              f"plan {p['method']} pad {p['pad']} ({p['error']:.3g})", flush=True)
    print(f"{len(out['rows'])} geometries in {time.process_time() - c0:.2f} s CPU; {a.out}", flush=True)
    return out


if __name__ == "__main__":
    main()
