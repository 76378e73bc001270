"""Summary statistics and the stopping rule."""

from __future__ import annotations

import math

import numpy as np

from runners.domain.sweep.stats import (
    StopRule,
    bandwidths,
    median_ci,
    relative_halfwidth,
    summarize,
)


def test_summary_of_known_samples() -> None:
    samples = np.arange(1, 101, dtype=float)  # 1..100
    summary = summarize(samples[::-1])
    assert summary.iterations == 100
    assert summary.median_s == 50.5
    assert summary.min_s == 1 and summary.max_s == 100
    assert math.isclose(summary.p5_s, 5.95) and math.isclose(summary.p95_s, 95.05)
    assert summary.ci_low_s < summary.median_s < summary.ci_high_s


def test_median_ci_covers_the_true_median_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(400):
        lo, hi = median_ci(np.sort(rng.lognormal(0.0, 0.5, size=60)))
        hits += lo <= 1.0 <= hi  # the lognormal(0, s) median is exactly 1
    assert 0.90 <= hits / 400 <= 0.99


def test_halfwidth_shrinks_with_more_samples() -> None:
    rng = np.random.default_rng(2)
    small = relative_halfwidth(np.sort(rng.normal(10, 1, 20)))
    large = relative_halfwidth(np.sort(rng.normal(10, 1, 2000)))
    assert large < small / 3


def test_stop_rule_limits_and_target() -> None:
    rule = StopRule(min_iterations=10, max_iterations=50, target_rel_ci=0.01, budget_s=1.0)
    tight = np.sort(np.full(10, 2.0))
    noisy = np.sort(np.random.default_rng(3).uniform(1, 3, 20))
    assert rule.should_stop(tight, elapsed_s=0.1)
    assert not rule.should_stop(tight[:5], elapsed_s=0.1)  # below min_iterations
    assert not rule.should_stop(noisy, elapsed_s=0.1)
    assert rule.should_stop(noisy, elapsed_s=1.5)  # budget
    assert rule.should_stop(np.sort(np.random.default_rng(3).uniform(1, 3, 50)), 0.1)


def test_busbw_follows_nccl_tests() -> None:
    algbw, busbw = bandwidths(4_000_000, 4, 0.001)
    assert algbw == 4.0
    assert busbw == 4.0 * 2 * 3 / 4
