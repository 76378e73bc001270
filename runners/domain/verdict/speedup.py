"""How much faster the winner is than the library default: the one speed-up collsweep says.

The speed-up of a cell is the default's time over the winner's, paired over the launches that
timed both (runners.domain.verdict.comparison), with its 95% interval: `1.86x faster [1.21,
2.9]` when the interval is above 1, `within noise` when it holds 1, and `is the default` when
the winner is the default itself. The analysis stores it with each winners row; every surface
(the sweep's closing table, the verdict, `crossovers --summary`, the dashboard, the report)
reads it from there and words it here. A margin (runner-up against winner) is said the same way:
always slower or faster >= 1, with its words. Pure, no MPI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from runners.domain.units import format_ratio
from runners.domain.verdict.comparison import FASTER, WITHIN_NOISE, Comparison

IS_DEFAULT = "is the default"
UNKNOWN = "unknown"  # no default measured in the cell, or fewer than two shared launches
SLOWER_THAN_DEFAULT = "slower"  # a winner by median whose paired launches favour the default


@dataclass(frozen=True)
class Speedup:
    """The default's time over the winner's (> 1: the winner is faster), with its interval."""

    ratio: float | None
    low: float | None
    high: float | None
    verdict: str  # FASTER, WITHIN_NOISE, SLOWER_THAN_DEFAULT, IS_DEFAULT or UNKNOWN

    @classmethod
    def of(cls, default_over_winner: Comparison | None, winner_is_default: bool) -> Speedup:
        """From the paired comparison of the default (a) against the winner (b)."""
        if winner_is_default:
            return cls(1.0, 1.0, 1.0, IS_DEFAULT)
        if default_over_winner is None:
            return cls(None, None, None, UNKNOWN)
        found = default_over_winner
        verdict = WITHIN_NOISE if not found.decided else FASTER
        if found.decided and found.a_faster:
            verdict = SLOWER_THAN_DEFAULT
        return cls(found.ratio, found.low, found.high, verdict)

    @classmethod
    def against(cls, ratio: float | None, low: float | None, high: float | None) -> Speedup:
        """From a stored algorithm / default time ratio with its interval (against_default),
        turned the other way round: the default's time over the algorithm's."""
        r, lo, hi = (_number(v) for v in (ratio, low, high))
        if r is None or lo is None or hi is None or min(r, lo, hi) <= 0:
            return NO_SPEEDUP
        speedup, s_low, s_high = 1 / r, 1 / hi, 1 / lo
        verdict = FASTER if s_low > 1 else SLOWER_THAN_DEFAULT if s_high < 1 else WITHIN_NOISE
        return cls(speedup, s_low, s_high, verdict)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Speedup:
        """The speed-up a winners row stores (UNKNOWN for rows analysed before schema 11)."""
        verdict = row.get("speedup_verdict")
        if not verdict or (isinstance(verdict, float) and math.isnan(verdict)):
            return cls(None, None, None, UNKNOWN)
        return cls(
            _number(row.get("speedup")),
            _number(row.get("speedup_low")),
            _number(row.get("speedup_high")),
            str(verdict),
        )

    @property
    def decided(self) -> bool:
        """Whether the winner is decidedly faster than the default."""
        return self.verdict == FASTER

    def columns(self) -> dict[str, Any]:
        """The winners row's columns: speedup, speedup_low, speedup_high, speedup_verdict."""
        return {
            "speedup": self.ratio,
            "speedup_low": self.low,
            "speedup_high": self.high,
            "speedup_verdict": self.verdict,
        }

    def text(self) -> str:
        """'1.86x faster [1.21, 2.9]', 'within noise', 'is the default', 'unknown', or
        '0.8x: the default is faster [0.7, 0.9]'."""
        if self.verdict in (IS_DEFAULT, UNKNOWN) or self.ratio is None:
            return self.verdict
        interval = f"[{_plain(self.low)}, {_plain(self.high)}]"
        if self.verdict == FASTER:
            return f"{format_ratio(self.ratio)} faster {interval}"
        if self.verdict == SLOWER_THAN_DEFAULT and self.low and self.high:
            slower = f"[{_plain(1 / self.high)}, {_plain(1 / self.low)}]"
            return f"{format_ratio(1 / self.ratio)} slower than the default {slower}"
        return f"within noise ({format_ratio(self.ratio)} {interval})"


NO_SPEEDUP = Speedup(None, None, None, UNKNOWN)


def margin_words(runner_up_over_winner: tuple[float, float, float], decided: bool) -> str:
    """How much slower the runner-up is (its time over the winner's, with the interval), >= 1
    with its words: '1.83x slower [1.06, 3.17]', or 'tie (1.05x [0.9, 1.2])' when the launches
    do not decide."""
    slower, s_low, s_high = runner_up_over_winner
    interval = f"[{_plain(s_low)}, {_plain(s_high)}]"
    if decided:
        return f"{format_ratio(slower)} slower {interval}"
    return f"tie ({format_ratio(slower)} {interval})"


def _plain(value: float | None) -> str:
    """A ratio inside an interval, without its x: 1.21, 2.9, 13; beyond a factor of 100
    either way only that (<0.01, >100): a bound of 1625850 from two launches says no more."""
    if value is None:
        return "?"
    if value > 100:
        return ">100"
    if value < 0.01:
        return "<0.01"
    return format_ratio(value).rstrip("x")


def _number(value: object) -> float | None:
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) else number
