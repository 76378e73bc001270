"""`collsweep query`: read-only SQL against the store, bounded in time, memory and rows."""

from __future__ import annotations

import argparse
import sys

from runners import store
from runners.cli.common import (
    UsageError,
    add_store_option,
    render,
    store_path,
)
from runners.store.user_query import run_user_query


def run(args: argparse.Namespace) -> int:
    """Run read-only SQL against the store, bounded in time, memory and rows."""
    if not 0 < args.timeout <= MAX_QUERY_S or not 1 <= args.max_rows <= MAX_ROWS:
        raise UsageError(
            f"--timeout must be > 0 and at most {MAX_QUERY_S:g} seconds, --max-rows between 1 "
            f"and {MAX_ROWS}"
        )
    store.storefile.set_read_memory_limit(args.memory_limit)
    sql = sys.stdin.read() if args.sql == "-" else args.sql
    frame = run_user_query(  # in a child process, so that its limits hold
        store_path(args), sql, time_limit=args.timeout, max_rows=args.max_rows
    )
    print(render(frame, args.format))
    if frame.attrs.get("truncated"):
        print(
            f"collsweep query: only the first {args.max_rows} rows are shown; raise --max-rows "
            "or narrow the query (LIMIT, WHERE) to see more",
            file=sys.stderr,
        )
    return 0


MAX_QUERY_S = 3600.0


MAX_ROWS = 10_000_000


def add(sub: argparse._SubParsersAction) -> None:
    query = sub.add_parser(
        "query",
        help="run read-only SQL against the store",
        description="Run SQL on a read-only connection with file access disabled (no writes, "
        "no ATTACH, no reading other files), stopped after --timeout and within "
        "--memory-limit, so it never holds the store long enough to stall a sweep. Tables and "
        "example queries: docs/schema.md. Give '-' to read the SQL from standard input.",
    )
    query.add_argument("sql", help="the SQL text, or - for standard input")
    add_store_option(query)
    query.add_argument(
        "--timeout", type=float, default=30.0, help="stop the query after this many s (30)"
    )
    query.add_argument(
        "--max-rows", type=int, default=10000, help="print at most this many rows (10000)"
    )
    query.add_argument(
        "--memory-limit", default="1GiB", help="DuckDB memory limit of the query (1GiB)"
    )
    query.add_argument("--format", choices=("table", "csv", "json"), default="table")
    query.set_defaults(handler=run)
