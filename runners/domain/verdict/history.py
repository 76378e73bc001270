"""Intervals that hold over time: the host's run-to-run variation, learnt from the store (no I/O).

A run's interval over launches covers what its launches saw within the seconds the run took. A
machine state that lasts longer moves the whole run, and a repeat made minutes or hours later
lands outside (docs/benchmarks.md, figure 6: 62% of p=2 points covered). The store holds the
answer: earlier runs on the same host measured the same points. Per group size (dedicated and
oversubscribed apart), over the points that two or more of the runs share, on log medians:

- each point is centred on its mean over the runs that measured it; a run's *offset* is the
  median of its centred points (the state it ran in), and what is left is point noise;
- a repeat's log median lands at this run's, moved back by this run's offset (a run in an odd
  state is followed by one nearer the host's usual), within t(n - 1) x sd_run x sqrt(1 + 1/n)
  (the prediction interval of a new run's state from n runs' states: Student's t, as few runs
  see little of it) added in quadrature to 1.96 x sqrt(2) x sd_point (both runs' point noise,
  known from many residuals);
- each point's stored interval is widened to hold that range; the interval its launches gave is
  kept beside it.

Offsets and point noise are medians (robust to a few odd points); the t factor is the price of
knowing the host from few runs, so MIN_RUNS runs (this one included) are needed before the
history says anything: with fewer, the interval covers the run's own span and says so.
tests/domain/verdict/test_history.py measures the coverage by simulation (normal and
two-state hosts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from runners.domain.sweep.repetition import t_975

MIN_RUNS = 3  # runs of the host, this one included, before their spread widens an interval
MIN_POINTS = 10  # points shared by two or more of them
EARLIER_RUNS = 10  # the most recent earlier runs of the host that are read
Z_975 = 1.96
MAD_TO_SD = 1.4826  # a normal sample's standard deviation over its median absolute deviation


@dataclass(frozen=True)
class RunToRun:
    """Where a repeat of this run lands relative to it (natural logs): moved by `shift`, within
    +-`half`; from `runs` runs and `points` shared points of one group size."""

    shift: float
    half: float
    runs: int
    points: int
    sd_run: float
    sd_point: float

    def bounds(self, median: float) -> tuple[float, float]:
        """Where a repeat's median lands, for a point whose median here is `median`."""
        return median * math.exp(self.shift - self.half), median * math.exp(self.shift + self.half)

    def as_json(self) -> dict[str, float | int]:
        """The record stored with the run (runs.interval_history)."""
        return {
            "shift": self.shift,
            "half": self.half,
            "low_factor": math.exp(self.shift - self.half),
            "high_factor": math.exp(self.shift + self.half),
            "runs": self.runs,
            "points": self.points,
            "sd_run": self.sd_run,
            "sd_point": self.sd_point,
        }


def run_to_run(log_medians: Mapping[Any, Mapping[str, float]], current: str) -> RunToRun | None:
    """The repeat interval of run `current` from every run's log median per point (point ->
    run -> log median); None with fewer than MIN_RUNS runs or MIN_POINTS shared points."""
    shared = {p: runs for p, runs in log_medians.items() if len(runs) >= 2}
    runs = sorted({r for by_run in shared.values() for r in by_run})
    if current not in runs or len(runs) < MIN_RUNS or len(shared) < MIN_POINTS:
        return None
    centred: dict[str, list[float]] = {r: [] for r in runs}
    for by_run in shared.values():
        mean = sum(by_run.values()) / len(by_run)
        for run, value in by_run.items():
            centred[run].append(value - mean)
    offsets = {r: float(np.median(values)) for r, values in centred.items()}
    residuals = [v - offsets[r] for r, values in centred.items() for v in values]
    n = len(runs)
    sd_point = MAD_TO_SD * float(np.median(np.abs(residuals))) * math.sqrt(n / (n - 1))
    sd_run = float(np.std(list(offsets.values()), ddof=1))
    run_part = t_975(n - 1) * sd_run * math.sqrt(1 + 1 / n)
    point_part = Z_975 * math.sqrt(2) * sd_point  # from many residuals: no small-sample t
    half = math.hypot(run_part, point_part)
    return RunToRun(-offsets[current], half, n, len(shared), sd_run, sd_point)


def widened(median: float, low: float, high: float, spread: RunToRun) -> tuple[float, float]:
    """The interval [low, high] widened to hold where a repeat lands."""
    lower, upper = spread.bounds(median)
    return min(low, lower), max(high, upper)
