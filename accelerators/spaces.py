"""The hardware design spaces of the published co-design flows coexplore reproduces, one
function each, beside the accelerator models they parameterize (the lowest layer each
needs: the models, for their constants and area):

* :func:`shi2020_space` -- Shi et al. 2020: an Eyeriss-like spatial array
  (:class:`~accelerators.spatial.SpatialArray`), PE array 2..32 x 2..32, per-operand RF
  words and GLB KiB, under ``iso`` (at most Eyeriss v1's PEs and on-chip storage) or
  ``free`` resources (up to :data:`FREE_MAX_PES` PEs and 4x the storage) as a known
  constraint;
* :func:`hasco_space` -- HASCO: an intrinsic accelerator's parameters
  (:data:`accelerators.intrinsic.HASCO_SPACES`) with the known constraint HASCO's code
  comment says is missing (``local_kib <= sp_kib``) and optionally an area budget;
* :func:`ppr_fpga_space` -- MeLoPPR's FPGA engine (:class:`~accelerators.ppr_fpga.PPRFpgaEngine`).

The reproductions (:mod:`experiments.reproduce`), the HASCO evaluator
(:mod:`evaluators.intrinsic_codesign`) and the MeLoPPR plan (:mod:`mappers.ppr_plan`) use
these; until this module each defined its own ``hardware_space`` in its own layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from accelerators.intrinsic import HASCO_SPACES, IntrinsicAccelerator
from accelerators.reference import eyeriss_v1
from design_space import Categorical, Constraint, DesignSpace, Fixed, Integer, Ordinal, PowerOfTwo

__all__ = ["EYERISS_PES", "EYERISS_STORAGE_BYTES", "FREE_MAX_PES", "GLB_KIB", "PPR_BRAM_WORDS", "PPR_INT_BITS",
           "RF_WORDS", "SHI2020_MODES", "free_resources", "hasco_space", "iso_resources", "ordinal_or_fixed",
           "ppr_fpga_space", "shi2020_space", "storage_bytes"]

# ------------------------------------------------------------------ Shi et al. 2020
_EYERISS = eyeriss_v1()
RF_WORDS = [4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 224, 256, 384, 512]
GLB_KIB = [16, 32, 48, 64, 96, 108, 128, 192, 256, 384, 512]
FREE_MAX_PES = 1024
SHI2020_MODES = ("iso", "free")
EYERISS_PES = _EYERISS.pe_x * _EYERISS.pe_y
EYERISS_STORAGE_BYTES = (EYERISS_PES * (_EYERISS.rf_w_words + _EYERISS.rf_i_words + _EYERISS.rf_o_words)
                         * _EYERISS.word_bits // 8 + int(_EYERISS.glb_kib * 1024))


def storage_bytes(p: Any) -> Any:
    """On-chip storage of a point (vectorized over constraint columns)."""
    return p["pe_x"] * p["pe_y"] * (p["rf_w_words"] + p["rf_i_words"] + p["rf_o_words"]) * 2 + p["glb_kib"] * 1024


def iso_resources(p: Any) -> Any:
    return (p["pe_x"] * p["pe_y"] <= EYERISS_PES) & (storage_bytes(p) <= EYERISS_STORAGE_BYTES)


def free_resources(p: Any) -> Any:
    return (p["pe_x"] * p["pe_y"] <= FREE_MAX_PES) & (storage_bytes(p) <= 4 * EYERISS_STORAGE_BYTES)


def shi2020_space(mode: str = "iso") -> DesignSpace:
    """PE array 2..32 x 2..32, per-operand RF words and GLB KiB; ``iso`` or ``free``
    resources as a known constraint."""
    if mode not in SHI2020_MODES:
        raise ValueError(f"mode must be 'iso' or 'free', got {mode!r}")
    pred = iso_resources if mode == "iso" else free_resources
    return DesignSpace(
        Integer("pe_x", 2, 32), Integer("pe_y", 2, 32),
        Ordinal("rf_w_words", RF_WORDS), Ordinal("rf_i_words", RF_WORDS), Ordinal("rf_o_words", RF_WORDS),
        Ordinal("glb_kib", GLB_KIB),
        constraints=[Constraint(f"{mode}_resources", pred)],
        name=f"shi2020-{mode}",
    )


# ------------------------------------------------------------------ HASCO
def hasco_space(intrinsic_kind: str, area_cap_mm2: float | None = None) -> DesignSpace:
    """HASCO's hardware space of an intrinsic (:data:`~accelerators.intrinsic.HASCO_SPACES`)
    with the known constraint ``local_kib <= sp_kib`` and, given ``area_cap_mm2``, the
    known constraint ``area <= area_cap_mm2`` (vectorized
    :meth:`IntrinsicAccelerator.area_mm2_of`)."""
    kind = intrinsic_kind.upper() if isinstance(intrinsic_kind, str) else intrinsic_kind
    if kind not in HASCO_SPACES:
        raise ValueError(f"unknown intrinsic {intrinsic_kind!r}; choices: {sorted(HASCO_SPACES)}")
    s = HASCO_SPACES[kind]
    params: list[Any] = []
    if s["square"]:
        params.append(Ordinal("pe", list(s["pe"])))
    else:
        params += [Integer("pe_x", *s["pe"]), Integer("pe_y", *s["pe"])]
    params += [Ordinal("sp_kib", list(s["sp_kib"])), Ordinal("local_kib", list(s["local_kib"]))]
    if len(s["dataflow"]) > 1:
        params.append(Categorical("dataflow", list(s["dataflow"])))
    params += [Integer("sp_banks", *s["sp_banks"]), Ordinal("dma_bus_bits", list(s["dma_bus_bits"]))]
    cons = [Constraint("local_le_sp", "local_kib <= sp_kib")]
    name = f"hasco-{kind.lower()}"
    if area_cap_mm2 is not None:
        cap = float(area_cap_mm2)
        if not cap > 0:
            raise ValueError(f"area_cap_mm2 must be > 0, got {area_cap_mm2!r}")
        cons.append(Constraint("area_budget", lambda p, cap=cap: IntrinsicAccelerator.area_mm2_of(p) <= cap))
        name += f"-area{cap:.3g}"
    return DesignSpace(*params, constraints=cons, name=name)


# ------------------------------------------------------------------ MeLoPPR
PPR_BRAM_WORDS = (1024, 2048, 4096, 8192, 16384)
PPR_INT_BITS = (16, 20, 24, 32)


def ordinal_or_fixed(name: str, values: Sequence[Any]) -> Any:
    """An :class:`~design_space.Ordinal` over ``values``, or a :class:`~design_space.Fixed`
    parameter when there is one value."""
    values = list(values)
    if not values:
        raise ValueError(f"{name}: need at least one value")
    return Fixed(name, values[0]) if len(values) == 1 else Ordinal(name, values)


def ppr_fpga_space(
    n_pes: tuple[int, int] = (1, 32),
    bram_words: Sequence[int] = PPR_BRAM_WORDS,
    int_bits: Sequence[int] = PPR_INT_BITS,
    clock_mhz: float = 100.0,
) -> DesignSpace:
    """The FPGA engine's parameters: ``n_pes`` (powers of two; the RTL has 2/4/8/16
    variants), ``bram_words_per_table``, ``int_bits``, and ``clock_mhz`` fixed (there is
    no timing model to say which clocks close; the paper runs at 100 MHz)."""
    return DesignSpace(
        PowerOfTwo("n_pes", *n_pes),
        ordinal_or_fixed("bram_words_per_table", bram_words),
        ordinal_or_fixed("int_bits", int_bits),
        Fixed("clock_mhz", float(clock_mhz)),
        name="ppr-fpga",
    )
