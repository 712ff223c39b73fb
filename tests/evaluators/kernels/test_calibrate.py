"""Calibration: recovers known constants from synthetic data, improves a fit, scores
rank correlation, and round-trips versioned files; the CLI command end to end."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from evaluators.kernels import blocked
from evaluators.kernels import calibrate as cal
from evaluators.kernels.cpu_model import (
    CPUModel,
    Features,
    blocked_features,
    datasheet_model,
    kernel_features,
)
from evaluators.kernels.measure import measure_layer
from experiments.cli import app
from mappers.workloads import conv2d, gemm

TRUTH = CPUModel(peak_gflops=40.0, cache_bw_gb_s=25.0, dram_bw_gb_s=4.0, overhead_s=3e-6,
                 block_overhead_s=12e-6, thread_scaling=0.7, e_flop_pj=5.0, e_cache_byte_pj=20.0,
                 e_dram_byte_pj=300.0, static_w=2.0)


def _synthetic_features() -> Features:
    parts = []
    for i, (m, n, k) in enumerate([(64, 64, 64), (128, 64, 256), (256, 256, 128), (96, 160, 64)]):
        layer = blocked.gemm_layer(m, n, k)
        parts.append(blocked_features(layer, blocked.tile_space(layer, tiles=(16, 32, 64)).sample(12, seed=i)))
    for th in (1, 2, 4):
        for layer in (gemm("a", M=512, N=512, K=64), conv2d("c", K=64, C=32, P=28, Q=28, R=3, S=3),
                      gemm("b", M=8, N=4096, K=4096), gemm("d", M=16, N=16, K=16)):
            parts.append(kernel_features(layer, th))
    return Features.concat(parts)


def test_fit_recovers_known_constants_and_improves_the_fit():
    f = _synthetic_features()
    rng = np.random.default_rng(0)
    meas = TRUTH.latency_s(f) * np.exp(rng.normal(0, 0.01, len(f)))
    prior = datasheet_model()
    fitted = cal.fit_latency(prior, f, meas)
    before, after = cal.scores(prior.latency_s(f), meas), cal.scores(fitted.latency_s(f), meas)
    assert after["mape_pct"] < before["mape_pct"] and after["mape_pct"] < 3.0
    assert after["spearman"] > 0.99
    for k in CPUModel.LATENCY:
        assert getattr(fitted, k) == pytest.approx(getattr(TRUTH, k), rel=0.15), k


def test_energy_fit_is_exact_on_noiseless_data():
    f = _synthetic_features()
    fitted = cal.fit_energy(TRUTH.replace(e_flop_pj=1.0, e_cache_byte_pj=1.0, e_dram_byte_pj=1.0,
                                          static_w=0.0), f, TRUTH.energy_j(f))
    for k in CPUModel.ENERGY:
        assert getattr(fitted, k) == pytest.approx(getattr(TRUTH, k), rel=1e-6), k


def test_scores_and_within_shape():
    s = cal.scores([1, 2, 3, 4], [10, 20, 30, 40])
    assert s["spearman"] == pytest.approx(1) and s["kendall"] == pytest.approx(1)
    assert s["mape_pct"] == pytest.approx(90)
    assert cal.within_group_spearman([1, 2, 3, 3, 2, 1], [1, 2, 3, 1, 2, 3], list("aaabbb")) == pytest.approx(0)


def test_measured_rank_correlation_on_a_clearly_separable_set():
    """GEMMs whose work differs 8x from one to the next: the uncalibrated model must
    rank the measured medians (tolerates one swap under load)."""
    layers = [gemm(f"g{n}", M=n, N=n, K=n) for n in (48, 96, 192, 384)]
    meas = [measure_layer(x, threads=1, min_time_s=0.01, max_time_s=0.1, energy=False).median_s
            for x in layers]
    pred = datasheet_model().latency_s(Features.concat([kernel_features(x, 1) for x in layers]))
    assert cal.scores(pred, meas)["spearman"] >= 0.8


def test_calibration_file_round_trip(tmp_path):
    c = cal.Calibration(device="cpu", device_name="x", model="CPUModel", constants=TRUTH.constants(),
                        uncalibrated=datasheet_model().constants(), fit={"heldout": {}},
                        env={"torch": "t"}, created="now")
    p = c.save(tmp_path / "c.json")
    back = cal.load_calibration(p, "cpu")
    assert back == c and back.build_model() == TRUTH
    assert cal.load_model(p) == TRUTH
    with pytest.raises(ValueError, match="not 'cuda'"):
        cal.load_calibration(p, "cuda")
    d = json.loads(p.read_text())
    d["schema_version"] = 99
    p.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="schema_version 99"):
        cal.load_calibration(p)


def test_split_keeps_shapes_on_one_side():
    samples = cal.cpu_samples(quick=True, tilings_per_shape=3)
    train, test = cal.split_groups(samples)
    tr = {s.group for s, t in zip(samples, train) if t}
    te = {s.group for s, t in zip(samples, test) if t}
    assert tr and te and not tr & te
    assert {s.kind for s, t in zip(samples, test) if t} == {"blocked", "torch"}


def test_cli_calibrate_cpu_quick(tmp_path):
    out = tmp_path / "cpu.json"
    rec_path = tmp_path / "record.json"
    r = CliRunner().invoke(app, ["calibrate", "--device", "cpu", "--quick", "--threads", "1",
                                 "-o", str(out), "--json", str(rec_path)])
    assert r.exit_code == 0, r.output
    assert "heldout" in r.output and "Spearman" in r.output and "MAPE" in r.output
    # --json: the calibration file as written, with the run's settings and provenance
    rec = json.loads(rec_path.read_text())
    assert rec["harness"] == "coexplore calibrate" and rec["rows"] == json.loads(out.read_text())
    assert rec["settings"] == {"device": "cpu", "quick": True, "seed": 0, "threads": "1", "statistic": "median"}
    assert rec["wall_s"] > 0 and rec["process_cpu_s"] > 0 and len(rec["load_avg_1_5_15_start"]) == 3
    c = cal.load_calibration(out, "cpu")
    assert c.schema_version == cal.SCHEMA_VERSION and c.env["torch"]
    for tag in ("before", "after"):
        assert set(c.fit["heldout"][f"latency_{tag}"]) >= {"spearman", "kendall", "mape_pct"}
    assert all(0 < s["best_s"] <= s["median_s"] for s in c.fit["samples"])
    assert c.fit["statistic"] == "median" and c.fit["other_statistic"]["statistic"] == "best"
    assert "latency_after" in c.fit["other_statistic"]["heldout"]


def test_cli_calibrate_cuda_without_cuda_exits_2():
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    r = CliRunner().invoke(app, ["calibrate", "--device", "cuda"])
    assert r.exit_code == 2 and "no CUDA device" in r.output
