"""Every registered mapper against the Mapper protocol (:mod:`mappers.testing`), and
proof that each check catches a broken mapper."""

from __future__ import annotations

import dataclasses

import pytest

from accelerators.intrinsic import IntrinsicAccelerator
from evaluators.loopnest import LOOPNEST
from experiments.inner_search import search_mapper
from mappers import tensor_ir as ir
from mappers.base import ProofScope
from mappers.heuristic import HeuristicMapper
from mappers.registry import MAPPERS
from mappers.testing import (
    ConformanceError,
    brute_force_best,
    check_legal,
    check_mapper,
    check_optimal_claim,
    check_result_fields,
    tiny_case,
)

# Small settings per entry; "schedule" maps HASCO computations on an intrinsic array.
SPECS = {
    "heuristic": {"name": "heuristic"},
    "random": {"name": "random", "budget": 30},
    "exhaustive": {"name": "exhaustive"},
    "exact": {"name": "exact"},
    "anytime": {"name": "anytime"},
    "schedule": {"name": "schedule", "budget": 20},
    "asktell": {"name": "asktell", "search": "random", "budget": 15},
}


@pytest.fixture(scope="module")
def best():
    layer, arch = tiny_case()
    return brute_force_best(layer, arch, LOOPNEST)


def test_every_registered_mapper_has_a_case():
    assert set(MAPPERS.names()) == set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_registered_mapper_conforms(name, best):
    mapper = search_mapper(SPECS[name])
    if name == "schedule":
        acc = IntrinsicAccelerator("GEMM", 4, 4, sp_kib=16, local_kib=8, dataflow="WS", sp_banks=2)
        r = check_mapper(mapper, ir.gemm(M=16, N=16, K=16), acc.to_arch(), LOOPNEST, "latency")
        assert not r.optimal
        return
    layer, arch = tiny_case()
    r = check_mapper(mapper, layer, arch, LOOPNEST, best=best)
    if name == "exhaustive":   # the prover over the same space hits the enumerated optimum
        assert r.optimal and r.edp == pytest.approx(best, rel=1e-9)
        assert (r.scope.tilings, r.scope.bypass, r.scope.constraints) == ("divisor", False, None)
    if name == "exact":        # its space adds bypass: at least as good
        assert r.optimal and r.edp <= best * (1 + 1e-9)
        assert (r.scope.tilings, r.scope.bypass, r.scope.constraints) == ("divisor", True, None)
    if name in ("heuristic", "random", "asktell"):   # no proof, so no space to state
        assert not r.optimal and r.scope is None


# ------------------------------------------------------------------ the checks can fail
class ClaimsOptimal(HeuristicMapper):
    """The heuristic's result, claimed optimal (over the divisor tilings the enumeration covers)."""

    def map(self, layer, arch, cost, objective="edp", *, seed=0):
        scope = ProofScope("divisor", "coexplore", False, None, "every divisor unrolling", "every order", objective)
        return dataclasses.replace(super().map(layer, arch, cost, objective, seed=seed), optimal=True, scope=scope)


class BoundWithoutScope(HeuristicMapper):
    """The heuristic's result with a lower bound (a true one) but no statement of its space."""

    def map(self, layer, arch, cost, objective="edp", *, seed=0):
        r = super().map(layer, arch, cost, objective, seed=seed)
        return dataclasses.replace(r, lower_bound=r.objective(objective) / 2)


class WrongFigures(HeuristicMapper):
    """Reports half the energy of the mapping it returns."""

    def map(self, layer, arch, cost, objective="edp", *, seed=0):
        r = super().map(layer, arch, cost, objective, seed=seed)
        return dataclasses.replace(r, energy_pj=r.energy_pj / 2, edp=r.edp / 2)


class Illegal(HeuristicMapper):
    """Returns its mapping with a tile over the layer's extent."""

    def map(self, layer, arch, cost, objective="edp", *, seed=0):
        r = super().map(layer, arch, cost, objective, seed=seed)
        t = list(r.mapping.temporal)
        t[0] = {**t[0], "M": 64}
        return dataclasses.replace(r, mapping=dataclasses.replace(r.mapping, temporal=tuple(t)))


def test_the_checks_catch_broken_mappers(best):
    layer, arch = tiny_case()
    honest = HeuristicMapper().map(layer, arch, LOOPNEST)
    assert honest.edp > best * 1.0001, "the heuristic must miss the optimum here for the test to mean anything"
    check_mapper(HeuristicMapper(), layer, arch, LOOPNEST, best=best)   # the unbroken base passes
    with pytest.raises(ConformanceError, match="claims optimal"):
        check_optimal_claim(ClaimsOptimal().map(layer, arch, LOOPNEST), layer, arch, LOOPNEST,
                            best=best)
    with pytest.raises(ConformanceError, match="not its mapping's"):
        check_result_fields(WrongFigures().map(layer, arch, LOOPNEST), layer, arch, LOOPNEST)
    with pytest.raises(ConformanceError, match="illegal"):
        check_legal(Illegal().map(layer, arch, LOOPNEST), layer, arch)
    with pytest.raises(ConformanceError, match="must state the space"):
        check_result_fields(BoundWithoutScope().map(layer, arch, LOOPNEST), layer, arch, LOOPNEST)
    with pytest.raises(ValueError, match="needs the scope of the proof"):   # not even constructible
        dataclasses.replace(honest, optimal=True)
