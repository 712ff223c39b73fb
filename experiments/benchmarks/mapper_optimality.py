"""How far the heuristic and random mappers are from the optimum, and what the optimum costs.

For every unique layer of ResNet-50, MobileNetV2, the BERT-base block and the Nature DQN
(:mod:`mappers.zoo`) on Eyeriss v1 (:func:`accelerators.eyeriss_v1`, RF -> GLB -> DRAM,
12 x 14 PEs) and a 32 x 32 weight-stationary systolic array (64 KiB per SRAM partition),
all scored by the same loop-nest cost model (:data:`evaluators.loopnest.LOOPNEST`), the
script prints, per layer and objective (EDP by default):

* **exact** (:class:`mappers.exact.ExactMapper`): the objective, whether it is proven
  optimal (or stopped at ``--time-limit`` with its bound), the lower bound of the root,
  the size of the tiling space, the nodes and leaves it examined and its seconds;
* **heuristic** (:class:`mappers.heuristic.HeuristicMapper`): objective / exact and
  seconds;
* **random** (:class:`mappers.sampling.RandomMapper`): the best of ``--random`` legal
  mappings (200,000 by default) / exact, and seconds;
* the compulsory-traffic bound (:func:`evaluators.loopnest.compulsory.edp_lower_bound`) / exact.

Then per architecture: the median and the largest exact time, how many layers finished
(proven optimal) within the limit, and on how many the heuristic is within 5 % of exact.
Timings are wall seconds and CPU seconds of this process on one core of the machine it
runs on (the script sets the BLAS thread counts to 1 and the mappers run one thread, so
the CPU seconds are the one-core time even when other work shares the machine and
stretches the wall time); the load average is printed with them. The exact mapper's
targets (median at most 1 s per layer, at most 10 s for any) are read on the CPU seconds.

Run: ``python -m experiments.benchmarks.mapper_optimality [--quick] [--json FILE]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from functools import partial  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from accelerators import SystolicArray, eyeriss_v1  # noqa: E402
from evaluators.loopnest import LOOPNEST  # noqa: E402
from evaluators.loopnest.compulsory import (  # noqa: E402
    edp_lower_bound,
    energy_lower_bound_pj,
    latency_lower_bound_cycles,
)
from experiments.benchmarks.jit_warmup import warm_exact_mapper  # noqa: E402
from experiments.proof_scopes import ProofScopes  # noqa: E402
from mappers import zoo  # noqa: E402
from mappers.base import MappingResult  # noqa: E402
from mappers.exact import ExactMapper  # noqa: E402
from mappers.heuristic import HeuristicMapper  # noqa: E402
from mappers.sampling import RandomMapper  # noqa: E402

NETWORKS = ("resnet50", "mobilenet_v2", "bert_base_block", "dqn")
QUICK = {"dqn": None, "resnet50": slice(0, 4)}


def architectures() -> dict[str, Any]:
    return {
        "eyeriss_v1": eyeriss_v1().to_arch(),
        "systolic_32x32_ws": SystolicArray(rows=32, cols=32, dataflow="WS", ifmap_sram_kib=64,
                                           filter_sram_kib=64, ofmap_sram_kib=64).to_arch(),
    }


def network_layers(net: str, quick: bool) -> list[Any]:
    """The layers of ``net`` the run maps (with ``--quick``, :data:`QUICK`'s slice)."""
    layers = zoo.get(net)
    return list(layers[QUICK[net]] if quick and QUICK.get(net) is not None else layers)


def compulsory(objective: str, layer: Any, arch: Any) -> float:
    if objective == "energy":
        return energy_lower_bound_pj(layer, arch)
    if objective == "latency":
        return latency_lower_bound_cycles(layer, arch)
    return edp_lower_bound(layer, arch)


def run_layer(layer: Any, arch: Any, objective: str, n_random: int, time_limit: float,
              check: Callable[[MappingResult], None] | None = None) -> dict[str, Any]:
    """One layer's row (``check``: called with the exact result, e.g. :meth:`ProofScopes.check`)."""
    t, c = time.perf_counter(), time.process_time()
    ex = ExactMapper(time_limit_s=time_limit).map(layer, arch, LOOPNEST, objective)
    t_ex, c_ex = time.perf_counter() - t, time.process_time() - c
    if check is not None:
        check(ex)
    best = ex.objective(objective)
    t = time.perf_counter()
    h = HeuristicMapper().map(layer, arch, LOOPNEST, objective)
    t_h = time.perf_counter() - t
    row: dict[str, Any] = {
        "layer": layer.name, "dims": dict(layer.dims), "repeat": layer.repeat,
        "exact": best, "optimal": ex.optimal, "exact_lower_bound": ex.lower_bound, "exact_s": t_ex,
        "exact_cpu_s": c_ex,
        "space_size": ex.space_size, "nodes": ex.info.get("nodes"), "leaves": ex.info.get("leaves"),
        "exact_evaluated": ex.evaluated,
        "heuristic": h.objective(objective), "heuristic_ratio": h.objective(objective) / best, "heuristic_s": t_h,
        "compulsory_ratio": compulsory(objective, layer, arch) / best,
    }
    if n_random:
        t = time.perf_counter()
        r = RandomMapper(n_random).map(layer, arch, LOOPNEST, objective, seed=0)
        row.update(random=r.objective(objective), random_ratio=r.objective(objective) / best,
                   random_s=time.perf_counter() - t)
    return row


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objective", default="edp", choices=["edp", "energy", "latency"])
    ap.add_argument("--random", type=int, default=200_000, help="random mappings per layer (0: skip)")
    ap.add_argument("--time-limit", type=float, default=60.0, help="exact mapper's limit per layer (s)")
    ap.add_argument("--networks", nargs="+", default=list(NETWORKS))
    ap.add_argument("--archs", nargs="+", default=None)
    ap.add_argument("--quick", action="store_true", help="DQN and ResNet-50's first 4 layers, 20,000 random")
    ap.add_argument("--json", default=None, help="write every row here")
    args = ap.parse_args(argv)
    archs = architectures()
    names = args.archs or list(archs)
    nets = ["dqn", "resnet50"] if args.quick else args.networks
    n_random = 20_000 if args.quick and args.random == 200_000 else args.random
    out: dict[str, Any] = {"objective": args.objective, "time_limit_s": args.time_limit, "random": n_random,
                           "load": os.getloadavg(), "rows": {}}
    for an in names:
        arch = archs[an]
        rows = []
        warm_cpu_s = warm_exact_mapper(arch, (args.objective,))
        out.setdefault("warmup_cpu_s", {})[an] = warm_cpu_s
        scopes = ProofScopes("network")
        for net in nets:
            for layer in network_layers(net, args.quick):
                scopes.announce(net, layer.name, ExactMapper(time_limit_s=args.time_limit), layer, arch, LOOPNEST,
                                args.objective)
        out.setdefault("scopes", {})[an] = scopes.records()
        print(f"\n## {an} ({args.objective}; exact limit {args.time_limit:g} s; load {os.getloadavg()[0]:.1f}; "
              f"numba warm-up {warm_cpu_s:.1f} CPU s, not counted)")
        print("\n".join(scopes.lines()))
        print(f"{'network':14} {'layer':24} {'exact s':>8} {'cpu s':>7} {'opt':>4} {'heur/ex':>8} {'heur s':>7} "
              f"{'rand/ex':>8} {'rand s':>7} {'bound/ex':>9} {'space':>9} {'leaves':>8}")
        for net in nets:
            for layer in network_layers(net, args.quick):
                row = run_layer(layer, arch, args.objective, n_random, args.time_limit,
                                partial(scopes.check, net, layer.name))
                row["network"] = net
                rows.append(row)
                print(f"{net:14} {layer.name:24} {row['exact_s']:8.2f} {row['exact_cpu_s']:7.2f} "
                      f"{'yes' if row['optimal'] else 'NO':>4} "
                      f"{row['heuristic_ratio']:8.3f} {row['heuristic_s']:7.2f} "
                      f"{row.get('random_ratio', float('nan')):8.3f} {row.get('random_s', float('nan')):7.2f} "
                      f"{row['compulsory_ratio']:9.3f} {row['space_size']:9.2e} {row['leaves']:8d}", flush=True)
        ts = np.array([r["exact_s"] for r in rows])
        cs = np.array([r["exact_cpu_s"] for r in rows])
        opt = sum(r["optimal"] for r in rows)
        within = sum(r["heuristic_ratio"] <= 1.05 for r in rows)
        hr = np.array([r["heuristic_ratio"] for r in rows])
        print(f"summary {an}: {len(rows)} layers; exact CPU median {np.median(cs):.2f} s, max {cs.max():.2f} s "
              f"(wall median {np.median(ts):.2f} s, max {ts.max():.2f} s; load {os.getloadavg()[0]:.1f}); "
              f"proven optimal {opt}/{len(rows)}; heuristic within 5 % on {within}/{len(rows)} "
              f"(median {np.median(hr):.3f}, worst {hr.max():.3f})")
        out["rows"][an] = rows
        out.setdefault("load_after", {})[an] = os.getloadavg()[0]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=float)
    return out


if __name__ == "__main__":
    main()
