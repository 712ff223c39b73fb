"""The fault-injection harness in small (experiments/harnesses/chaos.py)."""

from __future__ import annotations


def test_chaos_harness_on_each_backend(storage_url, tmp_path):
    """The fault-injection harness in small: 3 SIGKILLs of the driver, then exactly 30
    distinct COMPLETE trials, numbered 0..29, nothing left RUNNING -- SQLite and PostgreSQL."""
    from experiments.harnesses.chaos import run_backend

    r = run_backend("test", storage_url, trials=30, kills=3, workers=2, seed=1, sleep_s=0.4,
                    window_s=(2.0, 3.5), workdir=tmp_path / "chaos")
    assert r["kills"] == 3
    assert r["COMPLETE"] == 30 and r["numbers_ok"] and r["distinct_params"] == 30
    assert r["RUNNING"] == 0 and r["WAITING"] == 0 and r["ok"]
