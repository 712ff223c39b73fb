"""Claims carry their scope (issue 45, item 3): the benchmarks that print "proven" state,
once in their header, the space the proofs cover, from the results' scope data."""

from __future__ import annotations

import json

import pytest

from accelerators import eyeriss_v1
from evaluators.loopnest import LoopNestCost
from experiments.benchmarks import exact_accountings, mapper_optimality, shi2020_inner_effort
from experiments.benchmarks.proof_scopes import ProofScopes
from mappers.exact import ExactMapper
from mappers.heuristic import HeuristicMapper
from mappers.testing import tiny_case


@pytest.fixture(scope="module")
def case():
    return tiny_case()


def test_the_accountings_header_names_each_rows_accounting_without_searching():
    arch, layers = eyeriss_v1().to_arch(), exact_accountings.layers()
    (one,), _ = exact_accountings.header(arch, layers, ["coexplore"], "edp", ExactMapper())
    (other,), _ = exact_accountings.header(arch, layers, ["timeloop"], "edp", ExactMapper())
    assert "divisor tilings" in one and "coexplore accounting" in one and "bypass searched" in one
    assert "timeloop accounting" in other and "coexplore" not in other
    (lat,), _ = exact_accountings.header(arch, layers, ["coexplore"], "latency", ExactMapper(bypass=False))
    assert lat.startswith("proofs and bounds cover: latency over divisor tilings") and "no bypass choices" in lat
    lines, scopes = exact_accountings.header(arch, layers, ["coexplore", "timeloop", "zigzag"], "edp", ExactMapper())
    assert lines[0] == "proofs and bounds cover, per accounting:" and len(lines) == 4
    assert [ln.split(":")[0].strip() for ln in lines[1:]] == ["coexplore", "timeloop", "zigzag"]
    assert [r["accounting"] for r in scopes.records()] == ["coexplore", "timeloop", "zigzag"]


def test_the_announced_scope_is_the_results_and_a_mismatch_is_refused(case):
    layer, arch = case
    scopes = ProofScopes("accounting")
    scopes.announce("coexplore", layer.name, ExactMapper(), layer, arch, LoopNestCost(), "edp")
    r = ExactMapper().map(layer, arch, LoopNestCost())
    assert r.optimal and scopes.distinct() == [r.scope]
    scopes.check("coexplore", layer.name, r)
    scopes.check("coexplore", layer.name, HeuristicMapper().map(layer, arch, LoopNestCost()))  # no claim
    with pytest.raises(RuntimeError, match=r"timeloop accounting, .* but the header said edp over divisor tilings, "
                                           r"coexplore accounting"):
        scopes.check("coexplore", layer.name, ExactMapper().map(layer, arch, LoopNestCost("timeloop")))


def test_scopes_from_results_print_once_when_shared_and_per_group_or_row_otherwise(case):
    layer, arch = case
    default = ExactMapper().map(layer, arch, LoopNestCost())
    timeloop = ExactMapper().map(layer, arch, LoopNestCost("timeloop"))
    s = ProofScopes()
    assert s.lines() == ["proofs and bounds cover: nothing (no result claims a proof or a bound)"]
    s.add("a", "x", default)
    s.add("a", "y", default.scope.as_dict())   # a nested evaluator's proof_scope record
    s.add("b", "x", None)
    assert s.lines() == [f"proofs and bounds cover: {default.scope.describe()}"]
    s.add("b", "x", timeloop)
    s.add("c", "x", timeloop)
    s.add("c", "y", default)
    assert s.lines() == ["proofs and bounds cover, per group:", f"  a, c/y: {default.scope.describe()}",
                         f"  b, c/x: {timeloop.scope.describe()}"]
    assert [(r["accounting"], r["applies_to"]) for r in s.records()] == [("coexplore", ["a", "c/y"]),
                                                                         ("timeloop", ["b", "c/x"])]
    json.dumps(s.records())
    with pytest.raises(ValueError, match="a/x has two proof scopes"):
        s.add("a", "x", timeloop)


def test_the_optimality_benchmark_states_each_architectures_scope(capsys, tmp_path):
    out = mapper_optimality.main(["--networks", "dqn", "--archs", "systolic_32x32_ws", "--random", "0",
                                  "--time-limit", "5", "--json", str(tmp_path / "o.json")])
    text = capsys.readouterr().out
    (line,) = [ln for ln in text.splitlines() if ln.startswith("proofs and bounds cover")]
    assert "divisor tilings, coexplore accounting, no bypass choices" in line and "systolic WS dataflow" in line
    assert text.index(line) < text.index("network        layer")            # in the header, before the rows
    (rec,) = json.loads((tmp_path / "o.json").read_text())["scopes"]["systolic_32x32_ws"]
    assert rec["accounting"] == "coexplore" and rec["tilings"] == "divisor" and rec["applies_to"] == ["dqn"]
    assert out["scopes"]["systolic_32x32_ws"] == [rec]


def test_the_inner_effort_point_report_states_its_scope():
    from experiments.reproduce.shi2020 import EYERISS_POINT

    res = shi2020_inner_effort.main(["--point", json.dumps(EYERISS_POINT), "--limits", "1000", "--layers", "fc2"])
    (rec,) = res["scopes"]
    assert rec["accounting"] == "coexplore" and rec["bypass"] is True and rec["applies_to"] == ["1000 nodes"]


def test_the_inner_effort_settings_scopes_come_from_the_nested_evaluators_records(case):
    layer, arch = case
    sc = {acc: ExactMapper().map(layer, arch, LoopNestCost(acc)).scope for acc in ("coexplore", "timeloop")}
    rows = [{"heuristic": {"edp_uj_ms": 2.0}, "nodes=3M": {"edp_uj_ms": 1.0, "proof_scopes": [sc["coexplore"].as_dict()]}},
            {"heuristic": {"edp_uj_ms": 2.0}, "nodes=3M": {"edp_uj_ms": 1.0, "proof_scopes": [sc["timeloop"].as_dict()]}}]
    got = shi2020_inner_effort.settings_scopes(rows, ["heuristic", "nodes=3M"])
    assert got.distinct() == [sc["coexplore"], sc["timeloop"]]
    assert got.lines()[1] == f"  nodes=3M/point 0: {sc['coexplore'].describe()}"
    assert shi2020_inner_effort.settings_scopes(rows[:1], ["nodes=3M"]).lines() \
        == [f"proofs and bounds cover: {sc['coexplore'].describe()}"]
    assert "nothing" in shi2020_inner_effort.settings_scopes(rows, ["heuristic"]).lines()[0]
