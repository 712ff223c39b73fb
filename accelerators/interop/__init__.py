"""Architectures in other tools' formats: translators between their specs and
:class:`~accelerators.arch.ArchSpec`.

One module per tool; each reads (and where it can, writes) that tool's architecture
schema as plain parsed data (dicts from YAML or JSON, never code), with a
``ValueError`` naming the part of the spec it cannot express. The workload and mapping
halves of the same tools' specs are in :mod:`mappers.interop`, one layer up, since a
mapping needs both an architecture and a layer.

* :mod:`accelerators.interop.zigzag` -- ZigZag 3.9.1's accelerator schema
  (``hardware/*.yaml``) to an ArchSpec.
* :mod:`accelerators.interop.timeloop` -- Timeloop/Accelergy v0.4 architectures (the
  ``!Container`` / ``!Component`` tree, with the ERT and ART) to an ArchSpec.
* :mod:`accelerators.interop.accelforge` -- AccelForge architectures (``!Memory``,
  ``!Fanout``, ``!Compute`` nodes with explicit action energies) to an ArchSpec.
* :mod:`accelerators.interop.values` -- the numbers read from those files, checked one
  way for every tool.
"""

from accelerators.interop.timeloop import (
           TimeloopTranslation,
           arch_from_timeloop,
           load_timeloop_yaml,
)
from accelerators.interop.zigzag import MEMORY_OPERAND, OPERAND_OF, Translation, arch_from_zigzag

__all__ = ["MEMORY_OPERAND", "OPERAND_OF", "TimeloopTranslation", "Translation", "arch_from_timeloop",
           "arch_from_zigzag", "load_timeloop_yaml"]
