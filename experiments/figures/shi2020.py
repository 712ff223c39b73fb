"""Figures from Shi et al. 2020's committed ``results.json``
(``docs/reproduction/results/shi2020/``, written by ``coexplore reproduce shi2020``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments.figures.fmt import pct, thousands
from experiments.figures.records import RecordError, load_json

__all__ = ["FIGURES", "RESULTS", "WITHDRAWN", "decomposition", "inner_bo", "withdrawn"]

RESULTS = "docs/reproduction/results/shi2020/results.json"

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


FIGURES = {
    "shi2020-decomposition": ((RESULTS,), decomposition),
    "shi2020-inner-bo": ((RESULTS,), inner_bo),
}
