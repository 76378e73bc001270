"""A point's numbers over all its launches: the summary and an interval that covers a repeat.

No MPI here. On these machines most of the variance is between launches (each mpiexec lands the
ranks in one machine state for its lifetime: placement, frequency, neighbours), and some is
between the passes of a launch (states last seconds). Hunold & Carpen-Amarie (IEEE TPDS 2016)
and Hoefler & Belli (SC15) therefore repeat whole launches and report the spread between them.

The interval is about the *median launch*: the median of the launch medians, what a launch
typically measures. It is the union of
- a hierarchical bootstrap (launches resampled with replacement, then each launch's passes with
  replacement; each replicate is the median of the resampled launches' medians), percentile
  2.5-97.5%;
- the bootstrap's standard error times Student's t with L-1 degrees of freedom and the
  small-sample factor sqrt(L / (L - 1)), around the median launch: a bootstrap over three
  launches sees at most ten different resamples and is far too narrow on its own;
- the pooled samples' own distribution-free CI of the median (order statistics);
all on log times (launch effects are factors, and the interval never reaches below zero). As a
confidence interval (comparisons) it covers the
true median launch; widened by sqrt(2) (`repeat`, stored with every point) it covers where a
repeat run's median launch lands. A machine state slows every point of a launch alike, so a
point whose few launches happened to agree borrows the launch-to-launch spread pooled over the
other points of its job (the median of their spreads) as a floor of its standard error. With
one launch only the last part is known, and the interval says nothing about launch-to-launch
variation. tests/domain/sweep/test_repetition.py measures both coverages by simulation
(normal and bimodal launch effects).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from runners.domain.sweep.stats import bandwidths, median_ci, summarize

LEVEL = 0.95
MEDIAN_SE = 1.2533  # a median's standard error over the mean's, for normal data (sqrt(pi/2))
REPLICATES = 1000
SKETCH = 101  # quantiles kept per pass: the bootstrap's cost stays fixed however many samples
# Student's t, 97.5% quantile, by degrees of freedom (1.96 beyond the table)
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306}
T_975 |= {9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}


def t_975(df: int) -> float:
    """Student's t 97.5% quantile for `df` degrees of freedom (the next smaller df tabled)."""
    return T_975[max(k for k in T_975 if k <= df)] if df < 60 else 1.96


@dataclass(frozen=True)
class Repetition:
    """A point's samples with where each came from: its launch and its pass in that launch."""

    seconds: np.ndarray
    passes: np.ndarray
    launches: np.ndarray

    @classmethod
    def of(cls, seconds: list[float], passes: list[int], launches: list[int]) -> Repetition:
        """Arrays from three equally long lists."""
        return cls(np.asarray(seconds, float), np.asarray(passes, int), np.asarray(launches, int))

    @property
    def launch_count(self) -> int:
        """How many launches contributed samples."""
        return int(np.unique(self.launches).size)

    def sketches(self, width: int = SKETCH) -> tuple[np.ndarray, np.ndarray]:
        """Per launch and pass, `width` quantiles of its samples: (launches, passes, width),
        padded by repeating a launch's passes, and each launch's number of passes.

        All passes at once: the samples sorted within their (launch, pass), each quantile
        read at its position as np.quantile's default (linear) method reads it."""
        probabilities = np.linspace(0, 1, width) if width > 1 else np.array([0.5])
        _, launch_of = np.unique(self.launches, return_inverse=True)
        span = int(self.passes.max()) - int(self.passes.min()) + 1
        keys, unit_of = np.unique(
            launch_of.ravel() * span + (self.passes - self.passes.min()), return_inverse=True
        )
        values = self.seconds[np.lexsort((self.seconds, unit_of.ravel()))]
        sizes = np.bincount(unit_of.ravel(), minlength=len(keys))
        quantiles = _sorted_quantiles(values, np.cumsum(sizes) - sizes, sizes, probabilities)
        counts = np.bincount(keys // span)
        first = np.cumsum(counts) - counts
        padded = first[:, None] + np.arange(counts.max())[None, :] % counts[:, None]
        return quantiles[padded], counts


def _sorted_quantiles(
    values: np.ndarray, starts: np.ndarray, sizes: np.ndarray, probabilities: np.ndarray
) -> np.ndarray:
    """(groups, probabilities): np.quantile's linear interpolation within each group of the
    sorted `values` (group g is values[starts[g]:starts[g] + sizes[g]]), computed as numpy
    computes it so that the results are the same numbers."""
    n = sizes[:, None].astype(float)
    virtual = (n - 1) * probabilities
    below = np.clip(np.floor(virtual), 0, n - 1)
    above = np.clip(below + 1, 0, n - 1)
    fraction = virtual - below
    a = values[starts[:, None] + below.astype(int)]
    b = values[starts[:, None] + above.astype(int)]
    step = b - a
    return np.where(fraction >= 0.5, b - step * (1 - fraction), a + step * fraction)


def median_launch_interval(
    rep: Repetition,
    replicates: int = REPLICATES,
    seed: int = 0,
    width: int = SKETCH,
    repeat: bool = False,
    spread_floor: float = 0.0,
    logs: bool = False,
) -> tuple[float, float]:
    """The 95% interval of the median launch (see the module docstring); `width` quantiles
    stand for each pass (1: its median, for values that are one per pass already).

    The interval is built on log values (times vary by factors; medians commute with the log),
    so it never reaches below zero; `logs`: the values are logs already (ratios), and so is the
    interval returned.
    repeat: where the median launch of a repeat run with as many launches lands instead (a
    prediction interval: the difference of two independent estimates spreads sqrt(2) times
    wider than one estimate), which is what a second run is compared with.
    spread_floor: a launch-to-launch spread (standard deviation of log launch medians) known
    from elsewhere, e.g. pooled over the other points of the job; the standard error is then
    at least that of a median of this many launches with that spread.
    """
    values = rep if logs else Repetition(np.log(rep.seconds), rep.passes, rep.launches)
    low, high = median_ci(np.sort(values.seconds))
    if values.launch_count >= 2:
        sketch, passes = values.sketches(width)
        bounds = np.array([[low, high]])
        spread = Spread(replicates, seed, repeat, spread_floor)
        low, high = (float(v) for v in _widened(sketch[None], passes, bounds, spread)[0])
    return (low, high) if logs else (math.exp(low), math.exp(high))


def unit_log_intervals(
    logs: np.ndarray, passes: np.ndarray, launches: np.ndarray, replicates: int = REPLICATES
) -> np.ndarray:
    """median_launch_interval(Repetition(row, passes, launches), width=1, logs=True) of every
    row of `logs` (N rows of one value per (launch, pass), all on the same units), as (N, 2),
    computed as one batch: the resampling depends only on the units, so every row draws the
    same resamples that it would draw alone, and gets the same interval."""
    rows = np.sort(logs, axis=1)
    bounds = np.array([median_ci(row) for row in rows])
    index = Repetition(np.arange(logs.shape[1], dtype=float), passes, launches)
    if index.launch_count < 2:
        return bounds
    layout, counts = index.sketches(1)
    sketch = logs[:, layout.astype(int)]  # (N, launches, passes, 1)
    return _widened(sketch, counts, bounds, Spread(replicates))


@dataclass(frozen=True)
class Spread:
    """How an interval is drawn: bootstrap replicates and seed, whether it is for a repeat
    run, and the pooled launch-to-launch spread that floors its standard error."""

    replicates: int = REPLICATES
    seed: int = 0
    repeat: bool = False
    spread_floor: float = 0.0


def _widened(sketch: np.ndarray, passes: np.ndarray, bounds: np.ndarray, how: Spread) -> np.ndarray:
    """(N, 2): each row's order-statistic `bounds` widened by its bootstrap tails and its
    t-scaled standard error; sketch is (N, launches, passes, width) of log values."""
    count = sketch.shape[1]
    boot = _bootstrap(sketch, passes, how.replicates, np.random.default_rng(how.seed))
    launch_medians = np.median(sketch.reshape(sketch.shape[0], count, -1), axis=2)
    centre = np.median(launch_medians, axis=1)
    widen = math.sqrt(2) if how.repeat else 1.0
    floor = MEDIAN_SE * how.spread_floor / math.sqrt(count)
    error = np.maximum(boot.std(axis=1, ddof=1), floor)
    spread = t_975(count - 1) * math.sqrt(count / (count - 1)) * error * widen
    tails = np.quantile(boot, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=1)
    tails = centre + widen * (tails - centre)
    low = np.minimum(np.minimum(bounds[:, 0], tails[0]), centre - spread)
    high = np.maximum(np.maximum(bounds[:, 1], tails[1]), centre + spread)
    return np.stack([low, high], axis=1)


BATCH_VALUES = 4_000_000  # values held at once: a batch is cut to stay below it


def _bootstrap(
    sketch: np.ndarray, passes: np.ndarray, replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """(N, replicates) of the median launch: launches, then their passes, resampled, the same
    resamples for every row of the batch.

    A resampled launch is a launch and the passes drawn from it; replicates repeat the same
    few of those (at most launches x passes^passes), so each one's median is taken once and
    the replicates gather them."""
    rows, count, width = sketch.shape[0], sketch.shape[1], sketch.shape[2]
    chosen = rng.integers(0, count, size=(replicates, count))
    draws = rng.random((replicates, count, width))
    pass_index = (draws * passes[chosen][:, :, None]).astype(int)
    distinct, which = _distinct_rows(
        np.concatenate([chosen[:, :, None], pass_index], axis=2).reshape(-1, 1 + width)
    )
    which = which.reshape(replicates, count)
    step = max(1, BATCH_VALUES // (replicates * count + distinct.size * sketch.shape[3]))
    out = np.empty((rows, replicates))
    for start in range(0, rows, step):
        part = sketch[start : start + step]
        launches = part[:, distinct[:, :1], distinct[:, 1:]]  # (n, distinct, passes, w)
        launch_medians = median_last(launches.reshape(part.shape[0], len(distinct), -1))
        out[start : start + step] = median_last(launch_medians[:, which])
    return out


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(rows, axis=0, return_inverse=True) for rows of small non-negative integers,
    each row read as one number (sorting one integer column is far cheaper than rows)."""
    base = int(rows.max()) + 1
    if base ** rows.shape[1] >= 2**62:
        distinct, which = np.unique(rows, axis=0, return_inverse=True)
        return distinct, which.ravel()
    codes = np.zeros(rows.shape[0], dtype=np.int64)
    for column in rows.T:
        codes = codes * base + column
    unique_codes, which = np.unique(codes, return_inverse=True)
    distinct = np.empty((len(unique_codes), rows.shape[1]), dtype=rows.dtype)
    for j in range(rows.shape[1] - 1, -1, -1):
        unique_codes, distinct[:, j] = np.divmod(unique_codes, base)
    return distinct, which.ravel()


def median_last(values: np.ndarray) -> np.ndarray:
    """np.median over the last axis, the same numbers, by sorting: faster for the short
    axes of a bootstrap (np.median partitions the whole array)."""
    ordered = np.sort(values, axis=-1)
    half = ordered.shape[-1] // 2
    if ordered.shape[-1] % 2:
        return ordered[..., half]
    return (ordered[..., half - 1] + ordered[..., half]) / 2


def launch_spread(rep: Repetition) -> float | None:
    """The standard deviation of the log launch medians; None with fewer than two launches."""
    medians = [np.median(rep.seconds[rep.launches == launch]) for launch in np.unique(rep.launches)]
    if len(medians) < 2 or min(medians) <= 0:
        return None
    return float(np.std(np.log(medians), ddof=1))


def point_summary(
    rep: Repetition,
    nbytes: int,
    ranks: int,
    target_rel_ci: float,
    spread_floor: float = 0.0,
    collective: str = "allreduce",
) -> dict:
    """A point's columns from all its samples: statistics, the repeat interval (with the job's
    pooled launch-to-launch spread as `spread_floor`), bandwidths, and whether the interval
    met the target (`ci_target_met` applies to it, not the within-launch CI)."""
    summary = summarize(rep.seconds)
    low, high = median_launch_interval(rep, repeat=True, spread_floor=spread_floor)
    algbw, busbw = bandwidths(nbytes, ranks, summary.median_s, collective)
    relative = (high - low) / 2 / summary.median_s if summary.median_s > 0 else math.inf
    return summary.as_dict() | {
        "interval_low_s": low,
        "interval_high_s": high,
        "interval_rel_halfwidth": relative,
        "launches": rep.launch_count,
        "ci_target_met": relative <= target_rel_ci,
        "algbw_gbps": algbw,
        "busbw_gbps": busbw,
    }
