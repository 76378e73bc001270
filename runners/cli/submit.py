"""`collsweep submit`: a spec as a Slurm job array, one task per group size."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from runners.cli.common import UsageError, add_store_option, store_path
from runners.domain.sweep.run_labels import checked_name, checked_tags
from runners.domain.sweep.slurm import batch_script
from runners.jobs import submit
from runners.jobs.sweep import new_run_id


def run(args: argparse.Namespace) -> int:
    """Check, then submit (or with --dry-run print) the job array of a spec."""
    labels = sweep_label_options(args.name, args.tag or [])
    if args.nodes < 1:
        raise UsageError(f"--nodes must be >= 1, got {args.nodes}")
    request = submit.SubmitRequest(
        spec=submit.cluster_spec(Path(args.spec), args.oversubscribe),
        store=store_path(args).resolve(),
        run_id=new_run_id(),
        partition=args.partition or "",
        nodes=args.nodes,
        time=args.time or "",
        sbatch_args=tuple(args.sbatch_arg or ()),
        oversubscribe=args.oversubscribe,
        labels=labels,
    )
    if args.dry_run:
        print(batch_script(submit.submission(request, args.partition or "")), end="")
        return 0
    partition = submit.check_cluster(request)
    sub = submit.submission(request, partition)
    job = submit.submit(request, sub)
    groups = ", ".join(f"p={r}" for r in request.spec.ranks)
    print(f"submitted job {job}: run {request.run_id}, one task per group ({groups})")
    print(f"follow it:  squeue -j {job}   (task logs: {sub.shard_dir}/{job}_<task>.out)")
    print(f"then merge: collsweep merge --job {job} --store {shlex.quote(str(request.store))}")
    return 0


def sweep_label_options(name: str | None, tags: list[str]) -> tuple[str, ...]:
    """The --name and --tag options every task's sweep gets, checked now (exit 2)."""
    checked = checked_name(name)
    named = ("--name", checked) if checked else ()
    return (*named, *(word for tag in checked_tags(tags) for word in ("--tag", tag)))


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "submit",
        help="run a sweep spec as a Slurm job array, a shard store per task",
        description="Submit SPEC to Slurm as a job array with one task per group size. Each "
        "task sweeps its group inside its allocation with srun as the launcher, into a shard "
        "store of its own beside the main store (STORE.shards/RUN/JOB_TASK.duckdb), under one "
        "run id for the whole job; the job and task ids, node list and node count go into the "
        "run's provenance. Nothing is submitted when Slurm is missing, the partition unknown, "
        "or the largest group needs more cores than asked for.",
    )
    parser.add_argument("spec", help="TOML spec file")
    parser.add_argument("--partition", help="Slurm partition (default: the cluster's default)")
    parser.add_argument("--nodes", type=int, default=1, help="nodes per task (default 1)")
    parser.add_argument("--time", help="time limit per task, e.g. 00:30:00")
    parser.add_argument(
        "--sbatch-arg",
        action="append",
        metavar="ARG",
        help="an extra #SBATCH line, e.g. --sbatch-arg=--account=abc (repeatable)",
    )
    parser.add_argument(
        "--oversubscribe",
        action="store_true",
        help="allow groups larger than the allocation's cores (timed, and flagged)",
    )
    parser.add_argument("--name", metavar="TEXT", help="the run's name (as sweep --name)")
    parser.add_argument(
        "--tag", action="append", metavar="T", help="a tag of the run (as sweep --tag)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the script, submit nothing")
    add_store_option(parser)
    parser.set_defaults(handler=run)
