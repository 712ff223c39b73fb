"""Issue 43: mistakes caught before a study spends its budget, and a CLI like Optuna's
(version, listing and deleting studies, completion, choices in --help, one meaning of -o)."""

from __future__ import annotations

import importlib.metadata
import re
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from experiments.cli import app
from tests.experiments.test_cli import GOOD, write

runner = CliRunner()

SPATIAL = """\
study: hw
storage: sqlite:///{db}
output: {out}
space:
  parameters:
    - {{name: pe_x, type: power_of_two, low: 4, high: 16}}
    - {{name: {glb}, type: ordinal, values: [32, 64]}}
{constraints}evaluator:
  function: nested
  options: {{accelerator: spatial, workload: "resnet50[1:2]", mapper: {mapper}}}
objectives: {{edp_uj_ms: min}}
budget: {{n_trials: 4, workers: 1, executor: inline}}
"""


def spatial(tmp_path: Path, glb: str = "glb_kib", constraints: str = "", mapper: str = "heuristic") -> Path:
    cfg = tmp_path / "hw.yaml"
    cfg.write_text(SPATIAL.format(db=tmp_path / "hw.db", out=tmp_path / "out", glb=glb,
                                  constraints=constraints, mapper=mapper))
    return cfg


def one_error_line(r) -> str:
    lines = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert r.exit_code == 2 and len(lines) == 1 and "Traceback" not in r.output, r.output
    return lines[0]


# ------------------------------------------------------------------ item 2: before the budget
def test_a_misspelt_hardware_key_stops_validate_and_run(tmp_path):
    cfg = spatial(tmp_path, glb="glb_kb")
    for cmd in (["validate", str(cfg)], ["run", str(cfg), "--no-progress"]):
        line = one_error_line(runner.invoke(app, cmd))
        assert "unknown keys 'glb_kb' (did you mean 'glb_kib'?)" in line
    assert not (tmp_path / "hw.db").exists()           # run stopped before creating the study


def test_validate_builds_and_maps_a_sampled_design(tmp_path):
    r = runner.invoke(app, ["validate", str(spatial(tmp_path))])
    assert r.exit_code == 0, r.output
    assert "hardware: 16 of 16 sampled designs build as SpatialArray" in r.output
    assert "mapping: HeuristicMapper mapped 'layer1.0.conv1' on the first design" in r.output


def test_a_constraint_needing_a_missing_column_stops_validate_and_run(tmp_path):
    cons = ("  constraints:\n    - {name: area, function: "
            "\"tests.experiments.study_evaluators:spatial_area_ok\"}\n")
    cfg = spatial(tmp_path, constraints=cons)
    for cmd in (["validate", str(cfg)], ["run", str(cfg), "--no-progress"]):
        line = one_error_line(runner.invoke(app, cmd))
        assert "constraint 'area'" in line and "'pe_y'" in line
    assert not (tmp_path / "hw.db").exists()


def test_a_layer_no_design_can_hold_stops_validate_and_run(tmp_path):
    """Row-stationary keeps a 3-weight filter row in each PE (layer1.0.conv2 is 3 x 3);
    a space of 1- and 2-weight RFs has no design that can map it."""
    text = spatial(tmp_path, mapper="{name: exact, constraints: row-stationary}").read_text()
    text = text.replace("glb_kib, type: ordinal, values: [32, 64]", "rf_w_words, type: ordinal, values: [1, 2]")
    text = text.replace("resnet50[1:2]", "resnet50[2:3]")
    cfg = tmp_path / "rs.yaml"
    cfg.write_text(text)
    for cmd in (["validate", str(cfg)], ["run", str(cfg), "--no-progress"]):
        line = one_error_line(runner.invoke(app, cmd))
        assert re.search(r"layer 'layer1.0.conv2' cannot be mapped on any of the 16 sampled designs: "
                         r"level 'RF' is [12] words too small for W", line), line


@pytest.mark.parametrize("bad", ["sqlite//x.db", "mysql:/bad", "notadatabase"])
def test_storage_strings_that_are_neither_url_nor_database_file_are_refused(tmp_path, monkeypatch, bad):
    monkeypatch.chdir(tmp_path)
    for cmd in (["run", str(write(tmp_path)), "--storage", bad, "--no-progress"], ["status", bad]):
        line = one_error_line(runner.invoke(app, cmd))
        assert repr(bad) in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.yaml"]   # no directory, no database


def test_workers_zero_is_refused(tmp_path):
    r = runner.invoke(app, ["run", str(write(tmp_path)), "--workers", "0", "--no-progress"])
    assert r.exit_code == 2 and "--workers" in r.output and "greater than or equal to 1" in r.output
    assert not (tmp_path / "cli.db").exists()


def test_an_all_infeasible_initial_design_stops_run_with_the_reasons(tmp_path):
    text = GOOD.format(db=tmp_path / "inf.db", out=tmp_path / "out").replace(
        "study_evaluators:bowl", "study_evaluators:always_infeasible").replace("n_trials: 20", "n_trials: 40")
    r = runner.invoke(app, ["run", str(write(tmp_path, text)), "--no-progress"])
    line = one_error_line(r)
    assert "all 10 trials of the initial design are infeasible or failed" in line
    assert re.search(r"infeasible: \d+ x needs more (rows|columns), \d+ x needs more (rows|columns)", line)
    with sqlite3.connect(tmp_path / "inf.db") as db:
        assert db.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 10   # not 40
    r = runner.invoke(app, ["status", str(tmp_path / "inf.db")])
    assert r.exit_code == 0, r.output
    assert "infeasible trials, most common reasons:" in r.output
    assert re.search(r"\d+ x needs more rows", r.output) and re.search(r"\d+ x needs more columns", r.output)


def test_did_you_mean_for_unknown_names(tmp_path):
    cfg = write(tmp_path)
    line = one_error_line(runner.invoke(app, ["run", str(cfg), "--optimizer", "randm", "--no-progress"]))
    assert "did you mean 'random'?" in line
    line = one_error_line(runner.invoke(app, ["validate", str(write(tmp_path, GOOD.format(
        db=tmp_path / "c.db", out=tmp_path).replace("seed: 3", "sed: 3")))]))
    assert "unknown key 'sed' (did you mean 'seed'?)" in line
    runner.invoke(app, ["run", str(write(tmp_path)), "--no-progress"])
    line = one_error_line(runner.invoke(app, ["status", str(tmp_path / "cli.db"), "--study", "clii"]))
    assert "did you mean 'cli'?" in line


def test_the_config_folder_is_importable(tmp_path, monkeypatch):
    """An evaluator module next to the config, run from another folder, without
    PYTHONPATH=. (a module name no other test uses, so nothing imported it before)."""
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "i43_local_model.py").write_text("def evaluate(p):\n    return {'f1': p['x'] ** 2, 'f2': p['y']}\n")
    text = GOOD.format(db=tmp_path / "loc.db", out=tmp_path / "out").replace(
        "tests.experiments.study_evaluators:bowl", "i43_local_model:evaluate")
    (folder / "study.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["run", str(folder / "study.yaml"), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "complete 20" in r.output


# ------------------------------------------------------------------ item 5: the CLI
def test_version():
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == f"coexplore {importlib.metadata.version('coexplore')}"


def test_list_and_delete_studies(tmp_path):
    cfg = write(tmp_path)
    assert runner.invoke(app, ["run", str(cfg), "--no-progress"]).exit_code == 0
    assert runner.invoke(app, ["run", str(cfg), "--no-progress", "--study", "other", "--n-trials", "3"]).exit_code == 0
    db = str(tmp_path / "cli.db")
    r = runner.invoke(app, ["studies", db])
    assert r.exit_code == 0, r.output
    rows = r.output.splitlines()
    assert rows[0].split() == ["study", "trials", "by", "status", "objectives", "optimizer"]
    assert rows[1].split()[:3] == ["cli", "20", "complete"] and rows[2].split()[:3] == ["other", "3", "complete"]
    r = runner.invoke(app, ["delete-study", db, "--study", "other"], input="n\n")
    assert r.exit_code == 1 and "nothing deleted" in r.output
    r = runner.invoke(app, ["delete-study", db, "--study", "other", "--yes"])
    assert r.exit_code == 0 and "deleted study 'other' (3 trial(s))" in r.output
    assert [ln.split()[0] for ln in runner.invoke(app, ["studies", db]).output.splitlines()[1:]] == ["cli"]
    line = one_error_line(runner.invoke(app, ["delete-study", db, "--study", "other", "--yes"]))
    assert "no study named 'other'" in line


def test_completion_and_help_show_choices_not_bool():
    r = runner.invoke(app, ["--help"])
    assert "--install-completion" in r.output and "--show-completion" in r.output and "--version" in r.output
    from optimizer.registry import available_optimizers

    r = runner.invoke(app, ["run", "--help"])
    assert "<process|inline|auto|dask>" in r.output
    flat = " ".join(r.output.split())
    assert "optimizer, one of: " + ", ".join(available_optimizers()) in flat
    for cmd in ("run", "status", "studies", "delete-study", "export", "plot", "report", "validate",
                "dashboard", "calibrate", "map"):
        out = runner.invoke(app, [cmd, "--help"]).output
        assert "<bool>" not in out, (cmd, out)


def test_fixed_choices_are_listed_and_bad_values_refused_by_name():
    """Every option with a fixed set of values lists it in --help (from the library's own
    table, so the two cannot drift) and a value outside it is refused naming the option."""
    from evaluators.loopnest.conventions import ACCOUNTING
    from experiments.export import FORMATS
    from mappers.base import OBJECTIVES

    cases = [("map", "--accounting", list(ACCOUNTING)), ("map", "--objective", list(OBJECTIVES)),
             ("export", "--format", list(FORMATS)), ("calibrate", "--device", ["cpu", "cuda"]),
             ("calibrate", "--statistic", ["median", "best"]), ("show", "--format", ["text", "json", "timeloop"])]
    for cmd, opt, choices in cases:
        out = runner.invoke(app, [cmd, "--help"]).output
        assert f"{opt} <{'|'.join(choices)}>" in out, (cmd, opt, out)
    args = {"map": ["a.yaml", "b.yaml"], "export": ["x.db"], "calibrate": [], "show": ["x.db", "0"]}
    for cmd, opt, _ in cases:
        r = runner.invoke(app, [cmd, *args[cmd], opt, "nonsense"])
        assert r.exit_code == 2, (cmd, opt, r.output)
        assert f"Invalid value for '{opt}'" in r.output and "'nonsense'" in r.output, (cmd, opt, r.output)


def test_output_defaults_are_the_study_output_folder(tmp_path, monkeypatch):
    """-o means one thing: export, plot and report write where run wrote (the config's
    output folder), under the names run gives the files."""
    cfg = write(tmp_path)
    assert runner.invoke(app, ["run", str(cfg), "--no-progress"]).exit_code == 0
    out = tmp_path / "out"
    for f in ("trials.csv", "pareto_front.csv", "report.html", "pareto_front.png"):
        (out / f).unlink()
    monkeypatch.chdir(tmp_path)                      # not where the files go
    db = str(tmp_path / "cli.db")
    r = runner.invoke(app, ["export", db])
    assert r.exit_code == 0 and r.output.strip() == str(out / "trials.csv"), r.output
    r = runner.invoke(app, ["export", db, "--pareto"])
    assert r.exit_code == 0 and r.output.strip() == str(out / "pareto_front.csv")
    r = runner.invoke(app, ["report", db])
    assert r.exit_code == 0 and r.output.strip() == str(out / "report.html")
    r = runner.invoke(app, ["plot", db])
    assert r.exit_code == 0 and str(out / "pareto_front.png") in r.output
    for f in ("trials.csv", "pareto_front.csv", "report.html", "pareto_front.png"):
        assert (out / f).exists()
