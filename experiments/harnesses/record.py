"""The ``--json FILE`` record every harness writes: the rows it printed, its settings,
the commit it ran at, its wall time, the CPU time of its own process and the machine's
load average at start and end. The benchmark and search-quality scripts whose figures
the docs quote write the same record (``harness`` then names the script).

The figures in ``docs/howto/scale-out.md`` are rendered from these records
(:mod:`experiments.figures.scale_out`), so a table there says which run it is and
on how loaded a machine its times were taken.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from experiments.provenance import checkout

__all__ = ["RECORD_VERSION", "Run", "git_commit", "public_settings"]

ROOT = Path(__file__).resolve().parents[2]
RECORD_VERSION = 1


def git_commit(root: Path = ROOT) -> dict[str, Any]:
    """``{"commit": HEAD or None, "dirty": bool or None}`` of the checkout at ``root``."""
    head, dirty = checkout(root)
    return {"commit": head, "dirty": dirty}


_PASSWORD = re.compile(r"(://[^:/@]+:)[^@]*@")


def public_settings(args: Any) -> dict[str, Any]:
    """The parsed arguments as a dict, without the ``json`` path itself and with any
    password in a database URL replaced by ``***``."""
    out = {}
    for k, v in vars(args).items():
        if k == "json":
            continue
        if isinstance(v, str):
            v = _PASSWORD.sub(r"\1***@", v)
        elif isinstance(v, tuple):
            v = list(v)
        out[k] = v
    return out


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # not available on this platform
        return None


@dataclass
class Run:
    """Started when the harness starts; :meth:`write` saves the record."""

    harness: str
    settings: dict[str, Any]
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    load_start: list[float] | None = field(default_factory=_load)
    #: taken at the start: the code that ran, even if the checkout changes meanwhile
    checkout: dict[str, Any] = field(default_factory=git_commit)
    _t0: float = field(default_factory=time.monotonic)
    _cpu0: float = field(default_factory=time.process_time)

    def write(self, path: str | Path | None, rows: Any, ok: bool) -> dict[str, Any] | None:
        """Write the record to ``path`` (nothing when ``path`` is None) and return it."""
        if path is None:
            return None
        record = {
            "record_version": RECORD_VERSION,
            "harness": self.harness,
            "settings": self.settings,
            **self.checkout,
            "started_at": self.started_at,
            "wall_s": round(time.monotonic() - self._t0, 3),
            # this process only (time.process_time): the subprocesses a harness starts
            # are not counted
            "process_cpu_s": round(time.process_time() - self._cpu0, 3),
            "load_avg_1_5_15_start": self.load_start,
            "load_avg_1_5_15_end": _load(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "ok": ok,
            "rows": rows,
        }
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(record, indent=1, default=str) + "\n")
        print(f"# record written to {path}")
        return record
