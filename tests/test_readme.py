"""The README's promises: its Python example runs verbatim; its commands exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def python_example() -> str:
    m = re.search(r"## Python in under 20 lines\s+```python\n(.*?)```", README, re.S)
    assert m, "README lost its Python example"
    return m.group(1)


def test_python_example_is_short_and_runs(tmp_path):
    code = python_example()
    assert len(code.strip().splitlines()) < 20
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    front = pd.read_csv(tmp_path / "front.csv")
    assert len(front) >= 1
    assert {"metrics_energy_uj", "metrics_latency_ms", "params_rows"} <= set(front.columns)
    assert (tmp_path / "runs" / "readme.db").exists()


def test_readme_commands_match_makefile_and_ci():
    assert "make demo" in README and "make test" in README
    mk = (ROOT / "Makefile").read_text()
    assert re.search(r"^demo:", mk, re.M) and re.search(r"^test:", mk, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "experiments/configs/demo.yaml" in mk
