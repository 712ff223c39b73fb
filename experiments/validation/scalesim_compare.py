"""Check the systolic-array cycle model (:mod:`evaluators.systolic_timing`) against SCALE-Sim v3.

For every (ResNet-50 layer, dataflow, array shape) it writes a SCALE-Sim topology and
config into a temporary directory, runs ``scalesim==3.0.0`` in its own environment
(``.venv-scalesim``, made by ``make validate-env``: SCALE-Sim needs numpy<2.4) as a
subprocess, reads ``COMPUTE_REPORT.csv`` and compares it with
:func:`evaluators.systolic_timing.systolic_compute_cycles`::

    python -m experiments.validation.scalesim_compare [--quick] [--jobs N] [--python PATH]

It prints one row per case and the largest difference, and exits with status 1 when a
difference exceeds ``--tolerance`` percent (default 2) or a SCALE-Sim run fails, 2 when
SCALE-Sim is not installed.

What is compared: SCALE-Sim reports ``Total Cycles`` as the 0-based index of the cycle
serving the last demand row, plus stalls, and ``Stall Cycles`` separately; its number of
compute cycles is therefore ``Total - Stall + 1`` (see the docstring of
:mod:`evaluators.systolic_timing`). ``diff %`` compares ours with that; ``raw %`` with the
reported ``Total Cycles`` as it stands (the one-cycle offset, for reference).

How a layer is given to SCALE-Sim: its topology CSV takes the *padded* input size and a
single stride, and computes the output size as ``ceil((H - R + stride) / stride)``,
which exceeds PyTorch's ``floor((H + 2*pad - R) / stride) + 1`` by one when ``stride``
does not divide ``H + 2*pad - R`` (ResNet-50's conv1 would become 113x113 instead of
112x112). So we give SCALE-Sim the input extent the layer actually reads,
``(P - 1) * stride + R`` -- the padded input without the trailing rows/columns no window
touches -- for which both formulas agree. ``--raw-padding`` passes ``H + 2*pad`` instead,
to show what that convention costs.

Layers are defined here (batch 1, torchvision ResNet-50 v1.5 shapes), not taken from a
model zoo, so that the check does not move when the zoo does.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evaluators.systolic_timing import DATAFLOWS, mapping_efficiency, systolic_compute_cycles
from mappers.workloads import Layer, conv2d_from_input, gemm

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PYTHON = ROOT / ".venv-scalesim" / "bin" / "python"
TOLERANCE_PCT = 2.0

#: A handful of ResNet-50 layers (batch 1): the stem, 1x1 and 3x3 convolutions at every
#: stage, both strided 3x3 and strided 1x1 (downsample) layers, and the classifier.
RESNET50_LAYERS: tuple[Layer, ...] = (
    conv2d_from_input("conv1", C=3, H=224, W=224, K=64, R=7, stride=2, padding=3),
    conv2d_from_input("res2a_branch2a", C=64, H=56, W=56, K=64, R=1),
    conv2d_from_input("res2a_branch2b", C=64, H=56, W=56, K=64, R=3, padding=1),
    conv2d_from_input("res3a_branch2b", C=128, H=56, W=56, K=128, R=3, stride=2, padding=1),
    conv2d_from_input("res3a_branch1", C=256, H=56, W=56, K=512, R=1, stride=2),
    conv2d_from_input("res4b_branch2a", C=1024, H=14, W=14, K=256, R=1),
    conv2d_from_input("res5b_branch2b", C=512, H=7, W=7, K=512, R=3, padding=1),
    gemm("fc", M=1, N=1000, K=2048),
)

#: Square and non-square arrays (rows x cols).
ARRAYS: tuple[tuple[int, int], ...] = ((32, 32), (128, 128), (16, 64), (64, 16))

#: ``--quick``: (layer, arrays) pairs, every dataflow -- a 1x1 convolution on a square and a
#: non-square array and a strided 1x1 on a large square one (about 30 s on two cores;
#: SCALE-Sim's run time grows with cycles x array side, see ``_cost``).
QUICK: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("res2a_branch2a", ((32, 32), (16, 64))),
    ("res3a_branch1", ((128, 128),)),
)

# SCALE-Sim's own default memory sizes (configs/scale.cfg); the CALC bandwidth mode
# (SCALE-Sim's default) estimates the DRAM bandwidth and does not stall reads.
_CONFIG = """\
[general]
run_name = run

[run_presets]
InterfaceBandwidth = CALC
UseRamulatorTrace = False

[architecture_presets]
ArrayHeight = {rows}
ArrayWidth = {cols}
ifmapsramszkB = 6144
filtersramszkB = 6144
ofmapsramszkB = 2048
IfmapOffset = 0
FilterOffset = 10000000
OfmapOffset = 20000000
Dataflow = {dataflow}
ReadRequestBuffer = 32
WriteRequestBuffer = 32

[layout]
IfmapCustomLayout = False
FilterCustomLayout = False
IfmapSRAMBankBandwidth = 10
IfmapSRAMBankNum = 10
IfmapSRAMBankPort = 2
FilterSRAMBankBandwidth = 10
FilterSRAMBankNum = 10
FilterSRAMBankPort = 2

[sparsity]
SparsitySupport = False
"""

# Runs SCALE-Sim without writing traces (scalesim.scale hard-codes save_disk_space=False).
_DRIVER = """\
import sys
from scalesim.scale_sim import scalesim
cfg, topo, layout, out, kind = sys.argv[1:6]
s = scalesim(save_disk_space=True, verbose=False, config=cfg, topology=topo, layout=layout,
             input_type_gemm=(kind == "gemm"))
s.run_scale(top_path=out)
"""


@dataclass(frozen=True)
class Case:
    layer: Layer
    dataflow: str
    rows: int
    cols: int

    @property
    def array(self) -> str:
        return f"{self.rows}x{self.cols}"


@dataclass(frozen=True)
class ScaleSimResult:
    """One row of SCALE-Sim's COMPUTE_REPORT.csv."""

    total_cycles_incl_prefetch: int
    total_cycles: int
    stall_cycles: int
    overall_util_pct: float
    mapping_efficiency_pct: float
    compute_util_pct: float
    wall_s: float

    @property
    def compute_cycles(self) -> int:
        """Number of compute cycles: the report's 0-based last cycle, less stalls, plus one."""
        return self.total_cycles - self.stall_cycles + 1


@dataclass(frozen=True)
class Row:
    case: Case
    scalesim: ScaleSimResult | None
    ours: int
    error: str | None = None

    @property
    def diff_pct(self) -> float | None:
        if self.scalesim is None:
            return None
        ref = self.scalesim.compute_cycles
        return 100.0 * (self.ours - ref) / ref

    @property
    def raw_diff_pct(self) -> float | None:
        if self.scalesim is None:
            return None
        return 100.0 * (self.ours - self.scalesim.total_cycles) / self.scalesim.total_cycles

    @property
    def mapping_efficiency_diff_pct(self) -> float | None:
        """Ours minus SCALE-Sim's mapping efficiency, in percentage points."""
        if self.scalesim is None:
            return None
        c = self.case
        ours = 100.0 * mapping_efficiency(c.layer, c.rows, c.cols, c.dataflow)
        return ours - self.scalesim.mapping_efficiency_pct


def scalesim_status(python: Path | str = DEFAULT_PYTHON) -> tuple[bool, str]:
    """Whether ``python`` exists and imports scalesim; the reason when it does not."""
    python = Path(python)
    if not python.exists():
        return False, f"{python} not found: run `make validate-env` to install SCALE-Sim"
    proc = subprocess.run([str(python), "-c", "import scalesim.scale_sim"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return False, f"{python} cannot import scalesim ({tail}): run `make validate-env`"
    return True, "ok"


def topology(layer: Layer, raw_padding: bool = False) -> tuple[str, str]:
    """``(kind, csv text)`` of SCALE-Sim's topology file for one layer.

    ``kind`` is ``"conv"`` or ``"gemm"`` (SCALE-Sim's ``-i`` input type). A convolution
    is described by the input extent it reads, ``(P-1)*stride + R`` (see the module
    docstring), or with ``raw_padding`` by ``H + 2*padding``. SCALE-Sim cannot express
    groups, dilation, batches or unequal strides: such layers raise ``ValueError``.
    """
    d, a = layer.dims, layer.attrs
    if layer.kind in ("gemm", "bmm"):
        if d.get("B", 1) != 1:
            raise ValueError(f"{layer.name}: SCALE-Sim has no batched matmul")
        return "gemm", f"Layer, M, N, K,\nL, {d['M']}, {d['N']}, {d['K']},\n"
    if layer.kind != "conv" or d.get("G", 1) != 1 or d["N"] != 1:
        raise ValueError(f"{layer.name}: SCALE-Sim takes plain batch-1 convolutions only")
    sh, sw = a.get("stride", (1, 1))
    if sh != sw or tuple(a.get("dilation", (1, 1))) != (1, 1):
        raise ValueError(f"{layer.name}: SCALE-Sim has one stride and no dilation")
    if raw_padding:
        h = a["H"] + 2 * a.get("padding", 0)
        w = a["W"] + 2 * a.get("padding", 0)
    else:
        h, w = layer.tensor("I").extent(d)[-2:]
    header = "Layer, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
    # the name must not contain "DP": SCALE-Sim splits such rows into depthwise channels
    return "conv", header + f"L, {h}, {w}, {d['R']}, {d['S']}, {d['C']}, {d['K']}, {sh},\n"


def _parse_report(path: Path, wall_s: float) -> ScaleSimResult:
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    if len(lines) != 2:
        raise RuntimeError(f"{path}: expected a header and one layer, got {len(lines)} lines")
    f = [x.strip() for x in lines[1].split(",")]
    return ScaleSimResult(int(f[1]), int(f[2]), int(f[3]), float(f[4]), float(f[5]),
                          float(f[6]), wall_s)


def run_scalesim(case: Case, python: Path | str, workdir: Path, raw_padding: bool = False,
                 timeout_s: float | None = None) -> ScaleSimResult:
    """Run SCALE-Sim on one case in ``workdir`` and return its compute report.

    A ``workdir`` that already holds this case's inputs, unchanged, and the report and
    wall time of a finished run is read instead of run again (so an interrupted
    ``--workdir`` run resumes); the wall time is the first run's.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    kind, topo = topology(case.layer, raw_padding)
    inputs = {"topology.csv": topo,
              "layout.csv": "Layer name,\n",  # required, unused without custom layouts
              "scale.cfg": _CONFIG.format(rows=case.rows, cols=case.cols, dataflow=case.dataflow),
              "driver.py": _DRIVER}
    out = workdir / "out"
    report = out / "run" / "COMPUTE_REPORT.csv"
    wall_file = workdir / "wall_s.txt"
    if report.exists() and wall_file.exists() and all(
            (workdir / name).exists() and (workdir / name).read_text() == text
            for name, text in inputs.items()):
        return _parse_report(report, float(wall_file.read_text()))
    wall_file.unlink(missing_ok=True)
    for name, text in inputs.items():
        (workdir / name).write_text(text)
    args = [str(python), "driver.py", "scale.cfg", "topology.csv", "layout.csv", str(out), kind]
    t0 = time.perf_counter()
    proc = subprocess.run(args, cwd=workdir, capture_output=True, text=True, timeout=timeout_s)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not report.exists():
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise RuntimeError(f"SCALE-Sim failed (exit {proc.returncode}): {tail}")
    result = _parse_report(report, wall)
    wall_file.write_text(f"{wall!r}\n")  # written last: its presence marks a finished run
    return result


def cases(layers: Iterable[Layer], dataflows: Iterable[str] = DATAFLOWS,
          arrays: Iterable[tuple[int, int]] = ARRAYS) -> list[Case]:
    return [Case(layer, df, r, c) for layer in layers for df in dataflows for r, c in arrays]


def _cost(case: Case) -> float:
    """SCALE-Sim's run time grows with demand rows x row width (cycles x array side)."""
    return systolic_compute_cycles(case.layer, case.rows, case.cols, case.dataflow) * (case.rows + case.cols)


def compare(case_list: Sequence[Case], python: Path | str = DEFAULT_PYTHON, jobs: int | None = None,
            raw_padding: bool = False, workdir: Path | None = None,
            timeout_s: float | None = None) -> list[Row]:
    """Run SCALE-Sim and the model on every case (``jobs`` SCALE-Sim processes at a time)."""
    jobs = jobs or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="scalesim_compare_") as tmp:
        base = Path(workdir) if workdir is not None else Path(tmp)

        def one(i: int) -> Row:
            case = case_list[i]
            ours = systolic_compute_cycles(case.layer, case.rows, case.cols, case.dataflow)
            try:
                res = run_scalesim(case, python, base / f"case{i:03d}", raw_padding, timeout_s)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                return Row(case, None, ours, str(e))
            return Row(case, res, ours)

        order = sorted(range(len(case_list)), key=lambda i: -_cost(case_list[i]))  # longest first
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            done = dict(zip(order, pool.map(one, order)))
    return [done[i] for i in range(len(case_list))]


def format_table(rows: Sequence[Row]) -> str:
    head = ("layer", "df", "array", "ss total", "ss stall", "ss cycles", "ours", "diff %",
            "raw %", "map-eff d", "ss s")
    body = []
    for r in rows:
        c, s = r.case, r.scalesim
        if s is None:
            body.append((c.layer.name, c.dataflow, c.array, "ERROR", "", "", str(r.ours), "", "", "",
                         (r.error or "").splitlines()[-1][:60]))
            continue
        body.append((c.layer.name, c.dataflow, c.array, str(s.total_cycles), str(s.stall_cycles),
                     str(s.compute_cycles), str(r.ours), f"{r.diff_pct:+.4f}", f"{r.raw_diff_pct:+.4f}",
                     f"{r.mapping_efficiency_diff_pct:+.2g}", f"{s.wall_s:.1f}"))
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    fmt = lambda cells: "  ".join(x.rjust(w) if i > 2 else x.ljust(w)  # noqa: E731
                                  for i, (x, w) in enumerate(zip(cells, widths)))
    return "\n".join([fmt(head), fmt(tuple("-" * w for w in widths)), *(fmt(b) for b in body)])


def summarize(rows: Sequence[Row], tolerance_pct: float = TOLERANCE_PCT) -> tuple[str, bool]:
    """A summary line and whether every case ran and agreed within ``tolerance_pct``."""
    ok_rows = [r for r in rows if r.scalesim is not None]
    failed = len(rows) - len(ok_rows)
    if not ok_rows:
        return f"no SCALE-Sim run succeeded ({failed} failed)", False
    worst = max(ok_rows, key=lambda r: abs(r.diff_pct or 0.0))
    raw = max(abs(r.raw_diff_pct or 0.0) for r in ok_rows)
    stalls = sum(r.scalesim.stall_cycles for r in ok_rows if r.scalesim)
    ok = failed == 0 and abs(worst.diff_pct or 0.0) <= tolerance_pct
    msg = (f"{len(ok_rows)} cases: max |diff| = {abs(worst.diff_pct or 0.0):.4f}% "
           f"({worst.case.layer.name} {worst.case.dataflow} {worst.case.array}); "
           f"max |raw diff| = {raw:.4f}%; SCALE-Sim stall cycles in all: {stalls}; "
           f"failed runs: {failed}; tolerance {tolerance_pct}% -> {'PASS' if ok else 'FAIL'}")
    return msg, ok


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.validation.scalesim_compare",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="only a few small cases (under a minute): "
                   + "; ".join(f"{n} on {', '.join(f'{r}x{c}' for r, c in a)}" for n, a in QUICK))
    p.add_argument("--python", default=str(DEFAULT_PYTHON),
                   help="the interpreter that has scalesim (default: .venv-scalesim/bin/python)")
    p.add_argument("--jobs", type=int, default=None, help="parallel SCALE-Sim runs (default: CPUs)")
    p.add_argument("--tolerance", type=float, default=TOLERANCE_PCT, help="allowed |diff| in percent")
    p.add_argument("--raw-padding", action="store_true",
                   help="give SCALE-Sim H+2*pad (its ceil output size then differs from the layer's)")
    p.add_argument("--workdir", type=Path, default=None,
                   help="keep SCALE-Sim's files here; a rerun with the same workdir reads the cases "
                   "that finished instead of running them again")
    args = p.parse_args(argv)

    ok, why = scalesim_status(args.python)
    if not ok:
        print(f"error: {why}", file=sys.stderr)
        return 2
    if args.quick:
        by_name = {layer.name: layer for layer in RESNET50_LAYERS}
        case_list = [c for name, arrays in QUICK for c in cases([by_name[name]], DATAFLOWS, arrays)]
    else:
        case_list = cases(RESNET50_LAYERS)
    t0 = time.perf_counter()
    rows = compare(case_list, args.python, args.jobs, args.raw_padding, args.workdir)
    print(format_table(rows))
    msg, passed = summarize(rows, args.tolerance)
    print(f"\n{msg}\nwall time {time.perf_counter() - t0:.1f} s")
    for r in rows:
        if r.error:
            print(f"{r.case.layer.name} {r.case.dataflow} {r.case.array}: {r.error}", file=sys.stderr)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
