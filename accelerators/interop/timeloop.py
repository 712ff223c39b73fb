"""Timeloop/Accelergy v0.4 architecture specs (the ``architecture:`` tree of ``!Container``,
``!Component`` and ``!Parallel`` nodes, with Accelergy's ERT and ART) as an
:class:`~accelerators.arch.ArchSpec`.

Timeloop (Parashar et al., ISPASS 2019) and Accelergy (Wu et al., ICCAD 2019) describe
an accelerator as a tree, outermost node first: ``!Component`` nodes are storage levels
(or the compute unit, the last node), ``!Container`` nodes group what follows and may
replicate it (``spatial: {meshX, meshY}``), ``!Parallel`` holds sibling buffers side by
side. Accelergy's Energy Reference Table (ERT) gives each component's energy per action
(``read``, ``write``, ``update``, ``leak``, ``compute``) and its Area Reference Table
(ART) each component's area. The rules of :func:`arch_from_timeloop`:

* **Levels.** Every storage component (a ``class`` Timeloop counts as a buffer: one
  containing ``DRAM``, ``SRAM``, ``regfile``, ``smartbuffer`` or ``storage``) is a level;
  the list is reversed (ArchSpec levels are innermost first). The last node is the
  compute unit (a ``class`` containing ``mac`` or ``compute``), the MAC: its energy is
  the ERT's ``compute`` (or ``mac_random``, ``mult_random``, ``mac``, ``mult``, the first
  given, as Timeloop takes them).
* **Containers.** A container whose mesh is larger than 1x1 is a tensor-less level
  ``inter_<name>_spatial`` with that mesh as its fanout (what Timeloop's front end
  inserts, and the name its mappings target). A component's own ``spatial`` mesh is a
  fanout of the level just outside it.
* **Parallel siblings** become consecutive levels of one tensor each, the first listed
  outermost (Timeloop's order). Each must keep exactly one data space (its
  ``constraints.dataspace.keep``, or the others bypassed), else the flattening is not
  exact and the spec is refused.
* **Sizes**, as Timeloop's ``BufferLevel::ParseSpecs`` reads them. A word is
  ``datawidth`` bits (or ``word_bits`` / ``word_width``); an access moves ``block_size``
  (or ``n_words``) words, by default ``width / datawidth``: :attr:`MemoryLevel.vector_words`,
  with the ERT energies per access. Capacity = ``depth x block_size`` words (or
  ``memory_depth`` / ``data_storage_depth``), or ``entries`` words, or ``sizeKB x 8192 /
  datawidth``; a component without any is unbounded (only the outermost may be). Data
  spaces a component bypasses by constraint are not among its ``tensors``.
* **Bandwidth** (words per cycle per instance). ``shared_bandwidth`` limits reads and
  writes together (:attr:`MemoryLevel.bandwidth_words_per_cycle`), ``read_bandwidth``
  reads alone and ``write_bandwidth`` writes (fills and updates) alone
  (``read_bandwidth_words_per_cycle`` / ``write_bandwidth_words_per_cycle``); a component
  may give any of them, and its cycles are the largest of the three, as in Timeloop
  (:mod:`evaluators.loopnest.bandwidth`). The deprecated ``bandwidth`` is, as Timeloop
  reads it, half for reads and half for writes, unless ``read_bandwidth`` /
  ``write_bandwidth`` say otherwise.
* **Energy.** Per action, the first the ERT gives of Timeloop's names for it: a read
  (``random_read``, ``read``) -> read energy; a fill (``random_fill``, ``random_write``,
  ``fill``, ``write``) -> write energy; an update, a partial-sum write from below
  (``random_update``, ``random_write``, ``update``, ``write``), must equal the fill (one
  write energy per operand); ``leak`` -> ``leakage_pj_per_cycle``. A storage level
  whose table lacks a read or a fill is refused (Timeloop would use its built-in
  estimate, which is not computed here). The compute unit's ``leak`` has no ArchSpec
  field; Timeloop's model does not charge it either (in the exercises' reference outputs
  the MAC's energy is exactly computes x ``compute`` energy), so by default it is left out,
  as Timeloop does; ``mac_leakage="innermost"`` adds it to the innermost level (only where
  that level has as many instances as there are MACs), ``"refuse"`` raises. An action
  listed with several argument-dependent energies is refused unless they are equal.
* **Area.** ART area (um^2) x instances, per level (a fanout level's too, where the ART
  gives one: Timeloop's front end makes it a ``dummy_storage`` buffer, and Timeloop counts
  its area); the architecture's area is the sum over every component, the MACs included.
  A fanout level holds no data, so its ERT energies count nothing, but a leak would be
  charged: that is refused.

**Strict reading.** Every key of the tree, the ERT and the ART is read (it changes the
ArchSpec), neutral, or refused, with a ``ValueError`` naming the component, the key and
its value. The neutral keys, each with why it changes nothing, are :data:`NEUTRAL`
(attributes Timeloop's model does not read, or reads only for its built-in energy and
area estimates, which the ERT and ART replace), :data:`NEUTRAL_AT` (attributes neutral
only at Timeloop's default value: ``allow_overbooking: false``, ``reduction_supported:
true``, ``cluster_size: 1`` ...), :data:`CONTAINER_ATTRIBUTES` and
:data:`NEUTRAL_KEYS` (node, ERT and ART keys). Refused outright: a key neither read nor
neutral (a typo; the message lists the known ones), ``cluster_size`` other than 1,
``multiple_buffering`` other than 1, ``min_utilization`` other than 0, sparse-tensor
metadata and compression (``metadata_*``, ``compression_supported`` ...), network
specifications and attributes, user energies and areas in place of the ERT's and ART's
(``vector_access_energy``, ``cluster_area``), ``size`` (not a Timeloop attribute),
a component class Timeloop does not model as storage, a compute unit that is not last,
an unbounded level below the outermost, an ERT or ART table that names no component.
Refused unless the caller names them in ``ignore`` (:data:`IGNORABLE`), and then listed
with their values in :attr:`TimeloopTranslation.dropped`: what coexplore's model does not
have -- ``allow_overbooking: true``, ``reduction_supported: false``, ``power_gated_at``
another level, a network's fill and drain latencies, an address-generation energy, an
ERT ``wire`` energy. Mapspace constraints (``constraints.temporal`` / ``spatial``,
``keep``) constrain a mapper's search, not the hardware: :attr:`TimeloopTranslation.constraints`
keeps them for the caller (:func:`mappers.interop.timeloop.constraints_from_timeloop`
reads them, key by key); they are not part of the ArchSpec.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from accelerators.interop.values import real, shown
from design_space.yamlio import SafeLoader, load_yaml, load_yaml_file

__all__ = [
    "CONTAINER_ATTRIBUTES",
    "DATASPACE_ROLES",
    "IGNORABLE",
    "NEUTRAL",
    "NEUTRAL_AT",
    "NEUTRAL_KEYS",
    "TimeloopTranslation",
    "arch_from_timeloop",
    "load_timeloop_yaml",
    "loads_timeloop_yaml",
]

DATASPACE_ROLES = {"Weights": "W", "Inputs": "I", "Outputs": "O"}
"""Timeloop's conventional data-space names -> coexplore's operands."""

IGNORABLE: dict[str, str] = {
    "allow_overbooking": "overbooking allowed: Timeloop may then keep tiles above a level's capacity (sparse "
                         "tensors' tiles, by their confidence); coexplore keeps every tile within capacity",
    "reduction_supported": "no accumulation at the level: Timeloop's network then carries a read and a write "
                           "per partial-sum update; coexplore's model accumulates at every level and has no "
                           "network",
    "power_gated_at": "the level's leakage gated with another level's instances, as Timeloop charges it; "
                      "coexplore charges each level's leakage on its own instances",
    "network_fill_latency": "cycles Timeloop adds to fill the network below the level; coexplore's cycles are "
                            "compute and per-level bandwidth",
    "network_drain_latency": "cycles Timeloop adds to drain the network below the level; coexplore's cycles are "
                             "compute and per-level bandwidth",
    "addr_gen_energy": "an energy per address generation, which Timeloop charges on every generated address; "
                       "coexplore's model has no address-generation energy",
    "wire": "an ERT 'wire' table, whose transfer energy Timeloop charges per network hop; coexplore's model has no "
            "network energy",
}
"""What :func:`arch_from_timeloop`'s ``ignore`` may name, each with what dropping it
leaves out. Anything else is read, neutral or refused outright."""

_ESTIMATES = ("Timeloop's model reads it only for its built-in energy and area estimates, which the ERT and ART "
              "given replace")
_ACCELERGY = ("Timeloop's model does not read it (only Accelergy's estimators may, and their result is the ERT "
              "and ART given)")

NEUTRAL: dict[str, str] = {
    "technology": "Timeloop's model reads it only as 'DRAM' or not: for its built-in energy and area estimates "
                  "(which the ERT and ART given replace) and as the default of reduction_supported where that is "
                  "not given, which changes only its network model's transfer counts (coexplore has no network)",
    "n_banks": _ESTIMATES, "num_banks": _ESTIMATES,
    "num_ports": _ESTIMATES + " (and for layout modelling, which needs a layout: spec, not read here)",
    "n_ports": _ESTIMATES + " (and for layout modelling, which needs a layout: spec, not read here)",
    "n_rdwr_ports": _ACCELERGY, "n_rd_ports": _ACCELERGY, "n_wr_ports": _ACCELERGY, "nports": _ACCELERGY,
    "type": _ACCELERGY, "latency": _ACCELERGY, "action_latency_cycles": _ACCELERGY, "cycle_period": _ACCELERGY,
    "global_cycle_seconds": _ACCELERGY + " on a component; a container's is read as the clock",
    "update_fifo_depth": _ACCELERGY, "ag_datawidth": _ACCELERGY, "num_pipeline_stages": _ACCELERGY,
    "cell_type": _ACCELERGY, "vdd": _ACCELERGY, "multiplier_width": _ACCELERGY, "adder_width": _ACCELERGY,
    "version": _ACCELERGY,
    "has_power_gating": _ACCELERGY + "; power gating in Timeloop's model is power_gated_at",
}
"""Component attributes that change nothing, whatever their value: key -> why."""

#: the compute unit's attributes that change nothing (Timeloop's ArithmeticUnits reads the
#: word size only for its built-in multiplier estimates)
_COMPUTE_NEUTRAL = {"datawidth": _ESTIMATES, "word_bits": _ESTIMATES, "width": _ACCELERGY}

NEUTRAL_AT: dict[str, tuple[tuple[Any, ...], str]] = {
    "allow_overbooking": ((False,), "Timeloop's default: a mapping whose tiles exceed a level's capacity is "
                                    "invalid, as in coexplore"),
    "reduction_supported": ((True,), "the level accumulates partial sums in place, one write per update, as "
                                     "coexplore's model has every level do"),
    "power_gated_at": ((None,), "Timeloop's default (the level itself, also when named): its leakage on its own "
                                "instances, as coexplore's timeloop accounting charges it"),
    "cluster_size": ((1,), "Timeloop's default: an access is one block"),
    "multiple_buffering": ((1,), "Timeloop's default: a tile may fill the whole capacity"),
    "min_utilization": ((0,), "Timeloop's default: no least utilization of the capacity"),
    "compression_supported": ((False, None), "Timeloop's default: no compression (of sparse tensors)"),
    "decompression_supported": ((False, None), "Timeloop's default: no decompression (of sparse tensors)"),
    "concordant_compressed_tile_traversal": ((False, None), "Timeloop's default; it concerns compressed sparse "
                                                            "tensors only"),
    "tile_partition_supported": ((False, None), "Timeloop's default (and the only value it runs)"),
    "per_dataspace_bandwidth_consumption_scale": (({},), "no data space's transfers scaled (a scale of 1 for "
                                                         "each is the same)"),
    "network_fill_latency": ((0, None), "Timeloop's default: no fill latency"),
    "network_drain_latency": ((0, None), "Timeloop's default: no drain latency"),
    "addr_gen_energy": ((0,), "no energy per address generation"),
}
"""Component attributes that change nothing at these values: key -> (the values, why).
Another value is dropped where :data:`IGNORABLE` names the key, else refused."""

#: what other values of NEUTRAL_AT's keys mean, where they are refused outright
_NEUTRAL_AT_ELSE = {
    "cluster_size": "cannot be expressed (an ArchSpec level has cluster_size 1); refused rather than approximated",
    "multiple_buffering": "cannot be expressed (an ArchSpec level has multiple_buffering 1); refused rather than "
                          "approximated",
    "min_utilization": "is a mapspace constraint the ArchSpec cannot hold",
    "compression_supported": "(sparse-tensor compression) cannot be expressed",
    "decompression_supported": "(sparse-tensor decompression) cannot be expressed",
    "concordant_compressed_tile_traversal": "(compressed sparse tensors) cannot be expressed",
    "tile_partition_supported": "(runtime tile partitioning) cannot be expressed",
    "per_dataspace_bandwidth_consumption_scale": "(per data space bandwidth scales) cannot be expressed: an "
                                                 "ArchSpec level's bandwidth counts every word alike",
}

_NETWORK = "(network modelling) cannot be expressed: coexplore's model has no network"
#: attributes refused outright, whatever their value: key -> why
_REFUSED = {
    "size": "is not an attribute Timeloop reads (its capacities are entries, depth and sizeKB); give entries for "
            "a capacity in words",
    "vector_access_energy": "is an access energy Timeloop uses in place of the ERT's; give the energies in the ERT",
    "cluster_area": "is an area given in place of the ART's; give the area in the ART",
    **dict.fromkeys(("network_read", "network_fill", "network_drain", "network_update", "network_type",
                     "network_word_bits", "router_energy", "wire_energy", "tile_width", "energy_per_hop",
                     "energy-per-ingress", "fill_latency", "drain_latency", "network_operand", "network_result",
                     "network", "networks", "compression"), _NETWORK),
}
_COMPUTE_REFUSED = {"energy": "is an energy override of the compute unit; give its energy in the ERT",
                    "area": "is an area override of the compute unit; give its area in the ART"}

#: storage attributes read into the level (and their aliases, Timeloop's first first)
_ALIASES = {"datawidth": ("word_bits", "word_width", "datawidth"), "block_size": ("block_size", "n_words"),
            "width": ("width", "memory_width", "data_storage_width"),
            "depth": ("depth", "memory_depth", "data_storage_depth")}
_STORAGE_READ = {*(k for names in _ALIASES.values() for k in names), "entries", "sizeKB", "shared_bandwidth",
                 "read_bandwidth", "write_bandwidth", "bandwidth", "meshX", "meshY", "instances"}
_COMPUTE_READ = {"meshX", "meshY", "instances"}

CONTAINER_ATTRIBUTES = ("Timeloop's model reads no attribute of a container (or of a processed form's subtree): "
                        "its front end keeps them as the variables of the expressions below, which are expanded "
                        "already in a file read here; only global_cycle_seconds (the clock) and meshX / meshY are "
                        "read")
"""Why a container's attributes, other than ``global_cycle_seconds``, ``meshX`` and
``meshY``, change nothing."""

# ERT action names, in Timeloop's order of preference (model/topology.hpp)
_READ = ("random_read", "read")
_FILL = ("random_fill", "random_write", "fill", "write")
_UPDATE = ("random_update", "random_write", "update", "write")
_COMPUTE = ("mac_random", "mult_random", "mac", "mult", "compute")
_SPARSE_STORAGE_ACTIONS = frozenset(
    f"{p}{a}" for a in ("read", "fill", "write", "update") for p in ("gated_", "skipped_", "random_metadata_",
                                                                      "metadata_", "gated_metadata_",
                                                                      "skipped_metadata_")
) | {"decompression_count", "compression_count"}
_SPARSE_COMPUTE_ACTIONS = frozenset(f"{u}_{k}" for u in ("mac", "mult", "compute") for k in ("gated", "skipped"))
_STORAGE_ACTIONS = frozenset((*_READ, *_FILL, *_UPDATE, "leak"))
_COMPUTE_ACTIONS = frozenset((*_COMPUTE, "leak"))


NEUTRAL_KEYS: dict[str, str] = {
    "required_actions": "the actions Accelergy must estimate for the ERT; Timeloop's model does not read it",
    "arguments": "an ERT action's arguments, what Accelergy estimated the energy for; Timeloop reads only the "
                 "energy",
    **dict.fromkeys(sorted(_SPARSE_STORAGE_ACTIONS | _SPARSE_COMPUTE_ACTIONS),
                    "an ERT action Timeloop charges only to gated, skipped, metadata or compression actions, which "
                    "occur only under sparse optimizations (refused)"),
}
"""Node, ERT and ART keys that change nothing: key -> why."""

_TOP_KEYS = {"tree": {"version", "nodes"}, "processed": {"version", "subtree"}}
_NODE_KEYS = {"Container": {"name", "attributes", "spatial", "constraints", "networks", "sparse_optimizations"},
              "Component": {"name", "class", "subclass", "attributes", "spatial", "constraints", "required_actions",
                            "enabled", "sparse_optimizations", "network", "networks"},
              "Parallel": {"nodes"}, "Hierarchical": {"nodes"}}
_SUBTREE_KEYS = {"name", "attributes", "local", "subtree"}
_LOCAL_KEYS = {"name", "class", "subclass", "attributes", "required_actions", "enabled"}
_BUFFER_CLASSES = ("DRAM", "SRAM", "regfile", "smartbuffer", "storage")
_COMPUTE_CLASSES = ("mac", "intmac", "fpmac", "compute")
_NETWORK_CLASSES = ("XY_NoC", "Legacy", "ReductionTree", "SimpleMulticast")


class _Tagged(dict):
    """A node of the architecture tree, with its YAML tag (``!Container`` ...)."""

    tag = ""


def _tagged_constructor(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = _Tagged(loader.construct_mapping(node, deep=True))
        out.tag = suffix
        return out
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


class _Loader(SafeLoader):
    """design_space.yamlio's bounded loader, keeping the ``!`` tags on the nodes."""


_Loader.add_multi_constructor("!", _tagged_constructor)


def load_timeloop_yaml(path: str | Path) -> Any:
    """A Timeloop/Accelergy (or AccelForge) YAML file, its ``!Container`` /
    ``!Component`` / ``!Parallel`` (``!Memory`` ...) tags kept on the nodes
    (``node.tag``). Jinja templates and ``<<<``-style includes are not expanded: give the
    processed file. Read as configs are (:func:`design_space.yamlio.load_yaml_file`):
    bounded in size, alias expansion and depth, a cycle refused, duplicate keys refused;
    every problem a one-line :class:`~design_space.errors.ConfigError` (a ``ValueError``)
    naming the file and line."""
    return load_yaml_file(path, loader=_Loader)[0]


def loads_timeloop_yaml(text: str, source: str = "<text>") -> Any:
    """:func:`load_timeloop_yaml` of a string."""
    return load_yaml(text, source, loader=_Loader)[0]


@dataclass(frozen=True)
class TimeloopTranslation:
    """A Timeloop architecture as an ArchSpec, and how its parts correspond.

    Attributes:
        arch: the ArchSpec (levels innermost first).
        level_names: per level, the Timeloop name a mapping targets.
        roles: Timeloop data-space name -> operand (``W``, ``I``, ``O``).
        constraints: component name -> its mapspace constraints as given (not applied;
            :func:`mappers.interop.timeloop.constraints_from_timeloop` reads them).
        constraints_form: ``"processed"`` (the front end's ``architecture_constraints``
            targets) or ``"tree"`` (v0.4 components' ``constraints`` dicts).
        dropped: what the caller's ``ignore`` dropped from the spec, one line each (where,
            the key and its value); empty when nothing was. The AccelForge importer fills
            it the same way.
    """

    arch: ArchSpec
    level_names: tuple[str, ...]
    roles: dict[str, str]
    constraints: dict[str, Any] = field(default_factory=dict)
    constraints_form: str = "processed"
    dropped: tuple[str, ...] = ()

    def level_of(self, name: str) -> int:
        try:
            return self.level_names.index(name)
        except ValueError:
            raise ValueError(f"Timeloop mapping targets {name!r}, which is no level of {self.arch.name!r} "
                             f"(levels: {list(self.level_names)})") from None


def _real(v: Any, where: str) -> float:
    return real(v, where, "Timeloop")


def _same(v: Any, allowed: tuple[Any, ...]) -> bool:
    """``v`` is one of ``allowed``: booleans and ``None`` as themselves (or YAML's words
    for them), numbers as numbers."""
    words = {"true": True, "false": False, "null": None, "none": None, "~": None}
    if isinstance(v, str) and v.strip().lower() in words:
        v = words[v.strip().lower()]
    for a in allowed:
        if a is None or isinstance(a, bool):
            if v is a:
                return True
        elif isinstance(a, dict):
            if isinstance(v, Mapping) and not v:
                return True
        elif not isinstance(v, bool) and v is not None:
            try:
                if real(v, "", "") == a:
                    return True
            except ValueError:
                pass
    return False


class _Strict:
    """The key checks of one translation, and what ``ignore`` dropped."""

    def __init__(self, ignore: frozenset[str]) -> None:
        self.ignore = ignore
        self.dropped: list[str] = []

    def drop(self, where: str, key: str, value: Any, why: str = "") -> None:
        """Drop ``key`` (an :data:`IGNORABLE` name) if the caller allows it, recording it;
        else refuse it, saying why and how to accept the loss."""
        if key in self.ignore:
            self.dropped.append(f"{where}: {key} = {shown(value)}")
            return
        raise ValueError(f"Timeloop {where}: {key} = {shown(value)}: {why or IGNORABLE[key]}; refused rather than "
                         f"dropped (ignore=({key!r},) drops it, listed in TimeloopTranslation.dropped)")

    @staticmethod
    def keys(d: Any, allowed: Iterable[str], where: str, what: str) -> Mapping[str, Any]:
        if not isinstance(d, Mapping):
            raise ValueError(f"Timeloop {where}: {what} must be a mapping, got {shown(d)}")
        allowed = set(allowed)
        unknown = sorted(str(k) for k in d if k not in allowed)
        if unknown:
            k = unknown[0]
            raise ValueError(f"Timeloop {where}: {what} key {k!r} (= {shown(d[k])}) is not one coexplore reads "
                             f"(known: {sorted(allowed)}); cannot be expressed")
        return d

    def node(self, node: Mapping[str, Any], kind: str, where: str) -> None:
        """A tree node's or processed item's own keys: known, and neutral where not read."""
        self.keys(node, _NODE_KEYS.get(kind, _LOCAL_KEYS), where, f"{kind.lower()}" if kind in _NODE_KEYS else
                  "component")
        if "enabled" in node and not _same(node["enabled"], (True,)):
            raise ValueError(f"Timeloop {where}: enabled = {shown(node['enabled'])}: a disabled component cannot be "
                             "expressed (give the design without it)")
        for k in ("network", "networks"):
            if node.get(k):
                raise ValueError(f"Timeloop {where}: {k} = {shown(node[k])}: network specifications cannot be "
                                 "expressed")
        if node.get("sparse_optimizations"):
            raise ValueError(f"Timeloop {where}: sparse_optimizations = {shown(node['sparse_optimizations'])}: "
                             "sparse tensors cannot be expressed")
        if "attributes" in node and node["attributes"] is not None and not isinstance(node["attributes"], Mapping):
            raise ValueError(f"Timeloop {where}: attributes must be a mapping, got {shown(node['attributes'])}")

    def container_attributes(self, attrs: Mapping[str, Any], where: str) -> float | None:
        """A container's (or processed subtree's) attributes: only the cycle time is read."""
        v = attrs.get("global_cycle_seconds")
        return None if v is None else _real(v, f"{where}: attribute global_cycle_seconds")

    def attributes(self, attrs: Mapping[str, Any], where: str, *, compute: bool, own: str) -> dict[str, Any]:
        """A component's attributes, each read, neutral, dropped or refused; the ones to read."""
        read, neutral = (_COMPUTE_READ, {**NEUTRAL, **_COMPUTE_NEUTRAL}) if compute else (_STORAGE_READ, NEUTRAL)
        refused = {**_REFUSED, **_COMPUTE_REFUSED} if compute else _REFUSED
        out = {}
        for k, v in attrs.items():
            k = str(k)
            if k.startswith("metadata"):
                raise ValueError(f"Timeloop {where}: attribute {k} = {shown(v)} (sparse-tensor metadata) cannot be "
                                 "expressed")
            if k in refused:
                raise ValueError(f"Timeloop {where}: attribute {k} = {shown(v)} {refused[k]}")
            if k in NEUTRAL_AT:
                ok, _ = NEUTRAL_AT[k]
                if _same(v, ok) or (k == "power_gated_at" and str(v) == own) or (
                        k == "per_dataspace_bandwidth_consumption_scale" and isinstance(v, Mapping)
                        and all(_same(x, (1,)) for x in v.values())):
                    continue
                if k in IGNORABLE:
                    self.drop(where, k, v)
                    continue
                raise ValueError(f"Timeloop {where}: {k} = {shown(v)} {_NEUTRAL_AT_ELSE[k]}")
            if k in neutral:
                continue
            if k in read:
                out[k] = v
                continue
            what = "a compute unit" if compute else "a storage component"
            near = difflib.get_close_matches(k, [*read, *neutral, *NEUTRAL_AT, *refused], n=1)
            raise ValueError(f"Timeloop {where}: attribute {k!r} (= {shown(v)}) is not one Timeloop's model reads "
                             f"for {what}, nor a known neutral one" + (f" (did you mean {near[0]!r}?)" if near else "")
                             + f"; read: {sorted(read)}; neutral: the {len(neutral)} keys of NEUTRAL and the "
                             f"{len(NEUTRAL_AT)} of NEUTRAL_AT at their defaults (accelerators.interop.timeloop)")
        return out


def _ert_table(ert: Any, strict: _Strict) -> dict[str, dict[str, float]]:
    """ERT -> component name -> action -> energy (pJ); every key checked."""
    if ert is None:
        return {}
    root = ert.get("ERT", ert) if isinstance(ert, Mapping) else None
    if not isinstance(root, Mapping) or not isinstance(root.get("tables"), list):
        raise ValueError("the ERT must be a mapping with 'tables' (Accelergy's ERT.yaml)")
    if root is not ert:
        strict.keys(ert, {"ERT"}, "ERT", "ERT file")
    strict.keys(root, {"version", "tables"}, "ERT", "ERT")
    if "version" in root and str(root["version"]) not in ("0.3", "0.4"):
        raise ValueError(f"Timeloop ERT: version = {shown(root['version'])}: only versions 0.3 and 0.4 (a list of "
                         "tables) are read")
    out: dict[str, dict[str, float]] = {}
    for i, t in enumerate(root["tables"]):
        strict.keys(t, {"name", "actions"}, f"ERT table [{i}]", "table")
        name = _leaf_name(str(t.get("name")))
        acts: dict[str, float] = {}
        if not isinstance(t.get("actions") or [], list):
            raise ValueError(f"Timeloop ERT table {t.get('name')!r}: actions must be a list, got {shown(t['actions'])}")
        for a in t.get("actions") or []:
            strict.keys(a, {"name", "energy", "arguments"}, f"ERT table {t.get('name')!r}", "action")
            an = str(a.get("name"))
            e = _real(a.get("energy"), f"ERT {name!r} action {an!r} energy")
            if an in acts and acts[an] != e:
                raise ValueError(f"ERT: {name!r} action {an!r} has argument-dependent energies ({acts[an]} and {e}); "
                                 "an ArchSpec has one energy per access")
            acts[an] = e
        if name in out and out[name] != acts:
            raise ValueError(f"ERT: two tables for {name!r} with different energies ({out[name]} and {acts})")
        out[name] = acts
    return out


def _art_table(art: Any, strict: _Strict) -> dict[str, float]:
    """ART -> component name -> area (um^2); every key checked."""
    if art is None:
        return {}
    root = art.get("ART", art) if isinstance(art, Mapping) else None
    if not isinstance(root, Mapping) or not isinstance(root.get("tables"), list):
        raise ValueError("the ART must be a mapping with 'tables' (Accelergy's ART.yaml)")
    if root is not art:
        strict.keys(art, {"ART"}, "ART", "ART file")
    strict.keys(root, {"version", "tables"}, "ART", "ART")
    if "version" in root and str(root["version"]) not in ("0.3", "0.4"):
        raise ValueError(f"Timeloop ART: version = {shown(root['version'])}: only versions 0.3 and 0.4 are read")
    out: dict[str, float] = {}
    for i, t in enumerate(root["tables"]):
        strict.keys(t, {"name", "area"}, f"ART table [{i}]", "table")
        name = _leaf_name(str(t.get("name")))
        area = _real(t.get("area"), f"ART {str(t.get('name'))!r} area")
        if name in out and out[name] != area:
            raise ValueError(f"ART: two tables for {name!r} with different areas ({out[name]} and {area})")
        out[name] = area
    return out


def _leaf_name(full: str) -> str:
    """``system_top_level.shared_glb[1..256]`` -> ``shared_glb``."""
    return re.sub(r"\[[^\]]*\]$", "", full).split(".")[-1]


def _mesh(node: Mapping[str, Any], where: str) -> tuple[int, int]:
    sp = node.get("spatial") or {}
    _Strict.keys(sp, {"meshX", "meshY"}, where, "spatial")
    attrs = node.get("attributes") or {}
    x, y = sp.get("meshX", attrs.get("meshX", 1)), sp.get("meshY", attrs.get("meshY", 1))
    for v, k in ((x, "meshX"), (y, "meshY")):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"Timeloop {where}: {k} must be a positive integer, got {v!r}")
    return x, y


def _is_compute(node: Mapping[str, Any]) -> bool:
    cls = str(node.get("class", "")).lower()
    sub = str(node.get("subclass", "")).lower()
    return any(k in cls or k in sub for k in ("mac", "compute", "alu", "multiplier"))


def _check_class(node: Mapping[str, Any], where: str, *, last: bool) -> None:
    """The component's ``class`` is one Timeloop models as what it stands for here:
    storage (every node but the last) or compute (the last)."""
    if "class" not in node:
        raise ValueError(f"Timeloop {where}: no class (Timeloop tells storage from compute by it)")
    cls = str(node["class"])
    if last:
        if not any(c in cls for c in _COMPUTE_CLASSES):
            raise ValueError(f"Timeloop {where}: class = {shown(node['class'])}: the last node is the compute unit, "
                             f"and Timeloop's compute classes contain one of {list(_COMPUTE_CLASSES)}")
        return
    if any(c in cls for c in _BUFFER_CLASSES):
        return
    if any(c in cls for c in _NETWORK_CLASSES):
        raise ValueError(f"Timeloop {where}: class = {shown(node['class'])}: network components cannot be expressed")
    raise ValueError(f"Timeloop {where}: class = {shown(node['class'])} is no storage class of Timeloop's (a class "
                     f"containing one of {list(_BUFFER_CLASSES)}), which its model would leave out of the design; "
                     "cannot be expressed")


def _flatten(nodes: Any, out: list[tuple[str, Any, int, int]], strict: _Strict,
             path: str = "architecture.nodes") -> None:
    """The tree as a top-down list of (kind, node, meshX, meshY): ``container``,
    ``component``, ``parallel`` (a list of components); every node's keys checked."""
    if not isinstance(nodes, list):
        raise ValueError(f"Timeloop {path}: must be a list of nodes")
    for i, node in enumerate(nodes):
        where = f"{path}[{i}]"
        tag = getattr(node, "tag", "")
        if tag in ("Container", "Component"):
            where = f"{tag.lower()} {node.get('name')!r}"
            strict.node(node, tag, where)
            x, y = _mesh(node, where)
            out.append((tag.lower(), node, x, y))
        elif tag == "Parallel":
            strict.node(node, tag, where)
            kids = node.get("nodes")
            if not isinstance(kids, list) or not all(getattr(k, "tag", "") == "Component" for k in kids):
                raise ValueError(f"Timeloop {where}: a !Parallel must hold a list of !Component nodes")
            for k in kids:
                strict.node(k, "Component", f"component {k.get('name')!r}")
                if _mesh(k, f"component {k.get('name')!r}") != (1, 1):
                    raise ValueError(f"Timeloop component {k.get('name')!r}: a spatial mesh inside a !Parallel "
                                     "cannot be expressed (the siblings become consecutive levels)")
            out.append(("parallel", kids, 1, 1))
        elif tag == "Hierarchical":
            strict.node(node, tag, where)
            _flatten(node.get("nodes"), out, strict, f"{where}.nodes")
        else:
            raise ValueError(f"Timeloop {where}: expected a !Container, !Component, !Parallel or !Hierarchical "
                             f"node (architecture v0.4), got {('!' + tag) if tag else type(node).__name__}")


def _dataspace(node: Mapping[str, Any], roles: Mapping[str, str], key: str) -> set[str]:
    ds = ((node.get("constraints") or {}).get("dataspace") or {}).get(key) or []
    out = set()
    for name in ds:
        if name not in roles:
            raise ValueError(f"Timeloop component {node.get('name')!r}: dataspace {key} names {name!r}, not one "
                             f"of the problem's data spaces {sorted(roles)}")
        out.add(roles[name])
    return out


def _num(attrs: Mapping[str, Any], key: str, where: str) -> float | None:
    v = attrs.get(key)
    if v is None:
        return None
    x = _real(v, f"{where}: attribute {key}")
    if x <= 0:
        raise ValueError(f"Timeloop {where}: attribute {key} must be a positive number, got {shown(v)}")
    return x


def _whole(attrs: Mapping[str, Any], key: str, where: str) -> int | None:
    """A positive whole number (a width, a depth: Timeloop reads them as integers)."""
    x = _num(attrs, key, where)
    if x is None:
        return None
    if not (math.isfinite(x) and x.is_integer()):
        raise ValueError(f"Timeloop {where}: attribute {key} must be a whole number, got {shown(attrs[key])}")
    return int(x)


def _alias(attrs: Mapping[str, Any], canon: str, where: str) -> int | None:
    """The value of ``canon`` under any of Timeloop's names for it (they must agree)."""
    given = [(k, _whole(attrs, k, where)) for k in _ALIASES[canon] if attrs.get(k) is not None]
    if len({v for _, v in given}) > 1:
        raise ValueError(f"Timeloop {where}: attributes {', '.join(f'{k} = {v}' for k, v in given)} name one "
                         "quantity with different values")
    return given[0][1] if given else None


def _tree_entries(root: Mapping[str, Any], roles: Mapping[str, str], strict: _Strict
                  ) -> tuple[list[dict[str, Any]], Any, dict[str, Any], float | None]:
    """The v0.4 tree as top-down level entries (name, node, tensors, fanout below), the
    compute node, the components' constraints and the cycle time."""
    flat: list[tuple[str, Any, int, int]] = []
    _flatten(root["nodes"], flat, strict)
    if not flat or flat[-1][0] != "component":
        raise ValueError("Timeloop architecture: the last node must be the compute unit (a !Component)")
    compute = flat[-1][1]
    _check_class(compute, f"component {compute.get('name')!r}", last=True)
    for kind, node, _, _ in flat[:-1]:
        for comp in ([node] if kind == "component" else list(node) if kind == "parallel" else []):
            if _is_compute(comp):
                raise ValueError(f"Timeloop component {comp.get('name')!r}: a compute unit must be the last node")
            _check_class(comp, f"component {comp.get('name')!r}", last=False)
    cycle_s = None
    for kind, node, _, _ in flat:
        if kind == "container":
            v = strict.container_attributes(node.get("attributes") or {}, f"container {node.get('name')!r}")
            if v is not None:
                cycle_s = v

    # top-down entries: (level name, node or None, tensors, mesh of the level's fanout source)
    entries: list[dict[str, Any]] = []
    constraints: dict[str, Any] = {}
    for kind, node, x, y in flat[:-1]:
        if kind == "container":
            if x * y > 1:
                lname = f"inter_{node['name']}_spatial"
                entries.append({"name": lname, "node": None, "tensors": frozenset(), "fanout": (x, y)})
                if node.get("constraints"):     # a replicated container's constraints: its fanout level's
                    constraints[lname] = node["constraints"]
            elif node.get("constraints"):
                constraints[str(node.get("name"))] = node["constraints"]
            continue
        group = [node] if kind == "component" else list(node)
        for comp in group:
            cname = str(comp.get("name"))
            if comp.get("constraints"):
                constraints[cname] = comp["constraints"]
            bypass, keep = _dataspace(comp, roles, "bypass"), _dataspace(comp, roles, "keep")
            tensors = frozenset(set(OPERANDS) - bypass)
            if kind == "parallel":
                held = keep if keep else set(tensors)
                if len(held) != 1:
                    raise ValueError(f"Timeloop !Parallel component {cname!r}: keeps {sorted(held) or 'no'} data "
                                     "spaces; sibling buffers become consecutive levels only when each keeps one "
                                     "(give constraints.dataspace.keep)")
                tensors = frozenset(held)
            if x * y > 1 and entries:
                # a component's own mesh: a fanout of the level just outside it
                fx, fy = entries[-1]["fanout"]
                entries[-1]["fanout"] = (fx * x, fy * y)
            elif x * y > 1:
                raise ValueError(f"Timeloop component {cname!r}: the outermost component cannot be replicated")
            entries.append({"name": cname, "node": comp, "tensors": tensors, "fanout": (1, 1)})
    if _mesh(compute, "compute")[0] * _mesh(compute, "compute")[1] > 1:
        if not entries:
            raise ValueError("Timeloop architecture: no storage level above the compute unit")
        cx, cy = _mesh(compute, "compute")
        fx, fy = entries[-1]["fanout"]
        entries[-1]["fanout"] = (fx * cx, fy * cy)
    return entries, compute, constraints, cycle_s


_LEVEL_NAME = re.compile(r"^(.*?)\[(\d+)\.\.(\d+)\]$")


def _processed_entries(root: Mapping[str, Any], arch_constraints: Any, roles: Mapping[str, str], strict: _Strict
                       ) -> tuple[list[dict[str, Any]], Any, dict[str, Any], float | None]:
    """The flattened form Timeloop's front end writes (``parsed-processed-input.yaml``:
    ``subtree`` / ``local`` lists, outermost first, names ``X[1..N]`` with ``N``
    instances and ``meshX`` / ``meshY`` their arrangement; ``dummy_storage`` levels for
    the containers' fanouts; ``architecture_constraints`` with each level's bypass) as the
    entries of :func:`_tree_entries`. The fanout below a level is the next level's
    instances over its own, split by the ratio of their meshes."""
    items: list[Any] = []
    cycle: list[float] = []

    def walk(tree: Any, path: str) -> None:
        if tree is None:
            return
        if not isinstance(tree, list) or len(tree) > 1:
            raise ValueError(f"Timeloop {path}: must be a list of one subtree (Timeloop reads one per level), got "
                             f"{shown(tree)}")
        for st in tree:
            where = f"subtree {st.get('name')!r}" if isinstance(st, Mapping) else path
            strict.keys(st, _SUBTREE_KEYS, where, "subtree")
            attrs = st.get("attributes") or {}
            strict.keys(attrs, attrs, where, "attributes")      # a mapping; every key neutral (CONTAINER_ATTRIBUTES)
            v = strict.container_attributes(attrs, where)
            if v is not None and not cycle:
                cycle.append(v)
            local = st.get("local") or []
            if not isinstance(local, list):
                raise ValueError(f"Timeloop {where}: local must be a list of components, got {shown(local)}")
            for it in local:
                strict.node(it, "local", f"component {_leaf_name(str(it.get('name')))!r}" if isinstance(it, Mapping)
                            else where)
            items.extend(local)
            walk(st.get("subtree"), f"{where}.subtree")

    walk(root.get("subtree"), "architecture.subtree")
    cycle_s = cycle[0] if cycle else None
    if not items:
        raise ValueError("Timeloop architecture: the flattened form has no levels")
    targets = (arch_constraints or {}).get("targets") or [] if isinstance(arch_constraints, Mapping) else []
    bypass_of: dict[str, set[str]] = {}
    constraints: dict[str, Any] = {}
    for t in targets:
        name = str(t.get("target"))
        constraints.setdefault(name, []).append(dict(t))
        if t.get("type") in ("bypass", "dataspace"):
            for ds in t.get("bypass") or []:
                if ds not in roles:
                    raise ValueError(f"Timeloop constraint on {name!r}: bypass names {ds!r}, not one of the "
                                     f"problem's data spaces {sorted(roles)}")
                bypass_of.setdefault(name, set()).add(roles[ds])
    levels = []
    for i, it in enumerate(items):
        m = _LEVEL_NAME.match(str(it.get("name")))
        if not m or m.group(2) != "1":
            raise ValueError(f"Timeloop architecture: level name {it.get('name')!r} is not NAME[1..N]")
        where = f"component {m.group(1)!r}"
        last = i == len(items) - 1
        _check_class(it, where, last=last)
        attrs = strict.attributes(it.get("attributes") or {}, where, compute=last, own=m.group(1))
        n = int(m.group(3))
        if "instances" in attrs and not _same(attrs["instances"], (n,)):
            raise ValueError(f"Timeloop {where}: attribute instances = {shown(attrs['instances'])} differs from the "
                             f"{n} of its name {it.get('name')!r}")
        mx, my = attrs.get("meshX", 1), attrs.get("meshY", 1)
        for v, k in ((mx, "meshX"), (my, "meshY")):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"Timeloop {where}: {k} must be a positive integer, got {shown(v)}")
        levels.append({"name": m.group(1), "n": n, "mx": mx, "my": my, "item": it, "attrs": attrs})
    compute = levels[-1]
    entries: list[dict[str, Any]] = []
    for j, lv in enumerate(levels[:-1]):
        nxt = levels[j + 1]
        if nxt["n"] % lv["n"] or nxt["mx"] % lv["mx"] or nxt["my"] % lv["my"]:
            raise ValueError(f"Timeloop architecture: {nxt['name']!r} ({nxt['n']} instances, mesh {nxt['mx']}x"
                             f"{nxt['my']}) is not a whole fanout of {lv['name']!r} ({lv['n']}, {lv['mx']}x{lv['my']})")
        fan = (nxt["mx"] // lv["mx"], nxt["my"] // lv["my"])
        if fan[0] * fan[1] != nxt["n"] // lv["n"]:
            raise ValueError(f"Timeloop architecture: the meshes of {lv['name']!r} and {nxt['name']!r} do not "
                             "account for their instances")
        it = lv["item"]
        if it.get("class") == "dummy_storage":
            entries.append({"name": lv["name"], "node": None, "tensors": frozenset(), "fanout": fan})
            continue
        attrs = {k: v for k, v in lv["attrs"].items() if k not in ("meshX", "meshY", "instances")}
        node = {"name": lv["name"], "class": it.get("class"), "attributes": attrs}
        tensors = frozenset(set(OPERANDS) - bypass_of.get(lv["name"], set()))
        entries.append({"name": lv["name"], "node": node, "tensors": tensors, "fanout": fan, "checked": True})
    comp_node = {"name": compute["name"], "class": compute["item"].get("class"), "attributes": compute["attrs"],
                 "checked": True}
    return entries, comp_node, constraints, cycle_s


def _first(acts: Mapping[str, float], names: tuple[str, ...]) -> float | None:
    """The energy of the first of ``names`` the ERT table gives (Timeloop's preference)."""
    return next((acts[n] for n in names if n in acts), None)


def _actions(acts: Mapping[str, float], cname: str, *, compute: bool) -> None:
    """Every action of the component's ERT table is one Timeloop charges (or neutral)."""
    known, neutral = ((_COMPUTE_ACTIONS, _SPARSE_COMPUTE_ACTIONS) if compute else
                      (_STORAGE_ACTIONS, _SPARSE_STORAGE_ACTIONS))
    for an in acts:
        if an not in known and an not in neutral:
            raise ValueError(f"ERT: {cname!r} action {an!r} (energy {acts[an]}) is not one Timeloop charges to a "
                             f"{'compute unit' if compute else 'storage level'} (read: {sorted(known)}; neutral: "
                             "gated, skipped, metadata and compression actions)")


def _storage_level(e: dict[str, Any], depth: int, strict: _Strict, energies: Mapping[str, dict[str, float]],
                   areas: Mapping[str, float]) -> tuple[MemoryLevel, int, float]:
    """One storage component as a level, its word size in bits and its area (um^2, all
    instances)."""
    node = e["node"]
    cname = e["name"]
    where = f"component {cname!r}"
    raw = node.get("attributes") or {}
    attrs = dict(raw) if e.get("checked") else strict.attributes(raw, where, compute=False, own=cname)
    datawidth = _alias(attrs, "datawidth", where)
    if datawidth is None:
        raise ValueError(f"Timeloop {where}: needs datawidth (bits per word; Timeloop would take 16)")
    width = _alias(attrs, "width", where)
    block = _alias(attrs, "block_size", where)
    if width is not None:
        if width % datawidth:
            raise ValueError(f"Timeloop {where}: width {width} is not a whole number of {datawidth}-bit words")
        if block is None:
            block = width // datawidth
        elif width != block * datawidth:
            raise ValueError(f"Timeloop {where}: width {width} holds {width / (block * datawidth):g} blocks of "
                             f"block_size {block} x datawidth {datawidth} bits, a cluster_size other than 1, which "
                             "cannot be expressed (an ArchSpec level has cluster_size 1)")
    block = block or 1
    given = {"entries": _whole(attrs, "entries", where), "depth": _alias(attrs, "depth", where),
             "sizeKB": _whole(attrs, "sizeKB", where)}
    given = {k: v for k, v in given.items() if v is not None}
    if len(given) > 1:
        raise ValueError(f"Timeloop {where}: attributes {sorted(given)} each give the capacity; give one")
    cap: int | None = None
    if "entries" in given:
        cap = given["entries"]
    elif "depth" in given:
        cap = given["depth"] * block
    elif "sizeKB" in given:
        cap = given["sizeKB"] * 1024 * 8 // datawidth      # Timeloop's integer division
    if cap is None and depth != 0:
        raise ValueError(f"Timeloop {where}: no depth, entries or sizeKB; only the outermost level may be unbounded")
    if depth == 0:
        if e["tensors"] != frozenset(OPERANDS):
            raise ValueError(f"Timeloop {where}: the backing store must hold every data space")
        cap = None
    bws = {key: _num(attrs, key, where) for key in ("bandwidth", "shared_bandwidth", "read_bandwidth",
                                                     "write_bandwidth")}
    # Timeloop's reading (BufferLevel::ParseSpecs): the deprecated `bandwidth` is half
    # for reads and half for writes; read_bandwidth / write_bandwidth, read after it, win
    old = bws["bandwidth"]
    rbw = bws["read_bandwidth"] if bws["read_bandwidth"] is not None else (old / 2 if old else None)
    wbw = bws["write_bandwidth"] if bws["write_bandwidth"] is not None else (old / 2 if old else None)
    acts = energies.get(cname)
    if acts is None:
        if energies:
            raise ValueError(f"ERT has no table for component {cname!r}")
        acts = {}
    _actions(acts, cname, compute=False)
    rd, wr, upd = _first(acts, _READ), _first(acts, _FILL), _first(acts, _UPDATE)
    if energies and e["tensors"]:
        for got, names in ((rd, _READ), (wr, _FILL)):
            if got is None:
                raise ValueError(f"ERT: {cname!r} has no {' / '.join(names)} action (actions: {sorted(acts)}); "
                                 "Timeloop would use its built-in estimate, which is not computed here")
    rd, wr = rd or 0.0, wr or 0.0
    upd = wr if upd is None else upd
    if "O" in e["tensors"] and upd != wr:
        raise ValueError(f"ERT: {cname!r} update energy {upd} differs from its write energy {wr}; an ArchSpec "
                         "has one write energy per operand (fills and updates alike)")
    area = areas.get(cname, 0.0) * e["instances"]
    level = MemoryLevel(cname, tensors=e["tensors"], capacity_words=cap, instances=e["instances"],
                        fanout_x=e["fanout"][0], fanout_y=e["fanout"][1], read_energy_pj=rd,
                        write_energy_pj=wr, bandwidth_words_per_cycle=bws["shared_bandwidth"],
                        read_bandwidth_words_per_cycle=rbw, write_bandwidth_words_per_cycle=wbw,
                        leakage_pj_per_cycle=acts.get("leak", 0.0), vector_words=int(block),
                        area_mm2=area * 1e-6)
    return level, datawidth, area


def arch_from_timeloop(arch: Mapping[str, Any], ert: Any = None, art: Any = None, *,
                       roles: Mapping[str, str] | None = None,
                       clock_mhz: float | None = None, name: str | None = None,
                       mac_leakage: str = "timeloop", ignore: Iterable[str] = ()) -> TimeloopTranslation:
    """A parsed Timeloop v0.4 architecture (the file's top mapping, or its
    ``architecture`` value), with Accelergy's ERT (needed for energies) and ART, as an
    ArchSpec (rules in the module docstring). ``roles`` maps data-space names to
    operands (default :data:`DATASPACE_ROLES`); ``clock_mhz`` defaults to
    ``1 / global_cycle_seconds`` where a container gives it, else 1000. ``ignore``:
    :data:`IGNORABLE` names the caller accepts dropping, each dropped one listed in the
    result's ``dropped``; every other key the spec, the ERT and the ART hold is read,
    neutral (:data:`NEUTRAL`, :data:`NEUTRAL_AT`, :data:`CONTAINER_ATTRIBUTES`,
    :data:`NEUTRAL_KEYS`) or refused with a ``ValueError`` naming it."""
    ig = frozenset(ignore)
    bad = sorted(ig - set(IGNORABLE))
    if bad:
        raise ValueError(f"ignore names {bad}, which are not droppable Timeloop keys (droppable: {sorted(IGNORABLE)})")
    strict = _Strict(ig)
    root = arch.get("architecture", arch)
    if not isinstance(root, Mapping) or ("nodes" not in root and "subtree" not in root):
        raise ValueError("a Timeloop v0.4 architecture is a mapping with 'nodes' (the !Container / !Component "
                         "tree), or the flattened 'subtree' / 'local' form its front end writes")
    if root is not arch and arch.get("sparse_optimizations"):
        raise ValueError(f"Timeloop: sparse_optimizations = {shown(arch['sparse_optimizations'])}: sparse tensors "
                         "cannot be expressed")
    version = str(root.get("version", "0.4"))
    if version != "0.4":
        raise ValueError(f"Timeloop architecture version {version!r}: only version 0.4 is read")
    form = "processed" if "subtree" in root else "tree"
    strict.keys(root, _TOP_KEYS[form], "architecture", "architecture")
    roles = dict(roles or DATASPACE_ROLES)
    if sorted(roles.values()) != sorted(OPERANDS):
        raise ValueError(f"roles must map three data spaces onto W, I, O, got {roles}")
    energies, areas = _ert_table(ert, strict), _art_table(art, strict)
    if form == "processed":
        entries, compute, constraints, cycle_s = _processed_entries(root, arch.get("architecture_constraints"), roles,
                                                                    strict)
    else:
        entries, compute, constraints, cycle_s = _tree_entries(root, roles, strict)
    if clock_mhz is None:
        # 12 significant digits: 1e-6 / 2e-9 is 499.99999999999994 in floating point
        clock_mhz = float(f"{1e-6 / cycle_s:.12g}") if cycle_s else 1000.0
    word_bits = None
    if not entries or entries[0]["node"] is None:
        raise ValueError("Timeloop architecture: the outermost node below the top container must be a storage "
                         "component (the backing store)")

    # instances, top-down
    inst = 1
    for e in entries:
        e["instances"] = inst
        inst *= e["fanout"][0] * e["fanout"][1]
    n_macs = inst
    levels: list[MemoryLevel] = []
    total_area_um2 = 0.0
    for depth, e in enumerate(entries):
        if e["node"] is None:
            acts = energies.get(e["name"], {})
            _actions(acts, e["name"], compute=False)
            if acts.get("leak"):
                raise ValueError(f"ERT: {e['name']!r}, a fanout level that holds no data, leaks {acts['leak']} "
                                 "pJ/cycle; cannot be expressed")
            area = areas.get(e["name"], 0.0) * e["instances"]
            total_area_um2 += area
            levels.append(MemoryLevel(e["name"], tensors=frozenset(), capacity_words=0, instances=e["instances"],
                                      fanout_x=e["fanout"][0], fanout_y=e["fanout"][1], area_mm2=area * 1e-6))
            continue
        level, bits, area = _storage_level(e, depth, strict, energies, areas)
        if depth == 0:
            word_bits = bits
        total_area_um2 += area
        levels.append(level)
    cname = str(compute.get("name"))
    where = f"component {cname!r}"
    if not compute.get("checked"):
        strict.attributes(compute.get("attributes") or {}, where, compute=True, own=cname)
    cacts = energies.get(cname, {})
    if energies and cname not in energies:
        raise ValueError(f"ERT has no table for the compute unit {cname!r}")
    _actions(cacts, cname, compute=True)
    mac_pj = _first(cacts, _COMPUTE)
    if energies and mac_pj is None:
        raise ValueError(f"ERT: the compute unit {cname!r} has no {' / '.join(_COMPUTE)} action (actions: "
                         f"{sorted(cacts)}); Timeloop would use its built-in estimate, which is not computed here")
    mac_leak = cacts.get("leak", 0.0)
    inner = levels[-1]
    if mac_leak and mac_leakage == "innermost":
        if inner.fanout != 1:
            raise ValueError(f"ERT: compute unit {cname!r} leaks {mac_leak} pJ/cycle, and its instances are not "
                             f"those of one level ({inner.name!r} feeds {inner.fanout} each): MAC leakage cannot "
                             "be expressed")
        levels[-1] = MemoryLevel(**{**inner.__dict__, "leakage_pj_per_cycle": inner.leakage_pj_per_cycle + mac_leak})
    elif mac_leak and mac_leakage == "refuse":
        raise ValueError(f"ERT: compute unit {cname!r} leaks {mac_leak} pJ/cycle; an ArchSpec has no MAC leakage "
                         "(mac_leakage='timeloop' leaves it out as Timeloop's model does, 'innermost' charges it "
                         "to the innermost level)")
    total_area_um2 += areas.get(cname, 0.0) * n_macs
    _unmatched(energies, areas, [e["name"] for e in entries] + [cname], strict)
    levels.reverse()
    if len(levels) == 1:
        # Only a backing store: an ArchSpec needs an on-chip level. A tensor-less level with
        # one instance and no fanout holds nothing, so every operand bypasses it, and it adds
        # no access, delivery, leakage or cycle: the counts are those of the design without it.
        if levels[0].fanout != 1:
            raise ValueError("Timeloop architecture: only a backing store, feeding several compute units directly; "
                             "an ArchSpec needs an on-chip level below it, which this design has not")
        levels.insert(0, MemoryLevel(f"{cname}_operands", tensors=frozenset(), capacity_words=0))
    top = (root["nodes"][0] if "nodes" in root else root["subtree"][0]) if (root.get("nodes") or
                                                                             root.get("subtree")) else {}
    spec = ArchSpec(name or str(top.get("name", "timeloop")), tuple(levels),
                    mac_energy_pj=mac_pj or 0.0, word_bits=word_bits or 16, clock_mhz=clock_mhz,
                    area_mm2=total_area_um2 * 1e-6, kind="timeloop")
    return TimeloopTranslation(spec, tuple(lv.name for lv in spec.levels), roles, constraints, form,
                               tuple(strict.dropped))


def _unmatched(energies: Mapping[str, dict[str, float]], areas: Mapping[str, float], names: list[str],
               strict: _Strict) -> None:
    """ERT and ART tables that name no component: a ``wire`` table's energy is dropped or
    refused (:data:`IGNORABLE`), any other is refused (Timeloop would leave it unused)."""
    for table, what in ((energies, "ERT"), (areas, "ART")):
        for t in table:
            if t in names:
                continue
            if t in ("wire", "Wire"):
                if what == "ERT" and any(table[t].values()):
                    strict.drop(f"ERT table {t!r}", "wire", table[t])
                continue
            raise ValueError(f"{what}: table {t!r} names no component of the architecture (components: {names}); "
                             "Timeloop would leave it unused")
