"""Reading the committed records a figure is rendered from, with errors that name the file."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

__all__ = ["RecordError", "load_csv", "load_json", "stated_scope"]


class RecordError(ValueError):
    """A record is missing, unreadable, or lacks what a figure needs."""


def load_json(root: Path, rel: str) -> Any:
    """The JSON record ``rel`` (a path relative to the repository root ``root``)."""
    path = root / rel
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise RecordError(f"record {rel} not found under {root}") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"record {rel}: not valid JSON ({e})") from None


def load_csv(root: Path, rel: str) -> list[dict[str, str]]:
    """The rows of the CSV record ``rel`` (relative to ``root``), each a dict of strings
    by column name."""
    path = root / rel
    try:
        with path.open(newline="") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        raise RecordError(f"record {rel} not found under {root}") from None


SCOPE_PREFIX = "proofs and bounds cover: "
"""How a run output's one-line proof scope begins (:data:`experiments.proof_scopes.PREFIX`)."""


def stated_scope(root: Path, rel: str) -> str:
    """The space the proofs of the plain-text run output ``rel`` cover, as its header
    states it (printed by the run, or stated afterwards by
    :mod:`experiments.benchmarks.stated_scopes`): the text after ``proofs and bounds
    cover:`` on its one such line. An output without one, or with one line per group
    (a figure that quotes one scope must not pick one of several), is an error."""
    try:
        lines = (root / rel).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise RecordError(f"record {rel} not found under {root}") from None
    found = [x.lstrip("# ").strip() for x in lines if "proofs and bounds cover" in x]
    if len(found) != 1 or not found[0].startswith(SCOPE_PREFIX):
        raise RecordError(f"{rel}: states {'no' if not found else 'not one'} proof scope line "
                          f"({SCOPE_PREFIX!r}...); the figure quotes one")
    return found[0][len(SCOPE_PREFIX):].rstrip(".")
