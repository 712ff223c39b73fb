"""A roofline model of GEMMs on an output-stationary PE array (the README example).

Hardware: a ``rows x cols`` array of 16-bit MAC units, an on-chip SRAM of ``sram_kib``
KiB and a DRAM link of ``dram_words_per_cycle`` 16-bit words per cycle at 1 GHz.
Software: which GEMM operand is kept resident in SRAM across output tiles
(``stationary``: ``"none"``, ``"A"`` or ``"B"``).

For ``C[M, N] = A[M, K] @ B[K, N]`` the array computes ``ceil(M/rows) * ceil(N/cols)``
output tiles, each streaming the whole K dimension (``K + rows + cols`` cycles with fill
and drain). DRAM traffic (16-bit words): without residency every tile re-reads its A row
panel (``rows*K``) and B column panel (``K*cols``); ``stationary="A"`` keeps the A row
panel on chip across a row of tiles (A read once, B once per tile row), ``"B"`` the
mirror image; C is written once. A resident panel that does not fit in SRAM (next to
the double-buffered streaming panels) makes the point infeasible (raised as
``Infeasible``: the study records it and moves on).

latency = sum over GEMMs of max(compute cycles, DRAM words / bandwidth) (perfect overlap:
a roofline); energy = MACs x E_mac + SRAM accesses x E_sram(size) + DRAM words x E_dram.

Constants (45 nm, Horowitz, "Computing's Energy Problem (and what we can do about it)",
ISSCC 2014): fp16 mult 1.1 pJ + fp16 add 0.4 pJ per MAC [V]; SRAM 64-bit access 10 pJ
(8 KB) [V], 20 pJ (32 KB) and 100 pJ (1 MB) [R], log-log interpolated and divided by 4 for
a 16-bit word; DRAM 640 pJ per 32-bit access (Han et al.'s condensation of Horowitz: Deep
Compression, ICLR 2016; EIE, ISCA 2016) [V], i.e. 320 pJ per 16-bit word. Area: fp16 mult
1640 um^2 + fp16 add 1360 um^2 per PE (Horowitz 45 nm) [R]; SRAM 0.346 um^2 per 6T bit
cell (Intel 45 nm, Mistry et al., IEDM 2007) at an assumed 50 % array efficiency, i.e.
0.00567 mm^2 per KiB. [V]: checked in public tables that cite Horowitz; [R]: widely
reproduced values, not re-checked.

Workload: the four GEMMs of a BERT-base encoder block at sequence length 128 (QKV
projection 128x768x2304, attention output 128x768x768, FFN up 128x768x3072, FFN down
128x3072x768). This model is deliberately small; the full tensor-accelerator models live
in ``accelerators/`` and ``evaluators/``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluators.base import Infeasible

E_MAC_PJ = 1.1 + 0.4
E_DRAM_PJ_PER_WORD = 640.0 / 2
SRAM_64B_PJ = ((8.0, 10.0), (32.0, 20.0), (1024.0, 100.0))  # (KiB, pJ per 64-bit access)
AREA_PE_MM2 = (1640 + 1360) * 1e-6
AREA_SRAM_MM2_PER_KIB = 8192 * 0.346e-6 / 0.5
CLOCK_HZ = 1e9
WORD_BYTES = 2
GEMMS = ((128, 768, 2304), (128, 768, 768), (128, 768, 3072), (128, 3072, 768))  # (M, K, N)


def sram_energy_pj_per_word(sram_kib: float) -> float:
    """Energy of one 16-bit SRAM access, log-log interpolated (clamped extrapolation)."""
    kib, pj = np.log([s for s, _ in SRAM_64B_PJ]), np.log([e for _, e in SRAM_64B_PJ])
    x = math.log(sram_kib)
    if x <= kib[0]:
        y = pj[0] + (pj[1] - pj[0]) / (kib[1] - kib[0]) * (x - kib[0])
    elif x >= kib[-1]:
        y = pj[-2] + (pj[-1] - pj[-2]) / (kib[-1] - kib[-2]) * (x - kib[-2])
    else:
        y = float(np.interp(x, kib, pj))
    return math.exp(y) / 4


def area_mm2(p: Mapping[str, Any]) -> Any:
    """Array + SRAM area; works on scalars and on constraint columns (numpy arrays)."""
    return p["rows"] * p["cols"] * AREA_PE_MM2 + p["sram_kib"] * AREA_SRAM_MM2_PER_KIB


def within_area_budget(p: Mapping[str, Any]) -> Any:
    """Known constraint used by the demo config: at most 8 mm^2."""
    return area_mm2(p) <= 8.0


def evaluate(p: Mapping[str, Any]) -> dict[str, float]:
    rows, cols, stat = int(p["rows"]), int(p["cols"]), p["stationary"]
    sram_words = p["sram_kib"] * 1024 // WORD_BYTES
    bw = float(p["dram_words_per_cycle"])
    cycles = energy = dram_total = busy = 0.0
    for m, k, n in GEMMS:
        tm, tn = math.ceil(m / rows), math.ceil(n / cols)
        compute = tm * tn * (k + rows + cols)
        streaming = 2 * (rows + cols) * 64  # double-buffered 64-deep K chunks
        resident = {"none": 0, "A": rows * k, "B": k * cols}[stat]
        if resident + streaming > sram_words:
            raise Infeasible(
                f"resident {stat} panel ({resident * WORD_BYTES / 1024:.0f} KiB) plus streaming "
                f"buffers do not fit in {p['sram_kib']} KiB SRAM",
                sram_overflow_kib=(resident + streaming - sram_words) * WORD_BYTES / 1024,
            )
        a_reads = {"none": tm * tn * rows * k, "A": m * k, "B": tn * m * k}[stat]
        b_reads = {"none": tm * tn * k * cols, "A": tm * k * n, "B": k * n}[stat]
        dram = a_reads + b_reads + m * n
        sram = dram + tm * tn * (rows + cols) * k  # fills + reads into the array edge
        cycles += max(compute, dram / bw)
        energy += m * n * k * E_MAC_PJ + sram * sram_energy_pj_per_word(p["sram_kib"])
        energy += dram * E_DRAM_PJ_PER_WORD
        dram_total += dram
        busy += m * n * k / (rows * cols)
    latency_s = cycles / CLOCK_HZ
    return {
        "energy_uj": energy * 1e-6,
        "latency_ms": latency_s * 1e3,
        "edp": energy * 1e-12 * latency_s,  # J*s
        "area_mm2": float(area_mm2(p)),
        "utilization": busy / cycles,
        "dram_mib": dram_total * WORD_BYTES / 2**20,
    }
