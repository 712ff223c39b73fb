"""The order searches where a level limits reads and writes apart: its bandwidth cycles
are ``max(reads / read bandwidth, writes / write bandwidth, ...)``, a maximum of sums of
per-level order terms, not itself such a sum, so mappers/orders.py combines the sums
(``bandwidth_parts``, :func:`mappers.orders.bandwidth_columns`) and takes the maximum of
each combination. A hand-built separable model where combining the per-level maxima
instead picks the wrong orders."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from accelerators.arch import ArchSpec, MemoryLevel
from mappers.mapping import MappingBatch
from mappers.orders import bandwidth_columns, coupled_best_orders, permutation_best, separable_best

A, B = np.array([0, 1, 2]), np.array([1, 0, 2])     # M outside N, or N outside M
ARCH = ArchSpec("split", (
    MemoryLevel("RF", read_bandwidth_words_per_cycle=1.0, write_bandwidth_words_per_cycle=1.0),
    MemoryLevel("GLB"), MemoryLevel("DRAM")), mac_energy_pj=0.0)


def score(batch: MappingBatch, rows=None):
    """Levels 1 and 2 each order M and N (both of factor 2 there). Order A at a level
    adds 4 reads per cycle-unit to the RF's read term, order B 3 writes to its write term
    (read and write bandwidths 1 word/cycle), and B costs 1 pJ more. Compute takes 0
    cycles, so latency is the RF's max(reads, writes): (A, A) 8, (A, B) = (B, A) 4,
    (B, B) 6. Adding each level's change of the maximum instead predicts (B, B) at
    8 - 4 - 4 = 0."""
    n = len(batch)
    reads, writes, energy = np.zeros(n), np.zeros(n), np.zeros(n)
    for li in (1, 2):
        o = batch.order[:, li, :]
        a = np.argmax(o == 0, axis=1) < np.argmax(o == 1, axis=1)       # M outside N
        reads += np.where(a, 4.0, 0.0)
        writes += np.where(a, 0.0, 3.0)
        energy += np.where(a, 0.0, 1.0)
    parts = np.zeros((n, 3, 3))
    parts[:, 1, 0], parts[:, 2, 0] = reads, writes
    bw = parts.max(axis=1)
    latency = bw.max(axis=1)
    return SimpleNamespace(energy_pj=energy, compute_cycles=np.zeros(n), bandwidth_cycles=bw, bandwidth_parts=parts,
                           latency_cycles=latency, leakage_energy_pj=np.zeros((n, 3)), valid=np.ones(n, dtype=bool),
                           reads=np.zeros((n, 3, 3)), writes=np.zeros((n, 3, 3)))


def _batch() -> MappingBatch:
    T = np.ones((1, 3, 3), dtype=np.int64)
    T[0, 1:, :2] = 2
    return MappingBatch(("M", "N", "K"), T, np.ones_like(T), np.ones_like(T), np.tile(A, (1, 3, 1)),
                        np.ones((1, 3, 3), dtype=bool))


def test_the_columns_are_the_parts_where_a_result_has_them():
    r = score(_batch())
    np.testing.assert_array_equal(bandwidth_columns(r), np.asarray(r.bandwidth_parts).reshape(1, 9))
    del r.bandwidth_parts
    np.testing.assert_array_equal(bandwidth_columns(r), r.bandwidth_cycles)


def test_separable_best_combines_the_read_and_write_terms():
    best, chosen, _ = separable_best(score, _batch(), [1, 2], [[A, B], [A, B]], "latency")
    assert best[0] == 4.0
    assert tuple(chosen[0]) in ((0, 1), (1, 0))


def test_the_permutation_search_combines_the_read_and_write_terms():
    best, orders, _ = permutation_best(score, _batch(), [1, 2], "latency", 1000)
    assert best[0] == 4.0
    assert score(MappingBatch(("M", "N", "K"), *(getattr(_batch(), f) for f in ("temporal", "spatial_x",
                                                                                 "spatial_y")), orders,
                              _batch().keep)).latency_cycles[0] == 4.0


def test_the_coupled_search_combines_the_read_and_write_terms():
    best, _, _ = coupled_best_orders(None, ARCH, lambda layer, arch, b: score(b), _batch(), "latency")
    assert best[0] == 4.0
