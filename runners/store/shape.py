"""Whether an open store has the shape of this collsweep's schema: every table of
runners.store.current_schema a table (never a view) with its columns and their types, in any
order. A file whose schema_version says current but whose tables were dropped, replaced by
views or altered (damaged, or made by hand) is refused in one line at open, before any command
reads or writes it; tables of the user's own beside ours are left alone."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import duckdb

from runners.store.current_schema import CURRENT_SCHEMA
from runners.store.storefile import Connection, StoreError

COLUMNS_SQL = """
SELECT c.table_name, c.column_name, c.data_type
FROM duckdb_columns() c JOIN duckdb_tables() t
  ON c.database_name = t.database_name AND c.schema_name = t.schema_name
 AND c.table_name = t.table_name
WHERE c.database_name = current_database() AND c.schema_name = 'main'
ORDER BY c.table_name, c.column_index
"""


@cache
def expected_shape() -> dict[str, tuple[tuple[str, str], ...]]:
    """The current schema's tables: their (column, type) pairs."""
    with duckdb.connect() as con:
        con.execute(CURRENT_SCHEMA)
        return _shape(con)


def _shape(con: Connection) -> dict[str, tuple[tuple[str, str], ...]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(COLUMNS_SQL).fetchall():
        found.setdefault(table, []).append((column, kind))
    return {table: tuple(columns) for table, columns in found.items()}


def shape_problem(con: Connection) -> str | None:
    """What differs between the open store's tables and the current schema's, or None."""
    stored = _shape(con)
    for table, columns in expected_shape().items():
        if table not in stored:
            return f"its table {table} is missing (or is a view)"
        if dict(stored[table]) != dict(columns):  # in any order: every read names its columns
            missing = [name for name, _ in columns if name not in dict(stored[table])]
            said = f"lacks {', '.join(missing)}" if missing else "has other columns or types"
            return f"its table {table} {said}"
    return None


def check_shape(con: Connection, path: Path) -> None:
    """StoreError (one line) when the open store's tables are not the current schema's."""
    problem = shape_problem(con)
    if problem:
        raise StoreError(
            f"{path} says it is a current collsweep results store but {problem}: damaged or "
            "made by another program; point --store at another file"
        )
