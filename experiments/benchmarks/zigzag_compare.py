"""ZigZag's cost-model throughput, measured in the same run as ours (standard library only).

ZigZag (``zigzag-dse==3.9.1``) lives in its own environment, ``.venv-zigzag`` (``make
zigzag-env``), so that its dependency tree never meets coexplore's pins. This module runs
:mod:`experiments.benchmarks.zigzag_costmodel` with that environment's interpreter as a
subprocess and returns the JSON object the script prints last::

    from experiments.benchmarks.zigzag_compare import zigzag_rate

    zz = zigzag_rate()  # None when .venv-zigzag is missing or the run fails (reason logged)
    if zz is not None:
        zz["cost_model_evals_per_s"], zz["loma_evals_per_s"]

``zigzag_run`` does the same and also returns why there is no result. From the shell::

    python -m experiments.benchmarks.zigzag_compare [--seconds 5] [--python PATH]

prints the JSON line, or the reason and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PYTHON = ROOT / ".venv-zigzag" / "bin" / "python"
SCRIPT = Path(__file__).resolve().with_name("zigzag_costmodel.py")

logger = logging.getLogger(__name__)


def _tail(text: str | bytes | None, lines: int = 15) -> str:
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return "\n".join((text or "").strip().splitlines()[-lines:])


def last_json(stdout: str) -> dict[str, Any] | None:
    """The last stdout line that is a JSON object."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def zigzag_run(
    timeout_s: float = 300,
    *,
    python: str | os.PathLike[str] | None = None,
    seconds: float = 5.0,
    loma_seconds: float = 5.0,
    max_mappings: int = 256,
    lpf_limit: int = 6,
) -> tuple[dict[str, Any] | None, str | None]:
    """Run the ZigZag benchmark; ``(result, None)`` on success, ``(None, reason)`` otherwise.

    ``python`` is the interpreter of the ZigZag environment (default ``.venv-zigzag``);
    ``seconds`` / ``loma_seconds`` are the script's minimum timing budgets (LOMA always
    completes at least one search; ``lpf_limit`` 5 instead of 6 makes that search ~6x
    shorter); ``timeout_s`` bounds the whole subprocess.
    """
    interpreter = Path(python) if python is not None else DEFAULT_PYTHON
    if not interpreter.exists():
        return None, f"ZigZag interpreter {interpreter} not found (run `make zigzag-env`)"
    if not SCRIPT.exists():
        return None, f"benchmark script {SCRIPT} not found"
    cmd = [
        str(interpreter),
        str(SCRIPT),
        "--seconds",
        str(seconds),
        "--loma-seconds",
        str(loma_seconds),
        "--max-mappings",
        str(max_mappings),
        "--lpf-limit",
        str(lpf_limit),
    ]
    # the ZigZag venv must see its own site-packages only, never ours
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired as exc:
        return None, f"ZigZag benchmark timed out after {timeout_s:g} s: {_tail(exc.stderr)}"
    except OSError as exc:
        return None, f"could not run {interpreter}: {exc}"
    if proc.returncode != 0:
        return None, f"ZigZag benchmark exited with status {proc.returncode}: {_tail(proc.stderr)}"
    result = last_json(proc.stdout)
    if result is None:
        return None, f"ZigZag benchmark printed no JSON result: {_tail(proc.stdout)}"
    rate = result.get("cost_model_evals_per_s")
    if not isinstance(rate, int | float) or rate <= 0:
        return None, f"ZigZag benchmark reported no positive rate: {result}"
    return result, None


def zigzag_rate(
    timeout_s: float = 300,
    *,
    python: str | os.PathLike[str] | None = None,
    seconds: float = 5.0,
    loma_seconds: float = 5.0,
    max_mappings: int = 256,
    lpf_limit: int = 6,
) -> dict[str, Any] | None:
    """ZigZag's single-core cost-model throughput (the benchmark's JSON object), or None --
    never an exception -- when the environment is absent or the run fails; the reason is
    logged as a warning (use :func:`zigzag_run` to get it back). Arguments as there."""
    result, reason = zigzag_run(
        timeout_s,
        python=python,
        seconds=seconds,
        loma_seconds=loma_seconds,
        max_mappings=max_mappings,
        lpf_limit=lpf_limit,
    )
    if result is None:
        logger.warning("no ZigZag rate: %s", reason)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--python", default=None, help=f"ZigZag interpreter (default {DEFAULT_PYTHON})"
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--loma-seconds", type=float, default=5.0)
    parser.add_argument("--max-mappings", type=int, default=256)
    parser.add_argument("--lpf-limit", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args(argv)
    result, reason = zigzag_run(
        args.timeout,
        python=args.python,
        seconds=args.seconds,
        loma_seconds=args.loma_seconds,
        max_mappings=args.max_mappings,
        lpf_limit=args.lpf_limit,
    )
    if result is None:
        print(reason, file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
