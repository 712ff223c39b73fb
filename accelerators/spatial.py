"""An Eyeriss-like spatial array and its lowering to an :class:`ArchSpec`.

``pe_x x pe_y`` PEs, each with a MAC and private register files (scratchpads) partitioned
per operand (filter/weights W, ifmap I, psum O), a shared global buffer (GLB) that feeds
the array over a NoC (with multicast), and DRAM behind it -- the DRAM / GLB / PE-RF
hierarchy of Eyeriss (Chen, Emer, Sze, ISCA 2016; JSSC 2017) and of Timeloop's
"eyeriss_like" example.

Area = PEs x (MAC datapath + RF flip-flops) + GLB SRAM area; energies from a
:class:`~accelerators.tech.TechModel`: :data:`~accelerators.tech.HOROWITZ_45NM` (default)
or :data:`~accelerators.tech.EYERISS_NORMALIZED`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from accelerators import tech as _tech
from accelerators.arch import ArchSpec, MemoryLevel, backing_store
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

__all__ = ["SpatialArray"]


@dataclass(frozen=True)
class SpatialArray:
    """An Eyeriss-like spatial array.

    Defaults are Eyeriss v1's sizes (see :func:`accelerators.reference.eyeriss_v1` for
    the sources) with the Horowitz energy table, so a space that varies only some
    parameters explores around Eyeriss.

    Attributes:
        pe_x, pe_y: PE array columns (X) and rows (Y); ``pe_x * pe_y`` MACs.
        rf_w_words, rf_i_words, rf_o_words: per-PE register file words per operand
            (filter, ifmap, psum).
        glb_kib: shared global buffer (KiB), holds any operand.
        dram_bw_words_per_cycle: DRAM bandwidth, reads + writes, words per cycle.
        glb_bw_words_per_cycle: GLB bandwidth, reads + writes, words per cycle.
        clock_mhz: core clock.
        word_bits: datapath and storage word width (8, 16 or 32; integer MACs).
        multicast: the GLB -> PE NoC can deliver one read to several PEs.
        tech: energy table, a :class:`~accelerators.tech.TechModel` or a built-in name
            (``"horowitz_45nm"``, ``"eyeriss_normalized"``).
    """

    pe_x: int = 14
    pe_y: int = 12
    rf_w_words: int = 224
    rf_i_words: int = 12
    rf_o_words: int = 24
    glb_kib: float = 108.0
    dram_bw_words_per_cycle: float = 4.0
    glb_bw_words_per_cycle: float = 32.0
    clock_mhz: float = 200.0
    word_bits: int = DEFAULT_WORD_BITS
    multicast: bool = True
    tech: TechModel | str = _tech.HOROWITZ_45NM

    _INT_FIELDS = ("pe_x", "pe_y", "rf_w_words", "rf_i_words", "rf_o_words", "word_bits")
    _REAL_FIELDS = ("glb_kib", "dram_bw_words_per_cycle", "glb_bw_words_per_cycle", "clock_mhz")

    def __post_init__(self) -> None:
        normalize_numbers(self, self._INT_FIELDS, self._REAL_FIELDS)
        if isinstance(self.multicast, np.bool_):
            object.__setattr__(self, "multicast", bool(self.multicast))
        self.validate()

    def validate(self) -> None:
        """Raise :class:`~accelerators.base.InvalidParameter` naming the first bad
        parameter and its value."""
        c = type(self).__name__
        for name in ("pe_x", "pe_y", "rf_w_words", "rf_i_words", "rf_o_words"):
            check_positive_int(c, name, getattr(self, name))
        check_word_bits(c, self.word_bits)
        check_sram_kib(c, "glb_kib", self.glb_kib, self.word_bits)
        check_positive_real(c, "dram_bw_words_per_cycle", self.dram_bw_words_per_cycle)
        check_positive_real(c, "glb_bw_words_per_cycle", self.glb_bw_words_per_cycle)
        check_positive_real(c, "clock_mhz", self.clock_mhz)
        if not isinstance(self.multicast, bool):
            raise InvalidParameter(c, "multicast", self.multicast, "be a bool")
        check_tech(c, self.tech)

    @classmethod
    def from_point(cls, point: Mapping[str, Any]) -> SpatialArray:
        """Build from a design point: keys are field names (unknown keys raise a
        ``ValueError`` naming them; missing keys take the defaults; ``tech`` may be a
        built-in table name)."""
        return fields_from_point(cls, point)

    @property
    def n_pes(self) -> int:
        return self.pe_x * self.pe_y

    @property
    def rf_words(self) -> int:
        """Register-file words per PE, all operands."""
        return self.rf_w_words + self.rf_i_words + self.rf_o_words

    @property
    def precision(self) -> str:
        return _tech.int_precision(self.word_bits)

    # -- area ----------------------------------------------------------------------------

    @staticmethod
    def area_mm2_of(p: Mapping[str, Any], tech: TechModel | str = _tech.HOROWITZ_45NM) -> np.ndarray:
        """Area (mm^2) of every design in a batch of columns, vectorized.

        ``p`` maps ``pe_x``, ``pe_y``, ``rf_w_words``, ``rf_i_words``, ``rf_o_words``,
        ``glb_kib`` (and optionally ``word_bits``, default 16) to arrays (or scalars);
        other keys are ignored. ``tech``: the area table (default Horowitz 45 nm; a
        design's own table for :attr:`area_mm2`). Formula::

            pe_x * pe_y * (MAC(word_bits) + (rf_w + rf_i + rf_o) * word_bits * DFF_BIT_UM2) * 1e-6
              + glb_kib * SRAM_AREA_PER_KIB_MM2
        """
        c = "SpatialArray"
        n_pes = column(p, "pe_x", c) * column(p, "pe_y", c)
        rf_words = sum(column(p, k, c) for k in ("rf_w_words", "rf_i_words", "rf_o_words"))
        bits = word_bits_column(p)
        t = _tech.get_tech(tech)
        pe_um2 = np.asarray(t.int_mac_area_um2(bits)) + np.asarray(
            t.register_area_um2(rf_words, bits)
        )
        glb = np.asarray(t.sram_area_mm2(column(p, "glb_kib", c)))
        return np.asarray(n_pes * pe_um2 * 1e-6 + glb)

    @property
    def area_mm2(self) -> float:
        """Total area (mm^2): :meth:`area_mm2_of` of this design."""
        keys = ("pe_x", "pe_y", "rf_w_words", "rf_i_words", "rf_o_words", "glb_kib", "word_bits")
        return float(self.area_mm2_of({k: getattr(self, k) for k in keys}, self.tech))

    # -- lowering ------------------------------------------------------------------------

    def to_arch(self) -> ArchSpec:
        """Lower to ``RF -> GLB -> DRAM`` (innermost first).

        * ``RF``: ``pe_x*pe_y`` instances, partitioned capacity {W, I, O} in words,
          per-partition register-file energy, no fanout (each feeds its own MAC).
        * ``GLB``: 1 instance, shared capacity (``glb_kib`` in words), SRAM energy,
          ``fanout_x = pe_x``, ``fanout_y = pe_y``, ``multicast``, ``noc_energy_pj`` per
          word delivered to one PE (:meth:`TechModel.noc_energy_pj`: 2x MAC),
          ``glb_bw_words_per_cycle``.
        * ``DRAM``: unbounded, ``dram_bw_words_per_cycle``, DRAM energy.

        Level ``area_mm2`` is the storage area of all instances of the level; the
        ArchSpec's ``area_mm2`` is the whole design's (MACs included).
        """
        t = self.tech
        assert isinstance(t, TechModel)
        prec, bits = self.precision, self.word_bits
        rf_cap = {"W": self.rf_w_words, "I": self.rf_i_words, "O": self.rf_o_words}
        rf_pj = {op: float(t.register_energy_pj(w, prec)) for op, w in rf_cap.items()}
        rf_write_pj = {op: float(t.register_energy_pj(w, prec, "write")) for op, w in rf_cap.items()}
        rf = MemoryLevel(
            name="RF",
            capacity_words=rf_cap,
            instances=self.n_pes,
            read_energy_pj=rf_pj,
            write_energy_pj=rf_write_pj,
            area_mm2=self.n_pes * float(t.register_area_um2(self.rf_words, bits)) * 1e-6,
            leakage_pj_per_cycle=t.leakage_pj_per_cycle("register_file", self.rf_words * bits / 8192),
        )
        glb_pj = float(t.sram_energy_pj(self.glb_kib, prec))
        glb = MemoryLevel(
            name="GLB",
            capacity_words=kib_to_words(self.glb_kib, bits),
            instances=1,
            fanout_x=self.pe_x,
            fanout_y=self.pe_y,
            read_energy_pj=glb_pj,
            write_energy_pj=float(t.sram_energy_pj(self.glb_kib, prec, "write")),
            bandwidth_words_per_cycle=self.glb_bw_words_per_cycle,
            multicast=self.multicast,
            noc_energy_pj=t.noc_energy_pj(prec),
            area_mm2=float(t.sram_area_mm2(self.glb_kib)),
            leakage_pj_per_cycle=t.leakage_pj_per_cycle("sram", self.glb_kib),
        )
        dram = replace(backing_store(t.dram_energy_pj(prec), self.dram_bw_words_per_cycle),
                       write_energy_pj=t.dram_energy_pj(prec, "write"),
                       leakage_pj_per_cycle=t.leakage_pj_per_cycle("dram"))
        return ArchSpec(
            name=f"spatial_{self.pe_y}x{self.pe_x}",
            levels=(rf, glb, dram),
            mac_energy_pj=t.mac_energy_pj(prec),
            word_bits=bits,
            clock_mhz=self.clock_mhz,
            area_mm2=self.area_mm2,
            kind="spatial",
            tech=t.name,
        )
