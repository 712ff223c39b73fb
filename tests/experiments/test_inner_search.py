"""The explicit wiring of ask/tell optimizers as mapping searches (issue 40, item 5):
registries hold the same entries whatever was imported before, a name below the study
layer is a named error saying what to pass, and the study layer wires configs' names."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.intrinsic_codesign import HascoCoDesign
from evaluators.nested import NestedEvaluator
from experiments.inner_search import (
    OptimizerSearch,
    optimizer_searches,
    search_mapper,
    wire_evaluator_options,
)
from experiments.study import resolve_evaluator
from mappers.asktell import AskTellMapper
from mappers.heuristic import HeuristicMapper
from mappers.registry import make_mapper
from mappers.schedule import ScheduleMapper

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, sys
order = sys.argv[1]
if order == "experiments-first":
    import experiments, experiments.study, experiments.inner_search  # noqa: F401
from mappers.registry import MAPPERS, SEARCHES, make_mapper
try:
    make_mapper("constrained-bo")
    outcome = "built"
except ValueError as e:
    outcome = str(e)
print(json.dumps({"mappers": MAPPERS.names(), "searches": SEARCHES.names(), "outcome": outcome}))
"""


def _probe(order: str) -> str:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    return subprocess.run([sys.executable, "-c", _PROBE, order], capture_output=True, text=True, check=True,
                          env=env, cwd=ROOT).stdout


def test_the_mapper_registries_do_not_depend_on_import_order():
    """Before, importing experiments added every optimizer to SEARCHES (a resolver), so
    make_mapper('constrained-bo') built or raised depending on what had been imported."""
    alone, after = _probe("mappers-only"), _probe("experiments-first")
    assert alone == after
    assert "neither a mapper" in alone and '"searches": []' in alone


def test_an_optimizer_name_below_the_study_layer_says_what_to_pass():
    with pytest.raises(ValueError, match=r"mapper='constrained-bo'.*search_mapper\('constrained-bo'\)"):
        NestedEvaluator("spatial", "dqn", mapper="constrained-bo")
    with pytest.raises(ValueError, match=r"AskTellMapper\.search='tpe'.*OptimizerSearch\('tpe'\)"):
        AskTellMapper("tpe")
    with pytest.raises(ValueError, match=r"ScheduleMapper\.search='qlearning'.*OptimizerSearch"):
        ScheduleMapper("qlearning")
    with pytest.raises(ValueError, match=r"sw_method='qlearning'.*sw_factory=.*OptimizerSearch\('qlearning'\)"):
        HascoCoDesign("GEMM", "resnet50", sw_method="qlearning")
    with pytest.raises(ValueError, match=r"name='bayes' is not a registered optimizer"):
        OptimizerSearch("bayes")


def test_search_mapper_wires_optimizers_and_leaves_mappers_alone():
    m = search_mapper({"name": "constrained-bo", "budget": 12, "capacity": "unknown"})
    assert isinstance(m, AskTellMapper) and m.factory == OptimizerSearch("constrained-bo")
    assert (m.search, m.budget, m.capacity) == ("constrained-bo", 12, "unknown")
    assert pickle.loads(pickle.dumps(m)) == m and pickle.loads(pickle.dumps(m)).factory == m.factory
    assert isinstance(search_mapper("heuristic"), HeuristicMapper)
    assert type(search_mapper("random")).__name__ == "RandomMapper"  # a mapper name wins, as before
    s = search_mapper({"name": "schedule", "search": "qlearning", "budget": 5})
    assert isinstance(s, ScheduleMapper) and s.factory == OptimizerSearch("qlearning")
    a = search_mapper({"name": "asktell", "search": "tpe"})
    assert isinstance(a, AskTellMapper) and a.factory == OptimizerSearch("tpe")
    with pytest.raises(ValueError, match="mapper='greedy'"):
        search_mapper("greedy")
    assert set(optimizer_searches()) >= {"constrained-bo", "qlearning", "qnetwork", "tpe", "random"}


def test_the_study_layer_wires_an_evaluators_declared_options():
    ev = resolve_evaluator("nested", {"accelerator": "spatial", "workload": "dqn[0:1]",
                                      "mapper": {"name": "qlearning", "budget": 5}})
    assert isinstance(ev.mapper, AskTellMapper) and ev.mapper.factory == OptimizerSearch("qlearning")
    hasco = resolve_evaluator("hasco", {"intrinsic": "GEMM", "workload": "resnet50", "sw_method": "qlearning"})
    assert hasco.mapper.search == "qlearning" and hasco.mapper.factory == OptimizerSearch("qlearning")
    # the built-in schedule searches need no factory; the options given are kept
    opts = {"intrinsic": "GEMM", "workload": "resnet50", "sw_method": "heuristic"}
    assert wire_evaluator_options(HascoCoDesign, opts)["sw_method"] == "heuristic"
    assert wire_evaluator_options(dict, {"mapper": "constrained-bo"}) == {"mapper": "constrained-bo"}


def test_a_wired_search_maps_exactly_as_the_factory_does():
    """The wired mapper is the one the resolver used to build: same search, same results."""
    from accelerators import SpatialArray
    from evaluators.loopnest import evaluate_batch
    from mappers.workloads import gemm

    layer, arch = gemm("g", M=8, N=8, K=8), SpatialArray(pe_x=4, pe_y=2, glb_kib=2).to_arch()
    a = search_mapper({"name": "tpe", "budget": 8}).map(layer, arch, evaluate_batch, seed=3)
    b = AskTellMapper("tpe", budget=8, factory=OptimizerSearch("tpe")).map(layer, arch, evaluate_batch, seed=3)
    assert a.edp == b.edp and a.history == b.history
    assert make_mapper(search_mapper("tpe")) is not None
