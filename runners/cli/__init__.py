"""The `collsweep` command: thin argument parsing over plain functions."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from runners import __version__
from runners.cli.calibration import add_calibrate, add_verify
from runners.cli.catalog import add_algorithms
from runners.cli.cluster import add_merge, add_submit
from runners.cli.common import UsageError
from runners.cli.compare import add_compare
from runners.cli.importing import add_import
from runners.cli.labels import add_tag
from runners.cli.measure import add_sweep
from runners.cli.model import add_model_reading
from runners.cli.predict import add_predict
from runners.cli.recording import add_record
from runners.cli.results import (
    add_dashboard,
    add_migrate,
    add_reading,
    add_report,
    add_salvage,
)
from runners.cli.tuning import add_tune
from runners.cli.workload import add_workload
from runners.domain.errors import CollsweepError

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_verify,
    add_sweep,
    add_import,
    add_submit,
    add_merge,
    add_calibrate,
    add_reading,
    add_tag,
    add_predict,
    add_model_reading,
    add_compare,
    add_tune,
    add_workload,
    add_record,
    add_algorithms,
    add_report,
    add_dashboard,
    add_migrate,
    add_salvage,
]


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="collsweep",
        description="Sweep AllReduce algorithms on real MPI ranks, store the timings in DuckDB "
        "beside alpha-beta-gamma predictions, and browse them in a dashboard.",
    )
    parser.add_argument("--version", action="version", version=f"collsweep {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `collsweep` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except CollsweepError as exc:  # the one place an error becomes a message and a status
        print(f"collsweep {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print(f"collsweep {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader left (`| head`): nothing more to say, and no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


__all__ = ["UsageError", "build_parser", "main"]
