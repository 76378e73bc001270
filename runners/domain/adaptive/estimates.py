"""What an adaptive sweep knows of its grid (no MPI): the cells it may measure, the model's
prediction of every point, the points measured so far, and the model corrected by them.

A cell is one (collective, ranks, dtype, op) group at one size. The corrected model of a point
never measured is its prediction times the ratio measured / predicted of the same algorithm at
its nearest measured sizes (interpolated on log size, held flat beyond them); an algorithm not
yet measured in the group takes the group's median ratio (the machine's offset from the
model). A measured point is its measurement.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field

Group = tuple[str, int, str, str]  # (collective, ranks, dtype, op)
Where = tuple[Group, int]  # a cell: its group and its size in bytes
PointAt = tuple[Group, int, str]  # a point: (group, bytes, algorithm)


@dataclass(frozen=True)
class Grid:
    """The cells a sweep may measure: each cell's runnable algorithms, the library defaults
    a winner is held against, and the model's time of every point."""

    algorithms: Mapping[Where, tuple[str, ...]]
    predicted: Mapping[PointAt, float]
    defaults: Mapping[Group, tuple[str, ...]] = field(default_factory=dict)

    def groups(self) -> list[Group]:
        """Every group, in the grid's order."""
        return list(dict.fromkeys(group for group, _ in self.algorithms))

    def sizes(self, group: Group) -> list[int]:
        """A group's sizes, ascending."""
        return sorted(n for g, n in self.algorithms if g == group)

    def cells(self) -> list[Where]:
        """Every cell, group by group, size by size."""
        return [(g, n) for g in self.groups() for n in self.sizes(g)]

    def predicted_best(self, where: Where) -> str:
        """The algorithm the model prices fastest in a cell."""
        group, nbytes = where
        return min(self.algorithms[where], key=lambda a: self.predicted[(group, nbytes, a)])


@dataclass(frozen=True)
class Outcome:
    """A measured cell's answer: its fastest measured algorithm, the runner-up, and whether
    the launches decide between them (a tie otherwise)."""

    winner: str
    runner_up: str
    decided: bool


@dataclass
class Measured:
    """What the sweep has measured: every point's median, each measured cell's outcome, and
    every point chosen so far (measured or not: one that failed is not chosen again)."""

    times: dict[PointAt, float] = field(default_factory=dict)
    outcomes: dict[Where, Outcome] = field(default_factory=dict)
    tried: set[PointAt] = field(default_factory=set)

    def sizes(self, group: Group) -> list[int]:
        """The group's measured sizes (cells with an outcome), ascending."""
        return sorted(n for g, n in self.outcomes if g == group)


def corrected(grid: Grid, measured: Measured, group: Group) -> dict[tuple[int, str], float]:
    """The corrected model of every point of a group: (bytes, algorithm) -> seconds."""
    sizes = grid.sizes(group)
    ratios = _log_ratios(grid, measured)
    mine = ratios.get(group, {})
    offset = statistics.median(v for r in mine.values() for v in r.values()) if mine else 0.0
    out = {}
    for nbytes in sizes:
        for algorithm in grid.algorithms[(group, nbytes)]:
            point = (group, nbytes, algorithm)
            if point in measured.times:
                out[(nbytes, algorithm)] = measured.times[point]
                continue
            at = mine.get(algorithm) or _sibling(ratios, group, algorithm)
            out[(nbytes, algorithm)] = grid.predicted[point] * math.exp(
                _interpolated(at, nbytes, offset)
            )
    return out


def _log_ratios(grid: Grid, measured: Measured) -> dict[Group, dict[str, dict[int, float]]]:
    """Per group and algorithm, log(measured / predicted) at each size it was measured."""
    out: dict[Group, dict[str, dict[int, float]]] = {}
    for (group, nbytes, algorithm), seconds in measured.times.items():
        predicted = grid.predicted.get((group, nbytes, algorithm))
        if predicted and seconds > 0:
            by_algorithm = out.setdefault(group, {}).setdefault(algorithm, {})
            by_algorithm[nbytes] = math.log(seconds / predicted)
    return out


def _sibling(
    ratios: Mapping[Group, Mapping[str, Mapping[int, float]]], group: Group, algorithm: str
) -> Mapping[int, float]:
    """An algorithm's log ratios in the nearest group size of the same collective, datatype
    and op that measured it (the model errs alike at neighbouring p); {} where none did."""
    collective, ranks, dtype, op = group
    siblings = [
        g for g, by in ratios.items()
        if by.get(algorithm) and (g[0], g[2], g[3]) == (collective, dtype, op)
    ]  # fmt: skip
    if not siblings:
        return {}
    nearest = min(siblings, key=lambda g: abs(math.log(g[1] / ranks)))
    return ratios[nearest][algorithm]


def _interpolated(at: Mapping[int, float], nbytes: int, offset: float) -> float:
    """A log ratio at `nbytes`: linear in log size between the nearest measured sizes, the
    nearest one's beyond them, `offset` where none is measured."""
    if not at:
        return offset
    below = [n for n in at if n <= nbytes]
    above = [n for n in at if n >= nbytes]
    if not below or not above:
        return at[max(below) if below else min(above)]
    lo, hi = max(below), min(above)
    if lo == hi:
        return at[lo]
    share = math.log(nbytes / lo) / math.log(hi / lo)
    return at[lo] + share * (at[hi] - at[lo])


def ranked(estimates: Mapping[tuple[int, str], float], nbytes: int) -> list[tuple[float, str]]:
    """A size's algorithms by corrected time, fastest first."""
    return sorted((t, a) for (n, a), t in estimates.items() if n == nbytes)
