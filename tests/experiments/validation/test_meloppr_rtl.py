"""experiments.validation.meloppr_rtl: the tables it builds, its no-RTL path, and (slow,
only with a checkout of github.com/sharc-lab/MeLoPPR in $MELOPPR_RTL_DIR and iverilog)
two small cases re-simulated against the committed records."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from experiments.validation import meloppr_rtl as m

DATA = Path(__file__).resolve().parents[3] / "docs" / "validation" / "meloppr_rtl.json"


def test_tables_follow_the_authors_toy_layout():
    """The authors' toy (input_bram_table_testbench/): 4 nodes on 2 PEs; PE 1's sub-graph
    table is `4 6 7 8 2 3 4 1 3` (first/last neighbour address per node, then the lists of
    1-based global ids)."""
    case = m.Case("toy-dual", "toy", 0, 4, "dual", 100)
    adj, _ = m.case_adjacency(case)
    tables = m.build_tables(adj, 2, 2, seed=0, seed_score=1000)
    assert tables[0][1] == [4, 6, 7, 8, 2, 3, 4, 1, 3]
    assert tables[1][1] == [4, 6, 7, 8, 1, 2, 4, 1, 3]
    assert tables[0][0] == [1000, 0, 0, 0] and tables[1][0] == [0, 0, 0, 0]


def test_partition_and_bfs_order():
    assert m.partition(2708, 4, False) == (677, 677)
    assert m.partition(2708, 8, True) == (339, 335)  # the octa testbench's own numbers
    assert m.partition(2708, 16, True) == (170, 158)  # and the hex testbench's
    with pytest.raises(ValueError, match="evenly"):
        m.partition(10, 4, False)
    from evaluators.ppr import load_graph
    from evaluators.ppr.graph import bfs_ball

    g = load_graph("cora")
    order = m.bfs_order(g.adj, 5, 40)
    ball = bfs_ball(g, 5, 6)
    assert np.array_equal(order, ball[:40])  # the same order as bfs_ball


def test_integer_residual_is_the_floor_walk():
    import scipy.sparse as sp

    a = sp.csr_array(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=float))
    r = m.integer_residual(a, np.array([7, 0, 0]), 1)
    assert list(r) == [0, 3, 3]  # floor(7 / 2) to each neighbour; 1 unit lost to rounding


def test_without_rtl_it_says_so(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv(m.RTL_ENV, raising=False)
    assert m.main(["--json", str(tmp_path / "x.json")]) == 0
    assert "MeLoPPR RTL not available" in capsys.readouterr().out
    assert not (tmp_path / "x.json").exists()
    with pytest.raises(FileNotFoundError, match="rtl_dir"):
        m.rtl_dir_from(str(tmp_path))


def test_md_is_regenerated_from_the_committed_json(tmp_path):
    out = tmp_path / "t.md"
    synth = DATA.with_name("meloppr_rtl_synth.json")
    assert (
        m.main(["--md-only", "--json", str(DATA), "--synth-json", str(synth), "--md", str(out)])
        == 0
    )
    text = out.read_text()
    assert "| toy-dual | dual | 4 |" in text and "13,200" not in text  # per step: 132
    assert "| toy-dual | dual | 4 | 10 | 100 | 132 | 132 | 1.0000 |" in text


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get(m.RTL_ENV) or shutil.which("iverilog") is None,
    reason=f"needs ${m.RTL_ENV} (a checkout of {m.RTL_REPO}) and iverilog",
)
@pytest.mark.parametrize("name", ["toy-dual", "cora32-quad"])
def test_rtl_resimulated_matches_the_committed_record(name):
    rtl = m.rtl_dir_from(None)
    case = next(c for c in m.default_cases() if c.name == name)
    rec = m.run_case(case, rtl)
    committed = next(r for r in json.loads(DATA.read_text())["cases"] if r["name"] == name)
    for key in ("cycles", "step_cycles", "rtl_scores", "rtl_mass", "ref_mass", "bit_exact"):
        assert rec[key] == committed[key], key
    assert rec["fix_counts"]["0'b0"] == 4
