"""``python -m experiments.figures render [--check] [--root DIR] [FILE ...]``.

``render`` rewrites every ``<!-- figure: NAME -->`` block of README.md and docs/**/*.md
from the committed records; ``--check`` writes nothing and exits 1 when any block differs
from what its records give (printing where and the diff); ``list`` prints every figure
with its records and where it is quoted. A malformed marker or an unknown figure name
exits 2 with one line naming the file and line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from experiments.figures.blocks import MarkerError, find_blocks, markdown_files
from experiments.figures.catalog import FIGURES, UnknownFigure
from experiments.figures.records import RecordError
from experiments.figures.render import render_tree

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m experiments.figures", description=__doc__.split("\n\n")[1]
    )
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser(
        "render", help="render the marked blocks from the records (--check: compare only)"
    )
    r.add_argument("--check", action="store_true", help="write nothing; exit 1 if a block is stale")
    r.add_argument(
        "--root", type=Path, default=ROOT, help="repository root (default: this checkout)"
    )
    r.add_argument(
        "files", nargs="*", type=Path, help="markdown files (default: README.md and docs/**/*.md)"
    )
    ls = sub.add_parser("list", help="every figure, its records and where it is quoted")
    ls.add_argument("--root", type=Path, default=ROOT)
    args = ap.parse_args(argv)
    root = args.root.resolve()
    try:
        if args.command == "list":
            where: dict[str, list[str]] = {}
            for path in markdown_files(root):
                for b in find_blocks(path.read_text(), str(path.relative_to(root))):
                    where.setdefault(b.name, []).append(f"{path.relative_to(root)}:{b.line}")
            for name, fig in sorted(FIGURES.items()):
                print(
                    f"{name}\n  records: {', '.join(fig.records)}\n  quoted:  {', '.join(where.get(name, ['(nowhere)']))}"
                )
            return 0
        files = [f.resolve() for f in args.files] or None
        out = render_tree(root, check=args.check, files=files)
    except (MarkerError, UnknownFigure, RecordError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.check:
        for s in out.stale:
            print(s, file=sys.stderr)
        if files is None and out.unused:
            print(
                f"figure(s) {out.unused} are in the catalog but quoted nowhere "
                "(experiments/figures/catalog.py)",
                file=sys.stderr,
            )
            return 1
        if out.stale:
            print(
                f"{len(out.stale)} figure(s) differ from their records; run "
                "`python -m experiments.figures render` and commit the result",
                file=sys.stderr,
            )
            return 1
        print(f"figures: {len(out.used)} rendered from records, all up to date")
        return 0
    for p in out.changed:
        print(f"rendered {p.relative_to(root) if p.is_relative_to(root) else p}")
    print(f"figures: {len(out.used)} rendered from records; {len(out.changed)} file(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
