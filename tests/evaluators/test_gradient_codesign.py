"""DOSA-style gradient co-design: the relaxation descends, rounding gives legal designs."""

from __future__ import annotations

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from accelerators import SpatialArray, tech  # noqa: E402
from design_space import Constraint, DesignSpace, Integer, Ordinal  # noqa: E402
from evaluators.differentiable import relaxed_model  # noqa: E402
from evaluators.gradient_codesign import (  # noqa: E402
    RelaxedNetwork,
    fit_capacity,
    gradient_codesign,
    round_hardware,
    snap_mapping,
    sram_energy_pj_jnp,
)
from evaluators.loopnest import evaluate, evaluate_batch  # noqa: E402
from evaluators.loopnest.compulsory import edp_lower_bound  # noqa: E402
from evaluators.nested import NestedEvaluator  # noqa: E402
from mappers.heuristic import HeuristicMapper  # noqa: E402
from mappers.workloads import conv2d, gemm  # noqa: E402

LAYER = gemm("g", M=16, N=16, K=32)
WORDS = [4, 8, 16, 32]
SPACE = DesignSpace(
    Integer("pe_x", 2, 8), Integer("pe_y", 2, 8), Ordinal("rf_w_words", WORDS), Ordinal("rf_i_words", WORDS),
    Ordinal("rf_o_words", WORDS), Ordinal("glb_kib", [1, 2, 4, 8]),
    constraints=[Constraint("pes", lambda p: p["pe_x"] * p["pe_y"] <= 16)],
)
NAMES = ["pe_x", "pe_y", "rf_w_words", "rf_i_words", "rf_o_words", "glb_kib"]


def soft_pes(hw):
    return jnp.log(hw["pe_x"] * hw["pe_y"] / 16)


def run_once(**kw):
    opts = dict(starts=4, steps=60, seed=0, checkpoints=2, hw_constraints=[soft_pes])
    opts.update(kw)
    return gradient_codesign([LAYER], SPACE, SpatialArray, **opts)


@pytest.fixture(scope="module")
def run():
    return run_once()


def test_gradients_finite_and_relaxed_objective_decreases(run):
    assert np.isfinite(run.grad_norm).all() and (run.grad_norm[0] > 0).all()
    assert np.isfinite(run.loss).all()
    # every start ends below where it began; on average by a clear margin
    assert (run.loss[-1] < run.loss[0]).all(), (run.loss[0], run.loss[-1])
    assert (run.loss[0] - run.loss[-1]).mean() > 0.05


def test_relaxed_network_matches_relaxed_model():
    """The batched relaxation (orders, bypass and energies as inputs) is relaxed_model's
    model: same energy and latency at integer and at fractional factors."""
    caps = np.geomspace(0.01, 4096, 25)
    with jax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(sram_energy_pj_jnp(jnp.asarray(caps), 16)),
                                   tech.sram_energy_pj(caps, 16), rtol=1e-12)
    acc = SpatialArray(pe_x=4, pe_y=4, rf_w_words=16, rf_i_words=8, rf_o_words=8, glb_kib=2)
    arch = acc.to_arch()
    mb = HeuristicMapper().map(LAYER, arch, evaluate_batch).batch
    with jax.enable_x64(True):
        net = RelaxedNetwork([LAYER], "spatial", acc, arch, NAMES)
        z_hw = jnp.asarray([[math.log(float(getattr(acc, n)))] for n in NAMES])
        s = net.slots[0]
        zs = [np.where(getattr(s, k), np.log(getattr(mb, a)[0].astype(float)), 0.0)[:, :, None]
              for k, a in (("t", "temporal"), ("x", "spatial_x"), ("y", "spatial_y"))]
        data = {"order": [jnp.asarray(mb.order[0][:, :, None])], "keep": [jnp.asarray(mb.keep[0][:, :, None])]}

        def glb_law(cap_words):   # per-access energy vs capacity, the tech model's SRAM law in jnp
            e = jnp.asarray(np.array([[lv.read_energy_pj.get(op, 0.0) for op in "WIO"] for lv in arch.levels]))
            e = e.at[1].set(sram_energy_pj_jnp(cap_words[1] * 16 / 8192, 16))
            return e, e

        ref = relaxed_model(LAYER, arch, mb.order[0], mb.keep[0], energy_of_capacity=glb_law)
        for shift in (0.0, 0.3):
            z = [jnp.asarray(np.where(getattr(s, k)[:, :, None], zz + shift, 0.0)) for k, zz in zip("txy", zs)]
            o = net({"hw": z_hw, "maps": [tuple(z)]}, data, 10.0)
            T, SX, SY, _ = net.factors(0, *z)
            r = ref(T[:, :, 0], SX[:, :, 0], SY[:, :, 0], jnp.asarray([40.0, 2 * 8192 / 16, 0.0]))
            assert float(o["energy_pj"][0]) == pytest.approx(float(r["energy_pj"]), rel=1e-10)
            assert float(o["latency_cycles"][0]) == pytest.approx(float(r["latency_cycles"]), rel=1e-10)
            if shift == 0.0:
                exact = evaluate(LAYER, arch, mb.mapping(0))
                assert float(o["energy_pj"][0]) == pytest.approx(float(exact.energy_pj[0]), rel=1e-10)
                assert float(o["violation"][0]) == 0.0


def test_rounded_hardware_satisfies_known_constraints(run):
    assert run.evaluations >= 4
    for c in run.candidates:
        assert SPACE.validate(c.point) == []
    # far outside the feasible region (64 PEs > 16): repaired to a feasible neighbour
    base = SPACE.sample(1, 0)[0]
    point, moves = round_hardware(SPACE, base, {"pe_x": math.log(8), "pe_y": math.log(7.6)})
    assert SPACE.validate(point) == [] and moves > 0
    assert point["pe_x"] * point["pe_y"] <= 16
    # already feasible: rounding to the nearest grid value in log space, no repair
    point, moves = round_hardware(SPACE, base, {"pe_x": math.log(2.9), "glb_kib": math.log(2.9)})
    assert moves == 0 and point["pe_x"] == 3 and point["glb_kib"] == 4


def test_rounded_mappings_are_legal_and_above_the_lower_bound(run):
    for c in run.candidates:
        arch = SpatialArray.from_point(c.point).to_arch()
        (m,) = c.mappings
        assert m.violations(LAYER, arch) == []
        edp = float(evaluate(LAYER, arch, m).edp[0])
        assert edp >= edp_lower_bound(LAYER, arch)
        assert c.metrics["energy_pj"] * c.metrics["latency_cycles"] == pytest.approx(edp, rel=1e-12)


def test_snap_and_capacity_repair_alone_give_legal_mappings():
    layer = conv2d("c", K=16, C=8, P=6, Q=6, R=3, S=3)
    arch = SpatialArray(pe_x=4, pe_y=3, rf_w_words=4, rf_i_words=4, rf_o_words=4, glb_kib=1).to_arch()
    rng = np.random.default_rng(1)
    mb0 = HeuristicMapper().map(layer, arch, evaluate_batch).batch
    L, D = mb0.temporal.shape[1:]
    for _ in range(10):
        T, SX, SY = (np.exp(rng.normal(0.8, 1.0, size=(L, D))) for _ in range(3))
        mb = fit_capacity(layer, arch, snap_mapping(layer, arch, T, SX, SY, mb0.order[0], mb0.keep[0]))
        assert mb.mapping(0).violations(layer, arch) == []


def test_no_worse_than_the_heuristic_on_the_start_hardware(run):
    ev = NestedEvaluator(SpatialArray, [LAYER], "heuristic")
    start_best = min(ev(p).metrics["edp_uj_ms"] for p in run.starts)
    assert run.best.edp <= start_best * (1 + 1e-12)
    assert run.history == sorted(run.history, reverse=True) and run.history[-1] == run.best.edp


def test_deterministic_and_budget_capped(run):
    again = run_once()
    assert again.history == run.history
    assert again.best.point == run.best.point and again.best.mappings == run.best.mappings
    np.testing.assert_array_equal(again.loss, run.loss)
    capped = run_once(budget=3)
    assert capped.evaluations == 3 and capped.history == run.history[:3]
