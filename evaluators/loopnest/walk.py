"""A slow, literal loop-nest simulator: the ground truth for :mod:`evaluators.loopnest`.

It walks every temporal iteration of the mapped loop nest in order, keeps for every
storage level, instance and operand the *set* of elements it currently holds (the
bounding box of what its inner loops touch), and on every change counts, with Python
set arithmetic: the words fetched (new minus old), the words a parent must read to
serve its children (children holding an identical set are served once -- multicast),
the words evicted and written back for outputs, which output words are fetched back
because they already hold a partial sum (a record, per level and parent instance, of
every word ever held)
and the words delivered over the network. MAC units hold nothing: every iteration they
read their operands and update their output word.

It shares no counting code with the vectorized model; only the rules (see the
:mod:`evaluators.loopnest` docstring) are the same. Use it on tiny layers only: its cost
grows with iterations x instances x tile size.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec
from mappers.mapping import Mapping
from mappers.workloads import Layer


@dataclass
class Counts:
    reads: np.ndarray      # (L, 3)
    writes: np.ndarray     # (L, 3)
    noc_words: np.ndarray  # (L,)
    iterations: int
    mac_instances: int
    instances: tuple[int, ...] = ()   # (L,) active instances of each level


def energy_and_latency(arch: ArchSpec, counts: Counts, conventions: Any = None) -> tuple[float, float]:
    """``(energy pJ, latency cycles)`` of a walk's counts on an architecture without a
    systolic dataflow, by the model's rules with exact fractions: latency is the larger
    of the iterations and every level's (reads + writes) per active instance over its
    bandwidth; a level of ``vector_words = V > 1`` charges, per operand and for reads and
    writes apart, ``n x ceil(words / (n V))`` vector accesses over its ``n`` active
    instances (the average instance's words, rounded up to whole vectors); a level with a
    read or write bandwidth of its own needs, besides, its reads per active instance over
    the one and its writes over the other; NoC words and
    MACs as counted; leakage ``leakage_pj_per_cycle x physical instances x latency``, or,
    where ``conventions`` (an object with the fields of
    :class:`evaluators.loopnest.Conventions`) has ``leakage="utilized_instances"``, x the
    instances the walk used (``counts.instances``) instead of the physical ones."""
    utilized = conventions is not None and conventions.leakage == "utilized_instances"
    latency = Fraction(counts.iterations)
    for li, lv in enumerate(arch.levels):
        n = counts.instances[li]
        reads, writes = int(counts.reads[li].sum()), int(counts.writes[li].sum())
        for words, limit in ((reads + writes, lv.bandwidth_words_per_cycle),
                             (reads, lv.read_bandwidth_words_per_cycle),
                             (writes, lv.write_bandwidth_words_per_cycle)):
            if limit is not None:
                latency = max(latency, Fraction(words, n) / Fraction(limit))
    energy = Fraction(0)
    for li, lv in enumerate(arch.levels):
        n, V = counts.instances[li], lv.vector_words
        for t, op in enumerate(OPERANDS):
            for words, e in ((int(counts.reads[li, t]), lv.read_energy_pj.get(op, 0.0)),
                             (int(counts.writes[li, t]), lv.write_energy_pj.get(op, 0.0))):
                accesses = words if V == 1 else n * math.ceil(Fraction(words, n * V))
                energy += accesses * Fraction(e)
        energy += int(counts.noc_words[li]) * Fraction(lv.noc_energy_pj)
        leaking = counts.instances[li] if utilized else lv.instances
        energy += Fraction(lv.leakage_pj_per_cycle) * leaking * latency
    energy += counts.iterations * counts.mac_instances * Fraction(arch.mac_energy_pj)
    return float(energy), float(latency)


def _loops(layer: Layer, arch: ArchSpec, m: Mapping) -> list[tuple[str, int, str, int]]:
    """The loop nest, outermost first: (kind 'T'/'X'/'Y', level, dim, factor)."""
    dims = layer.dim_names
    out = []
    for lv in range(arch.n_levels - 1, -1, -1):
        for d in m.full_order(lv, dims):
            out.append(("T", lv, d, m.temporal[lv].get(d, 1)))
        for d in dims:
            if m.spatial_x[lv].get(d, 1) > 1:
                out.append(("X", lv, d, m.spatial_x[lv][d]))
        for d in dims:
            if m.spatial_y[lv].get(d, 1) > 1:
                out.append(("Y", lv, d, m.spatial_y[lv][d]))
    return out


def simulate(layer: Layer, arch: ArchSpec, m: Mapping, conventions: Any = None) -> Counts:
    """Walk the loop nest of ``m``. ``conventions``: an object with the fields of
    :class:`evaluators.loopnest.Conventions` (``None``: the default rules); each choice
    is applied literally: ``window_reuse="innermost"`` keeps, per instance and operand,
    the translation of the tile's last move and refetches the whole tile when a move's
    translation differs from it (then forgets it), as Timeloop's
    ``SaveAndSubtractIfSameStride`` does; ``multicast="same_index"`` groups children by
    their spatial indices over the operand's dimensions as well as by their tiles;
    ``psum_refill="every_child"`` gives old partial sums to every child of a reduction
    group; ``mac_operand_reads="on_change"`` has a MAC behind a fanout read ``W`` / ``I``
    only when its element changes (under the same translation rule);
    ``output_drain="parent_update"`` counts no child read for a drained partial sum;
    ``window_reuse="none"`` keeps, per instance and operand, the indices of the loops above
    the level over the operand's dimensions and refetches the tile whole whenever they
    change (ZigZag's rule); and ``first_accumulation="per_word"`` keeps one record of the
    output words any MAC has accumulated into: a MAC group's accumulation reads the partial
    sum unless it is the first into that word anywhere (ZigZag's rule)."""
    conv = {"window_reuse": "any_step", "multicast": "coincident", "psum_refill": "one_child",
            "mac_operand_reads": "every_step", "output_drain": "child_read", "first_accumulation": "per_instance"}
    if conventions is not None:
        conv = {k: getattr(conventions, k) for k in conv}
    loops = _loops(layer, arch, m)
    n = len(loops)
    step = [1] * n
    for i in range(n):
        for j in range(i + 1, n):
            if loops[j][2] == loops[i][2]:
                step[i] *= loops[j][3]
    L = arch.n_levels
    tensors = [layer.tensor(op) for op in OPERANDS]
    t_idx = [i for i, lp in enumerate(loops) if lp[0] == "T"]

    def coords(index: dict[int, int]) -> dict[str, int]:
        c = dict.fromkeys(layer.dim_names, 0)
        for i, v in index.items():
            c[loops[i][2]] += v * step[i]
        return c

    rel_dims = [{d for axis in tensors[t].axes for d, _ in axis} for t in range(3)]
    stride_state: dict[tuple, tuple | None] = {}          # last translation per (level, t, instance)
    index_state: dict[tuple, tuple] = {}                  # last relevant indices per (level, t, instance)

    def credited(key: tuple, old: frozenset, new: frozenset, time: dict[int, int]) -> bool:
        """Whether the new tile keeps the overlap with the old one. Timeloop's rule: if
        the tile moves as it moved last (or nothing is remembered); else it is refetched
        whole and the translation forgotten. ZigZag's (``"none"``): only if no index of a
        loop above (``time``) over the operand's dimensions changed."""
        if conv["window_reuse"] == "any_step":
            return True
        if conv["window_reuse"] == "none":
            t = key[1]
            now = tuple(sorted((i, v) for i, v in time.items() if loops[i][2] in rel_dims[t] and loops[i][3] > 1))
            prev = index_state.get(key)
            index_state[key] = now
            return not old or prev == now
        if not old:
            stride_state[key] = None
            return True
        tr = tuple(min(x[a] for x in new) - min(x[a] for x in old) for a in range(len(next(iter(new)))))
        prev = stride_state.get(key)
        if prev is None:
            stride_state[key] = tr
            return True
        if prev == tr:
            return True
        stride_state[key] = None
        return False

    def rel_index(inst: dict[int, int], t: int, upto: int) -> tuple:
        """The instance's spatial indices (loops of levels <= ``upto``) over the operand's
        dimensions (for ``multicast="same_index"``)."""
        if conv["multicast"] == "coincident":
            return ()
        return tuple(sorted((i, v) for i, v in inst.items() if loops[i][1] <= upto and loops[i][2] in rel_dims[t]))

    def element(t: int, c: dict[str, int]) -> tuple[int, ...]:
        return tuple(sum(coef * c[d] for d, coef in axis) for axis in tensors[t].axes)

    def tile(t: int, level: int, fixed: dict[int, int]) -> frozenset:
        """Bounding box of the elements touched by loops at levels <= ``level`` with the
        other loops fixed at ``fixed``."""
        inner = [i for i in range(n) if loops[i][1] <= level]
        lo = hi = None
        for combo in itertools.product(*(range(loops[i][3]) for i in inner)):
            idx = dict(fixed)
            idx.update(zip(inner, combo))
            e = element(t, coords(idx))
            lo = e if lo is None else tuple(map(min, lo, e))
            hi = e if hi is None else tuple(map(max, hi, e))
        return frozenset(itertools.product(*(range(a, b + 1) for a, b in zip(lo, hi))))

    def instances(level: int) -> list[dict[int, int]]:
        """Spatial index assignments of the loops above ``level`` (one per instance)."""
        sp = [i for i in range(n) if loops[i][0] != "T" and loops[i][1] > level]
        return [dict(zip(sp, combo)) for combo in itertools.product(*(range(loops[i][3]) for i in sp))]

    def parent_key(inst: dict[int, int], parent: int) -> tuple:
        return tuple(sorted((i, v) for i, v in inst.items() if loops[i][1] > parent))

    def parent_of(level: int, t: int) -> int:
        for q in range(level + 1, L):
            if m.keeps(arch, q, OPERANDS[t]):
                return q
        raise AssertionError

    reads = np.zeros((L, 3), dtype=np.int64)
    writes = np.zeros((L, 3), dtype=np.int64)
    noc = np.zeros(L, dtype=np.int64)

    def crossed(child: int, parent: int) -> list[int]:
        return [q for q in range(child + 1, parent + 1) if arch.levels[q].fanout > 1]

    def multicast(child: int, parent: int) -> bool:
        return all(arch.levels[q].multicast for q in range(child + 1, parent + 1))

    held: dict[tuple, frozenset] = {}                  # (level, t, instance key) -> set
    # output words that already hold a partial sum, per (level, parent instance): partial
    # sums live in one parent instance's subtree; sibling subtrees reducing other slices
    # of the reduction start from zero
    ever: dict[tuple, set] = defaultdict(set)
    mac_seen: dict[tuple, set] = defaultdict(set)
    mac_first: set = set()                             # words accumulated into anywhere (per_word)
    mac_held: dict[tuple, frozenset] = {}
    inst_cache = {lv: instances(lv) for lv in range(-1, L)}
    prev_outer: dict[int, tuple] = {}

    def transition(level: int, t: int, fixed_time: dict[int, int], final: bool = False) -> None:
        p = parent_of(level, t)
        groups: dict[tuple, dict[frozenset, list]] = defaultdict(dict)
        for inst in inst_cache[level]:
            key = (level, t, tuple(sorted(inst.items())))
            old = held.get(key, frozenset())
            new = frozenset() if final else tile(t, level, {**fixed_time, **inst})
            held[key] = new
            if not final and not credited(key, old, new, fixed_time):
                old_kept = frozenset()                 # refetched whole (the old tile is written back whole)
            else:
                old_kept = old
            g = groups[parent_key(inst, p)]
            # children moving from identical sets to identical sets form one group
            share = ((old, new, rel_index(inst, t, p)) if (multicast(level, p) or OPERANDS[t] == "O")
                     else (old, new, key))
            g.setdefault(share, []).append((old_kept, new, old))
        for pk, by_tile in groups.items():
            for members in by_tile.values():
                old, new, _ = members[0]
                fetched = new - old
                if OPERANDS[t] == "O":
                    seen = ever[(level, t, pk)]
                    back = [w for w in fetched if w in seen]
                    seen.update(fetched)
                    full_old = members[0][2]
                    evicted = full_old - new if old == full_old else full_old
                    receivers = 1 if conv["psum_refill"] == "one_child" else len(members)
                    writes[p, t] += len(evicted)           # one reduced update per group
                    reads[p, t] += len(back)               # old partial sums fetched back
                    writes[level, t] += len(back) * receivers   # into one child (or all)
                    for q in crossed(level, p):
                        noc[q] += len(back) * receivers
                    for _, _, o in members:
                        out = o - new if old == full_old else o
                        if conv["output_drain"] == "child_read":
                            reads[level, t] += len(out)    # every child evicts its partial
                        for q in crossed(level, p):
                            noc[q] += len(out)
                else:
                    reads[p, t] += len(fetched)
                    for o, nw, _ in members:
                        writes[level, t] += len(nw - o)
                        for q in crossed(level, p):
                            noc[q] += len(nw - o)

    def mac_step(fixed_time: dict[int, int]) -> None:
        for t in range(3):
            p = parent_of(-1, t)
            groups: dict[tuple, set] = defaultdict(set)
            count_all: dict[tuple, int] = defaultdict(int)
            per_elem: dict[tuple, int] = defaultdict(int)
            held_at_mac = (conv["mac_operand_reads"] == "on_change" and OPERANDS[t] != "O"
                           and bool(crossed(-1, p)))
            for inst in inst_cache[-1]:
                e = element(t, coords({**fixed_time, **inst}))
                pk = parent_key(inst, p)
                if held_at_mac:
                    # the operand held at the MAC's input, a one-word tile
                    key = (-1, t, tuple(sorted(inst.items())))
                    old, new = mac_held.get(key, frozenset()), frozenset({e})
                    mac_held[key] = new
                    if not (new - old if credited(key, old, new, fixed_time) else new):
                        continue                            # unchanged: no read
                share = e if (multicast(-1, p) or OPERANDS[t] == "O") else (e, tuple(sorted(inst.items())))
                groups[pk].add((share, rel_index(inst, t, p)))
                count_all[pk] += 1
                per_elem[(pk, e)] += 1
            for pk, shares in groups.items():
                if OPERANDS[t] == "O":
                    elems = {sh[0] for sh in shares}
                    if conv["first_accumulation"] == "per_word":
                        back = []
                        for sh in sorted(shares):
                            if sh[0] in mac_first:
                                back.append(sh[0])
                            else:
                                mac_first.add(sh[0])
                    else:
                        back = [w for w in elems if w in mac_seen[pk]]
                    mac_seen[pk].update(elems)
                    writes[p, t] += len(shares)
                    reads[p, t] += len(back)
                    got = len(back) if conv["psum_refill"] == "one_child" else sum(per_elem[(pk, w)] for w in back)
                    for q in crossed(-1, p):
                        noc[q] += count_all[pk] + got
                else:
                    reads[p, t] += len(shares)
                    for q in crossed(-1, p):
                        noc[q] += count_all[pk]

    iterations = 0
    for combo in itertools.product(*(range(loops[i][3]) for i in t_idx)):
        fixed_time = dict(zip(t_idx, combo))
        for level in range(L - 2, -1, -1):
            outer = tuple(v for i, v in fixed_time.items() if loops[i][1] > level)
            if prev_outer.get(level) == outer:
                continue
            prev_outer[level] = outer
            now = {i: v for i, v in fixed_time.items() if loops[i][1] > level}
            for t in range(3):
                if m.keeps(arch, level, OPERANDS[t]):
                    transition(level, t, now)
        mac_step(fixed_time)
        iterations += 1
    for level in range(L - 1):
        for t in range(3):
            if OPERANDS[t] == "O" and m.keeps(arch, level, "O"):
                transition(level, t, {}, final=True)
    return Counts(reads, writes, noc, iterations, len(inst_cache[-1]), tuple(len(inst_cache[lv]) for lv in range(L)))
