"""The counting conventions: the places where tools count differently, and the named
accounting modes (coexplore's default, Timeloop's, ZigZag's).

Scope: data only (:class:`Conventions`, :data:`CONVENTION_CHOICES`, :data:`ACCOUNTING`,
:data:`DEFAULT_CONVENTIONS`). The rules these choices select are implemented in
:mod:`evaluators.loopnest.counts` (numpy/jax), :mod:`evaluators.loopnest.kernel` (the
default choices only, compiled) and :mod:`evaluators.loopnest.walk` (every choice,
literally).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ACCOUNTING", "CONVENTION_CHOICES", "DEFAULT_CONVENTIONS", "Conventions"]


CONVENTION_CHOICES = {
    "window_reuse": ("any_step", "innermost", "none"),
    "multicast": ("coincident", "same_index"),
    "psum_refill": ("one_child", "every_child"),
    "mac_operand_reads": ("every_step", "on_change"),
    "output_drain": ("child_read", "parent_update"),
    "first_accumulation": ("per_instance", "per_word"),
    "leakage": ("all_instances", "utilized_instances"),
}
"""Each counting convention's choices (a :class:`Conventions` field): coexplore's rule
first (the default); :data:`ACCOUNTING` names the choices of Timeloop and ZigZag."""


@dataclass(frozen=True)
class Conventions:
    """How the model counts in the places where tools differ: the first choice of each
    field is coexplore's (the default); :data:`ACCOUNTING` ``"timeloop"`` selects
    Timeloop's (the second choice of the first five fields and of ``leakage``) and
    ``"zigzag"`` ZigZag's
    (``window_reuse="none"``, ``first_accumulation="per_word"``).
    :mod:`evaluators.loopnest.walk` implements every choice literally and the model must
    agree with it count for count.

    Attributes:
        window_reuse: when a tile moves, which words of the old tile it keeps.
            ``"any_step"`` (default): the overlap of the new tile with the old one,
            whatever loop stepped (inner loops wrapping included): a buffer keeps what
            it holds, so a sliding window reuses its overlap after an outer loop steps
            too. ``"innermost"``: Timeloop's rule (``OperationSpace::
            SaveAndSubtractIfSameStride`` in src/workload/operation-space.cpp (src/workload/shape-models/ in later versions) of
            NVlabs/timeloop, called from ``NestAnalysis::ComputeDeltas`` in
            src/loop-analysis/nest-analysis.cpp): the overlap is kept only when the
            tile moves by the same translation as at its previous move (or right after
            a refetch); otherwise the whole tile is refetched. In a loop nest that means:
            every step of the innermost loop (of factor > 1) above the level keeps its
            overlap, and a step of any other loop keeps it only if it translates the
            tile exactly as that innermost loop does. ``"none"``: ZigZag's rule (3.9.1,
            ``TemporalMapping.innermost_stationary_loop_merge_down`` in
            zigzag/mapping/temporal_mapping.py and ``Mapping.calc_data_access`` in
            zigzag/mapping/mapping.py: a level's fills are the layer's MACs over the
            loops irrelevant to the operand at and below it, after the irrelevant loops
            at the bottom of each level are merged down into it): nothing is kept; the
            tile is refetched whole on every step of a loop above the level that is over
            one of the operand's dimensions or has such a loop (factor > 1) inside it
            above the level (a step of only irrelevant loops leaves it in place).
        multicast: which children one parent read serves. ``"coincident"`` (default):
            every child whose tile coincides with another's at that moment (Eyeriss's
            diagonals included): the words are the same, one read can feed them all.
            ``"same_index"``: only children whose indices agree in every dimension the
            operand depends on (they differ only in dimensions irrelevant to it).
        psum_refill: partial sums fetched back down into a spatial-reduction group.
            ``"one_child"`` (default): one child of the group receives the old partial
            sum (adding it once is what the arithmetic needs: the others start from
            zero). ``"every_child"``: every child of the group receives it.
        mac_operand_reads: how often a MAC reads ``W`` and ``I``. ``"every_step"``
            (default): every iteration, since a MAC unit stores nothing. ``"on_change"``:
            only when the operand at that MAC changes, where the MACs sit behind a
            fanout from the level that serves them (a spatial container without storage
            for the operand: the operand is held at the MAC's input).
        output_drain: who counts a partial sum drained up to the parent.
            ``"child_read"`` (default): the child reads it (it does) and the parent
            updates it. ``"parent_update"``: only the parent's update is counted.
        first_accumulation: which MAC accumulations into an output word read no partial
            sum. ``"per_instance"`` (default): the first one of every MAC instance (group
            of MACs that share one copy of the word) -- it starts from zero; where a
            reduction is unrolled spatially, every instance starts its own partial sum
            and the network adds them on the way up. ``"per_word"``: ZigZag's rule (3.9.1,
            ``Mapping.calc_data_access`` in zigzag/mapping/mapping.py: the innermost
            output memory's reads to the MACs are the output's size x (the product of
            all reduction loops, spatial ones included, - 1)): only the first
            accumulation into each word of the whole output; every other instance
            reducing the same word adds onto a partial sum it reads, as a PE of a
            systolic column adds onto the one arriving from its neighbour.
        leakage: which instances of a level leak (``leakage_pj_per_cycle`` per instance
            and cycle of the latency). ``"all_instances"`` (default): every physical
            instance (``MemoryLevel.instances``), used by the mapping or not: static
            power is the hardware's, and an idle instance that is not power-gated leaks.
            ``"utilized_instances"``: Timeloop's rule, only the instances the mapping
            uses, the product of its spatial factors above the level (the model's active
            instances): ``BufferLevel::ComputeLeaksPerCycle`` and
            ``BufferLevel::FinalizeBufferEnergy`` in src/model/buffer.cpp of
            NVlabs/timeloop (added in commit feb3bd0d, read at 4cf6d4cd): leakage energy
            = per-instance-cycle leak x cycles x ``leaks_per_cycle``, and without a
            power-gating level shared with others ``leaks_per_cycle`` is the largest of
            the level's ``utilized_instances`` over the data spaces (at least 1); the
            data spaces a level keeps are replicated over the same spatial loops, so
            that is the active instances (a level that keeps nothing is not compared:
            its Timeloop figure for a bypassed data space was not checked).

    docs/MODEL.md names the function of Timeloop's source behind each Timeloop choice;
    ``same_index`` and ``on_change`` are the effects there of a split fanout and of
    neighbour link transfers, not rules of Timeloop's own, and it says where they differ.
    The ZigZag rules were traced to ZigZag 3.9.1's source (cited above) and checked count
    for count against it (``experiments/validation/zigzag_bundled.py``, docs/MODEL.md).
    A bad value is a ``ValueError`` naming the field and the value.
    """

    window_reuse: str = "any_step"
    multicast: str = "coincident"
    psum_refill: str = "one_child"
    mac_operand_reads: str = "every_step"
    output_drain: str = "child_read"
    first_accumulation: str = "per_instance"
    leakage: str = "all_instances"

    def __post_init__(self) -> None:
        for name, choices in CONVENTION_CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise ValueError(f"Conventions.{name} must be one of {list(choices)}, got {value!r}")

    @property
    def default(self) -> bool:
        return self is DEFAULT_CONVENTIONS or self == DEFAULT_CONVENTIONS

    @classmethod
    def of(cls, accounting: Conventions | str | None) -> Conventions:
        """A :class:`Conventions` from itself, ``None`` (the default) or a name of
        :data:`ACCOUNTING`."""
        if accounting is None:
            return DEFAULT_CONVENTIONS
        if isinstance(accounting, Conventions):
            return accounting
        if isinstance(accounting, str) and accounting in ACCOUNTING:
            return ACCOUNTING[accounting]
        raise ValueError(f"accounting must be a Conventions or one of {list(ACCOUNTING)}, got {accounting!r}")


DEFAULT_CONVENTIONS = Conventions()
"""coexplore's rules (the first choice of every field)."""

ACCOUNTING = {
    "coexplore": DEFAULT_CONVENTIONS,
    "timeloop": Conventions(window_reuse="innermost", multicast="same_index", psum_refill="every_child",
                            mac_operand_reads="on_change", output_drain="parent_update",
                            leakage="utilized_instances"),
    "zigzag": Conventions(window_reuse="none", first_accumulation="per_word"),
}
"""Named accounting modes: ``"coexplore"`` (the default rules), ``"timeloop"``
(Timeloop's rule for every convention, so a user migrating from Timeloop gets its counts
for the same architecture and mapping) and ``"zigzag"`` (ZigZag 3.9.1's window and
first-accumulation rules; its other rules agree with coexplore's on the cases compared,
see docs/MODEL.md)."""

