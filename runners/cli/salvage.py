"""`collsweep salvage`: what a damaged store holds, copied into a new one."""

from __future__ import annotations

import argparse
from pathlib import Path

from runners.cli.common import (
    add_store_option,
    store_path,
)
from runners.store.salvage import salvage


def run(args: argparse.Namespace) -> int:
    """Copy the readable rows of a damaged store into a new store."""
    results = salvage(store_path(args), Path(args.new))
    for item in results:
        lost = f"; unreadable: {', '.join(item.lost_runs)}" if item.lost_runs else ""
        print(f"{item.table:<13}{item.rows:>10} rows{lost}")
    lost_any = any(item.lost_runs for item in results)
    print(f"salvaged into {args.new}" + (" (some rows were lost)" if lost_any else ""))
    return 1 if lost_any else 0


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "salvage",
        help="copy what is readable from a damaged store into a new store",
        description="Read every table of a damaged store (whole, or run by run where that "
        "fails) and write the rows that could be read into a new store. Exits 1 when rows "
        "were lost.",
    )
    parser.add_argument("new", help="the new store to write (must not exist)")
    add_store_option(parser)
    parser.set_defaults(handler=run)
