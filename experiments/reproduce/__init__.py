"""Reproductions of the seed systems, one module each, runnable as
``coexplore reproduce NAME [--quick]``: ``shi2020`` (constrained-BO co-design of neural
accelerators), ``hasco`` (tensor intrinsics, HW/SW partitioning, MOBO + Q-learning),
``meloppr`` (memory-efficient local PPR on CPU and a modelled FPGA engine) and ``d2nn``
(multi-task diffractive networks). Each writes a table (paper value, ours, command), JSON
results and plots under ``runs/reproduce/NAME/``."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["REPRODUCTIONS", "jsonable", "write_atomic"]

REPRODUCTIONS = ("shi2020", "shi2020_sweep", "meloppr", "hasco", "d2nn")


def jsonable(o: Any) -> Any:
    """``o`` with numpy scalars as Python numbers, tuples as lists, keys as strings and
    non-finite floats as ``None`` (strict JSON), recursively: for ``results.json``."""
    if isinstance(o, dict):
        return {str(k): jsonable(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [jsonable(v) for v in o]
    if isinstance(o, np.generic):
        o = o.item()
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a
    rename, so a run killed while writing leaves the old file or the new one, never half a
    file (the reproductions' caches are read back on resume)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)
