"""Architecture spec files (accelerators/spec.py): every built-in accelerator writes out
and reads back equal; errors name file, line and key; table energies are the table's; a
design point varies a spec's fields; a config names a spec."""

from __future__ import annotations

import math
import textwrap

import pytest

from accelerators import tech
from accelerators.arch import ArchSpec, MemoryLevel
from accelerators.intrinsic import DATAFLOWS, IntrinsicAccelerator
from accelerators.reference import eyeriss_v1, tpu_v1_like
from accelerators.registry import resolve_accelerator
from accelerators.spatial import SpatialArray
from accelerators.spec import ArchFile, arch_to_dict, dump_arch, dumps_arch, load_arch, loads_arch
from accelerators.systolic import SystolicArray
from design_space.errors import ConfigError


def _builtins() -> list[ArchSpec]:
    out = []
    for t in (tech.HOROWITZ_45NM, tech.EYERISS_NORMALIZED):
        for df in ("OS", "WS", "IS"):
            out.append(SystolicArray(rows=8, cols=32, dataflow=df, tech=t).to_arch())
        out.append(SpatialArray(tech=t).to_arch())
        out.append(eyeriss_v1(tech=t).to_arch())
    out.append(tpu_v1_like().to_arch())
    for kind, flows in DATAFLOWS.items():
        for df in flows:
            out.append(IntrinsicAccelerator(intrinsic=kind, dataflow=df).to_arch())
    leaky = SpatialArray().to_arch()
    lv = list(leaky.levels)
    lv[1] = MemoryLevel(**{**lv[1].__dict__, "leakage_pj_per_cycle": 0.125, "vector_words": 4,
                           "multicast": False, "bandwidth_words_per_cycle": 3.5})
    out.append(ArchSpec(leaky.name, tuple(lv), leaky.mac_energy_pj, leaky.word_bits, 250.0, 1.5, "generic"))
    # separate read and write bandwidths, alone and with the shared one (Timeloop's three)
    lv = list(leaky.levels)
    lv[1] = MemoryLevel(**{**lv[1].__dict__, "read_bandwidth_words_per_cycle": 16.0,
                           "write_bandwidth_words_per_cycle": 2.5, "bandwidth_words_per_cycle": 17.0})
    lv[2] = MemoryLevel(**{**lv[2].__dict__, "bandwidth_words_per_cycle": None, "write_bandwidth_words_per_cycle": 1.0})
    out.append(ArchSpec("split_bandwidth", tuple(lv), leaky.mac_energy_pj, leaky.word_bits))
    return out


@pytest.mark.parametrize("arch", _builtins(), ids=lambda a: f"{a.name}-{a.tech}")
def test_every_builtin_accelerator_writes_out_and_reads_back_equal(arch, tmp_path):
    assert loads_arch(dumps_arch(arch)) == arch
    p = dump_arch(arch, tmp_path / "a.yaml")
    back = load_arch(p)
    assert back == arch and back.levels == arch.levels and back.mac_energy_pj == arch.mac_energy_pj


def test_the_written_spec_is_readable_and_omits_derived_fields():
    d = arch_to_dict(SpatialArray().to_arch())
    assert [lv["name"] for lv in d["levels"]] == ["RF", "GLB", "DRAM"]
    assert "instances" not in d["levels"][0]          # derived from the GLB's 14 x 12 fanout
    assert (d["levels"][1]["fanout_x"], d["levels"][1]["fanout_y"]) == (14, 12)


SPEC = """\
name: toy
word_bits: 16
mac_energy_pj: 0.5
levels:
  - name: RF
    keep: [W, O]
    capacity_words: {W: 8, O: 4}
    read_energy_pj: 1.0
    write_energy_pj: {W: 1.5, O: 2.0}
  - name: GLB
    capacity_words: 4096
    fanout_x: 4
    fanout_y: 2
    read_energy_pj: 6.0
    write_energy_pj: 6.0
  - name: DRAM
    read_energy_pj: 200.0
    write_energy_pj: 200.0
    bandwidth_words_per_cycle: 4
"""


def test_a_hand_written_spec_is_the_arch_it_describes():
    a = loads_arch(SPEC)
    want = ArchSpec("toy", (
        MemoryLevel("RF", frozenset("WO"), {"W": 8, "O": 4}, instances=8, read_energy_pj=1.0,
                    write_energy_pj={"W": 1.5, "O": 2.0}),
        MemoryLevel("GLB", capacity_words=4096, fanout_x=4, fanout_y=2, read_energy_pj=6.0, write_energy_pj=6.0),
        MemoryLevel("DRAM", read_energy_pj=200.0, write_energy_pj=200.0, bandwidth_words_per_cycle=4.0),
    ), mac_energy_pj=0.5)
    assert a == want and a.n_macs == 8


def _err(text: str, tmp_path) -> ConfigError:
    p = tmp_path / "arch.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_arch(p)
    return e.value


@pytest.mark.parametrize(("edit", "line", "key", "msg"), [
    (("    fanout_x: 4", "    fanout_x: 0"), 12, "levels[1].fanout_x", "must be an integer >= 1, got 0"),
    (("    fanout_y: 2", "    fanout_y: 2\n    fanuot: 3"), 14, "levels[1].fanuot", "unknown key 'fanuot'"),
    (("    keep: [W, O]", "    keep: [W, X]"), 6, "levels[0].keep", "must be a list of operands"),
    (("  - name: GLB", "  - name: GLB\n    read_bandwidth_words_per_cycle: 0"), 11,
     "levels[1].read_bandwidth_words_per_cycle", "must be a finite number > 0, got 0"),
    (("  - name: GLB", "  - name: GLB\n    write_bandwidth_words_per_cycle: fast"), 11,
     "levels[1].write_bandwidth_words_per_cycle", "must be a finite number > 0, got 'fast'"),
    (("  - name: GLB", "  - name: GLB\n    cluster_size: 2"), 11, "levels[1].cluster_size", "cluster_size"),
    (("  - name: RF", "  - name: RF\n    instances: 4"), 6, "levels[0].instances",
     "4 instances, but the fanouts above give 8"),
    (("    read_energy_pj: 6.0", "    read_energy_pj: {table: sram}"), 14, "levels[1].read_energy_pj",
     "needs the spec's energy_table"),
    (("mac_energy_pj: 0.5", "mac_energy_pj: -1"), 3, "mac_energy_pj", "must be a finite number >= 0"),
    (("  - name: DRAM", "  - name: DRAM\n    capacity_words: 10"), 16, "levels[2]", "must be an unbounded backing store"),
    (("    capacity_words: {W: 8, O: 4}", "    capacity_words: {W: 8, Q: 4}"), 7, "levels[0].capacity_words.Q",
     "unknown operand 'Q'"),
])
def test_errors_name_the_file_the_line_and_the_key(tmp_path, edit, line, key, msg):
    assert edit[0] in SPEC
    e = _err(SPEC.replace(edit[0], edit[1], 1), tmp_path)
    assert (e.line, e.key) == (line, key), str(e)
    assert msg in str(e) and str(e).startswith(f"{tmp_path / 'arch.yaml'}:{line}: {key}: ")


def test_table_energies_are_the_tables_figures():
    text = textwrap.dedent("""\
        name: tabled
        word_bits: 8
        energy_table: horowitz_45nm
        mac_energy_pj: {table: mac}
        levels:
          - name: REG
            capacity_words: {W: 1, I: 1, O: 2}
            read_energy_pj: {table: register_file}
            write_energy_pj: {table: register_file}
          - name: SRAM
            capacity_words: 65536
            fanout_x: 16
            read_energy_pj: {table: sram}
            write_energy_pj: {table: sram, capacity_kib: 128}
            noc_energy_pj: {table: neighbour_hop}
            leakage_pj_per_cycle: {table: sram}
          - name: DRAM
            read_energy_pj: {table: dram}
            write_energy_pj: {table: dram}
        """)
    a = loads_arch(text)
    t = tech.HOROWITZ_45NM
    reg, sram, dram = a.levels
    assert a.mac_energy_pj == t.mac_energy_pj("int8") and a.tech == "horowitz_45nm"
    assert reg.read_energy_pj == {"W": t.register_energy_pj(1, "int8"), "I": t.register_energy_pj(1, "int8"),
                                  "O": t.register_energy_pj(2, "int8")}
    assert reg.write_energy_pj["O"] == t.register_energy_pj(2, "int8", "write")
    assert sram.read_energy_pj["I"] == t.sram_energy_pj(64.0, "int8")          # 65536 bytes = 64 KiB
    assert sram.write_energy_pj["W"] == t.sram_energy_pj(128.0, "int8", "write")
    assert sram.noc_energy_pj == t.hop_energy_pj("int8")
    assert sram.leakage_pj_per_cycle == t.leakage_pj_per_cycle("sram", 64.0)
    assert dram.read_energy_pj["O"] == t.dram_energy_pj("int8") and reg.instances == 16
    # written out, the energies are numbers; read back, the same arch
    assert "{table" not in dumps_arch(a) and loads_arch(dumps_arch(a)) == a


def test_a_design_point_varies_the_named_fields(tmp_path):
    p = tmp_path / "arch.yaml"
    p.write_text(SPEC.replace("    read_energy_pj: 6.0", "    read_energy_pj: {table: sram}")
                 .replace("mac_energy_pj: 0.5", "energy_table: horowitz_45nm\nmac_energy_pj: 0.5"))
    model = resolve_accelerator({"spec": str(p), "parameters": {"glb": "levels.GLB.capacity_words",
                                                                "cols": "levels.GLB.fanout_x",
                                                                "rf_w": "levels.RF.capacity_words.W",
                                                                "clock": "clock_mhz"}})
    assert isinstance(model, ArchFile)
    small = model.from_point({"glb": 1024, "cols": 8, "rf_w": 16, "clock": 250.0}).to_arch()
    big = model.from_point({"glb": 65536, "cols": 8, "rf_w": 16, "clock": 250.0}).to_arch()
    assert small.levels[1].capacity_words == 1024 and small.clock_mhz == 250.0
    assert small.levels[0].capacity_words == {"W": 16, "O": 4}
    assert small.levels[0].instances == 16 and small.n_macs == 16        # 8 x 2 fanout: derived
    # the table energy follows the varied capacity (1024 / 65536 16-bit words = 2 / 128 KiB)
    assert small.levels[1].read_energy_pj["W"] == tech.HOROWITZ_45NM.sram_energy_pj(2.0, "int16")
    assert big.levels[1].read_energy_pj["W"] == tech.HOROWITZ_45NM.sram_energy_pj(128.0, "int16")
    with pytest.raises(ValueError, match=r"point keys \['rows'\] are not among its parameters"):
        model.from_point({"rows": 3})
    with pytest.raises(ConfigError, match=r"levels\[1\]\.fanout_x: must be an integer >= 1, got 0"):
        model.from_point({"cols": 0})
    with pytest.raises(ValueError, match="names no level 'SRAM'"):
        resolve_accelerator({"spec": str(p), "parameters": {"x": "levels.SRAM.capacity_words"}}).from_point({"x": 1})


def test_a_spec_evaluates_as_the_accelerator_it_was_written_from(tmp_path):
    from evaluators.nested import NestedEvaluator
    from mappers.workloads import conv2d

    layer = conv2d("c", K=8, C=4, P=6, Q=6, R=3, S=3)
    acc = SpatialArray(pe_x=4, pe_y=2, glb_kib=16.0)
    p = dump_arch(acc.to_arch(), tmp_path / "spatial.yaml")
    from_spec = NestedEvaluator({"spec": str(p)}, [layer], mapper="exact")({})
    direct = NestedEvaluator(lambda _pt: acc, [layer], mapper="exact")({})
    for k in ("energy_uj", "latency_ms", "edp_uj_ms"):
        assert math.isclose(from_spec.metrics[k], direct.metrics[k], rel_tol=1e-12), k


def test_a_config_names_a_spec_relative_to_itself(tmp_path):
    from experiments.config import load_config

    dump_arch(SpatialArray(pe_x=4, pe_y=2).to_arch(), tmp_path / "my_arch.yaml")
    cfg = tmp_path / "study.yaml"
    cfg.write_text(textwrap.dedent("""\
        study: s
        space:
          parameters:
            - {name: glb, type: ordinal, values: [1024, 4096]}
        evaluator:
          function: nested
          options:
            accelerator: {spec: my_arch.yaml, parameters: {glb: levels.GLB.capacity_words}}
            workload: "dqn[0]"
        objectives: {edp_uj_ms: min}
        """))
    loaded = load_config(cfg)
    acc = loaded.config.evaluator.options["accelerator"]
    assert acc["spec"] == str(tmp_path / "my_arch.yaml")
    assert resolve_accelerator(acc).from_point({"glb": 1024}).to_arch().levels[1].capacity_words == 1024
    (tmp_path / "my_arch.yaml").write_text(SPEC.replace("fanout_x: 4", "fanout_x: -4"))
    with pytest.raises(ConfigError, match=r"my_arch.yaml:12: levels\[1\]\.fanout_x"):
        load_config(cfg)
