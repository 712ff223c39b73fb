"""experiments.benchmarks.zigzag_compare: ZigZag's cost-model rate through .venv-zigzag.

The fast tests need no ZigZag: a missing interpreter or a failing run gives None and a
reason, never an exception. The slow test runs the real benchmark in ``.venv-zigzag``
(``make zigzag-env``) with a short budget and skips, saying why, when that env is absent.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from experiments.benchmarks.zigzag_compare import (
    DEFAULT_PYTHON,
    last_json,
    zigzag_rate,
    zigzag_run,
)


def test_missing_interpreter_gives_none_and_a_reason(tmp_path: Path, caplog):
    missing = tmp_path / "no-such-venv" / "bin" / "python"
    with caplog.at_level(logging.WARNING, logger="experiments.benchmarks.zigzag_compare"):
        assert zigzag_rate(timeout_s=5, python=missing) is None
    assert "make zigzag-env" in caplog.text

    result, reason = zigzag_run(timeout_s=5, python=missing)
    assert result is None
    assert reason is not None and str(missing) in reason


def test_failing_run_gives_none_not_an_exception():
    # the main venv's python has no zigzag: the script fails, zigzag_rate says None
    result, reason = zigzag_run(timeout_s=60, python=sys.executable, seconds=0.1, loma_seconds=0)
    assert result is None
    assert reason is not None and "status" in reason
    assert zigzag_rate(timeout_s=60, python=sys.executable, seconds=0.1, loma_seconds=0) is None


def test_last_json_takes_the_last_object_line():
    out = 'log line\n{"a": 1}\nWARNING: {not json\n{"cost_model_evals_per_s": 2.5}\n'
    assert last_json(out) == {"cost_model_evals_per_s": 2.5}
    assert last_json("nothing here\n[1, 2]\n") is None


@pytest.mark.slow
def test_zigzag_rate_is_positive(caplog):
    if not DEFAULT_PYTHON.exists():
        pytest.skip(f"{DEFAULT_PYTHON} is absent: run `make zigzag-env` to measure ZigZag")
    # short budget: 1 s of cost-model calls, one LOMA search with lpf_limit 5 (120 orderings)
    with caplog.at_level(logging.WARNING, logger="experiments.benchmarks.zigzag_compare"):
        result = zigzag_rate(
            timeout_s=180, seconds=1.0, loma_seconds=0, max_mappings=32, lpf_limit=5
        )
    assert result is not None, caplog.text
    assert result["zigzag_version"] == "3.9.1"
    assert result["cost_model_evals_per_s"] > 0
    assert result["n"] > 0 and result["seconds"] >= 1.0
    assert result["loma_evals_per_s"] is not None and result["loma_evals_per_s"] > 0
    assert isinstance(result["what"], str) and result["what"]
