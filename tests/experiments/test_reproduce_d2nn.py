"""experiments.reproduce.d2nn: the physics and cost pieces (fast), the --quick run (slow)."""

from __future__ import annotations

import json

import pytest

from experiments.reproduce import REPRODUCTIONS
from experiments.reproduce import d2nn as rep


def test_registered():
    assert "d2nn" in REPRODUCTIONS and callable(rep.main)


def test_physics_checks_match_the_notes():
    ph = rep.physics_checks()
    assert ph["visible"]["asm_fresnel_l2"] == pytest.approx(rep.NOTES["asm_fresnel_l2_visible"], rel=0.3)
    assert ph["cpu"]["asm_fresnel_l2"] == pytest.approx(rep.NOTES["asm_fresnel_l2_cpu"], rel=0.3)
    assert ph["thz"]["asm_fresnel_l2"] > 0.5 and not ph["thz"]["fresnel_valid"] and ph["visible"]["fresnel_valid"]
    for key in ("visible", "cpu", "thz"):
        assert ph[key]["central_energy"] == pytest.approx(rep.NOTES[f"central_energy_{key}"], abs=0.05)
        assert ph[key]["h00_error"] < 1e-5
    assert ph["visible"]["asm_energy_ratio"] == pytest.approx(1.0, abs=1e-4)
    assert ph["thz"]["asm_energy_ratio"] < 0.95
    assert max(ph["gaussian_width_rel_error"].values()) < 0.02


def test_cost_checks_and_helpers():
    c = rep.cost_checks()
    assert c["energy_pj_lightridge"] == pytest.approx(0.37, abs=0.01)
    assert c["multitask_T2_L5_Ks3"]["physical_layers"] == 7
    assert rep.spearman([1, 2, 3], [0.1, 0.2, 0.3]) == pytest.approx(1.0)
    assert rep.spearman([1, 2, 3], [0.3, 0.2, 0.1]) == pytest.approx(-1.0)
    sw = rep._sweeps(3)
    assert all(len(levels) <= 3 for _, _, levels in sw) and len(sw) == 8


def test_cuda_without_cuda_fails_clearly(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(SystemExit, match="CUDA is not available"):
        rep.main(["--quick", "--gpu", "--device", "cuda", "--out", str(tmp_path)])
    assert not (tmp_path / "results.json").exists()


def test_quick_settings_are_small():
    q, full = rep.settings_for(True), rep.settings_for(False)
    assert q["n"] < full["n"] and q["train"] < full["train"] and q["seeds"] >= 3 and full["seeds"] >= 3


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path):
    res = rep.main(["--quick", "--out", str(tmp_path)])
    for f in ("results.json", "table.md", "single_task.csv", "multitask.csv", "regularization.csv",
              "regularization.png", "robustness.csv", "robustness.png", "codesign_pareto_front.csv"):
        assert (tmp_path / f).exists(), f
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["settings"]["quick"] is True
    single = res["single"]["d2nn"]["mnist"]
    assert all(d["acc"]["n"] == 3 for d in single.values())
    assert all(0.1 < d["acc"]["mean"] <= 1 for d in single.values())  # above chance
    rows = res["multitask"]["rows"]
    assert [r["physical_layers"] for r in rows] == [4, 3, 2]
    table = (tmp_path / "table.md").read_text()
    assert "coexplore reproduce d2nn --quick" in table and "ASM vs Fresnel" in table
    import pandas as pd

    df = pd.read_csv(tmp_path / "robustness.csv")
    assert set(df["variant"]) == {"plain", "noise-aware"} and df["source"].nunique() == 8


SKIP_ALL = "physics,single,multitask,regularization,robustness,codesign"


@pytest.mark.slow
def test_gpu_scale_config_smoke_on_cpu(tmp_path):
    res = rep.main(["--quick", "--skip", SKIP_ALL, "--gpu", "--gpu-train", "20", "--gpu-test", "20",
                    "--gpu-epochs", "1", "--out", str(tmp_path)])
    assert 0 <= res["gpu"]["acc"] <= 1 and "1 epochs, 20 train / 20 test" in res["gpu"]["note"]
    assert "GPU scale 200x200" in (tmp_path / "table.md").read_text()


@pytest.mark.gpu
def test_gpu_scale_config_on_cuda(tmp_path):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    res = rep.main(["--quick", "--skip", SKIP_ALL, "--gpu", "--device", "cuda", "--gpu-train", "2000",
                    "--gpu-test", "1000", "--gpu-epochs", "1", "--out", str(tmp_path)])
    assert res["gpu"]["acc"] > 0.5 and "cuda" in res["gpu"]["note"]
