"""The figure markers in markdown: find the marked blocks, replace their bodies.

A block is::

    <!-- figure: NAME -->
    ...rendered markdown...
    <!-- /figure -->

Markers stand on lines of their own; blocks do not nest. The body between them is owned
by the renderer of ``NAME`` (:mod:`experiments.figures.catalog`): hand edits there are
overwritten by ``render`` and refused by ``render --check``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "MarkerError", "find_blocks", "replace_blocks"]

OPEN = re.compile(r"^<!-- figure: ([A-Za-z0-9_.-]+) -->[ \t]*$")
CLOSE = re.compile(r"^<!-- /figure -->[ \t]*$")


class MarkerError(ValueError):
    """A malformed marker: unclosed, nested, stray closing, or a bad name."""


@dataclass(frozen=True)
class Block:
    """One marked block: the figure's name, the 1-based line of its opening marker, and
    its body (the lines between the markers, each ending in a newline)."""

    name: str
    line: int
    body: str


def _scan(text: str, where: str) -> list[tuple[str, int, int, int]]:
    """(name, opening line index, first body line index, closing line index) of each block."""
    lines = text.splitlines(keepends=True)
    found, open_at, name = [], None, ""
    for i, line in enumerate(lines):
        stripped = line.rstrip("\n")
        if stripped.startswith("<!-- figure:"):
            m = OPEN.match(stripped)
            if not m:
                raise MarkerError(
                    f"{where}:{i + 1}: malformed figure marker {stripped!r} "
                    "(expected '<!-- figure: NAME -->')"
                )
            if open_at is not None:
                raise MarkerError(
                    f"{where}:{i + 1}: figure {m.group(1)!r} opens inside figure "
                    f"{name!r} (opened at line {open_at + 1}); blocks do not nest"
                )
            open_at, name = i, m.group(1)
        elif CLOSE.match(stripped):
            if open_at is None:
                raise MarkerError(f"{where}:{i + 1}: '<!-- /figure -->' without an opening marker")
            found.append((name, open_at, open_at + 1, i))
            open_at = None
    if open_at is not None:
        raise MarkerError(
            f"{where}:{open_at + 1}: figure {name!r} is never closed (expected '<!-- /figure -->')"
        )
    return found


def find_blocks(text: str, where: str = "<text>") -> list[Block]:
    """Every marked block of ``text``, in order (``where`` names the file in errors)."""
    lines = text.splitlines(keepends=True)
    return [Block(name, a + 1, "".join(lines[b:c])) for name, a, b, c in _scan(text, where)]


def replace_blocks(text: str, render: Callable[[str], str], where: str = "<text>") -> str:
    """``text`` with the body of every block replaced by ``render(name)`` (a newline is
    added where the rendered text lacks a final one)."""
    lines = text.splitlines(keepends=True)
    out, pos = [], 0
    for name, _a, b, c in _scan(text, where):
        body = render(name)
        if body and not body.endswith("\n"):
            body += "\n"
        out += lines[pos:b]
        out.append(body)
        pos = c
    out += lines[pos:]
    return "".join(out)


def markdown_files(root: Path) -> list[Path]:
    """The files whose blocks are rendered: README.md and every markdown file under docs/."""
    files = [root / "README.md"] if (root / "README.md").is_file() else []
    return files + sorted((root / "docs").rglob("*.md"))
