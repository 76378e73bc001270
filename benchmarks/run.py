"""`make bench`: run every figure and print the report (python benchmarks/run.py --help).

Figures: 1 harness overhead, 2 hand-written vs library, 3 time to precision, 4 dashboard
data (benchmarks/dashboard_data.py, when present), 5 physical limits, 6 reproducibility (the
quick preset swept twice).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: import from the repository, not benchmarks/
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks import (
    fig_dashboard,
    fig_library,
    fig_limits,
    fig_model,
    fig_overhead,
    fig_precision,
    fig_repro,
    load,
    report,
)
from benchmarks.common import Figure, JobFailed

FIGURES: dict[int, tuple[str, Callable[[bool], Figure]]] = {
    1: ("Harness overhead", fig_overhead.run),
    2: ("Hand-written vs library", fig_library.run),
    3: ("Time to precision", fig_precision.run),
    4: ("Dashboard data", fig_dashboard.run),
    5: ("Physical limits", fig_limits.run),
    6: ("Reproducibility", fig_repro.run),
    7: ("Model accuracy", fig_model.run),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The runner's options."""
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats and smaller grids")
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


def run_figure(number: int, quick: bool, settle_s: float) -> tuple[Figure, tuple[float, float]]:
    """One figure, with how busy other processes kept the machine before and during it."""
    title, runner = FIGURES[number]
    before = load.settle(settle_s) if settle_s > 0 else load.sample()
    start, clock = load.Snapshot.now(), time.monotonic()
    try:
        figure = runner(quick)
    except JobFailed as exc:
        figure = Figure(number, title, "", error=str(exc))
    except Exception as exc:  # one broken figure must not lose the others' report
        figure = Figure(number, title, "", error=f"{type(exc).__name__}: {exc}")
    figure.seconds = time.monotonic() - clock
    return figure, (before, load.other_cores(start, load.Snapshot.now()))


def main(argv: list[str] | None = None) -> int:
    """Run the chosen figures, printing each as it finishes, then the summary."""
    args = parse_args(argv)
    started = time.monotonic()
    print("\n".join(report.header("quick" if args.quick else "full")), flush=True)
    figures = []
    for number in sorted(set(args.only or FIGURES)):
        figure, busy = run_figure(number, args.quick, args.settle)
        figures.append(figure)
        print("\n".join(report.figure_lines(figure, busy)), flush=True)
    print("\n".join(report.summary(figures, time.monotonic() - started)), flush=True)
    failed = any(f.error for f in figures)
    missed = any(c.verdict == "MISS" for f in figures for c in f.checks)
    return 1 if failed or (args.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
