"""Bandwidth cycles from counts: a level's reads and writes per active instance over
its bandwidth limits, shared by both paths.

Scope: the arithmetic that turns a level's counts into the cycles its ports need, for
the numpy/jax counts of :func:`evaluators.loopnest.counts.count` and the compiled
kernel's results (:mod:`evaluators.loopnest.dispatch`), so that the two agree bit for
bit (the kernel computes the same per-level maximum in the same order of sums).

The rule is Timeloop v0.4's (``BufferLevel::ComputePerformance`` in
src/model/buffer.cpp): a level's demand is its reads and its writes (fills and updates)
per instance; each limit it has -- reads and writes together (``shared_bandwidth``,
coexplore's ``bandwidth_words_per_cycle``), reads alone (``read_bandwidth``), writes alone
(``write_bandwidth``) -- slows the run to ``limit / demand`` of the compute rate where it
is exceeded, and the worst slowdown holds. In cycles: the level needs
``max(reads / read bandwidth, writes / write bandwidth, (reads + writes) / bandwidth)``
cycles, each term only where its limit is set (an unlimited one counts 0), and latency is
the largest of the compute cycles and every level's figure. Timeloop additionally rounds
the per-data-space demand and the final cycles up to integers; the model does not, in
either form (as for the shared bandwidth alone before).

Each of the three terms is a sum of counts, so it is what the order searches combine
(:attr:`evaluators.loopnest.LoopNestResult.bandwidth_parts`); their maximum is not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluators.loopnest.counts import LayerArch

__all__ = ["PARTS", "bandwidth_cycles"]

PARTS = ("shared", "read", "write")
"""The terms of :func:`bandwidth_cycles`'s ``parts``, in order."""


def bandwidth_cycles(xp: Any, st: LayerArch, R: Any, Wr: Any, inst: Any) -> tuple[Any, Any]:
    """``(bandwidth cycles (L, B), parts (3, L, B) or None)`` from the counts (batch-last:
    ``R``, ``Wr`` ``(L, 3, B)`` over all instances, active instances ``inst`` ``(L, B)``).
    ``parts`` are the :data:`PARTS` terms, the cycles' maximum over them; ``None`` where no
    level has a read or write bandwidth of its own (the cycles are then the shared term
    itself)."""
    n = xp.maximum(inst, 1)
    shared = xp.sum(R + Wr, axis=1) / n / xp.asarray(st.bandwidth)[:, None]
    if not st.split_bandwidth:
        return shared, None
    reads = xp.sum(R, axis=1) / n / xp.asarray(st.read_bandwidth)[:, None]
    writes = xp.sum(Wr, axis=1) / n / xp.asarray(st.write_bandwidth)[:, None]
    parts = xp.stack([shared, reads, writes])
    return xp.maximum(xp.maximum(shared, reads), writes), parts
