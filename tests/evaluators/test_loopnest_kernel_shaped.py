"""The kernel compiled for one (levels, dimensions, axes) shape
(:func:`evaluators.loopnest.kernel.shaped_rows`, used for large scoring batches) equals
the numpy model field for field, as the generic kernel does
(tests/evaluators/test_loopnest_kernel.py); the dispatch uses it exactly where it says;
and it refuses arrays of another shape.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import evaluators.loopnest as ln
from evaluators.loopnest import dispatch
from evaluators.loopnest import kernel as loopnest_kernel
from mappers.mapping import MappingBatch
from mappers.sampling import random_mappings
from tests.evaluators.mapping_gen import random_layer, random_mapping
from tests.evaluators.test_loopnest_kernel import (
    ARCHS,
    CONVENTIONS,
    LAYERS,
    assert_same,
    varied_arch,
    with_widths_and_leakage,
)


@pytest.fixture
def always_shaped(monkeypatch):
    """Every scoring batch goes to the shaped kernel; the shapes it was asked for are
    recorded."""
    asked = []
    real = loopnest_kernel.shaped_rows

    def spy(L, D, A):
        asked.append((L, D, A))
        return real(L, D, A)

    monkeypatch.setattr(dispatch, "SHAPED_MIN_ROWS", 1)
    monkeypatch.setattr(loopnest_kernel, "shaped_rows", spy)
    return asked


def test_shaped_kernel_equals_numpy_on_convolutions(always_shaped):
    """The convolutions (7 dimensions, 4 axes per operand) on Eyeriss, a small spatial
    array and WS/OS/IS systolic arrays (3 levels: the throughput benchmark's shape), with
    divisor and padded factors, with and without bypass, in the default, Timeloop and
    ZigZag accountings and with 1-4-word accesses and leakage: every field bit for bit."""
    convs = [layer for layer in LAYERS if len(layer.dims) == 7]
    assert len(convs) >= 3
    rng = np.random.default_rng(41)
    for arch in ARCHS:
        for layer in convs:
            for factors, bypass in (("divisors", False), ("padded", True)):
                batch = random_mappings(layer, arch, 120, seed=5, factors=factors, bypass=bypass)
                for conv in (None, "timeloop", "zigzag"):
                    what = f"{conv}: {layer} on {arch.name} ({factors}, bypass={bypass})"
                    assert_same(
                        ln.evaluate_batch(layer, arch, batch, kernel=True, accounting=conv),
                        ln.evaluate_batch(layer, arch, batch, kernel=False, accounting=conv),
                        what,
                    )
        wide = with_widths_and_leakage(rng, arch)
        batch = random_mappings(convs[0], wide, 120, seed=6, bypass=True)
        assert_same(
            ln.evaluate_batch(convs[0], wide, batch, kernel=True, accounting="timeloop"),
            ln.evaluate_batch(convs[0], wide, batch, kernel=False, accounting="timeloop"),
            f"widths and leakage on {arch.name}",
        )
    assert set(always_shaped) == {(3, 7, 4)}


def test_dispatch_uses_the_shaped_kernel_for_large_scoring_batches_only(monkeypatch):
    """A scoring batch of :data:`SHAPED_MIN_ROWS` rows or more runs the shaped kernel,
    a smaller one and every lower bound the generic one; both give the same figures."""
    asked = []
    real = loopnest_kernel.shaped_rows
    monkeypatch.setattr(loopnest_kernel, "shaped_rows", lambda *s: asked.append(s) or real(*s))
    monkeypatch.setattr(dispatch, "SHAPED_MIN_ROWS", 50)
    layer, arch = LAYERS[0], ARCHS[0]
    batch = random_mappings(layer, arch, 60, seed=2)
    small = ln.evaluate_batch(layer, arch, batch.take(np.arange(49)))
    ln.LOOPNEST.lower_bound(layer, arch, batch, 1)
    assert asked == []
    large = ln.evaluate_batch(layer, arch, batch)
    assert asked == [(3, 7, 4)]
    np.testing.assert_array_equal(large.energy_pj[:49], small.energy_pj)
    np.testing.assert_array_equal(large.reads[:49], small.reads)


def test_shaped_kernel_refuses_another_shape():
    """A kernel compiled for one shape raises on arrays of another (it would read past
    them), and a shape must be positive integers."""
    layer, arch = LAYERS[5], ARCHS[0]  # a GEMM: 3 dimensions, 2 axes
    plan = dispatch.kernel_plan(layer, arch)
    pk = plan.packed
    assert (pk.L, pk.D, pk.A) == (3, 3, 2)
    batch = random_mappings(layer, arch, 4, seed=0)
    wrong = loopnest_kernel.shaped_rows(3, 7, 4)
    B = len(batch)
    with pytest.raises(ValueError, match="shape this kernel was compiled for"):
        wrong(
            batch.temporal,
            batch.spatial_x,
            batch.spatial_y,
            batch.order,
            batch.keep,
            pk.axes_i,
            pk.axes_f,
            pk.dims_i,
            pk.lv_i,
            pk.lv_f,
            pk.sc,
            loopnest_kernel.convention_codes(ln.Conventions()),
            np.empty((B, 12 * pk.L)),
            np.empty((pk.n_fields - 12 * pk.L, B)),
            np.empty(B, dtype=bool),
            -1,
            0,
            np.zeros((0, 3)),
            None,
            *plan.own_orders,
        )
    for bad in ((0, 7, 4), (3, -1, 4), (3, 7, 2.5)):
        with pytest.raises(ValueError, match="is not a positive integer"):
            loopnest_kernel.shaped_rows(*bad)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(2))
def test_shaped_kernel_equals_numpy_on_random_layers_and_every_accounting(always_shaped, chunk):
    """Random layers (every kind, so several shapes, each compiled) x random
    architectures with 1-4-word accesses and leakage x 12 mappings, under every
    convention of the generic kernel's test: every field bit for bit."""
    for seed in range(9000 + 10 * chunk, 9000 + 10 * (chunk + 1)):
        rng = np.random.default_rng(seed)
        layer = random_layer(rng)
        arch = with_widths_and_leakage(rng, varied_arch(rng))
        batch = MappingBatch.from_mappings(
            layer, arch, [random_mapping(rng, layer, arch) for _ in range(12)]
        )
        for conv in CONVENTIONS:
            assert_same(
                ln.evaluate_batch(layer, arch, batch, kernel=True, accounting=conv),
                ln.evaluate_batch(layer, arch, batch, kernel=False, accounting=conv),
                f"seed {seed} {conv}\n{layer}\n{arch}",
            )
    assert len(set(always_shaped)) >= 2
