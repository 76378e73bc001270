"""Where a sweep measures the members it chose for an `auto` parameter (no MPI).

`collsweep sweep` replaces a name such as `bcast.chain(segment=auto)` by the members the model
picks at each grid point from the run's calibration (the best and its neighbours by a factor
of 2: runners.jobs.auto_parameters), and lists each (member, ranks, bytes, dtype) it measures
as the spec's `auto_points`: a member listed there is measured at its listed points alone. The
spec keeps them (stored with the run), so a resumed run measures the same points.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

AutoPoint = tuple[str, int, int, str]  # (algorithm, ranks, bytes, dtype)
MAX_AUTO_POINTS = 100_000


def parse_auto_points(raw: Any) -> tuple[AutoPoint, ...]:
    """The spec's `auto_points` checked for shape; ValueError saying what is wrong."""
    if not isinstance(raw, list) or len(raw) > MAX_AUTO_POINTS:
        raise ValueError(f"auto_points must be a list of at most {MAX_AUTO_POINTS} points")
    for entry in raw:
        shape_ok = isinstance(entry, list | tuple) and len(entry) == 4
        if not shape_ok or not _typed(entry):
            raise ValueError(
                f"auto_points: each is [algorithm, ranks, bytes, dtype], got {entry!r}"
            )
    return tuple((str(a), int(r), int(n), str(d)) for a, r, n, d in raw)


def _typed(entry: Any) -> bool:
    algorithm, ranks, nbytes, dtype = entry
    whole = all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (ranks, nbytes))
    return isinstance(algorithm, str) and isinstance(dtype, str) and whole


class AutoFilter:
    """Whether a grid point is measured, given the spec's auto_points (built once a plan)."""

    def __init__(self, points: Iterable[AutoPoint]) -> None:
        self._points = frozenset(points)
        self._members = frozenset(p[0] for p in self._points)

    def measures(self, algorithm: str, ranks: int, nbytes: int, dtype: str) -> bool:
        """False only for a chosen member away from the points chosen for it."""
        if algorithm not in self._members:
            return True
        return (algorithm, ranks, nbytes, dtype) in self._points
