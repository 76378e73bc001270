"""Where two allreduce algorithms swap places, predicted and measured, and how well the
models pick the fastest algorithm. Pure functions over numbers and numpy arrays.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from runners.domain.comparison import Comparison

GRID_PER_DECADE = 64
_BISECT_STEPS = 100
_REL_TOL = 1e-12


def sign_changes_of(
    diff: Callable[[float], float], lo_bytes: float, hi_bytes: float
) -> list[float]:
    """Sizes in [lo_bytes, hi_bytes] where `diff` (T_a - T_b of two predicted curves) changes
    sign: the predicted crossovers.

    The curves should be smooth in n (models.predict and pricing.schedule_prediction with
    smooth=True scale blocks linearly), else the staircase of whole blocks makes them flip back
    and forth. `diff` is evaluated on a log grid (64 points a decade) and every sign change
    bisected to relative precision 1e-12; at a regime switch where the order flips by a jump,
    the switch itself is returned. Touching without changing sign is no crossover; [] when
    there is none.
    """
    if not 0 < lo_bytes <= hi_bytes:
        raise ValueError(f"need 0 < lo_bytes <= hi_bytes, got {lo_bytes}, {hi_bytes}")
    grid = _log_grid(lo_bytes, hi_bytes)
    signs = np.sign([diff(n) for n in grid])
    return [_bisect(diff, grid[i], grid[j]) for i, j in _sign_changes(signs)]


def decided_crossovers(
    sizes: Sequence[float], comparisons: Sequence[Comparison | None]
) -> list[tuple[float, float, float]]:
    """Where the decided order of a and b flips: (estimate, low, high) per flip.

    `comparisons[i]` compares a with b at sizes[i] (runners.domain.comparison); None or an
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


def _zero(x0: float, x1: float, r0: float, r1: float) -> float:
    """Where the line through (x0, r0) and (x1, r1) crosses r = 0."""
    return x0 + r0 * (x1 - x0) / (r0 - r1)
