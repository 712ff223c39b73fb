"""The FPGA figures of the committed MeLoPPR reproduction, recomputed with the cycle model
checked against the authors' RTL (``cycle_model="rtl"``), beside the first model (``v1``).

The committed run (``docs/reproduction/results/meloppr/results.json``) measured the CPU
baselines and first modelled the FPGA with ``v1``. The FPGA side is a model, so it is
recomputed here without re-measuring the CPU, for every graph and operating point of that
run: the three Planetoid graphs and the three synthetic stand-ins (each generated again
from its seed), their next-stage ladders at the paper's ``c = 10`` table, and the stand-ins'
operating points at their own table capacities (both rules of
:func:`experiments.reproduce.meloppr.synthetic_operating_points`). Each graph's sources are
drawn again exactly as the reproduction drew them
(``numpy.random.default_rng(rng_seed).choice(n, seeds)``), each query's sub-graphs
regenerated with :func:`evaluators.ppr.meloppr` (``record_subgraphs=True``, same
``l1 = l2 = 3``, ``k``, ``c``), and costed one query at a time by the engines of the
committed host models (P = 16) under both cycle models, then summarized by the
reproduction's own :func:`~experiments.reproduce.meloppr.fpga_figures` against the
committed CPU means. The ``v1`` figures are checked against the committed ones, key by key
(they must agree: same sub-graphs, same model, same summary), so the ``rtl`` figures are
for the very same queries. The on-chip bytes do not depend on the cycle model (recomputed
and checked too); the memory ratios are carried over from the committed run (their CPU
side is per source and not in ``results.json``).

Outputs:

* ``docs/reproduction/results/meloppr/fpga_rtl.json`` (and ``.md``): per graph and count
  both models' FPGA figures, FPGA cycles and stall cycles, their ratios, the check; Fig. 5
  under both; the RTL arithmetic's lost score mass on the stage-1 balls;
* with ``--merge-into DIR``: ``DIR/results.json`` takes the ``rtl`` figures as its FPGA
  figures (``graphs.*.fpga``, ``graphs.*.targets*``, ``fig5``, the synthetic operating
  points' ``fpga``), the earlier ones kept beside under ``*_v1``, and a ``fpga_rerun`` key
  naming this command; ``DIR/table.md`` is rewritten from it. Nothing else there changes.
  It refuses if any ``v1`` recomputation differs from the committed figures.

Run: ``python -m experiments.reproduce.meloppr_fpga_rerun --merge-into
docs/reproduction/results/meloppr`` (468 CPU s here, most of it the stand-ins;
``--graphs cora`` for one graph, without ``--merge-into``).

The co-design study is not recomputed (its committed front was made with ``v1``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from accelerators.ppr_fpga import HostModel, LatencyBreakdown, PPRFpgaEngine, subgraph_fpga_bytes
from evaluators.ppr import load_graph, meloppr
from evaluators.ppr.engine_evaluator import baseline_subgraph, meloppr_subgraphs
from experiments.reproduce import jsonable
from experiments.reproduce import meloppr as rep

RESULTS = Path("docs/reproduction/results/meloppr/results.json")
OUT = Path("docs/reproduction/results/meloppr/fpga_rtl.json")
GRAPHS = ("citeseer", "cora", "pubmed", "synthetic-amazon", "synthetic-dblp", "synthetic-youtube")
MODELS = ("v1", "rtl")
COMMAND = "python -m experiments.reproduce.meloppr_fpga_rerun"
#: keys of an FPGA figure that come from the CPU's memory, carried over from the committed run
MEMORY_KEYS = ("mem_reduction", "mem_reduction_per_seed_mean", "mem_reduction_nx")
#: relative tolerance of the v1 recomputation against the committed figures
RTOL = 1e-9


def engines_from(res: dict[str, Any], model: str) -> dict[str, PPRFpgaEngine]:
    return {
        kind: PPRFpgaEngine(host=HostModel(**h), cycle_model=model)
        for kind, h in res["host_models"].items()
    }


def _graph(name: str, res: dict[str, Any]) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """The graph, its sources (drawn as the reproduction drew them) and its settings."""
    st = res["settings"]
    gr = res["graphs"][name]
    if gr.get("synthetic"):
        g = load_graph(f"synthetic-{gr['key']}@{gr['scale']}", seed=st["rng_seed"])
        n_src = st["synthetic_seeds"]
    else:
        g = load_graph(name)
        n_src = st["seeds"]
    if (g.n, g.m) != (gr["n"], gr["m"]):
        raise RuntimeError(f"{name}: regenerated graph has |V|, |E| = {g.n}, {g.m}, the run had {gr['n']}, {gr['m']}")
    sources = np.random.default_rng(st["rng_seed"]).choice(g.n, size=min(n_src, g.n), replace=False)
    return g, sources, gr


class _Costs:
    """Per model, the latencies of the queries costed so far, in the layout of
    :func:`experiments.reproduce.meloppr.fpga_latencies`, and the rows' sub-graph bytes."""

    def __init__(self, engines: dict[str, dict[str, PPRFpgaEngine]]):
        self.engines = engines
        self.lat: dict[str, dict[Any, Any]] = {m: {"base": []} for m in engines}
        self.rows: dict[Any, dict[str, list]] = {}

    def base(self, sg: Any) -> None:
        for m, eng in self.engines.items():
            self.lat[m]["base"].append(eng["native"].query_latency([sg], "split", result_entries=0))

    def query(self, key: Any, subs: list, back: int) -> None:
        row = self.rows.setdefault(key, {"fpga_bytes": [], "entries": []})
        row["fpga_bytes"].append(max(float(subgraph_fpga_bytes(x.n_nodes, x.nnz, 32)) for x in subs))
        for m, eng in self.engines.items():
            per = self.lat[m].setdefault(key, {kind: [] for kind in eng})
            for kind, e in eng.items():
                per[kind].append(e.query_latency(subs, "split", result_entries=back))

    def figures(self, model: str, base: dict[str, Any], keys: list, cap: int | None) -> dict[str, Any]:
        """:func:`~experiments.reproduce.meloppr.fpga_figures` of the costed queries
        against the committed CPU means ``base`` (``baseline_lat_ms``,
        ``baseline_nx_lat_ms``, ``nx_sources``)."""
        nx = base.get("baseline_nx_lat_ms")
        meas = {
            "base": {"lat_ms": [base["baseline_lat_ms"]], "nx_lat_ms": [nx] if nx else [],
                     "mem_kib": [], "nx_mem_kib": []},
            "rows": self.rows,
            "nx_sources": base.get("nx_sources", 0),
        }
        lat = {"base": self.lat[model]["base"] or [LatencyBreakdown()]} | {k: self.lat[model][k] for k in keys}
        return rep.fpga_figures(self.engines[model], meas, keys, table_capacity=cap, latencies=lat)

    def cycles(self, model: str, key: Any) -> dict[str, float]:
        nat = self.lat[model][key]["native"]
        return {
            "fpga_cycles": float(np.mean([x.fpga_cycles for x in nat])),
            "conflict_cycles": float(np.mean([x.conflict_cycles for x in nat])),
            "latency_ms": float(np.mean([x.latency_ms for x in nat])),
            "fpga_busy_ms": float(np.mean([x.fpga_busy_ms for x in nat])),
        }


def _compare(got: dict[str, Any], committed: dict[str, Any], where: str) -> list[str]:
    """Keys where the v1 recomputation ``got`` differs from the committed figure."""
    bad = []
    for k, v in committed.items():
        if k in MEMORY_KEYS or k == "per_ns":
            continue
        w = got.get(k)
        if isinstance(v, float) and isinstance(w, float):
            if not np.isclose(w, v, rtol=RTOL, atol=0):
                bad.append(f"{where}.{k}: {w!r} != {v!r}")
        elif w != v:
            bad.append(f"{where}.{k}: {w!r} != {v!r}")
    return bad


def _finish(figs: dict[str, dict[str, Any]], committed: dict[str, Any]) -> dict[str, Any]:
    """The rtl figure with the committed memory ratios carried over."""
    out = dict(figs["rtl"])
    for k in MEMORY_KEYS:
        if k in committed:
            out[k] = committed[k]
    return out


def _ratios(c: dict[str, dict[str, float]]) -> dict[str, Any]:
    v, t = c["v1"], c["rtl"]
    return {
        "v1": v, "rtl": t,
        "rtl_over_v1_cycles": t["fpga_cycles"] / v["fpga_cycles"],
        "rtl_over_v1_latency": t["latency_ms"] / v["latency_ms"],
        "rtl_over_v1_busy": t["fpga_busy_ms"] / v["fpga_busy_ms"],
        "rtl_stall_share": t["conflict_cycles"] / max(1.0, t["fpga_cycles"] - t["conflict_cycles"]),
    }


def _sub(g: Any, s: int, st: dict[str, Any], ns: int, c: int | None) -> tuple[list, int]:
    est = meloppr(g, s, l1=3, l2=3, k=st["k"], next_stage=ns, c=c, record_subgraphs=True)
    return meloppr_subgraphs(est, 3, 3), int(est.stats.extra["table_entries"])


def rerun_graph(name: str, res: dict[str, Any]) -> dict[str, Any]:
    """Both models' FPGA figures for one graph of the committed run (its ``c = 10``
    next-stage ladder and, for a stand-in, its operating points), one query at a time."""
    t0 = time.process_time()
    g, sources, gr = _graph(name, res)
    st = res["settings"]
    k, c = st["k"], st["c"]
    ns_values = sorted(int(x) for x in gr["fpga"]["per_ns"])
    models = {m: engines_from(res, m) for m in MODELS}
    ladder = _Costs(models)
    sop = res.get("synthetic_operating_points", {}).get("graphs", {}).get(name)
    combos: dict[tuple[Any, int], _Costs] = {}
    if sop is not None:
        for p in [*sop["points"].values(), *sop["unbounded"]["points"].values()]:
            if p.get("ns") is not None:
                combos.setdefault((p["c"], int(p["ns"])), _Costs(models))
    for s in (int(x) for x in sources):
        ladder.base(baseline_subgraph(g, s, 6))
        for ns in ns_values:
            subs, _ = _sub(g, s, st, ns, c)
            ladder.query(ns, subs, rep.sent_back(c * k, 0))
        for (lab, ns), costs in combos.items():
            cap = None if lab == "unbounded" else int(lab)
            subs, entries = _sub(g, s, st, ns, cap)
            costs.query(ns, subs, rep.sent_back(None if cap is None else cap * k, entries))
        print(f"{name}: source {s} costed ({time.process_time() - t0:.0f} s)", flush=True)
    base = gr["cpu"]
    figs = {m: ladder.figures(m, base, ns_values, c * k) for m in MODELS}
    committed = gr["fpga"]
    bad = _compare(figs["v1"], committed, f"{name}.fpga")
    per_ns: dict[str, Any] = {}
    fpga_rtl = {x: figs["rtl"][x] for x in ("baseline_on_fpga_ms", "baseline_fits_fraction")}
    fpga_rtl["per_ns"] = {}
    for ns in ns_values:
        cm = committed["per_ns"][ns]
        bad += _compare(figs["v1"]["per_ns"][ns], cm, f"{name}.fpga.per_ns.{ns}")
        fr = _finish({m: figs[m]["per_ns"][ns] for m in MODELS}, cm)
        fpga_rtl["per_ns"][ns] = fr
        per_ns[str(ns)] = _ratios({m: ladder.cycles(m, ns) for m in MODELS}) | {
            "speedup_vs_scipy": {"v1": cm["speedup_vs_scipy"], "rtl": fr["speedup_vs_scipy"]},
            "speedup_vs_nx": {"v1": cm.get("speedup_vs_nx"), "rtl": fr.get("speedup_vs_nx")},
            "fpga_only_vs_scipy": {"v1": cm["fpga_only_vs_scipy"], "rtl": fr["fpga_only_vs_scipy"]},
        }
    out: dict[str, Any] = {"sources": len(sources), "per_ns": per_ns, "fpga": fpga_rtl}
    if sop is not None:
        ops: dict[str, Any] = {}
        op_fpga: dict[str, Any] = {}
        for (lab, ns), costs in combos.items():
            p = next(q for q in [*sop["points"].values(), *sop["unbounded"]["points"].values()]
                     if q.get("c") == lab and q.get("ns") == ns)
            cap = None if lab == "unbounded" else int(lab) * k
            f = {m: costs.figures(m, p["baseline"], [ns], cap) for m in MODELS}
            bad += _compare(f["v1"]["per_ns"][ns], p["fpga"], f"{name}.operating_points.{lab}.{ns}")
            fr = _finish({m: f[m]["per_ns"][ns] for m in MODELS}, p["fpga"])
            op_fpga[f"{lab}/{ns}"] = fr
            ops[f"{lab}/{ns}"] = _ratios({m: costs.cycles(m, ns) for m in MODELS}) | {
                "c": lab, "ns": ns,
                "speedup_vs_scipy": {"v1": p["fpga"]["speedup_vs_scipy"], "rtl": fr["speedup_vs_scipy"]},
                "speedup_vs_nx": {"v1": p["fpga"].get("speedup_vs_nx"), "rtl": fr.get("speedup_vs_nx")},
            }
        out["operating_points"] = ops
        out["operating_points_fpga"] = op_fpga
    out["v1_mismatches"] = bad
    out["v1_matches_committed"] = not bad
    if not gr.get("synthetic"):
        out["rtl_lost_mass"] = rtl_lost_mass(name, res)
    out["cpu_s"] = time.process_time() - t0
    print(f"{name}: v1 {'equals' if not bad else 'DIFFERS FROM'} the committed figures; "
          f"{out['cpu_s']:.0f} CPU s", flush=True)
    return out


def rtl_lost_mass(
    name: str, res: dict[str, Any], n_sources: int = 30, n_pes: int = 16
) -> dict[str, Any]:
    """The RTL's lost score mass on this reproduction's stage-1 sub-graphs: each source's
    ``G_3(s)`` ball (the stage-1 diffusion, 3 steps) split over ``n_pes`` PEs, the seed at
    ``2^30`` integer units (32-bit scores in :func:`evaluators.ppr.engine_evaluator.int_quantum`'s
    units), through :func:`accelerators.ppr_fpga_rtl.simulate_run` (the RTL's arithmetic,
    lost updates included) against the exact integer walk ``R <- A floor(R / deg)``."""
    from accelerators import ppr_fpga_rtl as rtl
    from evaluators.ppr.graph import bfs_ball, induced

    st = res["settings"]
    g = load_graph(name)
    sources = np.random.default_rng(st["rng_seed"]).choice(
        g.n, size=min(st["seeds"], g.n), replace=False
    )
    lost = []
    for s in sources[:n_sources]:
        a = induced(g, bfs_ball(g, int(s), 3))
        if a.shape[0] < 2:
            continue
        r0 = np.zeros(a.shape[0], dtype=np.int64)
        r0[0] = 2**30
        got = rtl.simulate_run(a.indptr, a.indices, n_pes, r0, 3)["scores"]
        deg = np.diff(a.indptr).astype(np.int64)
        ai = a.astype(np.int64)
        r = r0.copy()
        for _ in range(3):
            r = ai @ np.where(deg > 0, r // np.maximum(deg, 1), 0)
        lost.append(1 - got.sum() / r.sum())
    x = np.asarray(lost)
    return {
        "sources": int(x.size),
        "n_pes": n_pes,
        "mean_pct": float(100 * x.mean()),
        "max_pct": float(100 * x.max()),
        "queries_losing_pct": float(100 * np.mean(x > 0)),
    }


def fig5_both(res: dict[str, Any]) -> dict[str, Any]:
    """Fig. 5 (one 6-step diffusion of the whole citeseer graph) under both models, by the
    reproduction's :func:`~experiments.reproduce.meloppr.fig5`; v1 checked against the
    committed one."""
    g = load_graph("citeseer")
    out: dict[str, Any] = {m: rep.fig5(g, cycle_model=m) for m in MODELS}
    kept = res.get("fig5", {})
    bad = [f"fig5.{q}.{P}: {out['v1'][q].get(P)!r} != {v!r}" for q in ("ms", "overhead")
           for P, v in kept.get(q, {}).items()
           if P not in out["v1"][q] or not np.isclose(out["v1"][q][P], v, rtol=RTOL, atol=1e-15)]
    out["v1_matches_committed"] = not bad
    out["v1_mismatches"] = bad
    return out


PAPER_FIG7 = {
    "citeseer": {1: "48.9x", 5: "8.1x", 9: "4.5x", 13: "3.1x"},
    "cora": {1: "–", 5: "13.4x", 9: "7.4x", 13: "5.1x"},
    "pubmed": {1: "78.6x", 5: "26.7x", 9: "14.9x", 13: "9.9x"},
}
"""The paper's Fig. 7 FPGA speedups as the reproduction's doc quotes them."""


def _xf(v: Any) -> str:
    return "–" if v is None else f"{v:.1f}x"


def write_md(out: dict[str, Any], path: Path) -> None:
    """Markdown tables of the rerun (the record's own view; the doc renders its figures
    from ``results.json`` and this record through :mod:`experiments.figures.meloppr`)."""
    L = [
        "# MeLoPPR FPGA figures under the RTL-checked cycle model",
        "",
        f"From `{out['command']}`; CPU baselines from `{out['from']}`; engine {out['engine']}. "
        "*v1* = the first model (recomputed here: equal to the committed figures), "
        '*rtl* = `cycle_model="rtl"`. Speedups are end to end with the native host unless '
        "named FPGA only.",
        "",
        "| graph | ns | paper | vs NetworkX v1 | vs NetworkX rtl | vs scipy v1 | vs scipy rtl | "
        "FPGA only vs scipy v1 | FPGA only vs scipy rtl | FPGA cycles rtl / v1 | latency rtl / v1 | "
        "stall cycles share (rtl) | v1 = committed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for g, gr in out["graphs"].items():
        for ns, r in gr["per_ns"].items():
            L.append(
                f"| {g} | {ns} | {PAPER_FIG7.get(g, {}).get(int(ns), '')} | {_xf(r['speedup_vs_nx']['v1'])} | "
                f"{_xf(r['speedup_vs_nx']['rtl'])} | {_xf(r['speedup_vs_scipy']['v1'])} | "
                f"{_xf(r['speedup_vs_scipy']['rtl'])} | {_xf(r['fpga_only_vs_scipy']['v1'])} | "
                f"{_xf(r['fpga_only_vs_scipy']['rtl'])} | {r['rtl_over_v1_cycles']:.3f} | "
                f"{r['rtl_over_v1_latency']:.3f} | {100 * r['rtl_stall_share']:.0f} % | "
                f"{'yes' if gr['v1_matches_committed'] else 'NO'} |"
            )
    L += [
        "",
        "Synthetic stand-ins' operating points (table capacity c, next-stage count ns):",
        "",
        "| graph | c / ns | vs NetworkX v1 | vs NetworkX rtl | vs scipy v1 | vs scipy rtl | "
        "FPGA cycles rtl / v1 | latency rtl / v1 | stall cycles share (rtl) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for g, gr in out["graphs"].items():
        for key, r in gr.get("operating_points", {}).items():
            L.append(
                f"| {g} | {key} | {_xf(r['speedup_vs_nx']['v1'])} | {_xf(r['speedup_vs_nx']['rtl'])} | "
                f"{_xf(r['speedup_vs_scipy']['v1'])} | {_xf(r['speedup_vs_scipy']['rtl'])} | "
                f"{r['rtl_over_v1_cycles']:.3f} | {r['rtl_over_v1_latency']:.3f} | "
                f"{100 * r['rtl_stall_share']:.0f} % |"
            )
    f5 = out["fig5"]
    L += [
        "",
        "Fig. 5, one 6-step diffusion of the whole citeseer graph:",
        "",
        "| P | v1 ms | rtl ms | v1 scheduling overhead | rtl scheduling overhead |",
        "|---|---|---|---|---|",
    ]
    for P in f5["v1"]["ms"]:
        L.append(
            f"| {P} | {f5['v1']['ms'][P]:.2f} | {f5['rtl']['ms'][P]:.2f} | "
            f"{100 * f5['v1']['overhead'][P]:.1f} % | {100 * f5['rtl']['overhead'][P]:.1f} % |"
        )
    L.append(
        f"\nP = 1 over P = 16: v1 {f5['v1']['speedup_1_to_max']:.1f}x, rtl {f5['rtl']['speedup_1_to_max']:.1f}x."
    )
    L += [
        "",
        "The RTL's arithmetic on the stage-1 sub-graphs (`G_3(s)`, 3 steps, P = 16, the first 30 "
        "sources; lost updates against the exact integer walk):",
        "",
        "| graph | sources | queries that lose mass | mean lost | max lost |",
        "|---|---|---|---|---|",
    ]
    for g, gr in out["graphs"].items():
        lm = gr.get("rtl_lost_mass")
        if lm:
            L.append(
                f"| {g} | {lm['sources']} | {lm['queries_losing_pct']:.0f} % | {lm['mean_pct']:.3f} % | "
                f"{lm['max_pct']:.3f} % |"
            )
    ok = all(gr["v1_matches_committed"] for gr in out["graphs"].values())
    L += [
        "",
        "On-chip memory (Table II's FPGA column) does not depend on the cycle model: the recomputed "
        f"sub-graph bytes equal the committed ones ({'all' if ok else 'NOT all'} graphs and counts).",
    ]
    path.write_text("\n".join(L) + "\n")


def merge(res: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """``res`` (a committed ``results.json``, JSON keys) with the rerun's ``rtl`` figures as
    its FPGA figures and the earlier ones beside under ``*_v1``."""
    if not all(gr["v1_matches_committed"] for gr in out["graphs"].values()) or not out["fig5"]["v1_matches_committed"]:
        raise RuntimeError("the v1 recomputation differs from the committed figures; not merging")
    if "fpga_rerun" in res:
        raise RuntimeError("results.json already holds a rerun's figures (fpga_rerun); merge into the earlier one")
    res = json.loads(json.dumps(res))
    for name, o in out["graphs"].items():
        gr = res["graphs"][name]
        gr["fpga_v1"] = gr["fpga"]
        gr["fpga"] = json.loads(json.dumps(jsonable(o["fpga"])))
        cpu = rep._restore_keys(gr["cpu"])
        fp = rep._restore_keys(gr["fpga"])
        fp_v1 = rep._restore_keys(gr["fpga_v1"])
        for key, metric in (("targets", "prec_pprpy"), ("targets_prec_k", "prec_k")):
            again = json.loads(json.dumps(jsonable(rep.at_targets(cpu, metric, fpga=fp_v1))))
            if again != gr[key]:
                raise RuntimeError(f"{name}: at_targets of the committed v1 figures does not give its {key}")
            gr[f"{key}_v1"] = gr[key]
            gr[key] = json.loads(json.dumps(jsonable(rep.at_targets(cpu, metric, fpga=fp))))
        sop = res.get("synthetic_operating_points", {}).get("graphs", {}).get(name)
        if sop is not None:
            for p in [*sop["points"].values(), *sop["unbounded"]["points"].values()]:
                if p.get("ns") is None:
                    continue
                p["fpga_v1"] = p["fpga"]
                p["fpga"] = json.loads(json.dumps(jsonable(o["operating_points_fpga"][f"{p['c']}/{p['ns']}"])))
    res["fig5_v1"] = res["fig5"]
    res["fig5"] = json.loads(json.dumps(jsonable(out["fig5"]["rtl"])))
    res["fpga_rerun"] = {
        "command": out["merge_command"],
        "date": out["date"],
        "cycle_model": "rtl",
        "earlier_cycle_model": "v1",
        "what": "graphs.*.fpga, graphs.*.targets, graphs.*.targets_prec_k, fig5 and the synthetic operating "
                "points' fpga are the rtl cycle model's, recomputed for the same queries; the earlier v1 "
                "figures are beside under *_v1; the CPU figures, memory ratios and everything else are the "
                "committed run's; the co-design study is not rerun (v1)",
        "record": str(OUT),
        "cpu_s": out["cpu_s"],
    }
    return res


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="*", default=list(GRAPHS), choices=GRAPHS)
    ap.add_argument("--results", default=str(RESULTS))
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--md-only", action="store_true", help="rewrite the .md beside --out from it")
    ap.add_argument("--merge-into", type=Path, default=None,
                    help="DIR whose results.json takes the rtl figures (earlier ones kept under *_v1) and "
                         "whose table.md is rewritten; needs every graph")
    args = ap.parse_args(argv)
    if args.md_only:
        kept = json.loads(Path(args.out).read_text())
        write_md(kept, Path(args.out).with_suffix(".md"))
        return kept
    if args.merge_into is not None:
        if set(args.graphs) != set(GRAPHS):
            ap.error(f"--merge-into needs every graph ({', '.join(GRAPHS)}), got --graphs {' '.join(args.graphs)}")
        if not (args.merge_into / "results.json").exists():
            ap.error(f"--merge-into: no {args.merge_into / 'results.json'}")
        args.results = str(args.merge_into / "results.json")
    raw = json.loads(Path(args.results).read_text())
    if "fpga_rerun" in raw:
        ap.error(f"--results {args.results} already holds the rerun's figures; give the v1 results.json")
    res = rep._restore_keys(raw)
    t0 = time.process_time()
    out: dict[str, Any] = {
        "command": COMMAND,
        "merge_command": COMMAND + (f" --merge-into {args.merge_into}" if args.merge_into else ""),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "from": str(args.results),
        "engine": "P = 16, committed host models",
        "time": "process_time (CPU seconds) of this rerun, per graph",
        "graphs": {},
        "fig5": fig5_both(res),
    }
    for name in args.graphs:
        out["graphs"][name] = rerun_graph(name, res)
    out["cpu_s"] = time.process_time() - t0
    out = json.loads(json.dumps(jsonable(out)))
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    write_md(out, Path(args.out).with_suffix(".md"))
    if args.merge_into is not None:
        merged = merge(raw, out)
        (args.merge_into / "results.json").write_text(json.dumps(merged, indent=1))
        rep.write_table(rep._restore_keys(merged), args.merge_into / "table.md", "coexplore reproduce meloppr")
        print(f"merged into {args.merge_into / 'results.json'} and {args.merge_into / 'table.md'}")
    return out


if __name__ == "__main__":  # pragma: no cover
    main()
