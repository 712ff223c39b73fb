"""Render every marked block of the markdown files from its records, or check them."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from experiments.figures.blocks import find_blocks, markdown_files, replace_blocks
from experiments.figures.catalog import FIGURES, figure

__all__ = ["Outcome", "render_tree"]


@dataclass
class Outcome:
    """What a run found: files rewritten (or that would be), the stale blocks with their
    diffs, the figures used, and the figures of the catalog no file quotes."""

    changed: list[Path] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    @property
    def unused(self) -> list[str]:
        return sorted(set(FIGURES) - self.used)


def render_tree(root: Path, *, check: bool, files: list[Path] | None = None) -> Outcome:
    """Render (``check=False``: write) or compare (``check=True``: write nothing) every
    marked block of ``files`` (default: README.md and docs/**/*.md under ``root``)."""
    out = Outcome()
    cache: dict[str, str] = {}

    def text_of(name: str) -> str:
        if name not in cache:
            cache[name] = figure(name).render(root)
        return cache[name]

    for path in files if files is not None else markdown_files(root):
        where = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        text = path.read_text()
        blocks = find_blocks(text, where)
        if not blocks:
            continue
        for b in blocks:
            out.used.add(b.name)
            want = text_of(b.name)
            want = want if want.endswith("\n") or not want else want + "\n"
            if b.body != want:
                diff = "".join(
                    difflib.unified_diff(
                        b.body.splitlines(keepends=True),
                        want.splitlines(keepends=True),
                        f"{where}:{b.line} (in the file)",
                        f"{b.name} (from {', '.join(figure(b.name).records)})",
                    )
                )
                out.stale.append(
                    f"{where}:{b.line}: figure {b.name!r} differs from its records\n{diff}"
                )
        new = replace_blocks(text, text_of, where)
        if new != text:
            out.changed.append(path)
            if not check:
                path.write_text(new)
    return out
