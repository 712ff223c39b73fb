"""The coexplore CLI and YAML study configs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from design_space import ConfigError
from experiments.cli import app
from experiments.config import load_config, load_config_text

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

GOOD = """\
study: cli
storage: sqlite:///{db}
output: {out}
seed: 3
space:
  parameters:
    - {{name: x, type: real, low: -3.0, high: 3.0}}
    - {{name: y, type: integer, low: 0, high: 4}}
  constraints:
    - {{name: band, expr: "x > -2.5"}}
evaluator: tests.experiments.study_evaluators:bowl
objectives: {{f1: min, f2: min}}
optimizer: random
budget: {{n_trials: 20, workers: 1, executor: inline}}
"""


def write(tmp_path: Path, text: str | None = None) -> Path:
    cfg = tmp_path / "study.yaml"
    cfg.write_text(text or GOOD.format(db=tmp_path / "cli.db", out=tmp_path / "out"))
    return cfg


def test_run_status_export_plot(tmp_path):
    cfg = write(tmp_path)
    r = runner.invoke(app, ["run", str(cfg), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "Pareto front (feasible):" in r.output
    front_csv = tmp_path / "out" / "pareto_front.csv"
    assert f"pareto front:   {front_csv}" in r.output
    assert (tmp_path / "out" / "pareto_front.png").stat().st_size > 1000
    front = pd.read_csv(front_csv)
    assert len(front) >= 1 and set(front["status"]) == {"COMPLETE"}

    # same command again: resumes, adds nothing (budget is a total)
    r = runner.invoke(app, ["run", str(cfg), "--no-progress"])
    assert "20 finished trial(s), target 20" in r.output
    # more trials through the flag
    r = runner.invoke(app, ["run", str(cfg), "--no-progress", "--n-trials", "25", "--resume"])
    assert r.exit_code == 0, r.output

    db = str(tmp_path / "cli.db")
    r = runner.invoke(app, ["status", db])
    assert r.exit_code == 0 and "study 'cli'" in r.output and "complete 25" in r.output

    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"front.{fmt}"
        r = runner.invoke(app, ["export", db, "--pareto", "--format", fmt, "-o", str(out)])
        assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "front.json").read_text())[0]["status"] == "COMPLETE"
    assert len(pd.read_parquet(tmp_path / "front.parquet")) == len(pd.read_csv(tmp_path / "front.csv"))

    r = runner.invoke(app, ["plot", f"sqlite:///{db}", "-o", str(tmp_path / "plots")])
    assert r.exit_code == 0, r.output
    for name in ("pareto_front.png", "history.png", "parallel_coordinate.png"):
        assert (tmp_path / "plots" / name).exists()


def test_user_errors_are_one_line_without_traceback(tmp_path):
    cfg = write(tmp_path, GOOD.format(db=tmp_path / "e.db", out=tmp_path / "o").replace("optimizer: random", "optimizer: bayes"))
    r = runner.invoke(app, ["run", str(cfg)])
    assert r.exit_code == 2
    assert "study.yaml:13: optimizer.name: unknown optimizer 'bayes'" in r.output
    assert "Traceback" not in r.output
    r = runner.invoke(app, ["status", str(tmp_path / "missing.db")])
    assert r.exit_code == 2 and "no such study storage" in r.output
    assert not (tmp_path / "missing.db").exists()
    r = runner.invoke(app, ["export", "mysql://x/y", "-o", str(tmp_path / "x.csv")])
    assert r.exit_code == 2 and "mysql" in r.output
    r = runner.invoke(app, ["run", str(write(tmp_path)), "--resume", "--study", "other"])
    assert r.exit_code == 2 and "--resume: no study 'other'" in r.output
    r = runner.invoke(app, ["status", str(tmp_path / "cli.db"), "--study", "nope"])
    assert r.exit_code == 2 and "'nope'" in r.output and "Traceback" not in r.output


CONFIG_ERRORS = [
    ("study: x\n", None, "missing required key 'space'"),
    (GOOD.replace("seed: 3", "seed: three"), "seed", "valid integer"),
    (GOOD.replace("objectives: {{f1: min, f2: min}}", "objectives: {{f1: minimise}}"), "objectives.f1", "'min' or 'max'"),
    (GOOD.replace("budget: {{n_trials: 20", "budget: {{n_trials: 0"), "budget.n_trials", "greater than 0"),
    (GOOD.replace("study: cli", "study: cli\nstudyy: 2"), "studyy", "unknown key 'studyy'"),
    (GOOD.replace("low: 0, high: 4", "low: 5, high: 4"), "space.parameters[1].low", "low (5) > high (4)"),
    (GOOD.replace("study_evaluators:bowl", "study_evaluators.bowl"), "evaluator.function", "expected 'module:function'"),
    (GOOD.replace("study_evaluators:bowl", "study_evaluators:bowl2"), "evaluator.function", "has no attribute 'bowl2'"),
]


@pytest.mark.parametrize(("text", "key", "fragment"), CONFIG_ERRORS)
def test_config_errors_name_key_and_line(tmp_path, text, key, fragment):
    with pytest.raises(ConfigError) as e:
        load_config_text(text.format(db=tmp_path / "c.db", out=tmp_path) if "{db}" in text else text)
    assert fragment in str(e.value)
    if key:
        assert e.value.key == key
        assert e.value.line is not None


def test_shipped_configs_validate():
    demo = load_config(ROOT / "experiments" / "configs" / "demo.yaml")
    assert demo.config.objectives == {"edp_uj_ms": "min"}
    assert demo.config.pareto == {"energy_uj": "min", "latency_ms": "min"}
    # the area budget prunes the raw product of the hardware parameters
    raw = demo.space.cardinality(constrained=False)
    assert 0 < demo.space.cardinality() < raw == 5 * 5 * 3 * 7 * 7 * 7 * 4
    r = runner.invoke(app, ["validate", str(ROOT / "experiments" / "configs" / "demo.yaml")])
    assert r.exit_code == 0 and "ok: study 'systolic-resnet50'" in r.output
    for cfg in (ROOT / "experiments" / "configs").glob("*.yaml"):
        r = runner.invoke(app, ["validate", str(cfg)])
        assert r.exit_code == 0, (cfg, r.output)  # meloppr.yaml's cora ships with coexplore


def test_pareto_view_of_other_metrics(tmp_path):
    text = GOOD.format(db=tmp_path / "p.db", out=tmp_path / "out").replace(
        "objectives: {{f1: min, f2: min}}".format(), "objectives: {f1: min}\npareto: {f1: min, size_mm2: min}")
    cfg = write(tmp_path, text)
    r = runner.invoke(app, ["run", str(cfg), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "Pareto front of f1, size_mm2 (feasible):" in r.output
    front = pd.read_csv(tmp_path / "out" / "pareto_front.csv")
    pts = front[["metrics_f1", "metrics_size_mm2"]].to_numpy()
    for i in range(len(pts)):  # mutually non-dominated over the report metrics
        assert not any((pts[j] <= pts[i]).all() and (pts[j] < pts[i]).any() for j in range(len(pts)))
    out = tmp_path / "f2.csv"
    r = runner.invoke(app, ["export", str(tmp_path / "p.db"), "--pareto-of", "f2:max", "-o", str(out)])
    assert r.exit_code == 0, r.output
    best = pd.read_csv(out)
    trials = pd.read_csv(tmp_path / "out" / "trials.csv")
    assert best["metrics_f2"].max() == trials["metrics_f2"].max()


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "coexplore"
    assert exe.exists()
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0 and "run" in out.stdout and "export" in out.stdout
