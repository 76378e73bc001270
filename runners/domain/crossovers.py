"""Where two allreduce algorithms swap places, predicted and measured, and how well the
models pick the fastest algorithm. Pure functions over numbers and numpy arrays.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from runners.domain.models import predict

ParamsAt = Callable[[float], tuple[float, float]]

GRID_PER_DECADE = 64
_BISECT_STEPS = 100
_REL_TOL = 1e-12
_TIE = 1e-12


def predicted_crossover(
    model_a: str,
    model_b: str,
    ranks: int,
    alpha: float,
    beta: float,
    gamma: float,
    itemsize: int,
    lo_bytes: float,
    hi_bytes: float,
    params_at: ParamsAt | None = None,
) -> list[float]:
    """Byte sizes in [lo_bytes, hi_bytes] where the two models predict equal times.

    `params_at(nbytes) -> (alpha, beta)` (e.g. PiecewiseFit.params_at) overrides alpha and
    beta per size. The models are taken with smooth blocks (models.predict(smooth=True):
    max(n / parts, itemsize) bytes), so within one regime both times are linear in n above
    one element per block. T_a - T_b is evaluated on a log grid (64 points a decade) and
    every sign change bisected to relative precision 1e-12; at a regime switch where the
    order flips by a jump, the switch itself is returned. Touching without changing sign is
    no crossover; [] when there is none.
    """
    if not 0 < lo_bytes <= hi_bytes:
        raise ValueError(f"need 0 < lo_bytes <= hi_bytes, got {lo_bytes}, {hi_bytes}")

    def diff(n: float) -> float:
        a, b = params_at(n) if params_at is not None else (alpha, beta)
        t_a = predict(model_a, ranks, n, a, b, gamma, itemsize, smooth=True).total_s
        return t_a - predict(model_b, ranks, n, a, b, gamma, itemsize, smooth=True).total_s

    grid = _log_grid(lo_bytes, hi_bytes)
    signs = np.sign([diff(n) for n in grid])
    return [_bisect(diff, grid[i], grid[j]) for i, j in _sign_changes(signs)]


def measured_crossovers(
    sizes: Sequence[float], median_a: Sequence[float], median_b: Sequence[float]
) -> list[float]:
    """Sizes where measured medians a and b cross, interpolated on log-log axes.

    Between neighbouring sizes where log(a/b) changes sign, log(a/b) is taken as linear in
    log(size) and its zero returned. Sizes where a == b exactly between opposite signs give
    the geometric middle of that tie run.
    """
    x, r = _log_ratio(sizes, median_a, median_b)
    out = []
    for i, j in _sign_changes(np.sign(r)):
        if j == i + 1:
            out.append(math.exp(_zero(x[i], x[j], r[i], r[j])))
        else:
            out.append(math.exp((x[i + 1] + x[j - 1]) / 2))
    return out


def bootstrap_crossover(
    sizes: Sequence[float],
    samples_a: Sequence[np.ndarray],
    samples_b: Sequence[np.ndarray],
    n_boot: int = 200,
    seed: int = 0,
) -> list[tuple[float, float, float]]:
    """Measured crossovers with 90% bootstrap intervals: [(point, low, high), ...].

    The point estimates are measured_crossovers of the medians of all samples. Each bootstrap
    replicate resamples every size's raw samples with replacement, takes medians and finds its
    crossovers; each replicate crossover is matched to the nearest point estimate on a log
    scale, a replicate contributing its closest match to each point. low and high are the 5th
    and 95th percentiles of the matched values, widened to contain the point itself (the point
    itself when no replicate matched).
    Replicates with no crossover near a point simply do not count towards its interval.
    """
    order = np.argsort(np.asarray(sizes, dtype=float))
    x = np.log(np.asarray(sizes, dtype=float)[order])
    med_a = np.array([np.median(samples_a[i]) for i in order])
    med_b = np.array([np.median(samples_b[i]) for i in order])
    points = measured_crossovers(np.exp(x), med_a, med_b)
    if not points:
        return []
    rng = np.random.default_rng(seed)
    ratio = np.log(_boot_medians(samples_a, order, n_boot, rng))
    ratio -= np.log(_boot_medians(samples_b, order, n_boot, rng))
    ratio[ratio == 0] = _TIE  # an exact tie sides with "a slower": it still marks a crossing
    return _intervals(points, _boot_zeros(x, ratio))


def best_algorithm(times: Mapping[str, float]) -> str:
    """The algorithm with the smallest time (ties: the first name in sorted order)."""
    finite = {name: t for name, t in times.items() if math.isfinite(t)}
    if not finite:
        raise ValueError("best_algorithm needs at least one finite time")
    return min(sorted(finite), key=finite.__getitem__)


def _log_grid(lo: float, hi: float) -> np.ndarray:
    decades = math.log10(hi / lo)
    return np.geomspace(lo, hi, max(2, math.ceil(decades * GRID_PER_DECADE) + 1))


def _sign_changes(signs: np.ndarray) -> list[tuple[int, int]]:
    """(i, j) of consecutive nonzero signs that differ; zeros between them are skipped."""
    nonzero = np.flatnonzero(signs)
    return [(int(i), int(j)) for i, j in itertools.pairwise(nonzero) if signs[i] != signs[j]]


def _bisect(f: Callable[[float], float], lo: float, hi: float) -> float:
    """A zero (or sign jump) of f between lo and hi, whose signs differ; bisects in log n."""
    f_lo = np.sign(f(lo))
    for _ in range(_BISECT_STEPS):
        mid = math.sqrt(lo * hi)
        f_mid = np.sign(f(mid))
        if f_mid == 0:
            return mid
        if f_mid == f_lo:
            lo = mid
        else:
            hi = mid
        if hi - lo <= _REL_TOL * hi:
            break
    return math.sqrt(lo * hi)


def _log_ratio(
    sizes: Sequence[float], a: Sequence[float], b: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """log sizes and log(a/b), sorted by size."""
    s, ta, tb = (np.asarray(v, dtype=float) for v in (sizes, a, b))
    if not s.shape == ta.shape == tb.shape:
        raise ValueError("sizes, median_a and median_b must have the same length")
    if np.any(s <= 0) or np.any(ta <= 0) or np.any(tb <= 0):
        raise ValueError("sizes and medians must be > 0")
    order = np.argsort(s)
    return np.log(s[order]), np.log(ta[order] / tb[order])


def _zero(x0: float, x1: float, r0: float, r1: float) -> float:
    """Where the line through (x0, r0) and (x1, r1) crosses r = 0."""
    return x0 + r0 * (x1 - x0) / (r0 - r1)


def _boot_medians(
    samples: Sequence[np.ndarray], order: np.ndarray, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """(n_boot, sizes) medians of resampled samples, sizes in `order`."""
    out = np.empty((n_boot, order.size))
    for col, i in enumerate(order):
        values = np.asarray(samples[i], dtype=float).ravel()
        picks = rng.integers(0, values.size, size=(n_boot, values.size))
        out[:, col] = np.median(values[picks], axis=1)
    return out


def _boot_zeros(x: np.ndarray, ratio: np.ndarray) -> np.ndarray:
    """(n_boot, sizes - 1) log crossover positions per interval, nan where none."""
    r0, r1 = ratio[:, :-1], ratio[:, 1:]
    crossing = r0 * r1 < 0
    x0, x1 = x[:-1], x[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        zero = x0 + r0 * (x1 - x0) / (r0 - r1)
    return np.where(crossing, zero, np.nan)


def _intervals(points: list[float], found: np.ndarray) -> list[tuple[float, float, float]]:
    """(point, 5th, 95th percentile) per point of the replicate crossovers matched to it.

    Every replicate crossover goes to the nearest point (log scale); a replicate contributes,
    per point, the closest of the crossovers it matched there.
    """
    centers = np.log(points)
    dist = np.abs(found[:, :, None] - centers)  # (n_boot, intervals, points)
    dist = np.where(np.isnan(dist), np.inf, dist)
    owner = dist.argmin(axis=2)
    out = []
    for k, point in enumerate(points):
        mine = np.where(owner == k, dist[:, :, k], np.inf)
        rows = np.flatnonzero(np.isfinite(mine.min(axis=1)))
        matched = found[rows, mine[rows].argmin(axis=1)]
        if matched.size == 0:
            out.append((point, point, point))
            continue
        low, high = np.exp(np.percentile(matched, [5, 95]))
        # A percentile interval can miss its own point estimate when the replicates are
        # skewed (noisy machines); widen it so the reported interval always contains it.
        out.append((point, float(min(low, point)), float(max(high, point))))
    return out
