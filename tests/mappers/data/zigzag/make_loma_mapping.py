"""Write tests/mappers/data/zigzag/loma_mapping.yaml: a mapping ZigZag itself chose and evaluated.

Runs INSIDE ``.venv-zigzag`` (``make zigzag-env``; ZigZag, its PyYAML and the standard
library only):

    .venv-zigzag/bin/python tests/mappers/data/zigzag/make_loma_mapping.py > tests/mappers/data/zigzag/loma_mapping.yaml

ZigZag's API (``zigzag.api.get_hardware_performance_zigzag``: LOMA's temporal search, its
memory allocator, its cost model, minimum energy) maps one convolution on each of two
small accelerators written here in ZigZag's schema, 4 x 2 arrays with the ``latency`` and
``area`` keys ZigZag's validator requires:

* ``shared_register``: one register per PE holding weights and outputs, a buffer of inputs
  and outputs, DRAM; mapped with ZigZag's ``temporal_mapping_type="even"`` (every operand
  of a memory ends at the same loop), so its mapping is one loop nest over nested levels;
* ``toy``: ``tests/accelerators/test_interop_zigzag.py``'s ``toy`` (an output register
  per PE, a weight register shared over D2); mapped with ZigZag's default (``uneven``),
  its weight register ends below the output register's loops -- per-operand hierarchies
  that do not nest, which ``mapping_from_zigzag`` refuses.

The file records, per accelerator, for the best mapping ZigZag found:

* ``temporal_mapping``: the allocated mapping its cost model evaluated
  (``cme.temporal_mapping.mapping_dic_origin``: per operand, the loops of each of its
  memory levels, innermost first);
* ``temporal_mapping_stationary``: the same mapping as ZigZag writes it to its
  ``<layer>_complete.json`` (``inputs.temporal_mapping``: irrelevant loops at the bottom of
  a memory level merged into the level below, per operand);
* ``spatial_mapping``: its spatial unrolling (``cme.spatial_mapping``);
* ``zigzag``: its figures for that mapping -- per operand and memory level the element
  moves (``DATA_ELEM_MOVE_COUNT`` in its four directions), energy, ideal temporal cycles,
  and the API's ``access_same_data_considered_as_no_access`` (true: an input word read
  out of the innermost memory for consecutive MACs that reuse it counts once);
* ``accelerator``, ``workload``, ``mapping``: what it was given.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import yaml

COMMAND = ".venv-zigzag/bin/python tests/mappers/data/zigzag/make_loma_mapping.py > tests/mappers/data/zigzag/loma_mapping.yaml"


def _ports(op: str, bits: int) -> list[dict]:
    rd = [f"{op}, tl"] + ([f"{op}, th"] if op == "O" else [])
    wr = [f"{op}, fh"] + ([f"{op}, fl"] if op == "O" else [])
    return [{"name": "r_port_1", "type": "read", "bandwidth_min": 8, "bandwidth_max": bits, "allocation": rd},
            {"name": "w_port_1", "type": "write", "bandwidth_min": 8, "bandwidth_max": bits, "allocation": wr}]


def _rw(bits: int, ops: list[str]) -> list[dict]:
    alloc = [f"{o}, {d}" for o in ops for d in (("tl", "fh", "th", "fl") if o == "O" else ("tl", "fh"))]
    return [{"name": "rw_port_1", "type": "read_write", "bandwidth_min": 8, "bandwidth_max": bits,
             "allocation": alloc}]


SHARED_REGISTER = {"name": "shared_register", "memories": {
    "reg": {"size": 64, "r_cost": 0.5, "w_cost": 1.0, "area": 0, "latency": 1, "operands": ["I2", "O"],
            "ports": [{"name": "r_port_1", "type": "read", "bandwidth_min": 8, "bandwidth_max": 16,
                       "allocation": ["I2, tl", "O, tl", "O, th"]},
                      {"name": "w_port_1", "type": "write", "bandwidth_min": 8, "bandwidth_max": 16,
                       "allocation": ["I2, fh", "O, fh", "O, fl"]}], "served_dimensions": []},
    "buf": {"size": 8192, "r_cost": 10.0, "w_cost": 20.0, "area": 0, "latency": 1, "operands": ["I1", "O"],
            "ports": _rw(64, ["I1", "O"]), "served_dimensions": ["D1", "D2"]},
    "dram": {"size": 10**10, "r_cost": 100.0, "w_cost": 100.0, "area": 0, "latency": 1, "operands": ["I1", "I2", "O"],
             "ports": _rw(64, ["I1", "I2", "O"]), "served_dimensions": ["D1", "D2"]},
}, "operational_array": {"unit_energy": 0.5, "unit_area": 1, "dimensions": ["D1", "D2"], "sizes": [4, 2]}}

TOY = {"name": "toy", "memories": {
    "reg_w": {"size": 16, "r_cost": 1.0, "w_cost": 2.0, "area": 0, "latency": 1, "operands": ["I2"],
              "ports": _ports("I2", 8), "served_dimensions": ["D2"]},
    "reg_o": {"size": 32, "r_cost": 0.4, "w_cost": 0.8, "area": 0, "latency": 1, "operands": ["O"],
              "ports": _ports("O", 16), "served_dimensions": []},
    "buf": {"size": 8192, "r_cost": 10.0, "w_cost": 20.0, "area": 0, "latency": 1, "operands": ["I1", "O"],
            "ports": _rw(64, ["I1", "O"]), "served_dimensions": ["D1", "D2"]},
    "dram": {"size": 10**10, "r_cost": 100.0, "w_cost": 100.0, "area": 0, "latency": 1, "operands": ["I1", "I2", "O"],
             "ports": _rw(64, ["I1", "I2", "O"]), "served_dimensions": ["D1", "D2"]},
}, "operational_array": {"unit_energy": 0.5, "unit_area": 1, "dimensions": ["D1", "D2"], "sizes": [4, 2]}}

WORKLOAD = [{"id": 0, "name": "conv", "operator_type": "Conv",
             "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
             "dimension_relations": ["ix=1*ox+1*fx", "iy=1*oy+1*fy"],
             "loop_dims": ["B", "K", "C", "OY", "OX", "FY", "FX"], "loop_sizes": [1, 16, 8, 4, 6, 1, 1],
             "operand_precision": {"W": 8, "I": 8, "O": 8, "O_final": 8}, "operand_source": {"W": 0, "I": 0}}]

MAPPING = [{"name": "default", "spatial_mapping": {"D1": ["K, 4"], "D2": ["OY, 2"]},
            "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"}}]


def _loops(levels) -> list[list[list]]:
    return [[[str(d), int(f)] for d, f in level] for level in levels]


def _run(accelerator: dict, mapping_type: str) -> dict:
    from zigzag.api import get_hardware_performance_zigzag
    from zigzag.cost_model.cost_model import CostModelEvaluation
    from zigzag.hardware.architecture.memory_port import DataDirection
    from zigzag.mapping.data_movement import DataMoveAttr

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for name, data in (("accelerator", accelerator), ("workload", WORKLOAD), ("mapping", MAPPING)):
            (t / f"{name}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        _, _, cmes = get_hardware_performance_zigzag(str(t / "workload.yaml"), str(t / "accelerator.yaml"),
                                                     str(t / "mapping.yaml"), opt="energy", dump_folder=str(t / "out"),
                                                     temporal_mapping_type=mapping_type, loma_show_progress_bar=False)
        cme = next(c for c, _ in cmes[0][1] if isinstance(c, CostModelEvaluation))
        written = json.loads((t / "out" / "conv_complete.json").read_text())
    moves = {}
    for op in cme.layer.layer_operands:
        moves[str(op)] = [{str(d): float(cme.mapping.unit_mem_data_movement[op][lv].get_attribute(
            DataMoveAttr.DATA_ELEM_MOVE_COUNT).get(d)) for d in DataDirection} for lv in range(cme.mapping.mem_level[op])]
    return {
        "temporal_mapping_type": mapping_type,
        "temporal_mapping": {str(op): _loops(lv) for op, lv in cme.temporal_mapping.mapping_dic_origin.items()},
        "temporal_mapping_stationary": written["inputs"]["temporal_mapping"],
        "spatial_mapping": {str(d): [f"{k}, {int(f)}" for k, f in m.get_data().items()]
                            for d, m in cme.layer.spatial_mapping.data.items()},
        "zigzag": {"energy_total": float(cme.energy_total), "ideal_temporal_cycle": float(cme.ideal_temporal_cycle),
                   "access_same_data_considered_as_no_access": bool(cme.access_same_data_considered_as_no_access),
                   "elem_moves": moves},
        "accelerator": accelerator, "workload": WORKLOAD, "mapping": MAPPING,
    }


def main() -> int:
    logging.disable(logging.CRITICAL)
    doc = {"shared_register": _run(SHARED_REGISTER, "even"), "toy": _run(TOY, "uneven")}
    sys.stdout.write(f"# Written by ZigZag {version('zigzag-dse')} (zigzag-dse): its LOMA search, memory allocation\n"
                     "# and cost model (zigzag.api.get_hardware_performance_zigzag, opt='energy') chose and evaluated\n"
                     "# these mappings; see make_loma_mapping.py beside this file. Command (from the repository root):\n"
                     f"#   {COMMAND}\n")
    sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=110))
    return 0


if __name__ == "__main__":
    sys.exit(main())
