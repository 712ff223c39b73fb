"""``coexplore show STORAGE TRIAL`` (issue 43 item 3): every layer's stored mapping is the
one the mapper chose (same figures when the layer is mapped again on the trial's design),
printed as a loop nest, as the stored JSON and as Timeloop mapping YAML that Timeloop's
reader (mappers/interop/timeloop.py) reads back to it; bad requests are one-line errors."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from accelerators import SpatialArray
from accelerators.interop.timeloop import DATASPACE_ROLES, TimeloopTranslation
from design_space import DesignSpace, Ordinal, PowerOfTwo
from evaluators.loopnest import evaluate_batch
from experiments.cli import app
from experiments.study import Study
from mappers.heuristic import HeuristicMapper
from mappers.interop.timeloop import canonical, mapping_from_timeloop
from mappers.mapping import MappingBatch
from mappers.mapping_record import loop_nest_text
from mappers.zoo import dqn

runner = CliRunner()


@pytest.fixture(scope="module")
def nested_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("show") / "n.db"
    hw = DesignSpace(PowerOfTwo("pe_x", 2, 8), PowerOfTwo("pe_y", 2, 8), Ordinal("glb_kib", [4, 16, 64]))
    s = Study.create("nest", hw, {"edp_uj_ms": "min", "area_mm2": "min"}, "nested", "random",
                     evaluator_options={"accelerator": "spatial", "workload": "dqn", "mapper": "heuristic"},
                     storage=path, seed=0)
    s.optimize(3, workers=1, progress=False)
    return path, s


def test_show_prints_the_mapping_the_mapper_chose(nested_db):
    path, s = nested_db
    rec = s.trial(1)
    arch = SpatialArray(**rec.params).to_arch()
    layers = dqn()
    res = runner.invoke(app, ["show", str(path), "1", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["trial"] == 1 and [x["name"] for x in out["layers"]] == [u.name for u in layers]
    text = runner.invoke(app, ["show", str(path), "1"]).output
    tl = TimeloopTranslation(arch, tuple(lv.name for lv in arch.levels), dict(DATASPACE_ROLES))
    exported = 0
    for layer, stored in zip(layers, out["layers"]):
        chosen = HeuristicMapper().map(layer, arch, evaluate_batch).mapping
        assert loop_nest_text(stored["mapping"]) in text.replace("\n  ", "\n")
        one = runner.invoke(app, ["show", str(path), "1", "--layer", layer.name, "--format", "timeloop"])
        if any(set(x) & set(y) for x, y in zip(chosen.spatial_x, chosen.spatial_y)):
            assert one.exit_code == 2 and "on both X and Y" in one.output and layer.name in one.output
            continue
        assert one.exit_code == 0, one.output
        back = mapping_from_timeloop(yaml.safe_load(one.output), tl, layer)
        # Timeloop's reader gives back the loops the heuristic chose on this design
        assert _loops(back, layer, arch) == _loops(chosen, layer, arch)
        a, b = (evaluate_batch(layer, arch, MappingBatch.from_mappings(layer, arch, [m])) for m in (back, chosen))
        assert float(a.energy_pj[0]) == float(b.energy_pj[0]) and float(a.latency_cycles[0]) == float(b.latency_cycles[0])
        exported += 1
    assert exported >= 2


def _loops(m, layer, arch):
    """The loops that iterate, per level, and what it keeps (the order of one-iteration
    loops is immaterial)."""
    c = canonical(m, layer, arch)
    return [(c.temporal[li], [d for d in c.order[li] if c.temporal[li].get(d, 1) > 1], c.spatial_x[li],
             c.spatial_y[li], c.bypass[li]) for li in range(arch.n_levels)]


def test_show_picks_layers_and_writes_files(nested_db, tmp_path):
    path, _ = nested_db
    by_name = runner.invoke(app, ["show", str(path), "0", "--layer", "conv2"])
    by_pos = runner.invoke(app, ["show", str(path), "0", "--layer", "1"])
    assert by_name.exit_code == 0 and by_name.output == by_pos.output
    assert "layer conv2 (x1)" in by_name.output and "conv1" not in by_name.output.split("\n", 1)[1]
    out = tmp_path / "m" / "map.yaml"
    res = runner.invoke(app, ["show", str(path), "0", "--layer", "conv2", "--format", "timeloop", "-o", str(out)])
    assert res.exit_code == 0 and str(out) in res.output
    assert [d["type"] for d in yaml.safe_load(out.read_text())["mapping"]][:3] == ["datatype"] * 3


def test_show_errors_are_one_line(nested_db, tmp_path):
    path, _ = nested_db
    res = runner.invoke(app, ["show", str(path), "0", "--layer", "conv9"])
    assert res.exit_code == 2 and "--layer 'conv9'" in res.output and "'conv1'" in res.output
    res = runner.invoke(app, ["show", str(path), "99"])
    n = len(Study.load(None, str(path)).trials)
    assert res.exit_code == 2 and "TRIAL 99: study " in res.output, res.output
    assert f"has no such trial (its {n} trials are numbered 0..{n - 1})" in res.output  # its name, not its row id
    res = runner.invoke(app, ["show", str(path), str(2**70)])
    assert res.exit_code == 2 and "TRIAL" in res.output
    res = runner.invoke(app, ["show", str(path), "0", "--format", "xml"])
    assert res.exit_code == 2 and "text" in res.output and "timeloop" in res.output
    res = runner.invoke(app, ["show", str(path), "0", "--study", "nope"])
    assert res.exit_code == 2 and "'nope'" in res.output
    res = runner.invoke(app, ["show", str(tmp_path / "missing.db"), "0"])
    assert res.exit_code == 2 and "no such study storage" in res.output
    assert not (tmp_path / "missing.db").exists()


def test_show_a_trial_without_mappings(tmp_path):
    from tests.experiments.test_report import make_study

    make_study(tmp_path / "s.db", n=4)
    res = runner.invoke(app, ["show", str(tmp_path / "s.db"), "0"])
    assert res.exit_code == 2 and "no stored mappings" in res.output and "evaluator stored none" in res.output


def test_the_report_detail_lists_each_distinct_mapping_once(nested_db):
    from experiments.report import trial_detail
    from experiments.show import layer_mappings

    _, s = nested_db
    rec = s.trial(2)
    d = trial_detail(rec)
    stored = layer_mappings(rec.info)
    assert sum(len(g["layers"]) for g in d["mappings"]) == len(stored) == len(dqn())
    for g in d["mappings"]:
        (index,) = {x["index"] for x in stored if x["name"] in g["layers"]}
        assert g["text"] == loop_nest_text(rec.info["breakdown"]["mappings"][index])
    # a record pointing nowhere is reported, not raised
    rec.info["breakdown"]["layers"][0]["mapping"] = 99
    assert trial_detail(rec)["mappings_error"].startswith("breakdown['layers'][0]['mapping'] is 99")
