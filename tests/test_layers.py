"""The layout tells the architecture: a small app root, no two modules importing each other, and
the import layers of pyproject.toml's contract (docs/architecture.md, "Layers")."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("todos", "board", "worker")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                found[module_name(path)] = path
    return found


def imports_of(path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``path`` imports, at any depth of the file (deferred imports count)."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        targets.update(name for name in names if name in known)
    return targets


def mutual_imports(known: dict[str, Path]) -> list[tuple[str, str]]:
    graph = {name: imports_of(path, known) - {name} for name, path in known.items()}
    return sorted((a, b) for a, targets in graph.items() for b in targets if a < b and a in graph.get(b, set()))


def test_no_two_modules_import_each_other():
    assert mutual_imports(modules()) == []


def test_a_pair_importing_each_other_is_found(tmp_path, monkeypatch):
    """The check above can fail: two modules naming each other (one of them lazily) are reported."""
    package = tmp_path / "pair"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text("from pair.two import helper\n")
    (package / "two.py").write_text("def helper():\n    from pair import one\n    return one\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    known = {module_name(p): p for p in package.rglob("*.py")}
    assert mutual_imports(known) == [("pair.one", "pair.two")]


def test_the_app_root_holds_at_most_six_modules():
    """Everything else lives in a folder named for its concern (core, agents, live, dashboard, ops)."""
    loose = sorted(p.name for p in (ROOT / "todos").glob("*.py"))
    assert len(loose) <= 6, loose


@pytest.mark.skipif(shutil.which("uv") is None, reason="import-linter runs through uv")
def test_the_import_layers_contract_is_kept():
    result = subprocess.run(["uv", "run", "lint-imports"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout
