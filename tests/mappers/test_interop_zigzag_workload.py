"""ZigZag 3.x workloads read as Layers (mappers/interop/zigzag.py: layers_from_zigzag):
what zigzag_workload writes reads back; the public resnet18 / gemm examples' forms
(KULeuven-MICAS/zigzag, zigzag/inputs/workload/) read as the layers they describe."""

from __future__ import annotations

import pytest
import yaml

from mappers.interop.zigzag import layers_from_zigzag, zigzag_workload
from mappers.workload_files import load_workload
from mappers.workloads import conv2d

# three entries in the form of ZigZag's resnet18.yaml: a strided conv, a max pool, an addition
RESNET_PART = """\
- id: 0
  name: conv1
  operator_type: Conv
  equation: O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]
  dimension_relations: [ix=2*ox+1*fx, iy=2*oy+1*fy]
  loop_dims: [B, K, C, OY, OX, FY, FX]
  loop_sizes: [1, 64, 3, 112, 112, 7, 7]
  operand_precision: {W: 8, I: 8, O: 16, O_final: 8}
  operand_source: {I: 0, W: 0}
- id: 1
  operator_type: Pooling
  equation: O[b][g][oy][ox]+=W[fx][fy]*I[b][g][iy][ix]
  dimension_relations: [ix=2*ox+1*fx, iy=2*oy+1*fy]
  loop_dims: [B, G, OY, OX, FX, FY]
  loop_sizes: [1, 64, 56, 56, 3, 3]
- id: 4
  operator_type: Add
  equation: O[b][g][oy][ox]=W[b][g][oy][ox]+I[b][g][oy][ox]
  loop_dims: [B, G, OY, OX]
  loop_sizes: [1, 64, 56, 56]
- id: 5
  operator_type: Gemm
  equation: O[b][k]+=I[b][c]*W[c][k]
  dimension_relations: []
  loop_dims: [B, C, K]
  loop_sizes: [512, 256, 128]
"""


def test_the_resnet_form_reads_as_its_mac_layers():
    with pytest.raises(ValueError, match=r"ZigZag layer 'layer1' \(Pooling\) equation: .*coexplore's layers are MAC "
                                         r"loop nests.*ignore=\('mac_free_layers',\)"):
        layers_from_zigzag(yaml.safe_load(RESNET_PART))
    read = layers_from_zigzag(yaml.safe_load(RESNET_PART), ignore=("mac_free_layers",))   # pooling, addition: no MACs
    assert [d.split(":")[0] for d in read.dropped] == ["ZigZag layer 'layer1' (Pooling) equation",
                                                       "ZigZag layer 'layer4' (Add) equation"]
    conv, gemm_layer = read
    assert conv.attrs["operand_precision"] == {"W": 8, "I": 8, "O": 16, "O_final": 8}
    want = conv2d("c", N=1, K=64, C=3, P=112, Q=112, R=7, S=7, stride=2)
    assert conv.dims == want.dims and conv.tensors == want.tensors and conv.name == "conv1"
    assert gemm_layer.macs == 512 * 256 * 128 and gemm_layer.tensor("O").axes == ((("N", 1),), (("K", 1),))


@pytest.mark.parametrize("layer", [conv2d("a", N=2, K=8, C=4, P=5, Q=6, R=3, S=2, stride=(1, 2)),
                                   conv2d("b", K=16, C=16, P=7, Q=7, R=1, S=1)])
def test_what_zigzag_workload_writes_reads_back(layer, tmp_path):
    back = layers_from_zigzag(zigzag_workload(layer))[0]
    assert back.dims == layer.dims and back.tensors == layer.tensors
    (tmp_path / "wl.yaml").write_text(yaml.safe_dump(zigzag_workload(layer)))
    assert load_workload({"zigzag": "wl.yaml"}, base_dir=tmp_path)[0].tensors == layer.tensors


def test_an_equation_that_cannot_be_expressed_is_refused_by_name():
    bad = yaml.safe_load(RESNET_PART)[:1]
    bad[0]["equation"] = "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]*X[k]"
    with pytest.raises(ValueError, match=r"ZigZag layer 'conv1' \(Conv\): equation .* cannot be expressed"):
        layers_from_zigzag(bad)
    bad = yaml.safe_load(RESNET_PART)[:1]
    bad[0]["dimension_relations"] = ["ix=2*ox*fx"]
    with pytest.raises(ValueError, match="not linear"):
        layers_from_zigzag(bad)


@pytest.mark.parametrize("key, edit, msg", [
    ("operand_source", lambda e: e.update(operand_source={"I": 3, "W": 0}),
     r"ZigZag layer 'conv1' \(Conv\) operand_source: \{'I': 3, 'W': 0\}: which layer produces an operand"),
    ("padding", lambda e: e.update(padding=[[3, 3], [3, 3]]), r"conv1' \(Conv\) padding: .*subtracts"),
    ("pr_loop_sizes", lambda e: e.update(pr_loop_dims=["IX", "IY"], pr_loop_sizes=[224, 224]),
     r"pr_loop_sizes IX: 224: input extents other than the window"),
])
def test_what_a_layer_says_beyond_its_loops_is_refused_unless_ignored(key, edit, msg):
    entry = yaml.safe_load(RESNET_PART)[:1]
    edit(entry[0])
    with pytest.raises(ValueError, match=msg + r".*ignore=\('" + key):
        layers_from_zigzag(entry)
    read = layers_from_zigzag(entry, ignore=(key,))
    assert len(read) == 1 and read.dropped and all(key in d for d in read.dropped)
    assert read[0].dims == layers_from_zigzag(yaml.safe_load(RESNET_PART)[:1])[0].dims


def test_a_layer_that_says_only_what_its_loops_do_is_read_and_unknown_keys_are_refused():
    entry = yaml.safe_load(RESNET_PART)[:1]
    # the window of ix = 2*ox + fx over OX 112, FX 7: 2 * 111 + 6 + 1 = 229; no padding
    entry[0].update(pr_loop_dims=["IX", "IY"], pr_loop_sizes=[229, 229], padding=[[0, 0], [0, 0]])
    assert layers_from_zigzag(entry).dropped == ()
    entry[0]["bogus_key"] = 3
    with pytest.raises(ValueError, match=r"conv1' \(Conv\): key 'bogus_key' is not one coexplore reads"):
        layers_from_zigzag(entry)
    with pytest.raises(ValueError, match=r"ignore names \['latency'\], which are not droppable ZigZag workload keys"):
        layers_from_zigzag(entry, ignore=("latency",))


def test_a_workload_file_names_what_it_may_drop(tmp_path):
    (tmp_path / "wl.yaml").write_text(RESNET_PART)
    with pytest.raises(ValueError, match=r"Pooling\) equation: .*refused rather than dropped"):
        load_workload({"zigzag": "wl.yaml"}, base_dir=tmp_path)
    layers = load_workload({"zigzag": "wl.yaml", "ignore": ["mac_free_layers"]}, base_dir=tmp_path)
    assert len(layers) == 2 and len(layers.dropped) == 2
