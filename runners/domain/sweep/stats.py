"""Summary statistics of raw timing samples and the adaptive stopping rule (no MPI)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from runners.domain.collectives.collective import COLLECTIVES, DEFAULT_COLLECTIVE

Z_95 = 1.959964


@dataclass(frozen=True)
class Summary:
    """Statistics of one point's samples (seconds, each the max over ranks)."""

    iterations: int
    median_s: float
    mean_s: float
    min_s: float
    max_s: float
    p5_s: float
    p95_s: float
    stddev_s: float
    ci_low_s: float
    ci_high_s: float
    ci_rel_halfwidth: float

    def as_dict(self) -> dict[str, float]:
        """The fields as a plain dict (column name -> value)."""
        return asdict(self)


def median_ci(sorted_samples: np.ndarray) -> tuple[float, float]:
    """A distribution-free ~95% confidence interval for the median.

    Uses the order statistics at n/2 -+ 1.96 sqrt(n)/2 (normal approximation to the
    binomial), which needs no assumption about the shape of the timing distribution.
    """
    n = sorted_samples.size
    if n < 2:
        value = float(sorted_samples[0]) if n else math.nan
        return value, value
    half = Z_95 * math.sqrt(n) / 2
    lo = max(math.floor(n / 2 - half), 0)
    hi = min(math.ceil(n / 2 + half), n - 1)
    return float(sorted_samples[lo]), float(sorted_samples[hi])


def relative_halfwidth(sorted_samples: np.ndarray) -> float:
    """Half the median's confidence interval, relative to the median (inf if unknown)."""
    if sorted_samples.size < 2:
        return math.inf
    lo, hi = median_ci(sorted_samples)
    median = float(np.median(sorted_samples))
    return (hi - lo) / 2 / median if median > 0 else math.inf


def summarize(samples: np.ndarray) -> Summary:
    """Median, mean, min, max, p5, p95, standard deviation and the median's CI."""
    ordered = np.sort(np.asarray(samples, dtype=np.float64))
    if ordered.size == 0:
        raise ValueError("no samples to summarize")
    lo, hi = median_ci(ordered)
    p5, p50, p95 = np.percentile(ordered, [5, 50, 95])
    return Summary(
        iterations=int(ordered.size),
        median_s=float(p50),
        mean_s=float(ordered.mean()),
        min_s=float(ordered[0]),
        max_s=float(ordered[-1]),
        p5_s=float(p5),
        p95_s=float(p95),
        stddev_s=float(ordered.std(ddof=1)) if ordered.size > 1 else 0.0,
        ci_low_s=lo,
        ci_high_s=hi,
        ci_rel_halfwidth=relative_halfwidth(ordered),
    )


def bandwidths(
    nbytes: int, ranks: int, seconds: float, collective: str = DEFAULT_COLLECTIVE
) -> tuple[float, float]:
    """nccl-tests' algbw and busbw in GB/s: busbw = algbw times the collective's factor
    (allreduce 2(p-1)/p; reduce_scatter and allgather (p-1)/p; bcast and reduce 1)."""
    if seconds <= 0:
        return math.nan, math.nan
    algbw = nbytes / seconds / 1e9
    return algbw, algbw * COLLECTIVES[collective].busbw(ranks)


@dataclass(frozen=True)
class StopRule:
    """When to stop timing a point: the CI target, or the iteration and time limits."""

    min_iterations: int
    max_iterations: int
    target_rel_ci: float
    budget_s: float

    def should_stop(self, sorted_samples: np.ndarray, elapsed_s: float) -> bool:
        """True once enough samples are in, or a limit is reached."""
        n = sorted_samples.size
        if n >= self.max_iterations or elapsed_s >= self.budget_s:
            return True
        return n >= self.min_iterations and relative_halfwidth(sorted_samples) <= self.target_rel_ci
