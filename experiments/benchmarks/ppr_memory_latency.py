"""MeLoPPR vs single-stage local PPR on CPU: latency, peak memory and precision@k.

For each graph (citeseer / cora / pubmed, shipped with coexplore, or ``--graph`` names and
edge-list paths; with ``--synthetic`` also power-law stand-ins for com-amazon / com-dblp /
com-youtube, labelled synthetic) and ``--seeds`` random sources (seeded, without
replacement), it runs

* the baseline :func:`evaluators.ppr.local_ppr` (BFS depth ``L = 6`` + 6-step diffusion),
* :func:`evaluators.ppr.meloppr` (``l1 = l2 = 3``, ``k = 200``, ``c = 10``) for each
  number of next-stage nodes in ``--next-stage``,
* and both again in the NetworkX style the paper describes for its CPU code
  (:mod:`evaluators.ppr.networkx_cpu`; ``--no-networkx`` skips them),

each query twice: once for the latency (its CPU time, ``time.process_time``, which other
jobs on a shared machine do not inflate), once under ``tracemalloc`` for the peak memory. It reports, per graph and next-stage count, the mean
latency and the speedup (ratio of the means), the mean tracemalloc peak and the memory
reduction (ratio of the means and mean of per-seed ratios), the reduction in the exact
bytes held (``stats.model_peak_bytes``), the reduction the paper's FPGA BRAM formula
``4 (5|V| + 2|E|)`` (largest sub-graph) gives against the baseline's tracemalloc peak,
and precision@k against the baseline's top-k -- ``|.|/k`` (the paper's definition),
``|.|/min(k, |truth|)`` (when the source's 6-hop ball has fewer than k nodes) and
``PPR.py``'s thresholded variant -- next to the paper's Table II and Fig. 7 values and
an independent re-implementation's sanity check (unpublished).

Everything is measured in the same run. The scipy columns compare the algorithms on the
same vectorized CSR code; the NetworkX columns compare them as the paper's CPU code did.

Run: ``python -m experiments.benchmarks.ppr_memory_latency [--quick] [--synthetic]
[--graph NAME_OR_PATH ...] [--graph-dir DIR] [--json FILE]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402

from accelerators.ppr_fpga import subgraph_fpga_bytes  # noqa: E402
from evaluators.ppr import (  # noqa: E402
    SYNTHETIC_LIKE,
    load_graph,
    local_ppr,
    meloppr,
    precision_at_k,
    precision_at_k_pprpy,
    synthetic_like,
)
from evaluators.ppr.networkx_cpu import (  # noqa: E402
    local_ppr_networkx,
    meloppr_networkx,
    to_networkx,
)

PLANETOID = ("citeseer", "cora", "pubmed")
#: Table II, average memory reduction vs single-stage local PPR (CPU, FPGA).
PAPER_MEM = {
    "citeseer": (1.51, 73.64),
    "cora": (4.18, 214.58),
    "pubmed": (6.43, 389.83),
    "amazon": (9.46, 595.55),
    "dblp": (13.43, 2169.64),
    "youtube": (4.21, 8699.55),
}
#: Fig. 7 (read from the figure): precision and CPU speedup at 1 and 13 next-stage nodes.
PAPER_FIG7 = {
    "citeseer": {"prec": {1: 0.71, 13: 0.90}, "cpu": {1: 1.11, 13: 0.19}},
    "cora": {"prec": {1: 0.65, 13: 0.89}, "cpu": {1: 2.59, 13: 0.35}},
    "pubmed": {"prec": {1: 0.76, 13: 0.86}, "cpu": {1: 7.25, 13: 0.63}},
    "amazon": {"prec": {1: 0.63, 13: 0.88}, "cpu": {1: 8.3, 13: 1.23}},
    "dblp": {"prec": {1: 0.79, 13: 0.91}, "cpu": {1: 24.68, 2: 15.43, 13: 2.58}},
    "youtube": {"prec": {1: 0.65, 13: 0.72}, "cpu": {1: 8.19, 13: 0.25}},
}
#: An independent re-implementation's sanity check (unpublished; alpha 0.95, k 200, 100
#: seeds; pubmed 40) [inferred].
INDEPENDENT_CHECK = {
    "cora": {1: 0.59, 3: 0.78, 5: 0.85, 13: 0.90},
    "citeseer": {1: 0.69, 3: 0.82, 5: 0.87, 13: 0.95},
    "pubmed": {1: 0.77, 3: 0.86, 5: 0.87, 13: 0.87},
}


def bram_bytes(stats) -> int:
    """The paper's FPGA memory model (Sec. V) for the largest sub-graph, 4 (2V + 2E + 2V + V) with
    2E = the adjacency entries (:func:`accelerators.ppr_fpga.subgraph_fpga_bytes`)."""
    return int(max(subgraph_fpga_bytes(v, nnz, 32)
                   for (v, _), nnz in zip(stats.stage_sizes, stats.stage_nnz)))


def run_graph(g, key: str, seeds: int, next_stage: list[int], k: int, rng_seed: int,
              networkx: bool = True) -> dict:
    rng = np.random.default_rng(rng_seed)
    sources = rng.choice(g.n, size=min(seeds, g.n), replace=False).tolist()
    local_ppr(g, sources[0])  # warm-up
    meloppr(g, sources[0], next_stage=1)
    G = to_networkx(g) if networkx else None
    rows = {"base": {"lat": [], "mem": [], "model": [], "ball6": [], "ball3": [], "nx_lat": [],
                     "nx_mem": []}}
    for ns in next_stage:
        rows[ns] = {"lat": [], "mem": [], "model": [], "bram": [], "prec": [], "prec_cap": [],
                    "prec_pprpy": [], "used": [], "stage2_v": [], "nx_lat": [], "nx_mem": []}
    for s in sources:
        base = local_ppr(g, s)
        base_mem = local_ppr(g, s, trace_memory=True).stats.tracemalloc_peak_bytes
        truth_top = base.top(k)
        b = rows["base"]
        if G is not None:
            b["nx_lat"].append(local_ppr_networkx(G, s).stats.cpu_s)
            b["nx_mem"].append(local_ppr_networkx(G, s, trace_memory=True).stats.tracemalloc_peak_bytes)
        b["lat"].append(base.stats.cpu_s)
        b["mem"].append(base_mem)
        b["model"].append(base.stats.model_peak_bytes)
        b["ball6"].append(base.stats.stage_sizes[0][0])
        for ns in next_stage:
            est = meloppr(g, s, l1=3, l2=3, k=k, next_stage=ns, c=10)
            mem = meloppr(g, s, l1=3, l2=3, k=k, next_stage=ns, c=10, trace_memory=True)
            r = rows[ns]
            if G is not None:
                r["nx_lat"].append(meloppr_networkx(G, s, k=k, next_stage=ns, c=10).stats.cpu_s)
                r["nx_mem"].append(meloppr_networkx(G, s, k=k, next_stage=ns, c=10,
                                                    trace_memory=True).stats.tracemalloc_peak_bytes)
            r["lat"].append(est.stats.cpu_s)
            r["mem"].append(mem.stats.tracemalloc_peak_bytes)
            r["model"].append(est.stats.model_peak_bytes)
            r["bram"].append(bram_bytes(est.stats))
            top = est.top(k)
            r["prec"].append(precision_at_k(top, truth_top, k))
            r["prec_cap"].append(
                len(set(top.tolist()) & set(truth_top.tolist())) / max(1, min(k, truth_top.size))
            )
            r["prec_pprpy"].append(precision_at_k_pprpy(est, base, k))
            r["used"].append(est.stats.extra["next_stage_used"])
            r["stage2_v"].extend(v for v, _ in est.stats.stage_sizes[1:])
            if ns == next_stage[0]:
                b["ball3"].append(est.stats.stage_sizes[0][0])
    return {"graph": g.name, "key": key, "synthetic": g.synthetic, "n": g.n, "m": g.m,
            "sources": sources, "rows": rows}


def summarize(res: dict, next_stage: list[int], k: int) -> list[str]:
    key, rows = res["key"], res["rows"]
    b = rows["base"]
    base_lat, base_mem = np.mean(b["lat"]), np.mean(b["mem"])
    base_model = np.mean(b["model"])
    ball6 = np.asarray(b["ball6"])
    out = [
        f"\n## {res['graph']}{' (SYNTHETIC)' if res['synthetic'] else ''}: |V|={res['n']:,} "
        f"|E|={res['m']:,}, {len(res['sources'])} sources; 6-hop ball |V| mean "
        f"{ball6.mean():,.0f} (median {np.median(ball6):,.0f}), 3-hop ball mean "
        f"{np.mean(b['ball3']):,.0f}; {np.mean(ball6 < k):.0%} of sources have a 6-hop ball "
        f"< k={k} nodes",
        f"baseline local_ppr(L=6), scipy: {base_lat * 1e3:.2f} ms/query (CPU time), tracemalloc "
        f"peak {base_mem / 1024:.1f} KiB, model bytes {base_model / 1024:.1f} KiB",
    ]
    has_nx = bool(b["nx_lat"])
    if has_nx:
        nx_lat, nx_mem = np.mean(b["nx_lat"]), np.mean(b["nx_mem"])
        out.append(f"baseline, NetworkX: {nx_lat * 1e3:.2f} ms/query, tracemalloc peak "
                   f"{nx_mem / 1024:.1f} KiB ({nx_lat / base_lat:.2f}x the time and "
                   f"{nx_mem / base_mem:.2f}x the memory of the scipy baseline)")
    paper_mem = PAPER_MEM.get(key)
    fig7 = PAPER_FIG7.get(key, {"prec": {}, "cpu": {}})
    check = INDEPENDENT_CHECK.get(key, {}) if not res["synthetic"] else {}
    hdr = (f"{'ns':>3} {'used':>5} {'prec@k':>7} {'paper':>6} {'check':>6} {'p/min':>6} "
           f"{'pprpy':>6} | {'ms':>7} {'speedup':>7} {'nx':>7} {'paper':>6} | {'mem KiB':>8} "
           f"{'red.':>6} {'seed':>6} {'nx':>6} {'paper':>6} | {'model':>6} {'BRAM':>7} {'paper':>7}")
    out += [hdr, "-" * len(hdr)]

    def fmt(v, spec):
        return format(v, spec) if v is not None else "-".rjust(int(spec.split(".")[0] or 6))

    for ns in next_stage:
        r = rows[ns]
        lat, mem = np.mean(r["lat"]), np.mean(r["mem"])
        per_seed = np.asarray(b["mem"]) / np.asarray(r["mem"])
        sp_nx = np.mean(b["nx_lat"]) / np.mean(r["nx_lat"]) if has_nx else None
        mem_nx = np.mean(b["nx_mem"]) / np.mean(r["nx_mem"]) if has_nx else None
        out.append(
            f"{ns:>3} {np.mean(r['used']):>5.1f} {np.mean(r['prec']):>7.3f} "
            f"{fmt(fig7['prec'].get(ns), '6.2f')} {fmt(check.get(ns), '6.2f')} "
            f"{np.mean(r['prec_cap']):>6.3f} {np.mean(r['prec_pprpy']):>6.3f} | "
            f"{lat * 1e3:>7.2f} {base_lat / lat:>6.2f}x {fmt(sp_nx, '6.2f')}x "
            f"{fmt(fig7['cpu'].get(ns), '5.2f')}x | "
            f"{mem / 1024:>8.1f} {base_mem / mem:>5.2f}x {per_seed.mean():>5.2f}x {fmt(mem_nx, '5.2f')}x "
            f"{fmt(paper_mem and paper_mem[0], '5.2f')}x | "
            f"{base_model / np.mean(r['model']):>5.2f}x "
            f"{np.mean(np.asarray(b['mem']) / np.asarray(r['bram'])):>6.1f}x "
            f"{fmt(paper_mem and paper_mem[1], '6.1f')}x"
        )
        r["summary"] = {
            "lat_ms": lat * 1e3, "speedup": base_lat / lat, "mem_kib": mem / 1024,
            "mem_reduction_of_means": base_mem / mem, "mem_reduction_mean_per_seed":
            per_seed.mean(), "mem_reduction_min": per_seed.min(), "mem_reduction_max":
            per_seed.max(), "model_reduction": base_model / np.mean(r["model"]),
            "prec": np.mean(r["prec"]), "prec_cap": np.mean(r["prec_cap"]),
            "prec_pprpy": np.mean(r["prec_pprpy"]),
            "speedup_nx": sp_nx, "mem_reduction_nx": mem_nx,
            "stage2_ball_mean_v": float(np.mean(r["stage2_v"])) if r["stage2_v"] else 0.0,
        }
    lo = min(rows[ns]["summary"]["mem_reduction_min"] for ns in next_stage)
    hi = max(rows[ns]["summary"]["mem_reduction_max"] for ns in next_stage)
    out.append(f"per-seed tracemalloc reduction range: {lo:.2f}x .. {hi:.2f}x "
               f"(paper, all graphs: 0.55x .. 745,271x)")
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100, help="random sources per graph")
    ap.add_argument("--next-stage", type=int, nargs="+", default=[1, 3, 5, 13])
    ap.add_argument("--k", type=int, default=200)
    ap.add_argument("--graph", "--graphs", dest="graphs", nargs="+", default=list(PLANETOID),
                    help="graphs: packaged names (citeseer cora pubmed), names with NAME_adj.txt in "
                         "--graph-dir, or edge-list paths")
    ap.add_argument("--no-networkx", action="store_true", help="skip the NetworkX-style CPU code")
    ap.add_argument("--synthetic", action="store_true",
                    help="add synthetic stand-ins for com-amazon/dblp/youtube")
    ap.add_argument("--synthetic-scale", type=float, default=0.05,
                    help="|V| and |E| of the synthetic graphs relative to the SNAP ones")
    ap.add_argument("--quick", action="store_true",
                    help="20 sources, next-stage 1 5 13, synthetic scale 0.01")
    ap.add_argument("--graph-dir", type=str, default=None,
                    help="directory of {name}_adj.txt[.gz] (default: $COEXPLORE_GRAPH_DIR, then the "
                         "graphs shipped with coexplore)")
    ap.add_argument("--rng-seed", type=int, default=0)
    ap.add_argument("--json", type=str, default=None, help="write the summaries here")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds = min(args.seeds, 20)
        args.next_stage = [1, 5, 13]
        args.synthetic_scale = min(args.synthetic_scale, 0.01)
    print(f"# {platform.processor() or platform.machine()}, python "
          f"{platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}")
    print(f"# alpha 0.95, baseline L=6, MeLoPPR l1=l2=3, k={args.k}, c=10; "
          f"{args.seeds} sources/graph; next-stage counts {args.next_stage}")
    print("# columns: ns = next-stage count requested, used = mean actually run; prec@k = "
          "|est ∩ truth|/k; paper = Fig. 7 (read off the figure), check = an independent "
          "sanity check; p/min = |∩|/min(k,|truth|); pprpy = PPR.py's thresholded variant; "
          "ms = MeLoPPR CPU time (scipy); speedup = mean baseline / mean MeLoPPR CPU time, "
          "scipy code, nx = the same in the NetworkX code; red. = mean tracemalloc "
          "peak ratio (scipy), seed = mean of per-seed ratios, nx = NetworkX ratio of means, "
          "paper = Table II CPU; model = exact "
          "held bytes ratio; BRAM = baseline tracemalloc / 4(5V+2E) of the largest "
          "sub-graph, paper = Table II FPGA")
    graphs = []
    for name in args.graphs:
        graphs.append((name, lambda nm=name: load_graph(nm, args.graph_dir)))
    if args.synthetic:
        for name in SYNTHETIC_LIKE:
            graphs.append((name, lambda nm=name: synthetic_like(
                nm, seed=args.rng_seed, scale=args.synthetic_scale)))
    out: dict = {"args": vars(args), "graphs": {}}
    t_all = time.perf_counter()
    for key, make in graphs:
        t = time.perf_counter()
        g = make()
        build = time.perf_counter() - t
        res = run_graph(g, key, args.seeds, args.next_stage, args.k, args.rng_seed,
                        networkx=not args.no_networkx)
        lines = summarize(res, args.next_stage, args.k)
        lines[0] += f" [graph built in {build:.1f} s, run {time.perf_counter() - t:.1f} s]"
        print("\n".join(lines), flush=True)
        out["graphs"][g.name] = {
            "synthetic": g.synthetic, "n": g.n, "m": g.m,
            "baseline": {"lat_ms": 1e3 * float(np.mean(res["rows"]["base"]["lat"])),
                         "mem_kib": float(np.mean(res["rows"]["base"]["mem"])) / 1024,
                         "nx_lat_ms": 1e3 * float(np.mean(res["rows"]["base"]["nx_lat"]))
                         if res["rows"]["base"]["nx_lat"] else None,
                         "nx_mem_kib": float(np.mean(res["rows"]["base"]["nx_mem"])) / 1024
                         if res["rows"]["base"]["nx_mem"] else None},
            "meloppr": {str(ns): {kk: (None if v is None else float(v))
                                  for kk, v in res["rows"][ns]["summary"].items()}
                        for ns in args.next_stage},
        }
    print(f"\n# total {time.perf_counter() - t_all:.1f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return out


if __name__ == "__main__":
    main()
