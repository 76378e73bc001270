"""`collsweep workload show|report|from-ddp|from-param`: a job's collective calls."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from runners.cli.workload_export import add_export
from runners.cli.workload_from import SOURCE_ACTIONS
from runners.cli.workload_report import add_report
from runners.cli.workload_texts import show_text
from runners.domain.workload.file import load_workload


def cmd_show(args: argparse.Namespace) -> int:
    """Print the workload's calls: a table, or a JSON list of objects with stable keys."""
    workload = load_workload(Path(args.workload))
    if args.json:
        print(json.dumps([call.as_json() for call in workload.calls], indent=1))
        return 0
    print(show_text(workload))
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "workload",
        help="a job's collective calls: show one, write one from DDP buckets or a PARAM "
        "trace, report a run's answer for the whole job",
        description="A workload is a JSON file of the collective calls one job makes "
        "(docs/guide/workloads.md): `collsweep record` writes one from a running program, "
        "`from-ddp` and `from-param` from what you have, `collsweep sweep --workload W` "
        "measures exactly its calls and `workload report` answers for the whole job.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = actions.add_parser("show", help="print a workload's calls")
    show.add_argument("workload", metavar="W", help="a workload file")
    show.add_argument(
        "--json",
        action="store_true",
        help="a JSON list of objects with the keys collective, bytes, dtype, op, ranks, "
        "calls (and root)",
    )
    show.set_defaults(handler=cmd_show)
    for add in WORKLOAD_ACTIONS:
        add(actions)


# Further actions register here: each takes the `workload` subparsers and adds its parser.
WORKLOAD_ACTIONS: list = [add_report, add_export]
WORKLOAD_ACTIONS += SOURCE_ACTIONS
