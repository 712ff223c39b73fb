"""docs/COMING_FROM.md's worked example runs as written: ``coexplore map`` on the example
Timeloop files prints the figures the page quotes, its Python step writes a spec that reads
back equal, and its study config's evaluator scores the imported design as the map command
did."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from experiments.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "COMING_FROM.md").read_text()
EXAMPLE = ROOT / "experiments" / "examples" / "from_timeloop"


def _workdir(tmp_path: Path) -> Path:
    d = tmp_path / "from_timeloop"
    shutil.copytree(EXAMPLE, d)
    return d


def test_the_map_step_prints_what_the_page_says(tmp_path):
    d = _workdir(tmp_path)
    cwd = os.getcwd()
    os.chdir(d)
    try:
        r = CliRunner().invoke(app, ["map", "arch.yaml", "problem.yaml", "--ert", "ERT.yaml", "-o", "best.map.yaml"])
    finally:
        os.chdir(cwd)
    assert r.exit_code == 0, r.output
    quoted = re.search(r"```\n(result: .*?)\n```", DOC, re.S).group(1).splitlines()
    for line in quoted[:3]:   # the figures and the scope of the proof
        assert line in r.output, (line, r.output)
    assert (d / "best.map.yaml").read_text().startswith("mapping:")


def test_the_python_step_and_the_study_config(tmp_path):
    d = _workdir(tmp_path)
    code = re.search(r"\*\*2\. The design as a coexplore spec\.\*\*\s+```python\n(.*?)```", DOC, re.S).group(1)
    out = subprocess.run([sys.executable, "-c", code], cwd=d, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "('reg', 8, 16)" in out.stdout and (d / "my_arch.yaml").exists()

    from experiments.config import load_config
    from experiments.study import resolve_evaluator

    cfg = load_config(d / "study.yaml")
    ev = resolve_evaluator(cfg.config.evaluator.function, cfg.config.evaluator.options)
    m = ev({"buffer_words": 4096, "pes": 8}).metrics      # the design as given in arch.yaml
    # the map step's figures: 106450 pJ, 384 cycles at 1 GHz
    assert math.isclose(m["energy_uj"], 106450e-6, rel_tol=1e-5)
    assert math.isclose(m["latency_ms"], 384e-6, rel_tol=1e-12)
    small = ev({"buffer_words": 256, "pes": 4}).metrics
    assert small["latency_ms"] > m["latency_ms"]          # half the PEs: the layer takes longer
