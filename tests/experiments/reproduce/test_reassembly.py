"""Reassembly is exact (issue 45 item 4): each reproduction's committed ``table.md`` is
rebuilt from its committed ``results.json`` by the reproduction's own ``write_table`` and
equals the committed file byte for byte, so a table cannot drift from its records.

The one input a table takes that the record does not hold is the command string the run
was started with (printed in the table; it is no figure); each case below names it. Shi
et al.'s main table is rebuilt by ``--reuse`` from its records, with every search and
re-map disabled, in ``test_reproduce_shi2020.py``
(``test_the_committed_records_reassemble_the_committed_table_byte_for_byte``); the
meta-test at the end checks that every committed ``table.md`` is covered by one of the two.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.reproduce import d2nn, hasco, meloppr
from experiments.search_quality import hasco_sw_search

RESULTS = Path(__file__).resolve().parents[3] / "docs" / "reproduction" / "results"

SW_PAIRS = ("gemm:GEMM gemm:GEMV gemv:GEMV conv2d:CONV conv2d:GEMM conv2d:GEMV depthwise:DOT depthwise:GEMV "
            "mttkrp:GEMV ttm:GEMM ttm:GEMV resnet50:GEMM resnet50:CONV mobilenet_v2:GEMM mobilenet_v2:CONV "
            "xception:GEMM xception:CONV")
SW = "python -m experiments.search_quality.hasco_sw_search"

WRITE_TABLE = {
    # results directory: (the reproduction's write_table, how it reads results.json, the run's command)
    "d2nn": (d2nn.write_table, None, "coexplore reproduce d2nn"),
    "d2nn_epochs4": (d2nn.write_table, None, "coexplore reproduce d2nn --epochs 4"),
    "hasco": (hasco.write_table, None, "coexplore reproduce hasco --seeds 10 --workers 1 --out runs/reproduce/hasco-full"),
    "meloppr": (meloppr.write_table, meloppr.load_results, "coexplore reproduce meloppr"),
}

SW_SEARCH = {
    "hasco-sw-search": f"{SW} --seeds 3 --budget 150 --out runs/benchmarks/hasco_sw_search_nodes --pairs {SW_PAIRS}",
    "hasco-sw-search/seeds-3-5": f"{SW} --seeds 3 --first-seed 3 --budget 150 --out "
                                 f"runs/benchmarks/hasco_sw_search_nodes_s3-5 --pairs {SW_PAIRS}",
    "hasco-sw-search/seeds-6-15": f"{SW} --seeds 10 --first-seed 6 --budget 150 --out "
                                  "runs/benchmarks/hasco_sw_search_nodes_s6-15",
}

#: rebuilt by their own reproduction's tests: shi2020 through --reuse (test_reproduce_shi2020.py),
#: the HASCO enumeration through its write_table (test_reproduce_hasco_enumerate.py)
REUSE_TESTED = {"shi2020", "hasco-enumerate"}

NOT_REASSEMBLED = {
    # The steps-only run predates the current table (no infeasible-proposals column, no
    # wall/CPU time line) and its records do not cover every step under the current
    # settings: `shi2020 --steps-only --reuse ... --cache-from results/shi2020/records`
    # recomputes the baseline figures (DQN's, the first workload). It needs a rerun, not a
    # test that pins the stale file.
    "shi2020-steps",
}


@pytest.mark.parametrize("name", sorted(WRITE_TABLE))
def test_a_reproductions_table_is_its_records_byte_for_byte(name, tmp_path):
    write_table, load, cmd = WRITE_TABLE[name]
    root = RESULTS / name
    res = load(root / "results.json") if load else json.loads((root / "results.json").read_text())
    write_table(res, tmp_path / "table.md", cmd)
    assert (tmp_path / "table.md").read_bytes() == (root / "table.md").read_bytes(), (
        f"{root / 'table.md'} is not what its results.json gives: rerun the reproduction or its write_table")


@pytest.mark.parametrize("name", sorted(SW_SEARCH))
def test_hascos_software_search_tables_are_their_records_byte_for_byte(name):
    root = RESULTS / name
    r = json.loads((root / "results.json").read_text())
    s = r["settings"]
    text = hasco_sw_search.table(r["pairs"], r["summary"], s["budget"], s["seeds"], SW_SEARCH[name])
    assert text.encode() == (root / "table.md").read_bytes()


def test_a_changed_record_changes_the_table(tmp_path):
    """The comparison can fail: one figure changed in the record is a different table."""
    root = RESULTS / "hasco"
    res = json.loads((root / "results.json").read_text())
    first = res["pairs"][0]
    key = next(k for k, v in first.items() if isinstance(v, dict) and "median" in v)
    first[key]["median"] *= 1.5
    hasco.write_table(res, tmp_path / "table.md", WRITE_TABLE["hasco"][2])
    assert (tmp_path / "table.md").read_bytes() != (root / "table.md").read_bytes()


def test_every_committed_table_is_reassembled_by_a_test():
    tables = {str(p.parent.relative_to(RESULTS)) for p in RESULTS.rglob("table.md")}
    covered = set(WRITE_TABLE) | set(SW_SEARCH) | REUSE_TESTED
    assert tables - covered - NOT_REASSEMBLED == set(), "a committed table.md no test rebuilds from its records"
    assert NOT_REASSEMBLED <= tables and not (NOT_REASSEMBLED & covered)
