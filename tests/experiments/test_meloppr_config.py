"""experiments/configs/meloppr.yaml: the co-design study config is valid, its space is
mappers.ppr_plan.codesign_space(), and the evaluator it names scores the paper's point."""

from __future__ import annotations

from pathlib import Path

from experiments.config import load_config
from mappers.ppr_plan import codesign_space

CONFIG = Path(__file__).resolve().parents[2] / "experiments" / "configs" / "meloppr.yaml"


def test_config_space_is_the_codesign_space():
    loaded = load_config(CONFIG)
    assert loaded.space == codesign_space()
    cfg = loaded.config
    assert cfg.objectives == {"precision": "max", "latency_ms": "min", "bram36": "min"}
    assert cfg.optimizer.name == "mobo"
    assert cfg.evaluator.function == "evaluators.ppr.engine_evaluator:MeLoPPRCoDesign"
    assert cfg.budget.n_trials <= 60  # a modest default: minutes on 2 cores


def test_config_evaluator_scores_the_paper_point(tmp_path):
    from experiments.study import resolve_evaluator

    loaded = load_config(CONFIG)
    opts = dict(loaded.config.evaluator.options, n_queries=4)
    ev = resolve_evaluator(loaded.config.evaluator.function, opts)
    from mappers.ppr_plan import PAPER_POINT

    assert loaded.space.validate(PAPER_POINT) == []
    m = ev(PAPER_POINT).metrics
    assert set(loaded.config.objectives) <= set(m)
    assert m["bram36"] == 16 * 20 + 4 and 0 < m["precision"] <= 1
