"""An adaptive sweep's rounds, whatever measures them (no MPI): choose (design.py), trim the
round to what the budget has left, measure it through the caller, and again, until every
cell is decided or the budget is spent. The real sweep (runners.analysis.adaptive_rounds)
measures on ranks; the bench's figure (benchmarks/adaptive_truth.py) a simulated ground truth
with this host's noise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runners.domain.adaptive.design import Choice, first_round, next_round
from runners.domain.adaptive.estimates import Grid, Measured, Where
from runners.domain.sweep.adaptive_spec import MAX_ADAPTIVE_POINTS, Budget
from runners.domain.units import counted, format_seconds

DECIDED, BUDGET_SPENT = "every cell decided", "budget spent"
FULL = f"{MAX_ADAPTIVE_POINTS} points chosen, what a run's stored spec holds"
MAX_ROUNDS = 64  # a guard: each round measures at least one new point, so rounds end anyway
MOST_ROUNDS = f"{MAX_ROUNDS} rounds, the most a run takes"


@dataclass
class Spending:
    """What the rounds have spent so far: seconds of measuring (as the measurer counts them),
    launches, and their cost as last estimated (reestimate)."""

    seconds: float = 0.0
    launches: int = 0
    estimated: float = 0.0


@dataclass
class Rounds:
    """An adaptive sweep's state: every choice so far, what was measured, what was spent, and
    (once it ends) why it stopped."""

    choices: list[Choice] = field(default_factory=list)
    measured: Measured = field(default_factory=Measured)
    spent: Spending = field(default_factory=Spending)
    stop: str = ""
    full_s: float = 0.0  # the full grid's cost, as last estimated

    @property
    def rounds(self) -> int:
        """How many rounds have been chosen."""
        return 1 + max((c.round for c in self.choices), default=-1)


Measure = Callable[[Sequence[Choice], "Rounds"], None]  # measures a round into the state
Cost = Callable[[Sequence[Choice]], tuple[float, int]]  # a round's (seconds, launches), estimated


def run_rounds(grid: Grid, measure: Measure, cost: Cost, budget: Budget, state: Rounds) -> Rounds:
    """Rounds from `state` (empty for a new sweep, a resumed one's otherwise) until every cell
    is decided or the budget is spent.

    Before each round the full grid's cost and the rounds' so far are estimated again with
    `cost`, which prices a point at the model corrected by what is measured (a measured point
    at its measurement): a share budget holds the one against the other, like against like,
    each as well known as the measurements make it.
    """
    while state.rounds < MAX_ROUNDS:
        index = state.rounds
        reestimate(grid, cost, state)
        wanted = first_round(grid) if index == 0 else next_round(grid, state.measured, index)
        if not wanted:
            state.stop = DECIDED
            return state
        wanted = _or_the_rest(grid, wanted, cost, state)
        fits = within_budget(wanted, cost, budget, state.full_s, state.spent)
        room = MAX_ADAPTIVE_POINTS - len(state.choices)
        if not fits or room <= 0:
            state.stop = BUDGET_SPENT if room > 0 else FULL
            return state
        fits = fits[:room]
        state.choices += fits
        state.measured.tried |= {c.point for c in fits}
        measure(fits, state)
    state.stop = MOST_ROUNDS
    return state


def reestimate(grid: Grid, cost: Cost, state: Rounds) -> None:
    """The full grid's cost and the rounds' so far (each round its own launches), estimated
    with what is measured now."""
    everything = [Choice(point, 0, "") for point in grid.predicted]
    state.full_s = cost(everything)[0]
    rounds: dict[int, list[Choice]] = {}
    for choice in state.choices:
        rounds.setdefault(choice.round, []).append(choice)
    state.spent.estimated = sum(cost(mine)[0] for mine in rounds.values())


REST = "the rest of the grid: measuring it costs no more than this round and one more"


def _or_the_rest(grid: Grid, wanted: list[Choice], cost: Cost, state: Rounds) -> list[Choice]:
    """The round's choices, or, where every point not yet chosen costs no more than this round
    twice over (a small grid, whose rounds are mostly their launches' starts), all of them:
    the round's own first, with their reasons, then the rest."""
    chosen = {c.point for c in wanted} | state.measured.tried
    rest = [Choice(p, wanted[0].round, REST) for p in grid.predicted if p not in chosen]
    if rest and cost([*wanted, *rest])[0] <= 2 * cost(wanted)[0]:
        return [*wanted, *rest]
    return wanted


def within_budget(
    wanted: list[Choice], cost: Cost, budget: Budget, full_s: float, spent: Spending
) -> list[Choice]:
    """The round's cells, most urgent first, as many whole cells as the budget has left for
    (a cell's points come together: a winner needs its rivals). Against seconds measured, the
    round's estimate is scaled by what the rounds so far took over their estimate (a launch's
    start and a point's harness cost more than the model's time)."""
    by_cell: dict[Where, list[Choice]] = {}
    for choice in wanted:
        by_cell.setdefault(choice.where, []).append(choice)
    scale = spent.seconds / spent.estimated if spent.seconds and spent.estimated else 1.0
    kept: list[Choice] = []
    for cell in by_cell.values():
        seconds, launches = cost([*kept, *cell])
        measured = spent.seconds + seconds * scale
        totals = measured, spent.estimated + seconds, spent.launches + launches
        if not budget.allows(*totals, full_s):
            break
        kept += cell
    return kept


def rounds_words(summary: Mapping[str, Any]) -> str:
    """An adaptive run's rounds as they ended (its `runs.adaptive`), in a sentence: why they
    stopped, the points measured, the wall time, and the estimated share of the full grid
    (the rounds' estimates against the full grid's, like against like)."""
    full = summary.get("full_grid_s") or 0.0
    share = summary.get("estimated_s", 0.0) / full if full else 0.0
    return (
        f"{summary['stop'] or 'stopped'} after {counted(summary['rounds'], 'round')}: "
        f"{summary['measured']} of the grid's {summary['grid_points']} points measured in "
        f"{format_seconds(summary['spent_s'])} "
        f"({counted(summary['launches'], 'launch', 'launches')}), "
        f"{share:.0%} of the full grid's estimated cost ({format_seconds(full)}; budget "
        f"{summary['budget_words']})"
    )
