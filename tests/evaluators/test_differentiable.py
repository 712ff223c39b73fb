"""The jax path: same numbers as numpy on integer mappings; finite, correct gradients."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from accelerators import SystolicArray, eyeriss_v1  # noqa: E402
from evaluators.differentiable import relaxed_model  # noqa: E402
from evaluators.loopnest import evaluate_batch  # noqa: E402
from mappers.heuristic import HeuristicMapper  # noqa: E402
from mappers.sampling import random_mappings  # noqa: E402
from mappers.workloads import conv2d, gemm  # noqa: E402


def caps(arch):
    return np.array([lv.capacity_of("W") if lv.shared else sum(lv.capacity_words.values())
                     if lv.capacity_words else 0.0 for lv in arch.levels], dtype=float)


@pytest.mark.parametrize("arch_factory", [eyeriss_v1, lambda: SystolicArray(
    rows=16, cols=16, dataflow="WS", ifmap_sram_kib=64, filter_sram_kib=64, ofmap_sram_kib=64,
    dram_bw_words_per_cycle=8)])
def test_jax_equals_numpy_on_integer_mappings(arch_factory):
    arch = arch_factory().to_arch()
    layer = conv2d("c", K=16, C=8, P=14, Q=14, R=3, S=3)
    batch = random_mappings(layer, arch, 12, seed=3)
    ref = evaluate_batch(layer, arch, batch)
    with jax.enable_x64(True):
        jref = evaluate_batch(layer, arch, batch, xp=jnp)
        np.testing.assert_array_equal(np.asarray(jref.reads), ref.reads)
        np.testing.assert_array_equal(np.asarray(jref.writes), ref.writes)
        for i in (0, 7):
            f = relaxed_model(layer, arch, batch.order[i], batch.keep[i])
            out = f(*(jnp.asarray(a[i], dtype=float) for a in (batch.temporal, batch.spatial_x, batch.spatial_y)),
                             jnp.asarray(caps(arch)))
            two_aps = (batch.spatial_x[i] * batch.spatial_y[i] > 1)[:, [layer.dim_names.index(d) for d in ("P", "R")]].all(axis=1).any()
            if not two_aps:
                assert float(out["energy_pj"]) == pytest.approx(float(ref.energy_pj[i]), rel=1e-12)
            assert float(out["overflow_words"]) == 0.0  # sampled mappings fit


def test_gradient_matches_finite_differences():
    layer = gemm("g", M=64, N=64, K=64)
    arch = eyeriss_v1().to_arch()
    m = HeuristicMapper().map(layer, arch, evaluate_batch).batch
    with jax.enable_x64(True):
        f = relaxed_model(layer, arch, m.order[0], m.keep[0])

        def loss(T):
            out = f(T, jnp.asarray(m.spatial_x[0], float), jnp.asarray(m.spatial_y[0], float), jnp.asarray(caps(arch)))
            return jnp.log(out["edp"])

        T0 = jnp.asarray(m.temporal[0], dtype=float)
        g = jax.grad(loss)(T0)
        loss = jax.jit(loss)
        assert np.isfinite(np.asarray(g)).all() and np.abs(np.asarray(g)).sum() > 0
        # central differences on the factors that are > 1 (smooth there)
        for li, d in zip(*np.nonzero(np.asarray(T0) > 1)):
            h = 1e-4
            e = np.zeros(T0.shape)
            e[li, d] = h
            fd = (float(loss(T0 + e)) - float(loss(T0 - e))) / (2 * h)
            assert float(g[li, d]) == pytest.approx(fd, rel=1e-3, abs=1e-6)


def test_overflow_penalty_grows_with_tiles():
    layer = gemm("g", M=32, N=32, K=32)
    arch = eyeriss_v1().to_arch()
    m = HeuristicMapper().map(layer, arch, evaluate_batch).batch
    with jax.enable_x64(True):
        f = relaxed_model(layer, arch, m.order[0], m.keep[0])
        small = jnp.asarray(caps(arch)) * 0.01
        out = f(jnp.asarray(m.temporal[0], float), jnp.asarray(m.spatial_x[0], float),
                jnp.asarray(m.spatial_y[0], float), small)
        assert float(out["overflow_words"]) > 0
        g = jax.grad(lambda c: f(jnp.asarray(m.temporal[0], float), jnp.asarray(m.spatial_x[0], float),
                                 jnp.asarray(m.spatial_y[0], float), c)["overflow_words"])(small)
        assert (np.asarray(g)[:-1] <= 0).all() and np.asarray(g).sum() < 0  # more capacity, less overflow
