"""Subcommands that run ranks: verify, sweep and calibrate."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from runners.catalog import BASE_ALGORITHMS, DTYPES, OPS, known_names
from runners.cli.common import (
    UsageError,
    add_store_option,
    int_list,
    json_value,
    name_list,
    store_path,
)


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


def add_verify(sub: argparse._SubParsersAction) -> None:
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
            try:
                overrides[key] = [int(v) for v in text.split(",") if v.strip()]
            except ValueError:
                raise UsageError(f"{flag} expects comma-separated integers, got {text!r}") from None
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

    path = store_path(args)
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


def add_sweep(sub: argparse._SubParsersAction) -> None:
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
    add_store_option(parser)
    for flag, (_key, _kind, text) in SPEC_FLAGS.items():
        parser.add_argument(flag, help=text)
    parser.set_defaults(handler=cmd_sweep)


def _calibration_request(args: argparse.Namespace) -> tuple[list[int], list[str], list[str]]:
    """The ping-pong sizes, dtypes and ops asked for; UsageError for anything unusable."""
    from runners import calibrate

    dtypes = name_list(args.dtypes, DTYPES, "dtype")
    ops = name_list(args.ops, OPS, "op")
    try:
        sizes = calibrate.size_range(args.min_bytes, args.max_bytes, args.factor)
        calibrate.check_request(args.ranks, sizes, calibrate.DEFAULT_REDUCE_SIZES, dtypes, ops)
    except (ValueError, calibrate.CalibrationError) as exc:
        raise UsageError(str(exc)) from None
    if not args.budget > 0 or (args.timeout is not None and not args.timeout > 0):
        raise UsageError("--budget and --timeout must be > 0 seconds")
    return sizes, dtypes, ops


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Measure alpha, beta and gamma on real ranks and store the calibration."""
    import json

    from runners import calibrate, store

    sizes, dtypes, ops = _calibration_request(args)
    path = store_path(args)
    try:
        cal = calibrate.run_calibration(args.ranks, sizes, dtypes, ops, args.budget, args.timeout)
    except calibrate.CalibrationError as exc:
        print(f"collsweep calibrate: {exc}", file=sys.stderr)
        return 1
    store.add_calibration(path, cal)
    if args.json:
        print(json.dumps(cal, default=json_value, indent=1))
    else:
        print(calibrate.describe(cal))
        print(f"stored in {path}")
    return 0


def add_calibrate(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "calibrate",
        help="measure alpha, beta (ping-pong) and gamma (local reductions) and store them",
        description="Time a ping-pong between two real MPI ranks over message sizes MIN..MAX "
        "(x FACTOR) and the local reduction of each dtype x op, fit alpha and beta (piecewise "
        "where the library switches protocol; breakpoints recorded) and gamma per dtype/op, "
        "and store the calibration. Sweeps use the newest one for this host and MPI library.",
    )
    parser.add_argument("--ranks", type=int, default=2, help="ranks to launch (default 2)")
    parser.add_argument("--min-bytes", type=int, default=8, help="smallest message (default 8)")
    parser.add_argument(
        "--max-bytes", type=int, default=4 * 2**20, help="largest message (default 4 MiB)"
    )
    parser.add_argument("--factor", type=int, default=2, help="size step factor (default 2)")
    parser.add_argument("--dtypes", default="float32", help=f"datatypes: {known_names(DTYPES)}")
    parser.add_argument("--ops", default="sum", help=f"reduction ops: {known_names(OPS)}")
    parser.add_argument(
        "--budget", type=float, default=20.0, help="seconds of timing in all (default 20)"
    )
    parser.add_argument("--timeout", type=float, help="seconds before the job is killed")
    parser.add_argument("--json", action="store_true", help="print the stored row as JSON")
    add_store_option(parser)
    parser.set_defaults(handler=cmd_calibrate)
