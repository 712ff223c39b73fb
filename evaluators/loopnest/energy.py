"""Energy from access counts: per-access and NoC energy (whole-vector accesses
included) and leakage.

Scope: the arithmetic that turns counts into picojoules, shared by both paths: the
numpy/jax counts of :func:`evaluators.loopnest.counts.count` and the compiled kernel's
counts where the kernel does not do it itself (:mod:`evaluators.loopnest.dispatch`:
vector accesses and leakage), so the two agree bit for bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from accelerators.arch import ArchSpec

if TYPE_CHECKING:
    from evaluators.loopnest.counts import LayerArch

__all__ = ["access_energy", "add_leakage", "leak_rates_pj_per_cycle"]


def access_energy(xp: Any, st: LayerArch, R: Any, Wr: Any, NOC: Any, inst: Any,
                  macs_exec: Any) -> tuple[Any, Any, Any]:
    """``(level energy (L, B), dynamic energy (B,), vector accesses)`` from the counts
    (batch-last: ``R``, ``Wr`` ``(L, 3, B)``, ``NOC`` and active instances ``inst``
    ``(L, B)``). Where a level moves ``vector_words = V > 1`` words per access, its energies
    are per vector access and an instance's words of an operand over the run, reads and
    writes apart, are packed into whole vectors: ``inst x ceil(words / (inst x V))``
    accesses (Timeloop's rule: per-instance counts averaged over the instances,
    ``NestAnalysis::CollectWorkingSets`` in src/loop-analysis/nest-analysis.cpp, then
    rounded up per action, ``BufferLevel::ComputeVectorAccesses`` in
    src/model/buffer.cpp). ``vectors`` is ``None`` when every level has ``V = 1`` (the
    counts are the accesses). The numpy model and the compiled kernel's results (through
    :func:`evaluators.loopnest.dispatch.evaluate_compiled`) both go through here."""
    vec = st.vector_words
    if len(vec) and (vec > 1).any():
        per = xp.maximum(inst, 1)[:, None, :] * xp.asarray(vec)[:, None, None]   # (L, 1, B) words per vector x inst
        whole = xp.asarray(vec > 1)[:, None, None]
        VR = xp.where(whole, -xp.floor_divide(-R, per) * xp.maximum(inst, 1)[:, None, :], R)
        VW = xp.where(whole, -xp.floor_divide(-Wr, per) * xp.maximum(inst, 1)[:, None, :], Wr)
        vectors = (VR, VW)
    else:
        VR, VW, vectors = R, Wr, None
    e_r = xp.asarray(st.e_read)[:, :, None]
    e_w = xp.asarray(st.e_write)[:, :, None]
    level_energy = xp.sum(VR * e_r + VW * e_w, axis=1) + NOC * xp.asarray(st.e_noc)[:, None]
    energy = xp.sum(level_energy, axis=0) + macs_exec * st.mac_energy
    return level_energy, energy, vectors


def leak_rates_pj_per_cycle(arch: ArchSpec, utilized: bool = False) -> np.ndarray:
    """``(L,)``: each level's static power, ``leakage_pj_per_cycle x instances`` (every
    physical instance leaks for the whole run, used or not: ``Conventions.leakage``
    ``"all_instances"``); with ``utilized`` one instance's, ``leakage_pj_per_cycle``
    (``"utilized_instances"``: :func:`add_leakage` multiplies it by the instances a
    mapping uses)."""
    return np.array([lv.leakage_pj_per_cycle * (1 if utilized else lv.instances) for lv in arch.levels],
                    dtype=float)


def add_leakage(xp: Any, rates_pj_per_cycle: np.ndarray, latency: Any, energy: Any,
                utilized: Any = None) -> tuple[Any, Any]:
    """``(leakage (L, B), energy + its sum over levels)``: level ``l`` leaks
    ``rates_pj_per_cycle[l]`` (:func:`leak_rates_pj_per_cycle`) per cycle of ``latency``
    (``(B,)``), times ``utilized[l]`` (``(L, B)``, the active instances, where only the
    instances a mapping uses leak: ``Conventions.leakage="utilized_instances"``). Both
    paths (numpy and the compiled kernel's results) go through here, so they agree bit
    for bit; without leakage the energy is returned untouched."""
    if utilized is None:
        leak = xp.asarray(rates_pj_per_cycle)[:, None] * latency[None, :]
    else:
        leak = xp.asarray(rates_pj_per_cycle)[:, None] * utilized * latency[None, :]
    if not rates_pj_per_cycle.any():
        return leak, energy
    return leak, energy + xp.sum(leak, axis=0)
