"""Technology constants and cost formulas: energy per operation/access and area.

Two energy tables are offered, as :class:`TechModel` instances an accelerator can be
lowered with:

* :data:`HOROWITZ_45NM` -- absolute 45 nm figures: MAC = multiply + add from Horowitz's
  ISSCC 2014 table, SRAM access energy from a log-log fit through his cache points,
  register files from the same fit extrapolated to small sizes, DRAM at 20 pJ/bit.
* :data:`EYERISS_NORMALIZED` -- the Eyeriss (Chen, Emer, Sze, ISCA 2016) data-movement
  costs *relative to a MAC*: RF 1x, array NoC 2x, global buffer 6x, DRAM 200x. They are
  anchored to pJ by multiplying by the Horowitz 45 nm MAC energy of the datapath's
  precision, so both tables give pJ and can be compared on one scale (Eyeriss's ratios
  come from a 65 nm process; only the ratios are used).

Area (both tables share it; the Eyeriss table has no area) comes from Horowitz's 45 nm
arithmetic-unit areas, a 45 nm 6T SRAM bit cell at an assumed array efficiency, and a
45 nm standard-cell flip-flop per register bit.

The numbers are data: ``accelerators/tables/horowitz_45nm.yaml`` and
``eyeriss_normalized.yaml`` (loaded by :mod:`accelerators.energy_table`, each entry with its
source); the module-level constants below are read from them, and a :class:`TechModel` can
be built from any table of the same schema (``TechModel.from_yaml``), which then replaces
the built-in one for an accelerator.

Conventions: every constant is a module-level name whose suffix gives its unit (``_PJ``
picojoules, ``_UM2`` square micrometres, ``_MM2`` square millimetres) and whose comment
gives its source. Source tags: **[V]** checked in the named public source (for Horowitz's
figures: the reproductions of his table in Table 3 of PMC8934428 on PubMed Central and in
the EnergyDatabase of the open-source ``esim`` simulator), **[R]** the value as widely
reproduced (Sze, Chen, Yang, Emer, "Efficient Processing of Deep Neural Networks",
Proc. IEEE 105(12), 2017) but not re-checked against the original (used, but flagged),
**[inferred]** our own derivation or assumption. Functions whose argument is a size (capacity, bit width,
word count) accept numpy arrays and broadcast, so they can be used inside vectorized known
constraints; with scalar inputs they return a Python ``float``.

KB/MB in the sources are taken as KiB/MiB (1024-based), as cache sizes are.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelerators.energy_table import (
    EnergyTable,
    EnergyTableError,
    TableEntry,
    builtin_table,
    load_energy_table,
)

# ---------------------------------------------------------------------------------------
# The constants below are read from the built-in tables, accelerators/tables/
# horowitz_45nm.yaml and eyeriss_normalized.yaml, where each entry names its source (the
# same sources as the comments here). Arithmetic energy and area, 45 nm, 0.9 V: Horowitz,
# "Computing's Energy Problem (and what we can do about it)", ISSCC 2014.
# ---------------------------------------------------------------------------------------
_HOROWITZ = builtin_table("horowitz_45nm")
_EYERISS = builtin_table("eyeriss_normalized")


def _compute_entry(table: EnergyTable, component: str, datatype: str) -> TableEntry:
    return table.require(component, "compute", datatype=datatype)


INT8_ADD_PJ = _compute_entry(_HOROWITZ, "adder", "int8").energy_pj  # 0.03 pJ, Horowitz 2014 [V: esim]
INT32_ADD_PJ = _compute_entry(_HOROWITZ, "adder", "int32").energy_pj  # 0.1 pJ [V: PMC8934428 Table 3; esim]
INT8_MULT_PJ = _compute_entry(_HOROWITZ, "multiplier", "int8").energy_pj  # 0.2 pJ [V: esim]
INT32_MULT_PJ = _compute_entry(_HOROWITZ, "multiplier", "int32").energy_pj  # 3.1 pJ [V: PMC8934428; esim]
FP16_ADD_PJ = _compute_entry(_HOROWITZ, "adder", "fp16").energy_pj  # 0.4 pJ [V: esim]
FP32_ADD_PJ = _compute_entry(_HOROWITZ, "adder", "fp32").energy_pj  # 0.9 pJ [V: PMC8934428; esim]
FP16_MULT_PJ = _compute_entry(_HOROWITZ, "multiplier", "fp16").energy_pj  # 1.1 pJ [V: esim]
FP32_MULT_PJ = _compute_entry(_HOROWITZ, "multiplier", "fp32").energy_pj  # 3.7 pJ [V: PMC8934428; esim]

# 16-bit integer add/mult are *not* in Horowitz's table ([R]: "16-bit integer
# add/mult are not in the original table"; esim uses 0.05/1.0 pJ "estimated", another code
# table 0.06/0.8 pJ). [inferred] We interpolate with a power law E(b) = E8 * (b/8)^k fitted
# through the 8- and 32-bit points (see :func:`int_add_energy_pj`); 16 is the geometric
# midpoint of 8 and 32, so the interpolant there is the geometric mean of the two points,
# which the table lists (tests check it is sqrt(E8 * E32)):
INT16_ADD_PJ = _compute_entry(_HOROWITZ, "adder", "int16").energy_pj  # = 0.0548 pJ [inferred]
INT16_MULT_PJ = _compute_entry(_HOROWITZ, "multiplier", "int16").energy_pj  # = 0.787 pJ [inferred]

# Arithmetic area, 45 nm: Horowitz ISSCC 2014 area table, all [R] (unverified recollection);
# int16 the geometric mean of int8 and int32 [inferred].
INT8_ADD_UM2 = _compute_entry(_HOROWITZ, "adder", "int8").area_um2  # 36
INT32_ADD_UM2 = _compute_entry(_HOROWITZ, "adder", "int32").area_um2  # 137
INT8_MULT_UM2 = _compute_entry(_HOROWITZ, "multiplier", "int8").area_um2  # 282
INT32_MULT_UM2 = _compute_entry(_HOROWITZ, "multiplier", "int32").area_um2  # 3495
FP16_ADD_UM2 = _compute_entry(_HOROWITZ, "adder", "fp16").area_um2  # 1360
FP32_ADD_UM2 = _compute_entry(_HOROWITZ, "adder", "fp32").area_um2  # 4184
FP16_MULT_UM2 = _compute_entry(_HOROWITZ, "multiplier", "fp16").area_um2  # 1640
FP32_MULT_UM2 = _compute_entry(_HOROWITZ, "multiplier", "fp32").area_um2  # 7700
INT16_ADD_UM2 = _compute_entry(_HOROWITZ, "adder", "int16").area_um2  # = 70.2 [inferred]
INT16_MULT_UM2 = _compute_entry(_HOROWITZ, "multiplier", "int16").area_um2  # = 992.8 [inferred]

# Memory energy, 45 nm (Horowitz 2014): 8 KB 10 pJ [V: PMC8934428 uses half of it, 5 pJ per
# 32 bits], 32 KB 20 pJ [R], 1 MB 100 pJ [R], each per 64-bit access.
SRAM_8KIB_64BIT_PJ = _HOROWITZ.require("sram", "read", capacity_kib=8).energy_pj
SRAM_32KIB_64BIT_PJ = _HOROWITZ.require("sram", "read", capacity_kib=32).energy_pj
SRAM_1MIB_64BIT_PJ = _HOROWITZ.require("sram", "read", capacity_kib=1024).energy_pj
SRAM_FIT_WORD_BITS = _HOROWITZ.require("sram", "read", capacity_kib=8).attributes["width_bits"]
# DRAM: 640 pJ per 32-bit access, Han et al.'s (Deep Compression / EIE) condensation of
# Horowitz [R: the energy table of Han et al., "EIE", ISCA 2016]; consistent with
# Horowitz's 1.3-2.6 nJ per 64 bits [R].
_DRAM_ENTRY = _HOROWITZ.require("dram", "read")
DRAM_32BIT_PJ = _DRAM_ENTRY.energy_pj
DRAM_PER_BIT_PJ = DRAM_32BIT_PJ / _DRAM_ENTRY.attributes["width_bits"]  # = 20 pJ/bit

# Eyeriss normalized data-movement energy (Chen, Emer, Sze, ISCA 2016), in multiples of
# one MAC: its table "Normalized energy cost relative to a MAC operation extracted from a
# commercial 65 nm process" [R: the values as reproduced in Sze et al., Proc. IEEE 2017].
EYERISS_RF_X_MAC = _EYERISS.require("register_file", "read").energy_x_mac  # 1: RF (0.5 kB, in PE)
EYERISS_NOC_X_MAC = _EYERISS.require("noc", "transfer").energy_x_mac  # 2: inter-PE / NoC, 1-2 mm
EYERISS_GLB_X_MAC = _EYERISS.require("sram", "read").energy_x_mac  # 6: global buffer (> 100 kB)
EYERISS_DRAM_X_MAC = _EYERISS.require("dram", "read").energy_x_mac  # 200: DRAM

# Storage area, 45 nm. 6T SRAM bit cell of Intel's 45 nm process: Mistry et al., "A 45nm
# Logic Technology with High-k+Metal Gate Transistors, Strained Silicon, 9 Cu Interconnect
# Layers, 193nm Dry Patterning, and 100% Pb-free Packaging", IEDM 2007 [R]; the fraction of
# an SRAM macro's area that is bit cells (the rest: decoders, sense amplifiers, I/O,
# redundancy) is an assumed mid-range value [inferred].
_CELL = _HOROWITZ.require("sram_cell")
SRAM_BITCELL_UM2 = _CELL.area_um2  # 0.346
SRAM_ARRAY_EFFICIENCY = _CELL.attributes["array_efficiency"]  # 0.7
SRAM_AREA_PER_KIB_MM2 = 8192 * SRAM_BITCELL_UM2 / SRAM_ARRAY_EFFICIENCY * 1e-6  # = 0.00405 mm^2
# One register bit = one D flip-flop of the Nangate 45 nm Open Cell Library (FreePDK45),
# DFF_X1: 4.522 um^2 (3.23 um x 1.4 um row) [R]. Read multiplexing/decoding of a register
# file is not included.
DFF_BIT_UM2 = _HOROWITZ.require("flip_flop").area_um2

PRECISION_BITS = {"int8": 8, "int16": 16, "int32": 32, "fp16": 16, "fp32": 32}
"""Bit width of each supported datapath precision."""

_MULT_ADD_PJ = {
    "int8": (INT8_MULT_PJ, INT8_ADD_PJ),
    "int16": (INT16_MULT_PJ, INT16_ADD_PJ),
    "int32": (INT32_MULT_PJ, INT32_ADD_PJ),
    "fp16": (FP16_MULT_PJ, FP16_ADD_PJ),
    "fp32": (FP32_MULT_PJ, FP32_ADD_PJ),
}
_MULT_ADD_UM2 = {
    "int8": (INT8_MULT_UM2, INT8_ADD_UM2),
    "int16": (INT16_MULT_UM2, INT16_ADD_UM2),
    "int32": (INT32_MULT_UM2, INT32_ADD_UM2),
    "fp16": (FP16_MULT_UM2, FP16_ADD_UM2),
    "fp32": (FP32_MULT_UM2, FP32_ADD_UM2),
}


def _out(x: Any) -> Any:
    """A 0-d result as a Python float, an array as is."""
    arr = np.asarray(x, dtype=float)
    return float(arr) if arr.ndim == 0 else arr


def _positive(x: Any, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if np.any(~(arr > 0)):
        bad = arr if arr.ndim == 0 else arr[~(arr > 0)][0]
        raise ValueError(f"{what} must be > 0, got {float(bad)!r}")
    return arr


def _check_precision(precision: str) -> str:
    if precision not in PRECISION_BITS:
        raise ValueError(f"unknown precision {precision!r}; choices: {sorted(PRECISION_BITS)}")
    return precision


def int_precision(word_bits: int) -> str:
    """The integer precision name of a datapath width: 8 -> ``"int8"``."""
    name = f"int{word_bits}"
    if name not in PRECISION_BITS:
        raise ValueError(f"no integer precision of {word_bits} bits; choices: 8, 16, 32")
    return name


# ---------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------


def _int_power_law(bits: Any, at8: float, at32: float) -> Any:
    """``at8 * (bits/8) ** k`` with ``k`` such that the value at 32 bits is ``at32``.

    The two anchors are returned as given rather than computed: ``log`` and ``pow`` are not
    correctly rounded, and on some CPUs ``at8 * 4.0 ** k`` lands one ulp from ``at32``."""
    b = _positive(bits, "bits")
    k = math.log(at32 / at8) / math.log(32 / 8)
    return _out(np.where(b == 8, at8, np.where(b == 32, at32, at8 * (b / 8.0) ** k)))


def int_add_energy_pj(bits: Any) -> Any:
    """Integer adder energy (pJ) for a ``bits``-wide add: power law through Horowitz's 8-
    and 32-bit points (exact there; 16 bits gives :data:`INT16_ADD_PJ`)."""
    return _int_power_law(bits, INT8_ADD_PJ, INT32_ADD_PJ)


def int_mult_energy_pj(bits: Any) -> Any:
    """Integer multiplier energy (pJ), power law through Horowitz's 8- and 32-bit points."""
    return _int_power_law(bits, INT8_MULT_PJ, INT32_MULT_PJ)


def int_mac_energy_pj(bits: Any) -> Any:
    """Integer MAC energy (pJ) = multiply + add at the same width (vectorized over bits)."""
    return _out(np.asarray(int_mult_energy_pj(bits)) + np.asarray(int_add_energy_pj(bits)))


def int_add_area_um2(bits: Any) -> Any:
    """Integer adder area (um^2), power law through Horowitz's 8- and 32-bit areas."""
    return _int_power_law(bits, INT8_ADD_UM2, INT32_ADD_UM2)


def int_mult_area_um2(bits: Any) -> Any:
    """Integer multiplier area (um^2), power law through Horowitz's 8- and 32-bit areas."""
    return _int_power_law(bits, INT8_MULT_UM2, INT32_MULT_UM2)


def int_mac_area_um2(bits: Any) -> Any:
    """Integer MAC datapath area (um^2) = multiplier + adder (vectorized over bits)."""
    return _out(np.asarray(int_mult_area_um2(bits)) + np.asarray(int_add_area_um2(bits)))


def mac_energy_pj(precision: str, accumulate: str | None = None) -> float:
    """Energy of one multiply-accumulate (pJ): Horowitz 45 nm multiply at ``precision``
    plus an add at ``accumulate`` (default: the same precision; e.g. ``"int8"`` with
    ``accumulate="int32"`` for a TPU-style 32-bit accumulator)."""
    mult, add = _MULT_ADD_PJ[_check_precision(precision)]
    if accumulate is not None:
        add = _MULT_ADD_PJ[_check_precision(accumulate)][1]
    return mult + add


def mac_area_um2(precision: str, accumulate: str | None = None) -> float:
    """Area of one MAC datapath (um^2): multiplier at ``precision`` + adder at
    ``accumulate`` (default the same), Horowitz 45 nm areas."""
    mult, add = _MULT_ADD_UM2[_check_precision(precision)]
    if accumulate is not None:
        add = _MULT_ADD_UM2[_check_precision(accumulate)][1]
    return mult + add


# ---------------------------------------------------------------------------------------
# Memories (Horowitz-based, absolute)
# ---------------------------------------------------------------------------------------



@dataclass(frozen=True)
class LogLogFit:
    """Energy per access as a piecewise-linear function of capacity in log-log space,
    through the points of a table's entries (sorted by capacity), for accesses of
    ``width_bits``; other widths scale linearly. Beyond the first and last points the end
    segments are extrapolated; one point gives a size-independent energy."""

    log_kib: np.ndarray
    log_pj: np.ndarray
    slopes: np.ndarray
    width_bits: float

    @classmethod
    def of(cls, entries: list[TableEntry], what: str) -> LogLogFit:
        if not entries:
            raise EnergyTableError(f"{what}: no entries to fit")
        widths = {e.attr("width_bits") for e in entries}
        if len(widths) != 1:
            odd = next(e for e in entries if e.attr("width_bits") != entries[0].attr("width_bits"))
            raise EnergyTableError(f"{odd.where}: attributes.width_bits: all {what} entries "
                                   f"must share one access width, got {sorted(widths)}")
        pts = sorted((float(e.attr("capacity_kib")), e.energy_pj, e.where) for e in entries)
        for (k0, _, _), (k1, _, w1) in itertools.pairwise(pts):
            if k1 == k0:
                raise EnergyTableError(f"{w1}: attributes.capacity_kib: repeats {k0} KiB")
        if any(p[1] <= 0 for p in pts):
            bad = next(p for p in pts if p[1] <= 0)
            raise EnergyTableError(f"{bad[2]}: energy_pj: must be > 0 to be interpolated in log-log, got {bad[1]}")
        log_kib = np.log(np.array([p[0] for p in pts]))
        log_pj = np.log(np.array([p[1] for p in pts]))
        slopes = np.diff(log_pj) / np.diff(log_kib) if len(pts) > 1 else np.zeros(1)
        return cls(log_kib, log_pj, slopes, widths.pop())

    def law(self, capacity_kib: Any, word_bits: Any, xp: Any = np) -> Any:
        """Energy (pJ) on any array namespace ``xp`` (``jax.numpy``: traced and
        differentiable in the capacity), without argument checks."""
        lk, lp, sl = self.log_kib, self.log_pj, self.slopes
        lx = xp.log(capacity_kib)
        n = len(lk)
        if n == 1:
            log_pj = lp[0] + 0.0 * lx
        else:
            log_pj = lp[n - 2] + sl[n - 2] * (lx - lk[n - 2])
            for i in range(n - 3, -1, -1):
                log_pj = xp.where(lx < lk[i + 1], lp[i] + sl[i] * (lx - lk[i]), log_pj)
        return xp.exp(log_pj) * word_bits / self.width_bits


_SRAM_FIT = LogLogFit.of(_HOROWITZ.find("sram", "read"), "horowitz_45nm sram read")
_SRAM_LOG_KIB, _SRAM_LOG_PJ, _SRAM_SLOPES = _SRAM_FIT.log_kib, _SRAM_FIT.log_pj, _SRAM_FIT.slopes


def sram_energy_pj(capacity_kib: Any, word_bits: Any = SRAM_FIT_WORD_BITS) -> Any:
    """Energy (pJ) of one ``word_bits``-wide access to an SRAM of ``capacity_kib`` KiB.

    Piecewise-linear in log-log space through Horowitz's three 64-bit points (8 KiB 10 pJ,
    32 KiB 20 pJ, 1 MiB 100 pJ), so it passes exactly through each of them and is
    continuous and increasing; below 8 KiB and above 1 MiB the end segments are
    extrapolated (slopes 0.5 and ln 5 / ln 32 = 0.464). The 64-bit energy is scaled
    linearly by ``word_bits / 64`` [inferred: constant energy per bit at a given size].
    Reads and writes are taken to cost the same. Vectorized over both arguments.
    """
    return _out(sram_energy_law(_positive(capacity_kib, "capacity_kib"), _positive(word_bits, "word_bits")))


def sram_energy_law(capacity_kib: Any, word_bits: Any, xp: Any = np) -> Any:
    """:func:`sram_energy_pj`'s law on any array namespace ``xp`` (``jax.numpy``: traced
    and differentiable in the capacity), without argument checks."""
    return _SRAM_FIT.law(capacity_kib, word_bits, xp)


def register_file_energy_pj(capacity_words: Any, word_bits: Any) -> Any:
    """Energy (pJ) of one word access to a small register file (< 1 KiB) of
    ``capacity_words`` words of ``word_bits`` bits (a single operand register is
    ``capacity_words=1``).

    Horowitz's table has no register file; [inferred] we extrapolate the SRAM fit's
    smallest segment (energy ~ sqrt(capacity)) down to the register file's size. Cross-check
    against the Eyeriss ratio (RF of 0.5 kB = 1x MAC, Chen et al. ISCA 2016): a 256-word x 16-bit RF
    gives 0.63 pJ, 0.74x the 0.84 pJ Horowitz int16 MAC.
    """
    words = _positive(capacity_words, "capacity_words")
    bits = _positive(word_bits, "word_bits")
    return sram_energy_pj(words * bits / 8192.0, bits)


def dram_energy_pj(word_bits: Any) -> Any:
    """DRAM energy (pJ) per ``word_bits``-wide word: :data:`DRAM_PER_BIT_PJ` x bits."""
    return _out(DRAM_PER_BIT_PJ * _positive(word_bits, "word_bits"))


# ---------------------------------------------------------------------------------------
# Area
# ---------------------------------------------------------------------------------------


def sram_area_mm2(capacity_kib: Any) -> Any:
    """SRAM macro area (mm^2): :data:`SRAM_AREA_PER_KIB_MM2` per KiB (bit cell / array
    efficiency). Vectorized; zero capacity gives zero area."""
    kib = np.asarray(capacity_kib, dtype=float)
    if np.any(kib < 0):
        raise ValueError(f"capacity_kib must be >= 0, got {kib.min()!r}")
    return _out(kib * SRAM_AREA_PER_KIB_MM2)


def register_area_um2(words: Any, word_bits: Any) -> Any:
    """Flip-flop register storage area (um^2): ``words x word_bits x DFF_BIT_UM2``."""
    w = np.asarray(words, dtype=float)
    if np.any(w < 0):
        raise ValueError(f"words must be >= 0, got {w.min()!r}")
    return _out(w * _positive(word_bits, "word_bits") * DFF_BIT_UM2)


# ---------------------------------------------------------------------------------------
# Energy tables an accelerator is lowered with
# ---------------------------------------------------------------------------------------


_RATIO_CLASSES = (("rf_x_mac", "register_file", "read"), ("noc_x_mac", "noc", "transfer"),
                  ("buffer_x_mac", "sram", "read"), ("dram_x_mac", "dram", "read"))


def _ratio_table(name: str, ratios: tuple[float, ...]) -> EnergyTable:
    """A normalized table in memory: the four ratios over the Horowitz table (MACs, areas)."""
    rf, noc, buf, dram = ratios
    src = f"TechModel({name!r}) ratio"
    mine = [TableEntry(c, a, {}, src, energy_x_mac=r, where=f"TechModel({name!r}).{c}")
            for r, c, acts in ((rf, "register_file", ("read", "write")), (buf, "sram", ("read", "write")),
                               (dram, "dram", ("read", "write")), (noc, "noc", ("transfer",)),
                               (noc, "neighbour_hop", ("transfer",)))
            for a in acts]
    replaced = {(e.component, e.action) for e in mine}
    rest = [e for e in _HOROWITZ.entries if (e.component, e.action) not in replaced]
    return EnergyTable(name=name, entries=(*mine, *rest), path=None)


@dataclass(frozen=True)
class TechModel:
    """One energy and area table an accelerator is lowered with, in pJ and um^2.

    Its numbers come from an :class:`~accelerators.energy_table.EnergyTable` (YAML, see
    :mod:`accelerators.energy_table`): the built-in :data:`HOROWITZ_45NM`
    (``accelerators/tables/horowitz_45nm.yaml``) and :data:`EYERISS_NORMALIZED`
    (``eyeriss_normalized.yaml``), or a user's: ``TechModel.from_yaml("my_7nm.yaml")`` (or
    the path as an accelerator's ``tech``) replaces the built-in table. How entries are
    read:

    * MAC = the ``multiplier`` of the precision + the ``adder`` of the accumulator's.
    * ``sram`` / ``register_file`` / ``dram`` / ``noc`` / ``neighbour_hop`` energies given
      as ``energy_x_mac`` cost that multiple of the MAC whatever the size (a normalized
      table). Given as ``energy_pj``: SRAM and register files follow a
      :class:`LogLogFit` through the entries' capacities, scaled linearly by the word
      width; a table without ``register_file`` entries extrapolates its SRAM fit to the
      register file's size (capacity = words x bits); DRAM scales per bit; NoC and hop
      energies are per word (scaled by width if the entry gives ``width_bits``).
    * areas: SRAM = 8192 bits/KiB x ``sram_cell`` area / its array efficiency; registers
      = bits x ``flip_flop`` area; MAC = multiplier + adder areas.

    For backward compatibility a table can also be given as four ratios: with all four
    ``*_x_mac`` set and no ``table``, the model is normalized over the Horowitz MAC and
    areas. With a normalized ``table``, the ratios are read from it.

    Methods take a ``precision`` name (``"int8"``, ``"int16"``, ``"int32"``, ``"fp16"``,
    ``"fp32"``); the word width is the precision's. Capacities may be numpy arrays.

    Attributes:
        name: ``"horowitz_45nm"``, ``"eyeriss_normalized"`` or the table's name.
        rf_x_mac, noc_x_mac, buffer_x_mac, dram_x_mac: normalized costs of a register-file
            access, an array NoC delivery, a global-buffer/SRAM access, a DRAM access
            (``None`` for an absolute table).
        table: the entries behind every number.
    """

    name: str
    rf_x_mac: float | None = None
    noc_x_mac: float | None = None
    buffer_x_mac: float | None = None
    dram_x_mac: float | None = None
    table: EnergyTable | None = field(default=None, repr=False, hash=False)

    def __post_init__(self) -> None:
        ratios = (self.rf_x_mac, self.noc_x_mac, self.buffer_x_mac, self.dram_x_mac)
        if any(r is None for r in ratios) and any(r is not None for r in ratios):
            raise ValueError(f"TechModel {self.name!r}: give all four *_x_mac ratios or none")
        for field_name, r in zip(("rf_x_mac", "noc_x_mac", "buffer_x_mac", "dram_x_mac"), ratios):
            if r is not None and not r >= 0:
                raise ValueError(f"TechModel.{field_name} must be >= 0, got {r!r}")
        if self.table is None:
            table = _HOROWITZ if ratios[0] is None else _ratio_table(self.name, ratios)  # type: ignore[arg-type]
            object.__setattr__(self, "table", table)
        elif ratios[0] is not None:
            raise ValueError(f"TechModel {self.name!r}: give a table or the four ratios, not both")
        else:
            found = [self._x_mac(c, a) for _, c, a in _RATIO_CLASSES]
            if all(r is not None for r in found):
                for (f, _, _), r in zip(_RATIO_CLASSES, found):
                    object.__setattr__(self, f, r)
        object.__setattr__(self, "_fits", {})

    @classmethod
    def from_table(cls, table: EnergyTable) -> TechModel:
        """The model of a loaded table (named as the table)."""
        return cls(table.name, table=table)

    @classmethod
    def from_yaml(cls, path: str | Any) -> TechModel:
        """The model of a YAML table file (:class:`~accelerators.energy_table.EnergyTableError`
        naming the file, entry and field if it is malformed or incomplete)."""
        return cls.from_table(load_energy_table(path))

    @property
    def normalized(self) -> bool:
        return self.rf_x_mac is not None

    # -- table lookups -------------------------------------------------------------------
    @property
    def _t(self) -> EnergyTable:
        assert self.table is not None
        return self.table

    def _x_mac(self, component: str, action: str) -> float | None:
        hits = self._t.find(component, action)
        if hits and all(e.energy_x_mac is not None for e in hits):
            return hits[0].energy_x_mac
        return None

    def _fit(self, component: str, action: str) -> LogLogFit | None:
        """The fit of ``component``'s ``energy_pj`` entries, ``None`` if it has none."""
        key = (component, action)
        fits = self.__dict__["_fits"]
        if key not in fits:
            hits = [e for e in self._t.find(component, action) if e.energy_pj is not None]
            fits[key] = LogLogFit.of(hits, f"{self._t.path or self.name} {component} {action}") if hits else None
        return fits[key]

    def _component_energy(self, component: str, action: str) -> TableEntry:
        hits = self._t.find(component, action)
        if not hits:
            raise EnergyTableError(f"{self._t.path or self.name}: no entry for component "
                                   f"{component!r} action {action!r} (the model needs it)")
        mixed = {e.energy_x_mac is None for e in hits}
        if len(mixed) > 1:
            raise EnergyTableError(f"{hits[0].where}: {component} {action} entries mix energy_x_mac "
                                   "with absolute energies")
        return hits[0]

    def _per_word(self, entry: TableEntry, precision: str) -> float:
        if entry.energy_x_mac is not None:
            return float(entry.energy_x_mac * self.mac_energy_pj(precision))
        if entry.energy_of is not None:
            ref = entry.energy_of
            return float(self.register_energy_pj(ref["capacity_words"], precision, ref.get("action", "read")))
        width = entry.attributes.get("width_bits")
        bits = PRECISION_BITS[_check_precision(precision)]
        return float(entry.energy_pj if width is None else entry.energy_pj * bits / width)  # type: ignore[operator]

    # -- energy --------------------------------------------------------------------------
    def mac_energy_pj(self, precision: str, accumulate: str | None = None) -> float:
        """One MAC (pJ): the table's multiplier at ``precision`` + adder at ``accumulate``
        (default the same precision)."""
        if self.table is _HOROWITZ or self.table is None:
            return mac_energy_pj(precision, accumulate)
        mult = self._t.require("multiplier", "compute", datatype=_check_precision(precision))
        add = self._t.require("adder", "compute", datatype=_check_precision(accumulate or precision))
        if mult.energy_pj is None or add.energy_pj is None:
            raise EnergyTableError(f"{mult.where}: energy_pj: a MAC needs absolute energies")
        return mult.energy_pj + add.energy_pj

    def _scaled(self, ratio: float | None, like: Any, precision: str) -> Any:
        assert ratio is not None
        return _out(np.full(np.shape(like), ratio * self.mac_energy_pj(precision)))

    def register_energy_pj(self, capacity_words: Any, precision: str, action: str = "read") -> Any:
        """One word access (``action`` read or write) to a per-PE register file / operand
        register of ``capacity_words`` words."""
        bits = PRECISION_BITS[_check_precision(precision)]
        if self._t.find("register_file", action):
            entry = self._component_energy("register_file", action)
            if entry.energy_x_mac is not None:
                _positive(capacity_words, "capacity_words")
                return self._scaled(entry.energy_x_mac, capacity_words, precision)
            fit = self._fit("register_file", action)
        else:
            self._component_energy("sram", action)
            fit = self._fit("sram", action)
            if fit is None:
                raise EnergyTableError(f"{self._t.path or self.name}: register_file {action}: no "
                                       "entry, and no absolute sram entries to extrapolate")
        words = _positive(capacity_words, "capacity_words")
        b = _positive(bits, "word_bits")
        return _out(fit.law(_positive(words * b / 8192.0, "capacity_kib"), _positive(b, "word_bits")))  # type: ignore[union-attr]

    def sram_energy_pj(self, capacity_kib: Any, precision: str, action: str = "read") -> Any:
        """One word access (``action`` read or write) to an on-chip SRAM of ``capacity_kib`` KiB."""
        bits = PRECISION_BITS[_check_precision(precision)]
        entry = self._component_energy("sram", action)
        if entry.energy_x_mac is not None:
            _positive(capacity_kib, "capacity_kib")
            return self._scaled(entry.energy_x_mac, capacity_kib, precision)
        fit = self._fit("sram", action)
        assert fit is not None
        return _out(fit.law(_positive(capacity_kib, "capacity_kib"), _positive(bits, "word_bits")))

    def sram_energy_law(self, capacity_kib: Any, word_bits: Any, xp: Any = np, action: str = "read") -> Any:
        """The SRAM energy law of an absolute table on array namespace ``xp`` (``jax.numpy``
        for gradients), without argument checks."""
        fit = self._fit("sram", action)
        if fit is None:
            raise EnergyTableError(f"{self._t.path or self.name}: sram {action}: no absolute entries")
        return fit.law(capacity_kib, word_bits, xp)

    def register_energy_law(self, capacity_words: Any, word_bits: Any, xp: Any = np,
                            action: str = "read") -> Any:
        """:meth:`register_energy_pj` of an absolute table on array namespace ``xp``,
        without argument checks."""
        own = self._fit("register_file", action) if self._t.find("register_file", action) else None
        if own is not None:
            return own.law(capacity_words * word_bits / 8192.0, word_bits, xp)
        return self.sram_energy_law(capacity_words * word_bits / 8192.0, word_bits, xp, action)

    def noc_energy_pj(self, precision: str) -> float:
        """One word delivered from a global buffer to one PE over the array NoC.

        Both built-in tables use the Eyeriss ratio, 2x MAC (Chen et al. ISCA 2016); Horowitz
        has no on-chip network figure [inferred]."""
        return self._per_word(self._component_energy("noc", "transfer"), precision)

    def hop_energy_pj(self, precision: str) -> float:
        """One word forwarded from a PE to its neighbour (systolic operand forwarding).

        [inferred] Absolute Horowitz table: the sender's read of its one-word pipeline
        register (the receiver's register write is counted as the child level's fill, so
        it is not repeated here); the wire of one PE pitch (tens of um, vs the 1-2 mm of an
        Eyeriss array-NoC transfer) is neglected. Normalized: Eyeriss counts inter-PE
        transfers (its psum forwarding between neighbours included) as "array" traffic,
        so ``noc_x_mac`` x MAC."""
        return self._per_word(self._component_energy("neighbour_hop", "transfer"), precision)

    def dram_energy_pj(self, precision: str, action: str = "read") -> float:
        """One word read from or written to DRAM."""
        entry = self._component_energy("dram", action)
        if entry.energy_x_mac is not None:
            return float(entry.energy_x_mac * self.mac_energy_pj(precision))
        bits = PRECISION_BITS[_check_precision(precision)]
        per_bit = entry.energy_pj / entry.attr("width_bits")  # type: ignore[operator]
        return float(_out(per_bit * _positive(bits, "word_bits")))

    def leakage_pj_per_cycle(self, component: str, capacity_kib: float | None = None) -> float:
        """Static energy of one instance of ``component`` per cycle, from the entries of
        the table that give ``leakage_pj_per_cycle`` (any action); ``0.0`` if none does.
        For a memory of ``capacity_kib`` (``sram``, ``register_file``) the entry nearest in
        capacity (log scale) is scaled linearly in capacity: static power is drawn by every
        bit cell, so it grows with the cell count. Otherwise the first such entry's value."""
        hits = [e for action in ("read", "write", "compute", "transfer", None)
                for e in self._t.find(component, action) if e.leakage_pj_per_cycle is not None]
        if not hits:
            return 0.0
        if capacity_kib is None or not all("capacity_kib" in e.attributes for e in hits):
            return float(hits[0].leakage_pj_per_cycle)  # type: ignore[arg-type]
        kib = float(_positive(capacity_kib, "capacity_kib"))
        near = min(hits, key=lambda e: abs(math.log(kib / float(e.attributes["capacity_kib"]))))
        return float(near.leakage_pj_per_cycle) * kib / float(near.attributes["capacity_kib"])  # type: ignore[arg-type]

    # -- area ----------------------------------------------------------------------------
    def _area_entry(self, component: str, **attrs: Any) -> TableEntry:
        return self._t.require(component, None if component in ("sram_cell", "flip_flop") else "compute", **attrs)

    def sram_area_mm2(self, capacity_kib: Any) -> Any:
        """SRAM macro area (mm^2): 8192 bits/KiB x the table's bit cell area / its array
        efficiency. Vectorized; zero capacity gives zero area."""
        kib = np.asarray(capacity_kib, dtype=float)
        if np.any(kib < 0):
            raise ValueError(f"capacity_kib must be >= 0, got {kib.min()!r}")
        cell = self._area_entry("sram_cell")
        per_kib = 8192 * cell.area_um2 / cell.attributes["array_efficiency"] * 1e-6  # type: ignore[operator]
        return _out(kib * per_kib)

    def register_area_um2(self, words: Any, word_bits: Any) -> Any:
        """Flip-flop register storage area (um^2): ``words x word_bits x`` flip-flop area."""
        w = np.asarray(words, dtype=float)
        if np.any(w < 0):
            raise ValueError(f"words must be >= 0, got {w.min()!r}")
        return _out(w * _positive(word_bits, "word_bits") * self._area_entry("flip_flop").area_um2)

    def int_mac_area_um2(self, bits: Any) -> Any:
        """Integer MAC area (um^2) at any width: multiplier + adder, each a power law through
        the table's int8 and int32 areas (vectorized over ``bits``)."""
        def law(component: str) -> Any:
            a8 = self._area_entry(component, datatype="int8").area_um2
            a32 = self._area_entry(component, datatype="int32").area_um2
            if a8 is None or a32 is None:
                raise EnergyTableError(f"{self._t.path or self.name}: {component}: area_um2 missing for int8/int32")
            return np.asarray(_int_power_law(bits, a8, a32))
        return _out(law("multiplier") + law("adder"))


def _builtin_model(name: str) -> TechModel:
    table = builtin_table(name)
    return TechModel.from_table(table) if name != "horowitz_45nm" else TechModel(name)


HOROWITZ_45NM = _builtin_model("horowitz_45nm")
"""Absolute 45 nm energies (Horowitz ISSCC 2014 and the fits above):
``accelerators/tables/horowitz_45nm.yaml``."""

EYERISS_NORMALIZED = _builtin_model("eyeriss_normalized")
"""Eyeriss (ISCA 2016) normalized costs, RF:NoC:GLB:DRAM = 1:2:6:200 x the Horowitz MAC:
``accelerators/tables/eyeriss_normalized.yaml``."""

TECH_MODELS = {m.name: m for m in (HOROWITZ_45NM, EYERISS_NORMALIZED)}
"""The built-in tables by name (what a design point's ``tech`` string may name)."""

TABLE_SUFFIXES = (".yaml", ".yml")


def get_tech(tech: TechModel | str) -> TechModel:
    """A :class:`TechModel` from itself, a built-in name (``"horowitz_45nm"``,
    ``"eyeriss_normalized"``) or the path of a YAML table (``*.yaml``); ``ValueError``
    listing the names otherwise."""
    if isinstance(tech, TechModel):
        return tech
    if isinstance(tech, str) and tech in TECH_MODELS:
        return TECH_MODELS[tech]
    if isinstance(tech, str) and tech.endswith(TABLE_SUFFIXES):
        return TechModel.from_yaml(tech)
    raise ValueError(f"unknown tech {tech!r}; choices: {sorted(TECH_MODELS)}, a *.yaml table or a TechModel")
