"""Which of two algorithms is faster, decided only when the launches agree (no MPI).

Two algorithms of one (ranks, bytes, dtype, op) are timed in the same passes of the same
launch (or, for a forced library algorithm that needs a launch of its own, in the same round
of launches). Each shared (launch, pass) gives one paired ratio of their medians: machine
states that slow both alike cancel out of it. The ratio of the median launch gets the 95%
interval of runners.domain.repetition, on log ratios (launches resampled, then passes); the
comparison is *decided* when that interval excludes 1, and a tie otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from runners.domain.repetition import Repetition, median_launch_interval

Unit = tuple[int, int]  # (launch, pass)


@dataclass(frozen=True)
class Comparison:
    """a's time over b's, from paired (launch, pass) medians, with its 95% interval."""

    ratio: float
    low: float
    high: float
    units: int
    launches: int

    @property
    def decided(self) -> bool:
        """Whether the interval excludes 1: one of the two is faster in every launch's view."""
        return self.high < 1.0 or self.low > 1.0

    @property
    def a_faster(self) -> bool:
        """Whether a is the faster (meaningful when decided)."""
        return self.ratio < 1.0


def compare(a: Mapping[Unit, float], b: Mapping[Unit, float]) -> Comparison | None:
    """Compare two algorithms' per-(launch, pass) medians; None without two shared units."""
    shared = sorted(a.keys() & b.keys())
    if len(shared) < 2:
        return None
    logs = [math.log(a[u] / b[u]) for u in shared]
    rep = Repetition.of(logs, [u[1] for u in shared], [u[0] for u in shared])
    low, high = median_launch_interval(rep, width=1, logs=True)
    per_launch = [
        np.median([v for u, v in zip(shared, logs, strict=True) if u[0] == launch])
        for launch in sorted({u[0] for u in shared})
    ]
    centre = float(np.median(per_launch))
    return Comparison(math.exp(centre), math.exp(low), math.exp(high), len(shared), len(per_launch))
