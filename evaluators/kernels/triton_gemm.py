"""A Triton GEMM whose tiling comes from a coexplore mapping point (CUDA only; the ``gpu``
extra). Triton is imported lazily: this module imports without it, and every function
that needs it raises a clear ``RuntimeError`` when Triton or CUDA is missing.

A *tiling point* is ``{"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps",
"num_stages"}``: the output tile of one program, the K step, how many tile rows a
launch group spans (L2 reuse), the warps per program and the software-pipeline depth.
:func:`tile_space` is the design space of those (with the shared-memory limit of the
GPU as a known constraint); :func:`gemm_kernel` compiles and returns a closure that runs
``C = A @ B`` (fp16, fp32 accumulation) with that tiling, checked against
``torch.matmul`` by the GPU tests. :func:`autotuned_latency_s` times ``triton.autotune``
over :data:`DEFAULT_AUTOTUNE_CONFIGS`, the baseline of the HIL benchmark.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")

# Triton's matmul tutorial (python/tutorials/03-matrix-multiplication.py,
# get_cuda_autotune_config, the fp16 configs): BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
# num_stages, num_warps.
DEFAULT_AUTOTUNE_CONFIGS = [
    (128, 256, 64, 8, 3, 8), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4),
    (128, 64, 32, 8, 4, 4), (64, 128, 32, 8, 4, 4), (128, 32, 32, 8, 4, 4),
    (64, 32, 32, 8, 5, 2), (32, 64, 32, 8, 5, 2),
]


def available() -> bool:
    """Triton importable and a CUDA device present."""
    import importlib.util

    if importlib.util.find_spec("triton") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def _require() -> None:
    if not available():
        raise RuntimeError("the Triton GEMM needs CUDA and triton (pip install -e '.[gpu]' on a "
                           "machine with an NVIDIA GPU and a CUDA build of torch)")


@functools.lru_cache(maxsize=1)
def _kernel() -> Any:
    _require()
    from evaluators.kernels._triton_kernel import matmul_kernel

    return matmul_kernel


def smem_bytes(point: Mapping[str, Any]) -> int:
    """Shared memory of the pipeline's operand buffers (fp16)."""
    return int(point["num_stages"]) * (int(point["BLOCK_M"]) * int(point["BLOCK_K"])
                                       + int(point["BLOCK_K"]) * int(point["BLOCK_N"])) * 2


def tile_space(M: int, N: int, K: int, *, quick: bool = False, smem_limit_kib: float | None = None) -> Any:
    """Tilings as a :class:`~design_space.DesignSpace`: BLOCK_M/N in 32..256, BLOCK_K in
    32..128, GROUP_M 1 or 8, 4 or 8 warps, 2-5 stages (``quick``: a smaller grid); the
    known constraint is the shared memory per block (the detected GPU's, else the H100's
    227 KiB). Blocks larger than the padded dimension are dropped."""
    from accelerators.gpu import GPUAccelerator
    from design_space import Constraint, DesignSpace, Ordinal

    def vals(cands: tuple[int, ...], size: int) -> list[int]:
        keep = [c for c in cands if c <= max(size, cands[0])]
        return keep or [cands[0]]

    if smem_limit_kib is None:
        gpu = GPUAccelerator.detect() or GPUAccelerator.preset("h100-sxm")
        smem_limit_kib = gpu.smem_per_block_kib
    limit = smem_limit_kib * 1024
    bmn = (64, 128) if quick else (32, 64, 128, 256)
    bk = (32, 64) if quick else (32, 64, 128)
    space = DesignSpace(
        Ordinal("BLOCK_M", vals(bmn, M)), Ordinal("BLOCK_N", vals(bmn, N)), Ordinal("BLOCK_K", vals(bk, K)),
        Ordinal("GROUP_M", [1, 8]), Ordinal("num_warps", [4, 8]),
        Ordinal("num_stages", [3, 4] if quick else [2, 3, 4, 5]),
        constraints=[Constraint("smem", lambda p: p["num_stages"] * (p["BLOCK_M"] * p["BLOCK_K"]
                                                                    + p["BLOCK_K"] * p["BLOCK_N"]) * 2 <= limit)],
    )
    return space


def matmul(a: Any, b: Any, point: Mapping[str, Any], out: Any = None) -> Any:
    """``a @ b`` (2-D, fp16, CUDA) with the Triton kernel tiled as ``point``."""
    import torch

    kernel = _kernel()
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {tuple(a.shape)} @ {tuple(b.shape)}")
    c = out if out is not None else torch.empty((M, N), device=a.device, dtype=torch.float16)
    bm, bn = int(point["BLOCK_M"]), int(point["BLOCK_N"])
    grid = (((M + bm - 1) // bm) * ((N + bn - 1) // bn),)
    kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                 c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=int(point["BLOCK_K"]),
                 GROUP_M=int(point["GROUP_M"]), num_warps=int(point["num_warps"]),
                 num_stages=int(point["num_stages"]))
    return c


def gemm_kernel(M: int, N: int, K: int, point: Mapping[str, Any], seed: int = 0) -> Any:
    """Compile the tiling (a ``ValueError`` when it cannot run, e.g. out of shared memory)
    and return a closure running ``C = A @ B`` once on preallocated operands."""
    import torch

    _require()
    missing = [k for k in KEYS if k not in point]
    if missing:
        raise ValueError(f"tiling point lacks {missing}")
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn((M, K), device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn((K, N), device="cuda", dtype=torch.float16, generator=g)
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    try:
        matmul(a, b, point, c)
        torch.cuda.synchronize()
    except Exception as e:  # triton.runtime.errors.OutOfResources and compile errors
        raise ValueError(f"tiling {dict(point)} cannot run: {type(e).__name__}: {e}") from None
    return lambda: matmul(a, b, point, c)


@functools.lru_cache(maxsize=1)
def _autotuned() -> Any:
    import triton

    configs = [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": g},
                             num_stages=s, num_warps=w) for m, n, k, g, s, w in DEFAULT_AUTOTUNE_CONFIGS]
    return triton.autotune(configs=configs, key=["M", "N", "K"])(_kernel())


def autotuned_latency_s(M: int, N: int, K: int, **measure_kw: Any) -> float:
    """Median seconds of ``triton.autotune`` over the default configs (tuned on the first
    call, then timed like every other kernel)."""
    import torch
    import triton

    from evaluators.kernels.measure import measure

    _require()
    kern = _autotuned()
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, N), device="cuda", dtype=torch.float16)
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)

    def grid(meta: Mapping[str, Any]) -> tuple[int]:
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    def run() -> None:
        kern[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                   c.stride(0), c.stride(1))

    return measure(run, device="cuda", energy=False, **measure_kw).median_s
