"""The layers of the code, as folders, and the one direction their imports may point.

    cli -> jobs / analysis -> domain / store / host;  ranks -> domain;  dashboard -> domain / store

runners/host reads the machine (its cores, memory, installed libraries, tuning files on disk);
the domain stays pure and never imports it, nor do the ranks or the dashboard. Only
runners/ranks imports mpi4py. Function-local imports count as much as top-level ones.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

ALLOWED = {
    "domain": {"domain"},
    "host": {"domain", "host"},
    "ranks": {"domain", "ranks"},
    "store": {"domain", "host", "store"},  # the run journal names its host
    "analysis": {"domain", "host", "store", "analysis"},
    "jobs": {"domain", "host", "store", "jobs"},
    "cli": {"domain", "host", "store", "analysis", "jobs", "cli"},
    "dashboard": {"domain", "store"},
}
LAYERS = set(ALLOWED) - {"dashboard"}


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports (a `from runners import x` counts as runners.x)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            if node.module == "runners":
                names |= {f"runners.{alias.name}" for alias in node.names}
    return names


def layer_of(path: Path) -> str:
    """The layer a source file belongs to."""
    parts = path.relative_to(ROOT).parts
    return "dashboard" if parts[0] == "dashboard" else parts[1]


def sources() -> list[Path]:
    """Every Python file of the two packages, outside runners/__init__.py."""
    files = [*sorted((ROOT / "runners").rglob("*.py")), *sorted((ROOT / "dashboard").rglob("*.py"))]
    return [f for f in files if f != ROOT / "runners" / "__init__.py"]


def test_every_module_lives_in_a_layer() -> None:
    strays = [f.name for f in (ROOT / "runners").glob("*.py") if f.name != "__init__.py"]
    assert strays == []
    assert {
        p.name for p in (ROOT / "runners").iterdir() if p.is_dir() and p.name != "__pycache__"
    } == LAYERS


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_one_way(path: Path) -> None:
    layer = layer_of(path)
    imported = imported_modules(path)
    used = {m.split(".")[1] for m in imported if m.startswith("runners.")}
    used &= LAYERS  # runners.__version__ and the like belong to no layer
    assert used <= ALLOWED[layer], f"{layer} may not import {sorted(used - ALLOWED[layer])}"
    if layer != "ranks":
        assert not any(m.split(".")[0] == "mpi4py" for m in imported), "only ranks import MPI"


def test_the_rule_can_fail(tmp_path: Path) -> None:
    """The check sees a wrong-way import, also inside a function."""
    bad = tmp_path / "probe.py"
    bad.write_text("def f():\n    from runners import jobs\n    import mpi4py\n")
    assert imported_modules(bad) == {"runners", "runners.jobs", "mpi4py"}


@pytest.mark.parametrize("path", sorted((ROOT / "dashboard" / "lab").glob("*.py")), ids=str)
def test_the_lab_stays_apart_from_the_store_pages(path: Path) -> None:
    """The Modular lab reads only the domain: no store, no other dashboard module."""
    imported = imported_modules(path)
    assert not any(m.startswith("runners.") and m.split(".")[1] != "domain" for m in imported)
    dashboard = {m for m in imported if m.split(".")[0] == "dashboard"}
    assert dashboard <= {"dashboard.lab", "dashboard.lab.logic"}
