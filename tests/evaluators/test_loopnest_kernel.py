"""The compiled loop-nest kernel (evaluators/loopnest/kernel.py) equals the numpy model.

Every field of the result, bit for bit, on random layers x architectures x mappings
(padding, bypass, partitioned and shared capacities, bandwidths, multicast and not,
fanouts at several levels, systolic fold timing), on Eyeriss and systolic arrays with
convolutions of every kind, GEMM and batched matmul; and the lower bound on partial
mappings (``LOOPNEST.lower_bound``) against the numpy ``fills`` hook for every ``known``,
with and without the stationary operand and the irrelevant-tile table, on small layers
and architectures with binding capacities; and under every counting convention (each
choice alone, the Timeloop and ZigZag accountings) with access widths of 1-4 words and
leakage. Without numba (or with
``COEXPLORE_LOOPNEST_KERNEL=0``) the numpy code runs.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

import evaluators.loopnest as ln
from accelerators import SpatialArray, SystolicArray, eyeriss_v1
from accelerators.arch import OPERANDS, ArchSpec
from evaluators.loopnest import ACCOUNTING, CONVENTION_CHOICES, Conventions, dispatch
from evaluators.loopnest import kernel as loopnest_kernel
from mappers.mapping import Mapping, MappingBatch
from mappers.sampling import random_mappings
from mappers.workloads import conv2d, gemm
from tests.evaluators.mapping_gen import random_arch, random_layer, random_mapping

FIELDS = ("reads", "writes", "noc_words", "tile_words", "macs_executed", "compute_cycles", "energy_pj",
          "latency_cycles", "edp", "utilization", "bandwidth_cycles", "level_energy_pj", "mac_energy_pj",
          "leakage_energy_pj")


def assert_same(kern: ln.LoopNestResult, ref: ln.LoopNestResult, what: str) -> None:
    """Every field equal, bit for bit (counts and energies alike), shapes included."""
    for f in FIELDS:
        a, b = np.asarray(getattr(kern, f)), np.asarray(getattr(ref, f))
        assert a.shape == b.shape, f"{f} {what}"
        np.testing.assert_array_equal(a, b, err_msg=f"{f} {what}")
    np.testing.assert_array_equal(kern.valid, ref.valid, err_msg=f"valid {what}")


def check_bound(layer, arch, batch: MappingBatch, known: int, what: str, **kw) -> None:
    kb = ln.LOOPNEST.lower_bound(layer, arch, batch, known, kernel=True, **kw)
    nb = ln.LOOPNEST.lower_bound(layer, arch, batch, known, kernel=False, **kw)
    assert_same(kb, nb, f"bound known={known} {kw.get('stationary')} {what}")


def check(layer, arch, batch: MappingBatch, what: str) -> ln.LoopNestResult:
    """Kernel == numpy for the scores and for the lower bound at every ``known``."""
    kern = ln.evaluate_batch(layer, arch, batch, kernel=True)
    ref = ln.evaluate_batch(layer, arch, batch, kernel=False)
    assert_same(kern, ref, what)
    for known in range(arch.n_levels + 1):
        check_bound(layer, arch, batch, known, what)
    return ref


def varied_arch(rng: np.random.Generator) -> ArchSpec:
    """:func:`random_arch` with random capacities (none, shared or per operand), per-operand
    energies, bandwidths and, now and then, a systolic dataflow."""
    arch = random_arch(rng)
    levels = []
    for li, lv in enumerate(arch.levels):
        if li == arch.n_levels - 1:
            levels.append(dataclasses.replace(lv, bandwidth_words_per_cycle=float(rng.choice([1.0, 2.5, 8.0]))))
            continue
        kind = rng.integers(0, 3)
        cap = (None if kind == 0 else int(rng.integers(4, 200)) if kind == 1
               else {op: int(rng.integers(1, 60)) for op in lv.tensors})
        levels.append(dataclasses.replace(
            lv, capacity_words=cap,
            read_energy_pj={op: float(rng.uniform(0.1, 5)) for op in OPERANDS},
            write_energy_pj={op: float(rng.uniform(0.1, 5)) for op in OPERANDS},
            bandwidth_words_per_cycle=None if rng.random() < 0.5 else float(rng.uniform(0.5, 6))))
    dataflow = None if rng.random() < 0.7 else str(rng.choice(["OS", "WS", "IS"]))
    return dataclasses.replace(arch, levels=tuple(levels), dataflow=dataflow)


@pytest.mark.parametrize("chunk", range(8))
def test_kernel_equals_numpy_on_random_layers_archs_mappings(chunk):
    """25 random layers x architectures x 16 random mappings per chunk (3,200 mappings):
    padded factors, bypass, capacities, multicast and not, fanouts at several levels."""
    seen = {"invalid": 0, "valid": 0, "padded": 0, "bypass": 0, "systolic": 0}
    for seed in range(1000 + 25 * chunk, 1000 + 25 * (chunk + 1)):
        rng = np.random.default_rng(seed)
        layer, arch = random_layer(rng), varied_arch(rng)
        maps = [random_mapping(rng, layer, arch) for _ in range(16)]
        batch = MappingBatch.from_mappings(layer, arch, maps)
        ref = check(layer, arch, batch, f"seed {seed}\n{layer}\n{arch}")
        seen["invalid"] += int((~ref.valid).sum())
        seen["valid"] += int(ref.valid.sum())
        seen["padded"] += int((np.asarray(ref.macs_executed) > layer.macs).sum())
        seen["bypass"] += int((~batch.keep[:, :-1]).sum())
        seen["systolic"] += arch.dataflow is not None
    # the sample exercises what it claims to
    assert min(seen.values()) > 0, seen



@pytest.mark.parametrize("chunk", range(2))
def test_kernel_equals_numpy_with_leakage(chunk):
    """Random layers and architectures (bandwidths limiting latency now and then) with
    leakage on some levels: every field, the lower bounds' included, bit for bit."""
    leaked = 0
    for seed in range(5000 + 10 * chunk, 5000 + 10 * (chunk + 1)):
        rng = np.random.default_rng(seed)
        layer, arch = random_layer(rng), varied_arch(rng)
        arch = dataclasses.replace(arch, levels=tuple(
            dataclasses.replace(lv, leakage_pj_per_cycle=0.0 if rng.random() < 0.3 else float(rng.uniform(0.01, 3)))
            for lv in arch.levels))
        maps = [random_mapping(rng, layer, arch) for _ in range(16)]
        ref = check(layer, arch, MappingBatch.from_mappings(layer, arch, maps), f"seed {seed}\n{layer}\n{arch}")
        leaked += int((np.asarray(ref.leakage_energy_pj) > 0).any())
    assert leaked > 0


def test_kernel_equals_numpy_with_vector_accesses():
    """Levels moving 1-4 words per access (with leakage on some): the whole-vector
    energy the compiled path computes from the kernel's counts (with the pair's cached
    tables) equals the numpy model's, every field and the vector counts bit for bit, on
    two calls in a row (the second from the cached plan)."""
    vectored = 0
    for seed in range(6000, 6012):
        rng = np.random.default_rng(seed)
        layer, arch = random_layer(rng), varied_arch(rng)
        arch = dataclasses.replace(arch, levels=tuple(dataclasses.replace(
            lv, vector_words=int(rng.integers(1, 5)),
            leakage_pj_per_cycle=0.0 if rng.random() < 0.5 else float(rng.uniform(0.01, 3))) for lv in arch.levels))
        batch = MappingBatch.from_mappings(layer, arch, [random_mapping(rng, layer, arch) for _ in range(12)])
        ref = ln.evaluate_batch(layer, arch, batch, kernel=False)
        for call in range(2):
            kern = ln.evaluate_batch(layer, arch, batch, kernel=True)
            assert_same(kern, ref, f"seed {seed} call {call}")
            if ref.read_vectors is None:
                assert kern.read_vectors is None and kern.write_vectors is None
                continue
            vectored += 1
            np.testing.assert_array_equal(kern.read_vectors, ref.read_vectors)
            np.testing.assert_array_equal(kern.write_vectors, ref.write_vectors)
    assert vectored > 0

CONVENTIONS = ([Conventions()] + [Conventions(**{k: c}) for k, v in CONVENTION_CHOICES.items() for c in v[1:]]
               + [ACCOUNTING["timeloop"], ACCOUNTING["zigzag"],
                  Conventions(window_reuse="none", mac_operand_reads="on_change"),
                  Conventions(first_accumulation="per_word", psum_refill="every_child", multicast="same_index")])
"""Every choice of every convention alone, the named accountings and two mixes."""


def with_widths_and_leakage(rng: np.random.Generator, arch: ArchSpec) -> ArchSpec:
    """``arch`` with 1-4 words per access and leakage (or none) on each level."""
    return dataclasses.replace(arch, levels=tuple(dataclasses.replace(
        lv, vector_words=int(rng.integers(1, 5)),
        leakage_pj_per_cycle=0.0 if rng.random() < 0.4 else float(rng.uniform(0.01, 3))) for lv in arch.levels))


@pytest.mark.parametrize("chunk", range(4))
def test_kernel_equals_numpy_under_every_accounting_and_access_width(chunk):
    """Random layers x architectures (capacities, bandwidths, systolic timing, 1-4-word
    accesses, leakage) x 12 random mappings, under every convention of
    :data:`CONVENTIONS`: every field and the vector counts, bit for bit. The sample must
    show each convention changing some count or energy (so the rule is exercised), but
    ``multicast="same_index"``, which differs only where children's tiles coincide across
    a relevant dimension (rare at random: Eyeriss's diagonals, the next test)."""
    changed = {conv: 0 for conv in CONVENTIONS[1:]}
    widths = set()
    for seed in range(8000 + 12 * chunk, 8000 + 12 * (chunk + 1)):
        rng = np.random.default_rng(seed)
        layer = random_layer(rng)
        arch = with_widths_and_leakage(rng, varied_arch(rng))
        widths.update(lv.vector_words for lv in arch.levels)
        batch = MappingBatch.from_mappings(layer, arch, [random_mapping(rng, layer, arch) for _ in range(12)])
        default = None
        for conv in CONVENTIONS:
            ref = ln.evaluate_batch(layer, arch, batch, kernel=False, accounting=conv)
            kern = ln.evaluate_batch(layer, arch, batch, kernel=True, accounting=conv)
            what = f"seed {seed} {conv}\n{layer}\n{arch}"
            assert_same(kern, ref, what)
            if ref.read_vectors is None:
                assert kern.read_vectors is None and kern.write_vectors is None
            else:
                np.testing.assert_array_equal(kern.read_vectors, ref.read_vectors, err_msg=what)
                np.testing.assert_array_equal(kern.write_vectors, ref.write_vectors, err_msg=what)
            if default is None:
                default = ref
            else:
                changed[conv] += int(any(not np.array_equal(getattr(ref, f), getattr(default, f))
                                         for f in ("reads", "writes", "noc_words", "leakage_energy_pj")))
    rare = Conventions(multicast="same_index")
    assert all(v for conv, v in changed.items() if conv != rare), changed
    assert widths == {1, 2, 3, 4}


LAYERS = [
    conv2d("3x3", K=16, C=8, P=14, Q=14, R=3, S=3),
    conv2d("1x1/2", N=2, K=32, C=16, P=7, Q=7, R=1, S=1, stride=2),
    conv2d("dilated", K=8, C=8, P=12, Q=10, R=3, S=3, dilation=2),
    conv2d("depthwise", K=32, C=32, P=14, Q=14, R=3, S=3, groups=32),
    conv2d("grouped", K=16, C=16, P=7, Q=7, R=3, S=3, stride=2, groups=4),
    gemm("gemm", M=48, N=40, K=36),
    gemm("bmm", B=3, M=16, N=12, K=20),
]
ARCHS = [
    eyeriss_v1().to_arch(),
    SpatialArray(pe_x=4, pe_y=3, rf_w_words=16, rf_i_words=8, rf_o_words=8, glb_kib=8, multicast=False).to_arch(),
    *(SystolicArray(rows=8, cols=8, dataflow=df, ifmap_sram_kib=8, filter_sram_kib=8, ofmap_sram_kib=8,
                    dram_bw_words_per_cycle=4).to_arch() for df in ("WS", "OS", "IS")),
]


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: a.name)
def test_kernel_equals_numpy_on_reference_architectures(arch):
    """Every layer kind on Eyeriss, a small spatial array and WS/OS/IS systolic arrays:
    divisor and padded factorizations, with and without bypass."""
    for layer in LAYERS:
        for factors, bypass in (("divisors", False), ("padded", True)):
            batch = random_mappings(layer, arch, 150, seed=7, factors=factors, bypass=bypass)
            check(layer, arch, batch, f"{layer} on {arch.name} ({factors}, bypass={bypass})")


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: a.name)
def test_kernel_equals_numpy_under_the_named_accountings_on_reference_architectures(arch):
    """Every layer kind on the reference architectures, Timeloop's and ZigZag's
    accountings and ``multicast="same_index"`` alone, divisor and padded factorizations
    with bypass; on Eyeriss (multicast, diagonal reuse) the last changes some count."""
    same_index = Conventions(multicast="same_index")
    changed = 0
    for layer in LAYERS:
        for factors, bypass in (("divisors", False), ("padded", True)):
            batch = random_mappings(layer, arch, 60, seed=11, factors=factors, bypass=bypass)
            for conv in ("timeloop", "zigzag", same_index):
                ref = ln.evaluate_batch(layer, arch, batch, kernel=False, accounting=conv)
                assert_same(ln.evaluate_batch(layer, arch, batch, kernel=True, accounting=conv), ref,
                            f"{conv}: {layer} on {arch.name} ({factors}, bypass={bypass})")
            default = ln.evaluate_batch(layer, arch, batch, kernel=False)
            changed += int(not np.array_equal(ref.reads, default.reads))
    if arch.name == ARCHS[0].name:
        assert changed > 0


def test_batch_of_one_and_blocks_agree():
    """Per-call results do not depend on the batch around a mapping."""
    layer, arch = LAYERS[0], ARCHS[0]
    batch = random_mappings(layer, arch, 40, seed=3)
    whole = ln.evaluate_batch(layer, arch, batch)
    for i in (0, 17, 39):
        one = ln.evaluate_batch(layer, arch, batch.take(np.array([i])))
        np.testing.assert_array_equal(one.reads[0], whole.reads[i])
        assert one.energy_pj[0] == whole.energy_pj[i] and one.latency_cycles[0] == whole.latency_cycles[i]


def test_kernel_is_the_default_and_caches_per_layer_and_arch():
    layer, arch = LAYERS[5], ARCHS[2]
    batch = random_mappings(layer, arch, 20, seed=1)
    assert ln.kernel_available()
    r = ln.LOOPNEST(layer, arch, batch)
    assert r.energy_pj.base is not None            # a view of the kernel's output block
    # an equal but distinct layer object: packed again, same results
    twin = gemm("gemm", M=48, N=40, K=36)
    np.testing.assert_array_equal(ln.LOOPNEST(twin, arch, batch).energy_pj, r.energy_pj)
    for k in range(ln.KERNEL_CACHE_SIZE + 5):
        ln.evaluate_batch(gemm(f"g{k}", M=4, N=4, K=4), arch, random_mappings(gemm("x", M=4, N=4, K=4), arch, 2, seed=k))
    assert dispatch.cached_plans() <= ln.KERNEL_CACHE_SIZE


def test_kernel_rejects_what_it_does_not_run():
    layer, arch = LAYERS[0], ARCHS[0]
    batch = random_mappings(layer, arch, 4, seed=0)
    with pytest.raises(ValueError, match="compiled kernel"):
        ln.evaluate_batch(layer, arch, batch, kernel=True, fills=lambda ctx: ctx.F)
    with pytest.raises(ValueError, match="compiled kernel"):
        ln.evaluate_batch(layer, arch, batch, kernel=True, integer=False)
    # every accounting has a bound, on both paths (tests/evaluators/test_loopnest_bounds_conventions.py)
    tl = ln.LoopNestCost("timeloop")
    assert_same(tl.lower_bound(layer, arch, batch, 1, kernel=True), tl.lower_bound(layer, arch, batch, 1, kernel=False),
                "timeloop bound")


def test_environment_variable_forces_numpy(monkeypatch):
    """``COEXPLORE_LOOPNEST_KERNEL=0`` switches the kernel off (read on every call):
    the default path is numpy, and insisting on the kernel is a clear error."""
    layer, arch = LAYERS[0], ARCHS[0]
    batch = random_mappings(layer, arch, 8, seed=2)
    monkeypatch.setenv("COEXPLORE_LOOPNEST_KERNEL", "0")
    assert not ln.kernel_available()
    calls = []
    monkeypatch.setattr(loopnest_kernel, "evaluate_rows", lambda *a: calls.append(a))
    monkeypatch.setattr(loopnest_kernel, "shaped_rows", lambda *a: calls.append(a))
    monkeypatch.setattr(dispatch, "SHAPED_MIN_ROWS", 1)
    r = ln.evaluate_batch(layer, arch, batch)
    assert not calls and r.energy_pj.shape == (8,)
    with pytest.raises(ImportError, match="COEXPLORE_LOOPNEST_KERNEL"):
        ln.evaluate_batch(layer, arch, batch, kernel=True)
    monkeypatch.delenv("COEXPLORE_LOOPNEST_KERNEL")
    assert ln.kernel_available()


def test_numpy_path_when_numba_is_missing():
    """In a fresh interpreter where ``import numba`` fails, the model still imports and
    scores (numpy), and gives the kernel's figures."""
    code = (
        "import sys, numpy as np\n"
        "sys.modules['numba'] = None\n"                      # import numba -> ImportError
        "import evaluators.loopnest as ln\n"
        "from accelerators import eyeriss_v1\n"
        "from mappers.sampling import random_mappings\n"
        "from mappers.workloads import conv2d\n"
        "layer = conv2d('l', K=16, C=8, P=14, Q=14, R=3, S=3)\n"
        "arch = eyeriss_v1().to_arch()\n"
        "r = ln.evaluate_batch(layer, arch, random_mappings(layer, arch, 50, seed=5))\n"
        "assert not ln.kernel_available() and 'evaluators.loopnest.kernel' not in sys.modules\n"
        "print(repr(float(np.sum(r.energy_pj))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    layer = conv2d("l", K=16, C=8, P=14, Q=14, R=3, S=3)
    arch = eyeriss_v1().to_arch()
    r = ln.evaluate_batch(layer, arch, random_mappings(layer, arch, 50, seed=5), kernel=True)
    assert float(out.stdout.strip().splitlines()[-1]) == float(np.sum(r.energy_pj))


@pytest.mark.parametrize("chunk", range(3))
def test_bound_equals_numpy_with_binding_capacities_and_the_stationary_operand(chunk):
    """Small layers x architectures (those of the exact mapper's certification) whose
    capacities bind, every legal and illegal mapping as a partial mapping at every
    ``known``: without the stationary operand, and for the level below the last known
    tile with each stationary operand and the exact mapper's irrelevant-tile table, and
    a random one (so the bound's ``spread`` term varies)."""
    from mappers.exact import irrelevant_tile_table
    from mappers.exhaustive import enumerate_mappings
    from tests.mappers.test_exact import small_arch, small_layer

    seen = {"spread": 0, "sliding": 0}
    for seed in range(25 * chunk, 25 * (chunk + 1)):
        rng = np.random.default_rng(900 + seed)
        layer, arch = small_layer(rng), small_arch(rng)
        try:
            batch = next(iter(enumerate_mappings(layer, arch, bypass=True, orders=True, max_mappings=50_000)), None)
        except ValueError:                               # too many to list
            batch = random_mappings(layer, arch, 600, seed=seed, bypass=True)
        if batch is None:
            continue
        batch = batch.take(rng.permutation(len(batch))[:600])
        seen["sliding"] += any(len([d for d, _ in ax]) > 1 for ax in layer.tensor("I").axes)
        what = f"seed {seed}\n{layer}\n{arch}"
        L = arch.n_levels
        for known in range(L + 1):
            check_bound(layer, arch, batch, known, what)
            c = known - 2
            if not 0 <= c < L - 1:
                continue
            table = irrelevant_tile_table(layer, arch, c, batch.keep[:, c, :])
            tables = [rng.integers(1, 5, size=(len(batch), 3)).astype(float)]
            if table is not None:
                tables.append(table)
                seen["spread"] += 1
            for irr in tables:
                for stationary in (None, 0, 1, 2):
                    check_bound(layer, arch, batch, known, what, stationary=stationary, irrelevant_tile=irr)
    assert min(seen.values()) > 0, seen


@pytest.mark.parametrize("chunk", range(2))
def test_least_bound_over_orders_equals_numpy(chunk):
    """``least_lower_bound`` (the least objective of the bound over combinations of
    candidate orders of one or two decided levels): the kernel's one pass equals the
    numpy path (the bound once per combination) bit for bit, values and chosen
    combination, on small layers x architectures with and without the stationary
    operand, with and without leakage; and each value is the bound of the combination it
    names."""
    from mappers.orders import OrderStructure, canonical_orders, objective_of
    from tests.mappers.test_exact import leaky, small_arch, small_layer

    checked = 0
    for seed in range(15 * chunk, 15 * (chunk + 1)):
        rng = np.random.default_rng(2300 + seed)
        layer, arch = small_layer(rng), small_arch(rng)
        if seed % 2:
            arch = leaky(arch, rng)
        batch = _some_mappings(layer, arch, rng, seed)
        if batch is None:
            continue
        canon = np.stack(canonical_orders(OrderStructure.of(layer)))
        L = arch.n_levels
        objective = ("edp", "energy", "latency")[seed % 3]
        for known in range(L):
            levels = list(range(max(known, 1), L))[-2:]
            if not levels:
                continue
            irr = rng.integers(1, 5, size=(len(batch), 3)).astype(float)
            for kw in ({}, {"stationary": int(rng.integers(0, 3)), "irrelevant_tile": irr}):
                kv, kc = ln.LOOPNEST.least_lower_bound(layer, arch, batch, known, levels, canon, objective,
                                                        kernel=True, **kw)
                nv, nc = ln.LOOPNEST.least_lower_bound(layer, arch, batch, known, levels, canon, objective,
                                                        kernel=False, **kw)
                np.testing.assert_array_equal(kv, nv, err_msg=f"seed {seed} known {known} {kw.keys()}")
                np.testing.assert_array_equal(kc, nc, err_msg=f"seed {seed} known {known} {kw.keys()}")
                i = int(rng.integers(len(batch)))
                order = batch.order[i:i + 1].copy()
                for li, ci in zip(levels, np.unravel_index(kc[i], [len(canon)] * len(levels))):
                    order[0, li] = canon[ci]
                one = batch.take(np.array([i]))
                r = ln.LOOPNEST.lower_bound(layer, arch, MappingBatch(one.dims, one.temporal, one.spatial_x,
                                                                      one.spatial_y, order, one.keep), known,
                                            **({} if not kw else {"stationary": kw["stationary"],
                                                                  "irrelevant_tile": irr[i:i + 1]}))
                assert objective_of(objective, r.energy_pj, r.compute_cycles, r.bandwidth_cycles)[0] == kv[i]
                checked += 1
    assert checked > 20


def test_least_bound_rejects_bad_arguments():
    layer, arch = LAYERS[0], ARCHS[0]
    batch = random_mappings(layer, arch, 4, seed=0)
    D = len(layer.dim_names)
    ident = np.arange(D)[None, :]
    with pytest.raises(ValueError, match="levels"):
        ln.LOOPNEST.least_lower_bound(layer, arch, batch, 1, [arch.n_levels], ident, "edp")
    with pytest.raises(ValueError, match="levels"):
        ln.LOOPNEST.least_lower_bound(layer, arch, batch, 1, [1, 1], ident, "edp")
    with pytest.raises(ValueError, match="permutations"):
        ln.LOOPNEST.least_lower_bound(layer, arch, batch, 1, [1], np.zeros((1, D), int), "edp")
    with pytest.raises(ValueError, match="objective"):
        ln.LOOPNEST.least_lower_bound(layer, arch, batch, 1, [1], ident, "speed")
    with pytest.raises(ValueError, match="accounting"):
        ln.LoopNestCost("maestro")
    with pytest.raises(ValueError, match="irrelevant_tile"):
        ln.LOOPNEST.least_lower_bound(layer, arch, batch, 1, [1], ident, "edp", irrelevant_tile=np.ones((3, 3)))


def test_bound_equals_numpy_across_blocks():
    """Over 16,384 rows the numpy code drops unused size-1 dimensions block by block (a
    size-1 dimension padded to 2 in one block only): the kernel's bound follows."""
    layer = conv2d("l", N=1, K=8, C=4, P=6, Q=6, R=3, S=3)
    arch = ARCHS[1]
    batch = random_mappings(layer, arch, 20_000, seed=11, factors="padded")
    T = batch.temporal.copy()
    T[-100:, -1, 0] = 2                                      # pad N to 2 in the second block
    batch = MappingBatch(batch.dims, T, batch.spatial_x, batch.spatial_y, batch.order, batch.keep)
    for known in range(arch.n_levels + 1):
        check_bound(layer, arch, batch, known, "blocks")


def test_bound_rejects_known_beyond_the_levels():
    layer, arch = LAYERS[0], ARCHS[0]
    batch = random_mappings(layer, arch, 4, seed=0)
    for kernel in (False, True):
        with pytest.raises(ValueError, match="known"):
            ln.LOOPNEST.lower_bound(layer, arch, batch, arch.n_levels + 1, kernel=kernel)
    with pytest.raises(ValueError, match="irrelevant_tile"):
        ln.LOOPNEST.lower_bound(layer, arch, batch, 1, irrelevant_tile=np.ones((3, 3)))


def test_too_many_rows_on_a_systolic_array_raises_on_both_paths():
    """A fold cannot use more rows than the array has: the numpy timing raises, so does
    the kernel."""
    arch = ARCHS[2]                                   # 8 x 8, WS
    layer = gemm("g", M=4, N=4, K=16)
    pe = arch.pe_array_level
    sy = [{} for _ in arch.levels]
    sy[pe] = {"K": 16}
    m = Mapping.create(arch, temporal=[{"M": 4, "N": 4}, {}, {}], spatial_y=sy)
    batch = MappingBatch.from_mappings(layer, arch, [m])
    for kernel in (False, True):
        with pytest.raises(ValueError, match="more rows/cols"):
            ln.evaluate_batch(layer, arch, batch, kernel=kernel)


@pytest.mark.parametrize("chunk", range(2))
def test_bound_equals_numpy_with_the_per_level_refinement(chunk):
    """The stationary-operand refinement at every level below the last known tile (the
    ``(B, L, 3)`` table and one stationary operand per level; issue 41): the kernel's bound
    equals the numpy hook's bit for bit, with the exact mapper's tables and random ones,
    every combination of stationary operands on the refined levels, plain and through
    ``least_lower_bound``."""
    import itertools

    from mappers.exact import irrelevant_tile_table
    from mappers.orders import OrderStructure, canonical_orders
    from tests.mappers.test_exact import small_arch, small_layer

    checked = 0
    for seed in range(12 * chunk, 12 * (chunk + 1)):
        rng = np.random.default_rng(4100 + seed)
        layer, arch = small_layer(rng), small_arch(rng)
        batch = _some_mappings(layer, arch, rng, seed)
        if batch is None:
            continue
        L = arch.n_levels
        what = f"seed {seed}\n{layer}\n{arch}"
        canon = np.stack(canonical_orders(OrderStructure.of(layer)))
        for known in range(2, L + 1):
            refined = [c for c in range(known - 1) if c < L - 1]
            if not refined:
                continue
            table = np.full((len(batch), L, 3), -1.0)
            rand = table.copy()
            for c in refined:
                t = irrelevant_tile_table(layer, arch, c, batch.keep[:, c, :])
                table[:, c] = t if t is not None else 1.0
                rand[:, c] = rng.integers(1, 5, size=(len(batch), 3))
            for irr in (table, rand):
                for combo in itertools.product(range(-1, 3), repeat=len(refined)):
                    codes = [-1] * L
                    for c, s in zip(refined, combo):
                        codes[c] = s
                    check_bound(layer, arch, batch, known, what, stationary=codes, irrelevant_tile=irr)
                    levels = list(range(max(known, 1), L))[-2:] or [L - 1]
                    kv, kc = ln.LOOPNEST.least_lower_bound(layer, arch, batch, known, levels, canon, "edp",
                                                            kernel=True, stationary=codes, irrelevant_tile=irr)
                    nv, nc = ln.LOOPNEST.least_lower_bound(layer, arch, batch, known, levels, canon, "edp",
                                                            kernel=False, stationary=codes, irrelevant_tile=irr)
                    np.testing.assert_array_equal(kv, nv, err_msg=what)
                    np.testing.assert_array_equal(kc, nc, err_msg=what)
                    checked += 1
    assert checked > 30, checked


def test_per_level_refinement_arguments_are_checked():
    """A stationary list of the wrong length, an operand out of range or a table of the
    wrong shape is an error naming the parameter."""
    layer = gemm("g", M=4, N=4, K=4)
    arch = eyeriss_v1().to_arch()
    batch = random_mappings(layer, arch, 3, seed=0)
    L = arch.n_levels
    with pytest.raises(ValueError, match="stationary"):
        ln.LOOPNEST.lower_bound(layer, arch, batch, L, stationary=[0, 1])
    with pytest.raises(ValueError, match="stationary"):
        ln.LOOPNEST.lower_bound(layer, arch, batch, L, stationary=[5] * L)
    with pytest.raises(ValueError, match="irrelevant_tile"):
        ln.LOOPNEST.lower_bound(layer, arch, batch, L, irrelevant_tile=np.ones((3, L + 1, 3)))


def _some_mappings(layer, arch, rng, seed):
    """Up to 300 mappings of ``layer`` on ``arch`` in random order: from the first batch the
    brute-force enumeration lists, or sampled where the space is too large to list
    (``None`` when the enumeration lists none)."""
    from mappers.exhaustive import enumerate_mappings

    try:
        batch = next(iter(enumerate_mappings(layer, arch, bypass=True, orders=True, max_mappings=50_000)), None)
    except ValueError:
        batch = random_mappings(layer, arch, 300, seed=seed, bypass=True)
    return None if batch is None else batch.take(rng.permutation(len(batch))[:300])
