"""A layer and a mapping in ZigZag 3.9.1's schemas, and ZigZag's mappings read back.

ZigZag (``zigzag-dse``) takes a workload (one entry per layer: its loop dimensions and
sizes, operand precisions, the input's relation to output and filter indices), a spatial
mapping (per operational-array dimension, the loops unrolled on it) and a temporal
mapping (per operand, one list of loops per memory level of that operand, innermost
first). The writers here give those for a coexplore :class:`~mappers.workloads.Layer`
and :class:`~mappers.mapping.Mapping`; the loop names follow ZigZag's Eyeriss naming
(:data:`DIM`: ``OY`` output rows, ``FY`` filter rows, ``B`` batch). Only ungrouped
convolutions (and GEMMs as 1x1 convolutions) are written; their agreement with ZigZag's
counts is checked by :mod:`experiments.validation.zigzag_crossval` and
:mod:`experiments.validation.zigzag_bundled`.

**Reading a temporal mapping.** :func:`mapping_from_zigzag` reads ZigZag's allocated
temporal mapping -- per layer operand, one list of loops per memory level of that operand,
innermost first, as ZigZag reports it (a cost model evaluation's ``temporal_mapping``:
``[dim, factor]`` pairs or their printed ``('K', 4)`` form) and as :func:`zigzag_temporal`
writes it -- with the spatial unrolling (:func:`spatial_from_zigzag`) into a coexplore
:class:`Mapping` on the translated accelerator (:func:`accelerators.interop.zigzag.arch_from_zigzag`):
the operand's ``k``-th memory is the ``k``-th level that holds it, and its loops are those
of the levels above the previous one up to it. Where that is not one loop nest it is
refused by name: operands whose loops, concatenated, differ (a different order); ZigZag's
*uneven* mappings, whose memories of two operands at one level end at different loops (a
coexplore level ends at one); a level count that differs from the translation's; a rank
twice at one level with another between; factors that do not multiply to the layer's
sizes. A mapping file's ``temporal_ordering`` (a loop order alone, ``*`` factors allowed) is
refused too: which memory each of its loops lands in is decided by ZigZag's memory
allocator when it runs (``zigzag/opt/loma/memory_allocator.py``, capacity- and
access-driven), not by the file; give the allocated mapping ZigZag reports
(``CostModelEvaluation.temporal_mapping.mapping_dic_origin``). The form ZigZag writes to its
``<layer>_complete.json`` is that mapping after its stationarity merge (an operand's
irrelevant loops at the bottom of a memory moved into the memory below), which differs per
operand and is refused as uneven where it does.

**Strict reading.** Every key of a workload layer or of a mapping-file entry is read or
refused by name (a ``ValueError`` naming the layer or entry, the key and why). What
coexplore's per-layer model does not use -- the :data:`WORKLOAD_IGNORABLE` and
:data:`MAPPING_IGNORABLE` names -- is refused too unless the caller names it in
``ignore``; what was dropped is then listed in the result's ``dropped``
(:class:`ZigZagLayers`, :class:`ZigZagSpatial`).
"""

from __future__ import annotations

import math
import re
from typing import Any

from accelerators.interop.zigzag import MEMORY_OPERAND
from mappers.interop.timeloop import canonical
from mappers.mapping import Mapping
from mappers.workloads import Layer, TensorSpec

__all__ = [
    "DIM",
    "MAPPING_IGNORABLE",
    "WORKLOAD_IGNORABLE",
    "ZIGZAG_MAC_FREE",
    "ZigZagLayers",
    "ZigZagSpatial",
    "layers_from_zigzag",
    "mapping_from_zigzag",
    "spatial_from_zigzag",
    "zigzag_accelerator",
    "zigzag_spatial",
    "zigzag_temporal",
    "zigzag_workload",
]

#: our dimension -> ZigZag's (Eyeriss/ZigZag naming: OY output rows, FY filter rows)
DIM = {"N": "B", "K": "K", "C": "C", "P": "OY", "Q": "OX", "R": "FY", "S": "FX"}
_OUR_DIM = {v: k for k, v in DIM.items()}
_OPS = ("W", "I", "O")


def zigzag_workload(layer: Layer, bits: int = 16) -> list[dict[str, Any]]:
    """The one-layer workload in ZigZag's schema, every operand ``bits`` wide."""
    d = layer.dims
    sh, sw = layer.attrs.get("stride", (1, 1)) if isinstance(layer.attrs.get("stride"), tuple) else (
        (layer.attrs.get("stride", 1),) * 2)
    return [{
        "id": 0, "name": layer.name, "operator_type": "Conv",
        "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
        "dimension_relations": [f"ix={sw}*ox+1*fx", f"iy={sh}*oy+1*fy"],
        "loop_dims": [DIM[x] for x in ("N", "K", "C", "P", "Q", "R", "S")],
        "loop_sizes": [d[x] for x in ("N", "K", "C", "P", "Q", "R", "S")],
        "operand_precision": {"W": bits, "I": bits, "O": bits, "O_final": bits},
        "operand_source": {"W": 0, "I": 0},
        "pr_loop_dims": ["IX", "IY"],
        "pr_loop_sizes": [(d["Q"] - 1) * sw + d["S"], (d["P"] - 1) * sh + d["R"]],
        "padding": [[0, 0], [0, 0]],
    }]


def zigzag_temporal(layer: Layer, arch: Any, mapping: Mapping) -> dict[str, list[list[list[Any]]]]:
    """ZigZag's temporal mapping of ``mapping``: layer operand (``W``, ``I``, ``O``) -> one
    list per memory level of that operand, innermost first, of ``[dim, factor]`` loops
    innermost first. A level that does not keep the operand passes its loops on to the
    operand's next level up, so every loop sits at the memory that holds the operand
    while it runs. Unit factors are left out."""
    temporal: dict[str, list[list[list[Any]]]] = {}
    for op in _OPS:
        levels: list[list[list[Any]]] = []
        pending: list[list[Any]] = []
        for lv in range(arch.n_levels):
            order = mapping.full_order(lv, list(layer.dims))  # outermost first
            pending += [[DIM[d], mapping.temporal[lv][d]] for d in reversed(order)
                        if mapping.temporal[lv].get(d, 1) > 1]
            if mapping.keeps(arch, lv, op):
                levels.append(pending)
                pending = []
        temporal[op] = levels
    return temporal


def zigzag_spatial(mapping: Mapping, axes: dict[tuple[int, str], str], dimensions: list[str],
                   n_levels: int) -> dict[str, list[str]]:
    """ZigZag's spatial mapping: operational-array dimension -> ``"DIM, factor"`` loops.

    ``axes`` maps ``(level, "x" | "y")`` to the array dimension that level's fanout axis
    unrolls. An array dimension nothing is unrolled on is pinned to ``"K, 1"`` (left out,
    ZigZag's spatial-mapping generator would fill it). Raises ``ValueError`` where the
    mapping unrolls a level axis that has no array dimension."""
    spatial: dict[str, list[str]] = {d: [] for d in dimensions}
    for (li, ax), d_zz in axes.items():
        facs = (mapping.spatial_x if ax == "x" else mapping.spatial_y)[li]
        spatial[d_zz] += [f"{DIM[d]}, {f}" for d, f in facs.items() if f > 1]
    for li in range(n_levels):
        for ax in ("x", "y"):
            facs = (mapping.spatial_x if ax == "x" else mapping.spatial_y)[li]
            if (li, ax) not in axes and any(f > 1 for f in facs.values()):
                raise ValueError(f"mapping unrolls {facs} on level {li} axis {ax}, which has no array dimension")
    return {k: v or ["K, 1"] for k, v in spatial.items()}


MAPPING_IGNORABLE: dict[str, str] = {
    "temporal_ordering": "an entry's loop order, which ZigZag's memory allocator turns into a temporal mapping "
                         "when it runs: the spatial reader does not read it",
    "spatial_mapping_hint": "the dimensions ZigZag's spatial-mapping generator may try on each array dimension, "
                            "a search hint, not a mapping",
}
"""What :func:`spatial_from_zigzag`'s ``ignore`` may name, and what dropping it leaves out."""

_ENTRY_KEYS = {"name", "spatial_mapping", "memory_operand_links", "spatial_mapping_hint", "temporal_ordering"}
_DEFAULT_LINKS = {"O": "O", "I": "I1", "W": "I2"}


class ZigZagSpatial(dict):
    """A spatial unrolling read from a ZigZag mapping file (array dimension -> ``[(our
    dimension, factor), ...]``), with what ``ignore`` dropped (``dropped``, one line each)."""

    dropped: tuple[str, ...] = ()


def _ignore_names(ignore: Any, allowed: dict[str, str], what: str) -> frozenset[str]:
    ig = frozenset(ignore)
    bad = sorted(ig - set(allowed))
    if bad:
        raise ValueError(f"ignore names {bad}, which are not droppable {what} keys (droppable: {sorted(allowed)})")
    return ig


def _shown(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else f"{r[:57]}..."


def spatial_from_zigzag(mapping_file: list[dict[str, Any]] | None, layer: str | None = None,
                        operator: str | None = None, *, ignore: Any = ()) -> ZigZagSpatial | None:
    """The spatial unrolling of a ZigZag mapping file's entry for a layer: array dimension
    -> ``[(our dimension, factor), ...]``; ``None`` without a file. The entry is chosen
    as ZigZag chooses it: the one named ``layer``, else the one named ``operator`` (the
    layer's ``operator_type``), else ``default``.

    Its keys are read or refused: ``memory_operand_links`` must be ZigZag's default
    (``O -> O``, ``I -> I1``, ``W -> I2``: coexplore's operands are fixed);
    ``temporal_ordering`` and ``spatial_mapping_hint`` (:data:`MAPPING_IGNORABLE`) are
    refused unless ``ignore`` names them, and are then listed in the result's ``dropped``;
    any other key is refused."""
    if not mapping_file:
        return None
    ig = _ignore_names(ignore, MAPPING_IGNORABLE, "ZigZag mapping")
    if not isinstance(mapping_file, list) or not all(isinstance(e, dict) for e in mapping_file):
        raise ValueError("a ZigZag mapping file is a list of entries (name, spatial_mapping, ...)")
    names = [e.get("name") for e in mapping_file]
    pick = next((n for n in (layer, operator, "default") if n is not None and n in names), None)
    if pick is None:
        raise ValueError("the ZigZag mapping file has no 'default' entry")
    entry = mapping_file[names.index(pick)]
    where = f"ZigZag mapping entry {pick!r}"
    unknown = sorted(str(k) for k in entry if k not in _ENTRY_KEYS)
    if unknown:
        raise ValueError(f"{where}: key {unknown[0]!r} is not one coexplore reads from ZigZag 3.9.1's mapping "
                         f"schema (read: {sorted(_ENTRY_KEYS)}); cannot be expressed")
    links = entry.get("memory_operand_links")
    if links is not None and dict(links) != _DEFAULT_LINKS:
        raise ValueError(f"{where}: memory_operand_links {_shown(links)} differ from {_DEFAULT_LINKS}; coexplore's "
                         "operands W, I, O are ZigZag's I2, I1, O, and another linking cannot be expressed")
    out = ZigZagSpatial()
    dropped = []
    for key in ("temporal_ordering", "spatial_mapping_hint"):
        if entry.get(key):
            if key not in ig:
                raise ValueError(f"{where}: {key} = {_shown(entry[key])}: {MAPPING_IGNORABLE[key]}; refused rather "
                                 f"than dropped (ignore=({key!r},) drops it, listed in the result's dropped)")
            dropped.append(f"{pick}.{key} = {_shown(entry[key])}")
    for d_zz, loops in (entry.get("spatial_mapping") or {}).items():
        for loop in loops:
            dim, f = (x.strip() for x in loop.split(","))
            if dim not in _OUR_DIM:
                raise ValueError(f"spatial loop {loop!r} on {d_zz}: dimension {dim!r} is not one of {sorted(_OUR_DIM)}")
            out.setdefault(d_zz, []).append((_OUR_DIM[dim], int(f)))
    out.dropped = tuple(dropped)
    return out


def _port(name: str, kind: str, bits: int, allocation: list[str]) -> dict[str, Any]:
    return {"name": name, "type": kind, "bandwidth_min": bits, "bandwidth_max": bits, "allocation": allocation}


def _alloc(ops: list[str], reading: bool) -> list[str]:
    out = []
    for op in ops:
        m = MEMORY_OPERAND[op]
        if reading:
            out += [f"{m}, tl"] + ([f"{m}, th"] if op == "O" else [])
        else:
            out += [f"{m}, fh"] + ([f"{m}, fl"] if op == "O" else [])
    return out


def zigzag_accelerator(arch: Any, mapping: Mapping) -> dict[str, Any]:
    """An RF -> GLB -> DRAM ArchSpec in ZigZag's accelerator schema, each operand in the
    memories the mapping keeps it in (ZigZag has no bypass of its own: a memory holds the
    operands it lists); energies per word from the ArchSpec; one-word ports; the GLB's
    fanout as the two array dimensions ``D1`` (x) and ``D2`` (y)."""
    if arch.n_levels != 3:
        raise ValueError(f"zigzag_accelerator writes RF -> GLB -> DRAM; {arch.name!r} has {arch.n_levels} levels")
    bits = arch.word_bits
    rf, glb, dram = arch.levels
    mems: dict[str, Any] = {}
    for op in _OPS:
        if mapping.keeps(arch, 0, op):
            mems[f"rf_{op.lower()}"] = {
                "size": int(rf.capacity_of(op)) * bits, "r_cost": rf.read_energy_pj[op],
                "w_cost": rf.write_energy_pj[op], "area": 0.0, "latency": 1, "operands": [MEMORY_OPERAND[op]],
                "ports": [_port("r_port_1", "read", bits, _alloc([op], True)),
                          _port("w_port_1", "write", bits, _alloc([op], False))],
                "served_dimensions": [],
            }
    glb_ops = [op for op in _OPS if mapping.keeps(arch, 1, op)]
    if glb_ops:
        mems["glb"] = {
            "size": int(glb.capacity_words) * bits, "r_cost": glb.read_energy_pj["I"],
            "w_cost": glb.write_energy_pj["I"], "area": 0.0, "latency": 1,
            "operands": [MEMORY_OPERAND[op] for op in glb_ops],
            "ports": [_port("r_port_1", "read", bits, _alloc(glb_ops, True)),
                      _port("w_port_1", "write", bits, _alloc(glb_ops, False))],
            "served_dimensions": ["D1", "D2"],
        }
    mems["dram"] = {
        "size": 10**12, "r_cost": dram.read_energy_pj["I"], "w_cost": dram.write_energy_pj["I"], "area": 0.0,
        "latency": 1, "operands": [MEMORY_OPERAND[op] for op in _OPS],
        "ports": [_port("rw_port_1", "read_write", bits, _alloc(list(_OPS), True) + _alloc(list(_OPS), False))],
        "served_dimensions": ["D1", "D2"],
    }
    return {
        "name": arch.name, "memories": mems,
        "operational_array": {"unit_energy": arch.mac_energy_pj, "unit_area": 1.0, "dimensions": ["D1", "D2"],
                              "sizes": [glb.fanout_x, glb.fanout_y]},
    }


_ACCESS = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)((?:\[[A-Za-z_0-9]+\])+)")
_RELATION = re.compile(r"^\s*([a-z_][a-z_0-9]*)\s*=\s*(.+)$")
_REL_TERM = re.compile(r"^\s*(?:(\d{1,18})\s*\*\s*)?([a-z_][a-z_0-9]*)\s*$")
#: ZigZag operator types with no multiply-accumulate layer of their own (skipped)
ZIGZAG_MAC_FREE = ("Add", "Pooling", "Relu", "Concat")


def _zz_axis(ix: str, relations: dict[str, list[tuple[str, int]]], dims: list[str], rename: dict[str, str],
             where: str) -> tuple[tuple[str, int], ...]:
    """One operand axis: a loop index, or a relation's terms, in our dimension names."""
    out = []
    for var, c in relations.get(ix, [(ix, 1)]):
        if var.upper() not in dims:
            raise ValueError(f"{where}: index {var!r} is neither a loop dimension {dims} nor defined by "
                             "dimension_relations")
        out.append((rename[var.upper()], c))
    return tuple(out)


WORKLOAD_IGNORABLE: dict[str, str] = {
    "mac_free_layers": "layers without multiply-accumulates (ZigZag's Pooling, Add, ... and equations without "
                       "+=): coexplore's layers are MAC loop nests, so these are not evaluated",
    "operand_source": "which layer produces an operand, where it names another layer (the layer graph): "
                      "coexplore evaluates each layer alone and does not keep the graph",
    "padding": "the padding ZigZag subtracts from an input's extent: coexplore counts the whole window the loops "
               "span",
    "pr_loop_sizes": "input extents other than the window the loops span (ZigZag caps the input at them)",
}
"""What :func:`layers_from_zigzag`'s ``ignore`` may name, and what dropping it leaves out."""

_LAYER_KEYS = {"id", "name", "operator_type", "equation", "dimension_relations", "loop_dims", "loop_sizes",
               "operand_precision", "operand_source", "pr_loop_dims", "pr_loop_sizes", "padding"}
_PRECISION_KEYS = {"W", "I", "O", "O_final"}


class ZigZagLayers(list):
    """The MAC layers of a ZigZag workload (a list of :class:`~mappers.workloads.Layer`),
    with what ``ignore`` dropped (``dropped``, one line each)."""

    dropped: tuple[str, ...] = ()


def layers_from_zigzag(workload: Any, *, ignore: Any = ()) -> ZigZagLayers:
    """The MAC layers of a ZigZag 3.x workload (the parsed ``workload/*.yaml``: a list of
    layers, each with an ``equation`` such as ``O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]``,
    ``dimension_relations`` such as ``ix=2*ox+1*fx``, ``loop_dims`` and ``loop_sizes``).

    Dimensions are renamed as :data:`DIM` reads back (``B`` -> ``N``, ``OY`` -> ``P``, ...;
    others keep their names); ``W``, ``I`` and the output ``O`` are the equation's operands
    by those names. A layer whose equation is not ``O[...] += W[...] * I[...]`` (or
    ``I * W``) with linear index relations is refused, naming the layer and its operator.

    Every key of a layer is read or refused: ``operand_precision`` (its ``W``, ``I``,
    ``O``, ``O_final`` bits) is kept in each Layer's ``attrs["operand_precision"]``, for
    the accelerator's word sizes (:func:`accelerators.interop.zigzag.arch_from_zigzag`'s
    ``bits``); ``operand_source`` naming only the layer itself (the network's input) and
    ``pr_loop_sizes`` equal to the window the loops span, with no ``padding``, say nothing
    the model lacks. The :data:`WORKLOAD_IGNORABLE` cases -- layers without MACs (the
    :data:`ZIGZAG_MAC_FREE` operator types and equations without ``+=``), another layer as
    an operand's source, padding, other input extents -- are refused unless ``ignore``
    names them; what was dropped is listed in the result's ``dropped``."""
    ig = _ignore_names(ignore, WORKLOAD_IGNORABLE, "ZigZag workload")
    if not isinstance(workload, list):
        raise ValueError("a ZigZag workload is a list of layers")
    out = ZigZagLayers()
    dropped: list[str] = []

    def drop(where: str, key: str, value: Any) -> None:
        if key not in ig:
            raise ValueError(f"{where}: {_shown(value)}: {WORKLOAD_IGNORABLE[key]}; refused rather than dropped "
                             f"(ignore=({key!r},) drops it, listed in the result's dropped)")
        dropped.append(f"{where}: {_shown(value)}")

    for i, entry in enumerate(workload):
        if not isinstance(entry, dict):
            raise ValueError(f"ZigZag workload entry {i} is not a mapping")
        name = str(entry.get("name") or f"layer{entry.get('id', i)}")
        op = str(entry.get("operator_type", "?"))
        where = f"ZigZag layer {name!r} ({op})"
        unknown = sorted(str(k) for k in entry if k not in _LAYER_KEYS)
        if unknown:
            raise ValueError(f"{where}: key {unknown[0]!r} is not one coexplore reads from ZigZag 3.9.1's workload "
                             f"schema (read: {sorted(_LAYER_KEYS)}); cannot be expressed")
        eq = str(entry.get("equation", "")).replace(" ", "")
        if op in ZIGZAG_MAC_FREE or "+=" not in eq:
            drop(f"{where} equation", "mac_free_layers", eq)
            continue
        lhs, _, rhs = eq.partition("+=")
        accesses = {m.group(1): re.findall(r"\[([A-Za-z_0-9]+)\]", m.group(2)) for m in _ACCESS.finditer(eq)}
        out_names = [m.group(1) for m in _ACCESS.finditer(lhs)]
        in_names = [m.group(1) for m in _ACCESS.finditer(rhs)]
        if len(out_names) != 1 or sorted(in_names) != ["I", "W"] or "*" not in rhs:
            raise ValueError(f"{where}: equation {eq!r} is not O[...] += W[...] * I[...]; it cannot be expressed")
        dims_zz = [str(d) for d in entry.get("loop_dims") or []]
        sizes = entry.get("loop_sizes") or []
        if not isinstance(sizes, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1
                                                  for s in sizes):
            raise ValueError(f"{where}: loop_sizes must be a list of positive whole numbers, got {_shown(sizes)}")
        if len(dims_zz) != len(sizes) or not dims_zz:
            raise ValueError(f"{where}: loop_dims and loop_sizes must be lists of the same length")
        relations: dict[str, list[tuple[str, int]]] = {}
        for rel in entry.get("dimension_relations") or []:
            m = _RELATION.match(str(rel))
            if not m:
                raise ValueError(f"{where}: dimension relation {rel!r} is not 'ix=2*ox+1*fx'")
            terms = []
            for part in m.group(2).split("+"):
                t = _REL_TERM.match(part)
                if not t:
                    raise ValueError(f"{where}: dimension relation {rel!r} is not linear with integer coefficients")
                terms.append((t.group(2), int(t.group(1) or 1)))
            relations[m.group(1)] = terms
        rename = {d: _OUR_DIM.get(d, d) for d in dims_zz}
        size_of = {rename[d]: s for d, s in zip(dims_zz, sizes)}

        tensors = {role: TensorSpec(role, tuple(_zz_axis(ix, relations, dims_zz, rename, where) for ix in accesses[zz]))
                   for role, zz in (("W", "W"), ("I", "I"), ("O", out_names[0]))}
        used = [d for d in size_of if any(d in t.dims for t in tensors.values())]
        if set(used) != set(size_of):
            raise ValueError(f"{where}: loop dimensions {sorted(set(size_of) - set(used))} index no operand")
        attrs: dict[str, Any] = {"zigzag_operator": op}
        prec = entry.get("operand_precision")
        if prec is not None:
            if not isinstance(prec, dict) or set(prec) - _PRECISION_KEYS or not all(
                    isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in prec.values()):
                raise ValueError(f"{where}: operand_precision {_shown(prec)} is not bits per W, I, O, O_final")
            attrs["operand_precision"] = dict(prec)
        own = entry.get("id", i)
        src = entry.get("operand_source")
        if src is not None:
            if not isinstance(src, dict) or set(src) - {"W", "I"}:
                raise ValueError(f"{where}: operand_source {_shown(src)} is not a layer id per W, I")
            if any(v != own for v in src.values()):
                drop(f"{where} operand_source", "operand_source", src)
        _window_keys(entry, where, relations, size_of, rename, drop)
        out.append(Layer(name, "conv" if relations else "gemm", size_of, (tensors["W"], tensors["I"], tensors["O"]),
                         attrs=attrs))
    out.dropped = tuple(dropped)
    return out


def _window_keys(entry: dict[str, Any], where: str, relations: dict[str, list[tuple[str, int]]],
                 size_of: dict[str, int], rename: dict[str, str], drop: Any) -> None:
    """``pr_loop_dims`` / ``pr_loop_sizes`` / ``padding``: read where they say what the
    loops already do (each input extent the window its relation spans, no padding)."""
    pads = entry.get("padding")
    if pads is not None and any(p not in (0, None) for pair in pads for p in (pair if isinstance(pair, list)
                                                                                  else [pair])):
        drop(f"{where} padding", "padding", pads)
    pr_dims, pr_sizes = entry.get("pr_loop_dims"), entry.get("pr_loop_sizes")
    if pr_sizes is None:
        return
    if not isinstance(pr_dims, list) or not isinstance(pr_sizes, list) or len(pr_dims) != len(pr_sizes):
        raise ValueError(f"{where}: pr_loop_dims and pr_loop_sizes must be lists of the same length")
    for dim, size in zip(pr_dims, pr_sizes):
        rel = relations.get(str(dim).lower())
        if rel is None:
            raise ValueError(f"{where}: pr_loop_dims names {dim!r}, which no dimension relation defines")
        window = sum(c * (size_of[rename[v.upper()]] - 1) for v, c in rel) + 1
        if size != window:
            drop(f"{where} pr_loop_sizes {dim}", "pr_loop_sizes", size)


_LOOP_TEXT = re.compile(r"^\(?\s*'?([A-Za-z_][A-Za-z_0-9]*)'?\s*,\s*(\d{1,12})\s*\)?$")


def _zz_loop(loop: Any, where: str) -> tuple[str, int]:
    """One ``[dim, factor]`` loop (or its printed form ``('K', 4)``) in our names."""
    if isinstance(loop, str):
        m = _LOOP_TEXT.match(loop.strip())
        if not m:
            raise ValueError(f"ZigZag temporal mapping {where}: loop {loop!r} is not (dim, factor)")
        dim, f = m.group(1), int(m.group(2))
    elif isinstance(loop, list | tuple) and len(loop) == 2:
        dim, f = str(loop[0]), loop[1]
        if isinstance(f, bool) or not isinstance(f, int) or f < 1:
            raise ValueError(f"ZigZag temporal mapping {where}: loop {loop!r} needs a whole factor >= 1 "
                             "('*' is a temporal_ordering's, left to ZigZag's allocator)")
    else:
        raise ValueError(f"ZigZag temporal mapping {where}: loop {loop!r} is not [dim, factor]")
    return _OUR_DIM.get(dim, dim), f


def mapping_from_zigzag(temporal: Any, tr: Any, layer: Layer,
                        spatial: dict[str, list[tuple[str, int]]] | None = None) -> Mapping:
    """ZigZag's allocated temporal mapping (``{"W": [...], "I": [...], "O": [...]}``,
    module docstring) with its spatial unrolling (array dimension -> ``[(our dimension,
    factor)]``, as :func:`spatial_from_zigzag` gives it) as a canonical :class:`Mapping`
    on ``tr`` (:class:`accelerators.interop.zigzag.Translation`). A ``temporal_ordering``
    (a list of loops, or a mapping-file entry holding one) is refused: see the module
    docstring."""
    if isinstance(temporal, dict) and "temporal_ordering" in temporal:
        temporal = temporal["temporal_ordering"]
    if isinstance(temporal, list):
        raise ValueError("a ZigZag temporal_ordering is a loop order whose memory levels ZigZag's memory allocator "
                         "chooses when it runs (by capacities and accesses); it is not a mapping until then. Give "
                         "the allocated temporal mapping ZigZag reports ({operand: [loops per memory level]})")
    if not isinstance(temporal, dict):
        raise ValueError("a ZigZag temporal mapping is {operand: [[loops of memory level 0], ...]} for W, I and O")
    unknown = sorted(str(k) for k in temporal if k not in _OPS)
    if unknown:
        raise ValueError(f"ZigZag temporal mapping: key {unknown[0]!r} is not an operand W, I or O; cannot be "
                         "expressed")
    arch = tr.arch
    L = arch.n_levels
    cut: dict[int, tuple[int, str]] = {}
    seqs: dict[str, list[tuple[str, int]]] = {}
    for op in _OPS:
        lists = temporal.get(op)
        if not isinstance(lists, list):
            raise ValueError(f"ZigZag temporal mapping: no loop lists for operand {op!r}")
        held = [li for li in range(L) if op in arch.levels[li].tensors]
        if len(lists) != len(held):
            raise ValueError(f"ZigZag temporal mapping: operand {op!r} has {len(lists)} memory levels; "
                             f"{arch.name!r} holds it at {len(held)} ({[arch.levels[li].name for li in held]})")
        seq: list[tuple[str, int]] = []
        for k, (li, loops) in enumerate(zip(held, lists)):
            if not isinstance(loops, list):
                raise ValueError(f"ZigZag temporal mapping: operand {op!r} memory level {k} is not a list of loops")
            seq += [_zz_loop(loop, f"operand {op!r} memory level {k}") for loop in loops]
            seq = [x for x in seq if x[1] > 1]
            if li in cut and cut[li][0] != len(seq):
                raise ValueError(f"ZigZag temporal mapping: at {arch.levels[li].name!r} the memories of {cut[li][1]!r} "
                                 f"and {op!r} end at different loops (loop {cut[li][0]} and {len(seq)}, innermost "
                                 "first): an uneven mapping, which a coexplore level (one set of loops) cannot express")
            cut.setdefault(li, (len(seq), op))
        seqs[op] = seq
    for op in ("I", "O"):
        if seqs[op] != seqs["W"]:
            raise ValueError(f"ZigZag temporal mapping: the loops of {op!r} ({seqs[op]}) and of 'W' ({seqs['W']}) "
                             "are not one loop nest")
    loops = seqs["W"]
    bounds, last = [], 0
    for li in range(L):
        end = cut[li][0] if li in cut else last
        if end < last:
            raise ValueError(f"ZigZag temporal mapping: {arch.levels[li].name!r} ends at loop {end}, below the "
                             f"level under it (loop {last}): ZigZag's per-operand memory hierarchies need not nest, "
                             "a coexplore level's tile holds every loop below it; cannot be expressed")
        bounds.append((last, end))
        last = end
    temporal_f: list[dict[str, int]] = [{} for _ in range(L)]
    order: list[list[str]] = [[] for _ in range(L)]
    for li, (a, b) in enumerate(bounds):
        inner_first: list[str] = []
        for dim, f in loops[a:b]:
            if dim not in layer.dims:
                raise ValueError(f"ZigZag temporal mapping: loop dimension {dim!r} is none of the layer's "
                                 f"({sorted(layer.dims)})")
            if dim in temporal_f[li] and inner_first[-1] != dim:
                raise ValueError(f"ZigZag temporal mapping: {dim!r} twice at {arch.levels[li].name!r} with another "
                                 "loop between cannot be expressed")
            temporal_f[li][dim] = temporal_f[li].get(dim, 1) * f
            if dim not in inner_first:
                inner_first.append(dim)
        order[li] = inner_first[::-1]
    sx: list[dict[str, int]] = [{} for _ in range(L)]
    sy: list[dict[str, int]] = [{} for _ in range(L)]
    where_axis = {d_zz: key for key, d_zz in tr.axes.items()}
    for d_zz, unrolled in (spatial or {}).items():
        if d_zz not in where_axis:
            if any(f > 1 for _, f in unrolled):
                raise ValueError(f"ZigZag spatial mapping: array dimension {d_zz!r} is none of {sorted(where_axis)}")
            continue
        li, ax = where_axis[d_zz]
        group = sx if ax == "x" else sy
        for dim, f in unrolled:
            if f > 1:
                group[li][dim] = group[li].get(dim, 1) * f
    for dim, size in layer.dims.items():
        got = math.prod(t.get(dim, 1) for group in (temporal_f, sx, sy) for t in group)
        if got != size:
            raise ValueError(f"ZigZag mapping: the factors of {dim!r} multiply to {got}, not its size {size}")
    return canonical(Mapping.create(arch, temporal_f, sx, sy, [tuple(o) for o in order]), layer, arch)
