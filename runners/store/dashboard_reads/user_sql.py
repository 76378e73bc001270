"""Data of the SQL page: the schema doc's example queries and bounded user SQL."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd

from runners import store
from runners.store.dashboard_reads.base import StorePath
from runners.store.user_query import run_user_query

SCHEMA_DOC = Path(__file__).resolve().parents[3] / "docs" / "schema.md"
READ_STATEMENTS = frozenset({"SELECT", "EXPLAIN", "PRAGMA", "CALL"})
USER_SQL_TIMEOUT_S = 10.0
USER_SQL_MAX_ROWS = 10_000

# --- user SQL ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """An example query: its one-line description and the SQL."""

    title: str
    sql: str


FALLBACK_EXAMPLES = (
    Example(
        "The latest runs, with how many points each stored",
        "SELECT r.run_id, r.status, r.started_at, r.host, count(p.point_id) AS points\n"
        "FROM runs r LEFT JOIN points p USING (run_id)\nGROUP BY ALL\n"
        "ORDER BY r.started_at DESC\nLIMIT 10;",
    ),
)


def example_queries(doc: Path = SCHEMA_DOC) -> list[Example]:
    """The ```sql blocks of docs/schema.md, each titled by the whole paragraph before it (one
    sentence, backticks dropped).

    Falls back to a built-in list when the document is not there (an installed package).
    """
    try:
        text = doc.read_text(encoding="utf-8")
    except OSError:
        return list(FALLBACK_EXAMPLES)
    examples = []
    for block in re.finditer(r"```sql\n(.*?)```", text, flags=re.DOTALL):
        before = text[: block.start()].rstrip()
        paragraph = before.rsplit("\n\n", 1)[-1].rsplit("```", 1)[-1]
        title = " ".join(paragraph.split()).replace("`", "").rstrip(":")
        examples.append(Example(title, block.group(1).strip()))
    return examples or list(FALLBACK_EXAMPLES)


def schema_reference(doc: Path = SCHEMA_DOC) -> dict[str, pd.DataFrame]:
    """Every table of docs/schema.md with its columns: column, type and meaning, as the
    document's column tables give them ({} when the document is not there)."""
    try:
        text = doc.read_text(encoding="utf-8")
    except OSError:
        return {}
    tables: dict[str, pd.DataFrame] = {}
    for section in re.split(r"\n## ", text)[1:]:
        name = re.match(r"`(\w+)`", section)
        rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \| (.+) \|$", section, flags=re.MULTILINE)
        if name and rows:
            cells = [(c, t.strip(), m.strip().replace("`", "")) for c, t, m in rows]
            tables[name.group(1)] = pd.DataFrame(cells, columns=["column", "type", "meaning"])
    return tables


@dataclass(frozen=True)
class UserResult:
    """A user query's result: up to the row limit, whether more rows existed, and its time."""

    frame: pd.DataFrame
    truncated: bool
    seconds: float


def check_read_only(sql: str) -> None:
    """Raise QueryError unless ``sql`` is one read statement (SELECT, WITH, FROM, SHOW...)."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise store.QueryError(str(exc)) from None
    if not statements:
        raise store.QueryError("type a query first, e.g. SELECT * FROM runs")
    if len(statements) > 1:
        raise store.QueryError("one statement at a time, please")
    kind = statements[0].type.name
    if kind not in READ_STATEMENTS:
        raise store.QueryError(
            f"only read-only queries run here (SELECT, WITH, FROM, DESCRIBE, SHOW, SUMMARIZE, "
            f"EXPLAIN); this statement is {kind}"
        )


def run_user_sql(
    path: StorePath,
    sql: str,
    max_rows: int = USER_SQL_MAX_ROWS,
    timeout_s: float = USER_SQL_TIMEOUT_S,
) -> UserResult:
    """Run one read-only statement typed by a user, on a read-only connection.

    The statement must be a read (check_read_only); the connection refuses writes, ATTACH
    and file access anyway. It runs in a process of its own (runners.store.user_query), so
    that neither its memory nor its time can grow past the read memory limit or ``timeout_s``
    (killed just after), whatever DuckDB's own accounting misses; at most ``max_rows`` rows
    come back. Raises QueryError.
    """
    check_read_only(sql)
    started = time.monotonic()
    frame = run_user_query(path, sql, time_limit=timeout_s, max_rows=max_rows)
    return UserResult(frame, bool(frame.attrs.get("truncated")), time.monotonic() - started)
