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

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

# ---------------------------------------------------------------------------------------
# Arithmetic energy, 45 nm, 0.9 V: Horowitz, "Computing's Energy Problem (and what we can
# do about it)", ISSCC 2014.
# ---------------------------------------------------------------------------------------
INT8_ADD_PJ = 0.03  # Horowitz 2014 [V: esim EnergyDatabase]
INT32_ADD_PJ = 0.1  # Horowitz 2014 [V: PMC8934428 Table 3; esim]
INT8_MULT_PJ = 0.2  # Horowitz 2014 [V: esim]
INT32_MULT_PJ = 3.1  # Horowitz 2014 [V: PMC8934428; esim]
FP16_ADD_PJ = 0.4  # Horowitz 2014 [V: esim]
FP32_ADD_PJ = 0.9  # Horowitz 2014 [V: PMC8934428; esim]
FP16_MULT_PJ = 1.1  # Horowitz 2014 [V: esim]
FP32_MULT_PJ = 3.7  # Horowitz 2014 [V: PMC8934428; esim]

# 16-bit integer add/mult are *not* in Horowitz's table ([R]: "16-bit integer
# add/mult are not in the original table"; esim uses 0.05/1.0 pJ "estimated", another code
# table 0.06/0.8 pJ). [inferred] We interpolate with a power law E(b) = E8 * (b/8)^k fitted
# through the 8- and 32-bit points (see :func:`int_add_energy_pj`); 16 is the geometric
# midpoint of 8 and 32, so the interpolant there is the geometric mean of the two points:
INT16_ADD_PJ = math.sqrt(INT8_ADD_PJ * INT32_ADD_PJ)  # = 0.0548 pJ [inferred, see above]
INT16_MULT_PJ = math.sqrt(INT8_MULT_PJ * INT32_MULT_PJ)  # = 0.787 pJ [inferred, see above]

# ---------------------------------------------------------------------------------------
# Arithmetic area, 45 nm: Horowitz ISSCC 2014 area table. All [R] ("Horowitz
# area numbers (um^2, 45 nm)", marked as unverified recollection).
# ---------------------------------------------------------------------------------------
INT8_ADD_UM2 = 36.0  # Horowitz 2014 area table [R]
INT32_ADD_UM2 = 137.0  # Horowitz 2014 area table [R]
INT8_MULT_UM2 = 282.0  # Horowitz 2014 area table [R]
INT32_MULT_UM2 = 3495.0  # Horowitz 2014 area table [R]
FP16_ADD_UM2 = 1360.0  # Horowitz 2014 area table [R]
FP32_ADD_UM2 = 4184.0  # Horowitz 2014 area table [R]
FP16_MULT_UM2 = 1640.0  # Horowitz 2014 area table [R]
FP32_MULT_UM2 = 7700.0  # Horowitz 2014 area table [R]
# int16: same power-law interpolation as the energies [inferred]:
INT16_ADD_UM2 = math.sqrt(INT8_ADD_UM2 * INT32_ADD_UM2)  # = 70.2 um^2 [inferred]
INT16_MULT_UM2 = math.sqrt(INT8_MULT_UM2 * INT32_MULT_UM2)  # = 992.8 um^2 [inferred]

# ---------------------------------------------------------------------------------------
# Memory energy, 45 nm (Horowitz 2014).
# ---------------------------------------------------------------------------------------
SRAM_8KIB_64BIT_PJ = 10.0  # 8 KB cache, 64-bit access [V: PMC8934428 uses half of it, 5 pJ per 32 bits]
SRAM_32KIB_64BIT_PJ = 20.0  # 32 KB cache, 64-bit access [R]
SRAM_1MIB_64BIT_PJ = 100.0  # 1 MB cache, 64-bit access [R]
SRAM_FIT_WORD_BITS = 64  # the access width of the three points above
# DRAM: 640 pJ per 32-bit access, Han et al.'s (Deep Compression / EIE) condensation of
# Horowitz [R: the energy table of Han et al., "EIE", ISCA 2016]; consistent with
# Horowitz's 1.3-2.6 nJ per 64 bits [R].
DRAM_32BIT_PJ = 640.0
DRAM_PER_BIT_PJ = DRAM_32BIT_PJ / 32  # = 20 pJ/bit [derived from the line above]

# ---------------------------------------------------------------------------------------
# Eyeriss normalized data-movement energy (Chen, Emer, Sze, ISCA 2016), in multiples of
# one MAC: its table "Normalized energy cost relative to a MAC operation extracted from a
# commercial 65 nm process" [R: the values as reproduced in Sze et al., Proc. IEEE 2017].
# ---------------------------------------------------------------------------------------
EYERISS_RF_X_MAC = 1.0  # RF (0.5 kB, in PE) [R]
EYERISS_NOC_X_MAC = 2.0  # array: inter-PE / NoC, 1-2 mm [R]
EYERISS_GLB_X_MAC = 6.0  # global buffer (> 100 kB) [R]
EYERISS_DRAM_X_MAC = 200.0  # DRAM [R]

# ---------------------------------------------------------------------------------------
# Storage area, 45 nm.
# ---------------------------------------------------------------------------------------
# 6T SRAM bit cell of Intel's 45 nm process: Mistry et al., "A 45nm Logic Technology with
# High-k+Metal Gate Transistors, Strained Silicon, 9 Cu Interconnect Layers, 193nm Dry
# Patterning, and 100% Pb-free Packaging", IEDM 2007. [R: not re-checked here.]
SRAM_BITCELL_UM2 = 0.346
# [inferred] Fraction of an SRAM macro's area that is bit cells (the rest: decoders, sense
# amplifiers, I/O, redundancy). An assumed mid-range value, not from a source.
SRAM_ARRAY_EFFICIENCY = 0.7
SRAM_AREA_PER_KIB_MM2 = 8192 * SRAM_BITCELL_UM2 / SRAM_ARRAY_EFFICIENCY * 1e-6  # = 0.00405 mm^2
# One register bit = one D flip-flop of the Nangate 45 nm Open Cell Library (FreePDK45),
# DFF_X1: 4.522 um^2 (3.23 um x 1.4 um row). [R: recollection; the same figure appears in
# Nangate-derived liberty fixtures in public code.] Read multiplexing/decoding of a
# register file is not included.
DFF_BIT_UM2 = 4.522

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
    """``at8 * (bits/8) ** k`` with ``k`` such that the value at 32 bits is ``at32``."""
    b = _positive(bits, "bits")
    k = math.log(at32 / at8) / math.log(32 / 8)
    return _out(at8 * (b / 8.0) ** k)


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

_SRAM_LOG_KIB = np.log(np.array([8.0, 32.0, 1024.0]))
_SRAM_LOG_PJ = np.log(np.array([SRAM_8KIB_64BIT_PJ, SRAM_32KIB_64BIT_PJ, SRAM_1MIB_64BIT_PJ]))
_SRAM_SLOPES = np.diff(_SRAM_LOG_PJ) / np.diff(_SRAM_LOG_KIB)  # 0.5 and 0.464


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
    lk, lp, sl = _SRAM_LOG_KIB, _SRAM_LOG_PJ, _SRAM_SLOPES
    lx = xp.log(capacity_kib)
    log_pj = xp.where(lx < lk[1], lp[0] + sl[0] * (lx - lk[0]), lp[1] + sl[1] * (lx - lk[1]))
    return xp.exp(log_pj) * word_bits / SRAM_FIT_WORD_BITS


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


@dataclass(frozen=True)
class TechModel:
    """One energy table: per-access energies of each kind of storage/transfer, in pJ.

    With all four ``*_x_mac`` ratios ``None`` the model is absolute (Horowitz 45 nm:
    capacity-dependent SRAM/RF energies, DRAM per bit). With all four set, it is a
    normalized table: each level costs ``ratio x MAC`` whatever its size, the MAC being
    the Horowitz 45 nm MAC of the precision (so results stay in pJ).

    Methods take a ``precision`` name (``"int8"``, ``"int16"``, ``"int32"``, ``"fp16"``,
    ``"fp32"``); the word width is the precision's. Capacities may be numpy arrays.

    Attributes:
        name: ``"horowitz_45nm"``, ``"eyeriss_normalized"`` or a user name.
        rf_x_mac, noc_x_mac, buffer_x_mac, dram_x_mac: normalized costs of a register-file
            access, an array NoC delivery, a global-buffer/SRAM access, a DRAM access.
    """

    name: str
    rf_x_mac: float | None = None
    noc_x_mac: float | None = None
    buffer_x_mac: float | None = None
    dram_x_mac: float | None = None

    def __post_init__(self) -> None:
        ratios = (self.rf_x_mac, self.noc_x_mac, self.buffer_x_mac, self.dram_x_mac)
        if any(r is None for r in ratios) and any(r is not None for r in ratios):
            raise ValueError(f"TechModel {self.name!r}: give all four *_x_mac ratios or none")
        for field_name, r in zip(("rf_x_mac", "noc_x_mac", "buffer_x_mac", "dram_x_mac"), ratios):
            if r is not None and not r >= 0:
                raise ValueError(f"TechModel.{field_name} must be >= 0, got {r!r}")

    @property
    def normalized(self) -> bool:
        return self.rf_x_mac is not None

    def mac_energy_pj(self, precision: str) -> float:
        """One MAC (pJ): Horowitz multiply + add at ``precision`` (both tables)."""
        return mac_energy_pj(precision)

    def _scaled(self, ratio: float | None, like: Any, precision: str) -> Any:
        assert ratio is not None
        return _out(np.full(np.shape(like), ratio * self.mac_energy_pj(precision)))

    def register_energy_pj(self, capacity_words: Any, precision: str) -> Any:
        """One word access to a per-PE register file / operand register."""
        bits = PRECISION_BITS[_check_precision(precision)]
        if self.normalized:
            _positive(capacity_words, "capacity_words")
            return self._scaled(self.rf_x_mac, capacity_words, precision)
        return register_file_energy_pj(capacity_words, bits)

    def sram_energy_pj(self, capacity_kib: Any, precision: str) -> Any:
        """One word access to an on-chip SRAM buffer of ``capacity_kib`` KiB."""
        bits = PRECISION_BITS[_check_precision(precision)]
        if self.normalized:
            _positive(capacity_kib, "capacity_kib")
            return self._scaled(self.buffer_x_mac, capacity_kib, precision)
        return sram_energy_pj(capacity_kib, bits)

    def noc_energy_pj(self, precision: str) -> float:
        """One word delivered from a global buffer to one PE over the array NoC.

        Normalized: ``noc_x_mac`` x MAC. Horowitz has no on-chip network figure, so the
        absolute model also uses the Eyeriss ratio (2x MAC, Chen et al. ISCA 2016) times the Horowitz
        MAC [inferred]."""
        ratio = self.noc_x_mac if self.normalized else EYERISS_NOC_X_MAC
        return float(ratio * self.mac_energy_pj(precision))

    def hop_energy_pj(self, precision: str) -> float:
        """One word forwarded from a PE to its neighbour (systolic operand forwarding).

        [inferred] Absolute model: the sender's read of its one-word pipeline register
        (the receiver's register write is counted as the child level's fill, so it is not
        repeated here); the wire of one PE pitch (tens of um, vs the 1-2 mm of an
        Eyeriss array-NoC transfer) is neglected. Normalized model: Eyeriss counts
        inter-PE transfers (its psum forwarding between neighbours included) as "array"
        traffic, so ``noc_x_mac`` x MAC."""
        if self.normalized:
            return float(self.noc_x_mac * self.mac_energy_pj(precision))  # type: ignore[operator]
        return float(self.register_energy_pj(1, precision))

    def dram_energy_pj(self, precision: str) -> float:
        """One word read from or written to DRAM."""
        if self.normalized:
            return float(self.dram_x_mac * self.mac_energy_pj(precision))  # type: ignore[operator]
        return float(dram_energy_pj(PRECISION_BITS[_check_precision(precision)]))


HOROWITZ_45NM = TechModel("horowitz_45nm")
"""Absolute 45 nm energies (Horowitz ISSCC 2014 and the fits above)."""

EYERISS_NORMALIZED = TechModel(
    "eyeriss_normalized",
    rf_x_mac=EYERISS_RF_X_MAC,
    noc_x_mac=EYERISS_NOC_X_MAC,
    buffer_x_mac=EYERISS_GLB_X_MAC,
    dram_x_mac=EYERISS_DRAM_X_MAC,
)
"""Eyeriss (ISCA 2016) normalized costs, RF:NoC:GLB:DRAM = 1:2:6:200 x the Horowitz MAC."""

TECH_MODELS = {m.name: m for m in (HOROWITZ_45NM, EYERISS_NORMALIZED)}
"""The built-in tables by name (what a design point's ``tech`` string may name)."""


def get_tech(tech: TechModel | str) -> TechModel:
    """A :class:`TechModel` from itself or a built-in name (``"horowitz_45nm"``,
    ``"eyeriss_normalized"``); ``ValueError`` listing the names otherwise."""
    if isinstance(tech, TechModel):
        return tech
    if isinstance(tech, str) and tech in TECH_MODELS:
        return TECH_MODELS[tech]
    raise ValueError(f"unknown tech {tech!r}; choices: {sorted(TECH_MODELS)} or a TechModel")
