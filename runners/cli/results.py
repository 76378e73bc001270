"""Subcommands that read or serve the store: runs, query, export, migrate, dashboard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runners.cli.common import (
    UsageError,
    add_store_option,
    render,
    store_path,
)
from runners.domain.units import format_bytes, parse_bytes


def cmd_runs(args: argparse.Namespace) -> int:
    """List the runs in the store."""
    from runners.store.reports import runs_table

    frame = runs_table(store_path(args))
    if args.format == "json":  # a list there; text and csv keep 'a,b'
        frame["tags"] = [tags.split(",") if tags else [] for tags in frame["tags"]]
    print(render(frame, args.format, human=True))
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    """Run read-only SQL against the store, bounded in time, memory and rows."""
    from runners import store
    from runners.store.user_query import run_user_query

    if not 0 < args.timeout <= MAX_QUERY_S or not 1 <= args.max_rows <= MAX_ROWS:
        raise UsageError(
            f"--timeout must be > 0 and at most {MAX_QUERY_S:g} seconds, --max-rows between 1 "
            f"and {MAX_ROWS}"
        )
    store.storefile.set_read_memory_limit(f"{memory_limit(args.memory_limit) // 2**20}MiB")
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
MIN_QUERY_MEMORY = 16 * 2**20


def memory_limit(text: str) -> int:
    """--memory-limit in bytes: a size (512MiB, 2GiB) between 16 MiB and the memory available
    now, so no limit can be lifted by a negative or absurd value."""
    from runners.host.memory import available_bytes

    try:
        limit = parse_bytes(text)
    except ValueError:
        limit = -1
    if not MIN_QUERY_MEMORY <= limit <= max(available_bytes(), MIN_QUERY_MEMORY):
        raise UsageError(
            f"--memory-limit must be a size between 16MiB and the {format_bytes(available_bytes())}"
            f" available now, got {text!r}"
        )
    return limit


def cmd_export(args: argparse.Namespace) -> int:
    """Write a run's tables to CSV or Parquet files."""
    from runners.store.reports import export_run

    try:
        written = export_run(store_path(args), args.run, Path(args.output), args.format)
    except OSError as exc:
        raise UsageError(f"cannot write into {args.output}: {exc.strerror or exc}") from None
    for path in written:
        print(path)
    return 0


def add_reading(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser(
        "runs",
        help="list the runs in the store",
        description="One line per run: its name and tags (`collsweep tag`), status, time, host, "
        "library, grid.",
    )
    add_store_option(runs)
    runs.add_argument("--format", choices=("table", "csv", "json"), default="table")
    runs.set_defaults(handler=cmd_runs)

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
    query.set_defaults(handler=cmd_query)

    export = sub.add_parser(
        "export",
        help="write a run's points, samples and predictions to files",
        description="Write the run's tables (runs, points, samples, and the model tables) "
        "as CSV or Parquet files into a folder.",
    )
    export.add_argument("run", help="run id (see collsweep runs)")
    export.add_argument("--format", choices=("csv", "parquet"), default="csv")
    export.add_argument("--output", default="data/exports", help="folder (default data/exports)")
    add_store_option(export)
    export.set_defaults(handler=cmd_export)


def cmd_salvage(args: argparse.Namespace) -> int:
    """Copy the readable rows of a damaged store into a new store."""
    from runners.store.salvage import salvage

    results = salvage(store_path(args), Path(args.new))
    for item in results:
        lost = f"; unreadable: {', '.join(item.lost_runs)}" if item.lost_runs else ""
        print(f"{item.table:<13}{item.rows:>10} rows{lost}")
    lost_any = any(item.lost_runs for item in results)
    print(f"salvaged into {args.new}" + (" (some rows were lost)" if lost_any else ""))
    return 1 if lost_any else 0


def add_salvage(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "salvage",
        help="copy what is readable from a damaged store into a new store",
        description="Read every table of a damaged store (whole, or run by run where that "
        "fails) and write the rows that could be read into a new store. Exits 1 when rows "
        "were lost.",
    )
    parser.add_argument("new", help="the new store to write (must not exist)")
    add_store_option(parser)
    parser.set_defaults(handler=cmd_salvage)


def cmd_migrate(args: argparse.Namespace) -> int:
    """Upgrade an older store to this collsweep's schema."""
    from runners import store

    old, new = store.migrate(store_path(args))
    print(f"schema {old} -> {new}" if old != new else f"already at schema {new}")
    return 0


def add_migrate(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "migrate",
        help="upgrade an older results store in place",
        description="Apply the forward schema migrations to the store.",
    )
    add_store_option(parser)
    parser.set_defaults(handler=cmd_migrate)


def cmd_dashboard(args: argparse.Namespace) -> int:
    """Serve the Streamlit dashboard on 127.0.0.1 for one store (python -m dashboard.serve)."""
    import signal
    import subprocess

    from runners.process.lifetime import dies_with_parent

    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port must be 1..65535, got {args.port}")
    command = [sys.executable, "-m", "dashboard.serve", "--store", str(store_path(args))]
    command += ["--port", str(args.port), *(["--open"] if args.open else [])]
    server = subprocess.Popen(command, preexec_fn=dies_with_parent())  # SIGKILL of us too
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())  # serve stops Streamlit too
    try:
        return server.wait()
    except KeyboardInterrupt:
        server.send_signal(signal.SIGINT)  # a terminal's Ctrl-C reached it already; no harm
        server.wait()
        return 130


def cmd_report(args: argparse.Namespace) -> int:
    """Write one run's self-contained HTML report (python -m dashboard.report: the dashboard's
    figures, never imported here). Bad input is refused before the report is built."""
    import subprocess

    from runners import store
    from runners.domain.names import checked_run_id
    from runners.domain.outputs import check_outputs

    run_id, path, out = checked_run_id(args.run), store_path(args), Path(args.out)
    check_outputs([out])
    if store.get_run(path, run_id) is None:
        raise UsageError(f"no run {run_id!r} in {path}; see `collsweep runs`")
    command = [sys.executable, "-m", "dashboard.report", run_id, "--store", str(path)]
    return subprocess.run([*command, "--out", str(out)], check=False).returncode


def add_report(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "report",
        help="write one run as a self-contained HTML file (verdict, curves, assumptions)",
        description="One HTML file to attach to a ticket: the run's verdict (winner strip, a "
        "sentence per group, precision), each group's curves (relative and absolute), the "
        "assumptions and the provenance. Plotly is inline: it opens without a server or the "
        "network. The Verdict page of the dashboard offers the same file.",
    )
    parser.add_argument("run", help="run id (see collsweep runs)")
    parser.add_argument("--out", required=True, help="the HTML file to write")
    add_store_option(parser)
    parser.set_defaults(handler=cmd_report)


def add_dashboard(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "dashboard",
        help="browse results in the Streamlit dashboard (127.0.0.1 only)",
        description="Start the dashboard on http://127.0.0.1:PORT. It reads the store through "
        "short read-only connections with file access disabled, so it never blocks a running "
        "sweep. Ctrl-C stops it.",
    )
    add_store_option(parser)
    parser.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    parser.add_argument("--open", action="store_true", help="open a browser tab as well")
    parser.set_defaults(handler=cmd_dashboard)
