"""The co-design benchmark's table (experiments/figures/benchmarks.py: mapper_codesign) on a
made-up rows file: its figures are the rows', per space and workload; a file without rows
or without a field is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.figures import benchmarks
from experiments.figures.records import RecordError


def _row(space: str, workload: str, cpu_s: float, proven: bool, at05: float, gap: float = 0.0) -> dict:
    return {"space": space, "point": "p", "workload": workload, "layer": "conv1", "cpu_s": cpu_s, "nodes": 10,
            "proven": proven, "gap": 0.0 if proven else gap, "anytime": {"0.1": 2.0, "0.5": at05, "2.0": 1.0}}


def _write(root: Path, rows: list[dict], head: dict | None = None) -> None:
    path = root / benchmarks.MAPPER_CODESIGN
    path.parent.mkdir(parents=True, exist_ok=True)
    head = head or {"settings": {"max_nodes": 3000000, "time_limit_s": None, "no_screen": False},
                    "stated_scopes": SCOPE}
    path.write_text("\n".join(json.dumps(x) for x in [head, *rows]) + "\n")


SCOPE = ["# proof scope (stated after the run):", "# proofs and bounds cover: edp over divisor tilings"]
ROWS = [_row("shi-iso", "dqn", 0.1, True, 1.0), _row("shi-iso", "dqn@32", 40.0, False, 1.3, 0.25),
        _row("demo", "dqn", 0.3, True, 1.01), _row("demo", "resnet50", 0.2, True, 1.05)]


def test_the_table_is_the_rows(tmp_path):
    _write(tmp_path, ROWS)
    text = benchmarks.mapper_codesign(tmp_path)
    assert text.startswith("4 layer maps recorded")
    assert "--max-nodes 3000000" in text and "with its top-level screen" in text and "3,000,000 nodes" in text
    assert "| all | 4 | 3 (75.0 %) | 0.25 | 34.04 | 40.0 | 50.0 % | 25.0 % |" in text
    assert "| Shi et al. iso-resource | 2 | 1 (50.0 %) | 20.05 | 38.00 | 40.0 | 50.0 % | 25.0 % |" in text
    assert "| the demo's systolic space | 2 | 2 (100.0 %) | 0.25 | 0.29 | 0.3 | 50.0 % | -- |" in text
    assert "| DQN, batch 1 | 2 | 2 (100.0 %) | 0.20 | 0.29 | 0.3 | 100.0 % | -- |" in text
    assert "| Shi et al. free-resource |" not in text and "| BERT" not in text     # no rows, no line
    assert "Proof scope, stated after the run from its settings" in text
    assert "proofs and bounds cover: edp over divisor tilings." in text
    caption = text.split("\n\n")[0]     # the claims ("proven", "the optimum") and their space in one paragraph
    assert "of the optimum where proven" in caption and "proofs and bounds cover" in caption


def test_a_changed_row_changes_the_table(tmp_path):
    _write(tmp_path, ROWS)
    before = benchmarks.mapper_codesign(tmp_path)
    _write(tmp_path, [*ROWS[:1], _row("shi-iso", "dqn@32", 2.0, True, 1.0), *ROWS[2:]])
    after = benchmarks.mapper_codesign(tmp_path)
    assert after != before and "| all | 4 | 4 (100.0 %) |" in after
    _write(tmp_path, ROWS, {"settings": {"max_nodes": 3000000, "no_screen": True}, "stated_scopes": SCOPE})
    assert "without its top-level screen" in benchmarks.mapper_codesign(tmp_path)


def test_a_rows_file_without_what_the_table_needs_is_refused(tmp_path):
    with pytest.raises(RecordError, match="not found"):
        benchmarks.mapper_codesign(tmp_path)
    _write(tmp_path, [])
    with pytest.raises(RecordError, match="no layer map"):
        benchmarks.mapper_codesign(tmp_path)
    _write(tmp_path, ROWS, {"settings": {"max_nodes": 3000000, "no_screen": False}})
    with pytest.raises(RecordError, match="states no proof scope"):         # "proven" over no stated space
        benchmarks.mapper_codesign(tmp_path)
    bad = dict(ROWS[0])
    del bad["anytime"]
    _write(tmp_path, [bad])
    with pytest.raises(RecordError, match="anytime"):
        benchmarks.mapper_codesign(tmp_path)


def test_readmes_summary_says_which_targets_the_rows_meet(tmp_path):
    """The README paragraph's target verdicts are computed from the rows: fast, proven rows
    meet every target, one slow unproven map fails exactly the targets it breaks."""
    import shutil

    src = Path(__file__).resolve().parents[2] / benchmarks.MAPPER_OPTIMALITY
    (tmp_path / benchmarks.MAPPER_OPTIMALITY).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, tmp_path / benchmarks.MAPPER_OPTIMALITY)
    fast = [_row("shi-iso", "dqn", 0.1, True, 1.0) for _ in range(40)]
    _write(tmp_path, fast)
    text = benchmarks.mapper_summary(tmp_path)
    assert "targets met: every map proven, median at most 0.2 s" in text and "not met" not in text
    assert "proves 40 (100.0 %)" in text and "on Eyeriss v1" in text
    _write(tmp_path, [*fast, _row("shi-iso", "dqn@32", 40.0, False, 1.3, 0.25)])
    text = benchmarks.mapper_summary(tmp_path)
    assert "not met: every map proven, maximum at most 30 s" in text
    assert "met: median at most 0.2 s, 95th percentile at most 3 s, within 2 % at 0.5 s on at least 95 %" in text


def test_the_fast_default_table_states_its_records_scopes_and_refuses_none(tmp_path):
    import shutil

    src = Path(__file__).resolve().parents[2] / benchmarks.MAPPER_FAST_DEFAULT
    dst = tmp_path / benchmarks.MAPPER_FAST_DEFAULT
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    text = benchmarks.mapper_fast_default(tmp_path)
    assert "Proven = over the space the record's `scopes` state: [shi-iso, shi-free, eyeriss: edp over divisor " \
           "tilings, coexplore accounting, bypass searched, no constraints;" in text
    rec = json.loads(dst.read_text())
    rec["scopes"] = []
    dst.write_text(json.dumps(rec))
    with pytest.raises(RecordError, match="scopes list is empty"):
        benchmarks.mapper_fast_default(tmp_path)
