"""An analytical CPU model of the measured kernels, with free constants to calibrate.

Each kernel is reduced to five features (:class:`Features`, arrays over kernels):

* ``flops`` -- ``2 x MACs``;
* ``calls`` -- kernel invocations (one per measured call: its fixed cost, allocation of
  the output included);
* ``blocks`` -- blocks of the blocked matmul (each one Python iteration, three slices and
  an ``addmm_`` call); zero for a torch kernel;
* ``tile_bytes`` -- traffic between memory and the cache tile of the blocked matmul,
  counted by the loop-nest model (:mod:`evaluators.loopnest`) on
  :func:`~evaluators.kernels.blocked.cpu_arch` for exactly the loop nest that runs:
  level-1 reads + writes of every operand, x 4 bytes. It depends on the tile sizes and
  the block-loop order (which operand tile stays between calls). Zero for torch kernels,
  whose internal blocking is the library's;
* ``min_bytes`` -- compulsory traffic: every operand word once (fp32);
* ``threads`` -- torch intra-op threads.

Latency (seconds), a sum of a per-call overhead and three throughput terms (no overlap
assumed; the calibration absorbs how much they overlap)::

    t = calls * overhead_s + blocks * block_overhead_s
        + flops / (peak_gflops * 1e9 * par)
        + tile_bytes / (cache_bw_gb_s * 1e9 * par)
        + min_bytes / (dram_bw_gb_s * 1e9)
    par = 1 + (threads - 1) * thread_scaling

Energy (joules, only calibrated where RAPL is readable)::

    e = flops * e_flop_pj + tile_bytes * e_cache_byte_pj + min_bytes * e_dram_byte_pj
        (all x 1e-12) + static_w * t

Uncalibrated constants (:func:`datasheet_model`), each with its source:

* ``peak_gflops`` per thread = fp32 flops/cycle x clock. flops/cycle: 32 with AVX2+FMA
  (two 256-bit FMA pipes: AMD Software Optimization Guide for Family 19h (Zen 3) section
  2.11; Intel Optimization Reference Manual, Haswell-Skylake client), 64 with AVX-512F
  (two 512-bit FMA units, Intel Xeon Scalable "Skylake-SP" and later), 8 otherwise (SSE);
  clock from ``/proc/cpuinfo`` ``cpu MHz`` (2,000 MHz if absent, an assumption).
* ``cache_bw_gb_s``: two 32-byte loads per cycle from L1 (same guides) x clock -- an
  upper bound; block tiles live in L2/L3, which the fit corrects.
* ``dram_bw_gb_s`` = 10 GB/s: an assumption (one core's share of a server's DRAM; a VM
  publishes no figure).
* ``overhead_s`` = 5 µs per call, ``block_overhead_s`` = 10 µs per block: assumptions
  (eager PyTorch dispatch of a small op is a few microseconds; a block is four ops).
* ``thread_scaling`` = 0.9: an assumption.
* energies: fp32 multiply + add 3.7 + 0.9 pJ per 2 flops, DRAM 20 pJ/bit = 160 pJ/byte,
  a 1 MB SRAM 100 pJ per 64-bit access = 12.5 pJ/byte (Horowitz, ISSCC 2014, 45 nm,
  the same table as :mod:`accelerators.tech`); ``static_w`` = 0 (unknown until RAPL
  calibrates it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from evaluators.kernels import blocked
from mappers.workloads import Layer

BYTES_PER_WORD = 4  # float32


@dataclass(frozen=True)
class Features:
    """Per-kernel model inputs (arrays of equal length); see module docstring."""

    flops: np.ndarray
    calls: np.ndarray
    blocks: np.ndarray
    tile_bytes: np.ndarray
    min_bytes: np.ndarray
    threads: np.ndarray

    def __len__(self) -> int:
        return len(self.flops)

    @staticmethod
    def concat(parts: Sequence[Features]) -> Features:
        return Features(*(np.concatenate([getattr(p, f.name) for p in parts]).astype(float)
                          for f in fields(Features)))

    def take(self, idx: Any) -> Features:
        return Features(*(np.asarray(getattr(self, f.name))[idx] for f in fields(Features)))

    def to_dict(self) -> dict[str, list[float]]:
        return {f.name: np.asarray(getattr(self, f.name), float).tolist() for f in fields(Features)}

    @staticmethod
    def from_dict(d: Mapping[str, Sequence[float]]) -> Features:
        return Features(*(np.asarray(d[f.name], dtype=float) for f in fields(Features)))


def _min_bytes(layer: Layer) -> float:
    return float(sum(layer.tensor_words(op) for op in ("W", "I", "O")) * BYTES_PER_WORD)


def kernel_features(layer: Layer, threads: int) -> Features:
    """Features of ``layer`` run as one torch kernel (:func:`~evaluators.kernels.measure.layer_kernel`)."""
    one = np.ones(1)
    return Features(2.0 * layer.macs * one, one.copy(), 0.0 * one, 0.0 * one,
                    _min_bytes(layer) * one, float(threads) * one)


def blocked_features(layer: Layer, points: Sequence[Mapping[str, Any]], threads: int = 1) -> Features:
    """Features of the blocked matmul of ``layer`` under each tiling point (tile traffic
    from the loop-nest model, vectorized over the points)."""
    from evaluators.loopnest import evaluate_batch
    from mappers.mapping import MappingBatch

    arch = blocked.cpu_arch()
    batch = MappingBatch.from_mappings(layer, arch, [blocked.to_mapping(layer, p, arch) for p in points])
    r = evaluate_batch(layer, arch, batch)
    tile_words = np.asarray(r.reads[:, 1, :].sum(-1) + r.writes[:, 1, :].sum(-1), dtype=float)
    n = len(points)
    return Features(np.full(n, 2.0 * layer.macs), np.ones(n),
                    np.array([blocked.n_blocks(layer, p) for p in points], dtype=float),
                    tile_words * BYTES_PER_WORD, np.full(n, _min_bytes(layer)),
                    np.full(n, float(threads)))


@dataclass(frozen=True)
class CPUModel:
    """The model's constants (see module docstring for units and sources)."""

    peak_gflops: float
    cache_bw_gb_s: float
    dram_bw_gb_s: float
    overhead_s: float
    block_overhead_s: float
    thread_scaling: float
    e_flop_pj: float = 2.3
    e_cache_byte_pj: float = 12.5
    e_dram_byte_pj: float = 160.0
    static_w: float = 0.0

    LATENCY = ("peak_gflops", "cache_bw_gb_s", "dram_bw_gb_s", "overhead_s", "block_overhead_s",
               "thread_scaling")
    ENERGY = ("e_flop_pj", "e_cache_byte_pj", "e_dram_byte_pj", "static_w")

    def latency_terms_s(self, f: Features) -> dict[str, np.ndarray]:
        par = 1.0 + (np.asarray(f.threads) - 1.0) * self.thread_scaling
        return {
            "overhead": np.asarray(f.calls) * self.overhead_s
            + np.asarray(f.blocks) * self.block_overhead_s,
            "compute": np.asarray(f.flops) / (self.peak_gflops * 1e9 * par),
            "cache": np.asarray(f.tile_bytes) / (self.cache_bw_gb_s * 1e9 * par),
            "memory": np.asarray(f.min_bytes) / (self.dram_bw_gb_s * 1e9),
        }

    def latency_s(self, f: Features) -> np.ndarray:
        return sum(self.latency_terms_s(f).values())

    def energy_j(self, f: Features) -> np.ndarray:
        dyn = (np.asarray(f.flops) * self.e_flop_pj + np.asarray(f.tile_bytes) * self.e_cache_byte_pj
               + np.asarray(f.min_bytes) * self.e_dram_byte_pj) * 1e-12
        return dyn + self.static_w * self.latency_s(f)

    def constants(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}

    def replace(self, **kw: float) -> CPUModel:
        return CPUModel(**{**self.constants(), **kw})


def _cpuinfo() -> tuple[set[str], float | None]:
    flags: set[str] = set()
    mhz = None
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
                elif line.startswith("cpu MHz") and mhz is None:
                    mhz = float(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return flags, mhz


def flops_per_cycle(flags: set[str]) -> int:
    """fp32 flops per cycle per core from the ISA (see module docstring)."""
    if "avx512f" in flags:
        return 64
    if "avx2" in flags and "fma" in flags:
        return 32
    return 8


def datasheet_model() -> CPUModel:
    """The uncalibrated model of this machine's CPU (constants and sources in the module
    docstring)."""
    flags, mhz = _cpuinfo()
    ghz = (mhz or 2000.0) / 1000.0
    return CPUModel(peak_gflops=flops_per_cycle(flags) * ghz, cache_bw_gb_s=64.0 * ghz,
                    dram_bw_gb_s=10.0, overhead_s=5e-6, block_overhead_s=1e-5,
                    thread_scaling=0.9)


def cache_size_bytes(level: int = 2, default: int = 512 * 1024) -> int:
    """Size of the CPU's data/unified cache at ``level`` from
    ``/sys/devices/system/cpu/cpu0/cache`` (``default`` when unreadable)."""
    import glob
    import os

    for d in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        try:
            with open(os.path.join(d, "level")) as f:
                lv = int(f.read())
            with open(os.path.join(d, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(d, "size")) as f:
                size = f.read().strip()
        except (OSError, ValueError):
            continue
        if lv == level and kind in ("Data", "Unified"):
            mult = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(size[-1:].upper(), 1)
            return int(size.rstrip("KMGkmg")) * mult
    return default
