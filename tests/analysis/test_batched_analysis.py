"""The analysis' batched and vectorised computations give the numbers of the plain ones.

Issue 28 made `collsweep analyze` fast by computing many things at once: paired comparisons in
batches that share their resamples, bootstrap medians once per distinct resampled launch,
schedules priced over arrays of sizes, crossovers refined by a verified secant step. Each test
here holds one of them against the straightforward computation it replaced.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.model.pricing import Costs, MessageCost, schedule_prediction, smooth_totals
from runners.domain.sweep import repetition
from runners.domain.sweep.repetition import median_last
from runners.domain.verdict.comparison import compare, compare_many
from runners.domain.verdict.crossovers import sign_changes_of


def random_units(rng: np.random.Generator, launches: int, passes: int, scale: float) -> dict:
    """Per-(launch, pass) medians with about a tenth of the units missing."""
    return {
        (launch, p): float(rng.lognormal()) * scale
        for launch in range(launches)
        for p in range(passes)
        if rng.random() < 0.9
    }


def test_a_batch_of_comparisons_gives_each_pair_what_it_gets_alone(monkeypatch) -> None:
    rng = np.random.default_rng(7)
    pairs = []
    for _ in range(120):
        launches, passes = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        pairs.append(
            (random_units(rng, launches, passes, 1.0), random_units(rng, launches, passes, 0.9))
        )
    monkeypatch.setattr(repetition, "BATCH_VALUES", 20_000)  # several chunks per batch
    together = compare_many(pairs)
    alone = [compare(a, b) for a, b in pairs]
    assert together == alone
    assert sum(c is None for c in alone) < len(alone) // 2  # most pairs were compared


def naive_bootstrap(sketch: np.ndarray, passes: np.ndarray, replicates: int) -> np.ndarray:
    """The median launch's replicates, every resampled launch's median taken anew (the
    computation before issue 28), for one row."""
    rng = np.random.default_rng(0)
    count, width = sketch.shape[0], sketch.shape[1]
    chosen = rng.integers(0, count, size=(replicates, count))
    draws = rng.random((replicates, count, width))
    pass_index = (draws * passes[chosen][:, :, None]).astype(int)
    resampled = sketch[chosen[:, :, None], pass_index]
    launch_medians = np.median(resampled.reshape(replicates, count, -1), axis=2)
    return np.median(launch_medians, axis=1)


@pytest.mark.parametrize("width", [1, 5, 101])
def test_the_bootstrap_takes_each_distinct_resampled_launch_once_with_the_same_result(
    width: int,
) -> None:
    rng = np.random.default_rng(width)
    launches, slots = 4, 3
    sketch = np.sort(rng.normal(size=(2, launches, slots, width)), axis=3)
    passes = np.array([3, 1, 2, 3])
    found = repetition._bootstrap(sketch, passes, 500, np.random.default_rng(0))
    for row in range(2):
        assert np.array_equal(found[row], naive_bootstrap(sketch[row], passes, 500))


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 5, 6), (4, 1)])
def test_median_last_is_numpys_median_over_the_last_axis(shape: tuple[int, ...]) -> None:
    values = np.random.default_rng(len(shape)).normal(size=shape)
    assert np.array_equal(median_last(values), np.median(values, axis=-1))


CURVE = MessageCost.from_medians([0, 64, 1024, 65536, 1 << 20], [2e-6, 2.1e-6, 3e-6, 2e-5, 3e-4])
EXCHANGE = MessageCost.from_medians([0, 64, 1024, 65536], [2.5e-6, 2.6e-6, 3.5e-6, 3e-5])


@pytest.mark.parametrize(
    "costs", [Costs(CURVE), Costs(CURVE, EXCHANGE, 1e-6, 2e-6, copy=CURVE)], ids=["one-way", "all"]
)
@pytest.mark.parametrize("ranks", [2, 3, 5, 8])
def test_a_schedule_priced_over_an_array_matches_it_priced_size_by_size(
    costs: Costs, ranks: int
) -> None:
    sizes = np.geomspace(1, 1e7, 97)  # below and above one element per block
    for name, spec in ALGORITHMS.items():
        if spec.schedule is None or spec.unsupported_reason(ranks, "sum", True):
            continue
        parts = spec.parts(ranks)
        together = smooth_totals(spec.schedule, parts, ranks, sizes, 4, costs, 1e-10)
        alone = [
            schedule_prediction(spec.schedule, parts, ranks, n, 4, costs, 1e-10, smooth=True)
            for n in sizes
        ]
        assert together == pytest.approx([p.total_s for p in alone], rel=1e-12), name


def test_crossovers_of_piecewise_linear_curves_are_their_exact_zeros() -> None:
    kinks = np.array([1e2, 3e3, 5e4, 7e5])
    slopes = np.array([1.0, -2.0, 0.5, -1.5, 3.0])

    def diff(n: np.ndarray) -> np.ndarray:
        """A continuous piecewise linear function of n, kinks at `kinks`, 1 at n = 10."""
        out = 1.0 + slopes[0] * (np.minimum(n, kinks[0]) - 10)
        for i, k in enumerate(kinks):
            out = out + (slopes[i + 1] - slopes[i]) * np.clip(n - k, 0, None)
        return out

    dense = np.geomspace(10, 1e7, 2_000_001)
    values = diff(dense)
    expected = [
        dense[i] - values[i] * (dense[i + 1] - dense[i]) / (values[i + 1] - values[i])
        for i in np.flatnonzero(np.sign(values[:-1]) != np.sign(values[1:]))
    ]
    found = sign_changes_of(diff, 10, 1e7)
    assert len(found) == len(expected) >= 2
    for x, want in zip(found, expected, strict=True):
        assert x == pytest.approx(want, rel=1e-9)
        below, above = diff(np.array([x * (1 - 1e-11), x * (1 + 1e-11)]))
        assert below * above <= 0


def test_a_crossover_at_a_jump_is_the_jump_itself() -> None:
    def diff(n: np.ndarray) -> np.ndarray:
        return np.where(n < 4096.0, -1.0 - n * 1e-6, 1.0 + n * 1e-6)

    (x,) = sign_changes_of(diff, 8, 1 << 20)
    assert math.isclose(x, 4096.0, rel_tol=1e-11)


@pytest.mark.parametrize("high, columns", [(5, 4), (1000, 8)])  # one number per row; too wide
def test_distinct_rows_are_numpys_unique_rows(high: int, columns: int) -> None:
    rows = np.random.default_rng(high).integers(0, high, size=(3000, columns))
    rows[:1000] = rows[1000:2000]  # repeats
    distinct, which = repetition._distinct_rows(rows)
    expected, inverse = np.unique(rows, axis=0, return_inverse=True)
    assert np.array_equal(distinct, expected) and np.array_equal(which, inverse.ravel())
