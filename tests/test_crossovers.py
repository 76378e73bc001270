"""Crossovers of predicted and measured curves, bootstrap intervals."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from runners.domain.crossovers import (
    best_algorithm,
    bootstrap_crossover,
    measured_crossovers,
    predicted_crossover,
)


def test_predicted_crossover_by_hand():
    # p=8, alpha=2e-6, beta=1e-9, gamma=5e-10, smooth blocks b = n/8:
    # recursive_doubling: 3 alpha + 3 n (beta + gamma)          = 6e-6 + 4.5e-9 n
    # ring: 14 alpha + 2 * 7 * (n/8) beta + 7 * (n/8) gamma     = 2.8e-5 + 2.1875e-9 n
    # equal at 2.2e-5 = 2.3125e-9 n -> n = 9513.5135...
    got = predicted_crossover("ring", "recursive_doubling", 8, 2e-6, 1e-9, 5e-10, 8, 1, 1e8)
    assert got == pytest.approx([2.2e-5 / 2.3125e-9], rel=1e-9)
    assert got == pytest.approx([9513.5135135], rel=1e-9)


def test_predicted_crossover_non_power_of_two():
    # p=6 (pof2=4), alpha=2e-6, beta=1e-9, gamma=5e-10:
    # ring: 10 alpha + 2 (5/6) n beta + (5/6) n gamma
    # rabenseifner: 6 alpha + (2 (3/4) + 2) n beta + (3/4 + 1) n gamma
    # ring - rab = 4 alpha - (3.5 - 5/3) n beta - (1.75 - 5/6) n gamma = 0
    # -> n = 8e-6 / (1.8333e-9 + 0.45833e-9) = 8e-6 / 2.291667e-9 = 3490.909...
    got = predicted_crossover("ring", "rabenseifner", 6, 2e-6, 1e-9, 5e-10, 4, 1, 1e9)
    assert got == pytest.approx([8e-6 / (11 / 6 * 1e-9 + 11 / 12 * 5e-10)], rel=1e-9)
    assert got == pytest.approx([3490.9090909], rel=1e-9)


def test_predicted_crossover_none():
    # binomial tree costs 2x recursive doubling's alpha and beta terms at p=8: never equal
    assert (
        predicted_crossover("binomial_tree", "recursive_doubling", 8, 2e-6, 1e-9, 5e-10, 8, 1, 1e9)
        == []
    )
    # identical curves do not cross either
    assert predicted_crossover("ring", "ring", 8, 2e-6, 1e-9, 5e-10, 8, 1, 1e9) == []


def test_predicted_crossover_outside_range():
    assert (
        predicted_crossover("ring", "recursive_doubling", 8, 2e-6, 1e-9, 5e-10, 1, 1e4, 1e8) == []
    )


def regimes(nbytes: float) -> tuple[float, float]:
    """Eager below 64 KiB (alpha 1e-6), rendezvous from 64 KiB (alpha 1e-4); beta 1e-9."""
    return (1e-6, 1e-9) if nbytes < 65536 else (1e-4, 1e-9)


def test_predicted_crossovers_with_piecewise_params():
    # gamma=0, p=8: T_ring - T_rd = 11 alpha + 14 (n/8) beta - 3 n beta = 11 alpha - 1.25 n beta
    # eager: zero at 11e-6 = 1.25e-9 n -> n = 8800
    # at 64 KiB alpha jumps: 1.1e-3 - 1.25e-9 * 65536 > 0, so rd is faster again (a jump)
    # rendezvous: 1.1e-3 = 1.25e-9 n -> n = 880000
    two = predicted_crossover("ring", "recursive_doubling", 8, 0, 0, 0, 1, 1, 5e5, regimes)
    assert two == pytest.approx([8800, 65536], rel=1e-9)
    three = predicted_crossover("ring", "recursive_doubling", 8, 0, 0, 0, 1, 1, 1e7, regimes)
    assert three == pytest.approx([8800, 65536, 880000], rel=1e-9)


def test_predicted_crossover_bad_range():
    with pytest.raises(ValueError, match="lo_bytes"):
        predicted_crossover("ring", "recursive_doubling", 8, 2e-6, 1e-9, 0, 1, 0, 1e6)


def test_measured_crossovers_two_crossings():
    sizes = [1, 2, 4, 8, 16, 32]
    b = np.full(6, 1e-5)
    a = b * np.exp([0.3, 0.1, -0.1, -0.3, -0.1, 0.1])  # log(a/b) linear in log size
    # zeros half-way (in log) between 2 and 4, and between 16 and 32: sqrt(8), sqrt(512)
    got = measured_crossovers(sizes, a, b)
    assert got == pytest.approx([math.sqrt(8), math.sqrt(512)], rel=1e-12)


def test_measured_crossovers_log_log_interpolation():
    # log(a/b) = log 2 at 100 and -log 8 at 10000: zero a quarter of the way in log10 size,
    # i.e. at 10 ** (2 + 2 * log 2 / (log 2 + log 8)) = 10 ** 2.5 = 316.23
    got = measured_crossovers([100, 10000], [2.0, 1.0], [1.0, 8.0])
    assert got == pytest.approx([10**2.5], rel=1e-12)


def test_measured_crossovers_none_and_tie():
    assert measured_crossovers([1, 2, 4], [1, 2, 3], [2, 3, 4]) == []
    # an exact tie at 4 between opposite signs: the crossover is the tie
    assert measured_crossovers([1, 2, 4, 8, 16], [1, 1, 5, 9, 9], [2, 2, 5, 3, 3]) == [4]
    # touching without changing sign is no crossover
    assert measured_crossovers([1, 2, 4], [1, 5, 1], [2, 5, 2]) == []


def test_measured_crossovers_sorts_sizes():
    # sorted: a/b = 1/2 at 1, 2, 4 and 2 at 8, 16, 32: log ratio -log 2 -> +log 2 between
    # 4 and 8, zero half-way in log: sqrt(32)
    got = measured_crossovers([32, 1, 16, 2, 8, 4], [4, 1, 4, 1, 4, 1], [2] * 6)
    assert got == pytest.approx([math.sqrt(32)], rel=1e-12)


def synthetic_samples(seed: int = 1):
    """a = 2e-6 + 4e-10 n and b = 8e-6 + 1e-10 n cross at n = 6e-6 / 3e-10 = 20000."""
    sizes = 2.0 ** np.arange(10, 20)  # 1 KiB .. 512 KiB
    rng = np.random.default_rng(seed)
    a = [(2e-6 + 4e-10 * n) * np.exp(rng.normal(0, 0.05, 200)) for n in sizes]
    b = [(8e-6 + 1e-10 * n) * np.exp(rng.normal(0, 0.05, 200)) for n in sizes]
    return sizes, a, b


def test_bootstrap_interval_contains_truth_and_is_tight():
    sizes, a, b = synthetic_samples()
    (result,) = bootstrap_crossover(sizes, a, b, n_boot=200, seed=0)
    point, low, high = result
    assert low <= point <= high
    assert low <= 20000 <= high
    assert high / low < 1.15


def test_bootstrap_no_crossing():
    sizes, a, _ = synthetic_samples()
    slower = [x * 2 for x in a]
    assert bootstrap_crossover(sizes, a, slower) == []


def test_bootstrap_is_deterministic_and_fast():
    sizes, a, b = synthetic_samples()
    assert bootstrap_crossover(sizes, a, b, seed=3) == bootstrap_crossover(sizes, a, b, seed=3)
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        bootstrap_crossover(sizes, a, b, n_boot=200)
        best = min(best, time.perf_counter() - start)
    assert best < 0.1


def test_bootstrap_two_crossings_each_get_an_interval():
    sizes = 2.0 ** np.arange(0, 12)
    rng = np.random.default_rng(5)
    # log(a/b) = 0.5 (x - 3)(x - 8) / 4, x = log2 size: crossings at 8 and 256 bytes
    shape = 0.5 * (np.log2(sizes) - 3) * (np.log2(sizes) - 8) / 4
    b = [1e-5 * np.exp(rng.normal(0, 0.02, 100)) for _ in sizes]
    a = [1e-5 * math.exp(s) * np.exp(rng.normal(0, 0.02, 100)) for s in shape]
    got = bootstrap_crossover(sizes, a, b)
    assert len(got) == 2
    for (point, low, high), truth in zip(got, (8, 256), strict=True):
        assert low <= truth <= high
        assert low <= point <= high
        assert high / low < 1.5


def test_best_algorithm():
    assert best_algorithm({"ring": 2.0, "rabenseifner": 1.0, "mpi": 1.5}) == "rabenseifner"
    assert best_algorithm({"b": 1.0, "a": 1.0}) == "a"
    with pytest.raises(ValueError):
        best_algorithm({})


def test_bootstrap_interval_always_contains_its_point_even_for_bimodal_samples() -> None:
    # b's samples sit at 9 or 11 (a at 10), the mix drifting with size: two crossings close
    # together whose replicate distribution (seed 86) misses the full-sample estimates.
    rng = np.random.default_rng(86)
    sizes = [2.0**k for k in range(3, 11)]
    samples_a = [rng.normal(10, 0.05, 10) for _ in sizes]
    samples_b = []
    for i in range(len(sizes)):
        low_mode = rng.binomial(10, i / (len(sizes) - 1))
        modes = np.concatenate([np.full(low_mode, 9.0), np.full(10 - low_mode, 11.0)])
        samples_b.append(modes + rng.normal(0, 0.01, 10))
    found = bootstrap_crossover(sizes, samples_a, samples_b, n_boot=200)
    assert found
    for point, low, high in found:
        assert low <= point <= high
