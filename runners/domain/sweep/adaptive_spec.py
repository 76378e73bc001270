"""An adaptive sweep as its spec holds it (no MPI): the budget, and every point chosen so far
with its round and its reason (runners.domain.adaptive chooses them).

The spec's `adaptive_points` are the one record of what an adaptive run chose: stored with the
run and rewritten before each round, so a resumed run measures the same points and goes on
choosing from there, and the dashboard reads the rounds and reasons from it. The budget is
seconds of measuring (`90s`, `2min`, `1h`), launches (`30 launches`), or a share of the full
grid's estimated cost (`10%`, the default).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from runners.domain.units import format_seconds

# (algorithm, ranks, bytes, dtype, op, round, reason)
AdaptivePoint = tuple[str, int, int, str, str, int, str]
MAX_ADAPTIVE_POINTS = 4000  # ~200 B each: a stored spec stays within the store's 1 MiB
SECONDS, LAUNCHES, SHARE = "seconds", "launches", "share"
DEFAULT_BUDGET = "10%"
_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}
_FORM = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(s|min|h|%|launch|launches)\s*$")


@dataclass(frozen=True)
class Budget:
    """How much an adaptive sweep may measure: seconds, launches, or a share of the grid."""

    kind: str
    value: float

    def limit_s(self, full_grid_s: float) -> float | None:
        """The budget in seconds (None for one counted in launches)."""
        if self.kind == SECONDS:
            return self.value
        return self.value * full_grid_s if self.kind == SHARE else None

    def allows(self, measured_s: float, estimated_s: float, launches: int, full_s: float) -> bool:
        """Whether this much spent is within the budget: launches counted, seconds measured
        (the rounds' wall time), a share in the estimate that priced the full grid (`full_s`),
        like against like."""
        if self.kind == LAUNCHES:
            return launches <= self.value
        if self.kind == SECONDS:
            return measured_s <= self.value
        return estimated_s <= self.value * full_s

    def words(self, full_grid_s: float) -> str:
        """The budget as a person reads it."""
        if self.kind == LAUNCHES:
            return f"{self.value:g} launches"
        limit = format_seconds(self.limit_s(full_grid_s) or 0.0)
        if self.kind == SHARE:
            return f"{self.value:.0%} of the full grid's {format_seconds(full_grid_s)}: {limit}"
        return limit


def parse_budget(text: Any) -> Budget:
    """`90s`, `2min`, `1h`, `30 launches` or `10%`; ValueError saying the forms otherwise."""
    found = _FORM.match(str(text))
    if found is None or float(found.group(1)) <= 0:
        raise ValueError(
            f"adaptive_budget {text!r}: write seconds (90s, 2min, 1h), launches (30 launches) "
            "or a share of the full grid (10%), more than 0"
        )
    value, unit = float(found.group(1)), found.group(2)
    if unit == "%":
        if value > 100:
            raise ValueError(f"adaptive_budget {text!r}: a share is at most 100%")
        return Budget(SHARE, value / 100)
    if unit.startswith("launch"):
        return Budget(LAUNCHES, value)
    return Budget(SECONDS, value * _UNITS[unit])


def budget_text(raw: Any) -> str:
    """The `adaptive_budget` key: checked (parse_budget's ValueError), kept as its text."""
    parse_budget(raw)
    return str(raw).strip()


def parse_adaptive_points(raw: Any) -> tuple[AdaptivePoint, ...]:
    """The spec's `adaptive_points` checked for shape; ValueError saying what is wrong."""
    if not isinstance(raw, list) or len(raw) > MAX_ADAPTIVE_POINTS:
        raise ValueError(f"adaptive_points must be a list of at most {MAX_ADAPTIVE_POINTS} points")
    for entry in raw:
        if not (isinstance(entry, list | tuple) and len(entry) == 7 and _typed(entry)):
            raise ValueError(
                "adaptive_points: each is [algorithm, ranks, bytes, dtype, op, round, reason], "
                f"got {entry!r:.200}"
            )
    return tuple(
        (str(a), int(r), int(n), str(d), str(o), int(k), str(w)) for a, r, n, d, o, k, w in raw
    )


def _typed(entry: Any) -> bool:
    algorithm, ranks, nbytes, dtype, op, index, reason = entry
    whole = [v for v in (ranks, nbytes, index) if isinstance(v, int) and not isinstance(v, bool)]
    texts = all(isinstance(v, str) for v in (algorithm, dtype, op, reason))
    return texts and len(whole) == 3 and min(ranks, nbytes) >= 1 and index >= 0


class AdaptiveFilter:
    """Whether a grid point is measured: in an adaptive sweep only the points chosen so far
    (the spec's adaptive_points), in any other every point."""

    def __init__(self, adaptive: bool, points: Iterable[AdaptivePoint]) -> None:
        self._on = adaptive
        self._points = frozenset(p[:5] for p in points)

    def measures(self, algorithm: str, ranks: int, nbytes: int, dtype: str, op: str) -> bool:
        """False only for a point an adaptive sweep has not chosen."""
        return not self._on or (algorithm, ranks, nbytes, dtype, op) in self._points
