"""`collsweep record`: a running program's collective calls written as a workload."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from runners.cli.common import UsageError
from runners.cli.workload_texts import show_text
from runners.domain.errors import Stopped
from runners.domain.libraries import RUNNABLE
from runners.jobs import recorder_build
from runners.jobs.recording import record
from runners.jobs.sweep import signals_as_exceptions


def run(args: argparse.Namespace) -> int:
    """Run the command under the recorder, write the workload, print it and its notes."""
    command = list(args.argv)
    if command[:1] == ["--"]:
        command = command[1:]
    if args.build:
        if command or args.out:
            raise UsageError("--build takes no command and no --out")
        for name, result in recorder_build.build_all():
            print(f"{name}: {result}")
        return 0
    if not args.out:
        raise UsageError("--out W is required: the workload file to write")
    try:
        with signals_as_exceptions():
            workload = record(command, Path(args.out), args.name, args.library)
    except Stopped as stop:  # the program's group and the records' folder are gone with it
        print(f"collsweep record: stopped by {stop}: the program was killed, nothing written",
              file=sys.stderr)  # fmt: skip
        return stop.signal_status
    for note in workload.notes:
        print(f"collsweep record: note: {note}", file=sys.stderr)
    print(show_text(replace(workload, notes=())))
    print(f"wrote {args.out}")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "record",
        help="run an MPI program and record the collective calls it makes as a workload",
        description="Run LAUNCHER PROGRAM... (no shell) with collsweep's call recorder "
        "preloaded into its ranks and write the collective calls they made as a workload "
        "(docs/guide/workloads.md): MPI_Allreduce, MPI_Bcast, MPI_Reduce, MPI_Allgather "
        "and MPI_Reduce_scatter_block with their sizes, datatypes, ops, group sizes, roots, "
        "counts and order, as world rank 0 made them; other collectives are counted in the "
        "notes, and ranks that disagree about a call are named there. What the program "
        "computes is unchanged. A program that fails writes nothing; collsweep exits with "
        "its status.",
    )
    parser.add_argument("--out", metavar="W", help="the workload file to write (JSON)")
    parser.add_argument("--name", help="the workload's name (default: from the program's name)")
    parser.add_argument(
        "--library",
        choices=sorted(RUNNABLE),
        help="the MPI library the ranks run (default: the one whose prefix holds the "
        "launcher, else mpich)",
    )
    parser.add_argument(
        "--build",
        action="store_true",
        help="build the recorder for every installed library now and exit (`make install` "
        "does; otherwise the first record builds it)",
    )
    parser.add_argument(
        "argv",
        nargs=argparse.REMAINDER,
        metavar="-- LAUNCHER PROGRAM...",
        help="the command to run, e.g. -- mpiexec -n 2 python train.py",
    )
    parser.set_defaults(handler=run)
