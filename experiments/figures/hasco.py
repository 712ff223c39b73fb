"""Figures from HASCO's committed ``results.json`` (``docs/reproduction/results/hasco/``,
written by ``coexplore reproduce hasco --seeds 10 --workers 1``)."""

from __future__ import annotations

from pathlib import Path

from experiments.figures.records import RecordError, load_json

__all__ = ["FIGURES", "RESULTS", "headline"]

RESULTS = "docs/reproduction/results/hasco/results.json"


def _x(v: float) -> str:
    return f"{v:.2f}x"


def headline(root: Path) -> str:
    """Separate / co-design latency over every pair, for the two definitions of "separate"
    (docs/reproduction/hasco.md, "HASCO's experiment as the abstract states it")."""
    overall = load_json(root, RESULTS)["overall"]
    cols = []
    for key in ("ratio", "ratio_reference"):
        try:
            s = overall[key]
            a = s["all_comparisons"]
            cols.append((s, a))
        except KeyError as e:
            raise RecordError(f"{RESULTS}: overall.{key} lacks {e}") from None
    pairs = {s["pairs"] for s, _ in cols}
    n = {a["n"] for _, a in cols}
    if len(pairs) != 1 or len(n) != 1:
        raise RecordError(
            f"{RESULTS}: the two definitions cover different pairs {pairs} or comparisons {n}"
        )
    p, c = pairs.pop(), n.pop()
    rows = [
        "| | separate = MOBO on a proxy, then software tuned (HASCO's flow, our reading) "
        "| separate = Gemmini-like reference, then software tuned |",
        "|---|---|---|",
        f"| **median of the {p} pair medians** | "
        + " | ".join(f"**{_x(s['median_of_pair_medians'])}**" for s, _ in cols)
        + " |",
        f"| all {c} comparisons | "
        + " | ".join(
            f"{_x(a['median'])} [{a['q25']:.2f}, {a['q75']:.2f}], {_x(a['min'])} to {_x(a['max'])}"
            for _, a in cols
        )
        + " |",
        "| pairs with a median of at least 1.25x | "
        + " | ".join(f"{s['pairs_with_median_at_least_1.25']} of {p}" for s, _ in cols)
        + " |",
    ]
    return "\n".join(rows) + "\n"


FIGURES = {"hasco-headline": ((RESULTS,), headline)}
