"""The inner-feasibility benchmark on one small layer: its exact reference is proven (no node
limit by default), over the space its header states, no search beats it, and the
infeasible counts are consistent."""

from __future__ import annotations

import json

from experiments.proof_scopes import PREFIX
from experiments.search_quality import inner_feasibility as bench


def test_reference_is_proven_and_no_search_beats_it(tmp_path, capsys):
    res = bench.main(["--layers", "dqn:conv3", "--searches", "random", "--seeds", "1", "--budget", "8",
                      "--out", str(tmp_path)])
    # issue 45 item 3: the header states what "optimal" covers, before the rows; the
    # accounting and constraints by name, as computed for the reference's mapper
    out = capsys.readouterr().out.splitlines()
    scope = f"{PREFIX}: edp over divisor tilings, coexplore accounting, bypass searched, no constraints;"
    assert out[1].startswith(scope) and out[2].startswith("dqn:conv3: exact EDP")
    assert bench.announced_scopes(["--layers", "dqn:conv3"]).lines() == [out[1]]
    assert [(s["accounting"], s["constraints"], s["applies_to"]) for s in res["scopes"]] == \
        [("coexplore", None, ["dqn:conv3"])]
    row = res["layers"]["dqn:conv3"]
    assert row["exact_optimal"]
    s = res["summary"]["random"]
    assert s["median_ratio_to_exact"] >= 1 - 1e-9
    assert 0 <= s["infeasible_share"] <= 1
    assert json.loads((tmp_path / "inner_feasibility.json").read_text())["layers"]["dqn:conv3"]["exact_edp"] == \
        row["exact_edp"]
    # a node limit stops the reference the same way on any machine
    limited = bench.run(["dqn:conv3"], ["random"], 1, 8, exact_max_nodes=1)
    assert not limited["layers"]["dqn:conv3"]["exact_optimal"]
    assert limited["layers"]["dqn:conv3"]["exact_edp"] >= row["exact_edp"] * (1 - 1e-9)
