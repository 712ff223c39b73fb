"""JointSpace: hardware-conditioned software spaces, flattened view."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from design_space import (
    Categorical,
    DesignSpace,
    Integer,
    JointSpace,
    Ordinal,
    SpaceDefinitionError,
)
from tests.design_space.helpers import K, divisors, hw, sw_for


def joint() -> JointSpace:
    return JointSpace(hw(), sw_for)


def brute_force_joint() -> list[dict]:
    out = []
    for rows, buf in itertools.product([2, 4, 8], [16, 32, 64]):
        if rows * buf > 256:
            continue
        for tile, unroll, order in itertools.product(divisors(K), range(1, rows + 1), [("k", "n"), ("n", "k")]):
            if tile <= rows and 2 * tile * unroll <= buf:
                out.append({"rows": rows, "buf_words": buf, "tile_k": tile, "unroll": unroll, "order": order})
    return out


def test_grid_and_cardinality_equal_brute_force():
    j = joint()
    grid = list(j.grid())
    brute = brute_force_joint()
    assert len(grid) == j.cardinality() == len(brute)
    assert sorted(map(j.point_key, grid)) == sorted(map(j.point_key, brute))


def test_samples_are_feasible_for_their_hardware():
    j = joint()
    pts = j.sample(500, seed=0)
    keys = {j.point_key(p) for p in brute_force_joint()}
    for p in pts:
        assert j.validate(p) == []
        assert j.point_key(p) in keys
    assert j.sample(30, seed=5) == j.sample(30, seed=5)


def test_flattened_codec_round_trip_and_relative_software_encoding():
    j = joint()
    pts = j.sample(300, seed=1)
    x = j.encode(pts)
    assert x.shape == (300, j.dim) and j.dim == hw().dim + 1 + 1 + 1
    assert j.decode(x) == [j.normalize(p) for p in pts]
    # any point of [0,1]^d decodes to a legal hardware point and legal software values
    for p in j.decode(np.random.default_rng(0).random((200, j.dim))):
        h, s = j.split(p)
        assert hw().validate(h, constraints=False) == []
        assert j.software_space(h).validate(s, constraints=False) == []


def test_feasible_mask_and_neighbors():
    j = joint()
    pts = j.sample(50, seed=2)
    assert j.feasible_mask(pts).all()
    bad = dict(pts[0], tile_k=12, unroll=8)
    assert not j.feasible_mask([bad])[0]
    for p in pts[:10]:
        for n in j.neighbors(p):
            assert j.validate(n) == []


def test_layout_mismatch_is_a_named_error():
    def sw(h):
        if h["rows"] == 2:
            return DesignSpace(Ordinal("tile_k", [1, 2]))
        return DesignSpace(Categorical("tile_k", ["a", "b"]))

    j = JointSpace(DesignSpace(Ordinal("rows", [2, 4])), sw)
    with pytest.raises(SpaceDefinitionError, match=r"does not match the layout.*'tile_k' \((ordinal|categorical), [12] cols\) vs 'tile_k'"):
        list(j.grid())


def test_name_clash_rejected():
    with pytest.raises(SpaceDefinitionError, match=r"software parameters \['rows'\]"):
        JointSpace(DesignSpace(Integer("rows", 1, 2)), lambda h: DesignSpace(Integer("rows", 1, 2)))
