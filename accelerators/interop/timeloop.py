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

* **Levels.** Every storage component is a level; the list is reversed (ArchSpec levels
  are innermost first). The compute component (``class`` containing ``mac`` or
  ``compute``, or the last node) is the MAC: its energy is the ERT's ``compute``.
* **Containers.** A container whose mesh is larger than 1x1 is a tensor-less level
  ``inter_<name>_spatial`` with that mesh as its fanout (what Timeloop's front end
  inserts, and the name its mappings target). A component's own ``spatial`` mesh is a
  fanout of the level just outside it.
* **Parallel siblings** become consecutive levels of one tensor each, the first listed
  outermost (Timeloop's order). Each must keep exactly one data space (its
  ``constraints.dataspace.keep``, or the others bypassed), else the flattening is not
  exact and the spec is refused.
* **Sizes.** Capacity = ``depth x width / datawidth`` words (or ``size``); an access
  moves ``block_size`` (default ``width / datawidth``) words: :attr:`MemoryLevel.vector_words`,
  with the ERT energies per access. A component without ``depth`` / ``size`` is
  unbounded (only the outermost may be). Data spaces a component bypasses by constraint
  are not among its ``tensors``.
* **Bandwidth** (words per cycle per instance). ``shared_bandwidth`` limits reads and
  writes together (:attr:`MemoryLevel.bandwidth_words_per_cycle`), ``read_bandwidth``
  reads alone and ``write_bandwidth`` writes (fills and updates) alone
  (``read_bandwidth_words_per_cycle`` / ``write_bandwidth_words_per_cycle``); a component
  may give any of them, and its cycles are the largest of the three, as in Timeloop
  (:mod:`evaluators.loopnest.bandwidth`). The deprecated ``bandwidth`` is, as Timeloop
  reads it, half for reads and half for writes, unless ``read_bandwidth`` /
  ``write_bandwidth`` say otherwise.
* **Energy.** ``read`` -> read energy, ``write`` -> write energy (fills); ``update`` (a
  partial-sum write from below) must equal ``write`` (one write energy per operand);
  ``leak`` -> ``leakage_pj_per_cycle``. The compute unit's ``leak`` has no ArchSpec
  field; Timeloop's model does not charge it either (in the exercises' reference outputs
  the MAC's energy is exactly computes x ``compute`` energy), so by default it is left out,
  as Timeloop does; ``mac_leakage="innermost"`` adds it to the innermost level (only where
  that level has as many instances as there are MACs), ``"refuse"`` raises. An action
  listed with several argument-dependent energies is refused unless they are equal.
* **Area.** ART area (um^2) x instances, per level; the architecture's area is the sum
  over every component, the MACs included.

Refused, each with a ``ValueError`` that names the component and the attribute:
``cluster_size`` other than 1, ``multiple_buffering`` other than 1, sparse-tensor
metadata (``metadata_*``), ``network`` specifications, a compute unit that is not last,
an unbounded level below the outermost. Attributes only Accelergy reads (``technology``,
``n_banks``, ``type`` ...) are ignored: the ERT and ART already hold their effect.
Mapspace constraints (``constraints.temporal`` / ``spatial``, ``keep``) constrain a
mapper's search, not the hardware: :attr:`Translation.constraints` keeps them for the
caller; they are not part of the ArchSpec.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from accelerators.interop.values import real, shown
from design_space.yamlio import SafeLoader, load_yaml, load_yaml_file

__all__ = [
    "DATASPACE_ROLES",
    "TimeloopTranslation",
    "arch_from_timeloop",
    "load_timeloop_yaml",
    "loads_timeloop_yaml",
]

DATASPACE_ROLES = {"Weights": "W", "Inputs": "I", "Outputs": "O"}
"""Timeloop's conventional data-space names -> coexplore's operands."""

_ACCELERGY_ONLY = {"technology", "n_banks", "type", "global_cycle_seconds", "n_rw_ports", "n_rdwr_ports",
                   "n_rd_ports", "n_wr_ports", "latency", "action_latency_cycles", "cycle_period",
                   "update_fifo_depth", "multiplier_width", "adder_width", "has_power_gating",
                   "ag_datawidth", "num_pipeline_stages", "cell_type", "vdd", "meshX", "meshY",
                   "allow_overbooking", "reduction_supported", "power_gated_at", "nports", "num_ports",
                   "enabled", "version"}
_SEMANTIC = {"depth", "width", "datawidth", "size", "block_size", "word_bits", "shared_bandwidth",
             "read_bandwidth", "write_bandwidth", "bandwidth", "cluster_size", "multiple_buffering", "min_utilization"}


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
        dropped: what the caller's ``ignore`` dropped from the spec, one line each (the
            AccelForge importer's); empty when nothing was.
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


def _ert_table(ert: Any) -> dict[str, dict[str, float]]:
    """ERT -> component name -> action -> energy (pJ)."""
    if ert is None:
        return {}
    root = ert.get("ERT", ert) if isinstance(ert, Mapping) else None
    if not isinstance(root, Mapping) or not isinstance(root.get("tables"), list):
        raise ValueError("the ERT must be a mapping with 'tables' (Accelergy's ERT.yaml)")
    out: dict[str, dict[str, float]] = {}
    for t in root["tables"]:
        name = _leaf_name(str(t["name"]))
        acts: dict[str, float] = {}
        for a in t.get("actions", []):
            an = str(a["name"])
            e = _real(a.get("energy"), f"ERT {name!r} action {an!r} energy")
            if an in acts and acts[an] != e:
                raise ValueError(f"ERT: {name!r} action {an!r} has argument-dependent energies ({acts[an]} and {e}); "
                                 "an ArchSpec has one energy per access")
            acts[an] = e
        out[name] = acts
    return out


def _art_table(art: Any) -> dict[str, float]:
    if art is None:
        return {}
    root = art.get("ART", art) if isinstance(art, Mapping) else None
    if not isinstance(root, Mapping) or not isinstance(root.get("tables"), list):
        raise ValueError("the ART must be a mapping with 'tables' (Accelergy's ART.yaml)")
    return {_leaf_name(str(t["name"])): _real(t.get("area"), f"ART {str(t['name'])!r} area")
            for t in root["tables"]}


def _leaf_name(full: str) -> str:
    """``system_top_level.shared_glb[1..256]`` -> ``shared_glb``."""
    return re.sub(r"\[[^\]]*\]$", "", full).split(".")[-1]


def _mesh(node: Mapping[str, Any], where: str) -> tuple[int, int]:
    sp = node.get("spatial") or {}
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


def _flatten(nodes: Any, out: list[tuple[str, Any, int, int]], path: str = "architecture.nodes") -> None:
    """The tree as a top-down list of (kind, node, meshX, meshY): ``container``,
    ``component``, ``parallel`` (a list of components)."""
    if not isinstance(nodes, list):
        raise ValueError(f"Timeloop {path}: must be a list of nodes")
    for i, node in enumerate(nodes):
        where = f"{path}[{i}]"
        tag = getattr(node, "tag", "")
        if tag == "Container":
            x, y = _mesh(node, f"container {node.get('name')!r}")
            out.append(("container", node, x, y))
        elif tag == "Component":
            x, y = _mesh(node, f"component {node.get('name')!r}")
            out.append(("component", node, x, y))
        elif tag == "Parallel":
            kids = node.get("nodes")
            if not isinstance(kids, list) or not all(getattr(k, "tag", "") == "Component" for k in kids):
                raise ValueError(f"Timeloop {where}: a !Parallel must hold a list of !Component nodes")
            for k in kids:
                if _mesh(k, f"component {k.get('name')!r}") != (1, 1):
                    raise ValueError(f"Timeloop component {k.get('name')!r}: a spatial mesh inside a !Parallel "
                                     "cannot be expressed (the siblings become consecutive levels)")
            out.append(("parallel", kids, 1, 1))
        elif tag == "Hierarchical":
            _flatten(node.get("nodes"), out, f"{where}.nodes")
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


def _real(v: Any, where: str) -> float:
    return real(v, where, "Timeloop")


def _num(attrs: Mapping[str, Any], key: str, where: str) -> float | None:
    v = attrs.get(key)
    if v is None:
        return None
    x = _real(v, f"{where}: attribute {key}")
    if x <= 0:
        raise ValueError(f"Timeloop {where}: attribute {key} must be a positive number, got {shown(v)}")
    return x


def _tree_entries(root: Mapping[str, Any], roles: Mapping[str, str]
                  ) -> tuple[list[dict[str, Any]], Any, dict[str, Any], float | None]:
    """The v0.4 tree as top-down level entries (name, node, tensors, fanout below), the
    compute node, the components' constraints and the cycle time."""
    flat: list[tuple[str, Any, int, int]] = []
    _flatten(root["nodes"], flat)
    if not flat or flat[-1][0] != "component":
        raise ValueError("Timeloop architecture: the last node must be the compute unit (a !Component)")
    compute = flat[-1][1]
    for kind, node, _, _ in flat[:-1]:
        if kind == "component" and _is_compute(node):
            raise ValueError(f"Timeloop component {node.get('name')!r}: a compute unit must be the last node")
    cycle_s = None
    for kind, node, _, _ in flat:
        if kind == "container":
            v = (node.get("attributes") or {}).get("global_cycle_seconds")
            if v is not None:
                cycle_s = _real(v, f"container {node.get('name')!r}: attribute global_cycle_seconds")

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


def _processed_entries(root: Mapping[str, Any], arch_constraints: Any, roles: Mapping[str, str]
                       ) -> tuple[list[dict[str, Any]], Any, dict[str, Any], float | None]:
    """The flattened form Timeloop's front end writes (``parsed-processed-input.yaml``:
    ``subtree`` / ``local`` lists, outermost first, names ``X[1..N]`` with ``N``
    instances and ``meshX`` / ``meshY`` their arrangement; ``dummy_storage`` levels for
    the containers' fanouts; ``architecture_constraints`` with each level's bypass) as the
    entries of :func:`_tree_entries`. The fanout below a level is the next level's
    instances over its own, split by the ratio of their meshes."""
    items: list[Any] = []

    def walk(tree: Any) -> None:
        for st in tree or []:
            items.extend(st.get("local") or [])
            walk(st.get("subtree"))

    walk(root.get("subtree"))
    cycle_s = None
    for st in root.get("subtree") or []:
        v = (st.get("attributes") or {}).get("global_cycle_seconds")
        if v is not None:
            cycle_s = _real(v, f"subtree {st.get('name')!r}: attribute global_cycle_seconds")
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
    for it in items:
        m = _LEVEL_NAME.match(str(it.get("name")))
        if not m or m.group(2) != "1":
            raise ValueError(f"Timeloop architecture: level name {it.get('name')!r} is not NAME[1..N]")
        attrs = dict(it.get("attributes") or {})
        levels.append({"name": m.group(1), "n": int(m.group(3)), "mx": int(attrs.get("meshX", 1)),
                       "my": int(attrs.get("meshY", 1)), "item": it, "attrs": attrs})
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
        attrs = {k: v for k, v in lv["attrs"].items() if k not in ("meshX", "meshY")}
        node = {"name": lv["name"], "class": it.get("class"), "attributes": attrs}
        tensors = frozenset(set(OPERANDS) - bypass_of.get(lv["name"], set()))
        entries.append({"name": lv["name"], "node": node, "tensors": tensors, "fanout": fan})
    comp_node = {"name": compute["name"], "class": compute["item"].get("class"), "attributes": compute["attrs"]}
    return entries, comp_node, constraints, cycle_s


def arch_from_timeloop(arch: Mapping[str, Any], ert: Any = None, art: Any = None, *,
                       roles: Mapping[str, str] | None = None,
                       clock_mhz: float | None = None, name: str | None = None,
                       mac_leakage: str = "timeloop") -> TimeloopTranslation:
    """A parsed Timeloop v0.4 architecture (the file's top mapping, or its
    ``architecture`` value), with Accelergy's ERT (needed for energies) and ART, as an
    ArchSpec (rules in the module docstring). ``roles`` maps data-space names to
    operands (default :data:`DATASPACE_ROLES`); ``clock_mhz`` defaults to
    ``1 / global_cycle_seconds`` where a container gives it, else 1000."""
    root = arch.get("architecture", arch)
    if not isinstance(root, Mapping) or ("nodes" not in root and "subtree" not in root):
        raise ValueError("a Timeloop v0.4 architecture is a mapping with 'nodes' (the !Container / !Component "
                         "tree), or the flattened 'subtree' / 'local' form its front end writes")
    version = str(root.get("version", "0.4"))
    if version != "0.4":
        raise ValueError(f"Timeloop architecture version {version!r}: only version 0.4 is read")
    roles = dict(roles or DATASPACE_ROLES)
    if sorted(roles.values()) != sorted(OPERANDS):
        raise ValueError(f"roles must map three data spaces onto W, I, O, got {roles}")
    energies, areas = _ert_table(ert), _art_table(art)
    if "subtree" in root:
        entries, compute, constraints, cycle_s = _processed_entries(root, arch.get("architecture_constraints"), roles)
        form = "processed"
    else:
        entries, compute, constraints, cycle_s = _tree_entries(root, roles)
        form = "tree"
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
        node = e["node"]
        if node is None:
            levels.append(MemoryLevel(e["name"], tensors=frozenset(), capacity_words=0, instances=e["instances"],
                                      fanout_x=e["fanout"][0], fanout_y=e["fanout"][1]))
            continue
        cname = e["name"]
        where = f"component {cname!r}"
        attrs = dict(node.get("attributes") or {})
        for k in attrs:
            if k.startswith("metadata") or k in ("network", "compression"):
                raise ValueError(f"Timeloop {where}: attribute {k} (sparse-tensor or network modelling) cannot be "
                                 "expressed")
            if k not in _SEMANTIC and k not in _ACCELERGY_ONLY:
                raise ValueError(f"Timeloop {where}: attribute {k!r} is not understood (known: "
                                 f"{sorted(_SEMANTIC)}; Accelergy-only, ignored: {sorted(_ACCELERGY_ONLY)})")
        if "network" in node or "networks" in node:
            raise ValueError(f"Timeloop {where}: network specifications cannot be expressed")
        for k, want in (("cluster_size", 1), ("multiple_buffering", 1)):
            if k in attrs and _real(attrs[k], f"{where}: attribute {k}") != want:
                raise ValueError(f"Timeloop {where}: {k} = {attrs[k]} cannot be expressed (an ArchSpec level "
                                 f"has {k} {want}); refused rather than approximated")
        if "min_utilization" in attrs and _real(attrs["min_utilization"], f"{where}: attribute min_utilization") != 0:
            raise ValueError(f"Timeloop {where}: min_utilization = {attrs['min_utilization']} is a mapspace "
                             "constraint the ArchSpec cannot hold")
        datawidth = _num(attrs, "datawidth", where) or _num(attrs, "word_bits", where)
        width = _num(attrs, "width", where)
        if datawidth is None:
            datawidth = width
        if datawidth is None:
            raise ValueError(f"Timeloop {where}: needs datawidth (bits per word)")
        if depth == 0:
            word_bits = int(datawidth)
        block = _num(attrs, "block_size", where)
        if block is None:
            block = width / datawidth if width is not None else 1.0
        if not float(block).is_integer():
            raise ValueError(f"Timeloop {where}: width / datawidth = {block:g} words per access is not whole")
        size = _num(attrs, "size", where)
        dep = _num(attrs, "depth", where)
        if size is not None:
            cap: int | None = int(size)
        elif dep is not None:
            cap = int(dep * block)
        else:
            cap = None
        if cap is None and depth != 0:
            raise ValueError(f"Timeloop {where}: no depth or size; only the outermost level may be unbounded")
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
        rd, wr = acts.get("read", 0.0), acts.get("write", 0.0)
        upd = acts.get("update", wr)
        if "O" in e["tensors"] and upd != wr:
            raise ValueError(f"ERT: {cname!r} update energy {upd} differs from its write energy {wr}; an ArchSpec "
                             "has one write energy per operand (fills and updates alike)")
        area = areas.get(cname, 0.0) * e["instances"]
        total_area_um2 += area
        levels.append(MemoryLevel(cname, tensors=e["tensors"], capacity_words=cap, instances=e["instances"],
                                  fanout_x=e["fanout"][0], fanout_y=e["fanout"][1], read_energy_pj=rd,
                                  write_energy_pj=wr, bandwidth_words_per_cycle=bws["shared_bandwidth"],
                                  read_bandwidth_words_per_cycle=rbw, write_bandwidth_words_per_cycle=wbw,
                                  leakage_pj_per_cycle=acts.get("leak", 0.0), vector_words=int(block),
                                  area_mm2=area * 1e-6))
    cname = str(compute.get("name"))
    cacts = energies.get(cname, {})
    if energies and cname not in energies:
        raise ValueError(f"ERT has no table for the compute unit {cname!r}")
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
                    mac_energy_pj=cacts.get("compute", 0.0), word_bits=word_bits or 16, clock_mhz=clock_mhz,
                    area_mm2=total_area_um2 * 1e-6, kind="timeloop")
    return TimeloopTranslation(spec, tuple(lv.name for lv in spec.levels), roles, constraints, form)
