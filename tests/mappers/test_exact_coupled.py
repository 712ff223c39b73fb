"""The exact mapper where loop orders are not separable, against brute force.

Timeloop's accounting (its window rule couples a level's fills to the innermost moving
loop of the levels below; a MAC's reads on change make the innermost level's order
count; drains counted as parent updates and leakage on the utilized instances count less
than the default), each of those rules alone, and whole-vector accesses
(``vector_words`` 2-4) under the default and Timeloop's accounting: on small layers x
architectures where every mapping can be enumerated (the innermost level's orders too
where they count), the exact mapper's objective equals the brute-force minimum, for EDP,
energy and latency, with its bound below it. The cases are those of
``tests/mappers/test_exact.py``'s generator on which the rule changes some count (or the
vector rounding some energy), so the certification is not the default's again. (On cases
this small the separable order search happens to find the same optima; the leaves where it
does not are ``tests/mappers/test_orders_coupled.py``'s.)
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from evaluators.loopnest import ACCOUNTING, Conventions, LoopNestCost, evaluate_batch
from mappers.exact import ExactMapper
from mappers.exhaustive import enumerate_mappings
from tests.mappers.test_exact import brute_force, cases, check, leaky, split_bandwidths

N_CASES = 8            # per set: x 3 objectives
POOL = cases(240, 20261202)


def widened(arch, rng):
    """``arch`` with 2-4 words per access on each level that is not the backing store
    (and on it half the time)."""
    levels = [dataclasses.replace(lv, vector_words=int(rng.integers(2, 5)))
              if i < len(arch.levels) - 1 or rng.random() < 0.5 else lv for i, lv in enumerate(arch.levels)]
    return dataclasses.replace(arch, levels=tuple(levels))


SETS = {
    # name: (conventions, architecture transform)
    "timeloop": (ACCOUNTING["timeloop"], leaky),
    "innermost": (Conventions(window_reuse="innermost"), None),
    "on_change": (Conventions(mac_operand_reads="on_change"), None),
    "drain_utilized": (Conventions(output_drain="parent_update", leakage="utilized_instances"), leaky),
    "vectors": (ACCOUNTING["coexplore"], widened),
    "timeloop_vectors": (ACCOUNTING["timeloop"], widened),
    "zigzag_vectors": (ACCOUNTING["zigzag"], widened),
    "timeloop_split_bandwidths": (ACCOUNTING["timeloop"], lambda a, rng: split_bandwidths(widened(a, rng), rng)),
}


def mappings(layer, arch, conv):
    return enumerate_mappings(layer, arch, bypass=True, max_mappings=400_000,
                              inner_orders=conv.mac_operand_reads == "on_change")


def differs(layer, arch, conv) -> bool:
    """Whether some mapping of the case counts differently under ``conv`` than under
    the default, or (whole vectors) whose energy the rounding changes."""
    wide = any(lv.vector_words > 1 for lv in arch.levels)
    for batch in mappings(layer, arch, conv):
        a, b = evaluate_batch(layer, arch, batch, accounting=conv), evaluate_batch(layer, arch, batch)
        if any(not np.array_equal(getattr(a, f), getattr(b, f)) for f in ("reads", "writes", "noc_words",
                                                                          "leakage_energy_pj")):
            return True
        if wide and not np.array_equal(a.read_vectors, a.reads):
            return True
    return False


@functools.cache
def cases_for(name: str) -> list:
    conv, transform = SETS[name]
    out = []
    for i, (layer, arch) in enumerate(POOL):
        if transform is not None:
            arch = transform(arch, np.random.default_rng(i))
        if differs(layer, arch, conv):
            out.append((layer, arch))
        if len(out) == N_CASES:
            break
    assert len(out) == N_CASES, (name, len(out))
    return out


@functools.cache
def wanted(name: str, case: int) -> dict[str, float]:
    layer, arch = cases_for(name)[case]
    conv = SETS[name][0]
    return brute_force(layer, arch, conv, mappings(layer, arch, conv))


@pytest.mark.parametrize("name", list(SETS))
@pytest.mark.parametrize("case", range(N_CASES))
def test_exact_equals_the_brute_force_minimum_where_orders_are_coupled(case, name):
    layer, arch = cases_for(name)[case]
    conv = SETS[name][0]
    cost = LoopNestCost(conv)
    check(layer, arch, cost, wanted(name, case), name)


def test_timeloop_is_accepted_and_the_rules_it_cannot_express_are_refused():
    """Timeloop's and ZigZag's accountings and whole vectors are searched; a cost that
    is neither order-separable nor says how its orders are coupled is refused, naming
    itself."""
    layer, arch = POOL[0]

    class Opaque(LoopNestCost):
        separable_orders = False
        order_coupling = None

    with pytest.raises(ValueError, match="order_coupling"):
        ExactMapper().map(layer, arch, Opaque("timeloop"), "edp")
    assert LoopNestCost("timeloop").order_coupling is not None
    assert LoopNestCost("zigzag").order_coupling is None and LoopNestCost("zigzag").separable_orders
