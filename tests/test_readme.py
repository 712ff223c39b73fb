"""The README's promises: its Python example runs verbatim; its commands exist."""

from __future__ import annotations

import os
import re
import sqlite3
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


def test_python_example_is_short_and_runs_as_a_file(tmp_path):
    """Saved as a file and run with ``python FILE`` as a user would: the example has no
    ``if __name__ == "__main__":`` guard and runs its study on two worker processes,
    which must not run the script again (``python -c`` would hide that)."""
    code = python_example()
    assert len(code.strip().splitlines()) < 20
    assert "__main__" not in code
    (tmp_path / "example.py").write_text(code)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    with sqlite3.connect(tmp_path / "runs" / "readme.db") as db:
        statuses = dict(db.execute("SELECT status, COUNT(*) FROM trials GROUP BY status"))
    assert "FAILED" not in statuses and "RUNNING" not in statuses, statuses
    assert sum(statuses.values()) == 100, statuses
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


def test_every_command_is_in_the_readme_and_the_cli_guide():
    """A command a user cannot find is not there for them: each command the CLI registers
    is named in the README's command block and in docs/guide/cli.md's."""
    import typer.main

    from experiments.cli import app

    commands = sorted(typer.main.get_command(app).commands)
    assert {"run", "validate", "show", "map"} <= set(commands)
    block = re.search(r"## Command line\s+```bash\n(.*?)```", README, re.S)
    assert block, "README lost its command block"
    guide = (ROOT / "docs" / "guide" / "cli.md").read_text()
    for text, where in ((block.group(1), "README.md"), (guide, "docs/guide/cli.md")):
        named = set(re.findall(r"coexplore ([a-z-]+(?: \| [a-z-]+)*)", text))
        flat = {c for n in named for c in n.split(" | ")}
        assert [c for c in commands if c not in flat] == [], where
