"""Figure 6: do the numbers hold up when the sweep is run again, back to back and later?

The quick preset (data/quick.toml, as `make demo` sweeps it) is swept three times back to back
(A, B, C), then once more after a gap (D: 5 minutes; 1 minute with --quick; none with --smoke),
as separate `collsweep sweep` commands into one store, so C and D learn the host's run-to-run
variation from the runs before them (runners.domain.verdict.history; from three runs on). Printed,
per
group size (p > 2 is oversubscribed here and reported apart, never a target):
(a) coverage: the share of points whose median in a repeat lies inside a run's stored interval,
    for the back-to-back pairs (every ordered pair of A, B, C) and for the pair across the gap
    (D in C's interval), against the same share for the interval over launches alone and for
    the within-launch CI (the baselines: what the launches, and what one launch, claim);
(b) agreement: among cells decided in both runs, the share with the same winner, against the
    share of all cells whose fastest median is the same algorithm (the baseline), over all pairs;
(c) the share of cells decided;
(d) each sweep's wall time.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from benchmarks.common import Check, Figure, JobFailed, log, run_command, table
from benchmarks.mode import Mode, write_spec
from runners.store import across_runs

TARGETS = {"coverage": 0.90, "agreement": 0.95, "decided": 0.60, "wall_s": 150.0}
BOUNDS = {  # the interval each coverage reads
    "stored": ("interval_low_s", "interval_high_s"),
    "launches": ("launch_low_s", "launch_high_s"),
    "ci": ("ci_low_s", "ci_high_s"),
}


def sweep_repeatedly(spec: Path, store_path: Path, times: int, gap_s: float) -> list[float]:
    """Separate sweeps of the spec file into one store, the last one `gap_s` after the one
    before; their wall times."""
    argv = [sys.executable, "-m", "runners.cli", "sweep", str(spec), "--store", str(store_path)]
    walls = []
    for attempt in range(1, times + 1):
        if attempt == times and gap_s:
            log(f"figure 6: waiting {gap_s:.0f} s before the last sweep")
            time.sleep(gap_s)
        log(f"figure 6: sweep {attempt} of {times}")
        started = time.monotonic()
        result = run_command(argv, timeout=900)
        if result.returncode != 0 or result.timed_out:
            tail = " | ".join(result.stderr.strip().splitlines()[-3:])
            raise JobFailed(f"collsweep sweep failed: {tail}")
        walls.append(time.monotonic() - started)
    return walls


def _pairs(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """Every ordered pair of different runs in the frame."""
    runs = sorted(frame.run_id.unique())
    return [(a, b) for a in runs for b in runs if a != b]


def coverage(
    points: pd.DataFrame, low: str, high: str, pairs: list[tuple[str, str]] | None = None
) -> float:
    """The share of (point, other run) pairs whose median lies in the other run's [low, high],
    over `pairs` of (mine, other) runs (every ordered pair by default)."""
    keyed = {r: rows.set_index(["algorithm", "bytes"]) for r, rows in points.groupby("run_id")}
    inside, total = 0, 0
    for mine, other in _pairs(points) if pairs is None else pairs:
        if mine not in keyed or other not in keyed:
            continue
        shared = keyed[mine].index.intersection(keyed[other].index)
        bounds = keyed[other].loc[shared]
        median = keyed[mine].loc[shared, "median_s"]
        inside += int(median.between(bounds[low], bounds[high]).sum())
        total += len(shared)
    return inside / total if total else float("nan")


def same_by_cell(frame: pd.DataFrame, column: str) -> tuple[int, int]:
    """Over unordered pairs of runs: cells (bytes) with the same `column`, out of how many."""
    keyed = {r: rows.set_index("bytes")[column] for r, rows in frame.groupby("run_id")}
    same, total = 0, 0
    for mine, other in _pairs(frame):
        if mine < other:
            shared = keyed[mine].index.intersection(keyed[other].index)
            same += int((keyed[mine].loc[shared] == keyed[other].loc[shared]).sum())
            total += len(shared)
    return same, total


def pair_sets(runs: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(mine, other) pairs: back to back (every ordered pair of the first three runs), and
    across the gap (the last run's medians in the one before's interval)."""
    close = runs[:3] if len(runs) > 3 else runs
    found = {"back to back": [(a, b) for a in close for b in close if a != b]}
    if len(runs) > 3:
        found["after the gap"] = [(runs[-1], runs[-2])]
    return found


def coverages(points: pd.DataFrame, runs: list[str]) -> dict[str, dict[str, float]]:
    """Per pair set, the coverage of each interval (stored, launches', within-launch CI)."""
    return {
        name: {kind: coverage(points, *BOUNDS[kind], pairs) for kind in BOUNDS}
        for name, pairs in pair_sets(runs).items()
    }


def group_rows(
    points: pd.DataFrame, winners: pd.DataFrame, fastest: pd.DataFrame, ranks: int, runs: list
):
    """The figure's numbers for one group size."""
    mine = points[points.ranks == ranks]
    won = winners[winners.ranks == ranks]
    agree, decided_both = same_by_cell(won[won.decided], "winner")
    same_fastest, cells = same_by_cell(fastest[fastest.ranks == ranks], "fastest")
    found = coverages(mine, runs)
    last = found.get("after the gap", found["back to back"])
    return {
        "coverages": found,
        "coverage": last["stored"],
        "baseline_coverage": last["ci"],
        "agreement": agree / decided_both if decided_both else float("nan"),
        "agreement_counts": (agree, decided_both),
        "baseline_agreement": same_fastest / cells if cells else float("nan"),
        "decided": float(won.decided.mean()) if len(won) else float("nan"),
        "cells": cells,
    }


def run(mode: Mode) -> Figure:
    """Sweep the preset three times (twice unless full) and compare the runs."""
    with tempfile.TemporaryDirectory(prefix="collsweep-bench-") as folder:
        path = Path(folder) / "repro.duckdb"
        spec_file = write_spec(mode.preset(), Path(folder))
        walls = sweep_repeatedly(spec_file, path, mode.pick(4, 4, 2), mode.pick(300, 60, 0))
        points = across_runs.ok_points_of_every_run(path)
        winners = across_runs.winners_of_every_run(path)
        fastest = across_runs.fastest_of_every_run(path)
        runs = across_runs.run_ids(path)
    figure = Figure(
        6,
        "Reproducibility",
        "the same figures for what one launch claims: its within-launch CI, and the fastest "
        "median per cell",
    )
    results = {
        r: group_rows(points, winners, fastest, r, runs) for r in sorted(points.ranks.unique())
    }
    coverage_table = table(
        ["p", "pairs", "stored interval", "(launches' interval)", "(CI baseline)"],
        [
            _coverage_row(r, name, c)
            for r, v in results.items()
            for name, c in v["coverages"].items()
        ],
    )
    agreement_table = table(
        ["p", "agreement", "(fastest baseline)", "decided", "cells"],
        [_row(r, v) for r, v in results.items()],
    )
    figure.table = [*coverage_table, "", *agreement_table]
    figure.checks = _checks(results, walls)
    gap = mode.pick("5 min", "1 min", "no")
    figure.notes += [
        "coverage: the share of points whose median in one run lies inside another run's "
        "stored 95% interval (widened by the host's history from the third run on); back to "
        f"back: every ordered pair of the first three runs; after the gap ({gap}): the last "
        "run in the one before's interval; agreement: cells decided in both runs of a pair "
        "that have the same winner",
        f"sweep wall times {', '.join(f'{w:.0f}' for w in walls)} s ({mode.preset_label()}, "
        "including calibration and analysis)",
        "p > 2 is oversubscribed on this 2-core machine: reported, never a target",
    ]
    return figure


def _coverage_row(ranks: int, name: str, found: dict[str, float]) -> list[object]:
    return [ranks, name, *(f"{found[kind]:.0%}" for kind in BOUNDS)]


def _row(ranks: int, v: dict) -> list[object]:
    agree, both = v["agreement_counts"]
    return [
        ranks,
        f"{v['agreement']:.0%} ({agree}/{both})",
        f"{v['baseline_agreement']:.0%}",
        f"{v['decided']:.0%}",
        v["cells"],
    ]


def _checks(results: dict, walls: list[float]) -> list[Check]:
    """Targets at p=2 (a core per rank); the other group sizes as INFO."""
    checks = []
    for ranks, v in results.items():
        targeted = ranks <= 2
        for key, label in (
            ("coverage", "coverage (the last pair)"),
            ("agreement", "agreement"),
            ("decided", "decided cells"),
        ):
            value, target = v[key], TARGETS[key]
            ok = (value >= target) if targeted and value == value else None
            checks.append(
                Check(
                    f"p={ranks} {label}",
                    f"{value:.0%}",
                    f">= {target:.0%}" if targeted else "(oversubscribed)",
                    ok,
                )
            )
    slowest = max(walls)
    checks.append(
        Check(
            "quick preset sweep wall time",
            f"{slowest:.0f} s",
            f"<= {TARGETS['wall_s']:.0f} s",
            slowest <= TARGETS["wall_s"],
        )
    )
    return checks
