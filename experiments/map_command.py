"""``coexplore map ARCH.yaml PROBLEM.yaml``: the mapping of one layer on one architecture
proven optimal over the divisor tilings (every factor divides its dimension; padded edge
tiles are not searched) under the chosen accounting, with bypass choices and no mapping
constraints, from other tools' files, printed and written as Timeloop mapping YAML. The
``scope:`` line it prints is the result's :class:`~mappers.base.ProofScope`.

ARCH is a coexplore architecture spec (:mod:`accelerators.spec`), a Timeloop/Accelergy
v0.4 architecture (its ``architecture:`` tree; the ERT is needed for energies, the ART
for areas: ``--ert``, ``--art``), an AccelForge architecture (``arch:``) or a ZigZag 3.x
accelerator (a ``hardware/*.yaml`` with ``operational_array``). PROBLEM is a Timeloop
v0.4 problem (``problem:``) or an AccelForge workload of one einsum (``workload:``). The exact mapper
(:class:`mappers.exact.ExactMapper`) searches every mapping under the chosen accounting
(:data:`evaluators.loopnest.ACCOUNTING`) and returns the best with a lower bound; where
the mapper cannot bound an accounting it refuses with an error saying so.

A Timeloop spec's mapspace constraints (``constraints:`` of its components) are not
applied: the search covers every legal divisor mapping, so its optimum is at least as good
as the best divisor mapping under the constraints; the command says so when the spec has any.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from accelerators.arch import ArchSpec
from accelerators.interop.accelforge import arch_from_accelforge
from accelerators.interop.timeloop import (
    TimeloopTranslation,
    arch_from_timeloop,
    load_timeloop_yaml,
)
from accelerators.interop.zigzag import arch_from_zigzag
from accelerators.spec import arch_from_dict
from design_space.yamlio import load_yaml_file
from evaluators.loopnest import LoopNestCost
from mappers.base import MappingResult
from mappers.exact import ExactMapper
from mappers.interop.accelforge import layer_from_accelforge
from mappers.interop.timeloop import layer_from_timeloop, mapping_to_timeloop
from mappers.mapping import Mapping
from mappers.mapping_record import loop_nest_lines, mapping_record
from mappers.workloads import Layer

__all__ = ["MapOutcome", "format_loop_nest", "load_design", "map_design"]


@dataclass(frozen=True)
class MapOutcome:
    """What ``coexplore map`` found: the translated design and the exact mapper's result."""

    arch: ArchSpec
    layer: Layer
    translation: TimeloopTranslation
    result: MappingResult
    accounting: str
    objective: str
    constraints_ignored: bool
    seconds: float

    def timeloop_yaml(self) -> str:
        """The mapping as Timeloop mapping YAML (``ValueError`` where it unrolls one
        dimension on both axes of a fanout, which Timeloop's format cannot express)."""
        assert self.result.mapping is not None
        return yaml.safe_dump({"mapping": mapping_to_timeloop(self.result.mapping, self.translation, self.layer)},
                              sort_keys=False)

    def mapping_yaml(self) -> tuple[str, str]:
        """``(format, text)``: Timeloop mapping YAML where it can express the mapping,
        else coexplore's own (per level by name: ``temporal``, ``spatial_x``,
        ``spatial_y`` factors, ``order`` outermost first, ``bypass``), which
        :class:`mappers.mapping.Mapping` fields read directly."""
        try:
            return "timeloop", self.timeloop_yaml()
        except ValueError:
            m = self.result.mapping
            assert m is not None
            levels = [{"level": self.translation.level_names[li], "temporal": dict(m.temporal[li]),
                       "spatial_x": dict(m.spatial_x[li]), "spatial_y": dict(m.spatial_y[li]),
                       "order": list(m.order[li]), "bypass": sorted(m.bypass[li])}
                      for li in range(m.n_levels)]
            return "coexplore", yaml.safe_dump({"coexplore_mapping": levels}, sort_keys=False)


def load_design(arch_path: str | Path, problem_path: str | Path, *, ert: str | Path | None = None,
                art: str | Path | None = None) -> tuple[TimeloopTranslation, Layer]:
    """The architecture (as a Timeloop translation, so the mapping can be written with
    Timeloop's level names) and the layer of two files (module docstring)."""
    prob = load_timeloop_yaml(problem_path)
    bits = None
    if isinstance(prob, dict) and "workload" in prob:
        layer, roles, bits = layer_from_accelforge(prob)
    elif isinstance(prob, dict) and "problem" in prob:
        layer, roles = layer_from_timeloop(prob)
    else:
        raise ValueError(f"{problem_path}: expected a Timeloop v0.4 problem (a 'problem:' mapping) or an AccelForge "
                         "workload (a 'workload:' mapping with one einsum)")
    raw = load_timeloop_yaml(arch_path)
    if isinstance(raw, dict) and "arch" in raw:
        return arch_from_accelforge(raw, roles, bits_per_value=bits or 8), layer
    if isinstance(raw, dict) and "architecture" in raw:
        if ert is None:
            raise ValueError(f"{arch_path} is a Timeloop architecture: its energies come from Accelergy's ERT; "
                             "give it with --ert ERT.yaml")
        tl = arch_from_timeloop(raw, load_timeloop_yaml(ert), load_timeloop_yaml(art) if art else None,
                                roles=roles)
        return tl, layer
    if isinstance(raw, dict) and "operational_array" in raw:
        arch = arch_from_zigzag(raw).arch
    else:
        data, lm = load_yaml_file(arch_path)
        arch = arch_from_dict(data, lm, Path(arch_path).resolve().parent)
    return TimeloopTranslation(arch, tuple(lv.name for lv in arch.levels), roles), layer


def map_design(arch_path: str | Path, problem_path: str | Path, *, accounting: str = "coexplore",
               objective: str = "edp", ert: str | Path | None = None, art: str | Path | None = None,
               time_limit_s: float | None = None) -> MapOutcome:
    """Read the two files and run the exact mapper (module docstring)."""
    tl, layer = load_design(arch_path, problem_path, ert=ert, art=art)
    cost = LoopNestCost(accounting)
    t0 = time.perf_counter()
    result = ExactMapper(time_limit_s=time_limit_s).map(layer, tl.arch, cost, objective)
    return MapOutcome(tl.arch, layer, tl, result, accounting, objective, bool(tl.constraints),
                      time.perf_counter() - t0)


def format_loop_nest(mapping: Mapping, tl: TimeloopTranslation, layer: Layer) -> list[str]:
    """The loop nest, outermost first, one line per loop, under each level's name and the
    words of its tiles (as Timeloop prints a mapping: :func:`mappers.mapping_record.loop_nest_lines`,
    the form a study stores, with the translation's level and data-space names)."""
    rec = mapping_record(mapping, layer, tl.arch)
    for li, lv in enumerate(rec["levels"]):
        lv["name"] = tl.level_names[li]
    return loop_nest_lines(rec, {v: k for k, v in tl.roles.items()})


def summary(outcome: MapOutcome) -> list[str]:
    """The lines ``coexplore map`` prints."""
    r = outcome.result
    bound = "n/a" if r.lower_bound is None else f"{r.lower_bound:.6g}"
    status = "proven optimal" if r.optimal else ("stopped early (best found)" if r.stopped_early else "not proven")
    out = [f"design:      {outcome.arch.name} ({outcome.arch.n_levels} levels, {outcome.arch.n_macs} MACs); "
           f"layer {outcome.layer.name}: " + " ".join(f"{d}={v}" for d, v in outcome.layer.dims.items()),
           f"accounting:  {outcome.accounting}; objective {outcome.objective}",
           f"result:      {status}; {outcome.objective} = {r.objective(outcome.objective):.6g}, "
           f"lower bound {bound}",
           f"             energy {r.energy_pj:.6g} pJ, {r.latency_cycles:.6g} cycles, "
           f"utilization {r.utilization:.3f}",
           f"search:      {outcome.seconds:.2f} s, {r.evaluated} mappings scored"
           + (f", space of {r.space_size}" if r.space_size else "")]
    if r.scope is not None:
        out.insert(4, f"scope:       {'the proof' if r.optimal else 'the lower bound'} covers {r.scope.describe()}")
    if outcome.constraints_ignored:
        out.append("note:        the Timeloop spec's mapspace constraints were not applied (the search covers "
                   "every legal divisor mapping)")
    return out
