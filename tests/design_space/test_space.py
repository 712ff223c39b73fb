"""DesignSpace: sampling under constraints, validation, codec, grid, cardinality, neighbours."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from design_space import (
    Categorical,
    Constraint,
    DesignSpace,
    Fixed,
    Integer,
    Ordinal,
    Permutation,
    PowerOfTwo,
    Real,
    SpaceDefinitionError,
    UnsatisfiableSpaceError,
)


def hw_space(budget: int = 4096) -> DesignSpace:
    return DesignSpace(
        PowerOfTwo("rows", 8, 256),
        PowerOfTwo("cols", 8, 256),
        Categorical("dataflow", ["OS", "WS", "IS"]),
        Ordinal("sram_kib", [64, 128, 256, 512, 1024]),
        constraints=[Constraint("pe_budget", lambda p: p["rows"] * p["cols"] <= budget)],
    )


def conditional_space() -> DesignSpace:
    return DesignSpace(
        Categorical("arch", ["systolic", "spatial"]),
        PowerOfTwo("rows", 4, 32, active_if={"arch": "systolic"}),
        Integer("pes", 1, 6, active_if={"arch": ["spatial"]}),
        Ordinal("rf_bytes", [16, 32, 64], active_if={"pes": [4, 5, 6]}),  # chained condition
        Permutation("order", ["K", "C", "P"]),
        Fixed("bits", 16),
        constraints=[Constraint("small", "arch != 'systolic' or rows <= 16")],
    )


def brute_force(space: DesignSpace) -> list[dict]:
    """Enumerate a (small) space by itertools.product over all parameters."""
    out, seen = [], set()
    for combo in itertools.product(*(p.grid_values() for p in space.params)):
        pt = dict(zip(space.names, combo))
        pt = space._repair_activity(pt)
        key = space.point_key(pt)
        if key in seen:
            continue
        seen.add(key)
        if not space.validate(pt):
            out.append(pt)
    return out


def test_duplicate_names_rejected():
    with pytest.raises(SpaceDefinitionError, match=r"duplicate parameter names \['a'\]"):
        DesignSpace(Integer("a", 0, 1), Real("a", 0, 1))
    with pytest.raises(SpaceDefinitionError, match=r"duplicate constraint names \['c'\]"):
        DesignSpace(Integer("a", 0, 1), constraints=[Constraint("c", "a > 0"), Constraint("c", "a < 1")])


def test_constraint_expression_with_unknown_parameter_rejected():
    with pytest.raises(SpaceDefinitionError, match=r"constraint 'c' refers to unknown parameter\(s\) \['rowz'\]"):
        DesignSpace(Integer("rows", 1, 4), constraints=[Constraint("c", "rowz <= 3")])


def test_bad_conditions_rejected():
    with pytest.raises(SpaceDefinitionError, match="unknown parameter 'nope'"):
        DesignSpace(Integer("a", 0, 1, active_if={"nope": 1}))
    with pytest.raises(SpaceDefinitionError, match="'x' is not a value of 'arch'"):
        DesignSpace(Categorical("arch", ["a", "b"]), Integer("n", 0, 1, active_if={"arch": "x"}))
    with pytest.raises(SpaceDefinitionError, match="must be discrete"):
        DesignSpace(Real("r", 0, 1), Integer("n", 0, 1, active_if={"r": 0.5}))
    with pytest.raises(SpaceDefinitionError, match="cycle"):
        DesignSpace(Integer("a", 0, 1, active_if={"b": 1}), Integer("b", 0, 1, active_if={"a": 1}))


@settings(max_examples=40, deadline=None)
@given(st.integers(64, 65536), st.integers(0, 2**31))
def test_sampled_points_always_satisfy_constraints(budget, seed):
    space = hw_space(budget)
    pts = space.sample(200, seed=seed)
    assert len(pts) == 200
    for p in pts:
        assert p["rows"] * p["cols"] <= budget
        assert space.validate(p) == []


def test_sample_is_reproducible_and_vectorized_scale():
    space = hw_space()
    assert space.sample(50, seed=3) == space.sample(50, seed=3)
    assert space.sample(50, seed=3) != space.sample(50, seed=4)
    big = space.sample(100_000, seed=0)
    assert len(big) == 100_000
    arr = np.array([[p["rows"], p["cols"]] for p in big])
    assert (arr.prod(axis=1) <= 4096).all()


def test_unsatisfiable_names_the_worst_constraint():
    space = DesignSpace(
        Integer("a", 0, 100),
        Integer("b", 0, 100),
        constraints=[Constraint("mild", "a >= 5"), Constraint("impossible", "a + b > 1000")],
    )
    with pytest.raises(UnsatisfiableSpaceError) as e:
        space.sample(3, seed=0, max_draws=5000)
    assert "constraint 'impossible' rejects the most samples" in str(e.value)
    assert e.value.rejections["impossible"] == 5000
    assert 0 < e.value.rejections["mild"] < 5000


def test_validate_reports_every_violation_by_name():
    space = conditional_space()
    v = space.validate({"arch": "systolic", "rows": 3, "pes": 2, "order": ("K", "C", "P"), "bits": 16, "extra": 1})
    kinds = {(x.kind, x.name) for x in v}
    assert ("unknown_parameter", "extra") in kinds
    assert ("out_of_range", "rows") in kinds
    assert ("inactive_parameter", "pes") in kinds
    v = space.validate({"arch": "spatial", "pes": 5, "order": ("K", "C", "P"), "bits": 16})
    assert [(x.kind, x.name) for x in v] == [("missing_parameter", "rf_bytes")]
    v = space.validate({"arch": "systolic", "rows": 32, "order": ("K", "C", "P"), "bits": 16})
    assert [(x.kind, x.name) for x in v] == [("constraint", "small")]
    assert "constraint 'small' violated" in str(v[0])
    assert space.validate({"arch": "systolic", "rows": 16, "order": ["P", "C", "K"], "bits": 16}) == []


def test_conditional_sampling_and_encoding():
    space = conditional_space()
    pts = space.sample(2000, seed=0)
    for p in pts:
        assert space.validate(p) == []
        assert ("rows" in p) == (p["arch"] == "systolic")
        assert ("pes" in p) == (p["arch"] == "spatial")
        assert ("rf_bytes" in p) == (p.get("pes", 0) >= 4)
    x = space.encode(pts)
    assert x.shape == (2000, space.dim)
    groups = {g.name: g.columns for g in space.encoding()}
    inactive_rows = np.array(["rows" not in p for p in pts])
    assert np.all(x[inactive_rows][:, groups["rows"]] == 0)  # documented fixed encoding
    assert space.decode(x) == [space.normalize(p) for p in pts]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31))
def test_decode_of_any_array_gives_legal_points(seed):
    space = conditional_space()
    x = np.random.default_rng(seed).random((64, space.dim))
    for p in space.decode(x):
        assert space.validate(p, constraints=False) == []


def test_round_trip_every_kind_in_one_space():
    space = DesignSpace(
        Integer("i", -5, 5), Integer("il", 1, 4096, log=True), Real("r", -1.0, 2.0),
        Real("rl", 1e-3, 1e3, log=True), PowerOfTwo("p2", 1, 1024), Ordinal("o", ["lo", "mid", "hi"]),
        Categorical("c", [1, "two", 3.5, True]), Permutation("perm", ["K", "C", "P", "Q", "R"]),
        Fixed("f", "const"),
    )
    pts = space.sample(500, seed=1)
    back = space.decode(space.encode(pts))
    for a, b in zip(pts, back):
        for k in a:
            if k in ("r", "rl"):
                assert b[k] == pytest.approx(a[k], rel=1e-12, abs=1e-12)
            else:
                assert type(b[k]) is type(a[k]) and b[k] == a[k], k


def test_encode_rejects_points_outside_the_space():
    with pytest.raises(ValueError, match="point 0 is not in the space: parameter 'rows'"):
        hw_space().encode([{"rows": 7, "cols": 8, "dataflow": "OS", "sram_kib": 64}])


@pytest.mark.parametrize("factory", [hw_space, conditional_space, lambda: DesignSpace(
    Integer("a", 0, 3), Ordinal("b", [1, 2, 4]), Categorical("c", ["x", "y"]),
    constraints=[Constraint("s", "a * b <= 6"), Constraint("t", lambda p: (p["c"] == "x") | (p["a"] > 1))])])
def test_grid_equals_brute_force_and_cardinality(factory):
    space = factory()
    grid = list(space.grid())
    brute = brute_force(space)
    assert len(grid) == space.cardinality() == len(brute)
    assert {space.point_key(p) for p in grid} == {space.point_key(p) for p in brute}
    assert len({space.point_key(p) for p in grid}) == len(grid)  # each point once


def test_grid_chunks_do_not_change_order():
    space = conditional_space()
    assert list(space.grid(chunk=3)) == list(space.grid())


def test_cardinality_unconstrained_is_combinatorial_and_exact():
    space = DesignSpace(*(Integer(f"x{i}", 0, 99) for i in range(12)))
    assert space.cardinality() == 100**12  # no enumeration needed
    assert conditional_space().cardinality(constrained=False) == 6 * (4 + 3 + 3 * 3)
    assert DesignSpace(Real("r", 0, 1)).cardinality() == float("inf")
    with pytest.raises(ValueError, match="max_enumerate"):
        DesignSpace(*(Integer(f"x{i}", 0, 99) for i in range(5)),
                    constraints=[Constraint("c", "x0 > 1")]).cardinality()


def test_neighbors_are_feasible_one_move_and_handle_conditions():
    space = conditional_space()
    p = {"arch": "spatial", "pes": 3, "order": ("K", "C", "P"), "bits": 16}
    nb = space.neighbors(p)
    keys = {space.point_key(n) for n in nb}
    assert space.point_key({"arch": "spatial", "pes": 4, "rf_bytes": 16, "order": ("K", "C", "P"), "bits": 16}) in keys
    assert space.point_key({"arch": "systolic", "rows": 4, "order": ("K", "C", "P"), "bits": 16}) in keys
    for n in nb:
        assert space.validate(n) == []
        changed = [k for k in set(n) | set(p) if n.get(k) != p.get(k)]
        assert 1 <= len(changed) <= 3  # one move (+ activated / deactivated children)
    # neighbours of an infeasible (but legal) point, useful for repair
    bad = {"arch": "systolic", "rows": 32, "order": ("K", "C", "P"), "bits": 16}
    assert any(n.get("rows") == 16 for n in space.neighbors(bad))


def test_constraint_errors_name_the_constraint():
    space = DesignSpace(Integer("a", 0, 3), constraints=[Constraint("boom", lambda p: p["nope"] > 1)])
    with pytest.raises(SpaceDefinitionError, match="constraint 'boom': unknown parameter 'nope'"):
        space.sample(2, seed=0)
    space = DesignSpace(Integer("a", 0, 3), constraints=[Constraint("shape", lambda p: np.ones(3, bool))])
    with pytest.raises(SpaceDefinitionError, match="constraint 'shape' returned shape"):
        space.sample(5, seed=0)
    with pytest.raises(SpaceDefinitionError, match="is not allowed"):
        Constraint("evil", "__import__('os').system('true')")


def test_expression_constraints_match_lambdas():
    expr = DesignSpace(PowerOfTwo("r", 1, 64), PowerOfTwo("c", 1, 64), Categorical("d", ["OS", "WS"]),
                       constraints=[Constraint("e", "log2(r) + log2(c) <= 8 and (d == 'OS' or max(r, c) >= 16) and d in ('OS', 'WS') and 1 < r <= 32")])
    lam = DesignSpace(PowerOfTwo("r", 1, 64), PowerOfTwo("c", 1, 64), Categorical("d", ["OS", "WS"]),
                      constraints=[Constraint("e", lambda p: (np.log2(p["r"]) + np.log2(p["c"]) <= 8)
                                              & ((p["d"] == "OS") | (np.maximum(p["r"], p["c"]) >= 16))
                                              & (p["r"] > 1) & (p["r"] <= 32))])
    assert list(expr.grid()) == list(lam.grid())
    assert 0 < expr.cardinality() < 7 * 7 * 2


def test_neighbors_repair_moves_that_violate_a_constraint():
    """A move of ``a`` that breaks ``a * b <= 16`` is kept when the repair function makes
    it feasible (here by shrinking ``b``), and dropped without a repair function."""
    def params():
        return PowerOfTwo("a", 1, 16), PowerOfTwo("b", 1, 16), Categorical("c", ["x", "y"])

    cons = [Constraint("budget", "a * b <= 16")]
    plain = DesignSpace(*params(), constraints=cons)

    def repair(points):
        return [None if p["c"] == "y" else dict(p, b=max(1, 16 // p["a"])) for p in points]

    fixing = DesignSpace(*params(), constraints=cons, repair=repair)
    base = {"a": 4, "b": 4, "c": "x"}
    before = {(p["a"], p["b"], p["c"]) for p in plain.neighbors(base)}
    after = {(p["a"], p["b"], p["c"]) for p in fixing.neighbors(base)}
    assert (8, 4, "x") not in before and (8, 2, "x") in after
    assert after - before == {(8, 2, "x")}  # only the violating move was repaired
    assert all(fixing.validate(dict(zip("abc", t))) == [] for t in after)
    # a repair that returns None (or an infeasible point) drops the move
    assert {(p["a"], p["b"]) for p in fixing.neighbors({"a": 4, "b": 4, "c": "y"})} == \
        {(p["a"], p["b"]) for p in plain.neighbors({"a": 4, "b": 4, "c": "y"})}
    with pytest.raises(SpaceDefinitionError, match="custom repair function and cannot be saved"):
        fixing.to_dict()
