"""Timeloop/Accelergy v0.4 architectures read strictly (accelerators/interop/timeloop.py):
every key of the tree, the ERT and the ART is read, neutral (the same ArchSpec with and
without it), dropped only where ``ignore`` names it (and then listed in ``dropped``), or
refused with an error naming the key and its value; on a small design written here and
on the exercises' processed input committed in tests/mappers/data/timeloop."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from accelerators.interop.timeloop import (
    IGNORABLE,
    NEUTRAL,
    NEUTRAL_AT,
    NEUTRAL_KEYS,
    arch_from_timeloop,
    load_timeloop_yaml,
    loads_timeloop_yaml,
)

DATA = Path(__file__).parents[1] / "mappers" / "data" / "timeloop"

# DRAM -> buffer -> 4 PEs, each a register file, feeding one MAC (as tests/experiments/test_map_command.py's)
ARCH = """\
architecture:
  version: 0.4
  nodes:
  - !Container
    name: system
    attributes: {global_cycle_seconds: 2e-9}
  - !Component
    name: DRAM
    class: DRAM
    attributes: {width: 16, datawidth: 16, shared_bandwidth: 2}
  - !Component
    name: buffer
    class: SRAM
    attributes: {depth: 256, width: 32, datawidth: 16}
  - !Container
    name: PE
    spatial: {meshX: 4}
  - !Component
    name: reg
    class: regfile
    attributes: {depth: 8, width: 16, datawidth: 16}
  - !Component
    name: mac
    class: intmac
    attributes: {width: 16}
"""
ERT = """\
ERT:
  version: '0.4'
  tables:
  - name: system.DRAM[1..1]
    actions: [{name: read, energy: 200.0}, {name: write, energy: 200.0}, {name: update, energy: 200.0},
              {name: leak, energy: 0.0}]
  - name: system.buffer[1..1]
    actions: [{name: read, energy: 6.0}, {name: write, energy: 7.0}, {name: update, energy: 7.0},
              {name: leak, energy: 0.01}]
  - name: system.reg[1..4]
    actions: [{name: read, energy: 0.5}, {name: write, energy: 0.6}, {name: update, energy: 0.6}]
  - name: system.mac[1..4]
    actions: [{name: compute, energy: 1.0}, {name: leak, energy: 0.0}]
"""
ART = """\
ART:
  version: '0.4'
  tables:
  - {name: 'system.DRAM[1..1]', area: 0.0}
  - {name: 'system.buffer[1..1]', area: 5000.0}
  - {name: 'system.reg[1..4]', area: 100.0}
  - {name: 'system.mac[1..4]', area: 50.0}
"""


def _files():
    return loads_timeloop_yaml(ARCH), loads_timeloop_yaml(ERT), loads_timeloop_yaml(ART)


def _node(arch, name):
    return next(n for n in arch["architecture"]["nodes"] if n.get("name") == name)


def _table(doc, name):
    key = "ERT" if "ERT" in doc else "ART"
    return next(t for t in doc[key]["tables"] if re.sub(r"\[[^\]]*\]$", "", t["name"]).split(".")[-1] == name)


def _edit(where: str, key: str, value):
    """An edit of the design: ``where`` is a component (its attributes), ``node:NAME``
    (the node's own keys), ``ert:NAME`` / ``art:NAME`` (a table), ``ert-action:NAME``
    (the table's first action)."""
    def apply(arch, ert, art):
        kind, _, name = where.rpartition(":")
        if kind == "":
            _node(arch, name).setdefault("attributes", {})[key] = value
        elif kind == "node":
            _node(arch, name)[key] = value
        elif kind == "ert":
            _table(ert, name)[key] = value
        elif kind == "ert-action":
            _table(ert, name)["actions"][0][key] = value
        elif kind == "art":
            _table(art, name)[key] = value
    return apply


BASE = arch_from_timeloop(*_files())


def _translate(edit, **kw):
    arch, ert, art = _files()
    edit(arch, ert, art)
    return arch_from_timeloop(arch, ert, art, **kw)


def test_the_small_design_reads_as_its_attributes_say():
    a = BASE.arch
    assert BASE.level_names == ("reg", "inter_PE_spatial", "buffer", "DRAM") and BASE.dropped == ()
    reg, _, buf, dram = a.levels
    assert (reg.capacity_words, reg.vector_words, reg.instances) == (8, 1, 4)
    assert (buf.capacity_words, buf.vector_words, buf.read_energy_pj["I"], buf.leakage_pj_per_cycle) == (512, 2, 6.0,
                                                                                                         0.01)
    assert dram.capacity_words is None and dram.bandwidth_words_per_cycle == 2.0
    assert a.clock_mhz == 500.0 and a.mac_energy_pj == 1.0 and a.word_bits == 16
    assert a.area_mm2 == pytest.approx((5000.0 + 4 * 100.0 + 4 * 50.0) * 1e-6)


# -- read: Timeloop's other names for the same quantities give the same level ---------------

@pytest.mark.parametrize("attrs", [
    {"depth": 256, "width": 32, "word_bits": 16},                   # word_bits for datawidth
    {"depth": 256, "memory_width": 32, "datawidth": 16},            # memory_width for width
    {"memory_depth": 256, "width": 32, "datawidth": 16},
    {"depth": 256, "block_size": 2, "datawidth": 16},               # the block size given, no width
    {"depth": 256, "n_words": 2, "width": 32, "datawidth": 16},
    {"entries": 512, "width": 32, "datawidth": 16},                 # words, not rows
    {"sizeKB": 1, "width": 32, "datawidth": 16},                    # 1 KiB of 16-bit words
    {"depth": 256, "width": 32, "datawidth": 16, "word_bits": 16},  # two names, one value
])
def test_timeloops_names_for_a_quantity_are_read_alike(attrs):
    arch, ert, art = _files()
    _node(arch, "buffer")["attributes"] = attrs
    assert arch_from_timeloop(arch, ert, art).arch == BASE.arch


def test_bandwidths_and_ert_action_names_are_read_as_timeloop_reads_them():
    arch, ert, art = _files()
    _node(arch, "buffer")["attributes"]["bandwidth"] = 8           # deprecated: half reads, half writes
    buf = arch_from_timeloop(arch, ert, art).arch.levels[2]
    assert (buf.read_bandwidth_words_per_cycle, buf.write_bandwidth_words_per_cycle) == (4.0, 4.0)
    arch, ert, art = _files()
    _table(ert, "buffer")["actions"] = [{"name": "random_read", "energy": 6.0}, {"name": "read", "energy": 99.0},
                                        {"name": "random_fill", "energy": 7.0}, {"name": "random_update", "energy": 7.0},
                                        {"name": "leak", "energy": 0.01}]
    _table(ert, "mac")["actions"] = [{"name": "mac_random", "energy": 1.0}, {"name": "compute", "energy": 99.0}]
    assert arch_from_timeloop(arch, ert, art).arch == BASE.arch   # random_read before read, as Timeloop prefers


def test_a_fanout_levels_art_area_is_its_area():
    arch, ert, art = _files()
    art["ART"]["tables"].append({"name": "system.inter_PE_spatial[1..1]", "area": 1.0})
    a = arch_from_timeloop(arch, ert, art).arch
    assert a.levels[1].area_mm2 == pytest.approx(1e-6) and a.area_mm2 == pytest.approx(BASE.arch.area_mm2 + 1e-6)


# -- neutral: the same ArchSpec with and without ---------------------------------------------

NEUTRAL_VALUES = {"technology": "45nm", "type": "LPDDR4", "latency": 5, "global_cycle_seconds": 1e-9,
                  "has_power_gating": False, "version": "0.4"}


@pytest.mark.parametrize("key", sorted(NEUTRAL))
def test_a_neutral_attribute_changes_nothing(key):
    value = NEUTRAL_VALUES.get(key, 7)
    tl = _translate(_edit("buffer", key, value))
    assert tl.arch == BASE.arch and tl.dropped == ()
    tl = _translate(_edit("mac", key, value))
    assert tl.arch == BASE.arch and tl.dropped == ()


@pytest.mark.parametrize("key, value", [(k, v) for k, (vs, _) in sorted(NEUTRAL_AT.items()) for v in vs]
                         + [("power_gated_at", "buffer"), ("per_dataspace_bandwidth_consumption_scale",
                                                            {"Inputs": 1, "Weights": 1.0}),
                            ("allow_overbooking", "false"), ("reduction_supported", "True")])
def test_an_attribute_at_timeloops_default_changes_nothing(key, value):
    tl = _translate(_edit("buffer", key, value))
    assert tl.arch == BASE.arch and tl.dropped == ()


@pytest.mark.parametrize("edit", [
    _edit("node:buffer", "required_actions", ["read", "write", "update", "leak"]),
    _edit("node:buffer", "enabled", True),
    _edit("node:buffer", "subclass", "smartbuffer"),
    _edit("node:system", "attributes", {"global_cycle_seconds": 2e-9, "technology": "40nm", "DATAWIDTH": 8}),
    _edit("ert-action:buffer", "arguments", {"global_cycle_seconds": 1e-9, "action_latency_cycles": 1}),
    _edit("ert:reg", "actions", [{"name": "read", "energy": 0.5}, {"name": "write", "energy": 0.6},
                                 {"name": "update", "energy": 0.6}, {"name": "gated_read", "energy": 0.1},
                                 {"name": "metadata_read", "energy": 0.2}]),
    _edit("node:buffer", "sparse_optimizations", {}),
], ids=["required_actions", "enabled", "subclass", "container-attributes", "arguments", "gated-actions",
        "no-sparse-optimizations"])
def test_a_neutral_key_changes_nothing(edit):
    tl = _translate(edit)
    assert tl.arch == BASE.arch and tl.dropped == ()


def test_every_neutral_name_has_a_reason():
    assert all(isinstance(r, str) and len(r) > 20 for r in [*NEUTRAL.values(), *NEUTRAL_KEYS.values(),
                                                           *(why for _, why in NEUTRAL_AT.values())])


# -- dropped only with ignore --------------------------------------------------------------

DROPS = [
    ("allow_overbooking", _edit("buffer", "allow_overbooking", True), "component 'buffer': allow_overbooking = True"),
    ("reduction_supported", _edit("buffer", "reduction_supported", False),
     "component 'buffer': reduction_supported = False"),
    ("power_gated_at", _edit("reg", "power_gated_at", "buffer"), "component 'reg': power_gated_at = 'buffer'"),
    ("network_fill_latency", _edit("buffer", "network_fill_latency", 3),
     "component 'buffer': network_fill_latency = 3"),
    ("network_drain_latency", _edit("buffer", "network_drain_latency", 2),
     "component 'buffer': network_drain_latency = 2"),
    ("addr_gen_energy", _edit("buffer", "addr_gen_energy", 0.5), "component 'buffer': addr_gen_energy = 0.5"),
    ("wire", lambda arch, ert, art: ert["ERT"]["tables"].append(
        {"name": "system.wire", "actions": [{"name": "transfer_random", "energy": 0.3}]}),
     "ERT table 'wire': wire = {'transfer_random': 0.3}"),
]


def test_every_ignorable_key_is_tested():
    assert {k for k, _, _ in DROPS} == set(IGNORABLE)


@pytest.mark.parametrize("key, edit, line", DROPS, ids=[d[0] for d in DROPS])
def test_what_the_model_does_not_have_is_refused_unless_ignored_and_then_listed(key, edit, line):
    with pytest.raises(ValueError, match=rf"{key} = .*refused rather than dropped \(ignore=\('{key}',\)"):
        _translate(edit)
    tl = _translate(edit, ignore=(key,))
    assert tl.arch == BASE.arch and tl.dropped == (line,)


def test_ignore_naming_a_key_that_is_not_droppable_is_refused():
    with pytest.raises(ValueError, match=r"ignore names \['cluster_size'\], which are not droppable Timeloop keys"):
        arch_from_timeloop(*_files(), ignore=("cluster_size",))
    with pytest.raises(ValueError, match=r"not droppable Timeloop keys"):
        arch_from_timeloop(*_files(), ignore=("technology",))    # neutral: nothing to drop


def test_a_neutral_default_of_an_ignorable_key_is_not_listed_as_dropped():
    tl = _translate(_edit("buffer", "allow_overbooking", False), ignore=("allow_overbooking",))
    assert tl.arch == BASE.arch and tl.dropped == ()


# -- refused, naming the key and its value -----------------------------------------------------

REFUSED = [
    (_edit("buffer", "depht", 256), r"component 'buffer': attribute 'depht' \(= 256\) is not one Timeloop's model "
                                    r"reads .*read: \[.*'depth'"),
    (_edit("mac", "depth", 4), r"component 'mac': attribute 'depth' \(= 4\) is not one Timeloop's model reads for a "
                               r"compute unit"),
    (_edit("buffer", "size", 1024), r"attribute size = 1024 is not an attribute Timeloop reads"),
    (_edit("buffer", "metadata_storage_width", 4), r"attribute metadata_storage_width = 4 \(sparse-tensor metadata\)"),
    (_edit("buffer", "cluster_size", 4), r"'buffer': cluster_size = 4 cannot be expressed"),
    (_edit("buffer", "multiple_buffering", 2), r"multiple_buffering = 2 cannot be expressed"),
    (_edit("buffer", "min_utilization", 0.5), r"min_utilization = 0.5 is a mapspace constraint"),
    (_edit("buffer", "compression_supported", True), r"compression_supported = True \(sparse-tensor compression\)"),
    (_edit("buffer", "per_dataspace_bandwidth_consumption_scale", {"Inputs": 2}),
     r"per_dataspace_bandwidth_consumption_scale = \{'Inputs': 2\}"),
    (_edit("buffer", "vector_access_energy", 3.0), r"attribute vector_access_energy = 3.0 is an access energy"),
    (_edit("buffer", "cluster_area", 3.0), r"attribute cluster_area = 3.0 is an area"),
    (_edit("buffer", "network_read", "noc"), r"attribute network_read = 'noc' \(network modelling\)"),
    (_edit("buffer", "wire_energy", 0.1), r"attribute wire_energy = 0.1 \(network modelling\)"),
    (_edit("mac", "energy", 1.0), r"component 'mac': attribute energy = 1.0 is an energy override"),
    (_edit("buffer", "word_bits", 8), r"word_bits = 8, datawidth = 16 name one quantity with different values"),
    (_edit("buffer", "entries", 512), r"attributes \['depth', 'entries'\] each give the capacity"),
    (_edit("buffer", "width", 24), r"width 24 is not a whole number of 16-bit words"),
    (_edit("buffer", "block_size", 1), r"width 32 holds 2 blocks .* a cluster_size other than 1"),
    (_edit("buffer", "depth", 12.5), r"attribute depth must be a whole number, got 12.5"),
    (_edit("node:buffer", "contraints", {}), r"component 'buffer': component key 'contraints' \(= \{\}\)"),
    (_edit("node:PE", "spatial", {"meshZ": 4}), r"container 'PE': spatial key 'meshZ' \(= 4\)"),
    (_edit("node:buffer", "enabled", False), r"enabled = False: a disabled component"),
    (_edit("node:buffer", "class", "SimpleMulticast"), r"class = 'SimpleMulticast': network components"),
    (_edit("node:buffer", "class", "scratchpad"), r"class = 'scratchpad' is no storage class of Timeloop's"),
    (_edit("node:mac", "class", "adder"), r"class = 'adder': the last node is the compute unit"),
    (_edit("node:PE", "networks", [{"name": "noc"}]), r"container 'PE': networks = .*network specifications"),
    (_edit("node:buffer", "sparse_optimizations", {"action_optimization": []}), r"sparse_optimizations = "),
    (_edit("ert-action:buffer", "name", "reed"), r"ERT: 'buffer' action 'reed' \(energy 6.0\) is not one Timeloop "
                                                 r"charges"),
    (_edit("ert-action:buffer", "energie", 6.0), r"ERT table 'system.buffer\[1..1\]': action key 'energie'"),
    (_edit("ert:buffer", "action", []), r"ERT table \[1\]: table key 'action'"),
    (_edit("ert:buffer", "actions", [{"name": "write", "energy": 7.0}, {"name": "update", "energy": 7.0}]),
     r"ERT: 'buffer' has no random_read / read action"),
    (_edit("ert:mac", "actions", [{"name": "leak", "energy": 0.0}]), r"compute unit 'mac' has no mac_random"),
    (_edit("ert:buffer", "name", "system.bufer[1..1]"), r"ERT has no table for component 'buffer'"),
    (_edit("art:buffer", "name", "system.bufer[1..1]"), r"ART: table 'bufer' names no component"),
    (_edit("art:buffer", "areas", 1.0), r"ART table \[1\]: table key 'areas'"),
    (lambda arch, ert, art: ert["ERT"].update(version="0.2"), r"ERT: version = '0.2'"),
    (lambda arch, ert, art: ert["ERT"]["tables"].append({"name": "system.noc[1..1]", "actions": []}),
     r"ERT: table 'noc' names no component"),
    (lambda arch, ert, art: ert["ERT"]["tables"].append(
        {"name": "system.inter_PE_spatial[1..1]", "actions": [{"name": "leak", "energy": 0.5}]}),
     r"'inter_PE_spatial', a fanout level that holds no data, leaks 0.5"),
    (lambda arch, ert, art: arch["architecture"].update(name="x"), r"architecture: architecture key 'name'"),
    (lambda arch, ert, art: arch.update(sparse_optimizations={"targets": []}), r"sparse_optimizations = "),
]


@pytest.mark.parametrize("edit, msg", REFUSED, ids=[m[:40] for _, m in REFUSED])
def test_what_cannot_be_expressed_is_refused_naming_the_key_and_value(edit, msg):
    with pytest.raises(ValueError, match=msg):
        _translate(edit)


def test_a_storage_level_without_datawidth_is_refused():
    arch, ert, art = _files()
    del _node(arch, "reg")["attributes"]["datawidth"]
    with pytest.raises(ValueError, match=r"component 'reg': needs datawidth \(bits per word; Timeloop would take 16\)"):
        arch_from_timeloop(arch, ert, art)


# -- the processed form -------------------------------------------------------------------

def _processed():
    d = DATA / "simple_output_stationary_processed"
    return load_timeloop_yaml(d / "parsed-processed-input.yaml"), load_timeloop_yaml(d / "ERT.yaml")


def _local(proc, name):
    def walk(tree):
        for st in tree or []:
            for it in st.get("local") or []:
                if it["name"].split("[")[0] == name:
                    return it
            hit = walk(st.get("subtree"))
            if hit is not None:
                return hit
        return None
    return walk(proc["architecture"]["subtree"])


def test_the_processed_forms_neutral_keys_change_nothing():
    proc, ert = _processed()
    base = arch_from_timeloop(proc, ert).arch
    p = copy.deepcopy(proc)
    p["architecture"]["subtree"][0]["attributes"]["DATAWIDTH"] = 8          # a variable of the front end
    glb = _local(p, "shared_glb")
    glb["attributes"].update(instances=1, nports=2, power_gated_at="shared_glb")
    glb.pop("required_actions")
    assert arch_from_timeloop(p, ert).arch == base


@pytest.mark.parametrize("change, msg", [
    (lambda p: _local(p, "shared_glb").update(required=[]), r"component 'shared_glb': component key 'required'"),
    (lambda p: p["architecture"]["subtree"][0].update(locals=[]), r"subtree 'system_top_level': subtree key 'locals'"),
    (lambda p: _local(p, "shared_glb")["attributes"].update(instances=2), r"attribute instances = 2 differs from the "
                                                                          r"1 of its name"),
    (lambda p: _local(p, "shared_glb")["attributes"].update(allow_overbooking=True), r"allow_overbooking = True"),
    (lambda p: _local(p, "DRAM").update({"class": "noc"}), r"class = 'noc' is no storage class"),
], ids=["local-key", "subtree-key", "instances", "overbooking", "class"])
def test_the_processed_forms_keys_are_read_or_refused(change, msg):
    proc, ert = _processed()
    change(proc)
    with pytest.raises(ValueError, match=msg):
        arch_from_timeloop(proc, ert)


def test_the_exercises_processed_files_load_unchanged_with_nothing_dropped():
    proc, ert = _processed()
    tl = arch_from_timeloop(proc, ert)
    assert tl.dropped == () and tl.constraints_form == "processed"
    assert tl.level_names[-1] == "DRAM" and tl.arch.n_macs == 256
