"""A tiny co-design evaluator that returns the per-layer breakdown the report shows.

It follows the schema of ``info["breakdown"]`` documented in :mod:`experiments.report`
(the one the nested co-design evaluator returns): per-layer figures are for one instance
of a layer, ``repeat`` says how many the network has. The numbers are made up but
consistent: network energy is the sum of ``energy_pj * repeat`` and equals the sum over
levels, so a test can check what the report adds up.
"""

from __future__ import annotations

import math

from evaluators.base import Evaluation, Infeasible

LEVELS = ["RF", "GLB", "DRAM"]
LAYERS = [("conv1", 1, 118_013_952), ("conv2_x", 3, 115_605_504), ("fc", 1, 2_048_000)]
E_PJ = {"MAC": 1.0, "RF": 0.5, "GLB": 6.0, "DRAM": 200.0}


def layer_figures(rows: int, glb_kib: int, dataflow: str, macs: int) -> dict:
    pes = rows * rows
    reuse = {"OS": 8.0, "WS": 6.0, "IS": 4.0}[dataflow]
    glb_hits = min(1.0, glb_kib / 256.0)
    by_level = {
        "MAC": macs * E_PJ["MAC"],
        "RF": macs * 3 * E_PJ["RF"],
        "GLB": macs / reuse * E_PJ["GLB"],
        "DRAM": macs / reuse / 16 * (1.5 - glb_hits) * E_PJ["DRAM"],
    }
    util = min(1.0, 0.35 + 0.6 * (64 / max(pes / 4, 64)) * (1 if dataflow == "OS" else 0.8))
    latency = macs / (pes * util) + 50 * rows
    return {"energy_by_level_pj": by_level, "utilization": util, "latency_cycles": latency,
            "energy_pj": sum(by_level.values())}


def evaluate(point: dict) -> Evaluation:
    """``rows`` (PE array side), ``glb_kib``, ``dataflow`` -> energy, latency, EDP, area,
    with ``info["breakdown"]``. Arrays of 128 rows with a 16 KiB GLB are INFEASIBLE."""
    rows, glb, flow = int(point["rows"]), int(point["glb_kib"]), str(point["dataflow"])
    if rows >= 128 and glb <= 16:
        raise Infeasible(f"GLB of {glb} KiB cannot feed a {rows}x{rows} array")
    layers = []
    energy = latency = 0.0
    for name, repeat, macs in LAYERS:
        f = layer_figures(rows, glb, flow, macs)
        layers.append({"name": name, "repeat": repeat, "macs": macs, **f})
        energy += f["energy_pj"] * repeat
        latency += f["latency_cycles"] * repeat
    energy_uj, latency_ms = energy * 1e-6, latency / 1e6
    area = rows * rows * 0.002 + glb * 0.006
    return Evaluation(
        metrics={"energy_uj": energy_uj, "latency_ms": latency_ms,
                 "edp_uj_ms": energy_uj * latency_ms, "area_mm2": area},
        info={"breakdown": {"levels": LEVELS, "layers": layers},
              "mapper": "made-up", "nan_is_fine": math.nan},
    )


def evaluate_plain(point: dict) -> dict:
    """The same metrics without any ``info`` (an evaluator that gives no breakdown)."""
    return dict(evaluate(point).metrics)
