"""The `collsweep` command: thin argument parsing over plain functions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from runners import __version__
from runners.catalog import ALGORITHMS, DTYPES, OPS, known_names


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit status 2, no traceback."""


def int_list(text: str) -> list[int]:
    """Parse '1,2,4' into [1, 2, 4]; every value must be an integer >= 1."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise UsageError(f"expected integers >= 1, got {text!r}")
    return values


def name_list(text: str, table: dict, what: str) -> list[str]:
    """Parse 'a,b' into names that must all be keys of `table`."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in table]
    if unknown or not names:
        raise UsageError(
            f"unknown {what} {', '.join(unknown) or text!r}; known: {known_names(table)}"
        )
    return names


def cmd_verify(args: argparse.Namespace) -> int:
    """Check every algorithm x dtype x op x count exactly on real ranks."""
    from runners.verify import VerifyPlan, failed, summary_table, verify

    plan = VerifyPlan(
        ranks=tuple(int_list(args.ranks)),
        algorithms=tuple(name_list(args.algorithms, ALGORITHMS, "algorithm")),
        dtypes=tuple(name_list(args.dtypes, DTYPES, "dtype")),
        ops=tuple(name_list(args.ops, OPS, "op")),
        counts=tuple(int_list(args.counts)) if args.counts else (),
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


def _add_verify(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "verify",
        help="check every algorithm's result exactly on real MPI ranks",
        description="Launch real MPI ranks (oversubscribing when ranks exceed cores) and "
        "check every algorithm x datatype x op over the counts 1, p-1, p, an odd count and a "
        "large count against a serial rank-ordered reference. Exits 1 on any mismatch.",
    )
    parser.add_argument("--ranks", default="1,2,3,4,5,8", help="group sizes (default 1,2,3,4,5,8)")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS), help="default: all")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="default: all")
    parser.add_argument("--ops", default=",".join(OPS), help="default: all")
    parser.add_argument("--counts", default="", help="element counts (default: edge counts per p)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per MPI job")
    parser.set_defaults(handler=cmd_verify)


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [_add_verify]


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="collsweep",
        description="Sweep AllReduce algorithms on real MPI ranks, store the timings in DuckDB "
        "beside alpha-beta-gamma predictions, and browse them in a dashboard.",
    )
    parser.add_argument("--version", action="version", version=f"collsweep {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `collsweep` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except UsageError as exc:
        print(f"collsweep {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"collsweep {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
