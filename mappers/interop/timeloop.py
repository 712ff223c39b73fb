"""Timeloop v0.4 problems and mappings: a problem as a :class:`~mappers.workloads.Layer`,
a Timeloop mapping as a :class:`~mappers.mapping.Mapping` and back.

**Problem.** ``problem.shape`` names the dimensions, the coefficients (with defaults) and
three data spaces, each a projection: one list per tensor axis of terms ``[dim]`` or
``[dim, coefficient]`` (the axis index is the sum of the terms), or Timeloop's short form,
a list of dimension names, one axis each. ``problem.instance`` gives the sizes and the
coefficients' values. The data space with ``read_write: true`` (or ``read-write``, as
Timeloop also reads it) is the output ``O``; the other two are ``W`` and ``I`` by
:data:`DATASPACE_ROLES` names (``Weights``, ``Inputs``), else in the order listed (first
``W``, then ``I``). Every key is read, neutral or refused with a ``ValueError`` naming it
and its value: ``densities`` / ``commonDensity`` are read where every density is 1 (dense
tensors); the instance's ``H``, ``W``, ``Hpad``, ``Wpad`` (the converters' record of the
layer, which Timeloop does not read) are neutral (:data:`PROBLEM_NEUTRAL`). Refused: any
other key (a typo, ``flatten``, ``ranks``), a density other than 1, a shape named by file,
more or fewer than three data spaces, a coefficient without a default, and projections a
Layer cannot express (a dimension in two terms of one axis, a coefficient of 0, which a
Layer would count as indexing the tensor).

**Mapping.** A Timeloop mapping is a list of directives, each with a ``target`` (a level
name of :class:`~accelerators.interop.timeloop.TimeloopTranslation`) and a ``type``:
``temporal`` (``factors`` such as ``"C1 M4 R3"`` or ``"R=3 P=1"`` and a ``permutation``
listed innermost loop first), ``spatial`` (the loops across the target's fanout: the first
``split`` dimensions of the permutation on X, the rest on Y) or ``datatype`` / ``bypass``
(``keep`` / ``bypass`` lists of data spaces). coexplore's :class:`Mapping` has the same
parts (``order`` is listed outermost first, so it is the permutation reversed);
:func:`mapping_to_timeloop` writes every level's three directives with every dimension
in every factor list and permutation, and :func:`mapping_from_timeloop` reads it back to
:func:`canonical` of the mapping written, so a round trip is the identity on canonical
mappings. A dimension whose factors multiply to less than its size is refused (Timeloop
would infer the missing factor; give every factor); to more, it is padding, read as
coexplore's (:class:`~mappers.mapping.Mapping`: less than one outer step).

**Mapspace constraints.** :func:`constraints_from_timeloop` reads the constraints a
translation kept (``architecture_constraints`` / ``mapspace_constraints`` targets of the
processed form, or a v0.4 tree component's ``constraints: {temporal, spatial,
dataspace}``) as a :class:`~mappers.constraints.MappingConstraints`, by Timeloop's rules
(``src/mapping/constraints.cpp`` of NVlabs/timeloop): ``factors: D=N`` fixes the factor
of ``D`` in that kind of loop at the target (``D=1``: no loop); ``D=0`` means the full
problem dimension; a factor larger than the dimension is ignored, as Timeloop ignores it
(with a warning, which :attr:`TimeloopConstraints.notes` keeps); a spatial
``permutation`` with ``split`` puts the dimensions before ``split`` on X and the others on
Y; ``keep`` / ``bypass`` fix the operands a level stores when together they name every
data space the level can hold (only ``bypass``: those are bypassed, the rest are the
mapper's choice). Loop-order constraints (a temporal ``permutation``) are **not** applied:
coexplore's mappers search every order at every level, so the space searched contains the
constrained one (its optimum is at most the constrained optimum) and
:attr:`TimeloopConstraints.relaxed` names each relaxed target. Factor inequalities,
``factors_only``, ``max_factor`` style keys and utilisation targets are refused by name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping as MappingT
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accelerators.arch import OPERANDS, ArchSpec
from accelerators.interop.timeloop import DATASPACE_ROLES, TimeloopTranslation
from accelerators.interop.values import real, shown
from mappers.constraints import LevelConstraints, MappingConstraints
from mappers.mapping import Mapping
from mappers.workloads import Layer, TensorSpec

__all__ = [
    "PROBLEM_NEUTRAL",
    "TimeloopConstraints",
    "canonical",
    "constraints_from_timeloop",
    "layer_from_timeloop",
    "layer_to_timeloop",
    "mapping_from_timeloop",
    "mapping_to_timeloop",
    "spatial_axes",
    "stats_from_timeloop",
]


PROBLEM_NEUTRAL: dict[str, str] = {
    k: "Timeloop reads only the shape's dimensions and coefficients from the instance: the converters' record "
       "of the layer (H, W: the input's extent; Hpad, Wpad: its padding) changes nothing, the input Timeloop "
       "models being the projection's"
    for k in ("H", "W", "Hpad", "Wpad")}
"""Keys of a problem's ``instance`` that change nothing (where they are no dimension or
coefficient of the shape): key -> why."""

_PROBLEM_KEYS = {"version", "shape", "instance"}
_SHAPE_KEYS = {"name", "dimensions", "coefficients", "data_spaces"}
_SPACE_KEYS = {"name", "projection", "read_write"}
_COEFFICIENT_KEYS = {"name", "default"}
_DENSITY_KEYS = {"distribution", "density", "band_width", "workload_tensor_size"}
#: keys Timeloop also reads hyphenated (its hyphens-to-underscores pass)
_HYPHENATED = {"read-write": "read_write", "data-spaces": "data_spaces"}


def _problem_keys(d: Any, allowed: set[str], where: str, what: str) -> dict[str, Any]:
    """``d``'s keys, Timeloop's hyphenated spellings read as the underscored ones; a key
    not in ``allowed`` is refused, naming it and the known ones."""
    if not isinstance(d, MappingT):
        raise ValueError(f"Timeloop problem: {where} must be a mapping, got {shown(d)}")
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = _HYPHENATED.get(str(k), str(k))
        if key not in allowed:
            raise ValueError(f"Timeloop problem: {where}: {what} key {str(k)!r} (= {shown(v)}) is not one coexplore "
                             f"reads (known: {sorted(allowed)}); cannot be expressed")
        if key in out:
            raise ValueError(f"Timeloop problem: {where}: {key} is given twice (as {key!r} and hyphenated)")
        out[key] = v
    return out


def _dense(value: Any, where: str, ds: str | None = None) -> None:
    """A density (a number, or a distribution's mapping) that is 1: a dense tensor."""
    d = value
    if isinstance(value, MappingT):
        _problem_keys(value, _DENSITY_KEYS, where, "density")
        d = value.get("density")
    try:
        dense = real(d, where, "Timeloop") == 1
    except ValueError:
        dense = False
    if not dense:
        what = f"instance.densities gives {ds!r} density {d!r}" if ds is not None else f"{where} = {shown(value)}"
        raise ValueError(f"Timeloop problem: {what}; sparse tensors cannot be expressed (only density 1)")


def layer_from_timeloop(problem: MappingT[str, Any], name: str | None = None) -> tuple[Layer, dict[str, str]]:
    """The Layer of a parsed Timeloop v0.4 problem (the file's top mapping or its
    ``problem`` value) and the data-space name -> operand map (module docstring). Every
    key is read (``read-write`` / ``data-spaces`` as Timeloop reads them, hyphens for
    underscores), neutral (:data:`PROBLEM_NEUTRAL`) or refused with a ``ValueError``
    naming it and its value."""
    root = problem.get("problem", problem)
    if not isinstance(root, MappingT) or "shape" not in root or "instance" not in root:
        raise ValueError("a Timeloop problem is a mapping with 'shape' and 'instance'")
    root = _problem_keys(root, _PROBLEM_KEYS, "problem", "problem")
    if "version" in root and str(root["version"]) not in ("0.3", "0.4"):
        raise ValueError(f"Timeloop problem: version = {shown(root['version'])}: only versions 0.3 and 0.4 are read")
    if isinstance(root["shape"], str):
        raise ValueError(f"Timeloop problem: shape = {shown(root['shape'])} names one of Timeloop's problem-shape "
                         "files, which are not read: give the shape itself")
    shape = _problem_keys(root["shape"], _SHAPE_KEYS, "shape", "shape")
    raw_dims = shape.get("dimensions") or []
    if not isinstance(raw_dims, list) or not all(isinstance(d, str) for d in raw_dims):
        raise ValueError(f"Timeloop problem: shape.dimensions = {shown(raw_dims)} is not a list of names")
    dims = [str(d) for d in raw_dims]
    if not dims:
        raise ValueError("Timeloop problem: shape.dimensions is empty")
    if len(set(dims)) != len(dims):
        raise ValueError(f"Timeloop problem: shape.dimensions = {shown(raw_dims)} names a dimension twice")
    coef: dict[str, Any] = {}
    for i, c in enumerate(shape.get("coefficients") or []):
        c = _problem_keys(c, _COEFFICIENT_KEYS, f"shape.coefficients[{i}]", "coefficient")
        if "name" not in c or "default" not in c:
            raise ValueError(f"Timeloop problem: shape.coefficients[{i}] = {shown(c)} needs a name and a default "
                             "(Timeloop requires both)")
        if str(c["name"]) in dims or str(c["name"]) in coef:
            raise ValueError(f"Timeloop problem: coefficient {c['name']!r} is declared twice or is a dimension")
        coef[str(c["name"])] = c["default"]
    inst = _problem_keys(root["instance"], {*dims, *coef, "densities", "commonDensity", *PROBLEM_NEUTRAL},
                         "instance", "instance")
    for c in coef:
        if c in inst:
            coef[c] = inst[c]
    sizes = {}
    for d in dims:
        v = inst.get(d)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"Timeloop problem: instance.{d} must be a positive integer, got {v!r}")
        sizes[d] = v
    spaces = shape.get("data_spaces") or []
    if not isinstance(spaces, list) or len(spaces) != 3:
        n = len(spaces) if isinstance(spaces, list) else shown(spaces)
        raise ValueError(f"Timeloop problem: {n} data spaces; a Layer has exactly three (W, I, O)")
    spaces = [_problem_keys(s, _SPACE_KEYS, f"shape.data_spaces[{i}]", "data space") for i, s in enumerate(spaces)]
    for i, s in enumerate(spaces):
        if "name" not in s or "projection" not in s:
            raise ValueError(f"Timeloop problem: shape.data_spaces[{i}] needs a name and a projection")
        if not isinstance(s.get("read_write", False), bool):
            raise ValueError(f"Timeloop problem: data space {s['name']!r}: read_write = {shown(s['read_write'])} is "
                             "not true or false")
    names = [str(s["name"]) for s in spaces]
    if len(set(names)) != 3:
        raise ValueError(f"Timeloop problem: data spaces {names} must have three different names")
    if "densities" in inst and "commonDensity" in inst:
        raise ValueError("Timeloop problem: instance gives both densities and commonDensity (Timeloop reads only "
                         "commonDensity); give one")
    if "commonDensity" in inst:
        _dense(inst["commonDensity"], "instance.commonDensity")
    dens = inst.get("densities") or {}
    if not isinstance(dens, MappingT):
        raise ValueError(f"Timeloop problem: instance.densities = {shown(dens)} is not a mapping of data spaces")
    for ds, d in dens.items():
        if str(ds) not in names:
            raise ValueError(f"Timeloop problem: instance.densities names {ds!r}, not one of the data spaces {names}")
        _dense(d, f"instance.densities.{ds}", str(ds))
    outs = [s for s in spaces if s.get("read_write")]
    if len(outs) != 1:
        raise ValueError("Timeloop problem: exactly one data space must be read_write (the output)")
    ins = [s for s in spaces if not s.get("read_write")]
    named = {DATASPACE_ROLES.get(str(s["name"])) for s in ins}
    order = ins if named != {"W", "I"} else sorted(ins, key=lambda s: DATASPACE_ROLES[str(s["name"])] != "W")
    roles = {str(order[0]["name"]): "W", str(order[1]["name"]): "I", str(outs[0]["name"]): "O"}
    tensors = {}
    for s in spaces:
        tensors[roles[str(s["name"])]] = TensorSpec(roles[str(s["name"])], _projection(s, sizes, coef, dims))
    window = any(len(axis) > 1 for axis in tensors["I"].axes)
    layer = Layer(name or str(shape.get("name", "timeloop")), "conv" if window else "tensor", sizes,
                  (tensors["W"], tensors["I"], tensors["O"]),
                  attrs={"timeloop_roles": dict(roles), "timeloop_dims": tuple(dims)})
    return layer, roles


def _projection(s: MappingT[str, Any], sizes: MappingT[str, int], coef: MappingT[str, Any],
                dims: list[str]) -> tuple[tuple[tuple[str, int], ...], ...]:
    """A data space's projection as a TensorSpec's axes: Timeloop's list of dimension
    names (one axis each), or its list of axes, each a list of ``[dim]`` / ``[dim,
    coefficient]`` terms (their sum the axis index)."""
    proj = s["projection"]
    where = f"data space {s['name']!r}"
    if not isinstance(proj, list) or not proj:
        raise ValueError(f"Timeloop problem: {where}: projection = {shown(proj)} is not a list of axes")
    if all(isinstance(axis, str) for axis in proj):
        proj = [[[axis]] for axis in proj]          # Timeloop's short form: one dimension per axis
    axes = []
    for ai, axis in enumerate(proj):
        if isinstance(axis, str) or not isinstance(axis, list) or not axis:
            raise ValueError(f"Timeloop problem: {where} axis {ai}: write the projection as lists of [dim] / "
                             f"[dim, coefficient] terms (or as dimension names alone), got {axis!r}")
        terms = []
        for term in axis:
            if not isinstance(term, list) or not 1 <= len(term) <= 2 or term[0] not in sizes:
                raise ValueError(f"Timeloop problem: {where} axis {ai}: bad term {term!r} "
                                 f"(expected [dim] or [dim, coefficient], dims {dims})")
            c = 1 if len(term) == 1 else term[1]
            if isinstance(c, str):
                if c not in coef:
                    raise ValueError(f"Timeloop problem: {where} axis {ai}: term {term!r} names coefficient {c!r}, "
                                     f"which shape.coefficients does not declare (declared: {sorted(coef)})")
                c = coef[c]
            if isinstance(c, bool) or not isinstance(c, int) or c < 0:
                raise ValueError(f"Timeloop problem: {where}: coefficient {c!r} must be an integer >= 0")
            if c == 0:
                raise ValueError(f"Timeloop problem: {where} axis {ai}: term {term!r} has coefficient 0: the "
                                 f"dimension does not index the tensor, and a Layer would count {term[0]} as one "
                                 "that does; cannot be expressed")
            if any(d == term[0] for d, _ in terms):
                raise ValueError(f"Timeloop problem: {where} axis {ai}: {term[0]} appears in two terms of one axis; "
                                 "a Layer's axis has one coefficient per dimension, cannot be expressed")
            terms.append((str(term[0]), int(c)))
        axes.append(tuple(terms))
    return tuple(axes)


def layer_to_timeloop(layer: Layer, roles: MappingT[str, str] | None = None) -> dict[str, Any]:
    """The Timeloop v0.4 problem of ``layer`` (``roles`` operand names as data spaces;
    default Weights / Inputs / Outputs); :func:`layer_from_timeloop` reads it back equal
    in dimensions and tensors."""
    names = {v: k for k, v in (roles or DATASPACE_ROLES).items()}
    spaces = []
    for t in layer.tensors:
        proj = [[[d] if c == 1 else [d, c] for d, c in axis] for axis in t.axes]
        entry: dict[str, Any] = {"name": names[t.name], "projection": proj}
        if t.name == "O":
            entry["read_write"] = True
        spaces.append(entry)
    return {"problem": {"version": 0.4, "shape": {"name": layer.name, "dimensions": list(layer.dims),
                                                  "data_spaces": spaces},
                        "instance": dict(layer.dims)}}


_FACTOR = re.compile(r"([A-Za-z_][A-Za-z_0-9]*?)\s*=?\s*(\d+)$")


def _factors(v: Any, dims: Sequence[str], where: str) -> dict[str, int]:
    items = [x for x in re.split(r"[\s,]+", v.strip()) if x] if isinstance(v, str) else list(v or [])
    out: dict[str, int] = {}
    for item in items:
        m = _FACTOR.match(str(item).strip())
        if not m or m.group(1) not in dims:
            raise ValueError(f"Timeloop mapping {where}: factor {item!r} is not DIM=N / DIMN over {list(dims)}")
        out[m.group(1)] = int(m.group(2))
    return out


def _permutation(v: Any, dims: Sequence[str], where: str) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        out, rest = [], v.replace(" ", "")
        by_len = sorted(dims, key=len, reverse=True)
        while rest:
            hit = next((d for d in by_len if rest.startswith(d)), None)
            if hit is None:
                raise ValueError(f"Timeloop mapping {where}: permutation {v!r} names no dimension at {rest!r}")
            out.append(hit)
            rest = rest[len(hit):]
    else:
        out = [str(d) for d in v]
    bad = [d for d in out if d not in dims]
    if bad or len(set(out)) != len(out):
        raise ValueError(f"Timeloop mapping {where}: permutation {v!r} has unknown or repeated dimensions")
    return out


@dataclass(frozen=True)
class TimeloopConstraints:
    """Timeloop's mapspace constraints for one layer: the set coexplore's mappers honour,
    the targets whose loop-order constraints were relaxed, and Timeloop's own warnings
    (constraints it ignores)."""

    constraints: MappingConstraints
    relaxed: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


_CONSTRAINT_KEYS = {"target", "type", "factors", "permutation", "split", "keep", "bypass"}


def _targets(raw: Any) -> list[dict[str, Any]]:
    """Constraint targets from a translation's ``constraints`` (name -> list of targets,
    or name -> a tree component's ``{temporal, spatial, dataspace}`` dict) or a list."""
    if isinstance(raw, list):
        return [dict(t) for t in raw]
    out: list[dict[str, Any]] = []
    for name, v in (raw or {}).items():
        if isinstance(v, list):
            out += [{**dict(t), "target": t.get("target", name)} for t in v]
        elif isinstance(v, MappingT):
            for kind, body in v.items():
                if kind not in ("temporal", "spatial", "dataspace"):
                    raise ValueError(f"Timeloop constraint on {name!r}: {kind!r} cannot be expressed "
                                     "(temporal, spatial and dataspace are read)")
                out.append({**dict(body or {}), "target": name,
                            "type": "bypass" if kind == "dataspace" else kind})
        else:
            raise ValueError(f"Timeloop constraint on {name!r}: {v!r} is not a constraint")
    return out


def constraints_from_timeloop(tl: TimeloopTranslation, layer: Layer, extra: Any = None) -> TimeloopConstraints:
    """The mapspace constraints ``tl`` kept (and the targets of ``extra``, e.g. a separate
    ``mapspace_constraints`` file: a list of targets or ``{targets: [...]}``) for ``layer``,
    by the rules of the module docstring. A ``ValueError`` names what cannot be expressed."""
    targets = _targets(tl.constraints)
    if isinstance(extra, MappingT):
        extra = extra.get("targets", extra.get("mapspace_constraints", {}).get("targets"))
    targets += _targets(extra or [])
    dims = list(layer.dims)
    arch = tl.arch
    per: dict[int, dict[str, Any]] = {}
    ordered: dict[int, str] = {}     # levels with a loop-order constraint -> their target name
    notes: list[str] = []
    for i, t in enumerate(targets):
        name, kind = str(t.get("target")), str(t.get("type", "temporal"))
        where = f"[{i}] ({name}, {kind})"
        unknown = sorted(set(t) - _CONSTRAINT_KEYS)
        if unknown:
            raise ValueError(f"Timeloop constraint {where}: {unknown} cannot be expressed (read: "
                             f"{sorted(_CONSTRAINT_KEYS)})")
        li = tl.level_of(name)
        lv = arch.levels[li]
        acc = per.setdefault(li, {})
        if kind in ("bypass", "datatype", "dataspace"):
            kept = {tl.roles[x] for x in t.get("keep") or [] if x in tl.roles}
            byp = {tl.roles[x] for x in t.get("bypass") or [] if x in tl.roles}
            bad = [x for x in list(t.get("keep") or []) + list(t.get("bypass") or []) if x not in tl.roles]
            if bad:
                raise ValueError(f"Timeloop constraint {where}: unknown data spaces {bad} "
                                 f"(the problem's: {sorted(tl.roles)})")
            if kept & byp:
                raise ValueError(f"Timeloop constraint {where}: {sorted(kept & byp)} both kept and bypassed")
            held = set(lv.tensors) if li < arch.n_levels - 1 else set(OPERANDS)
            if kept - held:
                raise ValueError(f"Timeloop constraint {where}: keeps {sorted(kept - held)}, which level "
                                 f"{lv.name!r} cannot hold")
            free = held - kept - byp
            if kept and free:
                raise ValueError(f"Timeloop constraint {where}: keeps {sorted(kept)} and leaves {sorted(free)} to "
                                 "the mapper; 'keep at least' cannot be expressed (coexplore fixes a level's kept "
                                 "operands exactly or not at all): list every data space in keep or bypass")
            if kept or byp:
                acc["keep"] = frozenset(held - byp) if not free else None
                if acc["keep"] is None:
                    # only bypasses: the level cannot hold them; the rest stay the mapper's choice
                    acc.setdefault("bypassed", set()).update(byp)
            continue
        if kind not in ("temporal", "spatial"):
            raise ValueError(f"Timeloop constraint {where}: type {kind!r} cannot be expressed "
                             "(temporal, spatial, bypass / datatype are read)")
        facs = _factors(t.get("factors"), dims, f"constraint {where}")
        raw_perm = t.get("permutation")
        if isinstance(raw_perm, str) and "_" in raw_perm:       # Timeloop's PREFIX_SUFFIX form
            head, _, tail = raw_perm.partition("_")
            prefix = _permutation(head, dims, f"constraint {where}")
            suffix = _permutation(tail, dims, f"constraint {where}")
        else:
            prefix, suffix = _permutation(raw_perm, dims, f"constraint {where}"), []
        if set(prefix) & set(suffix):
            raise ValueError(f"Timeloop constraint {where}: permutation {raw_perm!r} repeats a dimension")
        fixed: dict[str, int] = {}
        for d, f in facs.items():
            if f == 0:
                f = layer.dims[d]        # Timeloop: 0 is the full problem dimension
            if f > layer.dims[d]:
                notes.append(f"{where}: {d}={f} exceeds the dimension ({layer.dims[d]}); ignored, as Timeloop "
                             "ignores it")
                continue
            fixed[d] = f
        if kind == "temporal":
            if len(prefix) + len(suffix) > 1:
                ordered.setdefault(li, name)
            acc.setdefault("temporal_factors", {}).update({d: f for d, f in fixed.items() if f > 1})
            ones = {d for d, f in fixed.items() if f == 1}
            if ones:     # several targets on one level: their union (Timeloop's rule) narrows the set
                acc["temporal"] = frozenset(d for d in acc.get("temporal", dims) if d not in ones)
            continue
        xs, ys = spatial_axes(t, prefix, suffix, dims, lv, tree=tl.constraints_form == "tree", where=where)
        ones = {d for d, f in fixed.items() if f == 1}
        acc["spatial_x"] = frozenset(xs - ones) & acc.get("spatial_x", frozenset(dims))
        acc["spatial_y"] = frozenset(ys - ones) & acc.get("spatial_y", frozenset(dims))
        for d, f in fixed.items():
            if f == 1:
                continue
            if (d in xs) == (d in ys):
                raise ValueError(f"Timeloop constraint {where}: {d}={f} is fixed but its axis (X or Y) is not "
                                 "determined by the permutation and split")
            acc.setdefault("spatial_x_factors" if d in xs else "spatial_y_factors", {})[d] = f
    # an order constraint matters only where two or more loops of the level can have a factor > 1
    relaxed = [name for li, name in sorted(ordered.items()) if _movable(per[li], layer) > 1]
    levels = []
    for li in sorted(per):
        kw = dict(per[li])
        bypassed = kw.pop("bypassed", None)
        if bypassed:
            held = set(arch.levels[li].tensors) if li < arch.n_levels - 1 else set(OPERANDS)
            if held & bypassed:
                raise ValueError(f"Timeloop constraint on {tl.level_names[li]!r}: bypasses {sorted(held & bypassed)}, "
                                 "which the translated level still holds")
        if kw.get("keep", 0) is None:
            kw.pop("keep")
        if kw:
            levels.append(LevelConstraints(li, **kw))
    return TimeloopConstraints(MappingConstraints(tuple(levels), name="timeloop"), tuple(relaxed), tuple(notes))


def spatial_axes(t: MappingT[str, Any], prefix: list[str], suffix: list[str], dims: list[str], lv: Any, *,
                  tree: bool, where: str) -> tuple[set[str], set[str]]:
    """The dimensions a spatial constraint lets onto X and onto Y, by the rule of
    Timeloop's mapper (``src/mapspaces``: with a user split no dimension is pruned, the
    full permutation is ``prefix + (free dimensions, any order) + suffix``, and positions
    before ``split`` are X). A free dimension that may land on either side is allowed on
    both (the count of free loops on each side is not kept: a relaxation). Without
    ``split`` the mapper chooses the axes: any dimension on either, unless the fanout has
    one axis."""
    if "split" not in t:
        if lv.fanout_y == 1:
            return set(dims), set()
        if lv.fanout_x == 1:
            return set(), set(dims)
        return set(dims), set(dims)
    split = int(t["split"])
    listed = len(prefix) + len(suffix)
    if tree and 0 < listed < len(dims):
        raise ValueError(f"Timeloop constraint {where}: a partial spatial permutation with a split in the v0.4 "
                         "tree form cannot be read exactly (Timeloop's front end rewrites it into a full "
                         "permutation before its split applies); give the processed form "
                         "(parsed-processed-input.yaml) or list every dimension")
    free = [d for d in dims if d not in prefix and d not in suffix]
    n = len(dims)
    xs = {d for i, d in enumerate(prefix) if i < split} | {d for i, d in enumerate(suffix) if n - len(suffix) + i < split}
    ys = set(dims) - xs - set(free)
    if free:
        if len(prefix) < split:          # some free position lies before the split
            xs |= set(free)
        if n - len(suffix) - 1 >= split:  # some free position lies at or after it
            ys |= set(free)
    return xs, ys


def _movable(level: MappingT[str, Any], layer: Layer) -> int:
    """How many dimensions may have a temporal factor > 1 at a level under its collected
    constraints (dimensions of size 1 never do)."""
    allowed = level.get("temporal", layer.dims)
    return sum(1 for d in allowed if layer.dims[d] > 1)


def canonical(mapping: Mapping, layer: Layer, arch: ArchSpec) -> Mapping:
    """The mapping with factors of 1 dropped, every level's order over every dimension,
    and ``bypass`` holding exactly the operands a level could hold but does not keep:
    the same loop nest, in the form :func:`mapping_from_timeloop` returns."""
    dims = list(layer.dims)
    n = arch.n_levels

    def drop(group: Sequence[MappingT[str, int]]) -> list[dict[str, int]]:
        return [{d: f for d, f in lvl.items() if f != 1} for lvl in group]

    return Mapping.create(
        arch, drop(mapping.temporal), drop(mapping.spatial_x), drop(mapping.spatial_y),
        [mapping.full_order(li, dims) for li in range(n)],
        [frozenset(op for op in arch.levels[li].tensors if not mapping.keeps(arch, li, op)) if li < n - 1
         else frozenset() for li in range(n)])


def mapping_from_timeloop(directives: Any, tl: TimeloopTranslation, layer: Layer) -> Mapping:
    """A parsed Timeloop mapping (the list, or a mapping with key ``mapping``) on the
    translated architecture ``tl``, as a canonical :class:`Mapping`."""
    if isinstance(directives, MappingT):
        directives = directives.get("mapping")
    if not isinstance(directives, list):
        raise ValueError("a Timeloop mapping is a list of directives (or {mapping: [...]})")
    arch, dims = tl.arch, list(layer.dims)
    n = arch.n_levels
    temporal: list[dict[str, int]] = [{} for _ in range(n)]
    sx: list[dict[str, int]] = [{} for _ in range(n)]
    sy: list[dict[str, int]] = [{} for _ in range(n)]
    order: list[tuple[str, ...]] = [tuple(dims) for _ in range(n)]
    keep: list[set[str] | None] = [None] * n
    seen: set[tuple[int, str]] = set()
    for i, d in enumerate(directives):
        if not isinstance(d, MappingT) or "target" not in d:
            raise ValueError(f"Timeloop mapping [{i}]: a directive needs a target")
        li = tl.level_of(str(d["target"]))
        kind = str(d.get("type", "temporal"))
        where = f"[{i}] ({d['target']}, {kind})"
        if kind in ("datatype", "bypass"):
            held = set(arch.levels[li].tensors) if li < n - 1 else set(OPERANDS)
            kept = {tl.roles[x] for x in d.get("keep") or [] if x in tl.roles}
            byp = {tl.roles[x] for x in d.get("bypass") or [] if x in tl.roles}
            unknown = [x for x in list(d.get("keep") or []) + list(d.get("bypass") or []) if x not in tl.roles]
            if unknown:
                raise ValueError(f"Timeloop mapping {where}: unknown data spaces {unknown}")
            if kept - held:
                raise ValueError(f"Timeloop mapping {where}: keeps {sorted(kept - held)}, which level "
                                 f"{arch.levels[li].name!r} cannot hold")
            keep[li] = held - byp     # unlisted data spaces are kept (Timeloop's model default)
            if kept - keep[li]:
                raise ValueError(f"Timeloop mapping {where}: {sorted(kept - keep[li])} both kept and bypassed")
            continue
        if kind not in ("temporal", "spatial"):
            raise ValueError(f"Timeloop mapping {where}: directive type {kind!r} cannot be expressed "
                             "(temporal, spatial, datatype / bypass are read)")
        if (li, kind) in seen:
            raise ValueError(f"Timeloop mapping {where}: a second {kind} directive for the same level")
        seen.add((li, kind))
        facs = _factors(d.get("factors"), dims, where)
        perm = _permutation(d.get("permutation"), dims, where)
        if kind == "temporal":
            temporal[li] = {k: v for k, v in facs.items() if v != 1}
            listed = list(reversed(perm))
            order[li] = tuple(listed) + tuple(x for x in dims if x not in listed)
            continue
        lv = arch.levels[li]
        if "split" in d:
            split = int(d["split"])
        elif lv.fanout_y == 1:
            split = len(dims)
        elif lv.fanout_x == 1:
            split = 0
        else:
            raise ValueError(f"Timeloop mapping {where}: level {lv.name!r} has a {lv.fanout_x} x {lv.fanout_y} "
                             "fanout; give split (the dimensions of the permutation before it go on X)")
        full = perm + [x for x in dims if x not in perm]
        for pos, dim in enumerate(full):
            f = facs.get(dim, 1)
            if f != 1:
                (sx if pos < split else sy)[li][dim] = f
    bypass = []
    for li in range(n):
        held = set(arch.levels[li].tensors)
        kept = held if keep[li] is None else keep[li]
        bypass.append(frozenset(held - kept) if li < n - 1 else frozenset())
        if li == n - 1 and keep[li] is not None and keep[li] != set(OPERANDS):
            raise ValueError(f"Timeloop mapping: the backing store {arch.levels[li].name!r} cannot bypass "
                             f"{sorted(set(OPERANDS) - keep[li])}")
    m = Mapping.create(arch, temporal, sx, sy, order, bypass)
    for dim, size in layer.dims.items():
        if m.factor(dim) < size:
            raise ValueError(f"Timeloop mapping: the factors of {dim} multiply to {m.factor(dim)}, less than its "
                             f"size {size} (every factor must be given; Timeloop's inferred residual factors are "
                             "not)")
    pads = [v for v in m.violations(layer, arch, check_capacity=False) if v.startswith("dimension")]
    if pads:
        raise ValueError(f"Timeloop mapping: {pads[0]}")
    return m


def _perm_text(dims: list[str]) -> str | list[str]:
    """A permutation as Timeloop writes it (``"PQRS"``), or a list where a dimension's
    name is longer than one letter."""
    return "".join(dims) if all(len(d) == 1 for d in dims) else dims


def mapping_to_timeloop(mapping: Mapping, tl: TimeloopTranslation | ArchSpec, layer: Layer,
                        roles: MappingT[str, str] | None = None) -> list[dict[str, Any]]:
    """The Timeloop mapping of ``mapping``: per level, innermost first, a ``datatype``
    directive (what it keeps), a ``temporal`` one and, where it has a fanout, a
    ``spatial`` one with its ``split``. Level names are the architecture's (an ArchSpec
    may be given for a design that was not imported)."""
    arch = tl.arch if isinstance(tl, TimeloopTranslation) else tl
    names = tl.level_names if isinstance(tl, TimeloopTranslation) else tuple(lv.name for lv in arch.levels)
    role_names = {v: k for k, v in (roles or (tl.roles if isinstance(tl, TimeloopTranslation)
                                              else DATASPACE_ROLES)).items()}
    dims = list(layer.dims)
    out: list[dict[str, Any]] = []
    for li in range(arch.n_levels):
        kept = [role_names[op] for op in OPERANDS if mapping.keeps(arch, li, op)]
        out.append({"target": names[li], "type": "datatype", "keep": kept,
                    "bypass": [role_names[op] for op in OPERANDS if role_names[op] not in kept]})
    for li, lv in enumerate(arch.levels):
        order = mapping.full_order(li, dims)
        t = mapping.temporal[li]
        out.append({"target": names[li], "type": "temporal",
                    "factors": " ".join(f"{d}={t.get(d, 1)}" for d in dims),
                    "permutation": _perm_text(list(reversed(order)))})
        both = [d for d in dims if mapping.spatial_x[li].get(d, 1) > 1 and mapping.spatial_y[li].get(d, 1) > 1]
        if both:
            raise ValueError(f"mapping unrolls {both} on both X and Y at {lv.name!r}: a Timeloop spatial directive "
                             "has one factor per dimension, so this cannot be expressed")
        if lv.fanout > 1:
            xs = [d for d in dims if mapping.spatial_x[li].get(d, 1) > 1]
            ys = [d for d in dims if d not in xs]
            fac = {**mapping.spatial_y[li], **mapping.spatial_x[li]}
            out.append({"target": names[li], "type": "spatial",
                        "factors": " ".join(f"{d}={fac.get(d, 1)}" for d in dims),
                        "permutation": _perm_text(xs + ys), "split": len(xs)})
        elif any(f > 1 for f in {**mapping.spatial_x[li], **mapping.spatial_y[li]}.values()):
            raise ValueError(f"mapping unrolls loops at {lv.name!r}, which has no fanout")
    return out


_STAT = {"reads": "Scalar reads (per-instance)", "fills": "Scalar fills (per-instance)",
         "updates": "Scalar updates (per-instance)", "utilized_instances": "Utilized instances (max)",
         "energy_pj": "Energy (total)"}


def stats_from_timeloop(text: str) -> dict[str, Any]:
    """The figures of a Timeloop ``*.stats.txt`` (timeloop-model or timeloop-mapper
    output) a comparison needs: ``cycles``, ``computes``, ``mac_energy_pj`` and, per
    storage level, ``leakage_pj`` and per data space the per-instance ``reads``,
    ``fills``, ``updates``, the ``utilized_instances`` and ``energy_pj``."""
    body = text.split("\nNetworks\n")[0]
    parts = re.split(r"\n=== (\S+) ===\n", "\n" + body)
    out: dict[str, Any] = {"levels": {}}
    for name, block in zip(parts[1::2], parts[2::2]):
        if "Computes (total)" in block:
            out["computes"] = int(float(re.search(r"Computes \(total\)\s*: ([\d.e+]+)", block).group(1)))
            out["mac_energy_pj"] = float(re.search(r"Energy \(total\)\s*: ([\d.e+]+) pJ", block).group(1))
            out["cycles"] = int(float(re.search(r"Cycles\s*: (\d+)", block).group(1)))
            continue
        leak = re.search(r"Leakage energy \(total\)\s*: ([\d.e+]+) pJ", block)
        level: dict[str, Any] = {"leakage_pj": float(leak.group(1)) if leak else 0.0, "dataspaces": {}}
        current: dict[str, float] | None = None
        for line in block.splitlines():
            head = re.fullmatch(r"    (\w+):", line)
            if head:
                current = level["dataspaces"].setdefault(head.group(1), {})
                continue
            if current is None or not line.startswith("        "):
                continue
            for key, label in _STAT.items():
                if line.strip().startswith(label + " ") or line.strip().startswith(label + ":"):
                    current[key] = float(re.search(r": ([\d.e+]+)", line).group(1))
        level["dataspaces"] = {k: v for k, v in level["dataspaces"].items() if "reads" in v}
        out["levels"][name] = level
    m = re.search(r"\nCycles: (\d+)", text)
    if m:
        out["cycles"] = int(m.group(1))
    return out
