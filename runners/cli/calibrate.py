"""`collsweep calibrate`: this machine's alpha, beta and gamma, measured on real ranks."""

from __future__ import annotations

import argparse
import json

from runners import store
from runners.cli.common import (
    UsageError,
    add_store_option,
    byte_size,
    json_value,
    name_list,
    store_path,
)
from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.libraries.catalog import known_names
from runners.domain.sweep import capacity
from runners.host.memory import available_bytes
from runners.jobs import calibrate

MAX_BUDGET_S = 3600.0  # an hour of ping-pong: far past any calibration's need
MAX_TIMEOUT_S = 86400.0


def _calibration_request(args: argparse.Namespace) -> tuple[list[int], list[str], list[str]]:
    """The ping-pong sizes, dtypes and ops asked for; UsageError for anything unusable."""
    dtypes = name_list(args.dtypes, DTYPES, "dtype")
    ops = name_list(args.ops, OPS, "op")
    try:
        sizes = calibrate.size_range(args.min_bytes, args.max_bytes, args.factor)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    calibrate.check_request(args.ranks, sizes, calibrate.DEFAULT_REDUCE_SIZES, dtypes, ops)
    timeout_ok = args.timeout is None or 0 < args.timeout <= MAX_TIMEOUT_S
    if not 0 < args.budget <= MAX_BUDGET_S or not timeout_ok:
        raise UsageError(
            f"--budget must be > 0 and at most {MAX_BUDGET_S:g} seconds, --timeout > 0 and at "
            f"most {MAX_TIMEOUT_S:g}"
        )
    too_big = capacity.payload_problem(
        [*sizes, *calibrate.DEFAULT_REDUCE_SIZES],
        args.ranks,
        available_bytes(),
        "--max-bytes",
        buffers=3,
    )
    if too_big:
        raise UsageError(too_big)
    return sizes, dtypes, ops


def run(args: argparse.Namespace) -> int:
    """Measure alpha, beta and gamma on real ranks and store the calibration."""
    sizes, dtypes, ops = _calibration_request(args)
    path = store_path(args)
    store.ensure_current(path)  # a damaged, foreign or read-only store: refused before measuring
    cal = calibrate.run_calibration(args.ranks, sizes, dtypes, ops, args.budget, args.timeout)
    store.add_calibration(path, cal)
    if args.json:
        print(json.dumps(cal, default=json_value, indent=1))
    else:
        print(calibrate.describe(cal))
        print(f"stored in {path}")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "calibrate",
        help="measure alpha, beta (ping-pong) and gamma (local reductions) and store them",
        description="Time a ping-pong between two real MPI ranks over message sizes MIN..MAX "
        "(x FACTOR) and the local reduction of each dtype x op, fit alpha and beta (piecewise "
        "where the library switches protocol; breakpoints recorded) and gamma per dtype/op, "
        "and store the calibration. Sweeps use the newest one for this host and MPI library.",
    )
    parser.add_argument("--ranks", type=int, default=2, help="ranks to launch (default 2)")
    parser.add_argument(
        "--min-bytes", type=byte_size, default=8, help="smallest message (default 8)"
    )
    parser.add_argument(
        "--max-bytes", type=byte_size, default=4 * 2**20, help="largest message (default 4 MiB)"
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
    parser.set_defaults(handler=run)
