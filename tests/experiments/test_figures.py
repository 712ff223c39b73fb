"""Figures rendered from records (issue 45 item 1): the committed docs equal what their
records give; a changed record or a hand edit inside a block is caught, naming the file,
the line and the figure; malformed markers and unknown names are errors; and the numbers
the renderers print are recomputed here from the per-seed values of the same records."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.figures import FIGURES, figure, render_tree
from experiments.figures.__main__ import main
from experiments.figures.blocks import MarkerError, find_blocks, replace_blocks
from experiments.figures.catalog import UnknownFigure

ROOT = Path(__file__).resolve().parents[2]
SHI = "docs/reproduction/results/shi2020/results.json"
SHI_DOC = "docs/reproduction/shi2020.md"


def test_the_committed_docs_equal_their_records():
    out = render_tree(ROOT, check=True)
    assert out.stale == [], "\n".join(out.stale)
    assert out.unused == [], f"figures quoted nowhere: {out.unused}"
    assert len(out.used) >= 8


def test_every_figure_names_records_that_exist_under_docs():
    # a committed study config is the one source outside docs/: a figure counted from it
    # (the demo space's size) is a function of the file, not of a run
    for fig in FIGURES.values():
        assert fig.records, fig.name
        for rel in fig.records:
            assert rel.startswith(("docs/", "experiments/configs/")) and (ROOT / rel).is_file(), (fig.name, rel)


def _tree(tmp_path: Path, *rels: str) -> Path:
    for rel in rels:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path


def _only_shi_blocks(root: Path) -> None:
    """Keep only the blocks whose records the tree holds (shi2020.md quotes benchmarks too)."""
    doc = root / SHI_DOC
    text = doc.read_text()
    for b in find_blocks(text):
        if b.name != "shi2020-decomposition":
            text = text.replace(f"<!-- figure: {b.name} -->\n{b.body}<!-- /figure -->\n", b.body)
    doc.write_text(text)


def test_a_changed_record_makes_the_check_fail_and_render_fix_it(tmp_path):
    root = _tree(tmp_path, SHI, SHI_DOC)
    _only_shi_blocks(root)
    assert render_tree(root, check=True).stale == []
    rec = json.loads((root / SHI).read_text())
    base = rec["workloads"]["resnet50"]["baseline"]["edp_uj_ms"]
    rec["workloads"]["resnet50"]["software_only"]["edp_uj_ms"] = base * (1 - 0.123)  # a rerun
    (root / SHI).write_text(json.dumps(rec))
    out = render_tree(root, check=True)
    assert len(out.stale) == 1
    assert out.stale[0].startswith(f"{SHI_DOC}:")
    assert "'shi2020-decomposition' differs" in out.stale[0]
    assert "−12.3 %" in out.stale[0] and "−8.6 %" in out.stale[0]
    assert "−12.3 %" not in (root / SHI_DOC).read_text()  # --check writes nothing
    render_tree(root, check=False)
    assert "| ResNet-50 | 1 | −12.3 % |" in (root / SHI_DOC).read_text()
    assert render_tree(root, check=True).stale == []


def test_a_hand_edit_inside_a_block_is_refused(tmp_path):
    root = _tree(tmp_path, SHI, SHI_DOC)
    _only_shi_blocks(root)
    doc = root / SHI_DOC
    doc.write_text(doc.read_text().replace("| −10.5 % ± 8.8 |", "| −18.0 % ± 8.8 |"))
    assert main(["render", "--check", "--root", str(root)]) == 1
    assert main(["render", "--root", str(root)]) == 0
    assert "| −10.5 % ± 8.8 |" in doc.read_text()


def test_marker_errors_name_the_line():
    with pytest.raises(MarkerError, match=r"f.md:1: figure 'a' is never closed"):
        find_blocks("<!-- figure: a -->\nx\n", "f.md")
    with pytest.raises(MarkerError, match=r"f.md:2: figure 'b' opens inside figure 'a'"):
        find_blocks("<!-- figure: a -->\n<!-- figure: b -->\n<!-- /figure -->\n", "f.md")
    with pytest.raises(MarkerError, match=r"f.md:2: '<!-- /figure -->' without an opening"):
        find_blocks("x\n<!-- /figure -->\n", "f.md")
    with pytest.raises(MarkerError, match="malformed"):
        find_blocks("<!-- figure: a b -->\n<!-- /figure -->\n", "f.md")


def test_replace_keeps_the_text_around_blocks():
    text = "head\n<!-- figure: a -->\nold\n<!-- /figure -->\nmid\n<!-- figure: b -->\n<!-- /figure -->\ntail\n"
    new = replace_blocks(text, lambda name: f"new {name}")
    assert new == (
        "head\n<!-- figure: a -->\nnew a\n<!-- /figure -->\nmid\n"
        "<!-- figure: b -->\nnew b\n<!-- /figure -->\ntail\n"
    )
    assert [b.body for b in find_blocks(new)] == ["new a\n", "new b\n"]


def test_unknown_figure_suggests_the_close_name(tmp_path, capsys):
    with pytest.raises(UnknownFigure, match="did you mean 'hasco-headline'"):
        figure("hasco-headlin")
    (tmp_path / "README.md").write_text("<!-- figure: hasco-headlin -->\n<!-- /figure -->\n")
    (tmp_path / "docs").mkdir()
    assert main(["render", "--check", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean 'hasco-headline'" in err[0]


def test_a_missing_record_is_an_error_naming_it(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("<!-- figure: hasco-headline -->\n<!-- /figure -->\n")
    assert main(["render", "--check", "--root", str(tmp_path)]) == 2
    assert "docs/reproduction/results/hasco/results.json not found" in capsys.readouterr().err


def _row(text: str, first: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.startswith(f"| {first} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_shi_decomposition_recomputed_from_the_per_seed_changes():
    """Mean and sample std (ddof = 1) from each seed's EDP change, not the stored summary."""
    rec = json.loads((ROOT / SHI).read_text())
    text = figure("shi2020-decomposition").render(ROOT)
    s = rec["workloads"]["resnet50"]["both"]["iso"]["constrained-bo"]["edp_uj_ms"]
    base = rec["workloads"]["resnet50"]["baseline"]["edp_uj_ms"]
    changes = [v / base - 1 for v in s["values"]]
    assert changes == pytest.approx(s["changes"])
    want = (
        f"{100 * statistics.mean(changes):.1f} % ± {100 * statistics.stdev(changes):.1f}".replace(
            "-", "−"
        )
    )
    assert _row(text, "ResNet-50")[3] == want == "−10.5 % ± 8.8"


def test_d2nn_accuracy_recomputed_from_the_per_seed_values():
    rec = json.loads((ROOT / "docs/reproduction/results/d2nn/results.json").read_text())
    text = figure("d2nn-single-task").render(ROOT)
    seeds = rec["single"]["d2nn"]["mnist"]["per_seed"]
    want = f"**{100 * statistics.mean(seeds):.2f} % ± {100 * statistics.stdev(seeds):.2f}**"
    assert want == "**97.09 % ± 0.27**" and want in text
    mt = figure("d2nn-multitask").render(ROOT)
    row = rec["multitask"]["rows"][3]
    acc = [s["acc_mnist"] for s in row["per_seed"]]
    assert (
        _row(mt, "3")[1]
        == f"{100 * statistics.mean(acc):.2f} ± {100 * statistics.stdev(acc):.2f} %"
    )


def test_hasco_headline_recomputed_from_the_pairs():
    rec = json.loads((ROOT / "docs/reproduction/results/hasco/results.json").read_text())
    medians = [p["ratio_stats"]["median"] for p in rec["pairs"]]
    text = figure("hasco-headline").render(ROOT)
    assert f"**{statistics.median(medians):.2f}x**" in text
    assert f"| {sum(m >= 1.25 for m in medians)} of {len(medians)} |" in text


HASCO = "docs/reproduction/results/hasco/results.json"


def test_hasco_energy_and_noise_counts_the_pairs_own_intervals(tmp_path):
    from experiments.figures.records import RecordError

    rec = json.loads((ROOT / HASCO).read_text())
    text = figure("hasco-energy-noise").render(ROOT)
    sums = [p["metric_ratios"]["proxy"]["latency_ms"]["summary"] for p in rec["pairs"]]
    holds = sum(lo <= 1 <= hi for lo, hi in (s["ci"] for s in sums))
    lo, hi = rec["overall"]["metric_ratios"]["proxy"]["latency_ms"]["ci"]
    assert f"| **latency** | **{statistics.median(s['median'] for s in sums):.2f}x** [{lo:.2f}, {hi:.2f}]" in text
    assert f"| pairs whose intervals hold 1.00x (latency / energy / EDP) | {holds} / " in text
    # a summary that disagrees with the pairs is refused, naming the field
    root = _tree(tmp_path, HASCO)
    rec["overall"]["metric_ratios"]["proxy"]["energy_uj"]["pairs_ci_holds_1"] += 1
    (root / HASCO).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"metric_ratios\.proxy\.energy_uj\.pairs_ci_holds_1"):
        figure("hasco-energy-noise").render(root)
    del rec["overall"]["metric_ratios"]
    (root / HASCO).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match="--retable"):
        figure("hasco-energy-noise").render(root)


ENUM = "docs/reproduction/results/hasco-enumerate/results.json"


def test_hasco_ground_truth_recounts_the_optima_from_the_seeds(tmp_path):
    from experiments.figures.records import RecordError

    rec = json.loads((ROOT / ENUM).read_text())
    text = figure("hasco-ground-truth").render(ROOT)
    p = rec["pairs"][0]
    regrets = [m["regret"] for m in p["mobo_25"]["seeds"]]
    want = f"{statistics.median(regrets):.3f}x, {sum(x == 1.0 for x in regrets)} of {len(regrets)}"
    assert _row(text, p["workload"])[4] == want
    found = sum(m["regret"] == 1.0 for q in rec["pairs"] for m in q["mobo_25"]["seeds"])
    assert f"is the optimum in {found} of {sum(len(q['mobo_25']['seeds']) for q in rec['pairs'])} runs" in text
    root = _tree(tmp_path, ENUM)
    rec["pairs"][0]["mobo_25"]["found_optimum"] += 1
    (root / ENUM).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"mobo_25\.found_optimum is"):
        figure("hasco-ground-truth").render(root)


def test_the_command_line_check_passes_on_this_checkout():
    out = subprocess.run(
        [sys.executable, "-m", "experiments.figures", "render", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "all up to date" in out.stdout


def test_shi_run_hours_equal_the_sum_table_md_prints():
    """The headline's summed run time is the one ``coexplore reproduce shi2020`` wrote into
    table.md's first line (an independent record of the same sum)."""
    import re

    from experiments.figures.reproductions import recorded_hours

    table = (ROOT / "docs/reproduction/results/shi2020/table.md").read_text()
    want = re.search(r"summed over workers: ([0-9.]+) h", table).group(1)
    got = recorded_hours(json.loads((ROOT / SHI).read_text()))
    assert f"{got:.1f}" == want
    assert f"run wall time {want} h summed over the runs" in figure(
        "reproductions-headline"
    ).render(ROOT)


def test_a_changed_reading_refuses_to_render_the_old_sentence(tmp_path):
    from experiments.figures.records import RecordError
    from experiments.figures.reproductions import shi2020_row

    root = _tree(tmp_path, SHI)
    rec = json.loads((root / SHI).read_text())
    rec["workloads"]["resnet50"]["against_paper"]["reading"] = "met"
    (root / SHI).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"resnet50.against_paper.reading is 'met'"):
        shi2020_row(root)


def test_hasco_headline_lists_exactly_the_pairs_at_1_25x_or_more():
    rec = json.loads((ROOT / "docs/reproduction/results/hasco/results.json").read_text())
    text = figure("reproductions-headline").render(ROOT)
    big = [p for p in rec["pairs"] if p["ratio_median"] >= 1.25]
    assert f"{len(big)} of {len(rec['pairs'])} pairs at 1.25x or more" in text
    for p in big:
        assert f"/{p['intrinsic']} {p['ratio_median']:.2f}x" in text


def test_mapper_optimality_fields_agree_and_the_table_counts_them():
    rec = json.loads((ROOT / "docs/benchmarks/mapper_optimality.json").read_text())
    text = figure("mapper-optimality").render(ROOT)
    for arch, rows in rec["rows"].items():
        for x in rows:  # the ratio fields are the ratios of the stored objectives
            assert x["heuristic_ratio"] == pytest.approx(x["heuristic"] / x["exact"])
        within = sum(x["heuristic"] <= 1.05 * x["exact"] for x in rows)
        assert f"| {within} of {len(rows)} |" in text, arch


def test_meloppr_headline_recomputed_from_the_graphs():
    from experiments.figures.meloppr import at_most

    rec = json.loads((ROOT / "docs/reproduction/results/meloppr/results.json").read_text())
    text = figure("reproductions-headline").render(ROOT)
    mem = [
        rec["graphs"][g]["cpu"]["per_ns"]["1"]["mem_reduction_nx"]
        for g in ("citeseer", "cora", "pubmed")
    ]
    assert "memory at 1 next-stage node " + " / ".join(f"{m:.2f}x" for m in mem) in text
    assert at_most(3.885e-16) == "4e-16" and at_most(1.0e-3) == "2e-3" and at_most(9.5) == "1e1"
    assert max(rec["exactness"].values()) < 4e-16 and "to < 4e-16" in text


MELOPPR = "docs/reproduction/results/meloppr/results.json"
MELOPPR_RERUN = "docs/reproduction/results/meloppr/fpga_rtl.json"


def test_meloppr_fpga_figures_are_the_rtl_model_with_v1_beside():
    rec = json.loads((ROOT / MELOPPR).read_text())
    assert rec["fpga_rerun"]["cycle_model"] == "rtl"
    text = figure("meloppr-fpga-speedup").render(ROOT)
    factor = figure("meloppr-cycle-factor").render(ROOT)
    for g in ("citeseer", "cora", "pubmed"):
        new, old = rec["graphs"][g]["fpga"]["per_ns"]["1"], rec["graphs"][g]["fpga_v1"]["per_ns"]["1"]
        assert f"| {new['speedup_vs_scipy']:.1f}x ({old['speedup_vs_scipy']:.1f}x) |" in text
        # the decomposition's factor is the ratio of the two speedups, and multiplies out
        f = new["speedup_vs_nx"] / old["speedup_vs_nx"]
        assert f"| {g} | 1 |" in factor and f"| {old['speedup_vs_nx']:.1f}x | {f:.3f} | {new['speedup_vs_nx']:.1f}x |" in factor
        assert f < 1  # the RTL takes more cycles than v1 counted on these queries
    headline = figure("reproductions-headline").render(ROOT)
    assert "cycle model checked against the authors' RTL" in headline


def test_meloppr_host_reading_refuses_a_record_that_breaks_it(tmp_path):
    from experiments.figures.meloppr import cycle_factor
    from experiments.figures.records import RecordError

    root = _tree(tmp_path, MELOPPR, MELOPPR_RERUN)
    rec = json.loads((root / MELOPPR).read_text())
    rec["graphs"]["citeseer"]["fpga"]["per_ns"]["13"]["speedup_vs_nx_networkx_host"] = 4.0  # above the paper's 3.1x
    (root / MELOPPR).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"citeseer ns = 13.*rewrite item 3"):
        cycle_factor(root)
    rec.pop("fpga_rerun")
    (root / MELOPPR).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match="not the rtl cycle model"):
        cycle_factor(root)
def test_d2nn_paper_scale_recomputed_from_its_record(tmp_path):
    """The N = 200 block's accuracy, CPU rate and full-epoch hours are the record's, and a
    record whose settings and value disagree is refused."""
    from experiments.figures.d2nn import PAPER_SCALE, paper_scale
    from experiments.figures.records import RecordError

    d = json.loads((ROOT / PAPER_SCALE).read_text())
    v = d["record"]["value"]
    text = paper_scale(ROOT)
    assert f"| test accuracy | **{100 * v['acc']:.2f} %** |" in text
    per_image = v["train_cpu_s"] / (v["train_images"] * d["record"]["settings"]["epochs"])
    assert f"{1e3 * per_image:.0f} ms CPU per image" in text
    assert f"| {per_image * 60_000 / 3600:.2f} CPU hours |" in text
    assert f"{v['propagation']['method'].upper()}, pad {v['propagation']['pad']}" in text
    d["record"]["settings"]["train_images"] += 1
    (tmp_path / PAPER_SCALE).parent.mkdir(parents=True)
    (tmp_path / PAPER_SCALE).write_text(json.dumps(d))
    with pytest.raises(RecordError, match="disagree"):
        paper_scale(tmp_path)


@pytest.mark.parametrize("flag", ["dqn", "resnet50", None])
def test_a_workload_without_search_records_shows_no_search_figure(flag, tmp_path):
    """The decomposition block and the REPRODUCTION.md headline print the withdrawal in
    place of a flagged workload's search figures (``search_records_missing``: DQN at
    batch 1 in the committed record), and the figures of every unflagged one."""
    from experiments.figures.shi2020 import WITHDRAWN

    committed = figure("reproductions-headline").render(ROOT)
    root = _tree(tmp_path, *figure("reproductions-headline").records)
    rec = json.loads((root / SHI).read_text())
    assert [k for k, v in rec["workloads"].items() if v.get("search_records_missing")] == ["dqn"]
    for k, v in rec["workloads"].items():
        v["search_records_missing"] = k == flag
    (root / SHI).write_text(json.dumps(rec))
    table = figure("shi2020-decomposition").render(root)
    head = figure("reproductions-headline").render(root)
    if flag == "dqn":
        assert head == committed
    label = {"dqn": ("DQN", "1 (acting)", "DQN at batch 1 −1.6 % → **"),
             "resnet50": ("ResNet-50", "1", "ResNet-50 −8.6 % → **")}
    for k, (name, batch, lead) in label.items():
        w = rec["workloads"][k]
        means = [
            f"{100 * w['both'][m]['constrained-bo']['edp_uj_ms']['change_mean']:.1f} %".replace("-", "−")
            for m in ("iso", "free")
        ]
        row = next(ln for ln in table.splitlines() if ln.startswith(f"| {name} | {batch} |"))
        short = f"{100 * w['against_paper']['shortfall_points']:.1f} points short"
        if k == flag:
            assert row.count(WITHDRAWN) == 2 and not any(m in row for m in means), row
            assert lead + WITHDRAWN + "**" in head and short not in head
            assert not any(lead + m in head for m in means)
        else:
            assert WITHDRAWN not in row and all(m in row for m in means), row
            assert lead + means[0] in head and short in head
    if flag is None:
        assert WITHDRAWN not in head and WITHDRAWN not in table


def test_the_demo_space_size_is_counted_from_its_config(tmp_path):
    from experiments.figures.benchmarks import DEMO_CONFIG, demo_space_size
    from experiments.figures.records import RecordError

    repo = Path(__file__).resolve().parents[2]
    text = (repo / DEMO_CONFIG).read_text()
    (tmp_path / DEMO_CONFIG).parent.mkdir(parents=True)
    # without the area budget every combination is legal: 5 x 5 x 3 x 7^3 x 4
    unconstrained = text.replace('    - {name: area_budget, function: "experiments.examples.systolic_codesign:within_area"}\n', "")
    assert unconstrained != text
    (tmp_path / DEMO_CONFIG).write_text(unconstrained.replace("  constraints:\n", ""))
    assert demo_space_size(tmp_path).startswith("The space holds 102,900 legal hardware points")
    (tmp_path / DEMO_CONFIG).write_text(text.replace("values: [4, 8, 16, 32]", "values: [4, 8]"))
    constrained_half = demo_space_size(tmp_path)
    assert constrained_half != demo_space_size(repo) and "legal hardware points" in constrained_half
    (tmp_path / DEMO_CONFIG).unlink()
    with pytest.raises(RecordError, match=r"demo\.yaml not found"):
        demo_space_size(tmp_path)


QNET = "docs/reproduction/results/hasco-qnetwork/results.json"


def test_hasco_in_loop_sentence_recomputed_from_both_runs_pairs(tmp_path):
    """Issue 49 item 1: the Q-network run's median of pair medians (from its pairs), beside
    the committed run's medians of the same pairs; a subset pair missing from the committed
    run is refused, naming it."""
    from experiments.figures.records import RecordError

    q = json.loads((ROOT / QNET).read_text())
    main_pairs = {(p["workload"], p["intrinsic"]): p["ratio_stats"]["median"]
                  for p in json.loads((ROOT / HASCO).read_text())["pairs"]}
    subset = [tuple(x) for x in q["settings"]["pairs"]]
    text = figure("reproductions-headline").render(ROOT)
    in_loop = statistics.median(p["ratio_stats"]["median"] for p in q["pairs"])
    assert f"**{in_loop:.2f}x**, interval" in text
    assert f"against {statistics.median(main_pairs[x] for x in subset):.2f}x for the heuristic flow on the same " \
           f"{len(subset)} pairs" in text
    root = _tree(tmp_path, *figure("reproductions-headline").records)
    q["settings"]["pairs"].append(["no_such_net", "GEMM"])
    (root / QNET).write_text(json.dumps(q))
    with pytest.raises(RecordError, match="no_such_net"):
        figure("reproductions-headline").render(root)
