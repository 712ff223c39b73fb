"""experiments/validation/timeloop_exercises.py on two of the exercises' runs committed
in data/timeloop_runs (README there): their processed architecture, problem and mapping
give Timeloop's cycles, every read and write, and its energy under
``accounting="timeloop"``; a run the importer refuses is reported with its reason."""

from __future__ import annotations

import shutil
from pathlib import Path

from experiments.validation.timeloop_exercises import markdown, run_all

DATA = Path(__file__).parent / "data" / "timeloop_runs"


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "exercises"
    for name in ("04_kp", "00_1level"):
        shutil.copytree(DATA / name, root / "workspace" / "runs" / name)
    broken = root / "workspace" / "runs" / "sparse"
    shutil.copytree(DATA / "04_kp", broken)
    text = (broken / "parsed-processed-input.yaml").read_text()
    (broken / "parsed-processed-input.yaml").write_text(text.replace("densities: {}", "densities: {Inputs: 0.5}"))
    return root


def test_the_reference_runs_are_reproduced_exactly(tmp_path):
    result = run_all(_checkout(tmp_path))
    rows = {r["run"]: r for r in result["runs"]}
    assert set(rows) == {"runs/04_kp", "runs/00_1level", "runs/sparse"}
    kp, one = rows["runs/04_kp"], rows["runs/00_1level"]
    # Timeloop's stats.txt: 3072 cycles (16 MACs, 49152 computes), 48 cycles for the 1-level conv1d
    assert (kp["status"], kp["cycles"], kp["ref_cycles"]) == ("exact", 3072, 3072)
    assert (one["status"], one["cycles"], one["ref_cycles"]) == ("exact", 48, 48)
    assert kp["counts_compared"] == 18 and kp["worst_count_rel_err"] == 0.0
    assert kp["energy_abs_err_pj"] <= kp["energy_rounding_pj"] and kp["ref_energy_pj"] > 7e5
    assert rows["runs/sparse"]["status"] == "refused" and "density 0.5" in rows["runs/sparse"]["reason"]
    text = markdown(result)
    assert "3 runs: 2 evaluated, 2 of them exact" in text and "| runs/sparse | timeloop-model | refused |" in text
