"""Latency (and energy) of a Triton GEMM tiling on a :class:`~accelerators.gpu.GPUAccelerator`.

A tiling is ``BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages``
(:mod:`evaluators.kernels.triton_gemm`); the GEMM ``C[M, N] = A[M, K] B[K, N]`` in fp16
with fp32 accumulation. Vectorized over tilings (numpy arrays).

**Resources per thread block (CTA).** Shared memory ``stages x (BM x BK + BK x BN) x 2``
bytes (the software pipeline's buffers); registers ``BM x BN / (32 x warps)`` fp32
accumulators per thread plus ``reg_overhead`` (a free constant: addresses, loop state,
operand fragments). A tiling whose shared memory exceeds the per-block limit cannot
run (``inf``: Triton raises OutOfResources); one that needs more than 255 registers per
thread spills (the compiler still builds it): occupancy is computed at 255 and the
compute time is multiplied by ``needed / 255``.

**Occupancy.** CTAs per SM = min over shared memory, registers, warps and the block
limit. ``tiles = ceil(M/BM) x ceil(N/BN)`` CTAs run in ``waves = ceil(tiles / (SMs x
CTAs per SM))``.

**Time** = ``launch_s + waves x max(t_compute, t_l2, t_hbm)`` per wave, where

* ``t_compute`` = CTAs-per-SM x ``2 BM BN Kp`` flops / (the SM's dense tensor flop/s x
  ``tc_eff`` x ``hide``), ``Kp`` = K rounded up to BK; ``hide`` = ``w / (w + c_hide)``
  with ``w`` = warps in flight per SM x (stages - 1): latency hiding by warps and by the
  pipeline's prefetched stages (``c_hide`` a free constant);
* ``t_l2`` = the wave's operand loads ``(BM + BN) x Kp x 2`` bytes per CTA / ``l2_gb_s``;
* ``t_hbm`` = the wave's *unique* operand bytes / (HBM bandwidth x ``hbm_eff``): with
  grouped ordering a wave of ``C`` CTAs covers ``g = min(GROUP_M, ceil(M/BM))`` tile
  rows x ``C / g`` tile columns, so it reads ``g`` A row-panels and ``C/g`` B
  column-panels once (the rest hits in L2), plus its C tiles written once.

**Energy** (NVML-calibrated): ``e_flop_pj x flops + e_l2_byte_pj x L2 bytes +
e_hbm_byte_pj x HBM bytes + static_w x time``.

Free constants and their uncalibrated values (assumptions, to be fitted by
``coexplore calibrate --device cuda``): ``tc_eff`` 0.75 (Triton fp16 GEMMs reach roughly
70-80 % of the dense peak on large shapes, per the Triton matmul tutorial's plots vs
cuBLAS), ``hbm_eff`` 0.8, ``l2_gb_s`` 3x HBM (NVIDIA publishes no L2 bandwidth),
``launch_s`` 5 µs, ``c_hide`` 8 warp-stages, ``reg_overhead`` 32. Uncalibrated
energies: ``e_flop_pj`` = TDP / dense fp16 peak (0.71 pJ on the H100: all board power
charged to flops at peak, an upper bound), ``e_hbm_byte_pj`` = 31.2 (3.9 pJ/bit for
HBM2, O'Connor et al., "Fine-Grained DRAM", MICRO 2017), ``e_l2_byte_pj`` and
``static_w`` 0 (unknown until NVML calibrates them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from accelerators.gpu import GPUAccelerator

FREE = ("tc_eff", "hbm_eff", "l2_gb_s", "launch_s", "c_hide")
ENERGY = ("e_flop_pj", "e_l2_byte_pj", "e_hbm_byte_pj", "static_w")
BYTES = 2  # fp16 operands


def tiling_arrays(points: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    keys = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")
    return {k: np.array([float(p[k]) for p in points]) for k in keys}


@dataclass(frozen=True)
class GPUKernelModel:
    """The model (module docstring): a GPU's datasheet figures and the free constants."""

    gpu: GPUAccelerator
    tc_eff: float = 0.75
    hbm_eff: float = 0.8
    l2_gb_s: float = 0.0          # 0 -> 3 x HBM bandwidth
    launch_s: float = 5e-6
    c_hide: float = 8.0
    reg_overhead: float = 32.0
    e_flop_pj: float = 0.0
    e_l2_byte_pj: float = 0.0
    e_hbm_byte_pj: float = 0.0
    static_w: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.l2_gb_s <= 0:
            object.__setattr__(self, "l2_gb_s", 3.0 * self.gpu.hbm_gb_s)

    @classmethod
    def datasheet(cls, gpu: GPUAccelerator | str | None = None) -> GPUKernelModel:
        """Uncalibrated model of ``gpu`` (a preset name; default: the detected GPU, else H100)."""
        if isinstance(gpu, str):
            gpu = GPUAccelerator.preset(gpu)
        g = gpu or GPUAccelerator.detect() or GPUAccelerator.preset("h100-sxm")
        return cls(g, e_flop_pj=g.tdp_w / g.tensor_fp16_tflops, e_hbm_byte_pj=31.2)

    def constants(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k not in ("gpu", "extra")}
        d["gpu"] = self.gpu.to_dict()
        return d

    @classmethod
    def from_constants(cls, d: Mapping[str, Any]) -> GPUKernelModel:
        d = dict(d)
        gpu = GPUAccelerator(**d.pop("gpu"))
        return cls(gpu, **{k: float(v) for k, v in d.items()})

    def replace(self, **kw: float) -> GPUKernelModel:
        d = {k: v for k, v in asdict(self).items() if k not in ("gpu", "extra")}
        d.update(kw)
        return GPUKernelModel(self.gpu, **d)

    # ------------------------------------------------------------------ the model

    def resources(self, points: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
        """Per tiling: shared memory (bytes), registers per thread, CTAs per SM (0 if
        the tiling cannot run)."""
        t = tiling_arrays(points)
        g = self.gpu
        smem = t["num_stages"] * (t["BLOCK_M"] * t["BLOCK_K"] + t["BLOCK_K"] * t["BLOCK_N"]) * BYTES
        threads = 32 * t["num_warps"]
        regs = t["BLOCK_M"] * t["BLOCK_N"] / threads + self.reg_overhead
        by_smem = np.floor(g.smem_per_sm_kib * 1024 / smem)
        by_regs = np.floor(g.regs_per_sm / (np.minimum(regs, g.max_regs_per_thread) * threads))
        by_warps = np.floor(g.max_warps_per_sm / t["num_warps"])
        ctas = np.minimum.reduce([by_smem, by_regs, by_warps, np.full_like(smem, g.max_blocks_per_sm)])
        ok = (smem <= g.smem_per_block_kib * 1024) & (ctas >= 1)
        return {"smem_bytes": smem, "regs_per_thread": regs, "ctas_per_sm": np.where(ok, ctas, 0.0),
                "spill": np.maximum(regs / g.max_regs_per_thread, 1.0)}

    def traffic(self, M: int, N: int, K: int, points: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
        """Per tiling: waves, flops, L2 and HBM bytes (module docstring)."""
        t = tiling_arrays(points)
        res = self.resources(points)
        bm, bn, bk = t["BLOCK_M"], t["BLOCK_N"], t["BLOCK_K"]
        tm, tn = np.ceil(M / bm), np.ceil(N / bn)
        tiles = tm * tn
        kp = np.ceil(K / bk) * bk
        conc = np.maximum(self.gpu.sm_count * res["ctas_per_sm"], 1.0)
        waves = np.ceil(tiles / conc)
        per_wave = np.minimum(conc, tiles)
        g = np.minimum(t["GROUP_M"], tm)
        cols = np.minimum(np.ceil(per_wave / g), tn)
        rows = np.minimum(g, np.ceil(per_wave / cols))
        hbm_wave = (rows * bm + cols * bn) * kp * BYTES + per_wave * bm * bn * BYTES
        return {
            "waves": waves, "ctas_per_sm": res["ctas_per_sm"], "tiles": tiles,
            "flops": 2.0 * tiles * bm * bn * kp,
            "l2_bytes": tiles * (bm + bn) * kp * BYTES,
            "hbm_bytes": waves * hbm_wave,
            "hbm_wave": hbm_wave, "l2_wave": per_wave * (bm + bn) * kp * BYTES,
            "cta_flops": 2.0 * bm * bn * kp, "warps": t["num_warps"], "stages": t["num_stages"],
            "spill": res["spill"],
        }

    def latency_s(self, M: int, N: int, K: int, points: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Predicted seconds per call (``inf`` for tilings that cannot run)."""
        tr = self.traffic(M, N, K, points)
        ctas = tr["ctas_per_sm"]
        w = ctas * tr["warps"] * np.maximum(tr["stages"] - 1.0, 1.0)
        hide = w / (w + self.c_hide)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_compute = (np.maximum(ctas, 1.0) * tr["cta_flops"] * tr["spill"]
                         / (self.gpu.tensor_flops_per_sm_s * self.tc_eff * hide))
        t_l2 = tr["l2_wave"] / (self.l2_gb_s * 1e9)
        t_hbm = tr["hbm_wave"] / (self.gpu.hbm_gb_s * 1e9 * self.hbm_eff)
        t = self.launch_s + tr["waves"] * np.maximum.reduce([t_compute, t_l2, t_hbm])
        return np.where(ctas > 0, t, np.inf)

    def energy_j(self, M: int, N: int, K: int, points: Sequence[Mapping[str, Any]]) -> np.ndarray:
        tr = self.traffic(M, N, K, points)
        dyn = (tr["flops"] * self.e_flop_pj + tr["l2_bytes"] * self.e_l2_byte_pj
               + tr["hbm_bytes"] * self.e_hbm_byte_pj) * 1e-12
        return dyn + self.static_w * self.latency_s(M, N, K, points)
