"""The hardware-in-the-loop tiling search benchmark (experiments/search_quality/hil_search.py)."""

from __future__ import annotations

import pytest

from accelerators.gpu import GPUAccelerator
from evaluators.kernels import triton_gemm
from evaluators.kernels.gpu_model import GPUKernelModel


def test_hil_benchmark_cuda_path_on_a_synthetic_gpu(monkeypatch):
    """The CUDA branch of experiments/search_quality/hil_search without a GPU: a known model
    stands in for Triton kernels and their timing, so the exhaustive sweep, the HIL
    methods, the verification and the autotuner row all run."""
    from evaluators.kernels import hil
    from evaluators.kernels import measure as meas_mod
    from experiments.search_quality import hil_search

    truth = GPUKernelModel.datasheet("h100-sxm").replace(tc_eff=0.6)
    shape = (1024, 1024, 1024)

    def fake_measure(fn, **kw):
        t = float(truth.latency_s(*shape, [fn.point])[0])
        return meas_mod.Measurement(t, 0.0, 3, 10, (t,) * 3, None, "unavailable", {})

    class K:
        def __init__(self, p):
            self.point = p

    monkeypatch.setattr(meas_mod, "require_device", lambda d: None)
    monkeypatch.setattr(meas_mod, "measure", fake_measure)
    monkeypatch.setattr(meas_mod, "environment", lambda d, t=None: {"device_name": "fake"})
    monkeypatch.setattr(hil.MeasuredKernelEvaluator, "kernel", lambda self, p: K(dict(p)))
    monkeypatch.setattr(GPUAccelerator, "detect", classmethod(lambda cls: None))
    monkeypatch.setattr(triton_gemm, "autotuned_latency_s", lambda M, N, K: 1.1 * min(
        truth.latency_s(M, N, K, list(triton_gemm.tile_space(M, N, K, quick=True).grid()))))
    r = hil_search.run("cuda", shape, budget_frac=0.2, quick=True, methods=("screen", "random"),
                       calibration=None, repeats=1, verify_rounds=1)
    by = {row["method"]: row for row in r["rows"]}
    assert set(by) == {"model-only", "screen", "random", "triton-autotune"}
    assert by["screen"]["measurements"] <= r["budget"] and r["n_tilings"] >= 20
    assert by["triton-autotune"]["gap_pct"] == pytest.approx(10.0, abs=1e-6)
