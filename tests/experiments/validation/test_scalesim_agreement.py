"""The systolic model against SCALE-Sim 3.0.0 itself (skipped without ``make validate-env``).

SCALE-Sim needs numpy<2.4 and so lives in ``.venv-scalesim``; the agreement tests run it
as a subprocess through experiments.validation.scalesim_compare and skip, saying why,
when that interpreter is missing or cannot import scalesim. The topology-file tests at
the top need no SCALE-Sim and always run.
"""

from __future__ import annotations

import pytest

from evaluators.systolic_timing import DATAFLOWS
from experiments.validation.scalesim_compare import (
    DEFAULT_PYTHON,
    RESNET50_LAYERS,
    TOLERANCE_PCT,
    cases,
    compare,
    format_table,
    run_scalesim,
    scalesim_status,
    summarize,
    topology,
)
from mappers.workloads import conv2d, conv2d_from_input, gemm

RESNET = {layer.name: layer for layer in RESNET50_LAYERS}

# --- how layers are written for SCALE-Sim (no SCALE-Sim needed) ---------------------------


def test_topology_gives_the_read_extent_of_the_padded_input():
    kind, text = topology(RESNET["conv1"])
    assert kind == "conv"
    # 224 + 2*3 = 230 padded, but only (112 - 1)*2 + 7 = 229 rows are read; SCALE-Sim's
    # ceil((H - R + s)/s) gives 112 for 229 and 113 for 230
    assert text.splitlines()[1] == "L, 229, 229, 7, 7, 3, 64, 2,"
    assert topology(RESNET["conv1"], raw_padding=True)[1].splitlines()[1] == "L, 230, 230, 7, 7, 3, 64, 2,"
    # stride 1, padding 1: the whole padded input is read
    assert topology(RESNET["res2a_branch2b"])[1].splitlines()[1] == "L, 58, 58, 3, 3, 64, 64, 1,"
    kind, text = topology(RESNET["fc"])
    assert kind == "gemm" and text.splitlines()[1] == "L, 1, 1000, 2048,"


def test_topology_rejects_what_scalesim_cannot_express():
    with pytest.raises(ValueError, match="batch-1"):
        topology(conv2d("g", K=8, C=8, P=4, Q=4, R=3, S=3, groups=2))
    with pytest.raises(ValueError, match="batch-1"):
        topology(conv2d("n", N=2, K=8, C=8, P=4, Q=4, R=3, S=3))
    with pytest.raises(ValueError, match="stride"):
        topology(conv2d("s", K=8, C=8, P=4, Q=4, R=3, S=3, stride=(1, 2)))
    with pytest.raises(ValueError, match="batched"):
        topology(gemm("b", B=2, M=4, N=4, K=4))


def test_missing_interpreter_is_reported(tmp_path):
    ok, why = scalesim_status(tmp_path / "nope" / "python")
    assert not ok and "make validate-env" in why


def _fake_scalesim(tmp_path, total_cycles):
    """An interpreter stand-in that writes a one-layer COMPUTE_REPORT.csv and counts its runs."""
    calls = tmp_path / "calls"
    fake = tmp_path / "fake_python"
    fake.write_text("#!/bin/sh\n"
                    f"echo run >> {calls}\n"
                    'mkdir -p "$5/run"\n'
                    "printf 'LayerID, Total Cycles incl prefetch, Total Cycles, Stall Cycles, Util, Map eff, Compute util\\n"
                    f"0, {total_cycles + 5}, {total_cycles}, 0, 50.0, 60.0, 70.0\\n' > \"$5/run/COMPUTE_REPORT.csv\"\n")
    fake.chmod(0o755)
    return fake, calls


def test_a_finished_case_in_the_workdir_is_read_not_rerun(tmp_path):
    case = cases([RESNET["fc"]], ["os"], [(8, 8)])[0]
    fake, calls = _fake_scalesim(tmp_path, 100)
    first = run_scalesim(case, fake, tmp_path / "case")
    assert first.total_cycles == 100 and calls.read_text().count("run") == 1
    fake, _ = _fake_scalesim(tmp_path, 999)  # a rerun would now report 999
    again = run_scalesim(case, fake, tmp_path / "case")
    assert calls.read_text().count("run") == 1
    assert again.total_cycles == 100 and again.wall_s == first.wall_s


def test_a_workdir_case_with_other_inputs_or_no_finish_mark_is_rerun(tmp_path):
    case = cases([RESNET["fc"]], ["os"], [(8, 8)])[0]
    other = cases([RESNET["fc"]], ["os"], [(16, 16)])[0]
    fake, calls = _fake_scalesim(tmp_path, 100)
    run_scalesim(case, fake, tmp_path / "case")
    fake, _ = _fake_scalesim(tmp_path, 999)
    assert run_scalesim(other, fake, tmp_path / "case").total_cycles == 999  # another array
    assert calls.read_text().count("run") == 2
    (tmp_path / "case" / "wall_s.txt").unlink()  # as if killed before the run finished
    assert run_scalesim(other, fake, tmp_path / "case").total_cycles == 999
    assert calls.read_text().count("run") == 3


# --- agreement with SCALE-Sim --------------------------------------------------------------


@pytest.fixture(scope="module")
def scalesim_python():
    ok, why = scalesim_status(DEFAULT_PYTHON)
    if not ok:
        pytest.skip(f"SCALE-Sim is not available: {why}")
    return DEFAULT_PYTHON


def _check(rows):
    table = format_table(rows)
    msg, ok = summarize(rows, TOLERANCE_PCT)
    for r in rows:
        assert r.scalesim is not None, f"SCALE-Sim failed on {r.case}: {r.error}\n{table}"
        assert abs(r.diff_pct) <= TOLERANCE_PCT, f"{msg}\n{table}"
        # stronger than the tolerance: the model is exact (SCALE-Sim reports the 0-based last
        # cycle), SCALE-Sim's default CALC bandwidth mode did not stall, and the mapping
        # efficiency agrees
        assert r.scalesim.stall_cycles == 0, table
        assert r.ours == r.scalesim.total_cycles + 1, table
        assert abs(r.mapping_efficiency_diff_pct) < 1e-9, table
    assert ok, msg


def test_resnet50_layers_agree(scalesim_python):
    # a ResNet-50 1x1 convolution on a square and a non-square array, and a strided 1x1
    # (downsample) whose padded extent is odd (SCALE-Sim's ceil output size would differ)
    # on a large square array; every dataflow (~20 s on two cores)
    case_list = (cases([RESNET["res2a_branch2a"]], DATAFLOWS, [(32, 32), (16, 64)])
                 + cases([RESNET["res3a_branch1"]], DATAFLOWS, [(128, 128)]))
    _check(compare(case_list, scalesim_python))


def test_small_layers_agree(scalesim_python):
    # stride 2 with padding (odd and even padded extents), a 7x7/2 stem, unequal H and W,
    # a GEMM; every operand dimension leaves a partial edge fold on 8x8 and 4x16
    layers = [
        conv2d_from_input("s2", C=5, H=15, W=13, K=7, R=3, stride=2, padding=1),
        conv2d_from_input("s2odd", C=3, H=10, W=9, K=5, R=3, stride=2, padding=1),
        conv2d_from_input("stem", C=3, H=20, W=20, K=9, R=7, stride=2, padding=3),
        gemm("mm", M=13, N=11, K=9),
    ]
    _check(compare(cases(layers, DATAFLOWS, [(8, 8), (4, 16)]), scalesim_python))
