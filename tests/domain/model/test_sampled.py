"""A pipeline's smooth curve is walked on a fixed lattice of counts and interpolated: the same
value of a count whatever else is asked with it (a crossover's refinement asks again in a
narrower bracket), exact on the lattice, and between lattice counts within a round of the
walk (the walk steps up by a round at each new segment; the curve ramps over it)."""

from __future__ import annotations

import numpy as np
import pytest

from runners.domain.model.closed_form import predict, smooth_totals
from runners.domain.model.sampled import lattice_around, sampled

ALPHA, BETA = 5e-6, 1e-9


def test_a_count_has_one_value_whatever_is_asked_with_it() -> None:
    def price(count: int) -> np.ndarray:
        return np.array([float(count) ** 1.5])

    alone = sampled(price, np.array([1234.5]))[0, 0]
    among = sampled(price, np.array([3.0, 1234.5, 9e6]))[1, 0]
    assert alone == among
    low, high = lattice_around(1234.5)
    assert low <= 1234.5 <= high and high / low < 1.2
    assert sampled(price, np.array([float(low)]))[0, 0] == price(low)[0]


@pytest.mark.parametrize(
    ("name", "segment", "phases"),
    [("bcast.chain(segment=1KiB)", 1024, 1), ("chain(segment=4KiB)", 4096, 2)],
)
def test_a_pipelines_curve_is_its_walked_price_within_a_round(
    name: str, segment: int, phases: int
) -> None:
    sizes = np.geomspace(64, 16 << 20, 200)
    curve = smooth_totals(name, 16, sizes, np.full(200, ALPHA), np.full(200, BETA), 1e-10, 4)
    a_round = phases * (ALPHA + segment * (BETA + 1e-10))
    for nbytes, value in zip(sizes[::7], curve[::7], strict=True):
        whole = 4 * round(nbytes / 4)
        exact = predict(name, 16, whole, ALPHA, BETA, 1e-10, 4).total_s
        assert abs(value - exact) <= a_round, nbytes
