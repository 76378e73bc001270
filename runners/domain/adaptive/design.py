"""Which points an adaptive sweep measures, round by round (no MPI).

Round 0 is a coarse design from the model alone: per group the smallest size (every
algorithm: small points are cheap), the two sizes that bracket each crossover the model
predicts, and the largest (in that order, should the budget cut it); at each, the algorithms the
model puts within CLOSE of its best, and the library defaults. Each later round looks at what
was measured, through the model corrected by it (estimates.py), and chooses, most urgent
first:

1. between two measured sizes whose winners differ, the middle size (where the choice changes);
2. between two measured sizes won by the same algorithm, the size where the corrected model
   prefers another one most (the measurements and the model disagree there);
3. at a measured cell, an algorithm not measured there that the corrected model puts within
   CLOSE_MEASURED of the measured winner (the measured answer may not be the true one), and
   at a cell where one point alone was measured, its fastest rival (a winner needs one).

Nothing left to choose: every cell is decided (measured, or inferred between two measured
sizes that agree). Each choice says why it was made.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from runners.domain.adaptive.estimates import (
    Grid,
    Group,
    Measured,
    PointAt,
    Where,
    corrected,
    ranked,
)
from runners.domain.libraries.catalog import local_name
from runners.domain.units import format_bytes

CLOSE = 1.5  # the model's own prediction: an algorithm this close to its best is a contender
CLOSE_MEASURED = 1.15  # the corrected model, against a measured winner
PREFERS = 1.03  # the corrected model prefers another algorithm by more than this


@dataclass(frozen=True)
class Choice:
    """A point to measure, the round that chose it and why."""

    point: PointAt
    round: int
    reason: str

    @property
    def where(self) -> Where:
        """The point's cell."""
        return self.point[0], self.point[1]


def first_round(grid: Grid) -> list[Choice]:
    """Round 0, cheapest and most telling first (a budget keeps the front): every group's
    smallest size, then the brackets of the model's crossovers, then its largest size."""
    kinds: list[list[Choice]] = [[], [], []]
    for group in grid.groups():
        sizes = grid.sizes(group)
        every = grid.algorithms[(group, sizes[0])]
        kinds[0] += _at(grid, group, sizes[0], every, 0, "the smallest size: every algorithm")
        for nbytes, why in _model_sizes(grid, group, sizes[1:]):
            estimates = {
                (nbytes, a): grid.predicted[(group, nbytes, a)]
                for a in grid.algorithms[(group, nbytes)]
            }
            algorithms = _contenders(estimates, nbytes, CLOSE, grid.defaults.get(group, ()))
            kinds[2 if nbytes == sizes[-1] else 1] += _at(grid, group, nbytes, algorithms, 0, why)
    return _unique([c for kind in kinds for c in kind], Measured())


def _model_sizes(grid: Grid, group: Group, sizes: list[int]) -> list[tuple[int, str]]:
    """The largest size and both sides of every crossover the model predicts (the smallest
    size is chosen apart)."""
    out = {sizes[-1]: "the largest size"} if sizes else {}
    full = grid.sizes(group)
    for below, above in itertools.pairwise(full):
        a, b = grid.predicted_best((group, below)), grid.predicted_best((group, above))
        if a != b:
            why = (
                f"brackets the model's crossover {local_name(a)} -> {local_name(b)} between "
                f"{format_bytes(below)} and {format_bytes(above)}"
            )
            for nbytes in (below, above):
                if nbytes in sizes:
                    out.setdefault(nbytes, why)
    return sorted(out.items())


def next_round(grid: Grid, measured: Measured, index: int) -> list[Choice]:
    """Round `index`'s points, most urgent first ([] when every cell is decided)."""
    urgent: list[list[Choice]] = [[], [], []]
    for group in grid.groups():
        estimates = corrected(grid, measured, group)
        defaults = grid.defaults.get(group, ())
        for rank, found in enumerate(_rules(grid, measured, group, estimates, defaults, index)):
            urgent[rank] += found
    return _unique([c for level in urgent for c in level], measured)


def _rules(
    grid: Grid,
    measured: Measured,
    group: Group,
    estimates: dict[tuple[int, str], float],
    defaults: tuple[str, ...],
    index: int,
) -> tuple[list[Choice], list[Choice], list[Choice]]:
    """The three rules' choices in one group."""
    changes, disagreements = [], []
    sizes, done = grid.sizes(group), measured.sizes(group)
    for below, above in itertools.pairwise(done):
        between = [n for n in sizes if below < n < above]
        if not between:
            continue
        a, b = measured.outcomes[(group, below)].winner, measured.outcomes[(group, above)].winner
        if a != b:
            middle = between[len(between) // 2]
            keep = (*defaults, a, b)
            why = (
                f"between {format_bytes(below)} (won by {local_name(a)}) and "
                f"{format_bytes(above)} (won by {local_name(b)}): where the best choice changes"
            )
            picked = _contenders(estimates, middle, CLOSE, keep)
            changes += _at(grid, group, middle, picked, index, why)
            continue
        found = _disagreement(estimates, between, a)
        if found is not None:
            nbytes, rival, slower = found
            why = (
                f"between {format_bytes(below)} and {format_bytes(above)}, both won by "
                f"{local_name(a)}, the model corrected by the measurements prefers "
                f"{local_name(rival)} here ({local_name(a)} {slower - 1:.0%} slower)"
            )
            picked = _contenders(estimates, nbytes, CLOSE, (*defaults, a))
            disagreements += _at(grid, group, nbytes, picked, index, why)
    return changes, disagreements, _unmeasured_rivals(grid, measured, group, estimates, index)


def _disagreement(
    estimates: dict[tuple[int, str], float], between: list[int], winner: str
) -> tuple[int, str, float] | None:
    """The size between two measured ones (both won by `winner`) where the corrected model
    prefers another algorithm most, that algorithm and how much slower it puts the winner."""
    worst: tuple[int, str, float] | None = None
    for nbytes in between:
        best_s, rival = ranked(estimates, nbytes)[0]
        slower = estimates.get((nbytes, winner), float("inf")) / best_s
        if rival != winner and slower > PREFERS and (worst is None or slower > worst[2]):
            worst = (nbytes, rival, slower)
    return worst


def _unmeasured_rivals(
    grid: Grid,
    measured: Measured,
    group: Group,
    estimates: dict[tuple[int, str], float],
    index: int,
) -> list[Choice]:
    """At each cell with a measured point, the algorithms not measured there that the
    corrected model puts within CLOSE_MEASURED of the fastest measured one; and where one
    point alone was measured (the model put every rival far off), the fastest rival by the
    corrected model whatever its distance: a winner needs a rival to be one."""
    out = []
    for nbytes in grid.sizes(group):
        here = {a: t for (g, n, a), t in measured.times.items() if (g, n) == (group, nbytes)}
        if not here:
            continue
        fastest = min(here, key=here.__getitem__)
        rivals = sorted(
            (estimates[(nbytes, a)], a) for a in grid.algorithms[(group, nbytes)] if a not in here
        )
        for rank, (guess, algorithm) in enumerate(rivals):
            alone = len(here) == 1 and rank == 0
            if not alone and guess > CLOSE_MEASURED * here[fastest]:
                continue
            why = (
                f"not measured here: the model corrected by the measurements puts "
                f"{local_name(algorithm)} within {guess / here[fastest] - 1:+.0%} of the "
                f"fastest measured, {local_name(fastest)}"
            )
            if alone:
                why = (
                    f"the only rival to {local_name(fastest)} here, the fastest by the model "
                    f"corrected by the measurements ({guess / here[fastest] - 1:+.0%}): a "
                    "winner needs one"
                )
            out.append(Choice((group, nbytes, algorithm), index, why))
    return out


def _contenders(
    estimates: dict[tuple[int, str], float], nbytes: int, close: float, keep: Iterable[str]
) -> list[str]:
    """A cell's algorithms estimated within `close` of its best, and the ones to keep (where
    they run there)."""
    here = ranked(estimates, nbytes)
    best_s = here[0][0]
    names = {a for _, a in here}
    return [a for t, a in here if t <= close * best_s] + [a for a in keep if a in names]


def _at(
    grid: Grid, group: Group, nbytes: int, algorithms: Iterable[str], index: int, why: str
) -> list[Choice]:
    runnable = grid.algorithms[(group, nbytes)]
    return [
        Choice((group, nbytes, a), index, why) for a in dict.fromkeys(algorithms) if a in runnable
    ]


def _unique(choices: list[Choice], measured: Measured) -> list[Choice]:
    """Each point once (its first, most urgent, reason), none measured already."""
    seen: set[PointAt] = set(measured.times) | measured.tried
    out = []
    for choice in choices:
        if choice.point not in seen:
            seen.add(choice.point)
            out.append(choice)
    return out
