"""`collsweep predict`: one collective call's predicted time, split into its terms, with given or
stored parameters (`--algorithm all`: every algorithm, fastest first)."""

from __future__ import annotations

import argparse
import json
import math

import pandas as pd

from runners import store
from runners.analysis import run_analysis
from runners.analysis.run_analysis import model_of
from runners.cli.common import (
    UsageError,
    add_run_argument,
    add_store_option,
    byte_size,
    store_path,
)
from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.libraries import DEFAULT
from runners.domain.libraries.catalog import (
    ALGORITHMS,
    algorithms_of,
    algorithms_on,
    auto_refused,
    collective_list,
    is_library_call,
    library_of,
)
from runners.domain.model.calibration_id import GammaKey
from runners.domain.model.closed_form import NOT_SCHEDULES, predict
from runners.domain.model.fitting import PINGPONG_SOURCE
from runners.domain.units import format_bytes, format_per_byte, format_seconds

MAX_RANKS = 4096  # as a sweep's and a simulation's group sizes
MAX_BYTES = 2**40  # 1 TiB a call


def _check_prediction_input(args: argparse.Namespace) -> None:
    """UsageError for an algorithm, size or parameter the models cannot take."""
    if args.collective is None:  # a qualified name says its collective
        found = ALGORITHMS.get(args.algorithm)
        args.collective = found.collective if found is not None else "allreduce"
    try:
        (args.collective,) = collective_list([args.collective])
        if args.algorithm not in ("all", *NOT_SCHEDULES):
            (args.algorithm, *_) = algorithms_of([args.algorithm], [args.collective])
        auto_refused([args.algorithm], "predict")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.algorithm in ALGORITHMS and ALGORITHMS[args.algorithm].collective != args.collective:
        raise UsageError(
            f"{args.algorithm} is a {ALGORITHMS[args.algorithm].collective} algorithm; "
            f"add --collective {ALGORITHMS[args.algorithm].collective}"
        )
    if args.algorithm in NOT_SCHEDULES and args.collective != "allreduce":
        raise UsageError(f"{args.algorithm} models allreduce; name a {args.collective} algorithm")
    if not 1 <= args.ranks <= MAX_RANKS or not 0 <= args.bytes <= MAX_BYTES:
        raise UsageError(
            f"--ranks must be between 1 and {MAX_RANKS}, --bytes between 0 and "
            f"{format_bytes(MAX_BYTES)}"
        )
    itemsize = DTYPES[args.dtype].itemsize
    if args.bytes % itemsize:
        raise UsageError(f"--bytes must be a multiple of {args.dtype}'s {itemsize} bytes")
    for name in ("alpha", "beta", "gamma"):  # seconds, seconds a byte: 1 is far past any network
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and 0 <= value <= 1):
            raise UsageError(f"--{name} must be a number between 0 and 1 (seconds), got {value}")


def _stored_parameters(args: argparse.Namespace) -> tuple[float, float, float | None, str, str]:
    """(alpha, beta, gamma or None, calibration id, what alpha is) from the store's
    calibration: --calibration, else the run's own as every page picks it (--run), else the
    newest ping-pong one."""
    path = store_path(args)
    cal = None
    if args.calibration:
        cal = store.get_calibration(path, args.calibration)
    elif args.run:
        if store.get_run(path, args.run) is None:
            raise UsageError(f"no run {args.run!r} in {path}; see `collsweep runs`")
        ids = store.calibration_order(path, args.run)
        cal = next((c for i in ids if (c := store.get_calibration(path, i))), None)
    else:
        cal = store.latest_calibration(path, source=PINGPONG_SOURCE)
    if cal is None:
        which = f"calibration {args.calibration!r}" if args.calibration else "calibration"
        raise UsageError(
            f"no {which} in {path}: run `collsweep calibrate` first, or give --alpha, --beta "
            "and --gamma"
        )
    params = run_analysis.Params.from_row(cal)
    alpha, beta = params.at(args.bytes)
    return (
        alpha,
        beta,
        params.gamma(args.dtype, args.op),
        params.calibration_id,
        _alpha_is(params, args.bytes),
    )


def _alpha_is(params, nbytes: float) -> str:
    """What the alpha used at this size is: the start-up of the fit (a latency), or, for a
    size above a piecewise fit's first breakpoint, only the intercept of that segment's line."""
    start = params.segment_start(nbytes)
    return "latency" if start is None else f"intercept of the fit from {format_bytes(start)}"


def _prediction_parameters(
    args: argparse.Namespace,
) -> tuple[float, float, float, str | None, str]:
    """alpha, beta, gamma: those given, the rest from a stored calibration; its id, and what
    the alpha is (_alpha_is)."""
    given = (args.alpha, args.beta, args.gamma)
    if None not in given:
        return (*given, None, "latency")

    alpha, beta, gamma, cal_id, alpha_is = _stored_parameters(args)
    if gamma is None and args.gamma is None:
        key = GammaKey(args.dtype, args.op)
        raise UsageError(
            f"calibration {cal_id} has no gamma for {key}: give --gamma, or "
            f"run `collsweep calibrate --dtypes {args.dtype} --ops {args.op}`"
        )
    alpha = args.alpha if args.alpha is not None else alpha
    beta = args.beta if args.beta is not None else beta
    chosen_gamma = args.gamma if args.gamma is not None else gamma
    if chosen_gamma is None:  # said above; here for the type checker
        raise UsageError(f"calibration {cal_id} has no gamma")
    return alpha, beta, chosen_gamma, cal_id, alpha_is if args.alpha is None else "latency"


def prediction_report(args: argparse.Namespace) -> dict:
    """The predicted time and its three terms for the command line's point, as a dict."""
    _check_prediction_input(args)
    return _report(args, args.algorithm, _prediction_parameters(args))


def _report(args: argparse.Namespace, algorithm: str, parameters: tuple) -> dict:
    """One algorithm's closed-form prediction at the command line's point with `parameters`
    (alpha, beta, gamma, calibration id, what alpha is)."""
    alpha, beta, gamma, cal_id, alpha_is = parameters
    model = model_of(algorithm)
    if model is None:
        raise UsageError(f"{algorithm} has no model (its schedule is not one collsweep knows)")
    itemsize = DTYPES[args.dtype].itemsize
    point = (args.ranks, args.bytes, alpha, beta, gamma, itemsize)
    # library_min leaves out the library algorithms that cannot run the op (its library's)
    commutative, library = OPS[args.op].commutative, library_of(algorithm)
    collective = ALGORITHMS[algorithm].collective if algorithm in ALGORITHMS else "allreduce"
    if not COLLECTIVES[collective].reduces:
        point = (*point[:4], 0.0, itemsize)  # nothing reduced: gamma plays no part
    pred = predict(model, *point, commutative=commutative, library=library, collective=collective)
    return {
        "algorithm": algorithm,
        "collective": collective,
        "model": model,
        "ranks": args.ranks,
        "bytes": args.bytes,
        "dtype": args.dtype,
        "op": args.op,
        "calibration_id": cal_id,
        "alpha_s": alpha,
        "alpha_is": alpha_is,
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


def _alpha_note(alpha_is: str) -> str:
    """Nothing for a latency; for a segment's intercept, a warning that it is not one."""
    return "" if alpha_is == "latency" else f" (the {alpha_is}, not a latency)"


def _prediction_text(r: dict) -> str:

    source = f"calibration {r['calibration_id']}" if r["calibration_id"] else "given parameters"
    return "\n".join(
        [
            f"{r['algorithm']} on {r['ranks']} ranks, {format_bytes(r['bytes'])} "
            f"{r['dtype']}/{r['op']} (model {r['model']}, {source}, closed form):",
            f"  predicted  {format_seconds(r['predicted_s'])}",
            f"  latency    {format_seconds(r['latency_s'])} = {r['messages']:g} messages x alpha "
            f"{format_seconds(r['alpha_s'])}" + _alpha_note(r["alpha_is"]),
            f"  bandwidth  {format_seconds(r['bandwidth_s'])} = {format_bytes(r['bytes_sent'])} "
            f"sent x beta {format_per_byte(r['beta_s_per_byte'])}",
            f"  reduction  {format_seconds(r['reduction_s'])} = "
            f"{format_bytes(r['bytes_reduced'])} reduced x gamma "
            f"{format_per_byte(r['gamma_s_per_byte'])}",
        ]
    )


def run(args: argparse.Namespace) -> int:
    """Print the model's time for one collective call, split into its three terms (with
    `--algorithm all`, every algorithm that can run there, fastest first)."""
    if args.algorithm == "all":
        reports = _every_algorithm(args)
        print(json.dumps(reports, indent=1) if args.json else _ranking_text(reports))
        return 0
    report = prediction_report(args)
    print(json.dumps(report, indent=1) if args.json else _prediction_text(report))
    return 0


def _every_algorithm(args: argparse.Namespace) -> list[dict]:
    """The report of every modelled algorithm that can run this point, fastest first."""
    _check_prediction_input(args)
    parameters = _prediction_parameters(args)  # one calibration read for every algorithm
    commutative, itemsize = OPS[args.op].commutative, DTYPES[args.dtype].itemsize
    count = args.bytes // itemsize
    # the default library's names stand for every library's: the same schedules price the same
    reports = [
        _report(args, name, parameters)
        for name, spec in algorithms_on(DEFAULT.name, args.collective).items()
        if spec.unsupported_reason(args.ranks, args.op, commutative) is None
        and not COLLECTIVES[spec.collective].unsupported_count(count, args.ranks)
        and model_of(name) is not None  # not a node-aware composition: no model prices it
    ]
    return sorted(reports, key=lambda r: (r["predicted_s"], is_library_call(r["algorithm"])))


def _ranking_text(reports: list[dict]) -> str:
    """The ranking as a table in human units, with the point and parameters above it."""
    first = reports[0]
    source = first["calibration_id"] or "given parameters"
    head = (
        f"every algorithm on {first['ranks']} ranks, {format_bytes(first['bytes'])} "
        f"{first['dtype']}/{first['op']}, closed-form model ({source}), fastest first:"
    )
    table = pd.DataFrame(
        {
            "algorithm": [r["algorithm"] for r in reports],
            "model": [r["model"] for r in reports],
            **{
                term: [format_seconds(r[f"{term}_s"]) for r in reports]
                for term in ("predicted", "latency", "bandwidth", "reduction")
            },
        }
    )
    return head + "\n" + table.to_string(index=False)


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "predict",
        help="predict one collective call's time with the alpha-beta-gamma model",
        description="Print the predicted seconds of ALGORITHM on RANKS ranks for BYTES bytes "
        "per rank and its latency (alpha), bandwidth (beta) and reduction (gamma) terms. "
        "Parameters not given come from a stored ping-pong calibration (the newest, or "
        "--calibration): alpha and beta of the segment covering BYTES, gamma of DTYPE/OP. "
        "The library's autotuned 'mpi' is predicted as the fastest of the library's own "
        "algorithms (library_min).",
    )
    parser.add_argument(
        "--algorithm",
        required=True,
        help="e.g. ring, rabenseifner, mpi:ring, or all (ranked, fastest first)",
    )
    parser.add_argument(
        "--collective",
        help="allreduce (default), reduce_scatter, allgather, bcast or reduce: ALGORITHM is "
        "named within it (ring: that collective's ring)",
    )
    parser.add_argument("--ranks", type=int, required=True, help="number of ranks")
    parser.add_argument(
        "--bytes",
        type=byte_size,
        required=True,
        help="bytes of the whole vector (per rank for allreduce; K/M/G suffixes: binary)",
    )
    parser.add_argument("--alpha", type=float, help="seconds per message")
    parser.add_argument("--beta", type=float, help="seconds per byte sent")
    parser.add_argument("--gamma", type=float, help="seconds per byte reduced")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("--op", choices=sorted(OPS), default="sum")
    parser.add_argument("--calibration", metavar="ID", help="stored calibration to use")
    add_run_argument(
        parser,
        "--run",
        metavar="RUN",
        help="use RUN's own calibration, as every dashboard page does (its launches' first); "
        "default: the newest ping-pong calibration",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    add_store_option(parser)
    parser.set_defaults(handler=run)
