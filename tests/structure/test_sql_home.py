"""SQL is written in one place, runners/store: the dashboard, the analysis, the jobs, the CLI
and the benchmarks call its named reads and writes. The one exception is a benchmark's
baseline, which times the user's own SQL path (store.query, what `collsweep query` runs)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import ROOT

# A string that reads as a statement: a clause keyword followed later by its partner.
SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+INTO\b|\bDELETE\s+FROM\b|\bUPDATE\s+\w+\s+SET\b"
    r"|\bCREATE\s+(TABLE|VIEW|INDEX)\b|\bALTER\s+TABLE\b"
)
USER_SQL = {  # file -> why its SQL is a user's, not the product's
    "benchmarks/dashboard_data.py": "the baseline: a plain count through store.query",
}


def _outside_the_store() -> list[Path]:
    """Every module of the product and its benchmarks that is not runners/store."""
    files = [*(ROOT / "runners").rglob("*.py"), *(ROOT / "dashboard").rglob("*.py")]
    files += (ROOT / "benchmarks").rglob("*.py")
    store = ROOT / "runners" / "store"
    return sorted(f for f in files if store not in f.parents)


def sql_strings(path: Path) -> list[int]:
    """The lines of the string literals in ``path`` that read as SQL (docstrings aside)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and SQL.search(node.value)
    ]


def test_the_detector_sees_sql() -> None:
    """The check can fail: it finds the statements the store itself writes."""
    found = sql_strings(ROOT / "runners" / "store" / "run_reads.py")
    assert len(found) >= 5


@pytest.mark.parametrize("path", _outside_the_store(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sql_outside_the_store(path: Path) -> None:
    """No module outside runners/store writes SQL of its own."""
    relative = str(path.relative_to(ROOT))
    found = sql_strings(path)
    if relative in USER_SQL:
        assert found, f"{relative} no longer writes SQL: drop it from USER_SQL"
        return
    assert not found, f"{relative} writes SQL at lines {found}: make it a named read of the store"
