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
    with pytest.raises(ValueError, match=r"'GlobalBuffer' action 'read': latency = '2e-9': an action's latency"):
        arch_from_accelforge(spec)
    spec = _yaml(THREE_LEVEL.replace("- {name: X, fanout: 4}", "- {name: X, fanout: 4, may_reuse: weight}"))
    with pytest.raises(ValueError, match=r"fanout 'X': may_reuse = 'weight': the tensors a fanout may reuse"):
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


# An AccelForge mapping of MatmulA on THREE_LEVEL (the LoopTree form of the public
# examples/mappings/*.yaml: Storage, Temporal, Spatial, Compute nodes, outermost first)
MAPPING = """\
mapping:
  nodes:
  - !Storage {tensors: [I, WA, A], component: MainMemory}
  - !Temporal {rank_variable: m, tile_shape: 32}
  - !Storage {tensors: [I, WA, A], component: GlobalBuffer}
  - !Temporal {rank_variable: nA, tile_shape: 8}
  - !Temporal {rank_variable: nI, tile_shape: 1}
  - !Spatial {rank_variable: m, tile_shape: 8, name: X, component: GlobalBuffer}
  - !Spatial {rank_variable: nA, tile_shape: 4, name: Y, component: GlobalBuffer}
  - !Nested
    nodes:
    - !Storage {tensors: [I, WA], component: LocalBuffer}
    - !Temporal {rank_variable: m, tile_shape: 1}
    - !Temporal {rank_variable: nA, tile_shape: 1}
    - !Compute {einsum: MatmulA, component: MAC}
"""


def _mapped(text: str = MAPPING):
    from mappers.interop.accelforge import mapping_from_accelforge

    layer, roles, bits = layer_from_accelforge(_yaml(MATMUL))
    arch = _yaml(THREE_LEVEL)
    tr = arch_from_accelforge(arch, roles, bits_per_value=bits)
    return layer, tr, mapping_from_accelforge(_yaml(text), tr, layer, arch)


def test_an_accelforge_mapping_is_the_loop_nest_it_describes():
    from mappers.interop.timeloop import canonical
    from mappers.mapping import Mapping

    layer, tr, got = _mapped()
    # m: 128 -> 32 (MainMemory, 4) -> 8 (GlobalBuffer X, 4) -> 1 (LocalBuffer, 8); nA: 32 -> 8
    # (GlobalBuffer, 4) -> 4 (Y, 2) -> 1 (LocalBuffer, 4); nI: 64 -> 1 at the GlobalBuffer
    want = Mapping.create(tr.arch, temporal=[{"M": 8, "NA": 4}, {"NA": 4, "NI": 64}, {"M": 4}],
                          spatial_x=[{}, {"M": 4}, {}], spatial_y=[{}, {"NA": 2}, {}],
                          order=[("M", "NA"), ("NA", "NI"), ("M",)], bypass=[set(), set(), set()])
    assert got == canonical(want, layer, tr.arch)
    assert got.violations(layer, tr.arch) == []
    # the LocalBuffer keeps I and WA (its may_keep), the output bypasses it
    assert not got.keeps(tr.arch, 0, "O") and got.keeps(tr.arch, 0, "I") and got.keeps(tr.arch, 0, "W")


def test_a_storage_node_above_irrelevant_loops_only_is_the_same_level():
    # WA kept in the GlobalBuffer above the m loop (m is not a rank of WA): the same tiles
    text = MAPPING.replace("  - !Storage {tensors: [I, WA, A], component: MainMemory}\n",
                           "  - !Storage {tensors: [I, WA, A], component: MainMemory}\n"
                           "  - !Storage {tensors: [WA], component: GlobalBuffer}\n").replace(
        "{tensors: [I, WA, A], component: GlobalBuffer}", "{tensors: [I, A], component: GlobalBuffer}")
    assert _mapped(text)[2] == _mapped()[2]


@pytest.mark.parametrize("edit, msg", [
    (("  - !Nested\n    nodes:\n", "  - !Sequential\n    nodes:\n"), r"!Sequential.*several einsums"),
    (("{rank_variable: m, tile_shape: 32}", "{rank_variable: m, tile_shape: 32, initial_tile_shape: 40}"),
     r"initial_tile_shape 40 differs from tile_shape 32"),
    (("{rank_variable: m, tile_shape: 32}", "{rank_variable: m, tile_shape: 48}"),
     r"tile_shape 48 of 'm' does not divide its tile of 128"),
    (("    - !Temporal {rank_variable: nA, tile_shape: 1}\n", ""), r"ranks \{'na': 4\} end with tiles larger than 1"),
    (("{tensors: [I, WA], component: LocalBuffer}", "{tensors: [I, A], component: LocalBuffer}"),
     r"'LocalBuffer' cannot hold \['O'\]"),
    (("name: Y, component: GlobalBuffer", "name: Z, component: GlobalBuffer"), r"has no fanout dimension 'Z'"),
    (("{rank_variable: nA, tile_shape: 8}", "{rank_variable: [nA, m], tile_shape: 8}"),
     r"is not one rank variable"),
    (("  - !Storage {tensors: [I, WA, A], component: MainMemory}\n",
      "  - !Storage {tensors: [I, WA, A], component: MainMemory}\n  - !Storage {tensors: [I], component: GlobalBuffer}\n"),
     r"holds \['I'\] above the loop over 'm'"),
    (("    - !Temporal {rank_variable: m, tile_shape: 1}\n",
      "    - !Temporal {rank_variable: m, tile_shape: 1}\n    - !Spatial {rank_variable: nI, tile_shape: 1, name: X, "
      "component: GlobalBuffer}\n"), None),
    (("    - !Storage {tensors: [I, WA], component: LocalBuffer}\n",
      "    - !Storage {tensors: [I, WA], component: LocalBuffer}\n    - !Spatial {rank_variable: m, tile_shape: 4, "
      "name: X, component: GlobalBuffer}\n"), r"across 'GlobalBuffer''s fanout placed among 'LocalBuffer''s loops"),
])
def test_what_a_mapping_cannot_express_is_refused_by_name(edit, msg):
    text = MAPPING.replace(*edit)
    assert text != MAPPING
    if msg is None:          # a loop of factor 1 anywhere changes nothing
        assert _mapped(text)[2] == _mapped()[2]
        return
    with pytest.raises(ValueError, match=msg):
        _mapped(text)


@pytest.mark.parametrize("edit, msg", [
    (("    size: 64 * 8\n", "    size: 64 * 8\n    bogus_key: 3\n"),
     r"node 'LocalBuffer': !Memory node key 'bogus_key' is not one coexplore reads"),
    (("{name: compute, energy: 1e-12, latency: 0}", "{name: compute, energy: 1e-12, latency: 0, bogus: 1}"),
     r"node 'MAC' action 'compute': action key 'bogus'"),
    (("- {name: X, fanout: 4}", "- {name: X, fanout: 4, stride: 2}"), r"fanout 'X': fanout key 'stride'"),
    (("tensors: {may_keep: All}", "tensors: {may_keep: All, pinned: All}"), r"tensors set key 'pinned'"),
    (("    - {name: write, energy: 0.1e-12, latency: 0}\n  - !Compute",
      "    - {name: write, energy: 0.1e-12, latency: 0}\n    - {name: update, energy: 0.1e-12}\n  - !Compute"),
     r"node 'LocalBuffer': action 'update' cannot be expressed"),
    (("    name: MAC\n", "    name: MAC\n    n_parallel_instances: 2\n"), r"n_parallel_instances = 2: parallel"),
    (("- {name: X, fanout: 4}", "- {name: X, fanout: 4, power_gateable: true}"), r"power_gateable = True"),
    (("size: 64 * 8", "size: 64 * 8\n    bits_per_value_scale: {All: 2}"), r"bits_per_value_scale = "),
])
def test_every_key_is_read_or_refused(edit, msg):
    text = THREE_LEVEL.replace(*edit)
    assert text != THREE_LEVEL
    with pytest.raises(ValueError, match=msg):
        arch_from_accelforge(_yaml(text))


def test_neutral_values_are_read_and_droppable_keys_are_dropped_only_when_named():
    plain = arch_from_accelforge(_yaml(THREE_LEVEL)).arch
    neutral = THREE_LEVEL.replace("- {name: X, fanout: 4}", "- {name: X, fanout: 4, may_reuse: All, reuse: Nothing, "
                                  "min_usage: 0, loop_bounds: []}").replace(
        "    name: MAC\n", "    name: MAC\n    enabled: true\n    n_parallel_instances: 1\n")
    assert arch_from_accelforge(_yaml(neutral)).arch == plain
    # a scale is applied; the node's bits_per_action is its actions' default
    scaled = THREE_LEVEL.replace("    name: LocalBuffer\n", "    name: LocalBuffer\n    energy_scale: 2\n")
    assert arch_from_accelforge(_yaml(scaled)).arch.levels[0].read_energy_pj["W"] == pytest.approx(0.2)
    wide = THREE_LEVEL.replace("    name: LocalBuffer\n", "    name: LocalBuffer\n    bits_per_action: 16\n")
    assert arch_from_accelforge(_yaml(wide)).arch.levels[0].vector_words == 2
    slow = THREE_LEVEL.replace("{name: compute, energy: 1e-12, latency: 0}", "{name: compute, energy: 1e-12, latency: 1e-9}")
    with pytest.raises(ValueError, match=r"ignore=\('latency',\) drops it"):
        arch_from_accelforge(_yaml(slow))
    tr = arch_from_accelforge(_yaml(slow), ignore=("latency",))
    assert tr.arch == plain and tr.dropped == ("node 'MAC' action 'compute': latency = '1e-9'",)
    no_area = THREE_LEVEL.replace("    leak_power: 0\n    area: 0\n    tensors: {keep: ~(GlobalBuffer",
                                  "    leak_power: 0\n    tensors: {keep: ~(GlobalBuffer")
    with pytest.raises(ValueError, match=r"node 'LocalBuffer': area = None: a component without an area"):
        arch_from_accelforge(_yaml(no_area))
    assert arch_from_accelforge(_yaml(no_area), ignore=["area"]).dropped == ("node 'LocalBuffer': area = None",)
    with pytest.raises(ValueError, match=r"ignore names \['bogus'\], which are not droppable AccelForge keys"):
        arch_from_accelforge(_yaml(THREE_LEVEL), ignore=("bogus",))
