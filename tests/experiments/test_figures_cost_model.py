"""The cost-model guide's speed table (experiments/figures/cost_model.py) on a made-up
throughput output: each figure comes from the record's JSON line, a changed record changes
the block, and an output without what the table needs is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.figures import cost_model
from experiments.figures.records import RecordError

PATHS = ("kernel", "numpy", "kernel/tl", "kernel/gen")


def _rates(scale: float = 1.0) -> dict:
    base = {1: {"kernel": 50_000, "numpy": 800, "kernel/tl": 40_000, "kernel/gen": 45_000},
            1000: {"kernel": 1_500_000, "numpy": 150_000, "kernel/tl": 1_400_000, "kernel/gen": 1_450_000},
            100000: {"kernel": 3_000_000, "numpy": 300_000, "kernel/tl": 2_500_000, "kernel/gen": 2_400_000}}
    out = {}
    for i, arch in enumerate(cost_model.ARCHS):
        for batch, paths in base.items():
            for path, v in paths.items():
                v = v * scale * (1 + 0.1 * i)
                out[f"{arch}/{batch}/{path}"] = {"cpu": [v, 1.01 * v, 1.02 * v], "wall": [v / 3, v / 2.5, v / 2]}
    return out


def _write(root: Path, *, scale: float = 1.0, command: str = "nice -n 10 python -m x --no-zigzag",
           drop: str | None = None) -> None:
    rec = {"layer": "resnet50.layer1.0.conv2", "load_before": [3.04, 4.5, 9.9], "rates": _rates(scale),
           "kernel_first_call": {"compile_s": 61.2, "compile_cpu_s": 30.25, "shaped_compile_s": 20.0,
                                 "shaped_compile_cpu_s": 7.75, "cached_load_s": 1.0, "cached_load_cpu_s": 0.5,
                                 "shaped_cached_load_s": 0.1, "shaped_cached_load_cpu_s": 0.04},
           "load_after": [2.96, 3.5, 9.9]}
    if drop:
        del rec[drop]
    path = root / cost_model.THROUGHPUT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# command: {command}\n# other: x\n\nsome table\n{json.dumps(rec)}\n")


def test_speed_table_figures_come_from_the_record(tmp_path):
    _write(tmp_path)
    text = cost_model.speed_table(tmp_path)
    assert "Eyeriss v1 3.00M–3.06M mappings per CPU-second, 32×32 WS systolic array 3.30M–3.37M" in text
    assert "Timeloop's accounting (`accounting=\"timeloop\"`) 2.50M–2.55M and 2.75M–2.81M" in text
    assert "kernel before shapes) 2.40M–2.45M and 2.64M–2.69M" in text
    assert "takes 0.80 of its CPU time" in text  # gen / kernel per repeat, 2.4M / 3M in every repeat
    assert "numpy code 300k–306k and 330k–337k" in text
    assert "3 alternated repeats at load average 3.0–4.5" in text  # 1- and 5-min, the 15-min 9.9 left out
    assert "wall-clock rates are 1.00M–1.65M" in text and "the run under `nice -n 10`" in text
    assert "is met in this run, in both accountings; the margin is 25–65 %" in text
    assert "kernel 50k–56k / 1.50M–1.68M" in text and "Timeloop's accounting 40k–45k / 1.40M–1.57M" in text
    assert "numpy 800–898 / 150k–168k" in text
    assert "bound 30.2 CPU-s (61 s wall), then the shaped kernel's first large batch 7.8 CPU-s more" in text
    assert "0.50 and 0.04 CPU-s" in text
    assert "`nice -n 10 python -m x --no-zigzag` (output: `docs/benchmarks/evaluator_throughput.txt`)" in text
    assert "evaluations per second: not recorded" in text


def test_a_changed_record_changes_the_table(tmp_path):
    _write(tmp_path)
    before = cost_model.speed_table(tmp_path)
    _write(tmp_path, scale=0.5, command="python -m x")
    after = cost_model.speed_table(tmp_path)
    assert after != before
    assert "Eyeriss v1 1.50M–1.53M" in after and "is not met in this run (slowest repeats 1.50M, 1.25M" in after
    assert "nice -n 10" not in after and "the committed run is `--no-zigzag`" not in after
    assert "holds no ZigZag rate" in after


@pytest.mark.parametrize("drop", ["rates", "kernel_first_call", "load_after"])
def test_an_output_without_what_the_table_needs_is_refused(tmp_path, drop):
    _write(tmp_path, drop=drop)
    with pytest.raises(RecordError, match=drop):
        cost_model.speed_table(tmp_path)


def test_a_missing_output_is_refused(tmp_path):
    with pytest.raises(RecordError, match="not found"):
        cost_model.speed_table(tmp_path)


# ------------------------------------------------------------ the accuracy table

BUNDLED = """eyeriss_like conv1 {'N': 1}
  memory op ...
eyeriss_like features.0 {'N': 1}
tpu_like conv1 {'N': 1}
tpu_like features.0 {'N': 1}
tpu_like features.1.project {'N': 1}

4 of 5 cases ran in ZigZag; (memory, operand) rows with reads and writes equal: 30 of 40 (under accounting='zigzag': 38 of 40); rows where coexplore counts more: 1; cycles equal in 3 of 4; energy ours/zigzag 0.512-0.987 (median 0.901; under accounting='zigzag' 0.6-0.9, median 0.8); ours/(zigzag's counts at our per-word energies) 0.856-0.999 (median 0.9); zigzag's energy/(its counts at our per-word energies) 1.0-1.5
"""
CROSSVAL = """conv1 {'N': 1} [heuristic]
  GLB ...
conv1 {'N': 1} [random]
features.3 {'N': 1} [heuristic]

3 of 3 cases ran in ZigZag; (level, operand) rows equal in both tools: 20 of 27 (under accounting='zigzag': 25); cycles equal in 2 of 3; energy without NoC ours/zigzag 0.701-0.949 (median 0.803)
"""
SILICON_TXT = """Eyeriss v1 ...
layer   figure                                  published       ours  ratio  constant
CONV1   processing latency (ms)                      16.5      13.94   0.70
CONV1   GLB accesses (MB)                            18.5      20.29   1.20  why
CONV1   DRAM accesses (MB)                              5      6.121   1.50  why
CONV1   DRAM, ours zeros compressed (MB)                5      5.206   0.90
CONV1   chip power (mW)                               332      143.3   0.30  why
CONV2   processing latency (ms)                      39.2      33.18   0.80
CONV2   GLB accesses (MB)                            77.6      81.94   1.30
CONV2   DRAM accesses (MB)                              4       5.53   1.60  (as above)
CONV2   DRAM, ours zeros compressed (MB)                4      3.817   0.95
CONV2   chip power (mW)                               288      136.1   0.40  (as above)
CONV3   processing latency (ms)                      21.8      19.17   0.75
CONV3   GLB accesses (MB)                            50.2      71.98   1.77  long reason
CONV3   GLB, q=3 r=2 t=2 as CONV4/5 (MB)             50.2      53.01   1.11
CONV3   DRAM accesses (MB)                              3      5.053   1.40  (as above)
CONV3   DRAM, ours zeros compressed (MB)                3      2.637   0.85
CONV3   chip power (mW)                               266        153   0.50  (as above)

TPU v1
TPU v1  peak TOPS                                      92      91.75   9.99
"""
MELOPPR_MD = """# title

| case | top | RTL cycles/step | model | v1/RTL | lost mass | role |
|---|---|---|---|---|---|---|
| a-dual | dual | 132 | 132 | 0.80 | 0.00 % | fit |
| b-quad | quad | 1,214 | 1,214 | 0.50 | 3.25 % | held out |
| c-hex | hex | 634 | 640 | 1.20 | 12.50 % | held out |

- notes

| P | yosys LUT |
|---|---|
| 2 | 1,005 |
"""
def _accuracy(root: Path, **override: str) -> None:
    texts = {cost_model.SCALESIM: SCALESIM_TXT, cost_model.ZIGZAG_BUNDLED: BUNDLED, cost_model.ZIGZAG_CROSSVAL: CROSSVAL,
             cost_model.SILICON: SILICON_TXT, cost_model.MELOPPR_RTL: MELOPPR_MD}
    texts.update({getattr(cost_model, k): v for k, v in override.items()})
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_accuracy_table_figures_come_from_their_records(tmp_path):
    _accuracy(tmp_path)
    text = cost_model.accuracy_table(tmp_path)
    assert "| the suite's random layer/arch/mapping cases, 0 mismatches whenever it passes" in text
    assert "3 runs on the 2/4/8/16-PE tops | cycles of `cycle_model=\"rtl\"` equal the RTL's in 2/3 (2 held out" in text
    assert "3.25–12.50 % of the score mass lost in 2 runs" in text and "(v1) 0.50–1.20x the RTL's cycles, median 0.80" in text
    assert "bundled `eyeriss_like`, `tpu_like` (translated" in text and "1 ResNet-50 + 2 MobileNetV2 layers" in text
    assert "(5 cases, 4 ran in ZigZag) | cycles equal in 3/4; (memory, operand) rows with reads and writes equal: 30 of 40 " \
           "by default, 38 of 40 under" in text
    assert "energy 0.51–0.99 of ZigZag's (median 0.90), 0.86–1.00 of ZigZag's own counts" in text
    assert "schemas, 2 layers × 2 mappings (3 cases, 3 ran in ZigZag) | cycles equal in 2/3; rows equal 20 of 27 by " \
           "default, 25 under" in text
    assert "energy without the NoC term 0.70–0.95 of ZigZag's (median 0.80)" in text
    assert "AlexNet CONV1–3 with" in text and "processing latency 0.70–0.80 of the chip's; GLB accesses 1.20–1.30 " \
           "(CONV3 1.77 with Table III's 4 channels per pass, 1.11 with" in text
    assert "DRAM 1.40–1.60 dense, 0.85–0.95 with the chip's zero compression; power 0.30–0.50" in text
    assert "9.99" not in text  # the TPU section is not the Eyeriss silicon row


def test_a_changed_validation_record_changes_the_table(tmp_path):
    _accuracy(tmp_path)
    before = cost_model.accuracy_table(tmp_path)
    _accuracy(tmp_path, ZIGZAG_CROSSVAL=CROSSVAL.replace("cycles equal in 2 of 3", "cycles equal in 3 of 3"),
              MELOPPR_RTL=MELOPPR_MD.replace("| 634 | 640 |", "| 634 | 634 |"))
    after = cost_model.accuracy_table(tmp_path)
    assert after != before
    assert "| cycles equal in 3/3; rows equal 20 of 27" in after and "equal the RTL's in 3/3" in after


@pytest.mark.parametrize("name", ["ZIGZAG_BUNDLED", "ZIGZAG_CROSSVAL", "MELOPPR_RTL"])
def test_a_validation_record_without_its_summary_is_refused(tmp_path, name):
    _accuracy(tmp_path, **{name: "nothing here\n"})
    with pytest.raises(RecordError, match=getattr(cost_model, name)):
        cost_model.accuracy_table(tmp_path)


def test_silicon_without_a_figure_is_refused(tmp_path):
    _accuracy(tmp_path, SILICON="\n".join(x for x in SILICON_TXT.splitlines() if "chip power" not in x))
    with pytest.raises(RecordError, match="chip power"):
        cost_model.accuracy_table(tmp_path)


def test_model_silicon_table_rows_come_from_the_record(tmp_path):
    _accuracy(tmp_path)
    text = cost_model.silicon_layers(tmp_path)
    assert text.splitlines()[2:] == ["| CONV1 | 0.70 | 1.20 | 1.50 / 0.90 | 0.30 |",
                                     "| CONV2 | 0.80 | 1.30 | 1.60 / 0.95 | 0.40 |",
                                     "| CONV3 | 0.75 | 1.77 | 1.40 / 0.85 | 0.50 |"]
    _accuracy(tmp_path, SILICON=SILICON_TXT.replace("19.17   0.75", "19.17   0.91"))
    assert "| CONV3 | 0.91 | 1.77 |" in cost_model.silicon_layers(tmp_path)


def test_model_silicon_table_refuses_a_layer_missing_a_figure(tmp_path):
    _accuracy(tmp_path, SILICON="\n".join(x for x in SILICON_TXT.splitlines()
                                          if not x.startswith("CONV2   chip power")))
    with pytest.raises(RecordError, match="CONV2 lacks"):
        cost_model.silicon_layers(tmp_path)


SILICON_FULL = """Eyeriss v1 ...
layer   figure                                  published       ours  ratio  constant
CONV1   MACs (G)                                      1.0        1.0   1.00
CONV1   processing latency (ms)                      10.0        8.0   0.80
CONV1   GLB accesses (MB)                            10.0       12.0   1.20
CONV1   DRAM accesses (MB)                            2.0        3.0   1.50  why
CONV1   DRAM, ours zeros compressed (MB)              2.0        1.8   0.90
CONV1   chip power (mW)                               300        150   0.50
CONV1   chip energy (mJ)                              3.0        1.2   0.40
CONV1   share of chip energy (%)                       60         40   0.67
CONV2   MACs (G)                                      1.0        1.0   1.00
CONV2   processing latency (ms)                      10.0       12.0   1.20
CONV2   GLB accesses (MB)                            10.0       14.0   1.40
CONV2   GLB, q=3 r=2 t=2 as CONV4/5 (MB)             10.0       11.0   1.10
CONV2   DRAM accesses (MB)                            2.0        5.0   2.50
CONV2   DRAM, ours zeros compressed (MB)              2.0        2.2   1.10
CONV2   chip power (mW)                               200        150   0.75
CONV2   chip energy (mJ)                              2.0        1.8   0.90
CONV2   share of chip energy (%)                       40         60   1.50

GLB accesses if Table V's MB are 2^20 bytes (Table III's KB are 1024 bytes, below): ratio CONV1 1.144, CONV2 1.049 (q=3 r=2 t=2)

TPU v1 (Jouppi et al. ISCA 2017), accelerators.tpu_v1_like()
TPU v1  peak TOPS                                      80      79.00   0.99
TPU v1  TOPS, 4096x4096 FC at batch 8 (roofline)      0.500     0.4000   0.80
TPU v1  TOPS, 4096x4096 FC at batch 64 (roofline)      4.000      3.000   0.75
TPU v1  TOPS, 4096x4096 FC at batch 256 (roofline)      16.00      8.000   0.50
"""


def test_model_silicon_rows_come_from_the_record(tmp_path):
    _accuracy(tmp_path, SILICON=SILICON_FULL)
    text = cost_model.model_silicon_rows(tmp_path)
    assert "AlexNet CONV1-2, batch 4" in text and "ratio 0.80, 1.20; 1.00 over the 2 layers" in text
    assert "ratio 1.20, 1.40; CONV3 with CONV4/5's q = 3, r = 2, t = 2 instead of Table III's q = 4, r = 1, t = 4: " \
           "1.10 (below)" in text
    assert "read as 2^20 bytes (Table III's KB are 1024 bytes): CONV1 1.14, CONV2 1.05 (q=3 r=2 t=2) |" in text
    # ours 8 MB dense = 4e6 16-bit words over 2e9 MACs: 0.0020; published 4 MB: 0.0010
    assert "dense words: ratio 1.50-2.50 (0.0020 vs 0.0010 16-bit words per MAC" in text
    assert "zeros (the chip run-length-compresses them): 0.90-1.10 |" in text
    # ours 3.0 mJ / 20 ms = 150 mW, published 5.0 mJ / 20 ms = 250 mW
    assert "absolute power ratio 0.50-0.75 (0.60 over the network); each layer's share of the 2 layers' energy: " \
           "ratio 0.67, 1.50" in text
    assert "TPU v1 (Jouppi et al., ISCA 2017): 80 TOPS" in text
    assert "peak 0.988; a 4096×4096 FC layer at batch 8 / 64 / 256 reaches 0.80 / 0.75 / 0.50 of the roofline" in text


def test_model_silicon_rows_refuse_a_record_without_the_mib_line(tmp_path):
    _accuracy(tmp_path, SILICON="\n".join(x for x in SILICON_FULL.splitlines() if "2^20" not in x))
    with pytest.raises(RecordError, match="2\\^20"):
        cost_model.model_silicon_rows(tmp_path)


def _model_records(root: Path, *, optimal=(True, True, True), refused_reason="cluster_size = 64") -> None:
    def row(net, layer, opt, h):
        return {"network": net, "layer": layer, "optimal": opt, "heuristic_ratio": h}
    rec = {"rows": {"eyeriss_v1": [row("resnet50", "a", optimal[0], 1.2), row("dqn", "b", optimal[1], 1.01),
                                   row("resnet50", "c", optimal[2], 1.5)],
                    "systolic_32x32_ws": [row("resnet50", "a", True, 1.0), row("dqn", "b", True, 1.04),
                                          row("resnet50", "c", True, 1.06)]}}
    runs = [{"run": "x", "status": "exact"}, {"run": "y", "status": "mismatch"},
            {"run": "z", "status": "refused", "reason": refused_reason}]
    for rel, obj in ((cost_model.MAPPER_OPTIMALITY, rec), (cost_model.TIMELOOP_EXERCISES, {"runs": runs})):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(json.dumps(obj))


def test_model_record_rows_come_from_their_records(tmp_path):
    _accuracy(tmp_path)
    _model_records(tmp_path)
    text = cost_model.model_record_rows(tmp_path)
    assert "array) on all 3 unique layers of ResNet-50 and DQN on Eyeriss v1 and 32x32 WS systolic array; heuristic " \
           "within 5 % of it on 1/3 (Eyeriss v1) and 2/3 (32x32 WS systolic array)" in text
    assert "3 cases (3 ran): 1 ResNet-50 and 1 MobileNetV2 layers × heuristic and random mappings" in text
    assert "cycles equal in 2/3; reads and writes both equal in 20 of 27 (case, level, operand) rows by default, " \
           "25 of 27 under" in text and "(ZigZag has none) 0.70–0.95 of ZigZag's, median 0.80" in text
    assert "5 cases (4 ran): its bundled `eyeriss_like`, `tpu_like`" in text and "× 1 ResNet-50 and 2 MobileNetV2" in text
    assert "1 of 2 expressible runs exact" in text and "1 runs refused by name (`cluster_size`)" in text


def test_model_record_rows_follow_a_changed_record(tmp_path):
    _accuracy(tmp_path)
    _model_records(tmp_path, optimal=(True, False, True), refused_reason="sparse tensor")
    text = cost_model.model_record_rows(tmp_path)
    assert "on 2 of 3 unique layers (Eyeriss v1), 3 of 3 unique layers (32x32 WS systolic array)" in text
    assert "refused by name (sparse tensors)" in text and "cluster_size" not in text


def test_model_record_rows_refuse_a_timeloop_record_without_runs(tmp_path):
    _accuracy(tmp_path)
    _model_records(tmp_path)
    (tmp_path / cost_model.TIMELOOP_EXERCISES).write_text("{}")
    with pytest.raises(RecordError, match=r"timeloop_exercises\.json"):
        cost_model.model_record_rows(tmp_path)


SCALESIM_TXT = """# command: python -m experiments.validation.scalesim_compare --jobs 2
# commit: abc1234
layer   df  array   ss total  ss stall  ss cycles  ours  diff %  raw %  map-eff d  ss s
------  --  ------  --------  --------  ---------  ----  ------  -----  ---------  ----
conv_a  os  32x32        100         0        101   101  +0.0000  +1.0000  +0  1.0
conv_a  ws  16x64        100         0        101   101  +0.0000  +1.0000  +0  1.0
conv_b  os  32x32        200         0        201   201  +0.0000  +0.5000  +0  1.0

3 cases: max |diff| = 0.0000% (conv_a os 32x32); max |raw diff| = 1.0000%; SCALE-Sim stall cycles in all: 0; failed runs: 0; tolerance 2.0% -> PASS
wall time 42.4 s
"""


def test_scalesim_rows_come_from_the_record(tmp_path):
    _accuracy(tmp_path)
    _model_records(tmp_path)
    (tmp_path / cost_model.SCALESIM).write_text(SCALESIM_TXT)
    guide = cost_model.accuracy_table(tmp_path)
    assert "SCALE-Sim 3.0.0 (2 ResNet-50 layers, dataflows OS/WS, arrays 32×32, 16×64) | max difference 0.0000 % " \
           "over 3 cases (tolerance 2 %: PASS) |" in guide
    model = cost_model.model_record_rows(tmp_path)
    assert "| SCALE-Sim 3.0.0 | exact on 3 cases (2 ResNet-50 layers, dataflows OS/WS, arrays 32×32, 16×64) |" in model
    assert "`.venv-scalesim`, 42 s wall);" in model
    (tmp_path / cost_model.SCALESIM).write_text(
        SCALESIM_TXT.replace("max |diff| = 0.0000%", "max |diff| = 0.2500%").replace("runs: 0", "runs: 1"))
    model = cost_model.model_record_rows(tmp_path)
    assert "max difference 0.2500 % over 3 cases, 1 SCALE-Sim runs failed" in model and "exact on" not in model
    (tmp_path / cost_model.SCALESIM).write_text(SCALESIM_TXT.replace("--jobs 2", "--quick --jobs 2"))
    assert "the `--quick` subset, the full run not recorded" in cost_model.model_record_rows(tmp_path)


def test_coming_from_timeloop_sentence_counts_the_records_runs(tmp_path):
    runs = ([{"status": "exact"}] * 3 + [{"status": "differs"}]
            + [{"status": "refused", "reason": "sparse_optimizations (sparse tensors) cannot be expressed"}] * 2
            + [{"status": "refused", "reason": "instance.densities gives 'A' density 0.5"},
               {"status": "refused", "reason": "cluster_size = 64 cannot be expressed"}])
    (tmp_path / cost_model.TIMELOOP_EXERCISES).parent.mkdir(parents=True)
    (tmp_path / cost_model.TIMELOOP_EXERCISES).write_text(json.dumps({"runs": runs}))
    text = cost_model.timeloop_check(tmp_path)
    assert text.startswith("3 of the 4 runs that can be expressed match exactly")
    assert ("The other 4 are refused by name (2 sparse-tensor runs, 1 with sparse densities, 1 with Simba's "
            "`cluster_size`)") in text
    (tmp_path / cost_model.TIMELOOP_EXERCISES).write_text(json.dumps({"runs": runs[:3] + runs[4:6]}))
    text = cost_model.timeloop_check(tmp_path)
    assert text.startswith("All 3 runs that can be expressed match exactly")
    assert "The other 2 are refused by name (2 sparse-tensor runs)" in text
    (tmp_path / cost_model.TIMELOOP_EXERCISES).write_text(json.dumps({"runs": []}))
    with pytest.raises(RecordError, match="no 'runs'"):
        cost_model.timeloop_check(tmp_path)


def test_model_scalesim_paragraph_comes_from_the_record(tmp_path):
    (tmp_path / cost_model.SCALESIM).parent.mkdir(parents=True)
    (tmp_path / cost_model.SCALESIM).write_text(SCALESIM_TXT.replace("--jobs 2", "--jobs 1"))
    text = cost_model.model_scalesim_run(tmp_path)
    assert ("the script's full run, 3 cases: 2 ResNet-50 layers × OS/WS × arrays 32×32, 16×64; 42 s wall, "
            "1 SCALE-Sim process at a time, CPU time not recorded; table above) agrees exactly") in text
    assert "stalled in none" in text and "not recorded." not in text
    (tmp_path / cost_model.SCALESIM).write_text(
        SCALESIM_TXT.replace("--jobs 2", "--quick --jobs 2").replace("max |diff| = 0.0000%", "max |diff| = 0.2500%")
        .replace("stall cycles in all: 0", "stall cycles in all: 7").replace("wall time 42.4 s\n", ""))
    text = cost_model.model_scalesim_run(tmp_path)
    assert "the script's `--quick` subset, 3 cases; run time not recorded;" in text
    assert "gives a max difference 0.2500 % over 3 cases" in text and "stalled 7 cycles" in text
    assert "the script's full run is not recorded." in text
    (tmp_path / cost_model.SCALESIM).write_text(SCALESIM_TXT.replace("3 cases: max", "cases max"))
    with pytest.raises(RecordError, match="summary line"):
        cost_model.model_scalesim_run(tmp_path)


def _with_zigzag(root: Path, zz: dict) -> None:
    _write(root, command="nice -n 10 python -m x --cold-compile")
    path = root / cost_model.THROUGHPUT
    head, _, line = path.read_text().rstrip("\n").rpartition("\n")
    rec = json.loads(line)
    rec["zigzag"] = zz
    path.write_text(f"{head}\n{json.dumps(rec)}\n")


def test_the_zigzag_row_comes_from_the_runs_zigzag_entry(tmp_path):
    zz = {"zigzag_version": "3.9.1", "cost_model_evals_per_s": 200.4, "cost_model_evals_per_cpu_s": 300.0,
          "n": 1002, "seconds": 5.004, "n_mappings": 256, "loma_evals_per_s": 150.2}
    _with_zigzag(tmp_path, zz)
    row = cost_model.speed_table(tmp_path).splitlines()[-1]
    # slowest Eyeriss v1 repeat at 100k in _rates: 3,000,000 per CPU-second, 1,000,000 per wall-clock second
    assert row.startswith("| ZigZag 3.9.1 cost model, same layer, Eyeriss-like, one core | 300 evaluations per "
                          "CPU-second (200 per wall-clock second): 1,002 evaluations of 256 fixed LOMA-generated "
                          "mappings in 5.0 s")
    assert "10,000× that per CPU-second (4,990× per wall-clock second)" in row
    assert "LOMA's search with the cost model 150 mappings per wall-clock second" in row
    del zz["cost_model_evals_per_cpu_s"]
    _with_zigzag(tmp_path, zz)
    row = cost_model.speed_table(tmp_path).splitlines()[-1]
    assert "200 evaluations per wall-clock second (per CPU-second: not recorded)" in row and "4,990×" in row
    del zz["n"]
    _with_zigzag(tmp_path, zz)
    with pytest.raises(RecordError, match="zigzag entry has no 'n'"):
        cost_model.speed_table(tmp_path)
    _write(tmp_path)
    assert "not recorded (the committed run is `--no-zigzag`)" in cost_model.speed_table(tmp_path)
