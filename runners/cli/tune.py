"""`collsweep tune`: tuning files each library reads, from a run's winners, and the spec that
validates them."""

from __future__ import annotations

import argparse
from pathlib import Path

from runners import store
from runners.analysis.tuning_files import (
    TuneRequest,
    file_warnings,
    group_label,
    reach_notes,
    tune,
)
from runners.analysis.tuning_provenance import Tunings, file_bands, inferred_notes, placed
from runners.cli.common import (
    add_run_argument,
    add_store_option,
    int_list,
    opened_store,
    reads_store,
)
from runners.domain.libraries import DEFAULT, RUNNABLE, LibrarySpec
from runners.domain.libraries.catalog import local_name
from runners.domain.libraries.tuning import band_ranges, provenance_path
from runners.store.records import RunRecord


def run(args: argparse.Namespace) -> int:
    """Write the tuning file and its companions, then say what it chooses where."""
    out = Path(args.out)
    request = TuneRequest(
        store=opened_store(args),
        run_id=args.run[0],
        out=out,
        ranks=tuple(int_list(args.ranks)) if args.ranks else (),
        dtype=args.dtype or "",
        op=args.op or "",
        validate_spec=Path(args.validate_spec) if args.validate_spec else None,
        library=args.library,
        accept_provisional=args.accept_provisional,
        other_runs=tuple(args.run[1:]),
    )
    placements = tune(request)
    lib = request.spec
    runs = {placed(run): run for run in _runs(request)}
    for nodes, tunings in placements.items():
        where = f"{placement_label(nodes)}, " if len(placements) > 1 else ""
        if not tunings:
            print(f"{placement_label(nodes)}: library default everywhere (nothing decided)")
        _say_bands(tunings, lib, where)
        for warning in file_warnings(tunings, lib):
            print(f"warning: {where}{warning}")
        for note in reach_notes(tunings, lib):
            print(f"unmeasured: {where}{note}")
        for note in inferred_notes(runs[nodes], tunings):
            print(f"inferred: {where}{note}")
    for name, value in lib.tuning_env(out).items():
        print(f"wrote {value} ({name})")
    print(f"      {provenance_path(out)} (where every boundary comes from)")
    if request.validate_spec:
        print(f"validate it: collsweep sweep {request.validate_spec}")
    else:
        print(
            f"time it: collsweep sweep SPEC --libraries {lib.name} --tuning-file {out} "
            f"(adds {lib.tuned})"
        )
    return 0


def _runs(request: TuneRequest) -> list[RunRecord]:
    """The runs the file was made of (the first, and any other placements')."""
    ids = (request.run_id, *request.other_runs)
    return [run for run_id in ids if (run := store.get_run(request.store, run_id)) is not None]


def placement_label(nodes: int) -> str:
    """A placement in a line: `nodes of 4` or `one host`."""
    return f"nodes of {nodes}" if nodes else "one host"


def _say_bands(tunings: Tunings, lib: LibrarySpec, where: str) -> None:
    """A line per tuned group: what the file chooses in each band."""
    for collective, groups in tunings.items():
        for ranks, tuning in sorted(groups.items()):
            bands = file_bands(tuning, lib)
            ranges = band_ranges([b.upto for b in bands])
            texts = [
                f"{size}: {local_name(b.algorithm) if b.algorithm else 'library default'}"
                for size, b in zip(ranges, bands, strict=True)
            ]
            over = " (oversubscribed: more ranks than cores, as asked)"
            over = over if tuning.oversubscribed else ""
            print(f"{where}{group_label(collective, ranks)}{over}: " + "; ".join(texts))


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "tune",
        help="write a tuning file for MPICH or Intel MPI from a run's measured winners",
        description="For each group size of RUN, the decided winner among the library's own "
        "algorithms (its default and its forced <library>:<name>) at every swept size. MPICH: "
        "a complete selection table (MPICH's own table for the version with the allreduce "
        "subtree replaced; sizes undecided or won by the default keep the default), written "
        "as OUT and OUT.posix.json (the one-node shared-memory table). Intel MPI: its JSON "
        "tuning tree (I_MPI_TUNING), which must name a preset at every size, so sizes the "
        "default keeps name the preset measured closest to it. Boundaries lie at the "
        "measured crossovers, else at geometric midpoints. Also writes OUT.provenance.json; "
        "nothing when the run cannot make one.",
    )
    add_run_argument(
        parser,
        "run",
        nargs="+",
        help="run id or name (see collsweep runs); MPICH: several, one per placement of a "
        "sweep over ranks_per_node, make one file keyed by ranks per node",
    )
    parser.add_argument("--out", required=True, help="the tuning file to write (JSON)")
    parser.add_argument(
        "--library",
        choices=tuple(RUNNABLE),
        default=DEFAULT.name,
        help="whose file: mpich (default), openmpi (a coll/tuned rules file), impi",
    )
    parser.add_argument(
        "--ranks",
        help="group sizes to tune, e.g. 2,4 (default: every group with a core per rank)",
    )
    parser.add_argument("--dtype", help="datatype whose winners decide (default: the run's first)")
    parser.add_argument("--op", help="the op whose winners decide (default: the run's first)")
    parser.add_argument(
        "--validate-spec",
        help="also write a sweep spec that times the tuned entry (mpi:tuned, impi:tuned) "
        "beside the default and the forced algorithms at the swept sizes and between them",
    )
    parser.add_argument(
        "--accept-provisional",
        action="store_true",
        help="tune from winners the analysis marked provisional (the machine was busy before "
        "the sweep or changed state during it); refused otherwise",
    )
    add_store_option(parser)
    reads_store(parser)
    parser.set_defaults(handler=run)
