"""experiments/configs/hasco_resnet50_gemm.yaml: valid, its space is HASCO's GEMM space, and
the evaluator it names scores a point."""

from __future__ import annotations

from pathlib import Path

from evaluators.intrinsic_codesign import hardware_space, reference_point
from experiments.config import load_config

CONFIG = Path(__file__).resolve().parents[2] / "experiments" / "configs" / "hasco_resnet50_gemm.yaml"


def test_config_space_is_hascos_gemm_space():
    loaded = load_config(CONFIG)
    space = hardware_space("GEMM")
    assert loaded.space.names == space.names
    assert loaded.space.cardinality() == space.cardinality() == 768
    cfg = loaded.config
    assert cfg.objectives == {"latency_ms": "min", "power_mw": "min", "area_mm2": "min"}
    assert cfg.optimizer.name == "mobo" and cfg.budget.n_trials == 25
    assert cfg.evaluator.function == "hasco"


def test_config_evaluator_scores_a_point():
    from experiments.study import resolve_evaluator

    loaded = load_config(CONFIG)
    opts = dict(loaded.config.evaluator.options, workload="gemm", sw_budget=10)   # cheap stand-in
    ev = resolve_evaluator(loaded.config.evaluator.function, opts)
    p = reference_point("GEMM")
    assert loaded.space.validate(p) == []
    out = ev(p)
    m = out.metrics if hasattr(out, "metrics") else out
    assert set(loaded.config.objectives) <= set(m)
