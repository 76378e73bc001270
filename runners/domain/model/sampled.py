"""A pipeline's price along a smooth curve of sizes, from a fixed lattice of counts (pure).

A schedule whose rounds depend on the count (a pipeline's segments: descriptor.by_count) is
priced by walking it at a count, O(p s) steps for s segments, and a smooth curve asks for a
few hundred counts. Its price is piecewise linear in the count (a segment more, a round
more), so a curve is walked only at the counts of a fixed lattice (every count up to
EXACT_UP_TO, then PER_OCTAVE a factor of 2) and interpolated linearly between the two lattice
counts around each count: the same function of the count whatever else is asked with it (a
crossover's refinement asks again in a narrower bracket), continuous, and exact on the
lattice. A point's own prediction (smooth=False) is always walked at its exact count.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

EXACT_UP_TO, PER_OCTAVE = 16, 4


def lattice_around(count: float) -> tuple[int, int]:
    """The lattice counts at or below and at or above `count` (>= 1)."""
    count = max(1.0, count)
    if count <= EXACT_UP_TO:
        return math.floor(count), math.ceil(count)
    step = math.log2(count / EXACT_UP_TO) * PER_OCTAVE
    low, high = (
        round(EXACT_UP_TO * 2 ** (k / PER_OCTAVE)) for k in (math.floor(step), math.ceil(step))
    )
    return min(low, math.floor(count)), max(high, math.ceil(count))


def sampled(price: Callable[[int], np.ndarray], counts: np.ndarray) -> np.ndarray:
    """`price(count)` (a vector of values) at every count, rows in the order of `counts`,
    interpolated linearly between the lattice counts around each."""
    walked: dict[int, np.ndarray] = {}

    def at(count: int) -> np.ndarray:
        if count not in walked:
            walked[count] = np.atleast_1d(np.asarray(price(count), dtype=float))
        return walked[count]

    rows = []
    for count in np.maximum(1.0, np.asarray(counts, dtype=float)):
        low, high = lattice_around(float(count))
        share = 0.0 if high == low else (count - low) / (high - low)
        rows.append(at(low) + share * (at(high) - at(low)))
    return np.array(rows)
