"""The cost model against Eyeriss v1 silicon (JSSC 2017 Table V) and TPU v1's peak/roofline.

Loose pins of experiments/benchmarks/silicon_compare.py's ratios (ours / published). Each
would move for a wrong model: the latency follows from the row-stationary mapping's PE
utilization, the global-buffer counts from sliding-window reuse in the scratchpads,
multicast and psum accumulation across channel passes, the DRAM counts from which tile
stays where. The bands are the committed results (docs/validation/silicon_compare.txt)
with a few percent of slack, not the 20 % the issue tolerates.
"""

from __future__ import annotations

import pytest

from experiments.benchmarks.silicon_compare import eyeriss_rows, tpu_rows


@pytest.fixture(scope="module")
def eyeriss():
    rows, layers = eyeriss_rows()
    return {(r["layer"], r["figure"]): r["ratio"] for r in rows}, layers


def test_the_rs_mappings_do_the_published_work(eyeriss):
    ratios, _ = eyeriss
    for n in range(1, 6):
        assert ratios[(f"CONV{n}", "MACs (G)")] == pytest.approx(1.0, abs=0.012)
    # CONV2's 27 output rows folded 2 x 14 with one padded row: 135 of 168 PEs busy, as on the chip
    assert ratios[("CONV2", "active PEs (ours: utilization x 168)")] == pytest.approx(1.0, abs=1e-9)


def test_processing_latency_within_the_published_16_percent(eyeriss):
    ratios, _ = eyeriss
    got = [ratios[(f"CONV{n}", "processing latency (ms)")] for n in range(1, 6)]
    assert got == pytest.approx([0.845, 0.846, 0.879, 0.899, 0.958], abs=0.01)
    assert ratios[("all", "processing latency (ms)")] == pytest.approx(0.872, abs=0.01)


def test_global_buffer_and_dram_accesses(eyeriss):
    ratios, _ = eyeriss
    for n, want in ((1, 1.097), (2, 1.056), (4, 1.055), (5, 1.056)):
        assert ratios[(f"CONV{n}", "GLB accesses (MB)")] == pytest.approx(want, abs=0.01)
    assert ratios[("CONV3", "GLB accesses (MB)")] == pytest.approx(1.434, abs=0.01)  # unresolved (docs)
    # dense words vs the chip's run-length-compressed feature maps: within 20 % once our
    # feature-map traffic is scaled by the published fraction of zeros
    for n in range(1, 6):
        assert 0.85 <= ratios[(f"CONV{n}", "DRAM, ours zeros compressed (MB)")] <= 1.2
    assert ratios[("CONV1", "DRAM accesses (MB)")] == pytest.approx(1.224, abs=0.01)


def test_tpu_peak_and_memory_roof():
    ratios = {r["figure"]: r["ratio"] for r in tpu_rows()}
    assert ratios["peak TOPS"] == pytest.approx(91.75 / 92, abs=1e-3)
    assert ratios["TOPS, 4096x4096 FC at batch 8 (roofline)"] == pytest.approx(0.99, abs=0.01)
