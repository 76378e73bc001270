"""Calibration fits for the alpha-beta-gamma models: pure numpy, no MPI, no store.

Timings span decades (a microsecond at 8 bytes, milliseconds at megabytes), so every fit here
minimises relative squared error: each residual is divided by its measured time. An ordinary
least-squares fit would be decided by the largest messages and leave alpha to noise.

`r_squared` is the weighted coefficient of determination in the same relative terms:
1 - sum(((t - fit) / t)^2) / sum(((t - c) / t)^2), where c is the constant that best fits t
in those terms (c = sum(1/t) / sum(1/t^2)).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from runners.domain.model.closed_form import model_for, predict

PINGPONG_SOURCE = "pingpong"  # calibrations.source of a measured ping-pong calibration


def network_source(network: str) -> str:
    """calibrations.source of a ping-pong across two emulated nodes under `network` (the
    spec's text; '' unshaped): one source per network, so each is reused only for itself."""
    return f"{PINGPONG_SOURCE}-network:{network or 'unshaped'}"


MIN_SEGMENT_SIZES = 3
MIN_IMPROVEMENT = 0.30
_PERFECT_RMS = 1e-9  # relative rms error below which a fit cannot be improved on
_DEGENERATE = 1e-9  # smallest/largest singular value below which parameters are inseparable


@dataclass(frozen=True)
class LinearFit:
    """T(n) = alpha + n * beta fitted over sizes [min_bytes, max_bytes] from n points."""

    alpha: float
    beta: float
    r_squared: float
    min_bytes: float
    max_bytes: float
    n: int

    def time_at(self, nbytes: float | np.ndarray) -> float | np.ndarray:
        """The fitted time of `nbytes` bytes."""
        return self.alpha + np.asarray(nbytes, dtype=float) * self.beta


@dataclass(frozen=True)
class PiecewiseFit:
    """Linear fits on consecutive size ranges split at protocol switches.

    Segment i covers breakpoints[i-1] <= n < breakpoints[i]; the first segment extends down
    and the last up without limit. A breakpoint is the smallest measured size of its segment.
    """

    segments: list[LinearFit]
    breakpoints: list[int]
    r_squared: float

    def params_at(self, nbytes: float) -> tuple[float, float]:
        """(alpha, beta) of the segment covering `nbytes`."""
        seg = self.segments[bisect.bisect_right(self.breakpoints, nbytes)]
        return seg.alpha, seg.beta

    def time_at(self, nbytes: float) -> float:
        """The fitted time of `nbytes` bytes."""
        alpha, beta = self.params_at(nbytes)
        return alpha + nbytes * beta


class CollectiveFit(NamedTuple):
    """Alpha, beta, gamma fitted jointly to collective timings, and the fit's r_squared."""

    alpha: float
    beta: float
    gamma: float
    r_squared: float


def weighted_r_squared(times: np.ndarray, fitted: np.ndarray) -> float:
    """R^2 in relative terms (see the module docstring); 1.0 when the times are all equal."""
    t = np.asarray(times, dtype=float)
    w = 1.0 / t**2
    c = np.sum(w * t) / np.sum(w)
    total = float(np.sum(w * (t - c) ** 2))
    resid = float(np.sum(w * (t - np.asarray(fitted, dtype=float)) ** 2))
    if total <= 0.0:
        return 1.0 if resid <= 0.0 else 0.0
    return 1.0 - resid / total


def fit_linear(
    sizes: Sequence[float] | np.ndarray, times: Sequence[float] | np.ndarray
) -> LinearFit:
    """Fit T(n) = alpha + n * beta to one-way times by relative least squares.

    A negative alpha is clipped to 0 and beta refitted through the origin; a negative beta is
    clipped to 0 and alpha refitted as a constant. Needs >= 2 distinct sizes and times > 0.
    """
    n, t = _as_points(sizes, times)
    if np.unique(n).size < 2:
        raise ValueError("fit_linear needs at least 2 distinct sizes")
    alpha, beta = _solve_linear(n, t)
    return LinearFit(
        alpha=alpha,
        beta=beta,
        r_squared=weighted_r_squared(t, alpha + beta * n),
        min_bytes=float(n.min()),
        max_bytes=float(n.max()),
        n=int(n.size),
    )


def fit_piecewise(
    sizes: Sequence[float], times: Sequence[float], max_segments: int = 3
) -> PiecewiseFit:
    """Fit up to `max_segments` linear segments, split where the protocol switches.

    Each candidate split falls between two neighbouring distinct sizes and leaves every
    segment >= 3 distinct sizes; the best split into k segments minimises the total relative
    SSE (found exhaustively by dynamic programming). k segments replace k - 1 only when they
    cut that SSE by more than 30%, so pure linear data keeps one segment.
    """
    n, t = _as_points(sizes, times)
    distinct = np.unique(n)
    group = np.searchsorted(distinct, n)
    cost = _segment_costs(n, t, group, distinct.size)
    cuts = _choose_cuts(cost, distinct.size, max_segments, n.size)
    bounds = [0, *cuts, distinct.size]
    segments = [
        fit_linear(n[(group >= lo) & (group < hi)], t[(group >= lo) & (group < hi)])
        for lo, hi in itertools.pairwise(bounds)
    ]
    fit = PiecewiseFit(segments, [int(distinct[c]) for c in cuts], 0.0)
    fitted = np.array([fit.time_at(x) for x in n])
    return PiecewiseFit(fit.segments, fit.breakpoints, weighted_r_squared(t, fitted))


def fit_gamma(nbytes: Sequence[float], seconds: Sequence[float]) -> float:
    """Seconds per byte of a local reduction, from timings of reductions of nbytes bytes.

    The slope of T(n) = c + n * gamma fitted with an intercept (c absorbs the per-call
    overhead, which would otherwise inflate gamma at small sizes), in relative least squares
    as fit_linear does. With a single distinct size, seconds / nbytes through the origin.
    """
    n, t = _as_points(nbytes, seconds)
    if np.unique(n).size < 2:
        positive = n > 0
        if not positive.any():
            raise ValueError("fit_gamma needs a size > 0")
        return float(np.median(t[positive] / n[positive]))
    return fit_linear(n, t).beta


def fit_collectives(
    rows: Iterable[Sequence | Mapping], *, with_gamma: bool = True
) -> CollectiveFit | None:
    """Fit alpha, beta, gamma >= 0 jointly to measured collective medians (`with_gamma`
    False: alpha and beta only, gamma = 0, for timings whose reductions cannot be told apart
    from their bandwidth term: beta then carries both).

    Each row is (algorithm, ranks, nbytes, itemsize, seconds), or a mapping with those keys.
    A row's design-matrix entries are its model's critical-path counts (messages, bytes_sent,
    bytes_reduced from models.predict); each row is divided by its measured time so that small
    messages count as much as large ones. Rows without a model (autotuned 'mpi'), with one
    rank or with seconds <= 0 are skipped. The non-negative least-squares solution is exact:
    every subset of free parameters is solved and the best feasible one kept. Returns None
    with fewer than 3 usable rows or when the counts cannot separate the three parameters.
    """
    counts, t = _design(rows)
    used = counts if with_gamma else counts[:, :2]
    if t.size < 3:
        return None
    a = used / t[:, None]
    scale = np.linalg.norm(a, axis=0)
    if np.any(scale == 0):
        return None
    a = a / scale
    singular = np.linalg.svd(a, compute_uv=False)
    if singular.min() < _DEGENERATE * singular.max():
        return None
    x = _nnls(a, np.ones_like(t)) / scale
    if not with_gamma:
        x = np.append(x, 0.0)
    alpha, beta, gamma = (float(v) for v in x)
    return CollectiveFit(alpha, beta, gamma, weighted_r_squared(t, counts @ x))


def _as_points(
    sizes: Sequence[float] | np.ndarray, times: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(sizes, dtype=float).ravel()
    t = np.asarray(times, dtype=float).ravel()
    if n.shape != t.shape:
        raise ValueError(f"{n.size} sizes but {t.size} times")
    if not np.all(np.isfinite(t) & (t > 0)):
        raise ValueError("times must be finite and > 0")
    if not np.all(np.isfinite(n) & (n >= 0)):
        raise ValueError("sizes must be finite and >= 0")
    return n, t


def _solve_linear(n: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """Relative least squares for (alpha, beta), each clipped at 0 with the other refitted."""
    a = np.column_stack([np.ones_like(n), n]) / t[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    if alpha < 0:
        alpha, beta = 0.0, max(_through_origin(a[:, 1]), 0.0)
    elif beta < 0:
        alpha, beta = _through_origin(a[:, 0]), 0.0
    return float(alpha), float(beta)


def _through_origin(column: np.ndarray) -> float:
    """The x minimising sum((column * x - 1)^2)."""
    denom = float(column @ column)
    return float(column.sum() / denom) if denom > 0 else 0.0


def _relative_sse(n: np.ndarray, t: np.ndarray) -> float:
    alpha, beta = _solve_linear(n, t)
    return float(np.sum(((t - alpha - beta * n) / t) ** 2))


def _segment_costs(n: np.ndarray, t: np.ndarray, group: np.ndarray, m: int) -> np.ndarray:
    """cost[i, j]: relative SSE of one fit over distinct sizes i..j-1 (inf if too few)."""
    cost = np.full((m + 1, m + 1), np.inf)
    for i in range(m):
        for j in range(i + MIN_SEGMENT_SIZES, m + 1):
            mask = (group >= i) & (group < j)
            cost[i, j] = _relative_sse(n[mask], t[mask])
    return cost


def _choose_cuts(cost: np.ndarray, m: int, max_segments: int, points: int) -> list[int]:
    """Cut indices (into distinct sizes) of the accepted segmentation."""
    best: list[int] = []
    best_sse = cost[0, m]
    for k in range(2, max_segments + 1):
        if best_sse / points < _PERFECT_RMS**2:
            break
        sse, cuts = _best_split(cost, m, k)
        if not sse < (1.0 - MIN_IMPROVEMENT) * best_sse:
            break
        best, best_sse = cuts, sse
    return best


def _best_split(cost: np.ndarray, m: int, k: int) -> tuple[float, list[int]]:
    """Minimal total cost of k consecutive segments covering 0..m, and where they cut."""
    total = np.full((k + 1, m + 1), np.inf)
    prev = np.zeros((k + 1, m + 1), dtype=int)
    total[0, 0] = 0.0
    for s in range(1, k + 1):
        for j in range(m + 1):
            options = total[s - 1, :j] + cost[:j, j]
            if options.size and np.isfinite(options.min()):
                prev[s, j] = int(np.argmin(options))
                total[s, j] = options[prev[s, j]]
    cuts, j = [], m
    for s in range(k, 1, -1):
        j = prev[s, j]
        cuts.append(j)
    return float(total[k, m]), cuts[::-1]


def _row_fields(row: Sequence | Mapping) -> tuple[str, int, float, int, float]:
    if isinstance(row, Mapping):
        row = [row[k] for k in ("algorithm", "ranks", "nbytes", "itemsize", "seconds")]
    algorithm, ranks, nbytes, itemsize, seconds = row
    return str(algorithm), int(ranks), float(nbytes), int(itemsize), float(seconds)


def _design(rows: Iterable[Sequence | Mapping]) -> tuple[np.ndarray, np.ndarray]:
    """Critical-path counts (rows x 3) and measured seconds of the usable rows."""
    counts, times = [], []
    for row in rows:
        algorithm, ranks, nbytes, itemsize, seconds = _row_fields(row)
        if model_for(algorithm) is None or ranks < 2 or not seconds > 0:
            continue
        p = predict(algorithm, ranks, nbytes, 1.0, 1.0, 1.0, itemsize)
        counts.append((p.messages, p.bytes_sent, p.bytes_reduced))
        times.append(float(seconds))
    return np.array(counts, dtype=float).reshape(-1, 3), np.array(times, dtype=float)


def _nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact non-negative least squares for a few columns by trying every free subset."""
    cols = a.shape[1]
    best, best_sse = np.zeros(cols), float(b @ b)
    for r in range(1, cols + 1):
        for free in itertools.combinations(range(cols), r):
            x_free, *_ = np.linalg.lstsq(a[:, free], b, rcond=None)
            if np.any(x_free < 0):
                continue
            x = np.zeros(cols)
            x[list(free)] = x_free
            sse = float(np.sum((a @ x - b) ** 2))
            if sse < best_sse:
                best, best_sse = x, sse
    return best
