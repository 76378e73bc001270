"""`collsweep import`: other tools' results (IMB, OSU, nccl-tests) as a run."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from runners.analysis.run_analysis import analyze_run
from runners.cli.common import UsageError, add_store_option, store_path
from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.errors import Stopped
from runners.domain.imports import FORMATS
from runners.domain.libraries import LIBRARIES
from runners.jobs.importing import ImportRequest, import_files
from runners.jobs.sweep import signals_as_exceptions

MAX_RANKS = 1 << 24  # a group size no tool's output comes from: a typo, refused


def run(args: argparse.Namespace) -> int:
    """Store the files as one run, say what was stored and what to read next."""
    if args.ranks is not None and not 1 <= args.ranks <= MAX_RANKS:
        raise UsageError(f"--ranks must be between 1 and {MAX_RANKS}, got {args.ranks}")
    request = ImportRequest(
        paths=[Path(p) for p in args.files],
        fmt=args.format,
        library=args.library,
        ranks=args.ranks,
        collective=args.collective,
        command_line=command_line(args),
    )
    try:
        with signals_as_exceptions():
            result = import_files(store_path(args), request)
    except Stopped as stop:  # all or nothing: the main store was not touched, staging is gone
        print(f"collsweep import: stopped by {stop}: nothing imported", file=sys.stderr)
        return stop.signal_status
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    launches = "one launch each" if result.launches == 1 else f"up to {result.launches} launches"
    print(
        f"imported {result.files} {result.tool} file(s) as run {result.run_id}: "
        f"{result.points} points, {launches}"
    )
    if result.not_analysed:
        print(f"not analysed: {result.not_analysed}; its points can be queried and drawn")
        return 0

    analyze_run(store_path(args), result.run_id)
    print(f"verdict: `collsweep crossovers {result.run_id} --summary`; curves: the dashboard")
    return 0


def command_line(args: argparse.Namespace) -> str:
    """The import command as given (its options in one order), for the run's record."""
    words = ["collsweep", "import", *args.files]
    for option in ("format", "library", "ranks", "collective", "store"):
        value = getattr(args, option)
        if value is not None:
            words += [f"--{option}", str(value)]
    return shlex.join(words)


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "import",
        help="store IMB-MPI1, OSU micro-benchmarks or nccl-tests output as a run",
        description="Store the results of other tools as one run whose source is the tool: "
        "each file is one launch; files of the same configuration are launches of one job "
        "(the usual intervals over launches apply), files of different forced algorithms "
        "(NCCL_ALGO, I_MPI_ADJUST_*) are different algorithms of the run. Every number the "
        "tool printed is kept with the run; the median of each point is the tool's own "
        "figure (docs/guide/imports.md). A file that cannot be read "
        "exits 2 naming the file and line, and nothing is written.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="the tool's output, as saved")
    parser.add_argument(
        "--format", choices=FORMATS, help="the tool that wrote the files (default: detected)"
    )
    parser.add_argument(
        "--library",
        choices=tuple(LIBRARIES),
        help="the library whose ranks ran the files, where they do not name it (IMB and OSU "
        "print none; Intel MPI names itself with I_MPI_DEBUG set)",
    )
    parser.add_argument("--ranks", type=int, help="the group size of OSU files (OSU prints none)")
    parser.add_argument(
        "--collective",
        choices=tuple(COLLECTIVES),
        help="the collective of an nccl-tests file older than 2.16.7 whose name names no test",
    )
    add_store_option(parser)
    parser.set_defaults(handler=run)
