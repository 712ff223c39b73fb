"""Measurement structure on CPU (no timing thresholds: the CI machine is shared)."""

import json

import pytest
import torch

from evaluators.kernels import measure as M
from mappers.workloads import conv2d, gemm

FAST = dict(min_time_s=0.005, max_time_s=0.05, warmup=1)


@pytest.mark.parametrize("layer, shape", [
    (conv2d("c", N=2, K=8, C=4, P=5, Q=6, R=3, S=3, stride=2), (2, 8, 5, 6)),
    (conv2d("dw", K=6, C=6, P=4, Q=4, R=3, S=3, groups=6), (1, 6, 4, 4)),
    (conv2d("dil", K=4, C=3, P=5, Q=5, R=3, S=3, dilation=2), (1, 4, 5, 5)),
    (gemm("g", M=7, N=5, K=3), (7, 5)),
    (gemm("qk", B=3, M=4, N=6, K=2), (3, 4, 6)),
])
def test_layer_kernel_output_shape(layer, shape):
    assert tuple(M.layer_kernel(layer)().shape) == shape


def test_measure_records_median_spread_and_environment():
    m = M.measure_layer(gemm("g", M=32, N=32, K=32), threads=1, **FAST)
    assert m.median_s > 0 and m.iqr_s >= 0 and m.n_blocks >= 1 and m.calls_per_block >= 1
    assert len(m.times_s) == m.n_blocks
    assert min(m.times_s) <= m.median_s <= max(m.times_s)
    env = m.env
    assert env["threads"] == 1 and env["torch"] == torch.__version__ and env["device"] == "cpu"
    assert env["cpu"] and env["device_name"]
    if M.rapl_readable():
        assert m.energy_method == "rapl" and m.energy_j is not None and m.energy_j >= 0
    else:
        assert m.energy_method == "unavailable" and m.energy_j is None
    json.dumps(m.to_dict())


def test_measure_restores_thread_count():
    before = torch.get_num_threads()
    M.measure(lambda: None, threads=1, energy=False, **FAST)
    assert torch.get_num_threads() == before


def test_rapl_delta_handles_wraparound():
    assert M.rapl_delta_j([(100, 1000)], [(300, 1000)]) == pytest.approx(200e-6)
    assert M.rapl_delta_j([(900, 1000)], [(100, 1000)]) == pytest.approx(200e-6)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without CUDA")
def test_cuda_without_cuda_is_a_clear_error():
    with pytest.raises(RuntimeError, match="no CUDA device"):
        M.require_device("cuda")
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        M.require_device("tpu")
