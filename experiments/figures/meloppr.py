"""Figures from MeLoPPR's committed ``results.json`` (``docs/reproduction/results/meloppr/``,
written by ``coexplore reproduce meloppr``; its ``synthetic_operating_points`` by
``coexplore reproduce meloppr --operating-points-only --merge-into ...``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from experiments.figures.records import RecordError, load_json

__all__ = ["FIGURES", "RESULTS", "at_most", "headline_row"]

RESULTS = "docs/reproduction/results/meloppr/results.json"
GRAPHS = ("citeseer", "cora", "pubmed")

#: MeLoPPR (Li et al., DAC 2021), quoted: FPGA end-to-end speedup over the CPU at 1
#: next-stage node (Fig. 7; no figure for cora), and on dblp at ~80 % precision (CPU
#: 15.4x, FPGA 707.9x) and at 13 nodes (FPGA 70.7x)
PAPER_FPGA_1 = {"citeseer": 48.9, "pubmed": 78.6}
PAPER_DBLP = {"cpu_80": 15.4, "fpga_80": 707.9, "fpga_13": 70.7}
CLAIM = (
    "MeLoPPR, DAC 2021",
    "CPU memory 1.51x / 4.18x / 6.43x less (citeseer / cora / pubmed); FPGA end to end 48.9x / – / "
    "78.6x faster than CPU at 1 next-stage node; on dblp 15x CPU and 707x FPGA at ~80 % precision",
)


def at_most(x: float) -> str:
    """The smallest one-digit bound above ``x``: ``3.9e-16 -> '4e-16'``."""
    e = math.floor(math.log10(x))
    m = math.ceil(x / 10**e + 1e-12)
    return f"1e{e + 1}" if m == 10 else f"{m}e{e}"


def _slash(values: list[float], fmt: str) -> str:
    """``2.73x / 6.63x / 7.92x`` (the last ``x`` is written by the caller)."""
    return "x / ".join(format(v, fmt) for v in values)


def headline_row(root: Path) -> str:
    """MeLoPPR's cell of the headline table (docs/REPRODUCTION.md)."""
    r = load_json(root, RESULTS)
    try:
        cpu = [r["graphs"][g]["cpu"]["per_ns"]["1"] for g in GRAPHS]
        fpga = [r["graphs"][g]["fpga"]["per_ns"]["1"] for g in GRAPHS]
        dblp = r["synthetic_operating_points"]["graphs"]["synthetic-dblp"]
        p80, p90 = dblp["points"]["0.8"], dblp["points"]["0.9"]
    except KeyError as e:
        raise RecordError(f"{RESULTS}: no {e} where the headline reads it") from None
    if dblp["metric"] != "prec_pprpy":
        raise RecordError(
            f"{RESULTS}: the synthetic operating points use {dblp['metric']!r}, not prec_pprpy"
        )
    if not (p80["table"]["fits_kc705"] and p90["table"]["fits_kc705"]):
        raise RecordError(
            f"{RESULTS}: a synthetic operating point's table no longer fits the KC705"
        )
    c = r["settings"]["c"]
    plateau = max(v["prec_pprpy"] for v in dblp["search"][str(c)].values())
    short = [
        PAPER_FPGA_1[g] / f["speedup_vs_scipy"]
        for g, f in zip(GRAPHS, fpga, strict=True)
        if g in PAPER_FPGA_1
    ]
    f80, f90 = p80["fpga"], p90["fpga"]
    return (
        "full run (`docs/reproduction/results/meloppr/`, [doc](reproduction/meloppr.md)): "
        f"memory at 1 next-stage node {_slash([x['mem_reduction_nx'] for x in cpu], '.2f')}x less vs the paper's "
        f"kind of (NetworkX) baseline, {_slash([x['mem_reduction'] for x in cpu], '.2f')}x vs our scipy one. FPGA "
        "end to end (modelled) **depends on the unpublished host**: against our fastest CPU code (scipy) and a "
        f"native-code host only {_slash([x['speedup_vs_scipy'] for x in fpga], '.1f')}x, **{min(short):.1f}x–"
        f"{max(short):.1f}x short** of the paper; vs the NetworkX baseline "
        f"{_slash([x['speedup_vs_nx'] for x in fpga], '.0f')}x with a native host but only "
        f"{_slash([x['speedup_vs_nx_networkx_host'] for x in fpga], '.1f')}x with a NetworkX host. Full-size "
        "synthetic dblp (SYNTHETIC, not the SNAP graph): with the paper's `c·k` table precision plateaus at "
        f"{plateau:.2f}; with a {p80['c'] // c}x larger table (c = {p80['c']}, still fits the KC705) "
        f"{p80['prec']:.3f} at {p80['ns']} next-stage nodes: CPU {p80['cpu']['speedup_nx']:.2f}x / "
        f"{p80['cpu']['speedup']:.2f}x faster (vs NetworkX / scipy; paper {PAPER_DBLP['cpu_80']}x), FPGA end to "
        f"end {f80['speedup_vs_nx']:.0f}x / {f80['speedup_vs_scipy']:.0f}x (paper {PAPER_DBLP['fpga_80']}x); "
        f"~{100 * round(p90['prec'], 1):.0f} % needs c = {p90['c']} and {p90['ns']} nodes, where the FPGA gives "
        f"{f90['speedup_vs_nx']:.0f}x / {f90['speedup_vs_scipy']:.1f}x (paper {PAPER_DBLP['fpga_13']}x at 13 "
        f"nodes). Exact decomposition to < {at_most(max(r['exactness'].values()))}"
    )


#: the row is rendered inside the headline table (experiments.figures.reproductions)
FIGURES: dict[str, Any] = {}
