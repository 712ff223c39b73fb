"""The exact mapper under other accountings than the default, against brute force.

``LoopNestCost(conventions)`` lets the exact mapper run where the conventions keep the
cost order-separable and count at least as much as the default everywhere
(:attr:`evaluators.loopnest.LoopNestCost.bounded_by_default`: ZigZag's accounting, and any
mix of its window rule with index multicast, refills to every child and per-word first
accumulations): the default's bounds then bound this cost, and the leaf's per-level order
search is exact by the same argument. On small layers x architectures where every mapping
can be enumerated, its objective under those conventions equals the brute-force minimum
under them, for EDP, energy and latency; and the default's lower bound never exceeds a
mapping's cost under them. Timeloop's accounting is certified in
``tests/mappers/test_exact_coupled.py`` (its window rule is not separable; reads on
change, drains as parent updates and utilized-instance leakage count less than the
default, so it has bound rules of its own).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from evaluators.loopnest import ACCOUNTING, Conventions, LoopNestCost, evaluate_batch
from mappers.exhaustive import enumerate_mappings
from tests.mappers.test_exact import brute_force, cases, check

BOUNDED = {
    "zigzag": ACCOUNTING["zigzag"],
    "mix": Conventions(window_reuse="none", multicast="same_index", psum_refill="every_child",
                       first_accumulation="per_word"),
    "refills": Conventions(multicast="same_index", psum_refill="every_child"),
}
N_CASES = 15           # per convention set: x 3 objectives
POOL = cases(200, 20261201)


def differs(layer, arch, conv) -> bool:
    """Whether some mapping of the case counts differently under ``conv``."""
    for batch in enumerate_mappings(layer, arch, bypass=True, max_mappings=400_000):
        a, b = evaluate_batch(layer, arch, batch, accounting=conv), evaluate_batch(layer, arch, batch)
        if any(not np.array_equal(getattr(a, f), getattr(b, f)) for f in ("reads", "writes", "noc_words")):
            return True
    return False


@functools.cache
def cases_for(name: str) -> list:
    """The first :data:`N_CASES` small cases of :data:`POOL` on which the set ``name``
    changes some count (on most small cases it does not: no sliding window, no
    spatially unrolled reduction), so the certification is not the default's again."""
    out = [case for case in POOL if differs(*case, BOUNDED[name])][:N_CASES]
    assert len(out) == N_CASES, (name, len(out))
    return out


@pytest.mark.parametrize("name", list(BOUNDED))
@pytest.mark.parametrize("case", range(N_CASES))
def test_exact_equals_the_brute_force_minimum_under_bounded_accountings(case, name):
    layer, arch = cases_for(name)[case]
    conv = BOUNDED[name]
    cost = LoopNestCost(conv)
    assert cost.separable_orders and cost.bounded_by_default
    check(layer, arch, cost, brute_force(layer, arch, conv), name)


@pytest.mark.parametrize("name", list(BOUNDED))
def test_every_count_is_at_least_the_defaults(name):
    """What makes the default's bounds valid here: on every enumerated mapping of every
    certified case, every read, write and NoC count (and so energy and latency) under the
    set is at least the default's."""
    conv = BOUNDED[name]
    for layer, arch in cases_for(name):
        for batch in enumerate_mappings(layer, arch, bypass=True, max_mappings=400_000):
            base = evaluate_batch(layer, arch, batch)
            r = evaluate_batch(layer, arch, batch, accounting=conv)
            for f in ("reads", "writes", "noc_words", "energy_pj", "latency_cycles"):
                assert (np.asarray(getattr(r, f)) >= np.asarray(getattr(base, f))).all(), (f, conv)


def test_timeloop_is_not_bounded_by_the_default():
    """Timeloop's accounting is not one of these (it has its own bound rules and a
    coupled order search: tests/mappers/test_exact_coupled.py)."""
    cost = LoopNestCost("timeloop")
    assert not cost.bounded_by_default and not cost.separable_orders and cost.order_coupling is not None
