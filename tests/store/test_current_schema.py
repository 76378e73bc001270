"""The schema is written three times and they agree: the DDL (runners.store.current_schema) is
the one the migrations make (same tables, columns in the same order, types, nullability, defaults
and primary keys), and docs/schema.md describes exactly its tables and columns."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
from conftest import ROOT

from runners import store
from runners.store.current_schema import CURRENT_SCHEMA, CURRENT_SCHEMA_VERSION

SCHEMA_DOC = ROOT / "docs" / "schema.md"
COLUMNS_SQL = """
SELECT table_name, column_index, column_name, data_type, is_nullable, column_default
FROM duckdb_columns() WHERE NOT internal ORDER BY table_name, column_index
"""
CONSTRAINTS_SQL = """
SELECT table_name, constraint_type, constraint_column_names
FROM duckdb_constraints() WHERE constraint_type <> 'NOT NULL'
ORDER BY table_name, constraint_type, constraint_column_names
"""


def described(con: duckdb.DuckDBPyConnection) -> tuple[list[tuple], list[tuple]]:
    """Every user table's columns and its constraints other than NOT NULL (which the columns'
    nullability already says)."""
    columns = con.execute(COLUMNS_SQL).fetchall()
    constraints = [
        (t, kind, tuple(cols)) for t, kind, cols in con.execute(CONSTRAINTS_SQL).fetchall()
    ]
    return columns, constraints


def from_ddl(ddl: str = CURRENT_SCHEMA) -> duckdb.DuckDBPyConnection:
    """An in-memory database holding the tables the DDL creates."""
    con = duckdb.connect()
    con.execute(ddl)
    return con


def migrated(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    """A new store created by running every migration, opened read-only."""
    path = tmp_path / "migrated.duckdb"
    store.ensure_current(path)
    return duckdb.connect(str(path), read_only=True)


def test_the_ddl_is_the_schema_the_migrations_make(tmp_path: Path) -> None:
    columns, constraints = described(migrated(tmp_path))
    assert (
        len({c[0] for c in columns}) >= 16
        and ("points", "PRIMARY KEY", ("point_id",)) in constraints
    )
    assert described(from_ddl()) == (columns, constraints)


def test_the_ddl_is_of_the_current_version() -> None:
    assert CURRENT_SCHEMA_VERSION == store.SCHEMA_VERSION


def test_the_check_sees_a_column_the_ddl_lacks(tmp_path: Path) -> None:
    """A migration adding a column (or changing a type) without the DDL is caught."""
    expected = described(migrated(tmp_path))
    wider = from_ddl()
    wider.execute("ALTER TABLE points ADD COLUMN extra DOUBLE")
    assert described(wider) != expected
    retyped = from_ddl(CURRENT_SCHEMA.replace("median_s DOUBLE", "median_s FLOAT", 1))
    assert described(retyped) != expected


def documented_columns(doc: str) -> dict[str, set[str]]:
    """docs/schema.md's tables: the names in each "## `table`" section's `| column |` table (not
    its other tables, such as the assumptions' names)."""
    tables: dict[str, set[str]] = {}
    section: str | None = None
    in_columns = False
    for line in doc.splitlines():
        if line.startswith("## "):
            heading = re.match(r"## `(\w+)`", line)
            section = heading[1] if heading else None
        elif section and line.startswith("| column |"):
            in_columns = True
            tables.setdefault(section, set())
        elif in_columns and (cell := re.match(r"\| `(\w+)` \|", line)):
            tables[section or ""].add(cell[1])
        elif not line.startswith("|"):
            in_columns = False
    return tables


def test_docs_schema_describes_exactly_the_current_tables_and_columns() -> None:
    columns, _ = described(from_ddl())
    actual: dict[str, set[str]] = {}
    for table, _index, column, *_rest in columns:
        actual.setdefault(table, set()).add(column)
    actual.pop("schema_version")
    documented = documented_columns(SCHEMA_DOC.read_text())
    assert sorted(documented) == sorted(actual)
    for table, names in actual.items():
        assert documented[table] == names, table
