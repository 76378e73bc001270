"""The layers of the code, as folders, and the one direction their imports may point.

    cli -> jobs / analysis -> store / host / process -> domain;  ranks -> domain;
    dashboard -> store / process -> domain

Inside runners/domain the wings have an order of their own (WINGS): a wing imports only the
shared modules at the domain's top and the wings before it, and no domain module defers an
import into a function (a deferred import is how a circle hides).

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
    "process": {"domain", "process"},
    "host": {"domain", "host"},
    "ranks": {"domain", "ranks"},
    "simulator": {"domain", "simulator"},  # the only importer of SimGrid
    "store": {"domain", "host", "process", "store"},  # the run journal names its host
    "analysis": {"domain", "host", "process", "store", "analysis"},
    "jobs": {"domain", "host", "process", "store", "jobs"},
    "cli": {"domain", "host", "process", "store", "analysis", "jobs", "simulator", "cli"},
    "dashboard": {"domain", "process", "store"},
}
# runners/domain's wings, each importing only those before it (and the shared top modules)
WINGS = (
    "collectives",
    "nodes",
    "algorithms",
    "libraries",
    "model",
    "workload",
    "sweep",
    "verdict",
    "adaptive",
    "imports",
)
SHARED = {"units", "errors", "status", "names", "outputs", "inputs"}
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
    if layer != "simulator":
        assert not any(m.split(".")[0] == "simgrid" for m in imported), "only simulator: SimGrid"


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


def domain_sources() -> list[Path]:
    """Every module of runners/domain below its own __init__."""
    domain = ROOT / "runners" / "domain"
    return [f for f in sorted(domain.rglob("*.py")) if f != domain / "__init__.py"]


def wing_of(path: Path) -> str:
    """The wing (or shared module) a domain file belongs to."""
    return path.relative_to(ROOT / "runners" / "domain").parts[0].removesuffix(".py")


def test_the_domain_is_its_wings_and_a_few_shared_modules() -> None:
    assert {wing_of(f) for f in domain_sources()} == set(WINGS) | SHARED


@pytest.mark.parametrize("path", domain_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_wings_import_only_the_wings_before_them(path: Path) -> None:
    wing = wing_of(path)
    before = set(WINGS[: WINGS.index(wing) + 1]) if wing in WINGS else set()
    used = {
        m.split(".")[2]
        for m in imported_modules(path)
        if m.startswith("runners.domain.") and len(m.split(".")) > 2
    }
    assert used <= before | SHARED, f"{wing} may not import {sorted(used - before - SHARED)}"


def deferred_imports(path: Path) -> list[str]:
    """The project modules a file imports inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (inner.module or "").startswith("runners"):
                    found.append(inner.module or "")
                elif isinstance(inner, ast.Import):
                    found += [a.name for a in inner.names if a.name.startswith("runners")]
    return found


@pytest.mark.parametrize("path", domain_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_domain_module_defers_an_import(path: Path) -> None:
    assert deferred_imports(path) == []


def test_the_wing_rules_can_fail(tmp_path: Path) -> None:
    """A deferred import is seen, and a wing's name is read from the file's place."""
    bad = tmp_path / "probe.py"
    bad.write_text("def f():\n    from runners.domain.verdict import summary\n")
    assert deferred_imports(bad) == ["runners.domain.verdict"]
    assert wing_of(ROOT / "runners" / "domain" / "sweep" / "plan.py") == "sweep"
    assert wing_of(ROOT / "runners" / "domain" / "units.py") == "units"


CLI = ROOT / "runners" / "cli"
# modules of the CLI that are no command: shared by several commands
CLI_HELPERS = {
    "__init__",
    "__main__",
    "main",
    "common",
    "spec_flags",
    "simulating",
    "workload_texts",
}
# the actions of `collsweep workload`, each a module the workload command registers
WORKLOAD_ACTIONS = {"workload_report", "workload_from", "workload_export"}


def test_every_command_is_a_module_named_after_it() -> None:
    from runners.cli.main import COMMANDS, build_parser

    modules = {p.stem for p in CLI.glob("*.py")} - CLI_HELPERS - WORKLOAD_ACTIONS
    assert {path.rsplit(".", 1)[1] for path in COMMANDS.values()} == modules
    for name in COMMANDS:
        sub = build_parser(name)._subparsers._group_actions[0]  # type: ignore[union-attr]
        assert list(sub.choices) == [name]


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_a_command_imports_no_other_command(path: Path) -> None:
    """Commands share only the helper modules; `workload` registers its own actions."""
    own = WORKLOAD_ACTIONS if path.stem == "workload" else set()
    cli = {m.split(".")[2] for m in imported_modules(path) if m.startswith("runners.cli.")}
    entry = {"main"} if path.stem == "__main__" else set()  # main imports commands by name
    assert cli <= (CLI_HELPERS - {"main"}) | own | entry, f"{path.stem} imports {sorted(cli)}"


def module_name(path: Path) -> str:
    """The dotted name of a source file (a package by its folder)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Every module of the two packages and the project modules it imports (at any depth)."""
    names = {module_name(f): f for f in sources()}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        found = set()
        for imported in imported_modules(path):
            while imported and imported not in names:
                imported = imported.rpartition(".")[0]  # a name inside a module: the module
            if imported and imported != name and not name.startswith(imported + "."):
                found.add(imported)
        graph[name] = found
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                top = stack.pop()
                group.add(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(group)

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_anywhere() -> None:
    assert circles(import_graph()) == []


def test_the_circle_finder_can_fail() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
