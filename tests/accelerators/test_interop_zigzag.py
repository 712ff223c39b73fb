"""ZigZag's accelerator schema read as an ArchSpec (accelerators/interop/zigzag.py), on a
small accelerator written here in ZigZag's schema (no ZigZag needed)."""

from __future__ import annotations

import pytest

from accelerators.arch import ArchSpec
from accelerators.interop.zigzag import arch_from_zigzag


def _ports(op: str, bits: int) -> list[dict]:
    rd = [f"{op}, tl"] + ([f"{op}, th"] if op == "O" else [])
    wr = [f"{op}, fh"] + ([f"{op}, fl"] if op == "O" else [])
    return [{"name": "r", "type": "read", "bandwidth_min": bits, "bandwidth_max": bits, "allocation": rd},
            {"name": "w", "type": "write", "bandwidth_min": bits, "bandwidth_max": bits, "allocation": wr}]


def toy(reg_o_served: tuple[str, ...] = ()) -> dict:
    """A 4 x 2 array: an output register per PE (by default), a weight register shared
    over D2, a 64-bit-port buffer of inputs and outputs over the whole array, DRAM."""
    return {"name": "toy", "memories": {
        "reg_w": {"size": 16, "r_cost": 1.0, "w_cost": 2.0, "operands": ["I2"], "ports": _ports("I2", 8),
                  "served_dimensions": ["D2"]},
        "reg_o": {"size": 32, "r_cost": 0.4, "w_cost": 0.8, "operands": ["O"], "ports": _ports("O", 16),
                  "served_dimensions": list(reg_o_served)},
        "buf": {"size": 8192, "r_cost": 10.0, "w_cost": 20.0, "operands": ["I1", "O"],
                "ports": [{"name": "rw", "type": "read_write", "bandwidth_min": 64, "bandwidth_max": 64,
                           "allocation": ["I1, tl", "I1, fh", "O, tl", "O, th", "O, fh", "O, fl"]}],
                "served_dimensions": ["D1", "D2"]},
        "dram": {"size": 10**10, "r_cost": 100.0, "w_cost": 100.0, "operands": ["I1", "I2", "O"],
                 "ports": [{"name": "rw", "type": "read_write", "bandwidth_min": 64, "bandwidth_max": 64,
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
