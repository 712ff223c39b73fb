"""Eyeriss's row-stationary (RS) dataflow as a :class:`~mappers.constraints.MappingConstraints`.

Sources: Chen, Emer, Sze, "Eyeriss: A Spatial Architecture for Energy-Efficient Dataflow
for Convolutional Neural Networks", ISCA 2016, Sec. IV (the RS dataflow); Chen, Krishna,
Emer, Sze, "Eyeriss: An Energy-Efficient Reconfigurable Accelerator for Deep
Convolutional Neural Networks", IEEE JSSC 52(1), 2017, Sec. IV and Table III (the
mapping parameters m, n, e, p, q, r, t). What they state, and how each statement becomes
a constraint on the ``RF -> GLB -> DRAM`` hierarchy of an Eyeriss-like
:class:`~accelerators.spatial.SpatialArray` (loop dimensions of
:func:`mappers.workloads.conv2d`: ``R x S`` filter, ``P x Q`` output rows x columns):

* *A PE runs a 1-D row convolution*: one filter row (``S`` weights) stays in the filter
  scratchpad while a row of inputs slides through the ifmap scratchpad and a row of
  partial sums accumulates in the psum scratchpad. So ``S`` is wholly a temporal loop of
  the RF (``temporal_factors S = S``), and the output row is swept one column at a time
  by the GLB's loops over ``Q``, wholly there (``GLB temporal_factors Q = Q``: the
  "sliding window" the PE sees; JSSC 2017 Table III's rows are always whole, ``E``
  columns).
* *Each PE's scratchpads hold the filter rows of p filters x q channels, the input rows of
  q channels and the psums of p filters* (JSSC 2017 Sec. IV-A): the RF's only other
  temporal loops are over filters ``K`` (p) and channels ``C`` (q): ``RF temporal in {S,
  C, K}``, and the RF keeps all three operands.
* *A PE set is R x e PEs: filter rows go down the array's vertical axis, output rows
  across*: ``R`` is wholly spatial on Y (``spatial_y_factors R = R``), output rows ``P``
  (e) go on X. *Sets are replicated* over r channels and t filters "to fill the array",
  laid out wherever they fit (Table III's CONV1 puts t = 2 across, CONV4/5 put r = t = 2
  down), and a set wider than the array is folded (CONV2's 5 x 27 set): so ``Y in {R, C,
  K, P}`` and ``X in {P, C, K}``. Batch ``N``, groups ``G``, ``Q`` and ``S`` are never
  spatial.
* *The global buffer holds ifmaps and psums; filters go from DRAM straight to the PEs*
  (JSSC 2017 Sec. IV; checked against the chip by :mod:`experiments.validation.silicon_compare`): the GLB keeps
  ``I`` and ``O`` only.

*Fully connected layers run as convolutions whose filter is as large as the input*
(JSSC 2017 Sec. IV-B): output rows and columns are 1 and each PE's row is the flattened
input, so a GEMM ``O[m, n] = sum_k I[m, k] W[k, n]`` (:func:`mappers.workloads.gemm`) is
the convolution with ``C = K_gemm`` input channels, ``K = N_gemm`` filters, batch ``N =
M_gemm`` and ``R = S = P = Q = 1``. The rules above then say: the RF's temporal loops
are over ``K`` and ``N`` only, both may be spatial on either axis (the channel and filter
replication of the sets), ``M`` (the batch, and a batched matmul's ``B``) never is, and
the GLB keeps ``I`` and ``O``. Attention's batched matmuls (``Q K^T``, weights x ``V``)
get the same rule with the second activation in the filter's place: Eyeriss has no rule
of its own for them.

What we had to choose: the papers do not restrict the order or placement of the loops
above the PE array beyond the above (Table III's ``m`` filters and ``n`` images in the
GLB are per-layer *parameters*), so the GLB's other temporal loops and every DRAM loop
are free: the exact mapper picks ``m``, ``n``, ``p``, ``q``, ``e``, ``r``, ``t`` and the
loop orders. Sets taller than the array (``R > pe_y``), which Eyeriss would split into
several passes, are refused. The order of the RF's loops changes no count, so it is not
constrained.
"""

from __future__ import annotations

import math
from typing import Any

from accelerators.arch import ArchSpec
from accelerators.reference import EYERISS_TABLE_III
from mappers.constraints import LevelConstraints, MappingConstraints
from mappers.mapping import Mapping
from mappers.workloads import Layer

__all__ = ["RS_CONV_DIMS", "TABLE_III_SPATIAL", "row_stationary", "table_iii_mapping"]

RS_CONV_DIMS = frozenset({"K", "C", "P", "Q", "R", "S"})
"""The dimensions a layer needs for the RS set (a convolution; ``N`` and ``G`` optional)."""

RS_GEMM_DIMS = frozenset({"M", "N", "K"})
"""The dimensions of a GEMM (``B`` optional), mapped as a fully connected layer."""


def row_stationary(layer: Layer, arch: ArchSpec) -> MappingConstraints:
    """The RS constraint set of ``layer`` on the Eyeriss-like ``arch`` (``RF -> GLB ->
    DRAM``, the PE array the GLB's fanout; see the module docstring).

    Raises:
        ValueError: ``layer`` is neither a convolution nor a GEMM, ``arch`` is not ``RF -> GLB -> DRAM``
            with a PE array at the GLB (or is a systolic array, whose dataflow is fixed), or the filter height ``R`` exceeds the array's
            rows.
    """
    is_gemm = layer.kind in ("gemm", "bmm") and RS_GEMM_DIMS <= set(layer.dims)
    missing = sorted(RS_CONV_DIMS - set(layer.dims))
    if missing and not is_gemm:
        raise ValueError(f"row_stationary: layer {layer.name!r} lacks convolution dimensions {missing} "
                         f"(it has {list(layer.dims)}) and is not a GEMM")
    names = [lv.name for lv in arch.levels]
    if arch.n_levels != 3 or arch.dataflow is not None or arch.levels[0].fanout_x * arch.levels[0].fanout_y != 1 \
            or arch.levels[1].fanout_x * arch.levels[1].fanout_y == 1:
        raise ValueError(f"row_stationary: architecture {arch.name!r} (levels {names}, dataflow {arch.dataflow!r}) "
                         "is not RF -> GLB -> DRAM with the PE array below the GLB and no fixed dataflow")
    rf, glb = names[0], names[1]
    if is_gemm:                     # a fully connected layer: C -> K, K -> N, N -> M, R = S = P = Q = 1
        return MappingConstraints((
            LevelConstraints(rf, temporal={"K", "N"}, keep={"W", "I", "O"}),
            LevelConstraints(glb, spatial_y={"K", "N"}, spatial_x={"K", "N"}, keep={"I", "O"}),
        ), name="row-stationary")
    R, S, Q = layer.dims["R"], layer.dims["S"], layer.dims["Q"]
    if R > arch.levels[1].fanout_y:
        raise ValueError(f"row_stationary: filter height R={R} of {layer.name!r} exceeds the {arch.levels[1].fanout_y} "
                         f"PE rows of {arch.name!r} (a PE set is R rows tall)")
    return MappingConstraints((
        LevelConstraints(rf, temporal={"S", "C", "K"}, temporal_factors={"S": S}, keep={"W", "I", "O"}),
        LevelConstraints(glb, spatial_y={"R", "C", "K", "P"}, spatial_y_factors={"R": R},
                         spatial_x={"P", "C", "K"}, temporal_factors={"Q": Q}, keep={"I", "O"}),
    ), name="row-stationary")


# How each PE set of JSSC 2017 Table III is laid onto the 12 x 14 array (Y = rows, X =
# columns): R and the r, t sets on Y where they fit, the e output rows on X. CONV1's t = 2
# sets do not fit on Y (2 x 11 > 12) and go to X (7 x 2 = 14 columns); CONV2's 27 output
# rows do not fit on 14 columns: Eyeriss folds the 5 x 27 set onto the array, we split them
# 2 (Y) x 14 (X), one row padded, so 135 of 140 PE positions do useful work, as on the chip.
TABLE_III_SPATIAL: dict[str, tuple[dict[str, int], dict[str, int]]] = {
    "CONV1": (dict(P=7, K=2), dict(R=11)),
    "CONV2": (dict(P=14), dict(R=5, P=2)),
    "CONV3": (dict(P=13), dict(R=3, K=4)),
    "CONV4": (dict(P=13), dict(R=3, C=2, K=2)),
    "CONV5": (dict(P=13), dict(R=3, C=2, K=2)),
}
"""Per AlexNet convolution, the GLB's spatial factors on X and on Y (see the comment)."""


def table_iii_mapping(name: str, layer: Layer, arch: Any, params: dict[str, int] | None = None,
                      spatial: tuple[dict[str, int], dict[str, int]] | None = None) -> Mapping:
    """Eyeriss's own row-stationary mapping of AlexNet's ``name`` (JSSC 2017 Table III,
    :data:`accelerators.reference.EYERISS_TABLE_III`) on RF -> GLB -> DRAM.

    * RF (per PE): the ``p x q`` filter rows (``S`` weights each) stay while the input
      window slides; temporal loops S, C = q, K = p.
    * GLB: spatial as :data:`TABLE_III_SPATIAL`; temporal K = m / (p t) filter passes, N = n
      images, then Q, the output columns (innermost: the sliding window). Filters bypass it.
    * DRAM: N / n, groups, the output-row strips E / e (CONV1), the filter blocks of m, then
      the channel passes C / (q r) innermost, so partial sums stay in the GLB across them.

    ``params`` and ``spatial`` replace Table III's row and :data:`TABLE_III_SPATIAL`'s entry
    (to try another layer's PE-set parameters on this one).
    """
    s = EYERISS_TABLE_III[name] if params is None else params
    dims = layer.dims
    sx, sy = TABLE_III_SPATIAL[name] if spatial is None else spatial
    k_glb = s["m"] // (s["p"] * s["t"])
    rf = dict(S=s["R"], C=s["q"], K=s["p"])
    glb = dict(K=k_glb, N=s["n"], Q=dims["Q"])
    dram = dict(N=dims["N"] // s["n"], K=dims["K"] // s["m"], C=dims["C"] // (s["q"] * s["r"]),
                P=math.ceil(s["E"] / s["e"]))
    if "G" in dims:
        dram["G"] = dims["G"]
    return Mapping.create(arch, temporal=[rf, glb, dram], spatial_x=[{}, sx, {}], spatial_y=[{}, sy, {}],
                          order=[(), ("K", "N", "Q"), tuple(d for d in ("N", "G", "P", "K", "C") if d in dims)],
                          bypass=[(), ("W",), ()])
