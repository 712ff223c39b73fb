"""MeLoPPR's CPU, precision and model tables rendered from results.json (issue 45 item 1):
each renderer prints what its record holds (a changed value in a copy of the record
changes the rendered table), and a key the record lacks is a RecordError naming the
record and the key."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from experiments.figures import figure
from experiments.figures.meloppr import RERUN, RESULTS
from experiments.figures.records import RecordError

ROOT = Path(__file__).resolve().parents[2]
CPU = ("graphs", "cora", "cpu")
SOP = ("synthetic_operating_points",)

#: figure, where a value is changed, the new value, the line the change must show in,
#: and a key that, deleted, the renderer must name
CASES = [
    ("meloppr-exactness", ("exactness", "cora"), 7.77e-15, "| cora | 7.8e-15 |", ("exactness", "pubmed")),
    (
        "meloppr-precision",
        (*CPU, "per_ns", "3", "prec_pprpy"),
        0.4321,
        "| cora | 3 | – | 0.78 | 0.703 | 0.432 |",
        (*CPU, "per_ns", "5", "prec_k"),
    ),
    (
        "meloppr-cpu-baselines",
        ("graphs", "pubmed", "cpu", "baseline_nx_over_scipy_lat"),
        42.04,
        "| pubmed | 100 (5) | 290.53 ms, 11538 KiB | 13.33 ms, 3352 KiB | 42.0x |",
        (*CPU, "baseline_mem_kib"),
    ),
    (
        "meloppr-cpu-ratios",
        ("graphs", "citeseer", "cpu", "per_ns", "13", "speedup_nx"),
        0.777,
        "| citeseer | 13 | 0.19x | 0.78x | 0.22x | 1.51x | 1.15x | 1.25x |",
        (*CPU, "per_ns", "1", "mem_reduction"),
    ),
    (
        "meloppr-fig6",
        ("fig6", "ball", "0.2", "used"),
        12.34,
        "| 20% | 0.961 | 0.675 / 0.828 (46.4) | 0.685 / 0.848 (12.3) | 0.813 / 0.997 (229.3) |",
        ("fig6", "graph"),
    ),
    (
        "meloppr-synthetic-search",
        (*SOP, "graphs", "synthetic-dblp", "search", "40", "13", "prec_pprpy"),
        0.1234,
        "| synthetic-dblp | c = 40 | 0.555 | 0.650 | 0.817 | 0.847 | 0.123 | 0.794 | 0.829 | 0.896 |",
        (*SOP, "settings", "ns_values"),
    ),
    (
        "meloppr-resources",
        ("resources", "8", "bram_pct"),
        12.345,
        "| 8 | 21.8 % | 36.1 % | 22.0 % | 12.3 % |",
        ("resources", "16"),
    ),
    (
        "meloppr-setup",
        ("settings", "synthetic_networkx_seeds"),
        3,
        "| sources | 100 per Planetoid graph (seed 0, without replacement), all of them also with NetworkX except on "
        "pubmed (its first 5: NetworkX MeLoPPR under tracemalloc takes minutes per source there); 4 per synthetic "
        "graph, 3 of them with NetworkX; Fig. 6: 50 per graph, 10 on pubmed |",
        ("settings", "alpha"),
    ),
    (
        "meloppr-commands",
        ("graphs", "cora", "seconds"),
        1077 + 3600,
        "| the reproduction (everything below) | `coexplore reproduce meloppr` | 148 min of graph work (the "
        "per-graph `seconds` in `results.json` sum to 8864 s), plus the co-design study |",
        (*SOP, "graphs", "synthetic-dblp", "unbounded", "seconds"),
    ),
    (
        "meloppr-host-models",
        ("host_models", "numpy", "cpu_ns_per_entry"),
        99.94,
        "| numpy | 62.54 | 9.79 | 99.9 |",
        ("host_models", "networkx"),
    ),
]


def _copy(tmp_path: Path, rel: str = RESULTS) -> tuple[Path, dict[str, Any]]:
    """A tree with both records (the commands table reads the rerun's too); ``rel``'s JSON."""
    for r in (RESULTS, RERUN):
        (tmp_path / r).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / r, tmp_path / r)
    return tmp_path, json.loads((ROOT / rel).read_text())


def _parent(rec: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for k in path[:-1]:
        rec = rec[k]
    return rec


@pytest.mark.parametrize(("name", "path", "value", "line", "_"), CASES, ids=[c[0] for c in CASES])
def test_a_changed_record_value_changes_the_table(name, path, value, line, _, tmp_path):
    root, rec = _copy(tmp_path)
    before = figure(name).render(ROOT)
    assert line not in before
    _parent(rec, path)[path[-1]] = value
    (root / RESULTS).write_text(json.dumps(rec))
    after = figure(name).render(root)
    assert line in after.splitlines(), after
    assert len(after.splitlines()) == len(before.splitlines())


@pytest.mark.parametrize(("name", "_p", "_v", "_l", "missing"), CASES, ids=[c[0] for c in CASES])
def test_a_missing_key_names_the_record_and_the_key(name, _p, _v, _l, missing, tmp_path):
    root, rec = _copy(tmp_path)
    del _parent(rec, missing)[missing[-1]]
    (root / RESULTS).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=rf"^{re.escape(RESULTS)}: no '{re.escape(missing[-1])}' where"):
        figure(name).render(root)


def test_the_search_refuses_a_c_10_row_that_is_not_the_runs(tmp_path):
    """'The c = 10 row repeats the run above's figures exactly' (meloppr.md) is checked."""
    root, rec = _copy(tmp_path)
    rec["graphs"]["synthetic-youtube"]["cpu"]["per_ns"]["8"]["prec_pprpy"] += 0.01
    (root / RESULTS).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"synthetic-youtube: the search at c = 10 differs .* at ns = 8"):
        figure("meloppr-synthetic-search").render(root)


def test_the_tables_are_the_records_own_numbers():
    """Spot checks against the record, recomputed here rather than read off the doc."""
    rec = json.loads((ROOT / RESULTS).read_text())
    prec = figure("meloppr-precision").render(ROOT)
    for g in ("citeseer", "cora", "pubmed"):
        d = rec["graphs"][g]["cpu"]["per_ns"]["13"]
        assert f"| {d['prec_k']:.3f} | {d['prec_pprpy']:.3f} |" in prec
    f6 = rec["fig6"]["residual"]["0.01"]
    assert f"{f6['prec_k']:.3f} / {f6['prec_pprpy']:.3f} ({f6['used']:.1f})" in figure("meloppr-fig6").render(ROOT)
    base = figure("meloppr-cpu-baselines").render(ROOT)
    # the ratio is over the sources NetworkX ran (all of them on citeseer and cora; pubmed's
    # first 5, where the scipy mean of the table is over 100)
    for g in ("citeseer", "cora"):
        gr = rec["graphs"][g]
        assert gr["cpu"]["nx_sources"] == gr["sources"]
        ratio = gr["cpu"]["baseline_nx_lat_ms"] / gr["cpu"]["baseline_lat_ms"]
        assert f"| {ratio:.1f}x |" in next(ln for ln in base.splitlines() if ln.startswith(f"| {g} |"))


def test_the_commands_table_reads_the_reruns_cpu_time_from_its_record(tmp_path):
    root, x = _copy(tmp_path, RERUN)
    x["graphs"]["pubmed"]["cpu_s"] = 99.4
    (root / RERUN).write_text(json.dumps(x))
    assert "citeseer / cora / pubmed 6 / 11 / 99 s" in figure("meloppr-commands").render(root)
    del x["cpu_s"]
    (root / RERUN).write_text(json.dumps(x))
    with pytest.raises(RecordError, match=rf"^{re.escape(RERUN)}: no 'cpu_s' where the commands table"):
        figure("meloppr-commands").render(root)
    root, rec = _copy(tmp_path / "quick")
    rec["settings"]["quick"] = True
    (root / RESULTS).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"settings\.quick is true"):
        figure("meloppr-commands").render(root)


def test_the_settings_table_refuses_source_counts_its_sentence_cannot_say(tmp_path):
    root, rec = _copy(tmp_path)
    rec["graphs"]["cora"]["cpu"]["nx_sources"] = 7  # a second graph with fewer NetworkX sources
    (root / RESULTS).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match="all with NetworkX except one"):
        figure("meloppr-setup").render(root)
    rec["graphs"]["cora"]["cpu"]["nx_sources"] = 100
    rec["graphs"]["pubmed"]["fig6_sources"] = 50
    (root / RESULTS).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"Fig\. 6's source counts"):
        figure("meloppr-setup").render(root)
