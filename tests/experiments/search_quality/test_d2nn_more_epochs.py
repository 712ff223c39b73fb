"""More epochs for a trained D2NN unit (experiments/search_quality/d2nn_more_epochs.py)."""

from __future__ import annotations

import json

import pytest

from experiments.reproduce import d2nn as rep
from tests.experiments.optics_data import need_optics_data


def test_more_epochs_benchmark_continues_a_unit_on_the_schedule_and_leaves_it(tmp_path):
    need_optics_data()
    from experiments.search_quality import d2nn_more_epochs as more

    out = tmp_path / "run"
    rep.main(["--quick", "--train", "40", "--test", "20", "--seeds", "1", "--out", str(out),
              "--skip", "physics,multitask,robustness,regularization,codesign"])
    unit = rep.UnitRecords(out).weights_path("single-fashion-s0")
    before = unit.read_bytes()
    s = json.loads((out / "settings.json").read_text())
    s["lr_step_epochs"] = 1  # so that the two extra epochs run at two different rates
    (out / "settings.json").write_text(json.dumps(s))
    rows = more.main(["--dataset", "fashion", "--out", str(out), "--extra", "2"])
    assert [r["epoch"] for r in rows] == [s["epochs"], s["epochs"] + 1, s["epochs"] + 2]
    assert rows[0]["acc"] == rep.UnitRecords(out).record("single-fashion-s0")["acc"][0]
    for r in rows[1:]:  # the learning rate the step schedule reaches at that epoch
        e = r["epoch"] - 1
        assert r["lr"] == pytest.approx(s["lr"] * s["lr_gamma"] ** (e // s["lr_step_epochs"]))
        assert 0.0 <= r["acc"] <= 1.0 and r["cpu_s"] > 0
    assert rows[2]["lr"] == pytest.approx(rows[1]["lr"] * s["lr_gamma"]) and rows[1]["lr"] < s["lr"]
    assert unit.read_bytes() == before  # the run's units are not touched
    with pytest.raises(SystemExit, match="--extra must be >= 1"):
        more.main(["--dataset", "fashion", "--out", str(out), "--extra", "0"])
    with pytest.raises(SystemExit, match="single-mnist-s5"):
        more.main(["--dataset", "mnist", "--seed", "5", "--out", str(out)])
    with pytest.raises(SystemExit, match=r"settings\.json"):
        more.main(["--dataset", "mnist", "--out", str(tmp_path / "nothing")])
