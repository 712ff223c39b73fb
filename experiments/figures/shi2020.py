"""Figures from Shi et al. 2020's committed ``results.json``
(``docs/reproduction/results/shi2020/``, written by ``coexplore reproduce shi2020``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from experiments.figures.fmt import pct, thousands
from experiments.figures.records import RecordError, load_json

__all__ = ["FIGURES", "RESULTS", "STEPS", "WITHDRAWN", "command_times", "decomposition", "inner_bo",
           "rs_baseline_table", "steps_cpu", "withdrawn"]

RESULTS = "docs/reproduction/results/shi2020/results.json"
STEPS = "docs/reproduction/results/shi2020-steps/results.json"
"""``coexplore reproduce shi2020 --steps-only``'s results.json; its record store is
:data:`STEPS_RECORDS` beside it."""
STEPS_RECORDS = "docs/reproduction/results/shi2020-steps/records"
_REPO = Path(__file__).resolve().parents[2]
STEPS_RECORD_FILES = tuple(sorted(str(p.relative_to(_REPO)) for p in (_REPO / STEPS_RECORDS).rglob("*.json")))
"""The committed files of :data:`STEPS_RECORDS` (named for the catalog; :func:`steps_cpu`
reads the store under the root it is given)."""
INNER_EFFORT_LAYERS = "docs/benchmarks/shi2020_inner_effort_resnet50_layers.json"
RS_BASELINE = "docs/validation/rs_baseline.txt"
INNER_FEASIBILITY = "docs/search_quality/inner_feasibility.json"

#: (key in results.json, workload label, batch label, note beside the paper's figure);
#: labels only, every number comes from the record
ROWS = (
    ("resnet50", "ResNet-50", "1", ""),
    ("dqn", "DQN", "1 (acting)", ""),
    ("dqn@32", "DQN", "32 (training minibatch)", " (batch not stated)"),
    ("mlp", "MLP (DLRM)", "1", ""),
    ("mlp@32", "MLP (DLRM)", "32", ""),
    ("transformer", "BERT-base block", "512 tokens", ""),
)
OPTIMIZER = "constrained-bo"
FOOTNOTE = " ¹"
WITHDRAWN = "withdrawn until rerun: its search records were never committed"
"""What every table prints in place of a search figure (step 3: the co-designed
hardware's EDP, energy, latency, evaluations to beat, run times, proofs) of a workload
whose searches have no committed record (:func:`withdrawn`)."""


def withdrawn(w: dict[str, Any]) -> bool:
    """Whether workload entry ``w``'s step-3 figures are withdrawn: the entry was reused
    from an invocation whose search records were never committed
    (``search_records_missing``, set by ``coexplore reproduce shi2020 --reuse`` when the
    record store lacks any of its searches; DQN at batch 1), so no committed record backs
    them. Its baseline, software-only and bound figures are not searches and stay."""
    return bool(w.get("search_records_missing"))


def _row(cells: list[str]) -> str:
    return ("| " + " | ".join(cells) + " |").replace("|  |", "| |")


def _change(step: dict[str, Any], base: dict[str, Any]) -> float:
    return step["edp_uj_ms"] / base["edp_uj_ms"] - 1.0


def _both(w: dict[str, Any], mode: str, key: str) -> dict[str, Any]:
    try:
        return w["both"][mode][OPTIMIZER]
    except KeyError:
        raise RecordError(f"{RESULTS}: workloads.{key}.both.{mode}.{OPTIMIZER} missing") from None


def _mean_std(s: dict[str, Any]) -> str:
    edp = s["edp_uj_ms"]
    if edp.get("std_ddof") != 1:
        raise RecordError(
            f"{RESULTS}: a search's std is not a sample std (std_ddof = {edp.get('std_ddof')!r})"
        )
    return f"{pct(edp['change_mean'])} ± {100 * edp['change_std']:.1f}"


def _pes(workloads: dict[str, Any], mode: str) -> int:
    pes = {w["bound"][mode]["pes"] for w in workloads.values()}
    if len(pes) != 1:
        raise RecordError(f"{RESULTS}: the {mode} bounds are at different PE counts {sorted(pes)}")
    return pes.pop()


def decomposition(root: Path) -> str:
    """The decomposition table of docs/reproduction/shi2020.md: each workload's EDP change
    against the baseline for software only, both (mean ± sample std over the seeds) and
    the compulsory-traffic bound, at iso and free resources."""
    r = load_json(root, RESULTS)
    ws = r["workloads"]
    n = {len(_both(ws[k], m, k)["edp_uj_ms"]["changes"]) for k, *_ in ROWS for m in ("iso", "free")
         if not withdrawn(ws[k])}
    lines = [
        f"Mean ± sample std (ddof = 1) over n = {', '.join(map(str, sorted(n)))} seeds; "
        f"`{RESULTS}`.",
        "",
        _row(
            [
                "workload",
                "batch",
                "software only",
                "both, iso",
                f"bound, iso ({thousands(_pes(ws, 'iso'))} PEs)",
                "both, free",
                f"bound, free ({thousands(_pes(ws, 'free'))} PEs)",
                "beat baseline (iso, free)",
                "s/run (iso, free)",
                "paper",
            ]
        ),
        "|" + "---|" * 10,
    ]
    for key, label, batch, note in ROWS:
        w = ws[key]
        base = w["baseline"]
        iso, free = _both(w, "iso", key), _both(w, "free", key)
        if withdrawn(w):
            both_iso = both_free = WITHDRAWN + FOOTNOTE
            beat = secs = ["withdrawn"]
        else:
            both_iso, both_free = _mean_std(iso), _mean_std(free)
            beat = [
                f"{sum(e is not None for e in s['evals_to_beat_baseline'])}/{s['n']}"
                for s in (iso, free)
            ]
            secs = [thousands(sum(s["seconds"]) / len(s["seconds"])) for s in (iso, free)]
        paper = w.get("against_paper", {}).get("paper")
        lines.append(
            _row(
                [
                    label,
                    batch,
                    pct(_change(w["software_only"], base)),
                    both_iso,
                    pct(_change(w["bound"]["iso"], base)),
                    both_free,
                    pct(_change(w["bound"]["free"], base)),
                    ", ".join(beat),
                    ", ".join(secs),
                    "" if paper is None else pct(paper - 1.0, 0) + note,
                ]
            )
        )
    return "\n".join(lines) + "\n"


def inner_bo(root: Path) -> str:
    """The paper's inner BO against the exact inner mapper, per seed (shi2020.md)."""
    r = load_json(root, RESULTS)
    lines = [
        _row(
            [
                "seed",
                "best EDP, inner BO (uJ·ms)",
                "best EDP, exact inner",
                "inner-BO design re-mapped exactly",
                "inner proposals infeasible",
                "s/run inner BO",
                "s/run exact",
            ]
        ),
        "|" + "---|" * 7,
    ]
    for run in r["inner_bo"]["runs"]:
        share = 100 * run["inner_infeasible"] / run["inner_proposals"]
        lines.append(
            _row(
                [
                    str(run["seed"]),
                    f"{run['inner_bo_best_edp']:.1f}",
                    f"{run['exact_best_edp']:.1f}",
                    f"{run['inner_bo_design_remapped_exactly_edp']:.1f}",
                    f"{run['inner_infeasible']}/{run['inner_proposals']} ({share:.1f} %)",
                    str(round(run["seconds"])),
                    str(round(run["exact_seconds"])),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def steps_cpu(root: Path) -> tuple[float, int, int]:
    """CPU seconds of the steps-only run as its record store keeps them: each record's
    ``cpu_s`` (the process's CPU time while it computed the RS check or a baseline or
    software-only step) summed over the records that have one, how many do, and how many
    records there are. The bounds (no record, computed in a moment) and the start-up are not
    in it. ``(0.0, 0, 0)`` when the store is not committed."""
    seconds, known, n = 0.0, 0, 0
    for path in sorted((root / STEPS_RECORDS).rglob("*.json")):
        try:
            rec = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise RecordError(f"{path.relative_to(root)}: not valid JSON ({e})") from None
        n += 1
        if rec.get("cpu_s") is not None:
            known += 1
            seconds += rec["cpu_s"]
    return seconds, known, n


def steps_time_phrase(root: Path) -> str:
    """The steps-only run's run time in words: its invocation's wall time and, where its
    records keep it, their summed CPU time."""
    wall = load_json(root, STEPS)["wall_seconds_this_invocation"]
    cpu, known, n = steps_cpu(root)
    out = f"{_minutes(wall)} of wall time for the invocation that wrote `{STEPS}` (`wall_seconds_this_invocation`)"
    if known:
        over = f"its {n} records" if known == n else f"the {known} of its {n} records that keep it"
        return out + (f", {_minutes(cpu)} of CPU time summed over {over} (`{STEPS_RECORDS}`, `cpu_s`: the RS check, "
                      "baselines and software-only steps; the bounds and start-up not included)")
    return out + ", CPU time not recorded"


def _rs_baseline_seconds(root: Path) -> tuple[float, int]:
    """The wall seconds of ``rs_baseline``'s exact-mapper searches as its output prints
    them (``CONVn rs_opt|free_opt  S s``), summed, and how many there are."""
    try:
        text = (root / RS_BASELINE).read_text()
    except FileNotFoundError:
        raise RecordError(f"record {RS_BASELINE} not found under {root}") from None
    found = [float(m.group(1)) for m in re.finditer(r"^\s+CONV\d+ (?:rs_opt|free_opt)\s+([0-9.]+) s\b", text, re.M)]
    if len(found) != 10:
        raise RecordError(f"{RS_BASELINE}: {len(found)} exact-mapper searches with their seconds, expected 10 "
                          "(RS and free for CONV1-5)")
    return sum(found), len(found)


def _rs_baseline_rows(root: Path) -> dict[tuple[str, str], list[str]]:
    """``(layer, figure) -> cells`` of ``rs_baseline``'s comparison table, as printed
    (columns two or more spaces apart): CONV rows carry RS-opt, Table III, free-opt,
    published, RS/TIII, RS/pub, TIII/pub, free/RS; the ``all`` rows RS-opt, Table III,
    free-opt, RS/TIII, free/RS."""
    try:
        text = (root / RS_BASELINE).read_text()
    except FileNotFoundError:
        raise RecordError(f"record {RS_BASELINE} not found under {root}") from None
    rows = {}
    for line in text.splitlines():
        if re.match(r"^(CONV\d|all) {2,}", line):
            cells = re.split(r" {2,}", line.strip())
            rows[(cells[0], cells[1])] = cells[2:]
    return rows


def rs_baseline_table(root: Path) -> str:
    """shi2020.md's per-layer table of the row-stationary baseline against the chip's own
    mapping, the unconstrained optimum and JSSC 2017 Table V, from ``rs_baseline``'s output;
    the exact mapper's seconds are the wall seconds it prints per search."""
    rows = _rs_baseline_rows(root)
    try:
        text = (root / RS_BASELINE).read_text()
    except FileNotFoundError:
        raise RecordError(f"record {RS_BASELINE} not found under {root}") from None
    secs = {(m.group(1), m.group(2)): m.group(3)
            for m in re.finditer(r"^\s+(CONV\d+) (rs_opt|free_opt)\s+([0-9.]+) s\b", text, re.M)}
    layers = sorted({layer for layer, _ in rows if layer != "all"}, key=lambda x: int(x[4:]))
    if not layers:
        raise RecordError(f"{RS_BASELINE}: no CONV rows")

    def cell(layer: str, prefix: str, width: int) -> list[str]:
        got = [v for (la, fig), v in rows.items() if la == layer and fig.startswith(prefix)]
        if len(got) != 1 or len(got[0]) != width:
            raise RecordError(f"{RS_BASELINE}: no single {layer} row '{prefix}...' with {width} columns")
        return got[0]

    out = ["| layer | EDP RS-opt / Table III | EDP free-opt / RS-opt | latency RS-opt / published | GLB accesses "
           "RS-opt / published (Table III / published) | DRAM accesses RS-opt / published | exact mapper wall s, "
           "RS / free |",
           "|---|---|---|---|---|---|---|"]
    for layer in layers:
        edp, lat = cell(layer, "EDP", 8), cell(layer, "processing latency", 8)
        glb, dram = cell(layer, "GLB accesses", 8), cell(layer, "DRAM accesses", 8)
        try:
            t = f"{secs[(layer, 'rs_opt')]} / {secs[(layer, 'free_opt')]}"
        except KeyError:
            raise RecordError(f"{RS_BASELINE}: {layer} lacks the seconds of its rs_opt or free_opt search") from None
        out.append(_row([layer, edp[4], edp[7], lat[5], f"{glb[5]} ({glb[6]})", dram[5], t]))
    net = cell("all", "EDP", 5)
    out.append(f"| network EDP (Σ energy × Σ latency) | {net[3]} | {net[4]} | | | | |")
    return "\n".join(out) + "\n"


def command_times(root: Path) -> str:
    """Run times of shi2020.md's commands whose records keep them, each with the field it is
    summed from and whether it is wall or CPU time."""
    from experiments.figures.benchmarks import inner_feasibility_seconds

    eff = load_json(root, INNER_EFFORT_LAYERS)
    cpu = [v["cpu_s"] for layer in eff["layers"] for k, v in layer.items() if k != "layer"]
    limits = len(eff["layers"][0]) - 1
    rs, n_rs = _rs_baseline_seconds(root)
    feas, n_feas = inner_feasibility_seconds(root)
    return "\n".join([
        "Run times from the records, each with the fields it is summed from (a sum over a record's pieces "
        "leaves out the script's start-up):",
        "",
        f"- `--eyeriss-layers` (ResNet-50 per layer on Eyeriss v1): {_minutes(sum(cpu))} of CPU time summed over "
        f"its {len(eff['layers'])} layers × {limits} node limits (`{INNER_EFFORT_LAYERS}`, `cpu_s`); wall time not "
        "recorded.",
        f"- `coexplore reproduce shi2020 --steps-only`: {steps_time_phrase(root)}.",
        f"- `experiments.validation.rs_baseline`: {_minutes(rs)} of wall time summed over its {n_rs} exact-mapper "
        f"searches (RS and free, CONV1–5; the seconds `{RS_BASELINE}` prints for each); CPU time not recorded.",
        f"- `experiments.search_quality.inner_feasibility`: {_minutes(feas)} of wall time summed over its {n_feas} "
        f"searches (the inner searches and each layer's exact-mapper reference), run one after the other (`{INNER_FEASIBILITY}`, each search's `seconds` and "
        "each layer's `exact_s`); CPU time not recorded.",
    ]) + "\n"


FIGURES = {
    "shi2020-command-times": ((INNER_EFFORT_LAYERS, STEPS, *STEPS_RECORD_FILES, RS_BASELINE, INNER_FEASIBILITY),
                              command_times),
    "shi2020-decomposition": ((RESULTS,), decomposition),
    "shi2020-inner-bo": ((RESULTS,), inner_bo),
    "shi2020-rs-baseline": ((RS_BASELINE,), rs_baseline_table),
}
