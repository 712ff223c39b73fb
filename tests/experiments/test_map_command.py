"""``coexplore map ARCH.yaml PROBLEM.yaml`` (experiments/map_command.py): the exact
mapper's result on a design read from files, printed and written as Timeloop mapping
YAML that reads back to the same mapping and figures; a Timeloop spec's mapspace
constraints applied by default and named in the proof's scope (``--no-constraints``
drops them); a user's own mapping (``--mapping``) checked, scored beside the optimum at
its ratio to it and offered as a warm start."""

from __future__ import annotations

import math
import textwrap

import pytest
import yaml
from typer.testing import CliRunner

from accelerators.interop.timeloop import load_timeloop_yaml
from accelerators.interop.zigzag import arch_from_zigzag
from accelerators.spatial import SpatialArray
from accelerators.spec import dump_arch
from evaluators.loopnest import LoopNestCost
from experiments.cli import app
from experiments.map_command import load_design, map_design
from mappers.constraints import satisfies
from mappers.interop.timeloop import canonical, constraints_from_timeloop, mapping_from_timeloop
from mappers.mapping import Mapping, MappingBatch

runner = CliRunner()

PROBLEM = """\
problem:
  version: 0.4
  shape:
    name: tiny_conv
    dimensions: [C, M, R, P]
    data_spaces:
    - name: Weights
      projection: [[[C]], [[M]], [[R]]]
    - name: Inputs
      projection: [[[C]], [[R], [P]]]
    - name: Outputs
      projection: [[[M]], [[P]]]
      read_write: true
  instance: {C: 4, M: 4, R: 3, P: 6}
"""

# A Timeloop v0.4 architecture written for this test: DRAM -> buffer -> 4 PEs with a register
TL_ARCH = """\
architecture:
  version: 0.4
  nodes:
  - !Container
    name: system
    attributes: {global_cycle_seconds: 2e-9}
  - !Component
    name: DRAM
    class: DRAM
    attributes: {width: 16, datawidth: 16, shared_bandwidth: 2}
  - !Component
    name: buffer
    class: SRAM
    attributes: {depth: 256, width: 16, datawidth: 16}
  - !Container
    name: PE
    spatial: {meshX: 4}
  - !Component
    name: reg
    class: regfile
    attributes: {depth: 8, width: 16, datawidth: 16}
  - !Component
    name: mac
    class: intmac
    attributes: {width: 16}
"""
TL_ERT = """\
ERT:
  version: '0.4'
  tables:
  - name: system.DRAM[1..1]
    actions: [{name: read, energy: 200.0}, {name: write, energy: 200.0}, {name: update, energy: 200.0},
              {name: leak, energy: 0.0}]
  - name: system.buffer[1..1]
    actions: [{name: read, energy: 6.0}, {name: write, energy: 7.0}, {name: update, energy: 7.0},
              {name: leak, energy: 0.01}]
  - name: system.reg[1..4]
    actions: [{name: read, energy: 0.5}, {name: write, energy: 0.6}, {name: update, energy: 0.6}]
  - name: system.mac[1..4]
    actions: [{name: compute, energy: 1.0}, {name: leak, energy: 0.0}]
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "problem.yaml").write_text(PROBLEM)
    (tmp_path / "arch.yaml").write_text(TL_ARCH)
    (tmp_path / "ERT.yaml").write_text(TL_ERT)
    dump_arch(SpatialArray(pe_x=4, pe_y=1, glb_kib=1.0, rf_w_words=8, rf_i_words=8, rf_o_words=8).to_arch(),
              tmp_path / "spec.yaml")
    return tmp_path


@pytest.mark.parametrize("arch", ["spec.yaml", "arch.yaml"])
def test_map_prints_and_writes_the_optimal_mapping_which_reads_back(files, arch):
    out = files / "best.yaml"
    r = runner.invoke(app, ["map", str(files / arch), str(files / "problem.yaml"), "--ert", str(files / "ERT.yaml"),
                            "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "proven optimal" in r.output and "<< Compute >>" in r.output and "Timeloop mapping YAML" in r.output
    # the claim carries its space: divisor tilings, the accounting, bypass, no constraints
    assert ("scope:       the proof covers edp over divisor tilings, coexplore accounting, bypass searched, "
            "no constraints; spatial: every divisor unrolling within each fanout") in r.output
    tl, layer = load_design(files / arch, files / "problem.yaml", ert=files / "ERT.yaml")
    m = mapping_from_timeloop(load_timeloop_yaml(out), tl, layer)
    res = LoopNestCost()(layer, tl.arch, MappingBatch.from_mappings(layer, tl.arch, [m]))
    best = map_design(files / arch, files / "problem.yaml", ert=files / "ERT.yaml").result
    assert best.optimal and m == canonical(best.mapping, layer, tl.arch)
    assert math.isclose(float(res.edp[0]), best.edp, rel_tol=1e-12)
    assert f"edp = {best.edp:.6g}" in r.output
    if arch == "arch.yaml":   # Timeloop's level names, and the 500 MHz of its 2 ns cycle
        assert tl.level_names == ("reg", "inter_PE_spatial", "buffer", "DRAM") and tl.arch.clock_mhz == 500.0


def test_map_errors_name_the_problem(files):
    r = runner.invoke(app, ["map", str(files / "arch.yaml"), str(files / "problem.yaml")])
    assert r.exit_code == 2 and "give it with --ert" in r.output
    r = runner.invoke(app, ["map", str(files / "spec.yaml"), str(files / "spec.yaml")])
    assert r.exit_code == 2 and "expected a Timeloop v0.4 problem" in r.output
    r = runner.invoke(app, ["map", str(files / "spec.yaml"), str(files / "problem.yaml"), "--accounting", "nope"])
    assert r.exit_code == 2 and "Invalid value for '--accounting'" in r.output and "'nope'" in r.output


def test_map_under_timeloops_accounting_proves_or_says_why_not(files):
    r = runner.invoke(app, ["map", str(files / "spec.yaml"), str(files / "problem.yaml"), "--accounting", "timeloop",
                            "-o", str(files / "t.yaml")])
    # the exact mapper bounds Timeloop's accounting only once the mapper issue adds it; until then it says so
    if r.exit_code == 0:
        assert "proven optimal" in r.output and "accounting:  timeloop" in r.output
        assert "the proof covers edp over divisor tilings, timeloop accounting" in r.output
    else:
        assert r.exit_code == 2 and "ExactMapper" in r.output and "separable" in r.output


def test_a_two_axis_unrolling_is_written_in_coexplores_form(tmp_path):
    (tmp_path / "problem.yaml").write_text(textwrap.dedent(PROBLEM).replace("{C: 4, M: 4, R: 3, P: 6}",
                                                                            "{C: 4, M: 1, R: 1, P: 1}"))
    dump_arch(SpatialArray(pe_x=2, pe_y=2, glb_kib=1.0).to_arch(), tmp_path / "spec.yaml")
    out = map_design(tmp_path / "spec.yaml", tmp_path / "problem.yaml", objective="latency")
    m = out.result.mapping
    # C = 4 is the only loop: the fastest mapping spreads it over all 2 x 2 PEs, C on X and on Y
    assert out.result.optimal and m.spatial_x[1] == {"C": 2} and m.spatial_y[1] == {"C": 2}
    fmt, text = out.mapping_yaml()
    assert fmt == "coexplore" and "coexplore_mapping" in text
    with pytest.raises(ValueError, match="on both X and Y at 'GLB'"):
        out.timeloop_yaml()


def test_map_reads_accelforge_specs(tmp_path):
    from tests.accelerators.test_interop_accelforge import MATMUL, THREE_LEVEL

    (tmp_path / "arch.yaml").write_text(THREE_LEVEL.replace(", bits_per_action: 32", ""))
    (tmp_path / "wl.yaml").write_text(MATMUL.replace("< 128", "< 8").replace("< 64", "< 4").replace("< 32", "< 6"))
    r = runner.invoke(app, ["map", str(tmp_path / "arch.yaml"), str(tmp_path / "wl.yaml"), "-o", str(tmp_path / "m.yaml")])
    assert r.exit_code == 0, r.output
    assert "proven optimal" in r.output and "LocalBuffer [" in r.output and "8 MACs" in r.output
    tl, layer = load_design(tmp_path / "arch.yaml", tmp_path / "wl.yaml")
    m = mapping_from_timeloop(load_timeloop_yaml(tmp_path / "m.yaml"), tl, layer)
    assert m.violations(layer, tl.arch) == [] and layer.macs == 8 * 4 * 6


# The same design with mapspace constraints in the v0.4 tree form: the buffer may not
# loop over R and orders P before M (an order constraint over loops that can move, so it
# is relaxed), and keeps every data space; the PEs unroll only M
TL_ARCH_CONSTRAINED = TL_ARCH.replace("""    attributes: {depth: 256, width: 16, datawidth: 16}
""", """    attributes: {depth: 256, width: 16, datawidth: 16}
    constraints:
      temporal: {factors: R=1, permutation: PM}
      dataspace: {keep: [Weights, Inputs, Outputs]}
""").replace("""    spatial: {meshX: 4}
""", """    spatial: {meshX: 4}
    constraints:
      spatial: {factors: C=1 R=1 P=1}
""")

# A legal mapping of PROBLEM on TL_ARCH_CONSTRAINED, within its constraints, not the best
USER_MAPPING = """\
mapping:
- {target: reg, type: datatype, keep: [Weights, Outputs], bypass: [Inputs]}
- {target: reg, type: temporal, factors: C=1 M=1 R=1 P=2, permutation: PCMR}
- {target: inter_PE_spatial, type: spatial, factors: C=1 M=4 R=1 P=1, permutation: MCRP, split: 4}
- {target: buffer, type: temporal, factors: C=1 M=1 R=1 P=1, permutation: CMRP}
- {target: DRAM, type: temporal, factors: C=4 M=1 R=3 P=3, permutation: RCMP}
"""


@pytest.fixture
def constrained(files):
    (files / "carch.yaml").write_text(TL_ARCH_CONSTRAINED)
    (files / "mine.yaml").write_text(USER_MAPPING)
    return files


def _map(d, *extra, arch="carch.yaml"):
    return runner.invoke(app, ["map", str(d / arch), str(d / "problem.yaml"), "--ert", str(d / "ERT.yaml"),
                               "-o", str(d / "out.yaml"), *extra])


def test_a_timeloop_specs_constraints_are_applied_by_default_and_named(constrained):
    d = constrained
    tl, layer = load_design(d / "carch.yaml", d / "problem.yaml", ert=d / "ERT.yaml")
    tc = constraints_from_timeloop(tl, layer)
    out = map_design(d / "carch.yaml", d / "problem.yaml", ert=d / "ERT.yaml")
    free = map_design(d / "carch.yaml", d / "problem.yaml", ert=d / "ERT.yaml", constraints=False)
    assert out.result.optimal and free.result.optimal
    assert satisfies(tc.constraints, out.result.mapping, layer, tl.arch)[0]
    # the constraints bind here: the unconstrained optimum breaks them, and the constrained one costs more
    assert not satisfies(tc.constraints, free.result.mapping, layer, tl.arch)[0]
    assert out.result.edp > free.result.edp
    assert out.constraints is not None and out.constraints.relaxed == ("buffer",) and not out.constraints_ignored
    r = _map(d)
    assert r.exit_code == 0, r.output
    assert (", constraints of the Timeloop spec's mapspace (factors, spatial axes and bypass at inter_PE_spatial, "
            "buffer, with its loop-order constraints relaxed at buffer); spatial:") in r.output
    assert "             inter_PE_spatial: X unrolling over M, Y unrolling over no dimension" in r.output
    assert "             buffer: temporal loops over C M P, keeps W I O" in r.output
    assert "relaxed: the loop-order constraints at buffer (every order searched" in r.output
    assert "not applied" not in r.output and f"edp = {out.result.edp:.6g}" in r.output
    written = mapping_from_timeloop(load_timeloop_yaml(d / "out.yaml"), tl, layer)
    assert satisfies(tc.constraints, written, layer, tl.arch)[0]
    r = _map(d, "--no-constraints")
    assert r.exit_code == 0, r.output
    assert "bypass searched, no constraints;" in r.output and "constraints were not applied (--no-constraints" in r.output
    assert f"edp = {free.result.edp:.6g}" in r.output and "relaxed:" not in r.output


def test_constraints_that_cannot_be_expressed_are_an_error_that_offers_no_constraints(constrained):
    d = constrained
    # a partial spatial permutation with a split in the tree form: refused by the importer
    (d / "carch.yaml").write_text(TL_ARCH_CONSTRAINED.replace("spatial: {factors: C=1 R=1 P=1}",
                                                              "spatial: {permutation: M, split: 1}"))
    r = _map(d)
    assert r.exit_code == 2 and "carch.yaml: its mapspace constraints cannot be applied" in r.output
    assert "partial spatial permutation with a split" in r.output and "--no-constraints" in r.output
    assert _map(d, "--no-constraints").exit_code == 0


def _yours(output):
    return next(line for line in output.splitlines() if line.startswith("yours:"))


def test_a_users_mapping_is_scored_beside_the_optimum_and_offered_as_a_warm_start(constrained):
    d = constrained
    tl, layer = load_design(d / "carch.yaml", d / "problem.yaml", ert=d / "ERT.yaml")
    mine = mapping_from_timeloop(load_timeloop_yaml(d / "mine.yaml"), tl, layer)
    own = LoopNestCost()(layer, tl.arch, MappingBatch.from_mappings(layer, tl.arch, [mine]))
    cold = map_design(d / "carch.yaml", d / "problem.yaml", ert=d / "ERT.yaml").result
    warm = map_design(d / "carch.yaml", d / "problem.yaml", ert=d / "ERT.yaml", mapping=d / "mine.yaml")
    # a completed search returns the same mapping with or without the warm start, which was a legal candidate
    assert warm.result.optimal and warm.result.mapping == cold.mapping and warm.result.edp == cold.edp
    assert warm.result.info["warm_legal"] == 1 and warm.user.outside is None
    assert warm.user.result.edp == float(own.edp[0]) and float(own.edp[0]) > cold.edp
    r = _map(d, "--mapping", str(d / "mine.yaml"))
    assert r.exit_code == 0, r.output
    line = _yours(r.output)
    assert line.startswith(f"yours:       {d / 'mine.yaml'} (Timeloop mapping YAML): edp = {float(own.edp[0]):.6g}, ")
    assert line.endswith(f", {float(own.edp[0]) / cold.edp:.6g} x the proven optimum")
    assert "offered to the exact mapper as a warm start" in r.output
    # the optimum itself, read back: a ratio of exactly 1
    r = _map(d, "--mapping", str(d / "out.yaml"))
    assert r.exit_code == 0 and _yours(r.output).endswith(", 1 x the proven optimum")


def test_a_users_mapping_outside_the_constraints_is_scored_but_not_a_warm_start(constrained):
    d = constrained
    # C across the PEs instead of M: legal on the hardware, outside the spec's spatial constraint
    (d / "mine.yaml").write_text(USER_MAPPING.replace("factors: C=1 M=4 R=1 P=1, permutation: MCRP",
                                                      "factors: C=4 M=1 R=1 P=1, permutation: CMRP")
                                 .replace("factors: C=4 M=1 R=3 P=3", "factors: C=1 M=4 R=3 P=3"))
    out = map_design(d / "carch.yaml", d / "problem.yaml", ert=d / "ERT.yaml", mapping=d / "mine.yaml")
    assert out.user.outside == "it breaks the spec's mapspace constraints at inter_PE_spatial"
    assert out.result.info["warm_legal"] == 0
    r = _map(d, "--mapping", str(d / "mine.yaml"))
    assert r.exit_code == 0, r.output
    assert f"{out.user.result.edp / out.result.edp:.6g} x the proven optimum" in _yours(r.output)
    assert "outside the searched space: it breaks the spec's mapspace constraints at inter_PE_spatial" in r.output


@pytest.mark.parametrize("edit, message", [
    # R and P = 6 in the register: 3 weights and 6 outputs in its 8 words
    (lambda t: t.replace("R=1 P=2, permutation: PCMR", "R=3 P=6, permutation: PCMR").replace("R=3 P=3", "R=1 P=1"),
     "the mapping does not fit 'system': tiles at 'reg' need 9 words > capacity 8"),
    (lambda t: t.replace("C=1 M=4 R=1 P=1, permutation: MCRP", "C=2 M=4 R=1 P=1, permutation: MCRP")
     .replace("C=4 M=1 R=3 P=3", "C=2 M=1 R=3 P=3"),
     "spatial X at 'inter_PE_spatial' uses 8 > fanout 4"),
    (lambda t: t.replace("C=4 M=1 R=3 P=3", "C=4 M=1 R=1 P=3"), "the factors of R multiply to 1, less than its size 3"),
    (lambda t: t.replace("target: DRAM", "target: L3"), "targets 'L3', which is no level"),
    (lambda t: "problem: {}\n", "not a mapping coexplore reads"),
])
def test_a_users_mapping_that_does_not_fit_is_an_error_naming_the_file_and_what(constrained, edit, message):
    d = constrained
    (d / "mine.yaml").write_text(edit(USER_MAPPING))
    r = _map(d, "--mapping", str(d / "mine.yaml"))
    assert r.exit_code == 2, r.output
    assert f"error: {d / 'mine.yaml'}: " in r.output and message in r.output


def test_a_mapping_in_coexplores_form_reads_back(tmp_path):
    (tmp_path / "problem.yaml").write_text(textwrap.dedent(PROBLEM).replace("{C: 4, M: 4, R: 3, P: 6}",
                                                                            "{C: 4, M: 1, R: 1, P: 1}"))
    dump_arch(SpatialArray(pe_x=2, pe_y=2, glb_kib=1.0).to_arch(), tmp_path / "spec.yaml")
    args = ["map", str(tmp_path / "spec.yaml"), str(tmp_path / "problem.yaml"), "--objective", "latency"]
    r = runner.invoke(app, [*args, "-o", str(tmp_path / "m.yaml")])
    assert r.exit_code == 0 and "coexplore's form" in r.output
    r = runner.invoke(app, [*args, "-o", str(tmp_path / "m2.yaml"), "--mapping", str(tmp_path / "m.yaml")])
    assert r.exit_code == 0, r.output
    assert "(coexplore's mapping form): latency = " in r.output and _yours(r.output).endswith(
        ", 1 x the proven optimum")


def test_accelforge_and_zigzag_mappings_are_read_on_their_own_architectures(tmp_path):
    from mappers.interop.zigzag import zigzag_spatial, zigzag_temporal
    from tests.accelerators.test_interop_accelforge import MATMUL, THREE_LEVEL
    from tests.accelerators.test_interop_zigzag import toy

    (tmp_path / "arch.yaml").write_text(THREE_LEVEL.replace(", bits_per_action: 32", ""))
    (tmp_path / "wl.yaml").write_text(MATMUL.replace("< 128", "< 8").replace("< 64", "< 4").replace("< 32", "< 6"))
    (tmp_path / "af.yaml").write_text(textwrap.dedent("""\
        mapping:
          nodes:
          - !Storage {tensors: [I, WA, A], component: MainMemory}
          - !Temporal {rank_variable: m, tile_shape: 4}
          - !Storage {tensors: [I, WA, A], component: GlobalBuffer}
          - !Temporal {rank_variable: nI, tile_shape: 1}
          - !Spatial {rank_variable: m, tile_shape: 1, name: X, component: GlobalBuffer}
          - !Spatial {rank_variable: nA, tile_shape: 3, name: Y, component: GlobalBuffer}
          - !Storage {tensors: [I, WA], component: LocalBuffer}
          - !Temporal {rank_variable: nA, tile_shape: 1}
          - !Compute {einsum: MatmulA, component: MAC}
        """))
    out = map_design(tmp_path / "arch.yaml", tmp_path / "wl.yaml", mapping=tmp_path / "af.yaml")
    assert out.user.form == "accelforge" and out.user.outside is None
    assert out.user.mapping.spatial_x[1] == {"M": 4} and out.user.mapping.spatial_y[1] == {"NA": 2}
    r = runner.invoke(app, ["map", str(tmp_path / "arch.yaml"), str(tmp_path / "wl.yaml"), "-o",
                            str(tmp_path / "m.yaml"), "--mapping", str(tmp_path / "af.yaml")])
    assert r.exit_code == 0, r.output
    assert f"(an AccelForge mapping): edp = {out.user.result.edp:.6g}, " in r.output
    assert _yours(r.output).endswith(f", {out.user.result.edp / out.result.edp:.6g} x the proven optimum")
    # an AccelForge mapping on an architecture of another tool is refused by name
    (tmp_path / "problem.yaml").write_text(PROBLEM)
    dump_arch(SpatialArray(pe_x=4, pe_y=1, glb_kib=1.0).to_arch(), tmp_path / "spec.yaml")
    r = runner.invoke(app, ["map", str(tmp_path / "spec.yaml"), str(tmp_path / "problem.yaml"), "--mapping",
                            str(tmp_path / "af.yaml")])
    assert r.exit_code == 2 and "an AccelForge mapping needs an AccelForge architecture" in r.output

    # ZigZag: a mapping on the toy accelerator, written as ZigZag reports one (its hierarchy is per operand:
    # no bypass), reads back to itself and is scored as the loop-nest model scores it
    (tmp_path / "zz.yaml").write_text(yaml.safe_dump(toy(), sort_keys=False))
    (tmp_path / "conv.yaml").write_text(textwrap.dedent("""\
        problem:
          shape:
            name: conv
            dimensions: [K, C, P, Q]
            data_spaces:
            - {name: Weights, projection: [[[K]], [[C]]]}
            - {name: Inputs, projection: [[[C]], [[P]], [[Q]]]}
            - {name: Outputs, projection: [[[K]], [[P]], [[Q]]], read_write: true}
          instance: {K: 4, C: 4, P: 4, Q: 4}
        """))
    tr = arch_from_zigzag(toy())
    tl, layer = load_design(tmp_path / "zz.yaml", tmp_path / "conv.yaml")
    m = Mapping.create(tr.arch, temporal=[{}, {"C": 2}, {"C": 2, "P": 2}, {"Q": 4}],
                       spatial_x=[{}, {"P": 2}, {"K": 4}, {}])
    (tmp_path / "zmap.yaml").write_text(yaml.safe_dump({
        "temporal_mapping": zigzag_temporal(layer, tr.arch, m),
        "spatial_mapping": zigzag_spatial(m, tr.axes, ["D1", "D2"], tr.arch.n_levels)}))
    out = map_design(tmp_path / "zz.yaml", tmp_path / "conv.yaml", mapping=tmp_path / "zmap.yaml")
    own = LoopNestCost()(layer, tl.arch, MappingBatch.from_mappings(layer, tl.arch, [m]))
    assert out.user.form == "zigzag" and out.user.result.edp == pytest.approx(float(own.edp[0]), rel=1e-12)
    assert out.user.mapping.spatial_x == m.spatial_x and out.user.result.edp >= out.result.edp
    r = runner.invoke(app, ["map", str(tmp_path / "zz.yaml"), str(tmp_path / "conv.yaml"), "-o",
                            str(tmp_path / "m.yaml"), "--mapping", str(tmp_path / "zmap.yaml")])
    assert r.exit_code == 0 and "(a ZigZag temporal mapping): edp = " in r.output


# TL_ARCH_CONSTRAINED's constraints as a separate file in Timeloop's target form
CONSTRAINTS_FILE = """\
mapspace_constraints:
  targets:
  - {target: buffer, type: temporal, factors: R=1, permutation: PM}
  - {target: buffer, type: bypass, keep: [Weights, Inputs, Outputs]}
  - {target: inter_PE_spatial, type: spatial, factors: C=1 R=1 P=1}
"""


def test_a_constraints_file_applies_as_the_specs_own_constraints_do(constrained):
    d = constrained
    (d / "cons.yaml").write_text(CONSTRAINTS_FILE)
    in_spec = map_design(d / "carch.yaml", d / "problem.yaml", ert=d / "ERT.yaml")
    from_file = map_design(d / "arch.yaml", d / "problem.yaml", ert=d / "ERT.yaml", constraints_file=d / "cons.yaml")
    free = map_design(d / "arch.yaml", d / "problem.yaml", ert=d / "ERT.yaml")
    # the same constraints, read from the file: the same proven optimum, which the free search beats
    assert from_file.result.optimal and from_file.result.mapping == in_spec.result.mapping
    assert from_file.result.edp == in_spec.result.edp > free.result.edp
    tl, layer = load_design(d / "carch.yaml", d / "problem.yaml", ert=d / "ERT.yaml")
    assert satisfies(constraints_from_timeloop(tl, layer).constraints, from_file.result.mapping, layer, tl.arch)[0]
    r = _map(d, "--constraints", str(d / "cons.yaml"), arch="arch.yaml")
    assert r.exit_code == 0, r.output
    assert f"constraints of the constraints file {d / 'cons.yaml'} (factors, spatial axes and bypass at " in r.output
    assert f"constraints: applied, from the constraints file {d / 'cons.yaml'}:" in r.output
    # with --no-constraints on a constrained spec, only the file's apply (here the same ones)
    r = _map(d, "--no-constraints", "--constraints", str(d / "cons.yaml"))
    assert r.exit_code == 0 and f"edp = {in_spec.result.edp:.6g}" in r.output, r.output
    assert "only the constraints file's apply" in r.output


@pytest.mark.parametrize("text, words", [
    ("- {factors: R=1}\n", "each a mapping with a 'target' key"),
    ("targets: 3\n", "expected a list of constraint targets"),
    ("foo: []\n", "exactly one of"),
    ("- {target: nowhere, type: temporal, factors: R=1}\n", "nowhere"),
    ("- {target: buffer, type: temporal, factor: R=1}\n", "factor"),
    ("[unclosed\n", "not YAML"),
])
def test_a_bad_constraints_file_is_an_error_naming_it(files, text, words):
    (files / "cons.yaml").write_text(text)
    r = _map(files, "--constraints", str(files / "cons.yaml"), arch="arch.yaml")
    assert r.exit_code == 2 and "cons.yaml" in r.output and words in r.output, r.output


def test_keys_the_model_does_not_use_are_dropped_only_with_ignore_and_then_printed(tmp_path):
    from tests.accelerators.test_interop_zigzag import toy

    hw = toy()
    hw["memories"]["buf"]["latency"] = 1
    (tmp_path / "zz.yaml").write_text(yaml.safe_dump(hw, sort_keys=False))
    (tmp_path / "conv.yaml").write_text(textwrap.dedent("""\
        problem:
          shape:
            name: conv
            dimensions: [K, C, P, Q]
            data_spaces:
            - {name: Weights, projection: [[[K]], [[C]]]}
            - {name: Inputs, projection: [[[C]], [[P]], [[Q]]]}
            - {name: Outputs, projection: [[[K]], [[P]], [[Q]]], read_write: true}
          instance: {K: 2, C: 2, P: 2, Q: 1}
        """))
    with pytest.raises(ValueError, match=r"zz\.yaml:\d+: memories\.buf\.latency: ZigZag: 1: .*ignore=\('latency',\)"):
        load_design(tmp_path / "zz.yaml", tmp_path / "conv.yaml")
    tl, _ = load_design(tmp_path / "zz.yaml", tmp_path / "conv.yaml", ignore=("latency",))
    assert tl.arch == arch_from_zigzag(toy()).arch
    dump_arch(SpatialArray(pe_x=4, pe_y=1, glb_kib=1.0).to_arch(), tmp_path / "spec.yaml")
    with pytest.raises(ValueError, match=r"--ignore applies to Timeloop, AccelForge and ZigZag architectures"):
        load_design(tmp_path / "spec.yaml", tmp_path / "conv.yaml", ignore=("latency",))
    r = runner.invoke(app, ["map", str(tmp_path / "zz.yaml"), str(tmp_path / "conv.yaml"), "-o",
                            str(tmp_path / "m.yaml"), "--ignore", "latency"])
    assert r.exit_code == 0, r.output
    assert "dropped:     1 keys of the architecture file, as --ignore asked:\n" \
           "             memories.buf.latency = 1\n" in r.output


def test_ignore_drops_a_timeloop_key_only_when_asked_and_prints_it(files):
    # allow_overbooking: true lets Timeloop keep tiles above capacity; coexplore cannot, so
    # the key is refused unless --ignore names it, and then printed as dropped
    old = "    attributes: {depth: 256, width: 16, datawidth: 16}\n"
    assert old in TL_ARCH
    (files / "over.yaml").write_text(TL_ARCH.replace(
        old, "    attributes: {depth: 256, width: 16, datawidth: 16, allow_overbooking: true}\n", 1))
    with pytest.raises(ValueError, match=r"component 'buffer': allow_overbooking = True: .*"
                                         r"ignore=\('allow_overbooking',\)"):
        load_design(files / "over.yaml", files / "problem.yaml", ert=files / "ERT.yaml")
    tl, _ = load_design(files / "over.yaml", files / "problem.yaml", ert=files / "ERT.yaml",
                        ignore=("allow_overbooking",))
    assert tl.arch == load_design(files / "arch.yaml", files / "problem.yaml", ert=files / "ERT.yaml")[0].arch
    assert tl.dropped == ("component 'buffer': allow_overbooking = True",)
    r = _map(files, arch="over.yaml")
    assert r.exit_code == 2 and "allow_overbooking = True" in r.output and "ignore=" in r.output, r.output
    r = _map(files, "--ignore", "allow_overbooking", arch="over.yaml")
    assert r.exit_code == 0, r.output
    assert ("dropped:     1 keys of the architecture file, as --ignore asked:\n"
            "             component 'buffer': allow_overbooking = True\n") in r.output
    r = _map(files, "--ignore", "technology", arch="arch.yaml")      # neutral: nothing to drop
    assert r.exit_code == 2 and "not droppable Timeloop keys" in r.output, r.output
