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

Refused, by node and key: a node kind other than these three; an action energy left to
AccelForge's component models (``component_class`` without ``energy``: they are not
read); a non-zero action ``latency``, a finite ``throughput`` or a ``total_latency``
(AccelForge's latency model -- a sum of action latencies -- is not coexplore's per-level
bandwidth); ``reuse`` / ``may_reuse`` / ``min_usage`` restrictions of a fanout (which
tensors may be multicast, a rule the ArchSpec has no field for); more than two fanout
dimensions; a leaking compute node; an expression that names a variable.
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

__all__ = ["MAX_EXPRESSION_CHARS", "ROLE_NAMES", "arch_from_accelforge", "count", "number"]

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


def _fanout(node: Mapping[str, Any], where: str) -> tuple[int, int]:
    sp = node.get("spatial") or []
    if not isinstance(sp, list):
        raise ValueError(f"AccelForge {where}: spatial must be a list of {{name, fanout}} entries")
    if len(sp) > 2:
        raise ValueError(f"AccelForge {where}: {len(sp)} fanout dimensions; an ArchSpec fanout has two (X, Y)")
    out = []
    for e in sp:
        for k in ("reuse", "may_reuse", "min_usage", "loop_bounds"):
            if k in e and e[k] not in (None, "All"):
                raise ValueError(f"AccelForge {where}: fanout {e.get('name')!r} sets {k} = {e[k]!r}, a "
                                 "restriction of which tensors are multicast or used there that cannot be expressed")
        f = number(e.get("fanout", 1), f"{where} fanout {e.get('name')!r}")
        if not float(f).is_integer() or f < 1:
            raise ValueError(f"AccelForge {where}: fanout {e.get('name')!r} must be a positive integer, got {f:g}")
        out.append(int(f))
    padded = [*out, 1, 1]
    return padded[0], padded[1]


def _actions(node: Mapping[str, Any], where: str, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    acts = {str(a.get("name")): a for a in node.get("actions") or []}
    if "total_latency" in node:
        raise ValueError(f"AccelForge {where}: total_latency (AccelForge's latency model) cannot be expressed; "
                         "coexplore's latency is compute cycles and per-level bandwidth")
    for n in names:
        a = acts.get(n)
        if a is None or "energy" not in a:
            raise ValueError(f"AccelForge {where}: action {n!r} has no energy (energies from AccelForge's "
                             "component models are not read; give each action's energy)")
        lat = number(a.get("latency", 0), f"{where} action {n} latency")
        if lat != 0:
            raise ValueError(f"AccelForge {where}: action {n!r} has latency {lat:g} s, which cannot be expressed "
                             "(AccelForge sums action latencies; coexplore counts bandwidth cycles)")
        if "throughput" in a and number(a["throughput"], f"{where} action {n} throughput") != math.inf:
            raise ValueError(f"AccelForge {where}: action {n!r} has a finite throughput, which cannot be expressed")
    return acts


def arch_from_accelforge(spec: Mapping[str, Any], roles: Mapping[str, str] | None = None, *,
                         bits_per_value: int = 8, clock_mhz: float = 1000.0,
                         name: str = "accelforge") -> TimeloopTranslation:
    """A parsed AccelForge architecture (the file's top mapping or its ``arch`` value) as
    an ArchSpec (rules in the module docstring). ``roles``: the workload's tensor names ->
    operands (:func:`mappers.interop.accelforge.layer_from_accelforge` gives them);
    ``bits_per_value``: the workload's word size. The result is a
    :class:`~accelerators.interop.timeloop.TimeloopTranslation` (level names, roles), the
    form mapping writers take."""
    root = spec.get("arch", spec)
    nodes = root.get("nodes") if isinstance(root, Mapping) else None
    if not isinstance(nodes, list) or not nodes:
        raise ValueError("an AccelForge architecture is a mapping with 'nodes' (a list of !Memory, !Fanout, !Compute)")
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
        if tag == "Memory":
            sets = node.get("tensors") or {}
            held = _tensor_set(sets.get("may_keep", sets.get("keep", "All")), known, where)
            if "keep" in sets:
                held |= _tensor_set(sets["keep"], known, where)
            known[nm] = held
            size = number(node.get("size", "inf"), f"{where} size")
            acts = _actions(node, where, ("read", "write"))
            widths = {number(acts[a].get("bits_per_action", bits_per_value), f"{where} bits_per_action")
                      for a in ("read", "write")}
            if len(widths) != 1:
                raise ValueError(f"AccelForge {where}: read and write move different bits_per_action {sorted(widths)}; "
                                 "an ArchSpec level has one access width")
            vec = widths.pop() / bits_per_value
            if not float(vec).is_integer() or vec < 1:
                raise ValueError(f"AccelForge {where}: bits_per_action / bits_per_value = {vec:g} is not a whole "
                                 "number of words")
            leak_w = number(node.get("leak_power", 0), f"{where} leak_power")
            entries.append({"name": nm, "tensors": held, "size": size, "vector": int(vec),
                            "read": number(acts["read"]["energy"], f"{where} read energy") * 1e12,
                            "write": number(acts["write"]["energy"], f"{where} write energy") * 1e12,
                            "leak": leak_w * 1e12 / (clock_mhz * 1e6), "area": number(node.get("area", 0), f"{where} area") * 1e6,
                            "fanout": _fanout(node, where)})
        elif tag == "Fanout":
            entries.append({"name": nm, "tensors": frozenset(), "size": 0.0, "vector": 1, "read": 0.0, "write": 0.0,
                            "leak": 0.0, "area": 0.0, "fanout": _fanout(node, where), "fanout_node": True})
        elif tag == "Compute":
            compute = node
            acts = _actions(node, where, ("compute",))
            if number(node.get("leak_power", 0), f"{where} leak_power") != 0:
                raise ValueError(f"AccelForge {where}: a leaking compute unit cannot be expressed (an ArchSpec has no "
                                 "MAC leakage)")
            fx, fy = _fanout(node, where)
            if fx * fy > 1:
                if not entries:
                    raise ValueError(f"AccelForge {where}: a replicated compute unit needs a memory above it")
                ex, ey = entries[-1]["fanout"]
                entries[-1]["fanout"] = (ex * fx, ey * fy)
            mac_pj = number(acts["compute"]["energy"], f"{where} compute energy") * 1e12
            mac_area = number(node.get("area", 0), f"{where} area") * 1e6
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
    return TimeloopTranslation(arch, tuple(lv.name for lv in arch.levels), names)
