"""Software schedules of a computation on an intrinsic accelerator, and their search.

HASCO's software side (``flextensor_extend.gen_schedules``: FlexTensor's schedule space
and its heuristic + Q-learning search, notes B.2) for one (hardware point, computation):
the intrinsic fixes what the array does -- which computation loops go on its rows and
columns and which one streams through the PEs (:class:`~mappers.intrinsics.Partition`
x :data:`accelerators.intrinsic.DATAFLOWS`) -- and the software decides everything
outside it.

The schedule space (:class:`ScheduleProblem`, a :class:`~design_space.DesignSpace`):

* ``partition`` -- which HW/SW partition (the choices :func:`mappers.intrinsics.match`
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
:class:`~mappers.mapping.MappingBatch` on :meth:`IntrinsicAccelerator.to_arch
<accelerators.intrinsic.IntrinsicAccelerator.to_arch>` (levels REG, ACC, SP, DRAM), scored
by :func:`evaluators.loopnest.evaluate_batch` (exact access counts; systolic fold time for
GEMM); latency = ``max(compute, on-chip bandwidth cycles) + DRAM cycles`` without double
buffering, ``max(all)`` with it.

Mappers (:func:`random_schedule`, :func:`heuristic_schedule`; the Q-learning search and
the dispatch with caching are in :mod:`optimizer.hasco`, since they use an optimizer),
at an equal budget of evaluated schedules:

* random -- the budget as feasible samples, scored in one batch;
* heuristic -- FlexTensor's heuristic as HASCO runs it: random warm-up, then repeatedly
  pick a start among the visited points (SA-like acceptance ``exp(-0.5 (v - best) /
  best)``), evaluate its whole neighbourhood (one vectorized batch: a "full walk"), keep
  everything that improves as new candidate starts, retire the start when nothing
  around it does (a local minimum).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators.intrinsic import ROLE_OF, IntrinsicAccelerator
from design_space import Categorical, Constraint, DesignSpace, Fixed, Ordinal, Permutation
from evaluators.loopnest import evaluate_batch, layer_constants
from mappers.intrinsics import Computation, Partition, intrinsic, match
from mappers.mapping import MappingBatch
from mappers.space import divisors

__all__ = ["ScheduleProblem", "ScheduleResult", "default_schedule", "heuristic_schedule", "random_schedule",
           "result_of", "tile_candidates"]
LEVELS = ("REG", "ACC", "SP", "DRAM")


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
    """The schedule space of ``computation`` on ``accelerator`` and its vectorized scorer.

    Args:
        computation: a two-input computation (a stage; see
            :func:`mappers.intrinsics.decompositions`).
        accelerator: the intrinsic accelerator.
        partitions: the partitions to choose from (default: every match of the
            accelerator's intrinsic).

    Raises:
        ValueError: the computation has no partition onto the accelerator's intrinsic.
    """

    def __init__(self, computation: Computation, accelerator: IntrinsicAccelerator,
                 partitions: Sequence[Partition] | None = None) -> None:
        if len(computation.inputs) != 2:
            raise ValueError(f"computation {computation.name!r} has {len(computation.inputs)} inputs; "
                             "schedule one two-input stage at a time (mappers.intrinsics.decompositions)")
        self.comp, self.acc = computation, accelerator
        self.parts = list(partitions) if partitions is not None else match(computation, intrinsic(accelerator.intrinsic))
        if not self.parts:
            raise ValueError(f"computation {computation.name!r} has no partition onto the "
                             f"{accelerator.intrinsic} intrinsic")
        self.arch = accelerator.to_arch()
        self.dims = list(computation.loops)
        self.extent = np.array([computation.loops[d] for d in self.dims], dtype=np.int64)
        self.loops = [d for d in self.dims if computation.loops[d] > 1]
        roles = accelerator.roles
        P, D = len(self.parts), len(self.dims)
        self.spatial_x = np.ones((P, D), dtype=np.int64)
        self.spatial_y = np.ones((P, D), dtype=np.int64)
        self.stream_ok = np.zeros((P, D), dtype=bool)
        groups: dict[tuple[str, str], int] = {}
        self.group = np.zeros(P, dtype=np.int64)
        for p, part in enumerate(self.parts):
            lo = part.loop_of
            ry, cx = self.dims.index(lo[roles.rows]), self.dims.index(lo[roles.cols])
            self.spatial_y[p, ry] = min(accelerator.pe_y, int(self.extent[ry]))
            self.spatial_x[p, cx] = min(accelerator.pe_x, int(self.extent[cx]))
            for s in roles.stream:
                self.stream_ok[p, self.dims.index(lo[s])] = True
            key = (part.operand_of("a"), part.operand_of("b"))
            self.group[p] = groups.setdefault(key, len(groups))
        self.layers = [computation.to_layer(a, b) for (a, b) in groups]
        self.consts = [layer_constants(layer) for layer in self.layers]
        self.keys = [p.key for p in self.parts]
        self._key_index = {k: i for i, k in enumerate(self.keys)}
        self.stationary = ROLE_OF[roles.stationary]
        self.cands = {d: np.array(tile_candidates(int(computation.loops[d])), dtype=np.int64)
                      for d in self.loops}
        self.stream_loops = [d for d in self.loops if self.stream_ok[:, self.dims.index(d)].any()]
        self.space = self._build_space()

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
                           name=f"schedules({self.comp.name} on {self.acc.name})",
                           proposal=self._propose)

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
            return self._words(self.comp.output, ext) * mult <= self.acc.acc_words
        w = sum(self._words(op, ext) for op in self.comp.inputs)
        return w * mult <= self.acc.sp_words

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
            r = evaluate_batch(layer, self.arch, self.batch(cols, rows), consts=self.consts[g])
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


def result_of(problem: ScheduleProblem, points: list[dict[str, Any]], lat: list[float],
            budget: int) -> ScheduleResult:
    lat_arr = np.asarray(lat[:budget], dtype=float)
    if not len(lat_arr) or not np.isfinite(lat_arr).any():
        raise ValueError(f"no legal schedule of {problem.comp.name!r} on {problem.acc.name} "
                         f"in {len(lat_arr)} evaluations")
    best = int(np.argmin(lat_arr))
    r = problem.evaluate([points[best]])
    hist = np.minimum.accumulate(lat_arr)
    return ScheduleResult(dict(points[best]), float(r["latency_cycles"][0]), float(r["energy_pj"][0]),
                          float(r["compute_cycles"][0]), float(r["dram_words"][0]), len(lat_arr),
                          tuple(float(h) for h in hist), str(points[best]["partition"]))


def random_schedule(problem: ScheduleProblem, budget: int, rng: np.random.Generator,
                    start: Sequence[Mapping[str, Any]] = ()) -> ScheduleResult:
    pts = [dict(p) for p in start][:budget]
    pts += problem.sample(budget - len(pts), rng)
    lat = problem.evaluate(pts)["latency_cycles"].tolist()
    return result_of(problem, pts, lat, budget)


def heuristic_schedule(problem: ScheduleProblem, budget: int, rng: np.random.Generator,
                       start: Sequence[Mapping[str, Any]] = (), warmup: int | None = None) -> ScheduleResult:
    space = problem.space
    warmup = max(1, min(budget, warmup if warmup is not None else max(8, budget // 8)))
    pts = [dict(p) for p in start][:budget]
    pts += problem.sample(max(warmup - len(pts), 0), rng)
    lat = problem.evaluate(pts)["latency_cycles"].tolist()
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
            vals = problem.evaluate(nbrs)["latency_cycles"].tolist()
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
        vals = problem.evaluate(extra)["latency_cycles"].tolist()
        pts.extend(extra)
        lat.extend(vals)
    return result_of(problem, pts, lat, budget)
