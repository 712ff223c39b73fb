"""The lower bounds under every counting convention set and access width
(:mod:`evaluators.loopnest.bounds_conventions`).

* The bound under a convention set is at most the cost under it of every completion:
  of the mapping itself at every ``known``, and of partial mappings whose free temporal
  factors all sit at the innermost level in another order (what the exact mapper bounds).
* The compiled kernel's bound equals the numpy one bit for bit, every field (the vector
  counts included), and so does the least bound over candidate orders (leakage on the
  utilized instances ranking the combinations).
* The rules are needed: the default's bound exceeds Timeloop's cost on some mapping.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from evaluators.loopnest import (
    ACCOUNTING,
    CONVENTION_CHOICES,
    Conventions,
    LoopNestCost,
    evaluate_batch,
)
from mappers.exhaustive import enumerate_mappings
from mappers.mapping import MappingBatch
from mappers.orders import OrderStructure, canonical_orders, objective_of
from mappers.sampling import random_mappings
from tests.evaluators.test_loopnest_kernel import assert_same, with_widths_and_leakage
from tests.mappers.test_exact import random_hierarchy, small_arch, small_layer

CONVENTIONS = ([Conventions(**{k: c}) for k, v in CONVENTION_CHOICES.items() for c in v[1:]]
               + [ACCOUNTING["timeloop"], ACCOUNTING["zigzag"],
                  Conventions(window_reuse="none", mac_operand_reads="on_change", output_drain="parent_update"),
                  Conventions(window_reuse="innermost", mac_operand_reads="on_change", psum_refill="every_child")])
"""Every non-default choice alone, the named accountings and two mixes."""


def sample(layer, arch, rng, n=300):
    """Up to ``n`` of the case's enumerated mappings (random legal-shaped ones where
    there are too many to list)."""
    try:
        batch = next(iter(enumerate_mappings(layer, arch, bypass=True, max_mappings=50_000, inner_orders=True)),
                     None)
    except ValueError:
        batch = random_mappings(layer, arch, n, seed=int(rng.integers(1 << 30)), bypass=True)
    if batch is None or not len(batch):
        return None
    return batch.take(rng.permutation(len(batch))[:n])


def at_most(lb, r, what):
    """``lb``'s energy, latency and bandwidth cycles are at most ``r``'s on every legal
    mapping of ``r`` (the bound assumes completions that fit: one whose tile overflows a
    level may cost less than it)."""
    ok = np.asarray(r.valid, dtype=bool)
    for f in ("energy_pj", "latency_cycles", "bandwidth_cycles"):
        a, b = np.asarray(getattr(lb, f))[ok], np.asarray(getattr(r, f))[ok]
        assert (a <= b * (1 + 1e-9) + 1e-9).all(), (f, what, float(np.max(a - b, initial=0)))


@pytest.mark.parametrize("chunk", range(3))
def test_bound_is_at_most_the_mapping_and_the_kernel_equals_numpy(chunk):
    """Small layers x architectures with 1-4-word accesses and leakage, every
    convention set of :data:`CONVENTIONS`, every ``known``: the bound is at most the
    mapping's own figures under the set, and the kernel's bound is the numpy one."""
    checked = 0
    for seed in range(10 * chunk, 10 * (chunk + 1)):
        rng = np.random.default_rng(5100 + seed)
        layer, arch = small_layer(rng), with_widths_and_leakage(rng, small_arch(rng))
        batch = sample(layer, arch, rng, 200)
        if batch is None:
            continue
        for conv in CONVENTIONS:
            cost = LoopNestCost(conv)
            r = evaluate_batch(layer, arch, batch, accounting=conv)
            for known in range(arch.n_levels + 1):
                what = f"seed {seed} known {known} {conv}"
                kb = cost.lower_bound(layer, arch, batch, known, kernel=True)
                nb = cost.lower_bound(layer, arch, batch, known, kernel=False)
                assert_same(kb, nb, what)
                if nb.read_vectors is not None:
                    np.testing.assert_array_equal(kb.read_vectors, nb.read_vectors, err_msg=what)
                at_most(nb, r, what)
                checked += 1
    assert checked > 100


@pytest.mark.parametrize("seed", range(12))
def test_bound_of_a_partial_mapping_is_at_most_every_completion(seed):
    """A partial mapping whose free temporal factors (levels below ``known``) all sit at
    the innermost level, in the reverse order: its bound under each convention set is at
    most the cost of each of the mappings it was made from (completions of it with other
    splits and orders of the free factors)."""
    rng = np.random.default_rng(5300 + seed)
    layer = small_layer(rng)
    arch = with_widths_and_leakage(rng, random_hierarchy(rng))
    batch = sample(layer, arch, rng, 300)
    if batch is None:
        pytest.skip("no mapping to enumerate")
    L = arch.n_levels
    for conv in CONVENTIONS:
        r = evaluate_batch(layer, arch, batch, accounting=conv)
        for known in range(1, L + 1):
            T = batch.temporal.copy()
            T[:, 0, :] = np.prod(T[:, :known, :], axis=1)
            T[:, 1:known, :] = 1
            order = batch.order.copy()
            order[:, :known, :] = order[:, :known, ::-1]
            partial = MappingBatch(batch.dims, T, batch.spatial_x, batch.spatial_y, order, batch.keep)
            lb = LoopNestCost(conv).lower_bound(layer, arch, partial, known)
            at_most(lb, r, f"seed {seed} known {known} {conv}")


@pytest.mark.parametrize("chunk", range(2))
def test_least_bound_under_accountings_equals_numpy(chunk):
    """``least_lower_bound`` under Timeloop's accounting (leakage on the utilized
    instances) and with whole vectors: the kernel equals numpy, values and chosen
    combinations, and each value is the bound of the combination it names."""
    checked = 0
    for seed in range(12 * chunk, 12 * (chunk + 1)):
        rng = np.random.default_rng(5500 + seed)
        layer, arch = small_layer(rng), with_widths_and_leakage(rng, small_arch(rng))
        if seed % 2:
            arch = dataclasses.replace(arch, levels=tuple(dataclasses.replace(lv, vector_words=1)
                                                          for lv in arch.levels))
        batch = sample(layer, arch, rng, 150)
        if batch is None:
            continue
        canon = np.stack(canonical_orders(OrderStructure.of(layer)))
        objective = ("edp", "energy", "latency")[seed % 3]
        for conv in (ACCOUNTING["timeloop"], Conventions(leakage="utilized_instances")):
            cost = LoopNestCost(conv)
            for known in range(arch.n_levels):
                levels = list(range(max(known, 1), arch.n_levels))[-2:]
                if not levels:
                    continue
                kv, kc = cost.least_lower_bound(layer, arch, batch, known, levels, canon, objective, kernel=True)
                nv, nc = cost.least_lower_bound(layer, arch, batch, known, levels, canon, objective, kernel=False)
                what = f"seed {seed} known {known} {conv}"
                np.testing.assert_array_equal(kv, nv, err_msg=what)
                np.testing.assert_array_equal(kc, nc, err_msg=what)
                i = int(rng.integers(len(batch)))
                order = batch.order[i:i + 1].copy()
                for li, ci in zip(levels, np.unravel_index(kc[i], [len(canon)] * len(levels))):
                    order[0, li] = canon[ci]
                one = batch.take(np.array([i]))
                b = cost.lower_bound(layer, arch, MappingBatch(one.dims, one.temporal, one.spatial_x, one.spatial_y,
                                                               order, one.keep), known)
                assert objective_of(objective, b.energy_pj, b.compute_cycles, b.bandwidth_cycles)[0] == kv[i], what
                checked += 1
    assert checked > 20


def test_the_defaults_bound_is_not_a_bound_under_timeloop():
    """Why the rules exist: reads on change and drains as parent updates count less
    than the default, so the default's bound of a complete mapping exceeds its cost
    under Timeloop's accounting on some mapping; the bound under the accounting never
    does."""
    over = 0
    for seed in range(40):
        rng = np.random.default_rng(5700 + seed)
        layer, arch = small_layer(rng), small_arch(rng)
        batch = sample(layer, arch, rng, 200)
        if batch is None:
            continue
        r = evaluate_batch(layer, arch, batch, accounting="timeloop")
        default = LoopNestCost().lower_bound(layer, arch, batch, 0)
        above = np.asarray(default.energy_pj) > np.asarray(r.energy_pj) * (1 + 1e-9)
        over += int((above & np.asarray(r.valid, dtype=bool)).any())
        at_most(LoopNestCost("timeloop").lower_bound(layer, arch, batch, 0), r, f"seed {seed}")
    assert over > 0
