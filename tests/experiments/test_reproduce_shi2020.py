"""The Shi et al. 2020 reproduction: spaces and baseline (fast), a --quick run (slow)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.reproduce import shi2020


def test_iso_space_respects_eyeriss_resources():
    sp = shi2020.hardware_space("iso")
    eyeriss = {"pe_x": 14, "pe_y": 12, "rf_w_words": 224, "rf_i_words": 12, "rf_o_words": 24, "glb_kib": 108}
    assert sp.validate(eyeriss) == []                      # Eyeriss itself is in the space
    assert shi2020.EYERISS_PES == 168
    assert shi2020.EYERISS_STORAGE_BYTES == 168 * 260 * 2 + 108 * 1024
    for p in sp.sample(500, seed=0):
        assert p["pe_x"] * p["pe_y"] <= 168
        assert shi2020.storage_bytes(p) <= shi2020.EYERISS_STORAGE_BYTES
    free = shi2020.hardware_space("free").sample(500, seed=0)
    assert max(p["pe_x"] * p["pe_y"] for p in free) > 168
    with pytest.raises(ValueError, match="mode must be 'iso' or 'free'"):
        shi2020.hardware_space("big")


def test_baseline_is_eyeriss_with_the_same_mapper():
    b = shi2020.baseline("dqn", "heuristic", 200)
    assert b["edp_uj_ms"] == pytest.approx(b["energy_uj"] * b["latency_ms"])
    assert b["macs"] == sum(layer.macs * layer.repeat for layer in __import__("mappers.zoo", fromlist=["dqn"]).dqn())


@pytest.mark.slow
def test_quick_reproduction_runs_end_to_end(tmp_path):
    res = shi2020.main(["--quick", "--workloads", "dqn", "--optimizers", "constrained-bo", "random",
                        "--seeds", "1", "--budget", "6", "--mode", "iso", "--workers", "1",
                        "--out", str(tmp_path)])
    s = res["workloads"]["dqn"]["iso"]["summary"]
    assert set(s) == {"constrained-bo", "random"}
    for v in s.values():
        assert np.isfinite(v["improvement_mean"])
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["settings"]["budget"] == 6
    assert (tmp_path / "convergence_dqn_iso.png").stat().st_size > 1000
    assert "| dqn | iso | constrained-bo | -40 % |" in (tmp_path / "table.md").read_text()
