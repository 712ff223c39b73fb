"""A 2-D systolic array (TPU / SCALE-Sim style) and its lowering to an :class:`ArchSpec`.

``rows x cols`` PEs, each a MAC with one operand register per operand (W, I, O), fed by
three partitioned SRAMs (ifmap, filter, ofmap) that are backed by DRAM. Operands enter at
the array edges and are forwarded PE to PE, so one SRAM read reaches a whole row or
column: the SRAM level is lowered as a multicast level whose NoC energy is one
neighbour-to-neighbour hop. The dataflow (output-, weight- or input-stationary) goes into
``ArchSpec.dataflow`` for the cost model's systolic timing and the mapping rules.

Area = PEs x (MAC datapath + 3 operand registers) + SRAM area; energies from a
:class:`~accelerators.tech.TechModel` (default :data:`~accelerators.tech.HOROWITZ_45NM`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from accelerators import tech as _tech
from accelerators.arch import SYSTOLIC_DATAFLOWS, ArchSpec, MemoryLevel, backing_store
from accelerators.base import (
    DEFAULT_WORD_BITS,
    InvalidParameter,
    check_positive_int,
    check_positive_real,
    check_sram_kib,
    check_tech,
    check_word_bits,
    column,
    fields_from_point,
    kib_to_words,
    normalize_numbers,
    word_bits_column,
)
from accelerators.tech import TechModel

__all__ = ["PE_REGISTER_WORDS", "SystolicArray"]

PE_REGISTER_WORDS = 3
"""Operand registers per systolic PE: one word each for W, I and O."""


# -- the accelerator ------------------------------------------------------------------------


@dataclass(frozen=True)
class SystolicArray:
    """A ``rows x cols`` systolic array with three partitioned SRAMs.

    Defaults are an arbitrary mid-size design (not a reference); see
    :func:`accelerators.reference.tpu_v1_like` for a published one.

    Attributes:
        rows, cols: PE array shape (``rows x cols`` MACs).
        dataflow: ``"OS"``, ``"WS"`` or ``"IS"``.
        ifmap_sram_kib, filter_sram_kib, ofmap_sram_kib: SRAM partition sizes (KiB).
        dram_bw_words_per_cycle: DRAM bandwidth, reads + writes, in words per cycle.
        clock_mhz: core clock.
        word_bits: datapath and storage word width (8, 16 or 32; integer MACs).
        tech: energy table, a :class:`~accelerators.tech.TechModel` or a built-in name.
    """

    rows: int = 16
    cols: int = 16
    dataflow: str = "WS"
    ifmap_sram_kib: float = 64.0
    filter_sram_kib: float = 64.0
    ofmap_sram_kib: float = 64.0
    dram_bw_words_per_cycle: float = 8.0
    clock_mhz: float = 1000.0
    word_bits: int = DEFAULT_WORD_BITS
    tech: TechModel | str = _tech.HOROWITZ_45NM

    _INT_FIELDS = ("rows", "cols", "word_bits")
    _REAL_FIELDS = (
        "ifmap_sram_kib",
        "filter_sram_kib",
        "ofmap_sram_kib",
        "dram_bw_words_per_cycle",
        "clock_mhz",
    )

    def __post_init__(self) -> None:
        normalize_numbers(self, self._INT_FIELDS, self._REAL_FIELDS)
        self.validate()

    def validate(self) -> None:
        """Raise :class:`~accelerators.base.InvalidParameter` naming the first bad
        parameter and its value."""
        c = type(self).__name__
        check_positive_int(c, "rows", self.rows)
        check_positive_int(c, "cols", self.cols)
        if self.dataflow not in SYSTOLIC_DATAFLOWS:
            raise InvalidParameter(c, "dataflow", self.dataflow, f"be one of {list(SYSTOLIC_DATAFLOWS)}")
        check_word_bits(c, self.word_bits)
        for name in ("ifmap_sram_kib", "filter_sram_kib", "ofmap_sram_kib"):
            check_sram_kib(c, name, getattr(self, name), self.word_bits)
        check_positive_real(c, "dram_bw_words_per_cycle", self.dram_bw_words_per_cycle)
        check_positive_real(c, "clock_mhz", self.clock_mhz)
        check_tech(c, self.tech)

    @classmethod
    def from_point(cls, point: Mapping[str, Any]) -> SystolicArray:
        """Build from a design point: keys are field names (unknown keys raise a
        ``ValueError`` naming them; missing keys take the defaults; ``tech`` may be a
        built-in table name)."""
        return fields_from_point(cls, point)

    @property
    def n_pes(self) -> int:
        return self.rows * self.cols

    @property
    def precision(self) -> str:
        return _tech.int_precision(self.word_bits)

    # -- area ----------------------------------------------------------------------------

    @staticmethod
    def area_mm2_of(p: Mapping[str, Any], tech: TechModel | str = _tech.HOROWITZ_45NM) -> np.ndarray:
        """Area (mm^2) of every design in a batch of columns, vectorized.

        ``p`` maps ``rows``, ``cols``, ``ifmap_sram_kib``, ``filter_sram_kib``,
        ``ofmap_sram_kib`` (and optionally ``word_bits``, default 16) to arrays (or
        scalars); other keys are ignored. ``tech``: the area table (default Horowitz 45 nm;
        a design's own table for :attr:`area_mm2`). Formula::

            rows * cols * (MAC(word_bits) + 3 * word_bits * DFF_BIT_UM2) * 1e-6
              + (ifmap + filter + ofmap KiB) * SRAM_AREA_PER_KIB_MM2

        Usable as a known constraint:
        ``Constraint("area", lambda p: SystolicArray.area_mm2_of(p) <= 10)``.
        """
        c = "SystolicArray"
        rows, cols = column(p, "rows", c), column(p, "cols", c)
        kib = sum(column(p, k, c) for k in ("ifmap_sram_kib", "filter_sram_kib", "ofmap_sram_kib"))
        bits = word_bits_column(p)
        t = _tech.get_tech(tech)
        pe_um2 = np.asarray(t.int_mac_area_um2(bits)) + np.asarray(
            t.register_area_um2(PE_REGISTER_WORDS, bits)
        )
        return np.asarray(rows * cols * pe_um2 * 1e-6 + np.asarray(t.sram_area_mm2(kib)))

    @property
    def area_mm2(self) -> float:
        """Total area (mm^2): :meth:`area_mm2_of` of this design."""
        return float(self.area_mm2_of(self._area_columns(), self.tech))

    def _area_columns(self) -> dict[str, Any]:
        keys = ("rows", "cols", "ifmap_sram_kib", "filter_sram_kib", "ofmap_sram_kib", "word_bits")
        return {k: getattr(self, k) for k in keys}

    # -- lowering ------------------------------------------------------------------------

    def to_arch(self) -> ArchSpec:
        """Lower to ``PE -> SRAM -> DRAM`` (innermost first).

        * ``PE``: ``rows*cols`` instances, 1 word each of W, I, O (operand registers),
          register read/write energy, no fanout.
        * ``SRAM``: 1 instance, partitioned capacity {I: ifmap, W: filter, O: ofmap} in
          words, per-partition SRAM energy, ``fanout_x = cols``, ``fanout_y = rows``,
          multicast (forwarding along rows/columns), ``noc_energy_pj`` = one
          neighbour hop (:meth:`TechModel.hop_energy_pj`); unlimited bandwidth (the
          systolic timing in the cost model bounds edge feeding).
        * ``DRAM``: unbounded, ``dram_bw_words_per_cycle``, DRAM energy.

        ``dataflow`` is the array's; ``kind="systolic"``.
        Level ``area_mm2`` is the storage area of all instances of the level; the
        ArchSpec's ``area_mm2`` is the whole design's (MACs included).
        """
        t = self.tech
        assert isinstance(t, TechModel)
        prec, bits = self.precision, self.word_bits
        reg_pj = t.register_energy_pj(1, prec)
        pe = MemoryLevel(
            name="PE",
            capacity_words=dict.fromkeys(("W", "I", "O"), 1),
            instances=self.n_pes,
            read_energy_pj=reg_pj,
            write_energy_pj=t.register_energy_pj(1, prec, "write"),
            area_mm2=self.n_pes * float(t.register_area_um2(PE_REGISTER_WORDS, bits)) * 1e-6,
            leakage_pj_per_cycle=t.leakage_pj_per_cycle("register_file", PE_REGISTER_WORDS * bits / 8192),
        )
        kib = {"I": self.ifmap_sram_kib, "W": self.filter_sram_kib, "O": self.ofmap_sram_kib}
        sram_pj = {op: float(t.sram_energy_pj(k, prec)) for op, k in kib.items()}
        sram_write_pj = {op: float(t.sram_energy_pj(k, prec, "write")) for op, k in kib.items()}
        sram = MemoryLevel(
            name="SRAM",
            capacity_words={op: kib_to_words(k, bits) for op, k in kib.items()},
            instances=1,
            fanout_x=self.cols,
            fanout_y=self.rows,
            read_energy_pj=sram_pj,
            write_energy_pj=sram_write_pj,
            multicast=True,
            noc_energy_pj=t.hop_energy_pj(prec),
            area_mm2=float(t.sram_area_mm2(sum(kib.values()))),
            leakage_pj_per_cycle=t.leakage_pj_per_cycle("sram", sum(kib.values())),
        )
        dram = replace(backing_store(t.dram_energy_pj(prec), self.dram_bw_words_per_cycle),
                       write_energy_pj=t.dram_energy_pj(prec, "write"),
                       leakage_pj_per_cycle=t.leakage_pj_per_cycle("dram"))
        return ArchSpec(
            name=f"systolic_{self.rows}x{self.cols}_{self.dataflow}",
            levels=(pe, sram, dram),
            mac_energy_pj=t.mac_energy_pj(prec),
            word_bits=bits,
            clock_mhz=self.clock_mhz,
            area_mm2=self.area_mm2,
            kind="systolic",
            dataflow=self.dataflow,
            tech=t.name,
        )
