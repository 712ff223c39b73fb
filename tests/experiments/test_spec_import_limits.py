"""Spec files that blow up, through ``coexplore map``: the Timeloop, ZigZag and AccelForge
importers end every hostile value in one ``error:`` line naming the key, with status 2,
within a CPU-time bound -- never a traceback, a hang or an overflow.

Before: ``size: 9**9**9`` in an AccelForge spec was an OverflowError traceback, ``1/0`` a
ZeroDivisionError, a 200 kB product a RecursionError; ZigZag's ``bandwidth_max: 0`` a
ZeroDivisionError; a Timeloop ``global_cycle_seconds`` or ERT energy that is not a
number a ValueError naming no key; a Timeloop file was read by PyYAML's pure-Python
loader with no bound on alias expansion or nesting, and its errors spanned several lines.
"""

from __future__ import annotations

import contextlib
import signal
import textwrap

import pytest
import yaml
from typer.testing import CliRunner

from experiments.cli import app
from tests.accelerators.test_interop_accelforge import MATMUL, THREE_LEVEL
from tests.accelerators.test_interop_zigzag import toy
from tests.experiments.test_map_command import PROBLEM, TL_ARCH, TL_ERT

runner = CliRunner()
CPU_LIMIT_S = 10.0
"""CPU seconds one ``map`` call may take here (a good one takes well under one)."""


class _Slow(Exception):
    pass


def _on_prof(signum, frame):
    raise _Slow(f"one map call used more than {CPU_LIMIT_S} s of CPU")


@contextlib.contextmanager
def _cpu_limit():
    old = signal.signal(signal.SIGPROF, _on_prof)
    signal.setitimer(signal.ITIMER_PROF, CPU_LIMIT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


ZIGZAG = yaml.safe_dump(toy(), sort_keys=False, default_flow_style=None)
FILES = {"timeloop": (TL_ARCH, PROBLEM), "accelforge": (THREE_LEVEL, MATMUL), "zigzag": (ZIGZAG, PROBLEM)}
HUGE = ['9**9**9', '10**10**10', '2**100000000', '1/0', '0**-1', '(-8)**0.5', '1e308*10',
        "(" * 3000 + "1" + ")" * 3000, "-" * 100_000 + "1", "1*" * 200_000 + "1"]

CASES = [  # (format, file, text replaced, replacement, what the error must name)
    *[("accelforge", "arch", "size: 64 * 8", f"size: '{v}'", "'LocalBuffer' size") for v in HUGE],
    *[("accelforge", "arch", "energy: 1e-12, latency: 0, bits", f"energy: '{v}', latency: 0, bits",
       "'GlobalBuffer' read energy") for v in HUGE[:7]],
    ("accelforge", "arch", "{name: X, fanout: 4}", "{name: X, fanout: '9**9**9'}", "fanout 'X'"),
    ("accelforge", "arch", "area: 1e-6", "area: 1e400", "'GlobalBuffer' area"),
    ("accelforge", "problem", "0 <= m < 128", "0 <= m < 9**9**9", "iteration_space_shape.m"),
    ("accelforge", "problem", "{All: 8}", "{All: '2**9999'}", "bits_per_value"),
    ("accelforge", "problem", "{All: 8}", "{All: 1e400}", "bits_per_value"),
    ("timeloop", "arch", "global_cycle_seconds: 2e-9", "global_cycle_seconds: '9**9**9'",
     "global_cycle_seconds"),
    ("timeloop", "arch", "{depth: 256,", "{depth: '9**9**9',", "attribute depth"),
    ("timeloop", "arch", "{depth: 256,", "{depth: 1" + "0" * 5000 + ",", ":"),   # file:line: YAML
    ("timeloop", "ert", "{name: read, energy: 6.0}", "{name: read, energy: '9**9**9'}", "energy"),
    ("timeloop", "ert", "{name: read, energy: 6.0}", "{name: read, energy: .nan}", "energy"),
    ("timeloop", "problem", "instance: {C: 4,", "instance: {C: '9**9**9',", "instance.C"),
    # a 100 kB name echoed back: the line keeps its start and end (experiments.cli._clip)
    ("timeloop", "arch", "name: buffer", "name: " + "b" * 100_000, "characters cut"),
    ("zigzag", "arch", "r_cost: 1.0", "r_cost: '9**9**9'", "memories.reg_w.r_cost"),
    ("zigzag", "arch", "r_cost: 1.0", "r_cost: 1e400", "memories.reg_w.r_cost"),
    ("zigzag", "arch", "bandwidth_max: 8", "bandwidth_max: 0", "bandwidth_max"),
    ("zigzag", "arch", "size: 8192", "size: '9**9**9'", "memories.buf.size"),
    ("zigzag", "arch", "unit_energy: 0.5", "unit_energy: '1/0'", "unit_energy"),
]


def _map(tmp_path, fmt: str, which: str, old: str, new: str):
    arch, problem = FILES[fmt]
    texts = {"arch": arch, "problem": problem, "ert": TL_ERT}
    assert old in texts[which], (fmt, which, old)
    texts[which] = texts[which].replace(old, new, 1)
    for name, text in texts.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    argv = ["map", str(tmp_path / "arch.yaml"), str(tmp_path / "problem.yaml"), "-o", str(tmp_path / "m.yaml")]
    if fmt == "timeloop":
        argv += ["--ert", str(tmp_path / "ert.yaml")]
    with _cpu_limit():
        return runner.invoke(app, argv)


def _error_line(r) -> str:
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    lines = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and r.output.strip() == lines[0], r.output[:2000]
    assert len(lines[0]) <= 1100, lines[0][:200]
    return lines[0]


@pytest.mark.parametrize("fmt, which, old, new, names", CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[3][:24]}" for c in CASES])
def test_a_value_that_blows_up_is_one_line_naming_its_key(tmp_path, fmt, which, old, new, names):
    r = _map(tmp_path, fmt, which, old, new)
    assert r.exit_code == 2, (r.exit_code, r.output[:2000], r.exception)
    assert names in _error_line(r)


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_the_files_as_given_still_map(tmp_path, fmt):
    r = _map(tmp_path, fmt, "arch", "", "")
    assert r.exit_code == 0, r.output


BOMB = textwrap.dedent("""\
    a: &a [x, x, x, x, x, x, x, x, x, x]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
    d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
    f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
    g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
    """)


@pytest.mark.parametrize("fmt, which, old, new, says", [
    ("timeloop", "arch", "architecture:\n", BOMB + "architecture:\n", "expands to more than"),
    ("timeloop", "arch", "  nodes:\n", "  nodes: &n\n  - *n\n  - ", "recursive data is not allowed"),
    ("accelforge", "arch", "arch:\n", BOMB + "arch:\n", "expands to more than"),
    ("zigzag", "arch", "name: toy\n", BOMB + "name: toy\n", "expands to more than"),
    ("timeloop", "problem", "problem:\n", "problem:\n  version: 0.4\n  version: 0.4\n", "duplicate key"),
])
def test_yaml_bombs_and_cycles_in_spec_files_are_refused_with_file_and_line(tmp_path, fmt, which, old, new, says):
    r = _map(tmp_path, fmt, which, old, new)
    assert r.exit_code == 2, (r.output[:2000], r.exception)
    line = _error_line(r)
    assert says in line and f"{which}.yaml:" in line
