"""Measure a real tensor kernel: wall time (median and IQR of repeats), energy where the
platform exposes a counter, and the environment it ran in.

How a kernel is timed (:func:`measure`):

1. ``warmup`` untimed calls (allocator, oneDNN/cuBLAS plan selection, Triton JIT).
2. ``torch.utils.benchmark.Timer.adaptive_autorange``: the kernel runs in blocks of
   ``number_per_run`` calls, each block timed once; blocks are added until the IQR of the
   per-call times is below ``rel_iqr_target`` of the median, or ``max_time_s`` is spent
   (then the spread is just reported). On CUDA the statement ends with
   ``torch.cuda.synchronize()`` so every block waits for the device.
3. The figures are the **median** per-call time and its **IQR**, over
   ``len(times)`` blocks; ``noise_rel = iqr / median``. On a loaded machine the median is
   the robust figure; the IQR says how much to trust it.

Energy (:func:`measure`, ``energy=True``) is read around a separate timed loop of at
least ``energy_min_s`` seconds:

* **CPU**: Intel RAPL through ``/sys/class/powercap/intel-rapl:*/energy_uj`` (package
  domains, counter wrap handled with ``max_energy_range_uj``) when readable. The
  figure is whole-package energy over the loop divided by the calls: it includes idle
  and other processes' power (RAPL has no per-process view), so it is an upper bound on
  a loaded machine. Without a readable counter the result says
  ``energy_method="unavailable"`` and ``energy_j=None``: time only.
* **CUDA**: NVML's total-energy counter minus idle power (:mod:`evaluators.kernels.nvml`).

:func:`layer_kernel` turns a :class:`~mappers.workloads.Layer` into a torch closure:
``conv``/``depthwise`` -> ``torch.nn.functional.conv2d`` (unpadded input of the size the
windows read, the layer's stride, dilation and groups), ``gemm`` -> ``torch.matmul``
(linear layers and the projection GEMMs), ``bmm`` -> ``torch.bmm`` (attention ``QK^T``
and ``AV``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import platform
import socket
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from mappers.workloads import Layer

RAPL_GLOB = "/sys/class/powercap/intel-rapl:*"


def cuda_available() -> bool:
    """Whether torch sees a CUDA device (False on CPU-only builds)."""
    import torch

    return bool(torch.cuda.is_available())


def require_device(device: str) -> None:
    """Raise a clear ``RuntimeError`` when ``device`` cannot run here."""
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if device == "cuda" and not cuda_available():
        import torch

        raise RuntimeError(
            f"--device cuda: no CUDA device visible to torch {torch.__version__} "
            f"(torch.version.cuda={torch.version.cuda}); install a CUDA build of torch and "
            "the gpu extra (pip install -e '.[gpu]') on a machine with an NVIDIA GPU")


def cpu_model_name() -> str:
    """The CPU's marketing name from ``/proc/cpuinfo`` (``platform.processor()`` else)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(device: str = "cpu", threads: int | None = None) -> dict[str, Any]:
    """What a measurement depends on: device name, driver, torch version, threads, host."""
    import torch

    env: dict[str, Any] = {
        "device": device,
        "torch": torch.__version__,
        "threads": int(threads if threads is not None else torch.get_num_threads()),
        "cpu": cpu_model_name(),
        "cpu_count": os.cpu_count(),
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "load_avg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "rapl": rapl_readable(),
    }
    if device == "cuda":
        env["device_name"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda
        from evaluators.kernels import nvml

        env["driver"] = nvml.driver_version()
    else:
        env["device_name"] = env["cpu"]
    return env


# --------------------------------------------------------------------------- RAPL


def _rapl_domains() -> list[str]:
    """Package-level RAPL domains (``intel-rapl:0``, not the ``:0:0`` sub-domains)."""
    return sorted(d for d in glob.glob(RAPL_GLOB) if d.count(":") == 1)


def rapl_readable() -> bool:
    doms = _rapl_domains()
    return bool(doms) and all(os.access(os.path.join(d, "energy_uj"), os.R_OK) for d in doms)


def _rapl_read() -> list[tuple[int, int]]:
    out = []
    for d in _rapl_domains():
        with open(os.path.join(d, "energy_uj")) as f:
            e = int(f.read())
        try:
            with open(os.path.join(d, "max_energy_range_uj")) as f:
                mx = int(f.read())
        except OSError:
            mx = 2**32
        out.append((e, mx))
    return out


def rapl_delta_j(before: list[tuple[int, int]], after: list[tuple[int, int]]) -> float:
    """Joules between two RAPL readings, summed over packages, wrap-around handled."""
    total = 0
    for (e0, mx), (e1, _) in zip(before, after, strict=True):
        total += e1 - e0 if e1 >= e0 else e1 + mx - e0
    return total * 1e-6


# --------------------------------------------------------------------------- timing


@dataclass(frozen=True)
class Measurement:
    """One kernel's measurement (times in seconds per call, energy in joules per call).

    ``energy_method`` is ``"rapl"``, ``"nvml"`` or ``"unavailable"`` (then ``energy_j``
    is ``None``: time only).
    """

    median_s: float
    iqr_s: float
    n_blocks: int
    calls_per_block: int
    times_s: tuple[float, ...]
    energy_j: float | None
    energy_method: str
    env: dict[str, Any] = field(default_factory=dict)

    @property
    def best_s(self) -> float:
        """The fastest block's per-call time: on a loaded machine interference only adds
        time, so this is the least disturbed figure (the median stays the default)."""
        return min(self.times_s) if self.times_s else self.median_s

    @property
    def noise_rel(self) -> float:
        return self.iqr_s / self.median_s if self.median_s > 0 else float("inf")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["times_s"] = list(self.times_s)
        d["noise_rel"] = self.noise_rel
        d["best_s"] = self.best_s
        return d


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` intra-op torch threads, restoring the previous setting."""
    import torch

    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def measure(fn: Callable[[], Any], *, device: str = "cpu", threads: int | None = None,
            warmup: int = 2, min_time_s: float = 0.05, max_time_s: float = 1.0,
            rel_iqr_target: float = 0.05, energy: bool = True,
            energy_min_s: float = 0.5) -> Measurement:
    """Time ``fn()`` (see module docstring) and, when a counter exists, its energy."""
    import torch
    from torch.utils.benchmark import Timer

    require_device(device)
    sync: Callable[[], None] = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def call() -> None:
        fn()
        sync()

    with torch_threads(threads):
        for _ in range(max(warmup, 0)):
            call()
        timer = Timer(stmt="call()", globals={"call": call},
                      num_threads=torch.get_num_threads())
        m = timer.adaptive_autorange(threshold=rel_iqr_target, min_run_time=min_time_s,
                                     max_run_time=max_time_s)
        median, iqr = float(m.median), float(m.iqr)
        e_j, method = None, "unavailable"
        if energy:
            e_j, method = _energy_per_call(call, device, median, energy_min_s)
    return Measurement(median, iqr, len(m.times), int(m.number_per_run),
                       tuple(float(t) for t in m.times), e_j, method,
                       environment(device, threads))


def _energy_per_call(call: Callable[[], None], device: str, median_s: float,
                     min_s: float) -> tuple[float | None, str]:
    n = max(1, int(min_s / max(median_s, 1e-9)))
    if device == "cuda":
        from evaluators.kernels import nvml

        if not nvml.available():
            return None, "unavailable"
        return nvml.energy_per_call_j(call, n), "nvml"
    if not rapl_readable():
        return None, "unavailable"
    before = _rapl_read()
    for _ in range(n):
        call()
    return rapl_delta_j(before, _rapl_read()) / n, "rapl"


# --------------------------------------------------------------------------- layers


def conv_input_size(layer: Layer) -> tuple[int, int]:
    """Unpadded input ``H x W`` whose windows give the layer's ``P x Q`` outputs."""
    sh, sw = layer.attrs.get("stride", (1, 1))
    dh, dw = layer.attrs.get("dilation", (1, 1))
    d = layer.dims
    return sh * (d["P"] - 1) + dh * (d["R"] - 1) + 1, sw * (d["Q"] - 1) + dw * (d["S"] - 1) + 1


def layer_kernel(layer: Layer, device: str = "cpu", dtype: Any = None,
                 seed: int = 0) -> Callable[[], Any]:
    """A closure running ``layer`` once as a torch kernel on ``device`` (see module
    docstring); operands are allocated once, outside the closure. ``dtype`` defaults to
    float32 on CPU and float16 on CUDA."""
    import torch
    import torch.nn.functional as F

    require_device(device)
    dt = dtype or (torch.float16 if device == "cuda" else torch.float32)
    g = torch.Generator().manual_seed(seed)

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=torch.float32).to(device=device, dtype=dt)

    d = layer.dims
    if layer.kind in ("conv", "depthwise"):
        groups = d.get("G", 1)
        h, w = conv_input_size(layer)
        x = rand(d["N"], d["C"] * groups, h, w)
        wt = rand(d["K"] * groups, d["C"], d["R"], d["S"])
        stride = tuple(layer.attrs.get("stride", (1, 1)))
        dilation = tuple(layer.attrs.get("dilation", (1, 1)))
        return lambda: F.conv2d(x, wt, stride=stride, dilation=dilation, groups=groups)
    if layer.kind == "gemm":
        a, b = rand(d["M"], d["K"]), rand(d["K"], d["N"])
        return lambda: torch.matmul(a, b)
    if layer.kind == "bmm":
        a, b = rand(d["B"], d["M"], d["K"]), rand(d["B"], d["K"], d["N"])
        return lambda: torch.bmm(a, b)
    raise ValueError(f"layer {layer.name!r}: no torch kernel for kind {layer.kind!r}")


def measure_layer(layer: Layer, device: str = "cpu", threads: int | None = None,
                  **kw: Any) -> Measurement:
    """:func:`measure` of :func:`layer_kernel`."""
    return measure(layer_kernel(layer, device), device=device, threads=threads, **kw)
