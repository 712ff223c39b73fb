"""Property-based fuzzing of the parsers that take text from users: the config/YAML
loader, the constraint-expression parser (and interpreter), the storage URL, and the
Timeloop / AccelForge / ZigZag spec importers of ``coexplore map`` (one number of an
example spec replaced by hostile arithmetic or YAML).

Every input must end in a result or in the project's own one-line error --
``ConfigError`` / ``SpaceDefinitionError`` / ``UnsatisfiableSpaceError`` for configs,
``SpaceDefinitionError`` for expressions, ``StorageError`` for storage URLs, a ``ValueError``
for spec files -- never
another exception, a hang, or memory beyond a bound. The properties run in a child
process that the test limits with ``resource.setrlimit``: its address space may grow by
:data:`CHILD_MEMORY_BYTES` after its imports (a blow-up is a ``MemoryError``, which fails
the property, instead of taking the machine down), every example gets
:data:`PER_EXAMPLE_CPU_S` seconds of CPU (``ITIMER_PROF``; over it, the example fails
with its input), and the whole child a CPU budget (``RLIMIT_CPU``; past it the kernel
stops it, for a hang inside C code that no Python signal handler interrupts).

The default suite runs a few dozen examples per target (a few CPU seconds in all); the
``slow`` tests run many more per target.

Besides "no crash", two properties compare with a reference: a document the loader
accepts reads as PyYAML's own composer reads it on the same (libyaml) parser, and a storage URL read with
``create_dirs=False`` creates nothing on disk.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.experiments.conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[2]
CHILD_MEMORY_BYTES = 768 * 2**20
PER_EXAMPLE_CPU_S = 5.0
TARGETS = ("yaml", "config", "expression", "storage_url", "spec")


# -- strategies ----------------------------------------------------------------------------
_SCALARS = ["x", "lol", "0", "-1", "3.5", "1e29", "1.0e+29", ".nan", ".inf", "-.inf", "~", "null",
            "true", "no", "2001-12-14", "2001-13-45", "2001-12-14t21:59:43.10-05:00", "0x1f",
            "0o17", "1_000", "'q'", '"esc\\n"', '"\\ud800"', "!!int x", "!!float 3", "!!str 12",
            "!!binary aGk=", "!!binary ***", "!!timestamp nope", "!!python/object:os.system x",
            "!!python/name:os.system", "!foo bar", "!!set {a, b}", "!!omap [a: 1]", "<<", "=",
            "''", '""', "|-\n  x", "?", "-", ":", "%", "@", "`", "&", "*", "[", "{", "}", "]", ","]
_ANCHORS = ["a0", "a1", "a2"]


def _yaml_values() -> st.SearchStrategy[str]:
    leaf = st.one_of(st.sampled_from(_SCALARS), st.text(max_size=6).map(repr),
                     st.sampled_from(_ANCHORS).map(lambda a: f"*{a}"))

    def extend(inner):
        seq = st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]")
        key = st.one_of(st.sampled_from(["k", "a", "<<", "name", "1", "~", "[x]", "k"]), inner)
        mapping = st.lists(st.tuples(key, inner), max_size=4).map(
            lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}")
        anchored = st.tuples(st.sampled_from(_ANCHORS), st.one_of(seq, mapping, inner)).map(
            lambda t: f"&{t[0]} {t[1]}")
        merge = st.tuples(st.sampled_from(_ANCHORS), inner).map(lambda t: f"{{<<: *{t[0]}, z: {t[1]}}}")
        return st.one_of(seq, mapping, anchored, merge)

    return st.recursive(leaf, extend, max_leaves=12)


@st.composite
def yaml_documents(draw) -> str:
    kind = draw(st.sampled_from(["block", "flow", "laughs", "deep", "text"]))
    if kind == "block":
        rows = draw(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "a", "<<", "k"]), _yaml_values()),
                             max_size=5))
        return "".join(f"{k}: {v}\n" for k, v in rows)
    if kind == "flow":
        return draw(_yaml_values())
    if kind == "laughs":
        width, levels = draw(st.integers(1, 12)), draw(st.integers(0, 14))
        lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels + 1)]
        return "\n".join(lines) + "\n"
    if kind == "deep":
        n = draw(st.integers(1, 3000))
        o, c = draw(st.sampled_from([("[", "]"), ("{a: ", "}"), ("- ", "")]))
        return o * n + "x" + c * n if c else "".join("  " * i + "- \n" for i in range(min(n, 300))) + "  " * 300 + "x\n"
    return draw(st.text(max_size=80))


_CONFIG = """\
study: fuzz
storage: sqlite:///:memory:
seed: {seed}
space: {{parameters: [{{name: rows, type: integer, low: {low}, high: {high}}},
                      {{name: d, type: categorical, choices: [OS, WS]}}],
        constraints: [{{name: c, expr: {expr}}}]}}
evaluator: tests.experiments.study_evaluators:bowl
objectives: {objectives}
budget: {budget}
optimizer: {optimizer}
"""
_DEFAULTS = {"seed": "0", "low": "1", "high": "64", "expr": "'rows <= 32'",
             "objectives": "{f1: min, f2: min}", "budget": "{n_trials: 3}", "optimizer": "random"}

_NAMES = ["rows", "cols", "f", "s", "b", "missing", "True", "__import__", "np"]
_FUNCS = ["log", "log2", "exp", "sqrt", "abs", "ceil", "floor", "min", "max", "where", "eval",
          "getattr", "len"]
_FORBIDDEN = ["rows.real", "rows[0]", "lambda: 1", "[x for x in (1, 2)]", "(x := 1)", "f'{rows}'",
              "rows if b else cols", "{1: 2}", "{1, 2}", "...", "None", "1j", "b'x'", "*rows",
              "__import__('os')", "rows.__class__", "()", "[]"]


def _expressions() -> st.SearchStrategy[str]:
    lit = st.one_of(st.integers(-(2**70), 2**70).map(str), st.sampled_from(
        ["0", "1", "2", "64", "-1", "0.5", "1e308", "5e-324", "'OS'", "'WS'", "''", "True", "False",
         str(2**63 - 1), str(2**63), "9223372036854775807"]))
    leaf = st.one_of(st.sampled_from(_NAMES), lit, st.sampled_from(_FORBIDDEN))

    def extend(inner):
        binop = st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "//", "%", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})")
        unary = st.tuples(st.sampled_from(["-", "+", "not ", "~"]), inner).map(lambda t: f"{t[0]}{t[1]}")
        cmp_ = st.tuples(inner, st.lists(st.tuples(st.sampled_from(
            ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is"]), inner), min_size=1, max_size=3)).map(
            lambda t: t[0] + "".join(f" {op} {v}" for op, v in t[1]))
        in_list = st.tuples(inner, st.sampled_from(["in", "not in"]), st.lists(lit, max_size=5),
                            st.sampled_from(["()", "[]"])).map(
            lambda t: f"{t[0]} {t[1]} {t[3][0]}{', '.join(t[2])}{',' if len(t[2]) == 1 else ''}{t[3][1]}")
        boolop = st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
        call = st.tuples(st.sampled_from(_FUNCS), st.lists(inner, max_size=4)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})")
        tup = st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ")")
        return st.one_of(binop, unary, cmp_, in_list, boolop, call, tup)

    structured = st.recursive(leaf, extend, max_leaves=10)
    repeated = st.tuples(st.sampled_from(["rows + ", "not ", "-", "(", "rows ** ", "rows * "]),
                         st.integers(1, 4000)).map(lambda t: t[0] * t[1] + "rows" + (")" * t[1] if t[0] == "(" else ""))
    return st.one_of(structured, structured, repeated, st.text(max_size=60))


def _storage_urls() -> st.SearchStrategy[str]:
    scheme = st.sampled_from(["sqlite", "SQLITE", "sqlite+pysqlite", "postgresql", "postgres",
                              "postgresql+psycopg", "postgresql+nodriver", "mysql", "x", "", "C"])
    sep = st.sampled_from(["://", ":///", ":////", ":/", ":", "//", ""])
    part = st.one_of(st.text(max_size=10), st.sampled_from(
        ["u:p@", "u@", "@", "h", "h:5432", "h:abc", "[::1]", "[::1", "h:99999999999", ":memory:",
         "~nobody", "~", "x.db", "a/b/c.db", "db?uri=true", "file:x.db?mode=ro&uri=true", "?x=%zz",
         "\x00", "..", "/", "\\", "x" * 300, "%00", "\udc80"]))
    structured = st.tuples(scheme, sep, st.lists(part, max_size=4)).map(
        lambda t: t[0] + t[1] + "/".join(t[2]))
    return st.one_of(structured, structured, st.text(max_size=40))


_SPEC_VALUES = ["9**9**9", "10**10**10", "2**100000000", "1/0", "0**-1", "(-8)**0.5", "1e308*10", "inf",
                "-inf", ".inf", ".nan", "nan", "-1", "0", "1e400", "1" + "0" * 5000, "64 * 1024 * 8", "~",
                "[1, 2]", "{a: 1}", "*x", "&a [*a]", "'x' * 9", "__import__('os')", "True"]


def _spec_values() -> st.SearchStrategy[str]:
    """Values put in place of one number of a spec file: hostile arithmetic and YAML, or
    an expression the constraint strategy draws (names in it are refused by name)."""
    quoted = _expressions().filter(lambda e: "\x00" not in e).map(lambda e: "'" + e.replace("'", "''") + "'")
    return st.one_of(st.sampled_from(_SPEC_VALUES), st.sampled_from(_SPEC_VALUES).map(lambda v: f"'{v}'"),
                     quoted, st.floats(allow_nan=True).map(repr), st.integers(-(2**80), 2**80).map(str))


# -- the properties (run in the limited child) --------------------------------------------
class ExampleTimeout(Exception):
    """An example used more than PER_EXAMPLE_CPU_S of CPU."""


def _on_prof(signum, frame):
    raise ExampleTimeout(f"one example used more than {PER_EXAMPLE_CPU_S} s of CPU")


@contextlib.contextmanager
def _cpu_limit():
    signal.setitimer(signal.ITIMER_PROF, PER_EXAMPLE_CPU_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)


def _one_line(e: BaseException) -> None:
    text = str(e)
    assert text.strip(), f"{type(e).__name__} without a message"
    assert "\n" not in text, f"{type(e).__name__} over several lines: {text[:300]!r}"


def _same(a, b) -> bool:
    """Equality that takes nan as equal to nan (.nan reads as nan both ways)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a) if all(
            not isinstance(k, float) for k in a) else repr(a) == repr(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def check_yaml(text: str) -> None:
    import yaml

    from design_space.errors import ConfigError
    from design_space.yamlio import load_yaml

    with _cpu_limit():
        try:
            data, _ = load_yaml(text, "fuzz.yaml")
        except ConfigError as e:
            _one_line(e)
            assert str(e).startswith("fuzz.yaml")
            return
        # the reference: PyYAML's own composer on the same parser (libyaml's where present)
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            expected = yaml.load(text, Loader=loader)
        except yaml.YAMLError:
            raise AssertionError(f"load_yaml accepted a document {loader.__name__} refuses") from None
    assert _same(data, expected), (data, expected)


def check_config(fields: dict[str, str]) -> None:
    from design_space.errors import ConfigError, SpaceDefinitionError, UnsatisfiableSpaceError
    from experiments.config import load_config_text

    text = _CONFIG.format(**{**_DEFAULTS, **fields})
    with _cpu_limit():
        try:
            loaded = load_config_text(text)
        except (ConfigError, SpaceDefinitionError, UnsatisfiableSpaceError) as e:
            _one_line(e)
            return
        # a space that loaded can also be counted or sampled, or says why not
        try:
            loaded.space.sample(4, seed=0)
        except (SpaceDefinitionError, UnsatisfiableSpaceError) as e:
            _one_line(e)


_COLUMNS = None


def _columns():
    global _COLUMNS
    if _COLUMNS is None:
        import numpy as np

        from design_space.constraints import Columns

        i64 = np.iinfo(np.int64)
        _COLUMNS = Columns({
            "rows": np.array([0, 1, -1, 2, 3, i64.min, i64.max, 2**31, 64], dtype=np.int64),
            "cols": np.array([7, 0, 2, -3, 63, 1, -1, 2**32, 62], dtype=np.int64),
            "f": np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e308, 5e-324, 1.5, -2.0]),
            "s": np.array(["OS", "WS", "", "x" * 20, "OS", "é", "0", "1", "True"]),
            "b": np.array([True, False] * 4 + [True]),
        }, 9)
    return _COLUMNS


def check_expression(text: str) -> None:
    import numpy as np

    from design_space import Constraint, SpaceDefinitionError

    with _cpu_limit():
        try:
            c = Constraint("fz", text)
        except SpaceDefinitionError as e:
            _one_line(e)
            assert str(e).startswith("constraint 'fz'")
            return
        try:
            out = c.evaluate(_columns())
        except SpaceDefinitionError as e:
            _one_line(e)
            assert str(e).startswith("constraint 'fz'")
            return
    assert isinstance(out, np.ndarray) and out.dtype == bool and out.shape == (9,)


def check_storage_url(text: str) -> None:
    from experiments.storage import Storage, StorageError, make_engine, normalize_url

    before = sorted(os.listdir("."))
    with _cpu_limit():
        try:
            url = normalize_url(text, create_dirs=False)
        except StorageError as e:
            _one_line(e)
            return
        assert isinstance(url, str) and "://" in url
        try:
            if url.startswith("sqlite"):
                Storage(url, create=False).close()
            else:                   # an engine, without connecting to any server
                make_engine(url).dispose()
        except StorageError as e:
            _one_line(e)
    assert sorted(os.listdir(".")) == before, "a read-only open created files"


_SPEC_FILES = None
_SPEC_NUMBER = None


def _spec_files() -> dict[str, tuple[str, str, str]]:
    """format -> (arch, problem, ERT) texts: the importers' test examples."""
    global _SPEC_FILES, _SPEC_NUMBER
    if _SPEC_FILES is None:
        import re

        import yaml

        from tests.accelerators.test_interop_accelforge import MATMUL, THREE_LEVEL
        from tests.accelerators.test_interop_zigzag import toy
        from tests.experiments.test_map_command import PROBLEM, TL_ARCH, TL_ERT

        zz = yaml.safe_dump(toy(), sort_keys=False, default_flow_style=None)
        _SPEC_FILES = {"timeloop": (TL_ARCH, PROBLEM, TL_ERT), "accelforge": (THREE_LEVEL, MATMUL, ""),
                       "zigzag": (zz, PROBLEM, "")}
        # a number after "key: " (block or flow), or a list element
        _SPEC_NUMBER = re.compile(r"(?<=: )-?[0-9][0-9.e*+ -]*(?=[,}\n\]])|(?<=[\[ ])[0-9]+(?=[,\]])")
    return _SPEC_FILES


def check_spec(case: tuple[str, int, int, str]) -> None:
    """One number of a Timeloop, AccelForge or ZigZag spec (arch, problem or ERT) replaced
    by ``value``: the design loads, or the error is one line (a ValueError: ConfigError,
    the importers' own)."""
    from experiments.map_command import load_design

    fmt, which, spot, value = case
    files = list(_spec_files()[fmt])
    which %= 3 if fmt == "timeloop" else 2
    spots = [m.span() for m in _SPEC_NUMBER.finditer(files[which])]
    a, b = spots[spot % len(spots)]
    files[which] = files[which][:a] + value + files[which][b:]
    for name, text in zip(("arch.yaml", "problem.yaml", "ert.yaml"), files):
        with open(name, "w", encoding="utf-8") as f:
            f.write(text)
    with _cpu_limit():
        try:
            load_design("arch.yaml", "problem.yaml", ert="ert.yaml" if fmt == "timeloop" else None)
        except ValueError as e:
            _one_line(e)


_FIELD_VALUES = {
    "seed": st.one_of(st.sampled_from(["-5", "1e29", str(10**29), str(2**63), str(2**63 - 1), "true",
                                       "'3'", "3.0", "~", "[1]"]), _yaml_values()),
    "low": st.one_of(st.integers(-(2**70), 2**70).map(str), _yaml_values()),
    "high": st.one_of(st.integers(-(2**70), 2**70).map(str), _yaml_values()),
    "expr": _expressions().map(lambda e: "'" + e.replace("'", "''") + "'"),
    "objectives": _yaml_values(),
    "budget": _yaml_values(),
    "optimizer": _yaml_values(),
}
_PROPERTIES = {
    "yaml": (check_yaml, yaml_documents()),
    "config": (check_config, st.dictionaries(st.sampled_from(sorted(_FIELD_VALUES)), st.just(None),
                                             max_size=3).flatmap(
        lambda d: st.fixed_dictionaries({k: _FIELD_VALUES[k] for k in d}))),
    "expression": (check_expression, _expressions()),
    "storage_url": (check_storage_url, _storage_urls()),
    "spec": (check_spec, st.tuples(st.sampled_from(["timeloop", "accelforge", "zigzag"]), st.integers(0, 2),
                                   st.integers(0, 200), _spec_values())),
}


def _address_space_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def child_main(targets: list[str], examples: int) -> None:
    """Entry point of the limited child: imports first, then the limits, then the
    properties (each hypothesis failure is printed with its input and exits non-zero)."""
    import resource

    import design_space.constraints  # noqa: F401  (imports before the memory limit)
    import experiments.config
    import experiments.storage  # noqa: F401
    import optimizer.registry  # noqa: F401

    check_config(dict(_DEFAULTS))    # the lazy imports of a whole config load, once
    check_expression("rows > 0")
    os.chdir(tempfile.mkdtemp(prefix="fuzz-spec-"))
    check_spec(("timeloop", 0, 0, "16"))    # the importers' imports, once
    signal.signal(signal.SIGPROF, _on_prof)
    resource.setrlimit(resource.RLIMIT_AS, (_address_space_bytes() + CHILD_MEMORY_BYTES,
                                            resource.RLIM_INFINITY))
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime)
    budget_s = 60 + 2 * examples * len(targets)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu + budget_s, cpu + budget_s + 10))
    os.chdir(tempfile.mkdtemp(prefix="fuzz-cwd-"))
    for target in targets:
        fn, strategy = _PROPERTIES[target]
        test = settings(max_examples=examples, deadline=None, database=None, print_blob=True,
                        suppress_health_check=list(HealthCheck))(given(strategy)(fn))
        test()
        print(f"{target}: {examples} examples ok", flush=True)


def _run_child(targets: list[str], examples: int, tmp_path: Path) -> str:
    code = ("import sys; sys.setrecursionlimit(1000); "
            "from tests.experiments.test_input_fuzz import child_main; "
            f"child_main({targets!r}, {examples})")
    env = subprocess_env(tmp_path, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=60 + 30 * examples * len(targets))
    out = r.stdout[-6000:] + r.stderr[-6000:]
    if r.returncode < 0:
        pytest.fail(f"the fuzz child was killed by signal {-r.returncode} (SIGXCPU: past its CPU "
                    f"budget, a hang in C code):\n{out}")
    assert r.returncode == 0, out
    return r.stdout


def test_fuzz_all_targets_small_budget(tmp_path):
    out = _run_child(list(TARGETS), 30, tmp_path)
    for t in TARGETS:
        assert f"{t}: 30 examples ok" in out


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_target_large_budget(tmp_path, target):
    assert f"{target}: 1500 examples ok" in _run_child([target], 1500, tmp_path)


def test_the_limits_catch_a_blow_up(tmp_path):
    """The harness itself: an allocation past the memory bound fails as MemoryError in the
    child, and a busy loop past the per-example CPU bound as ExampleTimeout."""
    code = ("from tests.experiments import test_input_fuzz as f\n"
            "import resource, signal\n"
            "signal.signal(signal.SIGPROF, f._on_prof)\n"
            "resource.setrlimit(resource.RLIMIT_AS, (f._address_space_bytes() + f.CHILD_MEMORY_BYTES, "
            "resource.RLIM_INFINITY))\n"
            "try:\n    bytearray(2 * f.CHILD_MEMORY_BYTES)\nexcept MemoryError:\n    print('memory ok')\n"
            "f.PER_EXAMPLE_CPU_S = 0.2\n"
            "try:\n    with f._cpu_limit():\n        while True: pass\n"
            "except f.ExampleTimeout:\n    print('timeout ok')\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=subprocess_env(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "memory ok" in r.stdout and "timeout ok" in r.stdout
