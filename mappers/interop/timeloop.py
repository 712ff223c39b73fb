"""Timeloop v0.4 problems and mappings: a problem as a :class:`~mappers.workloads.Layer`,
a Timeloop mapping as a :class:`~mappers.mapping.Mapping` and back.

**Problem.** ``problem.shape`` names the dimensions, the coefficients (with defaults) and
three data spaces, each a projection: one list per tensor axis of terms ``[dim]`` or
``[dim, coefficient]`` (the axis index is the sum of the terms). ``problem.instance``
gives the sizes and the coefficients' values. The data space with ``read_write: true`` is
the output ``O``; the other two are ``W`` and ``I`` by :data:`DATASPACE_ROLES` names
(``Weights``, ``Inputs``), else in the order listed (first ``W``, then ``I``). Sparse
densities and more than three data spaces cannot be expressed and are refused.

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
"""

from __future__ import annotations

import re
from collections.abc import Mapping as MappingT
from collections.abc import Sequence
from typing import Any

from accelerators.arch import OPERANDS, ArchSpec
from accelerators.interop.timeloop import DATASPACE_ROLES, TimeloopTranslation
from mappers.mapping import Mapping
from mappers.workloads import Layer, TensorSpec

__all__ = [
    "canonical",
    "layer_from_timeloop",
    "layer_to_timeloop",
    "mapping_from_timeloop",
    "mapping_to_timeloop",
    "stats_from_timeloop",
]


def layer_from_timeloop(problem: MappingT[str, Any], name: str | None = None) -> tuple[Layer, dict[str, str]]:
    """The Layer of a parsed Timeloop v0.4 problem (the file's top mapping or its
    ``problem`` value) and the data-space name -> operand map (module docstring)."""
    root = problem.get("problem", problem)
    if not isinstance(root, MappingT) or "shape" not in root or "instance" not in root:
        raise ValueError("a Timeloop problem is a mapping with 'shape' and 'instance'")
    shape, inst = root["shape"], dict(root["instance"])
    dims = [str(d) for d in shape.get("dimensions") or []]
    if not dims:
        raise ValueError("Timeloop problem: shape.dimensions is empty")
    coef = {str(c["name"]): c.get("default", 1) for c in shape.get("coefficients") or []}
    for c in coef:
        if c in inst:
            coef[c] = inst[c]
    dens = inst.pop("densities", None) or {}
    for ds, d in dens.items():
        value = d.get("density", 1) if isinstance(d, MappingT) else d
        if value != 1:
            raise ValueError(f"Timeloop problem: instance.densities gives {ds!r} density {value!r}; sparse tensors "
                             "cannot be expressed (only density 1)")
    sizes = {}
    for d in dims:
        v = inst.get(d)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"Timeloop problem: instance.{d} must be a positive integer, got {v!r}")
        sizes[d] = v
    spaces = shape.get("data_spaces") or []
    if len(spaces) != 3:
        raise ValueError(f"Timeloop problem: {len(spaces)} data spaces; a Layer has exactly three (W, I, O)")
    outs = [s for s in spaces if s.get("read_write")]
    if len(outs) != 1:
        raise ValueError("Timeloop problem: exactly one data space must be read_write (the output)")
    ins = [s for s in spaces if not s.get("read_write")]
    named = {DATASPACE_ROLES.get(str(s["name"])) for s in ins}
    order = ins if named != {"W", "I"} else sorted(ins, key=lambda s: DATASPACE_ROLES[str(s["name"])] != "W")
    roles = {str(order[0]["name"]): "W", str(order[1]["name"]): "I", str(outs[0]["name"]): "O"}
    tensors = {}
    for s in spaces:
        axes = []
        for ai, axis in enumerate(s.get("projection") or []):
            if isinstance(axis, str) or not isinstance(axis, list):
                raise ValueError(f"Timeloop problem: data space {s['name']!r} axis {ai}: write the projection "
                                 f"as lists of [dim] / [dim, coefficient] terms, got {axis!r}")
            terms = []
            for term in axis:
                if not isinstance(term, list) or not 1 <= len(term) <= 2 or term[0] not in sizes:
                    raise ValueError(f"Timeloop problem: data space {s['name']!r} axis {ai}: bad term {term!r} "
                                     f"(expected [dim] or [dim, coefficient], dims {dims})")
                c = 1 if len(term) == 1 else term[1]
                if isinstance(c, str):
                    if c not in coef:
                        raise ValueError(f"Timeloop problem: coefficient {c!r} is not declared in shape.coefficients")
                    c = coef[c]
                if isinstance(c, bool) or not isinstance(c, int) or c < 0:
                    raise ValueError(f"Timeloop problem: data space {s['name']!r}: coefficient {c!r} must be an "
                                     "integer >= 0")
                terms.append((str(term[0]), int(c)))
            axes.append(tuple(terms))
        tensors[roles[str(s["name"])]] = TensorSpec(roles[str(s["name"])], tuple(axes))
    window = any(len(axis) > 1 for axis in tensors["I"].axes)
    layer = Layer(name or str(shape.get("name", "timeloop")), "conv" if window else "tensor", sizes,
                  (tensors["W"], tensors["I"], tensors["O"]),
                  attrs={"timeloop_roles": dict(roles), "timeloop_dims": tuple(dims)})
    return layer, roles


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
