"""The loop-nest model as a cost function: :func:`evaluate_batch` (which path scores a
batch), :func:`evaluate` (one mapping) and :class:`LoopNestCost` / :data:`LOOPNEST` (the
:class:`mappers.base.BoundedCost` a mapper receives).

Scope: choosing the path and nothing else. The compiled kernel
(:mod:`evaluators.loopnest.dispatch`) runs numpy with exact integers, any conventions and
no ``fills`` or ``fold_cycles`` hook, when numba is importable, hence
:data:`LOOPNEST`'s scoring: the same results, field for field
(``tests/evaluators/test_loopnest_kernel.py``), several times the throughput and
microseconds instead of milliseconds per call. ``kernel=False`` or
``COEXPLORE_LOOPNEST_KERNEL=0`` in the environment forces the reference array code
(:mod:`evaluators.loopnest.reference`), also the ``jax`` path. The lower bounds behind
:meth:`LoopNestCost.lower_bound` are :mod:`evaluators.loopnest.bounds`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accelerators.arch import ArchSpec
from evaluators.loopnest import bounds
from evaluators.loopnest.conventions import (
    ACCOUNTING,
    CONVENTION_CHOICES,
    DEFAULT_CONVENTIONS,
    Conventions,
)
from evaluators.loopnest.counts import FillContext, LayerConstants, prepare
from evaluators.loopnest.dispatch import (
    evaluate_compiled,
    kernel_available,
    kernel_plan,
    require_kernel,
)
from evaluators.loopnest.reference import BLOCK_ROWS, evaluate_reference
from evaluators.loopnest.result import LoopNestResult
from mappers.base import check_objective
from mappers.mapping import Mapping, MappingBatch
from mappers.orders import OrderCoupling
from mappers.workloads import Layer

__all__ = ["LOOPNEST", "LoopNestCost", "evaluate", "evaluate_batch"]


def evaluate_batch(
    layer: Layer,
    arch: ArchSpec,
    batch: MappingBatch,
    *,
    xp: Any = np,
    integer: bool = True,
    consts: LayerConstants | None = None,
    fold_cycles: Any = None,
    block: int = BLOCK_ROWS,
    fills: Callable[[FillContext], Any] | None = None,
    kernel: bool | None = None,
    accounting: Conventions | str | None = None,
) -> LoopNestResult:
    """Score ``batch`` (the rules: :mod:`evaluators.loopnest.counts`).

    Args:
        xp: array namespace, ``numpy`` (default) or ``jax.numpy``.
        integer: exact integer arithmetic; ``False`` for a continuous relaxation
            (float factors, differentiable almost everywhere).
        fold_cycles: ``f(rows_used, cols_used, t)`` giving one fold's cycles; by default
            :func:`evaluators.systolic_timing.fold_cycles` when ``arch.dataflow`` is set.
        block: mappings per internal block (numpy): keeps temporaries in cache.
        fills: replaces fill counts (see :func:`evaluators.loopnest.counts.count`).
        kernel: run the compiled kernel (:mod:`evaluators.loopnest.kernel`): ``None``
            (default) when it applies (numpy, ``integer``, no ``fills`` or
            ``fold_cycles``) and numba is importable, ``True`` to insist (``ValueError``
            if it does not apply, ``ImportError`` without numba), ``False`` for the numpy
            code.
        accounting: the counting conventions (:class:`Conventions`, or a name of
            :data:`ACCOUNTING`: ``"coexplore"``, the default, ``"timeloop"`` or ``"zigzag"``),
            on both paths.
    """
    conv = DEFAULT_CONVENTIONS if accounting is None or accounting is DEFAULT_CONVENTIONS \
        else Conventions.of(accounting)
    plain = xp is np and integer and fills is None and fold_cycles is None
    if kernel is None:
        kernel = plain and kernel_available()
    elif kernel and not plain:
        raise ValueError("the compiled kernel runs numpy, integer factors, no fills or fold_cycles hooks")
    elif kernel:
        require_kernel()
    if kernel:
        return evaluate_compiled(kernel_plan(layer, arch, consts), batch, conv=conv)
    return evaluate_reference(xp, prepare(layer, arch, consts), arch, batch, integer, fold_cycles, fills, conv,
                              block)


def evaluate(layer: Layer, arch: ArchSpec, mapping: Mapping) -> LoopNestResult:
    """Score one mapping (a batch of one)."""
    return evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, [mapping]))


class LoopNestCost:
    """The loop-nest model as the cost function a mapper receives, with what an exact
    mapper needs beyond scoring (the :class:`mappers.base.BoundedCost` protocol).

    * ``cost(layer, arch, batch)`` is :func:`evaluate_batch`.
    * ``separable_orders`` (true): every count -- hence energy and every level's
      bandwidth cycles (each of its terms, where a level limits reads and writes apart:
      the cycles are then their maximum, and the order searches combine the terms,
      ``LoopNestResult.bandwidth_parts``) -- is a constant plus one term per level that
      depends on that level's loop order alone. A fill at a level is the sum over the loops ``j`` above
      it of ``n_trans_j (w - overlap_j)``; ``n_trans_j`` depends on the product of the
      loops outside ``j`` (at higher levels: a product, whatever their order) and
      ``overlap_j`` on the *set* of loops inside ``j`` (at lower levels: sets), so the
      loops of one level contribute through that level's order only.
      ``tests/evaluators/test_loopnest_bounds.py`` checks it on random mappings.
      Leakage (a level's ``leakage_pj_per_cycle``) is not: it is the architecture's
      static power times the latency, a maximum over levels. The result reports it apart
      (``leakage_energy_pj``), and :mod:`mappers.orders` searches orders on the dynamic
      energy and adds each combination's leakage back from its own latency, exactly.
    * :meth:`lower_bound` bounds every completion of a partial mapping.
    * :meth:`top_level_bound` screens the children that decide the top level's factors
      (``screen_top=False``: no screen, every child bounded in full; the same search,
      slower: the baseline of its benchmark).
    """

    def __init__(self, accounting: Conventions | str | None = None, *, screen_top: bool = True) -> None:
        self.conventions = Conventions.of(accounting)
        self.screen_top = bool(screen_top)

    def __repr__(self) -> str:
        return f"LoopNestCost({self.conventions!r})"

    @property
    def accounting_name(self) -> str:
        """The name of these conventions in :data:`ACCOUNTING` (``"coexplore"``,
        ``"timeloop"``, ``"zigzag"``), else ``custom(...)`` listing the fields that differ
        from the default: what a mapper's :class:`~mappers.base.ProofScope` names."""
        for name, conv in ACCOUNTING.items():
            if conv == self.conventions:
                return name
        diff = [f"{k}={getattr(self.conventions, k)}" for k in CONVENTION_CHOICES
                if getattr(self.conventions, k) != getattr(DEFAULT_CONVENTIONS, k)]
        return "custom(" + ", ".join(diff) + ")"

    @property
    def separable_orders(self) -> bool:
        """True where every count is a constant plus one term per level that depends on
        that level's order alone, the innermost level's order counting for nothing
        (:func:`mappers.orders.best_orders` is then exact): window reuse ``any_step``
        (the default, see above) or ``none`` (ZigZag's: it refetches a level's tile at
        every step of a loop that is, or has inside it above the level, a loop over one
        of the operand's dimensions, so a loop of level ``l`` contributes
        ``n_trans_j w`` if a lower level (above the tile's) has such a loop of factor
        > 1 (a set: order-free) or if ``j`` is at or outside the innermost such loop of
        ``l`` (``l``'s order), and ``n_trans_j`` is a product over higher levels: one
        term per level again), with MAC reads ``every_step``. The other rules multiply
        or drop fills by order-free factors (spatial factors, first touches, the
        output's size, a drain's read) and leakage on the utilized instances is a rate
        fixed by the spatial factors, which the order searches add back from each
        combination's latency as they add the default's. False under Timeloop's window
        rule (``innermost``: a loop's fills depend on the innermost loop above the level,
        at another level) and reads on change (the innermost level's order counts):
        :attr:`order_coupling` says how, and :mod:`mappers.orders` searches those
        exactly by another argument (:func:`mappers.orders.coupled_best_orders`)."""
        c = self.conventions
        return c.window_reuse in ("any_step", "none") and c.mac_operand_reads == "every_step"

    @property
    def order_coupling(self) -> OrderCoupling | None:
        """How the loop orders are coupled under these conventions
        (:class:`mappers.orders.OrderCoupling`), ``None`` where they are separable
        (:attr:`separable_orders`): Timeloop's window rule couples a level's terms to the
        innermost moving loop of the levels below it, and reads on change make the
        innermost level's order count (a MAC's one-word input sits below every loop)."""
        if self.separable_orders:
            return None
        c = self.conventions
        return OrderCoupling(innermost=c.window_reuse == "innermost", inner_level=c.mac_operand_reads == "on_change")

    @property
    def bounded_by_default(self) -> bool:
        """Whether every count under these conventions is at least the default's, for
        every mapping, so the default's lower bounds (:meth:`lower_bound`) bound this
        cost too: window reuse ``any_step`` or ``none`` (ZigZag's: a step that leaves
        the tile in place costs nothing under either rule, and any other step refetches
        at least the words outside the old tile), any multicast rule (children with
        equal indices in the operand's dimensions hold equal tiles, so ``same_index``
        groups are no fewer than ``coincident`` ones), any partial-sum refill (every
        child of a group gets at least what one does), any first-accumulation rule
        (every output word is first touched by some group, so the per-word count reads
        at least the per-instance one), MAC reads ``every_step``, drains
        ``child_read`` and leakage on ``all_instances`` (the three rules that would
        count less). Energy, NoC words, bandwidth cycles and latency grow with the
        counts (energies are non-negative), hence every objective. (The lower bounds no
        longer need it: :meth:`lower_bound` bounds every convention set by its own
        rules.)"""
        c = self.conventions
        return (c.window_reuse in ("any_step", "none") and c.mac_operand_reads == "every_step"
                and c.output_drain == "child_read" and c.leakage == "all_instances")

    def __call__(self, layer: Layer, arch: ArchSpec, batch: MappingBatch) -> LoopNestResult:
        return evaluate_batch(layer, arch, batch, accounting=self.conventions)


    def lower_bound(self, layer: Layer, arch: ArchSpec, batch: MappingBatch, known: int, *,
                    stationary: int | None = None, irrelevant_tile: Any = None,
                    kernel: bool | None = None) -> LoopNestResult:
        """Figures no completion of a partial mapping can beat under these conventions:
        :func:`evaluators.loopnest.bounds.lower_bound` (its docstring gives the rules;
        :mod:`evaluators.loopnest.bounds_conventions` why they hold under every
        convention set, Timeloop's and ZigZag's included)."""
        return bounds.lower_bound(layer, arch, batch, known, stationary=stationary,
                                  irrelevant_tile=irrelevant_tile, kernel=kernel, conventions=self.conventions)

    def least_lower_bound(self, layer: Layer, arch: ArchSpec, batch: MappingBatch, known: int,
                          levels: Sequence[int], candidates: Any, objective: str, *, stationary: int | None = None,
                          irrelevant_tile: Any = None, kernel: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the least ``objective`` of :meth:`lower_bound` over combinations of
        candidate loop orders, and the combination that attains it:
        :func:`evaluators.loopnest.bounds.least_lower_bound`."""
        return bounds.least_lower_bound(layer, arch, batch, known, levels, candidates, objective,
                                        stationary=stationary, irrelevant_tile=irrelevant_tile, kernel=kernel,
                                        conventions=self.conventions)

    def top_fill_table(self, layer: Layer, arch: ArchSpec, candidates: Any) -> Any:
        """The table :meth:`top_level_bound` reads, over the candidate orders of the top
        level (:class:`evaluators.loopnest.bounds_top.TopFillTable`), or ``False`` where
        that bound does not apply to ``arch`` (:func:`evaluators.loopnest.bounds_top.applies`)
        or ``screen_top`` is off."""
        from evaluators.loopnest import bounds_top

        if not (self.screen_top and bounds_top.applies(arch)):
            return False
        return bounds_top.TopFillTable(layer, arch, candidates, self.conventions)

    def top_level_bound(self, layer: Layer, arch: ArchSpec, parents: MappingBatch, children: MappingBatch,
                        parent_of: Any, table: Any, objective: str) -> np.ndarray:
        """Per child that decides the top level's temporal factors, a lower bound of every
        completion's objective from its parent's unrefined bound and ``table``
        (:func:`evaluators.loopnest.bounds_top.top_level_bound`; the exact mapper screens
        those children with it before their own bound)."""
        from evaluators.loopnest import bounds_top

        return bounds_top.top_level_bound(layer, arch, parents, children, parent_of, table, objective,
                                          conventions=self.conventions)

    def spatial_floor(self, layer: Layer, arch: ArchSpec, objective: str, spatial_product: Any) -> Any:
        """A bound of ``objective`` over every mapping whose spatial factors multiply to
        ``spatial_product`` (``(n,)``), from no partial mapping but the product: without a
        systolic dataflow the model's compute cycles are the product of the temporal
        factors, ``MACs / spatial_product``, whatever they are; the latency is at least
        that, and the energy at least the layer's compulsory energy
        (:func:`evaluators.loopnest.compulsory.energy_lower_bound_pj`: every MAC once,
        every touched word read or written once at the backing store), hence EDP at least
        their product. ``None`` where it does not apply: objective ``energy``, a dataflow
        (the array's fold cycles), ``vector_words > 1`` (energies per vector access), or
        conventions the default's bounds do not cover."""
        from evaluators.loopnest.compulsory import energy_lower_bound_pj

        check_objective(objective)
        if objective == "energy" or arch.dataflow is not None or \
                any(lv.vector_words != 1 for lv in arch.levels) or \
                not (self.conventions.default or self.bounded_by_default):
            return None
        cycles = float(layer.macs) / np.asarray(spatial_product, dtype=float)
        return cycles * energy_lower_bound_pj(layer, arch) if objective == "edp" else cycles


LOOPNEST = LoopNestCost()
"""The loop-nest cost function (the nested evaluator's default)."""
