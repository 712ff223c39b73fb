"""Claims carry their scope (issue 45 item 3): a proving mapper's result states, as data,
the space its proof covers, and that statement follows the mapper's options and the cost
model rather than being a constant."""

from __future__ import annotations

import dataclasses

import pytest

from evaluators.loopnest import LoopNestCost
from evaluators.loopnest.conventions import Conventions
from mappers.base import MappingResult, ProofScope, accounting_of
from mappers.constraints import MappingConstraints
from mappers.exact import ExactMapper
from mappers.exhaustive import ExhaustiveMapper
from mappers.heuristic import HeuristicMapper
from mappers.testing import tiny_case


@pytest.fixture(scope="module")
def case():
    return tiny_case()


def test_the_exact_mappers_scope_follows_bypass_accounting_constraints_and_objective(case):
    layer, arch = case
    base = ExactMapper().map(layer, arch, LoopNestCost())
    assert base.optimal and base.scope == ProofScope(
        tilings="divisor", accounting="coexplore", bypass=True, constraints=None,
        spatial="every divisor unrolling within each fanout",
        loop_orders="every order at every level (exact order search at each leaf)", objective="edp")
    assert ExactMapper(bypass=False).map(layer, arch, LoopNestCost()).scope.bypass is False
    assert ExactMapper().map(layer, arch, LoopNestCost("zigzag")).scope.accounting == "zigzag"
    assert ExactMapper().map(layer, arch, LoopNestCost(Conventions(window_reuse="none"))).scope.accounting \
        == "custom(window_reuse=none)"
    assert ExactMapper().map(layer, arch, LoopNestCost(), "latency").scope.objective == "latency"
    rf = arch.levels[0].name
    cons = MappingConstraints.of("rf-weights", **{rf: dict(keep="W")})
    scoped = ExactMapper(constraints=cons).map(layer, arch, LoopNestCost())
    assert scoped.optimal and scoped.scope.constraints == "rf-weights"
    unnamed = ExactMapper(constraints=MappingConstraints.of(**{rf: dict(keep="W")})).map(layer, arch, LoopNestCost())
    assert unnamed.scope.constraints == f"unnamed set on levels {rf}"


def test_a_stopped_search_states_the_space_of_its_bound(case):
    layer, arch = case
    r = ExactMapper(max_nodes=1).map(layer, arch, LoopNestCost())
    if r.optimal:   # the tiny case may finish in one node; then the claim is the proof's
        assert r.claim().startswith("proven optimal (edp over divisor tilings")
    else:
        assert r.lower_bound is not None and r.scope is not None
        assert r.claim().startswith("not proven; lower bound") and "divisor tilings" in r.claim()


def test_the_exhaustive_mappers_scope_follows_bypass(case):
    layer, arch = case
    assert ExhaustiveMapper().map(layer, arch, LoopNestCost()).scope.bypass is False
    r = ExhaustiveMapper(bypass=True).map(layer, arch, LoopNestCost("timeloop"))
    assert r.optimal and r.scope.bypass is True and r.scope.accounting == "timeloop"
    assert r.scope.loop_orders.endswith("above the innermost")


def test_a_result_without_proof_has_no_scope_and_a_proof_needs_one(case):
    layer, arch = case
    r = HeuristicMapper().map(layer, arch, LoopNestCost())
    assert not r.optimal and r.scope is None and r.claim() == "no proof (a search's best)"
    with pytest.raises(ValueError, match="needs the scope of the proof"):
        dataclasses.replace(r, optimal=True)
    assert isinstance(dataclasses.replace(r, optimal=True, scope=ProofScope(
        "padded", "coexplore", False, None, "s", "o", "edp")), MappingResult)


def test_scope_fields_are_checked_and_serialize():
    with pytest.raises(ValueError, match=r"ProofScope\.tilings must be one of"):
        ProofScope("exact", "coexplore", True, None, "s", "o", "edp")
    with pytest.raises(ValueError, match="unknown mapping objective 'speed'"):
        ProofScope("divisor", "coexplore", True, None, "s", "o", "speed")
    with pytest.raises(ValueError, match=r"ProofScope\.bypass must be a bool"):
        ProofScope("divisor", "coexplore", "yes", None, "s", "o", "edp")
    s = ProofScope("divisor", "timeloop", False, "row-stationary", "s", "o", "energy")
    assert s.as_dict()["constraints"] == "row-stationary"
    assert s.describe() == ("energy over divisor tilings, timeloop accounting, no bypass choices (each level keeps "
                            "what the architecture says), constraints row-stationary; spatial: s; loop orders: o")
    assert accounting_of(LoopNestCost("timeloop")) == "timeloop"
    assert accounting_of(print) == "cost function print"
