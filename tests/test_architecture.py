"""The shape of the code base: packages declare their public names, no module reaches into
another's private names, and nothing points at material outside the repository.

The package layering itself (imports only point down) is import-linter's job: the
contracts in ``pyproject.toml`` run as ``lint-imports`` in ``make test``; the last test
here runs them too where the tool is installed.
"""

from __future__ import annotations

import ast
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("design_space", "accelerators", "mappers", "evaluators", "optimizer", "experiments")


def _modules(*tops: str) -> list[Path]:
    return sorted(p for top in tops for p in (ROOT / top).rglob("*.py"))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def test_every_package_declares_its_public_names():
    missing, unknown = [], []
    for init in _modules(*PACKAGES):
        if init.name != "__init__.py":
            continue
        name = _module_name(init.parent / "x")[:-2]
        mod = importlib.import_module(name)
        names = getattr(mod, "__all__", None)
        if names is None:
            missing.append(name)
            continue
        unknown += [f"{name}.{n}" for n in names if not hasattr(mod, n)]
    assert missing == [], f"packages without __all__: {missing}"
    assert unknown == [], f"__all__ names that do not exist: {unknown}"


def test_no_module_imports_another_modules_private_names():
    bad = []
    for path in _modules(*PACKAGES, "tests"):
        here = _module_name(path)
        package = here.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
                continue
            top = node.module.split(".")[0]
            if top not in PACKAGES and top != "tests":
                continue
            # a private module may be used by its own package only
            parts = node.module.split(".")
            for i, part in enumerate(parts):
                if _private(part) and not package.startswith(".".join(parts[:i])):
                    bad.append(f"{path.relative_to(ROOT)}: private module {node.module}")
            for alias in node.names:
                if _private(alias.name) and node.module != here:
                    bad.append(f"{path.relative_to(ROOT)}: from {node.module} import {alias.name}")
    assert bad == []


def test_nothing_refers_to_material_outside_the_repository():
    """A user of coexplore never has ``../shared``: sources cite public references."""
    hits = []
    for path in _modules(*PACKAGES):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if "shared/notes" in line or "../shared" in line or "shared/data" in line:
                hits.append(f"{path.relative_to(ROOT)}:{i}")
    assert hits == []


def test_layering_contracts_hold():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("import-linter is not installed (it is in the dev extra)")
    proc = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:]
