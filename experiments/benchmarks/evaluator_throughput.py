"""How many mappings per second the analytical cost model scores, on one core.

Workload: ResNet-50's 3x3 convolution of stage 2 (K=C=64, P=Q=56, R=S=3). Accelerators:
Eyeriss v1 (RF -> GLB -> DRAM, 12 x 14 PEs) and a 32 x 32 weight-stationary systolic
array. Mappings: legal random mappings from the mapping space (prime factors placed on
loop slots, random loop orders), generated once; timing covers scoring only
(access counts, energy, latency, validity for the whole batch).

Both implementations of :func:`evaluators.loopnest.evaluate_batch` are timed side by side
in the same run: the compiled kernel (:mod:`evaluators.loopnest.kernel`, numba; the
default; batches of :data:`evaluators.loopnest.dispatch.SHAPED_MIN_ROWS` rows or more run
the kernel compiled for their shape, here batch 100,000) and the numpy code
(``kernel=False``), at batch 1, 1,000 and 100,000, in the default accounting; beside them
the kernel in Timeloop's accounting (``accounting="timeloop"``, path ``kernel/tl``) and the
generic kernel alone (path ``kernel/gen``: no shaped kernel at any batch size). Each (batch, path) is scored repeatedly
for at least ``--seconds``, ``--repeats`` times, alternating the paths; the report gives
the range over the repeats of the wall-clock rate, of the rate per CPU-second of this
process (less sensitive to other jobs on the machine) and of the kernel/numpy ratio of
each repeat. The load average is printed before
and after. ``--cold-compile`` also times, in fresh processes, the kernel's first calls with
an empty numba cache (compilation) and with the cache written (loading it), the generic
kernel's and then the shaped one's.

With ``.venv-zigzag`` present (``make zigzag-env``) the run also times ZigZag's cost model
on the same layer and an Eyeriss-like accelerator and prints the ratio measured in the
same run.

Run: ``python -m experiments.benchmarks.evaluator_throughput [--seconds 2] [--repeats 3]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from accelerators import SystolicArray, eyeriss_v1  # noqa: E402
from evaluators.loopnest import dispatch, evaluate_batch, kernel_available, layer_constants  # noqa: E402
from mappers.sampling import random_mappings  # noqa: E402
from mappers.workloads import conv2d  # noqa: E402

LAYER = conv2d("resnet50.layer1.0.conv2", K=64, C=64, P=56, Q=56, R=3, S=3)
BATCHES = (1, 1_000, 100_000)
TARGET = 2_000_000  # mappings/s on one core at batch 100,000, default accounting (issue 41, item 6)
PATHS = {"kernel": (True, None, True), "numpy": (False, None, True), "kernel/tl": (True, "timeloop", True),
         "kernel/gen": (True, None, False)}
"""path name -> (``kernel=``, ``accounting=`` of :func:`evaluate_batch`, whether large batches
may run the kernel compiled for their shape: ``kernel/gen`` is the generic kernel alone,
the kernel before shapes, for comparison in the same run)."""

# a fresh interpreter: import the model, score a few mappings and bound them (the generic
# kernel), then score a batch large enough for the kernel compiled for its shape; print
# the seconds each first call took (wall clock, CPU)
_FIRST_CALL = """
import time
from evaluators.loopnest import LOOPNEST, evaluate_batch, kernel_available
from evaluators.loopnest.dispatch import SHAPED_MIN_ROWS
from accelerators import eyeriss_v1
from mappers.sampling import random_mappings
from mappers.workloads import conv2d
layer = conv2d("l", K=64, C=64, P=56, Q=56, R=3, S=3)
arch = eyeriss_v1().to_arch()
batch = random_mappings(layer, arch, 4, seed=0)
large = random_mappings(layer, arch, SHAPED_MIN_ROWS, seed=0)
assert kernel_available()
t1, c1 = time.perf_counter(), time.process_time()
evaluate_batch(layer, arch, batch)
LOOPNEST.lower_bound(layer, arch, batch, 1)
t2, c2 = time.perf_counter(), time.process_time()
evaluate_batch(layer, arch, large)
print(t2 - t1, c2 - c1, time.perf_counter() - t2, time.process_time() - c2)
"""


def _score(layer, arch, batch, path: tuple[bool, str | None, bool], consts) -> None:
    kernel, accounting, shaped = path
    if shaped:
        evaluate_batch(layer, arch, batch, consts=consts, kernel=kernel, accounting=accounting)
        return
    least = dispatch.SHAPED_MIN_ROWS
    dispatch.SHAPED_MIN_ROWS = sys.maxsize                # the generic kernel only
    try:
        evaluate_batch(layer, arch, batch, consts=consts, kernel=kernel, accounting=accounting)
    finally:
        dispatch.SHAPED_MIN_ROWS = least


def time_path(layer, arch, batch, path: tuple[bool, str | None, bool], seconds: float,
              consts) -> tuple[float, float]:
    """(wall-clock rate, rate per CPU-second) of scoring ``batch`` for ``seconds`` on
    ``path`` (an entry of :data:`PATHS`)."""
    n, w0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        _score(layer, arch, batch, path, consts)
        n += 1
        wall = time.perf_counter() - w0
        if wall >= seconds:
            cpu = max(time.process_time() - c0, 1e-9)
            return n * len(batch) / wall, n * len(batch) / cpu


def cold_compile() -> dict[str, float]:
    """Seconds (wall clock and CPU) of the kernel's first calls in a fresh process: with
    an empty numba cache (compiling) and then with the cache that run wrote (loading);
    ``*_s``: the generic kernel (a few mappings scored and bounded), ``shaped_*_s``: then
    the first batch of :data:`evaluators.loopnest.dispatch.SHAPED_MIN_ROWS` rows (the kernel
    compiled for the benchmark's shape, :func:`evaluators.loopnest.kernel.shaped_rows`;
    includes scoring those rows, about 5 ms)."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for what in ("compile", "cached_load"):
            proc = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True,
                                  text=True, check=True)
            wall, cpu, s_wall, s_cpu = proc.stdout.strip().splitlines()[-1].split()
            out[f"{what}_s"], out[f"{what}_cpu_s"] = float(wall), float(cpu)
            out[f"shaped_{what}_s"], out[f"shaped_{what}_cpu_s"] = float(s_wall), float(s_cpu)
    return out


def _span(values: list[float]) -> str:
    return f"{min(values):>11,.0f} - {max(values):>11,.0f}"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="minimum timing per (batch, path, repeat)")
    ap.add_argument("--repeats", type=int, default=3, help="timings per (batch, path)")
    ap.add_argument("--pool", type=int, default=100_000, help="distinct mappings generated")
    ap.add_argument("--cold-compile", action="store_true", help="time the kernel's compilation too")
    ap.add_argument("--no-zigzag", action="store_true", help="skip the ZigZag comparison")
    args = ap.parse_args(argv)
    if not kernel_available():
        raise SystemExit("numba is not importable: the compiled kernel cannot be timed")
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        pinned = True
    except (AttributeError, OSError):
        pinned = False
    load0 = os.getloadavg()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python "
          f"{platform.python_version()}, numpy {np.__version__}, pinned to one core: {pinned}")
    print(f"# load average (1, 5, 15 min) before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    print(f"# layer {LAYER.name}: {LAYER.dims}, {LAYER.macs:,} MACs")
    out: dict = {"layer": LAYER.name, "load_before": load0, "rates": {}}
    if args.cold_compile:
        cc = cold_compile()
        out["kernel_first_call"] = cc
        print(f"# kernel's first calls in a fresh process: {cc['compile_s']:.1f} s ({cc['compile_cpu_s']:.1f} "
              f"CPU-s) with an empty numba cache (compiling), {cc['cached_load_s']:.2f} s "
              f"({cc['cached_load_cpu_s']:.2f} CPU-s) with the cache written; then the kernel shaped for "
              f"large batches: {cc['shaped_compile_s']:.1f} s ({cc['shaped_compile_cpu_s']:.1f} CPU-s) compiling, "
              f"{cc['shaped_cached_load_s']:.2f} s ({cc['shaped_cached_load_cpu_s']:.2f} CPU-s) from the cache")
    archs = {
        "eyeriss_v1": eyeriss_v1().to_arch(),
        "systolic_32x32_ws": SystolicArray(rows=32, cols=32, dataflow="WS", ifmap_sram_kib=256,
                                           filter_sram_kib=256, ofmap_sram_kib=128,
                                           dram_bw_words_per_cycle=16).to_arch(),
    }
    consts = layer_constants(LAYER)
    for name, arch in archs.items():
        t = time.perf_counter()
        pool = random_mappings(LAYER, arch, args.pool, seed=0)
        gen = time.perf_counter() - t
        print(f"\n{name}: {len(pool):,} legal mappings generated in {gen:.2f} s "
              f"({len(pool) / gen:,.0f}/s)")
        print(f"  {'batch':>7}  {'path':9}  {'mappings/s (wall clock)':>25}  {'per CPU-second':>25}  "
              f"{'kernel/numpy':>13}")
        for b in BATCHES:
            batch = pool.take(np.arange(b) % len(pool))
            for path in PATHS.values():
                _score(LAYER, arch, batch, path, consts)  # warm-up
            runs: dict[str, list[tuple[float, float]]] = {p: [] for p in PATHS}
            for _ in range(args.repeats):
                for p, path in PATHS.items():
                    runs[p].append(time_path(LAYER, arch, batch, path, args.seconds, consts))
            ratios = [k[0] / n[0] for k, n in zip(runs["kernel"], runs["numpy"])]
            for p in PATHS:
                wall = [r[0] for r in runs[p]]
                cpu = [r[1] for r in runs[p]]
                out["rates"][f"{name}/{b}/{p}"] = {"wall": wall, "cpu": cpu}
                ratio = f"{min(ratios):5.1f} - {max(ratios):4.1f}x" if p == "kernel" else ""
                print(f"  {b:>7,}  {p:9}  {_span(wall)}  {_span(cpu)}  {ratio:>13}")
            out["rates"][f"{name}/{b}/ratio"] = ratios
    big = [min(out["rates"][f"{n}/{BATCHES[-1]}/kernel"]["wall"]) for n in archs]
    big_cpu = [min(out["rates"][f"{n}/{BATCHES[-1]}/kernel"]["cpu"]) for n in archs]
    tl_cpu = [min(out["rates"][f"{n}/{BATCHES[-1]}/kernel/tl"]["cpu"]) for n in archs]
    gen_cpu = [min(out["rates"][f"{n}/{BATCHES[-1]}/kernel/gen"]["cpu"]) for n in archs]
    print(f"\ntarget >= {TARGET:,}/s at batch {BATCHES[-1]:,} (kernel, default accounting, slowest repeat "
          f"of each accelerator): wall clock {'met' if min(big) >= TARGET else 'NOT met'} "
          f"({min(big):,.0f}/s), per CPU-second {'met' if min(big_cpu) >= TARGET else 'NOT met'} "
          f"({min(big_cpu):,.0f}/s); Timeloop accounting, per CPU-second: {min(tl_cpu):,.0f}/s; the generic "
          f"kernel alone, per CPU-second: {min(gen_cpu):,.0f}/s")
    load1 = os.getloadavg()
    out["load_after"] = load1
    print(f"# load average (1, 5, 15 min) after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if not args.no_zigzag:
        from experiments.benchmarks.zigzag_compare import zigzag_rate

        zz = zigzag_rate()
        if zz is None:
            print("ZigZag: not measured (.venv-zigzag absent or failed; `make zigzag-env`)")
        else:
            ours = max(out["rates"][f"eyeriss_v1/{BATCHES[-1]}/kernel"]["wall"])
            out["zigzag"] = zz
            zr = zz["cost_model_evals_per_s"]
            print(f"ZigZag {zz.get('zigzag_version')}: {zr:,.1f} cost-model evaluations/s "
                  f"({zz.get('what')}); ours on Eyeriss v1 at batch {BATCHES[-1]:,}: "
                  f"{ours:,.0f}/s -> ratio {ours / zr:,.0f}x (wall clock)")
            zc = zz.get("cost_model_evals_per_cpu_s")
            if zc:
                ours_cpu = max(out["rates"][f"eyeriss_v1/{BATCHES[-1]}/kernel"]["cpu"])
                print(f"ZigZag per CPU-second: {zc:,.1f}; ours {ours_cpu:,.0f} -> ratio {ours_cpu / zc:,.0f}x")
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
