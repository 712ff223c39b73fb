"""A user's package adds an optimizer, an accelerator, a mapper and an evaluator without
editing coexplore, and a study runs with all four from YAML: once through ``plugins:``
(modules that register at import) and once through installed entry points.

Each run is the real command line in a fresh process (``coexplore run``), so the plugin
is found the way a user's would be. The same toy entries pass the conformance suites
(``*.testing``), called as a plugin's author calls them in their own tests.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = '''
"""A toy co-design plugin: every piece coexplore looks up by name."""
from dataclasses import dataclass

import numpy as np

from accelerators.arch import ArchSpec, MemoryLevel
from evaluators.nested import NestedEvaluator
from mappers.heuristic import HeuristicMapper
from optimizer.base import Optimizer


@dataclass(frozen=True)
class ToyArray:
    """rows x cols PEs with a 64-word register file each, a 4 KiB buffer and DRAM."""
    rows: int = 4
    cols: int = 4

    def __post_init__(self):
        self.validate()

    @classmethod
    def from_point(cls, point):
        return cls(**point)

    def validate(self):
        for name in ("rows", "cols"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"ToyArray.{name} must be a positive integer, got {v!r}")

    @property
    def area_mm2(self):
        return float(self.area_mm2_of({"rows": self.rows, "cols": self.cols}))

    @staticmethod
    def area_mm2_of(p):
        return np.asarray(p["rows"], dtype=float) * np.asarray(p["cols"], dtype=float) * 0.01

    def to_arch(self):
        n = self.rows * self.cols
        return ArchSpec("toy", (
            MemoryLevel("RF", capacity_words=64, instances=n, read_energy_pj=1.0, write_energy_pj=1.0),
            MemoryLevel("GLB", capacity_words=2048, fanout_x=self.cols, fanout_y=self.rows,
                        read_energy_pj=6.0, write_energy_pj=6.0, noc_energy_pj=2.0),
            MemoryLevel("DRAM", read_energy_pj=200.0, write_energy_pj=200.0, bandwidth_words_per_cycle=4.0),
        ), mac_energy_pj=1.0, kind="toy", area_mm2=self.area_mm2)


class ToyMapper(HeuristicMapper):
    """The heuristic mapper, minimizing latency whatever it is asked (so its effect shows)."""

    def map(self, layer, arch, cost, objective="edp", *, seed=0):
        return super().map(layer, arch, cost, "latency", seed=seed)


class ToyEvaluator(NestedEvaluator):
    """The nested evaluator plus the energy per MAC (a metric of its own, unit in its name)."""

    def __call__(self, point, seed=None):
        ev = super().__call__(point, seed)
        per_mac = ev.metrics["energy_pj"] / ev.metrics["macs"]
        return type(ev)(metrics={**ev.metrics, "energy_per_mac_pj": per_mac}, info=ev.info)


class ToyOptimizer(Optimizer):
    """Proposes the space's grid in reverse order."""

    def __init__(self, space, objectives=None, seed=0, **options):
        super().__init__(space, objectives, seed)
        self.points = list(space.grid())[::-1]

    def _propose(self, n, first_number):
        return [dict(p) for p in self.points[first_number:first_number + n]]
'''

REGISTER = '''
from accelerators.registry import register as register_accelerator
from evaluators.registry import register as register_evaluator
from mappers.registry import register_mapper
from optimizer.registry import register as register_optimizer

register_accelerator("toy-array", ToyArray)
register_mapper("toy-mapper", ToyMapper)
register_evaluator("toy-evaluator", ToyEvaluator)
register_optimizer("toy-reverse-grid", ToyOptimizer)
'''

ENTRY_POINTS = '''
[coexplore.accelerators]
toy-array = toy_ep_plugin:ToyArray

[coexplore.mappers]
toy-mapper = toy_ep_plugin:ToyMapper

[coexplore.evaluators]
toy-evaluator = toy_ep_plugin:ToyEvaluator

[coexplore.optimizers]
toy-reverse-grid = toy_ep_plugin:ToyOptimizer
'''


def _config(tmp_path: Path, plugins: str) -> Path:
    cfg = tmp_path / "study.yaml"
    cfg.write_text(textwrap.dedent(f"""
        study: toy
        storage: sqlite:///{tmp_path / 'toy.db'}
        output: {tmp_path / 'out'}
        seed: 0
        {plugins}
        space:
          parameters:
            - {{name: rows, type: power_of_two, low: 2, high: 4}}
            - {{name: cols, type: power_of_two, low: 2, high: 4}}
        evaluator:
          function: toy-evaluator
          options: {{accelerator: toy-array, workload: "dqn[2:3]", mapper: toy-mapper}}
        objectives: {{edp_uj_ms: min}}
        optimizer: toy-reverse-grid
        budget: {{n_trials: 4, workers: 1, executor: inline}}
    """))
    return cfg


def _run(cfg: Path, path_dir: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(path_dir), os.environ.get("PYTHONPATH", "")]))
    exe = Path(sys.executable).parent / "coexplore"
    return subprocess.run([str(exe), "run", str(cfg)], env=env, capture_output=True, text=True,
                          timeout=300, check=False, cwd=cfg.parent)


def _trials(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT number, status, params, metrics FROM trials ORDER BY number").fetchall()


def _check(tmp_path: Path) -> None:
    import json

    from evaluators.loopnest import evaluate_batch
    from mappers.heuristic import HeuristicMapper
    from mappers.zoo import resolve

    rows = _trials(tmp_path / "toy.db")
    assert [r[1] for r in rows] == ["COMPLETE"] * 4
    params = [json.loads(r[2]) for r in rows]
    # the plugin optimizer: the grid in reverse order
    assert params == [{"rows": 4, "cols": 4}, {"rows": 4, "cols": 2}, {"rows": 2, "cols": 4},
                      {"rows": 2, "cols": 2}]
    metrics = [json.loads(r[3]) for r in rows]
    assert all(m["energy_per_mac_pj"] == pytest.approx(m["energy_pj"] / m["macs"])  # the plugin evaluator
               for m in metrics)
    assert metrics[0]["area_mm2"] == pytest.approx(0.16)                 # the plugin accelerator
    # the plugin mapper minimized latency: the network energy is that of the
    # latency-minimizing heuristic mapping, far from the EDP-minimizing one's
    sys.path.insert(0, str(tmp_path / "pkg"))
    try:
        import importlib

        mod = importlib.import_module(next(p.stem for p in (tmp_path / "pkg").glob("toy*.py")))
        arch = mod.ToyArray(4, 4).to_arch()
    finally:
        sys.path.pop(0)
    layer = resolve("dqn[2:3]")[0]
    by_latency = HeuristicMapper().map(layer, arch, evaluate_batch, "latency")
    by_edp = HeuristicMapper().map(layer, arch, evaluate_batch, "edp")
    assert metrics[0]["energy_pj"] == pytest.approx(by_latency.energy_pj * layer.repeat)
    assert by_latency.energy_pj > 2 * by_edp.energy_pj


def test_plugin_module_listed_in_the_config(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "toy_plugin.py").write_text(PLUGIN + REGISTER)
    proc = _run(_config(tmp_path, "plugins: [toy_plugin]"), pkg)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check(tmp_path)


def test_plugin_installed_with_entry_points(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "toy_ep_plugin.py").write_text(PLUGIN)
    dist = pkg / "toy_ep_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-ep-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    proc = _run(_config(tmp_path, ""), pkg)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check(tmp_path)


def test_the_plugin_entries_pass_the_conformance_suites(tmp_path, monkeypatch):
    """What a plugin's author runs in their own tests: each registry's suite
    (``optimizer.testing``, ``accelerators.testing``, ``mappers.testing``,
    ``evaluators.testing``) on their entries. (The classes are imported, not registered, so
    this process's registries stay coexplore's own.)"""
    import importlib

    from accelerators.testing import check_accelerator
    from evaluators.loopnest import evaluate_batch
    from evaluators.testing import check_evaluator
    from mappers.testing import check_mapper, tiny_case
    from optimizer.testing import check_optimizer

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "toy_suite_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(pkg))
    toy = importlib.import_module("toy_suite_plugin")

    check_optimizer(toy.ToyOptimizer)
    check_accelerator(toy.ToyArray, toy.ToyArray(rows=4, cols=4))
    check_mapper(toy.ToyMapper(), *tiny_case(), evaluate_batch)
    ev = toy.ToyEvaluator(toy.ToyArray, "dqn[2:3]", toy.ToyMapper())
    out = check_evaluator(ev, {"rows": 4, "cols": 2}, {"rows": 0, "cols": 2})
    assert out.metrics["energy_per_mac_pj"] > 0


def test_an_unknown_plugin_is_a_named_config_error(tmp_path):
    proc = _run(_config(tmp_path, "plugins: [no_such_plugin_module]"), tmp_path)
    assert proc.returncode == 2
    assert "plugins[0]" in proc.stderr and "no_such_plugin_module" in proc.stderr
