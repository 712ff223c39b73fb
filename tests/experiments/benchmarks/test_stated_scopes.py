"""Every committed benchmark output that says "proven" or "optimal" states the space it
covers (issue 45, item 3): printed by its run ("proofs and bounds cover"), or, for runs
from before the scripts printed it, a header stated afterwards from the run's settings
(experiments/benchmarks/stated_scopes.py), computed, current and labelled as such."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from experiments.benchmarks import (
    exact_accountings,
    mapper_codesign,
    mapper_local_search,
    shi2020_inner_effort,
    stated_scopes,
)
from experiments.proof_scopes import PREFIX

DOCS = Path(__file__).resolve().parents[3] / "docs" / "benchmarks"
CLAIM = re.compile(r"\b(proven|optimal|optimality|optimum)\b", re.IGNORECASE)

OTHER_SENSE: dict[str, str] = {}
"""Outputs that say "optimal" (or "proven", "optimum") in a sense other than a mapper's
proof over a space, by file name, with the reason; they need no scope line. None now: every
docs/benchmarks/*.txt that uses the words speaks of the exact mapper's proofs. An entry
must name a file that still uses the words (tested), so the list cannot outlive its
reason."""


def claims_without_scope(text: str) -> bool:
    """``text`` says proven/optimal but states no space the claim covers."""
    return bool(CLAIM.search(text)) and PREFIX not in text


def test_the_rule_catches_a_claim_without_a_scope_and_only_that():
    assert claims_without_scope("layer  proven\nconv1  True\n")
    assert claims_without_scope("EDP / optimum median 1.0\n")
    assert not claims_without_scope(f"{PREFIX}: edp over divisor tilings, ...\nlayer proven\n")
    assert not claims_without_scope("wall seconds per evaluation\n")
    assert not claims_without_scope("optimizer: constrained-bo\n")            # a word, not the claim


@pytest.mark.parametrize("path", sorted(DOCS.glob("*.txt")), ids=lambda p: p.name)
def test_every_committed_output_that_claims_a_proof_states_its_scope(path):
    if path.name in OTHER_SENSE:
        return
    assert not claims_without_scope(path.read_text(encoding="utf-8")), (
        f"{path.name} says proven/optimal but states no proof scope: print ProofScopes.lines() in the script's "
        "header (experiments/proof_scopes.py), or, for an output that cannot be rerun, add its "
        "settings to experiments/benchmarks/stated_scopes.STATED and run python -m "
        "experiments.benchmarks.stated_scopes")


def test_the_other_sense_list_names_files_that_use_the_words():
    for name, reason in OTHER_SENSE.items():
        assert reason and CLAIM.search((DOCS / name).read_text(encoding="utf-8")), name


def test_every_stated_header_is_the_computed_one_and_none_is_typed_by_hand():
    stamped = {p.name for p in DOCS.glob("*.txt")
               if stated_scopes.split_header(p.read_text(encoding="utf-8"))[0]}
    assert stamped == set(stated_scopes.STATED), "a stated header without settings in STATED (typed by hand?)"
    for name in stated_scopes.STATED:
        got, rest = stated_scopes.split_header((DOCS / name).read_text(encoding="utf-8"))
        assert got == stated_scopes.header(name), f"{name}: run python -m experiments.benchmarks.stated_scopes"
        assert got[0].startswith(stated_scopes.LABEL) and "not printed by the run" in got[0]
        assert PREFIX not in rest, f"{name} prints its own scope: it needs no stated header"
    assert stated_scopes.main(["--check"]) == 0


def test_a_header_is_written_once_in_place_of_an_old_one(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("# python -m x\nlayer proven\n")
    lines = stated_scopes.header("shi2020_final_nodes_dqn32.txt")
    assert stated_scopes.stamp(f, lines) and not stated_scopes.stamp(f, lines)
    assert f.read_text() == "\n".join(lines) + "\n# python -m x\nlayer proven\n"
    stated_scopes.stamp(f, [lines[0], "# proofs and bounds cover, per x:", "#   a: ...", "#   b: ..."])
    assert stated_scopes.stamp(f, lines) and f.read_text() == "\n".join(lines) + "\n# python -m x\nlayer proven\n"


def _header_command(name: str) -> str:
    return "\n".join(ln for ln in (DOCS / name).read_text(encoding="utf-8").splitlines()
                     if ln.startswith("#") and not ln.startswith(stated_scopes.LABEL))


def test_the_stated_settings_are_the_runs():
    """The settings in STATED against what each run recorded: its header's command, the
    JSON it wrote (settings, point labels, points), the rows it printed."""
    st = stated_scopes.STATED
    # exact_accountings: the header's time limit; the rows' accountings
    assert "--time-limit 300" in _header_command("exact_accountings.txt")
    args = exact_accountings.parser().parse_args(list(st["exact_accountings.txt"].argv))
    rows = (DOCS / "exact_accountings.txt").read_text().splitlines()
    assert {ln.split()[1] for ln in rows if ln.startswith(("conv2 ", "fc1 "))} == set(args.accountings.split(","))
    # mapper_codesign and mapper_local_search: the JSON's settings and its rows' design points
    for name, script in (("mapper_codesign", mapper_codesign), ("mapper_local_search", mapper_local_search)):
        rec = json.loads((DOCS / f"{name}.json").read_text())
        args = script.parser().parse_args(list(st[f"{name}.txt"].argv))
        assert {k: v for k, v in vars(args).items() if k in rec["settings"] and k != "json"} \
            == {k: v for k, v in rec["settings"].items() if k != "json"}, name
        assert [(s, label) for s, label, _ in script.chosen_designs(args)] \
            == list(dict.fromkeys((r["space"], r["point"]) for r in rec["rows"])), name
    # the partial run: its header's command; the rows it printed are shi-iso point 0's
    head = _header_command("mapper_codesign_shi_iso0_all_workloads.txt")
    assert "--points 0 1 --time-limit-s 120, all workloads" in head
    args = mapper_codesign.parser().parse_args(list(st["mapper_codesign_shi_iso0_all_workloads.txt"].argv))
    assert args.workloads == list(mapper_codesign.WORKLOADS)
    text = (DOCS / "mapper_codesign_shi_iso0_all_workloads.txt").read_text().splitlines()
    printed = [ln.split()[:3] for ln in text if ln.split() and ln.split()[0] in ("shi-iso", "shi-free", "demo")]
    layers = {w: [x.name for x in ls] for w, ls in mapper_codesign.setup(args)[2].items()}
    assert [(w, lay[:27]) for _, w, lay in printed] == [(w, n[:27]) for w, ns in layers.items() for n in ns]
    assert {s for s, _, _ in printed} == {"shi-iso"} and len(mapper_codesign.chosen_designs(args)) == 1
    # the final-nodes point report: the header's command, word for word
    assert " ".join(st["shi2020_final_nodes_dqn32.txt"].argv).replace(
        stated_scopes.FINAL_POINT, f"'{stated_scopes.FINAL_POINT}'") in _header_command("shi2020_final_nodes_dqn32.txt")
    # the designs report: the JSON's workload, mode, seed, points and settings
    rec = json.loads((DOCS / "shi2020_inner_effort.json").read_text())
    args = shi2020_inner_effort.parser().parse_args(list(st["shi2020_inner_effort.txt"].argv))
    assert (args.workload, args.mode, args.seed) == (rec["workload"], rec["mode"], rec["seed"])
    assert shi2020_inner_effort.design_points(args) == rec["points"]
    assert shi2020_inner_effort.design_settings(args) == list(rec["rows"][0])
    # the Eyeriss layers report: the JSON's workload, layers and node limits
    rec = json.loads((DOCS / "shi2020_inner_effort_resnet50_layers.json").read_text())
    args = shi2020_inner_effort.parser().parse_args(list(st["shi2020_inner_effort_resnet50_layers.txt"].argv))
    assert args.eyeriss_layers and args.workload == rec["workload"]
    assert [x.name for x in shi2020_inner_effort.point_layers(shi2020_inner_effort.workload_spec(args), None)] \
        == [r["layer"] for r in rec["layers"]]
    assert [k for k in rec["layers"][0] if k != "layer"] == [*map(str, shi2020_inner_effort.LAYER_LIMITS), "none"]
    # the reuse run: the header's node limit is the JSON's, whose points the scope is computed from
    rec = json.loads((DOCS / "nested_reuse_dqn32.json").read_text())
    assert f"--max-nodes {rec['max_nodes']}" in _header_command("nested_reuse_dqn32.txt") and len(rec["points"]) == 30


def test_the_stated_scope_names_each_runs_accounting_and_space():
    h = {name: "\n".join(stated_scopes.header(name)) for name in stated_scopes.STATED}
    for acc in ("coexplore", "timeloop", "zigzag"):
        assert f"#   {acc}: edp over divisor tilings, {acc} accounting, bypass searched" in h["exact_accountings.txt"]
    assert "systolic IS dataflow" in h["mapper_codesign.txt"] and "no bypass choices" in h["mapper_codesign.txt"]
    for name in set(h) - {"exact_accountings.txt", "mapper_codesign.txt"}:
        assert f"# {PREFIX}: edp over divisor tilings, coexplore accounting, bypass searched, no constraints" in h[name]
