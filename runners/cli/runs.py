"""`collsweep runs`: the runs in the store, one line each."""

from __future__ import annotations

import argparse

from runners.cli.common import (
    add_store_option,
    opened_store,
    reads_store,
    render,
)
from runners.store.reports import runs_table


def run(args: argparse.Namespace) -> int:
    """List the runs in the store."""
    frame = runs_table(opened_store(args))
    if args.format == "json":  # a list there; text and csv keep 'a,b'
        frame["tags"] = [tags.split(",") if tags else [] for tags in frame["tags"]]
    print(render(frame, args.format, human=True))
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser(
        "runs",
        help="list the runs in the store",
        description="One line per run: its name and tags (`collsweep tag`), status, time, host, "
        "library, grid.",
    )
    add_store_option(runs)
    reads_store(runs)
    runs.add_argument("--format", choices=("table", "csv", "json"), default="table")
    runs.set_defaults(handler=run)
