"""The cost-model guide's speed table (experiments/figures/cost_model.py) on a made-up
throughput output: each figure comes from the record's JSON line, a changed record changes
the block, and an output without what the table needs is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.figures import cost_model
from experiments.figures.records import RecordError

PATHS = ("kernel", "numpy", "kernel/tl", "kernel/gen")


def _rates(scale: float = 1.0) -> dict:
    base = {1: {"kernel": 50_000, "numpy": 800, "kernel/tl": 40_000, "kernel/gen": 45_000},
            1000: {"kernel": 1_500_000, "numpy": 150_000, "kernel/tl": 1_400_000, "kernel/gen": 1_450_000},
            100000: {"kernel": 3_000_000, "numpy": 300_000, "kernel/tl": 2_500_000, "kernel/gen": 2_400_000}}
    out = {}
    for i, arch in enumerate(cost_model.ARCHS):
        for batch, paths in base.items():
            for path, v in paths.items():
                v = v * scale * (1 + 0.1 * i)
                out[f"{arch}/{batch}/{path}"] = {"cpu": [v, 1.01 * v, 1.02 * v], "wall": [v / 3, v / 2.5, v / 2]}
    return out


def _write(root: Path, *, scale: float = 1.0, command: str = "nice -n 10 python -m x --no-zigzag",
           drop: str | None = None) -> None:
    rec = {"layer": "resnet50.layer1.0.conv2", "load_before": [3.04, 4.5, 9.9], "rates": _rates(scale),
           "kernel_first_call": {"compile_s": 61.2, "compile_cpu_s": 30.25, "shaped_compile_s": 20.0,
                                 "shaped_compile_cpu_s": 7.75, "cached_load_s": 1.0, "cached_load_cpu_s": 0.5,
                                 "shaped_cached_load_s": 0.1, "shaped_cached_load_cpu_s": 0.04},
           "load_after": [2.96, 3.5, 9.9]}
    if drop:
        del rec[drop]
    path = root / cost_model.THROUGHPUT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# command: {command}\n# other: x\n\nsome table\n{json.dumps(rec)}\n")


def test_speed_table_figures_come_from_the_record(tmp_path):
    _write(tmp_path)
    text = cost_model.speed_table(tmp_path)
    assert "Eyeriss v1 3.00M–3.06M mappings per CPU-second, 32×32 WS systolic array 3.30M–3.37M" in text
    assert "Timeloop's accounting (`accounting=\"timeloop\"`) 2.50M–2.55M and 2.75M–2.81M" in text
    assert "kernel before shapes) 2.40M–2.45M and 2.64M–2.69M" in text
    assert "takes 0.80 of its CPU time" in text  # gen / kernel per repeat, 2.4M / 3M in every repeat
    assert "numpy code 300k–306k and 330k–337k" in text
    assert "3 alternated repeats at load average 3.0–4.5" in text  # 1- and 5-min, the 15-min 9.9 left out
    assert "wall-clock rates are 1.00M–1.65M" in text and "the run under `nice -n 10`" in text
    assert "is met in this run, in both accountings; the margin is 25–65 %" in text
    assert "kernel 50k–56k / 1.50M–1.68M" in text and "Timeloop's accounting 40k–45k / 1.40M–1.57M" in text
    assert "numpy 800–898 / 150k–168k" in text
    assert "bound 30.2 CPU-s (61 s wall), then the shaped kernel's first large batch 7.8 CPU-s more" in text
    assert "0.50 and 0.04 CPU-s" in text
    assert "`nice -n 10 python -m x --no-zigzag` (output: `docs/benchmarks/evaluator_throughput.txt`)" in text
    assert "evaluations per second: not recorded" in text


def test_a_changed_record_changes_the_table(tmp_path):
    _write(tmp_path)
    before = cost_model.speed_table(tmp_path)
    _write(tmp_path, scale=0.5, command="python -m x")
    after = cost_model.speed_table(tmp_path)
    assert after != before
    assert "Eyeriss v1 1.50M–1.53M" in after and "is not met in this run (slowest repeats 1.50M, 1.25M" in after
    assert "nice -n 10" not in after and "the committed run is `--no-zigzag`" not in after
    assert "holds no ZigZag rate" in after


@pytest.mark.parametrize("drop", ["rates", "kernel_first_call", "load_after"])
def test_an_output_without_what_the_table_needs_is_refused(tmp_path, drop):
    _write(tmp_path, drop=drop)
    with pytest.raises(RecordError, match=drop):
        cost_model.speed_table(tmp_path)


def test_a_missing_output_is_refused(tmp_path):
    with pytest.raises(RecordError, match="not found"):
        cost_model.speed_table(tmp_path)
