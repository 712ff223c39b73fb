"""Random small architectures and mappings for property tests."""

from __future__ import annotations

import math

import numpy as np

from accelerators.arch import OPERANDS, ArchSpec, MemoryLevel
from mappers.mapping import Mapping
from mappers.workloads import Layer, conv2d, gemm


def random_layer(rng: np.random.Generator) -> Layer:
    kind = rng.integers(0, 4)
    if kind == 0:
        return conv2d("c", N=int(rng.integers(1, 3)), K=int(rng.integers(1, 4)), C=int(rng.integers(1, 4)),
                      P=int(rng.integers(1, 5)), Q=int(rng.integers(1, 4)), R=int(rng.integers(1, 4)),
                      S=int(rng.integers(1, 3)), stride=int(rng.integers(1, 3)), dilation=int(rng.integers(1, 3)))
    if kind == 1:
        ch = int(rng.integers(2, 4))
        return conv2d("dw", K=ch, C=ch, groups=ch, P=int(rng.integers(1, 4)), Q=int(rng.integers(1, 3)),
                      R=int(rng.integers(1, 4)), S=1, stride=int(rng.integers(1, 3)))
    if kind == 2:
        return gemm("g", M=int(rng.integers(1, 6)), N=int(rng.integers(1, 6)), K=int(rng.integers(1, 6)))
    return gemm("b", B=int(rng.integers(2, 3)), M=int(rng.integers(1, 4)), N=int(rng.integers(1, 4)),
                K=int(rng.integers(1, 4)))


def random_arch(rng: np.random.Generator) -> ArchSpec:
    n_onchip = int(rng.integers(1, 4))
    fx = [int(rng.integers(1, 4)) for _ in range(n_onchip)]
    fy = [int(rng.integers(1, 3)) for _ in range(n_onchip)]
    levels = []
    inst = [1] * (n_onchip + 1)
    for li in range(n_onchip - 1, -1, -1):
        inst[li] = inst[li + 1] * fx[li + 1 - 1 + 1 - 1] * fy[li] if False else inst[li + 1]
    # instances: level li has product of fanouts of levels above it
    inst = [1] * (n_onchip + 1)
    for li in range(n_onchip - 1, -1, -1):
        up = li + 1
        inst[li] = inst[up] * (fx[up] * fy[up] if up < n_onchip else 1)
    for li in range(n_onchip):
        holds = frozenset(op for op in OPERANDS if rng.random() < 0.8)
        levels.append(MemoryLevel(
            f"L{li}", tensors=holds, capacity_words=None if False else 10**9, instances=inst[li],
            fanout_x=fx[li], fanout_y=fy[li], read_energy_pj=float(li + 1), write_energy_pj=float(li + 1.5),
            multicast=bool(rng.random() < 0.7), noc_energy_pj=0.5 * (fx[li] * fy[li] > 1),
        ))
    levels.append(MemoryLevel("DRAM", read_energy_pj=100.0, write_energy_pj=100.0))
    return ArchSpec("rand", tuple(levels), mac_energy_pj=1.0)


def random_mapping(rng: np.random.Generator, layer: Layer, arch: ArchSpec) -> Mapping:
    L = arch.n_levels
    temporal = [dict() for _ in range(L)]
    sx = [dict() for _ in range(L)]
    sy = [dict() for _ in range(L)]
    left_x = [lv.fanout_x for lv in arch.levels]
    left_y = [lv.fanout_y for lv in arch.levels]
    for d, size in layer.dims.items():
        prod = 1
        for li in range(L):
            slots = [("T", li)]
            if left_x[li] > 1:
                slots.append(("X", li))
            if left_y[li] > 1:
                slots.append(("Y", li))
            for kind, lv in slots:
                if kind == "T" and lv == L - 1:
                    f = math.ceil(size / prod)
                else:
                    cap = math.ceil(size / prod)
                    if kind == "X":
                        cap = min(cap, left_x[lv])
                    elif kind == "Y":
                        cap = min(cap, left_y[lv])
                    f = int(rng.integers(1, cap + 1))
                if f == 1:
                    continue
                prod *= f
                if kind == "T":
                    temporal[lv][d] = f
                elif kind == "X":
                    sx[lv][d] = f
                    left_x[lv] //= f
                else:
                    sy[lv][d] = f
                    left_y[lv] //= f
    dims = list(layer.dims)
    order = [tuple(rng.permutation(dims).tolist()) for _ in range(L)]
    bypass = [frozenset(op for op in OPERANDS if rng.random() < 0.25) for _ in range(L - 1)] + [frozenset()]
    return Mapping.create(arch, temporal, sx, sy, order, bypass)


def random_buffered_case(rng: np.random.Generator) -> tuple[Layer, ArchSpec]:
    """A layer and a register-file / buffer / DRAM hierarchy with tight capacities (shared
    or per operand), a fanout, bandwidths and NoC energy: searches of thousands of nodes,
    large enough that the exact mapper's roots have many children."""
    from mappers.workloads import conv2d, gemm

    if rng.random() < 0.6:
        layer = conv2d("c", N=int(rng.choice([1, 2, 4])), K=int(rng.choice([4, 6, 8])), C=int(rng.choice([2, 3, 4])),
                       P=int(rng.choice([3, 4, 6])), Q=int(rng.choice([2, 3, 4])), R=int(rng.choice([1, 2, 3])),
                       S=int(rng.choice([1, 3])), stride=int(rng.integers(1, 3)))
    else:
        layer = gemm("g", M=int(rng.choice([8, 12, 16])), N=int(rng.choice([6, 8, 12])),
                     K=int(rng.choice([8, 16, 24])))
    fx, fy = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    cap = ({op: int(rng.integers(2, 40)) for op in OPERANDS} if rng.random() < 0.5 else int(rng.integers(8, 80)))
    rf = MemoryLevel("RF", capacity_words=cap, instances=fx * fy, read_energy_pj=float(rng.uniform(0.2, 1)),
                     write_energy_pj=float(rng.uniform(0.2, 1)))
    glb = MemoryLevel("GLB", capacity_words=int(rng.integers(100, 2000)), fanout_x=fx, fanout_y=fy,
                      read_energy_pj=float(rng.uniform(4, 10)), write_energy_pj=float(rng.uniform(4, 10)),
                      bandwidth_words_per_cycle=float(rng.integers(4, 33)), noc_energy_pj=float(rng.uniform(0, 2)),
                      multicast=bool(rng.random() < 0.8))
    dram = MemoryLevel("DRAM", read_energy_pj=200.0, write_energy_pj=200.0,
                       bandwidth_words_per_cycle=float(rng.integers(1, 9)))
    return layer, ArchSpec("buffered", (rf, glb, dram), mac_energy_pj=0.5)
