"""`collsweep workload export W --format smpi --out DIR`: the workload as SMPI's
time-independent trace, to replay with `smpirun -replay DIR/index.txt`
(docs/guide/simulation.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runners.cli.common import UsageError
from runners.domain.outputs import write_texts
from runners.domain.units import wrapped
from runners.domain.workload.file import load_workload
from runners.domain.workload.smpi_trace import smpi_trace

INDEX = "index.txt"


def cmd_export(args: argparse.Namespace) -> int:
    """Write one trace file per rank and the index that lists them."""
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a folder")
    workload = load_workload(Path(args.workload))
    texts, notes = smpi_trace(workload)
    files = {out / f"rank-{rank}.txt": text for rank, text in texts.items()}
    index = "".join(f"{path.resolve()}\n" for path in files)
    out.mkdir(parents=True, exist_ok=True)
    write_texts({**files, out / INDEX: index}, inputs=[Path(args.workload)])
    for note in notes:
        print(wrapped(f"note: {note}"), file=sys.stderr)
    print(f"wrote {len(files)} rank traces and {out / INDEX}")
    print(f"replay: smpirun -np {len(files)} -platform P.xml -hostfile H -replay {out / INDEX} R")
    return 0


def add_export(actions: argparse._SubParsersAction) -> None:
    parser = actions.add_parser(
        "export",
        help="write the workload as SMPI's time-independent trace (smpirun -replay)",
        description="One trace file per rank (`<rank> allreduce <bytes> <flops>` lines, counts "
        "in bytes, a reduction one flop per element) and index.txt listing them, for "
        "`smpirun -replay DIR/index.txt` with an SMPI replay program.",
    )
    parser.add_argument("workload", metavar="W", help="a workload file")
    parser.add_argument("--format", choices=("smpi",), required=True, help="the trace format")
    parser.add_argument("--out", required=True, help="the folder to write the traces into")
    parser.set_defaults(handler=cmd_export)
