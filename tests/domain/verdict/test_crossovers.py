"""Crossovers of predicted curves, paired comparisons, and measured crossovers between decided
sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from runners.domain.model.closed_form import predict
from runners.domain.verdict.comparison import compare
from runners.domain.verdict.crossovers import best_algorithm, decided_crossovers, sign_changes_of


def predicted_crossover(
    model_a, model_b, ranks, alpha, beta, gamma, itemsize, lo, hi, params_at=None
) -> list[float]:
    """Where two closed-form (textbook) curves cross, with (alpha, beta) per size if given."""

    def diff(n: float) -> float:
        a, b = params_at(n) if params_at is not None else (alpha, beta)
        t_a = predict(model_a, ranks, n, a, b, gamma, itemsize, smooth=True).total_s
        return t_a - predict(model_b, ranks, n, a, b, gamma, itemsize, smooth=True).total_s

    return sign_changes_of(np.vectorize(diff), lo, hi)


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


def paired_units(ratio: float, rng: np.random.Generator, launches: int = 3) -> tuple:
    """Per-(launch, pass) medians of a and b, a/b = `ratio` times launch and pass noise."""
    a, b = {}, {}
    for launch in range(launches):
        state = math.exp(rng.normal(0, 0.3))  # launches differ a lot, alike for a and b
        for pass_ in range(2):
            base = 1e-5 * state * math.exp(rng.normal(0, 0.05))
            a[(launch, pass_)] = base * ratio * math.exp(rng.normal(0, 0.01))
            b[(launch, pass_)] = base * math.exp(rng.normal(0, 0.01))
    return a, b


def test_a_clear_winner_is_decided_despite_launch_to_launch_swings():
    found = compare(*paired_units(0.8, np.random.default_rng(1)))
    assert found.decided and found.a_faster and found.low < 0.8 < found.high < 1
    assert (found.units, found.launches) == (6, 3)


def test_two_equal_algorithms_tie():
    rng = np.random.default_rng(2)
    ties = sum(not compare(*paired_units(1.0, rng)).decided for _ in range(100))
    assert ties >= 90


def test_too_few_shared_passes_decide_nothing():
    assert compare({(0, 0): 1.0}, {(0, 0): 2.0, (0, 1): 2.0}) is None


def test_decided_crossovers_bracket_the_flip_by_measured_sizes_only():
    rng = np.random.default_rng(3)
    sizes = [1024, 2048, 8192, 32768]
    ratios = [0.7, 1.0, 1.0, 1.4]  # a faster, tie, tie, b faster
    found = [compare(*paired_units(r, rng)) for r in ratios]
    assert [c.decided for c in found] == [True, False, False, True]
    ((estimate, low, high),) = decided_crossovers(sizes, found)
    assert (low, high) == (1024, 32768) and low < estimate < high


def test_no_flip_no_crossover_and_undecided_cells_count_for_nothing():
    rng = np.random.default_rng(4)
    found = [compare(*paired_units(r, rng)) for r in (0.6, 1.01, 0.7)]
    assert decided_crossovers([8, 64, 512], found) == []
    assert decided_crossovers([8, 64], [None, None]) == []


def test_best_algorithm():
    assert best_algorithm({"ring": 2.0, "rabenseifner": 1.0, "mpi": 1.5}) == "rabenseifner"
    assert best_algorithm({"b": 1.0, "a": 1.0}) == "a"
    with pytest.raises(ValueError):
        best_algorithm({})
