"""Real tensor kernels that ground the analytical evaluators.

* :mod:`~evaluators.kernels.measure` -- run a layer as a torch kernel (CPU, CUDA) and
  time it (median and IQR of repeats), with energy from RAPL / NVML where readable and
  the environment recorded.
* :mod:`~evaluators.kernels.blocked` -- a CPU blocked matmul whose tiles and loop order
  come from a coexplore mapping point.
* :mod:`~evaluators.kernels.cpu_model` -- an analytical CPU model of those kernels with
  free constants; :mod:`~evaluators.kernels.calibrate` fits them, scores held-out
  shapes and stores versioned calibration files.
* :mod:`~evaluators.kernels.hil` -- hardware-in-the-loop search: a measuring study
  evaluator, and the screen-then-measure multi-fidelity scheme.
* GPU (imported lazily, skipped without CUDA): :mod:`~evaluators.kernels.triton_gemm`
  (a Triton GEMM whose BLOCK_M/N/K, GROUP_M, num_warps, num_stages come from a mapping
  point), :mod:`~evaluators.kernels.nvml` (energy from NVML's counter, idle power
  subtracted) and :mod:`~evaluators.kernels.gpu_model` (latency of a tiling on
  :class:`accelerators.gpu.GPUAccelerator`).

Nothing here is imported by ``evaluators/__init__``; torch is imported inside functions.
"""

__all__: list[str] = []  # a namespace of modules; import them by name
