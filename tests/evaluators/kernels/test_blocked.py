"""The blocked matmul computes exactly A @ B for every tiling and loop order, and its
tiling points convert to and from coexplore mappings (so a mapper's choice runs)."""

import itertools

import pytest
import torch

from evaluators.kernels import blocked
from evaluators.loopnest import evaluate_batch
from mappers.sampling import RandomMapper


def _ints(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-4, 5, shape, generator=g).float()  # exact in fp32 at these sizes


@pytest.mark.parametrize("order", list(itertools.permutations(blocked.DIMS)))
@pytest.mark.parametrize("tiles", [(8, 8, 8), (5, 7, 3), (48, 40, 24), (16, 64, 1)])
def test_blocked_matmul_is_exact(order, tiles):
    a, b = _ints(48, 24, seed=1), _ints(24, 40, seed=2)
    p = {"tile_m": tiles[0], "tile_n": tiles[1], "tile_k": tiles[2], "order": order}
    assert torch.equal(blocked.blocked_matmul(a, b, p), torch.matmul(a, b))


def test_blocked_rejects_bad_inputs():
    with pytest.raises(ValueError, match="inner dimensions"):
        blocked.blocked_matmul(_ints(4, 3), _ints(4, 3), {"tile_m": 2, "tile_n": 2, "tile_k": 2})
    with pytest.raises(ValueError, match="permutation"):
        blocked.blocked_matmul(_ints(4, 4), _ints(4, 4),
                               {"tile_m": 2, "tile_n": 2, "tile_k": 2, "order": ("M", "M", "K")})


def test_n_blocks_and_space_constraint():
    layer = blocked.gemm_layer(64, 48, 96)
    assert blocked.n_blocks(layer, {"tile_m": 16, "tile_n": 32, "tile_k": 96}) == 4 * 2 * 1
    space = blocked.tile_space(layer, tiles=(8, 16, 32), max_blocks=64)
    pts = list(space.grid())
    assert pts and all(blocked.n_blocks(layer, p) <= 64 for p in pts)
    assert {p["tile_k"] for p in pts} <= {8, 16, 32, 96}


def test_mapping_round_trip_and_legal():
    layer = blocked.gemm_layer(64, 48, 96)
    arch = blocked.cpu_arch()
    for p in blocked.tile_space(layer, tiles=(16, 32)).sample(20, seed=0):
        m = blocked.to_mapping(layer, p, arch)
        assert m.violations(layer, arch) == []
        assert blocked.from_mapping(layer, m) == {**p, "order": tuple(p["order"])}


def test_a_mapper_chosen_mapping_runs_exactly():
    """A coexplore mapper picks the tiling on the two-level CPU arch (cache of 4096
    words); the blocked matmul runs that mapping and is exact."""
    layer = blocked.gemm_layer(32, 64, 48)
    arch = blocked.cpu_arch(cache_words=4096)
    r = RandomMapper(200).map(layer, arch, evaluate_batch, seed=0)
    p = blocked.from_mapping(layer, r.mapping)
    a, b = _ints(32, 48, seed=3), _ints(48, 64, seed=4)
    assert torch.equal(blocked.blocked_matmul(a, b, p), a @ b)
    assert p["tile_m"] * p["tile_k"] + p["tile_k"] * p["tile_n"] + p["tile_m"] * p["tile_n"] <= 4096


def test_cache_budget_constraint():
    layer = blocked.gemm_layer(256, 256, 256)
    space = blocked.tile_space(layer, tiles=(32, 64, 128), max_tile_words=3 * 64 * 64)
    pts = list(space.grid())
    assert pts and all(p["tile_m"] * p["tile_k"] + p["tile_k"] * p["tile_n"] + p["tile_m"] * p["tile_n"]
                       <= 3 * 64 * 64 for p in pts)
    assert any(p["tile_m"] == 64 and p["tile_n"] == 64 and p["tile_k"] == 64 for p in pts)


def test_distinct_orders_keep_one_point_per_loop_nest():
    layer = blocked.gemm_layer(64, 64, 32)
    full = list(blocked.tile_space(layer, tiles=(16, 32)).grid())
    distinct = list(blocked.tile_space(layer, tiles=(16, 32), distinct_orders=True).grid())

    def nest(p):
        nb = {d: -(-layer.dims[d] // blocked.tiles_of(p)[d]) for d in blocked.DIMS}
        return (*blocked.tiles_of(p).values(), tuple(d for d in p["order"] if nb[d] > 1))

    assert len({nest(p) for p in distinct}) == len(distinct) == len({nest(p) for p in full}) < len(full)
