"""The `collsweep` command: thin argument parsing over plain functions."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from runners import __version__
from runners.catalog import BASE_ALGORITHMS, DTYPES, OPS, known_names


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
        algorithms=tuple(name_list(args.algorithms, BASE_ALGORITHMS, "algorithm")),
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
    parser.add_argument("--algorithms", default=",".join(BASE_ALGORITHMS), help="default: all")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="default: all")
    parser.add_argument("--ops", default=",".join(OPS), help="default: all")
    parser.add_argument("--counts", default="", help="element counts (default: edge counts per p)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per MPI job")
    parser.set_defaults(handler=cmd_verify)


SPEC_FLAGS = {
    # flag: (spec key, parser, help)
    "--sizes": ("sizes", "sizes", "bytes: '8,64,512' or MIN:MAX[:FACTOR], e.g. 8:4194304:8"),
    "--ranks": ("ranks", "ints", "group sizes, e.g. 2,3,4,8"),
    "--dtypes": ("dtypes", "names", f"datatypes: {known_names(DTYPES)}"),
    "--ops": ("ops", "names", f"reduction ops: {known_names(OPS)}"),
    "--algorithms": ("algorithms", "names", "algorithms, e.g. ring,mpi,mpi:ring (see README)"),
    "--warmup": ("warmup", int, "untimed calls before timing each point and pass"),
    "--min-iterations": ("min_iterations", int, "timed iterations at least (all passes)"),
    "--max-iterations": ("max_iterations", int, "timed iterations at most (all passes)"),
    "--target-ci": (
        "target_rel_ci",
        float,
        "stop once the median's 95%% CI half-width is "
        "within this fraction of the median, e.g. 0.05",
    ),
    "--budget": ("budget_s", float, "seconds of timing per point (all passes)"),
    "--passes": ("passes", int, "interleaved passes over the algorithms (drift control)"),
    "--cache-mode": (
        "cache_mode",
        str,
        "hot: one reused buffer; cold: rotate buffers larger than the last-level cache",
    ),
    "--launcher": (
        "launcher",
        str,
        "launcher template, e.g. 'srun -n {ranks}' (default 'mpiexec -n {ranks}')",
    ),
    "--thread-level": ("thread_level", str, "MPI thread level to initialise (default single)"),
    "--point-timeout": (
        "point_timeout_s",
        float,
        "watchdog: seconds without progress before a job is declared hung",
    ),
}


def _sizes_override(text: str) -> list[int] | dict[str, int]:
    if ":" in text:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise UsageError(f"--sizes range must be MIN:MAX[:FACTOR], got {text!r}")
        keys = ("min", "max", "factor")[: len(parts)]
        try:
            return dict(zip(keys, (int(p) for p in parts), strict=True))
        except ValueError:
            raise UsageError(f"--sizes range must be integers, got {text!r}") from None
    return int_list(text)


def spec_overrides(args: argparse.Namespace) -> dict:
    """The spec keys given on the command line, parsed to TOML-like values."""
    overrides: dict = {}
    for flag, (key, kind, _help) in SPEC_FLAGS.items():
        text = getattr(args, flag.lstrip("-").replace("-", "_"))
        if text is None:
            continue
        if kind == "sizes":
            overrides[key] = _sizes_override(text)
        elif kind == "ints":
            overrides[key] = [int(v) for v in text.split(",") if v.strip().lstrip("-").isdigit()]
            if len(overrides[key]) != len([v for v in text.split(",") if v.strip()]):
                raise UsageError(f"{flag} expects comma-separated integers, got {text!r}")
        elif kind == "names":
            overrides[key] = [v.strip() for v in text.split(",") if v.strip()]
        else:
            try:
                overrides[key] = kind(text)
            except ValueError:
                raise UsageError(f"{flag} expects a {kind.__name__}, got {text!r}") from None
    return overrides


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run (or resume) a sweep into the store."""
    from runners.spec import SpecError, load_spec
    from runners.sweep import resume_spec, run_sweep

    path = _store_path(args)
    try:
        if args.resume:
            if args.spec:
                raise UsageError("give either SPEC or --resume RUN, not both")
            spec = resume_spec(path, args.resume)
            if spec_overrides(args):
                raise UsageError("--resume reuses the run's own spec; drop the other options")
        elif not args.spec:
            raise UsageError("a spec file is needed, e.g. data/quick.toml")
        else:
            spec = load_spec(Path(args.spec), spec_overrides(args))
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    outcome = run_sweep(spec, path, command_line=shlex.join(sys.argv), run_id=args.resume)
    print(
        f"run {outcome.run_id}: {outcome.status}, {outcome.measured} of {outcome.total} "
        f"points done{': ' + outcome.reason if outcome.reason else ''}"
    )
    print(f"store: {path}")
    if outcome.status == "interrupted":
        print(f"finish it with: collsweep sweep --resume {outcome.run_id} --store {path}")
        return 130
    return 0 if outcome.status == "complete" else 1


def _add_sweep(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "sweep",
        help="run a sweep spec on real MPI ranks and store the results",
        description="Run every algorithm x ranks x bytes x dtype x op of a TOML spec "
        "(presets: data/quick.toml, data/standard.toml). The ranks are launched once per "
        "(ranks, library configuration); every finished point is stored at once, so an "
        "interrupted sweep keeps its points and --resume finishes the rest. Options "
        "override the spec's keys.",
    )
    parser.add_argument("spec", nargs="?", help="TOML spec file")
    parser.add_argument("--resume", metavar="RUN", help="finish the missing points of RUN")
    _add_store_option(parser)
    for flag, (_key, _kind, text) in SPEC_FLAGS.items():
        parser.add_argument(flag, help=text)
    parser.set_defaults(handler=cmd_sweep)


def _store_path(args: argparse.Namespace) -> Path:
    from runners.store import default_store

    return Path(args.store) if args.store else default_store()


def _add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", help="results store (default: $COLLSWEEP_STORE or data/collsweep.duckdb)"
    )


def cmd_runs(args: argparse.Namespace) -> int:
    """List the runs in the store."""
    from runners.reports import runs_table

    print(_render(runs_table(_store_path(args)), args.format))
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    """Run read-only SQL against the store."""
    from runners import store

    sql = sys.stdin.read() if args.sql == "-" else args.sql
    try:
        frame = store.query(_store_path(args), sql)
    except store.QueryError as exc:
        raise UsageError(f"query failed: {exc}") from None
    print(_render(frame, args.format))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write a run's tables to CSV or Parquet files."""
    from runners.reports import export_run

    written = export_run(_store_path(args), args.run, Path(args.output), args.format)
    for path in written:
        print(path)
    return 0


def _render(frame, fmt: str) -> str:
    if fmt == "csv":
        return frame.to_csv(index=False).rstrip("\n")
    if fmt == "json":
        return frame.to_json(orient="records", date_format="iso", indent=1)
    return frame.to_string(index=False) if len(frame) else "(no rows)"


def _add_reading(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser(
        "runs",
        help="list the runs in the store",
        description="One line per run: status, time, host, library, grid.",
    )
    _add_store_option(runs)
    runs.add_argument("--format", choices=("table", "csv", "json"), default="table")
    runs.set_defaults(handler=cmd_runs)

    query = sub.add_parser(
        "query",
        help="run read-only SQL against the store",
        description="Run SQL on a read-only connection with file access disabled (no writes, "
        "no ATTACH, no reading other files). Tables and example queries: docs/schema.md. "
        "Give '-' to read the SQL from standard input.",
    )
    query.add_argument("sql", help="the SQL text, or - for standard input")
    _add_store_option(query)
    query.add_argument("--format", choices=("table", "csv", "json"), default="table")
    query.set_defaults(handler=cmd_query)

    export = sub.add_parser(
        "export",
        help="write a run's points, samples and predictions to files",
        description="Write the run's tables (runs, points, samples, and the model tables) "
        "as CSV or Parquet files into a folder.",
    )
    export.add_argument("run", help="run id (see collsweep runs)")
    export.add_argument("--format", choices=("csv", "parquet"), default="csv")
    export.add_argument("--output", default="data/exports", help="folder (default data/exports)")
    _add_store_option(export)
    export.set_defaults(handler=cmd_export)


def cmd_migrate(args: argparse.Namespace) -> int:
    """Upgrade an older store to this collsweep's schema."""
    from runners import store

    old, new = store.migrate(_store_path(args))
    print(f"schema {old} -> {new}" if old != new else f"already at schema {new}")
    return 0


def _add_migrate(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "migrate",
        help="upgrade an older results store in place",
        description="Apply the forward schema migrations to the store.",
    )
    _add_store_option(parser)
    parser.set_defaults(handler=cmd_migrate)


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_verify,
    _add_sweep,
    _add_reading,
    _add_migrate,
]


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
    except Exception as exc:
        from runners.store import StoreError

        if not isinstance(exc, StoreError):
            raise
        print(f"collsweep {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"collsweep {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
