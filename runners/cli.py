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


def _json_value(value: object) -> object:
    """JSON for values json.dumps does not know (timestamps)."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


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
    path = _store_path(args)
    try:
        cal = calibrate.run_calibration(args.ranks, sizes, dtypes, ops, args.budget, args.timeout)
    except calibrate.CalibrationError as exc:
        print(f"collsweep calibrate: {exc}", file=sys.stderr)
        return 1
    store.add_calibration(path, cal)
    if args.json:
        print(json.dumps(cal, default=_json_value, indent=1))
    else:
        print(calibrate.describe(cal))
        print(f"stored in {path}")
    return 0


def _add_calibrate(sub: argparse._SubParsersAction) -> None:
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
    _add_store_option(parser)
    parser.set_defaults(handler=cmd_calibrate)


def _check_prediction_input(args: argparse.Namespace) -> None:
    """UsageError for an algorithm, size or parameter the models cannot take."""
    import math

    from runners.catalog import ALGORITHMS
    from runners.models import MODELS

    if args.algorithm not in ALGORITHMS and args.algorithm not in MODELS:
        known = known_names(dict.fromkeys([*ALGORITHMS, *MODELS]))
        raise UsageError(f"unknown algorithm {args.algorithm!r}; known: {known}")
    if args.ranks < 1 or args.bytes < 0:
        raise UsageError("--ranks must be >= 1 and --bytes >= 0")
    itemsize = DTYPES[args.dtype].itemsize
    if args.bytes % itemsize:
        raise UsageError(f"--bytes must be a multiple of {args.dtype}'s {itemsize} bytes")
    for name in ("alpha", "beta", "gamma"):
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise UsageError(f"--{name} must be a finite number >= 0, got {value}")


def _stored_parameters(args: argparse.Namespace) -> tuple[float, float, float | None, str]:
    """(alpha, beta, gamma or None, calibration id) from the store's calibration."""
    from runners import analysis, store
    from runners.calibrate import SOURCE

    path = _store_path(args)
    if args.calibration:
        cal = store.get_calibration(path, args.calibration)
    else:
        cal = store.latest_calibration(path, source=SOURCE)
    if cal is None:
        which = f"calibration {args.calibration!r}" if args.calibration else "calibration"
        raise UsageError(
            f"no {which} in {path}: run `collsweep calibrate` first, or give --alpha, --beta "
            "and --gamma"
        )
    params = analysis.Params.from_row(cal)
    alpha, beta = params.at(args.bytes)
    return alpha, beta, params.gamma(args.dtype, args.op), params.calibration_id


def _prediction_parameters(args: argparse.Namespace) -> tuple[float, float, float, str | None]:
    """alpha, beta, gamma: those given, the rest from a stored calibration."""
    given = (args.alpha, args.beta, args.gamma)
    if None not in given:
        return (*given, None)
    alpha, beta, gamma, cal_id = _stored_parameters(args)
    if gamma is None and args.gamma is None:
        raise UsageError(
            f"calibration {cal_id} has no gamma for {args.dtype}/{args.op}: give --gamma, or "
            f"run `collsweep calibrate --dtypes {args.dtype} --ops {args.op}`"
        )
    stored = (alpha, beta, gamma)
    alpha, beta, gamma = (g if g is not None else s for g, s in zip(given, stored, strict=True))
    return alpha, beta, gamma, cal_id


def prediction_report(args: argparse.Namespace) -> dict:
    """The predicted time and its three terms for the command line's point, as a dict."""
    from runners.analysis import model_of
    from runners.models import predict

    _check_prediction_input(args)
    alpha, beta, gamma, cal_id = _prediction_parameters(args)
    model = model_of(args.algorithm)
    itemsize = DTYPES[args.dtype].itemsize
    pred = predict(model, args.ranks, args.bytes, alpha, beta, gamma, itemsize)
    return {
        "algorithm": args.algorithm,
        "model": model,
        "ranks": args.ranks,
        "bytes": args.bytes,
        "dtype": args.dtype,
        "op": args.op,
        "calibration_id": cal_id,
        "alpha_s": alpha,
        "beta_s_per_byte": beta,
        "gamma_s_per_byte": gamma,
        "predicted_s": pred.total_s,
        "latency_s": pred.latency_s,
        "bandwidth_s": pred.bandwidth_s,
        "reduction_s": pred.reduction_s,
        "messages": pred.messages,
        "bytes_sent": pred.bytes_sent,
        "bytes_reduced": pred.bytes_reduced,
    }


def _prediction_text(r: dict) -> str:
    from runners.calibrate import format_bytes

    source = f"calibration {r['calibration_id']}" if r["calibration_id"] else "given parameters"
    return "\n".join(
        [
            f"{r['algorithm']} on {r['ranks']} ranks, {format_bytes(r['bytes'])} "
            f"{r['dtype']}/{r['op']} (model {r['model']}, {source}):",
            f"  predicted  {r['predicted_s']:.4e} s",
            f"  latency    {r['latency_s']:.4e} s  = {r['messages']:g} messages x alpha "
            f"{r['alpha_s']:.4e} s",
            f"  bandwidth  {r['bandwidth_s']:.4e} s  = {format_bytes(r['bytes_sent'])} sent x "
            f"beta {r['beta_s_per_byte']:.4e} s/B",
            f"  reduction  {r['reduction_s']:.4e} s  = {format_bytes(r['bytes_reduced'])} "
            f"reduced x gamma {r['gamma_s_per_byte']:.4e} s/B",
        ]
    )


def cmd_predict(args: argparse.Namespace) -> int:
    """Print the model's time for one allreduce, split into its three terms."""
    import json

    report = prediction_report(args)
    print(json.dumps(report, indent=1) if args.json else _prediction_text(report))
    return 0


def _add_predict(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "predict",
        help="predict one allreduce's time with the alpha-beta-gamma model",
        description="Print the predicted seconds of ALGORITHM on RANKS ranks for BYTES bytes "
        "per rank and its latency (alpha), bandwidth (beta) and reduction (gamma) terms. "
        "Parameters not given come from a stored ping-pong calibration (the newest, or "
        "--calibration): alpha and beta of the segment covering BYTES, gamma of DTYPE/OP. "
        "The library's autotuned 'mpi' is predicted with the lower_bound model.",
    )
    parser.add_argument("--algorithm", required=True, help="e.g. ring, rabenseifner, mpi:ring")
    parser.add_argument("--ranks", type=int, required=True, help="number of ranks")
    parser.add_argument("--bytes", type=int, required=True, help="bytes per rank")
    parser.add_argument("--alpha", type=float, help="seconds per message")
    parser.add_argument("--beta", type=float, help="seconds per byte sent")
    parser.add_argument("--gamma", type=float, help="seconds per byte reduced")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("--op", choices=sorted(OPS), default="sum")
    parser.add_argument("--calibration", metavar="ID", help="stored calibration to use")
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    _add_store_option(parser)
    parser.set_defaults(handler=cmd_predict)


def _crossovers_table(frame) -> str:
    """The crossovers for reading: sizes in B/KiB/MiB, no detail column."""
    from runners.calibrate import format_bytes

    shown = frame.drop(columns=["detail"]).copy()
    for column in ("bytes", "low_bytes", "high_bytes"):
        shown[column] = [
            "" if value != value else format_bytes(round(value)) for value in shown[column]
        ]
    return _render(shown, "table")


def cmd_crossovers(args: argparse.Namespace) -> int:
    """Print a run's measured and predicted crossovers (and, as a table, its agreement)."""
    from runners import analysis

    path = _store_path(args)
    try:
        frame = analysis.crossovers_frame(path, args.run)
        agreement = analysis.agreement_frame(path, args.run)
    except analysis.AnalysisError as exc:
        raise UsageError(str(exc)) from None
    if agreement.empty:
        print(
            f"run {args.run} has no analysis yet: `collsweep analyze {args.run}`", file=sys.stderr
        )
    if args.format != "table":
        print(_render(frame, args.format))
        return 0
    print(_crossovers_table(frame) if len(frame) else "(no crossovers)")
    print("\nagreement: share of points where the model's pick is the measured best")
    print(_render(agreement, "table"))
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    """(Re)compute a stored run's predictions, crossovers, best choices and assumptions."""
    from runners import analysis

    try:
        summary = analysis.analyze_run(_store_path(args), args.run)
    except analysis.AnalysisError as exc:
        raise UsageError(str(exc)) from None
    print(summary.describe())
    return 0


def _add_model_reading(sub: argparse._SubParsersAction) -> None:
    crossovers = sub.add_parser(
        "crossovers",
        help="a run's measured and predicted crossovers, and the model's agreement",
        description="For every pair of algorithms and (ranks, dtype, op) of RUN: where the "
        "measured medians change order (log-log interpolation, 90% bootstrap interval from "
        "the raw samples) and where each calibration's model predicts it (T_A = T_B within "
        "the swept sizes). algorithm_a is the faster below the crossover. As a table, also "
        "how often the model picks the measured best. Rows: the crossovers table "
        "(docs/schema.md).",
    )
    crossovers.add_argument("run", help="run id (see collsweep runs)")
    crossovers.add_argument("--format", choices=("table", "csv", "json"), default="table")
    _add_store_option(crossovers)
    crossovers.set_defaults(handler=cmd_crossovers)

    analyze = sub.add_parser(
        "analyze",
        help="recompute a stored run's predictions, crossovers and assumption checks",
        description="Fit alpha, beta and gamma to RUN's own timings, predict every ok point "
        "with that fit and the run's ping-pong calibration, and store the predictions, "
        "crossovers, best choices, agreement and assumption checks (replacing earlier ones). "
        "A sweep does this when it ends.",
    )
    analyze.add_argument("run", help="run id (see collsweep runs)")
    _add_store_option(analyze)
    analyze.set_defaults(handler=cmd_analyze)


def cmd_dashboard(args: argparse.Namespace) -> int:
    """Serve the Streamlit dashboard on 127.0.0.1 for one store."""
    from dashboard.serve import serve

    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port must be 1..65535, got {args.port}")
    return serve(_store_path(args), port=args.port, open_browser=args.open)


def _add_dashboard(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "dashboard",
        help="browse results in the Streamlit dashboard (127.0.0.1 only)",
        description="Start the dashboard on http://127.0.0.1:PORT. It reads the store through "
        "short read-only connections with file access disabled, so it never blocks a running "
        "sweep. Ctrl-C stops it.",
    )
    _add_store_option(parser)
    parser.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    parser.add_argument("--open", action="store_true", help="open a browser tab as well")
    parser.set_defaults(handler=cmd_dashboard)


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_verify,
    _add_sweep,
    _add_reading,
    _add_migrate,
    _add_dashboard,
    _add_calibrate,
    _add_predict,
    _add_model_reading,
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
