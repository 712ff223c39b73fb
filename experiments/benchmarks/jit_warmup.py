"""Compile the exact mapper's numba kernels before a benchmark times anything.

The kernels are compiled on first call and cached on disk (``cache=True``); on a fresh
checkout that first call costs tens of CPU seconds, which a benchmark would otherwise
charge to whichever layer it maps first (measured: 36 of the 37 CPU seconds of a fresh
checkout's first Eyeriss layer). :func:`warm_exact_mapper` maps two small layers, a
convolution (sliding-window operand, two-dimension axes) and a GEMM, on the benchmark's
own architecture under each objective, so every kernel specialisation that the timed
layers call is compiled or loaded; it returns the CPU seconds it took, which the
benchmarks print apart from their figures.
"""

from __future__ import annotations

import time
from typing import Any

from evaluators.loopnest import LOOPNEST
from mappers.exact import ExactMapper
from mappers.workloads import conv2d, gemm

__all__ = ["warm_exact_mapper"]


def warm_exact_mapper(arch: Any, objectives: tuple[str, ...] = ("edp",)) -> float:
    """Map a 3x3 convolution and a small GEMM on ``arch`` with the exact mapper under
    each of ``objectives``; return the CPU seconds spent (compilation or cache loads)."""
    c = time.process_time()
    layers = (conv2d("warmup_conv", N=1, K=4, C=4, P=4, Q=4, R=3, S=3), gemm("warmup_gemm", M=4, N=4, K=8))
    mapper = ExactMapper(time_limit_s=60.0)
    for objective in objectives:
        for layer in layers:
            mapper.map(layer, arch, LOOPNEST, objective)
    return time.process_time() - c
