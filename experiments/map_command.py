"""``coexplore map ARCH.yaml PROBLEM.yaml``: the mapping of one layer on one architecture
proven optimal over the divisor tilings (every factor divides its dimension; padded edge
tiles are not searched) under the chosen accounting, with bypass choices and, for a
Timeloop spec, within its mapspace constraints, from other tools' files, printed and
written as Timeloop mapping YAML. The ``scope:`` line it prints is the result's
:class:`~mappers.base.ProofScope`, constraints included.

ARCH is a coexplore architecture spec (:mod:`accelerators.spec`), a Timeloop/Accelergy
v0.4 architecture (its ``architecture:`` tree, or the processed
``parsed-processed-input.yaml``; the ERT is needed for energies, the ART for areas:
``--ert``, ``--art``), an AccelForge architecture (``arch:``) or a ZigZag 3.x accelerator
(a ``hardware/*.yaml`` with ``operational_array``). PROBLEM is a Timeloop v0.4 problem
(``problem:``) or an AccelForge workload of one einsum (``workload:``). The exact mapper
(:class:`mappers.exact.ExactMapper`) searches every mapping under the chosen accounting
(:data:`evaluators.loopnest.ACCOUNTING`) and returns the best with a lower bound; where
the mapper cannot bound an accounting it refuses with an error saying so.

**Constraints.** A Timeloop spec's mapspace constraints (``constraints:`` of its
components, or the processed form's ``architecture_constraints:``) are applied by
default, read by :func:`mappers.interop.timeloop.constraints_from_timeloop` as the
exercises' validation applies them (:mod:`experiments.validation.timeloop_exercises`):
factors, spatial axes and bypass restrict the search; loop-order constraints are relaxed
(the search covers every order, a larger space), and the command prints the levels
where that relaxation could matter, with Timeloop's own warnings (a factor above its
dimension, ignored). The result is then the best divisor mapping within them, and the
``scope:`` line names them. A constraint that cannot be expressed is an error naming it;
``no_constraints`` (``--no-constraints``) searches every legal divisor mapping instead,
and the command says the spec's constraints were not applied. AccelForge, ZigZag and
coexplore specs carry no mapspace constraints. A separate constraints file
(``constraints_file``, ``--constraints FILE``: Timeloop's target form, a list of targets or
``{mapspace_constraints: {targets: [...]}}`` and the like, :func:`read_constraints_file`)
adds its targets, named by the design's level names, for any of the architecture forms;
with ``--no-constraints`` only the file's apply. The ``scope:`` line names whose they are.

**Keys the model does not use.** The Timeloop, AccelForge and ZigZag importers refuse every
key they cannot express, and also those whose information coexplore's model does not use
(a Timeloop component's ``allow_overbooking: true`` or ``network_fill_latency``, an ERT
``wire`` energy, a ZigZag memory's ``latency``, an AccelForge action's non-zero
``latency``, ...: each importer's ``IGNORABLE``). ``ignore`` (``--ignore KEY``,
repeatable) names the ones the caller accepts dropping (for a Timeloop architecture, from
its tree, ERT and ART alike); the command then prints each dropped key with its value.

**A mapping of one's own** (``mapping``, ``--mapping FILE``): Timeloop mapping YAML (a
``mapping:`` list of directives), coexplore's own form (``coexplore_mapping:``, what the
command writes where Timeloop's format cannot express the result), an AccelForge mapping
of one einsum (``mapping: {nodes: [...]}``, with an AccelForge architecture) or a ZigZag
allocated temporal mapping (``temporal_mapping: {W: ..., I: ..., O: ...}``, per operand
the loops of each of its memory levels, innermost first, with the mapping file's
``spatial_mapping: {D1: ["K, 4"], ...}``, on a ZigZag accelerator) is read by the
importers of :mod:`mappers.interop`, checked against the design (every factorization,
fanout and capacity: :meth:`mappers.mapping.Mapping.violations`, then the cost model's own
validity under the accounting), an error naming the file and what does not fit where it
is illegal; scored under the accounting; printed beside the result with its objective
over the result's; and offered to the exact mapper as a warm start
(``ExactMapper.map(..., incumbents=[mapping])``), which uses it only where it lies in the
searched space (a divisor tiling within the constraints). A search that completes returns
the same mapping with or without it; one stopped by ``--time-limit`` returns at worst the
given mapping (when it lies in the space).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from accelerators.arch import OPERANDS, ArchSpec
from accelerators.interop.accelforge import arch_from_accelforge
from accelerators.interop.timeloop import (
    TimeloopTranslation,
    arch_from_timeloop,
    load_timeloop_yaml,
)
from accelerators.interop.zigzag import Translation as ZigZagTranslation
from accelerators.interop.zigzag import arch_from_zigzag
from accelerators.spec import arch_from_dict
from design_space.yamlio import load_yaml_file
from evaluators.loopnest import LoopNestCost
from mappers.base import MappingResult, result_of
from mappers.constraints import KINDS, LevelConstraints, MappingConstraints, satisfies
from mappers.exact import ExactMapper
from mappers.interop.accelforge import layer_from_accelforge, mapping_from_accelforge
from mappers.interop.timeloop import (
    TimeloopConstraints,
    constraints_from_timeloop,
    layer_from_timeloop,
    mapping_from_timeloop,
    mapping_to_timeloop,
)
from mappers.interop.zigzag import mapping_from_zigzag, spatial_from_zigzag
from mappers.mapping import Mapping, MappingBatch
from mappers.mapping_record import loop_nest_lines, mapping_record
from mappers.workloads import Layer

__all__ = ["MapOutcome", "UserMapping", "format_loop_nest", "load_design", "map_design"]

#: the forms a ``--mapping`` file may take, in words
MAPPING_FORMS = {"timeloop": "Timeloop mapping YAML", "coexplore": "coexplore's mapping form",
                 "accelforge": "an AccelForge mapping", "zigzag": "a ZigZag temporal mapping"}


@dataclass(frozen=True)
class UserMapping:
    """A mapping given with ``--mapping``: the file, its form (:data:`MAPPING_FORMS`),
    the mapping, its figures under the command's accounting, and why it lies outside the
    exact mapper's space (``None``: inside, so it was a warm-start candidate)."""

    path: Path
    form: str
    mapping: Mapping
    result: MappingResult
    outside: str | None


@dataclass(frozen=True)
class MapOutcome:
    """What ``coexplore map`` found: the translated design and the exact mapper's result.

    ``constraints``: the mapspace constraints the search applied (``None``: none applied),
    the Timeloop spec's where ``spec_constraints`` and those of ``constraints_file`` where
    given; ``constraints_ignored``: the spec has constraints and they were not applied
    (``--no-constraints``); ``user``: the ``--mapping`` given."""

    arch: ArchSpec
    layer: Layer
    translation: TimeloopTranslation
    result: MappingResult
    accounting: str
    objective: str
    constraints_ignored: bool
    seconds: float
    constraints: TimeloopConstraints | None = None
    user: UserMapping | None = None
    spec_constraints: bool = False
    constraints_file: Path | None = None
    dropped: tuple[str, ...] = ()

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
        :class:`mappers.mapping.Mapping` fields read directly (and ``--mapping`` reads
        back)."""
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


@dataclass(frozen=True)
class _Design:
    """The two files as read: the translation, the layer, the architecture's kind
    (``timeloop``, ``accelforge``, ``zigzag``, ``coexplore``), its parsed file (an
    AccelForge mapping's spatial loops need it) and a ZigZag accelerator's translation."""

    tl: TimeloopTranslation
    layer: Layer
    kind: str
    raw: Any = None
    zigzag: ZigZagTranslation | None = None

    @property
    def dropped(self) -> tuple[str, ...]:
        """What ``ignore`` dropped from the architecture file."""
        return self.zigzag.dropped if self.zigzag is not None else self.tl.dropped


def _load(arch_path: str | Path, problem_path: str | Path, *, ert: str | Path | None = None,
          art: str | Path | None = None, ignore: tuple[str, ...] = ()) -> _Design:
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
    kind = ("accelforge" if isinstance(raw, dict) and "arch" in raw else "zigzag"
            if isinstance(raw, dict) and "operational_array" in raw else "timeloop"
            if isinstance(raw, dict) and "architecture" in raw else None)
    if ignore and kind is None:
        raise ValueError(f"{arch_path}: --ignore applies to Timeloop, AccelForge and ZigZag architectures; this is "
                         "none of them (a coexplore spec has no key to drop)")
    if kind == "accelforge":
        try:
            tr = arch_from_accelforge(raw, roles, bits_per_value=bits or 8, ignore=ignore)
        except ValueError as e:
            raise ValueError(f"{arch_path}: {e}") from None
        return _Design(tr, layer, "accelforge", raw)
    if kind == "timeloop":
        if ert is None:
            raise ValueError(f"{arch_path} is a Timeloop architecture: its energies come from Accelergy's ERT; "
                             "give it with --ert ERT.yaml")
        tl = arch_from_timeloop(raw, load_timeloop_yaml(ert), load_timeloop_yaml(art) if art else None,
                                roles=roles, ignore=ignore)
        return _Design(tl, layer, "timeloop", raw)
    zz = None
    if kind == "zigzag":
        data, lines = load_yaml_file(arch_path)      # errors name the file and line
        zz = arch_from_zigzag(data, ignore=ignore, lines=lines)
        arch = zz.arch
    else:
        data, lm = load_yaml_file(arch_path)
        arch, kind = arch_from_dict(data, lm, Path(arch_path).resolve().parent), "coexplore"
    return _Design(TimeloopTranslation(arch, tuple(lv.name for lv in arch.levels), roles), layer, kind, raw, zz)


def load_design(arch_path: str | Path, problem_path: str | Path, *, ert: str | Path | None = None,
                art: str | Path | None = None, ignore: tuple[str, ...] = ()) -> tuple[TimeloopTranslation, Layer]:
    """The architecture (as a Timeloop translation, so the mapping can be written with
    Timeloop's level names) and the layer of two files (module docstring)."""
    d = _load(arch_path, problem_path, ert=ert, art=art, ignore=ignore)
    return d.tl, d.layer


def _level_words(lc: LevelConstraints, tl: TimeloopTranslation, layer: Layer) -> str:
    """What one level's constraints allow, in words (``""`` where they restrict nothing)."""
    parts = []
    for kind, what in zip(KINDS, ("temporal loops", "X unrolling", "Y unrolling"), strict=True):
        allowed = getattr(lc, kind)
        fixed = lc.factors(kind)
        if allowed is not None:
            dims = [d for d in layer.dims if d in allowed and layer.dims[d] > 1]
            parts.append(f"{what} over {' '.join(dims) if dims else 'no dimension'}")
        if fixed:
            parts.append(f"{kind} factors " + " ".join(f"{d}={f}" for d, f in fixed.items()))
        caps = lc.caps(kind)
        if caps:
            parts.append(f"{kind} factors at most " + " ".join(f"{d}={f}" for d, f in caps.items()))
    if lc.keep is not None and tl.arch.levels[_index(lc.level, tl)].tensors:
        parts.append("keeps " + (" ".join(op for op in OPERANDS if op in lc.keep) or "nothing"))
    return ", ".join(parts)


def _restricted(tc: TimeloopConstraints, tl: TimeloopTranslation, layer: Layer) -> list[tuple[str, str]]:
    """``(level name, its constraints in words)`` of each level the constraints restrict."""
    out = [(tl.level_names[_index(lc.level, tl)], _level_words(lc, tl, layer)) for lc in tc.constraints.levels]
    return [(name, words) for name, words in out if words]


_FILE_KEYS = ("targets", "mapspace_constraints", "architecture_constraints", "constraints")


def read_constraints_file(path: str | Path) -> list[dict[str, Any]]:
    """The constraint targets of a separate Timeloop mapspace-constraints file
    (``--constraints FILE``): a list of targets, or a mapping with one of
    :data:`_FILE_KEYS` holding that list or ``{targets: [...]}``. Read as data
    (``yaml.safe_load``); anything else is a ``ValueError`` naming the file."""
    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"{p}: cannot read the constraints file: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{p}: not YAML: {e}") from None
    body: Any = doc
    if isinstance(doc, MappingABC):
        keys = [k for k in _FILE_KEYS if k in doc]
        if len(keys) != 1:
            raise ValueError(f"{p}: a constraints file holds a list of targets or exactly one of {list(_FILE_KEYS)}, "
                             f"got the keys {sorted(map(str, doc))}")
        body = doc[keys[0]]
        if isinstance(body, MappingABC):
            if set(body) != {"targets"}:
                raise ValueError(f"{p}: {keys[0]}: expected a list of targets or {{targets: [...]}}, got the keys "
                                 f"{sorted(map(str, body))}")
            body = body["targets"]
    if not isinstance(body, list) or not all(isinstance(t, MappingABC) and "target" in t for t in body):
        raise ValueError(f"{p}: expected a list of constraint targets (each a mapping with a 'target' key)")
    return [dict(t) for t in body]


def _constraints(d: _Design, arch_path: str | Path, spec: bool, file: str | Path | None) -> TimeloopConstraints:
    """The mapspace constraints for the layer, named for the proof's scope: the Timeloop
    spec's (``spec``) and the targets of the constraints ``file``, both where given."""
    tl = d.tl if spec else dataclasses.replace(d.tl, constraints={})
    extra = read_constraints_file(file) if file is not None else None
    try:
        tc = constraints_from_timeloop(tl, d.layer, extra)
    except ValueError as e:
        where = f"{file}: its" if file is not None and not spec else f"{arch_path}: its"
        if file is not None and spec:
            where = f"{arch_path} and {file}: their"
        raise ValueError(f"{where} mapspace constraints cannot be applied: {e} (--no-constraints "
                         "searches every divisor mapping instead)") from None
    levels = [name for name, _ in _restricted(tc, tl, d.layer)]
    name = f"of {_source(spec, file)} (factors, spatial axes and bypass at " + (", ".join(levels) or "no level")
    if tc.relaxed:
        name += ", with its loop-order constraints relaxed at " + ", ".join(tc.relaxed)
    return dataclasses.replace(tc, constraints=dataclasses.replace(tc.constraints, name=name + ")"))


def _source(spec: bool, file: str | Path | None) -> str:
    """Whose mapspace constraints, in words."""
    parts = (["the Timeloop spec's mapspace"] if spec else []) + ([f"the constraints file {file}"] if file else [])
    return " and ".join(parts)


def _index(level: str | int, tl: TimeloopTranslation) -> int:
    return level if isinstance(level, int) else [lv.name for lv in tl.arch.levels].index(level)


def _is_timeloop_mapping(doc: Any) -> bool:
    body = doc.get("mapping") if isinstance(doc, MappingABC) else doc
    return isinstance(body, list) and all(isinstance(x, MappingABC) and "target" in x for x in body)


def _is_accelforge_mapping(doc: Any) -> bool:
    body = doc.get("mapping", doc) if isinstance(doc, MappingABC) else None
    return isinstance(body, MappingABC) and "nodes" in body


def _zigzag_entry(doc: Any) -> Any:
    """The ZigZag temporal / spatial mapping a file holds, or ``None``: a mapping with
    ``temporal_mapping`` (and ``spatial_mapping``), or a ZigZag mapping file (a list of
    entries; its ``default`` one)."""
    if isinstance(doc, MappingABC) and "temporal_mapping" in doc:
        extra = sorted(str(k) for k in doc if k not in ("name", "temporal_mapping", "spatial_mapping"))
        if extra:
            raise ValueError(f"a ZigZag temporal mapping file: key {extra[0]!r} is not read (read: name, "
                             "temporal_mapping, spatial_mapping); cannot be expressed")
        return doc
    if isinstance(doc, list) and doc and all(isinstance(e, MappingABC) and "name" in e for e in doc):
        return next((e for e in doc if e.get("name") == "default"), doc[0])
    return None


def _coexplore_mapping(levels: Any, tl: TimeloopTranslation, layer: Layer) -> Mapping:
    """coexplore's own mapping form (:meth:`MapOutcome.mapping_yaml`)."""
    if not isinstance(levels, list):
        raise ValueError("coexplore_mapping must be a list of levels (level, temporal, spatial_x, spatial_y, order, "
                         "bypass)")
    n = tl.arch.n_levels
    groups: dict[str, list[dict[str, int]]] = {k: [{} for _ in range(n)] for k in KINDS}
    order: list[tuple[str, ...]] = [() for _ in range(n)]
    bypass: list[frozenset[str]] = [frozenset() for _ in range(n)]
    seen: set[int] = set()
    keys = {"level", "order", "bypass", *KINDS}
    for i, e in enumerate(levels):
        if not isinstance(e, MappingABC) or "level" not in e:
            raise ValueError(f"coexplore_mapping[{i}]: each entry needs a 'level'")
        unknown = sorted(set(e) - keys)
        if unknown:
            raise ValueError(f"coexplore_mapping[{i}]: unknown keys {unknown} (read: {sorted(keys)})")
        li = tl.level_of(str(e["level"]))
        if li in seen:
            raise ValueError(f"coexplore_mapping[{i}]: level {e['level']!r} given twice")
        seen.add(li)
        for k in KINDS:
            facs = e.get(k) or {}
            if not isinstance(facs, MappingABC):
                raise ValueError(f"coexplore_mapping[{i}] ({e['level']}): {k} must map dimensions to factors")
            for dim, f in facs.items():
                if isinstance(f, bool) or not isinstance(f, int) or f < 1:
                    raise ValueError(f"coexplore_mapping[{i}] ({e['level']}): {k}[{dim!r}] = {f!r} is not a whole "
                                     "factor >= 1")
                groups[k][li][str(dim)] = f
        order[li] = tuple(str(x) for x in e.get("order") or ())
        bad = [x for x in e.get("bypass") or () if x not in OPERANDS]
        if bad:
            raise ValueError(f"coexplore_mapping[{i}] ({e['level']}): bypass names {bad}, not operands "
                             f"{list(OPERANDS)}")
        bypass[li] = frozenset(str(x) for x in e.get("bypass") or ())
    return Mapping.create(tl.arch, groups["temporal"], groups["spatial_x"], groups["spatial_y"], order, bypass)


def _parse_mapping(doc: Any, d: _Design) -> tuple[str, Mapping]:
    tl, layer = d.tl, d.layer
    if isinstance(doc, MappingABC) and "coexplore_mapping" in doc:
        return "coexplore", _coexplore_mapping(doc["coexplore_mapping"], tl, layer)
    if _is_timeloop_mapping(doc):
        return "timeloop", mapping_from_timeloop(doc, tl, layer)
    if _is_accelforge_mapping(doc):
        if d.kind != "accelforge":
            raise ValueError(f"an AccelForge mapping needs an AccelForge architecture (ARCH is a {d.kind} spec)")
        return "accelforge", mapping_from_accelforge(doc, tl, layer, d.raw)
    entry = _zigzag_entry(doc)
    if entry is not None:
        if d.zigzag is None:
            raise ValueError(f"a ZigZag mapping needs a ZigZag accelerator (ARCH is a {d.kind} spec)")
        spatial = entry.get("spatial_mapping")
        sp = spatial_from_zigzag([{"name": "default", "spatial_mapping": spatial}]) if spatial else None
        temporal = entry.get("temporal_mapping", entry)
        return "zigzag", mapping_from_zigzag(temporal, d.zigzag, layer, sp)
    raise ValueError("not a mapping coexplore reads: expected Timeloop mapping YAML (mapping: [directives]), "
                     "coexplore's form (coexplore_mapping:), an AccelForge mapping (mapping: {nodes: [...]}) or a "
                     "ZigZag temporal mapping (temporal_mapping: {W, I, O})")


def _outside(m: Mapping, d: _Design, cons: MappingConstraints | None) -> str | None:
    """Why ``m`` lies outside the exact mapper's space (``None``: it does not, as far as
    the layer's sizes and the constraints go; the search checks the rest)."""
    padded = [dim for dim, size in d.layer.dims.items() if m.factor(dim) != size]
    if padded:
        return f"a padded tiling of {', '.join(padded)} (the search covers divisor tilings)"
    if cons is not None and cons.levels:
        broken = [d.tl.level_names[_index(lc.level, d.tl)] for lc in cons.levels
                  if not satisfies(MappingConstraints((lc,)), m, d.layer, d.tl.arch)[0]]
        if broken:
            return "it breaks the spec's mapspace constraints at " + ", ".join(broken)
    return None


def read_mapping(path: str | Path, d: _Design, cost: LoopNestCost,
                 cons: MappingConstraints | None = None) -> UserMapping:
    """A ``--mapping`` file read, checked against the design and scored under ``cost``
    (module docstring); a ``ValueError`` names the file and what does not fit."""
    path = Path(path)
    doc = load_timeloop_yaml(path)
    arch, layer = d.tl.arch, d.layer
    try:
        form, m = _parse_mapping(doc, d)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    bad = m.violations(layer, arch)
    if bad:
        raise ValueError(f"{path}: the mapping does not fit {arch.name!r}: " + "; ".join(bad))
    batch = MappingBatch.from_mappings(layer, arch, [m])
    if not bool(np.asarray(cost(layer, arch, batch).valid)[0]):
        raise ValueError(f"{path}: the loop-nest model finds the mapping illegal on {arch.name!r} under the "
                         f"{cost.accounting_name} accounting (a tile over a capacity or a fanout by its rules)")
    return UserMapping(path, form, m, result_of(layer, arch, cost, batch, 0, evaluated=1), _outside(m, d, cons))


def map_design(arch_path: str | Path, problem_path: str | Path, *, accounting: str = "coexplore",
               objective: str = "edp", ert: str | Path | None = None, art: str | Path | None = None,
               time_limit_s: float | None = None, constraints: bool = True,
               mapping: str | Path | None = None, constraints_file: str | Path | None = None,
               ignore: tuple[str, ...] = ()) -> MapOutcome:
    """Read the files and run the exact mapper (module docstring): within the Timeloop
    spec's mapspace constraints unless ``constraints`` is false, and within those of
    ``constraints_file`` (a separate Timeloop mapspace-constraints file, its level names
    the design's) where given; offered ``mapping`` (a file) as a warm start. ``ignore``:
    keys of an AccelForge or ZigZag architecture the caller accepts dropping (their
    importers' ``IGNORABLE``), listed in the outcome's ``dropped`` and printed."""
    d = _load(arch_path, problem_path, ert=ert, art=art, ignore=tuple(ignore))
    tl, layer = d.tl, d.layer
    spec = bool(tl.constraints) and constraints
    tc = _constraints(d, arch_path, spec, constraints_file) if spec or constraints_file is not None else None
    cons = tc.constraints if tc is not None and tc.constraints.levels else None
    cost = LoopNestCost(accounting)
    user = read_mapping(mapping, d, cost, cons) if mapping is not None else None
    t0 = time.perf_counter()
    result = ExactMapper(time_limit_s=time_limit_s, constraints=cons).map(
        layer, tl.arch, cost, objective, incumbents=[user.mapping] if user else None)
    if user is not None and user.outside is None and not result.info.get("warm_legal"):
        user = dataclasses.replace(user, outside="not in the search's space (a bypass choice, fanout or loop order "
                                                 "it does not branch over)")
    return MapOutcome(tl.arch, layer, tl, result, accounting, objective, bool(tl.constraints) and not constraints,
                      time.perf_counter() - t0, tc, user, spec, None if constraints_file is None else Path(constraints_file),
                      d.dropped)


def format_loop_nest(mapping: Mapping, tl: TimeloopTranslation, layer: Layer) -> list[str]:
    """The loop nest, outermost first, one line per loop, under each level's name and the
    words of its tiles (as Timeloop prints a mapping: :func:`mappers.mapping_record.loop_nest_lines`,
    the form a study stores, with the translation's level and data-space names)."""
    rec = mapping_record(mapping, layer, tl.arch)
    for li, lv in enumerate(rec["levels"]):
        lv["name"] = tl.level_names[li]
    return loop_nest_lines(rec, {v: k for k, v in tl.roles.items()})


def ratio(outcome: MapOutcome) -> float:
    """The given mapping's objective over the result's (``--mapping``)."""
    assert outcome.user is not None
    return outcome.user.result.objective(outcome.objective) / outcome.result.objective(outcome.objective)


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
           f"utilization {r.utilization:.3f}"]
    if r.scope is not None:
        out.append(f"scope:       {'the proof' if r.optimal else 'the lower bound'} covers {r.scope.describe()}")
    tc = outcome.constraints
    if tc is not None:
        tl = outcome.translation
        restricted = _restricted(tc, tl, outcome.layer)
        whose = _source(outcome.spec_constraints, outcome.constraints_file)
        if restricted:
            out.append(f"constraints: applied, from {whose}:")
            out += [f"             {name}: {words}" for name, words in restricted]
        else:
            out.append(f"constraints: those of {whose} restrict no factor, axis or bypass of this layer")
        if tc.relaxed:
            out.append("             relaxed: the loop-order constraints at " + ", ".join(tc.relaxed)
                       + " (every order searched, a larger space)")
        out += [f"             note: {note}" for note in tc.notes]
    u = outcome.user
    if u is not None:
        of = "the proven optimum" if r.optimal else "the result"
        used = ("offered to the exact mapper as a warm start" if u.outside is None
                else f"outside the searched space: {u.outside}; not a warm start")
        out += [f"yours:       {u.path} ({MAPPING_FORMS[u.form]}): {outcome.objective} = "
                f"{u.result.objective(outcome.objective):.6g}, {ratio(outcome):.6g} x {of}",
                f"             energy {u.result.energy_pj:.6g} pJ, {u.result.latency_cycles:.6g} cycles, "
                f"utilization {u.result.utilization:.3f}; {used}"]
    out.append(f"search:      {outcome.seconds:.2f} s, {r.evaluated} mappings scored"
               + (f", space of {r.space_size}" if r.space_size else ""))
    if outcome.constraints_ignored:
        rest = ("only the constraints file's apply" if outcome.constraints_file is not None
                else "the search covers every legal divisor mapping")
        out.append(f"note:        the Timeloop spec's mapspace constraints were not applied (--no-constraints: {rest})")
    if outcome.dropped:
        out.append(f"dropped:     {len(outcome.dropped)} keys of the architecture file, as --ignore asked:")
        out += [f"             {line}" for line in outcome.dropped]
    return out
