"""ZigZag's accelerator schema read as an ArchSpec (accelerators/interop/zigzag.py), on a
small accelerator written here in ZigZag's schema (no ZigZag needed)."""

from __future__ import annotations

import pytest

from accelerators.arch import ArchSpec
from accelerators.interop.zigzag import arch_from_zigzag


def _ports(op: str, bits: int) -> list[dict]:
    rd = [f"{op}, tl"] + ([f"{op}, th"] if op == "O" else [])
    wr = [f"{op}, fh"] + ([f"{op}, fl"] if op == "O" else [])
    # bandwidth_min 8 (one word): ZigZag then rounds no transfer up to a wider access
    return [{"name": "r", "type": "read", "bandwidth_min": 8, "bandwidth_max": bits, "allocation": rd},
            {"name": "w", "type": "write", "bandwidth_min": 8, "bandwidth_max": bits, "allocation": wr}]


def toy(reg_o_served: tuple[str, ...] = ()) -> dict:
    """A 4 x 2 array: an output register per PE (by default), a weight register shared
    over D2, a 64-bit-port buffer of inputs and outputs over the whole array, DRAM."""
    return {"name": "toy", "memories": {
        "reg_w": {"size": 16, "r_cost": 1.0, "w_cost": 2.0, "operands": ["I2"], "ports": _ports("I2", 8),
                  "served_dimensions": ["D2"]},
        "reg_o": {"size": 32, "r_cost": 0.4, "w_cost": 0.8, "operands": ["O"], "ports": _ports("O", 16),
                  "served_dimensions": list(reg_o_served)},
        "buf": {"size": 8192, "r_cost": 10.0, "w_cost": 20.0, "operands": ["I1", "O"],
                "ports": [{"name": "rw", "type": "read_write", "bandwidth_min": 8, "bandwidth_max": 64,
                           "allocation": ["I1, tl", "I1, fh", "O, tl", "O, th", "O, fh", "O, fl"]}],
                "served_dimensions": ["D1", "D2"]},
        "dram": {"size": 10**10, "r_cost": 100.0, "w_cost": 100.0, "operands": ["I1", "I2", "O"],
                 "ports": [{"name": "rw", "type": "read_write", "bandwidth_min": 8, "bandwidth_max": 64,
                            "allocation": ["I1, tl", "I1, fh", "I2, tl", "I2, fh", "O, tl", "O, th", "O, fh",
                                           "O, fl"]}],
                 "served_dimensions": ["D1", "D2"]},
    }, "operational_array": {"unit_energy": 0.5, "unit_area": 1, "dimensions": ["D1", "D2"], "sizes": [4, 2]}}


def test_the_translation_follows_served_dimensions_sizes_and_ports():
    tr = arch_from_zigzag(toy())
    a = tr.arch
    assert isinstance(a, ArchSpec) and [lv.name for lv in a.levels] == ["reg_o", "reg_w", "buf", "dram"]
    o, w, buf, dram = a.levels
    # reg_o: one per PE (8), 32 bits = 4 words; its 16-bit ports move 2 words an access
    assert (o.tensors, o.instances, o.capacity_of("O"), o.fanout) == (frozenset("O"), 8, 4, 1)
    assert (o.read_energy_pj["O"], o.write_energy_pj["O"]) == (0.2, 0.4)
    # reg_w: shared by the 2 PEs of D2, so it sits above a fanout over D2; 4 of them
    assert (w.tensors, w.instances, w.capacity_of("W"), w.fanout_x, w.fanout_y) == (frozenset("W"), 4, 2, 2, 1)
    # buf: inputs and outputs share 8192 bits = 1024 words; its fanout adds D1; 8 words an access
    assert (buf.tensors, buf.instances, buf.capacity_words, buf.fanout_x) == (frozenset("IO"), 1, 1024, 4)
    assert buf.read_energy_pj["I"] == 10.0 / 8 and buf.write_energy_pj["O"] == 20.0 / 8
    assert dram.capacity_words is None and a.mac_energy_pj == 0.5 and a.n_macs == 8
    assert tr.axes == {(1, "x"): "D2", (2, "x"): "D1"}
    assert tr.level_of == {"reg_o": 0, "reg_w": 1, "buf": 2, "dram": 3}


def test_a_hierarchy_that_is_not_nested_is_refused():
    with pytest.raises(ValueError, match="not nested"):
        arch_from_zigzag(toy(reg_o_served=("D1",)))     # weights shared over D2, outputs over D1
    with pytest.raises(ValueError, match="bits must be a positive integer, got 0"):
        arch_from_zigzag(toy(), bits=0)


def test_a_zigzag_accelerator_file_reads_as_the_dict_does(tmp_path):
    import yaml

    from accelerators.interop.zigzag import load_zigzag_accelerator

    (tmp_path / "hw.yaml").write_text(yaml.safe_dump(toy(), sort_keys=False))  # memories in file order
    assert load_zigzag_accelerator(tmp_path / "hw.yaml").arch == arch_from_zigzag(toy()).arch
    (tmp_path / "bad.yaml").write_text("name: x\n")
    with pytest.raises(ValueError, match="has 'memories' and 'operational_array'"):
        load_zigzag_accelerator(tmp_path / "bad.yaml")


def test_read_and_write_ports_are_read_and_write_bandwidths():
    o, w, buf, dram = arch_from_zigzag(toy()).arch.levels
    # one read port (every read direction) and one write port: separate limits, no shared one
    assert (w.read_bandwidth_words_per_cycle, w.write_bandwidth_words_per_cycle, w.bandwidth_words_per_cycle) == (
        1.0, 1.0, None)
    assert (o.read_bandwidth_words_per_cycle, o.write_bandwidth_words_per_cycle) == (2.0, 2.0)   # 16-bit ports
    # one read_write port: a shared limit of its width in words
    assert (buf.bandwidth_words_per_cycle, buf.read_bandwidth_words_per_cycle, buf.write_bandwidth_words_per_cycle) == (
        8.0, None, None)
    assert dram.bandwidth_words_per_cycle == 8.0 and not dram.split_bandwidth


def _edited(edit) -> dict:
    hw = toy()
    edit(hw)
    return hw


@pytest.mark.parametrize("edit, msg", [
    (lambda hw: hw["memories"]["buf"].update(bogus_key=3),
     r"memories\.buf\.bogus_key: memory key 'bogus_key' is not one coexplore reads from ZigZag 3\.9\.1's schema"),
    (lambda hw: hw["memories"]["buf"]["ports"][0].update(latency=2), r"ports\[0\]\.latency: port key 'latency'"),
    (lambda hw: hw["operational_array"].update(clock=1), r"operational_array\.clock: operational_array key 'clock'"),
    (lambda hw: hw.update(cores=2), r"accelerator key 'cores'"),
    (lambda hw: hw["operational_array"].update(is_imc=True), r"in-memory compute .* cannot be expressed"),
    (lambda hw: hw["memories"]["buf"].update(auto_cost_extraction=True), r"CACTI .* are not computed here"),
    (lambda hw: hw["memories"]["buf"].update(force_double_buffering=True), r"double buffering .* cannot be expressed"),
    (lambda hw: hw["memories"]["reg_w"]["ports"][0].update(type="write"), r"a write port cannot serve direction tl"),
    (lambda hw: hw["memories"]["reg_w"]["ports"][0].update(allocation=["O, tl"]), r"the memory does not hold O"),
])
def test_what_an_archspec_cannot_express_is_refused_by_key(edit, msg):
    with pytest.raises(ValueError, match=msg):
        arch_from_zigzag(_edited(edit))


@pytest.mark.parametrize("key, edit, msg, path", [
    ("latency", lambda hw: hw["memories"]["reg_w"].update(latency=1),
     r"memories\.reg_w\.latency: 1: a memory's access latency in cycles: coexplore's cycle model has no memory "
     r"latency .*refused rather than dropped \(ignore=\('latency',\) drops it", "memories.reg_w.latency = 1"),
    ("min_r_granularity", lambda hw: hw["memories"]["buf"].update(min_r_granularity=64), r"smallest read in bits",
     "memories.buf.min_r_granularity = 64"),
    ("systolic_dimensions", lambda hw: hw["operational_array"].update(systolic_dimensions=["D1"]),
     r"operational_array\.systolic_dimensions: \['D1'\]: .*drain", "operational_array.systolic_dimensions = ['D1']"),
    ("bandwidth_min", lambda hw: hw["memories"]["buf"]["ports"][0].update(bandwidth_min=64),
     r"ports\[0\]\.bandwidth_min: 64: ZigZag rounds each transfer period up to whole 64-bit accesses",
     "memories.buf.ports[0].bandwidth_min = 64"),
    ("dataflows", lambda hw: hw.update(dataflows={"D1": ["K, 4"]}), r"dataflows: .*mapping constraint",
     "dataflows = {'D1': ['K, 4']}"),
    ("input_precision", lambda hw: hw["operational_array"].update(input_precision=[4, 4]), r"\(8 and 8 here\)",
     "operational_array.input_precision = [4, 4]"),
    ("port_bandwidth", lambda hw: hw["memories"]["buf"]["ports"].append(
        {"name": "r2", "type": "read", "bandwidth_min": 8, "bandwidth_max": 32, "allocation": []}),
     r"memories\.buf\.ports: .*level 'buf': its ports \(rw: read_write, r2: read\) are not one read_write port",
     "memories.buf.ports: level 'buf' left without a bandwidth limit"),
])
def test_what_the_model_does_not_use_is_refused_unless_ignored_and_then_reported(key, edit, msg, path):
    hw = _edited(edit)
    with pytest.raises(ValueError, match=msg):
        arch_from_zigzag(hw)
    tr = arch_from_zigzag(hw, ignore=(key,))
    assert len(tr.dropped) == 1 and tr.dropped[0].startswith(path), tr.dropped
    assert arch_from_zigzag(toy(), ignore=(key,)).dropped == ()          # nothing to drop, nothing listed


def test_the_dropped_keys_are_listed_with_their_values_and_the_rest_is_unchanged():
    hw = toy()
    for m in hw["memories"].values():
        m["latency"] = 1
    tr = arch_from_zigzag(hw, ignore=("latency",))
    assert tr.dropped == tuple(f"memories.{n}.latency = 1" for n in ("reg_w", "reg_o", "buf", "dram"))
    assert tr.arch == arch_from_zigzag(toy()).arch
    with pytest.raises(ValueError, match=r"ignore names \['latncy'\], which are not droppable ZigZag keys"):
        arch_from_zigzag(hw, ignore=("latncy",))


def test_merged_memories_have_no_expressible_bandwidth_and_per_operand_word_sizes_are_per_operand_capacities():
    hw = toy()
    # outputs move to their own buffer beside the inputs': one level of two memories
    hw["memories"]["buf"].update(operands=["I1"], ports=_ports("I1", 64))
    hw["memories"] = {k: hw["memories"][k] for k in ("reg_w", "reg_o", "buf")} | {
        "obuf": {"size": 4096, "r_cost": 6.0, "w_cost": 8.0, "operands": ["O"], "ports": _ports("O", 32),
                 "served_dimensions": ["D1", "D2"]}, "dram": hw["memories"]["dram"]}
    with pytest.raises(ValueError, match=r"level 'buf\+obuf': memories \['buf', 'obuf'\] of different operands share "
                                         r"the level, each with its own ports"):
        arch_from_zigzag(hw)
    tr = arch_from_zigzag(hw, {"W": 8, "I": 8, "O": 16}, ignore=("port_bandwidth",))
    buf = tr.arch.levels[2]
    assert buf.name == "buf+obuf" and buf.capacity_words == {"I": 8192 // 8, "O": 4096 // 16}
    assert buf.read_energy_pj == {"I": 10.0 * 8 / 64, "O": 6.0 * 16 / 32}
    assert (buf.bandwidth_words_per_cycle, buf.read_bandwidth_words_per_cycle) == (None, None)
    assert tr.arch.levels[0].capacity_of("O") == 32 // 16 and tr.arch.word_bits == 8
    assert tr.dropped == ("memories.buf.ports, memories.obuf.ports: level 'buf+obuf' left without a bandwidth limit "
                          "(memories ['buf', 'obuf'] of different operands share the level, each with its own ports; "
                          "an ArchSpec level limits all its operands together)",
                          "memories.dram.ports: level 'dram' left without a bandwidth limit (its operands ['I', 'W', "
                          "'O'] have different word sizes, so a width in bits is no one number of words)")
    # a memory shared by operands of different word sizes has no shared capacity in words
    with pytest.raises(ValueError, match=r"memories\.buf\.size: shared by \['I', 'O'\] of word sizes \[8, 16\] bits"):
        arch_from_zigzag(toy(), {"W": 8, "I": 8, "O": 16})


def test_a_file_error_names_the_file_line_and_key(tmp_path):
    import yaml

    from accelerators.interop.zigzag import load_zigzag_accelerator

    hw = toy()
    hw["memories"]["buf"]["latency"] = 1
    (tmp_path / "hw.yaml").write_text(yaml.safe_dump(hw, sort_keys=False))
    line = next(i for i, t in enumerate((tmp_path / "hw.yaml").read_text().splitlines(), 1) if "latency" in t)
    with pytest.raises(ValueError, match=rf"hw\.yaml:{line}: memories\.buf\.latency: ZigZag: 1: a memory's access "
                                         r"latency"):
        load_zigzag_accelerator(tmp_path / "hw.yaml")
    assert load_zigzag_accelerator(tmp_path / "hw.yaml", ignore=["latency"]).dropped == ("memories.buf.latency = 1",)
