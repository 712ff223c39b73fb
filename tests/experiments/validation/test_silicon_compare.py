"""The cost model against Eyeriss v1 silicon (JSSC 2017 Table V) and TPU v1's peak/roofline.

Loose pins of experiments/validation/silicon_compare.py's ratios (ours / published). Each
would move for a wrong model: the latency follows from the row-stationary mapping's PE
utilization, the global-buffer counts from sliding-window reuse in the scratchpads,
multicast and psum accumulation across channel passes, the DRAM counts from which tile
stays where. The bands are the committed results (docs/validation/silicon_compare.txt)
with a few percent of slack, not the 20 % the issue tolerates.
"""

from __future__ import annotations

import pytest

from experiments.validation.silicon_compare import eyeriss_rows, glb_ifmap_allocation_rows, tpu_rows


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
    assert ratios[("CONV3", "GLB accesses (MB)")] == pytest.approx(1.434, abs=0.01)  # Table III's q r = 4
    # dense words vs the chip's run-length-compressed feature maps: within 20 % once our
    # feature-map traffic is scaled by the published fraction of zeros
    for n in range(1, 6):
        assert 0.85 <= ratios[(f"CONV{n}", "DRAM, ours zeros compressed (MB)")] <= 1.2
    assert ratios[("CONV1", "DRAM accesses (MB)")] == pytest.approx(1.224, abs=0.01)


def test_tpu_peak_and_memory_roof():
    ratios = {r["figure"]: r["ratio"] for r in tpu_rows()}
    assert ratios["peak TOPS"] == pytest.approx(91.75 / 92, abs=1e-3)
    assert ratios["TOPS, 4096x4096 FC at batch 8 (roofline)"] == pytest.approx(0.99, abs=0.01)


def test_conv3_global_buffer_count_is_that_of_six_channels_per_pass(eyeriss):
    """Table V's CONV3 GLB count: with CONV4/5's q = 3, r = 2, t = 2 (6 channels per pass,
    43 passes, C padded to 258) the model's ratio is CONV4's and CONV5's; with Table III's
    q r = 4 it is 1.43. Partial sums are 2 / (q r R S) GLB accesses per MAC."""
    ratios, _ = eyeriss
    qr6 = ratios[("CONV3", "GLB, q=3 r=2 t=2 as CONV4/5 (MB)")]
    assert qr6 == pytest.approx(1.056, abs=0.005)
    for n in (2, 4, 5):
        assert qr6 == pytest.approx(ratios[(f"CONV{n}", "GLB accesses (MB)")], abs=0.005)


def test_table_iii_ifmap_allocation_confirms_the_parameters_in_kib():
    """n x q r x ((e-1) U + R) x H words x 2 bytes is Table III's ifmap allocation to its one
    decimal in KB of 1024 bytes (CONV3's 7.0 KB: q r = 4, not 6); in kB of 1000 bytes four
    layers miss."""
    rows = glb_ifmap_allocation_rows()
    assert [round(a["kib"], 1) for a in rows] == [a["published_kb"] for a in rows]
    assert sum(round(a["kb"], 1) != a["published_kb"] for a in rows) == 4
