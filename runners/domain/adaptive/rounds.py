"""An adaptive sweep's rounds, whatever measures them (no MPI): choose (design.py), trim the
round to what the budget has left, measure it through the caller, and again, until every
cell is decided or the budget is spent. The real sweep (runners.jobs.adaptive) measures on
ranks; the bench's figure measures a simulated ground truth with this host's noise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from runners.domain.adaptive.design import Choice, first_round, next_round
from runners.domain.adaptive.estimates import Grid, Measured, Where
from runners.domain.sweep.adaptive_spec import Budget

DECIDED, BUDGET_SPENT = "every cell decided", "budget spent"
MAX_ROUNDS = 64  # a guard: each round measures at least one new point, so rounds end anyway


@dataclass
class Spending:
    """What the rounds have spent so far: seconds of measuring and launches."""

    seconds: float = 0.0
    launches: int = 0


@dataclass
class Rounds:
    """An adaptive sweep's state: every choice so far, what was measured, what was spent, and
    (once it ends) why it stopped."""

    choices: list[Choice] = field(default_factory=list)
    measured: Measured = field(default_factory=Measured)
    spent: Spending = field(default_factory=Spending)
    stop: str = ""

    @property
    def rounds(self) -> int:
        """How many rounds have been chosen."""
        return 1 + max((c.round for c in self.choices), default=-1)


Measure = Callable[[Sequence[Choice], "Rounds"], None]  # measures a round into the state
Cost = Callable[[Sequence[Choice]], tuple[float, int]]  # a round's (seconds, launches), estimated


def run_rounds(
    grid: Grid, measure: Measure, cost: Cost, budget: Budget, full_s: float, state: Rounds
) -> Rounds:
    """Rounds from `state` (empty for a new sweep, a resumed one's otherwise) until every cell
    is decided or the budget is spent; `full_s` is the full grid's estimated cost (a share
    budget's base)."""
    while state.rounds < MAX_ROUNDS:
        index = state.rounds
        wanted = first_round(grid) if index == 0 else next_round(grid, state.measured, index)
        if not wanted:
            state.stop = DECIDED
            return state
        fits = within_budget(wanted, cost, budget, full_s, state.spent)
        if not fits:
            state.stop = BUDGET_SPENT
            return state
        state.choices += fits
        state.measured.tried |= {c.point for c in fits}
        measure(fits, state)
    state.stop = BUDGET_SPENT
    return state


def within_budget(
    wanted: list[Choice], cost: Cost, budget: Budget, full_s: float, spent: Spending
) -> list[Choice]:
    """The round's cells, most urgent first, as many whole cells as the budget has left for
    (a cell's points come together: a winner needs its rivals)."""
    by_cell: dict[Where, list[Choice]] = {}
    for choice in wanted:
        by_cell.setdefault(choice.where, []).append(choice)
    kept: list[Choice] = []
    for cell in by_cell.values():
        seconds, launches = cost([*kept, *cell])
        if not budget.allows(spent.seconds + seconds, spent.launches + launches, full_s):
            break
        kept += cell
    return kept
