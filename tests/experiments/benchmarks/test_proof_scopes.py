"""Claims carry their scope (issue 45, item 3): the benchmarks that print "proven" state,
once in their header, the space the proofs cover, from the results' scope data."""

from __future__ import annotations

import json

import pytest

from accelerators import eyeriss_v1
from evaluators.loopnest import LoopNestCost
from experiments.benchmarks import (
    exact_accountings,
    mapper_local_search,
    mapper_optimality,
    nested_reuse,
    shi2020_inner_effort,
)
from experiments.proof_scopes import ProofScopes
from mappers.exact import ExactMapper
from mappers.heuristic import HeuristicMapper
from mappers.testing import tiny_case
from mappers.zoo import dqn

PREFIX = "proofs and bounds cover"


def printed_scope(text: str, before: str) -> list[str]:
    """The scope lines of a benchmark's output ``text`` (the first one and the per-group
    lines under it), asserted to precede the line that starts with ``before``."""
    lines = text.splitlines()
    (i,) = [k for k, ln in enumerate(lines) if ln.startswith(PREFIX)]
    out = [lines[i]]
    while out[0].endswith(":") and lines[i + len(out)].startswith("  "):   # one line per group
        out.append(lines[i + len(out)])
    assert i < next(k for k, ln in enumerate(lines) if ln.startswith(before)), "the scope is not in the header"
    return out


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


def test_the_accountings_run_prints_each_accountings_scope_before_its_rows(capsys):
    exact_accountings.main(["--accountings", "coexplore,timeloop", "--time-limit", "0.2"])
    head = printed_scope(capsys.readouterr().out, "layer ")
    assert head[0] == f"{PREFIX}, per accounting:"
    assert head[1].startswith("  coexplore: edp over divisor tilings, coexplore accounting, bypass searched")
    assert head[2].startswith("  timeloop: edp over divisor tilings, timeloop accounting, bypass searched")


def test_the_local_search_run_prints_its_scope_before_its_rows(capsys):
    out = mapper_local_search.main(["--spaces", "shi-iso", "--points", "0", "--workloads", "dqn", "--layers", "fc2",
                                    "--time-limit-s", "2"])
    (line,) = printed_scope(capsys.readouterr().out, "space ")
    assert line.startswith(f"{PREFIX}: edp over divisor tilings, coexplore accounting, bypass searched")
    assert [r["layer"] for r in out["rows"]] == ["fc2"]
    assert [(r["accounting"], r["applies_to"]) for r in out["scopes"]] == [("coexplore", ["shi-iso"])]


def test_the_reuse_replays_print_their_scope_before_the_replays(capsys, monkeypatch, tmp_path):
    from experiments.reproduce.shi2020 import EYERISS_POINT

    monkeypatch.setattr(nested_reuse, "WORKLOAD", [x for x in dqn(batch=1) if x.name == "fc2"])
    res = nested_reuse.compare([EYERISS_POINT], 2000, tmp_path)
    (line,) = printed_scope(capsys.readouterr().out, "without reuse:")
    assert line.startswith(f"{PREFIX}: edp over divisor tilings, coexplore accounting, bypass searched")
    assert [r["applies_to"] for r in res["scopes"]] == [["without reuse", "with reuse"]]
    assert json.loads((tmp_path / "results.json").read_text())["scopes"] == res["scopes"]


def test_the_inner_effort_point_report_states_its_scope(capsys):
    from experiments.reproduce.shi2020 import EYERISS_POINT

    res = shi2020_inner_effort.main(["--point", json.dumps(EYERISS_POINT), "--limits", "1000", "--layers", "fc2"])
    (rec,) = res["scopes"]
    assert rec["accounting"] == "coexplore" and rec["bypass"] is True and rec["applies_to"] == ["1000 nodes"]
    (line,) = printed_scope(capsys.readouterr().out, "layer ")
    assert line.startswith(f"{PREFIX}: edp over divisor tilings, coexplore accounting, bypass searched")


def test_the_inner_effort_layers_report_states_its_scope(capsys, monkeypatch):
    fc2 = [x for x in dqn(batch=1) if x.name == "fc2"]
    monkeypatch.setattr(shi2020_inner_effort, "point_layers", lambda spec, names: fc2)
    monkeypatch.setattr(shi2020_inner_effort, "LAYER_LIMITS", (1000,))
    res = shi2020_inner_effort.main(["--workload", "dqn", "--eyeriss-layers"])
    (line,) = printed_scope(capsys.readouterr().out, "layer ")
    assert line.startswith(f"{PREFIX}: edp over divisor tilings, coexplore accounting, bypass searched")
    assert [r["layer"] for r in res["layers"]] == ["fc2"]
    assert [r["applies_to"] for r in res["scopes"]] == [["1000 nodes", "no nodes"]]


class _InProcess:
    """A stand-in for the process pool: maps in this process (so a test's patches hold)."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    map = staticmethod(map)


def test_the_inner_effort_designs_report_states_the_scope_its_results_prove_over(capsys, monkeypatch):
    fc2 = [x for x in dqn(batch=1) if x.name == "fc2"]
    monkeypatch.setattr(shi2020_inner_effort, "SETTINGS", {"heuristic": {"name": "heuristic"},
                                                           "nodes=2k": {"name": "exact", "max_nodes": 2000}})
    monkeypatch.setattr(shi2020_inner_effort, "REFERENCE", "nodes=2k")
    monkeypatch.setattr(shi2020_inner_effort, "workload_spec", lambda args: fc2)
    monkeypatch.setattr(shi2020_inner_effort, "ProcessPoolExecutor", _InProcess)
    res = shi2020_inner_effort.main(["--designs", "2", "--settings", "heuristic"])
    (line,) = printed_scope(capsys.readouterr().out, "setting ")
    assert line.startswith(f"{PREFIX}: edp over divisor tilings, coexplore accounting, bypass searched")
    (rec,) = res["scopes"]
    assert rec["applies_to"] == ["nodes=2k"]          # the heuristic proves nothing


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
