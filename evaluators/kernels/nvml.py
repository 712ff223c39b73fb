"""Energy of a CUDA kernel from NVML's total-energy counter (``nvidia-ml-py``, the ``gpu``
extra; imported lazily, every function degrades to "unavailable" without it).

Method (:func:`energy_per_call_j`):

1. **Idle power.** With the device synchronized and no work queued, sample
   ``nvmlDeviceGetPowerUsage`` (mW) every ``idle_s / 10`` for ``idle_s`` seconds; the
   median is the idle power ``P_idle``.
2. **Timed loop.** Read ``nvmlDeviceGetTotalEnergyConsumption`` (mJ since the driver
   loaded; Volta and newer), run the kernel ``n`` times, synchronize, read it again.
   ``n`` is chosen by the caller so the loop lasts at least ~0.5 s: the counter advances
   at the driver's power-sampling rate (tens of ms), so shorter loops quantize badly.
3. **Per call.** ``E_kernel = (E_after - E_before - P_idle x t_loop) / n``: the energy
   the kernel adds over an idle GPU (dynamic energy). The total (idle included) is
   ``energy_per_call_j(..., subtract_idle=False)``.

The counter is board-level: other processes on the same GPU add to it.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from typing import Any


@functools.lru_cache(maxsize=1)
def _nvml() -> Any:
    import pynvml  # nvidia-ml-py

    pynvml.nvmlInit()
    return pynvml


def available() -> bool:
    try:
        _nvml()
        return True
    except Exception:
        return False


def driver_version() -> str | None:
    if not available():
        return None
    v = _nvml().nvmlSystemGetDriverVersion()
    return v.decode() if isinstance(v, bytes) else str(v)


def _handle(index: int | None = None) -> Any:
    import torch

    nv = _nvml()
    return nv.nvmlDeviceGetHandleByIndex(torch.cuda.current_device() if index is None else index)


def idle_power_w(idle_s: float = 0.5, index: int | None = None) -> float:
    """Median board power (W) over ``idle_s`` seconds with the device idle."""
    import torch

    torch.cuda.synchronize()
    nv, h = _nvml(), _handle(index)
    samples = []
    for _ in range(10):
        samples.append(nv.nvmlDeviceGetPowerUsage(h) / 1000.0)
        time.sleep(idle_s / 10)
    return float(statistics.median(samples))


def energy_per_call_j(call: Callable[[], None], n: int, *, subtract_idle: bool = True,
                      idle_w: float | None = None, index: int | None = None) -> float:
    """Joules per call of ``call`` over ``n`` calls (module docstring)."""
    import torch

    nv, h = _nvml(), _handle(index)
    p_idle = (idle_w if idle_w is not None else idle_power_w(index=index)) if subtract_idle else 0.0
    torch.cuda.synchronize()
    e0 = nv.nvmlDeviceGetTotalEnergyConsumption(h)
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    torch.cuda.synchronize()
    t = time.perf_counter() - t0
    e1 = nv.nvmlDeviceGetTotalEnergyConsumption(h)
    return ((e1 - e0) * 1e-3 - p_idle * t) / n
