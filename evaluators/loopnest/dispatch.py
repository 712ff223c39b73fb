"""The compiled path of the loop-nest model: whether it runs, what it is given, and its
results as a :class:`~evaluators.loopnest.result.LoopNestResult`.

Scope: :func:`kernel_available` (numba importable and not switched off), the
per-(layer, architecture) :class:`KernelPlan` (everything the kernel and the result
layout need about the pair, packed once and cached: :func:`kernel_plan`), and
:func:`evaluate_compiled`, which hands a batch to
:func:`evaluators.loopnest.kernel.evaluate_rows` (scoring, the lower bound of
:mod:`evaluators.loopnest.bounds`, or its least over order combinations) and lays out
what comes back. The kernel itself is :mod:`evaluators.loopnest.kernel`; it is imported
on the first call, so the model imports and runs (numpy) without numba.

Per call the architecture is not read again: the plan holds the packed tables, the
output columns, the levels' leakage rates and whether any level moves vectors, and the
numpy tables (:class:`~evaluators.loopnest.counts.LayerArch`) that the whole-vector
energy needs. Plans are keyed on the two objects' identities (an LRU of
:data:`KERNEL_CACHE_SIZE`; the objects are held, so an id is not reused, and treated as
immutable).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators.arch import ArchSpec
from evaluators.loopnest.bandwidth import bandwidth_cycles
from evaluators.loopnest.conventions import DEFAULT_CONVENTIONS, Conventions
from evaluators.loopnest.counts import LayerArch, LayerConstants, active_instances, prepare
from evaluators.loopnest.energy import access_energy, add_leakage, leak_rates_pj_per_cycle
from evaluators.loopnest.reference import BLOCK_ROWS, dropped_dims
from evaluators.loopnest.result import LoopNestResult, batch_rows
from mappers.mapping import MappingBatch
from mappers.workloads import Layer

__all__ = ["KERNEL_CACHE_SIZE", "SHAPED_MIN_ROWS", "KernelPlan", "LeastRequest", "cached_plans", "evaluate_compiled",
           "kernel_available", "kernel_plan", "live_dims", "require_kernel"]

KERNEL_CACHE_SIZE = 64
"""(layer, architecture) pairs whose :class:`KernelPlan` is kept."""

SHAPED_MIN_ROWS = 10_000
"""Batches of at least this many rows are scored by the kernel compiled for their
(levels, dimensions, axes) shape (:func:`evaluators.loopnest.kernel.shaped_rows`), smaller
ones and every bound by the generic one. A shape's first such batch compiles its kernel
unless numba's cache holds it (12.5 CPU-s for the throughput benchmark's shape, where the
generic kernel's scoring and bound took 44 CPU-s); it then scores in 0.79-0.84 of the
generic kernel's CPU time (``docs/benchmarks/evaluator_throughput.txt``), which repays
the compilation only over many rows."""

_kernel_state: dict[str, Any] = {}
_plans: OrderedDict[tuple[int, int], KernelPlan] = OrderedDict()
_plans_lock = threading.Lock()
_NO_IRR = np.zeros((0, 3))
"""No irrelevant-tile table. A table is ``(B, 3 L)``, level-major
(:func:`evaluators.loopnest.bounds.per_level_refinement`)."""
_OBJECTIVE_CODE = {"energy": 0, "latency": 1, "edp": 2}
_NO_ORDERS = (np.zeros((0, 0), dtype=np.int64), np.zeros(0, dtype=np.int64), 2, np.zeros(0), np.zeros(0),
              np.zeros(0, dtype=np.int64))
_codes: dict[Conventions, np.ndarray] = {}


def _convention_codes(conv: Conventions) -> np.ndarray:
    """The kernel's codes of ``conv`` (:func:`evaluators.loopnest.kernel.convention_codes`),
    computed once per distinct conventions."""
    codes = _codes.get(conv)
    if codes is None:
        codes = _codes[conv] = _kernel_state["module"].convention_codes(conv)
    return codes


def kernel_available() -> bool:
    """Whether the compiled kernel runs: numba importable (the kernel is imported, and
    compiled or loaded from numba's cache, on the first call) and not switched off by
    ``COEXPLORE_LOOPNEST_KERNEL=0`` in the environment (read on every call)."""
    if os.environ.get("COEXPLORE_LOOPNEST_KERNEL", "1") == "0":
        return False
    if "module" not in _kernel_state:
        try:
            from evaluators.loopnest import kernel as module
        except ImportError:
            module = None
        _kernel_state["module"] = module
    return _kernel_state["module"] is not None


def require_kernel() -> None:
    """Raise ``ImportError`` unless :func:`kernel_available` (for callers that insist on
    the compiled path)."""
    if not kernel_available():
        raise ImportError("the compiled loop-nest kernel is not available: numba cannot be imported, or "
                          "COEXPLORE_LOOPNEST_KERNEL=0 is set")


@dataclass(frozen=True)
class KernelPlan:
    """One (layer, architecture) pair as the compiled path uses it, built once
    (:func:`kernel_plan`).

    Attributes:
        layer, arch: the pair (held, so the identity key stays valid).
        packed: the kernel's arrays (:class:`evaluators.loopnest.kernel.Packed`).
        columns: ``name -> (first row, width)`` of the kernel's output block.
        tables: the numpy model's tables of the pair (whole-vector energy uses them).
        leak_rates_pj_per_cycle: ``(L,)`` each level's static power (every instance's);
            ``leak_pj_per_cycle_instance``: one instance's (for the rule that only the
            instances a mapping uses leak).
        leaks: whether any level leaks; ``vector``: whether any level moves more than
            one word per access (both: work the kernel leaves to this module).
        own_orders: the kernel's trailing arguments for scoring each row's own orders
            (no order combinations).
    """

    layer: Layer
    arch: ArchSpec
    packed: Any
    columns: dict[str, tuple[int, int]]
    tables: LayerArch
    leak_rates_pj_per_cycle: np.ndarray
    leak_pj_per_cycle_instance: np.ndarray
    leaks: bool
    vector: bool
    own_orders: tuple[Any, ...]


def kernel_plan(layer: Layer, arch: ArchSpec, consts: LayerConstants | None = None) -> KernelPlan:
    """The cached :class:`KernelPlan` of (``layer``, ``arch``) (``consts``: the layer's
    constants, if already computed). Call :func:`kernel_available` first."""
    key = (id(layer), id(arch))
    with _plans_lock:
        hit = _plans.get(key)
        if hit is not None and hit.layer is layer and hit.arch is arch:
            _plans.move_to_end(key)
            return hit
    km = _kernel_state["module"]
    st = prepare(layer, arch, consts)
    pk = km.pack(st, arch.dataflow, arch.array_rows, arch.array_cols)
    own = (None, None, 2, np.zeros(0), None, None)          # the scoring code, no order search
    plan = KernelPlan(layer=layer, arch=arch, packed=pk, columns=dict(km.columns(pk.L)), tables=st,
                      leak_rates_pj_per_cycle=leak_rates_pj_per_cycle(arch),
                      leak_pj_per_cycle_instance=leak_rates_pj_per_cycle(arch, utilized=True), leaks=arch.leaks,
                      vector=any(lv.vector_words > 1 for lv in arch.levels), own_orders=own)
    with _plans_lock:
        _plans[key] = plan
        _plans.move_to_end(key)
        while len(_plans) > KERNEL_CACHE_SIZE:
            _plans.popitem(last=False)
    return plan


def cached_plans() -> int:
    """How many plans the cache holds (at most :data:`KERNEL_CACHE_SIZE`)."""
    with _plans_lock:
        return len(_plans)


def live_dims(sizes: np.ndarray, batch: MappingBatch, block: int = BLOCK_ROWS) -> np.ndarray:
    """``(B, D)``: per row, the dimensions the numpy path keeps in that row's block of
    ``block`` rows (:func:`evaluators.loopnest.reference.dropped_dims`; the lower
    bound's rules depend on which axes remain)."""
    B = len(batch)
    live = np.ones((B, len(sizes)), dtype=bool)
    for i in range(0, B, block):
        j = min(i + block, B)
        live[i:j] = ~dropped_dims(sizes, batch_rows(batch, i, j))
    return live


@dataclass(frozen=True)
class LeastRequest:
    """What :meth:`evaluators.loopnest.LoopNestCost.least_lower_bound` asks of the kernel:
    every combination of one of ``candidates`` (``(K, D)`` int64 orders) per level of
    ``levels``, the least ``objective`` per row into ``best`` and the combination's index
    into ``choice`` (both ``(B,)``, filled in place)."""

    levels: np.ndarray
    candidates: np.ndarray
    objective: str
    best: np.ndarray
    choice: np.ndarray


def evaluate_compiled(plan: KernelPlan, batch: MappingBatch, known: int | None = None,
                      stationary: int | None = None, irrelevant_tile: Any = None,
                      least: LeastRequest | None = None,
                      conv: Conventions = DEFAULT_CONVENTIONS) -> LoopNestResult | None:
    """:func:`evaluators.loopnest.evaluate_batch` through the compiled kernel; with
    ``known``, the lower bound of :meth:`evaluators.loopnest.LoopNestCost.lower_bound`
    (the kernel's copy of :func:`evaluators.loopnest.bounds.bound_hook`); with ``least``
    (and ``known``), :meth:`~evaluators.loopnest.LoopNestCost.least_lower_bound`: the
    kernel fills ``least.best`` and ``least.choice`` and no other figure, and the result
    is ``None``. ``conv``: the counting conventions (for a bound, the relaxed ones the
    bound is computed under: :func:`evaluators.loopnest.bounds_conventions.relaxed_conventions`;
    the kernel then bounds a MAC's reads on change by
    :func:`evaluators.loopnest.kernel_bounds.mac_change_fill`, and with leakage on the
    utilized instances ranks combinations by one instance's rate times the active
    instances). The caller has checked :func:`kernel_available` (the plan needs it)."""
    pk = plan.packed
    T = np.ascontiguousarray(batch.temporal, dtype=np.int64)
    B = T.shape[0]
    if T.ndim != 3 or T.shape[1:] != (pk.L, pk.D):
        raise ValueError(f"batch of shape {T.shape}: expected (B, {pk.L}, {pk.D}) for {plan.layer.name!r} on "
                         f"{plan.arch.name!r}")
    lean = least is not None
    n_l = 12 * pk.L                                           # the per-level columns (kernel.columns)
    out_l = np.empty((0 if lean else B, n_l))                # lean: the kernel writes no figure
    out_s = np.empty((pk.n_fields - n_l, 0 if lean else B))
    valid = np.empty(B, dtype=bool)
    bound = known is not None
    b = int(known) - 1 if bound else -1
    irr = _NO_IRR if irrelevant_tile is None else np.ascontiguousarray(irrelevant_tile, dtype=np.float64)
    live = live_dims(pk.dims_i[6], batch) if bound else None
    # scoring: the variant without the order search (None); the bound: the one compiled
    # for the least-bound requests too, with no candidates
    utilized = conv.leakage == "utilized_instances"
    orders = (plan.own_orders if not bound else _NO_ORDERS) if least is None else (
        least.candidates, least.levels, _OBJECTIVE_CODE[least.objective],
        plan.leak_pj_per_cycle_instance if utilized else plan.leak_rates_pj_per_cycle, least.best, least.choice)
    km = _kernel_state["module"]
    shaped = not bound and least is None and B >= SHAPED_MIN_ROWS
    rows = km.shaped_rows(pk.L, pk.D, pk.A) if shaped else km.evaluate_rows
    bad = rows(
        T, np.ascontiguousarray(batch.spatial_x, dtype=np.int64),
        np.ascontiguousarray(batch.spatial_y, dtype=np.int64), np.ascontiguousarray(batch.order, dtype=np.int64),
        np.ascontiguousarray(batch.keep, dtype=np.bool_), pk.axes_i, pk.axes_f, pk.dims_i, pk.lv_i,
        pk.lv_f, pk.sc, _convention_codes(conv), out_l, out_s, valid, b,
        0 if stationary is None else int(stationary), irr, live, *orders)
    if bad:
        raise ValueError("a fold cannot use more rows/cols than the array has")
    if lean:
        return None
    return _layout(plan, batch, out_l, out_s, valid, utilized)


def _layout(plan: KernelPlan, batch: MappingBatch, out_l: np.ndarray, out_s: np.ndarray, valid: np.ndarray,
            utilized: bool = False) -> LoopNestResult:
    """The kernel's ``(B, 12 L)`` per-level and ``(7, B)`` scalar blocks as a
    :class:`LoopNestResult` (views), with the whole-vector energy and the leakage (of
    every instance, or with ``utilized`` of the active ones) that the kernel leaves to
    the numpy arithmetic."""
    cols, L, B = plan.columns, plan.packed.L, out_l.shape[0]
    n_l = out_l.shape[1]

    def block(name: str) -> Any:                              # (B, width) view
        at, width = cols[name]
        return out_l[:, at:at + width]

    def scalar(name: str) -> Any:                             # (B,) contiguous view
        return out_s[cols[name][0] - n_l]

    latency = scalar("latency_cycles")
    dynamic = kernel_energy = scalar("energy_pj")
    reads, writes = block("reads").reshape(B, L, 3), block("writes").reshape(B, L, 3)
    level_energy = block("level_energy_pj")
    noc = block("noc_words")
    macs = scalar("macs_executed")
    vectors = inst = parts = None
    split = plan.tables.split_bandwidth
    if plan.vector or (utilized and plan.leaks) or split:
        sp = (batch.spatial_x * batch.spatial_y).prod(axis=2).astype(float)           # (B, L)
        inst = active_instances(np, np.ascontiguousarray(sp.T))                        # (L, B)
    if plan.vector or split:
        R = np.ascontiguousarray(np.moveaxis(reads, 0, -1))
        Wr = np.ascontiguousarray(np.moveaxis(writes, 0, -1))
    if split:
        # the additive terms of the kernel's bandwidth cycles (their maximum), by the numpy
        # model's arithmetic on the kernel's counts
        parts = np.moveaxis(bandwidth_cycles(np, plan.tables, R, Wr, inst)[1], -1, 0)
    if plan.vector:
        # whole-vector accesses: the numpy model's arithmetic on the kernel's counts
        le, dynamic, vectors = access_energy(np, plan.tables, R, Wr,
                                             np.ascontiguousarray(noc.T), inst, macs)
        level_energy = le.T
    if plan.leaks:
        if utilized:
            leak, energy = add_leakage(np, plan.leak_pj_per_cycle_instance, latency, dynamic, inst)
        else:
            leak, energy = add_leakage(np, plan.leak_rates_pj_per_cycle, latency, dynamic)
        leak = leak.T
    else:
        leak, energy = np.zeros((B, L)), dynamic
    edp = scalar("edp") if energy is kernel_energy else energy * latency
    return LoopNestResult(
        energy_pj=energy, latency_cycles=latency, leakage_energy_pj=leak,
        compute_cycles=scalar("compute_cycles"), edp=edp, utilization=scalar("utilization"),
        macs_executed=macs, valid=valid, reads=reads, writes=writes, noc_words=noc,
        bandwidth_cycles=block("bandwidth_cycles"), bandwidth_parts=parts, level_energy_pj=level_energy,
        mac_energy_pj=scalar("mac_energy_pj"), tile_words=block("tile_words").reshape(B, L, 3),
        read_vectors=None if vectors is None else np.moveaxis(vectors[0], -1, 0),
        write_vectors=None if vectors is None else np.moveaxis(vectors[1], -1, 0),
    )
