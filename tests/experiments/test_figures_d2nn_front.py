"""The D2NN co-design front figure (issue 45 item 2: the prose's 10 violating trials and
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
