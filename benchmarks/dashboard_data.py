"""How long each dashboard page's server-side work takes on a store of a million raw samples.

    .venv/bin/python benchmarks/dashboard_data.py [--samples 1000000] [--store PATH] [--keep]

Builds a synthetic store (tests/helpers/synthetic.py, a test fixture, written through
runners.store.add_points in batches) with two runs, then times, per page, the data functions
the page calls plus its figures, and a whole page script run under Streamlit's AppTest. Times
are medians of --repeat runs, printed with their ratio to a baseline measured in the same
process: a plain ``SELECT count(*) FROM samples`` through store.query (which includes opening
the store).
Also prints the store's size on disk per million samples. Not a timed test: it reports.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the synthetic store is a test fixture

from helpers import synthetic  # noqa: E402

from benchmarks.common import median_time  # noqa: E402
from dashboard import badges, charts, queries  # noqa: E402
from runners import store  # noqa: E402

APP = ROOT / "dashboard" / "app.py"
ALGORITHMS = synthetic.ALGORITHMS
RANKS = (2, 3, 4, 5, 6, 8)
SIZES = tuple(8 * 4**k for k in range(12))  # 8 B .. 32 MiB
DTYPES = ("float32", "float64")
OPS = ("sum", "max")
CELLS = len(ALGORITHMS) * len(RANKS) * len(SIZES) * len(DTYPES) * len(OPS)
RUNS = (("r20261201-120000-aaaa", datetime(2026, 12, 1, 12)), ("r20261202-120000-bbbb", None))


def specs(total_samples: int) -> list[synthetic.RunSpec]:
    """Two runs over the same grid, sharing ``total_samples`` samples between them."""
    per_point = max(1, total_samples // (len(RUNS) * CELLS))
    return [
        synthetic.RunSpec(
            run_id=run_id,
            started_at=started or datetime(2026, 12, 2, 12),
            ranks=RANKS,
            sizes=SIZES,
            dtypes=DTYPES,
            ops=OPS,
            samples=per_point,
            slowdown={} if i == 0 else {"ring": 1.2},
            seed=i,
        )
        for i, (run_id, started) in enumerate(RUNS)
    ]


def build(path: Path, total_samples: int) -> float:
    """Write the store; return the seconds it took."""
    started = time.perf_counter()
    synthetic.build_store(path, specs(total_samples))
    return time.perf_counter() - started


RUN_A, RUN_B = RUNS[0][0], RUNS[1][0]
CAL = synthetic.calibration_id("synth-node")
VIEW = queries.Scope(RUN_A, 3, "float32", "sum", tuple(ALGORITHMS), CAL)
WIDE = queries.Scope(RUN_A, dtype="float32", op="sum", calibration_id=CAL)


def runs_page(path: Path) -> None:
    """Runs: the runs table, one run's provenance and two runs' differences."""
    queries.runs_table(path)
    queries.run_details(path, [RUN_A])
    queries.provenance_diff(path, RUN_A, RUN_B)


def curves_page(path: Path) -> None:
    """Curves: pickers' grid, calibrations, the view's points and the figure."""
    queries.runs_table(path)
    queries.run_grid(path, RUN_A)
    queries.prediction_calibrations(path, RUN_A)
    data = queries.curves_data(path, VIEW)
    badges.badges(data.summary)
    queries.verdict(path, RUN_A, "float32", "sum", VIEW.ranks)
    marked = queries.envelope_crossovers(data.points, data.crossovers)
    charts.curves_figure(data.points, marked, "time")


def curves_with_passes(path: Path) -> None:
    """Curves with the per-pass table, aggregated from the raw samples."""
    curves_page(path)
    queries.pass_spread(path, VIEW)


def crossovers_page(path: Path) -> None:
    """Crossovers: best choices, agreement, crossovers and the heatmaps."""
    queries.runs_table(path)
    queries.run_grid(path, RUN_A)
    data = queries.crossover_data(path, WIDE)
    charts.best_heatmaps(data.measured_best, data.predicted_best)


def assumptions_page(path: Path) -> None:
    """Assumptions: every check of the run and the overview of all runs."""
    queries.runs_table(path)
    queries.assumptions_data(path, RUN_A)
    queries.assumption_overview(path)


def override_page(path: Path) -> None:
    """Override impact of mpi:ring, its summary, badges and figure."""
    scope = queries.Scope(RUN_A, dtype="float32", op="sum", algorithms=("mpi:ring", "mpi"))
    queries.runs_table(path)
    queries.run_grid(path, RUN_A)
    impact = queries.override_impact(path, scope, "mpi:ring")
    queries.override_summary(impact)
    queries.assumption_summary(path, scope)
    charts.override_figure(impact, "mpi:ring")


def model_fit_page(path: Path) -> None:
    """Model fit: calibrations, the ping-pong figure, fitted vs micro, residuals."""
    queries.calibrations(path)
    charts.pingpong_figure(queries.calibration(path, CAL) or {})
    queries.runs_table(path)
    queries.fit_comparison(path, RUN_A)
    queries.prediction_calibrations(path, RUN_A)
    queries.run_grid(path, RUN_A)
    queries.assumption_summary(path, WIDE)
    charts.residuals_figure(queries.residuals(path, WIDE))


def compare_page(path: Path) -> None:
    """Compare runs: ratios, both runs' badges, provenance and the figure."""
    queries.runs_table(path)
    ratios = queries.compare_runs(path, RUN_A, RUN_B).points
    queries.assumption_summary(path, queries.Scope(RUN_A))
    queries.assumption_summary(path, queries.Scope(RUN_B))
    queries.provenance_diff(path, RUN_A, RUN_B)
    charts.compare_figure(ratios, RUN_A, RUN_B)


EXAMPLES = {"count": None}  # how many example queries to time (None: all; --examples)


def sql_examples(path: Path) -> None:
    """Every example query of docs/schema.md (the SQL page runs one at a time)."""
    for example in queries.example_queries()[: EXAMPLES["count"]]:
        queries.run_user_sql(path, example.sql)


PAGES: dict[str, Callable[[Path], None]] = {
    "runs": runs_page,
    "curves": curves_page,
    "curves + per-pass samples": curves_with_passes,
    "crossovers": crossovers_page,
    "assumptions": assumptions_page,
    "override impact": override_page,
    "model fit": model_fit_page,
    "compare runs": compare_page,
    "sql (every example)": sql_examples,
}


def page_work(path: Path) -> dict[str, Callable[[], object]]:
    """Per page, its queries and figures for the default view, on one connection."""
    return {name: _on_one_connection(path, work) for name, work in PAGES.items()}


def _on_one_connection(path: Path, work: Callable[[Path], None]) -> Callable[[], None]:
    """``work`` inside queries.reading(path), as a page script runs (one store open)."""

    def run() -> None:
        """Open once, start with the overview as dashboard.ui.run_page does, then the page."""
        with queries.reading(path):
            queries.overview(path)
            work(path)

    return run


APP_PAGES = {
    "runs": "views/runs.py",
    "curves": "views/curves.py",
    "crossovers": "views/crossovers.py",
    "assumptions": "views/assumptions.py",
    "override impact": "views/override.py",
    "model fit": "views/model_fit.py",
    "compare runs": "views/compare.py",
    "sql": "views/sql.py",
}


def app_times(path: Path, repeat: int) -> dict[str, float]:
    """Median seconds of one whole page script run under AppTest (Streamlit included)."""
    from streamlit.testing.v1 import AppTest

    os.environ[store.STORE_ENV] = str(path)
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    out = {}
    for name, page in APP_PAGES.items():
        at.switch_page(page).run()
        if at.exception:
            raise RuntimeError(f"{name}: {at.exception[0].value}")
        out[name] = median_time(at.run, repeat)
    return out


def report(path: Path, repeat: int, with_app: bool) -> None:
    """Print the timings table and the store's size."""
    overview = queries.overview(path)
    baseline = median_time(lambda: store.query(path, "SELECT count(*) FROM samples"), repeat)
    size = path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob(path.name + ".wal"))
    print(f"store: {path} - {overview.runs} runs, {overview.points} points, ", end="")
    print(f"{overview.samples} samples")
    print(
        f"size on disk: {size / 1e6:.1f} MB = {size / overview.samples:.1f} MB per million samples"
    )
    print(f"baseline SELECT count(*) FROM samples: {baseline * 1000:.1f} ms\n")
    apps = app_times(path, repeat) if with_app else {}
    print(
        f"{'page':28} {'data+charts':>12} {'x baseline':>10} {'whole page':>11} {'x baseline':>10}"
    )
    for name, work in page_work(path).items():
        seconds = median_time(work, repeat)
        line = f"{name:28} {seconds * 1000:9.1f} ms {seconds / baseline:10.1f}"
        if name in apps:
            line += f" {apps[name] * 1000:8.1f} ms {apps[name] / baseline:10.1f}"
        print(line)


def main(argv: list[str] | None = None) -> int:
    """Build (or reuse) the store and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000, help="raw samples in all")
    parser.add_argument("--store", help="store file to build (or reuse, if it exists)")
    parser.add_argument("--repeat", type=int, default=5, help="timed repeats per measurement")
    parser.add_argument("--no-app", action="store_true", help="skip the AppTest page runs")
    parser.add_argument(
        "--examples", type=int, help="time only the first N example queries (each is a process)"
    )
    args = parser.parse_args(argv)
    EXAMPLES["count"] = args.examples
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.store) if args.store else Path(tmp) / "bench.duckdb"
        if not path.exists():
            print(f"building {args.samples} samples ({CELLS} points per run, 2 runs)...")
            print(f"built in {build(path, args.samples):.1f} s")
        report(path, args.repeat, not args.no_app)
    return 0


if __name__ == "__main__":
    sys.exit(main())
