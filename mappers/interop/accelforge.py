"""AccelForge workloads (``workload:`` with an ``iteration_space_shape`` and ``einsums``)
as :class:`~mappers.workloads.Layer` s, and AccelForge mappings (``mapping:``, a LoopTree
of ``!Storage``, ``!Temporal``, ``!Spatial`` and ``!Compute`` nodes) as
:class:`~mappers.mapping.Mapping` s.

An einsum lists its tensor accesses, each a ``projection`` (one index expression per
tensor axis: a rank variable, or a sum of rank variables with integer coefficients such
as ``2*p + r``), the output marked ``output: True``; ``renames`` may say which tensor is
the ``input``, the ``weight`` and the ``output``. The iteration space gives each rank
variable's bound (``0 <= m < 128``). :func:`layer_from_accelforge` reads one einsum of
three tensors (``I``, ``W``, ``O`` by ``renames``, else the output and then the first two
inputs as ``I`` and ``W`` in the order listed); one of more or fewer tensors, an index
expression that is not linear with integer coefficients, or a bound that does not start
at 0 cannot be expressed and is refused by name.

**Mapping.** An AccelForge mapping of one einsum lists its nodes outermost first: a
``!Storage`` node (``tensors``, ``component``) holds the tensors' tiles in that memory from
that point down (the tile is what the loops below it touch); a ``!Temporal`` node
(``rank_variable``, ``tile_shape``) steps through the enclosing tile in tiles of
``tile_shape`` along that rank; a ``!Spatial`` node does the same across a fanout (its
``component`` is the architecture node whose ``spatial`` list has the dimension ``name``);
the ``!Compute`` node comes last. :func:`mapping_from_accelforge` reads it into the
coexplore :class:`Mapping` that has the same tiles, by these rules:

* a loop's factor is the enclosing tile's extent over ``tile_shape`` (a whole number;
  every rank is tiled down to 1 above the compute node);
* a level's position in the nest is its lowest ``!Storage`` node; the backing store is
  outermost, whatever its nodes' positions. A loop belongs to the level whose position is
  the last one above it (a tensor-less ``!Fanout`` level's position is its first spatial
  loop); a spatial loop must belong to the level of its fanout (a compute node's fanout
  is the memory's above it: the importer's rule), its ``name`` the X (first) or Y
  (second) entry of that ``spatial`` list;
* a level keeps the tensors its ``!Storage`` nodes name (the others it could hold are
  bypassed). A ``!Storage`` node of a level above the level's position holds the same
  tiles only if no loop between them of factor > 1 is over a rank of those tensors; one
  that is would hold a tensor at two places in one level, which a coexplore level cannot,
  and is refused;
* a level's temporal loops keep their order (coexplore nests a level's spatial loops
  inside its temporal ones; the counts do not depend on it).

Refused, each naming the node: ``!Sequential``, ``!Pipeline``, ``!Split``,
``!Reservation``, ``!Toll`` and fused loops (a set of rank variables) -- several einsums in
one tree; ``!Nested`` except as the last node (then read as the rest of the list); an
``initial_tile_shape`` other than the ``tile_shape`` (an uneven first tile); a tile shape
that does not divide its tile, or a rank not tiled to 1; a rank twice at one level with
another loop between, or twice on one fanout axis; a loop above every level; a spatial
loop outside its fanout's level; a tensor a level cannot hold.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping as MappingABC
from typing import Any

from accelerators.interop.accelforge import count
from accelerators.interop.timeloop import TimeloopTranslation
from mappers.interop.timeloop import canonical
from mappers.mapping import Mapping
from mappers.workloads import Layer, TensorSpec

__all__ = ["layer_from_accelforge", "mapping_from_accelforge"]

_BOUND = re.compile(r"^\s*0\s*<=\s*([A-Za-z_][A-Za-z_0-9]*)\s*<\s*(.+?)\s*$")
_TERM = re.compile(r"^\s*(?:(\d{1,18})\s*\*\s*)?([A-Za-z_][A-Za-z_0-9]*)\s*(?:\*\s*(\d{1,18}))?\s*$")


def layer_from_accelforge(workload: MappingABC[str, Any], einsum: str | None = None
                          ) -> tuple[Layer, dict[str, str], int]:
    """One einsum of a parsed AccelForge workload (the file's top mapping or its
    ``workload`` value) as a Layer, with its tensor names -> operands and its bits per
    value (``bits_per_value: {All: 8}``; one width for every tensor)."""
    root = workload.get("workload", workload)
    if not isinstance(root, MappingABC) or "einsums" not in root:
        raise ValueError("an AccelForge workload is a mapping with 'einsums' and 'iteration_space_shape'")
    einsums = root["einsums"]
    if einsum is None:
        if len(einsums) != 1:
            raise ValueError(f"the AccelForge workload has {len(einsums)} einsums "
                             f"({[e.get('name') for e in einsums]}); name one (einsum=...)")
        e = einsums[0]
    else:
        hits = [x for x in einsums if x.get("name") == einsum]
        if not hits:
            raise ValueError(f"the AccelForge workload has no einsum {einsum!r} ({[x.get('name') for x in einsums]})")
        e = hits[0]
    where = f"einsum {e.get('name')!r}"
    bpv = root.get("bits_per_value", {"All": 8})
    widths = {count(v, "bits_per_value") for v in (bpv.values() if isinstance(bpv, MappingABC) else [bpv])}
    if len(widths) != 1:
        raise ValueError(f"AccelForge {where}: bits_per_value {bpv} differ between tensors (or name none); "
                         "an ArchSpec has one word size")
    bits = widths.pop()
    shape = {}
    for var, b in (root.get("iteration_space_shape") or {}).items():
        if isinstance(b, int):
            shape[str(var)] = b
            continue
        m = _BOUND.match(str(b))
        if not m or m.group(1) != var:
            raise ValueError(f"AccelForge iteration_space_shape.{var}: {b!r} is not '0 <= {var} < N'")
        shape[str(var)] = count(m.group(2), f"iteration_space_shape.{var}")
    accesses = e.get("tensor_accesses") or []
    if len(accesses) != 3:
        raise ValueError(f"AccelForge {where}: {len(accesses)} tensors; a Layer has three (input, weight, output)")
    outs = [a for a in accesses if a.get("output")]
    if len(outs) != 1:
        raise ValueError(f"AccelForge {where}: exactly one tensor access must be the output")
    ren = e.get("renames") or {}
    roles: dict[str, str] = {}
    if all(k in ren for k in ("input", "weight", "output")):
        roles = {str(ren["input"]): "I", str(ren["weight"]): "W", str(ren["output"]): "O"}
    else:
        ins = [a for a in accesses if not a.get("output")]
        roles = {str(ins[0]["name"]): "I", str(ins[1]["name"]): "W", str(outs[0]["name"]): "O"}
    used: list[str] = []
    tensors = {}
    for a in accesses:
        tname = str(a["name"])
        if tname not in roles:
            raise ValueError(f"AccelForge {where}: renames name tensors {sorted(roles)}, not {tname!r}")
        axes = []
        for ix in a.get("projection") or []:
            terms = []
            for part in str(ix).split("+"):
                m = _TERM.match(part)
                if not m:
                    raise ValueError(f"AccelForge {where}: tensor {tname!r} index {ix!r} is not a sum of rank "
                                     "variables with integer coefficients")
                var = m.group(2)
                if var not in shape:
                    raise ValueError(f"AccelForge {where}: index {ix!r} uses {var!r}, which has no bound in "
                                     "iteration_space_shape")
                c = int(m.group(1) or 1) * int(m.group(3) or 1)
                terms.append((var.upper(), c))
                if var not in used:
                    used.append(var)
            axes.append(tuple(terms))
        tensors[roles[tname]] = TensorSpec(roles[tname], tuple(axes))
    dims = {v.upper(): shape[v] for v in shape if v in used}
    layer = Layer(str(e.get("name", "einsum")), "tensor", dims, (tensors["W"], tensors["I"], tensors["O"]),
                  attrs={"accelforge_roles": dict(roles)})
    return layer, roles, bits


_FUSION = ("Sequential", "Pipeline", "Split", "Reservation", "Toll", "Mapping")


def _flat_nodes(nodes: Any) -> list[Any]:
    """The mapping's nodes, outermost first, a last ``!Nested`` node read as the rest of
    the list (any other node with children refused)."""
    if not isinstance(nodes, list) or not nodes:
        raise ValueError("an AccelForge mapping is a mapping with 'nodes' (a list of !Storage, !Temporal, !Spatial "
                         "and !Compute nodes)")
    out: list[Any] = []
    for i, node in enumerate(nodes):
        tag = getattr(node, "tag", "")
        if tag in _FUSION:
            raise ValueError(f"AccelForge mapping node {i} (!{tag}): several einsums in one tree (fusion, "
                             "pipelining) cannot be expressed; give one einsum's mapping")
        if tag == "Nested":
            if i != len(nodes) - 1:
                raise ValueError(f"AccelForge mapping node {i} (!Nested): only a last !Nested node can be read "
                                 "(as the rest of the list)")
            out += _flat_nodes(node.get("nodes"))
            continue
        out.append(node)
    return out


def _spatial_axes(arch_spec: Any, tl: TimeloopTranslation) -> dict[tuple[str, str], tuple[int, int]]:
    """``(node name, fanout dimension name) -> (level, axis 0 X / 1 Y)`` of the AccelForge
    architecture ``arch_spec`` as :func:`~accelerators.interop.accelforge.arch_from_accelforge`
    translated it into ``tl`` (a compute node's fanout is the memory's above it)."""
    root = arch_spec.get("arch", arch_spec) if isinstance(arch_spec, MappingABC) else None
    nodes = root.get("nodes") if isinstance(root, MappingABC) else None
    if not isinstance(nodes, list):
        raise ValueError("arch_spec: expected the parsed AccelForge architecture (a mapping with 'nodes')")
    out: dict[tuple[str, str], tuple[int, int]] = {}
    above = None
    for node in nodes:
        name, tag = str(node.get("name")), getattr(node, "tag", "")
        owner = above if tag == "Compute" else name
        if tag in ("Memory", "Fanout"):
            above = name
        if owner is None:
            continue
        for axis, e in enumerate(node.get("spatial") or []):
            out[(name, str(e.get("name")))] = (tl.level_of(owner), axis)
    return out


def _tile(node: Any, where: str) -> int:
    """A loop node's tile shape (``tile_shape``, or the older ``tile_pattern: {stride,
    initial_tile_shape}``), refusing an uneven first tile."""
    pat = node.get("tile_pattern")
    if pat is not None:
        if not isinstance(pat, MappingABC):
            raise ValueError(f"AccelForge mapping {where}: tile_pattern must be a mapping")
        shape = pat.get("tile_shape", pat.get("stride"))
        first = pat.get("initial_tile_shape")
    else:
        shape, first = node.get("tile_shape"), node.get("initial_tile_shape")
    if isinstance(shape, bool) or not isinstance(shape, int) or shape < 1:
        raise ValueError(f"AccelForge mapping {where}: tile_shape must be a positive integer (the mapper's "
                         f"symbols are not read), got {shape!r}")
    if first is not None and first != shape:
        raise ValueError(f"AccelForge mapping {where}: initial_tile_shape {first!r} differs from tile_shape "
                         f"{shape}: an uneven first tile cannot be expressed")
    return shape


def mapping_from_accelforge(mapping: MappingABC[str, Any], tl: TimeloopTranslation, layer: Layer,
                            arch_spec: Any = None, roles: MappingABC[str, str] | None = None) -> Mapping:
    """A parsed AccelForge mapping (the file's top mapping or its ``mapping`` value) of
    ``layer`` (from :func:`layer_from_accelforge`) on ``tl`` (from
    :func:`~accelerators.interop.accelforge.arch_from_accelforge`), as a canonical
    :class:`Mapping` (rules in the module docstring). ``arch_spec``: the parsed AccelForge
    architecture, needed where the mapping has spatial loops (their dimension names are
    its ``spatial`` entries'); ``roles``: tensor names -> operands (default the layer's,
    as :func:`layer_from_accelforge` records them)."""
    root = mapping.get("mapping", mapping) if isinstance(mapping, MappingABC) else None
    flat = _flat_nodes(root.get("nodes") if isinstance(root, MappingABC) else None)
    arch = tl.arch
    L = arch.n_levels
    roles = dict(roles or layer.attrs.get("accelforge_roles") or tl.roles)
    axes = _spatial_axes(arch_spec, tl) if arch_spec is not None else None
    extent = dict(layer.dims)
    stores: dict[int, list[tuple[int, frozenset[str]]]] = {}
    loops: list[tuple[int, str, str, int, int | None, int | None]] = []   # index, kind, dim, factor, level, axis
    compute_at = None
    for i, node in enumerate(flat):
        tag = getattr(node, "tag", "")
        where = f"node {i} (!{tag})"
        if compute_at is not None:
            raise ValueError(f"AccelForge mapping {where}: a node below the !Compute node cannot be expressed")
        if tag == "Storage":
            li = tl.level_of(str(node.get("component")))
            ops = set()
            for t in node.get("tensors") or []:
                if str(t) not in roles:
                    raise ValueError(f"AccelForge mapping {where}: tensor {t!r} is none of the einsum's "
                                     f"({sorted(roles)})")
                ops.add(roles[str(t)])
            cannot = ops - set(arch.levels[li].tensors)
            if cannot:
                raise ValueError(f"AccelForge mapping {where}: {node.get('component')!r} cannot hold "
                                 f"{sorted(cannot)} (its may_keep)")
            stores.setdefault(li, []).append((i, frozenset(ops)))
        elif tag in ("Temporal", "Spatial"):
            var = node.get("rank_variable")
            if not isinstance(var, str):
                raise ValueError(f"AccelForge mapping {where}: rank_variable {var!r} is not one rank variable "
                                 "(a loop shared by several einsums cannot be expressed)")
            dim = var.upper()
            if dim not in extent:
                raise ValueError(f"AccelForge mapping {where}: rank variable {var!r} is none of the einsum's "
                                 f"({sorted(d.lower() for d in extent)})")
            t = _tile(node, where)
            if extent[dim] % t:
                raise ValueError(f"AccelForge mapping {where}: tile_shape {t} of {var!r} does not divide its tile "
                                 f"of {extent[dim]} (uneven last tiles cannot be expressed)")
            factor, extent[dim] = extent[dim] // t, t
            level = axis = None
            if tag == "Spatial":
                if axes is None:
                    raise ValueError(f"AccelForge mapping {where}: a spatial loop needs the architecture "
                                     "(arch_spec) to know which fanout dimension its name is")
                key = (str(node.get("component")), str(node.get("name")))
                if key not in axes:
                    raise ValueError(f"AccelForge mapping {where}: node {key[0]!r} has no fanout dimension "
                                     f"{key[1]!r} (known: {sorted(axes)})")
                level, axis = axes[key]
            loops.append((i, tag, dim, factor, level, axis))
        elif tag == "Compute":
            compute_at = i
        else:
            raise ValueError(f"AccelForge mapping {where}: a !{tag or type(node).__name__} node cannot be "
                             "expressed (!Storage, !Temporal, !Spatial, !Compute and a last !Nested are read)")
    if compute_at is None:
        raise ValueError("AccelForge mapping: no !Compute node")
    left = {d.lower(): e for d, e in extent.items() if e != 1}
    if left:
        raise ValueError(f"AccelForge mapping: ranks {left} end with tiles larger than 1 at the compute node; "
                         "tile every rank down to 1")
    # each level's position: its lowest storage node; the backing store outermost; a level
    # without storage nodes (tensor-less, or keeping nothing) at its first spatial loop
    anchor: dict[int, int] = {L - 1: -1}
    for li, nodes_at in stores.items():
        if li < L - 1:
            anchor[li] = max(j for j, _ in nodes_at)
    for i, _, _, _, level, _ in loops:
        if level is not None and level not in anchor:
            anchor[level] = i
    placed = sorted(anchor, reverse=True)
    for outer, inner in itertools.pairwise(placed):
        if anchor[inner] <= anchor[outer]:
            raise ValueError(f"AccelForge mapping: {tl.level_names[inner]!r} is placed (node {anchor[inner]}) at or "
                             f"above {tl.level_names[outer]!r} (node {anchor[outer]}), which is outside it in the "
                             "architecture")

    def owner(i: int) -> int:
        return min((li for li in anchor if anchor[li] < i), key=lambda li: li)

    temporal: list[dict[str, int]] = [{} for _ in range(L)]
    sx: list[dict[str, int]] = [{} for _ in range(L)]
    sy: list[dict[str, int]] = [{} for _ in range(L)]
    order: list[list[str]] = [[] for _ in range(L)]
    for i, tag, dim, factor, level, axis in loops:
        if factor == 1:
            continue
        li = owner(i)
        if tag == "Spatial":
            if li != level:
                raise ValueError(f"AccelForge mapping node {i} (!Spatial): a loop across "
                                 f"{tl.level_names[level]!r}'s fanout placed among {tl.level_names[li]!r}'s loops")
            group = sx if axis == 0 else sy
            if dim in group[li]:
                raise ValueError(f"AccelForge mapping node {i} (!Spatial): {dim.lower()!r} twice on one fanout "
                                 "axis cannot be expressed")
            group[li][dim] = factor
            continue
        if dim in temporal[li] and order[li][-1] != dim:
            raise ValueError(f"AccelForge mapping node {i} (!Temporal): {dim.lower()!r} twice at "
                             f"{tl.level_names[li]!r} with another loop between cannot be expressed")
        temporal[li][dim] = temporal[li].get(dim, 1) * factor
        if dim not in order[li]:
            order[li].append(dim)
    # a level's storage nodes above its position must hold the same tiles there
    moving = [(i, dim) for i, _, dim, f, _, _ in loops if f > 1]
    for li, nodes_at in stores.items():
        if li == L - 1:
            continue
        for j, ops in nodes_at:
            for i, dim in moving:
                if j < i < anchor[li] and any(dim in layer.tensor(op).dims for op in ops):
                    raise ValueError(f"AccelForge mapping node {j} (!Storage): {tl.level_names[li]!r} holds "
                                     f"{sorted(ops)} above the loop over {dim.lower()!r} (node {i}) and its other "
                                     f"tensors below it (node {anchor[li]}); a coexplore level holds its tensors "
                                     "at one place in the nest")
    kept = [frozenset().union(*(ops for _, ops in stores.get(li, []))) for li in range(L)]
    bypass = [frozenset(arch.levels[li].tensors - kept[li]) if li < L - 1 else frozenset() for li in range(L)]
    m = Mapping.create(arch, temporal, sx, sy, [tuple(o) for o in order], bypass)
    return canonical(m, layer, arch)
