"""The order search with leakage: static power x latency is not a sum of per-level
order terms (latency is a maximum over levels), so mappers/orders.py searches on the
dynamic energy and adds each combination's leakage back from its own latency."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from mappers.mapping import MappingBatch
from mappers.orders import objective_of, separable_best

A, B = np.array([0, 1, 2]), np.array([2, 1, 0])     # two orders of a level's three loops


def fake_score(rate_pj_per_cycle):
    """A separable model by hand: levels 1 and 2 each take order A or B. Order B costs 5
    pJ more dynamic energy at its level but cuts that level's bandwidth cycles from 10
    to 1; compute takes 0 cycles, so latency is max(bandwidth of level 1, of level 2)."""

    def score(batch: MappingBatch, rows):
        n = len(batch)
        dyn, bw = np.zeros(n), np.zeros((n, 3))
        for li in (1, 2):
            b = (batch.order[:, li, :] == B).all(axis=1)
            dyn += np.where(b, 5.0, 0.0)
            bw[:, li] = np.where(b, 1.0, 10.0)
        latency = bw.max(axis=1)
        leak = np.zeros((n, 3))
        leak[:, 2] = rate_pj_per_cycle * latency
        return SimpleNamespace(energy_pj=dyn + leak.sum(axis=1), compute_cycles=np.zeros(n), bandwidth_cycles=bw,
                               latency_cycles=latency, leakage_energy_pj=leak)

    return score


@pytest.mark.parametrize("rate, want, choice", [(0.0, 0.0, (0, 0)), (1.0, 10.0, (0, 0)), (3.0, 13.0, (1, 1))])
def test_leakage_is_added_from_each_combination_latency(rate, want, choice):
    """Energies by hand (rate r pJ/cycle): (A, A) = 0 + 10 r; (B, A) = (A, B) = 5 + 10 r;
    (B, B) = 10 + r. At r = 3: 30, 35, 35, 13, so (B, B) wins with 13 pJ; adding the
    single-level differences of the total energy instead ((B, B) = 30 + 5 + 5 = 40)
    would keep (A, A) at 30."""
    T = np.ones((1, 3, 3), dtype=np.int64)
    T[0, 1:, :] = 2
    batch = MappingBatch(("M", "N", "K"), T, np.ones_like(T), np.ones_like(T), np.tile(A, (1, 3, 1)),
                         np.ones((1, 3, 3), dtype=bool))
    best, chosen, _ = separable_best(fake_score(rate), batch, [1, 2], [[A, B], [A, B]], "energy")
    assert best[0] == pytest.approx(want, abs=1e-12)
    assert tuple(chosen[0]) == choice


def test_objective_of_adds_leakage_times_latency():
    assert objective_of("energy", 7.0, 3.0, np.array([2.0, 5.0]), 2.0) == 7.0 + 2.0 * 5.0
    assert objective_of("edp", 7.0, 6.0, np.array([2.0, 5.0]), 2.0) == (7.0 + 12.0) * 6.0
