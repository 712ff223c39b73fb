"""Every committed run output under docs/ that says "proven" or "optimal" states the space
it covers (issue 45, item 3): printed by its run ("proofs and bounds cover"), or, for runs
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
from experiments.reproduce import shi2020
from experiments.search_quality import inner_feasibility
from experiments.validation import rs_baseline

DOCS = Path(__file__).resolve().parents[3] / "docs"
BENCH = DOCS / "benchmarks"
CLAIM = re.compile(r"\b(proven|optimal|optimality|optimum)\b", re.IGNORECASE)

NOT_RUN_TEXT: dict[str, str] = {
    ".md": "pages written by hand or rendered from records (experiments.figures), not a run's console output",
    ".json": "structured records: a proof is a field of a record, not a sentence a reader takes at its word",
    ".jsonl": "structured records, one JSON object a line, as .json (a rows file that proves states its scope in "
              "its first line's stated_scopes, which the figure renders: checked with the stated headers)",
    ".png": "images",
    ".py": "scripts kept beside a run's outputs (what was run, not what it printed)",
    ".sh": "scripts kept beside a run's outputs (what was run, not what it printed)",
}
"""The kinds of file under docs/ the rule leaves out, by suffix, with the reason. Every
other file, whatever its suffix (.txt, .log, .csv, one not seen yet), is a plain-text run
output the rule reads."""


def run_outputs() -> list[Path]:
    """The plain-text run outputs under docs/: every file but those :data:`NOT_RUN_TEXT` names."""
    return sorted(p for p in DOCS.rglob("*") if p.is_file() and p.suffix not in NOT_RUN_TEXT)


def rel(path: Path) -> str:
    """``path`` under docs/, as :data:`stated_scopes.STATED` and :data:`OTHER_SENSE` name it."""
    return path.relative_to(DOCS).as_posix()


OTHER_SENSE: dict[str, str] = {}
"""Outputs that say "optimal" (or "proven", "optimum") in a sense other than a mapper's
proof over a space, by path under docs/, with the reason; they need no scope line. None
now: every run output under docs/ that uses the words speaks of the exact mapper's proofs.
An entry must name a file that still uses the words (tested), so the list cannot outlive
its reason."""


def claims_without_scope(text: str) -> bool:
    """``text`` says proven/optimal but states no space the claim covers."""
    return bool(CLAIM.search(text)) and PREFIX not in text


def test_the_rule_catches_a_claim_without_a_scope_and_only_that():
    assert claims_without_scope("layer  proven\nconv1  True\n")
    assert claims_without_scope("EDP / optimum median 1.0\n")
    assert not claims_without_scope(f"{PREFIX}: edp over divisor tilings, ...\nlayer proven\n")
    assert not claims_without_scope("wall seconds per evaluation\n")
    assert not claims_without_scope("optimizer: constrained-bo\n")            # a word, not the claim


def test_the_rule_reads_every_plain_text_output_under_docs():
    outputs = {rel(p) for p in run_outputs()}
    assert {"benchmarks/exact_accountings.txt", "validation/rs_baseline.txt", "search_quality/inner_feasibility.txt",
            "reproduction/results/shi2020/run.log"} <= outputs
    assert any(p.endswith(".csv") for p in outputs)
    assert not any(p.endswith((".md", ".json")) for p in outputs)


@pytest.mark.parametrize("path", run_outputs(), ids=rel)
def test_every_committed_output_that_claims_a_proof_states_its_scope(path):
    if rel(path) in OTHER_SENSE:
        return
    assert not claims_without_scope(path.read_text(encoding="utf-8", errors="replace")), (
        f"{rel(path)} says proven/optimal but states no proof scope: print ProofScopes.lines() in the script's "
        "header (experiments/proof_scopes.py), or, for an output that cannot be rerun, add its "
        "settings to experiments/benchmarks/stated_scopes.STATED and run python -m "
        "experiments.benchmarks.stated_scopes")


def test_the_other_sense_list_names_files_that_use_the_words():
    for name, reason in OTHER_SENSE.items():
        assert reason and CLAIM.search((DOCS / name).read_text(encoding="utf-8")), name


def test_every_stated_header_is_the_computed_one_and_none_is_typed_by_hand():
    stamped = {rel(p) for p in [*run_outputs(), *DOCS.rglob("*.jsonl")] if stated_scopes.stated_lines(p)}
    assert stamped == set(stated_scopes.STATED), "a stated header without settings in STATED (typed by hand?)"
    for name in stated_scopes.STATED:
        path = DOCS / name
        got = stated_scopes.stated_lines(path)
        rest = (path.read_text(encoding="utf-8").split("\n", 1)[1] if path.suffix == ".jsonl"
                else stated_scopes.split_header(path.read_text(encoding="utf-8"))[1])
        assert got == stated_scopes.header(name), f"{name}: run python -m experiments.benchmarks.stated_scopes"
        assert got[0].startswith(stated_scopes.LABEL) and "not printed by the run" in got[0]
        assert PREFIX not in rest, f"{name} prints its own scope: it needs no stated header"
    assert stated_scopes.main(["--check"]) == 0


def test_a_header_is_written_once_in_place_of_an_old_one(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("# python -m x\nlayer proven\n")
    lines = stated_scopes.header("benchmarks/shi2020_final_nodes_dqn32.txt")
    assert stated_scopes.stamp(f, lines) and not stated_scopes.stamp(f, lines)
    assert f.read_text() == "\n".join(lines) + "\n# python -m x\nlayer proven\n"
    rows = tmp_path / "rows.jsonl"                 # JSON lines: the first line's stated_scopes
    rows.write_text('{"settings": {"max_nodes": 5}}\n{"proven": true}\n')
    assert stated_scopes.stamp(rows, lines) and not stated_scopes.stamp(rows, lines)
    assert stated_scopes.stated_lines(rows) == lines and rows.read_text().endswith('\n{"proven": true}\n')
    assert json.loads(rows.read_text().split("\n")[0])["settings"] == {"max_nodes": 5}
    stated_scopes.stamp(f, [lines[0], "# proofs and bounds cover, per x:", "#   a: ...", "#   b: ..."])
    assert stated_scopes.stamp(f, lines) and f.read_text() == "\n".join(lines) + "\n# python -m x\nlayer proven\n"


def test_a_file_is_named_by_its_path_under_docs_or_its_unique_name():
    key = "validation/rs_baseline.txt"
    for name in (key, f"docs/{key}", str(DOCS / key), "rs_baseline.txt"):
        assert stated_scopes.key_of(name) == key, name
    assert stated_scopes.key_of("no_such.txt") == "no_such.txt"
    with pytest.raises(SystemExit):
        stated_scopes.main(["--check", "no_such.txt"])


def _header_command(name: str) -> str:
    return "\n".join(ln for ln in (BENCH / name).read_text(encoding="utf-8").splitlines()
                     if ln.startswith("#") and not ln.startswith(stated_scopes.LABEL))


def test_the_stated_settings_are_the_runs():
    """The settings in STATED against what each run recorded: its header's command, the
    JSON it wrote (settings, point labels, points), the rows it printed."""
    st = {k.removeprefix("benchmarks/"): v for k, v in stated_scopes.STATED.items()}
    # exact_accountings: the header's time limit; the rows' accountings
    assert "--time-limit 300" in _header_command("exact_accountings.txt")
    args = exact_accountings.parser().parse_args(list(st["exact_accountings.txt"].argv))
    rows = (BENCH / "exact_accountings.txt").read_text().splitlines()
    assert {ln.split()[1] for ln in rows if ln.startswith(("conv2 ", "fc1 "))} == set(args.accountings.split(","))
    # mapper_codesign and mapper_local_search: the JSON's settings and its rows' design points
    for name, script in (("mapper_codesign", mapper_codesign), ("mapper_local_search", mapper_local_search)):
        rec = json.loads((BENCH / f"{name}.json").read_text())
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
    text = (BENCH / "mapper_codesign_shi_iso0_all_workloads.txt").read_text().splitlines()
    printed = [ln.split()[:3] for ln in text if ln.split() and ln.split()[0] in ("shi-iso", "shi-free", "demo")]
    layers = {w: [x.name for x in ls] for w, ls in mapper_codesign.setup(args)[2].items()}
    assert [(w, lay[:27]) for _, w, lay in printed] == [(w, n[:27]) for w, ns in layers.items() for n in ns]
    assert {s for s, _, _ in printed} == {"shi-iso"} and len(mapper_codesign.chosen_designs(args)) == 1
    # the final-nodes point report: the header's command, word for word
    assert " ".join(st["shi2020_final_nodes_dqn32.txt"].argv).replace(
        stated_scopes.FINAL_POINT, f"'{stated_scopes.FINAL_POINT}'") in _header_command("shi2020_final_nodes_dqn32.txt")
    # the designs report: the JSON's workload, mode, seed, points and settings
    rec = json.loads((BENCH / "shi2020_inner_effort.json").read_text())
    args = shi2020_inner_effort.parser().parse_args(list(st["shi2020_inner_effort.txt"].argv))
    assert (args.workload, args.mode, args.seed) == (rec["workload"], rec["mode"], rec["seed"])
    assert shi2020_inner_effort.design_points(args) == rec["points"]
    assert shi2020_inner_effort.design_settings(args) == list(rec["rows"][0])
    # the Eyeriss layers report: the JSON's workload, layers and node limits
    rec = json.loads((BENCH / "shi2020_inner_effort_resnet50_layers.json").read_text())
    args = shi2020_inner_effort.parser().parse_args(list(st["shi2020_inner_effort_resnet50_layers.txt"].argv))
    assert args.eyeriss_layers and args.workload == rec["workload"]
    assert [x.name for x in shi2020_inner_effort.point_layers(shi2020_inner_effort.workload_spec(args), None)] \
        == [r["layer"] for r in rec["layers"]]
    assert [k for k in rec["layers"][0] if k != "layer"] == [*map(str, shi2020_inner_effort.LAYER_LIMITS), "none"]
    # the reuse run: the header's node limit is the JSON's, whose points the scope is computed from
    rec = json.loads((BENCH / "nested_reuse_dqn32.json").read_text())
    assert f"--max-nodes {rec['max_nodes']}" in _header_command("nested_reuse_dqn32.txt") and len(rec["points"]) == 30


def test_the_stated_settings_of_the_outputs_outside_benchmarks_are_the_runs():
    """rs_baseline, inner_feasibility and the Shi 2020 run log: the settings in STATED
    against what each run printed and recorded."""
    st = stated_scopes.STATED
    # rs_baseline: the objective its mapper section names, the layers of its rows, no
    # time limit (every search says optimal=True)
    text = (DOCS / "validation/rs_baseline.txt").read_text(encoding="utf-8")
    args = rs_baseline.parser().parse_args(list(st["validation/rs_baseline.txt"].argv))
    assert f"Exact mapper (objective {args.objective}):" in text and args.time_limit_s is None
    assert sorted({ln.split()[0] for ln in text.splitlines() if ln.startswith("CONV")}) == args.layers
    searches = re.findall(r"(?m)^  (CONV\d) (rs_opt|free_opt) .* optimal=(\w+)", text)
    assert {(layer, key) for layer, key, _ in searches} == {(la, k) for la in args.layers for k in ("rs_opt", "free_opt")}
    assert {ok for _, _, ok in searches} == {"True"}
    # inner_feasibility: its first line's budget and seeds, the JSON's layers, no node limit
    # (every reference optimal)
    rec = json.loads((DOCS / "search_quality/inner_feasibility.json").read_text())
    args = inner_feasibility.parser().parse_args(list(st["search_quality/inner_feasibility.txt"].argv))
    first = stated_scopes.split_header((DOCS / "search_quality/inner_feasibility.txt").read_text())[1].splitlines()[0]
    assert first.startswith(f"Eyeriss v1, budget {args.budget}, {args.seeds} seeds,")
    assert (args.budget, args.seeds, args.layers) == (rec["budget"], rec["seeds"], list(rec["layers"]))
    assert args.exact_max_nodes == 0 and all(r["exact_optimal"] for r in rec["layers"].values())
    # the Shi 2020 log: a scope for every best design results.json keeps, under the node
    # limit the log's searches ran with
    res = json.loads((DOCS / stated_scopes.SHI2020_RESULTS).read_text())
    scopes = shi2020.announced_scopes(res)
    keep = [p for tab in ("workloads", "ablation_table") for w in res[tab].values() for by in w["both"].values()
            for s in by.values() for p in s["best_points"]]
    assert len(scopes._rows) == len(keep) > 0
    assert res["settings"]["max_nodes"] == 3_000_000      # the search limit of the time (now MAX_NODES is 40,000)
    assert "the exact mapper at 3 M nodes per layer" in (DOCS / "reproduction/results/shi2020/run.log").read_text()


def test_the_stated_scope_names_each_runs_accounting_and_space():
    h = {name: "\n".join(stated_scopes.header(name)) for name in stated_scopes.STATED}
    for acc in ("coexplore", "timeloop", "zigzag"):
        assert f"#   {acc}: edp over divisor tilings, {acc} accounting, bypass searched" in \
            h["benchmarks/exact_accountings.txt"]
    for name in ("benchmarks/mapper_codesign.txt", "benchmarks/mapper_codesign_full.jsonl"):
        codesign = h[name]
        assert "systolic IS dataflow" in codesign and "no bypass choices" in codesign
        assert "#   shi-iso, shi-free, eyeriss: edp over divisor tilings, coexplore accounting, bypass searched" in codesign
    rs = h["validation/rs_baseline.txt"]
    assert "#   rs_opt: edp over divisor tilings, coexplore accounting, bypass searched, constraints row-stationary;" in rs
    assert "#   free_opt: edp over divisor tilings, coexplore accounting, bypass searched, no constraints;" in rs
    for name in set(h) - {"benchmarks/exact_accountings.txt", "benchmarks/mapper_codesign.txt",
                          "benchmarks/mapper_codesign_full.jsonl", "validation/rs_baseline.txt"}:
        assert f"# {PREFIX}: edp over divisor tilings, coexplore accounting, bypass searched, no constraints" in h[name]
