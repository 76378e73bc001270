"""`collsweep verify`: every algorithm x datatype x op checked on real ranks against a serial
reference."""

from __future__ import annotations

import argparse
import sys

from runners.cli.common import (
    UsageError,
    int_list,
    name_list,
)
from runners.domain.algorithms.parameters import split_names
from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.libraries.catalog import (
    ALGORITHMS,
    BASE_OF_COLLECTIVE,
    algorithms_of,
    auto_refused,
    canonical_name,
    collective_list,
    not_runnable_problem,
)
from runners.domain.sweep.capacity import payload_problem, ranks_problem
from runners.host.machine import physical_cores
from runners.host.memory import available_bytes
from runners.jobs.launch import libraries_problem
from runners.jobs.verify import VerifyPlan, failed, is_verifiable, summary_table, verify


def run(args: argparse.Namespace) -> int:
    """Check every algorithm x dtype x op x count exactly on real ranks."""
    ranks = tuple(int_list(args.ranks))
    problem = ranks_problem(ranks, physical_cores())
    counts = tuple(int_list(args.counts)) if args.counts else ()
    algorithms = tuple(_verified_algorithms(args))
    if counts:  # each count of the widest dtype, on every rank of the largest group
        widest = max(DTYPES[d].itemsize for d in name_list(args.dtypes, DTYPES, "dtype"))
        checked = {COLLECTIVES[ALGORITHMS[a].collective] for a in algorithms}
        sizes = [c.checked_count(n, max(ranks)) * widest for c in checked for n in counts]
        free = available_bytes()
        problem = problem or payload_problem(sizes, max(ranks), free, "--counts (as bytes)")
    problem = problem or libraries_problem(sorted({ALGORITHMS[a].runs_on for a in algorithms}))
    if problem:
        raise UsageError(problem)
    plan = VerifyPlan(
        ranks=ranks,
        algorithms=algorithms,
        dtypes=tuple(name_list(args.dtypes, DTYPES, "dtype")),
        ops=tuple(name_list(args.ops, OPS, "op")),
        counts=counts,
        timeout_s=args.timeout,
    )
    rows = verify(plan, progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(summary_table(rows))
    bad = failed(rows)
    for row in bad:
        print(
            f"FAILED ranks={row['ranks']} {row['algorithm']} {row['dtype']} {row['op']} "
            f"count={row['count']}: {row['detail']}"
        )
    print(
        f"\n{len(rows) - len(bad)} of {len(rows)} checks correct or cleanly refused"
        f"{'' if not bad else f'; {len(bad)} FAILED'}"
    )
    return 1 if bad else 0


def _verified_algorithms(args: argparse.Namespace) -> list[str]:
    """The algorithms --algorithms names for the --collectives asked (default: each
    collective's hand-written ones and the library's own call); a family's member, such as
    hierarchical(node=2), written in its canonical form."""
    try:
        collectives = collective_list(part.strip() for part in args.collectives.split(","))
        if not args.algorithms:
            return [a for c in collectives for a in BASE_OF_COLLECTIVE[c]]
        asked = [canonical_name(name, {}) for name in split_names(args.algorithms)]
        names = algorithms_of(asked, collectives)
        auto_refused(names, "verify")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    imported_only = not_runnable_problem(names)
    if imported_only:
        raise UsageError(imported_only)
    refused = [n for n in names if not is_verifiable(n)]
    if refused:
        raise UsageError(f"cannot verify {', '.join(refused)}: configured by a file at start-up")
    return names


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "verify",
        help="check every algorithm's result exactly on real MPI ranks",
        description="Launch real MPI ranks (oversubscribing when ranks exceed cores) and "
        "check every algorithm x datatype x op over the counts 1, p-1, p, an odd count and a "
        "large count against a serial rank-ordered reference. Exits 1 on any mismatch.",
    )
    parser.add_argument("--ranks", default="1,2,3,4,5,8", help="group sizes (default 1,2,3,4,5,8)")
    parser.add_argument(
        "--collectives",
        default="allreduce",
        help="allreduce, reduce_scatter, allgather, bcast, reduce or all (default allreduce); "
        "counts of reduce_scatter and allgather are per block (the vector is p times longer)",
    )
    parser.add_argument(
        "--algorithms",
        default="",
        help="default: each collective's hand-written ones and mpi; any library's algorithm "
        "can be named (impi:ring, ring@openmpi, ...): each forced one in a launch of its own",
    )
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="default: all")
    parser.add_argument("--ops", default=",".join(OPS), help="default: all")
    parser.add_argument("--counts", default="", help="element counts (default: edge counts per p)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per MPI job")
    parser.set_defaults(handler=run)
