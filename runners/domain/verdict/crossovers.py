"""Where two allreduce algorithms swap places, predicted and measured, and how well the
models pick the fastest algorithm. Pure functions over numbers and numpy arrays.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from runners.domain.verdict.comparison import Comparison

GRID_PER_DECADE = 64
_REFINE_STEPS = 64
_MAX_ROUNDS = 30
_REL_TOL = 1e-12


def sign_changes_of(
    diff: Callable[[np.ndarray], np.ndarray],
    lo_bytes: float,
    hi_bytes: float,
    on_grid: np.ndarray | None = None,
) -> list[float]:
    """Sizes in [lo_bytes, hi_bytes] where `diff` (T_a - T_b of two predicted curves, evaluated
    over an array of sizes) changes sign: the predicted crossovers.

    The curves should be smooth in n (models.predict and pricing.schedule_prediction with
    smooth=True scale blocks linearly), else the staircase of whole blocks makes them flip back
    and forth. `diff` is evaluated on log_grid(lo_bytes, hi_bytes) (64 points a decade; or
    `on_grid`, its values there, where the caller has them) and every sign change is refined on
    ever finer log grids to relative precision 1e-12; at a regime switch where the order flips
    by a jump, the switch itself is returned. Touching without changing sign is no crossover;
    [] when there is none.
    """
    if not 0 < lo_bytes <= hi_bytes:
        raise ValueError(f"need 0 < lo_bytes <= hi_bytes, got {lo_bytes}, {hi_bytes}")
    grid = log_grid(lo_bytes, hi_bytes)
    signs = np.sign(diff(grid) if on_grid is None else on_grid)
    return [_refine(diff, grid[i], grid[j]) for i, j in _sign_changes(signs)]


def decided_crossovers(
    sizes: Sequence[float], comparisons: Sequence[Comparison | None]
) -> list[tuple[float, float, float]]:
    """Where the decided order of a and b flips: (estimate, low, high) per flip.

    `comparisons[i]` compares a with b at sizes[i] (runners.domain.verdict.comparison); None or an
    undecided one is a tie and decides nothing. Between the last size decided one way and
    the next size decided the other way the crossover lies somewhere in [low, high], those
    two measured sizes: the sweep measured nothing between them, so the interval claims no
    more. The estimate interpolates log(a/b) linearly in log(size) between them.
    """
    decided = sorted(
        (float(n), c) for n, c in zip(sizes, comparisons, strict=True) if c and c.decided
    )
    out = []
    for (n0, c0), (n1, c1) in itertools.pairwise(decided):
        if c0.a_faster != c1.a_faster:
            x0, x1 = math.log(n0), math.log(n1)
            estimate = math.exp(_zero(x0, x1, math.log(c0.ratio), math.log(c1.ratio)))
            out.append((estimate, n0, n1))
    return out


def best_algorithm(times: Mapping[str, float]) -> str:
    """The algorithm with the smallest time (ties: the first name in sorted order)."""
    finite = {name: t for name, t in times.items() if math.isfinite(t)}
    if not finite:
        raise ValueError("best_algorithm needs at least one finite time")
    return min(sorted(finite), key=finite.__getitem__)


def log_grid(lo: float, hi: float) -> np.ndarray:
    """The sizes a predicted difference is scanned at: 64 a decade, log-spaced, lo and hi
    included."""
    decades = math.log10(hi / lo)
    return np.geomspace(lo, hi, max(2, math.ceil(decades * GRID_PER_DECADE) + 1))


def _sign_changes(signs: np.ndarray) -> list[tuple[int, int]]:
    """(i, j) of consecutive nonzero signs that differ; zeros between them are skipped."""
    nonzero = np.flatnonzero(signs)
    return [(int(i), int(j)) for i, j in itertools.pairwise(nonzero) if signs[i] != signs[j]]


def _refine(f: Callable[[np.ndarray], np.ndarray], lo: float, hi: float) -> float:
    """A zero (or sign jump) of f between lo and hi, whose signs differ.

    Each round cuts the bracket into _REFINE_STEPS log-spaced parts and keeps the first part
    whose ends differ in sign, until it is narrower than _REL_TOL relative. After each round
    the line through the kept part's ends proposes a zero; predicted curves are piecewise
    linear in the size, so once a part holds no kink that zero is exact, and it is returned
    as soon as f changes sign within _REL_TOL of it (usually after the first round)."""
    for _ in range(_MAX_ROUNDS):
        sizes = np.geomspace(lo, hi, _REFINE_STEPS + 1)
        values = f(sizes)
        signs = np.sign(values)
        flip = np.flatnonzero(signs[1:] != signs[0])
        k = int(flip[0]) + 1 if flip.size else _REFINE_STEPS  # sizes[k]: first off lo's sign
        if k < _REFINE_STEPS and signs[k] == 0:
            return float(sizes[k])
        lo, hi = float(sizes[k - 1]), float(sizes[k])
        if hi - lo <= _REL_TOL * hi:
            break
        guess = _zero(lo, hi, float(values[k - 1]), float(values[k]))
        half = guess * _REL_TOL / 2
        if lo < guess - half and guess + half < hi:
            around = np.sign(f(np.array([guess - half, guess + half])))
            if around[0] != around[1] or around[0] == 0:
                return guess
    return math.sqrt(lo * hi)


def _zero(x0: float, x1: float, r0: float, r1: float) -> float:
    """Where the line through (x0, r0) and (x1, r1) crosses r = 0."""
    return x0 + r0 * (x1 - x0) / (r0 - r1)
