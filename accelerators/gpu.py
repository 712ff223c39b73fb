"""`GPUAccelerator`: an NVIDIA GPU as an accelerator of the design space.

The GPU is fixed hardware, so its point has one parameter, ``gpu`` (a preset name), plus
optional overrides of any field (to explore "what if it had twice the L2"). The software
half of the co-design space is the Triton GEMM tiling
(:func:`evaluators.kernels.triton_gemm.tile_space`), and
:class:`evaluators.kernels.gpu_model.GPUKernelModel` predicts a tiling's latency on it.

Fields (units in the names): ``sm_count``; ``boost_clock_mhz``; dense fp16 tensor-core
throughput ``tensor_fp16_tflops`` (fp32 accumulate) and ``fp32_tflops``;
``smem_per_sm_kib`` (shared memory per SM) and ``smem_per_block_kib`` (the most one
thread block may use); ``regs_per_sm`` (32-bit registers) and ``max_regs_per_thread``;
``max_warps_per_sm``; ``max_blocks_per_sm``; ``l2_mib``; ``hbm_gb_s``; ``tdp_w``;
``die_area_mm2`` (the GPU die: fixed silicon, so its "area" in a design space is a
constant a constraint can still read).

Presets and their sources:

* ``h100-sxm``: NVIDIA H100 Tensor Core GPU datasheet (2023) and the NVIDIA H100 Tensor
  Core GPU Architecture whitepaper (Hopper, 2022): 132 SMs, FP16 tensor core 1,979
  TFLOPS *with sparsity*, i.e. 989.4 dense, FP32 67 TFLOPS, HBM3 3.35 TB/s, 50 MB L2,
  up to 228 KB shared memory per SM (227 KB per block), 64 K 32-bit registers per SM
  (255 per thread), 64 warps and 32 blocks per SM, up to 700 W. The boost clock, 1,830
  MHz, is the one that gives the datasheet's dense figure: 132 SMs x 4,096 fp16
  flops/clock/SM x 1.83 GHz = 989 TFLOPS. Die: GH100, 814 mm^2 (the whitepaper's
  "80 billion transistors ... 814 mm^2", TSMC 4N).
* ``a100-sxm``: NVIDIA A100 Tensor Core GPU Architecture whitepaper (Ampere, 2020) and
  the A100 80GB datasheet: 108 SMs, 1,410 MHz boost, FP16 tensor core 312 TFLOPS dense,
  FP32 19.5 TFLOPS, HBM2e 2,039 GB/s (80 GB SXM), 40 MB L2, up to 164 KB shared memory
  per SM (163 KB per block), 64 K registers per SM (255 per thread), 64 warps and 32
  blocks per SM, 400 W. Die: GA100, 826 mm^2 (the whitepaper's "54.2 billion
  transistors with a die size of 826 mm^2", TSMC 7N).
* :meth:`GPUAccelerator.detect` maps an H200 to the H100 SXM SM array with the H200
  datasheet's 4.8 TB/s HBM3e (NVIDIA H200 Tensor Core GPU datasheet, 2024).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

__all__ = ["PRESETS", "GPUAccelerator"]


@dataclass(frozen=True)
class GPUAccelerator:
    """An NVIDIA GPU's datasheet figures (see module docstring)."""

    name: str
    sm_count: int
    boost_clock_mhz: float
    tensor_fp16_tflops: float
    fp32_tflops: float
    smem_per_sm_kib: float
    smem_per_block_kib: float
    regs_per_sm: int
    max_regs_per_thread: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    l2_mib: float
    hbm_gb_s: float
    tdp_w: float
    die_area_mm2: float = float("nan")

    def problems(self) -> list[str]:
        """Named problems (empty = valid)."""
        out = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name not in ("name", "die_area_mm2") and not (isinstance(v, int | float) and v > 0):
                out.append(f"{f.name} must be > 0, got {v!r}")
        if not out and self.smem_per_block_kib > self.smem_per_sm_kib:
            out.append(f"smem_per_block_kib {self.smem_per_block_kib} > smem_per_sm_kib {self.smem_per_sm_kib}")
        return out

    def validate(self) -> None:
        """Raise ``ValueError`` listing every named problem."""
        bad = self.problems()
        if bad:
            raise ValueError(f"GPU {self.name!r}: " + "; ".join(bad))

    def __post_init__(self) -> None:
        self.validate()

    @property
    def area_mm2(self) -> float:
        """The die's area (mm^2); NaN where the preset does not give it."""
        return self.die_area_mm2

    @staticmethod
    def area_mm2_of(columns: Mapping[str, Any]) -> np.ndarray:
        """Die area of every point of a batch: column ``die_area_mm2`` if given, else that
        of the ``gpu`` column's preset (default ``h100-sxm``)."""
        if "die_area_mm2" in columns:
            return np.asarray(columns["die_area_mm2"], dtype=float)
        names = np.asarray(columns.get("gpu", "h100-sxm"), dtype=object)
        return np.vectorize(lambda g: GPUAccelerator.preset(str(g)).die_area_mm2, otypes=[float])(names)

    @property
    def tensor_flops_per_sm_s(self) -> float:
        """Dense fp16 tensor-core flop/s of one SM."""
        return self.tensor_fp16_tflops * 1e12 / self.sm_count

    @property
    def tensor_flops_per_sm_clock(self) -> float:
        return self.tensor_flops_per_sm_s / (self.boost_clock_mhz * 1e6)

    @classmethod
    def preset(cls, name: str) -> GPUAccelerator:
        try:
            return PRESETS[name]
        except KeyError:
            raise ValueError(f"unknown GPU {name!r} (presets: {sorted(PRESETS)})") from None

    @classmethod
    def from_point(cls, point: Mapping[str, Any]) -> GPUAccelerator:
        """``{"gpu": "h100-sxm", <field>: override, ...}``."""
        base = cls.preset(str(point.get("gpu", "h100-sxm")))
        names = {f.name for f in fields(cls)} - {"name"}
        over = {k: v for k, v in point.items() if k in names}
        return replace(base, **over) if over else base

    @classmethod
    def detect(cls) -> GPUAccelerator | None:
        """The preset matching ``torch.cuda.get_device_name()`` (None if unknown or no CUDA)."""
        import torch

        if not torch.cuda.is_available():
            return None
        n = torch.cuda.get_device_name().lower()
        if "h100" in n or "h200" in n:  # H200: same SM array as H100 SXM, faster HBM
            gpu = PRESETS["h100-sxm"]
            return replace(gpu, name="h200", hbm_gb_s=4800.0, l2_mib=50.0) if "h200" in n else gpu
        if "a100" in n:
            return PRESETS["a100-sxm"]
        return None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


PRESETS: dict[str, GPUAccelerator] = {
    "h100-sxm": GPUAccelerator("h100-sxm", sm_count=132, boost_clock_mhz=1830.0,
                               tensor_fp16_tflops=989.4, fp32_tflops=67.0, smem_per_sm_kib=228.0,
                               smem_per_block_kib=227.0, regs_per_sm=65536, max_regs_per_thread=255,
                               max_warps_per_sm=64, max_blocks_per_sm=32, l2_mib=50.0,
                               hbm_gb_s=3350.0, tdp_w=700.0, die_area_mm2=814.0),
    "a100-sxm": GPUAccelerator("a100-sxm", sm_count=108, boost_clock_mhz=1410.0,
                               tensor_fp16_tflops=312.0, fp32_tflops=19.5, smem_per_sm_kib=164.0,
                               smem_per_block_kib=163.0, regs_per_sm=65536, max_regs_per_thread=255,
                               max_warps_per_sm=64, max_blocks_per_sm=32, l2_mib=40.0,
                               hbm_gb_s=2039.0, tdp_w=400.0, die_area_mm2=826.0),
}
