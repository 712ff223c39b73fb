"""Issue 45 item 2 figures. The D2NN co-design front figure (issue 45 item 2: the prose's 10 violating trials and
five-point front were the run before issue 47; the records say 9 and 6): its counts are
recomputed here from the trials' CSV, and a front CSV that disagrees with results.json is
refused, naming both files."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from experiments.figures import figure
from experiments.figures.d2nn import FRONT, RESULTS
from experiments.figures.records import RecordError
from experiments.figures.shi2020 import steps_cpu

ROOT = Path(__file__).resolve().parents[2]
TRIALS = "docs/reproduction/results/d2nn/codesign_trials.csv"


def test_the_front_figure_counts_what_the_trials_say():
    text = figure("d2nn-codesign-front").render(ROOT)
    trials = list(csv.DictReader((ROOT / TRIALS).open()))
    violating = sum(float(t["metrics_recognition"]) < 0.9 for t in trials)
    front = list(csv.DictReader((ROOT / FRONT).open()))
    assert (len(trials), violating, len(front)) == (20, 9, 6)
    assert f"{violating} of the {len(trials)} violate recognition ≥ 0.9" in text
    assert f"the feasible front has {len(front)} trials" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert sorted(int(r.split("|")[1]) for r in rows) == sorted(int(t["number"]) for t in front)
    assert all(float(t["metrics_recognition"]) >= 0.9 for t in front)   # the front is feasible


def test_a_front_that_disagrees_with_results_json_is_refused(tmp_path):
    for rel in (RESULTS, FRONT):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    lines = (tmp_path / FRONT).read_text().splitlines(keepends=True)
    (tmp_path / FRONT).write_text("".join(lines[:-1]))      # one front trial dropped
    with pytest.raises(RecordError, match=r"codesign_pareto_front\.csv has 5 rows"):
        figure("d2nn-codesign-front").render(tmp_path)


def test_shis_cpu_time_phrase_agrees_with_table_md():
    """The headline names both run times: wall time summed over workers and summed worker
    CPU time, and says the latter is not recorded exactly when table.md's own line does."""
    import json

    from experiments.figures.reproductions import recorded_cpu

    rec = json.loads((ROOT / "docs/reproduction/results/shi2020/results.json").read_text())
    hours, known, runs = recorded_cpu(rec)
    table = (ROOT / "docs/reproduction/results/shi2020/table.md").read_text().splitlines()[0]
    assert f"{hours:.1f} h over the {known} of {runs} searches that recorded it" in table
    text = figure("reproductions-headline").render(ROOT)
    assert "run wall time" in text and "summed worker CPU time" in text
    if known == 0:
        assert f"summed worker CPU time not recorded (none of its {runs} searches kept it)" in text


def test_the_commands_table_names_each_run_time_and_its_record(tmp_path):
    import json

    text = figure("reproductions-commands").render(ROOT)
    d2 = json.loads((ROOT / "docs/reproduction/results/d2nn/results.json").read_text())["compute"]
    assert f"CPU time {d2['cpu_hours']:.1f} h summed over the {d2['by_device']['cpu']} units" in text
    assert f"wall time {d2['wall_hours']:.1f} h summed over units" in text
    assert text.count("CPU time not recorded") == 3   # Shi's full run, MeLoPPR, HASCO
    cpu, known, n = steps_cpu(ROOT)    # the steps-only run's records keep theirs
    assert known == n > 0 and f"{cpu / 60:.1f} min of CPU time summed over its {n} records" in text and "about 4 h" not in text and "88 min" not in text
    # a rerun whose searches really ran makes the "all reused" sentence refuse to render
    rel = "docs/reproduction/results/hasco/results.json"
    for r in ("docs/reproduction/results/shi2020/results.json", "docs/reproduction/results/shi2020-steps/results.json",
              "docs/reproduction/results/meloppr/results.json", rel, "docs/reproduction/results/d2nn/results.json"):
        (tmp_path / r).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / r, tmp_path / r)
    rec = json.loads((tmp_path / rel).read_text())
    rec["settings"]["run_seconds"]["proxy-CONV-mobo-0"] = 3600.0
    (tmp_path / rel).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match="run_seconds are no longer all near 0"):
        figure("reproductions-commands").render(tmp_path)


def test_the_demo_search_figure_is_its_record(tmp_path):
    """index.md's BO-against-random sentence (typed by hand before, with no record) is the
    committed trials' best EDP, and a record whose summary disagrees with its rows is refused."""
    import json

    from experiments.figures.benchmarks import DEMO_SEARCH

    rec = json.loads((ROOT / DEMO_SEARCH).read_text())
    text = figure("demo-search").render(ROOT)
    for key, label in (("constrained-bo", "constrained BO"), ("random", "random search")):
        st = rec["studies"][key]
        best = min(t["edp_uj_ms"] for t in st["rows"] if t["status"] == "COMPLETE")
        assert f"{label}'s best EDP after {st['trials']} points is {round(best):,} µJ·ms" in text
        assert f"{st['elapsed_wall_s'] / 60:.1f} min elapsed wall time" in text
    assert (rec["studies"]["constrained-bo"]["trials"], rec["studies"]["random"]["trials"]) == (60, 120)
    rec["studies"]["random"]["best_edp_uj_ms"] /= 2
    (tmp_path / DEMO_SEARCH).parent.mkdir(parents=True)
    (tmp_path / DEMO_SEARCH).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match="best_edp_uj_ms or complete disagree"):
        figure("demo-search").render(tmp_path)


def test_the_resnet50_proof_time_is_its_records_sum_and_refuses_an_unproven_layer(tmp_path):
    """cost-model.md's and shi2020.md's "proving ResNet-50's layers takes ..." (typed by hand
    before, from no record) is mapper_optimality's exact_cpu_s / exact_s summed over its
    ResNet-50 rows on Eyeriss v1; a record with an unproven one is refused."""
    import json

    from experiments.figures.benchmarks import MAPPER_OPTIMALITY

    rec = json.loads((ROOT / MAPPER_OPTIMALITY).read_text())
    rows = [x for x in rec["rows"]["eyeriss_v1"] if x["network"] == "resnet50"]
    text = figure("resnet50-eyeriss-proof-time").render(ROOT)
    assert len(rows) == 24
    assert f"{sum(x['exact_cpu_s'] for x in rows):.1f} s of CPU time" in text
    assert f"{sum(x['exact_s'] for x in rows):.1f} s of wall time" in text
    # the claim states its space, from the record's scopes (issue 45 item 3)
    assert "proven optimal: edp over divisor tilings, coexplore accounting, bypass searched, no constraints" in text
    (tmp_path / MAPPER_OPTIMALITY).parent.mkdir(parents=True)
    unscoped = json.loads(json.dumps(rec))
    for sc in unscoped["scopes"]["eyeriss_v1"]:
        sc["applies_to"] = [n for n in sc["applies_to"] if n != "resnet50"]
    (tmp_path / MAPPER_OPTIMALITY).write_text(json.dumps(unscoped))
    with pytest.raises(RecordError, match=r"scopes\.eyeriss_v1 has 0 scopes for resnet50"):
        figure("resnet50-eyeriss-proof-time").render(tmp_path)
    rows[3]["optimal"] = False
    (tmp_path / MAPPER_OPTIMALITY).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match="1 ResNet-50 layers on eyeriss_v1 are not proven"):
        figure("resnet50-eyeriss-proof-time").render(tmp_path)


def test_shis_command_times_are_their_records_sums(tmp_path):
    """shi2020.md's run times of --eyeriss-layers, rs_baseline and inner_feasibility (typed
    "about 6 / 6 / 100 min" before) are sums of the fields their records keep; a changed
    record changes them, and an rs_baseline output without its ten timed searches is refused."""
    import json
    import re

    from experiments.figures import shi2020 as shi

    text = figure("shi2020-command-times").render(ROOT)
    eff = json.loads((ROOT / shi.INNER_EFFORT_LAYERS).read_text())
    cpu = sum(v["cpu_s"] for layer in eff["layers"] for k, v in layer.items() if k != "layer")
    assert f"{cpu / 60:.1f} min of CPU time summed over its 24 layers × 5 node limits" in text
    rs = [float(x) for x in re.findall(r"(?m)^\s+CONV\d (?:rs_opt|free_opt)\s+([0-9.]+) s", (ROOT / shi.RS_BASELINE).read_text())]
    assert len(rs) == 10 and f"{sum(rs) / 60:.1f} min of wall time summed over its 10 exact-mapper" in text
    feas = json.loads((ROOT / shi.INNER_FEASIBILITY).read_text())
    secs = [r["seconds"] for layer in feas["layers"].values() for runs in layer["searches"].values() for r in runs]
    secs += [layer["exact_s"] for layer in feas["layers"].values()]
    assert f"{sum(secs) / 60:.1f} min of wall time summed over its {len(secs)} searches" in text
    steps = json.loads((ROOT / shi.STEPS).read_text())
    assert f"{steps['wall_seconds_this_invocation'] / 60:.1f} min of wall time" in text
    for rel in figure("shi2020-command-times").records:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    feas["layers"][next(iter(feas["layers"]))]["exact_s"] += 600.0
    (tmp_path / shi.INNER_FEASIBILITY).write_text(json.dumps(feas))
    assert f"{(sum(secs) + 600) / 60:.1f} min of wall time" in figure("shi2020-command-times").render(tmp_path)
    out = tmp_path / shi.RS_BASELINE
    out.write_text("\n".join(ln for ln in out.read_text().splitlines() if "CONV5 free_opt" not in ln))
    with pytest.raises(RecordError, match="9 exact-mapper searches"):
        figure("shi2020-command-times").render(tmp_path)


def test_shis_rs_baseline_table_is_rs_baselines_output(tmp_path):
    """shi2020.md's row-stationary baseline table (typed before; its CONV5 free-opt time,
    25.4 s, was from another run than the committed output's 17.27 s) is read from
    rs_baseline's output: each ratio is the printed one, a changed output changes the
    table, and an output without a layer's EDP row or timed search is refused."""
    from experiments.figures import shi2020 as shi

    text = figure("shi2020-rs-baseline").render(ROOT)
    lines = text.splitlines()
    assert len(lines) == 2 + 5 + 1 and lines[-1].startswith("| network EDP (Σ energy × Σ latency) | ")
    out = (ROOT / shi.RS_BASELINE).read_text()
    for layer in ("CONV1", "CONV2", "CONV3", "CONV4", "CONV5"):
        edp = next(ln for ln in out.splitlines() if ln.startswith(f"{layer}  EDP")).split()
        rs_s = next(ln for ln in out.splitlines() if ln.strip().startswith(f"{layer} rs_opt")).split()[2]
        free_s = next(ln for ln in out.splitlines() if ln.strip().startswith(f"{layer} free_opt")).split()[2]
        row = next(ln for ln in lines if ln.startswith(f"| {layer} |")).split(" | ")
        assert row[1] == edp[-4] and row[2] == edp[-1], (row, edp)  # RS/TIII and free/RS
        assert row[-1] == f"{rs_s} / {free_s} |"
    (tmp_path / shi.RS_BASELINE).parent.mkdir(parents=True)
    (tmp_path / shi.RS_BASELINE).write_text(out.replace("CONV5 free_opt   17.27 s", "CONV5 free_opt   99.99 s"))
    assert "| 5.03 / 99.99 |" in figure("shi2020-rs-baseline").render(tmp_path)
    (tmp_path / shi.RS_BASELINE).write_text("\n".join(ln for ln in out.splitlines() if not ln.startswith("CONV3  EDP")))
    with pytest.raises(RecordError, match=r"no single CONV3 row 'EDP\.\.\.'"):
        figure("shi2020-rs-baseline").render(tmp_path)
    (tmp_path / shi.RS_BASELINE).write_text("\n".join(ln for ln in out.splitlines() if "CONV2 rs_opt" not in ln))
    with pytest.raises(RecordError, match="CONV2 lacks the seconds"):
        figure("shi2020-rs-baseline").render(tmp_path)
