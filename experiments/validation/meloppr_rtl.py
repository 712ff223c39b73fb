"""MeLoPPR's FPGA engine model against the authors' own Verilog, simulated with Icarus.

The authors publish the RTL of the diffusion engine (github.com/sharc-lab/MeLoPPR,
``FPGA/diffusion/*.v``: ``diffusion_rw.v`` the PE, ``scheduler_*`` the partition
schedulers, ``add_up_score.v`` the score accumulation, ``top_{dual,quad,octa,hex}*`` the
2/4/8/16-PE tops and their testbenches). This script drives those testbenches with tables
built from real sub-graphs, runs them under Icarus Verilog (``iverilog``/``vvp``), and
records per case: cycles per diffusion step (from ``mask`` rising to each increment of the
top's ``l_step``), the final score tables and score-sum tables, and the exact integer
diffusion they should equal. The RTL is **not** part of coexplore: pass the directory of a
checkout with ``--rtl-dir`` or ``$MELOPPR_RTL_DIR``; without one the script stops with a
message saying so.

**What is changed in the RTL, at run time, in a temporary copy** (recorded as provenance):

1. ``0'b0`` -> ``1'b0`` (4 places: ``diffusion_rw.v`` and the quad/octa/hex tops): a
   zero-width literal, which Icarus rejects;
2. the testbenches' ``$readmemh`` paths ``C:/Users/Administrator/Downloads/`` are pointed
   at the temporary directory holding this case's tables.

Nothing else is touched; the testbenches' parameters (``node_num``, ``last_node_num``,
``max_steps``, the dual top's address bounds) are overridden with ``iverilog -P``. A
separate top-level module (written here, not the authors') watches ``l_step``, prints the
time of each step and dumps the memories with ``$writememh`` when ``l_step`` reaches
``max_steps``.

**Table layout** (read from ``diffusion_rw.v`` and the authors' toy tables in
``input_bram_table_testbench/``): PE ``a`` owns global nodes ``a*node_num + 1 ...`` (1-based,
``node_offset``). Its sub-graph table holds, at ``2(k-1)`` and ``2(k-1)+1``, the first and
last address of local node ``k``'s neighbour list, then the lists (global 1-based ids). Its
score table holds two words per node (previous / current score, alternating by step). The
seed starts with ``SEED_SCORE`` integer units. Each step moves ``floor(s / deg)`` to every
neighbour (``deg`` = in-sub-graph degree) and clears the node: the residual walk
``R <- A floor(R / deg)``, no teleport; ``add_up_score.v`` adds ``15 * s / 16`` of each
score to the score-sum table per step (quad/octa/hex tops only).

Sub-graphs: the first ``N`` nodes of the BFS order (hop level, then index: as
:func:`evaluators.ppr.graph.bfs_ball`) from a source, ``N`` a multiple of 16 so the same
sub-graph runs on every top, and the whole of cora (2,708 = 2 x 1,354 = 4 x 677 =
7 x 339 + 335 = 15 x 170 + 158 nodes, the partitions the authors' testbenches name).

Run: ``python -m experiments.validation.meloppr_rtl --rtl-dir /path/to/MeLoPPR``
(``--cases NAME ...`` for a subset; ``--work DIR`` keeps per-case results so an
interrupted run resumes). Committed output: ``docs/validation/meloppr_rtl.json`` (the data
the cycle model's tests read) and ``docs/validation/meloppr_rtl.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

RTL_ENV = "MELOPPR_RTL_DIR"
RTL_REPO = "github.com/sharc-lab/MeLoPPR"
RTL_SUBDIR = "FPGA/diffusion"
OUT_JSON = Path("docs/validation/meloppr_rtl.json")
OUT_MD = Path("docs/validation/meloppr_rtl.md")
OUT_SYNTH = Path("docs/validation/meloppr_rtl_synth.json")

#: Integer units the seed node starts with (the authors' toy uses 1000 and 999).
SEED_SCORE = 1_000_000
#: The testbenches' clock period (``period = 10`` time units).
PERIOD = 10
#: add_up_score.v: ``sum += coeff1 * score / coeff2``.
ADDUP_COEFF = (15, 16)

FIXES = (
    ("0'b0", "1'b0", "zero-width literal rejected by Icarus (4 places)"),
    ("C:/Users/Administrator/Downloads/", "{workdir}/", "testbench $readmemh paths"),
)


@dataclass(frozen=True)
class Top:
    """One of the authors' tops: ``pes`` PEs, testbench module, top instance, table-file
    prefix, and whether ``last_node_num`` exists (octa/hex)."""

    name: str
    pes: int
    tb: str
    inst: str
    prefix: str
    has_last: bool
    tb_file: str


TOPS: dict[str, Top] = {
    "dual": Top("dual", 2, "top_dual_tb", "top_dual_ins", "bram_", False, "top_dual_tb.v"),
    "quad": Top(
        "quad",
        4,
        "top_quad_generate_tb",
        "top_quad_ins",
        "bram_quad_cora_",
        False,
        "top_quad_generate_tb.v",
    ),
    "octa": Top(
        "octa",
        8,
        "top_octa_generate_tb",
        "top_octa_ins",
        "bram_octa_cora_",
        True,
        "top_octa_generate_tb.v",
    ),
    "hex": Top(
        "hex",
        16,
        "top_hex_generate_tb",
        "top_hex_ins",
        "bram_hex_cora_",
        True,
        "top_hex_generate_tb.v",
    ),
}

#: RTL sources compiled with every top (the testbench and its top are added per top).
COMMON_SOURCES = ("diffusion_rw.v", "divide.v", "bram.v", "conflict_block.v")
TOP_SOURCES = {
    "dual": ("top_dual.v", "scheduler_dual.v", "sync_control_dual.v"),
    "quad": (
        "top_quad_generate.v",
        "scheduler_quad_generate.v",
        "l_step_count_quad.v",
        "add_up_score.v",
    ),
    "octa": (
        "top_octa_generate.v",
        "scheduler_octa_generate.v",
        "l_step_count_octa.v",
        "add_up_score.v",
    ),
    "hex": (
        "top_hex_generate.v",
        "scheduler_hex_generate.v",
        "l_step_count_hex.v",
        "add_up_score.v",
    ),
}


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A sub-graph (``graph``, ``n_nodes`` first BFS nodes from ``source``; ``source=-1``
    and ``n_nodes=0``: the whole graph; ``graph="toy"``: the authors' 4-node example) run
    on ``top`` for ``steps`` steps."""

    name: str
    graph: str
    source: int
    n_nodes: int
    top: str
    steps: int


def default_cases() -> list[Case]:
    """The committed set: the authors' toy (dual, 100 steps, as their testbench), 5 BFS
    sub-graphs of cora/citeseer on all four tops, and whole cora on all four."""
    out = [Case("toy-dual", "toy", 0, 4, "dual", 100)]
    subs = [("cora", 32), ("cora", 128), ("cora", 544), ("citeseer", 64), ("citeseer", 256)]
    for gname, n in subs:
        src = pick_source(gname, n)
        for top in TOPS:
            out.append(Case(f"{gname}{n}-{top}", gname, src, n, top, 4))
    for top in TOPS:
        out.append(Case(f"cora-all-{top}", "cora", -1, 0, top, 2))
    return out


def pick_source(graph: str, n: int, seed: int = 0) -> int:
    """A source whose connected component has at least ``n`` nodes: the first of a seeded
    permutation (``numpy.random.default_rng(seed + n)``)."""
    from scipy.sparse.csgraph import connected_components

    from evaluators.ppr.graph import load_graph

    g = load_graph(graph)
    _, lab = connected_components(g.adj, directed=False)
    sizes = np.bincount(lab)
    for v in np.random.default_rng(seed + n).permutation(g.n):
        if sizes[lab[v]] >= n:
            return int(v)
    raise ValueError(f"graph {graph!r} has no component of {n} nodes")


def bfs_order(adj, source: int, n: int) -> np.ndarray:
    """First ``n`` nodes of the BFS order from ``source``: by hop level, each level in
    increasing index order (the order of :func:`evaluators.ppr.graph.bfs_ball`)."""
    indptr, indices = adj.indptr, adj.indices
    seen = {source}
    order = [source]
    frontier = [source]
    while frontier and len(order) < n:
        nxt = sorted({int(u) for v in frontier for u in indices[indptr[v] : indptr[v + 1]]} - seen)
        seen.update(nxt)
        order.extend(nxt)
        frontier = nxt
    if len(order) < n:
        raise ValueError(f"source {source}: component has {len(order)} < n_nodes={n} nodes")
    return np.asarray(order[:n], dtype=np.int64)


def case_adjacency(case: Case):
    """``(adj, seed_index)``: the case's sub-graph as a CSR (rows in PE order) and the
    seed's row."""
    import scipy.sparse as sp

    if case.graph == "toy":
        # input_bram_table_testbench/: 4 nodes; 1-2, 1-3, 1-4, 2-3, 3-4 (bram_subgraph_*.txt)
        e = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)])
        a = sp.coo_array((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(4, 4))
        return sp.csr_array(a + a.T), 0
    from evaluators.ppr.graph import induced, load_graph

    g = load_graph(case.graph)
    if case.source < 0:
        return sp.csr_array(g.adj), 0
    nodes = bfs_order(g.adj, case.source, case.n_nodes)
    return induced(g, nodes), 0


def partition(n: int, pes: int, has_last: bool) -> tuple[int, int]:
    """``(node_num, last_node_num)`` for ``n`` nodes on ``pes`` PEs; the dual and quad tops
    need ``n % pes == 0`` (no ``last_node_num``)."""
    if has_last:
        node_num = -(-n // pes)
        last = n - (pes - 1) * node_num
        if last <= 0:
            raise ValueError(f"{n} nodes do not split over {pes} PEs with a shorter last PE")
        return node_num, last
    if n % pes:
        raise ValueError(
            f"{n} nodes do not split evenly over {pes} PEs (this top has no last_node_num)"
        )
    return n // pes, n // pes


def build_tables(adj, pes: int, node_num: int, seed: int, seed_score: int = SEED_SCORE):
    """Per PE ``(score_table, subgraph_table)`` word lists in the RTL's layout."""
    n = adj.shape[0]
    indptr, indices = adj.indptr, adj.indices
    out = []
    for a in range(pes):
        lo, hi = a * node_num, min(n, (a + 1) * node_num)
        k = hi - lo
        score = [0] * (2 * k)
        if lo <= seed < hi:
            score[2 * (seed - lo)] = seed_score
        graph = [0] * (2 * k)
        addr = 2 * k
        for j, v in enumerate(range(lo, hi)):
            nb = indices[indptr[v] : indptr[v + 1]]
            if nb.size == 0:
                raise ValueError(f"node {v} has no neighbour; diffusion_rw.v needs degree >= 1")
            graph[2 * j] = addr
            graph[2 * j + 1] = addr + nb.size - 1
            graph.extend(int(u) + 1 for u in nb)
            addr += nb.size
        if len(graph) > 8192:
            raise ValueError(f"PE {a}: sub-graph table needs {len(graph)} > 8192 words")
        out.append((score, graph))
    return out


# ---------------------------------------------------------------------------------------
# Reference arithmetic (what the RTL should compute)
# ---------------------------------------------------------------------------------------


def initial_scores(case: Case, n: int) -> np.ndarray:
    """Initial integer scores: ``SEED_SCORE`` at the seed (row 0); the authors' toy tables
    hold 1000 at node 1 and 999 at node 3 (``bram_score_table_{1,2}.txt``)."""
    r = np.zeros(n, dtype=np.int64)
    if case.graph == "toy":
        r[0], r[2] = 1000, 999
    else:
        r[0] = SEED_SCORE
    return r


def integer_residual(adj, r0: np.ndarray, steps: int) -> np.ndarray:
    """``R <- A floor(R / deg)`` in integers, ``deg`` the in-sub-graph degree: the RTL's
    arithmetic without its lost updates (:func:`evaluators.ppr.diffuse` with
    ``quantum=1``, ``deg=None`` gives the same vector in floating point)."""
    deg = np.diff(adj.indptr).astype(np.int64)
    r = np.asarray(r0, dtype=np.int64).copy()
    a = adj.astype(np.int64)
    for _ in range(steps):
        r = a @ (r // deg)
    return r


# ---------------------------------------------------------------------------------------
# Running the RTL
# ---------------------------------------------------------------------------------------


def rtl_dir_from(arg: str | None) -> Path | None:
    """The checkout from ``--rtl-dir`` or ``$MELOPPR_RTL_DIR``, or None."""
    d = arg or os.environ.get(RTL_ENV)
    if not d:
        return None
    p = Path(d)
    if not (p / RTL_SUBDIR / "diffusion_rw.v").is_file():
        raise FileNotFoundError(
            f"rtl_dir={str(p)!r}: no {RTL_SUBDIR}/diffusion_rw.v there "
            f"(a checkout of {RTL_REPO} is expected)"
        )
    return p


def no_rtl_message() -> str:
    return (
        f"MeLoPPR RTL not available: pass --rtl-dir or set ${RTL_ENV} to a checkout of "
        f"{RTL_REPO} (it is not part of coexplore and is never downloaded)"
    )


def rtl_commit(rtl: Path) -> str | None:
    """The checkout's git commit, if it is a git work tree; else None."""
    try:
        r = subprocess.run(
            ["git", "-C", str(rtl), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        )
        return r.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def sources_digest(rtl: Path) -> str:
    """SHA-256 over the ``FPGA/diffusion/*.v`` files (name and bytes, sorted)."""
    h = hashlib.sha256()
    for f in sorted((rtl / RTL_SUBDIR).glob("*.v")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def patched_copy(rtl: Path, workdir: Path) -> dict[str, int]:
    """Copy ``FPGA/diffusion/*.v`` into ``workdir`` with :data:`FIXES` applied; returns how
    many replacements each fix made."""
    counts = {old: 0 for old, _, _ in FIXES}
    for f in sorted((rtl / RTL_SUBDIR).glob("*.v")):
        text = f.read_text(errors="replace")
        for old, new, _ in FIXES:
            counts[old] += text.count(old)
            text = text.replace(old, new.format(workdir=workdir.as_posix()))
        (workdir / f.name).write_text(text)
    return counts


def _hex_lines(words: list[int]) -> str:
    return "".join(f"{w:X}\n" for w in words)


def _monitor(top: Top, steps: int) -> str:
    tb, inst = top.tb, top.inst
    if top.name == "dual":
        mems = [("score", f"{tb}.bram_score_table_{a + 1}") for a in range(2)]
        lstep = f"{tb}.{inst}.l_step"
    else:
        mems = [("score", f"{tb}.genblk1[{a}].bram_score_table") for a in range(top.pes)]
        mems += [("sum", f"{tb}.genblk1[{a}].bram_score_sum_table") for a in range(top.pes)]
        lstep = f"{tb}.{inst}.l_step"
    dumps = []
    counters = {"score": 0, "sum": 0}
    for kind, path in mems:
        a = counters[kind]
        counters[kind] += 1
        dumps.append(f'      $writememh("dump_{kind}_{a}.hex", {path}.memory_array);')
    dump_text = "\n".join(dumps)
    return f"""
module meloppr_monitor;
  initial begin
    @(posedge {tb}.mask);
    $display("START %0t", $time);
  end
  always @({lstep}) begin
    $display("STEP %0d %0t", {lstep}, $time);
    if ({lstep} == {steps}) begin
      // one period later: the last accumulation write lands on the same edge as l_step
      #({PERIOD});
{dump_text}
      $display("DONE %0t", $time);
      $finish;
    end
  end
endmodule
"""


def run_case(
    case: Case, rtl: Path, keep: Path | None = None, timeout_s: float = 3600
) -> dict[str, Any]:
    """Simulate one case; returns its record (cycles, scores, references, CPU seconds)."""
    top = TOPS[case.top]
    adj, seed = case_adjacency(case)
    n = adj.shape[0]
    node_num, last = partition(n, top.pes, top.has_last)
    tables = build_tables(adj, top.pes, node_num, seed)
    with tempfile.TemporaryDirectory(prefix="meloppr_rtl_") as tmp:
        work = Path(tmp)
        counts = patched_copy(rtl, work)
        if case.graph == "toy":  # the authors' own tables, as published
            for f in (rtl / RTL_SUBDIR / "input_bram_table_testbench").glob("*.txt"):
                shutil.copy(f, work / f.name)
        else:
            for a, (score, graph) in enumerate(tables):
                (work / f"{top.prefix}score_table_{a + 1}.txt").write_text(_hex_lines(score))
                (work / f"{top.prefix}subgraph_{a + 1}.txt").write_text(_hex_lines(graph))
        (work / "meloppr_monitor.v").write_text(_monitor(top, case.steps))
        params = {"node_num": node_num, "max_steps": case.steps}
        if top.has_last:
            params["last_node_num"] = last
        if top.name == "dual":
            params.update(
                lower_addr1=0,
                upper_addr1=2 * node_num - 1,
                lower_addr2=2 * node_num,
                upper_addr2=4 * node_num - 1,
            )
        srcs = [*COMMON_SOURCES, *TOP_SOURCES[top.name], top.tb_file, "meloppr_monitor.v"]
        cmd = [
            "iverilog",
            "-g2012",
            "-o",
            "sim.vvp",
            "-s",
            top.tb,
            "-s",
            "meloppr_monitor",
            *[f"-P{top.tb}.{k}={v}" for k, v in params.items()],
            *srcs,
        ]
        t0 = _child_cpu()
        r = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"iverilog failed for {case.name}:\n{r.stderr[-4000:]}")
        r = subprocess.run(
            ["vvp", "-n", "sim.vvp"], cwd=work, capture_output=True, text=True, timeout=timeout_s
        )
        cpu_s = _child_cpu() - t0
        log = r.stdout
        if "DONE" not in log:
            raise RuntimeError(
                f"vvp did not finish {case.name}:\n{log[-2000:]}\n{r.stderr[-2000:]}"
            )
        start = int(re.search(r"START (\d+)", log).group(1))
        step_t = [int(t) for v, t in re.findall(r"STEP (\d+) (\d+)", log) if int(v) >= 1]
        scores = [_read_hex(work / f"dump_score_{a}.hex") for a in range(top.pes)]
        sums = (
            [_read_hex(work / f"dump_sum_{a}.hex") for a in range(top.pes)]
            if top.name != "dual"
            else None
        )
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(work / "sim.vvp", keep / f"{case.name}.vvp")
    ends = [(t - start) // PERIOD for t in step_t]
    step_cycles = [ends[0], *np.diff(ends).tolist()]
    # final scores: both slots of each node (one of them is 0 after the clear)
    rtl_r = np.zeros(n, dtype=np.int64)
    for a, sc in enumerate(scores):
        lo, hi = a * node_num, min(n, (a + 1) * node_num)
        for j in range(hi - lo):
            rtl_r[lo + j] = sc[2 * j] + sc[2 * j + 1]
    ref_r = integer_residual(adj, initial_scores(case, n), case.steps)
    deg = np.diff(adj.indptr).astype(int)
    rec: dict[str, Any] = {
        **asdict(case),
        "pes": top.pes,
        "n": int(n),
        "nnz": int(adj.nnz),
        "node_num": node_num,
        "last_node_num": last,
        "degrees": deg.tolist(),
        "cycles": int(ends[-1]),
        "step_cycles": [int(c) for c in step_cycles],
        "rtl_mass": int(rtl_r.sum()),
        "ref_mass": int(ref_r.sum()),
        "initial_mass": int(initial_scores(case, n).sum()),
        "rtl_scores": rtl_r.tolist(),
        "bit_exact": bool(np.array_equal(rtl_r, ref_r)),
        "n_nodes_differ": int(np.count_nonzero(rtl_r != ref_r)),
        "max_abs_diff": int(np.abs(rtl_r - ref_r).max()),
        "sim_cpu_s": round(cpu_s, 2),
        "fix_counts": counts,
    }
    if sums is not None:
        rec.update(_addup_check(adj, seed, case.steps, node_num, sums, top.pes))
    return rec


def _addup_check(adj, seed, steps, node_num, sums, pes) -> dict[str, Any]:
    """Score sums vs the reference accumulation. The quad testbench initialises every sum
    of PE ``a`` with word ``2a`` of PE 1's score table (``memory_sum_a[x*2]``), so that
    offset is subtracted; the octa and hex testbenches read the same never-loaded
    ``memory_sum_a``, so their sums start (and stay) ``x`` (recorded as -1).
    ``add_up_score.v`` visits ``mem_size - 1`` nodes per PE."""
    n = adj.shape[0]
    deg = np.diff(adj.indptr).astype(np.int64)
    a_int = adj.astype(np.int64)
    r = np.zeros(n, dtype=np.int64)
    r[seed] = SEED_SCORE
    init0 = np.zeros(n, dtype=np.int64)  # score table of PE 1 as loaded: words 0, 2, 4, ...
    pe1_words = [0] * (2 * node_num)
    if seed < node_num:
        pe1_words[2 * seed] = SEED_SCORE
    acc_all = np.zeros(n, dtype=np.int64)  # every node, the intended accumulation
    for _ in range(steps):
        r = a_int @ (r // deg)
        acc_all += ADDUP_COEFF[0] * r // ADDUP_COEFF[1]
    got = np.zeros(n, dtype=np.int64)
    visited = np.zeros(n, dtype=bool)
    for a in range(pes):
        lo, hi = a * node_num, min(n, (a + 1) * node_num)
        off = pe1_words[2 * a] if 2 * a < len(pe1_words) else 0
        for j in range(hi - lo):
            w = sums[a][j]
            got[lo + j] = -1 if w < 0 else w - off  # -1: x (never initialised)
            visited[lo + j] = j < node_num - 1
        init0[lo:hi] = off
    return {
        "sum_offset_pe": [
            int(pe1_words[2 * a]) if 2 * a < len(pe1_words) else 0 for a in range(pes)
        ],
        "sum_visited_nodes": int(visited.sum()),
        "rtl_sums": got.tolist(),
        "sum_x_words": int(np.count_nonzero(got < 0)),
        "sum_mass_rtl": int(got[got >= 0].sum()),
        "sum_mass_ref_all_nodes": int(acc_all.sum()),
        "sum_mass_ref_visited": int(acc_all[visited].sum()),
        "sum_unvisited_ref_mass": int(acc_all[~visited].sum()),
    }


def _read_hex(path: Path) -> list[int]:
    """Words of a ``$writememh`` dump (``//`` address comments skipped); ``x``/``z`` words
    read as -1."""
    out = []
    for line in path.read_text().splitlines():
        line = line.split("//", 1)[0].strip()
        if not line:
            continue
        for tok in line.split():
            out.append(int(tok, 16) if re.fullmatch(r"[0-9a-fA-F]+", tok) else -1)
    return out


def _child_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


#: Synthesis-only change (a temp copy, as :data:`FIXES`): ``divide.v`` lists ``posedge
#: reset`` in its sensitivity but tests ``ok`` before ``reset``, which yosys cannot map to
#: an asynchronous reset; ``reset`` is tied to ``1'b0`` where ``diffusion_rw.v``
#: instantiates it, so a synchronous process is the same hardware.
SYNTH_FIXES = (
    (
        "always @(posedge clk,posedge reset)",
        "always @(posedge clk)",
        "divide.v: reset is constant 0; yosys rejects the mixed-edge process",
    ),
)
#: Module tops synthesised (the engine without its block RAMs, which live in the
#: testbenches).
SYNTH_TOPS = {
    "dual": "top_dual",
    "quad": "top_quad_generate",
    "octa": "top_octa_generate",
    "hex": "top_hex_generate",
}


def synth_top(top: str, rtl: Path) -> dict[str, Any]:
    """``yosys synth_xilinx -family xc7 -flatten`` of one top (default parameters except
    ``node_num``, which only sizes constants); returns the cell counts, ``lut`` (LUT1-6),
    ``ff`` and the CPU seconds. yosys 0.23 figures, not vendor (Vivado) figures."""
    with tempfile.TemporaryDirectory(prefix="meloppr_synth_") as tmp:
        work = Path(tmp)
        patched_copy(rtl, work)
        for f in work.glob("*.v"):
            text = f.read_text()
            for old, new, _ in SYNTH_FIXES:
                text = text.replace(old, new)
            f.write_text(text)
        srcs = [s for s in (*COMMON_SOURCES, *TOP_SOURCES[top]) if s != "bram.v"]
        script = (
            f"read_verilog {' '.join(srcs)}\n"
            f"synth_xilinx -family xc7 -top {SYNTH_TOPS[top]} -flatten\nstat\n"
        )
        (work / "s.ys").write_text(script)
        t0 = _child_cpu()
        r = subprocess.run(
            ["yosys", "-q", "-l", "s.log", "s.ys"], cwd=work, capture_output=True, text=True
        )
        cpu = _child_cpu() - t0
        log = (work / "s.log").read_text(errors="replace")
        if r.returncode:
            raise RuntimeError(f"yosys failed on {top}:\n{log[-3000:]}")
    stat = log[log.rindex("Number of cells") :]
    cells = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"^\s+([A-Z][A-Z0-9_]+)\s+(\d+)$", stat, re.M)
    }
    lut = sum(v for k, v in cells.items() if re.fullmatch(r"LUT[1-6]", k))
    ff = sum(v for k, v in cells.items() if re.fullmatch(r"FD[A-Z_0-9]*", k))
    return {
        "top": top,
        "module": SYNTH_TOPS[top],
        "pes": TOPS[top].pes,
        "lut": lut,
        "ff": ff,
        "cells": cells,
        "yosys_cpu_s": round(cpu, 1),
    }


def tool_versions() -> dict[str, str]:
    out = {}
    for tool, flag in (("iverilog", "-V"), ("yosys", "-V")):
        try:
            r = subprocess.run([tool, flag], capture_output=True, text=True)
            out[tool] = (r.stdout or r.stderr).splitlines()[0].strip()
        except OSError:
            out[tool] = "not found"
    return out


FIT_CASES = ("toy-dual", "cora32-dual", "cora32-quad", "cora32-octa", "cora32-hex")
"""The cases the model's one fitted constant (the dual top's hand-over cycle) was fitted
on; every other case is held out (``tests/accelerators/test_ppr_fpga_rtl.py``)."""


def model_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per committed case: the RTL's cycles per step and both engine models'."""
    from accelerators import ppr_fpga_rtl as rtl
    from accelerators.ppr_fpga import MERGE_CYCLES_PER_NODE, PPRFpgaEngine, Subgraph

    rows = []
    cases = {c.name: c for c in default_cases()}
    for rec in data["cases"]:
        case = cases[rec["name"]]
        adj, _ = case_adjacency(case)
        P, n = rec["pes"], rec["n"]
        st = rtl.step_cycles(adj.indptr, adj.indices, P, rec["node_num"])
        sg = Subgraph(n, int(adj.nnz), 1, 1, np.diff(adj.indptr), adj.indices)
        v1 = PPRFpgaEngine(n_pes=P, cycle_model="v1").split_cycles(sg)
        v1_step = v1[0] - MERGE_CYCLES_PER_NODE * n
        rtl_step = rec["step_cycles"][-1]
        lost = 1 - rec["rtl_mass"] / rec["ref_mass"]
        rows.append(
            {
                "name": rec["name"],
                "top": rec["top"],
                "n": n,
                "nnz": rec["nnz"],
                "steps": rec["steps"],
                "rtl_step": rtl_step,
                "model_step": st["cycles"],
                "v1_step": v1_step,
                "v1_over_rtl": v1_step / rtl_step,
                "model_over_rtl": st["cycles"] / rtl_step,
                "free": st["free_cycles"],
                "stall": st["stall_cycles"],
                "accum": st["accum_cycles"],
                "stall_share": st["stall_cycles"] / st["free_cycles"],
                "v1_stall_share": v1[1] / max(1, v1_step - v1[1]),
                "bit_exact": rec["bit_exact"],
                "lost_mass_pct": 100 * lost,
                "role": "fit" if rec["name"] in FIT_CASES else "held out",
            }
        )
    return rows


def write_md(data: dict[str, Any], synth: dict[str, Any] | None, path: Path) -> None:
    """The committed markdown table, from the committed JSON and the package's models."""
    from accelerators.ppr_fpga import KC705, PAPER_TABLE_I, PPRFpgaEngine

    prov = data["provenance"]
    rows = model_rows(data)
    lines = [
        "# MeLoPPR's FPGA engine model against the authors' RTL (Icarus Verilog)",
        "",
        f"RTL: {prov['repository']} at commit `{prov['commit']}` (`{RTL_SUBDIR}/*.v`, sha256 of the "
        f"sources `{prov['sources_sha256'][:16]}...`), simulated with {prov['tools'].get('iverilog')}. "
        "Fixes applied to a temporary copy at run time, never committed: "
        + "; ".join(f"`{f['from']}` -> `{f['to']}` ({f['why']})" for f in prov["fixes"])
        + ".",
        f"Command: `{prov['command']}`; data: `docs/validation/meloppr_rtl.json`; this page: "
        "`python -m experiments.validation.meloppr_rtl --md-only`.",
        "",
        "Cycles per diffusion step (every step of a run takes the same cycles in the RTL: "
        "`step_cycles` in the JSON). *model* = `accelerators.ppr_fpga_rtl` (the engine's "
        '`cycle_model="rtl"`), *v1* = the first model (`cycle_model="v1"`). Stall share = '
        "the PEs' cycles beyond the stall-free slowest PE's (`36 + 3d` per node), over those. Lost mass = "
        "score mass the RTL loses against the exact integer diffusion `R <- A floor(R / deg)` "
        f"(seed {SEED_SCORE:,} units; the toy: the authors' 1000 + 999). *fit*: the cases the one fitted "
        "constant (the dual top's hand-over cycle) came from; the rest are held out. The fit "
        "set was named after all runs had been seen; the constant is 1 cycle per step on the dual top and "
        "0 on the others, everything else in the model is read from the RTL.",
        "",
        "| case | top | nodes | entries | steps | RTL cycles/step | model | model/RTL | v1 | v1/RTL | "
        "stall share (RTL model) | v1 stall share | accumulation | RTL = integer diffusion | lost mass | role |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['top']} | {r['n']} | {r['nnz']} | {r['steps']} | {r['rtl_step']:,} | "
            f"{r['model_step']:,} | {r['model_over_rtl']:.4f} | {r['v1_step']:,} | {r['v1_over_rtl']:.2f} | "
            f"{100 * r['stall_share']:.0f} % | {100 * r['v1_stall_share']:.0f} % | {r['accum']} | "
            f"{'yes' if r['bit_exact'] else 'no'} | {r['lost_mass_pct']:.2f} % | {r['role']} |"
        )
    v1r = [r["v1_over_rtl"] for r in rows]
    held = [r for r in rows if r["role"] == "held out"]
    lost = [r["lost_mass_pct"] for r in rows if r["lost_mass_pct"] > 0]
    lines += [
        "",
        f"- model/RTL: {min(r['model_over_rtl'] for r in rows):.4f}-{max(r['model_over_rtl'] for r in rows):.4f} "
        f"over all {len(rows)} cases ({len(held)} held out); v1/RTL: {min(v1r):.2f}-{max(v1r):.2f}, "
        f"median {float(np.median(v1r)):.2f}.",
        "- The final scores of the model's data path (`ppr_fpga_rtl.simulate_run`, lost updates included) "
        "equal the RTL's bit for bit in every case (`tests/accelerators/test_ppr_fpga_rtl.py`).",
        f"- The RTL equals the exact integer diffusion in {sum(r['bit_exact'] for r in rows)} of {len(rows)} "
        f"cases; {len(lost)} lose score mass, {min(lost):.2f}-{max(lost):.2f} % of it "
        "(lost updates: a PE stalled between its read and its write of a neighbour's score writes back a "
        "stale sum).",
        "- `add_up_score.v` visits `node_num - 1` nodes per PE: the last node of each PE is never "
        "accumulated. The quad testbench initialises PE `a`'s score sums with word `2a` of PE 1's score "
        "table; the octa/hex testbenches with a never-loaded array (`x`). The hex top wires "
        "`finished_final[13]` (not `[12]`) to `l_step_count_hex`'s `finished13` and nothing to its "
        "`finished16`, which the module ignores anyway: PE 13's accumulation is never waited for (all "
        "PEs' accumulations take the same cycles, so this does not change the timing here).",
        "- The RTL's score sum is `15/16 * sum_l R_l` (`add_up_score.v`), without the `alpha^l` weights "
        "of the paper's Eq. 1; the dual top has no accumulation at all.",
    ]
    if synth:
        sp = synth["provenance"]
        lines += [
            "",
            "## LUTs: yosys synthesis of the RTL (not vendor figures) and the paper's Table I",
            "",
            f"{sp['note']}. Tools: {sp['tools'].get('yosys')}. Command: `{sp['command']}`. Fixes in a "
            "temporary copy: "
            + "; ".join(f"`{f['from']}` -> `{f['to']}` ({f['why']})" for f in sp["fixes"])
            + ".",
            "",
            "| P | yosys LUT | yosys FF | paper Table I LUT | LUT model fitted to Table I (lut_source paper) | BRAM36 (RTL tables) |",
            "|---|---|---|---|---|---|",
        ]
        for t in synth["tops"]:
            P = t["pes"]
            paper = PAPER_TABLE_I[P][0] / 100 * KC705.lut
            e = PPRFpgaEngine(n_pes=P)
            lines.append(
                f"| {P} | {t['lut']:,} | {t['ff']:,} | {paper:,.0f} ({PAPER_TABLE_I[P][0]} %) | "
                f"{e.resources()['lut']:,.0f} | {20 * P} |"
            )
        lines += [
            "",
            "BRAM36: 20 per PE from the testbenches' three 8192 x 32 / 8192 x 32 / 4096 x 32 tables "
            "(`bram.v`); the global top-`c*k` table of the engine model is not in the RTL.",
        ]
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtl-dir", default=None, help=f"checkout of {RTL_REPO} (or ${RTL_ENV})")
    ap.add_argument("--cases", nargs="*", default=None, help="case names (default: all)")
    ap.add_argument("--work", default=None, help="directory for per-case results (resume)")
    ap.add_argument("--json", default=str(OUT_JSON))
    ap.add_argument("--md", default=str(OUT_MD))
    ap.add_argument(
        "--synth",
        nargs="*",
        default=None,
        metavar="TOP",
        help="synthesise these tops with yosys instead (default all) into --synth-json",
    )
    ap.add_argument("--synth-json", default=str(OUT_SYNTH))
    ap.add_argument(
        "--md-only",
        action="store_true",
        help="rewrite --md from the committed --json and --synth-json (no RTL needed)",
    )
    args = ap.parse_args(argv)
    if args.md_only:
        data = json.loads(Path(args.json).read_text())
        sj = Path(args.synth_json)
        write_md(data, json.loads(sj.read_text()) if sj.exists() else None, Path(args.md))
        return 0
    rtl = rtl_dir_from(args.rtl_dir)
    if rtl is None:
        print(no_rtl_message())
        return 0
    if args.synth is not None:
        tops = args.synth or list(SYNTH_TOPS)
        rows = []
        for t in tops:
            row = synth_top(t, rtl)
            print(f"{t}: {row['lut']} LUT, {row['ff']} FF ({row['yosys_cpu_s']} CPU s)", flush=True)
            rows.append(row)
        prov = {
            "repository": RTL_REPO,
            "commit": rtl_commit(rtl),
            "sources_sha256": sources_digest(rtl),
            "fixes": [{"from": o, "to": n, "why": w} for o, n, w in (*FIXES[:1], *SYNTH_FIXES)],
            "command": "python -m experiments.validation.meloppr_rtl --rtl-dir DIR --synth "
            + " ".join(tops),
            "tools": tool_versions(),
            "note": "yosys 0.23 synth_xilinx -family xc7 -flatten: not vendor (Vivado) figures; "
            "the tops without their block RAMs (those are in the testbenches)",
        }
        Path(args.synth_json).write_text(
            json.dumps({"provenance": prov, "tops": rows}, indent=1) + "\n"
        )
        return 0
    cases = default_cases()
    if args.cases:
        unknown = set(args.cases) - {c.name for c in cases}
        if unknown:
            raise SystemExit(
                f"--cases: unknown {sorted(unknown)}; known: {[c.name for c in cases]}"
            )
        cases = [c for c in cases if c.name in args.cases]
    work = Path(args.work) if args.work else None
    records = []
    for c in cases:
        cached = work / f"{c.name}.json" if work else None
        if cached is not None and cached.exists():
            records.append(json.loads(cached.read_text()))
            continue
        t0 = time.time()
        rec = run_case(c, rtl)
        print(
            f"{c.name}: {rec['cycles']} cycles, steps {rec['step_cycles']}, bit_exact={rec['bit_exact']}, "
            f"mass {rec['rtl_mass']}/{rec['ref_mass']}, sim {rec['sim_cpu_s']} CPU s "
            f"({time.time() - t0:.0f} s wall)",
            flush=True,
        )
        if cached is not None:
            work.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps(rec))
        records.append(rec)
    prov = {
        "repository": RTL_REPO,
        "commit": rtl_commit(rtl),
        "sources_sha256": sources_digest(rtl),
        "fixes": [{"from": o, "to": n, "why": w} for o, n, w in FIXES],
        "command": "python -m experiments.validation.meloppr_rtl --rtl-dir DIR"
        + (" --cases " + " ".join(args.cases) if args.cases else ""),
        "tools": tool_versions(),
        "seed_score": SEED_SCORE,
        "period": PERIOD,
        "cycles": "from mask rising to l_step == max_steps, in clock periods",
    }
    data = {"provenance": prov, "cases": records}
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n")
    if args.md and not args.cases:
        sj = Path(args.synth_json)
        write_md(data, json.loads(sj.read_text()) if sj.exists() else None, Path(args.md))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
