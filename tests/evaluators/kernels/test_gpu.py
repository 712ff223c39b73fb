"""GPU path: the analytical pieces run everywhere; the kernels need CUDA (marked ``gpu``,
skipped without a device or without the gpu extra)."""

import importlib.util

import numpy as np
import pytest
import torch

from accelerators.gpu import PRESETS, GPUAccelerator
from evaluators.kernels import calibrate as cal
from evaluators.kernels import triton_gemm
from evaluators.kernels.gpu_model import GPUKernelModel

HAS_CUDA = torch.cuda.is_available()
HAS_TRITON = importlib.util.find_spec("triton") is not None
needs_gpu = pytest.mark.skipif(not (HAS_CUDA and HAS_TRITON), reason="needs CUDA and triton (gpu extra)")


def test_presets_match_their_datasheets():
    h = PRESETS["h100-sxm"]
    # 132 SMs x 4,096 dense fp16 flops/clock x 1.83 GHz = the datasheet's 989 TFLOPS
    assert h.tensor_flops_per_sm_clock == pytest.approx(4096, rel=0.01)
    assert PRESETS["a100-sxm"].tensor_flops_per_sm_clock == pytest.approx(2048, rel=0.01)
    assert GPUAccelerator.from_point({"gpu": "a100-sxm", "l2_mib": 80.0}).l2_mib == 80.0
    with pytest.raises(ValueError, match="unknown GPU"):
        GPUAccelerator.preset("v100")
    with pytest.raises(ValueError, match="sm_count"):
        GPUAccelerator.from_point({"gpu": "h100-sxm", "sm_count": 0})


def test_gpu_model_structure():
    m = GPUKernelModel.datasheet("h100-sxm")
    space = triton_gemm.tile_space(4096, 4096, 4096, smem_limit_kib=227)
    pts = list(space.grid())
    assert len(pts) >= 50
    assert all(triton_gemm.smem_bytes(p) <= 227 * 1024 for p in pts)
    t = m.latency_s(4096, 4096, 4096, pts)
    assert np.isfinite(t).all() and (t > 0).all()
    # no tiling beats the dense tensor-core peak
    assert (2 * 4096**3 / t).max() <= 989.4e12
    # a tiling that needs more shared memory than a block may use cannot run
    big = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128, "GROUP_M": 8, "num_warps": 8, "num_stages": 5}
    assert np.isinf(m.latency_s(4096, 4096, 4096, [big])[0])
    # twice the work, not less time
    p = pts[:20]
    assert (m.latency_s(8192, 4096, 4096, p) >= m.latency_s(4096, 4096, 4096, p)).all()


def test_gpu_calibration_file_round_trip(tmp_path):
    m = GPUKernelModel.datasheet("a100-sxm").replace(tc_eff=0.5)
    c = cal.Calibration(device="cuda", device_name="A100", model="GPUKernelModel",
                        constants=m.constants(), uncalibrated={}, fit={})
    back = cal.load_model(c.save(tmp_path / "g.json"), "cuda")
    assert back == m


def test_gpu_fit_recovers_constants_on_synthetic_data():
    truth = GPUKernelModel.datasheet("h100-sxm").replace(tc_eff=0.55, hbm_eff=0.6, launch_s=8e-6)
    prior = GPUKernelModel.datasheet("h100-sxm")
    rows = []
    for i, shape in enumerate([(1024, 1024, 1024), (4096, 4096, 4096), (512, 8192, 4096), (8192, 2048, 256)]):
        for p in triton_gemm.tile_space(*shape, smem_limit_kib=227).sample(15, seed=i):
            rows.append((shape, p))
    meas = np.array([truth.latency_s(*s, [p])[0] for s, p in rows])

    def predict(c):
        mm = prior.replace(**c)
        return np.array([mm.latency_s(*s, [p])[0] for s, p in rows])

    from evaluators.kernels.gpu_calibrate import BOUNDS

    got = cal.fit_log_ratio(predict, meas, {k: getattr(prior, k) for k in ("tc_eff", "hbm_eff", "launch_s")},
                            BOUNDS)
    after = cal.scores(predict(got), meas)
    before = cal.scores(predict({}), meas)
    assert after["mape_pct"] < before["mape_pct"] and after["mape_pct"] < 1.0


@pytest.mark.skipif(HAS_CUDA, reason="checks the error without CUDA")
def test_triton_without_cuda_is_a_clear_error():
    assert not triton_gemm.available()
    with pytest.raises(RuntimeError, match="CUDA and triton"):
        triton_gemm.gemm_kernel(64, 64, 64, dict(zip(triton_gemm.KEYS, (32, 32, 32, 1, 4, 2))))


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("shape", [(128, 96, 64), (257, 129, 100)])
def test_triton_gemm_matches_torch(shape):
    M, N, K = shape
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    for p in triton_gemm.tile_space(M, N, K, quick=True).sample(4, seed=0):
        c = triton_gemm.matmul(a, b, p)
        torch.testing.assert_close(c, a @ b, rtol=1e-2, atol=1e-1)


@pytest.mark.gpu
@needs_gpu
def test_nvml_energy_and_cuda_measurement():
    from evaluators.kernels import nvml
    from evaluators.kernels.measure import measure

    if not nvml.available():
        pytest.skip("nvidia-ml-py not installed")
    fn = triton_gemm.gemm_kernel(2048, 2048, 2048, dict(zip(triton_gemm.KEYS, (128, 128, 32, 8, 4, 4))))
    m = measure(fn, device="cuda", min_time_s=0.05, max_time_s=0.5, energy_min_s=0.5)
    assert m.energy_method == "nvml" and m.energy_j is not None and m.energy_j > 0
    assert m.env["device_name"] and m.env["driver"]


@pytest.mark.gpu
@needs_gpu
def test_cuda_calibration_quick(tmp_path):
    from evaluators.kernels.gpu_calibrate import run_cuda

    c, rows = run_cuda(quick=True, tilings_per_shape=3)
    assert rows and c.fit["heldout"]["latency_after"]["n"] > 0
    assert cal.load_model(c.save(tmp_path / "cuda.json"), "cuda") is not None


@pytest.mark.gpu
@needs_gpu
def test_hil_evaluator_measures_triton_tilings():
    from evaluators.base import Evaluation
    from evaluators.kernels.hil import MeasuredKernelEvaluator

    ev = MeasuredKernelEvaluator(1024, 1024, 1024, backend="triton", repeats=2, min_time_s=0.02, max_time_s=0.1)
    p = dict(zip(triton_gemm.KEYS, (64, 64, 32, 8, 4, 3)))
    e = ev(p)
    assert isinstance(e, Evaluation) and e.metrics["latency_s"] > 0
    assert ev(p) is e and ev.n_measured == 1


@pytest.mark.skipif(not HAS_TRITON, reason="needs triton (gpu extra); runs in Triton's CPU interpreter")
def test_triton_kernel_in_the_interpreter(monkeypatch):
    """The kernel's indexing (grouped order, K-edge masks, store masks) checked without a
    GPU: TRITON_INTERPRET=1 runs it on CPU tensors (set before the kernel is decorated)."""
    import importlib
    import sys

    if "evaluators.kernels._triton_kernel" in sys.modules:
        pytest.skip("kernel already compiled for the GPU in this process")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    mod = importlib.import_module("evaluators.kernels._triton_kernel")
    try:
        g = torch.Generator().manual_seed(0)
        for M, N, K in [(64, 48, 40), (33, 65, 17)]:
            a = torch.randn(M, K, generator=g).half()
            b = torch.randn(K, N, generator=g).half()
            for p in triton_gemm.tile_space(M, N, K, smem_limit_kib=227).sample(3, seed=1):
                c = torch.empty(M, N, dtype=torch.float16)
                bm, bn = p["BLOCK_M"], p["BLOCK_N"]
                grid = (-(-M // bm) * -(-N // bn),)
                mod.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                        c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=p["BLOCK_K"],
                                        GROUP_M=p["GROUP_M"], num_warps=p["num_warps"], num_stages=p["num_stages"])
                torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=2e-2)
    finally:
        sys.modules.pop("evaluators.kernels._triton_kernel", None)


def test_cuda_calibration_pipeline_on_synthetic_measurements(monkeypatch, tmp_path):
    """run_cuda end to end without a GPU: kernels and measurements are replaced by a
    known model (latency and energy), so the split, fits, scores and file are checked."""
    from evaluators.kernels import gpu_calibrate, nvml
    from evaluators.kernels import measure as meas_mod

    truth = GPUKernelModel.datasheet("h100-sxm").replace(tc_eff=0.5, hbm_eff=0.7, launch_s=6e-6,
                                                         e_flop_pj=0.4, e_hbm_byte_pj=20.0, static_w=80.0)

    def fake_kernel(M, N, K, point):
        return ("k", (M, N, K), dict(point))

    def fake_measure(fn, **kw):
        _, shape, p = fn
        t = float(truth.latency_s(*shape, [p])[0])
        e = float(truth.energy_j(*shape, [p])[0])
        return meas_mod.Measurement(t, 0.01 * t, 5, 10, (t,) * 5, e, "nvml", {})

    monkeypatch.setattr(meas_mod, "require_device", lambda d: None)
    monkeypatch.setattr(meas_mod, "measure", fake_measure)
    monkeypatch.setattr(meas_mod, "environment", lambda d, t=None: {"device_name": "fake H100", "torch": "x"})
    monkeypatch.setattr(triton_gemm, "available", lambda: True)
    monkeypatch.setattr(triton_gemm, "gemm_kernel", fake_kernel)
    monkeypatch.setattr(nvml, "available", lambda: True)
    monkeypatch.setattr(GPUAccelerator, "detect", classmethod(lambda cls: None))
    c, rows = gpu_calibrate.run_cuda(tilings_per_shape=8)
    assert len(rows) == 8 * len(gpu_calibrate.SHAPES) >= 50
    h = c.fit["heldout"]
    assert h["latency_after"]["mape_pct"] < h["latency_before"]["mape_pct"]
    assert h["latency_after"]["spearman"] > 0.95 and "energy_after" in h
    assert c.constants["tc_eff"] == pytest.approx(0.5, rel=0.1)
    back = cal.load_model(c.save(tmp_path / "cuda.json"), "cuda")
    assert back.tc_eff == pytest.approx(c.constants["tc_eff"])
    assert "Spearman" in cal.format_report(c)


