"""The docs teach what runs: every page that says its code blocks run does run, as a
file, in order, with the budgets printed on the page; the output it shows is the output
it gives; and the site's nav and the README point at pages that exist.

A page opts in with the sentence ``runs, in order, as one script in the test suite``;
its ``python`` blocks are concatenated into one file run with ``python FILE`` in a fresh
folder (as a reader would save and run it: no ``__main__`` guard, worker processes
included). A ``text`` block right after a ``python`` block is that block's output: each
of its lines must appear in what the script prints.

CPU seconds per page, measured on the 2-core machine (``time.process_time`` of the
child, so of the script, not of pytest): getting-started about 11, each how-to 1.5-3, plus
about 4 s of imports each.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
OPT_IN = "runs, in order, as one script in the test suite"
BLOCK = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


def executable_pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if OPT_IN in " ".join(p.read_text().split()))


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(text)]


def script_of(text: str) -> str:
    return "\n".join(code for lang, code in blocks(text) if lang == "python")


def expected_outputs(text: str) -> list[str]:
    """The lines of every ``text`` block that directly follows a ``python`` block."""
    out, prev = [], None
    for m in BLOCK.finditer(text):
        lang = m.group(1)
        between = text[prev.end() : m.start()] if prev is not None else None
        if (
            lang == "text"
            and prev is not None
            and prev.group(1) == "python"
            and not between.strip()
        ):
            out += [line.strip() for line in m.group(2).splitlines() if line.strip()]
        prev = m
    return out


def test_the_tutorial_and_the_how_tos_opt_in():
    """The pages the issue asks for are executed; a page can only leave by losing its
    promise, never silently."""
    names = {p.relative_to(DOCS).as_posix() for p in executable_pages()}
    assert {
        "getting-started.md",
        "howto/add-accelerator.md",
        "howto/add-mapper.md",
        "howto/add-optimizer.md",
    } <= names, names


def test_block_parsing_on_a_known_page():
    text = "x\n```python\nprint(1)\n```\n\n```text\n1\n```\n```bash\nls\n```\n```python\nprint(2)\n```\n"
    assert script_of(text) == "print(1)\n\nprint(2)\n"
    assert expected_outputs(text) == ["1"]


@pytest.mark.parametrize("page", executable_pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_runs_as_a_file(page: Path, tmp_path: Path):
    text = page.read_text()
    code = script_of(text)
    assert code.strip(), f"{page} promises code blocks that run but has none"
    script = tmp_path / "page.py"
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert out.returncode == 0, f"{page.name} failed (CPU {cpu_s:.1f} s):\n{out.stderr[-4000:]}"
    assert "Traceback" not in out.stderr, out.stderr[-4000:]
    for line in expected_outputs(text):
        assert line in out.stdout, (
            f"{page.name} shows {line!r} as output; it printed:\n{out.stdout}"
        )


def _nav_pages(nav) -> list[str]:
    found = []
    for item in nav:
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            for v in item.values():
                found += _nav_pages(v) if isinstance(v, list) else [v]
    return found


def test_every_nav_entry_exists_and_every_page_is_in_the_nav():
    """``mkdocs build --strict`` (in ``make test``) checks the same; this names the page."""
    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_pages(cfg["nav"])
    missing = [p for p in nav if not (DOCS / p).is_file()]
    assert not missing, missing
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages <= set(nav), sorted(pages - set(nav))


def test_readme_is_short_and_its_doc_links_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert len(links) >= 10
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_make_test_builds_the_site_strictly_and_checks_the_figures():
    mk = (ROOT / "Makefile").read_text()
    target = re.search(r"^test:.*?(?=^\S)", mk + "\nend:", re.S | re.M).group(0)
    assert "mkdocs build --strict" in target
    assert "experiments.figures render --check" in target
    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert cfg["validation"]["omitted_files"] == "warn"  # strict: a page left out of the nav fails
