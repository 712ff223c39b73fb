"""The loop-nest model under ``accounting="timeloop"`` against Timeloop's own reference
outputs in the public Timeloop/Accelergy exercises (Accelergy-Project/timeloop-accelergy-
exercises), run by run.

Every folder of that repository holding a Timeloop run's outputs (``*.stats.txt`` with
``parsed-processed-input.yaml``, the input as Timeloop's front end processed it, and
Accelergy's ``*.ERT.yaml`` / ``*.ART.yaml``) is one run. Its processed architecture,
problem and mapping (the input's mapping for ``timeloop-model`` runs, the mapper's chosen
``*.map.yaml`` for ``timeloop-mapper`` runs) are read through the importers
(:func:`accelerators.interop.timeloop.arch_from_timeloop`,
:func:`mappers.interop.timeloop.layer_from_timeloop`,
:func:`~mappers.interop.timeloop.mapping_from_timeloop`) and evaluated by the loop-nest
model with ``accounting="timeloop"``; the cycles, every level's reads and writes (fills +
updates) of every data space, and the energy are compared with the stats file
(:func:`~mappers.interop.timeloop.stats_from_timeloop`). A run whose spec cannot be
expressed (sparse tensors, ...) is listed with the importer's reason. Separate read and
write bandwidths are read as they are (the model limits reads, writes and both apart, as
Timeloop does).

The repository is read from a local copy (a checkout, or a bare git directory read with
``git show``); nothing is downloaded. Run::

    python -m experiments.validation.timeloop_exercises PATH [--markdown FILE] [--json FILE]

The committed table is ``docs/validation/timeloop_exercises.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelerators.interop.timeloop import (
    TimeloopTranslation,
    arch_from_timeloop,
    loads_timeloop_yaml,
)
from evaluators.loopnest import LoopNestCost
from mappers.base import SearchStoppedEmpty
from mappers.constraints import satisfies
from mappers.interop.timeloop import (
    constraints_from_timeloop,
    layer_from_timeloop,
    mapping_from_timeloop,
    stats_from_timeloop,
)
from mappers.mapping import Mapping, MappingBatch
from mappers.workloads import Layer

__all__ = ["Repo", "compare", "find_runs", "main", "markdown", "run_all"]

OPS = {"Weights": 0, "Inputs": 1, "Outputs": 2}


class Repo:
    """Files of a local copy of the exercises: a checkout or a bare git directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.bare = not (self.path / "workspace").exists()
        if self.bare and not (self.path / "HEAD").exists():
            raise ValueError(f"{self.path}: neither a checkout (with workspace/) nor a bare git directory")

    def files(self) -> list[str]:
        if not self.bare:
            return sorted(str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file())
        out = subprocess.run(["git", "--git-dir", str(self.path), "ls-tree", "-r", "--name-only", "HEAD"],
                             check=True, capture_output=True, text=True).stdout
        return out.split()

    def read(self, rel: str) -> str:
        if not self.bare:
            return (self.path / rel).read_text()
        return subprocess.run(["git", "--git-dir", str(self.path), "show", f"HEAD:{rel}"], check=True,
                              capture_output=True, text=True).stdout

    def commit(self) -> str:
        if not self.bare:
            return "working tree"
        return subprocess.run(["git", "--git-dir", str(self.path), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()


@dataclass
class Run:
    name: str
    folder: str
    prefix: str            # timeloop-model or timeloop-mapper


def find_runs(repo: Repo) -> list[Run]:
    """Every folder with a stats file, a processed input and an ERT."""
    files = set(repo.files())
    runs = []
    for f in sorted(files):
        if not f.endswith(".stats.txt"):
            continue
        folder, base = f.rsplit("/", 1)
        prefix = base.removesuffix(".stats.txt")
        if f"{folder}/parsed-processed-input.yaml" in files and f"{folder}/{prefix}.ERT.yaml" in files:
            name = folder.removeprefix("workspace/").replace("/ref_outputs/default_problem", "").replace(
                "/ref-output", "")
            runs.append(Run(name, folder, prefix))
    return runs


def _load(text: str) -> Any:
    return loads_timeloop_yaml(text)


def compare(layer: Layer, tl: TimeloopTranslation, mapping: Mapping, stats: dict[str, Any]) -> dict[str, Any]:
    """Timeloop's figures of one run against the model's under ``accounting="timeloop"``."""
    arch = tl.arch
    r = LoopNestCost("timeloop")(layer, arch, MappingBatch.from_mappings(layer, arch, [mapping]))
    worst, n_counts, total = 0.0, 0, stats.get("mac_energy_pj", 0.0)
    n_terms = 1                                     # printed energies summed, each to 0.01 pJ
    for li, lv in enumerate(arch.levels):
        st = stats["levels"].get(lv.name)
        if st is None:
            continue
        total += st["leakage_pj"]
        n_terms += 1
        for ds, s in st["dataspaces"].items():
            if ds not in tl.roles:
                continue
            k = OPS[{"W": "Weights", "I": "Inputs", "O": "Outputs"}[tl.roles[ds]]]
            n = s["utilized_instances"]
            for ours, theirs in ((float(r.reads[0, li, k]), s["reads"] * n),
                                 (float(r.writes[0, li, k]), (s["fills"] + s["updates"]) * n)):
                n_counts += 1
                if ours != theirs:
                    worst = max(worst, abs(ours - theirs) / max(abs(theirs), 1.0))
            total += s["energy_pj"]
            n_terms += 1
    energy = float(r.energy_pj[0])
    return {"cycles": float(r.latency_cycles[0]), "ref_cycles": float(stats["cycles"]),
            "energy_pj": energy, "ref_energy_pj": total, "counts_compared": n_counts,
            "worst_count_rel_err": worst, "energy_rel_err": abs(energy - total) / total if total else 0.0,
            "energy_abs_err_pj": abs(energy - total), "energy_rounding_pj": 0.005 * n_terms,
            "leakage_pj": float(r.leakage_energy_pj[0].sum()),
            "ref_leakage_pj": sum(st["leakage_pj"] for st in stats["levels"].values())}


ACCOUNTINGS = ("timeloop", "coexplore")


def _edp(layer: Layer, arch: Any, mapping: Mapping, accounting: str) -> float:
    r = LoopNestCost(accounting)(layer, arch, MappingBatch.from_mappings(layer, arch, [mapping]))
    return float(r.edp[0])


def against_exact_mapper(layer: Layer, tl: TimeloopTranslation, mapping: Mapping,
                         time_limit_s: float | None = 60.0) -> dict[str, Any]:
    """Timeloop's mapper's mapping against coexplore's exact mapper, EDP (pJ x cycles)
    each evaluated under both accountings. The exact mapper searches under the run's
    mapspace constraints (:func:`mappers.interop.timeloop.constraints_from_timeloop`:
    factors, spatial axes and bypass; loop-order constraints relaxed, and named), and the
    row says whether Timeloop's own mapping meets them (a check of the translation: it
    must). Where the exact mapper cannot run under an accounting its reason is kept."""
    from mappers.exact import ExactMapper

    tc = constraints_from_timeloop(tl, layer)
    out: dict[str, Any] = {"timeloop_mapping_edp": {a: _edp(layer, tl.arch, mapping, a) for a in ACCOUNTINGS},
                           "constraints": {"levels": len(tc.constraints.levels), "orders_relaxed": list(tc.relaxed),
                                           "notes": list(tc.notes),
                                           "timeloop_mapping_meets_them": bool(
                                               satisfies(tc.constraints, mapping, layer, tl.arch)[0])},
                           "exact": {}}
    for acc in ACCOUNTINGS:
        c0 = time.process_time()
        try:
            res = ExactMapper(time_limit_s=time_limit_s, constraints=tc.constraints).map(
                layer, tl.arch, LoopNestCost(acc), "edp")
        except SearchStoppedEmpty:
            out["exact"][acc] = {"stopped_empty": True, "cpu_seconds": round(time.process_time() - c0, 2)}
            continue
        except ValueError as e:
            out["exact"][acc] = {"refused": str(e).splitlines()[0][:160]}
            continue
        bound = res.lower_bound
        out["exact"][acc] = {"edp": {a: _edp(layer, tl.arch, res.mapping, a) for a in ACCOUNTINGS},
                             "optimal": bool(res.optimal), "seconds": round(res.seconds, 2),
                             "cpu_seconds": round(time.process_time() - c0, 2),
                             "lower_bound": None if bound is None else float(bound),
                             "gap": (None if not bound or not math.isfinite(bound) or bound <= 0
                                     else float(res.edp) / float(bound) - 1.0)}
    return out


def run_one(repo: Repo, run: Run, exact_time_limit_s: float | None = 60.0) -> dict[str, Any]:
    row: dict[str, Any] = {"run": run.name, "tool": run.prefix}
    try:
        proc = _load(repo.read(f"{run.folder}/parsed-processed-input.yaml"))
        ert = _load(repo.read(f"{run.folder}/{run.prefix}.ERT.yaml"))
        try:
            art = _load(repo.read(f"{run.folder}/{run.prefix}.ART.yaml"))
        except subprocess.CalledProcessError:
            art = None
        if proc.get("sparse_optimizations"):
            raise ValueError("sparse_optimizations (sparse tensors) cannot be expressed")
        layer, roles = layer_from_timeloop(proc)
        tl = arch_from_timeloop(proc, ert, art, roles=roles)
        row["split_bandwidth"] = tl.arch.split_bandwidth
        mapping_src = proc.get("mapping") or _load(repo.read(f"{run.folder}/{run.prefix}.map.yaml"))
        mapping = mapping_from_timeloop(mapping_src, tl, layer)
        stats = stats_from_timeloop(repo.read(f"{run.folder}/{run.prefix}.stats.txt"))
        row.update(compare(layer, tl, mapping, stats))
        if run.prefix == "timeloop-mapper" and exact_time_limit_s is not None:
            row["mapper"] = against_exact_mapper(layer, tl, mapping, exact_time_limit_s)
        # exact: the cycles and every count equal, and the energy within the rounding of
        # Timeloop's printed figures (each to 0.01 pJ, so within 0.005 pJ per figure summed)
        row["status"] = ("exact" if row["cycles"] == row["ref_cycles"] and row["worst_count_rel_err"] == 0
                         and row["energy_abs_err_pj"] <= row["energy_rounding_pj"] * (1 + 1e-9) + 1e-9 * abs(
                             row["ref_energy_pj"]) else "differs")
    except (ValueError, KeyError, TypeError) as e:
        row["status"] = "refused"
        row["reason"] = str(e).splitlines()[0][:200]
    return row


def run_all(path: str | Path, exact_time_limit_s: float | None = 60.0) -> dict[str, Any]:
    repo = Repo(path)
    rows = [run_one(repo, run, exact_time_limit_s) for run in find_runs(repo)]
    return {"source": "Accelergy-Project/timeloop-accelergy-exercises", "commit": repo.commit(),
            "exact_time_limit_s": exact_time_limit_s, "runs": rows}


def _g(v: float) -> str:
    return f"{v:.6g}" if math.isfinite(v) else str(v)


def markdown(result: dict[str, Any]) -> str:
    rows = result["runs"]
    done = [r for r in rows if r["status"] != "refused"]
    exact = [r for r in done if r["status"] == "exact"]
    lines = [
        "# The loop-nest model against Timeloop's reference outputs",
        "",
        f"Every Timeloop run in the public exercises ({result['source']}, commit `{result['commit']}`), its "
        "processed architecture, problem and mapping read by coexplore's importers and evaluated with "
        "`accounting=\"timeloop\"`. Generated by `python -m experiments.validation.timeloop_exercises PATH "
        "--markdown docs/validation/timeloop_exercises.md` (PATH: a local copy of the repository).",
        "",
        f"{len(rows)} runs: {len(done)} evaluated, {len(exact)} of them exact (cycles and every read and write "
        "equal, energy equal within the rounding of Timeloop's printed figures: each to 0.01 pJ, so 0.005 pJ per "
        "figure summed, plus 1e-9 relative); "
        f"{len(rows) - len(done)} refused by the importer (reason given).",
        "",
        "| run | tool | status | cycles (ours / Timeloop) | counts compared | worst count error | energy pJ (ours / "
        "Timeloop) | energy error | leakage pJ (ours / Timeloop) | note |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["status"] == "refused":
            lines.append(f"| {r['run']} | {r['tool']} | refused | | | | | | | {r['reason']} |")
            continue
        note = "separate read / write bandwidths" if r.get("split_bandwidth") else ""
        lines.append(
            f"| {r['run']} | {r['tool']} | {r['status']} | {_g(r['cycles'])} / {_g(r['ref_cycles'])} | "
            f"{r['counts_compared']} | {r['worst_count_rel_err']:.2e} | {_g(r['energy_pj'])} / "
            f"{_g(r['ref_energy_pj'])} | {r['energy_rel_err']:.2e} | {_g(r['leakage_pj'])} / "
            f"{_g(r['ref_leakage_pj'])} | {note} |")
    mapped = [r for r in rows if "mapper" in r]
    if mapped:
        lines += [
            "",
            "## Timeloop's mapper against coexplore's exact mapper",
            "",
            "For each `timeloop-mapper` run evaluated above: the EDP (pJ x cycles) of the mapping Timeloop's mapper "
            "chose, and of the exact mapper's mapping searched under each accounting, every mapping evaluated under "
            "both accountings (timeloop / coexplore). The exact mapper searches divisor tilings under the "
            "run's mapspace constraints (factors, spatial axes, bypass; loop-order constraints are relaxed where "
            "they could matter, and named: its space then contains Timeloop's), under the named accounting, with a "
            f"limit of {result.get('exact_time_limit_s', 60)} s wall per search; a search stopped by the limit "
            "gives its incumbent and the gap to its lower bound. Where it refuses a design it says why.",
            "",
            "| run | Timeloop's mapping: EDP timeloop / coexplore | the run's constraints | exact mapper, searched "
            "under coexplore | exact mapper, searched under timeloop |",
            "|---|---|---|---|---|",
        ]
        for r in mapped:
            m = r["mapper"]
            cells = []
            for acc in ("coexplore", "timeloop"):
                e = m["exact"][acc]
                if e.get("stopped_empty"):
                    cells.append(f"stopped at the limit before a legal mapping, {e['cpu_seconds']} CPU s")
                    continue
                if "refused" in e:
                    why = e["refused"]
                    short = ("levels with vector_words > 1" if "whole-vector" in why else
                             "the accounting's counts are not order-separable" if "order-separable counts" in why
                             else why[:100])
                    cells.append(f"refused: {short}")
                else:
                    secs = e.get("cpu_seconds", e["seconds"])
                    if e["optimal"]:
                        tag = f"proven optimal, {secs} CPU s"
                    elif e.get("gap") is not None:
                        tag = f"stopped at the limit, within {100 * e['gap']:.1f} % of its bound, {secs} CPU s"
                    else:
                        tag = f"stopped at the limit, {secs} CPU s"
                    cells.append(f"{_g(e['edp']['timeloop'])} / {_g(e['edp']['coexplore'])} ({tag})")
            t = m["timeloop_mapping_edp"]
            c = m.get("constraints") or {}
            cons = (("none" if not c.get("levels") else f"{c['levels']} levels constrained") +
                    ("; Timeloop's mapping meets them" if c.get("timeloop_mapping_meets_them") else
                     "; Timeloop's mapping does NOT meet them") +
                    (f"; loop orders relaxed at {', '.join(c['orders_relaxed'])}" if c.get("orders_relaxed") else ""))
            lines.append(f"| {r['run']} | {_g(t['timeloop'])} / {_g(t['coexplore'])} | {cons} | {cells[0]} | "
                         f"{cells[1]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="a local copy of Accelergy-Project/timeloop-accelergy-exercises (checkout or bare git)")
    ap.add_argument("--markdown", type=Path, help="write the table here")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument("--exact-time-limit-s", type=float, default=60.0,
                    help="time limit of the exact mapper on each mapper run (default 60)")
    args = ap.parse_args(argv)
    result = run_all(args.path, args.exact_time_limit_s)
    text = markdown(result)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":  # pragma: no cover
    main()
