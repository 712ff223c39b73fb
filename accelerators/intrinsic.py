"""HASCO's intrinsic accelerators: a spatial array that executes one tensor intrinsic.

One accelerator per intrinsic kind of :mod:`mappers.tensor_ir` (GEMM, GEMV, DOT, CONV),
with HASCO's hardware parameters (``explorer.build_hw_space`` of github.com/pku-liang/HASCO,
see its ``explorer/`` sources): PE array ``x`` and ``y``, scratchpad
and local-buffer capacities, dataflow, scratchpad banks and DMA bus width. HASCO's
generator follows Gemmini's organisation and parameter names (``sp_capacity``,
``sp_banks``, ``dma_buswidth``, ``dma_maxbytes`` are Gemmini's configuration fields), so
the memory system here is Gemmini's (github.com/ucb-bar/gemmini,
``src/main/scala/gemmini/Configs.scala`` defaultConfig: int8 inputs, int32 accumulators,
16x16 mesh, WS, 128 KiB scratchpad in 4 banks, 128 KiB accumulator in 2 banks, 128-bit DMA
bus, 64-byte DMA requests):

* ``pe_x x pe_y`` PEs, one int8 multiplier and int32 adder each, with one register of the
  *stationary* operand (the output for OS, the weight-like ``b`` for WS and CONV);
* a **scratchpad** (``sp_kib``, ``sp_banks`` banks) holding the input tiles (``a`` and
  ``b`` of the intrinsic: the cost model's ``I`` and ``W``), 8-bit words;
* an **accumulator** (HASCO's ``local_capacity``, here ``local_kib``; Gemmini's
  accumulator SRAM, :data:`ACC_BANKS` banks) holding output tiles as 32-bit partial sums;
* a **DMA** engine moving tiles between DRAM and the two SRAMs over a ``dma_bus_bits``
  bus, one bus word per cycle.

**Off-chip traffic is modelled here; HASCO's released code leaves it out**: its
``ppa_model.gen_config`` gives MAESTRO only ``NumPEs``, ``L1Size``, ``L2Size`` and an
on-chip ``NoC_BW``, and no DRAM level, so its latencies ignore every DRAM transfer. Here
the DRAM level's traffic is counted exactly by the loop-nest model and its bandwidth is
``dma_bus_bits / 8`` int8 words per cycle. Gemmini's ``dma_maxbytes`` (and HASCO's) has no
mechanism in this model and is not a parameter.

How an intrinsic executes (:data:`DATAFLOWS`, the roles of the intrinsic's indices):

======  ========  ============  ============  =================  ==============
 kind    dataflow  rows (pe_y)   cols (pe_x)   PE-level stream     PE keeps
======  ========  ============  ============  =================  ==============
 GEMM    OS        i             j             k                  c (output)
 GEMM    WS        k             j             i                  b (weights)
 GEMV    FIXED     i             j (reduced)   --                 c
 DOT     FIXED     n             i (reduced)   --                 c
 CONV    FIXED     k             c (reduced)   n, y, x (pixels)   b (NVDLA-style)
======  ========  ============  ============  =================  ==============

GEMM is a systolic array: compute time per intrinsic call is SCALE-Sim's fold time
(:func:`evaluators.systolic_timing.fold_cycles`: fill, skew and drain on every call). The
other kinds broadcast their operands on a bus and reduce across a row with an adder
chain (no per-call fill/drain is charged). The CONV row (HASCO's "NVDLA" dataflow, its
MAESTRO directives ``SpatialMap K``, ``TemporalMap C``) keeps a weight in every PE and
streams output pixels past it.

Cost model lowering (:meth:`IntrinsicAccelerator.to_arch`): ``REG`` (per PE, the
stationary operand, 1 word) -> ``ACC`` (outputs; fanout ``pe_x x pe_y``, multicast) ->
``SP`` (inputs) -> ``DRAM``, scored by :mod:`evaluators.loopnest`.

Constants (45 nm, :mod:`accelerators.tech`; every one with its source there):

* MAC: Horowitz int8 multiply + int32 add (``tech.mac_energy_pj("int8", "int32")``),
  area likewise;
* PE registers: :data:`PE_REGISTER_BITS` flip-flops (``tech.DFF_BIT_UM2`` each);
* SRAM access energy: ``tech.sram_energy_pj`` of *one bank* (more banks: smaller macros,
  cheaper accesses), at 8 bits (scratchpad) or 32 bits (accumulator); a register access
  ``tech.register_energy_pj``; DRAM ``tech.dram_energy_pj`` per 8-bit word;
* operand delivery across the array: one neighbour hop (systolic GEMM,
  ``TechModel.hop_energy_pj``) or the Eyeriss array-NoC cost (``TechModel.noc_energy_pj``);
* SRAM area ``tech.sram_area_mm2`` plus :data:`BANK_PERIPHERY_MM2` per bank.

Power is average dynamic power, energy / latency (no leakage model: Horowitz's table has
none); HASCO's MAESTRO figure is also a dynamic estimate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators import tech as _tech
from accelerators.arch import ArchSpec, MemoryLevel, backing_store
from accelerators.base import (
    InvalidParameter,
    check_positive_int,
    check_positive_real,
    check_tech,
    fields_from_point,
    normalize_numbers,
)
from accelerators.tech import TechModel

__all__ = [
    "ACC_BANKS",
    "BANK_PERIPHERY_MM2",
    "DATAFLOWS",
    "HASCO_SPACES",
    "IntrinsicAccelerator",
    "Roles",
    "roles_of",
]

INPUT_BITS = 8
"""Datapath precision: int8 inputs (HASCO's testbenches use ``dtype = "int8"``)."""
ACC_BITS = 32
"""Accumulator precision: int32 (Gemmini's ``accType = SInt(32.W)``)."""
ACC_BANKS = 2
"""Accumulator banks: Gemmini's default ``acc_banks = 2`` (not a HASCO parameter)."""
PE_REGISTER_BITS = INPUT_BITS + INPUT_BITS + ACC_BITS
"""Per-PE pipeline registers: one for each input operand and one for the partial sum."""
BANK_PERIPHERY_MM2 = 32 * _tech.SRAM_AREA_PER_KIB_MM2 * (1.0 - _tech.SRAM_ARRAY_EFFICIENCY)
"""[inferred] Area of one SRAM bank's periphery (decoders, sense amplifiers, I/O): the
non-bit-cell share of a 32 KiB macro at ``tech.SRAM_ARRAY_EFFICIENCY`` (0.039 mm^2).
Charged per bank, so splitting a memory into more banks costs area -- the trade-off
against their bandwidth and cheaper accesses."""

DEFAULT_CLOCK_MHZ = 1000.0
"""[inferred] Core clock; only scales milliseconds and milliwatts (cycles are the unit of
the model). Gemmini's published chips run at about 1 GHz."""


@dataclass(frozen=True)
class Roles:
    """Which intrinsic index runs where (see the module table)."""

    rows: str
    cols: str
    stream: tuple[str, ...]
    stationary: str               # intrinsic operand held in every PE
    systolic: bool


DATAFLOWS: dict[str, dict[str, Roles]] = {
    "GEMM": {"OS": Roles("i", "j", ("k",), "c", True), "WS": Roles("k", "j", ("i",), "b", True)},
    "GEMV": {"FIXED": Roles("i", "j", (), "c", False)},
    "DOT": {"FIXED": Roles("n", "i", (), "c", False)},
    "CONV": {"FIXED": Roles("k", "c", ("n", "y", "x"), "b", False)},
}
"""Dataflows of each intrinsic kind (HASCO: GEMM ``WS``/``OS``, the others ``FIXED``)."""

ROLE_OF = {"a": "I", "b": "W", "c": "O", "o": "O"}
"""Intrinsic operand -> cost-model role (the partition lowers ``a`` to ``I``, ``b`` to ``W``)."""

HASCO_SPACES: dict[str, dict[str, Any]] = {
    "GEMM": {"square": True, "pe": [8, 16, 32], "sp_kib": [128, 256, 512], "local_kib": [64, 128, 256],
             "dataflow": ["WS", "OS"], "sp_banks": (1, 8), "dma_bus_bits": [64, 128]},
    "GEMV": {"square": True, "pe": [8, 16, 32], "sp_kib": [128, 256, 512], "local_kib": [64, 128, 256],
             "dataflow": ["FIXED"], "sp_banks": (1, 8), "dma_bus_bits": [64, 128]},
    "CONV": {"square": False, "pe": (4, 32), "sp_kib": [128, 256, 512, 1024], "local_kib": [64, 128, 256, 512],
             "dataflow": ["FIXED"], "sp_banks": (1, 8), "dma_bus_bits": [64, 128, 256]},
    "DOT": {"square": False, "pe": (4, 32), "sp_kib": [128, 256, 512, 1024], "local_kib": [64, 128, 256, 512],
            "dataflow": ["FIXED"], "sp_banks": (1, 8), "dma_bus_bits": [64, 128, 256]},
}
"""HASCO's hardware design spaces (github.com/pku-liang/HASCO, ``src/codesign/explorer.py``,
``build_hw_space``): GEMM/GEMV a square array ``x = y`` in {8, 16, 32}; CONV/DOT ``x, y``
integers in [4, 32]; banks an integer in [1, 8]; memories in KiB, the bus in bits."""


def roles_of(arch: ArchSpec) -> Roles:
    """The :class:`Roles` of an intrinsic array's lowered architecture (``arch.intrinsic``
    set; a systolic GEMM's ``arch.dataflow`` picks OS or WS, the other kinds have one)."""
    if arch.intrinsic not in DATAFLOWS:
        raise ValueError(f"architecture {arch.name!r} executes no tensor intrinsic (intrinsic="
                         f"{arch.intrinsic!r}; expected one of {list(DATAFLOWS)})")
    flows = DATAFLOWS[arch.intrinsic]
    return flows[arch.dataflow] if arch.dataflow in flows else next(iter(flows.values()))


def _kib_words(kib: Any, bits: int) -> Any:
    return np.floor(np.asarray(kib, dtype=float) * 8192.0 / bits)


@dataclass(frozen=True)
class IntrinsicAccelerator:
    """An accelerator for one intrinsic (see the module docstring).

    Attributes:
        intrinsic: ``"GEMM"``, ``"GEMV"``, ``"DOT"`` or ``"CONV"``.
        pe_x, pe_y: PE array columns and rows (HASCO's ``x``, ``y``).
        sp_kib: scratchpad capacity, KiB (HASCO's ``sp_capacity``).
        local_kib: accumulator capacity, KiB (HASCO's ``local_capacity``).
        dataflow: one of :data:`DATAFLOWS` ``[intrinsic]`` (``"FIXED"`` for all but GEMM).
        sp_banks: scratchpad banks (HASCO's ``sp_banks``).
        dma_bus_bits: DMA bus width in bits (HASCO's ``dma_buswidth``).
        clock_mhz: core clock.
        tech: energy/area table (absolute tables only; default Horowitz 45 nm).
    """

    intrinsic: str = "GEMM"
    pe_x: int = 16
    pe_y: int = 16
    sp_kib: float = 128.0
    local_kib: float = 128.0
    dataflow: str = "WS"
    sp_banks: int = 4
    dma_bus_bits: int = 128
    clock_mhz: float = DEFAULT_CLOCK_MHZ
    tech: TechModel | str = _tech.HOROWITZ_45NM

    def __post_init__(self) -> None:
        normalize_numbers(self, ("pe_x", "pe_y", "sp_banks", "dma_bus_bits"), ("sp_kib", "local_kib", "clock_mhz"))
        if isinstance(self.intrinsic, str):
            object.__setattr__(self, "intrinsic", self.intrinsic.upper())
        self.validate()

    def validate(self) -> None:
        """Raise :class:`~accelerators.base.InvalidParameter` naming the first bad
        parameter and its value."""
        c = type(self).__name__
        if self.intrinsic not in DATAFLOWS:
            raise InvalidParameter(c, "intrinsic", self.intrinsic, f"be one of {list(DATAFLOWS)}")
        if self.dataflow not in DATAFLOWS[self.intrinsic]:
            raise InvalidParameter(c, "dataflow", self.dataflow,
                                   f"be one of {list(DATAFLOWS[self.intrinsic])} for a {self.intrinsic} accelerator")
        for name in ("pe_x", "pe_y", "sp_banks"):
            check_positive_int(c, name, getattr(self, name))
        check_positive_int(c, "dma_bus_bits", self.dma_bus_bits)
        if self.dma_bus_bits % INPUT_BITS:
            raise InvalidParameter(c, "dma_bus_bits", self.dma_bus_bits, f"be a multiple of {INPUT_BITS}")
        for name in ("sp_kib", "local_kib", "clock_mhz"):
            check_positive_real(c, name, getattr(self, name))
        if _kib_words(self.local_kib, ACC_BITS) < 1:
            raise InvalidParameter(c, "local_kib", self.local_kib, f"hold at least one {ACC_BITS}-bit word")
        check_tech(c, self.tech)
        if self.tech.normalized:  # type: ignore[union-attr]
            raise InvalidParameter(c, "tech", self.tech.name,  # type: ignore[union-attr]
                                   "be an absolute table (e.g. 'horowitz_45nm')")

    @classmethod
    def from_point(cls, point: Mapping[str, Any], **defaults: Any) -> IntrinsicAccelerator:
        """Build from a design point (field names; ``pe`` sets both ``pe_x`` and ``pe_y``
        for HASCO's square GEMM/GEMV arrays). Unknown keys raise a ``ValueError``."""
        p = {**defaults, **dict(point)}
        if "pe" in p:
            pe = p.pop("pe")
            p.setdefault("pe_x", pe)
            p.setdefault("pe_y", pe)
        return fields_from_point(cls, p)

    # -- views -------------------------------------------------------------------------
    @property
    def roles(self) -> Roles:
        return DATAFLOWS[self.intrinsic][self.dataflow]

    @property
    def n_pes(self) -> int:
        return self.pe_x * self.pe_y

    @property
    def spatial_sizes(self) -> dict[str, int]:
        """Intrinsic index -> size fixed by the array (rows and columns)."""
        r = self.roles
        return {r.rows: self.pe_y, r.cols: self.pe_x}

    @property
    def sp_words(self) -> int:
        return int(_kib_words(self.sp_kib, INPUT_BITS))

    @property
    def acc_words(self) -> int:
        return int(_kib_words(self.local_kib, ACC_BITS))

    @property
    def sp_bandwidth_words_per_cycle(self) -> float:
        """[inferred] Each scratchpad bank delivers one row of ``max(pe_x, pe_y)`` int8
        words per cycle (Gemmini: a scratchpad row is one array edge of elements)."""
        return float(self.sp_banks * max(self.pe_x, self.pe_y))

    @property
    def acc_bandwidth_words_per_cycle(self) -> float:
        """[inferred] Each accumulator bank reads or writes one row of ``max(pe_x, pe_y)``
        32-bit words per cycle."""
        return float(ACC_BANKS * max(self.pe_x, self.pe_y))

    @property
    def dram_bandwidth_words_per_cycle(self) -> float:
        """DMA bus: ``dma_bus_bits / 8`` int8 words per cycle."""
        return self.dma_bus_bits / INPUT_BITS

    # -- area ----------------------------------------------------------------------------
    @staticmethod
    def area_mm2_of(p: Mapping[str, Any]) -> np.ndarray:
        """Area (mm^2), vectorized over columns ``pe_x``, ``pe_y`` (or ``pe``), ``sp_kib``,
        ``local_kib``, ``sp_banks``::

            pe_x * pe_y * (MAC(int8 x int8 + int32) + PE_REGISTER_BITS * DFF_BIT_UM2) * 1e-6
              + SRAM(sp_kib + local_kib) + (sp_banks + ACC_BANKS) * BANK_PERIPHERY_MM2
        """
        def col(*keys: str) -> np.ndarray:
            for k in keys:
                if k in p:
                    return np.asarray(p[k], dtype=float)
            raise KeyError(f"IntrinsicAccelerator.area_mm2_of needs a {keys[0]!r} column (got: {sorted(p)})")

        n_pes = col("pe_x", "pe") * col("pe_y", "pe")
        pe_um2 = _tech.mac_area_um2("int8", "int32") + PE_REGISTER_BITS * _tech.DFF_BIT_UM2
        sram = np.asarray(_tech.sram_area_mm2(col("sp_kib") + col("local_kib")))
        banks = col("sp_banks") + ACC_BANKS
        return np.asarray(n_pes * pe_um2 * 1e-6 + sram + banks * BANK_PERIPHERY_MM2)

    @property
    def area_mm2(self) -> float:
        return float(self.area_mm2_of({"pe_x": self.pe_x, "pe_y": self.pe_y, "sp_kib": self.sp_kib,
                                       "local_kib": self.local_kib, "sp_banks": self.sp_banks}))

    # -- energies ------------------------------------------------------------------------
    @property
    def mac_energy_pj(self) -> float:
        return float(_tech.mac_energy_pj("int8", "int32"))

    @property
    def sp_access_energy_pj(self) -> float:
        """One 8-bit scratchpad access: a bank of ``sp_kib / sp_banks`` KiB."""
        return float(_tech.sram_energy_pj(self.sp_kib / self.sp_banks, INPUT_BITS))

    @property
    def acc_access_energy_pj(self) -> float:
        """One 32-bit accumulator access: a bank of ``local_kib / ACC_BANKS`` KiB."""
        return float(_tech.sram_energy_pj(self.local_kib / ACC_BANKS, ACC_BITS))

    @property
    def dram_access_energy_pj(self) -> float:
        return float(_tech.dram_energy_pj(INPUT_BITS))

    # -- lowering ------------------------------------------------------------------------
    def to_arch(self) -> ArchSpec:
        """``REG -> ACC -> SP -> DRAM`` (innermost first), see the module docstring."""
        t = self.tech
        assert isinstance(t, TechModel)
        role = ROLE_OF[self.roles.stationary]
        reg_bits = ACC_BITS if role == "O" else INPUT_BITS
        reg_pj = float(_tech.register_file_energy_pj(1, reg_bits))
        reg = MemoryLevel(name="REG", tensors=frozenset({role}), capacity_words={role: 1},
                          instances=self.n_pes, read_energy_pj=reg_pj, write_energy_pj=reg_pj,
                          area_mm2=self.n_pes * PE_REGISTER_BITS * _tech.DFF_BIT_UM2 * 1e-6)
        noc = t.hop_energy_pj("int8") if self.roles.systolic else t.noc_energy_pj("int8")
        acc_pj = self.acc_access_energy_pj
        acc = MemoryLevel(name="ACC", tensors=frozenset({"O"}), capacity_words={"O": self.acc_words},
                          instances=1, fanout_x=self.pe_x, fanout_y=self.pe_y, read_energy_pj={"O": acc_pj},
                          write_energy_pj={"O": acc_pj}, bandwidth_words_per_cycle=self.acc_bandwidth_words_per_cycle,
                          multicast=True, noc_energy_pj=float(noc),
                          area_mm2=float(_tech.sram_area_mm2(self.local_kib)) + ACC_BANKS * BANK_PERIPHERY_MM2)
        sp_pj = self.sp_access_energy_pj
        sp = MemoryLevel(name="SP", tensors=frozenset({"W", "I"}), capacity_words=self.sp_words, instances=1,
                         read_energy_pj={"W": sp_pj, "I": sp_pj}, write_energy_pj={"W": sp_pj, "I": sp_pj},
                         bandwidth_words_per_cycle=self.sp_bandwidth_words_per_cycle,
                         area_mm2=float(_tech.sram_area_mm2(self.sp_kib)) + self.sp_banks * BANK_PERIPHERY_MM2)
        dram = backing_store(self.dram_access_energy_pj, self.dram_bandwidth_words_per_cycle)
        return ArchSpec(name=self.name, levels=(reg, acc, sp, dram), mac_energy_pj=self.mac_energy_pj,
                        word_bits=INPUT_BITS, clock_mhz=self.clock_mhz, area_mm2=self.area_mm2,
                        kind="intrinsic", intrinsic=self.intrinsic, tech=t.name,
                        # a systolic array's SCALE-Sim fold timing per intrinsic call
                        dataflow=self.dataflow if self.roles.systolic else None)

    @property
    def name(self) -> str:
        """HASCO-style tag: ``GEMM_16x16_WS_sp128_local128_b4_dma128``."""
        return (f"{self.intrinsic}_{self.pe_x}x{self.pe_y}_{self.dataflow}_sp{self.sp_kib:g}_"
                f"local{self.local_kib:g}_b{self.sp_banks}_dma{self.dma_bus_bits}")

    def cycles_to_ms(self, cycles: Any) -> Any:
        return np.asarray(cycles, dtype=float) / (self.clock_mhz * 1e3)

    def power_mw(self, energy_pj: Any, latency_cycles: Any) -> Any:
        """Average power (mW) of ``energy_pj`` spent over ``latency_cycles``."""
        seconds = np.asarray(latency_cycles, dtype=float) / (self.clock_mhz * 1e6)
        return np.asarray(energy_pj, dtype=float) * 1e-12 / seconds * 1e3


def peak_macs_per_cycle(acc: IntrinsicAccelerator) -> int:
    """Upper bound of MACs per cycle (one per PE)."""
    return acc.n_pes


def ideal_cycles(macs: int, acc: IntrinsicAccelerator) -> int:
    """Lower bound on compute cycles: ``ceil(macs / PEs)``."""
    return math.ceil(macs / acc.n_pes)
