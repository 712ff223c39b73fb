"""HASCO's hardware search against a third multi-objective method (issue 49, item 5):
NSGA-II beside the reproduction's MOBO and random search, by hypervolume per evaluation.

The searches are those of :mod:`experiments.reproduce.hasco`: every workload x intrinsic
pair of its :data:`~experiments.reproduce.hasco.PAIRS`, seeds 0-9, 25 hardware evaluations
per search, objectives latency_ms / power_mw / area_mm2 (all minimized), HASCO's hardware
space under the same area cap (a known constraint) and the same unknown constraint (the
generator's bank limit: such a design is evaluated, found infeasible and costs one of the
25 evaluations). NSGA-II is Optuna's ``NSGAIISampler`` through the ask/tell adapter
(:mod:`optimizer.optuna_adapter`), run as a :class:`~experiments.study.Study` by
:func:`experiments.reproduce.hasco.run_search` (``optimizer="nsga2"``), so its sampler's
seed derives from the run's seed as MOBO's and random search's do.

**NSGA-II's settings, fixed before any NSGA-II search was run**
(:data:`experiments.reproduce.hasco.NSGA2_OPTIONS`): a population of 5 individuals, so
the 25 evaluations are 5 generations; the first generation is random, the same size as
MOBO's Sobol initial design (Optuna's default of 50 would leave the whole budget inside
its random first generation, i.e. random search). Optuna's other defaults: uniform
crossover (probability 0.9, swapping probability 0.5), mutation probability 1 / the
number of parameters. How the adapter handles constraints: a proposal that violates a
known constraint (the area cap, ``local_kib <= sp_kib``) or repeats an evaluated design is
never evaluated; it is told to the sampler as pruned and asked again (at most 100 times,
then a random legal design). A design found infeasible by the evaluator (the bank limit)
is told as pruned too; NSGA-II leaves pruned trials out of its populations, so such an
evaluation spends budget and teaches it nothing.

**Evaluations.** On the 12 pairs of the GEMM and GEMV intrinsics every legal design is
already scored by the same in-loop evaluator (:mod:`experiments.reproduce.hasco_enumerate`,
deterministic: fixed software seed), so NSGA-II's evaluations there are looked up in those
records (:class:`~experiments.reproduce.hasco_enumerate.EnumeratedHasco`; a test checks
that looked-up values equal fresh evaluations). The 5 CONV and DOT pairs (65,541 legal
designs each) are evaluated live.

Run: ``python -m experiments.reproduce.hasco_dse`` (records under ``--out``/records, one
per pair and seed, kind ``hasco.search`` as the reproduction's own; reused, so a stopped
run resumes), then ``results.json`` and ``table.md`` there.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from experiments.records import RecordStore
from experiments.reproduce import hasco
from experiments.reproduce import hasco_enumerate as en

DEFAULT_OUT = Path("docs/reproduction/results/hasco-dse")
BUDGET = 25
N_INIT = 5
SW_BUDGET = 60
SEEDS = tuple(range(10))
LIVE_ORDER = (("conv2d", "CONV"), ("depthwise", "DOT"), ("resnet50", "CONV"), ("xception", "CONV"),
              ("mobilenet_v2", "CONV"))
"""The pairs evaluated live, in the order they are run (cheapest first: the two kernels
take about half a second a design, the networks about 5 s)."""
LOOKUP_NOTE = ("evaluations looked up in the records of experiments.reproduce.hasco_enumerate "
               "(docs/reproduction/results/hasco-enumerate/records), not recomputed")


def pair_order() -> list[tuple[str, str]]:
    """Every pair of the reproduction: the enumerated ones (in its order), then :data:`LIVE_ORDER`."""
    live = [p for p in LIVE_ORDER if p in hasco.PAIRS]
    if sorted(en.ENUM_PAIRS + tuple(live)) != sorted(hasco.PAIRS):
        raise RuntimeError("hasco_dse: the pairs of hasco.PAIRS are not the enumerated pairs plus LIVE_ORDER")
    return list(en.ENUM_PAIRS) + live


def run_nsga2(workload: str, kind: str, seed: int, store: RecordStore, budget: int = BUDGET,
              lookup: bool | None = None, records: Path = en.DEFAULT_OUT / "records") -> list[dict[str, Any]]:
    """NSGA-II's search of one pair and seed (recorded in ``store``); ``lookup`` (default:
    where the pair is enumerated) reads the evaluations from the enumeration's ``records``."""
    if lookup is None:
        lookup = (workload, kind) in en.ENUM_PAIRS
    evaluator = None
    if lookup:
        evaluator = ("experiments.reproduce.hasco_enumerate:EnumeratedHasco",
                     {"intrinsic": kind, "workload": workload, "sw_budget": SW_BUDGET, "records": str(records)})
    return hasco.run_search(kind, workload, "nsga2", seed, budget, N_INIT, SW_BUDGET, "search", store,
                            evaluator=evaluator, note=LOOKUP_NOTE if lookup else None)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m experiments.reproduce.hasco_dse", description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", nargs="+", default=None, metavar="WORKLOAD:INTRINSIC")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--run-only", action="store_true", help="run (or resume) the searches, write no summary")
    args = ap.parse_args(argv)
    order = pair_order()
    pairs = [tuple(p.split(":")) for p in args.pairs] if args.pairs else order
    for p in pairs:
        if p not in order:
            raise SystemExit(f"--pairs: {':'.join(p)!r} is not one of {[':'.join(q) for q in order]}")
    store = RecordStore(args.out / "records")
    for wl, kind in pairs:
        for s in SEEDS:
            t = time.perf_counter()
            run_nsga2(wl, kind, s, store)
            print(f"  {wl:>12} {kind:4} nsga2 seed {s}: {time.perf_counter() - t:6.1f} s", flush=True)
    if args.run_only:
        return {}
    return {}


if __name__ == "__main__":
    main(sys.argv[1:])
