"""`collsweep report`: one self-contained HTML file of a run to share."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from runners import store
from runners.cli.common import (
    UsageError,
    add_run_argument,
    add_store_option,
    opened_store,
    reads_store,
)
from runners.domain.names import checked_run_id
from runners.domain.outputs import check_outputs
from runners.process.children import python


def run(args: argparse.Namespace) -> int:
    """Write one run's self-contained HTML report (python -m dashboard.report: the dashboard's
    figures, never imported here). Bad input is refused before the report is built."""
    run_id, path, out = checked_run_id(args.run), opened_store(args), Path(args.out)
    check_outputs([out])
    if store.get_run(path, run_id) is None:
        raise UsageError(f"no run {run_id!r} in {path}; see `collsweep runs`")
    path.close()  # the report's own process reads the store from here
    command = python("-m", "dashboard.report", run_id, "--store", str(path))
    return subprocess.run([*command, "--out", str(out)], check=False).returncode


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "report",
        help="write one run as a self-contained HTML file (verdict, curves, assumptions)",
        description="One HTML file to attach to a ticket: the run's verdict (winner strip, a "
        "sentence per group, precision), each group's curves (relative and absolute), the "
        "assumptions and the provenance. Plotly is inline: it opens without a server or the "
        "network. The Verdict page of the dashboard offers the same file.",
    )
    add_run_argument(parser, "run", help="run id or name (see collsweep runs)")
    parser.add_argument("--out", required=True, help="the HTML file to write")
    add_store_option(parser)
    reads_store(parser)
    parser.set_defaults(handler=run)
