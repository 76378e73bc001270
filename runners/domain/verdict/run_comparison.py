"""Two runs of the same points, compared: where B is decidedly slower or faster than A, and
where the decided winner of a cell changed (no MPI, no store).

A point's interval over its launches (launch_low_s .. launch_high_s; interval_low_s .. before
a run is widened by its host's history, runners.domain.verdict.history, which a comparison of two
runs
must not count twice) is where a repeat run's median launch lands: the confidence interval of
its median launch widened by sqrt(2)
(runners.domain.sweep.repetition), so each side of the confidence interval is that side of the
stored interval over sqrt(2) (a point of one launch knows no launch-to-launch spread: its
stored interval is its within-launch CI, taken as it is). Two runs are independent, so the log
ratio of B's median over A's gets the two confidence intervals added in quadrature, side by
side: below, B's lower side with A's upper one; above, B's upper side with A's lower one. B is
*decidedly slower* where that interval of the ratio lies above 1, *decidedly faster* where it
lies below, and *within noise* otherwise. tests/domain/verdict/test_run_comparison.py measures, by
simulation, how often two runs of the same machine are called different.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runners.domain.verdict.comparison import FASTER, SLOWER, WITHIN_NOISE

Cell = tuple[int, str, str, int, str]  # (ranks, dtype, op, bytes, collective)


@dataclass(frozen=True)
class PointTimes:
    """One run's numbers at a point: its median, its repeat interval and its launches."""

    median_s: float
    low_s: float
    high_s: float
    launches: int

    def sides(self) -> tuple[float, float]:
        """The log distances from the median down and up to its confidence interval;
        unbounded for a point without one (a single imported launch), which decides nothing."""
        bounds = (self.low_s, self.high_s)
        if any(b is None or not math.isfinite(b) or b <= 0 for b in bounds):
            return math.inf, math.inf
        shrink = math.sqrt(2) if self.launches >= 2 else 1.0
        below = max(0.0, math.log(self.median_s / self.low_s)) / shrink
        above = max(0.0, math.log(self.high_s / self.median_s)) / shrink
        return below, above


@dataclass(frozen=True)
class RatioChange:
    """B's median over A's at one point, its 95% interval and what it says."""

    ratio: float
    low: float
    high: float

    @property
    def verdict(self) -> str:
        """slower / faster when the interval excludes 1, within noise otherwise."""
        if self.low > 1.0:
            return SLOWER
        return FASTER if self.high < 1.0 else WITHIN_NOISE


def ratio_change(a: PointTimes, b: PointTimes) -> RatioChange:
    """B over A at one point, with the interval of the module docstring."""
    (a_below, a_above), (b_below, b_above) = a.sides(), b.sides()
    centre = math.log(b.median_s / a.median_s)
    down, up = math.hypot(b_below, a_above), math.hypot(b_above, a_below)
    return RatioChange(math.exp(centre), math.exp(centre - down), math.exp(centre + up))


@dataclass(frozen=True)
class WinnerChange:
    """One cell's decided winners in both runs ('' where a run left it a tie)."""

    cell: Cell
    winner_a: str
    winner_b: str

    @property
    def changed(self) -> bool:
        """Both runs decided the cell, on different algorithms."""
        return bool(self.winner_a and self.winner_b) and self.winner_a != self.winner_b


def winner_changes(
    rows_a: Iterable[Mapping[str, Any]], rows_b: Iterable[Mapping[str, Any]]
) -> list[WinnerChange]:
    """Every cell both runs have a winners row for (every library's algorithms competing),
    with each run's decided winner."""

    def cell(r: Mapping[str, Any]) -> Cell:
        collective = r.get("collective") or "allreduce"
        return int(r["ranks"]), r["dtype"], r["op"], int(r["bytes"]), collective

    def decided(rows: Iterable[Mapping[str, Any]]) -> dict[Cell, str]:
        return {cell(r): r["winner"] if r["decided"] else "" for r in rows}

    a, b = decided(rows_a), decided(rows_b)
    return [WinnerChange(cell, a[cell], b[cell]) for cell in sorted(a.keys() & b.keys())]


def summary_counts(changes: Sequence[RatioChange], winners: Sequence[WinnerChange]) -> dict:
    """How many points are decidedly slower, faster, within noise; how many cells both runs
    decided, and in how many the winner changed."""
    verdicts = [c.verdict for c in changes]
    both = [w for w in winners if w.winner_a and w.winner_b]
    return {
        "matching_points": len(changes),
        "slower": verdicts.count(SLOWER),
        "faster": verdicts.count(FASTER),
        "within_noise": verdicts.count(WITHIN_NOISE),
        "cells_decided_in_both": len(both),
        "winner_changes": sum(w.changed for w in winners),
    }
