"""Which checkout of coexplore produced a study or a record: its git commit and whether
tracked files had local changes. Outside a git checkout (an installed package) both are
unknown (``None``); git is asked with a timeout, so a hung git never stalls a run."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["ROOT", "checkout"]

ROOT = Path(__file__).resolve().parents[1]


def _git(root: Path, timeout_s: float, *args: str) -> str | None:
    try:
        p = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def checkout(root: Path = ROOT, timeout_s: float = 30.0) -> tuple[str | None, bool | None]:
    """``(HEAD's full hash, tracked files changed)`` of the checkout at ``root``, each
    ``None`` where git cannot tell (each git call is given ``timeout_s``)."""
    head = _git(root, timeout_s, "rev-parse", "HEAD") or None
    status = _git(root, timeout_s, "status", "--porcelain", "--untracked-files=no") if head else None
    return head, None if status is None else bool(status)
