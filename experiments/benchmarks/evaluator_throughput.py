"""How many mappings per second the analytical cost model scores, on one core.

Workload: ResNet-50's 3x3 convolution of stage 2 (K=C=64, P=Q=56, R=S=3). Accelerators:
Eyeriss v1 (RF -> GLB -> DRAM, 12 x 14 PEs) and a 32 x 32 weight-stationary systolic
array. Mappings: legal random mappings from the mapping space (prime factors placed on
loop slots, random loop orders), generated once; timing covers scoring only
(access counts, energy, latency, validity for the whole batch).

For each batch size (1, 1,000, 100,000) the batch is scored repeatedly for at least
``--seconds`` and the rate printed. With ``.venv-zigzag`` present (``make zigzag-env``)
the run also times ZigZag's cost model on the same layer and an Eyeriss-like
accelerator and prints the ratio measured in the same run.

Run: ``python -m experiments.benchmarks.evaluator_throughput [--seconds 3]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from accelerators import SystolicArray, eyeriss_v1  # noqa: E402
from evaluators.loopnest import evaluate_batch, layer_constants  # noqa: E402
from mappers.sampling import random_mappings  # noqa: E402
from mappers.workloads import conv2d  # noqa: E402

LAYER = conv2d("resnet50.layer1.0.conv2", K=64, C=64, P=56, Q=56, R=3, S=3)
BATCHES = (1, 1_000, 100_000)
TARGET = 300_000  # mappings/s on one core (issue #4)


def rate(layer, arch, pool, batch: int, seconds: float) -> float:
    consts = layer_constants(layer)
    b = pool.take(np.arange(batch) % len(pool))
    evaluate_batch(layer, arch, b, consts=consts)  # warm-up
    n, t0 = 0, time.perf_counter()
    while True:
        evaluate_batch(layer, arch, b, consts=consts)
        n += 1
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n * batch / dt


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="minimum timing per batch size")
    ap.add_argument("--pool", type=int, default=100_000, help="distinct mappings generated")
    ap.add_argument("--no-zigzag", action="store_true", help="skip the ZigZag comparison")
    args = ap.parse_args(argv)
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        pinned = True
    except (AttributeError, OSError):
        pinned = False
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}, pinned to one core: {pinned}")
    print(f"# layer {LAYER.name}: {LAYER.dims}, {LAYER.macs:,} MACs")
    out: dict = {"layer": LAYER.name, "rates": {}}
    archs = {
        "eyeriss_v1": eyeriss_v1().to_arch(),
        "systolic_32x32_ws": SystolicArray(rows=32, cols=32, dataflow="WS", ifmap_sram_kib=256,
                                           filter_sram_kib=256, ofmap_sram_kib=128,
                                           dram_bw_words_per_cycle=16).to_arch(),
    }
    for name, arch in archs.items():
        t = time.perf_counter()
        pool = random_mappings(LAYER, arch, args.pool, seed=0)
        gen = time.perf_counter() - t
        print(f"\n{name}: {len(pool):,} legal mappings generated in {gen:.2f} s "
              f"({len(pool) / gen:,.0f}/s)")
        for b in BATCHES:
            r = rate(LAYER, arch, pool, b, args.seconds)
            out["rates"][f"{name}/{b}"] = r
            print(f"  batch {b:>7,}: {r:>12,.0f} mappings/s")
    best = max(out["rates"][f"{n}/{BATCHES[-1]}"] for n in archs)
    print(f"\ntarget >= {TARGET:,}/s at large batch: {'met' if best >= TARGET else 'NOT met'} "
          f"(best {best:,.0f}/s)")
    if not args.no_zigzag:
        from experiments.benchmarks.zigzag_compare import zigzag_rate

        zz = zigzag_rate()
        if zz is None:
            print("ZigZag: not measured (.venv-zigzag absent or failed; `make zigzag-env`)")
        else:
            ours = out["rates"][f"eyeriss_v1/{BATCHES[-1]}"]
            out["zigzag"] = zz
            zr = zz["cost_model_evals_per_s"]
            print(f"ZigZag {zz.get('zigzag_version')}: {zr:,.1f} cost-model evaluations/s "
                  f"({zz.get('what')}); ours on Eyeriss v1 at batch {BATCHES[-1]:,}: "
                  f"{ours:,.0f}/s -> ratio {ours / zr:,.0f}x")
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
