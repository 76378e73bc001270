"""Calibration fits recover planted parameters from synthetic timings."""

from __future__ import annotations

import numpy as np
import pytest

from runners.domain.model.closed_form import predict
from runners.domain.model.fitting import (
    CollectiveFit,
    fit_collectives,
    fit_gamma,
    fit_linear,
    fit_piecewise,
    weighted_r_squared,
)

SIZES = np.repeat(2.0 ** np.arange(0, 25), 5)  # 1 B .. 16 MiB, 5 repetitions each


def noisy(times: np.ndarray, rel: float = 0.02, seed: int = 0) -> np.ndarray:
    """Multiplicative lognormal noise of about `rel` relative spread."""
    rng = np.random.default_rng(seed)
    return times * np.exp(rng.normal(0.0, rel, np.shape(times)))


def test_fit_linear_exact_data():
    # T(n) = 1e-6 + n * 1e-9 at n = 0, 1000, 2000: 1e-6, 2e-6, 3e-6
    fit = fit_linear([0, 1000, 2000], [1e-6, 2e-6, 3e-6])
    assert fit.alpha == pytest.approx(1e-6)
    assert fit.beta == pytest.approx(1e-9)
    assert fit.r_squared == pytest.approx(1.0)
    assert (fit.min_bytes, fit.max_bytes, fit.n) == (0, 2000, 3)


def test_fit_linear_recovers_noisy_parameters():
    fit = fit_linear(SIZES, noisy(2e-6 + 1e-10 * SIZES))
    assert fit.alpha == pytest.approx(2e-6, rel=0.02)
    assert fit.beta == pytest.approx(1e-10, rel=0.02)
    assert fit.r_squared > 0.99


def test_fit_linear_clips_negative_alpha():
    sizes = np.array([1e3, 1e4, 1e5, 1e6])
    fit = fit_linear(sizes, -1e-7 + 1e-9 * sizes)  # an unconstrained fit gives alpha < 0
    assert fit.alpha == 0.0
    assert fit.beta > 0


def test_fit_linear_needs_two_sizes():
    with pytest.raises(ValueError, match="2 distinct sizes"):
        fit_linear([8, 8, 8], [1e-6, 1e-6, 1e-6])


def test_piecewise_finds_planted_breakpoint():
    # eager up to 64 KiB, rendezvous (an extra handshake) above it
    true = np.where(SIZES <= 65536, 1e-6 + 2e-10 * SIZES, 30e-6 + 1e-10 * SIZES)
    fit = fit_piecewise(SIZES, noisy(true))
    assert fit.breakpoints == [131072]
    assert fit.params_at(1000) == pytest.approx((1e-6, 2e-10), rel=0.05)
    assert fit.params_at(1 << 20) == pytest.approx((30e-6, 1e-10), rel=0.05)
    assert fit.params_at(65536)[0] == fit.segments[0].alpha
    assert fit.params_at(131072)[0] == fit.segments[1].alpha


def test_piecewise_finds_two_planted_breakpoints():
    true = np.select(
        [SIZES <= 4096, SIZES <= 262144],
        [0.5e-6 + 3e-10 * SIZES, 4e-6 + 2e-10 * SIZES],
        40e-6 + 1e-10 * SIZES,
    )
    fit = fit_piecewise(SIZES, noisy(true, seed=3))
    assert fit.breakpoints == [8192, 524288]
    assert [s.beta for s in fit.segments] == pytest.approx([3e-10, 2e-10, 1e-10], rel=0.05)


@pytest.mark.parametrize("seed", range(5))
def test_piecewise_invents_no_breakpoint_in_linear_data(seed):
    fit = fit_piecewise(SIZES, noisy(2e-6 + 1e-10 * SIZES, seed=seed))
    assert fit.breakpoints == []
    assert len(fit.segments) == 1


def test_piecewise_exact_linear_data_keeps_one_segment():
    fit = fit_piecewise(SIZES, 2e-6 + 1e-10 * SIZES)
    assert fit.breakpoints == []
    assert fit.r_squared == pytest.approx(1.0)


def test_piecewise_segments_need_three_sizes():
    sizes = np.array([1, 2, 4, 8, 16.0])  # 5 sizes cannot make two segments of >= 3
    times = np.array([1e-6, 1e-6, 1e-6, 9e-6, 9e-6])
    assert fit_piecewise(sizes, times).breakpoints == []


def test_fit_gamma_recovers_slope():
    sizes = 2.0 ** np.arange(10, 27)
    assert fit_gamma(sizes, noisy(5e-6 + 2.5e-10 * sizes)) == pytest.approx(2.5e-10, rel=0.02)


def test_fit_gamma_single_size():
    assert fit_gamma([1000, 1000], [2e-7, 2e-7]) == pytest.approx(2e-10)


def collective_rows(alpha: float, beta: float, gamma: float, rel: float = 0.01) -> list[tuple]:
    """(algorithm, ranks, nbytes, itemsize, seconds) rows from the models plus noise."""
    rows = []
    for alg in ("recursive_doubling", "binomial_tree", "rabenseifner", "ring"):
        for ranks in (2, 3, 4, 6, 8):
            for nbytes in 8 * 4 ** np.arange(0, 11):
                t = predict(alg, ranks, nbytes, alpha, beta, gamma, 8).total_s
                rows.append((alg, ranks, int(nbytes), 8, t))
    times = noisy(np.array([r[4] for r in rows]), rel)
    return [(*r[:4], float(t)) for r, t in zip(rows, times, strict=True)]


def test_fit_collectives_recovers_parameters():
    rows = collective_rows(3e-6, 2e-10, 5e-11)
    fit = fit_collectives([*rows, ("mpi", 8, 1024, 8, 1.0)])  # 'mpi' has no model: skipped
    assert isinstance(fit, CollectiveFit)
    assert fit.alpha == pytest.approx(3e-6, rel=0.02)
    assert fit.beta == pytest.approx(2e-10, rel=0.02)
    assert fit.gamma == pytest.approx(5e-11, rel=0.1)
    assert fit.r_squared > 0.99


def test_fit_collectives_accepts_mappings_and_stays_non_negative():
    keys = ("algorithm", "ranks", "nbytes", "itemsize", "seconds")
    rows = [dict(zip(keys, r, strict=True)) for r in collective_rows(3e-6, 2e-10, 0.0)]
    fit = fit_collectives(rows)
    assert fit is not None
    assert fit.gamma >= 0.0
    assert fit.gamma < 1e-11
    assert fit.alpha == pytest.approx(3e-6, rel=0.02)


def test_fit_collectives_too_few_or_degenerate():
    assert fit_collectives([("ring", 4, 64, 8, 1e-5), ("ring", 4, 128, 8, 2e-5)]) is None
    # recursive doubling on power-of-two p sends and reduces the same bytes: beta and gamma
    # cannot be told apart
    rows = [
        (
            "recursive_doubling",
            p,
            n,
            8,
            predict("recursive_doubling", p, n, 1e-6, 1e-9, 1e-10).total_s,
        )
        for p in (2, 4, 8)
        for n in (8, 1024, 1 << 20)
    ]
    assert fit_collectives(rows) is None


def test_without_gamma_a_ring_at_one_group_size_gives_alpha_and_beta():
    """A ring at one p reduces half the bytes it sends at every size: alpha, beta and gamma
    cannot be separated; with gamma held at 0 the fit recovers alpha and a beta that carries
    gamma's share (beta + gamma / 2), and predicts the times exactly."""
    alpha, beta, gamma = 2e-6, 3e-10, 1e-10
    rows = [
        ("ring", 8, n, 4, predict("ring", 8, n, alpha, beta, gamma, 4).total_s)
        for n in (1 << 20) * 2 ** np.arange(8)
    ]
    assert fit_collectives(rows) is None
    fit = fit_collectives(rows, with_gamma=False)
    assert fit is not None and fit.gamma == 0.0
    assert fit.alpha == pytest.approx(alpha, rel=1e-6)
    assert fit.beta == pytest.approx(beta + gamma / 2, rel=1e-6)
    assert fit.r_squared == pytest.approx(1.0)


def test_weighted_r_squared():
    t = np.array([1.0, 2.0, 4.0])
    assert weighted_r_squared(t, t) == 1.0
    # the best constant in relative terms: c = (1 + 1/2 + 1/4) / (1 + 1/4 + 1/16) = 4/3
    assert weighted_r_squared(t, np.full(3, 4 / 3)) == pytest.approx(0.0, abs=1e-12)
