"""AccelForge workloads (``workload:`` with an ``iteration_space_shape`` and ``einsums``)
as :class:`~mappers.workloads.Layer` s.

An einsum lists its tensor accesses, each a ``projection`` (one index expression per
tensor axis: a rank variable, or a sum of rank variables with integer coefficients such
as ``2*p + r``), the output marked ``output: True``; ``renames`` may say which tensor is
the ``input``, the ``weight`` and the ``output``. The iteration space gives each rank
variable's bound (``0 <= m < 128``). :func:`layer_from_accelforge` reads one einsum of
three tensors (``I``, ``W``, ``O`` by ``renames``, else the output and then the first two
inputs as ``I`` and ``W`` in the order listed); one of more or fewer tensors, an index
expression that is not linear with integer coefficients, or a bound that does not start
at 0 cannot be expressed and is refused by name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from accelerators.interop.accelforge import count
from mappers.workloads import Layer, TensorSpec

__all__ = ["layer_from_accelforge"]

_BOUND = re.compile(r"^\s*0\s*<=\s*([A-Za-z_][A-Za-z_0-9]*)\s*<\s*(.+?)\s*$")
_TERM = re.compile(r"^\s*(?:(\d{1,18})\s*\*\s*)?([A-Za-z_][A-Za-z_0-9]*)\s*(?:\*\s*(\d{1,18}))?\s*$")


def layer_from_accelforge(workload: Mapping[str, Any], einsum: str | None = None
                          ) -> tuple[Layer, dict[str, str], int]:
    """One einsum of a parsed AccelForge workload (the file's top mapping or its
    ``workload`` value) as a Layer, with its tensor names -> operands and its bits per
    value (``bits_per_value: {All: 8}``; one width for every tensor)."""
    root = workload.get("workload", workload)
    if not isinstance(root, Mapping) or "einsums" not in root:
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
    widths = {count(v, "bits_per_value") for v in (bpv.values() if isinstance(bpv, Mapping) else [bpv])}
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
