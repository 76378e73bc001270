"""What a sweep tells: a progress line per launch with an ETA priced per group, and each
group's winners as a table (runners.jobs.progress, runners.domain.verdict.winner_table)."""

from __future__ import annotations

import pytest

from runners.domain.verdict.winner_table import group_tables
from runners.jobs.progress import PlannedLaunch, Progress

P2, P4 = PlannedLaunch("p=2", 10, 2), PlannedLaunch("p=4 (oversubscribed)", 10, 4)


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_launch(progress: Progress, clock: Clock, index: int, seconds: float) -> None:
    """One launch of ten points taking `seconds`."""
    progress.start_launch(index)
    for _ in range(10):
        clock.now += seconds / 10
        progress.point({"ranks": 2, "algorithm": "ring", "bytes": 8, "dtype": "float32",
                        "op": "sum", "median_s": 1e-6, "launches": 1, "status": "ok"})  # fmt: skip
    progress.end_launch()


def test_the_eta_prices_each_group_at_its_own_cost_and_unseen_ones_by_their_ranks() -> None:
    clock, lines = Clock(), []
    progress = Progress([P2, P4, P2, P4], out=lines.append, clock=clock)
    progress.start_launch(0)
    assert progress.eta_s() is None and "ETA --:--" in progress.line()
    clock.now += 1.0
    for _ in range(10):
        progress.point({"ranks": 2, "algorithm": "ring", "bytes": 8, "dtype": "float32",
                        "op": "sum", "median_s": 1e-6, "launches": 1, "status": "ok"})  # fmt: skip
    progress.end_launch()
    # p=4 not seen yet: twice the ranks, twice p=2's cost per point
    assert progress.eta_s() == pytest.approx(2.0 + 1.0 + 2.0)
    run_launch(progress, clock, 1, 3.0)
    assert progress.eta_s() == pytest.approx(1.0 + 3.0)
    run_launch(progress, clock, 2, 1.0)
    run_launch(progress, clock, 3, 3.0)
    assert progress.eta_s() == 0
    assert len(lines) == 4 and lines[1].startswith("launch 2/4  p=4 (oversubscribed)")
    assert "points 20/40" in lines[1] and "took 3 s" in lines[1] and "ETA 0:04" in lines[1]


def test_verbose_progress_is_a_line_per_point() -> None:
    clock, lines = Clock(), []
    progress = Progress([P2], verbose=True, out=lines.append, clock=clock)
    run_launch(progress, clock, 0, 1.0)
    assert len(lines) == 10 and lines[-1].startswith("[  10/10] L1 p=2")


def cell(nbytes: int, winner: str, runner_up: str, ratio: float, decided: bool) -> dict:
    return {"ranks": 2, "dtype": "float32", "op": "sum", "bytes": nbytes, "winner": winner,
            "runner_up": runner_up, "ratio": ratio, "ratio_low": ratio * 0.9,
            "ratio_high": ratio * 1.1, "decided": decided}  # fmt: skip


def test_the_winner_table_has_a_row_per_size_with_margin_and_speed_up() -> None:
    medians = {
        (2, "float32", "sum", 8, "mpi"): 2e-6,
        (2, "float32", "sum", 8, "ring"): 4e-6,
        (2, "float32", "sum", 1 << 20, "ring"): 100e-6,
        (2, "float32", "sum", 1 << 20, "mpi"): 250e-6,
    }
    stored = {"default_algorithm": "mpi", "speedup": 2.5, "speedup_low": 2.0}
    stored |= {"speedup_high": 3.1, "speedup_verdict": "faster"}
    rows = [
        cell(1 << 20, "ring", "rabenseifner", 0.95, False) | stored,
        cell(8, "mpi", "ring", 0.5, True) | {"speedup": 1.0, "speedup_verdict": "is the default"},
    ]
    lines = group_tables(rows, medians, oversubscribed=set())
    assert lines[0] == "p=2 float32 sum (default: mpi)"
    assert lines[1].split()[:3] == ["size", "best", "time"]
    assert lines[2].split()[:5] == ["8", "B", "mpi", "2", "us"]
    assert "  2x slower [1.82, 2.22]" in lines[2] and max(map(len, lines)) <= 120
    assert lines[2].rstrip().endswith("is the default")
    assert "tie (1.05x [0.957, 1.17])" in lines[3]
    assert lines[3].rstrip().endswith("2.5x faster [2, 3.1]")  # stored, paired: not medians
    assert group_tables(rows, medians, {2})[0].startswith("p=2 float32 sum (oversubscribed")
