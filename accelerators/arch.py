"""Architecture specs: a memory hierarchy with spatial fanouts, as the cost model sees it.

Every accelerator model (:mod:`accelerators.systolic`, :mod:`accelerators.spatial`) lowers
to an :class:`ArchSpec`: storage levels from the innermost (per-PE registers) to the
backing store (DRAM), each with the operands it can hold, its capacity, how many
instances exist, how many children each instance feeds (an ``X x Y`` mesh), per-word
access energies and bandwidth. This is the Timeloop/ZigZag split: the spec is data; the
counting and costing live in :mod:`evaluators.loopnest`.

Conventions:

* ``levels[0]`` is the innermost level; its children are MAC units. The last level is
  the backing store: unbounded, holds every operand, one instance, no fanout.
* ``instances[l - 1] == instances[l] * fanout_x[l] * fanout_y[l]`` and the number of
  MAC units is ``instances[0] * fanout_x[0] * fanout_y[0]``.
* Capacities and traffic are in words of ``word_bits``; energies in pJ per word;
  bandwidths in words per cycle per instance, ``None`` = unlimited: a level may limit
  reads and writes together (``bandwidth_words_per_cycle``, Timeloop's
  ``shared_bandwidth``), reads alone (``read_bandwidth_words_per_cycle``) and writes alone
  (``write_bandwidth_words_per_cycle``, fills and updates), any of them or all three;
  its bandwidth cycles are the largest of the words each limit carries over it.
* ``noc_energy_pj`` is the energy of delivering one word from an instance to one child
  across that level's fanout (network-on-chip hop/bus); multicast delivers to several
  children with one read of the parent but one NoC delivery each.
* ``vector_words`` > 1 makes the energies per vector access of that many words
  (accesses rounded up to whole vectors; see :mod:`evaluators.loopnest`).
* ``leakage_pj_per_cycle`` is static energy per instance per cycle: the model adds
  ``leakage_pj_per_cycle x instances x latency_cycles`` per level (every physical
  instance leaks, used by the mapping or not).

What the cost model and the mappers need beyond the levels are typed fields of
:class:`ArchSpec`: ``dataflow`` (a systolic array's OS / WS / IS: it fixes which loop
dimensions may go on the array's rows and columns and adds SCALE-Sim's fill/drain time
per fold), ``intrinsic`` (the tensor intrinsic a HASCO array executes) and ``kind`` and
``tech`` for reports. The PE array itself -- its level and its ``rows x cols`` -- is the
level with the largest fanout (:attr:`ArchSpec.pe_array_level`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["OPERANDS", "SYSTOLIC_DATAFLOWS", "ArchSpec", "MemoryLevel", "backing_store"]

OPERANDS = ("W", "I", "O")
SYSTOLIC_DATAFLOWS = ("OS", "WS", "IS")
"""Output-, weight- and input-stationary (SCALE-Sim's names)."""


def _per_operand(value: Any, what: str, level: str) -> dict[str, float]:
    if isinstance(value, Mapping):
        unknown = set(value) - set(OPERANDS)
        if unknown:
            raise ValueError(f"level {level!r}: {what} names unknown operands {sorted(unknown)}")
        return {k: float(v) for k, v in value.items()}
    return dict.fromkeys(OPERANDS, float(value))


@dataclass(frozen=True)
class MemoryLevel:
    """One storage level of the hierarchy (see module docstring for units).

    Args:
        name: e.g. ``"RF"``, ``"GLB"``, ``"DRAM"``.
        tensors: operands this level can hold; the others always bypass it.
        capacity_words: ``None`` (unbounded), an ``int`` shared by the operands, or a
            mapping operand -> words for partitioned buffers (e.g. Eyeriss's RF).
        instances: physical copies of the level.
        fanout_x, fanout_y: children of each instance, as a mesh.
        read_energy_pj, write_energy_pj: per word, a number or per operand.
        bandwidth_words_per_cycle: per instance, reads and writes together (one port
            shared by both: Timeloop's ``shared_bandwidth``); ``None`` unlimited.
        read_bandwidth_words_per_cycle: per instance, reads alone (Timeloop's
            ``read_bandwidth``); ``None`` unlimited.
        write_bandwidth_words_per_cycle: per instance, writes alone -- fills from above
            and updates from below (Timeloop's ``write_bandwidth``); ``None`` unlimited.
            The level's bandwidth cycles are ``max(reads / read bandwidth, writes /
            write bandwidth, (reads + writes) / bandwidth)`` per active instance, each
            term only where its limit is set (Timeloop v0.4's slowdown rule,
            ``BufferLevel::ComputePerformance``).
        multicast: one read can feed several children that need the same word.
        noc_energy_pj: per word delivered to one child across this level's fanout.
        area_mm2: the level's area (all instances).
        leakage_pj_per_cycle: static energy of one instance per cycle, spent whether or
            not it is accessed (the energy table's ``leakage_pj_per_cycle``). The model
            charges it for every physical instance over the whole latency; ``0.0`` (the
            default) models none.
        vector_words: words one access moves (the port width; Timeloop's
            ``block-size``). With ``vector_words > 1``, ``read_energy_pj`` and
            ``write_energy_pj`` are per *vector* access, and an instance's accesses of an
            operand (reads, and writes) over the run are packed into whole vectors:
            ``ceil(words / vector_words)`` vector accesses. ``1`` (the default): per word.
    """

    name: str
    tensors: frozenset[str] = frozenset(OPERANDS)
    capacity_words: int | Mapping[str, int] | None = None
    instances: int = 1
    fanout_x: int = 1
    fanout_y: int = 1
    read_energy_pj: float | Mapping[str, float] = 0.0
    write_energy_pj: float | Mapping[str, float] = 0.0
    bandwidth_words_per_cycle: float | None = None
    read_bandwidth_words_per_cycle: float | None = None
    write_bandwidth_words_per_cycle: float | None = None
    multicast: bool = True
    noc_energy_pj: float = 0.0
    area_mm2: float = 0.0
    leakage_pj_per_cycle: float = 0.0
    vector_words: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "tensors", frozenset(self.tensors))
        bad = set(self.tensors) - set(OPERANDS)
        if bad:
            raise ValueError(f"level {self.name!r}: unknown operands {sorted(bad)}")
        for f in ("instances", "fanout_x", "fanout_y"):
            v = getattr(self, f)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"level {self.name!r}: {f} must be a positive integer, got {v!r}")
        cap = self.capacity_words
        if isinstance(cap, Mapping):
            for k, v in cap.items():
                if k not in OPERANDS or v < 0:
                    raise ValueError(f"level {self.name!r}: bad capacity {k}={v}")
            object.__setattr__(self, "capacity_words", dict(cap))
        elif cap is not None and (not isinstance(cap, int | float) or cap < 0):
            raise ValueError(f"level {self.name!r}: capacity_words must be >= 0, got {cap!r}")
        for f in ("bandwidth_words_per_cycle", "read_bandwidth_words_per_cycle", "write_bandwidth_words_per_cycle"):
            bw = getattr(self, f)
            if bw is not None and (isinstance(bw, bool) or not isinstance(bw, int | float) or not bw > 0):
                raise ValueError(f"level {self.name!r}: {f} must be a number > 0 or None, got {bw!r}")
        leak = self.leakage_pj_per_cycle
        if isinstance(leak, bool) or not isinstance(leak, int | float) or not math.isfinite(leak) or leak < 0:
            raise ValueError(f"level {self.name!r}: leakage_pj_per_cycle must be a finite number >= 0, got {leak!r}")
        object.__setattr__(self, "leakage_pj_per_cycle", float(leak))
        vec = self.vector_words
        if isinstance(vec, bool) or not isinstance(vec, int) or vec < 1:
            raise ValueError(f"level {self.name!r}: vector_words must be an integer >= 1, got {vec!r}")
        object.__setattr__(self, "read_energy_pj", _per_operand(self.read_energy_pj, "read_energy_pj", self.name))
        object.__setattr__(self, "write_energy_pj", _per_operand(self.write_energy_pj, "write_energy_pj", self.name))

    @property
    def fanout(self) -> int:
        return self.fanout_x * self.fanout_y

    @property
    def split_bandwidth(self) -> bool:
        """Whether reads or writes have a limit of their own (a read or write bandwidth)."""
        return self.read_bandwidth_words_per_cycle is not None or self.write_bandwidth_words_per_cycle is not None

    def capacity_of(self, operand: str) -> float:
        """Words available to one operand (``inf`` if unbounded; shared capacity counts
        as available to each, and the joint check is done on the sum)."""
        cap = self.capacity_words
        if cap is None:
            return math.inf
        if isinstance(cap, Mapping):
            return float(cap.get(operand, 0))
        return float(cap)

    @property
    def shared(self) -> bool:
        return self.capacity_words is not None and not isinstance(self.capacity_words, Mapping)


def backing_store(energy_pj: float, bandwidth_words_per_cycle: float | None,
                  name: str = "DRAM") -> MemoryLevel:
    """The outermost level: unbounded, every operand, symmetric per-word energy."""
    return MemoryLevel(name=name, read_energy_pj=energy_pj, write_energy_pj=energy_pj,
                       bandwidth_words_per_cycle=bandwidth_words_per_cycle)


@dataclass(frozen=True)
class ArchSpec:
    """A whole accelerator as the loop-nest cost model sees it.

    Args:
        name: for messages and reports.
        levels: innermost first (see the module docstring).
        mac_energy_pj: one MAC.
        word_bits: width of a word of every level.
        clock_mhz: converts cycles to time.
        area_mm2: the whole design's area.
        kind: the accelerator family (``"systolic"``, ``"spatial"``, ``"intrinsic"``).
        dataflow: ``"OS"``, ``"WS"`` or ``"IS"`` for a systolic array (its mapping rules
            and fold timing); ``None`` for a spatial array that may map any dimension
            anywhere.
        intrinsic: the tensor intrinsic the array executes (``"GEMM"``, ``"GEMV"``,
            ``"DOT"``, ``"CONV"``; HASCO's accelerators), else ``None``.
        tech: the energy table's name.
    """

    name: str
    levels: tuple[MemoryLevel, ...]
    mac_energy_pj: float
    word_bits: int = 16
    clock_mhz: float = 1000.0
    area_mm2: float = 0.0
    kind: str = "generic"
    dataflow: str | None = None
    intrinsic: str | None = None
    tech: str | None = None

    def __post_init__(self) -> None:
        lv = tuple(self.levels)
        object.__setattr__(self, "levels", lv)
        if len(lv) < 2:
            raise ValueError(f"arch {self.name!r}: needs at least one on-chip level and a backing store")
        last = lv[-1]
        if last.capacity_words is not None or last.tensors != frozenset(OPERANDS) or last.instances != 1 or last.fanout != 1:
            raise ValueError(
                f"arch {self.name!r}: the last level ({last.name!r}) must be an unbounded backing store "
                "holding every operand, with one instance and no fanout"
            )
        for i in range(1, len(lv)):
            want = lv[i].instances * lv[i].fanout
            if lv[i - 1].instances != want:
                raise ValueError(
                    f"arch {self.name!r}: level {lv[i - 1].name!r} has {lv[i - 1].instances} instances "
                    f"but {lv[i].name!r} feeds {want} ({lv[i].instances} x {lv[i].fanout_x} x {lv[i].fanout_y})"
                )
        names = [level.name for level in lv]
        if len(set(names)) != len(names):
            raise ValueError(f"arch {self.name!r}: duplicate level names {names}")
        if self.mac_energy_pj < 0 or self.clock_mhz <= 0 or self.word_bits < 1:
            raise ValueError(f"arch {self.name!r}: bad mac_energy_pj / clock_mhz / word_bits")
        if self.dataflow is not None and self.dataflow not in SYSTOLIC_DATAFLOWS:
            raise ValueError(f"arch {self.name!r}: dataflow must be one of {list(SYSTOLIC_DATAFLOWS)} "
                             f"or None, got {self.dataflow!r}")

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    @property
    def split_bandwidth(self) -> bool:
        """Whether some level limits reads or writes apart (:attr:`MemoryLevel.split_bandwidth`):
        its bandwidth cycles are then a maximum of sums, not one sum of counts."""
        return any(level.split_bandwidth for level in self.levels)

    @property
    def leaks(self) -> bool:
        """Whether any level has leakage: energy then grows with latency, a maximum over
        levels, and is no longer a sum of one term per level's loop order."""
        return any(level.leakage_pj_per_cycle > 0 for level in self.levels)

    @property
    def n_macs(self) -> int:
        """Number of MAC units (PEs)."""
        return self.levels[0].instances * self.levels[0].fanout

    @property
    def pe_array_level(self) -> int:
        """Index of the level whose fanout is the PE array: the first level with the
        largest fanout (level 0 when no level has one)."""
        return max(range(len(self.levels)), key=lambda i: (self.levels[i].fanout, -i))

    @property
    def array_rows(self) -> int:
        """Rows of the PE array (the Y fanout of :attr:`pe_array_level`)."""
        return self.levels[self.pe_array_level].fanout_y

    @property
    def array_cols(self) -> int:
        """Columns of the PE array (the X fanout of :attr:`pe_array_level`)."""
        return self.levels[self.pe_array_level].fanout_x

    def level_index(self, name: str) -> int:
        for i, level in enumerate(self.levels):
            if level.name == name:
                return i
        raise KeyError(f"arch {self.name!r} has no level {name!r} (levels: {[lv.name for lv in self.levels]})")
