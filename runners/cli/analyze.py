"""`collsweep analyze`: a stored run's predictions, crossovers and assumption checks computed
again."""

from __future__ import annotations

import argparse

from runners.analysis import run_analysis
from runners.cli.common import (
    add_run_argument,
    add_store_option,
    store_path,
)


def run(args: argparse.Namespace) -> int:
    """(Re)compute a stored run's predictions, crossovers, best choices and assumptions."""
    summary = run_analysis.analyze_run(store_path(args), args.run)
    print(summary.describe())
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    analyze = sub.add_parser(
        "analyze",
        help="recompute a stored run's predictions, crossovers and assumption checks",
        description="Fit alpha, beta and gamma to RUN's own timings, predict every ok point "
        "with that fit and the run's ping-pong calibration, and store the predictions, "
        "crossovers, best choices, agreement and assumption checks (replacing earlier ones). "
        "A sweep does this when it ends.",
    )
    add_run_argument(analyze, "run", help="run id or name (see collsweep runs)")
    add_store_option(analyze)
    analyze.set_defaults(handler=run)
