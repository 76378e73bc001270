"""`collsweep workload report W --run RUN`: the whole job's communication time per policy."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from runners import store
from runners.analysis.workload_report import report_workload
from runners.cli.common import UsageError, add_run_argument, add_store_option, store_path
from runners.cli.workload_texts import report_text
from runners.domain.names import run_id_problem
from runners.domain.workload.file import load_workload
from runners.jobs.replay import replay_workload

MAX_REPLAY_LAUNCHES = 100


def cmd_report(args: argparse.Namespace) -> int:
    """Price every policy for the workload on the run, store the report and print it."""
    workload = load_workload(Path(args.workload))
    if run_id_problem(args.run):
        raise UsageError(str(run_id_problem(args.run)))
    path = store_path(args)

    if store.get_run(path, args.run) is None:
        raise UsageError(f"no run {args.run} in {path}: `collsweep runs` lists them")
    if not 1 <= args.launches <= MAX_REPLAY_LAUNCHES:
        raise UsageError(
            f"--launches must be between 1 and {MAX_REPLAY_LAUNCHES}, got {args.launches}"
        )
    report = report_workload(path, args.run, workload)
    if args.replay:
        report.replays.extend(replay_workload(path, args.run, workload, report, args.launches))
    print(json.dumps(report_json(report), indent=1) if args.json else report_text(report))
    return 0


def report_json(report) -> dict[str, Any]:
    """The report as JSON: {"workload", "run_id", "notes", "policies": [{"policy", "total_s",
    "interval_low_s", "interval_high_s", ..., "replayed_s" where replayed, "calls": [...]}],
    "replays": [...]}."""
    replays = {r["policy"]: r for r in report.replays}
    return {
        "workload": report.workload.name,
        "run_id": report.run_id,
        "notes": report.notes,
        "policies": [
            p.row
            | {"replayed_s": replays.get(p.row["policy"], {}).get("replayed_s"), "calls": p.calls}
            for p in report.priced
        ],
        "replays": list(replays.values()),
    }


def add_report(actions: argparse._SubParsersAction) -> None:
    parser = actions.add_parser(
        "report",
        help="the whole job's communication time under each policy, from a run's points",
        description="Price the workload's calls with the run's points under every policy: "
        "default (each library's autotuned call), each algorithm for every call it ran, best "
        "(the decided winner per call) and each tuned file the run timed; each total with a "
        "95% interval over paired launches, its ratio to the default, the calls it speeds "
        "up and slows down, and the model's prediction. The report is stored with the run "
        "(tables workload_policies, workload_calls) for the dashboard's Workload page.",
    )
    parser.add_argument("workload", metavar="W", help="a workload file")
    add_run_argument(
        parser, "--run", required=True, help="the run (id or name) whose points price the calls"
    )
    parser.add_argument(
        "--json", action="store_true", help='{"policies": [{"policy", "total_s", ...}]}'
    )
    parser.add_argument(
        "--replay",
        action="store_true",
        help="also run the workload's calls in recorded order on real ranks under each "
        "replayable policy and store the replayed job time beside the sum of points",
    )
    parser.add_argument(
        "--launches", type=int, default=5, help="launches per policy of a replay (default 5)"
    )
    add_store_option(parser)
    parser.set_defaults(handler=cmd_report)
