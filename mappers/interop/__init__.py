"""Workloads and mappings in other tools' formats: translators between their specs and
coexplore's :class:`~mappers.workloads.Layer` and :class:`~mappers.mapping.Mapping`.

One module per tool, beside its architecture half in :mod:`accelerators.interop`. Each
translates plain parsed data (dicts from YAML or JSON, never code) and refuses what it
cannot express with a ``ValueError`` naming the part.

* :mod:`mappers.interop.zigzag` -- ZigZag 3.9.1's workload, spatial and temporal mapping
  schemas, and an RF -> GLB -> DRAM ArchSpec with a mapping's bypass as a ZigZag
  accelerator.
* :mod:`mappers.interop.accelforge` -- AccelForge workloads (one einsum) as Layers.
* :mod:`mappers.interop.timeloop` -- Timeloop v0.4 problems and mappings (read and
  written), and the figures of its ``stats.txt``.
"""

from mappers.interop.zigzag import (
    DIM,
    layers_from_zigzag,
    spatial_from_zigzag,
    zigzag_accelerator,
    zigzag_spatial,
    zigzag_temporal,
    zigzag_workload,
)

__all__ = [
    "DIM",
    "layers_from_zigzag",
    "spatial_from_zigzag",
    "zigzag_accelerator",
    "zigzag_spatial",
    "zigzag_temporal",
    "zigzag_workload",
]
