"""Software schedules of a computation on an intrinsic accelerator, and their search.

HASCO's software side (github.com/pku-liang/HASCO, ``src/codesign/flextensor_extend.py``,
``gen_schedules``: FlexTensor's schedule space and its heuristic + Q-learning search in
``src/flextensor/``) for one (hardware point, computation):
the intrinsic fixes what the array does -- which computation loops go on its rows and
columns and which one streams through the PEs (:class:`~mappers.tensor_ir.Partition`
x :data:`accelerators.intrinsic.DATAFLOWS`) -- and the software decides everything
outside it.

The schedule space (:class:`ScheduleProblem`, a :class:`~design_space.DesignSpace`):

* ``partition`` -- which HW/SW partition (the choices :func:`mappers.tensor_ir.match`
  enumerates; a categorical of their keys);
* ``stream_<l>`` -- how many iterations of loop ``l`` one intrinsic call streams through
  the PEs (only for loops the partition puts on the intrinsic's stream index; else 1);
* ``acc_<l>``, ``sp_<l>`` -- tiling ("splitting" in TVM/FlexTensor terms): loop ``l``'s
  factor in the accumulator-resident tile and in the scratchpad-resident tile; what is
  left of the extent, rounded up, is the DRAM-level loop (so tiles need not divide the
  extent: edge tiles are padded). Factors come from :func:`tile_candidates` (divisors
  and repeated halvings);
* ``order_acc``, ``order_sp``, ``order_dram`` -- reorder: the loop order at each level;
* ``double_buffer`` -- the DMA/compute overlap ("parallel" in HASCO/FlexTensor terms on
  an accelerator with one compute unit): with it, transfers overlap compute but every
  tile must fit in half of its buffer; without it, DMA and compute alternate.

The spatial factors are fixed by the partition: ``min(pe_y, extent)`` on the loop mapped
to the intrinsic's row index, ``min(pe_x, extent)`` on its column index ("vectorize" is
the intrinsic itself). Known constraints (vectorized): factors of a loop multiply to at
most its extent, stream factors only on stream loops, tiles fit the buffers.

Scoring (:meth:`ScheduleProblem.evaluate`): the schedule is a
:class:`~mappers.mapping.MappingBatch` on the intrinsic array's lowered architecture
(:meth:`IntrinsicAccelerator.to_arch <accelerators.intrinsic.IntrinsicAccelerator.to_arch>`:
levels REG, ACC, SP, DRAM), scored by the cost function the caller hands in (the
loop-nest model, :func:`evaluators.loopnest.evaluate_batch`: exact access counts,
systolic fold time for GEMM); latency = ``max(compute, on-chip bandwidth cycles) + DRAM
cycles`` without double buffering, ``max(all)`` with it.

Searches (:func:`search_schedule`), at an equal budget of evaluated schedules:

* ``default`` -- :func:`default_schedule` only (what a compiler without search emits);
* ``random`` -- the budget as feasible samples, scored in one batch;
* ``heuristic`` -- FlexTensor's heuristic as HASCO runs it: random warm-up, then
  repeatedly pick a start among the visited points (SA-like acceptance ``exp(-0.5 (v -
  best) / best)``), evaluate its whole neighbourhood (one vectorized batch: a "full
  walk"), keep everything that improves as new candidate starts, retire the start when
  nothing around it does (a local minimum);
* any ask/tell search strategy, its factory handed in (``factory=``; the study layer hands
  down every optimizer's, :class:`experiments.inner_search.OptimizerSearch`) or a name
  registered in :data:`mappers.searches.SEARCHES`: ``qlearning`` is HASCO's FlexTensor Q-learning:
  tabular Q over moves to neighbouring schedules,
  :class:`optimizer.qlearning.QLearning`), after the same random warm-up as the
  heuristic, episodes restarting at the best point with probability 0.8; ``qnetwork`` is
  FlexTensor's Q-network walk (:class:`optimizer.qnetwork.QNetwork`), given the
  schedule's features (:meth:`ScheduleProblem.features`: tile sizes, loop order as far
  as it matters, utilization, padding, buffer occupancy), its equivalence of schedules
  (:meth:`ScheduleProblem.state_keys`) and, besides the one-parameter moves,
  FlexTensor's split moves (:meth:`ScheduleProblem.transfers`: one prime factor of a
  loop's split moved from one level to another, the product kept).

The space's ``repair`` (:meth:`DesignSpace.neighbors <design_space.DesignSpace.neighbors>`)
shrinks tile factors that no longer fit after a move to another partition, so local
searches can cross partitions.

The oracle (:func:`exact_reference`): the exact mapper (:mod:`mappers.exact`) on the same
lowered architecture bounds every schedule that pads nothing from below, and where its
best mapping is a schedule of the space that bound is the optimum; a search's result is
reported as a ratio to it.

:class:`ScheduleMapper` is the :class:`~mappers.base.Mapper` of a whole computation:
every decomposition of a computation with more than two inputs into two-input stages is
tried (:func:`mappers.tensor_ir.decompositions`), each stage's schedule searched, stage
latencies and energies added, and the best decomposition kept. Searches are memoized per
(architecture, stage shape, search, budget, seed): the layers of a network that share a
shape are searched once.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelerators.arch import ArchSpec
from accelerators.intrinsic import ROLE_OF, roles_of
from design_space import Categorical, Constraint, DesignSpace, Fixed, Ordinal, Permutation
from design_space.trials import Objective, Trial, TrialStatus
from mappers.base import CostFunction, MappingResult, NoLegalMapping, ProofScope, check_objective
from mappers.mapping import MappingBatch
from mappers.mapping_space import divisors, prime_factors
from mappers.searches import search_factory
from mappers.tensor_ir import (
    Computation,
    Partition,
    decompositions,
    explain_no_match,
    intrinsic,
    match,
)

__all__ = ["EXACT_REFERENCE_MAX_NODES", "SCHEDULE_SEARCHES", "SEARCH_CACHE", "ExactReference", "ScheduleMapper",
           "ScheduleProblem", "ScheduleResult", "default_schedule", "exact_reference", "heuristic_schedule",
           "random_schedule", "schedule_of", "schedule_result", "search_curves", "search_schedule", "tile_candidates"]

SCHEDULE_SEARCHES = ("default", "random", "heuristic")
"""The searches built in here; any other name is an ask/tell strategy (its ``factory``
handed in, or registered in :data:`mappers.searches.SEARCHES`)."""


def tile_candidates(extent: int) -> list[int]:
    """Tile factors offered for a loop of ``extent``: its divisors (exact tilings) and
    ``ceil(extent / 2^j)`` (halvings with a padded edge tile) -- roughly geometric, so a
    one-step move changes a tile by a factor of about two."""
    if isinstance(extent, bool) or not isinstance(extent, int | np.integer) or extent < 1:
        raise ValueError(f"extent must be a positive integer, got {extent!r}")
    vals = set(divisors(int(extent)))
    e = int(extent)
    while e > 1:
        vals.add(e)
        e = -(-e // 2)
    vals.add(1)
    return sorted(vals)


def _perm_rows(col: Any, loops: Sequence[str], dims: Sequence[str]) -> np.ndarray:
    """A column of permutations of ``loops`` -> (n, D) dimension-index rows (unlisted
    dimensions appended in canonical order)."""
    n = len(col)
    rest = [dims.index(d) for d in dims if d not in loops]
    cache: dict[tuple, np.ndarray] = {}
    out = np.empty((n, len(dims)), dtype=np.int64)
    for r, perm in enumerate(col):
        key = tuple(perm)
        row = cache.get(key)
        if row is None:
            row = cache[key] = np.array([dims.index(d) for d in key] + rest, dtype=np.int64)
        out[r] = row
    return out


@dataclass(frozen=True)
class ScheduleResult:
    """The best schedule found and its metrics; ``history`` is the best latency after
    each evaluation (inf while nothing legal was seen)."""

    point: dict[str, Any]
    latency_cycles: float
    energy_pj: float
    compute_cycles: float
    dram_words: float
    evaluated: int
    history: tuple[float, ...]
    partition: str


class ScheduleProblem:
    """The schedule space of ``computation`` on an intrinsic array and its vectorized scorer.

    Args:
        computation: a two-input computation (a stage; see
            :func:`mappers.tensor_ir.decompositions`).
        arch: the intrinsic array's lowered architecture (``arch.intrinsic`` set; levels
            ``REG``, ``ACC`` with the PE-array fanout, ``SP``, ``DRAM``).
        cost: the cost function (:data:`mappers.base.CostFunction`); its results must also
            carry ``compute_cycles``, ``bandwidth_cycles`` (per level), ``reads`` and
            ``writes`` (per level and operand), as :class:`evaluators.loopnest.LoopNestResult`
            does.
        partitions: the partitions to choose from (default: every match of the
            architecture's intrinsic).

    Raises:
        ValueError: the computation has no partition onto the intrinsic (the message
            names the computation and the intrinsic), or is not a two-input stage.
    """

    def __init__(self, computation: Computation, arch: ArchSpec, cost: CostFunction,
                 partitions: Sequence[Partition] | None = None) -> None:
        if len(computation.inputs) != 2:
            raise ValueError(f"computation {computation.name!r} has {len(computation.inputs)} inputs; "
                             "schedule one two-input stage at a time (mappers.tensor_ir.decompositions)")
        roles = roles_of(arch)
        self.comp, self.arch, self.cost = computation, arch, cost
        self.kind = arch.intrinsic
        self.parts = list(partitions) if partitions is not None else match(computation, intrinsic(self.kind))
        if not self.parts:
            raise ValueError(explain_no_match(computation, intrinsic(self.kind)))
        self.pe_x, self.pe_y = arch.array_cols, arch.array_rows
        self.acc_words = arch.levels[arch.level_index("ACC")].capacity_of("O")
        self.sp_words = arch.levels[arch.level_index("SP")].capacity_of("W")
        self.dims = list(computation.loops)
        self.extent = np.array([computation.loops[d] for d in self.dims], dtype=np.int64)
        self.loops = [d for d in self.dims if computation.loops[d] > 1]
        P, D = len(self.parts), len(self.dims)
        self.spatial_x = np.ones((P, D), dtype=np.int64)
        self.spatial_y = np.ones((P, D), dtype=np.int64)
        self.stream_ok = np.zeros((P, D), dtype=bool)
        groups: dict[tuple[str, str], int] = {}
        self.group = np.zeros(P, dtype=np.int64)
        for p, part in enumerate(self.parts):
            lo = part.loop_of
            ry, cx = self.dims.index(lo[roles.rows]), self.dims.index(lo[roles.cols])
            self.spatial_y[p, ry] = min(self.pe_y, int(self.extent[ry]))
            self.spatial_x[p, cx] = min(self.pe_x, int(self.extent[cx]))
            for s in roles.stream:
                self.stream_ok[p, self.dims.index(lo[s])] = True
            key = (part.operand_of("a"), part.operand_of("b"))
            self.group[p] = groups.setdefault(key, len(groups))
        self.layers = [computation.to_layer(a, b) for (a, b) in groups]
        self.keys = [p.key for p in self.parts]
        self._key_index = {k: i for i, k in enumerate(self.keys)}
        self.stationary = ROLE_OF[roles.stationary]
        self.cands = {d: np.array(tile_candidates(int(computation.loops[d])), dtype=np.int64)
                      for d in self.loops}
        self.stream_loops = [d for d in self.loops if self.stream_ok[:, self.dims.index(d)].any()]
        self.space = self._build_space()
        self._cand_set = {d: set(self.cands[d].tolist()) for d in self.loops}
        self._transfer_actions: tuple[tuple[str, str, str, str, int], ...] | None = None

    # -- the space ----------------------------------------------------------------------
    def _build_space(self) -> DesignSpace:
        params: list[Any] = []
        if len(self.parts) > 1:
            params.append(Categorical("partition", self.keys))
        else:
            params.append(Fixed("partition", self.keys[0]))
        for d in self.loops:
            c = self.cands[d].tolist()
            if d in self.stream_loops:
                params.append(Ordinal(f"stream_{d}", c))
            params.append(Ordinal(f"acc_{d}", c))
            params.append(Ordinal(f"sp_{d}", c))
        if len(self.loops) > 1:
            for lv in ("acc", "sp", "dram"):
                params.append(Permutation(f"order_{lv}", self.loops))
        params.append(Categorical("double_buffer", [True, False]))
        cons = [Constraint(f"fits_{d}", lambda p, d=d: self._fits(p, d)) for d in self.loops]
        cons.append(Constraint("capacity_SP", lambda p: self._capacity(p, "SP")))
        cons.append(Constraint("capacity_ACC", lambda p: self._capacity(p, "ACC")))
        return DesignSpace(*params, constraints=cons,
                           name=f"schedules({self.comp.name} on {self.arch.name})",
                           proposal=self._propose, repair=self._repair)

    def _repair(self, points: Sequence[Mapping[str, Any]]) -> list[dict[str, Any] | None]:
        """Schedules that violate a constraint made legal where a small change does it
        (the space's ``repair``, used by its neighbours, so that a move to another
        partition is not lost because the tiles no longer fit): stream factors off the
        partition's stream loops become 1, then each loop's factors are shrunk, scratchpad
        first, then accumulator, then stream, to the largest candidates whose product fits
        the extent beside the partition's spatial factor; if the tiles then overflow a
        buffer with double buffering, it is switched off. ``None`` where the fit cannot be
        repaired."""
        out = [self._repair_fit(p) for p in points]
        live = [i for i, p in enumerate(out) if p is not None and p.get("double_buffer", False)]
        if live:
            ok = self.space.feasible_mask([out[i] for i in live])
            for i, good in zip(live, ok):
                if not good:
                    out[i]["double_buffer"] = False  # type: ignore[index]
        return out

    def _repair_fit(self, point: Mapping[str, Any]) -> dict[str, Any] | None:
        p = dict(point)
        pi = self._key_index.get(p["partition"], 0) if len(self.parts) > 1 else 0
        for d in self.loops:
            j = self.dims.index(d)
            left = int(self.extent[j]) // int(self.spatial_x[pi, j] * self.spatial_y[pi, j])
            names = ([f"stream_{d}"] if d in self.stream_loops else []) + [f"acc_{d}", f"sp_{d}"]
            if d in self.stream_loops and not self.stream_ok[pi, j]:
                p[f"stream_{d}"] = 1
            prod = math.prod(int(p[n]) for n in names)
            for name in reversed(names):
                if prod <= left:
                    break
                others = prod // int(p[name])
                cand = self.cands[d]
                v = int(cand[max(int(np.searchsorted(cand, max(left // others, 1), side="right")) - 1, 0)])
                p[name] = v
                prod = others * v
            if prod > left:
                return None
        return p

    def _pidx(self, p: Mapping[str, Any]) -> np.ndarray:
        col = p["partition"]
        if len(self.parts) == 1:
            return np.zeros(len(np.atleast_1d(col)), dtype=np.int64)
        return np.array([self._key_index[k] for k in np.atleast_1d(col)], dtype=np.int64)

    def _col(self, p: Mapping[str, Any], name: str, n: int) -> np.ndarray:
        return np.asarray(p[name], dtype=np.int64) if name in p else np.ones(n, dtype=np.int64)

    def _fits(self, p: Mapping[str, Any], d: str) -> np.ndarray:
        pi = self._pidx(p)
        n = len(pi)
        j = self.dims.index(d)
        stream = self._col(p, f"stream_{d}", n)
        inner = self.spatial_x[pi, j] * self.spatial_y[pi, j] * stream * self._col(p, f"acc_{d}", n) \
            * self._col(p, f"sp_{d}", n)
        return (inner <= self.extent[j]) & ((stream == 1) | self.stream_ok[pi, j])

    def _tiles(self, p: Mapping[str, Any], upto: str) -> dict[str, np.ndarray]:
        """Per-dimension tile extents at level ``upto`` (``"ACC"`` or ``"SP"``)."""
        pi = self._pidx(p)
        n = len(pi)
        out = {}
        for j, d in enumerate(self.dims):
            e = self.spatial_x[pi, j] * self.spatial_y[pi, j]
            if d in self.loops:
                e = e * self._col(p, f"stream_{d}", n) * self._col(p, f"acc_{d}", n)
                if upto == "SP":
                    e = e * self._col(p, f"sp_{d}", n)
            out[d] = e
        return out

    def _words(self, operand: Any, ext: Mapping[str, np.ndarray]) -> np.ndarray:
        w: Any = 1
        for axis in operand.axes:
            w = w * (1 + sum(int(c) * (ext[lp] - 1) for lp, c in axis))
        return np.asarray(w)

    def _capacity(self, p: Mapping[str, Any], level: str) -> np.ndarray:
        n = len(self._pidx(p))
        db = np.asarray(p["double_buffer"], dtype=bool) if "double_buffer" in p else np.ones(n, dtype=bool)
        mult = np.where(db, 2, 1)
        ext = self._tiles(p, level)
        if level == "ACC":
            return self._words(self.comp.output, ext) * mult <= self.acc_words
        w = sum(self._words(op, ext) for op in self.comp.inputs)
        return w * mult <= self.sp_words

    def _propose(self, n: int, rng: np.random.Generator) -> dict[str, Any]:
        """Candidates with the loop-product constraints true by construction: per loop,
        the stream, accumulator and scratchpad factors are drawn (in a random order of
        the three) uniformly among the candidates that still fit the extent."""
        cols: dict[str, Any] = {}
        P = len(self.parts)
        pi = rng.integers(0, P, size=n)
        cols["partition"] = np.array([self.keys[i] for i in pi], dtype=object)
        for d in self.loops:
            j = self.dims.index(d)
            cand = self.cands[d]
            left = self.extent[j] // (self.spatial_x[pi, j] * self.spatial_y[pi, j])
            names = ([f"stream_{d}"] if d in self.stream_loops else []) + [f"acc_{d}", f"sp_{d}"]
            for k in rng.permutation(len(names)):
                name = names[k]
                if name.startswith("stream_"):
                    ok = self.stream_ok[pi, j]
                    bound = np.where(ok, left, 1)
                else:
                    bound = left
                count = np.searchsorted(cand, bound, side="right")
                pick = cand[np.minimum((rng.random(n) * count).astype(np.int64), np.maximum(count - 1, 0))]
                cols[name] = pick
                left = left // pick
        if len(self.loops) > 1:
            arr = np.array(self.loops, dtype=object)
            for lv in ("acc", "sp", "dram"):
                perm = np.argsort(rng.random((n, len(self.loops))), axis=1)
                col = np.empty(n, dtype=object)
                col[:] = [tuple(r) for r in arr[perm]]
                cols[f"order_{lv}"] = col
        cols["double_buffer"] = rng.random(n) < 0.5
        return cols

    # -- scoring ------------------------------------------------------------------------
    def batch(self, cols: Mapping[str, Any], rows: np.ndarray | None = None) -> MappingBatch:
        """Schedules (columns) -> a mapping batch on the accelerator's four levels."""
        pi = self._pidx(cols)
        n = len(pi)
        if rows is None:
            rows = np.arange(n)
        pi = pi[rows]
        m, D = len(rows), len(self.dims)
        T = np.ones((m, 4, D), dtype=np.int64)
        SX = np.ones((m, 4, D), dtype=np.int64)
        SY = np.ones((m, 4, D), dtype=np.int64)
        SX[:, 1, :] = self.spatial_x[pi]
        SY[:, 1, :] = self.spatial_y[pi]
        for d in self.loops:
            j = self.dims.index(d)
            if d in self.stream_loops:
                T[:, 0, j] = np.asarray(cols[f"stream_{d}"], dtype=np.int64)[rows]
            T[:, 1, j] = np.asarray(cols[f"acc_{d}"], dtype=np.int64)[rows]
            T[:, 2, j] = np.asarray(cols[f"sp_{d}"], dtype=np.int64)[rows]
        inner = (T * SX * SY).prod(axis=1)
        T[:, 3, :] = -(-self.extent[None, :] // inner)
        order = np.tile(np.arange(D, dtype=np.int64), (m, 4, 1))
        if len(self.loops) > 1:
            for li, lv in ((1, "acc"), (2, "sp"), (3, "dram")):
                order[:, li, :] = _perm_rows(np.asarray(cols[f"order_{lv}"], dtype=object)[rows], self.loops, self.dims)
        keep = np.zeros((m, 4, 3), dtype=bool)
        keep[:, 0, "WIO".index(self.stationary)] = True
        keep[:, 1, 2] = True
        keep[:, 2, 0] = keep[:, 2, 1] = True
        keep[:, 3, :] = True
        return MappingBatch(tuple(self.dims), T, SX, SY, order, keep)

    def evaluate(self, points: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Score schedules (a list of points or a column dict) in one vectorized pass:
        ``latency_cycles``, ``energy_pj``, ``compute_cycles``, ``dram_words``, ``valid``
        (``latency_cycles`` is ``inf`` where not valid)."""
        cols = self.space.columns(points, check=False) if not isinstance(points, Mapping) else points
        pi = self._pidx(cols)
        n = len(pi)
        out = {k: np.full(n, np.inf) for k in ("latency_cycles", "energy_pj", "compute_cycles", "dram_words")}
        out["valid"] = np.zeros(n, dtype=bool)
        db = np.asarray(cols.get("double_buffer", np.ones(n, dtype=bool)), dtype=bool)
        if n == 0:
            return out
        ok = np.ones(n, dtype=bool)
        for c in self.space.constraints:
            ok &= np.asarray(c.predicate(cols), dtype=bool)
        grp = self.group[pi]
        for g, layer in enumerate(self.layers):
            rows = np.flatnonzero((grp == g) & ok)
            if not len(rows):
                continue
            r = self.cost(layer, self.arch, self.batch(cols, rows))
            bw = np.asarray(r.bandwidth_cycles)                # (m, L)
            comp = np.asarray(r.compute_cycles, dtype=float)
            onchip = np.maximum(comp, bw[:, :3].max(axis=1))
            dram = bw[:, 3]
            lat = np.where(db[rows], np.maximum(onchip, dram), onchip + dram)
            valid = np.asarray(r.valid, dtype=bool)
            out["latency_cycles"][rows] = np.where(valid, lat, np.inf)
            out["energy_pj"][rows] = np.where(valid, np.asarray(r.energy_pj, dtype=float), np.inf)
            out["compute_cycles"][rows] = comp
            reads, writes = np.asarray(r.reads), np.asarray(r.writes)
            out["dram_words"][rows] = reads[:, 3, :].sum(axis=1) + writes[:, 3, :].sum(axis=1)
            out["valid"][rows] = valid
        return out

    def features(self, points: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> np.ndarray:
        """Schedule features for a learned search (:class:`optimizer.qnetwork.QNetwork`),
        ``(n, F)`` floats, one row per schedule; every column is a function of the
        mapping the schedule lowers to, so equal rows score equally (see
        :meth:`state_keys`):

        * per loop of extent > 1: ``log2`` of its factor at REG (the stream), ACC, SP and
          DRAM and of its spatial factor, each over ``log2(extent)`` (tile sizes);
        * per loop and level (ACC, SP, DRAM): its rank among the loops with a factor > 1 at
          that level, outermost 0, over the number of loops (``-1`` when its factor there
          is 1: its place changes nothing) -- the loop order as far as it matters;
        * the partition (one-hot, when there are several) and double buffering (0/1);
        * PE utilization of the partition (spatial factors / PEs), the padding overhead
          ``log2(padded iterations / iterations)``, and the ACC and SP occupancy (words
          held, doubled with double buffering, over the capacity).
        """
        cols = self.space.columns(points, check=False) if not isinstance(points, Mapping) else points
        b = self.batch(cols)
        n = len(b.temporal)
        if n == 0:
            return np.zeros((0, self.n_features))
        js = [self.dims.index(d) for d in self.loops]
        logE = np.log2(self.extent[js]).astype(float)
        T = b.temporal[:, :, js].astype(float)                             # (n, 4, l)
        S = (b.spatial_x[:, 1, js] * b.spatial_y[:, 1, js]).astype(float)  # (n, l)
        parts = [(np.log2(T) / logE).reshape(n, -1), np.log2(S) / logE]
        nl = len(js)
        if nl > 1:
            pos = np.argsort(b.order, axis=2)[:, :, js]                    # (n, 4, l): place of each loop
            for li in (1, 2, 3):
                act = T[:, li, :] > 1
                p = pos[:, li, :]
                before = (p[:, None, :] < p[:, :, None]) & act[:, None, :]
                parts.append(np.where(act, before.sum(axis=2) / nl, -1.0))
        pi = self._pidx(cols)
        if len(self.parts) > 1:
            parts.append(np.eye(len(self.parts))[pi])
        db = np.asarray(cols["double_buffer"], dtype=bool) if "double_buffer" in cols else np.ones(n, dtype=bool)
        parts.append(db[:, None].astype(float))
        spatial = (b.spatial_x[:, 1, :] * b.spatial_y[:, 1, :]).prod(axis=1)
        util = spatial / float(self.pe_x * self.pe_y)
        padded = (b.temporal.prod(axis=1) * b.spatial_x.prod(axis=1) * b.spatial_y.prod(axis=1)).astype(float)
        pad = np.log2(padded / self.extent[None, :]).sum(axis=1)
        mult = np.where(db, 2, 1)
        acc = self._words(self.comp.output, self._tiles(cols, "ACC")) * mult / self.acc_words
        sp = sum(self._words(op, self._tiles(cols, "SP")) for op in self.comp.inputs) * mult / self.sp_words
        parts.append(np.stack([util, pad, acc, sp], axis=1).astype(float))
        return np.hstack(parts)

    @property
    def n_features(self) -> int:
        """Columns of :meth:`features`."""
        nl = len(self.loops)
        return 5 * nl + (3 * nl if nl > 1 else 0) + (len(self.parts) if len(self.parts) > 1 else 0) + 1 + 4

    def state_keys(self, points: Sequence[Mapping[str, Any]]) -> list[bytes]:
        """A key per schedule that is equal for schedules lowering to the same mapping
        (they differ only in the order of loops whose factor at a level is 1): the bytes
        of its :meth:`features` row. A search that skips keys it has seen never spends
        an evaluation on a schedule that cannot score differently."""
        f = self.features(points)
        return [row.tobytes() for row in f]

    # -- FlexTensor's split moves ------------------------------------------------------
    def split_levels(self, d: str) -> tuple[str, ...]:
        """The levels of loop ``d``'s split, innermost first: ``stream`` (stream loops
        only), ``acc``, ``sp`` and ``dram`` (the implicit outer loop, ``ceil(extent /
        inner factors)``)."""
        return (("stream",) if d in self.stream_loops else ()) + ("acc", "sp", "dram")

    @property
    def transfer_actions(self) -> tuple[tuple[str, str, str, str, int], ...]:
        """FlexTensor's split moves as a fixed action list: ``("transfer", d, src, dst, p)``
        moves the prime factor ``p`` of loop ``d``'s split from level ``src`` to level
        ``dst`` (:meth:`split_levels`), one action per ordered pair of levels and prime
        of the loop's tile candidates (see :meth:`transfers`)."""
        if self._transfer_actions is None:
            acts = []
            for d in self.loops:
                primes = sorted({q for c in self.cands[d].tolist() for q in prime_factors(int(c))})
                lv = self.split_levels(d)
                acts += [("transfer", d, a, b, q) for a in lv for b in lv if a != b for q in primes]
            self._transfer_actions = tuple(acts)
        return self._transfer_actions

    def _dram_factor(self, point: Mapping[str, Any], d: str) -> int:
        pi = self._key_index.get(point["partition"], 0) if len(self.parts) > 1 else 0
        j = self.dims.index(d)
        inner = int(self.spatial_x[pi, j] * self.spatial_y[pi, j])
        for lv in self.split_levels(d)[:-1]:
            inner *= int(point[f"{lv}_{d}"])
        return -(-int(self.extent[j]) // inner)

    def transfer(self, point: Mapping[str, Any], action: Sequence[Any]) -> dict[str, Any] | None:
        """``point`` with the prime factor of ``action`` (``("transfer", d, src, dst, p)``)
        moved from level ``src`` of loop ``d``'s split to level ``dst``: the source factor
        is divided by ``p`` and the destination factor multiplied by it, so the product of
        the two is kept (the DRAM factor is implicit: taking ``p`` from it needs ``p`` to
        divide it, giving ``p`` to it leaves the outer loop ``p`` times longer). ``None``
        where ``p`` does not divide the source factor or a new factor is not one of the
        loop's tile candidates; the result is not checked against the buffers (see
        :meth:`transfers`)."""
        _, d, src, dst, q = action
        new = dict(point)
        if src == "dram":
            if self._dram_factor(point, d) % q:
                return None
        else:
            f = int(point[f"{src}_{d}"])
            if f % q or f // q not in self._cand_set[d]:
                return None
            new[f"{src}_{d}"] = f // q
        if dst != "dram":
            f = int(point[f"{dst}_{d}"]) * q
            if f not in self._cand_set[d]:
                return None
            new[f"{dst}_{d}"] = f
        return new

    def transfers(self, point: Mapping[str, Any]) -> list[tuple[tuple[str, str, str, str, int], dict[str, Any]]]:
        """The legal split moves from ``point``: ``[(action, neighbour)]`` for every action
        of :attr:`transfer_actions` whose :meth:`transfer` exists and is feasible (its
        tiles fit the buffers and the partition streams the loop it puts a factor on).

        These are FlexTensor's directions of a split sub-space (``SplitSpace`` in
        ``flextensor/space.py``, github.com/pku-liang/FlexTensor: a direction ``(i, j)``
        raises part ``i`` of a loop's split to the next value that divides the product of
        parts ``i`` and ``j`` and lowers part ``j`` to match). Here a move carries one
        prime factor, so every product-preserving exchange of one prime between two
        levels is a move of its own, and the factors stay among the tile candidates. A
        one-parameter move (:meth:`DesignSpace.neighbors
        <design_space.DesignSpace.neighbors>`) changes a level's factor alone and lets the
        DRAM loop absorb the change; it cannot move a factor between two on-chip levels
        without passing through the schedule in between, which may be worse."""
        out = []
        for a in self.transfer_actions:
            m = self.transfer(point, a)
            if m is not None:
                out.append((a, m))
        if not out:
            return []
        ok = self.space.feasible_mask([m for _, m in out])
        return [(a, self.space.normalize(m)) for (a, m), good in zip(out, ok) if good]

    def values(self, points: Sequence[Mapping[str, Any]], objective: str = "latency") -> list[float]:
        """The mapping objective (``latency``, ``energy`` or ``edp``) of each schedule,
        ``inf`` where it is not legal."""
        r = self.evaluate(points)
        lat, energy = r["latency_cycles"], r["energy_pj"]
        v = {"latency": lat, "energy": energy, "edp": lat * energy}[check_objective(objective)]
        return [float(x) for x in v]

    def sample(self, n: int, rng: Any) -> list[dict[str, Any]]:
        return self.space.sample(n, rng)


# --------------------------------------------------------------------------- searches


def default_schedule(problem: ScheduleProblem) -> dict[str, Any]:
    """A deterministic, untuned schedule (what a compiler without search would emit):
    the partition whose intrinsic call covers the most iterations (PEs used x the
    stream loop's extent, capped at 64; ties: the first), each stream loop's largest
    factor, then, loop by loop in nest order, the largest scratchpad tile that
    still fits (accumulator factors 1); canonical loop orders; double buffering on."""
    pr = problem
    util = (pr.spatial_x * pr.spatial_y).prod(axis=1) * np.where(
        pr.stream_ok, np.minimum(pr.extent[None, :], 64), 1).prod(axis=1)
    p_i = int(np.argmax(util))
    pt: dict[str, Any] = {"partition": pr.keys[p_i], "double_buffer": True}
    for d in pr.loops:
        if d in pr.stream_loops:
            pt[f"stream_{d}"] = 1
        pt[f"acc_{d}"] = 1
        pt[f"sp_{d}"] = 1
    if len(pr.loops) > 1:
        for lv in ("acc", "sp", "dram"):
            pt[f"order_{lv}"] = tuple(pr.loops)

    def ok(p: dict[str, Any]) -> bool:
        return bool(pr.space.feasible_mask([p])[0])

    for name in [f"stream_{d}" for d in pr.stream_loops] + [f"sp_{d}" for d in pr.loops]:
        d = name.split("_", 1)[1]
        for v in pr.cands[d][::-1]:
            trial = dict(pt, **{name: int(v)})
            if ok(trial):
                pt = trial
                break
    if not ok(pt):
        pt["double_buffer"] = False
    return pt


def schedule_result(problem: ScheduleProblem, points: list[dict[str, Any]], values: list[float],
                    budget: int) -> ScheduleResult:
    """The best of ``points`` by ``values`` (the search's objective) and its figures;
    ``history`` is the best value after each evaluation."""
    lat_arr = np.asarray(values[:budget], dtype=float)
    if not len(lat_arr) or not np.isfinite(lat_arr).any():
        raise NoLegalMapping(f"no legal schedule of {problem.comp.name!r} on {problem.arch.name} "
                             f"in {len(lat_arr)} evaluations")
    best = int(np.argmin(lat_arr))
    r = problem.evaluate([points[best]])
    hist = np.minimum.accumulate(lat_arr)
    return ScheduleResult(dict(points[best]), float(r["latency_cycles"][0]), float(r["energy_pj"][0]),
                          float(r["compute_cycles"][0]), float(r["dram_words"][0]), len(lat_arr),
                          tuple(float(h) for h in hist), str(points[best]["partition"]))


def random_schedule(problem: ScheduleProblem, budget: int, rng: np.random.Generator,
                    start: Sequence[Mapping[str, Any]] = (), objective: str = "latency") -> ScheduleResult:
    pts = [dict(p) for p in start][:budget]
    pts += problem.sample(budget - len(pts), rng)
    return schedule_result(problem, pts, problem.values(pts, objective), budget)


def _warmup(budget: int, warmup: int | None) -> int:
    return max(1, min(budget, warmup if warmup is not None else max(8, budget // 8)))


def heuristic_schedule(problem: ScheduleProblem, budget: int, rng: np.random.Generator,
                       start: Sequence[Mapping[str, Any]] = (), warmup: int | None = None,
                       objective: str = "latency") -> ScheduleResult:
    space = problem.space
    warmup = _warmup(budget, warmup)
    pts = [dict(p) for p in start][:budget]
    pts += problem.sample(max(warmup - len(pts), 0), rng)
    lat = problem.values(pts, objective)
    keys = [space.point_key(p) for p in pts]
    seen = set(keys)
    retired: set[int] = set()
    live = {i for i, v in enumerate(lat) if math.isfinite(v)}
    while len(lat) < budget and live:
        ranked = sorted(live, key=lambda i: lat[i])
        best = lat[ranked[0]]
        # SA-like choice of the start (FlexTensor): accept in order of value with
        # probability exp(-0.5 (v - best) / best)
        start = ranked[0]
        for i in ranked:
            if rng.random() < math.exp(-0.5 * (lat[i] - best) / max(best, 1e-12)):
                start = i
                break
        nbrs, nkeys = [], []
        for q in space.neighbors(pts[start]):
            k = space.point_key(q)
            if k not in seen:
                nbrs.append(q)
                nkeys.append(k)
        room = budget - len(lat)
        if len(nbrs) > room:
            pick = sorted(rng.choice(len(nbrs), size=room, replace=False).tolist())
            nbrs, nkeys = [nbrs[k] for k in pick], [nkeys[k] for k in pick]
        improved = False
        if nbrs:
            vals = problem.values(nbrs, objective)
            for q, k, v in zip(nbrs, nkeys, vals):
                seen.add(k)
                pts.append(q)
                keys.append(k)
                lat.append(v)
                if math.isfinite(v):
                    live.add(len(pts) - 1)
                    improved |= v < lat[start]
        if not improved:  # a local minimum (or nothing new around it): retire it
            retired.add(start)
            live.discard(start)
    while len(lat) < budget:  # everything retired: spend the rest on random samples
        extra = []
        for q in problem.sample(budget - len(lat), rng):
            k = space.point_key(q)
            if k not in seen:
                seen.add(k)
                extra.append(q)
        if not extra:
            break
        vals = problem.values(extra, objective)
        pts.extend(extra)
        lat.extend(vals)
    return schedule_result(problem, pts, lat, budget)


def ask_tell_schedule(problem: ScheduleProblem, search: str, budget: int, seed: int, rng: np.random.Generator,
                      start: Sequence[Mapping[str, Any]] = (), warmup: int | None = None,
                      objective: str = "latency", factory: Callable[..., Any] | None = None,
                      **options: Any) -> ScheduleResult:
    """An ask/tell search strategy over the schedule space (``factory``, or by name from
    :data:`mappers.searches.SEARCHES`), after the same random warm-up as the heuristic;
    invalid schedules are told as INFEASIBLE. For ``qlearning`` the episodes restart at
    the best point with probability ``restart_best`` (default 0.8), as HASCO runs
    FlexTensor's Q-learning. ``qnetwork`` gets the schedule's features and state keys,
    FlexTensor's split moves as extra actions (:meth:`ScheduleProblem.transfers`), its
    re-warm-up cadence (``parallel`` fresh samples about every fifth of the walk's rounds:
    FlexTensor's ``_q_schedule`` re-warms after each of its five trainings) and
    ``keep_starts`` (a start stays in the pool until its unseen moves are spent: in
    FlexTensor a start takes one move in every sub-space per round, here one network
    chooses one move per round, so a start needs several rounds for as many moves).
    ``options`` go to the strategy and override these."""
    if factory is None:
        factory = search_factory(search)
    if search == "qlearning":
        options = {"restart_best": 0.8, **options}
    elif search == "qnetwork":  # the schedule's features, equivalence of schedules and split moves
        rounds = max(1, (budget - _warmup(budget, warmup)) // (options.get("parallel", 8) * options.get("moves", 1)))
        options = {"features": problem.features, "state_key": problem.state_keys,
                   "extra_actions": problem.transfer_actions, "extra_moves": problem.transfers,
                   "rewarm_every": -(-rounds // 5), "keep_starts": True, **options}
    metric = "objective"
    opt = factory(problem.space, (Objective(metric, "min"),), seed, **options)
    pts = [dict(p) for p in start][:budget]
    pts += problem.sample(max(_warmup(budget, warmup) - len(pts), 0), rng)
    vals = problem.values(pts, objective)

    def trial(number: int, p: dict[str, Any], v: float) -> Trial:
        if math.isfinite(v):
            return Trial(number, p, TrialStatus.COMPLETE, {metric: v})
        return Trial(number, p, TrialStatus.INFEASIBLE, reason="invalid schedule")

    opt.tell([trial(i, p, v) for i, (p, v) in enumerate(zip(pts, vals))])
    for number in range(len(pts), budget):
        ask = opt.ask(1)
        if not ask:
            break
        v = problem.values(ask, objective)[0]
        pts.append(ask[0])
        vals.append(v)
        opt.tell([trial(number, ask[0], v)])
    return schedule_result(problem, pts, vals, budget)


def search_schedule(problem: ScheduleProblem, search: str = "heuristic", budget: int = 100,
                    seed: int = 0, options: Mapping[str, Any] | None = None, *,
                    start: Sequence[Mapping[str, Any]] = (), objective: str = "latency",
                    factory: Callable[..., Any] | None = None) -> ScheduleResult:
    """The best schedule ``search`` finds in ``budget`` evaluations.

    ``start``: schedules every search evaluates first (counted in the budget; e.g.
    ``[default_schedule(problem)]``). ``options``: search options (``warmup`` for the
    heuristic and ask/tell strategies, the strategy's own hyperparameters). ``factory``:
    an ask/tell strategy's factory (default: looked up by ``search``).

    Raises:
        ValueError: an unknown search, a budget < 1, or no legal schedule found
            (:class:`~mappers.base.NoLegalMapping`).
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    opts = dict(options or {})
    rng = np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(11,)))
    if search == "default":
        pt = default_schedule(problem)
        return schedule_result(problem, [pt], problem.values([pt], objective), 1)
    if search == "random":
        return random_schedule(problem, budget, rng, start, objective)
    if search == "heuristic":
        return heuristic_schedule(problem, budget, rng, start, objective=objective, **opts)
    return ask_tell_schedule(problem, search, budget, seed, rng, start, objective=objective, factory=factory,
                             **opts)


SEARCH_CACHE: OrderedDict[tuple, ScheduleResult] = OrderedDict()
"""Memo of the stage searches of :class:`ScheduleMapper` (see the module docstring)."""
CACHE_SIZE = 20000


def _cached_search(stage: Computation, arch: ArchSpec, cost: CostFunction, search: str, budget: int,
                   seed: int, seed_default: bool, objective: str, options: Mapping[str, Any],
                   factory: Callable[..., Any] | None) -> ScheduleResult:
    key = (repr(arch), stage.shape_key(), search, budget, seed, seed_default, objective,
           repr(sorted(options.items())), cost)
    hit = SEARCH_CACHE.get(key)
    if hit is not None:
        SEARCH_CACHE.move_to_end(key)
        return hit
    problem = ScheduleProblem(stage, arch, cost)
    start = [default_schedule(problem)] if seed_default and search != "default" else []
    res = search_schedule(problem, search, budget, seed, options, start=start, objective=objective,
                          factory=factory)
    SEARCH_CACHE[key] = res
    if len(SEARCH_CACHE) > CACHE_SIZE:
        SEARCH_CACHE.popitem(last=False)
    return res


@dataclass(frozen=True)
class ScheduleMapper:
    """HASCO's software search as a :class:`~mappers.base.Mapper` of one computation.

    Args:
        search: ``default``, ``random``, ``heuristic`` or an ask/tell strategy's name
            (``qlearning``: HASCO's).
        budget: schedules evaluated per stage.
        seed_default: evaluate :func:`default_schedule` first (counted in the budget).
        options: the search's options.
        fixed_seed: the searches' seed, used instead of the one ``map`` gets, so that a
            hardware point always gets the same software and stages shared between
            computations hit the cache (``None``: follow ``map``'s seed).
        factory: an ask/tell strategy's factory; by default looked up by ``search`` when
            the mapper is built (for names other than :data:`SCHEDULE_SEARCHES`).
    """

    search: str = "heuristic"
    budget: int = 60
    seed_default: bool = True
    options: Mapping[str, Any] = field(default_factory=dict)
    fixed_seed: int | None = 0
    factory: Callable[..., Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 1:
            raise ValueError(f"ScheduleMapper.budget must be a positive integer, got {self.budget!r}")
        if not isinstance(self.search, str) or not self.search:
            raise ValueError(f"ScheduleMapper.search must be a search name, got {self.search!r}")
        if self.factory is None and self.search not in SCHEDULE_SEARCHES:
            object.__setattr__(self, "factory", search_factory(self.search, "ScheduleMapper.search"))

    def map(self, layer: Computation, arch: ArchSpec, cost: CostFunction, objective: str = "latency", *,
            seed: int = 0) -> MappingResult:
        """The best decomposition of ``layer`` into stages, each with its best schedule.

        Raises:
            NoLegalMapping: no decomposition whose stages all have a partition onto the
                intrinsic, or a stage without a legal schedule.
        """
        t0 = time.perf_counter()
        check_objective(objective)
        s = self.fixed_seed if self.fixed_seed is not None else seed
        best: tuple[float, list[ScheduleResult]] | None = None
        for stages in decompositions(layer):
            if not all(match(st, intrinsic(arch.intrinsic)) for st in stages):
                continue
            results = [_cached_search(st, arch, cost, self.search, self.budget, s, self.seed_default,
                                      objective, dict(self.options), self.factory) for st in stages]
            lat = sum(r.latency_cycles for r in results)
            energy = sum(r.energy_pj for r in results)
            value = {"latency": lat, "energy": energy, "edp": lat * energy}[objective]
            if best is None or value < best[0]:
                best = (value, results)
        if best is None:
            intr = intrinsic(arch.intrinsic)
            why = "; ".join(explain_no_match(st, intr) for st in decompositions(layer)[0] if not match(st, intr))
            raise NoLegalMapping(f"{layer.name!r} ({layer.kind}) has no partition onto the "
                                 f"{arch.intrinsic} intrinsic: {why}")
        results = best[1]
        lat = sum(r.latency_cycles for r in results)
        energy = sum(r.energy_pj for r in results)
        macs = layer.macs
        return MappingResult(
            None, None, float(energy), float(lat), float(energy * lat),
            macs / (lat * arch.array_rows * arch.array_cols) if lat else 0.0,
            sum(r.evaluated for r in results), time.perf_counter() - t0,
            history=results[0].history if len(results) == 1 else (),
            info={"partitions": [r.partition for r in results],
                  "schedules": [{k: (list(v) if isinstance(v, tuple) else v) for k, v in r.point.items()}
                                for r in results]})


def search_curves(problem: ScheduleProblem, searches: Sequence[str], budget: int,
                  seeds: Sequence[int], factories: Mapping[str, Callable[..., Any]] | None = None,
                  ) -> dict[str, np.ndarray]:
    """Best latency after each evaluation, per search, ``(seeds, budget)`` arrays (the
    software-search convergence of one two-input computation; no default seed point).
    ``factories``: search name -> ask/tell strategy factory, for the searches that are
    not :data:`SCHEDULE_SEARCHES` (e.g. :func:`experiments.inner_search.optimizer_searches`)."""
    factories = factories or {}
    out = {}
    for m in searches:
        rows = []
        for s in seeds:
            h = np.asarray(search_schedule(problem, m, budget, s, factory=factories.get(m)).history,
                           dtype=float)
            rows.append(np.pad(h, (0, budget - len(h)), mode="edge"))
        out[m] = np.array(rows)
    return out


# --------------------------------------------------------------------------- the oracle


@dataclass(frozen=True)
class ExactReference:
    """What the exact mapper (:class:`mappers.exact.ExactMapper`) says about a schedule
    space (:func:`exact_reference`).

    Attributes:
        bound: no schedule without padded tiles is faster (cycles): the exact minimum
            over the relaxed mapping space, or, where a search hit its effort limit, the
            lower bound it proved.
        proved: every operand group's search finished (``bound`` is that space's optimum).
        mapping_latency: the fastest mapping the exact mapper found (cycles).
        schedule: that mapping as a schedule of this space, where it is one (``None``
            where it puts a loop on the array, or streams one, that the partitions do
            not, or uses a tile factor the space does not offer).
        schedule_latency: the schedule's latency here (``inf`` without one).
        attained: ``proved`` and the schedule scores ``bound``: the bound is the optimum
            of every schedule without padding (of the whole space where ``padded`` is false).
        padded: the space holds schedules with padded tiles (a tile factor or a
            partition's spatial factor that does not divide its loop), which the exact
            mapper's divisor tilings do not cover and which may beat ``bound``.
        seconds: wall time of the exact searches.
        scope: the space ``bound`` and ``proved`` cover (the exact mapper's
            :class:`~mappers.base.ProofScope`: divisor tilings, no bypass choices, the
            cost model's accounting), of the fastest operand group's search.
    """

    bound: float
    proved: bool
    mapping_latency: float
    schedule: dict[str, Any] | None
    schedule_latency: float
    attained: bool
    padded: bool
    seconds: float
    scope: ProofScope | None = None


def schedule_of(problem: ScheduleProblem, batch: MappingBatch, group: int) -> dict[str, Any] | None:
    """The first row of ``batch`` (a mapping of ``problem.layers[group]`` on
    ``problem.arch``) as a schedule of ``problem``, or ``None`` where it is not one: its
    array factors must be those of a partition of that operand group (one loop per array
    axis, ``min(PEs, extent)`` of it), its PE-level loops that partition's stream loops,
    and its factors candidates of the space. Double buffering is kept where the tiles
    fit twice."""
    pr = problem
    names = list(batch.dims)
    idx = np.array([names.index(d) for d in pr.dims])
    T = batch.temporal[0][:, idx]
    SX, SY = batch.spatial_x[0][:, idx], batch.spatial_y[0][:, idx]
    others = [li for li in range(len(T)) if li != 1]
    if (SX[others] != 1).any() or (SY[others] != 1).any():
        return None
    for p in np.flatnonzero(pr.group == group):
        if (SX[1] != pr.spatial_x[p]).any() or (SY[1] != pr.spatial_y[p]).any():
            continue
        if ((T[0] > 1) & ~pr.stream_ok[p]).any():
            continue
        pt: dict[str, Any] = {"partition": pr.keys[p]}
        ok = True
        for d in pr.loops:
            j = pr.dims.index(d)
            vals = {"acc": int(T[1, j]), "sp": int(T[2, j])}
            if d in pr.stream_loops:
                vals["stream"] = int(T[0, j])
            for k, v in vals.items():
                if v not in pr.cands[d]:
                    ok = False
                pt[f"{k}_{d}"] = v
        if not ok:
            continue
        if len(pr.loops) > 1:
            for li, lv in ((1, "acc"), (2, "sp"), (3, "dram")):
                row = [names[i] for i in batch.order[0, li]]
                pt[f"order_{lv}"] = tuple(d for d in row if d in pr.loops)
        for db in (True, False):
            cand = dict(pt, double_buffer=db)
            if bool(pr.space.feasible_mask([cand])[0]):
                return pr.space.normalize(cand)
    return None


EXACT_REFERENCE_MAX_NODES = 5_000_000
"""The oracle's default effort per operand group, in search nodes of the exact mapper: a
limit on work, not on time, so the reference does not depend on the machine or its load
(about half a minute on this project's 2-core machines, the former time limit)."""


def _reference_mapper(max_nodes: int | None = None, time_limit_s: float | None = None) -> Any:
    """The exact mapper :func:`exact_reference` runs: on the lowered architecture, without
    bypass choices (a schedule keeps what the intrinsic's buffers keep)."""
    from mappers.exact import ExactMapper  # the schedule mapper does not need it otherwise

    return ExactMapper(bypass=False, time_limit_s=time_limit_s, max_nodes=max_nodes)


def exact_reference_scopes(problem: ScheduleProblem, cost: Any) -> list[ProofScope]:
    """The space :func:`exact_reference`'s bound and proof cover, per operand group of
    ``problem`` (its mapper's :meth:`~mappers.exact.ExactMapper.proof_scope` on each group's
    layer, latency, without searching): what a report states beside the bound."""
    mapper = _reference_mapper()
    return [mapper.proof_scope(layer, problem.arch, cost, "latency") for layer in problem.layers]


def exact_reference(problem: ScheduleProblem, cost: Any, max_nodes: int | None = EXACT_REFERENCE_MAX_NODES, *,
                    time_limit_s: float | None = None) -> ExactReference:
    """The exact mapper as the oracle of a schedule space (see :class:`ExactReference`).

    The schedule space of an operand group (the partitions that give the intrinsic's
    operands the same roles) is, apart from padding, a subset of the mapping space the
    exact mapper searches on the same lowered architecture without bypass: the exact
    mapper lets any loop of the dataflow's classes onto the array and any divisor of it
    up to the array's size, streams any such loop, and scores every mapping with the
    cost model's latency (transfers overlapped, buffers whole), which is what double
    buffering achieves and a lower bound of what its absence costs (transfers in series,
    but buffers whole) and of its presence (buffers halved). So its minimum over the
    groups bounds every schedule that pads nothing from below; where its best mapping is
    a schedule with that latency, the bound is that optimum.

    Args:
        problem: the schedule space.
        cost: a bounded, order-separable cost model (``evaluators.loopnest.LOOPNEST``),
            the same model the problem scores with.
        max_nodes: search nodes per operand group (``None``: no limit); a search that
            hits it contributes its proved lower bound.
        time_limit_s: also stop a group's search after this many seconds (``None``: no
            time limit; a result then depends on the load).
    """
    t0 = time.perf_counter()
    mapper = _reference_mapper(max_nodes, time_limit_s)
    bounds, proved = [], True
    best: tuple[float, MappingResult, int] | None = None
    for g, layer in enumerate(problem.layers):
        try:
            r = mapper.map(layer, problem.arch, cost, "latency")
        except NoLegalMapping:
            continue
        proved &= bool(r.optimal)
        bounds.append(float(r.latency_cycles) if r.optimal else float(r.lower_bound))
        if best is None or r.latency_cycles < best[0]:
            best = (float(r.latency_cycles), r, g)
    if best is None:
        raise NoLegalMapping(f"the exact mapper finds no mapping of {problem.comp.name!r} on {problem.arch.name}")
    bound = min(bounds)
    pt = schedule_of(problem, best[1].batch, best[2]) if best[1].batch is not None else None
    lat = float(problem.values([pt])[0]) if pt is not None else math.inf
    attained = proved and math.isfinite(lat) and lat <= bound * (1 + 1e-9)
    padded = bool((problem.extent[None, :] % np.maximum(problem.spatial_x * problem.spatial_y, 1)).any()) or any(
        (problem.comp.loops[d] % problem.cands[d]).any() for d in problem.loops)
    return ExactReference(bound, proved, best[0], pt, lat, attained, padded, time.perf_counter() - t0,
                          best[1].scope)
