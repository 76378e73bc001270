"""The `collsweep` command: one module per command, each named after it
(`runners/cli/sweep.py` is `collsweep sweep`; `import_.py` is `collsweep import`), each with
`add(sub)`, its parser, and the handler its parser sets. Only the module of the command given
is imported, so each imports what it needs at its top and `collsweep predict` never loads
pandas; `collsweep --help` imports them all to list them."""

from __future__ import annotations

import argparse
import importlib
import keyword
import os
import sys
from collections.abc import Sequence

from runners import __version__
from runners.cli.common import command_store, resolve_runs
from runners.domain.errors import CollsweepError
from runners.process.terminal import visible_output

# Every command, in the order `collsweep --help` lists them, and the module that is it.
COMMANDS: dict[str, str] = {
    name: f"runners.cli.{name}_" if keyword.iskeyword(name) else f"runners.cli.{name}"
    for name in [
        "demo",
        "verify",
        "sweep",
        "simulate",
        "import",
        "submit",
        "merge",
        "calibrate",
        "runs",
        "query",
        "export",
        "tag",
        "predict",
        "crossovers",
        "analyze",
        "compare",
        "tune",
        "workload",
        "record",
        "algorithms",
        "report",
        "dashboard",
        "migrate",
        "salvage",
    ]
}


def command_of(argv: Sequence[str]) -> str | None:
    """The command an argument list names (its first word), None before one is given."""
    first = next(iter(argv), None)
    return first if first in COMMANDS else None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser with the given command only, or with every command."""
    parser = argparse.ArgumentParser(
        prog="collsweep",
        description="Sweep AllReduce algorithms on real MPI ranks, store the timings in DuckDB "
        "beside alpha-beta-gamma predictions, and browse them in a dashboard.",
    )
    parser.add_argument("--version", action="version", version=f"collsweep {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in [command] if command else COMMANDS:
        importlib.import_module(COMMANDS[name]).add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `collsweep` console script: whatever it prints has its control
    characters made visible (runners.process.terminal)."""
    with visible_output():
        return _command(sys.argv[1:] if argv is None else list(argv))


def _command(argv: list[str]) -> int:
    """Parse `argv` and run its command; an error becomes one line and an exit status."""
    args = build_parser(command_of(argv)).parse_args(argv)
    try:
        with command_store(args) as db:  # a reading command's one open of its store
            resolve_runs(args, db)
            return int(args.handler(args))
    except CollsweepError as exc:  # the one place an error becomes a message and a status
        print(f"collsweep {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print(f"collsweep {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader left (`| head`): nothing more to say, and no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
