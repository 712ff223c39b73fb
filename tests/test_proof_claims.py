"""Every proof claim on a markdown page states the space it covers (issue 45, item 3).

"Proven", "optimal", "the optimum", "proves", "the proof" of a mapper hold only over a
space: divisor or padded tilings, the accounting, whether bypass choices were searched,
the constraints (:class:`mappers.base.ProofScope`). MappingResult, the CLI and the
plain-text run outputs under docs/ state it (tests/mappers/test_proof_scope.py,
tests/experiments/benchmarks/test_stated_scopes.py); this test holds README.md and every
docs/**/*.md page to the same rule.

A page is split into units (:func:`units`): a paragraph, a list item (with its
continuation lines), a heading, a fenced block (read with the paragraph just above it, its
lead-in), and a table row (read with the table's header and the paragraph just above the
table, its caption). HTML comments (the ``<!-- figure: ... -->`` markers) count as blank
lines. A unit whose own text makes a claim (:data:`CLAIM`; for a table row: the row or its
header; for a fenced block: the block) must state the scope in the same unit
(:func:`states_scope`):

* in words: the tilings ("divisor tilings", "padded tilings", "divisor-tiling"), and the
  accounting, bypass and constraints each named ("coexplore accounting", "no bypass
  choices", "no constraints", ...); or
* the line a run output states its scope with (``proofs and bounds cover``); or
* a link to the record that states it: ``scope: as stated in `PATH` `` (more paths may
  follow in the same parentheses), every PATH a file of the repository that itself states
  a scope (in words or by that line, or, for a JSON record, with the fields of a
  ``ProofScope``).

Words in other senses (the optimum of an enumerated hardware space, a test's toy space,
a measured time "to proof") are listed in :data:`EXEMPT` with the reason, each tested to
still match a claim, so the list cannot outlive its reason. Rendered blocks (between
``<!-- figure: NAME -->`` markers) are held to the same rule: their renderers in
experiments/figures state the scope from the record.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "proofs and bounds cover"

CLAIM = re.compile(
    r"(?<![-\w])(?:proven|proves|proved|prove|proving|proofs?|optimal|optimality|optimum)\b", re.IGNORECASE)
"""A proof claim: the words of a proof or an optimum, as whole words; not "unproven" (the
absence of a proof), "Pareto-optimal" (a front, no proof), "optimize", "optimizer"."""

TILINGS = re.compile(r"\b(?:divisor|padded)(?:\s+or\s+padded)?[\s-]+tilings?\b", re.IGNORECASE)
PARTS = {"accounting": re.compile(r"\baccounting\b", re.IGNORECASE),
         "bypass": re.compile(r"\bbypass", re.IGNORECASE),
         "constraints": re.compile(r"constrain", re.IGNORECASE)}
LINK = re.compile(r"scope:\s+as\s+stated\s+in\s+([^)]*)")
PATH = re.compile(r"`([\w.-]+(?:/[\w.-]+)+)`")
SCOPE_FIELDS = {"tilings", "accounting", "bypass", "constraints"}

EXEMPT: dict[str, str] = {
    "docs/guide/architecture.md#mapper time to proof":
        "the layout of benchmarks/: names a quantity measured (time to a proof), claims no proof",
    "docs/guide/optimizers.md#evaluations to get within 5 % of the exhaustive optimum":
        "the optimum of an enumerated 2,592-point joint hardware x GEMM-mapping space, found by scoring every "
        "point (the row names the set); no mapper's proof",
    "docs/reproduction/hasco.md#hasco-enumerate":
        "the optimum of the enumerated GEMM and GEMV hardware spaces (every design under the area cap scored by "
        "the in-loop evaluator, results/hasco-enumerate/, as each unit cites); the best design of a set, not a "
        "mapper's proof",
    "docs/reproduction/results/hasco-enumerate/table.md":
        "the table of that enumeration: the optimum of each enumerated hardware space, no mapper's proof",
    "docs/reproduction/hasco.md#test_learning_finds_the_optimum_of_a_split_space":
        "the one optimum of a small model space a test builds for the Q-network's learning, no mapper's proof",
    "docs/reproduction/shi2020.md#Withdrawn until rerun: its search records were never committed.**":
        "lists what is withdrawn for want of records (the searches' layer proofs among them): claims no proof",
}
"""Units that use the words in another sense, by ``path#substring`` (the unit's text, with
its context, contains the substring) or ``path`` (every unit of the page), with the reason."""


@dataclass(frozen=True)
class Unit:
    path: str
    line: int
    claim: str      # where a claim is looked for: the paragraph, item, heading, block, or a row with its header
    text: str       # the same with its context: a table's caption, a block's lead-in


ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
FENCE = re.compile(r"^\s*(```|~~~)")
COMMENT = re.compile(r"^\s*<!--.*-->\s*$")


def _starts_unit(line: str) -> bool:
    return bool(ITEM.match(line) or FENCE.match(line)) or line.lstrip().startswith(("|", "#"))


def units(text: str, path: str = "") -> list[Unit]:
    """The units of a markdown page (module docstring), in order, each with its first line."""
    lines = ["" if COMMENT.match(x) else x for x in text.splitlines()]
    out: list[Unit] = []
    i, n, lead = 0, len(lines), ""
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if FENCE.match(line):
            j = i + 1
            while j < n and not FENCE.match(lines[j]):
                j += 1
            block = "\n".join(lines[i : j + 1])
            out.append(Unit(path, i + 1, block, f"{lead}\n{block}"))
            i, lead = j + 1, ""
        elif line.lstrip().startswith("|"):
            j = i
            while j < n and lines[j].lstrip().startswith("|"):
                j += 1
            header = lines[i]
            for k in range(i + 2, j) if j - i > 2 else [i]:
                row = header if k == i else f"{header}\n{lines[k]}"
                out.append(Unit(path, k + 1, row, f"{lead}\n{row}"))
            i, lead = j, ""
        elif line.lstrip().startswith("#"):
            out.append(Unit(path, i + 1, line, line))
            i, lead = i + 1, ""
        else:
            j = i + 1
            while j < n and lines[j].strip() and not _starts_unit(lines[j]):
                j += 1
            block = "\n".join(lines[i:j])
            out.append(Unit(path, i + 1, block, block))
            i, lead = j, block
    return out


def states_scope_in_words(text: str) -> bool:
    return bool(TILINGS.search(text)) and all(p.search(text) for p in PARTS.values())


def _has_scope_fields(x: object) -> bool:
    if isinstance(x, dict):
        return SCOPE_FIELDS <= set(x) or any(map(_has_scope_fields, x.values()))
    return isinstance(x, list) and any(map(_has_scope_fields, x))


def record_states_scope(rel: str) -> bool:
    """The file ``rel`` (from the repository root) states a scope: in words, by the run
    outputs' line, or (a JSON record) with a ProofScope's fields."""
    p = ROOT / rel
    if not p.is_file():
        return False
    text = p.read_text(encoding="utf-8")
    if PREFIX in text or states_scope_in_words(text):
        return True
    if p.suffix == ".json":
        return _has_scope_fields(json.loads(text))
    return False


def linked(text: str) -> list[str]:
    """The paths a unit names after ``scope: as stated in``."""
    return [p for m in LINK.findall(text) for p in PATH.findall(m)]


def states_scope(text: str) -> bool:
    if PREFIX in text or states_scope_in_words(text):
        return True
    links = linked(text)
    return bool(links) and all(record_states_scope(p) for p in links)


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def page_units() -> list[Unit]:
    return [u for p in pages() for u in units(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix())]


def exemption(u: Unit) -> str | None:
    """The :data:`EXEMPT` key that covers ``u``, if any."""
    for key in EXEMPT:
        path, _, sub = key.partition("#")
        if u.path == path and (not sub or sub in u.text):
            return key
    return None


def claims(all_units: list[Unit]) -> list[Unit]:
    return [u for u in all_units if CLAIM.search(u.claim)]


# --------------------------------------------------------------------------- the rule's parts


@pytest.mark.parametrize("text", [
    "The exact mapper proved every layer optimal.",
    "all 24 proven optimal",
    "| layers | proven |",
    "the bound is proven to be the optimum on 2 pairs",
    "It proves its result optimal",
    "within 34 % of its optimum",
    "an unlimited proof is out of reach",
    "Optimality holds against brute force",
])
def test_a_claim_is_caught(text):
    assert CLAIM.search(text)


@pytest.mark.parametrize("text", [
    "10 of the 80 maps unproven",
    "the Pareto-optimal trial nearest the ideal point",
    "optimizer: constrained-bo; optimize the EDP",
    "the optimization of the hardware",
    "a proofreader's note",
])
def test_other_words_are_not_claims(text):
    assert not CLAIM.search(text)


def test_a_scope_in_words_names_all_four_parts():
    full = "proven over divisor tilings, coexplore accounting, bypass searched, no constraints"
    assert states_scope(full)
    assert states_scope("the best divisor-tiling mapping under the default accounting, no\nconstraints; no bypass")
    assert states_scope("over divisor or padded tilings, timeloop accounting, bypass fixed, unconstrained")
    assert not states_scope("proven over the divisor tilings")                         # accounting, bypass, ...
    assert not states_scope("coexplore accounting, bypass searched, no constraints")   # no tilings
    assert states_scope(f"{PREFIX}: edp over ...")


def test_a_scope_by_link_needs_a_file_that_states_one(tmp_path):
    assert states_scope("(scope: as stated in `docs/benchmarks/mapper_optimality.txt`)")
    assert states_scope("(scope: as stated in `docs/benchmarks/mapper_optimality.json`, its `scopes`)")
    assert states_scope("(scope: as stated in\n  `docs/benchmarks/mapper_codesign.txt` and "
                        "`docs/benchmarks/mapper_local_search.txt`)")
    assert not states_scope("(scope: as stated in `docs/benchmarks/no_such_file.txt`)")
    assert not states_scope("(scope: as stated in `docs/SECURITY.md` and "
                            "`docs/benchmarks/mapper_optimality.txt`)")  # a page that states none: every path counts
    assert not states_scope("(scope: as stated in the record)")                           # no path
    assert not states_scope("`docs/benchmarks/mapper_optimality.txt`")                    # a path, not as the scope


def test_the_units_of_a_page():
    page = "\n".join([
        "# Title", "", "A paragraph", "over two lines.", "- an item", "  continued", "- another", "",
        "The caption.", "", "| a | proven |", "|---|---|", "| x | yes |", "| y | no |", "",
        "<!-- figure: f -->", "Lead-in:", "```", "proven optimal", "```", "<!-- /figure -->",
    ])
    got = units(page, "p.md")
    assert [u.line for u in got] == [1, 3, 5, 7, 9, 13, 14, 17, 18]
    assert got[1].claim == "A paragraph\nover two lines." and got[2].claim == "- an item\n  continued"
    assert got[5].claim == "| a | proven |\n| x | yes |" and got[5].text == "The caption.\n| a | proven |\n| x | yes |"
    assert got[8].text == "Lead-in:\n```\nproven optimal\n```"      # the figure markers are blank lines


def test_a_claim_takes_its_scope_from_its_own_unit_only():
    page = ("All layers proven optimal.\n\nOver divisor tilings, coexplore accounting, bypass searched, no "
            "constraints.\n\n| what | proven |\n|---|---|\n| a | yes |\n")
    bad = [u.line for u in claims(units(page)) if not states_scope(u.text)]
    assert bad == [1]                  # the next paragraph does not cover the first; it is the table's caption
    farther = page.replace("constraints.\n\n| what", "constraints.\n\nAnother paragraph.\n\n| what")
    assert [u.line for u in claims(units(farther)) if not states_scope(u.text)] == [1, 9]


# --------------------------------------------------------------------------- the pages


def test_every_page_is_read():
    names = {p.relative_to(ROOT).as_posix() for p in pages()}
    assert {"README.md", "docs/index.md", "docs/guide/cost-model.md", "docs/reproduction/shi2020.md",
            "docs/reproduction/results/shi2020/table.md"} <= names


def test_every_proof_claim_on_a_page_states_its_scope():
    missing = [f"{u.path}:{u.line}: {u.claim[:160]!r}" for u in claims(page_units())
               if not states_scope(u.text) and exemption(u) is None]
    assert missing == [], ("a proof claim without the space it covers (state the tilings, accounting, bypass "
                           "and constraints, or '(scope: as stated in `PATH`)'; a rendered block: its renderer):\n"
                           + "\n".join(missing))


def test_every_exemption_still_covers_a_claim_without_a_scope():
    """An exemption whose page no longer makes that claim (or states its scope now) goes."""
    all_claims = claims(page_units())
    used = {exemption(u) for u in all_claims if not states_scope(u.text)}
    assert set(EXEMPT) - used == set()
    for key, reason in EXEMPT.items():
        assert reason.strip() and (ROOT / key.partition("#")[0]).is_file(), key


def test_every_linked_record_states_a_scope():
    """A "(scope: as stated in `PATH`)" names a file that states one (also where the unit
    states its scope in words as well, so no link is left dangling)."""
    bad = [(u.path, u.line, p) for u in page_units() for p in linked(u.text) if not record_states_scope(p)]
    assert bad == []
