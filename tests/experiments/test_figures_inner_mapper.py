"""Issue 42's inner-mapper table (experiments/figures/benchmarks.py: inner_mapper_choice):
its rows are the records', and its verdict is the rule fixed before measuring, computed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from experiments.figures import benchmarks

ROOT = Path(__file__).resolve().parents[2]


def _copy(tmp_path: Path) -> None:
    for pair in benchmarks.INNER_MAPPER.values():
        for rel in pair:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, tmp_path / rel)


def test_the_rule_is_computed_from_the_records(tmp_path):
    _copy(tmp_path)
    assert "The rule holds on every workload" in benchmarks.inner_mapper_choice(tmp_path)
    rel = benchmarks.INNER_MAPPER["ResNet-50"][0]
    rec = json.loads((tmp_path / rel).read_text())
    rec["summary"]["anytime"]["spearman"] = 0.9                     # ranks the designs worse than the rule allows
    (tmp_path / rel).write_text(json.dumps(rec))
    text = benchmarks.inner_mapper_choice(tmp_path)
    assert "does not hold on every workload: the search keeps 3 M nodes" in text
    assert "| ResNet-50 | fast default (40,000 nodes) | 1.006, 0.999, 1.021 | 37 % | 0.900 | yes | 12.7 |" in text

