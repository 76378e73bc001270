"""Short functions: none in runners/, dashboard/ or benchmarks/ runs over MAX_LINES lines, from
its `def` to its last line (docstring and comments included), so each does one named step."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

MAX_LINES = 60
FOLDERS = ("runners", "dashboard", "benchmarks")


def long_functions(path: Path, limit: int = MAX_LINES) -> list[str]:
    """'file:line name (n lines)' for every function or method of the file over `limit`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_longer_than_sixty_lines() -> None:
    files = [p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 100
    assert [f for path in files for f in long_functions(path)] == []


def test_the_rule_can_fail(tmp_path: Path) -> None:
    """A method of 61 lines is caught; one of 60 is not."""
    body = "".join(f"        x{i} = {i}\n" for i in range(59))
    probe = tmp_path / "probe.py"
    probe.write_text(f"class C:\n    def long(self):\n{body}        return 0\n")
    assert long_functions(probe) == ["probe.py:2 long (61 lines)"]
    probe.write_text(f"def short():\n{body}")
    assert long_functions(probe) == []
