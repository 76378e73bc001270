"""The one speed-up and its words (runners.domain.verdict.speedup)."""

from __future__ import annotations

import pytest

from runners.domain.verdict.comparison import Comparison
from runners.domain.verdict.speedup import (
    FASTER,
    IS_DEFAULT,
    SLOWER_THAN_DEFAULT,
    UNKNOWN,
    WITHIN_NOISE,
    Speedup,
    margin_words,
)
from runners.domain.verdict.winner_table import margin_of


def test_a_speedup_is_the_defaults_time_over_the_winners_with_its_words() -> None:
    decided = Speedup.of(Comparison(1.86, 1.21, 2.9, 10, 5), winner_is_default=False)
    assert (decided.verdict, decided.text()) == (FASTER, "1.86x faster [1.21, 2.9]")
    noise = Speedup.of(Comparison(1.21, 0.24, 13.2, 10, 5), winner_is_default=False)
    assert noise.text() == "within noise (1.21x [0.24, 13.2])" and not noise.decided
    beaten = Speedup.of(Comparison(0.8, 0.7, 0.9, 10, 5), winner_is_default=False)
    assert beaten.verdict == SLOWER_THAN_DEFAULT
    assert beaten.text() == "1.25x slower than the default [1.11, 1.43]"
    assert Speedup.of(None, winner_is_default=True).text() == IS_DEFAULT
    assert Speedup.of(None, winner_is_default=False).verdict == UNKNOWN


def test_a_stored_ratio_against_the_default_turns_round_to_the_same_speedup() -> None:
    """against_default stores algorithm / default; the pages say default / algorithm."""
    found = Speedup.against(0.5, 0.4, 0.8)
    assert found.ratio == pytest.approx(2.0)
    assert (found.low, found.high) == (pytest.approx(1.25), pytest.approx(2.5))
    assert found.verdict == FASTER
    assert Speedup.against(1.0, 0.9, 1.2).verdict == WITHIN_NOISE
    assert Speedup.against(1.25, 1.1, 1.4).verdict == SLOWER_THAN_DEFAULT
    assert Speedup.against(None, 0.9, 1.2).verdict == UNKNOWN


def test_a_stored_row_reads_back_and_an_old_row_is_unknown() -> None:
    row = {"speedup": 2.0, "speedup_low": 1.5, "speedup_high": 2.5, "speedup_verdict": FASTER}
    assert Speedup.from_row(row) == Speedup(2.0, 1.5, 2.5, FASTER)
    assert Speedup.from_row(Speedup.from_row(row).columns()) == Speedup.from_row(row)
    assert Speedup.from_row({"speedup_verdict": None}).verdict == UNKNOWN
    assert Speedup.from_row({"speedup_verdict": float("nan")}).verdict == UNKNOWN


def test_a_margin_is_always_slower_and_at_least_one_when_decided() -> None:
    stored = {"ratio": 0.5, "ratio_low": 0.45, "ratio_high": 0.55}  # winner / runner-up
    assert margin_words(margin_of(stored), decided=True) == "2x slower [1.82, 2.22]"
    tie = margin_of({"ratio": 1.01, "ratio_low": 0.95, "ratio_high": 1.1})
    assert margin_words(tie, decided=False).startswith("tie (0.99")
    assert margin_of({"ratio": float("nan"), "ratio_low": 0.9, "ratio_high": 1.1}) is None


def test_an_interval_past_a_factor_of_100_says_only_that() -> None:
    """Two launches can bound a ratio by 1e-6 and 1.6e6: the words say '<0.01' and '>100'."""
    assert margin_words((1.43, 0.00000125, 1625850.0), decided=False) == "tie (1.43x [<0.01, >100])"
    assert margin_words((1.83, 1.06, 3.17), decided=True) == "1.83x slower [1.06, 3.17]"
