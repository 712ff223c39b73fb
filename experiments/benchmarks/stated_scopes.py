"""The proof scope of committed run outputs that were written before their scripts
printed one (issue 45, item 3: every "proven" or "optimal" states the space it covers).

The scripts of :mod:`experiments.benchmarks`, :mod:`experiments.validation.rs_baseline`,
:mod:`experiments.search_quality.inner_feasibility` and :mod:`experiments.reproduce.shi2020`
now print the space their proofs cover (:class:`~experiments.proof_scopes.ProofScopes`).
Outputs under docs/ written before that cannot be rerun cheaply, so their scope is stated
after the run: :data:`STATED` names, per file, the settings its command used (from the
file's own header, the JSON the run wrote beside it, or the script's docstring) and the
script's own function that computes the scope of a run with those settings, without
mapping (each script's ``announced_scopes``, the code its header comes from). The lines
go at the top of the file, labelled as stated afterwards (:func:`header`), so no one
mistakes them for the run's output; the text is computed, never typed.

The scope is computed by this repository's code when the header is written: it states
what the settings cover under the mapper's present definition of its space (divisor
tilings, the accounting by name, bypass, constraints), which for these runs has the same
defaults as at their commits (the exact mapper has searched divisor tilings and bypass
choices, without constraints, by default since its first version).

Run: ``python -m experiments.benchmarks.stated_scopes [--check] [FILE ...]`` (writes the
headers of the named files, or of all of :data:`STATED`; a file is named by its path
under docs/, with or without ``docs/``, or by its name where that is unique;
``--check``: exit 1 if any file's header is missing or differs from the computed one).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from experiments.benchmarks import (
    exact_accountings,
    mapper_codesign,
    mapper_local_search,
    nested_reuse,
    shi2020_inner_effort,
)
from experiments.proof_scopes import ProofScopes
from experiments.reproduce import shi2020
from experiments.search_quality import inner_feasibility
from experiments.validation import rs_baseline

DOCS = Path(__file__).resolve().parents[2] / "docs"
LABEL = "# proof scope (stated after the run from the command's settings, not printed by the run"
"""How a stated header begins (a printed one reads ``proofs and bounds cover`` alone)."""
NOT_RECORDED = "# proof scope: not recorded; rerun to state it"
"""The header of an output whose settings cannot be recovered (none in :data:`STATED` now)."""


@dataclass(frozen=True)
class Stated:
    """One committed output's settings and how its scope is computed from them.

    Attributes:
        source: where the settings come from, in words (printed in the header).
        scopes: computes the :class:`ProofScopes` a run with those settings states.
        argv: the command-line arguments of the run (for the scripts whose scope follows
            from them alone; ``()`` where ``scopes`` reads more, e.g. a JSON's points).
    """

    source: str
    scopes: Callable[[], ProofScopes]
    argv: tuple[str, ...] = ()


def _by_argv(script: ModuleType, source: str, *argv: str) -> Stated:
    """The output of ``script`` run with ``argv``: its ``announced_scopes(argv)``."""
    return Stated(source, lambda: script.announced_scopes(list(argv)), argv)


def _record(rel: str) -> dict:
    return json.loads((DOCS / rel).read_text(encoding="utf-8"))


def _nested_reuse_dqn32() -> ProofScopes:
    rec = _record("benchmarks/nested_reuse_dqn32.json")
    return nested_reuse.announced_scopes(rec["points"], rec["max_nodes"])


SHI2020_RESULTS = "reproduction/results/shi2020/results.json"
INNER_FEASIBILITY_LAYERS = ("resnet50:layer1.0.conv2", "resnet50:layer3.0.conv1", "dqn:conv1")


FINAL_POINT = '{"pe_x": 8, "pe_y": 21, "rf_w_words": 32, "rf_i_words": 128, "rf_o_words": 16, "glb_kib": 128}'

CODESIGN_ROWS = "benchmarks/mapper_codesign_full.jsonl"


def _codesign_rows() -> ProofScopes:
    """The rows file's scope: its header's settings (``--max-nodes``, ``--no-screen``) on
    the spaces its rows hold (a partial run states only what it mapped)."""
    lines = (DOCS / CODESIGN_ROWS).read_text(encoding="utf-8").splitlines()
    settings = json.loads(lines[0])["settings"]
    spaces = sorted({json.loads(ln)["space"] for ln in lines[1:] if ln.strip()})
    argv = ["--spaces", *spaces]
    if settings.get("max_nodes") is not None:
        argv += ["--max-nodes", str(settings["max_nodes"])]
    if settings.get("no_screen"):
        argv.append("--no-screen")
    return mapper_codesign.announced_scopes(argv)


STATED: dict[str, Stated] = {
    CODESIGN_ROWS: Stated(
        "settings: the rows file's first line (its settings) and the spaces of its rows; the lines are kept in that "
        "line's stated_scopes", _codesign_rows),
    "benchmarks/exact_accountings.txt": _by_argv(
        exact_accountings, "settings: the command in this file's header",
        "--time-limit", "300", "--accountings", "coexplore,timeloop,zigzag", "--objective", "edp"),
    "benchmarks/mapper_codesign.txt": _by_argv(
        mapper_codesign, "settings: the command in this file's header, as mapper_codesign.json records them",
        "--shi-points", "15", "--demo-points", "10", "--workloads", "dqn", "dqn@32", "--points", "0", "1", "2", "3",
        "--time-limit-s", "60"),
    "benchmarks/mapper_codesign_shi_iso0_all_workloads.txt": _by_argv(
        mapper_codesign, "settings: the command in this file's header, restricted to the rows it printed "
        "(shi-iso point 0; the run was stopped after it)",
        "--shi-points", "15", "--demo-points", "10", "--workloads", "dqn", "dqn@32", "resnet50", "bert",
        "--spaces", "shi-iso", "--points", "0", "--time-limit-s", "120"),
    "benchmarks/mapper_local_search.txt": _by_argv(
        mapper_local_search, "settings: the command in this file's header, as mapper_local_search.json records "
        "them", "--spaces", "shi-iso", "shi-free", "--points", "0", "1", "2", "3", "--workloads", "dqn", "dqn@32",
        "--time-limit-s", "10"),
    "benchmarks/nested_reuse_dqn32.txt": Stated(
        "settings: the command in this file's header; its points and node limit from nested_reuse_dqn32.json",
        _nested_reuse_dqn32),
    "benchmarks/shi2020_final_nodes_dqn32.txt": _by_argv(
        shi2020_inner_effort, "settings: the command in this file's header",
        "--workload", "dqn@32", "--point", FINAL_POINT, "--limits", "3000000", "30000000",
        "--layers", "conv1", "conv2"),
    "benchmarks/shi2020_inner_effort.txt": _by_argv(
        shi2020_inner_effort, "settings: this file's first line and the script's docstring (DQN, 12 iso designs, "
        "seed 0, the settings its rows name), the points as shi2020_inner_effort.json records them",
        "--workload", "dqn", "--designs", "12", "--mode", "iso", "--seed", "0", "--settings", "heuristic",
        "nodes=100k", "nodes=300k", "nodes=1M", "gap=0.02", "gap=0.05", "nodes=3M"),
    "benchmarks/shi2020_inner_effort_resnet50_layers.txt": _by_argv(
        shi2020_inner_effort, "settings: the script's docstring (--workload resnet50 --eyeriss-layers) and this "
        "file's first two lines (ResNet-50 on Eyeriss v1, its node limits)",
        "--workload", "resnet50", "--eyeriss-layers"),
    "validation/rs_baseline.txt": _by_argv(
        rs_baseline, "settings: this file's mapper section (objective edp, every search optimal: no time limit) and "
        "its rows (CONV1-5)", "--objective", "edp"),
    "search_quality/inner_feasibility.txt": _by_argv(
        inner_feasibility, "settings: this file's first line and its layers, as inner_feasibility.json records them "
        "(every exact reference optimal: no node limit)",
        "--budget", "50", "--seeds", "3", "--layers", *INNER_FEASIBILITY_LAYERS),
    "reproduction/results/shi2020/run.log": Stated(
        "settings: the search mapper (node limit, gap) and each run's best design as results.json beside this file "
        "records them; the final re-maps' higher node limits stop proofs later, over the same space",
        lambda: shi2020.announced_scopes(_record(SHI2020_RESULTS))),
}
"""The committed outputs whose scope is stated after the run, by path under docs/."""


def key_of(name: str) -> str:
    """The :data:`STATED` key of ``name``: a path under docs/ (with or without a leading
    ``docs/``, or absolute), or a file name that only one key has."""
    p = Path(name)
    if p.is_absolute():
        try:
            p = p.resolve().relative_to(DOCS)
        except ValueError:
            return name
    rel = p.as_posix().removeprefix("docs/")
    if rel in STATED:
        return rel
    by_name = [k for k in STATED if Path(k).name == rel]
    return by_name[0] if len(by_name) == 1 else name


def header(name: str) -> list[str]:
    """The header lines of ``name`` (a key of :data:`STATED`): the label with where the
    settings come from, then the scope lines, each a comment (every file of
    :data:`STATED` reads ``#`` as a comment: its own header lines are)."""
    st = STATED[name]
    return [f"{LABEL}; {st.source}; computed by python -m experiments.benchmarks.stated_scopes):",
            *(f"# {line}" for line in st.scopes().lines())]


def stated_lines(path: Path) -> list[str]:
    """The stated header of ``path``: its leading comment lines (:func:`split_header`), or
    for JSON lines the first line's ``stated_scopes`` (the rows read ``#`` as no comment)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        first = text.split("\n", 1)[0]
        return list(json.loads(first).get("stated_scopes", [])) if first.strip() else []
    return split_header(text)[0]


def split_header(text: str) -> tuple[list[str], str]:
    """``text``'s stated header lines (empty if none) and the rest of it."""
    lines = text.splitlines(keepends=True)
    if not lines or not (lines[0].startswith(LABEL) or lines[0].startswith(NOT_RECORDED)):
        return [], text
    n = 1
    while n < len(lines) and (lines[n].startswith("# proofs and bounds cover") or lines[n].startswith("#   ")):
        n += 1
    return [ln.rstrip("\n") for ln in lines[:n]], "".join(lines[n:])


def stamp(path: Path, lines: list[str]) -> bool:
    """Put ``lines`` at the top of ``path`` in place of its stated header, if any; whether
    the file changed."""
    old = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":                    # the first line's stated_scopes
        first, sep, rest = old.partition("\n")
        new = json.dumps({**json.loads(first), "stated_scopes": lines}) + sep + rest
    else:
        new = "".join(f"{ln}\n" for ln in lines) + split_header(old)[1]
    if new != old:
        path.write_text(new, encoding="utf-8")
    return new != old


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help=f"paths under docs/ (default: {', '.join(STATED)})")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a header is missing or stale")
    args = ap.parse_args(argv)
    names = [key_of(f) for f in args.files] or list(STATED)
    unknown = [n for n in names if n not in STATED]
    if unknown:
        ap.error(f"no stated settings for {unknown}; known: {list(STATED)}")
    stale = []
    for name in names:
        lines, path = header(name), DOCS / name
        if args.check:
            if stated_lines(path) != lines:
                stale.append(name)
        elif stamp(path, lines):
            print(f"{path}: header written")
    for name in stale:
        print(f"{DOCS / name}: the stated proof scope is missing or differs from the computed one; "
              "run python -m experiments.benchmarks.stated_scopes to rewrite it", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
