"""YAML round trips and configuration errors that name key and line."""

from __future__ import annotations

import pytest

from design_space import (
    Categorical,
    ConfigError,
    Constraint,
    DesignSpace,
    Fixed,
    Integer,
    JointSpace,
    Ordinal,
    Permutation,
    PowerOfTwo,
    Real,
    load_space,
    save_space,
    space_from_dict,
)


def full_space() -> DesignSpace:
    return DesignSpace(
        Categorical("arch", ["systolic", "spatial"]),
        PowerOfTwo("rows", 8, 256, active_if={"arch": "systolic"}),
        Integer("pes", 1, 168, log=True, active_if={"arch": ["spatial"]}),
        Real("clock_mhz", 100.0, 1000.0, log=True),
        Ordinal("sram_kib", [64, 128, 256.5]),
        Permutation("order", ["K", "C", "P"]),
        Fixed("bits", 16),
        Fixed("shape", (1, 2)),
        constraints=[
            Constraint("pe", "arch != 'systolic' or rows <= 128"),
            Constraint.from_ref("ref", "tests.design_space.helpers:always_ok"),
        ],
        name="demo",
    )


def test_yaml_round_trip_is_exact(tmp_path):
    space = full_space()
    path = tmp_path / "space.yaml"
    text = save_space(space, path)
    back = load_space(path)
    assert back == space
    assert save_space(back) == text
    pts = space.sample(100, seed=0)
    assert back.decode(space.encode(pts)) == space.decode(space.encode(pts))


def test_mapping_form_accepted():
    space = load_space(
        "parameters:\n  rows: {type: power_of_two, low: 8, high: 64}\n  df: {type: categorical, choices: [OS, WS]}\n"
    )
    assert space.names == ["rows", "df"]


BAD = [
    ("parameters:\n  - name: a\n    type: integer\n    low: 5\n    high: 2\n",
     "parameters[0].low", 4, "low (5) > high (2)"),
    ("parameters:\n  - name: a\n    type: categorical\n    choices: []\n",
     "parameters[0].choices", 4, "choices is empty"),
    ("parameters:\n  - {name: a, type: integer, low: 0, high: 3}\n  - {name: a, type: real, low: 0, high: 1}\n",
     "parameters[1].name", 3, "duplicate parameter name 'a' (first at parameters[0])"),
    ("parameters:\n  - {name: a, type: integr, low: 0, high: 3}\n",
     "parameters[0].type", 2, "unknown type 'integr'"),
    ("parameters:\n  - {name: a, type: integer, low: 0}\n",
     "parameters[0]", 2, "missing required key 'high'"),
    ("parameters:\n  - {name: a, type: integer, low: 0, high: 3, stp: 1}\n",
     "parameters[0].stp", 2, "unknown key 'stp'"),
    ("parameters:\n  - {name: a, type: integer, low: 0, high: 3}\nconstraints:\n  - {name: c, expr: 'b > 1'}\n",
     "constraints[0].expr", 4, "refers to unknown parameter(s) ['b']"),
    ("parameters:\n  - {name: a, type: integer, low: 0, high: 3}\nconstraints:\n  - {name: c, expr: 'a >'}\n",
     "constraints[0].expr", 4, "cannot parse expression"),
    ("parameters:\n  - {name: a, type: integer, low: 0, high: 3}\nconstraints:\n  - {name: c, function: 'nosuch.mod:f'}\n",
     "constraints[0].function", 4, "cannot import module 'nosuch.mod'"),
    ("parameters:\n  - name: a\n    type: integer\n    low: 0\n    low: 1\n    high: 3\n",
     "parameters[0].low", 5, "duplicate key 'low'"),
    ("parameters:\n  - {name: a, type: integer, low: 0, high: 3}\nparams: 1\n",
     "params", 3, "unknown key 'params'"),
]


@pytest.mark.parametrize(("text", "key", "line", "fragment"), BAD)
def test_bad_yaml_names_key_and_line(text, key, line, fragment):
    with pytest.raises(ConfigError) as e:
        load_space(text)
    assert e.value.key == key
    assert e.value.line == line
    assert fragment in str(e.value)
    assert f"line {line}" in str(e.value)


def test_malformed_yaml_syntax_reports_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("parameters:\n  - name: a\n    type: integer\n    low: [0\n")
    with pytest.raises(ConfigError) as e:
        load_space(p)
    assert "malformed YAML" in str(e.value)
    assert e.value.line is not None and e.value.line >= 4
    assert str(p) in str(e.value)


def test_lambda_constraint_cannot_be_saved_with_clear_error():
    space = DesignSpace(Integer("a", 0, 3), constraints=[Constraint("lam", lambda p: p["a"] > 0)])
    with pytest.raises(Exception, match=r"constraint 'lam'.*cannot be saved"):
        save_space(space)


def test_joint_space_round_trip():
    from tests.design_space.helpers import hw, sw_for

    joint = JointSpace(hw(), sw_for)
    back = space_from_dict(joint.to_dict())
    assert isinstance(back, JointSpace)
    assert back.hardware == joint.hardware
    pts = joint.sample(20, seed=0)
    assert back.decode(joint.encode(pts)) == pts
