"""Gradient-based hardware/mapping co-design in the spirit of DOSA (Hong et al., MICRO 2023).

DOSA descends a differentiable analytical model over a *continuous relaxation* of the
hardware (buffer sizes, PE counts) and of every layer's mapping (tile factors), from many
random starts, then rounds back to a legal design and scores it exactly.
:class:`GradientSearch` (and :func:`gradient_codesign`) does that here. It is a co-design
*strategy*, not an ask/tell optimizer: it needs the model, not just the objective.

**Relaxation.** One descent runs all starts at once (batched along the last axis):

* Hardware: the log of every numeric size parameter of the hardware space the model
  understands -- for :class:`~accelerators.spatial.SpatialArray` ``pe_x``, ``pe_y``,
  ``rf_{w,i,o}_words``, ``glb_kib``; for :class:`~accelerators.systolic.SystolicArray`
  ``rows``, ``cols``, ``{ifmap,filter,ofmap}_sram_kib`` -- clipped to the parameter's
  range after each step. Other parameters of the space (categorical ones, sizes the
  model does not read) stay at the start's value; starts that differ in them descend
  separately (one compiled model per group).
* Mapping: per layer, the log tile factor of every loop slot a dimension may use
  (:func:`mappers.mapping_space.allowed_slots`: temporal per on-chip level, spatial per fanout,
  dataflow rules included). The backing store's factor is *derived*, ``size /
  product(others)``, so the factors of every dimension multiply to its size by
  construction; after every step the log factors of each dimension are projected onto
  ``{z >= 0, sum(z) <= log size}`` (:func:`project_capped_simplex`), so every factor,
  the derived one included, stays ``>= 1`` (a coverage penalty is kept as a guard; it
  is zero after the projection). Loop orders and bypass are fixed per start: those of
  the heuristic mapping of the start hardware (``init="heuristic"``, the default) or of
  a random legal mapping (``init="random"``); the descent starts from that mapping's
  factors.
* Objective, per start: ``log(sum_l E_l * repeat) + log(sum_l latency_l * repeat)`` (log
  network EDP) ``+ penalty * V`` where ``V`` sums, in log ratios (scale-free, an exact
  penalty once ``penalty`` exceeds the objective's sensitivity): tile words over
  capacity per partition / shared buffer (the relaxed capacity), spatial products over
  the relaxed fanouts (PE dims), the inner factors' product over the dimension size, and
  ``relu(g(hw))`` for every user-supplied differentiable surrogate ``g`` of the hardware
  space's known constraints (``hw_constraints``; e.g. an iso-area budget). The relu has
  a zero subgradient *at* the boundary, so a start that exactly fills a buffer or the PE
  array is not pushed off it by the first step. Without ``hw_constraints`` nothing
  holds the hardware back from the space's bounds but the energy law and the repair
  below. Per-access
  energies follow the relaxed capacities through :mod:`accelerators.tech`'s SRAM law
  written in ``jax.numpy`` (:func:`sram_energy_pj_jnp`; constant under a normalized
  table such as Eyeriss's).
* Descent: Adam (written here; no optax) on ``jax.value_and_grad`` of the summed
  objectives (the starts are independent), float64 (``jax.enable_x64``); the step size
  warms up linearly over the first ``warmup`` (10 %) of the steps, then decays (cosine)
  from ``lr`` to ``lr_final * lr``. The walls are exact penalties (slope ``penalty`` in
  log units) and heuristic starts sit on them, so early full-size Adam steps overshoot:
  measured on 90 DQN starts (iso space, ``lr=0.05``), the relaxed objective first rises
  by a median 3.0 in log EDP (up to 13.6) without warm-up, 0.5 (up to 1.4) with it,
  before settling below the start. A checkpoint rounds each start's *best* iterate so
  far (``best_iterate``), not its current one.

The per-layer model is :func:`evaluators.differentiable.relaxed_model`'s: the same
``evaluators.loopnest.count`` on ``jax.numpy`` with ``integer=False``, the same latency
(max of compute -- with the systolic fill/drain closed form -- and bandwidth cycles).
It is called here directly, with loop orders, bypass bits and per-access energies as
*traced inputs* and a batch of starts, rather than through ``relaxed_model``, which bakes
order and bypass into the traced function: compiling one ``relaxed_model`` gradient takes
6-14 s per DQN layer, and every start (different orders) would recompile. Here each
network compiles once per process (cached). ``tests/optimizer/test_gradient.py`` checks
that both give the same energy and latency.

**Rounding and repair** (each candidate):

* Hardware: each relaxed parameter to the legal value nearest in log space (finite
  kinds: their grid; ``Real``: clipped), canonicalised by ``decode(encode(.))``. If the
  point violates a known constraint (``hw_space.validate(point) != []``), a best-first
  search over one-parameter moves (``Parameter.neighbors``), ordered by log distance to
  the relaxed optimum, returns the nearest point that validates; if none is found within
  ``repair_nodes`` expansions, the nearest of 4,096 feasible samples.
* Mappings, on the rebuilt architecture: (1) *snap*: every prime factor of every
  dimension, largest first, goes to the allowed slot whose relaxed log factor it fills
  best (the largest remaining deficit, at least half the prime's log, the fanout
  permitting), else to the backing store -- an exact divisor factorization; (2)
  *capacity repair*: while a tile overflows, move the prime whose removal shrinks the
  overflow most from an on-chip slot to the backing store; (3) *refine* (default on):
  steepest descent over :func:`mappers.heuristic.neighbourhood`
  (single prime-factor moves and adjacent loop swaps), per-layer EDP, starting from the
  snapped mapping -- i.e. the heuristic mapper re-run seeded with the rounded factors
  instead of its max-utilization start. Every result passes ``Mapping.violations``.
* Score: the exact numpy model per layer, summed into
  :func:`evaluators.nested.network_metrics` (the same metrics as
  :class:`~evaluators.nested.NestedEvaluator`: ``edp_uj_ms``, ``energy_uj``, ...).

**Evaluations.** One evaluation = one rounded candidate (hardware + mappings) scored by
the exact model, so budgets compare with BO or random search over the hardware space
(whose inner mapper also runs many mapping evaluations per hardware point). Each start
yields ``checkpoints`` candidates along its descent (evenly spaced, the last at the final
step), taken checkpoint-major (all starts at the first checkpoint, then the second, ...);
exact duplicates (same hardware and mappings) are skipped uncounted; ``budget`` caps the
total. The result keeps the best candidate and the best-so-far EDP after every evaluation.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelerators import tech as _tech
from accelerators.arch import OPERANDS, ArchSpec
from accelerators.spatial import SpatialArray
from accelerators.systolic import SystolicArray
from evaluators.differentiable import DATAFLOW_OVERHEAD
from evaluators.loopnest import count, evaluate_batch, layer_constants, prepare
from evaluators.nested import network_metrics
from mappers import zoo
from mappers.base import result_of
from mappers.heuristic import HeuristicMapper, descend
from mappers.mapping import Mapping as LayerMapping
from mappers.mapping import MappingBatch
from mappers.mapping_space import MappingSpaceInfo, allowed_slots, prime_factors
from mappers.sampling import random_mappings
from mappers.workloads import Layer

__all__ = ["GradientCandidate", "GradientResult", "GradientSearch", "RelaxedNetwork", "fit_capacity",
           "gradient_codesign", "project_capped_simplex", "refine_mapping", "round_hardware", "snap_mapping",
           "sram_energy_pj_jnp"]

# the hardware sizes each supported accelerator's relaxation reads
RELAXABLE = {
    "spatial": ("pe_x", "pe_y", "rf_w_words", "rf_i_words", "rf_o_words", "glb_kib"),
    "systolic": ("rows", "cols", "ifmap_sram_kib", "filter_sram_kib", "ofmap_sram_kib"),
}
ADAM_B1, ADAM_B2, ADAM_EPS = 0.9, 0.999, 1e-8
_COMPILED: dict[tuple, Any] = {}


# ------------------------------------------------------------------ technology, in jnp
def sram_energy_pj_jnp(capacity_kib: Any, word_bits: float) -> Any:
    """:func:`accelerators.tech.sram_energy_pj` in ``jax.numpy`` (differentiable in the
    capacity): the same piecewise log-log law through Horowitz's three points."""
    import jax.numpy as jnp

    return _tech.sram_energy_law(capacity_kib, word_bits, jnp)


def _register_pj(t: _tech.TechModel, words: Any, bits: int) -> Any:
    if t.normalized:
        return words * 0.0 + t.rf_x_mac * t.mac_energy_pj(_tech.int_precision(bits))
    import jax.numpy as jnp

    return t.register_energy_law(words, bits, jnp)


def _buffer_pj(t: _tech.TechModel, kib: Any, bits: int) -> Any:
    if t.normalized:
        return kib * 0.0 + t.buffer_x_mac * t.mac_energy_pj(_tech.int_precision(bits))
    import jax.numpy as jnp

    return t.sram_energy_law(kib, bits, jnp)


def _relu(x: Any) -> Any:
    """``max(x, 0)`` with a zero (sub)gradient at and just above 0 (``x <= 1e-9``, float
    rounding of sums of logs): a start exactly on a constraint's boundary (a heuristic
    mapping filling the PE array) is not pushed off it."""
    import jax.numpy as jnp

    return jnp.where(x > 1e-9, x, 0.0)


def _kind(acc: Any) -> str:
    if isinstance(acc, SpatialArray):
        return "spatial"
    if isinstance(acc, SystolicArray):
        return "systolic"
    raise ValueError(f"gradient co-design models SpatialArray and SystolicArray hardware, got "
                     f"{type(acc).__name__}")


def _hw_quantities(kind: str, acc: Any, arch: ArchSpec, hw: Mapping[str, Any], B: int) -> dict[str, Any]:
    """Relaxed capacities, per-access energies and fanouts, each ``(..., B)``.

    ``hw`` maps relaxed parameter names to ``(B,)`` values; the rest comes from ``acc``.
    Capacities are 1 where a level is unbounded (masked out by the caller)."""
    import jax.numpy as jnp

    def q(name: str) -> Any:
        return hw[name] if name in hw else jnp.full(B, float(getattr(acc, name)))

    t, bits = acc.tech, acc.word_bits
    one = jnp.ones(B)
    e_r0 = np.array([[lv.read_energy_pj.get(op, 0.0) for op in OPERANDS] for lv in arch.levels])
    e_w0 = np.array([[lv.write_energy_pj.get(op, 0.0) for op in OPERANDS] for lv in arch.levels])
    dram_r = [e_r0[-1, k] * one for k in range(3)]
    dram_w = [e_w0[-1, k] * one for k in range(3)]
    if kind == "spatial":
        rf = [q("rf_w_words"), q("rf_i_words"), q("rf_o_words")]
        kib = q("glb_kib")
        e_rf = [_register_pj(t, w, bits) for w in rf]
        e_glb = _buffer_pj(t, kib, bits)
        cap = jnp.stack([jnp.stack(rf), jnp.stack([one] * 3), jnp.stack([one] * 3)])
        cap_shared = jnp.stack([one, kib * 8192.0 / bits, one])
        e_r = jnp.stack([jnp.stack(e_rf), jnp.stack([e_glb] * 3), jnp.stack(dram_r)])
        e_w = jnp.stack([jnp.stack(e_rf), jnp.stack([e_glb] * 3), jnp.stack(dram_w)])
        fan_x = jnp.stack([one, q("pe_x"), one])
        fan_y = jnp.stack([one, q("pe_y"), one])
        return dict(cap=cap, cap_shared=cap_shared, e_read=e_r, e_write=e_w, fan_x=fan_x, fan_y=fan_y,
                    rows=None, cols=None)
    kib = {"W": q("filter_sram_kib"), "I": q("ifmap_sram_kib"), "O": q("ofmap_sram_kib")}
    e_sram = [_buffer_pj(t, kib[op], bits) for op in OPERANDS]
    cap = jnp.stack([jnp.stack([one] * 3), jnp.stack([kib[op] * 8192.0 / bits for op in OPERANDS]),
                     jnp.stack([one] * 3)])
    pe_r = [e_r0[0, k] * one for k in range(3)]
    pe_w = [e_w0[0, k] * one for k in range(3)]
    rows, cols = q("rows"), q("cols")
    return dict(cap=cap, cap_shared=jnp.stack([one] * 3),
                e_read=jnp.stack([jnp.stack(pe_r), jnp.stack(e_sram), jnp.stack(dram_r)]),
                e_write=jnp.stack([jnp.stack(pe_w), jnp.stack(e_sram), jnp.stack(dram_w)]),
                fan_x=jnp.stack([one, cols, one]), fan_y=jnp.stack([one, rows, one]), rows=rows, cols=cols)


# ------------------------------------------------------------------ the relaxed network
@dataclass(frozen=True)
class _LayerSlots:
    """Which (level, dim) entries of T / SX / SY are free variables (bool ``(L, D)``)."""

    t: np.ndarray
    x: np.ndarray
    y: np.ndarray


def _slot_masks(layer: Layer, arch: ArchSpec) -> _LayerSlots:
    info = MappingSpaceInfo(layer, arch, "divisors", False)
    L, dims = arch.n_levels, layer.dim_names
    m = {k: np.zeros((L, len(dims)), dtype=bool) for k in "txy"}
    for d, slots in allowed_slots(info).items():
        for kind, li in slots:
            if not (kind == "t" and li == L - 1):
                m[kind][li, dims.index(d)] = True
    return _LayerSlots(m["t"], m["x"], m["y"])


class RelaxedNetwork:
    """The relaxed network objective of a batch of ``B`` starts (see module docstring).

    ``self(params, data, penalty)`` with ``params = {"hw": (H, B), "maps": [(zt, zx, zy)
    per layer, each (L, D, B)]}`` (logs of sizes / factors) and ``data = {"order": [(L, D,
    B) int per layer], "keep": [(L, 3, B) bool per layer]}`` returns ``(B,)`` arrays:
    ``objective``, ``log_edp``, ``violation``, ``energy_pj``, ``latency_cycles`` and per
    layer ``layer_energy`` / ``layer_latency`` ``(n_layers, B)``.
    """

    def __init__(self, layers: Sequence[Layer], kind: str, acc: Any, arch: ArchSpec,
                 relaxed: Sequence[str], hw_constraints: Sequence[Callable[[Mapping[str, Any]], Any]] = ()) -> None:
        self.layers, self.kind, self.acc, self.arch = list(layers), kind, acc, arch
        self.relaxed = tuple(relaxed)
        self.hw_constraints = tuple(hw_constraints)
        self.statics = [prepare(layer, arch) for layer in self.layers]
        self.slots = [_slot_masks(layer, arch) for layer in self.layers]
        L = arch.n_levels
        bounded = [lv.capacity_words is not None for lv in arch.levels]
        self.part_mask = np.array([[bounded[li] and not lv.shared and np.isfinite(lv.capacity_of(op))
                                    and op in lv.tensors for op in OPERANDS]
                                   for li, lv in enumerate(arch.levels)])
        self.shared_mask = np.array([bounded[li] and lv.shared for li, lv in enumerate(arch.levels)])
        self.part_mask[L - 1] = False
        self.shared_mask[L - 1] = False
        self.fan_x_levels = [li for li, lv in enumerate(arch.levels) if lv.fanout_x > 1]
        self.fan_y_levels = [li for li, lv in enumerate(arch.levels) if lv.fanout_y > 1]
        self.dataflow = arch.dataflow

    def hw_values(self, z_hw: Any) -> dict[str, Any]:
        import jax.numpy as jnp

        return {name: jnp.exp(z_hw[k]) for k, name in enumerate(self.relaxed)}

    def factors(self, i: int, zt: Any, zx: Any, zy: Any) -> tuple[Any, Any, Any, Any]:
        """``T, SX, SY`` (L, D, B) of layer ``i`` and its coverage violation ``(B,)``."""
        import jax.numpy as jnp

        layer, m = self.layers[i], self.slots[i]
        L = self.arch.n_levels
        zt = jnp.where(m.t[:, :, None], zt, 0.0)
        zx = jnp.where(m.x[:, :, None], zx, 0.0)
        zy = jnp.where(m.y[:, :, None], zy, 0.0)
        inner = jnp.sum(zt + zx + zy, axis=0)                            # (D, B)
        log_size = jnp.log(jnp.asarray([float(layer.dims[d]) for d in layer.dim_names]))[:, None]
        top = log_size - inner
        T = jnp.exp(zt).at[L - 1].set(jnp.exp(_relu(top)))
        return T, jnp.exp(zx), jnp.exp(zy), jnp.sum(_relu(-top), axis=0)

    def __call__(self, params: Mapping[str, Any], data: Mapping[str, Any], penalty: Any) -> dict[str, Any]:
        import jax.numpy as jnp

        z_hw = params["hw"]
        B = z_hw.shape[-1]
        hw = self.hw_values(z_hw)
        qn = _hw_quantities(self.kind, self.acc, self.arch, hw, B)
        energies, latencies = [], []
        viol = jnp.zeros(B)
        part = jnp.asarray(self.part_mask)[:, :, None]
        shared = jnp.asarray(self.shared_mask)[:, None]
        for i, (st, _layer) in enumerate(zip(self.statics, self.layers)):
            zt, zx, zy = params["maps"][i]
            T, SX, SY, cover = self.factors(i, zt, zx, zy)
            order, keep = data["order"][i], data["keep"][i]
            out = count(jnp, st, T, SX, SY, order, keep, integer=False)
            energy = (jnp.sum(out["R"] * qn["e_read"] + out["Wr"] * qn["e_write"], axis=(0, 1))
                      + jnp.sum(out["noc"] * jnp.asarray(st.e_noc)[:, None], axis=0)
                      + out["macs_exec"] * st.mac_energy)
            compute = out["iters"]
            if self.dataflow is not None:
                fl = st.pe_level
                stream = jnp.prod(T[:fl], axis=(0, 1)) if fl else jnp.ones(B)
                compute = compute / stream * (stream + DATAFLOW_OVERHEAD[self.dataflow](qn["rows"], qn["cols"]))
            latency = jnp.maximum(compute, jnp.max(out["BW"], axis=0))
            energies.append(energy)
            latencies.append(latency)
            # capacity (log ratios), per partition and for shared buffers
            tw = jnp.maximum(out["TW"], 1.0)                              # (L, 3, B)
            over_p = _relu(jnp.log(tw) - jnp.log(qn["cap"])) * keep * part
            held = jnp.sum(tw * keep, axis=1)                             # (L, B)
            over_s = _relu(jnp.log(jnp.maximum(held, 1.0)) - jnp.log(qn["cap_shared"])) * shared
            viol = viol + jnp.sum(over_p, axis=(0, 1)) + jnp.sum(over_s, axis=0) + cover
            zxm = jnp.where(self.slots[i].x[:, :, None], zx, 0.0)
            zym = jnp.where(self.slots[i].y[:, :, None], zy, 0.0)
            for li in self.fan_x_levels:
                viol = viol + _relu(jnp.sum(zxm[li], axis=0) - jnp.log(qn["fan_x"][li]))
            for li in self.fan_y_levels:
                viol = viol + _relu(jnp.sum(zym[li], axis=0) - jnp.log(qn["fan_y"][li]))
        for g in self.hw_constraints:
            v = g(hw)
            vals = v if isinstance(v, list | tuple) else [v]
            for x in vals:
                viol = viol + _relu(jnp.asarray(x))
        rep = jnp.asarray([float(layer.repeat) for layer in self.layers])[:, None]
        E, Lt = jnp.stack(energies), jnp.stack(latencies)
        e_tot, l_tot = jnp.sum(E * rep, axis=0), jnp.sum(Lt * rep, axis=0)
        log_edp = jnp.log(e_tot) + jnp.log(l_tot)
        return {"objective": log_edp + penalty * viol, "log_edp": log_edp, "violation": viol,
                "energy_pj": e_tot, "latency_cycles": l_tot, "layer_energy": E, "layer_latency": Lt}


def project_capped_simplex(v: Any, mask: np.ndarray, c: Any) -> Any:
    """Euclidean projection of every column ``v[:, j]`` onto ``{w >= 0, sum(w) <= c_j}``
    with ``w = 0`` off ``mask`` (axis 0: the slots of one dimension; ``c`` and ``mask``
    broadcast against ``v`` with a leading axis of 1).

    The inner log factors of a dimension then never multiply past its size: the backing
    store's factor ``size / product`` stays ``>= 1`` and coverage is exact at every step
    (sort-based simplex projection when the clipped sum exceeds ``c``)."""
    import jax.numpy as jnp

    mask, c = jnp.asarray(mask), jnp.asarray(c)
    w0 = jnp.where(mask, jnp.maximum(v, 0.0), 0.0)
    vm = jnp.where(mask, v, -1e30)
    u = -jnp.sort(-vm, axis=0)                                        # descending
    css = jnp.cumsum(jnp.where(u > -1e29, u, 0.0), axis=0)
    j = jnp.arange(1, v.shape[0] + 1, dtype=v.dtype).reshape((-1,) + (1,) * (v.ndim - 1))
    cond = (u > -1e29) & (u - (css - c) / j > 0)
    rho = jnp.maximum(jnp.sum(cond, axis=0), 1)
    theta = (jnp.take_along_axis(css, (rho - 1)[None], axis=0)[0] - c[0]) / rho
    w1 = jnp.where(mask, jnp.maximum(v - theta[None], 0.0), 0.0)
    return jnp.where(jnp.sum(w0, axis=0, keepdims=True) <= c, w0, w1)


def _make_step(net: RelaxedNetwork, lo: np.ndarray, hi: np.ndarray) -> Any:
    """A jitted Adam step (objective, gradient norms and the update in one call)."""
    import jax
    import jax.numpy as jnp

    def total(params: Any, data: Any, penalty: Any) -> Any:
        o = net(params, data, penalty)
        return jnp.sum(o["objective"]), o

    vg = jax.value_and_grad(total, has_aux=True)
    lo_j, hi_j = jnp.asarray(lo)[:, None], jnp.asarray(hi)[:, None]
    masks = [np.concatenate([s.t, s.x, s.y])[:, :, None] for s in net.slots]       # (3L, D, 1)
    log_sizes = [np.log([float(layer.dims[d]) for d in layer.dim_names])[None, :, None] for layer in net.layers]

    def project(params: Any) -> Any:
        maps = []
        for zs, m, c in zip(params["maps"], masks, log_sizes):
            L = zs[0].shape[0]
            w = project_capped_simplex(jnp.concatenate(zs), m, c)
            maps.append((w[:L], w[L:2 * L], w[2 * L:]))
        return {"hw": jnp.clip(params["hw"], lo_j, hi_j), "maps": maps}

    def step(params: Any, m: Any, v: Any, t: Any, data: Any, penalty: Any, lr: Any) -> Any:
        (_, o), g = vg(params, data, penalty)
        tm = jax.tree_util.tree_map
        m = tm(lambda a, b: ADAM_B1 * a + (1 - ADAM_B1) * b, m, g)
        v = tm(lambda a, b: ADAM_B2 * a + (1 - ADAM_B2) * b * b, v, g)
        c1, c2 = 1 - ADAM_B1 ** t, 1 - ADAM_B2 ** t
        new = tm(lambda p, a, b: p - lr * (a / c1) / (jnp.sqrt(b / c2) + ADAM_EPS), params, m, v)
        sq = jnp.sum(g["hw"] ** 2, axis=0)
        for zs in g["maps"]:
            for z in zs:
                sq = sq + jnp.sum(z ** 2, axis=(0, 1))
        return project(new), m, v, o, jnp.sqrt(sq)

    return jax.jit(step)


# ------------------------------------------------------------------ hardware rounding
def _numeric_values(p: Any) -> list[float] | None:
    """Sorted legal values of a positive numeric finite parameter (None: not relaxable)."""
    if p.kind == "real":
        return None
    if p.kind not in ("integer", "power_of_two", "ordinal"):
        return None
    vals = p.grid_values()
    if not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in vals):
        return None
    return vals


def _bounds(p: Any) -> tuple[float, float]:
    if p.kind == "real":
        return math.log(p.low), math.log(p.high)
    vals = _numeric_values(p)
    assert vals is not None
    return math.log(min(vals)), math.log(max(vals))


def _relaxable(space: Any, kind: str) -> list[str]:
    out = []
    for p in space.params:
        if p.name not in RELAXABLE[kind] or p.active_if:
            continue
        if (p.kind == "real" and p.low > 0) or _numeric_values(p) is not None:
            out.append(p.name)
    return out


def _nearest(p: Any, log_target: float) -> Any:
    if p.kind == "real":
        return float(np.clip(math.exp(log_target), p.low, p.high))
    vals = _numeric_values(p)
    assert vals is not None
    return vals[int(np.argmin([abs(math.log(v) - log_target) for v in vals]))]


def round_hardware(space: Any, base: Mapping[str, Any], targets: Mapping[str, float], *,
                   repair_nodes: int = 2000, seed: int = 0) -> tuple[dict[str, Any], int]:
    """The legal hardware point nearest the relaxed ``targets`` (log values by name), the
    other parameters from ``base``; repaired to satisfy the space's known constraints.

    Returns ``(point, moves)``: ``moves`` = 0 if rounding alone was feasible, the number
    of best-first expansions used otherwise (-1: fell back to the nearest sample)."""
    point = dict(base)
    for name, z in targets.items():
        point[name] = _nearest(space[name], float(z))
    point = space.decode(space.encode([point]))[0]       # canonical values on the grid

    def dist(p: Mapping[str, Any]) -> float:
        d = 0.0
        for q in space.params:
            if q.name in targets:
                d += (math.log(float(p[q.name])) - float(targets[q.name])) ** 2
            elif q.name in p and q.normalize(p[q.name]) != q.normalize(point[q.name]):
                d += 1e3
        return d

    if not space.validate(point):
        return point, 0
    heap: list[tuple[float, int, dict[str, Any]]] = [(dist(point), 0, point)]
    seen = {space.point_key(point)}
    count = pops = 0
    while heap and pops < repair_nodes:
        _, _, p = heapq.heappop(heap)
        pops += 1
        if pops > 1 and not space.validate(p):
            return space.normalize(p), pops
        for q in space.params:
            if q.name not in p:
                continue
            for v in q.neighbors(p[q.name]):
                c = dict(p)
                c[q.name] = v
                key = space.point_key(c)
                if key not in seen:
                    seen.add(key)
                    count += 1
                    heapq.heappush(heap, (dist(c), count, c))
    samples = space.sample(4096, np.random.default_rng([seed, 97]))
    return min(samples, key=dist), -1


# ------------------------------------------------------------------ mapping rounding
def snap_mapping(layer: Layer, arch: ArchSpec, T: np.ndarray, SX: np.ndarray, SY: np.ndarray,
                 order: np.ndarray, keep: np.ndarray) -> MappingBatch:
    """Nearest exact (divisor) mapping of continuous factors ``(L, D)``: every prime factor
    of every dimension, largest first, goes to the allowed slot whose relaxed log factor
    it fills best (largest remaining deficit, at least half the prime's log; fanouts
    permitting), else to the backing store. Capacity is not checked here."""
    info = MappingSpaceInfo(layer, arch, "divisors", False)
    L, dims = arch.n_levels, layer.dim_names
    slots = allowed_slots(info)
    out = {k: np.ones((L, len(dims)), dtype=np.int64) for k in "txy"}
    cont = {"t": np.asarray(T, float), "x": np.asarray(SX, float), "y": np.asarray(SY, float)}
    fan = {"x": [lv.fanout_x for lv in arch.levels], "y": [lv.fanout_y for lv in arch.levels]}
    used = {"x": [1] * L, "y": [1] * L}
    deficit = {(d, s): math.log(max(cont[s[0]][s[1], dims.index(d)], 1.0))
               for d in info.dims for s in slots[d][:-1]}
    occ = sorted(((p, dims.index(d), d) for d in info.dims for p in prime_factors(layer.dims[d])),
                 key=lambda x: (-x[0], x[1]))
    for p, j, d in occ:
        best, best_def = None, math.log(p) / 2 - 1e-12
        for s in slots[d][:-1]:
            kind, li = s
            if kind in "xy" and used[kind][li] * p > fan[kind][li]:
                continue
            if deficit[(d, s)] >= best_def:
                best, best_def = s, deficit[(d, s)]
        if best is None:
            out["t"][L - 1, j] *= p
            continue
        kind, li = best
        out[kind][li, j] *= p
        deficit[(d, best)] -= math.log(p)
        if kind in "xy":
            used[kind][li] *= p
    return MappingBatch(tuple(dims), out["t"][None], out["x"][None], out["y"][None],
                        np.asarray(order, dtype=np.int64)[None], np.asarray(keep, dtype=bool)[None])


def _overflow(arch: ArchSpec, tile_words: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Words over capacity, summed over bounded levels (``(B,)``)."""
    out = np.zeros(tile_words.shape[0])
    for li, lv in enumerate(arch.levels[:-1]):
        if lv.capacity_words is None:
            continue
        held = np.where(keep[:, li], tile_words[:, li], 0.0)
        if lv.shared:
            out += np.maximum(held.sum(axis=1) - lv.capacity_of("W"), 0.0)
        else:
            caps = np.array([lv.capacity_of(op) for op in OPERANDS])
            out += np.maximum(held - caps, 0.0).sum(axis=1)
    return out


def fit_capacity(layer: Layer, arch: ArchSpec, batch: MappingBatch) -> MappingBatch:
    """Move prime factors from on-chip slots to the backing store, greedily (the move that
    shrinks the overflow most; temporal slots before spatial ones on ties), until every
    tile fits. Terminates: each move sends one prime outermost."""
    consts = layer_constants(layer)
    L = arch.n_levels
    for _ in range(10_000):
        r = evaluate_batch(layer, arch, batch, consts=consts)
        if bool(np.asarray(r.valid)[0]):
            return batch
        base = _overflow(arch, np.asarray(r.tile_words), batch.keep)[0]
        cands = []
        for kind, arr in (("t", batch.temporal), ("x", batch.spatial_x), ("y", batch.spatial_y)):
            for li in range(L - 1 if kind == "t" else L):
                for j in range(len(batch.dims)):
                    f = int(arr[0, li, j])
                    if f > 1:
                        cands.append((kind, li, j, min(prime_factors(f))))
        if not cands:
            raise ValueError(f"no capacity-feasible mapping of {layer.name!r} on {arch.name!r}")
        rows = []
        for kind, li, j, p in cands:
            t, sx, sy = batch.temporal[0].copy(), batch.spatial_x[0].copy(), batch.spatial_y[0].copy()
            {"t": t, "x": sx, "y": sy}[kind][li, j] //= p
            t[L - 1, j] *= p
            rows.append((t, sx, sy))
        cb = MappingBatch(batch.dims, np.stack([r_[0] for r_ in rows]), np.stack([r_[1] for r_ in rows]),
                          np.stack([r_[2] for r_ in rows]), np.repeat(batch.order, len(rows), axis=0),
                          np.repeat(batch.keep, len(rows), axis=0))
        rc = evaluate_batch(layer, arch, cb, consts=consts)
        ov = _overflow(arch, np.asarray(rc.tile_words), cb.keep)
        gain = base - ov
        spatial = np.array([k != "t" for k, *_ in cands])
        i = int(np.lexsort((spatial, -gain))[0])
        batch = cb.take(np.array([i]))
    raise ValueError(f"capacity repair of {layer.name!r} did not converge")  # pragma: no cover


def refine_mapping(layer: Layer, arch: ArchSpec, batch: MappingBatch, *, objective: str = "edp",
                   max_rounds: int = 200) -> MappingBatch:
    """Steepest descent from ``batch`` (legal) over the heuristic mapper's neighbourhood
    (:func:`mappers.heuristic.descend`)."""
    info = MappingSpaceInfo(layer, arch, "divisors", False)
    return descend(layer, arch, evaluate_batch, batch, info, objective, max_rounds)[0]


# ------------------------------------------------------------------ results
@dataclass(frozen=True)
class GradientCandidate:
    """One exact evaluation: rounded hardware and mappings, their network metrics."""

    number: int                       # evaluation index (0-based)
    start: int
    step: int
    point: dict[str, Any]
    mappings: tuple[LayerMapping, ...]
    metrics: dict[str, float]
    relaxed_log_edp: float            # the relaxation's log EDP (pJ * cycles) before rounding
    repair_moves: int                 # hardware repair: 0 none, >0 expansions, -1 sampled

    @property
    def edp(self) -> float:
        return float(self.metrics["edp_uj_ms"])


@dataclass
class GradientResult:
    """Best candidate, every evaluated candidate, best-so-far EDP (uJ*ms) after each
    evaluation, the relaxed objective per step and start (``(steps + 1, starts)``), the
    gradient norms per step and start, the start points and wall time."""

    best: GradientCandidate | None
    candidates: list[GradientCandidate]
    history: list[float]
    loss: np.ndarray
    log_edp: np.ndarray
    grad_norm: np.ndarray
    starts: list[dict[str, Any]]
    seconds: float
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def evaluations(self) -> int:
        return len(self.candidates)

    @property
    def point(self) -> dict[str, Any] | None:
        return None if self.best is None else self.best.point

    @property
    def mappings(self) -> tuple[LayerMapping, ...] | None:
        return None if self.best is None else self.best.mappings

    @property
    def metrics(self) -> dict[str, float] | None:
        return None if self.best is None else self.best.metrics


# ------------------------------------------------------------------ the search
class GradientSearch:
    """DOSA-style gradient co-design (see module docstring).

    Args:
        layers: the workload (layers or a zoo name such as ``"dqn"``).
        hw_space: the hardware :class:`~design_space.DesignSpace`.
        build: ``point -> accelerator`` (a SpatialArray / SystolicArray; a class with
            ``from_point`` is accepted). Parameters not in the space come from ``build``.
        starts: random starts (hardware sampled from ``hw_space``), descended together.
        steps: Adam steps; ``lr``: Adam step size (log units), warmed up linearly over
            the first ``warmup`` fraction of the steps, then cosine-decayed to
            ``lr_final * lr``.
        best_iterate: round each start's best point so far (lowest relaxed objective)
            at a checkpoint rather than its current iterate.
        seed: seeds the start points (and random initial mappings).
        budget: cap on exact evaluations (default ``starts * checkpoints``).
        penalty: weight of the (log-ratio) constraint violations.
        checkpoints: candidates per start along its descent (evenly spaced, last = final).
        hw_constraints: differentiable surrogates ``g(hw) -> value or list`` (``<= 0``
            feasible) of the space's known constraints; ``hw`` maps each relaxed
            parameter name to a ``(B,)`` jnp array of sizes.
        init: ``"heuristic"`` or ``"random"``: where each start's mappings (and thus loop
            orders and bypass) come from.
        refine: run the steepest-descent mapper from the snapped mappings.
        start_points: explicit start hardware points (overrides sampling ``starts``).
    """

    name = "gradient"

    def __init__(self, layers: Sequence[Layer] | str, hw_space: Any, build: Any, *, starts: int = 16,
                 steps: int = 200, lr: float = 0.05, seed: int = 0, budget: int | None = None,
                 penalty: float = 10.0, checkpoints: int = 1,
                 hw_constraints: Sequence[Callable[[Mapping[str, Any]], Any]] = (),
                 init: str = "heuristic", refine: bool = True,
                 start_points: Sequence[Mapping[str, Any]] | None = None, repair_nodes: int = 2000,
                 lr_final: float = 0.05, warmup: float = 0.1, best_iterate: bool = True) -> None:
        self.layers = zoo.resolve(layers)
        self.space = hw_space
        self.build: Callable[[Mapping[str, Any]], Any] = getattr(build, "from_point", build)
        self.starts = len(start_points) if start_points is not None else int(starts)
        self.steps, self.lr, self.seed = int(steps), float(lr), int(seed)
        self.lr_final, self.warmup, self.best_iterate = float(lr_final), float(warmup), bool(best_iterate)
        self.checkpoints = int(checkpoints)
        self.budget = int(budget) if budget is not None else self.starts * self.checkpoints
        self.penalty = float(penalty)
        self.hw_constraints = tuple(hw_constraints)
        self.init, self.refine, self.repair_nodes = init, bool(refine), int(repair_nodes)
        self.start_points = [dict(p) for p in start_points] if start_points is not None else None
        if init not in ("heuristic", "random"):
            raise ValueError(f"init must be 'heuristic' or 'random', got {init!r}")
        if self.starts < 1 or self.steps < 0 or self.checkpoints < 1 or self.budget < 1:
            raise ValueError("starts, checkpoints and budget must be >= 1 and steps >= 0")
        if self.checkpoints > max(self.steps, 1):
            raise ValueError("checkpoints must not exceed steps")

    def _lr(self, s: int) -> float:
        """Step size of step ``s``: linear warm-up over the first ``warmup`` fraction of the
        steps, then cosine decay from ``lr`` to ``lr_final * lr`` (0 after the last step:
        that call only evaluates the final point)."""
        if s >= self.steps:
            return 0.0
        w = int(self.warmup * self.steps)
        if s < w:
            return self.lr * (s + 1) / (w + 1)
        frac = 0.5 * (1 + math.cos(math.pi * (s - w) / max(self.steps - w - 1, 1)))
        return self.lr * (self.lr_final + (1 - self.lr_final) * frac)

    # -- starts ------------------------------------------------------------------------
    def _start_mappings(self, arch: ArchSpec, rng: np.random.Generator) -> list[MappingBatch]:
        out = []
        for layer in self.layers:
            if self.init == "heuristic":
                out.append(HeuristicMapper().map(layer, arch, evaluate_batch).batch)
            else:
                out.append(random_mappings(layer, arch, 1, int(rng.integers(2 ** 31))))
        return out

    def _draw_starts(self) -> list[tuple[dict[str, Any], Any, list[MappingBatch]]]:
        rng = np.random.default_rng([self.seed, 11])
        given = list(self.start_points or [])
        out = []
        tries = 0
        while len(out) < self.starts:
            tries += 1
            if tries > 50 * self.starts:
                raise ValueError("could not draw start hardware with a legal mapping for every layer")
            p = given.pop(0) if given else self.space.sample(1, rng)[0]
            try:
                acc = self.build(p)
                maps = self._start_mappings(acc.to_arch(), rng)
            except ValueError:
                if self.start_points is not None:
                    raise
                continue
            out.append((self.space.normalize(p), acc, maps))
        return out

    # -- one group of starts sharing every non-relaxed parameter ------------------------
    def _network(self, kind: str, acc: Any, point: Mapping[str, Any], relaxed: list[str],
                 B: int) -> tuple[RelaxedNetwork, Any]:
        big = dict(point)
        for name in relaxed:
            p = self.space[name]
            big[name] = p.high if p.kind == "real" else max(_numeric_values(p))  # type: ignore[type-var]
        try:
            tmpl = self.build(big)
        except ValueError:
            tmpl = acc
        key = (tuple(repr(layer) for layer in self.layers), kind, repr(tmpl), tuple(relaxed),
               self.hw_constraints, B)
        if key not in _COMPILED:
            net = RelaxedNetwork(self.layers, kind, tmpl, tmpl.to_arch(), relaxed, self.hw_constraints)
            lo = np.array([_bounds(self.space[n])[0] for n in relaxed])
            hi = np.array([_bounds(self.space[n])[1] for n in relaxed])
            _COMPILED[key] = (net, _make_step(net, lo, hi))
        return _COMPILED[key]

    def run(self) -> GradientResult:
        import jax
        import jax.numpy as jnp

        t0 = time.perf_counter()
        starts = self._draw_starts()
        kind = _kind(starts[0][1])
        relaxed = _relaxable(self.space, kind)
        groups: dict[str, list[int]] = {}
        for b, (p, _, _) in enumerate(starts):
            key = self.space.point_key({k: v for k, v in p.items() if k not in relaxed})
            groups.setdefault(key, []).append(b)
        S = self.steps
        ck = sorted({max(1, round(S * (k + 1) / self.checkpoints)) if S else 0 for k in range(self.checkpoints)})
        loss = np.full((S + 1, self.starts), np.nan)
        log_edp = np.full((S + 1, self.starts), np.nan)
        gnorm = np.full((S + 1, self.starts), np.nan)
        snaps: dict[tuple[int, int], tuple[dict[str, float], list[tuple], float]] = {}
        timings = {"descent_s": 0.0, "rounding_s": 0.0}
        with jax.enable_x64(True):
            for members in groups.values():
                t1 = time.perf_counter()
                B = len(members)
                acc0 = starts[members[0]][1]
                net, step = self._network(kind, acc0, starts[members[0]][0], relaxed, B)
                z_hw = np.array([[math.log(float(starts[b][0][n])) for b in members] for n in relaxed])
                z_hw = z_hw.reshape(len(relaxed), B)
                maps, orders, keeps = [], [], []
                for i in range(len(self.layers)):
                    bs = [starts[b][2][i] for b in members]
                    zs = []
                    for k, attr in (("t", "temporal"), ("x", "spatial_x"), ("y", "spatial_y")):
                        a = np.stack([np.log(getattr(x, attr)[0].astype(float)) for x in bs], axis=-1)
                        zs.append(jnp.asarray(np.where(getattr(net.slots[i], k)[:, :, None], a, 0.0)))
                    maps.append(tuple(zs))
                    orders.append(jnp.asarray(np.stack([x.order[0] for x in bs], axis=-1)))
                    keeps.append(jnp.asarray(np.stack([x.keep[0] for x in bs], axis=-1)))
                params = {"hw": jnp.asarray(z_hw), "maps": maps}
                data = {"order": orders, "keep": keeps}
                m = jax.tree_util.tree_map(jnp.zeros_like, params)
                v = jax.tree_util.tree_map(jnp.zeros_like, params)
                pen = jnp.asarray(self.penalty)
                best_params, best_obj = params, np.full(B, np.inf)
                best_rel = np.full(B, np.nan)
                for s in range(S + 1):
                    lr = jnp.asarray(self._lr(s))
                    new, m2, v2, o, g = step(params, m, v, jnp.asarray(float(s + 1)), data, pen, lr)
                    obj = np.asarray(o["objective"])
                    loss[s, members] = obj
                    log_edp[s, members] = np.asarray(o["log_edp"])
                    gnorm[s, members] = np.asarray(g)
                    better = (obj < best_obj) if self.best_iterate else np.ones(B, dtype=bool)
                    if better.any():
                        sel = jnp.asarray(better)
                        best_params = jax.tree_util.tree_map(lambda a, b_, c=sel: jnp.where(c, a, b_), params, best_params)
                        best_obj = np.where(better, obj, best_obj)
                        best_rel = np.where(better, log_edp[s, members], best_rel)
                    if s in ck:
                        snaps.update(self._snapshot(net, best_params, members, s, best_rel))
                    if s < S:
                        params, m, v = new, m2, v2
                timings["descent_s"] += time.perf_counter() - t1
        t2 = time.perf_counter()
        candidates: list[GradientCandidate] = []
        history: list[float] = []
        best: GradientCandidate | None = None
        seen: set[str] = set()
        for s in ck:
            for b in range(self.starts):
                if len(candidates) >= self.budget:
                    break
                hw_t, facs, rel = snaps[(b, s)]
                cand = self._evaluate(len(candidates), b, s, starts[b][0], hw_t, facs, rel, starts[b][2], seen)
                if cand is None:
                    continue
                candidates.append(cand)
                if np.isfinite(cand.edp) and (best is None or cand.edp < best.edp):
                    best = cand
                history.append(best.edp if best is not None else math.inf)
        timings["rounding_s"] = time.perf_counter() - t2
        return GradientResult(best, candidates, history, loss, log_edp, gnorm, [p for p, _, _ in starts],
                              time.perf_counter() - t0, timings)

    def _snapshot(self, net: RelaxedNetwork, params: Any, members: list[int], s: int,
                  rel: np.ndarray) -> dict[tuple[int, int], tuple[dict[str, float], list[tuple], float]]:
        """Relaxed hardware (log), factors and relaxed log EDP of every start of a group."""
        z_hw = np.asarray(params["hw"])
        facs = []
        for i in range(len(self.layers)):
            T, SX, SY, _ = net.factors(i, *params["maps"][i])
            facs.append((np.asarray(T), np.asarray(SX), np.asarray(SY)))
        out = {}
        for k, b in enumerate(members):
            hw_t = {n: float(z_hw[j, k]) for j, n in enumerate(net.relaxed)}
            per = [(T[:, :, k], SX[:, :, k], SY[:, :, k]) for T, SX, SY in facs]
            out[(b, s)] = (hw_t, per, float(rel[k]))
        return out

    def _evaluate(self, number: int, b: int, s: int, base: Mapping[str, Any], hw_t: Mapping[str, float],
                  facs: list[tuple], rel: float, start_maps: list[MappingBatch],
                  seen: set[str]) -> GradientCandidate | None:
        point, moves = round_hardware(self.space, base, hw_t, repair_nodes=self.repair_nodes,
                                      seed=self.seed * 1000 + b)
        try:
            acc = self.build(point)
            arch = acc.to_arch()
        except ValueError:
            return GradientCandidate(number, b, s, point, (), {"edp_uj_ms": math.inf}, rel, moves)
        batches = []
        for layer, (T, SX, SY), m0 in zip(self.layers, facs, start_maps):
            mb = snap_mapping(layer, arch, T, SX, SY, m0.order[0], m0.keep[0])
            mb = fit_capacity(layer, arch, mb)
            if self.refine:
                mb = refine_mapping(layer, arch, mb)
            batches.append(mb)
        key = self.space.point_key(point) + repr([mb.mapping(0) for mb in batches])
        if key in seen:
            return None
        seen.add(key)
        results = [result_of(layer, arch, evaluate_batch, mb, 0, evaluated=1)
                   for layer, mb in zip(self.layers, batches)]
        metrics = network_metrics(arch, acc.area_mm2, self.layers, results)
        return GradientCandidate(number, b, s, point, tuple(mb.mapping(0) for mb in batches), metrics,
                                 rel, moves)


def gradient_codesign(layers: Sequence[Layer] | str, hw_space: Any, build: Any, *, starts: int = 16,
                      steps: int = 200, lr: float = 0.05, seed: int = 0, budget: int | None = None,
                      penalty: float = 10.0, **kw: Any) -> GradientResult:
    """Run :class:`GradientSearch` (see there for the options) and return its result."""
    return GradientSearch(layers, hw_space, build, starts=starts, steps=steps, lr=lr, seed=seed,
                          budget=budget, penalty=penalty, **kw).run()
