"""MeLoPPR's FPGA personalized-PageRank engine (Li et al., DAC 2021): resources and latency.

The engine (paper Sec. V; RTL in github.com/sharc-lab/MeLoPPR, ``FPGA/diffusion/``) runs
the graph diffusion of MeLoPPR's sub-graphs on ``P`` processing elements (PEs); a host
CPU extracts each sub-graph by BFS, formats it into node/neighbour tables, streams it to
the FPGA, chooses the next-stage nodes and collects the final top-k.

**Per PE** (``top_*_generate.v`` wires three memories per PE, ``bram.v`` is a
``DEPTH x DATA_WIDTH`` = 8192 x 32 block RAM):

* a sub-graph table -- 2 words per node (first/last neighbour address) plus the
  neighbour list (one word per adjacency entry): ``2 V + nnz <= W`` words;
* a score table -- 2 words per node (previous/current score, alternating by step), so
  at most ``W / 2`` nodes per PE;
* a score-sum (accumulated score) table -- 1 word per node, ``W / 2`` words;

where ``W`` is :attr:`PPRFpgaEngine.bram_words_per_table`. This is the paper's FPGA
memory model ``B_g + B_a + B_r = 4 (2V + 2E + 2V + V)`` bytes per sub-graph (Li et al.,
DAC 2021, Sec. V) laid out in tables. A global top-``c*k`` score table (node id + score,
``c*k`` words each) keeps the final scores ("localized score aggregation", Sec. V).

**Resources** (:meth:`PPRFpgaEngine.resources_of`, vectorized):

* BRAM: each table mapped onto 7-series block RAM (BRAM18 aspect ratios, UG473), summed;
  ``bram36 = bram18 / 2``. With the RTL's 8192 x 32-bit tables this is 8 + 8 + 4 = 20
  BRAM36 per PE, plus 4 for a ``c*k = 2000`` global table: 24, 44, 84, 164, 324 BRAM36
  for P = 1, 2, 4, 8, 16, i.e. 5.4 / 9.9 / 18.9 / 36.9 / 72.8 % of the XC7K325T against
  the paper's Table I 4.8 / 9.9 / 19.2 / 36.1 / 72.8 %. The split into these tables is
  [inferred] from the RTL and the paper's memory formula; it is not fitted.
* LUT: ``P * a + P^2 * b + P * C(P, 2) * c`` -- per-PE logic (diffuser FSM, restoring
  divider, accumulator), the ``P`` schedulers that each multiplex ``P`` requesters
  (``scheduler_*_generate.v``), and the ``C(P, 2)`` pairwise conflict comparators inside
  each of the ``P`` schedulers (``conflict_block.v``). The three coefficients are
  *calibrated* by non-negative least squares to the paper's Table I LUT row
  (:data:`PAPER_TABLE_I`) at 32-bit data and 13-bit addresses; the fit is within 0.7
  percentage points of every row (``tests/accelerators/test_ppr_fpga.py``). Other
  widths scale the terms [inferred]: per-PE logic by ``int_bits / 32``, the multiplexers
  by ``(int_bits + addr_bits) / 45``, the comparators by ``addr_bits / 13``. The RTL
  does not back Table I: a yosys synthesis of the published tops (:data:`YOSYS_LUT`,
  ``docs/validation/meloppr_rtl.md``; not vendor figures) has several times fewer LUTs.
  ``lut_source="yosys"`` fits the same model to those; the co-design's constraint
  (:func:`fits_kc705`) keeps Table I, the larger figure.
* DSP48E1: 0 -- division is done in logic and the paper reports DSP use < 0.1 % of the
  840 (paper Secs. V-VI), i.e. fewer than one.
* FF: the paper gives no flip-flop figures, so none are modelled.

**Diffusion cycles** (``cycle_model``, :data:`CYCLE_MODELS`). The default ``"rtl"`` is
:mod:`accelerators.ppr_fpga_rtl`: the RTL's PE state machine (``36 + 3 d`` cycles per
node at 32 bits), its accumulation (``3 (node_num - 1) + 1`` per step on the quad, octa
and hex tops, none on the dual top or one PE) and its scheduler stalls, simulated cycle
by cycle from the partition-conflict rule on the sub-graph's real neighbour lists
(:attr:`Subgraph.neighbors`). It reproduces Icarus simulations of the authors' RTL to
the cycle on 25 runs (``docs/validation/meloppr_rtl.md``), where the stalls are far
above the paper's Fig. 5 bounds. Merging a finished sub-graph into the global table
costs :data:`MERGE_CYCLES_PER_NODE` per node in both models [inferred: a
read-modify-write; the global table is not in the published RTL].

``"v1"`` is the first model, kept for the records made with it: per node 4 cycles +
the divider (``int_bits`` + 2) + 3 per adjacency entry + 3 to accumulate, and for
``split`` placement a stall factor from an access probability: with ``q`` the fraction
of a PE's cycles that access the score table (2 per node + 2 per entry) and targets
spread uniformly over the ``P`` partitions, the lowest-priority PE stalls with
probability ``1 - (1 - q/P)^(P-1)`` and the step waits for it. Against the same RTL
runs it is optimistic (``docs/validation/meloppr_rtl.md`` gives v1/RTL per run).

Sub-graphs placed whole on one PE (``round_robin`` / ``least_loaded``) touch only their
own tables: no conflicts, but load imbalance.

**Host side** (:class:`HostModel`): BFS + formatting time per sub-graph, a DMA link of
``link_gb_per_s`` with ``link_latency_us`` per transfer (KC705: PCIe Gen2 x8 edge
connector, UG810; 5 GT/s x 8 lanes with 8b/10b coding = 4 GB/s per direction). The paper
does not describe its host link, and the host/driver code is not in the authors'
repository (github.com/sharc-lab/MeLoPPR holds only ``FPGA/diffusion/*.v`` and testbenches).

Units are in the names: ``_ms``, ``_us``, ``_ns``, ``_cycles``, ``bram36``, ``lut``,
``_bytes``, ``_gb_per_s`` (1 GB = 1e9 bytes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from accelerators import ppr_fpga_rtl as rtl

__all__ = [
    "ACCUM_CYCLES_PER_NODE",
    "ASSIGNMENTS",
    "CYCLE_MODELS",
    "EDGE_CYCLES",
    "KC705",
    "LUT_SOURCES",
    "MERGE_CYCLES_PER_NODE",
    "NODE_CYCLES",
    "NUMPY_HOST",
    "PAPER_TABLE_I",
    "YOSYS_LUT",
    "FpgaDevice",
    "HostModel",
    "LatencyBreakdown",
    "PPRFpgaEngine",
    "Subgraph",
    "bram18_for",
    "fits_kc705",
    "lut_coefficients",
    "lut_coefficients_yosys",
    "subgraph_fpga_bytes",
]

# ---------------------------------------------------------------------------------------
# Device: Xilinx Kintex-7 XC7K325T (the KC705 board's FPGA, UG810). Totals from Xilinx
# DS180 "7 Series FPGAs Data Sheet: Overview", Kintex-7 family table: 50,950 slices x 4
# 6-input LUTs = 203,800 LUTs, 407,600 CLB flip-flops, 840 DSP48E1 slices, 445 36-Kb block
# RAMs (= 890 18-Kb, 16,020 Kb). The same totals are the "Available" column of Vivado's
# report_utilization for this part.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FpgaDevice:
    """Resource totals of an FPGA part."""

    name: str
    lut: int
    ff: int
    bram36: int
    dsp: int

    @property
    def bram18(self) -> int:
        return 2 * self.bram36


KC705 = FpgaDevice("xc7k325t (KC705)", lut=203_800, ff=407_600, bram36=445, dsp=840)

#: The paper's Table I (Li et al., DAC 2021): P -> (LUT %, BRAM %) of the XC7K325T.
PAPER_TABLE_I: dict[int, tuple[float, float]] = {
    1: (0.9, 4.8),
    2: (3.1, 9.9),
    4: (8.9, 19.2),
    8: (21.8, 36.1),
    16: (70.6, 72.8),
}

# ---------------------------------------------------------------------------------------
# Cycle counts of the RTL state machines (github.com/sharc-lab/MeLoPPR, FPGA/diffusion/).
# ---------------------------------------------------------------------------------------
#: diffusion_rw.v, per node: read prev score, overwrite it, read last-neighbour address,
#: start the divider.
NODE_CYCLES = 4
#: diffusion_rw.v, per adjacency entry: read neighbour id, read its score, write it.
EDGE_CYCLES = 3
#: divide.v is a restoring divider: one quotient bit per cycle (int_bits cycles), one
#: cycle to raise ``ok``, one for the FSM to see it.
DIVIDER_EXTRA_CYCLES = 2
#: add_up_score.v, per node and step: read score, read score sum, write score sum.
ACCUM_CYCLES_PER_NODE = 3
#: [inferred] read-modify-write of the global top-c*k table per node of a sub-graph (not
#: in the published RTL).
MERGE_CYCLES_PER_NODE = 2
#: score-table accesses of the diffuser: 2 per node (read/clear prev) and 2 per entry.
SCORE_ACCESSES_PER_NODE = 2
SCORE_ACCESSES_PER_ENTRY = 2

#: Reference widths of the calibration (bram.v: DATA_WIDTH 32, ADDR_WIDTH 13).
REF_INT_BITS = 32
REF_ADDR_BITS = 13

INT_BITS_CHOICES = (8, 12, 16, 20, 24, 32, 48, 64)

CYCLE_MODELS = ("rtl", "v1")
"""``rtl`` (default) -- :mod:`accelerators.ppr_fpga_rtl`: the RTL's state machines and
partition-conflict stall rule simulated cycle by cycle, matching Icarus runs of the
authors' RTL to the cycle (``docs/validation/meloppr_rtl.md``); ``v1`` -- the first model
(4 + divider + 3 d + 3 cycles per node, stalls from an access-probability formula), kept
for the records made with it; it is 20-30 % optimistic against the RTL."""

ASSIGNMENTS = ("split", "round_robin", "least_loaded")
"""How stage-2 sub-graphs are placed on PEs: ``split`` -- every sub-graph's nodes divided
over all PEs, one sub-graph at a time (the RTL's scheme; scheduler conflicts);
``round_robin`` -- whole sub-graphs to PE ``i mod P`` in next-stage order;
``least_loaded`` -- whole sub-graphs to the PE that frees up first (greedy list
scheduling). A sub-graph too large for one PE is split over all PEs in every mode, and
the stage-1 sub-graph is always split."""

# 7-series BRAM18 primitive aspect ratios (UG473, "7 Series FPGAs Memory Resources"):
# depth x width of one 18-Kb block (the 512 x 36 mode is simple dual port).
_BRAM18_MODES = ((16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36))


def bram18_for(words: Any, bits: Any) -> Any:
    """BRAM18 blocks for a ``words x bits`` memory: the cheapest single aspect ratio,
    ``min over modes of ceil(words / depth) * ceil(bits / width)`` (UG473). Vectorized;
    0 words need 0 blocks."""
    w = np.asarray(words, dtype=np.int64)
    b = np.asarray(bits, dtype=np.int64)
    best = None
    for depth, width in _BRAM18_MODES:
        n = (-(-w // depth)) * (-(-b // width))
        best = n if best is None else np.minimum(best, n)
    out = np.where(w > 0, best, 0)
    return int(out) if out.ndim == 0 else out


def _lut_features(n_pes: Any, int_bits: Any, addr_bits: Any) -> np.ndarray:
    p = np.asarray(n_pes, dtype=float)
    w = np.asarray(int_bits, dtype=float)
    a = np.asarray(addr_bits, dtype=float)
    return np.stack(np.broadcast_arrays(
        p * w / REF_INT_BITS,
        p * p * (w + a) / (REF_INT_BITS + REF_ADDR_BITS),
        p * p * (p - 1) / 2 * a / REF_ADDR_BITS,
    ), axis=-1)


#: yosys 0.23 ``synth_xilinx -family xc7 -flatten`` of the RTL's tops (LUT1-LUT6 cells),
#: P -> LUTs: ``docs/validation/meloppr_rtl_synth.json`` (``python -m
#: experiments.validation.meloppr_rtl --synth``); not vendor (Vivado) figures, and the
#: block RAMs are not in the tops. ``tests/accelerators/test_ppr_fpga.py`` checks these
#: against that record.
YOSYS_LUT: dict[int, int] = {2: 1005, 4: 2587, 8: 4955, 16: 10126}

LUT_SOURCES = ("paper", "yosys")
"""Which LUT figures the resource model is fitted to: ``paper`` -- the paper's Table I
(:data:`PAPER_TABLE_I`; the default, and what the co-design's KC705 constraint uses);
``yosys`` -- :data:`YOSYS_LUT`, a synthesis of the published RTL (about 6x to 15x fewer
LUTs than Table I: the RTL is the diffusion engine only, without the host interface and
the global table, and yosys is not Vivado)."""

_LUT_COEF: np.ndarray | None = None
_LUT_COEF_YOSYS: np.ndarray | None = None
_RTL_CACHE: dict[tuple, dict[str, int]] = {}


def lut_coefficients_yosys() -> np.ndarray:
    """The same three-term LUT model fitted (non-negative least squares, relative error)
    to :data:`YOSYS_LUT`."""
    global _LUT_COEF_YOSYS
    if _LUT_COEF_YOSYS is None:
        from scipy.optimize import nnls

        ps = np.array(sorted(YOSYS_LUT), dtype=float)
        target = np.array([YOSYS_LUT[int(p)] for p in ps], dtype=float)
        feats = _lut_features(ps, REF_INT_BITS, REF_ADDR_BITS)
        _LUT_COEF_YOSYS = nnls(feats / target[:, None], np.ones_like(target))[0]
    return _LUT_COEF_YOSYS


def lut_coefficients() -> np.ndarray:
    """``(per PE, per scheduler port, per conflict comparator)`` LUTs: the non-negative
    least-squares fit of the LUT model to :data:`PAPER_TABLE_I` on the XC7K325T at 32-bit
    data and 13-bit addresses (computed once, from the table, not typed in)."""
    global _LUT_COEF
    if _LUT_COEF is None:
        from scipy.optimize import nnls

        ps = np.array(sorted(PAPER_TABLE_I), dtype=float)
        target = np.array([PAPER_TABLE_I[int(p)][0] for p in ps]) / 100 * KC705.lut
        feats = _lut_features(ps, REF_INT_BITS, REF_ADDR_BITS)
        # fit in utilization units so every row weighs the same in percentage points
        _LUT_COEF = nnls(feats / KC705.lut, target / KC705.lut)[0]
    return _LUT_COEF


def _addr_bits(words: Any) -> Any:
    return np.ceil(np.log2(np.maximum(np.asarray(words, dtype=float), 2)))


def subgraph_fpga_bytes(n_nodes: Any, nnz: Any, int_bits: Any = 32) -> Any:
    """On-chip bytes of one sub-graph: ``int_bits/8 * (2V + nnz + 2V + V)`` -- the paper's
    (Sec. V) ``4 (2|V| + 2|E| + 2|V| + |V|)`` with ``2|E|`` = the adjacency entries ``nnz``
    (a self-loop is one entry). Vectorized."""
    v = np.asarray(n_nodes, dtype=float)
    return np.asarray(int_bits, dtype=float) / 8 * (5 * v + np.asarray(nnz, dtype=float))


@dataclass(frozen=True)
class HostModel:
    """Host CPU + link cost model of the hybrid platform.

    ``cpu_*``: extracting one sub-graph (BFS to ``depth`` + its induced CSR, which is the
    PEs' node/neighbour table layout) costs
    ``cpu_us_per_subgraph + cpu_us_per_hop * depth + cpu_ns_per_entry * (V + nnz)``,
    plus ``cpu_ns_per_format_word * (2V + nnz)`` for packing the tables when the
    extraction does not produce them directly.

    **What this assumes about the paper's host.** The paper's host program is not
    published (github.com/sharc-lab/MeLoPPR has only the RTL) and its Sec. VI names a
    desktop Intel i7 at 2.8 GHz for the CPU runs. We assume its host extracted
    sub-graphs as native code would, and cost that with a compiled kernel
    (:class:`evaluators.ppr.native.NativeExtractor`) timed on the machine running the
    model; no scaling between that machine and the paper's i7 is applied.

    Defaults [measured]: ``calibrate_host(load_graph("cora"), repeats=5)`` (native
    extractor, non-negative least squares over 200 balls of depth 1-6, best of 5) on the
    project's 2-core x86_64 machine (Python 3.11, numpy 2.4, numba 0.68) under load;
    :func:`evaluators.ppr.engine_evaluator.calibrate_host` re-measures them on any
    machine, and :data:`NUMPY_HOST` is the same fit for vectorized numpy extraction.
    ``link_gb_per_s``: KC705 PCIe Gen2 x8 (UG810): 8 lanes x 5 GT/s x 8/10 = 4 GB/s.
    ``link_latency_us``: per DMA transfer [assumed; typical PCIe DMA round trip].
    """

    cpu_us_per_subgraph: float = 3.9
    cpu_us_per_hop: float = 0.0
    cpu_ns_per_entry: float = 7.1
    cpu_ns_per_format_word: float = 0.0
    link_gb_per_s: float = 4.0
    link_latency_us: float = 2.0

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise ValueError(f"HostModel.{f.name} must be a finite number, got {v!r}")
            if v < 0 or (f.name == "link_gb_per_s" and v <= 0):
                raise ValueError(f"HostModel.{f.name} must be {'> 0' if f.name == 'link_gb_per_s' else '>= 0'}, got {v!r}")

    def cpu_us(self, n_nodes: int, nnz: int, depth: int) -> float:
        """BFS + extraction + table formatting of one sub-graph (microseconds)."""
        return (self.cpu_us_per_subgraph + self.cpu_us_per_hop * depth
                + self.cpu_ns_per_entry * 1e-3 * (n_nodes + nnz)
                + self.cpu_ns_per_format_word * 1e-3 * (2 * n_nodes + nnz))

    def transfer_us(self, n_bytes: float) -> float:
        """One DMA transfer of ``n_bytes`` (microseconds)."""
        return self.link_latency_us + n_bytes / (self.link_gb_per_s * 1e3)


#: The host costed as MeLoPPR's reproduction first did, with vectorized numpy extraction
#: (:func:`evaluators.ppr.bfs_ball` + :func:`evaluators.ppr.induced`) [measured]: least
#: squares over 900 balls (depth 1-6) of cora/citeseer/pubmed, best of 3, on the same
#: machine; ``cpu_ns_per_format_word`` [inferred: one numpy copy per word, ~1 ns].
#: About 30x the native cost per sub-graph: interpreter overhead per BFS level.
NUMPY_HOST = HostModel(cpu_us_per_subgraph=117.0, cpu_us_per_hop=8.9, cpu_ns_per_entry=168.0,
                       cpu_ns_per_format_word=1.0)


@dataclass(frozen=True)
class Subgraph:
    """One sub-graph a query diffuses: node count, adjacency entries (``nnz``, a
    self-loop once), diffusion ``steps``, BFS ``depth`` (host cost), and optionally the
    in-sub-graph degree of each node in BFS order (for the per-PE slices of ``split``;
    without it slices are assumed equal) and ``neighbors``, the CSR neighbour indices
    (sub-graph-local, row by row in the same order: ``degrees`` are the row lengths), which
    the ``"rtl"`` cycle model needs to simulate the scheduler's stalls. Without them that
    model draws each node's neighbours uniformly from the sub-graph (seeded, reproducible)
    [assumed]."""

    n_nodes: int
    nnz: int
    steps: int
    depth: int
    degrees: np.ndarray | None = None
    neighbors: np.ndarray | None = None


@dataclass
class LatencyBreakdown:
    """Modelled latency of one query (milliseconds unless named otherwise)."""

    latency_ms: float = 0.0
    cpu_ms: float = 0.0
    transfer_ms: float = 0.0
    fpga_busy_ms: float = 0.0
    fpga_cycles: int = 0
    conflict_cycles: int = 0
    n_subgraphs: int = 0
    n_split: int = 0
    fpga_peak_bytes: float = 0.0
    fits: bool = True
    reason: str | None = None
    per_pe_busy_ms: list[float] = field(default_factory=list)


def _check_int(name: str, v: Any, low: int, high: int | None = None) -> None:
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < low or (
            high is not None and v > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"PPRFpgaEngine.{name} must be an integer {rng}, got {v!r}")


@dataclass(frozen=True)
class PPRFpgaEngine:
    """The MeLoPPR FPGA engine: ``n_pes`` PEs with three tables each, a global top-``c*k``
    table, on ``device`` at ``clock_mhz``, fed by ``host``.

    Defaults are the paper's chosen design (Sec. V-VI): P = 16, 8192-word 32-bit tables
    (``bram.v``), 100 MHz on the KC705, ``c*k = 10 * 200``.
    """

    n_pes: int = 16
    bram_words_per_table: int = 8192
    clock_mhz: float = 100.0
    int_bits: int = 32
    score_table_entries: int = 2000
    device: FpgaDevice = KC705
    host: HostModel = field(default_factory=HostModel)
    cycle_model: str = "rtl"

    def __post_init__(self) -> None:
        for name in ("n_pes", "bram_words_per_table", "int_bits", "score_table_entries"):
            v = getattr(self, name)
            if isinstance(v, np.integer | float) and not isinstance(v, bool) and float(v).is_integer():
                object.__setattr__(self, name, int(v))
        if isinstance(self.clock_mhz, np.floating | np.integer):
            object.__setattr__(self, "clock_mhz", float(self.clock_mhz))
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad parameter and its value."""
        _check_int("n_pes", self.n_pes, 1)
        _check_int("bram_words_per_table", self.bram_words_per_table, 2)
        if self.int_bits not in INT_BITS_CHOICES:
            raise ValueError(f"PPRFpgaEngine.int_bits must be one of {list(INT_BITS_CHOICES)}, "
                             f"got {self.int_bits!r}")
        _check_int("score_table_entries", self.score_table_entries, 1)
        c = self.clock_mhz
        if isinstance(c, bool) or not isinstance(c, int | float) or not (math.isfinite(c) and c > 0):
            raise ValueError(f"PPRFpgaEngine.clock_mhz must be a positive number, got {c!r}")
        if not isinstance(self.device, FpgaDevice):
            raise ValueError(f"PPRFpgaEngine.device must be an FpgaDevice, got {self.device!r}")
        if not isinstance(self.host, HostModel):
            raise ValueError(f"PPRFpgaEngine.host must be a HostModel, got {self.host!r}")
        if self.cycle_model not in CYCLE_MODELS:
            raise ValueError(f"PPRFpgaEngine.cycle_model must be one of {list(CYCLE_MODELS)}, "
                             f"got {self.cycle_model!r}")
        need = self.node_id_bits
        if need > self.int_bits:
            raise ValueError(
                f"PPRFpgaEngine.int_bits={self.int_bits} cannot address {self.n_pes} x "
                f"{self.node_capacity_per_pe} nodes (needs {need} bits)")

    @classmethod
    def from_point(cls, point: Mapping[str, Any], strict: bool = False, **overrides: Any) -> PPRFpgaEngine:
        """Build from a (joint) design point: the keys that are field names are used;
        ``score_table_entries`` defaults to ``c * k`` when the point has ``c`` and ``k``.
        With ``strict=True`` unknown keys raise a ``ValueError`` naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(point) - known)
        if strict and unknown:
            raise ValueError(f"PPRFpgaEngine.from_point: unknown keys {unknown}; known: {sorted(known)}")
        kw = {k: v for k, v in point.items() if k in known}
        if "score_table_entries" not in kw and "c" in point and "k" in point:
            kw["score_table_entries"] = int(point["c"]) * int(point["k"])
        kw.update(overrides)
        return cls(**kw)

    # -- capacities ------------------------------------------------------------------------

    @property
    def node_capacity_per_pe(self) -> int:
        """Nodes one PE holds: its score table keeps 2 words per node."""
        return self.bram_words_per_table // 2

    @property
    def node_id_bits(self) -> int:
        """Bits to address every score-table node across all PEs."""
        return max(1, math.ceil(math.log2(max(2, self.n_pes * self.node_capacity_per_pe))))

    @property
    def cycle_ns(self) -> float:
        return 1e3 / self.clock_mhz

    @property
    def divider_cycles(self) -> int:
        return self.int_bits + DIVIDER_EXTRA_CYCLES

    def fits_pe(self, n_nodes: int, nnz: int) -> bool:
        """A sub-graph (or slice) fits one PE's tables."""
        return n_nodes <= self.node_capacity_per_pe and 2 * n_nodes + nnz <= self.bram_words_per_table

    # -- resources -------------------------------------------------------------------------

    @staticmethod
    def resources_of(p: Mapping[str, Any], lut_source: str = "paper") -> dict[str, np.ndarray]:
        """``lut``, ``bram18``, ``bram36``, ``dsp`` of a batch of designs (columns).

        ``p`` maps ``n_pes``, ``bram_words_per_table`` and optionally ``int_bits``
        (default 32) and ``score_table_entries`` (else ``c * k`` if both given, else
        2000) to arrays or scalars. See the module docstring for the model.
        ``lut_source`` (:data:`LUT_SOURCES`): the LUT figures the LUT model is fitted to.
        """
        if lut_source not in LUT_SOURCES:
            raise ValueError(f"lut_source must be one of {list(LUT_SOURCES)}, got {lut_source!r}")
        try:
            pes = np.asarray(p["n_pes"], dtype=float)
            words = np.asarray(p["bram_words_per_table"], dtype=float)
        except KeyError as e:
            raise KeyError(f"PPRFpgaEngine.resources_of needs column {e.args[0]!r} (got {sorted(p)})") from None
        bits = np.asarray(p["int_bits"] if "int_bits" in p else REF_INT_BITS, dtype=float)
        if "score_table_entries" in p:
            ck = np.asarray(p["score_table_entries"], dtype=float)
        elif "c" in p and "k" in p:
            ck = np.asarray(p["c"], dtype=float) * np.asarray(p["k"], dtype=float)
        else:
            ck = np.asarray(2000.0)
        w = words.astype(np.int64)
        b = bits.astype(np.int64)
        per_pe18 = 2 * bram18_for(w, b) + bram18_for(w // 2, b)
        global18 = 2 * bram18_for(ck.astype(np.int64), b)
        bram18 = pes.astype(np.int64) * per_pe18 + global18
        coef = lut_coefficients() if lut_source == "paper" else lut_coefficients_yosys()
        lut = _lut_features(pes, bits, _addr_bits(words)) @ coef
        lut = np.ceil(lut)
        zeros = np.zeros(np.broadcast(pes, words, bits, ck).shape)
        return {"lut": lut + zeros, "bram18": bram18 + zeros, "bram36": bram18 / 2 + zeros,
                "dsp": zeros}

    def resources(self, lut_source: str = "paper") -> dict[str, float]:
        """``lut``, ``bram18``, ``bram36``, ``dsp`` of this design."""
        r = self.resources_of(self._columns(), lut_source)
        return {k: float(v) for k, v in r.items()}

    def utilization(self) -> dict[str, float]:
        """Percent of the device: ``lut_pct``, ``bram_pct``, ``dsp_pct``."""
        r = self.resources()
        d = self.device
        return {"lut_pct": 100 * r["lut"] / d.lut, "bram_pct": 100 * r["bram36"] / d.bram36,
                "dsp_pct": 100 * r["dsp"] / d.dsp}

    def fits_device(self) -> bool:
        r = self.resources()
        d = self.device
        return r["lut"] <= d.lut and r["bram36"] <= d.bram36 and r["dsp"] <= d.dsp

    def _columns(self) -> dict[str, Any]:
        return {"n_pes": self.n_pes, "bram_words_per_table": self.bram_words_per_table,
                "int_bits": self.int_bits, "score_table_entries": self.score_table_entries}

    # -- cycles ----------------------------------------------------------------------------

    def node_cycles(self, degrees: np.ndarray) -> np.ndarray:
        """Stall-free cycles of one diffusion step for each node of a slice: ``rtl``
        ``4 + int_bits + 3 d`` (36 + 3 d at 32 bits, the RTL's count); ``v1`` adds the
        divider's 2 handshake cycles and 3 accumulation cycles per node."""
        d = np.asarray(degrees, dtype=np.int64)
        if self.cycle_model == "rtl":
            return rtl.NODE_STATES_BEFORE_DIVIDE + self.int_bits + rtl.EDGE_CYCLES_RTL * d
        return NODE_CYCLES + self.divider_cycles + EDGE_CYCLES * d + ACCUM_CYCLES_PER_NODE

    def _csr(self, sg: Subgraph) -> tuple[np.ndarray, np.ndarray]:
        deg = self._degrees(sg)
        indptr = np.concatenate(([0], np.cumsum(deg))).astype(np.int64)
        if sg.neighbors is not None:
            nb = np.asarray(sg.neighbors, dtype=np.int64)
            if nb.size != indptr[-1]:
                raise ValueError(f"Subgraph.neighbors has {nb.size} entries, degrees sum to {indptr[-1]}")
            return indptr, nb
        rng = np.random.default_rng(deg.size * 1_000_003 + int(indptr[-1]))
        return indptr, rng.integers(0, max(1, deg.size), size=int(indptr[-1]), dtype=np.int64)

    def _rtl_step(self, sg: Subgraph, P: int) -> dict[str, int]:
        """One step of ``sg`` split over ``P`` PEs under the RTL model (cached)."""
        indptr, nb = self._csr(sg)
        V = indptr.size - 1
        node_num = -(-V // P)
        key = (P, node_num, self.int_bits, V, hash(indptr.tobytes()), hash(nb.tobytes()))
        hit = _RTL_CACHE.get(key)
        if hit is None:
            if len(_RTL_CACHE) > 4096:
                _RTL_CACHE.clear()
            hit = rtl.step_cycles(indptr, nb, P, node_num, divider_cycles=self.int_bits)
            _RTL_CACHE[key] = hit
        return hit

    def _degrees(self, sg: Subgraph) -> np.ndarray:
        if sg.degrees is not None:
            return np.asarray(sg.degrees, dtype=np.int64)
        if sg.n_nodes == 0:
            return np.zeros(0, dtype=np.int64)
        base, extra = divmod(sg.nnz, sg.n_nodes)
        d = np.full(sg.n_nodes, base, dtype=np.int64)
        d[:extra] += 1
        return d

    def split_cycles(self, sg: Subgraph, n_pes: int | None = None) -> tuple[int, int, bool]:
        """``(cycles, conflict_cycles, fits)`` of ``sg`` split over ``n_pes`` (default all)
        PEs in contiguous node slices of ``ceil(V / P)``, then the merge into the global
        table. ``rtl``: each step is simulated (:func:`accelerators.ppr_fpga_rtl.step_cycles`);
        ``conflict_cycles`` is the slowest PE's stall excess over its stall-free cycles,
        times the steps. ``v1``: each step lasts as long as the slowest slice, stretched
        by the stall factor of the access-probability formula."""
        P = self.n_pes if n_pes is None else n_pes
        deg = self._degrees(sg)
        V = deg.size
        if V == 0:
            return 0, 0, True
        size = -(-V // P)
        starts = np.arange(0, V, size)
        slice_nodes = np.diff(np.append(starts, V))
        slice_nnz = np.add.reduceat(deg, starts)
        fits = bool(np.all(slice_nodes <= self.node_capacity_per_pe)
                    and np.all(2 * slice_nodes + slice_nnz <= self.bram_words_per_table))
        if self.cycle_model == "rtl":
            st = self._rtl_step(sg, P)
            conflict = st["stall_cycles"] * sg.steps
            return st["cycles"] * sg.steps + MERGE_CYCLES_PER_NODE * V, conflict, fits
        per_slice = np.add.reduceat(self.node_cycles(deg), starts)
        step = int(per_slice.max())
        stall = 0.0
        if starts.size > 1:
            busy = V * (NODE_CYCLES + self.divider_cycles) + EDGE_CYCLES * int(deg.sum())
            q = (SCORE_ACCESSES_PER_NODE * V + SCORE_ACCESSES_PER_ENTRY * int(deg.sum())) / busy
            k = starts.size
            p_stall = 1.0 - (1.0 - q / k) ** (k - 1)
            stall = p_stall / (1.0 - p_stall)
        conflict = round(step * stall) * sg.steps
        cycles = step * sg.steps + conflict + MERGE_CYCLES_PER_NODE * V
        return cycles, conflict, fits

    def whole_cycles(self, sg: Subgraph) -> int:
        """Cycles of ``sg`` on one PE (no conflicts), including the merge; under ``rtl``
        plus that PE's accumulation per step (:func:`accelerators.ppr_fpga_rtl.accumulation_cycles`
        of this design's top, with ``node_num = V``)."""
        deg = self._degrees(sg)
        per_step = int(self.node_cycles(deg).sum())
        if self.cycle_model == "rtl" and deg.size:
            per_step += rtl.accumulation_cycles(self.n_pes, int(deg.size))
        return per_step * sg.steps + MERGE_CYCLES_PER_NODE * deg.size

    def scheduling_overhead(self, sg: Subgraph, n_pes: int | None = None) -> float:
        """Conflict stall cycles / conflict-free cycles of ``sg`` split over ``n_pes``."""
        cycles, conflict, _ = self.split_cycles(sg, n_pes)
        return conflict / max(1, cycles - conflict)

    # -- latency ---------------------------------------------------------------------------

    def query_latency(self, subgraphs: Sequence[Subgraph], assignment: str = "split",
                      result_entries: int | None = None) -> LatencyBreakdown:
        """Modelled latency of one query whose first sub-graph is the stage-1 ball and the
        rest are stage-2 balls (in next-stage order).

        Timeline: the host extracts and sends the stage-1 sub-graph, the FPGA diffuses it
        (split over all PEs) and returns its residual vector, the host then extracts the
        stage-2 sub-graphs one after another while the FPGA diffuses those already sent
        (a two-resource pipeline), placed by ``assignment`` (:data:`ASSIGNMENTS`); at the
        end the ``result_entries`` (default ``score_table_entries``) id/score pairs of
        the global table come back. A sub-graph that does not fit even split over all
        PEs makes ``fits`` False (with a reason); its time is still counted.
        Simplifications: the host issues each DMA itself (its transfers are serialized
        with its BFS work); merges of PEs that finish together are not serialized on the
        global table (optimistic); no speculative BFS of stage-2 balls before the
        stage-1 residual is back.
        """
        if assignment not in ASSIGNMENTS:
            raise ValueError(f"assignment must be one of {list(ASSIGNMENTS)}, got {assignment!r}")
        out = LatencyBreakdown(n_subgraphs=len(subgraphs))
        if not subgraphs:
            return out
        word = self.int_bits / 8
        cyc_us = self.cycle_ns * 1e-3
        host = self.host
        P = self.n_pes
        pe_free = np.zeros(P)
        pe_busy = np.zeros(P)
        cpu_t = 0.0
        cpu_total = xfer_total = 0.0
        cycles_total = conflict_total = 0
        for i, sg in enumerate(subgraphs):
            cpu = host.cpu_us(sg.n_nodes, sg.nnz, sg.depth)
            xfer = host.transfer_us(word * (2 * sg.n_nodes + sg.nnz + 1))
            cpu_total += cpu
            xfer_total += xfer
            ready = cpu_t + cpu + xfer
            cpu_t = ready
            out.fpga_peak_bytes = max(out.fpga_peak_bytes,
                                      float(subgraph_fpga_bytes(sg.n_nodes, sg.nnz, self.int_bits)))
            whole_ok = self.fits_pe(sg.n_nodes, sg.nnz)
            if i == 0 or assignment == "split" or not whole_ok:
                cycles, conflict, fits = self.split_cycles(sg)
                if not fits and out.fits:
                    out.fits = False
                    out.reason = (f"sub-graph {i} ({sg.n_nodes} nodes, {sg.nnz} entries) exceeds "
                                  f"{P} PE(s) x {self.bram_words_per_table} words")
                start = max(ready, float(pe_free.max()))
                dur = cycles * cyc_us
                pe_free[:] = start + dur
                pe_busy += dur
                out.n_split += 1
                conflict_total += conflict
            else:
                cycles = self.whole_cycles(sg)
                j = (i - 1) % P if assignment == "round_robin" else int(np.argmin(pe_free))
                start = max(ready, float(pe_free[j]))
                dur = cycles * cyc_us
                pe_free[j] = start + dur
                pe_busy[j] += dur
            cycles_total += cycles
            if i == 0:
                # residual vector back to the host, which then picks the next-stage nodes
                back = host.transfer_us(word * sg.n_nodes)
                xfer_total += back
                cpu_t = float(pe_free.max()) + back
        n_res = self.score_table_entries if result_entries is None else result_entries
        tail = host.transfer_us(2 * word * n_res)
        xfer_total += tail
        end = max(cpu_t, float(pe_free.max())) + tail
        out.latency_ms = end * 1e-3
        out.cpu_ms = cpu_total * 1e-3
        out.transfer_ms = xfer_total * 1e-3
        out.fpga_busy_ms = float(pe_busy.max()) * 1e-3
        out.per_pe_busy_ms = (pe_busy * 1e-3).tolist()
        out.fpga_cycles = int(cycles_total)
        out.conflict_cycles = int(conflict_total)
        return out


def fits_kc705(p: Mapping[str, Any], lut_source: str = "paper") -> Any:
    """Vectorized known constraint: LUT, BRAM36 and DSP of the design fit the XC7K325T,
    and ``int_bits`` can address every node (see :attr:`PPRFpgaEngine.node_id_bits`).
    Columns as :meth:`PPRFpgaEngine.resources_of`. The LUTs are the model fitted to the
    paper's Table I (``lut_source="paper"``, what the co-design uses): the larger and so
    the more conservative of the two figures; ``"yosys"`` uses the synthesis of the RTL."""
    r = PPRFpgaEngine.resources_of(p, lut_source)
    ok = (r["lut"] <= KC705.lut) & (r["bram36"] <= KC705.bram36) & (r["dsp"] <= KC705.dsp)
    pes = np.asarray(p["n_pes"], dtype=float)
    words = np.asarray(p["bram_words_per_table"], dtype=float)
    bits = np.asarray(p["int_bits"] if "int_bits" in p else REF_INT_BITS, dtype=float)
    need = np.ceil(np.log2(np.maximum(2, pes * np.floor(words / 2))))
    return ok & (need <= bits)
