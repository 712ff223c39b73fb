"""Run peer optics libraries on fields from coexplore (issue 47): diffractsim 2.2.13's angular
spectrum and LightPipes 2.1.5's ``Forvard`` (its FFT propagator). This file runs inside
``.venv-optics`` (``make optics-env``), never in coexplore's venv, and imports nothing from
coexplore: ``tests/evaluators/optics/test_optics_peers.py`` writes the fields to an ``.npz``,
calls ``.venv-optics/bin/python experiments/validation/optics_peers.py IN OUT`` and compares.

IN holds ``u`` (``(K, N, N)`` complex fields), ``pitch_m``, ``wavelength_m``, ``z_m`` and
``pad`` (zero padding on each side, the peer's own grid); OUT holds the peers' ``N x N``
outputs (``diffractsim``, ``lightpipes``) and their versions.
"""

from __future__ import annotations

import sys
from importlib.metadata import version

import numpy as np


def diffractsim_asm(u: np.ndarray, pitch: float, lam: float, z: float, pad: int) -> np.ndarray:
    import diffractsim

    diffractsim.set_backend("CPU")
    n = u.shape[0]
    m = n + 2 * pad
    f = diffractsim.MonochromaticField(wavelength=lam, extent_x=m * pitch, extent_y=m * pitch, Nx=m, Ny=m)
    f.E = np.pad(u, pad).astype(complex)
    f.propagate(z)
    return np.asarray(f.E)[pad:pad + n, pad:pad + n]


def lightpipes_forvard(u: np.ndarray, pitch: float, lam: float, z: float, pad: int) -> np.ndarray:
    import LightPipes as lp

    n = u.shape[0]
    m = n + 2 * pad
    f = lp.Begin(m * pitch, lam, m)
    f = lp.SubIntensity(f, np.zeros((m, m)))
    f.field = np.pad(u, pad).astype(complex)
    f = lp.Forvard(f, z)
    return np.asarray(f.field)[pad:pad + n, pad:pad + n]


def main(argv: list[str]) -> None:
    src, dst = argv
    d = np.load(src)
    args = (float(d["pitch_m"]), float(d["wavelength_m"]), float(d["z_m"]), int(d["pad"]))
    out = {"diffractsim": np.stack([diffractsim_asm(u, *args) for u in d["u"]]),
           "lightpipes": np.stack([lightpipes_forvard(u, *args) for u in d["u"]]),
           "versions": np.array([version("diffractsim"), version("LightPipes")])}
    np.savez(dst, **out)


if __name__ == "__main__":
    main(sys.argv[1:])
