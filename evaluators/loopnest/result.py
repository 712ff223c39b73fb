"""The loop-nest model's result record and the helpers that cut batches and join
results.

Scope: :class:`LoopNestResult` (what both paths return), :func:`batch_rows` (rows of a
:class:`~mappers.mapping.MappingBatch` as views) and :func:`concat_results`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mappers.mapping import MappingBatch

__all__ = ["LoopNestResult", "batch_rows", "concat_results"]


@dataclass
class LoopNestResult:
    """Per-mapping results (arrays of length ``B`` unless noted).

    ``reads`` / ``writes``: ``(B, L, 3)`` words per level and operand (W, I, O), over all
    instances. ``noc_words``: ``(B, L)`` words delivered across each level's fanout.
    ``bandwidth_cycles``: ``(B, L)``. ``level_energy_pj``: ``(B, L)`` dynamic (access and
    NoC) energy per level. ``leakage_energy_pj``: ``(B, L)`` static energy per level
    (``leakage_pj_per_cycle x instances x latency_cycles``), part of ``energy_pj``.
    ``read_vectors`` / ``write_vectors``: ``(B, L, 3)`` vector accesses, where some level
    has ``vector_words > 1`` (else ``None``: every access is one word).
    ``bandwidth_parts``: ``(B, 3, L)``, where some level has a read or write bandwidth of
    its own (else ``None``): per level the cycles of its reads + writes over its
    bandwidth, of its reads over its read bandwidth and of its writes over its write
    bandwidth (0 where unlimited; :mod:`evaluators.loopnest.bandwidth`), each a sum of
    counts; ``bandwidth_cycles`` is their maximum per level.
    """

    energy_pj: Any
    latency_cycles: Any
    compute_cycles: Any
    edp: Any                          # pJ * cycles
    utilization: Any
    macs_executed: Any
    valid: Any
    reads: Any
    writes: Any
    noc_words: Any
    bandwidth_cycles: Any
    level_energy_pj: Any
    mac_energy_pj: Any
    tile_words: Any                   # (B, L, 3) per-instance tile words
    leakage_energy_pj: Any = None     # (B, L); always set by the evaluators
    read_vectors: Any = None          # (B, L, 3) vector accesses, where a level has vector_words > 1
    write_vectors: Any = None
    bandwidth_parts: Any = None       # (B, 3, L), where a level has a read or write bandwidth
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self, i: int) -> dict[str, Any]:
        """Scalar metrics of mapping ``i`` (for evaluators returning dicts)."""
        return {
            "energy_pj": float(self.energy_pj[i]),
            "latency_cycles": float(self.latency_cycles[i]),
            "compute_cycles": float(self.compute_cycles[i]),
            "edp": float(self.edp[i]),
            "utilization": float(self.utilization[i]),
        }



def batch_rows(batch: MappingBatch, i: int, j: int) -> MappingBatch:
    """Rows ``i:j`` of a batch as views (no copy)."""
    return MappingBatch(batch.dims, batch.temporal[i:j], batch.spatial_x[i:j], batch.spatial_y[i:j],
                        batch.order[i:j], batch.keep[i:j])


def concat_results(parts: list[LoopNestResult]) -> LoopNestResult:
    """The results of consecutive row blocks as one."""
    names = [f for f in LoopNestResult.__dataclass_fields__ if f != "extra"]
    return LoopNestResult(**{n: None if getattr(parts[0], n) is None
                             else np.concatenate([np.asarray(getattr(p, n)) for p in parts]) for n in names})


