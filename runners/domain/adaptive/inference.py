"""The winner of every cell an adaptive sweep left unmeasured (no MPI): inferred from its
measured neighbours and the model corrected by the measurements (estimates.py), stated as
inferred with its reason, never as a measurement.

An inferred cell is *settled* when the measured sizes either side of it are won by the same
algorithm and the corrected model agrees in it; otherwise (a change of winner between its
neighbours, or no measured size on one side) the corrected model picks, and the cell says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.domain.adaptive.estimates import Grid, Group, Measured, Where, corrected, ranked
from runners.domain.libraries.catalog import local_name
from runners.domain.units import format_bytes


@dataclass(frozen=True)
class Inference:
    """An unmeasured cell's inferred winner, its runner-up, why, and whether it is settled."""

    where: Where
    winner: str
    runner_up: str
    reason: str
    settled: bool
    below: int | None  # the measured size below it, if any
    above: int | None


def inferred(grid: Grid, measured: Measured) -> list[Inference]:
    """An Inference for every cell of the grid without a measured outcome."""
    out = []
    for group in grid.groups():
        estimates = corrected(grid, measured, group)
        done = measured.sizes(group)
        for nbytes in grid.sizes(group):
            if (group, nbytes) not in measured.outcomes:
                out.append(_one(measured, group, nbytes, done, estimates))
    return out


def _one(
    measured: Measured,
    group: Group,
    nbytes: int,
    done: list[int],
    estimates: dict[tuple[int, str], float],
) -> Inference:
    here = ranked(estimates, nbytes)
    winner = here[0][1]
    runner_up = here[1][1] if len(here) > 1 else winner
    below = max((n for n in done if n < nbytes), default=None)
    above = min((n for n in done if n > nbytes), default=None)
    sides = [measured.outcomes[(group, n)].winner for n in (below, above) if n is not None]
    name = local_name(winner)
    if len(sides) == 2 and sides[0] == sides[1] == winner:
        reason = (
            f"between {format_bytes(below or 0)} and {format_bytes(above or 0)}, both won by {name}"
        )
        return Inference((group, nbytes), winner, runner_up, reason, True, below, above)
    told = ", ".join(
        f"{format_bytes(n)} won by {local_name(measured.outcomes[(group, n)].winner)}"
        for n in (below, above)
        if n is not None
    )
    reason = f"the model corrected by the measurements picks {name} ({told or 'nothing measured'})"
    return Inference((group, nbytes), winner, runner_up, reason, False, below, above)
