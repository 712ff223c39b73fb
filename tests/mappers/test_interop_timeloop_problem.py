"""A Timeloop v0.4 problem read strictly (mappers/interop/timeloop.py
``layer_from_timeloop``): every key of ``problem``, ``shape``, its coefficients and data
spaces and ``instance`` is read (Timeloop's hyphenated spellings too), neutral (the same
Layer with and without it) or refused with an error naming the key and its value; on the
exercises' convolution committed in tests/mappers/data/timeloop."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from accelerators.interop.timeloop import load_timeloop_yaml
from mappers.interop.timeloop import PROBLEM_NEUTRAL, layer_from_timeloop

DATA = Path(__file__).parent / "data" / "timeloop"
PROBLEM = load_timeloop_yaml(DATA / "problem.yaml")
LAYER, ROLES = layer_from_timeloop(PROBLEM)


def _read(change):
    p = copy.deepcopy(PROBLEM)
    change(p["problem"])
    return layer_from_timeloop(p)


def _space(p, name):
    return next(s for s in p["shape"]["data_spaces"] if s["name"] == name)


def test_timeloops_hyphenated_spellings_are_read():
    def hyphens(p):
        out = _space(p, "Outputs")
        out["read-write"] = out.pop("read_write")
        p["shape"]["data-spaces"] = p["shape"].pop("data_spaces")
    assert _read(hyphens) == (LAYER, ROLES)


def test_a_projection_of_dimension_names_is_one_axis_each():
    def short(p):
        _space(p, "Weights")["projection"] = ["C", "M", "R", "S"]
    assert _read(short) == (LAYER, ROLES)


@pytest.mark.parametrize("change", [
    lambda p: [p["instance"].pop(k) for k in PROBLEM_NEUTRAL],
    lambda p: p["instance"].update(densities={}),
    lambda p: p["instance"].update(densities={"Inputs": 1.0, "Weights": {"distribution": "fixed_structured",
                                                                         "density": 1}}),
    lambda p: p["instance"].update(commonDensity=1),
    lambda p: p.pop("version"),
], ids=["no-H-W-pads", "no-densities", "density-1", "common-density-1", "no-version"])
def test_a_neutral_key_changes_nothing(change):
    assert set(PROBLEM_NEUTRAL) <= set(PROBLEM["problem"]["instance"])       # the file has them
    assert _read(change) == (LAYER, ROLES)


REFUSED = [
    (lambda p: p.update(shapes={}), r"problem: problem key 'shapes' \(= \{\}\) is not one coexplore reads "
                                    r"\(known: \['instance', 'shape', 'version'\]\)"),
    (lambda p: p["shape"].update(flatten=[{"name": "PQ", "dimensions": ["P", "Q"]}]), r"shape: shape key 'flatten'"),
    (lambda p: _space(p, "Inputs").update(ranks=["N", "C", "H", "W"]), r"data space key 'ranks'"),
    (lambda p: p["shape"]["coefficients"][0].update(value=2), r"shape.coefficients\[0\]: coefficient key 'value'"),
    (lambda p: p["shape"]["coefficients"][0].pop("default"), r"needs a name and a default"),
    (lambda p: p["instance"].update(Wstirde=2), r"instance: instance key 'Wstirde' \(= 2\)"),
    (lambda p: p["instance"].update(densities={"Inputs": 0.5}),
     r"instance.densities gives 'Inputs' density 0.5; sparse tensors cannot be expressed"),
    (lambda p: p["instance"].update(densities={"Inputs": {"distribution": "hypergeometric", "density": 0.25}}),
     r"instance.densities gives 'Inputs' density 0.25"),
    (lambda p: p["instance"].update(densities={"Input": 1}), r"instance.densities names 'Input', not one of"),
    (lambda p: p["instance"].update(densities={"Inputs": {"densty": 1}}), r"density key 'densty'"),
    (lambda p: p["instance"].update(commonDensity=0.5), r"instance.commonDensity = 0.5; sparse tensors"),
    (lambda p: p.update(shape="cnn_layer"), r"shape = 'cnn_layer' names one of Timeloop's problem-shape files"),
    (lambda p: p.update(version=0.2), r"version = 0.2"),
    (lambda p: _space(p, "Outputs").update({"read_write": "yes"}), r"read_write = 'yes' is not true or false"),
    (lambda p: _space(p, "Outputs").update({"read-write": True}), r"read_write is given twice"),
    (lambda p: _space(p, "Weights").update(projection=[[["C", "M", "R"]], [["S"]]]), r"bad term \['C', 'M', 'R'\]"),
    (lambda p: _space(p, "Weights").update(projection=[[["C", "M"]], [["S"]]]),
     r"term \['C', 'M'\] names coefficient 'M', which shape.coefficients does not declare"),
    (lambda p: _space(p, "Weights").update(projection=[[["C"], ["C", "Wstride"]], [["M"]]]),
     r"C appears in two terms of one axis"),
    (lambda p: p["instance"].update(Wdilation=0), r"term \['R', 'Wdilation'\] has coefficient 0"),
    (lambda p: _space(p, "Weights").update(projection=["C", [["M"]]]), r"axis 0: write the projection as lists"),
    (lambda p: p["shape"]["data_spaces"].pop(), r"2 data spaces; a Layer has exactly three"),
]


@pytest.mark.parametrize("change, msg", REFUSED, ids=[m[:40] for _, m in REFUSED])
def test_what_a_layer_cannot_express_is_refused_naming_the_key_and_value(change, msg):
    with pytest.raises(ValueError, match=msg):
        _read(change)
