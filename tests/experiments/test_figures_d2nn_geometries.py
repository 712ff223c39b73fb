"""The propagation-validity table of docs/reproduction/d2nn.md rendered from its record
(issue 45 item 1): the committed block prints the record's numbers, a changed record changes
the rendered rows (and makes ``render --check`` fail until rendered), and a record that
breaks the table's header or lacks a key is a RecordError naming the record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from experiments.figures import figure, render_tree
from experiments.figures.d2nn import GEOMETRIES, propagation_geometries
from experiments.figures.records import RecordError

ROOT = Path(__file__).resolve().parents[2]
DOC = "docs/reproduction/d2nn.md"


def _row(text: str, first: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.startswith(f"| {first}"))
    return [c.strip() for c in line.strip("|").split("|")]


def _copy(tmp_path: Path) -> tuple[Path, dict]:
    (tmp_path / GEOMETRIES).parent.mkdir(parents=True)
    shutil.copy(ROOT / GEOMETRIES, tmp_path / GEOMETRIES)
    return tmp_path, json.loads((ROOT / GEOMETRIES).read_text())


def test_the_block_prints_the_records_numbers():
    rec = json.loads((ROOT / GEOMETRIES).read_text())
    text = figure("d2nn-geometries").render(ROOT)
    assert text.startswith(f"`{GEOMETRIES}` (`{rec['command']}`)")
    assert f"plan at tol {rec['tol']:g} |" in text
    by = {r["name"]: r for r in rec["rows"]}
    repro = by["reproduction"]
    cells = _row(text, "the reproduction, 532 nm / 36 µm / N = 64 / 0.1 m")
    assert cells[1] == f"{repro['z_over_zc']:.2g}" == "0.32"
    assert cells[2] == "1.8e-2 (aperture 2.5e-4)"
    assert cells[3] == "ASM, pad 32 (unchanged)"
    assert _row(text, "532 nm / 36 µm / N = 64 / 0.3 m")[2:] == ["0.10", "ASM, pad 48 (4.7e-2)"]
    thz = _row(text, "Lin et al. 2018 THz, 0.75 mm / 0.4 mm / N = 200 / 30 mm")
    assert thz[2] == f"{by['lin2018-thz']['padding_error']:.2f}" and thz[3].startswith("RS, pad 100 (")
    assert len([ln for ln in text.splitlines() if ln.startswith("| ") and "N = " in ln]) == len(rec["rows"])


def test_a_changed_record_changes_the_rendered_table(tmp_path):
    root, rec = _copy(tmp_path)
    committed = propagation_geometries(root)
    by = {r["name"]: r for r in rec["rows"]}
    by["reproduction"]["padding_error"] = 0.0234  # a rerun after a change of padding_error
    by["reproduction"]["aperture_error"] = 7.7e-4
    by["far-corner"]["plan"].update(method="asm", pad=48, error=0.0412)  # the planner picks otherwise
    rec["tol"] = 0.02
    (root / GEOMETRIES).write_text(json.dumps(rec))
    text = propagation_geometries(root)
    assert text != committed
    assert _row(text, "the reproduction,")[2] == "2.3e-2 (aperture 7.7e-4)"
    assert _row(text, "far corner,")[3] == "ASM, pad 48 (4.1e-2)"
    assert "plan at tol 0.02 |" in text
    # the rows not changed print as before
    assert _row(text, "near field,") == _row(committed, "near field,")


def test_a_changed_record_makes_the_check_fail_until_rendered(tmp_path):
    root, rec = _copy(tmp_path)
    doc = root / DOC
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text("intro\n<!-- figure: d2nn-geometries -->\n<!-- /figure -->\nend\n")
    render_tree(root, check=False, files=[doc])
    assert render_tree(root, check=True, files=[doc]).stale == []
    rec["rows"][0]["z_over_zc"] = 0.0777
    (root / GEOMETRIES).write_text(json.dumps(rec))
    out = render_tree(root, check=True, files=[doc])
    assert len(out.stale) == 1 and "'d2nn-geometries' differs" in out.stale[0] and "| 0.078 |" in out.stale[0]
    render_tree(root, check=False, files=[doc])
    assert "| near field, 532 nm / 36 µm / N = 64 / 10 mm | 0.078 |" in doc.read_text()


def test_a_record_that_breaks_the_header_or_lacks_a_key_is_refused(tmp_path):
    root, rec = _copy(tmp_path)
    rec["rows"][1]["pad"] = 48
    (root / GEOMETRIES).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"propagation_geometries\.json: row 'reproduction' states asm on pad 48"):
        propagation_geometries(root)
    rec["rows"][1]["pad"] = 32
    del rec["rows"][2]["plan"]
    (root / GEOMETRIES).write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"propagation_geometries\.json: lacks 'plan'"):
        propagation_geometries(root)
