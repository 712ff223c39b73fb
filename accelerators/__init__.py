"""Parameterized accelerator models (the hardware half of a co-design point).

One frozen dataclass per accelerator kind, each built from a design point, validated on
construction with errors that name the parameter, and costed with constants that carry
their sources (:mod:`accelerators.tech`). What every model provides is the protocol of
:mod:`accelerators.base`.

Data flow: design_space -> **accelerators** -> mappers -> evaluators -> experiments.
Nothing here imports a mapper, an evaluator, an optimizer or the study layer.

Modules:

* :mod:`accelerators.base`: the :class:`Accelerator` / :class:`AreaModel` /
  :class:`LoopNestAccelerator` protocols, :class:`InvalidParameter` and the shared
  parameter checks.
* :mod:`accelerators.arch`: :class:`ArchSpec` / :class:`MemoryLevel`, the lowered form the
  loop-nest cost model consumes.
* :mod:`accelerators.tech`: 45 nm energy/area constants and formulas (Horowitz ISSCC 2014)
  and the Eyeriss normalized energy table, as :class:`~accelerators.tech.TechModel` s.
* :mod:`accelerators.systolic`: :class:`SystolicArray` (PE -> SRAM -> DRAM).
* :mod:`accelerators.spatial`: :class:`SpatialArray`, Eyeriss-like (RF -> GLB -> DRAM).
* :mod:`accelerators.intrinsic`: HASCO's tensor-intrinsic arrays (REG -> ACC -> SP -> DRAM).
* :mod:`accelerators.reference`: published designs, :func:`eyeriss_v1`, :func:`tpu_v1_like`,
  and Eyeriss's published AlexNet parameters (JSSC 2017 Table III).
* :mod:`accelerators.gpu`: NVIDIA GPUs from their datasheets.
* :mod:`accelerators.ppr_fpga`: MeLoPPR's FPGA PPR engine (resources, latency).
* :mod:`accelerators.diffractive`: multi-task diffractive optical layers, and
  :mod:`accelerators.diffraction_limits`, where a propagator is valid for a geometry.
* :mod:`accelerators.spaces`: the hardware design spaces of the published co-design flows
  (Shi et al. 2020, HASCO, MeLoPPR), each over one of the models above.
* :mod:`accelerators.registry`: models by name (``"systolic"``), extensible by plugins;
  :mod:`accelerators.testing`: the conformance suite every registered model passes.
* ``interop/``: other tools' architecture specs as ArchSpecs (:mod:`accelerators.interop.zigzag`).
"""

from accelerators import tech
from accelerators.arch import OPERANDS, SYSTOLIC_DATAFLOWS, ArchSpec, MemoryLevel
from accelerators.base import (
    Accelerator,
    AreaModel,
    InvalidParameter,
    LoopNestAccelerator,
)
from accelerators.gpu import GPUAccelerator
from accelerators.reference import eyeriss_v1, tpu_v1_like
from accelerators.registry import ACCELERATORS, resolve_accelerator
from accelerators.spatial import SpatialArray
from accelerators.systolic import SystolicArray
from accelerators.tech import EYERISS_NORMALIZED, HOROWITZ_45NM, TechModel

__all__ = [
    "ACCELERATORS",
    "EYERISS_NORMALIZED",
    "HOROWITZ_45NM",
    "OPERANDS",
    "SYSTOLIC_DATAFLOWS",
    "Accelerator",
    "ArchSpec",
    "AreaModel",
    "GPUAccelerator",
    "InvalidParameter",
    "LoopNestAccelerator",
    "MemoryLevel",
    "SpatialArray",
    "SystolicArray",
    "TechModel",
    "eyeriss_v1",
    "resolve_accelerator",
    "tech",
    "tpu_v1_like",
]
