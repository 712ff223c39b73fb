"""Published reference designs as accelerator models: Eyeriss v1 and a TPU-v1-like array,
and the published data of how Eyeriss ran AlexNet (:data:`EYERISS_TABLE_III`).

Source tags as in :mod:`accelerators.tech`: [V] checked in the named public source, [R]
as widely reproduced but not re-checked against the original, [inferred] our assumption.
Eyeriss: Chen, Krishna, Emer, Sze, "Eyeriss: An Energy-Efficient Reconfigurable Accelerator
for Deep Convolutional Neural Networks", IEEE JSSC 52(1), 2017 (and ISSCC 2016).
"""

from __future__ import annotations

from accelerators import tech as _tech
from accelerators.spatial import SpatialArray
from accelerators.systolic import SystolicArray
from accelerators.tech import TechModel

# -- Eyeriss v1 (Chen et al., ISCA 2016 / JSSC 2017) ------------------------------------------
EYERISS_PE_ROWS = 12  # 12 x 14 array [R]; 168 PEs [V: JSSC 2017 abstract]
EYERISS_PE_COLS = 14
EYERISS_RF_FILTER_WORDS = 224  # filter scratchpad 224 x 16b [R: JSSC 2017]
EYERISS_RF_IFMAP_WORDS = 12  # ifmap scratchpad 12 x 16b [R: JSSC 2017]
EYERISS_RF_PSUM_WORDS = 24  # psum scratchpad 24 x 16b [R: JSSC 2017]; 260 words = 520 B ~ 0.5 kB
EYERISS_GLB_KIB = 108.0  # 108 KB global buffer [R: JSSC 2017]
EYERISS_WORD_BITS = 16  # 16-bit fixed point [R: JSSC 2017]
EYERISS_CLOCK_MHZ = 200.0  # 200 MHz core clock [R: JSSC 2017]
# DRAM bandwidth: not given by the sources above. [inferred] One 64-bit DRAM transfer per core cycle =
# 64 / 16 = 4 words/cycle, after the DRAM "width: 64" (16-bit words, block-size 4) of the
# Timeloop/Accelergy v3 "eyeriss_like" example (timeloop.csail.mit.edu, previous_versions/
# timeloop-accelergy-v3/examples/full-design-examples/eyeriss). The chip itself has a
# separate link clock (90 MHz per slides summarizing JSSC 2017, slideshare "Introduction to
# Eyeriss", T.-Y. Lee 2017); with a 64-bit link [R] that would be 64/16 * 90/200 = 1.8 words
# per core cycle. For reference, the demand JSSC 2017 implies (its abstract: 0.0029 DRAM accesses/MAC x
# 168 MACs/cycle at full utilization) is 0.49 words/cycle, below both.
EYERISS_DRAM_BW_WORDS_PER_CYCLE = 64 / EYERISS_WORD_BITS
# GLB bandwidth: [inferred] 16 read + 16 write words/cycle, the shared_glb read_bandwidth /
# write_bandwidth of the same Timeloop v3 example (our bandwidths count reads + writes).
EYERISS_GLB_BW_WORDS_PER_CYCLE = 16.0 + 16.0


def eyeriss_v1(tech: TechModel | str = _tech.EYERISS_NORMALIZED) -> SpatialArray:
    """Eyeriss v1: 12 rows (``pe_y``) x 14 columns (``pe_x``) = 168 PEs; per-PE
    scratchpads filter 224 / ifmap 12 / psum 24 words of 16 bits (0.5 kB); 108 KiB GLB;
    200 MHz. Energies from the Eyeriss normalized table by default (Chen, Emer, Sze,
    ISCA 2016), anchored to the Horowitz 45 nm int16 MAC."""
    return SpatialArray(
        pe_x=EYERISS_PE_COLS,
        pe_y=EYERISS_PE_ROWS,
        rf_w_words=EYERISS_RF_FILTER_WORDS,
        rf_i_words=EYERISS_RF_IFMAP_WORDS,
        rf_o_words=EYERISS_RF_PSUM_WORDS,
        glb_kib=EYERISS_GLB_KIB,
        dram_bw_words_per_cycle=EYERISS_DRAM_BW_WORDS_PER_CYCLE,
        glb_bw_words_per_cycle=EYERISS_GLB_BW_WORDS_PER_CYCLE,
        clock_mhz=EYERISS_CLOCK_MHZ,
        word_bits=EYERISS_WORD_BITS,
        multicast=True,  # Eyeriss's NoC multicasts [V: slides, "Multicast / P2P single cycle delivery"]
        tech=tech,
    )


# JSSC 2017 Table III: per AlexNet convolution, the layer shape as the chip ran it (H input
# rows incl. padding, R filter rows, E output rows, C channels per group, M filters, U
# stride) and the row-stationary mapping parameters (m filters and n images per GLB pass,
# e output rows per PE set, p filters and q channels per PE, r channel and t filter sets
# on the array). [V: Chen et al., JSSC 2017, Table III]
EYERISS_TABLE_III: dict[str, dict[str, int]] = {
    "CONV1": dict(H=227, R=11, E=55, C=3, M=96, U=4, m=96, n=1, e=7, p=16, q=1, r=1, t=2),
    "CONV2": dict(H=31, R=5, E=27, C=48, M=256, U=1, m=64, n=1, e=27, p=16, q=2, r=1, t=1),
    "CONV3": dict(H=15, R=3, E=13, C=256, M=384, U=1, m=64, n=4, e=13, p=16, q=4, r=1, t=4),
    "CONV4": dict(H=15, R=3, E=13, C=192, M=384, U=1, m=64, n=4, e=13, p=16, q=3, r=2, t=2),
    "CONV5": dict(H=15, R=3, E=13, C=192, M=256, U=1, m=64, n=4, e=13, p=16, q=3, r=2, t=2),
}


# -- TPU v1 (Jouppi et al., "In-Datacenter Performance Analysis of a Tensor Processing Unit",
#    ISCA 2017); each figure below is from that paper. -------------------------------------
TPU_V1_ROWS = 256  # 256 x 256 MACs (Jouppi 2017)
TPU_V1_COLS = 256
TPU_V1_WORD_BITS = 8  # int8 inputs and weights (Jouppi 2017)
TPU_V1_CLOCK_MHZ = 700.0  # 700 MHz (Jouppi 2017)
TPU_V1_UNIFIED_BUFFER_KIB = 24 * 1024.0  # 24 MiB unified buffer (activations) -> ifmap SRAM
TPU_V1_ACCUMULATORS_KIB = 4 * 1024.0  # 4 MiB of accumulators -> ofmap SRAM
# Weight FIFO -> filter SRAM: [R] Jouppi 2017 describes the on-chip weight FIFO as four
# tiles deep; one tile is 256 x 256 int8 weights = 64 KiB, so 4 x 64 KiB = 256 KiB. (The
# 8 GiB off-chip "Weight Memory" is DRAM and is the backing store here.)
TPU_V1_WEIGHT_FIFO_KIB = 4 * (256 * 256 * 8 / 8) / 1024  # = 256 KiB
# DRAM: 34 GB/s of DDR3 (Jouppi 2017). At 700 MHz and 1-byte words:
#   34e9 B/s / 700e6 cycles/s = 48.57 B/cycle = 48.57 int8 words/cycle.
TPU_V1_DRAM_BW_WORDS_PER_CYCLE = 34e9 / (TPU_V1_CLOCK_MHZ * 1e6) / (TPU_V1_WORD_BITS / 8)


def tpu_v1_like(tech: TechModel | str = _tech.HOROWITZ_45NM) -> SystolicArray:
    """A TPU-v1-like weight-stationary 256 x 256 int8 systolic array at 700 MHz: unified
    buffer -> ifmap SRAM (24 MiB), weight FIFO -> filter SRAM (256 KiB), accumulators ->
    ofmap SRAM (4 MiB), 34 GB/s DDR3 = 48.57 words/cycle.

    Approximations: MACs are int8 multiply + int8 add (the TPU accumulates in 32 bits;
    ``tech.mac_energy_pj("int8", accumulate="int32")`` gives that MAC); the accumulator
    SRAM's capacity is counted in 8-bit words (4 Mi), though it holds 32-bit partial
    sums (1 Mi), because an :class:`~accelerators.arch.ArchSpec` has one word width.
    """
    return SystolicArray(
        rows=TPU_V1_ROWS,
        cols=TPU_V1_COLS,
        dataflow="WS",
        ifmap_sram_kib=TPU_V1_UNIFIED_BUFFER_KIB,
        filter_sram_kib=TPU_V1_WEIGHT_FIFO_KIB,
        ofmap_sram_kib=TPU_V1_ACCUMULATORS_KIB,
        dram_bw_words_per_cycle=TPU_V1_DRAM_BW_WORDS_PER_CYCLE,
        clock_mhz=TPU_V1_CLOCK_MHZ,
        word_bits=TPU_V1_WORD_BITS,
        tech=tech,
    )
