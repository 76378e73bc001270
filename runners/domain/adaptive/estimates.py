"""What an adaptive sweep knows of its grid (no MPI): the cells it may measure, the model's
prediction of every point, the points measured so far, and the model corrected by them.

A cell is one (collective, ranks, dtype, op) group at one size. The corrected model of a point
never measured is its prediction times two factors, each interpolated on log size between the
sizes measured: the group's offset from the model (the median ratio measured / predicted of
the algorithms measured at a size: the machine's), and the algorithm's own deviation from that
offset where it was measured (fading beyond them; an algorithm not measured in the group takes
its deviation in the nearest group size that measured it, as a group with nothing measured
takes that group's offset: the model errs alike at neighbouring p). A measured point is its
measurement.
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
    # priced by no schedule of their own (a library's choice, priced as its best algorithm's):
    # their measured deviation is all there is to know of them, so it is held, never faded
    unscheduled: frozenset[str] = frozenset()

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
    ratios = _log_ratios(grid, measured)
    offsets = _offsets(ratios.get(group) or _sibling(ratios, group) or {})
    out = {}
    for nbytes in grid.sizes(group):
        offset = _interpolated(offsets, nbytes)
        for algorithm in grid.algorithms[(group, nbytes)]:
            point = (group, nbytes, algorithm)
            if point in measured.times:
                out[(nbytes, algorithm)] = measured.times[point]
                continue
            mine = ratios.get(group, {}).get(algorithm)
            deviations = (
                _deviations(mine, offsets)
                if mine
                else _sibling_deviations(ratios, group, algorithm)
            )
            fade = 0.0 if algorithm in grid.unscheduled else FADE_DOUBLINGS
            log_ratio = offset + _near(deviations, nbytes, fade)
            out[(nbytes, algorithm)] = grid.predicted[point] * math.exp(log_ratio)
    return out


Ratios = dict[str, dict[int, float]]  # algorithm -> bytes -> log(measured / predicted)
FADE_DOUBLINGS = 4.0  # an algorithm's own deviation fades to none this far from where measured


def _log_ratios(grid: Grid, measured: Measured) -> dict[Group, Ratios]:
    """Per group and algorithm, log(measured / predicted) at each size it was measured."""
    out: dict[Group, Ratios] = {}
    for (group, nbytes, algorithm), seconds in measured.times.items():
        predicted = grid.predicted.get((group, nbytes, algorithm))
        if predicted and seconds > 0:
            by_algorithm = out.setdefault(group, {}).setdefault(algorithm, {})
            by_algorithm[nbytes] = math.log(seconds / predicted)
    return out


def _offsets(ratios: Ratios) -> dict[int, float]:
    """The group's offset from the model at each measured size: the median log ratio of the
    algorithms measured there (the machine's, shared by them all)."""
    sizes: dict[int, list[float]] = {}
    for at in ratios.values():
        for nbytes, value in at.items():
            sizes.setdefault(nbytes, []).append(value)
    return {n: statistics.median(values) for n, values in sizes.items()}


def _deviations(at: Mapping[int, float], offsets: Mapping[int, float]) -> dict[int, float]:
    """An algorithm's own error at each size it was measured: its log ratio less the group's
    offset there."""
    return {n: value - _interpolated(offsets, n) for n, value in at.items()}


def _sibling(ratios: Mapping[Group, Ratios], group: Group, algorithm: str = "") -> Ratios | None:
    """The ratios of the nearest group size of the same collective, datatype and op that
    measured anything (or `algorithm`): the model errs alike at neighbouring p."""
    collective, ranks, dtype, op = group
    siblings = [
        g for g, by in ratios.items()
        if g != group and (g[0], g[2], g[3]) == (collective, dtype, op)
        and (not algorithm or by.get(algorithm))
    ]  # fmt: skip
    if not siblings:
        return None
    return ratios[min(siblings, key=lambda g: abs(math.log(g[1] / ranks)))]


def _sibling_deviations(
    ratios: Mapping[Group, Ratios], group: Group, algorithm: str
) -> dict[int, float]:
    """An algorithm's own deviations in the nearest group size that measured it ({}: none)."""
    sibling = _sibling(ratios, group, algorithm)
    return _deviations(sibling[algorithm], _offsets(sibling)) if sibling else {}


def _interpolated(at: Mapping[int, float], nbytes: int) -> float:
    """A value at `nbytes`: linear in log size between the nearest sizes that have one, the
    nearest one's beyond them, 0 where none has."""
    if not at:
        return 0.0
    below = [n for n in at if n <= nbytes]
    above = [n for n in at if n >= nbytes]
    if not below or not above:
        return at[max(below) if below else min(above)]
    lo, hi = max(below), min(above)
    if lo == hi:
        return at[lo]
    share = math.log(nbytes / lo) / math.log(hi / lo)
    return at[lo] + share * (at[hi] - at[lo])


def _near(deviations: Mapping[int, float], nbytes: int, fade: float) -> float:
    """An algorithm's deviation at `nbytes`: interpolated between the sizes it was measured,
    fading linearly to none over `fade` doublings beyond them (what a schedule did at 8 B says
    little of 1 MiB; 0: held as it is at the nearest)."""
    if not deviations:
        return 0.0
    lo, hi = min(deviations), max(deviations)
    if lo <= nbytes <= hi:
        return _interpolated(deviations, nbytes)
    edge = lo if nbytes < lo else hi
    if not fade:
        return deviations[edge]
    return deviations[edge] * max(0.0, 1.0 - abs(math.log2(nbytes / edge)) / fade)


def ranked(estimates: Mapping[tuple[int, str], float], nbytes: int) -> list[tuple[float, str]]:
    """A size's algorithms by corrected time, fastest first."""
    return sorted((t, a) for (n, a), t in estimates.items() if n == nbytes)
