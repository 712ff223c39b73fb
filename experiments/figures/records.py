"""Reading the committed records a figure is rendered from, with errors that name the file."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

__all__ = ["RecordError", "load_csv", "load_json"]


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
