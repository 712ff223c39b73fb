"""The report-size benchmark (experiments/benchmarks/report_size.py): the study it
generates has the trials asked for, and its --json record holds what it timed."""

from __future__ import annotations

import json

import pytest


def test_record_holds_the_generated_study_and_the_timed_writes(tmp_path):
    from experiments.benchmarks import report_size

    out = tmp_path / "rec.json"
    res = report_size.main(["--trials", "40", "--repeats", "2", "--json", str(out)])
    rec = json.loads(out.read_text())
    assert rec["harness"] == "experiments.benchmarks.report_size" and rec["settings"]["trials"] == 40
    assert rec["rows"] == json.loads(json.dumps(res))
    counts = rec["rows"]["status_counts"]
    assert counts["COMPLETE"] + counts["INFEASIBLE"] == 40 and counts["RUNNING"] == 0
    runs = rec["rows"]["runs"]
    assert len(runs) == 2 and all(r["write_wall_s"] > 0 and r["write_cpu_s"] > 0 for r in runs)
    assert rec["rows"]["bytes"] == runs[-1]["bytes"] > 100_000   # a self-contained page (plotly inside)


def test_bad_sizes_are_refused(tmp_path):
    from experiments.benchmarks import report_size

    with pytest.raises(ValueError, match="trials must be at least 1, got 0"):
        report_size.generate(f"sqlite:///{tmp_path / 's.db'}", 0, 0)
    with pytest.raises(SystemExit):
        report_size.main(["--repeats", "0"])
