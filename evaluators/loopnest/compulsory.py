"""Compulsory-traffic lower bounds on a whole layer: figures no mapping of it can beat
under the loop-nest model (used to check the model, and as the Shi 2020 reproduction's
bound column).

Scope: bounds that depend on the layer and the architecture alone, not on a partial
mapping (those are :mod:`evaluators.loopnest.bounds`, the exact mapper's).

* **Energy**: every MAC of the layer is executed once (``macs x E_mac``), every word of
  ``W`` and ``I`` that some MAC touches is read from the backing store at least once,
  and every output word is written there at least once (compulsory traffic, perfect
  reuse, no on-chip energy).
* **Latency**: all PEs busy every cycle (``ceil(macs / PEs)``), and the compulsory
  backing-store traffic at its bandwidth: reads (``W`` and ``I``) and writes (``O``)
  together over its shared bandwidth, and apart over its read and write bandwidths.
* **EDP**: their product.

"Touched" words are distinct elements, not bounding boxes: a 1x1 convolution with
stride 2 touches only every other input row (:func:`touched_words`).
"""

from __future__ import annotations

import math

import numpy as np

from accelerators.arch import ArchSpec
from evaluators.loopnest.counts import distinct_two_aps
from mappers.workloads import Layer

__all__ = ["edp_lower_bound", "energy_lower_bound_pj", "latency_lower_bound_cycles", "touched_words"]


def touched_words(layer: Layer, operand: str) -> int:
    """Distinct elements of ``operand`` that the layer's MACs touch."""
    out = 1
    for axis in layer.tensor(operand).axes:
        if len(axis) == 1:
            out *= layer.dims[axis[0][0]]
        elif len(axis) == 2:
            (d1, c1), (d2, c2) = axis
            if c1 or c2:
                out *= int(distinct_two_aps(np, c1, layer.dims[d1], c2, layer.dims[d2], True))
        else:  # pragma: no cover - no layer has this
            raise NotImplementedError("more than two dimensions on one axis")
    return out


def energy_lower_bound_pj(layer: Layer, arch: ArchSpec) -> float:
    dram = arch.levels[-1]
    e = layer.macs * arch.mac_energy_pj
    e += touched_words(layer, "W") * dram.read_energy_pj["W"]
    e += touched_words(layer, "I") * dram.read_energy_pj["I"]
    e += touched_words(layer, "O") * dram.write_energy_pj["O"]
    return e


def latency_lower_bound_cycles(layer: Layer, arch: ArchSpec) -> float:
    compute = math.ceil(layer.macs / arch.n_macs)
    dram = arch.levels[-1]
    reads = touched_words(layer, "W") + touched_words(layer, "I")
    writes = touched_words(layer, "O")
    cycles = [float(compute)]
    for words, limit in ((reads + writes, dram.bandwidth_words_per_cycle),
                         (reads, dram.read_bandwidth_words_per_cycle),
                         (writes, dram.write_bandwidth_words_per_cycle)):
        if limit:
            cycles.append(words / limit)
    return float(max(cycles))


def edp_lower_bound(layer: Layer, arch: ArchSpec) -> float:
    return energy_lower_bound_pj(layer, arch) * latency_lower_bound_cycles(layer, arch)
