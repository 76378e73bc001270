"""`collsweep merge`: the shards of a submitted job (or given files) merged into the store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runners import store
from runners.analysis import run_analysis
from runners.cli.common import UsageError, add_store_option, store_path
from runners.domain.status import PointStatus, RunStatus
from runners.jobs import merge


def run(args: argparse.Namespace) -> int:
    """Fold shard stores (given, or a job's) into the main store and analyse the merged runs."""
    main = store_path(args).resolve()
    if bool(args.job) == bool(args.shards):
        raise UsageError("give shard stores, or --job JOBID, not both")
    shards = [Path(s) for s in args.shards]
    logs: list[Path] = []
    if args.job:
        shards, logs = merge.job_shards(main, args.job)
        if not shards and not logs:
            raise UsageError(f"no shards of job {args.job} beside {main}")
    for failed in merge.failed_task_logs(logs):
        print(f"collsweep merge: {failed}", file=sys.stderr)
    results, runs = merge.merge(main, shards) if shards else ([], [])
    for result in results:
        if result.left:
            print(f"{result.shard.name}: left alone: {result.left}")
        else:
            print(f"{result.shard.name}: {result.added} points added, {result.replaced} replaced")

    for run in runs:
        print(f"run {run.run_id}: {run.status}{': ' + run.reason if run.reason else ''}")
        if store_has_points(main, run.run_id):
            run_analysis.analyze_run(main, run.run_id, progress=lambda _line: None)
            print(f"analysed; its verdict: collsweep crossovers {run.run_id} --summary")
    return 0 if runs and all(r.status == RunStatus.COMPLETE for r in runs) else 1


def store_has_points(main: Path, run_id: str) -> bool:
    """Whether the merged run has an ok point to analyse."""
    return bool(store.point_ids(main, run_id, [PointStatus.OK]))


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "merge",
        help="fold shard stores of a batch job into the main store",
        description="Fold SHARD stores (or every shard of --job JOBID beside the main store) "
        "into the main store in one transaction: idempotent, no point or sample twice, a "
        "shard from a newer collsweep refused, a shard still being written left alone. Each "
        "merged run gets the spec of all its tasks and its true status, and is analysed. A "
        "failed task's log is shown.",
    )
    parser.add_argument("shards", nargs="*", help="shard stores (JOB_TASK.duckdb)")
    parser.add_argument("--job", help="merge every shard of this Slurm job id")
    add_store_option(parser)
    parser.set_defaults(handler=run)
