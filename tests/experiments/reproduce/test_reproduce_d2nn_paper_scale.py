"""experiments.reproduce.d2nn_paper_scale: argument checks, the planned geometry (fast) and a
tiny run end to end (N = 20, a few hundred images: seconds of CPU)."""

from __future__ import annotations

import itertools
import json

import pytest
import torch

from experiments.reproduce import d2nn_paper_scale as ps
from tests.experiments.optics_data import need_optics_data


@pytest.mark.parametrize(("argv", "message"), [
    (["--train-images", "0"], "--train-images must be in [10, 60000], got 0"),
    (["--train-images", "60001"], "--train-images must be in [10, 60000], got 60001"),
    (["--test-images", "0"], "--test-images must be in [1, 10000], got 0"),
    (["--test-images", "10001"], "--test-images must be in [1, 10000], got 10001"),
    (["--n", "9"], "--n must be >= 10, got 9"),
    (["--epochs", "0"], "--epochs must be >= 1, got 0"),
    (["--batch", "0"], "--batch must be >= 1, got 0"),
    (["--threads", "0"], "--threads must be >= 1, got 0"),
    (["--seed", "-1"], "--seed must be >= 0, got -1"),
    (["--lr", "0"], "--lr must be a finite number > 0, got 0.0"),
    (["--lr", "nan"], "--lr must be a finite number > 0, got nan"),
    (["--tol", "-0.1"], "--tol must be a finite number > 0, got -0.1"),
    (["--tol", "inf"], "--tol must be a finite number > 0, got inf"),
    (["--out", "x.txt"], "--out must name a .json file, got 'x.txt'"),
])
def test_bad_arguments_name_the_option_and_value(argv, message):
    with pytest.raises(SystemExit) as e:
        ps.parse(argv)
    assert str(e.value) == f"error: {message}"


def test_unknown_geometry_is_refused(capsys):
    with pytest.raises(SystemExit):
        ps.parse(["--geometry", "lin2019"])
    err = capsys.readouterr().err
    assert "--geometry" in err and "'lin2019'" in err and "lin2018-thz" in err


def test_cuda_without_cuda_is_refused_before_any_work(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(SystemExit, match=r"--device 'cuda'.*CUDA is not available"):
        ps.main(["--device", "cuda", "--store", str(tmp_path / "s"), "--out", str(tmp_path / "o.json")])
    assert not (tmp_path / "o.json").exists() and not (tmp_path / "s").exists()


def test_defaults_are_the_paper_scale_and_the_reproduction_recipe():
    a = ps.parse([])
    assert (a.geometry, a.n, a.train_images, a.test_images, a.epochs) == ("lin2018-thz", 200, 10_000, None, 1)
    assert (a.batch, a.lr, a.threads, a.device) == (64, 0.05, 1, "cpu")
    # the recipe is the reproduction's CPU configuration
    from experiments.reproduce.d2nn import settings_for

    full = settings_for(False)
    assert {k: full[k] for k in ps.RECIPE} == ps.RECIPE


def test_paper_scale_geometries_are_planned():
    """Lin et al.'s THz geometry at pad N/2 is past the ASM's tolerance (issue 47: 0.135), so
    the planner trains it with RS; LightRidge's visible one keeps the ASM at pad N/2."""
    thz = ps.spec_for("lin2018-thz", 200, 0.05)
    assert (thz.wavelength_m, thz.pitch_m, thz.z_m, thz.n, thz.layers) == (0.75e-3, 0.4e-3, 0.03, 200, 5)
    assert (thz.propagation, thz.pad, thz.detector_px) == ("rs", 100, 20)
    vis = ps.spec_for("lightridge-visible", 200, 0.05)
    assert (vis.wavelength_m, vis.pitch_m, vis.z_m) == (532e-9, 36e-6, 0.3)
    assert (vis.propagation, vis.pad) == ("asm", 100)
    rec = ps._plan_record(thz)
    first = rec["tried"][0]
    assert (first["method"], first["pad"]) == ("asm", 100) and first["padding_error"] > 0.05
    assert rec["padding_error"] <= 0.05 and rec["method"] == "rs"


def test_tiny_run_records_trains_and_resumes(tmp_path, capsys):
    need_optics_data()
    store, out = tmp_path / "records", tmp_path / "ps.json"
    argv = ["--geometry", "lightridge-visible", "--n", "20", "--train-images", "300", "--test-images", "100",
            "--epochs", "3", "--store", str(store), "--out", str(out)]
    first = ps.main(argv)
    rec = first["record"]
    v = rec["value"]
    assert json.loads(out.read_text()) == first
    assert first["command"].endswith(" ".join(argv))
    assert rec["kind"] == ps.KIND and rec["settings"]["train_images"] == 300 and rec["settings"]["n"] == 20
    assert (v["train_images"], v["test_images"], v["steps"], v["threads"]) == (300, 100, 3 * 5, 1)
    assert 0.0 <= v["acc"] <= 1.0 and v["train_cpu_s"] > 0 and v["test_cpu_s"] > 0
    assert rec["wall_s"] == pytest.approx(v["train_s"] + v["test_s"])
    assert len(v["loadavg_start"]) == 3 and len(v["epoch_s"]) == 3
    # it trains: the loss falls every epoch
    losses = v["loss_per_epoch"]
    assert all(b < a for a, b in itertools.pairwise(losses)), losses
    # at N = 20 over 0.3 m the ASM on pad 10 is past its critical distance: the planner picks RS
    assert (v["propagation"]["method"], v["propagation"]["pad"]) == ("rs", 10)
    # the stored phases are the trained model's: reloaded, they score the recorded accuracy
    from evaluators.optics.model import DiffractiveNetwork
    from evaluators.optics.train import evaluate, prepare_tasks

    net = DiffractiveNetwork(ps.spec_for("lightridge-visible", 20, 0.05), amplitude_factors=ps.RECIPE["amplitude"],
                             check="off")
    state = torch.load(store / ps.KIND / v["weights"], weights_only=True)
    net.load_state_dict(state)
    task = prepare_tasks(["mnist"], 300, 100, seed=0)[0]
    assert evaluate(net, [task], batch_size=100)["acc"][0] == pytest.approx(v["acc"])
    # the same command again trains nothing and writes the same record
    capsys.readouterr()
    again = ps.main(argv)
    assert "not training again" in capsys.readouterr().out
    assert again["record"] == rec
    # another subset size is another record
    ps.main([*argv[:4], "--train-images", "200", *argv[6:]])
    assert len(list((store / ps.KIND).glob("*.json"))) == 2
