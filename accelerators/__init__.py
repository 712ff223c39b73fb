"""Parameterized accelerator models (the hardware half of a co-design point).

One frozen dataclass per accelerator kind (systolic array, Eyeriss-like spatial array,
FPGA PPR engine, diffractive optical stack, GPU), each built from a design point, with
``validate()`` raising named errors, an ``area_mm2`` model, and cost constants taken from
``accelerators/tech.py`` where every constant carries its source.

Data flow: design_space -> **accelerators** + mappers -> evaluators -> optimizer -> experiments.
Nothing here imports an optimizer or the study layer.

Modules:

* :mod:`accelerators.arch`: :class:`ArchSpec` / :class:`MemoryLevel`, the lowered form the
  loop-nest cost model consumes.
* :mod:`accelerators.tech`: 45 nm energy/area constants and formulas (Horowitz ISSCC 2014)
  and the Eyeriss normalized energy table, as :class:`~accelerators.tech.TechModel`\\ s.
* :mod:`accelerators.systolic`: :class:`SystolicArray` (PE -> SRAM -> DRAM).
* :mod:`accelerators.spatial`: :class:`SpatialArray`, Eyeriss-like (RF -> GLB -> DRAM).
* :mod:`accelerators.reference`: :func:`eyeriss_v1`, :func:`tpu_v1_like`.

Each accelerator has ``from_point(point)``, ``validate()``, ``area_mm2`` (and a vectorized
``area_mm2_of(columns)`` for known constraints) and ``to_arch()``.
"""

from accelerators import tech
from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from accelerators.gpu import GPUAccelerator
from accelerators.reference import eyeriss_v1, tpu_v1_like
from accelerators.spatial import SpatialArray
from accelerators.systolic import DATAFLOWS, SystolicArray
from accelerators.tech import EYERISS_NORMALIZED, HOROWITZ_45NM, TechModel

__all__ = [
    "DATAFLOWS",
    "EYERISS_NORMALIZED",
    "HOROWITZ_45NM",
    "OPERANDS",
    "ArchSpec",
    "GPUAccelerator",
    "MemoryLevel",
    "SpatialArray",
    "SystolicArray",
    "TechModel",
    "eyeriss_v1",
    "tech",
    "tpu_v1_like",
]
