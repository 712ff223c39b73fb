"""Throughput of ZigZag's analytical cost model, on one core (runs INSIDE ``.venv-zigzag``).

This script is the ZigZag half of the cost-model throughput comparison: it imports only
ZigZag (``zigzag-dse==3.9.1``, ``make zigzag-env``) and the standard library -- never
coexplore, whose pins ZigZag's environment does not share. It is run as a subprocess by
:func:`experiments.benchmarks.zigzag_compare.zigzag_rate`, or by hand::

    .venv-zigzag/bin/python experiments/benchmarks/zigzag_costmodel.py [--seconds 5]
        [--loma-seconds 5] [--max-mappings 256] [--lpf-limit 6]

What it builds (through ZigZag's own YAML validators/factories, fed with dicts):

* an Eyeriss-like accelerator: a 12 x 14 array of 16-bit MACs (ZigZag dimensions D1 = 14,
  D2 = 12), per-PE register files for weights / inputs / partial sums of 224 / 12 / 24
  16-bit words, a 108 KB global buffer holding inputs and partial sums (as in Eyeriss,
  weights go from DRAM straight to the PE register files), and DRAM. Energies are Eyeriss's
  normalized costs (MAC = RF access = 1, GLB = 6, DRAM = 200 per 16-bit word), scaled by the
  port width because ZigZag charges a cost per port-wide access;
* ResNet-50's ``res2a_branch2b`` layer: a 3x3 convolution with K = C = 64, OX = OY = 56,
  stride 1, padding 1, batch 1;
* a fixed row-stationary-like spatial mapping: OY (14) on D1, FY (3) x K (4) on D2.

What it times (single core: ``main`` pins the process to CPU 0 and BLAS/OpenMP to one
thread before anything imports numpy):

(b) first, ``loma_evals_per_s``: complete runs of ZigZag's
    ``TemporalMappingGeneratorStage`` (the LOMA engine: loop-ordering permutations + memory
    allocation, ``loma_lpf_limit = 6`` as in ZigZag's API) chained with its
    ``CostModelStage``, repeated until at least ``--loma-seconds`` have passed (at least one
    search): cost-model evaluations yielded per second. Orderings that LOMA rejects because
    they do not fit the memories cost time but yield nothing. The valid temporal mappings of
    the first search are kept (not their CMEs: keeping hundreds of CMEs alive slows
    everything down through garbage collection).
(a) then ``cost_model_evals_per_s``: constructing
    ``zigzag.cost_model.cost_model.CostModelEvaluation`` -- whose constructor builds the two
    ``Mapping`` objects and runs the whole cost model (memory utilization, word accesses,
    energy, latency) -- on a fixed set of those pre-generated valid temporal mappings
    (at most ``--max-mappings``, evenly spread over the search order), round-robin, until at
    least ``--seconds`` have passed. Nothing else is inside the timed loop.

Parsing the accelerator and the layer, and the spatial-mapping conversion, happen once,
outside both timings. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import logging
import os
import statistics
import sys
import time
from typing import Any

# Nothing at module level imports numpy or zigzag: main() first restricts the process to one
# core and one BLAS/OpenMP thread, then the functions below import zigzag (and numpy).
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def single_core() -> list[int] | None:
    """Pin this process to CPU 0 (or the lowest CPU it may use) and every thread pool to one
    thread; must run before numpy is imported. Returns the CPUs now allowed (None off Linux)."""
    if "numpy" in sys.modules:
        raise RuntimeError("single_core() must run before numpy is imported")
    for var in THREAD_VARS:
        os.environ[var] = "1"
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {0} if 0 in allowed else {min(allowed)})
    return sorted(os.sched_getaffinity(0))


WORD_BITS = 16

#: Eyeriss's normalized energy per 16-bit access (MAC = 1).
ENERGY_PER_WORD = {"rf": 1.0, "glb": 6.0, "dram": 200.0}
MAC_ENERGY = 1.0

RF_WORDS = {"W": 224, "I": 12, "O": 24}
GLB_BYTES = 108 * 1024
GLB_PORT_BITS = 64
DRAM_PORT_BITS = 64

#: ResNet-50 res2a_branch2b (batch 1).
LAYER = {"K": 64, "C": 64, "OX": 56, "OY": 56, "FX": 3, "FY": 3, "stride": 1, "padding": 1}


def _port(name: str, kind: str, bits: int, allocation: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "type": kind,
        "bandwidth_min": bits,
        "bandwidth_max": bits,
        "allocation": allocation,
    }


def _rf(operand: str, words: int, reads: list[str], writes: list[str]) -> dict[str, Any]:
    """A per-PE register file of ``words`` 16-bit words for one operand, 1 word per cycle."""
    cost = ENERGY_PER_WORD["rf"]
    return {
        "size": words * WORD_BITS,
        "r_cost": cost,
        "w_cost": cost,
        "area": 0.0,
        "latency": 1,
        "operands": [operand],
        "ports": [
            _port("r_port_1", "read", WORD_BITS, reads),
            _port("w_port_1", "write", WORD_BITS, writes),
        ],
        "served_dimensions": [],  # one instance per PE
    }


def accelerator_data() -> dict[str, Any]:
    """The Eyeriss-like accelerator, in ZigZag's accelerator-YAML schema (memories low to high)."""
    glb_cost = ENERGY_PER_WORD["glb"] * GLB_PORT_BITS / WORD_BITS
    dram_cost = ENERGY_PER_WORD["dram"] * DRAM_PORT_BITS / WORD_BITS
    return {
        "name": "eyeriss_like_12x14",
        "memories": {
            # ZigZag's operand names: I1 = inputs, I2 = weights, O = outputs (linked below)
            "rf_w": _rf("I2", RF_WORDS["W"], ["I2, tl"], ["I2, fh"]),
            "rf_i": _rf("I1", RF_WORDS["I"], ["I1, tl"], ["I1, fh"]),
            "rf_o": _rf("O", RF_WORDS["O"], ["O, tl", "O, th"], ["O, fh", "O, fl"]),
            "glb": {
                "size": GLB_BYTES * 8,
                "r_cost": glb_cost,
                "w_cost": glb_cost,
                "area": 0.0,
                "latency": 1,
                "operands": ["I1", "O"],
                "ports": [
                    _port("r_port_1", "read", GLB_PORT_BITS, ["I1, tl", "O, tl", "O, th"]),
                    _port("w_port_1", "write", GLB_PORT_BITS, ["I1, fh", "O, fh", "O, fl"]),
                ],
                "served_dimensions": ["D1", "D2"],
            },
            "dram": {
                "size": 10**10,
                "r_cost": dram_cost,
                "w_cost": dram_cost,
                "area": 0.0,
                "latency": 1,
                "operands": ["I1", "I2", "O"],
                "ports": [
                    _port(
                        "rw_port_1",
                        "read_write",
                        DRAM_PORT_BITS,
                        [
                            "I1, fh",
                            "I1, tl",
                            "I2, fh",
                            "I2, tl",
                            "O, fh",
                            "O, tl",
                            "O, fl",
                            "O, th",
                        ],
                    )
                ],
                "served_dimensions": ["D1", "D2"],
            },
        },
        "operational_array": {
            "unit_energy": MAC_ENERGY,
            "unit_area": 1.0,
            "dimensions": ["D1", "D2"],
            "sizes": [14, 12],
        },
    }


def workload_data() -> list[dict[str, Any]]:
    """ResNet-50's 3x3 res2a_branch2b convolution, in ZigZag's workload-YAML schema."""
    s, p = LAYER["stride"], LAYER["padding"]
    return [
        {
            "id": 0,
            "name": "res2a_branch2b",
            "operator_type": "Conv",
            "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
            "dimension_relations": [f"ix={s}*ox+1*fx", f"iy={s}*oy+1*fy"],
            "loop_dims": ["B", "K", "C", "OY", "OX", "FY", "FX"],
            "loop_sizes": [
                1,
                LAYER["K"],
                LAYER["C"],
                LAYER["OY"],
                LAYER["OX"],
                LAYER["FY"],
                LAYER["FX"],
            ],
            "operand_precision": {
                "W": WORD_BITS,
                "I": WORD_BITS,
                "O": WORD_BITS,
                "O_final": WORD_BITS,
            },
            # both operands are constants of this (first and only) layer
            "operand_source": {"W": 0, "I": 0},
            "pr_loop_dims": ["IX", "IY"],
            "pr_loop_sizes": [
                (LAYER["OX"] - 1) * s + LAYER["FX"],
                (LAYER["OY"] - 1) * s + LAYER["FY"],
            ],
            "padding": [[p, p], [p, p]],
        }
    ]


def mapping_data() -> list[dict[str, Any]]:
    """Row-stationary-like spatial mapping: output rows on the 14 columns, filter rows x
    4 filters on the 12 rows. No temporal ordering: LOMA generates those."""
    # "default" is required by the validator, "Conv" is what the layer looks up first
    return [
        {
            "name": name,
            "spatial_mapping": {"D1": ["OY, 14"], "D2": ["FY, 3", "K, 4"]},
            "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
        }
        for name in ("default", "Conv")
    ]


def build() -> dict[str, Any]:
    """Parse accelerator + layer with ZigZag's validators/factories and convert the spatial
    mapping with its own stage; returns the inputs that a cost-model evaluation needs."""
    from zigzag.parser.accelerator_factory import AcceleratorFactory
    from zigzag.parser.accelerator_validator import AcceleratorValidator
    from zigzag.parser.mapping_validator import MappingValidator
    from zigzag.parser.workload_factory import WorkloadFactory
    from zigzag.parser.workload_validator import WorkloadValidator
    from zigzag.stages.mapping.spatial_mapping_generation import SpatialMappingGeneratorStage
    from zigzag.stages.stage import Stage
    from zigzag.workload.layer_node import LayerNode

    acc_validator = AcceleratorValidator(accelerator_data())
    acc_data = acc_validator.normalized_data
    if not acc_validator.validate():
        raise ValueError(f"invalid accelerator: {acc_validator.validator.errors}")
    accelerator = AcceleratorFactory(acc_data).create()

    wl_validator = WorkloadValidator(workload_data())
    wl_data = wl_validator.normalized_data
    map_validator = MappingValidator(mapping_data())
    map_data = map_validator.normalized_data
    if not wl_validator.validate() or not map_validator.validate():
        raise ValueError("invalid workload or mapping")
    workload = WorkloadFactory(wl_data, map_data).create()
    layer = next(n for n in workload.topological_sort() if isinstance(n, LayerNode))

    captured: dict[str, Any] = {}

    class _Capture(Stage):
        """Leaf stage that keeps what the spatial-mapping stages hand down, evaluates nothing."""

        def __init__(self, list_of_callables: list[Any], **kwargs: Any):
            super().__init__(list_of_callables, **kwargs)
            captured.update(kwargs)

        def run(self):  # a generator that yields nothing
            return
            yield

        def is_leaf(self) -> bool:
            return True

    stage = SpatialMappingGeneratorStage(
        [_Capture], accelerator=accelerator, layer=layer, nb_mappings_generated=1
    )
    for _ in stage.run():
        pass
    missing = {"accelerator", "layer", "spatial_mapping", "spatial_mapping_int"} - set(captured)
    if missing:
        raise RuntimeError(f"spatial-mapping stages did not provide {sorted(missing)}")
    return {
        k: captured[k] for k in ("accelerator", "layer", "spatial_mapping", "spatial_mapping_int")
    }


def loma_stage(inputs: dict[str, Any], lpf_limit: int):
    """ZigZag's LOMA temporal-mapping generator chained with its cost-model stage."""
    from zigzag.mapping.temporal_mapping import TemporalMappingType
    from zigzag.stages.evaluation.cost_model_evaluation import CostModelStage
    from zigzag.stages.mapping.temporal_mapping_generator_stage import TemporalMappingGeneratorStage

    return TemporalMappingGeneratorStage(
        [CostModelStage],
        **inputs,
        temporal_mapping_type=TemporalMappingType.UNEVEN,
        loma_lpf_limit=lpf_limit,
        loma_show_progress_bar=False,
        access_same_data_considered_as_no_access=True,
    )


def time_loma(inputs: dict[str, Any], lpf_limit: int, min_seconds: float) -> dict[str, Any]:
    """Run LOMA + CostModelStage to completion, again until >= min_seconds have passed (at
    least once). Returns the valid temporal mappings of the first search, the CMEs yielded,
    the total time and a few statistics of the first search's CMEs. The CMEs themselves are
    not kept: holding hundreds of them slows the search down through garbage collection."""
    tms: list[Any] = []
    latencies: list[float] = []
    energies: list[float] = []
    n = searches = 0
    start = time.perf_counter()
    elapsed = 0.0
    while searches == 0 or elapsed < min_seconds:
        for cme, (tm, _) in loma_stage(inputs, lpf_limit).run():
            n += 1
            if searches == 0:
                tms.append(tm)
                latencies.append(float(cme.latency_total2))
                energies.append(float(cme.energy_total))
        searches += 1
        elapsed = time.perf_counter() - start
    return {
        "mappings": tms,
        "n": n,
        "seconds": elapsed,
        "searches": searches,
        "latencies": latencies,
        "energies": energies,
    }


def time_cost_model(
    inputs: dict[str, Any], mappings: list[Any], min_seconds: float
) -> tuple[int, float, float]:
    """Evaluate ``mappings`` round-robin with ``CostModelEvaluation`` until >= min_seconds
    of wall time; return the count, the wall seconds and the process's CPU seconds."""
    from zigzag.cost_model.cost_model import CostModelEvaluation

    n = 0
    cpu_start = time.process_time()
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < min_seconds:
        CostModelEvaluation(
            **inputs,
            temporal_mapping=mappings[n % len(mappings)],
            access_same_data_considered_as_no_access=True,
        )
        n += 1
        elapsed = time.perf_counter() - start
    return n, elapsed, time.process_time() - cpu_start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="min. time of the cost-model timing"
    )
    parser.add_argument(
        "--loma-seconds",
        type=float,
        default=5.0,
        help="min. time of the LOMA timing (always at least one complete search)",
    )
    parser.add_argument(
        "--max-mappings", type=int, default=256, help="size cap of the fixed mapping set"
    )
    parser.add_argument("--lpf-limit", type=int, default=6, help="LOMA's loop-prime-factor limit")
    args = parser.parse_args(argv)
    cpus = single_core()

    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("zigzag").setLevel(logging.WARNING)

    inputs = build()
    loma = time_loma(inputs, args.lpf_limit, args.loma_seconds)
    tms = loma["mappings"]
    if not tms:
        raise RuntimeError("LOMA produced no valid temporal mapping")
    # a fixed, evenly spread subset when LOMA produced more than the cap
    k = min(len(tms), max(1, args.max_mappings))
    fixed = [tms[i * len(tms) // k] for i in range(k)]
    gc.collect()

    n, seconds, cpu_seconds = time_cost_model(inputs, fixed, args.seconds)

    sm = inputs["spatial_mapping"]
    result = {
        "zigzag_version": importlib.metadata.version("zigzag-dse"),
        "cost_model_evals_per_s": n / seconds,
        "loma_evals_per_s": loma["n"] / loma["seconds"],
        "cost_model_evals_per_cpu_s": n / cpu_seconds,
        "n": n,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "what": (
            "wall time (cost_model_evals_per_s) and process CPU time (cost_model_evals_per_cpu_s) "
            "of constructing zigzag.cost_model.cost_model.CostModelEvaluation (which "
            f"runs the full cost model) on {len(fixed)} fixed LOMA-generated valid temporal "
            "mappings, round-robin, of ResNet-50 res2a_branch2b (3x3, K=C=64, 56x56) on a "
            "12x14 Eyeriss-like accelerator with a fixed spatial mapping, on one core"
        ),
        "n_mappings": len(fixed),
        "loma_n": loma["n"],
        "loma_seconds": loma["seconds"],
        "loma_searches": loma["searches"],
        "loma_what": (
            "CMEs yielded per second by complete runs of TemporalMappingGeneratorStage (LOMA, "
            f"loma_lpf_limit={args.lpf_limit}) chained with CostModelStage, including the "
            "time of orderings rejected by memory allocation"
        ),
        "loma_valid_mappings": len(tms),
        "spatial_mapping": str(getattr(sm, "spatial_loop_dim_size", sm)),
        "median_latency_cycles": statistics.median(loma["latencies"]),
        "min_latency_cycles": min(loma["latencies"]),
        "median_energy": statistics.median(loma["energies"]),
        "cpu_affinity": cpus,
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
