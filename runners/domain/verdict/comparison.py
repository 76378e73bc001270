"""Which of two algorithms is faster, decided only when the launches agree (no MPI).

Two algorithms of one (ranks, bytes, dtype, op) are timed in the same passes of the same
launch (or, for a forced library algorithm that needs a launch of its own, in the same round
of launches). Each shared (launch, pass) gives one paired ratio of their medians: machine
states that slow both alike cancel out of it. The ratio of the median launch gets the 95%
interval of runners.domain.sweep.repetition, on log ratios (launches resampled, then passes); the
comparison is *decided* when that interval excludes 1, and a tie otherwise. A simulated run's
points are one deterministic figure each: there, `within_margin` decides by a stated margin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from runners.domain.sweep.repetition import unit_log_intervals

Unit = tuple[int, int]  # (launch, pass)
FASTER, SLOWER, WITHIN_NOISE = "faster", "slower", "within noise"


@dataclass(frozen=True)
class Comparison:
    """a's time over b's, from paired (launch, pass) medians, with its 95% interval."""

    ratio: float
    low: float
    high: float
    units: int
    launches: int

    def inverse(self) -> Comparison:
        """b's time over a's: the same comparison turned round."""
        return Comparison(1 / self.ratio, 1 / self.high, 1 / self.low, self.units, self.launches)

    @property
    def decided(self) -> bool:
        """Whether the interval excludes 1: one of the two is faster in every launch's view."""
        return self.high < 1.0 or self.low > 1.0

    @property
    def a_faster(self) -> bool:
        """Whether a is the faster (meaningful when decided)."""
        return self.ratio < 1.0

    @property
    def verdict(self) -> str:
        """a against b: `faster` or `slower` where decided, `within noise` otherwise."""
        if not self.decided:
            return WITHIN_NOISE
        return FASTER if self.a_faster else SLOWER


def compare(a: Mapping[Unit, float], b: Mapping[Unit, float]) -> Comparison | None:
    """Compare two algorithms' per-(launch, pass) medians; None without two shared units."""
    return compare_many([(a, b)])[0]


def compare_many(
    pairs: Sequence[tuple[Mapping[Unit, float], Mapping[Unit, float]]],
) -> list[Comparison | None]:
    """compare(a, b) of every pair, the pairs that share the same units computed as one batch
    (runners.domain.sweep.repetition.unit_log_intervals): the same numbers, far faster."""
    found: list[Comparison | None] = [None] * len(pairs)
    batches: dict[tuple[Unit, ...], list[int]] = {}
    for i, (a, b) in enumerate(pairs):
        shared = tuple(sorted(a.keys() & b.keys()))
        if len(shared) >= 2:
            batches.setdefault(shared, []).append(i)
    for shared, members in batches.items():
        logs = np.array(
            [[math.log(pairs[i][0][u] / pairs[i][1][u]) for u in shared] for i in members]
        )
        launches = np.array([u[0] for u in shared])
        bounds = unit_log_intervals(logs, np.array([u[1] for u in shared]), launches)
        per_launch = [np.median(logs[:, launches == n], axis=1) for n in np.unique(launches)]
        centres = np.median(np.stack(per_launch, axis=1), axis=1)
        for row, i in enumerate(members):
            low, high = bounds[row]
            found[i] = Comparison(
                math.exp(centres[row]),
                math.exp(low),
                math.exp(high),
                len(shared),
                len(per_launch),
            )
    return found


def within_margin(a_s: float, b_s: float, margin: float) -> Comparison:
    """a's time over b's where each is one deterministic figure (a simulated point): no
    launches to pair, so the ratio's band is the stated ``margin`` around it (a fraction:
    0.02 is 2%), and the comparison is decided when the two differ by more than it."""
    ratio = a_s / b_s
    return Comparison(ratio, ratio / (1 + margin), ratio * (1 + margin), units=1, launches=0)
