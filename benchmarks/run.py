"""`make bench`: run every figure and print the report (python benchmarks/run.py --help).

Figures: 1 harness overhead, 2 hand-written vs library, 3 time to precision, 4 dashboard
data (benchmarks/dashboard_data.py, when present), 5 physical limits, 6 reproducibility (the
quick preset swept twice), 7 model accuracy, 8 analysis time, 9 Intel MPI against IMB-MPI1,
10 the call recorder's added time per call.
--smoke runs every figure with tiny sizes, one round, the fewest ranks and no targets judged:
does every figure still run? A figure that ends in an error makes the run exit 1, whatever the
mode.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

if __package__ in (None, ""):  # run as a script: import from the repository, not benchmarks/
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks import (
    fig_adaptive,
    fig_analysis,
    fig_dashboard,
    fig_impi,
    fig_knobs,
    fig_library,
    fig_limits,
    fig_model,
    fig_overhead,
    fig_precision,
    fig_record,
    fig_repro,
    fig_simulate,
    fig_smpi,
    load,
    report,
)
from benchmarks.common import Figure, JobFailed
from benchmarks.mode import Mode

FIGURES: dict[int, tuple[str, Callable[[Mode], Figure]]] = {
    1: ("Harness overhead", fig_overhead.run),
    2: ("Hand-written vs library", fig_library.run),
    3: ("Time to precision", fig_precision.run),
    4: ("Dashboard data", fig_dashboard.run),
    5: ("Physical limits", fig_limits.run),
    6: ("Reproducibility", fig_repro.run),
    7: ("Model accuracy", fig_model.run),
    8: ("Analysis time", fig_analysis.run),
    9: ("Intel MPI vs IMB-MPI1", fig_impi.run),
    10: ("Recorder overhead", fig_record.run),
    11: ("Simulation at scale", fig_simulate.run),
    12: ("SimGrid against SMPI", fig_smpi.run),
    13: ("Knobs at scale", fig_knobs.run),
    14: ("Adaptive sweep", fig_adaptive.run),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The runner's options."""
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer repeats and smaller grids")
    size.add_argument(
        "--smoke",
        action="store_true",
        help="tiny sizes, one round, the fewest ranks, checks not judged: does every figure run?",
    )
    parser.add_argument(
        "--only", type=int, action="append", choices=sorted(FIGURES), help="run figure N only"
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=20.0,
        help="seconds to wait at most, before each figure, for other processes to leave the "
        "cores idle (default 20; 0 = do not wait)",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when any check misses")
    return parser.parse_args(argv)


def mode_of(args: argparse.Namespace) -> Mode:
    """The mode the options ask for."""
    return Mode.SMOKE if args.smoke else Mode.QUICK if args.quick else Mode.FULL


def run_figure(number: int, mode: Mode, settle_s: float) -> tuple[Figure, tuple[float, float]]:
    """One figure, with how busy other processes kept the machine before and during it.

    An exception becomes the figure's error; in a mode that judges nothing its checks are INFO.
    """
    title, runner = FIGURES[number]
    before = load.settle(settle_s) if settle_s > 0 else load.sample()
    start, clock = load.Snapshot.now(), time.monotonic()
    try:
        figure = runner(mode)
    except JobFailed as exc:
        figure = Figure(number, title, "", error=str(exc))
    except Exception as exc:  # one broken figure must not lose the others' report
        figure = Figure(number, title, "", error=f"{type(exc).__name__}: {exc}")
    figure.seconds = time.monotonic() - clock
    if not mode.judged:
        figure.checks = [replace(check, ok=None) for check in figure.checks]
    return figure, (before, load.other_cores(start, load.Snapshot.now()))


def main(argv: list[str] | None = None) -> int:
    """Run the chosen figures, printing each as it finishes, then the summary."""
    args = parse_args(argv)
    mode = mode_of(args)
    started = time.monotonic()
    print("\n".join(report.header(mode)), flush=True)
    figures = []
    for number in sorted(set(args.only or FIGURES)):
        figure, busy = run_figure(number, mode, args.settle)
        figures.append(figure)
        print("\n".join(report.figure_lines(figure, busy)), flush=True)
    print("\n".join(report.summary(figures, time.monotonic() - started)), flush=True)
    failed = report_errors(figures)
    missed = any(c.verdict == "MISS" for f in figures for c in f.checks)
    return 1 if failed or (args.strict and missed) else 0


def report_errors(figures: list[Figure]) -> bool:
    """Name every figure that ended in an error on stderr; whether any did."""
    for figure in figures:
        if figure.error:
            print(f"ERROR in figure {figure.number}: {figure.error}", file=sys.stderr, flush=True)
    return any(figure.error for figure in figures)


if __name__ == "__main__":
    sys.exit(main())
