"""The inner mapping search with invalid mappings as unknown constraints: what the
feasibility model buys (the inner BO of Shi et al. 2020).

Shi et al. search each layer's mappings with constrained BO and learn what cannot be known
before evaluation as output constraints. Here a mapping whose tiles overflow a buffer is
such a point: the space is built with ``capacity="unknown"``
(:func:`mappers.mapping_space.mapping_space`), so the search proposes it, the loop-nest
model finds it invalid and the search is told INFEASIBLE
(:class:`mappers.asktell.AskTellMapper`).

For each layer (default: three of ResNet-50 and DQN on Eyeriss v1, whose 12- and 24-word
register files make overflow common) and each seed, every search gets the same budget of
evaluated mappings:

* ``bo``: constrained BO with its feasibility model (a GP classifier, P(feasible) x the
  acquisition) and infeasible points imputed at the worst observed value in the objective
  GP (the defaults);
* ``bo-no-feasibility``: the same without the classifier (``feasibility_model=False``);
* ``bo-neither``: without the classifier and without imputation;
* ``random``: random search over the same space;
* ``bo-known``: constrained BO over the space with capacities as known constraints (no
  overflowing mapping is ever proposed; the reference).

It prints, per layer and search, the share of proposals that were infeasible (all, and
after BO's initial design) and the best EDP found over the exact optimum
(:class:`mappers.exact.ExactMapper`), median over seeds, and the share over all layers
and seeds; ``--out`` writes the figures as JSON (the committed run:
``docs/search_quality/inner_feasibility.json``, its console output beside it as ``.txt``).
The header states the space the exact reference's proofs cover (:func:`proof_scopes`,
computed from the mapper before it runs; each reference is checked against it, the JSON
keeps it as ``scopes``); the committed output, written before the script printed it,
carries it stated afterwards by :mod:`experiments.benchmarks.stated_scopes`
(:func:`announced_scopes`).

Run: ``python -m experiments.search_quality.inner_feasibility [--seeds 3] [--budget 50]
[--layers dqn:conv1 ...] [--out DIR]`` (about 100 min on one core with the defaults: BO's GP fits dominate, about 2-4 min a run).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from accelerators import eyeriss_v1  # noqa: E402
from evaluators.loopnest import LOOPNEST  # noqa: E402
from experiments.inner_search import OptimizerSearch  # noqa: E402  (the optimizers as mapping searches)
from experiments.proof_scopes import ProofScopes  # noqa: E402
from mappers import zoo  # noqa: E402
from mappers.asktell import AskTellMapper  # noqa: E402
from mappers.base import NoLegalMapping  # noqa: E402
from mappers.exact import ExactMapper  # noqa: E402

LAYERS = ("resnet50:layer1.0.conv2", "resnet50:layer3.0.conv1", "dqn:conv1")
N_INIT = 10
POOL = 500
SEARCHES: dict[str, dict[str, Any]] = {
    "bo": {"search": "constrained-bo", "capacity": "unknown", "options": {}},
    "bo-no-feasibility": {"search": "constrained-bo", "capacity": "unknown",
                          "options": {"feasibility_model": False}},
    "bo-neither": {"search": "constrained-bo", "capacity": "unknown",
                   "options": {"feasibility_model": False, "impute_infeasible": False}},
    "random": {"search": "random", "capacity": "unknown", "options": {}},
    "bo-known": {"search": "constrained-bo", "capacity": "known", "options": {}},
}


def layer_of(spec: str) -> Any:
    """``workload:layer`` -> the zoo's layer (an error names the spec and the choices)."""
    workload, _, name = spec.partition(":")
    layers = {lay.name: lay for lay in zoo.resolve(workload)}
    if name not in layers:
        raise SystemExit(f"--layers {spec!r}: {workload!r} has no layer {name!r}; it has {sorted(layers)}")
    return layers[name]


def mapper(name: str, budget: int) -> AskTellMapper:
    s = SEARCHES[name]
    opts = dict(s["options"])
    if s["search"] == "constrained-bo":
        opts.update(n_init=N_INIT, pool_size=POOL)
    return AskTellMapper(s["search"], budget=budget, options=opts, capacity=s["capacity"],
                         factory=OptimizerSearch(s["search"]))


REFERENCE = "exact reference"


def proof_scopes(layers: list[str], exact_max_nodes: int | None = None) -> ProofScopes:
    """The space the exact reference proves each of ``layers`` over on Eyeriss v1 (by
    layer), from the mapper before it runs: what the header states and each reference is
    checked against (the searches prove nothing)."""
    arch = eyeriss_v1().to_arch()
    scopes = ProofScopes("layer")
    for spec in layers:
        scopes.announce(spec, REFERENCE, ExactMapper(max_nodes=exact_max_nodes), layer_of(spec), arch, LOOPNEST,
                        "edp")
    return scopes


def run(layers: list[str], searches: list[str], seeds: int, budget: int, exact_max_nodes: int | None = None,
        scopes: ProofScopes | None = None) -> dict[str, Any]:
    arch = eyeriss_v1().to_arch()
    scopes = proof_scopes(layers, exact_max_nodes) if scopes is None else scopes
    out: dict[str, Any] = {"arch": arch.name, "budget": budget, "seeds": seeds, "n_init": N_INIT,
                           "pool_size": POOL, "scopes": scopes.records(), "layers": {}}
    for spec in layers:
        layer = layer_of(spec)
        t = time.perf_counter()
        # the reference: proven unless a node limit is given (a limit on work, not time,
        # so the figures do not depend on the load)
        opt = ExactMapper(max_nodes=exact_max_nodes).map(layer, arch, LOOPNEST, "edp")
        scopes.check(spec, REFERENCE, opt)
        row: dict[str, Any] = {"exact_edp": opt.edp, "exact_optimal": bool(opt.optimal),
                               "exact_s": time.perf_counter() - t, "searches": {}}
        print(f"{spec}: exact EDP {opt.edp:.6g} ({'optimal' if opt.optimal else 'node limit'}, "
              f"{row['exact_s']:.1f} s)", flush=True)
        for name in searches:
            runs = []
            for seed in range(seeds):
                t = time.perf_counter()
                try:
                    r = mapper(name, budget).map(layer, arch, LOOPNEST, "edp", seed=seed)
                    evaluated, edp = r.evaluated, r.edp
                    bad = list(r.info["infeasible_trials"])
                except NoLegalMapping as e:  # every proposal in the budget was invalid
                    evaluated, edp, bad = budget, float("inf"), list(range(budget))
                    print(f"  {name} seed {seed}: {e}", flush=True)
                runs.append({"seed": seed, "edp": edp, "ratio": edp / opt.edp, "evaluated": evaluated,
                             "infeasible": len(bad),
                             "infeasible_after_init": sum(n >= N_INIT for n in bad),
                             "seconds": time.perf_counter() - t})
            row["searches"][name] = runs
            share = np.mean([x["infeasible"] / x["evaluated"] for x in runs])
            after = np.mean([_after(x, budget) for x in runs])
            ratio = np.median([x["ratio"] for x in runs])
            print(f"  {name:<18} infeasible {100 * share:5.1f} % (after the first {N_INIT}: "
                  f"{100 * after:5.1f} %)  best/exact {ratio:7.3f}  "
                  f"{np.mean([x['seconds'] for x in runs]):5.1f} s/run", flush=True)
        out["layers"][spec] = row
    out["summary"] = summarize(out)
    return out


def _after(run: dict[str, Any], budget: int) -> float:
    """Share of the proposals after the first ``N_INIT`` (BO's initial design) that were
    infeasible."""
    return run["infeasible_after_init"] / max(1, run["evaluated"] - N_INIT)


def summarize(res: dict[str, Any]) -> dict[str, Any]:
    names = next(iter(res["layers"].values()))["searches"].keys() if res["layers"] else []
    summ = {}
    for name in names:
        runs = [x for row in res["layers"].values() for x in row["searches"][name]]
        summ[name] = {"infeasible_share": float(np.mean([x["infeasible"] / x["evaluated"] for x in runs])),
                      "infeasible_share_after_init": float(np.mean([_after(x, res["budget"]) for x in runs])),
                      "median_ratio_to_exact": float(np.median([x["ratio"] for x in runs])),
                      "runs": len(runs)}
    return summ


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", nargs="+", default=list(LAYERS), help="workload:layer from the zoo")
    ap.add_argument("--searches", nargs="+", default=list(SEARCHES), choices=list(SEARCHES))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=50, help="evaluated mappings per search")
    ap.add_argument("--exact-max-nodes", type=int, default=0,
                    help="search nodes for the exact reference of a layer (default 0: none, proven optimal)")
    ap.add_argument("--out", type=Path, default=None)
    return ap


def announced_scopes(argv: list[str]) -> ProofScopes:
    """The scopes a run with the command-line arguments ``argv`` states in its header,
    without mapping: what a committed output of that command covers."""
    args = parser().parse_args(argv)
    return proof_scopes(args.layers, args.exact_max_nodes or None)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parser().parse_args(argv)
    scopes = proof_scopes(args.layers, args.exact_max_nodes or None)
    print(f"Eyeriss v1, budget {args.budget}, {args.seeds} seeds, load {os.getloadavg()[0]:.1f}", flush=True)
    print("\n".join(scopes.lines()), flush=True)
    res = run(args.layers, args.searches, args.seeds, args.budget, args.exact_max_nodes or None, scopes)
    print("over all layers and seeds:")
    for name, s in res["summary"].items():
        print(f"  {name:<18} infeasible {100 * s['infeasible_share']:5.1f} % "
              f"(after the first {N_INIT}: {100 * s['infeasible_share_after_init']:5.1f} %)  "
              f"median best/exact {s['median_ratio_to_exact']:.3f}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "inner_feasibility.json").write_text(json.dumps(res, indent=1, default=float))
    return res


if __name__ == "__main__":
    main()
