"""Parameter kinds: definition errors, encode/decode round trips, sampling, neighbours."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from design_space import (
    Categorical,
    Fixed,
    Integer,
    Ordinal,
    Permutation,
    PowerOfTwo,
    Real,
    SpaceDefinitionError,
)


@pytest.mark.parametrize(
    ("factory", "field", "fragment"),
    [
        (lambda: Integer("x", 5, 2), "low", "low (5) > high (2)"),
        (lambda: Real("x", 1.0, 0.5), "low", "low (1) > high (0.5)"),
        (lambda: Integer("x", 0, 10, log=True), "low", "log scale needs low >= 1"),
        (lambda: Real("x", 0.0, 1.0, log=True), "low", "log scale needs low > 0"),
        (lambda: PowerOfTwo("x", 3, 16), "low", "power of two"),
        (lambda: PowerOfTwo("x", 16, 8), "low", "low (16) > high (8)"),
        (lambda: Ordinal("x", []), "values", "values is empty"),
        (lambda: Categorical("x", []), "choices", "choices is empty"),
        (lambda: Categorical("x", ["a", "a"]), "choices", "duplicate value 'a'"),
        (lambda: Ordinal("x", [1, 1.0]), "values", "duplicate value"),
        (lambda: Permutation("x", ["i", "j", "i"]), "items", "duplicate value 'i'"),
        (lambda: Integer("x", 0.5, 3), "low", "must be an integer"),
        (lambda: Real("x", 0.0, math.inf), "high", "finite number"),
        (lambda: Categorical("x", "abc"), "choices", "must be a list"),
    ],
)
def test_definition_errors_name_parameter_and_field(factory, field, fragment):
    with pytest.raises(SpaceDefinitionError) as e:
        factory()
    assert "'x'" in str(e.value)
    assert fragment in str(e.value)
    assert e.value.field == field


def test_empty_or_blank_name_rejected():
    with pytest.raises(SpaceDefinitionError, match="non-empty string"):
        Integer("", 0, 1)
    with pytest.raises(SpaceDefinitionError, match="whitespace"):
        Integer(" x", 0, 1)


# -- hypothesis strategies producing (parameter, list of legal values) ------------------------

scalars = st.one_of(
    st.integers(-1000, 1000),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.text(min_size=1, max_size=5),
    st.booleans(),
)


def _distinct(values):
    out = []
    for v in values:
        if not any(type(v) is type(w) and v == w for w in out) and not any(
            isinstance(v, int | float) and not isinstance(v, bool)
            and isinstance(w, int | float) and not isinstance(w, bool) and v == w
            for w in out
        ):
            out.append(v)
    return out


@st.composite
def param_and_values(draw):
    kind = draw(st.sampled_from(["int", "intlog", "real", "reallog", "pow2", "ord", "cat", "perm", "fixed"]))
    if kind in ("int", "intlog"):
        lo = draw(st.integers(1 if kind == "intlog" else -10_000, 10_000))
        hi = draw(st.integers(lo, lo + 10_000))
        p = Integer("p", lo, hi, log=kind == "intlog")
        vals = draw(st.lists(st.integers(lo, hi), min_size=1, max_size=20))
    elif kind in ("real", "reallog"):
        lo = draw(st.floats(1e-6 if kind == "reallog" else -1e6, 1e6))
        hi = draw(st.floats(lo, abs(lo) * 10 + 1e6))
        p = Real("p", lo, hi, log=kind == "reallog")
        vals = draw(st.lists(st.floats(lo, hi), min_size=1, max_size=20))
    elif kind == "pow2":
        klo = draw(st.integers(0, 20))
        khi = draw(st.integers(klo, 30))
        p = PowerOfTwo("p", 2**klo, 2**khi)
        vals = [2**k for k in draw(st.lists(st.integers(klo, khi), min_size=1, max_size=20))]
    elif kind in ("ord", "cat", "perm"):
        choices = _distinct(draw(st.lists(scalars, min_size=1, max_size=7)))
        if kind == "ord":
            p = Ordinal("p", choices)
            vals = draw(st.lists(st.sampled_from(choices), min_size=1, max_size=20))
        elif kind == "cat":
            p = Categorical("p", choices)
            vals = draw(st.lists(st.sampled_from(choices), min_size=1, max_size=20))
        else:
            p = Permutation("p", choices)
            vals = [tuple(draw(st.permutations(choices))) for _ in range(draw(st.integers(1, 8)))]
    else:
        v = draw(scalars)
        p = Fixed("p", v)
        vals = [v] * draw(st.integers(1, 5))
    return p, vals


def _array(p, vals):
    from design_space import DesignSpace

    return DesignSpace(p).columns([{p.name: p.normalize(v)} for v in vals], check=False)[p.name]


@settings(max_examples=300, deadline=None)
@given(param_and_values())
def test_encode_decode_round_trip_every_kind(pv):
    p, vals = pv
    x = p.encode(_array(p, vals))
    assert x.shape == (len(vals), p.width)
    assert np.all((x >= 0) & (x <= 1))
    back = p.decode(x).tolist()
    for v, b in zip(vals, back):
        if isinstance(p, Real):
            assert b == pytest.approx(v, rel=1e-12, abs=1e-12 * (p.high - p.low + 1))
        elif isinstance(p, Permutation):
            assert tuple(b) == tuple(v)
        else:
            assert type(p.normalize(b)) is type(p.normalize(v)) and p.normalize(b) == p.normalize(v)


@settings(max_examples=200, deadline=None)
@given(param_and_values(), st.integers(0, 2**32 - 1))
def test_samples_are_legal_and_decode_of_any_point_is_legal(pv, seed):
    p, _ = pv
    rng = np.random.default_rng(seed)
    for v in p.sample(rng, 50).tolist():
        assert p.check(tuple(v) if isinstance(p, Permutation) else v) is None
    x = rng.random((50, p.width))
    for v in p.decode(x).tolist():
        assert p.check(tuple(v) if isinstance(p, Permutation) else v) is None


def test_categorical_is_one_hot_and_decodes_by_argmax():
    p = Categorical("df", ["OS", "WS", "IS"])
    x = p.encode(np.array(["WS", "IS"]))
    assert x.tolist() == [[0, 1, 0], [0, 0, 1]]
    assert p.decode(np.array([[0.2, 0.1, 0.7], [0.5, 0.5, 0.0]])).tolist() == ["IS", "OS"]


def test_permutation_encoding_is_pairwise_precedence_and_hamming_is_kendall_tau():
    p = Permutation("order", ["K", "C", "P", "Q"])
    perms = list(itertools.permutations(p.items))
    enc = p.encode(np.array([*perms, None], dtype=object)[:-1])
    assert enc.shape == (24, 6)
    # ("K","C","P","Q") precedes in every pair
    assert enc[0].tolist() == [1.0] * 6

    def kendall(a, b):
        pos_b = {v: i for i, v in enumerate(b)}
        return sum(1 for i, j in itertools.combinations(range(len(a)), 2) if pos_b[a[i]] > pos_b[a[j]])

    for i, j in itertools.combinations(range(24), 2):
        assert np.abs(enc[i] - enc[j]).sum() == kendall(perms[i], perms[j])


def test_integer_log_sampling_covers_range_log_uniformly():
    p = Integer("n", 1, 1024, log=True)
    s = p.sample(np.random.default_rng(0), 20000)
    assert s.min() >= 1 and s.max() <= 1024
    # log-uniform: about as many draws in [1, 32) as in [32, 1024]
    frac = np.mean(s < 32)
    assert 0.45 < frac < 0.55


def test_pow2_sampling_uniform_over_exponents():
    p = PowerOfTwo("r", 8, 256)
    s = p.sample(np.random.default_rng(1), 6000)
    counts = {int(v): int((s == v).sum()) for v in p.grid_values()}
    assert set(counts) == {8, 16, 32, 64, 128, 256}
    assert min(counts.values()) > 850


@pytest.mark.parametrize(
    ("param", "value", "expected"),
    [
        (Integer("x", 0, 5), 0, [1]),
        (Integer("x", 0, 5), 3, [2, 4]),
        (PowerOfTwo("x", 8, 64), 8, [16]),
        (PowerOfTwo("x", 8, 64), 16, [8, 32]),
        (Ordinal("x", [64, 128, 256]), 128, [64, 256]),
        (Categorical("x", ["a", "b", "c"]), "b", ["a", "c"]),
        (Permutation("x", ["i", "j", "k"]), ("i", "j", "k"), [("j", "i", "k"), ("i", "k", "j")]),
        (Fixed("x", 3), 3, []),
    ],
)
def test_neighbors(param, value, expected):
    assert param.neighbors(value) == expected


def test_check_messages():
    assert "out of range [0, 5]" in Integer("x", 0, 5).check(7)
    assert "expected an integer" in Integer("x", 0, 5).check("3")
    assert "expected an integer" in Integer("x", 0, 5).check(True)
    assert Integer("x", 0, 5).check(3.0) is None
    assert "not one of" in Categorical("x", ["a"]).check("b")
    assert "not a permutation" in Permutation("x", ["a", "b"]).check(["a", "a"])
    assert "fixed to 3" in Fixed("x", 3).check(4)
    # type-aware: True is not the choice 1
    assert Categorical("x", [1, 2]).check(True) is not None
    assert Categorical("x", [1, True]).normalize(True) is True


def test_log_real_range_narrower_than_float_resolution_encodes_in_unit_box():
    # log(low) == log(high) in float64 although low < high: must not divide by zero
    p = Real("p", 67979.43686397932, 67979.43686397934, log=True)
    x = p.encode(np.array([67979.43686397932, 67979.43686397934]))
    assert np.all((x >= 0) & (x <= 1))
    assert p.decode(x).tolist() == pytest.approx([67979.43686397932] * 2, rel=1e-15)
