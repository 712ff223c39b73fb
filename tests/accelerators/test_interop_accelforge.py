"""AccelForge specs read as ArchSpec + Layer (accelerators/interop/accelforge.py,
mappers/interop/accelforge.py). The specs below are the public AccelForge examples
(Accelergy-Project/accelforge, ``examples/arches/simple_three_level.yaml``,
``fanout_variations/at_glb.yaml``, ``eyeriss.yaml``, ``examples/workloads/basic/
matmuls.yaml``) with their Jinja defaults filled in and a spatial fanout and widths
added where a case needs them."""

from __future__ import annotations

import textwrap

import pytest

from accelerators.arch import ArchSpec, MemoryLevel
from accelerators.interop.accelforge import arch_from_accelforge, number
from accelerators.interop.timeloop import loads_timeloop_yaml
from mappers.interop.accelforge import layer_from_accelforge
from mappers.workloads import gemm


def _yaml(text: str):
    return loads_timeloop_yaml(textwrap.dedent(text))


THREE_LEVEL = """\
arch:
  nodes:
  - !Memory
    name: MainMemory
    size: inf
    leak_power: 0
    area: 0
    tensors: {keep: ~Intermediates, may_keep: All}
    actions:
    - {name: read, energy: 10e-12, latency: 0}
    - {name: write, energy: 10e-12, latency: 0}
  - !Memory
    name: GlobalBuffer
    size: 64 * 1024 * 8
    leak_power: 2e-3
    area: 1e-6
    tensors: {may_keep: All}
    spatial:
    - {name: X, fanout: 4}
    - {name: Y, fanout: 2}
    actions:
    - {name: read, energy: 1e-12, latency: 0, bits_per_action: 32}
    - {name: write, energy: 1.5e-12, latency: 0, bits_per_action: 32}
  - !Memory
    name: LocalBuffer
    size: 64 * 8
    leak_power: 0
    area: 0
    tensors: {keep: ~(GlobalBuffer | MainMemory), may_keep: input | weight}
    actions:
    - {name: read, energy: 0.1e-12, latency: 0}
    - {name: write, energy: 0.1e-12, latency: 0}
  - !Compute
    name: MAC
    leak_power: 0
    area: 0
    actions:
    - {name: compute, energy: 1e-12, latency: 0}
"""

MATMUL = """\
workload:
  iteration_space_shape:
    m: 0 <= m < 128
    nI: 0 <= nI < 64
    nA: 0 <= nA < 32
  bits_per_value: {All: 8}
  einsums:
  - name: MatmulA
    tensor_accesses:
    - {name: I, projection: [m, nI]}
    - {name: WA, projection: [nI, nA]}
    - {name: A, projection: [m, nA], output: True}
    renames: {weight: WA, input: I, output: A}
"""


def test_a_matmul_einsum_is_the_gemm_layer():
    layer, roles, bits = layer_from_accelforge(_yaml(MATMUL))
    g = gemm("g", M=128, K=64, N=32)
    assert roles == {"I": "I", "WA": "W", "A": "O"} and bits == 8
    assert layer.macs == g.macs and sorted(layer.dims.values()) == sorted(g.dims.values())
    # I[m][nI] x WA[nI][nA] -> A[m][nA]
    assert layer.tensor("I").axes == ((("M", 1),), (("NI", 1),)) and layer.tensor("O").axes == ((("M", 1),), (("NA", 1),))


def test_the_three_level_example_is_the_hand_built_archspec():
    _, roles, bits = layer_from_accelforge(_yaml(MATMUL))
    tr = arch_from_accelforge(_yaml(THREE_LEVEL), roles, bits_per_value=bits, clock_mhz=500.0)
    want = ArchSpec("accelforge", (
        MemoryLevel("LocalBuffer", frozenset("IW"), 64, instances=8, read_energy_pj=0.1, write_energy_pj=0.1),
        MemoryLevel("GlobalBuffer", capacity_words=65536, fanout_x=4, fanout_y=2, read_energy_pj=1.0,
                    write_energy_pj=1.5, vector_words=4, leakage_pj_per_cycle=2e-3 * 1e12 / 500e6, area_mm2=1.0),
        MemoryLevel("MainMemory", read_energy_pj=10.0, write_energy_pj=10.0),
    ), mac_energy_pj=1.0, word_bits=8, clock_mhz=500.0, area_mm2=1.0, kind="accelforge")
    got = tr.arch
    assert got.levels[0] == want.levels[0] and got.levels[2] == want.levels[2]
    g, w = got.levels[1], want.levels[1]
    assert (g.capacity_words, g.fanout_x, g.fanout_y, g.vector_words, g.instances) == (65536, 4, 2, 4, 1)
    for k in ("read_energy_pj", "write_energy_pj"):
        assert getattr(g, k) == pytest.approx(getattr(w, k))
    assert g.leakage_pj_per_cycle == pytest.approx(4.0) and g.area_mm2 == pytest.approx(1.0)
    assert got.mac_energy_pj == pytest.approx(1.0) and got.n_macs == 8
    assert tr.level_names == ("LocalBuffer", "GlobalBuffer", "MainMemory")


def test_a_fanout_node_is_a_tensorless_level():
    spec = _yaml(THREE_LEVEL.replace("""    spatial:
    - {name: X, fanout: 4}
    - {name: Y, fanout: 2}
""", "").replace("""  - !Memory
    name: LocalBuffer""", """  - !Fanout
    name: Array
    spatial:
    - {name: X, fanout: 3}
  - !Memory
    name: LocalBuffer"""))
    a = arch_from_accelforge(spec, bits_per_value=8).arch
    assert [lv.name for lv in a.levels] == ["LocalBuffer", "Array", "GlobalBuffer", "MainMemory"]
    assert a.levels[1].tensors == frozenset() and a.levels[1].fanout_x == 3 and a.levels[0].instances == 3


EYERISS = """\
arch:
  nodes:
  - !Memory
    name: MainMemory
    component_class: lpddr4
    size: inf
    tensors: {keep: ~Intermediates, may_keep: All}
  - !Memory
    name: GlobalBuffer
    component_class: SmartBufferSRAM
    size: 1024 * 1024
    total_latency: (read_actions + write_actions) / 32 / 200e6
    actions:
    - {name: read, bits_per_action: 64}
    - {name: write, bits_per_action: 64}
    tensors: {keep: ~MainMemory, may_keep: All}
  - !Compute
    name: MAC
    component_class: IntMAC
"""


def test_what_cannot_be_expressed_is_refused_by_name():
    with pytest.raises(ValueError, match=r"'MainMemory': action 'read' has no energy .*component models"):
        arch_from_accelforge(_yaml(EYERISS))
    spec = _yaml(THREE_LEVEL.replace("energy: 1e-12, latency: 0, bits_per_action: 32", "energy: 1e-12, latency: 2e-9, bits_per_action: 32"))
    with pytest.raises(ValueError, match="'GlobalBuffer': action 'read' has latency 2e-09 s"):
        arch_from_accelforge(spec)
    spec = _yaml(THREE_LEVEL.replace("- {name: X, fanout: 4}", "- {name: X, fanout: 4, may_reuse: weight}"))
    with pytest.raises(ValueError, match="sets may_reuse = 'weight'"):
        arch_from_accelforge(spec)
    spec = _yaml(THREE_LEVEL.replace("size: 64 * 8", "size: 64 * BITS"))
    with pytest.raises(ValueError, match="names 'BITS'; expand the spec's variables"):
        arch_from_accelforge(spec)
    spec = _yaml(THREE_LEVEL.replace("bits_per_action: 32}\n    - {name: write, energy: 1.5e-12, latency: 0, bits_per_action: 32}",
                                     "bits_per_action: 32}\n    - {name: write, energy: 1.5e-12, latency: 0, bits_per_action: 16}"))
    with pytest.raises(ValueError, match="different bits_per_action"):
        arch_from_accelforge(spec)
    with pytest.raises(ValueError, match=r"has 2 einsums"):
        wl = _yaml(MATMUL)
        wl["workload"]["einsums"].append(dict(wl["workload"]["einsums"][0], name="MatmulB"))
        layer_from_accelforge(wl)
    assert number("12 * 16", "x") == 192.0 and number("inf", "x") == float("inf")
