"""mappers.ppr_plan: the MeLoPPR plan space and the FPGA x plan co-design space."""

from __future__ import annotations

import numpy as np
import pytest

from accelerators.ppr_fpga import ASSIGNMENTS, PPRFpgaEngine, fits_kc705
from mappers.ppr_plan import MeLoPPRPlan, codesign_space, hardware_space, plan_space


def test_plan_space_points_are_valid_plans():
    sp = plan_space(L=6)
    pts = sp.sample(200, seed=0)
    modes = set()
    for p in pts:
        plan = MeLoPPRPlan.from_point(p)
        assert plan.l1 + plan.l2 == 6 and 1 <= plan.l1 <= 5
        modes.add(p["ns_mode"])
        if p["ns_mode"] == "count":
            assert "ns_fraction" not in p and isinstance(plan.next_stage, int)
            assert 1 <= plan.next_stage <= 32
        else:
            assert "ns_count" not in p and isinstance(plan.next_stage, float)
            assert 0.01 <= plan.next_stage <= 1
        assert plan.k == 200 and plan.pe_assignment in ASSIGNMENTS
    assert modes == {"count", "fraction"}
    assert {p["l1"] for p in pts} == {1, 2, 3, 4, 5}
    # the paper's plan is in the space
    paper = {"L": 6, "l1": 3, "ns_mode": "count", "ns_count": 13, "c": 10, "k": 200,
             "pe_assignment": "split"}
    assert sp.validate(paper) == []


def test_plan_options_and_errors():
    sp = plan_space(L=4, k_values=(50, 200), c_values=(10,), assignments=("split",))
    assert sp["k"].__class__.__name__ == "Ordinal"
    assert sp["c"].__class__.__name__ == "Fixed" and sp["pe_assignment"].value == "split"
    assert sp["l1"].high == 3
    with pytest.raises(ValueError, match="L"):
        plan_space(L=1)
    with pytest.raises(ValueError, match="assignments"):
        plan_space(assignments=("striped",))
    with pytest.raises(ValueError, match="max_next_stage"):
        plan_space(max_next_stage=1)


@pytest.mark.parametrize(("kw", "name"), [
    ({"l1": 0}, "l1"), ({"l1": 6}, "l1"), ({"L": 1, "l1": 1}, "L"), ({"next_stage": -1}, "next_stage"),
    ({"next_stage": 1.5}, "next_stage"), ({"next_stage": True}, "next_stage"), ({"c": 0}, "c"),
    ({"k": 0}, "k"), ({"pe_assignment": "any"}, "pe_assignment"),
])
def test_plan_validation_names_the_field(kw, name):
    with pytest.raises(ValueError, match=name):
        MeLoPPRPlan(**kw)


def test_from_point_and_key():
    p = MeLoPPRPlan.from_point({"l1": 2, "ns_mode": "fraction", "ns_fraction": 0.05, "c": 4,
                                "k": 100, "pe_assignment": "least_loaded", "n_pes": 8})
    assert (p.l1, p.l2, p.next_stage, p.table_entries) == (2, 4, 0.05, 400)
    q = MeLoPPRPlan.from_point({"l1": 2, "ns_mode": "fraction", "ns_fraction": 0.05, "c": 4,
                                "k": 100, "pe_assignment": "split"})
    assert p.key() == q.key() and p != q  # placement does not change the software result
    assert MeLoPPRPlan.from_point({"ns_count": 5}).next_stage == 5
    with pytest.raises(ValueError, match="ns_mode"):
        MeLoPPRPlan.from_point({"ns_mode": "all"})


def test_codesign_space_respects_the_device():
    sp = codesign_space()
    pts = sp.sample(300, seed=1)
    cols = sp.columns(pts)
    assert np.all(fits_kc705(cols))
    for p in pts[:50]:
        assert PPRFpgaEngine.from_point(p).fits_device()
    assert max(p["n_pes"] for p in pts) == 16  # 32 PEs never fit the XC7K325T
    bad = dict(pts[0], n_pes=32)
    assert [v.name for v in sp.validate(bad)] == ["kc705_resources"]
    hw = hardware_space()
    assert set(hw.names) == {"n_pes", "bram_words_per_table", "int_bits", "clock_mhz"}
    assert set(sp.names) == set(hw.names) | set(plan_space().names)
