"""Fuzzed study configs end in a named error (ConfigError & co.), never a deep traceback.

Hypothesis mutates a valid config -- deletes keys, swaps values for values of the wrong
kind, adds unknown keys, rewrites parameter definitions -- and also feeds raw text that is
not YAML at all. Every outcome must be a loaded config or a
``ConfigError`` / ``SpaceDefinitionError`` / ``UnsatisfiableSpaceError``; through the CLI,
exit code 0 or 2 with a one-line ``error:`` and no Python traceback.
"""

from __future__ import annotations

import contextlib
import copy
import math
import uuid

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from design_space.errors import ConfigError, SpaceDefinitionError, UnsatisfiableSpaceError
from experiments.cli import app
from experiments.config import config_from_dict, load_config_text

NAMED = (ConfigError, SpaceDefinitionError, UnsatisfiableSpaceError)

BASE = {
    "study": "fuzz",
    "storage": "sqlite:///:memory:",
    "seed": 3,
    "space": {
        "parameters": [
            {"name": "x", "type": "real", "low": -3.0, "high": 3.0},
            {"name": "y", "type": "integer", "low": 0, "high": 4},
            {"name": "c", "type": "categorical", "choices": ["a", "b"]},
            {"name": "o", "type": "ordinal", "values": [1, 2, 4]},
            {"name": "p", "type": "power_of_two", "low": 2, "high": 16},
            {"name": "q", "type": "permutation", "items": ["K", "C", "P"]},
        ],
        "constraints": [{"name": "band", "expr": "x > -2.5"}],
    },
    "evaluator": "tests.experiments.study_evaluators:bowl",
    "objectives": {"f1": "min", "f2": "min"},
    "optimizer": {"name": "random", "options": {}},
    "budget": {"n_trials": 3, "workers": 1, "executor": "inline", "timeout_s": 10},
}

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["min", "max", "real", "integer", "ordinal", "module:thing", "x", ":", "-1e999"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=8)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


ALL_PATHS = [p for p in _paths(BASE) if p]


@st.composite
def mutated(draw):
    cfg = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(ALL_PATHS))
        parent = cfg
        try:
            for k in path[:-1]:
                parent = parent[k]
            key = path[-1]
            parent[key]
        except (KeyError, IndexError, TypeError):
            continue
        if not isinstance(parent, dict | list):
            # an earlier mutation replaced a container by a string, which indexes too
            # ("abc"[0]) but cannot be assigned into: that path no longer exists
            continue
        op = draw(st.sampled_from(["delete", "replace", "extra"]))
        if op == "delete" and isinstance(parent, dict):
            del parent[key]
        elif op == "extra" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(values)
        else:
            parent[key] = draw(values)
    return cfg


def _yaml_safe(obj) -> bool:
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(isinstance(k, str) and _yaml_safe(v) for k, v in obj.items())
    if isinstance(obj, list):
        return all(_yaml_safe(v) for v in obj)
    return True


def test_base_config_is_valid():
    loaded = config_from_dict(copy.deepcopy(BASE))
    assert loaded.space.names == ("x", "y", "c", "o", "p", "q") or list(loaded.space.names) == [
        "x", "y", "c", "o", "p", "q"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_configs_load_or_raise_a_named_error(cfg):
    try:
        config_from_dict(cfg)
    except NAMED as e:
        assert str(e).strip()          # a message, naming what is wrong
    # anything else (TypeError, KeyError, AttributeError, ...) fails the test


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_loads_or_raises_a_named_error(text):
    try:
        load_config_text(text)
    except NAMED as e:
        assert str(e).strip()


runner = CliRunner()


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(mutated())
def test_cli_run_on_fuzzed_config_exits_cleanly(tmp_path, cfg):
    if not _yaml_safe(cfg):
        cfg = copy.deepcopy(BASE)
    f = tmp_path / "study.yaml"
    f.write_text(yaml.safe_dump(cfg))
    # The fuzzer may delete the `storage` key (default: a database relative to the working
    # directory) or make it any string, a path included: the study goes to the test's own
    # folder, and so does anything else relative.
    with contextlib.chdir(tmp_path):
        res = runner.invoke(app, ["run", str(f), "--no-progress", "--n-trials", "2",
                                  "--storage", f"sqlite:///{tmp_path / uuid.uuid4().hex}.db",
                                  "--output", str(tmp_path / "out")])
    assert res.exit_code in (0, 2), res.output
    assert "Traceback" not in res.output
    if res.exit_code == 2:
        assert "error:" in res.output
