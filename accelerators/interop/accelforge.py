"""AccelForge architecture specs (the ``arch:`` list of ``!Memory``, ``!Fanout`` and
``!Compute`` nodes) as an :class:`~accelerators.arch.ArchSpec`.

AccelForge (the Timeloop team's successor, ``accelforge`` on PyPI) lists an accelerator's
nodes outermost first, in un-prefixed SI units (its FAQ: joules, seconds, square metres,
bits). The rules of :func:`arch_from_accelforge`, on a spec whose Jinja templates and
variables are already expanded (numbers, ``inf``, or arithmetic of numbers):

* **Levels.** Each ``!Memory`` is a level (the list reversed: ArchSpec levels are
  innermost first); the first is the backing store (``size: inf``). ``size`` is in bits:
  capacity = ``size / bits_per_value`` words. The operands a level may hold are its
  ``tensors.may_keep`` (else ``keep``), a set expression over ``All``, ``Intermediates``
  (empty for one einsum), the role names ``input`` / ``weight`` / ``output``, the tensor
  names of the workload, other memories' names (their sets), ``~`` (complement), ``|``
  and ``&``.
* **Fanouts.** A node's ``spatial`` list (``{name, fanout}`` entries, at most two: X then
  Y) is the fanout below it. A ``!Fanout`` node is a tensor-less level with that fanout
  (as a Timeloop container); a ``!Compute`` node's own ``spatial`` is a fanout of the
  memory just above it.
* **Actions.** ``read`` / ``write`` ``energy`` (J per action) -> pJ per access; an action
  moves ``bits_per_action`` (default ``bits_per_value``) bits, ``bits_per_action /
  bits_per_value`` words: :attr:`MemoryLevel.vector_words` (both actions must agree). The
  compute node's ``compute`` energy is the MAC's. ``leak_power`` (W) is
  ``leakage_pj_per_cycle`` at ``clock_mhz``; ``area`` (m^2) the level's area per instance.

**Strict reading.** Every key is read or refused, by node and key path. Keys with
AccelForge's neutral values (``enabled: true``, ``n_parallel_instances: 1``, a fanout's
``may_reuse: All``, a memory's ``tensors.back: Nothing`` ...) say nothing the ArchSpec
lacks and are read as such; ``energy_scale``, ``area_scale`` and ``leak_power_scale``
scale what they scale; ``component_class`` and ``extra_attributes_for_component_model``
(read only by AccelForge's component models) are accepted where every value they would
compute is given. Refused outright: a node kind other than these three; a key AccelForge
does not define or this reader does not know; an action energy left to AccelForge's
component models (``component_class`` without ``energy``: they are not read); an action
other than ``read`` / ``write`` (``compute``); more than two fanout dimensions; a leaking
compute node; an expression that names a variable; other values of the neutral keys.
Refused unless the caller names them in ``ignore`` (:data:`IGNORABLE`), and then listed
with their values in the result's ``dropped``: what coexplore's model does not use --
AccelForge's latency model (a non-zero action ``latency``, a finite ``throughput``, a
``total_latency``), restrictions of the mapping search (a fanout's ``reuse``,
``may_reuse``, ``min_usage``, ``loop_bounds``; a memory's ``tensors.tile_shape``,
``no_refetch_from_above``, ``no_resend_to_below``, ``tensor_order_options``,
``force_memory_hierarchy_order``), and a missing ``area`` or ``leak_power`` (which
AccelForge would compute with its models; dropped, they are 0).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Mapping
from typing import Any

from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from accelerators.interop.timeloop import TimeloopTranslation
from accelerators.interop.values import shown

__all__ = ["IGNORABLE", "MAX_EXPRESSION_CHARS", "ROLE_NAMES", "arch_from_accelforge", "count", "number"]

IGNORABLE: dict[str, str] = {
    "latency": "an action's latency (AccelForge sums action latencies into a component's): coexplore's cycles are "
               "compute and per-level bandwidth",
    "throughput": "an action's finite throughput: coexplore's cycles are compute and per-level bandwidth",
    "total_latency": "a component's latency expression (AccelForge's latency model): coexplore's cycles are "
                     "compute and per-level bandwidth",
    "reuse": "the tensors a fanout's loops must reuse, a restriction of the mapping search that coexplore's "
             "mappers do not read",
    "may_reuse": "the tensors a fanout may reuse, a restriction of the mapping search that coexplore's mappers do "
                 "not read (an ArchSpec fanout multicasts every tensor)",
    "min_usage": "a fanout's least utilization, a mapping constraint coexplore's mappers do not read",
    "loop_bounds": "bounds on a fanout's loops, a mapping constraint coexplore's mappers do not read",
    "tile_shape": "bounds on a memory's tiles, a mapping constraint coexplore's mappers do not read",
    "no_refetch_from_above": "tensors a memory may fetch only once, a mapping constraint coexplore's mappers do "
                             "not read",
    "no_resend_to_below": "tensors a memory may send below only once, a mapping constraint coexplore's mappers do "
                          "not read",
    "tensor_order_options": "orders of a memory's storage nodes, a mapping constraint coexplore's mappers do not "
                            "read",
    "force_memory_hierarchy_order": "false: storage nodes out of hierarchy order, which a coexplore level cannot "
                                    "express",
    "area": "a component without an area, which AccelForge would compute with its component models (not run "
            "here): dropped, the area is 0",
    "leak_power": "a component without a leak_power, which AccelForge would compute with its component models "
                  "(not run here): dropped, the leakage is 0",
}
"""What :func:`arch_from_accelforge`'s ``ignore`` may name, each with what dropping it
leaves out."""

_COMPONENT_KEYS = {"name", "component_class", "component_model", "component_modeling_log", "actions", "enabled",
                   "area", "total_area", "area_scale", "leak_power", "total_leak_power", "leak_power_scale",
                   "energy_scale", "total_latency", "latency_scale", "n_parallel_instances",
                   "extra_attributes_for_component_model", "spatial", "support_concurrent_binding"}
_NODE_KEYS = {"Memory": _COMPONENT_KEYS | {"size", "tensors", "bits_per_value_scale", "bits_per_action",
                                           "skip_initial_output_write"},
              "Compute": _COMPONENT_KEYS | {"skip_initial_output_write"},
              "Fanout": {"name", "spatial", "support_concurrent_binding"}}
_ACTION_KEYS = {"name", "energy", "energy_scale", "latency", "latency_scale", "throughput", "bits_per_action",
                "extra_attributes_for_component_model"}
_SPATIAL_KEYS = {"name", "fanout", "may_reuse", "reuse", "min_usage", "loop_bounds", "usage_scale", "power_gateable"}
_TENSORS_KEYS = {"keep", "may_keep", "back", "tile_shape", "no_refetch_from_above", "no_resend_to_below",
                 "tensor_order_options", "force_memory_hierarchy_order"}
#: keys whose value says nothing beyond the ArchSpec: key -> (values that do, why any other cannot be expressed)
_NEUTRAL = {
    "enabled": ((True, "True", "true"), "a component enabled per einsum cannot be expressed"),
    "total_area": ((None,), "AccelForge computes it (its docs: do not set it)"),
    "total_leak_power": ((None,), "AccelForge computes it (its docs: do not set it)"),
    "component_model": ((None,), "a component model object is not read"),
    "n_parallel_instances": ((1, 1.0, "1"), "parallel instances (area and leakage scaled, latency divided) cannot "
                                            "be expressed"),
    "support_concurrent_binding": ((False, "False", "false"), "einsums bound concurrently cannot be expressed"),
    "skip_initial_output_write": ((True, "True", "true"), "outputs initialized from above cannot be expressed "
                                                          "(coexplore's first write of an output reads nothing)"),
    "usage_scale": ((1, 1.0, "1"), "a scaled fanout usage cannot be expressed"),
    "power_gateable": ((False, "False", "false"), "power-gated instances cannot be expressed (coexplore charges "
                                                  "every instance's leakage)"),
    "back": ((None, "Nothing"), "a tensor backed at this memory cannot be expressed"),
}
#: droppable keys (IGNORABLE) and the values that need no dropping
_DROPPABLE_NEUTRAL = {"may_reuse": (None, "All"), "reuse": (None, "Nothing"), "min_usage": (None, 0, 0.0, "0"),
                      "loop_bounds": (None, []), "tile_shape": (None, []), "no_refetch_from_above": (None, "~All"),
                      "no_resend_to_below": (None, "~All"), "tensor_order_options": (None, []),
                      "force_memory_hierarchy_order": (None, True, "True", "true")}


class _Strict:
    """The key checks of one translation, and what ``ignore`` dropped."""

    def __init__(self, ignore: frozenset[str]) -> None:
        self.ignore = ignore
        self.dropped: list[str] = []

    def keys(self, d: Any, allowed: set[str], where: str, what: str) -> Mapping[str, Any]:
        if not isinstance(d, Mapping):
            raise ValueError(f"AccelForge {where}: {what} must be a mapping, got {shown(d)}")
        unknown = sorted(str(k) for k in d if k not in allowed)
        if unknown:
            raise ValueError(f"AccelForge {where}: {what} key {unknown[0]!r} is not one coexplore reads "
                             f"(read: {sorted(allowed)}); cannot be expressed")
        for k, (ok, why) in _NEUTRAL.items():
            if k in d and not _same(d[k], ok):
                raise ValueError(f"AccelForge {where}: {k} = {shown(d[k])}: {why}")
        for k, ok in _DROPPABLE_NEUTRAL.items():
            if k in d and not _same(d[k], ok):
                self.drop(where, k, d[k])
        return d

    def drop(self, where: str, key: str, value: Any) -> None:
        if key not in self.ignore:
            raise ValueError(f"AccelForge {where}: {key} = {shown(value)}: {IGNORABLE[key]}; refused rather than "
                             f"dropped (ignore=({key!r},) drops it, listed in the result's dropped)")
        self.dropped.append(f"{where}: {key} = {shown(value)}")


def _same(v: Any, allowed: tuple[Any, ...]) -> bool:
    return any(v is a or (type(v) is type(a) and v == a) or (isinstance(v, str) and isinstance(a, str)
                                                              and v.replace(" ", "") == a) for a in allowed)

ROLE_NAMES = {"input": "I", "weight": "W", "output": "O"}
"""AccelForge's role names (a workload's ``renames``) -> operands."""

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Pow: operator.pow, ast.FloorDiv: operator.floordiv}


MAX_EXPRESSION_CHARS = 200
"""Longest arithmetic expression :func:`number` reads: a spec's numbers are short
(``64 * 1024 * 8``); a longer one is a mistake or an attack (deep nesting, huge powers)."""


def number(v: Any, where: str) -> float:
    """A number, ``inf``, or an arithmetic expression of numbers (``"12 * 16"``; at most
    :data:`MAX_EXPRESSION_CHARS` characters). Anything else, a NaN, a result that
    overflows, divides by zero or is not a finite real number (only ``inf`` itself may be
    infinite) is a one-line ``ValueError`` naming ``where``; never a hang: each operation
    is on floats, whose powers overflow at once instead of growing as integers do."""
    if isinstance(v, bool):
        raise ValueError(f"AccelForge {where}: expected a number, got {v!r}")
    if isinstance(v, int | float):
        try:
            x = float(v)
        except OverflowError:
            raise ValueError(f"AccelForge {where}: {shown(v)} is too large for a number") from None
        if math.isnan(x):
            raise ValueError(f"AccelForge {where}: expected a number, got NaN")
        return x
    if not isinstance(v, str):
        raise ValueError(f"AccelForge {where}: expected a number, got {shown(v)}")
    if v.strip().lower() in ("inf", "infinity"):
        return math.inf
    if len(v) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"AccelForge {where}: an expression of {len(v)} characters is longer than "
                         f"the {MAX_EXPRESSION_CHARS} read ({shown(v)})")

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return _BIN[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.Name):
            raise ValueError(f"AccelForge {where}: {shown(v)} names {node.id!r}; expand the spec's variables "
                             "and templates first (numbers and arithmetic are read)")
        raise ValueError(f"AccelForge {where}: {shown(v)} is not arithmetic of numbers")

    try:
        x = ev(ast.parse(v.strip(), mode="eval").body)
    except (SyntaxError, RecursionError, MemoryError):
        raise ValueError(f"AccelForge {where}: {shown(v)} is not arithmetic of numbers") from None
    except OverflowError:
        raise ValueError(f"AccelForge {where}: {shown(v)} overflows (its value is beyond a float's range)") from None
    except ZeroDivisionError:
        raise ValueError(f"AccelForge {where}: {shown(v)} divides by zero") from None
    if not isinstance(x, float) or not math.isfinite(x):   # (-8) ** 0.5 is complex; 1e308 * 10 is inf
        raise ValueError(f"AccelForge {where}: {shown(v)} is not a finite real number "
                         f"(it evaluates to {x}); write inf itself for an unbounded size")
    return x


def count(v: Any, where: str) -> int:
    """A positive whole number (:func:`number`, then checked): a bit width, a loop bound."""
    x = number(v, where)
    if not (math.isfinite(x) and x >= 1 and x.is_integer()):
        raise ValueError(f"AccelForge {where}: expected a positive whole number, got {shown(v)}")
    return int(x)


_TOKEN = re.compile(r"\s*(~|\||&|\(|\)|[A-Za-z_][A-Za-z_0-9]*)")


def _tensor_set(expr: Any, names: Mapping[str, frozenset[str]], where: str) -> frozenset[str]:
    """Evaluate an AccelForge tensor-set expression over the operands."""
    if isinstance(expr, list):
        out: frozenset[str] = frozenset()
        for e in expr:
            out |= _tensor_set(e, names, where)
        return out
    text = str(expr)
    toks, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip() == "":
                break
            raise ValueError(f"AccelForge {where}: cannot read the tensor set {text!r} at {text[pos:]!r}")
        toks.append(m.group(1))
        pos = m.end()
    everything = frozenset(OPERANDS)

    def atom(i: int) -> tuple[frozenset[str], int]:
        if i >= len(toks):
            raise ValueError(f"AccelForge {where}: tensor set {text!r} ends early")
        t = toks[i]
        if t == "~":
            s, j = atom(i + 1)
            return everything - s, j
        if t == "(":
            s, j = union(i + 1)
            if j >= len(toks) or toks[j] != ")":
                raise ValueError(f"AccelForge {where}: unbalanced parentheses in {text!r}")
            return s, j + 1
        if t in names:
            return names[t], i + 1
        raise ValueError(f"AccelForge {where}: tensor set {text!r} names {t!r}, which is no tensor, role or "
                         f"memory (known: {sorted(names)})")

    def inter(i: int) -> tuple[frozenset[str], int]:
        s, i = atom(i)
        while i < len(toks) and toks[i] == "&":
            r, i = atom(i + 1)
            s &= r
        return s, i

    def union(i: int) -> tuple[frozenset[str], int]:
        s, i = inter(i)
        while i < len(toks) and toks[i] == "|":
            r, i = inter(i + 1)
            s |= r
        return s, i

    s, end = union(0)
    if end != len(toks):
        raise ValueError(f"AccelForge {where}: cannot read the tensor set {text!r}")
    return s


def _fanout(node: Mapping[str, Any], where: str, strict: _Strict) -> tuple[int, int]:
    sp = node.get("spatial") or []
    if not isinstance(sp, list):
        raise ValueError(f"AccelForge {where}: spatial must be a list of {{name, fanout}} entries")
    if len(sp) > 2:
        raise ValueError(f"AccelForge {where}: {len(sp)} fanout dimensions; an ArchSpec fanout has two (X, Y)")
    out = []
    for e in sp:
        strict.keys(e, _SPATIAL_KEYS, f"{where} fanout {e.get('name') if isinstance(e, Mapping) else e!r}",
                    "fanout")
        f = number(e.get("fanout", 1), f"{where} fanout {e.get('name')!r}")
        if not float(f).is_integer() or f < 1:
            raise ValueError(f"AccelForge {where}: fanout {e.get('name')!r} must be a positive integer, got {f:g}")
        out.append(int(f))
    padded = [*out, 1, 1]
    return padded[0], padded[1]


def _actions(node: Mapping[str, Any], where: str, names: tuple[str, ...],
             strict: _Strict) -> dict[str, dict[str, Any]]:
    """The node's actions by name, checked; each action's ``energy`` scaled by its and
    the node's ``energy_scale``."""
    raw = node.get("actions") or []
    if not isinstance(raw, list):
        raise ValueError(f"AccelForge {where}: actions must be a list of {{name, energy, ...}}")
    acts: dict[str, dict[str, Any]] = {}
    for a in raw:
        strict.keys(a, _ACTION_KEYS, f"{where} action {a.get('name') if isinstance(a, Mapping) else a!r}", "action")
        n = str(a.get("name"))
        if n not in names:
            raise ValueError(f"AccelForge {where}: action {n!r} cannot be expressed (a {'!Compute' if 'compute' in names else '!Memory'} "
                             f"node's actions are read as {list(names)})")
        acts[n] = dict(a)
    if "total_latency" in node:
        strict.drop(where, "total_latency", node["total_latency"])
    node_scale = number(node.get("energy_scale", 1), f"{where} energy_scale")
    for n in names:
        a = acts.get(n)
        if a is None or a.get("energy") is None:
            raise ValueError(f"AccelForge {where}: action {n!r} has no energy (energies from AccelForge's "
                             "component models are not read; give each action's energy)")
        a["energy"] = number(a["energy"], f"{where} {n} energy") * node_scale * number(
            a.get("energy_scale", 1), f"{where} action {n} energy_scale")
        lat = a.get("latency")
        if lat is not None and number(lat, f"{where} action {n} latency") != 0:
            strict.drop(f"{where} action {n!r}", "latency", lat)
        if "throughput" in a and number(a["throughput"], f"{where} action {n} throughput") != math.inf:
            strict.drop(f"{where} action {n!r}", "throughput", a["throughput"])
    return acts


def _given(node: Mapping[str, Any], key: str, where: str, strict: _Strict) -> float:
    """``area`` or ``leak_power`` x its ``*_scale``; a missing one is AccelForge's component
    models' to compute, refused unless dropped (then 0)."""
    if node.get(key) is None:
        strict.drop(where, key, None)
        return 0.0
    return number(node[key], f"{where} {key}") * number(node.get(f"{key}_scale", 1), f"{where} {key}_scale")


def arch_from_accelforge(spec: Mapping[str, Any], roles: Mapping[str, str] | None = None, *,
                         bits_per_value: int = 8, clock_mhz: float = 1000.0,
                         name: str = "accelforge", ignore: Any = ()) -> TimeloopTranslation:
    """A parsed AccelForge architecture (the file's top mapping or its ``arch`` value) as
    an ArchSpec (rules in the module docstring). ``roles``: the workload's tensor names ->
    operands (:func:`mappers.interop.accelforge.layer_from_accelforge` gives them);
    ``bits_per_value``: the workload's word size; ``ignore``: :data:`IGNORABLE` names the
    caller accepts dropping (listed in the result's ``dropped``). The result is a
    :class:`~accelerators.interop.timeloop.TimeloopTranslation` (level names, roles), the
    form mapping writers take."""
    ig = frozenset(ignore)
    bad = sorted(ig - set(IGNORABLE))
    if bad:
        raise ValueError(f"ignore names {bad}, which are not droppable AccelForge keys (droppable: "
                         f"{sorted(IGNORABLE)})")
    strict = _Strict(ig)
    root = spec.get("arch", spec)
    nodes = root.get("nodes") if isinstance(root, Mapping) else None
    if not isinstance(nodes, list) or not nodes:
        raise ValueError("an AccelForge architecture is a mapping with 'nodes' (a list of !Memory, !Fanout, !Compute)")
    strict.keys(root, {"nodes", "extra_attributes_for_all_component_models"}, "arch", "architecture")
    if not isinstance(bits_per_value, int) or bits_per_value < 1:
        raise ValueError(f"bits_per_value must be a positive integer, got {bits_per_value!r}")
    roles = dict(roles or {})
    known: dict[str, frozenset[str]] = {"All": frozenset(OPERANDS), "Intermediates": frozenset(), "Nothing": frozenset()}
    known.update({k: frozenset({v}) for k, v in ROLE_NAMES.items()})
    known.update({k: frozenset({v}) for k, v in roles.items()})
    entries: list[dict[str, Any]] = []
    compute = None
    for i, node in enumerate(nodes):
        tag = getattr(node, "tag", "")
        nm = str(node.get("name", f"node{i}"))
        where = f"node {nm!r}"
        if compute is not None:
            raise ValueError(f"AccelForge {where}: a node after the !Compute node cannot be expressed")
        if tag in _NODE_KEYS:
            strict.keys(node, _NODE_KEYS[tag], where, f"!{tag} node")
        if tag == "Memory":
            sets = strict.keys(node.get("tensors") or {}, _TENSORS_KEYS, f"{where} tensors", "tensors set")
            held = _tensor_set(sets.get("may_keep", sets.get("keep", "All")), known, where)
            if "keep" in sets:
                held |= _tensor_set(sets["keep"], known, where)
            known[nm] = held
            size = number(node.get("size", "inf"), f"{where} size")
            acts = _actions(node, where, ("read", "write"), strict)
            if node.get("bits_per_value_scale") not in (None, {"All": 1}):
                raise ValueError(f"AccelForge {where}: bits_per_value_scale = {shown(node['bits_per_value_scale'])}: "
                                 "tensors of other widths at one memory cannot be expressed (an ArchSpec has one "
                                 "word size)")
            node_bits = node.get("bits_per_action", bits_per_value)
            widths = {number(acts[a].get("bits_per_action", node_bits), f"{where} bits_per_action")
                      for a in ("read", "write")}
            if len(widths) != 1:
                raise ValueError(f"AccelForge {where}: read and write move different bits_per_action {sorted(widths)}; "
                                 "an ArchSpec level has one access width")
            vec = widths.pop() / bits_per_value
            if not float(vec).is_integer() or vec < 1:
                raise ValueError(f"AccelForge {where}: bits_per_action / bits_per_value = {vec:g} is not a whole "
                                 "number of words")
            leak_w = _given(node, "leak_power", where, strict)
            entries.append({"name": nm, "tensors": held, "size": size, "vector": int(vec),
                            "read": acts["read"]["energy"] * 1e12, "write": acts["write"]["energy"] * 1e12,
                            "leak": leak_w * 1e12 / (clock_mhz * 1e6), "area": _given(node, "area", where, strict) * 1e6,
                            "fanout": _fanout(node, where, strict)})
        elif tag == "Fanout":
            entries.append({"name": nm, "tensors": frozenset(), "size": 0.0, "vector": 1, "read": 0.0, "write": 0.0,
                            "leak": 0.0, "area": 0.0, "fanout": _fanout(node, where, strict), "fanout_node": True})
        elif tag == "Compute":
            compute = node
            acts = _actions(node, where, ("compute",), strict)
            if _given(node, "leak_power", where, strict) != 0:
                raise ValueError(f"AccelForge {where}: a leaking compute unit cannot be expressed (an ArchSpec has no "
                                 "MAC leakage)")
            fx, fy = _fanout(node, where, strict)
            if fx * fy > 1:
                if not entries:
                    raise ValueError(f"AccelForge {where}: a replicated compute unit needs a memory above it")
                ex, ey = entries[-1]["fanout"]
                entries[-1]["fanout"] = (ex * fx, ey * fy)
            mac_pj = acts["compute"]["energy"] * 1e12
            mac_area = _given(node, "area", where, strict) * 1e6
        else:
            raise ValueError(f"AccelForge {where}: a !{tag or type(node).__name__} node cannot be expressed "
                             "(!Memory, !Fanout and !Compute are read)")
    if compute is None:
        raise ValueError("AccelForge architecture: no !Compute node")
    if not entries or entries[0].get("fanout_node") or entries[0]["size"] != math.inf:
        raise ValueError("AccelForge architecture: the first node must be the backing store (a !Memory of size inf)")
    inst, levels = 1, []
    for depth, e in enumerate(entries):
        where = f"node {e['name']!r}"
        if e.get("fanout_node"):
            cap: Any = 0
        elif depth == 0:
            cap = None
            if e["tensors"] != frozenset(OPERANDS):
                raise ValueError(f"AccelForge {where}: the backing store must hold every tensor")
        else:
            if e["size"] == math.inf:
                raise ValueError(f"AccelForge {where}: size inf below the backing store cannot be expressed")
            cap = e["size"] / bits_per_value
            cap = int(cap) if float(cap).is_integer() else cap
        levels.append(MemoryLevel(e["name"], tensors=e["tensors"], capacity_words=cap, instances=inst,
                                  fanout_x=e["fanout"][0], fanout_y=e["fanout"][1], read_energy_pj=e["read"],
                                  write_energy_pj=e["write"], leakage_pj_per_cycle=e["leak"], vector_words=e["vector"],
                                  area_mm2=e["area"] * inst))
        inst *= e["fanout"][0] * e["fanout"][1]
    area = sum(lv.area_mm2 for lv in levels) + mac_area * inst
    levels.reverse()
    arch = ArchSpec(name, tuple(levels), mac_energy_pj=mac_pj, word_bits=bits_per_value, clock_mhz=clock_mhz,
                    area_mm2=area, kind="accelforge")
    names = dict(roles) if sorted(roles.values()) == sorted(OPERANDS) else {"Weights": "W", "Inputs": "I",
                                                                          "Outputs": "O"}
    return TimeloopTranslation(arch, tuple(lv.name for lv in arch.levels), names, dropped=tuple(strict.dropped))
