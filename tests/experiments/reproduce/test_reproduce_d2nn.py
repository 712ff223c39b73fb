"""experiments.reproduce.d2nn: the physics and cost pieces (fast), the --quick run (slow)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.reproduce import REPRODUCTIONS
from experiments.reproduce import d2nn as rep
from tests.experiments.optics_data import need_optics_data as _need_data


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


def test_quick_settings_are_small_and_full_uses_all_images():
    q, full = rep.settings_for(True), rep.settings_for(False)
    assert q["n"] < full["n"] and q["train"] < 60000 and q["seeds"] >= 3 and full["seeds"] >= 3
    assert full["train"] is None and full["test"] is None  # all 60,000 / 10,000 images per task
    assert full["reg_seeds"] >= 3 and 0 < full["reg_shared"] < full["layers"]


def test_mean_ci_and_slope_ci():
    d = rep.mean_ci([1.0, 2.0, 3.0])
    assert d["mean"] == 2.0 and d["std"] == pytest.approx(1.0) and d["n"] == 3
    half = 4.302652729911275 / 3**0.5  # t(0.975, 2 dof) * s / sqrt(n)
    assert d["ci"] == pytest.approx([2.0 - half, 2.0 + half])
    assert rep.mean_ci([0.5])["ci"] == [None, None] and rep.mean_ci([])["mean"] is None
    exact = rep.slope_ci([0, 1, 2, 3], [1.0, 1.5, 2.0, 2.5])
    assert exact["slope"] == pytest.approx(0.5) and exact["ci"] == pytest.approx([0.5, 0.5])
    rng = np.random.default_rng(0)
    x = np.repeat([-2.0, 0.0, 2.0], 5)
    noisy = rep.slope_ci(x, 0.01 * x + rng.normal(0, 0.02, len(x)))
    assert noisy["ci"][0] < 0.01 < noisy["ci"][1]
    flat = rep.slope_ci(x, rng.normal(0, 0.02, len(x)))
    assert flat["ci"][0] < 0 < flat["ci"][1]  # no effect: the interval holds 0
    from scipy import stats

    y = 0.01 * x + rng.normal(0, 0.02, len(x))
    lr = stats.linregress(x, y)
    one = rep.slope_ci(x, y)  # no groups: ordinary least squares
    assert one["slope"] == pytest.approx(lr.slope) and one["p"] == pytest.approx(lr.pvalue)
    # groups: the slope of OLS with a dummy per group, and its standard error
    grp = np.tile(np.arange(5), 3)
    yg = y + 0.05 * grp
    X = np.column_stack([x, (grp[:, None] == np.arange(5)).astype(float)])
    beta, res, *_ = np.linalg.lstsq(X, yg, rcond=None)
    dof = len(x) - 6
    se = np.sqrt(res[0] / dof * np.linalg.inv(X.T @ X)[0, 0])
    fe = rep.slope_ci(x, yg, groups=grp)
    h = stats.t.ppf(0.975, dof) * se
    assert fe["slope"] == pytest.approx(beta[0]) and fe["ci"] == pytest.approx([beta[0] - h, beta[0] + h])
    assert fe["groups"] == 5 and rep.slope_ci(x, yg)["ci"][1] - rep.slope_ci(x, yg)["ci"][0] > fe["ci"][1] - fe["ci"][0]


def test_plan_phases_and_keys():
    s = rep.settings_for(False)
    phases = rep.plan(s, set())
    kinds = [sorted({u.kind for u in p}) for p in phases]
    assert kinds == [["logreg", "model"], ["model"], ["aware"], ["robust"], ["model"]]
    single, mt, aware, robust, reg = phases
    L, seeds = s["layers"], s["seeds"]
    assert len([u for u in single if u.kind == "model"]) == 2 * seeds
    assert {(u.shared, u.seed) for u in mt} == {(k, sd) for k in range(L + 1) for sd in range(seeds)}
    assert len(aware) == 2 * seeds + (L + 1) * seeds and len(robust) == 2 * len(aware)
    assert {u.base for u in robust} == {u.key for u in aware} | {u.base for u in aware}
    # the ratio-1 seeds of the multi-task phase are not trained twice
    assert len(reg) == len(s["ratios"]) * s["reg_seeds"] - min(seeds, s["reg_seeds"])
    assert all(u.shared == s["reg_shared"] for u in reg)
    keys = [u.key for p in phases for u in p]
    assert len(keys) == len(set(keys))
    assert rep.plan(s, {"robustness", "regularization"})[-1] == mt
    cost = rep.plan_cost(s, phases, 60000)["epochs_per_phase"]
    e = s["epochs"]
    # a multi-task epoch passes 2 tasks, each through the shared layers and both branches
    mt_epoch = [2 * (k + 2 * (L - k)) / L for k in range(L + 1)]
    assert mt_epoch[0] == 4 and mt_epoch[L] == 2
    per = list(cost.values())
    assert per[0] == 2 * seeds * e
    assert per[1] == pytest.approx(sum(mt_epoch) * seeds * e)
    assert per[-1] == pytest.approx(mt_epoch[s["reg_shared"]] * e * len(reg))


def test_fingerprint_refuses_other_settings(tmp_path):
    s = rep.settings_for(True)
    rep.check_fingerprint(tmp_path, s)
    rep.check_fingerprint(tmp_path, dict(s))  # same settings: fine
    with pytest.raises(SystemExit, match="epochs: 1 there, 3 here"):
        rep.check_fingerprint(tmp_path, {**s, "epochs": 3})


def test_unit_store_round_trip_and_no_partial_files(tmp_path):
    import torch

    st = rep.UnitRecords(tmp_path)
    assert not st.has("a") and st.record("a") is None
    st.save("a", {"state": {"w": torch.ones(2)}, "record": {"acc": [0.5], "epoch_s": [1.0], "train_s": 3.0,
                                                             "cpu_s": 2.5}})
    assert st.has("a") and st.record("a") == {"acc": [0.5], "epoch_s": [1.0], "train_s": 3.0, "cpu_s": 2.5}
    assert torch.equal(rep.UnitRecords(tmp_path).load("a")["state"]["w"], torch.ones(2))
    folder = tmp_path / "records" / rep.UNIT_KIND
    stem = st.weights_path("a").stem
    assert sorted(p.name for p in folder.iterdir()) == [f"{stem}.json", f"{stem}.pt"]   # no temporary left
    rec = st.store.record(rep.UNIT_KIND, {"unit": "a"})                  # a plain JSON record naming the weights
    assert rec.value["weights"] == f"{stem}.pt" and rec.wall_s == 3.0 and rec.cpu_s == 2.5
    assert st.keys() == ["a"]


@pytest.mark.skipif("not __import__('torch').cuda.is_available()", reason="needs CUDA")
def test_unit_store_keeps_gpu_trained_state_on_the_cpu(tmp_path):
    """A unit trained with --device cuda is stored with CPU tensors, so it loads on a CPU-only machine."""
    import torch

    st = rep.UnitRecords(tmp_path)
    st.save("g", {"state": {"w": torch.ones(2, device="cuda")}, "record": {}})
    raw = torch.load(st.weights_path("g"), weights_only=True)  # no map_location: as stored
    assert raw["w"].device.type == "cpu" and st.load("g")["state"]["w"].device.type == "cpu"


TINY = ["--quick", "--train", "40", "--test", "20", "--seeds", "1", "--skip",
        "physics,robustness,regularization,codesign"]


def test_run_resumes_from_its_units_and_no_train_trains_nothing(tmp_path, monkeypatch):
    _need_data()
    res = rep.main([*TINY, "--out", str(tmp_path)])
    assert res["pending"] == [] and len(rep.UnitRecords(tmp_path).keys()) == 2 + 2 + 3
    d = res["single"]["d2nn"]["mnist"]
    assert d["acc"]["n"] == 1 and d["train_images"] == 40 and len(d["per_seed"]) == 1
    rows = res["multitask"]["rows"]
    assert [r["physical_layers"] for r in rows] == [4, 3, 2] and all(r["seeds"] == 1 for r in rows)
    diff = rows[0]["per_seed"][0]["diff_mnist"]
    assert diff == pytest.approx(rows[0]["per_seed"][0]["acc_mnist"] - d["per_seed"][0])

    def boom(*a, **k):
        raise AssertionError("a finished unit was trained again")

    monkeypatch.setattr(rep, "train", boom)
    again = rep.main([*TINY, "--out", str(tmp_path)])  # every unit exists: nothing is trained
    assert again["single"] == res["single"] and again["multitask"] == res["multitask"]
    # --no-train with a unit missing reports it as pending
    rep.UnitRecords(tmp_path).weights_path("mt-ks1-r1-s0").with_suffix(".json").unlink()
    part = rep.main([*TINY, "--out", str(tmp_path), "--no-train"])
    assert part["pending"] == ["mt-ks1-r1-s0"] and part["multitask"]["rows"][1]["seeds"] == 0
    table = (tmp_path / "table.md").read_text()
    # the command in the table resumes this run: it carries the fingerprinted overrides
    assert "Partial run" in table and "resume with `coexplore reproduce d2nn --quick --train 40 --test 20`" in table
    with pytest.raises(SystemExit, match="epochs"):
        rep.main([*TINY, "--out", str(tmp_path), "--epochs", "2"])


def test_bad_arguments_name_the_parameter(tmp_path):
    with pytest.raises(SystemExit, match="--jobs must be >= 1, got 0"):
        rep.main(["--quick", "--jobs", "0", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="unknown section"):
        rep.main(["--quick", "--skip", "physics,nosuch", "--out", str(tmp_path)])


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path):
    res = rep.main(["--quick", "--out", str(tmp_path)])
    for f in ("results.json", "table.md", "single_task.csv", "multitask.csv", "multitask.png", "regularization.csv",
              "regularization.png", "robustness.csv", "robustness_mnist.png", "robustness_fashion.png",
              "codesign_pareto_front.csv"):
        assert (tmp_path / f).exists(), f
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["settings"]["quick"] is True and saved["pending"] == []
    for ds in ("mnist", "fashion"):
        d = res["single"]["d2nn"][ds]
        assert d["acc"]["n"] == 3 and 0.1 < d["acc"]["mean"] <= 1  # above chance
    rows = res["multitask"]["rows"]
    assert [r["physical_layers"] for r in rows] == [4, 3, 2] and all(r["seeds"] == 3 for r in rows)
    assert rows[-1]["recognition"]["mean"] == pytest.approx(0.5)  # all shared: the planes see the same field
    table = (tmp_path / "table.md").read_text()
    assert "coexplore reproduce d2nn --quick" in table and "ASM vs Fresnel" in table
    import pandas as pd

    df = pd.read_csv(tmp_path / "robustness.csv")
    assert set(df["variant"]) == {"plain", "noise-aware"} and df["source"].nunique() == 8
    assert set(df["model"]) == {"single-task", "K_s=0", "K_s=1", "K_s=2"} and set(df["task"]) == {"mnist", "fashion"}
    assert df.groupby(["model", "variant", "task"])["model_seed"].nunique().min() == 3
    rg = res["regularization"]
    assert [r["seeds"] for r in rg["rows"]] == [3, 3, 3] and rg["slope_mnist"]["ci"][0] is not None
    cd = res["codesign"]
    assert cd["min_recognition"] == 0.6 and cd["trials"] == 4
    assert all(p["metrics_recognition"] >= 0.6 for p in cd["front"])


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


def test_compare_stores_and_device_counts(tmp_path):
    import torch

    a, b = rep.UnitRecords(tmp_path / "a"), rep.UnitRecords(tmp_path / "b")
    a.save("m", {"state": {"phase": torch.zeros(3)}, "record": {"acc": [0.9, 0.8], "device": "cpu"}})
    b.save("m", {"state": {"phase": torch.tensor([0.0, 0.25, -0.5])}, "record": {"acc": [0.9, 0.75], "device": "cuda:0"}})
    a.save("only-a", {"state": {"phase": torch.zeros(3)}, "record": {"acc": [0.5], "device": "cpu"}})
    for st in (a, b):  # trained on the same device in both: a copy, not compared
        st.save("copy", {"state": {"phase": torch.ones(3)}, "record": {"acc": [0.7], "device": "cuda:0"}})
    a.save("robust-m", {"rows": [], "record": {"seconds": 1.0}})  # no state: not compared
    b.save("robust-m", {"rows": [], "record": {"seconds": 1.0}})
    rows = rep.compare_stores(a, b)
    assert [r["unit"] for r in rows] == ["m"]
    assert rows[0]["max_abs_param_diff"] == 0.5 and abs(rows[0]["max_abs_acc_diff"] - 0.05) < 1e-12
    assert rep.compute_used(b)["by_device"] == {"cuda": 2, "cpu": 1}
    assert rep.compute_used(a)["by_device"] == {"cpu": 3, "cuda": 1}
    b.save("timed", {"state": {}, "record": {"acc": [], "device": "cuda", "train_s": 7200.0, "cpu_s": 7000.0}})
    a.save("timed", {"state": {}, "record": {"acc": [], "device": "cpu", "train_s": 3600.0, "cpu_s": 1800.0}})
    assert (rep.compute_used(b)["gpu_wall_hours"], rep.compute_used(b)["cpu_hours"]) == (2.0, 0.0)
    assert rep.compute_used(a)["cpu_hours"] == 0.5  # the robustness unit took 1 s of wall, no CPU recorded
    assert rep.compute_used(a)["wall_hours"] == pytest.approx(1.0 + 1 / 3600)


def test_multitask_results_pair_seeds_and_fit_the_depth_trend(tmp_path):
    s = {**rep.settings_for(True), "layers": 2, "seeds": 2}
    st = rep.UnitRecords(tmp_path)
    for sd in range(2):
        st.save(rep.single_key("mnist", sd), {"record": {"acc": [0.90 + 0.01 * sd]}})
        st.save(rep.single_key("fashion", sd), {"record": {"acc": [0.80]}})
        for ks in range(3):  # MNIST falls 1 point per shared layer on both seeds; Fashion flat
            st.save(rep.mt_key(ks, 1.0, sd), {"record": {"acc": [0.91 - 0.01 * ks + 0.01 * sd, 0.80],
                                                         "recognition": [0.99, 0.99], "joint": [0.9, 0.8]}})
    mt = rep.multitask_results(s, st)
    r0 = mt["rows"][0]
    assert [p["diff_mnist"] for p in r0["per_seed"]] == pytest.approx([0.01, 0.01])
    assert r0["physical_layers"] == 4 and mt["rows"][2]["physical_layers"] == 2
    sl = mt["depth_slope_mnist"]  # K_s = 0, 1 only (K_s = L has no branches): 4 points
    assert sl["n"] == 4 and sl["slope"] == pytest.approx(-0.01) and sl["ci"][1] < 0
    assert mt["depth_slope_fashion"]["slope"] == pytest.approx(0.0, abs=1e-12)


def test_regularization_slope_is_taken_within_seeds(tmp_path):
    s = {**rep.settings_for(True), "reg_seeds": 3, "ratios": (0.25, 1.0, 4.0)}
    st = rep.UnitRecords(tmp_path)
    for sd in range(3):  # +0.2 points per doubling on every seed, seeds 1 point apart
        for r in s["ratios"]:
            acc = 0.95 + 0.01 * sd + 0.001 * float(np.log2(r))
            st.save(rep.mt_key(s["reg_shared"], r, sd), {"record": {"acc": [acc, 0.8 + 0.01 * sd],
                                                                   "recognition": [0.99, 0.99]}})
    rg = rep.regularization_results(s, st)
    within, pooled = rg["slope_mnist"], rg["slope_mnist_pooled"]
    assert within["slope"] == pytest.approx(0.001) and pooled["slope"] == pytest.approx(0.001)
    assert within["distinguishable"] and not pooled["distinguishable"]  # the seed offsets swamp the pooled fit
    assert rg["slope_fashion"]["slope"] == pytest.approx(0.0, abs=1e-12)


def test_robustness_summary_reports_the_middle_and_strongest_levels():
    import pandas as pd

    rows = []
    for seed, off in ((0, 0.0), (1, 0.02)):
        for lv, acc in ((None, 0.9), (0.1, 0.8), (0.2, 0.6), (0.4, 0.3)):
            rows.append({"task": "mnist", "source": "laser", "level": lv, "level_label": "ideal" if lv is None
                         else f"{lv:g}", "model": "K_s=1", "variant": "plain", "model_seed": seed, "accuracy": acc + off})
        for lv, acc in ((-0.02, 0.5), (-0.01, 0.7), (0.0, 0.9), (0.01, 0.8), (0.02, 0.6)):  # signed, ideal inside
            rows.append({"task": "mnist", "source": "drift", "level": lv, "level_label": f"{lv:g}", "model": "K_s=1",
                         "variant": "plain", "model_seed": seed, "accuracy": acc + off})
    summ = rep.robustness_summary(pd.DataFrame(rows))
    levels = summ["mnist"]["laser"]["levels"]
    assert list(levels) == ["0.2", "0.4"]  # the middle of the three noisy levels, then the strongest
    v = levels["0.4"]["K_s=1 plain"]
    assert v["acc"] == pytest.approx(0.31) and v["std"] == pytest.approx(0.02 / 2**0.5) and v["seeds"] == 2
    assert v["ideal"] == pytest.approx(0.91)
    drift = summ["mnist"]["drift"]["levels"]
    assert list(drift) == ["0.01", "0.02"] and drift["0.02"]["K_s=1 plain"]["ideal"] == pytest.approx(0.91)
    assert rep.robustness_summary(pd.DataFrame()) == {}


def test_old_unit_files_convert_into_records(tmp_path):
    import torch

    from experiments.reproduce.migrate_records import migrate_d2nn

    (tmp_path / "units").mkdir()
    torch.save({"state": {"phase": torch.arange(3.0)}, "record": {"acc": [0.9], "train_s": 5.0, "cpu_s": 4.0}},
               tmp_path / "units" / "single-mnist-s0.pt")
    torch.save({"rows": [{"noise": "x", "acc": 0.5}], "record": {"seconds": 1.0}}, tmp_path / "units" / "robust-a.pt")
    migrate_d2nn(tmp_path)
    st = rep.UnitRecords(tmp_path)
    assert st.keys() == ["robust-a", "single-mnist-s0"]
    assert torch.equal(st.load("single-mnist-s0")["state"]["phase"], torch.arange(3.0))
    assert st.load("robust-a")["rows"] == [{"noise": "x", "acc": 0.5}] and "state" not in st.load("robust-a")
    assert st.store.record(rep.UNIT_KIND, {"unit": "single-mnist-s0"}).cpu_s == 4.0


def test_jobs_train_units_in_the_study_engines_worker_processes(tmp_path):
    """--jobs 2 runs the units through experiments.executors.ProcessExecutor: every unit is
    recorded, with the accuracies a run of one job at a time gets (training is seeded)."""
    _need_data()
    one = rep.main([*TINY, "--threads", "1", "--out", str(tmp_path / "one")])
    two = rep.main([*TINY, "--threads", "1", "--jobs", "2", "--out", str(tmp_path / "two")])
    assert two["pending"] == [] and rep.UnitRecords(tmp_path / "two").keys() == rep.UnitRecords(tmp_path / "one").keys()
    for key in rep.UnitRecords(tmp_path / "one").keys():
        a, b = rep.UnitRecords(tmp_path / "one").record(key), rep.UnitRecords(tmp_path / "two").record(key)
        assert a["acc"] == pytest.approx(b["acc"], abs=1e-6)
    assert one["single"]["d2nn"]["mnist"]["per_seed"] == pytest.approx(two["single"]["d2nn"]["mnist"]["per_seed"])
