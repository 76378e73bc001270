"""`collsweep export`: a run's tables written to CSV or Parquet files."""

from __future__ import annotations

import argparse
from pathlib import Path

from runners.cli.common import (
    UsageError,
    add_run_argument,
    add_store_option,
    opened_store,
    reads_store,
)
from runners.store.reports import export_run


def run(args: argparse.Namespace) -> int:
    """Write a run's tables to CSV or Parquet files."""
    try:
        written = export_run(opened_store(args), args.run, Path(args.output), args.format)
    except OSError as exc:
        raise UsageError(f"cannot write into {args.output}: {exc.strerror or exc}") from None
    for path in written:
        print(path)
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser(
        "export",
        help="write a run's points, samples and predictions to files",
        description="Write the run's tables (runs, points, samples, and the model tables) "
        "as CSV or Parquet files into a folder.",
    )
    add_run_argument(export, "run", help="run id or name (see collsweep runs)")
    export.add_argument("--format", choices=("csv", "parquet"), default="csv")
    export.add_argument("--output", default="data/exports", help="folder (default data/exports)")
    add_store_option(export)
    reads_store(export)
    export.set_defaults(handler=run)
