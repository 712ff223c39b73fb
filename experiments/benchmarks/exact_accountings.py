"""What the exact mapper's proof costs under each accounting (issue 41, item 3).

For a few real layers on Eyeriss v1 (:func:`accelerators.eyeriss_v1`): the Nature DQN's
``conv2`` (:func:`mappers.zoo.dqn`), ResNet-50's ``layer1.0.conv2`` (3x3, 64 -> 64, 56 x 56)
and a GEMM (DQN's ``fc1``, 3136 -> 512 at batch 1, unless ``--gemm`` names others), the
exact mapper (:class:`mappers.exact.ExactMapper`, EDP by default) under
``accounting="coexplore"`` (the default), ``"timeloop"`` and ``"zigzag"``: the CPU seconds
of this process (one core: the script sets the BLAS thread counts to 1), whether the
result is proven optimal, the nodes and leaves, the mappings scored and the objective.
The header states the space each accounting's proofs cover (:func:`header`, from
:meth:`mappers.exact.ExactMapper.proof_scope`; every result is checked against it).
Under Timeloop's accounting the leaves use the coupled order search
(:func:`mappers.orders.coupled_best_orders`) and the bounds the per-convention rules of
:mod:`evaluators.loopnest.bounds_conventions`.

Run: ``python -m experiments.benchmarks.exact_accountings [--time-limit S]
[--accountings coexplore,timeloop,zigzag] [--objective edp]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402

from accelerators import eyeriss_v1  # noqa: E402
from accelerators.arch import ArchSpec  # noqa: E402
from evaluators.loopnest import LoopNestCost  # noqa: E402
from experiments.proof_scopes import ProofScopes  # noqa: E402
from mappers import zoo  # noqa: E402
from mappers.exact import ExactMapper  # noqa: E402
from mappers.workloads import Layer, conv2d  # noqa: E402


def layers() -> list[Layer]:
    dqn = {layer.name: layer for layer in zoo.dqn(batch=1)}
    return [dqn["conv2"], conv2d("resnet50.layer1.0.conv2", K=64, C=64, P=56, Q=56, R=3, S=3), dqn["fc1"]]


def header(arch: ArchSpec, layers: list[Layer], accountings: list[str], objective: str,
           mapper: ExactMapper) -> tuple[list[str], ProofScopes]:
    """The header's scope lines (what ``proven`` covers, per accounting where they differ)
    and the :class:`~experiments.proof_scopes.ProofScopes` each row's result is
    checked against; nothing is searched."""
    scopes = ProofScopes("accounting")
    for layer in layers:
        for acc in accountings:
            scopes.announce(acc, layer.name, mapper, layer, arch, LoopNestCost(acc), objective)
    return scopes.lines(), scopes


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per search (default: none)")
    ap.add_argument("--accountings", default="coexplore,timeloop,zigzag")
    ap.add_argument("--objective", default="edp")
    return ap


def setup(args: argparse.Namespace) -> tuple[ArchSpec, list[str], ExactMapper]:
    """The architecture, accountings and mapper a run with ``args`` uses."""
    return eyeriss_v1().to_arch(), args.accountings.split(","), ExactMapper(time_limit_s=args.time_limit)


def announced_scopes(argv: list[str]) -> ProofScopes:
    """The scopes a run with the command-line arguments ``argv`` states in its header
    (:func:`header`), without searching: what a committed output of that command covers."""
    args = parser().parse_args(argv)
    arch, accountings, mapper = setup(args)
    return header(arch, layers(), accountings, args.objective, mapper)[1]


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    arch, accountings, mapper = setup(args)
    lines, scopes = header(arch, layers(), accountings, args.objective, mapper)
    print(f"exact mapper on {arch.name}, objective {args.objective}, time limit {args.time_limit}; proven = "
          "optimal over the row's space (each result's ProofScope):")
    print("\n".join(lines))
    print(f"{'layer':28s} {'accounting':10s} {'cpu_s':>8s} {'proven':>6s} {'nodes':>8s} {'leaves':>8s} "
          f"{'scored':>10s} {'objective':>12s} {'bound/obj':>9s}")
    for layer in layers():
        for acc in accountings:
            cost = LoopNestCost(acc)
            t0 = time.process_time()
            r = mapper.map(layer, arch, cost, args.objective)
            cpu = time.process_time() - t0
            scopes.check(acc, layer.name, r)
            v = r.objective(args.objective)
            print(f"{layer.name:28s} {acc:10s} {cpu:8.2f} {r.optimal!s:>6s} {r.info['nodes']:8d} "
                  f"{r.info['leaves']:8d} {r.evaluated:10d} {v:12.5e} {r.lower_bound / v:9.4f}", flush=True)
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
