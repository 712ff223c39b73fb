"""experiments.reproduce.d2nn_propagation_geometries: a row is what the library's
check_propagation / plan_propagation give for that geometry, the geometries are their
sources', the aperture error is an independent numpy hop's, and the committed record is what
the script writes now."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from accelerators.diffraction_limits import check_propagation, padding_error, plan_propagation
from accelerators.diffractive import LIGHTRIDGE_VISIBLE, LIN2018_THZ
from experiments.reproduce import d2nn_propagation_geometries as pg
from experiments.reproduce.d2nn import cpu_spec, settings_for

ROOT = Path(__file__).resolve().parents[3]
RECORD = ROOT / "docs/reproduction/results/d2nn/propagation_geometries.json"
BY_NAME = {g.name: g for g in pg.GEOMETRIES}


def test_a_row_equals_a_direct_call_of_the_library():
    g = BY_NAME["near-field"]  # N = 64, one plan candidate: the cheapest geometry
    r = pg.row(g)
    rep = check_propagation(532e-9, 36e-6, 128, 0.01, "asm", warn=False, n=64)
    plan = plan_propagation(532e-9, 36e-6, 64, 0.01, prefer=("asm", 32))
    assert (r["wavelength_m"], r["pitch_m"], r["n"], r["pad"], r["grid"], r["z_m"]) == (532e-9, 36e-6, 64, 32, 128, 0.01)
    assert r["padding_error"] == rep.padding_error == padding_error(532e-9, 36e-6, 64, 32, 0.01, "asm")
    assert r["z_c_m"] == rep.critical_distance_m == 128 * 36e-6**2 / 532e-9
    assert r["z_over_zc"] == 0.01 / rep.critical_distance_m
    assert r["problems"] == list(rep.problems) == []
    assert r["plan"] == {"method": plan.method, "pad": plan.pad, "grid": plan.grid, "error": plan.error}
    assert r["aperture_error"] is None  # the table gives one for the reproduction only
    tight = pg.row(g, tol=1e-3)  # the tolerance reaches the check and the plan
    want = plan_propagation(532e-9, 36e-6, 64, 0.01, tol=1e-3, prefer=("asm", 32))
    assert tight["problems"] and (tight["plan"]["method"], tight["plan"]["pad"]) == (want.method, want.pad)


def test_the_geometries_are_their_sources():
    repro = cpu_spec(settings_for(False))
    for name, spec in (("reproduction", repro), ("lightridge-visible", LIGHTRIDGE_VISIBLE), ("lin2018-thz", LIN2018_THZ)):
        g = BY_NAME[name]
        assert (g.wavelength_m, g.pitch_m, g.n, g.z_m, g.pad) == (spec.wavelength_m, spec.pitch_m, spec.n, spec.z_m,
                                                                  spec.pad), name
    for name, z in (("near-field", 0.01), ("reproduction-0.3m", 0.3)):
        g = BY_NAME[name]
        assert (g.wavelength_m, g.pitch_m, g.n, g.z_m) == (repro.wavelength_m, repro.pitch_m, repro.n, z)
    far = BY_NAME["far-corner"]
    assert (far.wavelength_m, far.pitch_m, far.n, far.z_m) == (532e-9, 12e-6, 32, 0.078)
    assert all(g.source for g in pg.GEOMETRIES) and len(BY_NAME) == len(pg.GEOMETRIES) == 6


def test_the_aperture_error_equals_a_centred_numpy_hop():
    """Written here: the aperture centred in the padded grids (the script's sits at the
    origin: a circular convolution does not mind), the plain angular spectrum on the big grid."""
    g = BY_NAME["reproduction"]
    lam, dx, n, z = g.wavelength_m, g.pitch_m, g.n, g.z_m

    def hop(pad: int, banded: bool) -> np.ndarray:
        m = n + 2 * pad
        f = np.fft.fftfreq(m, d=dx)
        fy, fx = np.meshgrid(f, f, indexing="ij")
        arg = 1 / lam**2 - fx**2 - fy**2
        keep = arg > 0
        if banded:
            lim = 1 / (lam * math.sqrt((2 * z / (m * dx)) ** 2 + 1))
            keep &= (np.abs(fx) <= lim) & (np.abs(fy) <= lim)
        h = np.where(keep, np.exp(2j * np.pi * z * np.sqrt(np.maximum(arg, 0))), 0)
        return np.fft.ifft2(np.fft.fft2(np.pad(pg.aperture_field(n), pad)) * h)[pad:pad + n, pad:pad + n]

    ref = hop(8 * n, banded=False)  # 17 N: z far below its z_c, no wrap
    want = np.linalg.norm(hop(n // 2, banded=True) - ref) / np.linalg.norm(ref)
    assert pg.aperture_error(g) == pytest.approx(want, rel=0.05)
    assert pg.aperture_error(g) < padding_error(lam, dx, n, n // 2, z) / 30  # a hard edge is far less sensitive


def test_the_committed_record_is_what_the_script_writes(tmp_path):
    committed = json.loads(RECORD.read_text())
    out = tmp_path / "g.json"
    argv = ["--out", "docs/reproduction/results/d2nn/propagation_geometries.json"]
    assert committed["command"] == "python -m experiments.reproduce.d2nn_propagation_geometries " + " ".join(argv)
    fresh = pg.main(["--out", str(out)])
    assert json.loads(out.read_text()) == fresh
    assert fresh["tol"] == committed["tol"] and len(fresh["rows"]) == len(committed["rows"])
    for a, b in zip(fresh["rows"], committed["rows"], strict=True):
        for k in ("name", "label", "source", "n", "pad", "grid", "method", "problems"):
            assert a[k] == b[k], (a["name"], k)
        for k in ("wavelength_m", "pitch_m", "z_m", "z_c_m", "z_over_zc", "padding_error"):
            assert a[k] == pytest.approx(b[k], rel=1e-9), (a["name"], k)
        assert (a["aperture_error"] is None) == (b["aperture_error"] is None)
        if a["aperture_error"] is not None:
            assert a["aperture_error"] == pytest.approx(b["aperture_error"], rel=1e-6)
        assert (a["plan"]["method"], a["plan"]["pad"]) == (b["plan"]["method"], b["plan"]["pad"])
        assert a["plan"]["error"] == pytest.approx(b["plan"]["error"], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(("argv", "message"), [
    (["--tol", "0"], "--tol must be a finite number > 0, got 0.0"),
    (["--tol", "nan"], "--tol must be a finite number > 0, got nan"),
    (["--out", "x.txt"], "--out must name a .json file, got 'x.txt'"),
])
def test_bad_arguments_name_the_option_and_value(argv, message):
    with pytest.raises(SystemExit) as e:
        pg.main(argv)
    assert str(e.value) == f"error: {message}"
