"""`collsweep tune`: turn a run's measured winners into a tuning file the library reads."""

from __future__ import annotations

import argparse
from pathlib import Path

from runners.cli.common import add_store_option, int_list, store_path


def cmd_tune(args: argparse.Namespace) -> int:
    """Write the tuning file and its companions, then say what it chooses where."""
    from runners.analysis.tuning_files import TuneRequest, tune
    from runners.domain.tuning import band_ranges, posix_path, provenance_path

    out = Path(args.out)
    request = TuneRequest(
        store=store_path(args),
        run_id=args.run,
        out=out,
        ranks=tuple(int_list(args.ranks)) if args.ranks else (),
        dtype=args.dtype or "",
        op=args.op or "",
        validate_spec=Path(args.validate_spec) if args.validate_spec else None,
    )
    tunings = tune(request)
    for ranks, tuning in sorted(tunings.items()):
        bands = tuning.bands
        ranges = band_ranges([b.upto for b in bands])
        texts = [
            f"{where}: {b.algorithm or 'library default'}"
            for where, b in zip(ranges, bands, strict=True)
        ]
        over = " (oversubscribed: more ranks than cores, as asked)" if tuning.oversubscribed else ""
        print(f"p={ranks}{over}: " + "; ".join(texts))
    print(f"wrote {out} (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE),")
    print(f"      {posix_path(out)} (MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE),")
    print(f"      {provenance_path(out)} (where every boundary comes from)")
    if request.validate_spec:
        print(f"validate it: collsweep sweep {request.validate_spec}")
    else:
        print(f"time it: collsweep sweep SPEC --tuning-file {out} (adds mpi:tuned)")
    return 0


def add_tune(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "tune",
        help="write a tuning file for MPICH from a run's measured winners",
        description="For each group size of RUN, the decided winner among the library's own "
        "algorithms (mpi and the forced mpi:<name>) at every swept size, as a complete MPICH "
        "selection table (MPICH's own table for the version with the allreduce subtree "
        "replaced). Sizes that are undecided or won by the autotuned mpi keep the library's "
        "default. Boundaries lie at the measured crossovers, else at geometric midpoints. "
        "Writes OUT, OUT.posix.json (the one-node shared-memory table) and "
        "OUT.provenance.json; nothing when the run cannot make one.",
    )
    parser.add_argument("run", help="run id (see collsweep runs)")
    parser.add_argument("--out", required=True, help="the tuning file to write (JSON)")
    parser.add_argument("--library", choices=("mpich",), default="mpich", help="(MPICH only)")
    parser.add_argument(
        "--ranks",
        help="group sizes to tune, e.g. 2,4 (default: every group with a core per rank)",
    )
    parser.add_argument("--dtype", help="datatype whose winners decide (default: the run's first)")
    parser.add_argument("--op", help="the op whose winners decide (default: the run's first)")
    parser.add_argument(
        "--validate-spec",
        help="also write a sweep spec that times mpi:tuned beside mpi and the forced "
        "algorithms at the swept sizes and between them",
    )
    add_store_option(parser)
    parser.set_defaults(handler=cmd_tune)
