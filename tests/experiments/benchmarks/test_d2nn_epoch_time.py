"""Wall and CPU time per D2NN training epoch (experiments/benchmarks/d2nn_epoch_time.py)."""

from __future__ import annotations

import pytest

from tests.experiments.optics_data import need_optics_data


def test_epoch_time_benchmark_reports_wall_and_cpu():
    need_optics_data()
    from experiments.benchmarks import d2nn_epoch_time as bench

    (r,) = bench.main(["--steps", "2", "--threads", "1", "--n", "16", "--layers", "1"])
    assert r["steps"] == 2 and r["threads"] == 1 and r["cpu_s_per_step"] > 0
    assert r["epoch_wall_s"] == pytest.approx(r["wall_s_per_step"] * 60000 / r["batch"])
    with pytest.raises(SystemExit, match="--steps"):
        bench.main(["--steps", "0"])
