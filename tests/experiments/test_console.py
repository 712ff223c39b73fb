"""The console shows progress and results; library warnings go to the log (--verbose)."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import torch
from typer.testing import CliRunner

from experiments.cli import app
from tests.experiments.test_cli import GOOD

runner = CliRunner()
NOISE = "a library complains about something you cannot change"


def _config(tmp_path, name):
    text = GOOD.format(db=tmp_path / f"{name}.db", out=tmp_path / name).replace(
        "study_evaluators:bowl", "study_evaluators:warns").replace("n_trials: 20", "n_trials: 4")
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_warnings_go_to_the_log_unless_verbose(tmp_path):
    warnings.simplefilter("always")  # every run warns, however often this process warned before
    quiet = runner.invoke(app, ["run", str(_config(tmp_path, "q")), "--no-progress"])
    assert quiet.exit_code == 0, quiet.output
    assert NOISE not in quiet.output
    assert "report:" in quiet.output and (tmp_path / "q" / "report.html").exists()
    log = tmp_path / "q" / "run.log"
    assert f"log:            {log}" in quiet.output
    assert NOISE in log.read_text()
    loud = runner.invoke(app, ["--verbose", "run", str(_config(tmp_path, "v")), "--no-progress"])
    assert loud.exit_code == 0, loud.output
    assert NOISE in loud.output
    loud2 = runner.invoke(app, ["run", str(_config(tmp_path, "w")), "--no-progress", "-v"])
    assert NOISE in loud2.output
    assert not [h for h in logging.getLogger().handlers
                if str(getattr(h, "baseFilename", "")).endswith("run.log")]  # closed after the run


def test_acquisition_jitter_is_logged_not_printed(caplog):
    from linear_operator.utils.warnings import NumericalWarning

    from optimizer.bo.acquisition import score

    def acqf(x):
        warnings.warn("A not p.d., added jitter of 1.0e-08 to the diagonal", NumericalWarning,
                      stacklevel=1)
        return torch.zeros(x.shape[0], dtype=torch.float64)

    with warnings.catch_warnings(record=True) as shown, caplog.at_level(logging.INFO):
        warnings.simplefilter("always")
        out = score(acqf, np.zeros((600, 2)), np.full(600, 0.5), chunk=256)
    assert np.allclose(out, np.log(0.5))
    assert not [w for w in shown if issubclass(w.category, NumericalWarning)]
    assert any("jitter in 3 of 3 candidate chunks" in r.getMessage() for r in caplog.records)
