"""`collsweep workload report W --run RUN`: the whole job's communication time per policy."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from runners import store
from runners.analysis.workload_report import report_workload
from runners.cli.common import UsageError, add_run_argument, add_store_option, store_path
from runners.cli.simulating import add_simulation_options, simulate_spec
from runners.cli.workload_texts import report_text
from runners.domain.names import run_id_problem
from runners.domain.sweep.simulated_run import simulated_words
from runners.domain.sweep.spec import spec_of
from runners.domain.sweep.workload_spec import workload_overrides
from runners.domain.workload.file import Workload, load_workload
from runners.jobs.replay import replay_workload

MAX_REPLAY_LAUNCHES = 100
MAX_RANKS = 4096  # the simulator's reach (docs/guide/simulation.md)


def cmd_report(args: argparse.Namespace) -> int:
    """Price every policy for the workload on the run (or, with --simulate, on a simulated run
    of its calls made now), store the report and print it."""
    workload = load_workload(Path(args.workload))
    if args.ranks is not None and not args.simulate:
        raise UsageError("--ranks prices the job at another scale: give it with --simulate")
    if args.simulate:
        if args.run or args.replay:
            raise UsageError("--simulate makes the run it prices: leave out --run and --replay")
        workload, args.run = _simulated(args, workload)
    if not args.run:
        raise UsageError("give --run RUN (the run whose points price the calls), or --simulate")
    if run_id_problem(args.run):
        raise UsageError(str(run_id_problem(args.run)))
    path = store_path(args)

    run = store.get_run(path, args.run)
    if run is None:
        raise UsageError(f"no run {args.run} in {path}: `collsweep runs` lists them")
    simulated = simulated_words(run.get("spec_toml"))
    if args.replay and simulated:
        raise UsageError(f"run {args.run} was {simulated}: there is nothing to replay")
    if not 1 <= args.launches <= MAX_REPLAY_LAUNCHES:
        raise UsageError(
            f"--launches must be between 1 and {MAX_REPLAY_LAUNCHES}, got {args.launches}"
        )
    report = report_workload(path, args.run, workload)
    if simulated:
        report.notes.append(
            f"run {args.run} was {simulated}: each total is the simulator's figure, with no "
            "interval and no paired verdict against the default (compare the totals)"
        )
    if args.replay:
        report.replays.extend(replay_workload(path, args.run, workload, report, args.launches))
    print(json.dumps(report_json(report), indent=1) if args.json else report_text(report))
    return 0


def _simulated(args: argparse.Namespace, workload: Workload) -> tuple[Workload, str]:
    """The workload (on --ranks ranks, if given) and the id of a simulated run of its calls on
    --platform, stored now."""
    if args.ranks is not None:
        if not 2 <= args.ranks <= MAX_RANKS:
            raise UsageError(f"--ranks {args.ranks}: give 2 to {MAX_RANKS}")
        workload = workload.on_ranks(args.ranks)
    try:
        spec = spec_of(None, workload_overrides(workload))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    run_id = simulate_spec(args, spec, quiet=True)
    assert run_id is not None  # the report's run is always stored
    return workload, run_id


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
    add_run_argument(parser, "--run", help="the run (id or name) whose points price the calls")
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="price the calls from a simulated run of them made now in SimGrid on --platform "
        "(stored like `collsweep simulate`'s), instead of --run",
    )
    parser.add_argument(
        "--ranks",
        type=int,
        help="with --simulate: the job on this many ranks (every call on a group of that "
        "size, the sizes as recorded)",
    )
    add_simulation_options(parser)
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
