"""Lower bounds under every set of counting conventions: what changes in
:mod:`evaluators.loopnest.bounds` when the cost counts by other rules than the default's
(``accounting="timeloop"``, ``"zigzag"`` or any :class:`~evaluators.loopnest.Conventions`).

Scope: the per-convention rules of the lower bound, apart from the default's
(:func:`evaluators.loopnest.bounds.bound_hook`, which they leave unchanged):

* :func:`relaxed_conventions`: the conventions the bound is computed under;
* :func:`mac_change_bound`: the bound of a MAC's operand reads counted on change (the one
  rule that needs a new fill bound), and :func:`with_convention_rules`, the ``fills``
  hook that applies it around the default's hook.

The compiled kernel applies the same rules: the relaxed conventions' codes in its
lower-bound mode and :func:`evaluators.loopnest.kernel_bounds.mac_change_fill`, the
numba copy of :func:`mac_change_bound` (``tests/evaluators/test_loopnest_kernel.py``
checks them equal, bit for bit).

**Why the bound holds, rule by rule.** The bound is the model run under the relaxed
conventions with every fill count replaced by a lower bound of it; everything the model
derives from fills (parents' reads with multicast, refills and drains of partial sums,
NoC deliveries, energy, bandwidth cycles, latency, leakage) is, under each rule below, a
sum of fill counts times non-negative factors that do not depend on the loop orders or on
the free temporal factors (spatial factors, instances, the output's size), plus the exact
MAC count. So it suffices that (a) each fill the hook bounds is at most the true fill
*under the cost's own rules*, and (b) every rule that changes the arithmetic after the
fills is applied as the cost applies it.

* ``window_reuse``: relaxed to ``"any_step"``. Under ``"innermost"`` (Timeloop's) a
  step keeps the overlap with the old tile only if it translates the tile as the
  innermost moving loop does, else it refetches the whole tile: per step at least the
  words ``"any_step"`` fetches (``w - overlap <= w``). Under ``"none"`` (ZigZag's) a step
  that leaves the tile in place costs nothing under either rule, and any other step
  refetches the whole tile, again at least ``w - overlap``. So the true fills are at
  least the ``"any_step"`` fills, which :func:`~evaluators.loopnest.bounds.bound_hook`
  bounds (and ``"any_step"`` keeps the bound separable over the decided levels' orders,
  which the exact mapper's order classes need).
* ``multicast``, ``psum_refill``, ``output_drain``, ``first_accumulation``: kept. They
  change only what the model does with the fills (how many groups a parent reads for,
  which children get old partial sums back, whether the child's drain read is counted,
  which accumulations read a partial sum), each a linear map of the fills with
  order-free, non-negative coefficients: the bound's counts are these maps of
  lower-bounded fills, at most the true counts. (The per-word first-accumulation rule
  reads ``F x groups - words of the output`` at the MACs, where ``F`` is the exact
  iteration count: no bound is involved.)
* ``mac_operand_reads="on_change"``: kept, with the MAC's operand fill bounded by
  :func:`mac_change_bound` (the model's on-change count depends on every level's order,
  and on the free factors).
* ``leakage="utilized_instances"``: kept: the active instances are the product of the
  spatial factors (decided at every node of the exact search), so the leakage is a fixed
  rate per row times the latency, which the bound bounds.

Whole-vector accesses (``vector_words > 1``) need no rule of their own: a level's
accesses are ``inst x ceil(words / (inst x V))``, non-decreasing in the words, so the
bound's words give a bound of the vectors (:func:`evaluators.loopnest.energy.access_energy`
rounds the bound's counts as it rounds the model's).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from evaluators.loopnest.conventions import DEFAULT_CONVENTIONS, Conventions
from evaluators.loopnest.counts import FillContext, distinct_two_aps

__all__ = ["mac_change_bound", "relaxed_conventions", "with_convention_rules"]


def relaxed_conventions(conv: Conventions | None) -> Conventions:
    """The conventions the lower bound of a cost under ``conv`` is computed under: the
    window rule relaxed to ``"any_step"``, every other rule kept (see the module
    docstring for why this bounds ``conv``'s counts). The default conventions give
    themselves (the object itself, so the default's code path is kept)."""
    if conv is None or conv.default:
        return DEFAULT_CONVENTIONS
    out = replace(conv, window_reuse="any_step")
    return DEFAULT_CONVENTIONS if out.default else out


def mac_change_bound(ctx: FillContext) -> Any:
    """A lower bound on a MAC instance's reads of operand ``ctx.t`` counted on change
    (``Conventions.mac_operand_reads="on_change"``; ``ctx.c == -1``): the distinct words
    of the operand that one MAC instance uses over the run. Each is read at least once
    (the MAC holds one word, and a read on change brings one word in), under any loop
    order, any window rule and any split of the free temporal factors.

    The MAC instance's index along dimension ``d`` takes ``X_d`` distinct values, the
    product of ``d``'s temporal factors over all levels (fixed at every node: the free
    factors' product per dimension is known). An axis over one dimension then touches
    ``X_d`` words; an axis ``a p + b r`` over two touches at least ``X_p + X_r - 1`` (a
    sumset of two sets of integers scaled by positive coefficients), and where neither
    dimension is unrolled spatially anywhere (its values are then one contiguous range)
    exactly ``|a [0, X_p) + b [0, X_r)|`` (:func:`evaluators.loopnest.counts.distinct_two_aps`),
    of which the larger is taken; the operand's words are the product over its axes (the
    axes index disjoint coordinates). All are integers, exact in float64."""
    T_all = ctx.T_above[0] * ctx.T[0]                                  # (D, B)
    sp_all = ctx.SP[0]
    for li in range(1, ctx.L):
        sp_all = sp_all * ctx.SP[li]
    whole = sp_all == 1
    out = np.ones(T_all.shape[-1])
    for ax in ctx.axes:
        if len(ax) == 1:
            out = out * T_all[ax[0][0]]
            continue
        (d1, a), (d2, b) = ax
        x1, x2 = T_all[d1], T_all[d2]
        words = (x1 + x2) - 1.0
        g = math.gcd(int(a), int(b))
        exact = distinct_two_aps(np, int(a) // g, x1, int(b) // g, x2, False)
        words = np.where(whole[d1] & whole[d2], np.maximum(words, exact), words)
        out = out * words
    return out


def with_convention_rules(hook: Callable[[FillContext], Any], conv: Conventions) -> Callable[[FillContext], Any]:
    """The ``fills`` hook of the lower bound under ``conv`` (already relaxed,
    :func:`relaxed_conventions`): the default's ``hook`` for every level's fills, and
    :func:`mac_change_bound` for a MAC's operand read on change (the model asks the hook
    for it, with ``ctx.c == -1``, only under ``mac_operand_reads="on_change"``)."""
    if conv.mac_operand_reads != "on_change":
        return hook

    def convention_hook(ctx: FillContext) -> Any:
        if ctx.c < 0:
            return mac_change_bound(ctx)
        return hook(ctx)

    return convention_hook
