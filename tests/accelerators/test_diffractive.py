"""accelerators.diffractive: the cost model's formulas and the known constraints."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelerators.diffractive import (
    C_M_PER_S,
    LIGHTRIDGE_VISIBLE,
    LIN2018_THZ,
    DiffractiveAccelerator,
    codesign_ok,
    nyquist_ok,
    propagator_ok,
    shared_depth_ok,
    task_branches_ok,
)


def test_reference_latencies_match_the_notes():
    # (L + 1) z / c: 6.0 ns (LightRidge defaults, arXiv 2306.11268), 0.6 ns (Lin 2018)
    assert LIGHTRIDGE_VISIBLE.latency_s == pytest.approx(6 * 0.3 / C_M_PER_S)
    assert LIGHTRIDGE_VISIBLE.latency_s * 1e9 == pytest.approx(6.0, abs=0.01)
    assert LIN2018_THZ.latency_s * 1e9 == pytest.approx(0.6, abs=0.01)
    assert LIGHTRIDGE_VISIBLE.length_m == pytest.approx(1.8)


def test_area_and_multitask_layer_count():
    # L (N dx)^2: LightRidge 5 x 51.8 mm^2; Lin 5 x 64 cm^2; T=2, K=5, Ks=3 -> 7 vs 10
    assert LIGHTRIDGE_VISIBLE.area_mm2 == pytest.approx(5 * 51.84)
    assert LIN2018_THZ.area_m2 == pytest.approx(5 * 64e-4)
    mt = LIGHTRIDGE_VISIBLE.with_(tasks=2, shared_layers=3)
    assert (mt.physical_layers, mt.separate_layers, mt.layers_saved) == (7, 10, 3)
    assert mt.area_mm2 == pytest.approx(7 * 51.84)
    assert mt.with_(shared_layers=0).physical_layers == 10


def test_energy_at_the_shot_noise_floor():
    # 10 detectors x 1e4 photons x 3.73e-19 J / 0.1 = 0.37 pJ at 532 nm (by hand)
    assert LIGHTRIDGE_VISIBLE.photon_energy_j == pytest.approx(3.734e-19, rel=1e-3)
    assert LIGHTRIDGE_VISIBLE.energy_j == pytest.approx(0.3734e-12, rel=1e-3)
    assert LIGHTRIDGE_VISIBLE.with_(tasks=2, shared_layers=3).energy_j == pytest.approx(2 * 0.3734e-12, rel=1e-3)
    assert LIGHTRIDGE_VISIBLE.with_(differential=True).energy_j == pytest.approx(2 * 0.3734e-12, rel=1e-3)


def test_throughput_bound_by_slowest_electro_optic_end():
    assert LIGHTRIDGE_VISIBLE.throughput_hz == 130.0
    assert LIGHTRIDGE_VISIBLE.with_(input_modulator_hz=5e3, camera_fps=400).throughput_hz == 400


def test_spread_radius_and_cost_dict():
    # z tan(asin(lambda / 2 dx)) / dx: ~62 px for LightRidge (by hand)
    assert LIGHTRIDGE_VISIBLE.spread_radius_px == pytest.approx(62, abs=1)
    c = LIGHTRIDGE_VISIBLE.cost()
    assert c["latency_ns"] == pytest.approx(6.0, abs=0.01) and c["neurons"] == 5 * 200 * 200


def test_validate_names_problems():
    assert LIGHTRIDGE_VISIBLE.validate() is LIGHTRIDGE_VISIBLE
    with pytest.raises(ValueError, match="lambda/2"):
        DiffractiveAccelerator(pitch_m=200e-9).validate()
    with pytest.raises(ValueError, match="shared_layers"):
        DiffractiveAccelerator(tasks=2, shared_layers=7).validate()
    with pytest.raises(ValueError, match="Fresnel"):
        LIN2018_THZ.with_(propagation="fresnel").validate()


def test_from_point_unit_aliases():
    a = DiffractiveAccelerator.from_point({"pitch_um": 36, "z_mm": 100, "n": 64, "pad": 32, "layers": 3,
                                           "shared_depth": 2, "tasks": 2, "phase_levels": 0, "ignored": 1})
    assert a.pitch_m == pytest.approx(36e-6) and a.z_m == pytest.approx(0.1)
    assert a.k_shared == 2 and a.phase_levels is None and a.physical_layers == 4


def test_vectorized_constraints():
    p = {"pitch_um": np.array([0.2, 36.0, 36.0]), "layers": np.array([3, 3, 3]),
         "shared_depth": np.array([1, 2, 4]), "z_mm": np.array([100.0, 100.0, 100.0]),
         "n": np.array([64, 64, 64]), "pad": np.array([32, 32, 32])}
    assert nyquist_ok(p).tolist() == [False, True, True]
    assert shared_depth_ok(p).tolist() == [True, True, False]
    assert codesign_ok(p).tolist() == [False, True, False]
    every_layer_shared = dict(p, shared_depth=np.array([3, 3, 3]), pitch_um=np.array([36.0] * 3))
    assert shared_depth_ok(every_layer_shared).all()
    assert not task_branches_ok(every_layer_shared).any() and not codesign_ok(every_layer_shared).any()
    thz = {"wavelength_m": np.array([0.75e-3] * 2), "pitch_m": np.array([0.4e-3] * 2),
           "z_m": np.array([0.03] * 2), "n": np.array([200] * 2), "pad": np.array([100] * 2),
           "propagation": np.array(["asm", "fresnel"])}
    assert propagator_ok(thz).tolist() == [True, False]
    assert math.isinf(DiffractiveAccelerator(pitch_m=200e-9).spread_radius_px)
