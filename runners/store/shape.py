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


# What a sweep can write: measured times finite, >= 0 and below 1e12 s; the numbers derived
# from them (intervals, rates, relative widths: NaN or infinite where undefined) never
# negative; counts and sizes >= 0 and below 2^50; text below 64 KiB (a spec, a command line and
# the JSON columns below 1 MiB). Anything past these came from elsewhere.
MEASURED = {"median_s", "mean_s", "min_s", "max_s", "p5_s", "p95_s", "seconds"}
MAX_NUMBER = 1e12
MAX_COUNT = 2**50
MAX_TEXT = 64 * 2**10
MAX_DOCUMENT = 2**20
DOCUMENTS = {"spec_toml", "command_line", "environment", "libraries", "interval_history"}


def _out_of_bounds(column: str, kind: str) -> str | None:
    """A SQL condition true for a value of `column` no sweep writes, or None."""
    quoted = '"' + column.replace('"', '""') + '"'
    if kind == "DOUBLE" and column in MEASURED:
        return f"NOT (isfinite({quoted}) AND {quoted} BETWEEN 0 AND {MAX_NUMBER})"
    if kind == "DOUBLE":
        return f"{quoted} < 0"
    if kind in ("INTEGER", "BIGINT"):
        return f"NOT ({quoted} BETWEEN 0 AND {MAX_COUNT})"
    if kind in ("VARCHAR", "JSON"):
        limit = MAX_DOCUMENT if column in DOCUMENTS else MAX_TEXT
        return f"length(CAST({quoted} AS VARCHAR)) > {limit}"
    return None


def foreign_value(con: Connection, alias: str, tables: tuple[str, ...]) -> str | None:
    """The first `table.column` of the attached database `alias` holding a value no sweep
    writes (a NaN or negative time, an infinite sample, a 5 MB name), or None."""
    checks = []
    for table in tables:
        for column, kind in expected_shape()[table]:
            condition = _out_of_bounds(column, kind)
            if condition:
                where = f"{table}.{column}"
                checks.append(f"(SELECT '{where}' FROM {alias}.{table} WHERE {condition} LIMIT 1)")
    found = con.execute(f"SELECT coalesce({', '.join(checks)})").fetchone()
    return found[0] if found else None
