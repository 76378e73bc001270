"""`collsweep sweep --adaptive`: the rounds of an adaptive run, each measured as a sweep of the
points chosen so far (the caller's `measure_round`, runners.jobs.sweep.run_sweep), until every
cell is decided or the budget is spent (runners.domain.adaptive.rounds).

Before each round the run's stored spec is rewritten with every point chosen so far, with its
round and reason (`adaptive_points`), so an interrupted round is resumed like any run and the
rounds go on from there; after each, `runs.adaptive` says how far the rounds got. What a round
spends is its sweep's wall time; what it may spend is estimated beforehand from the model
corrected by the measurements (cost of each point under the timing policy, and its launches).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runners import store
from runners.analysis.adaptive import (
    adaptive_grid,
    choices_of,
    measured_of,
    points_of,
    round_cost,
)
from runners.analysis.crossings import group_points
from runners.analysis.params import Params
from runners.analysis.points import by_collective, load_points
from runners.analysis.winners import Comparisons, winner_rows
from runners.domain.adaptive.cost import launch_cost_s
from runners.domain.adaptive.design import Choice, first_round
from runners.domain.adaptive.estimates import Grid, Measured
from runners.domain.adaptive.rounds import (
    Rounds,
    Spending,
    reestimate,
    rounds_words,
    run_rounds,
)
from runners.domain.errors import BadInput
from runners.domain.status import RunStatus
from runners.domain.sweep.adaptive_spec import parse_budget
from runners.domain.sweep.spec import SweepSpec
from runners.domain.units import counted, format_seconds
from runners.host.machine import physical_cores
from runners.process.faults import hold_at

MeasureRound = Callable[[SweepSpec, "str | None"], tuple[str, bool]]  # -> (run_id, complete)


class RoundStopped(Exception):
    """A round's sweep did not complete (interrupted or failed): the rounds stop there."""


@dataclass
class AdaptiveRun:
    """An adaptive run's rounds as they ended."""

    run_id: str | None
    state: Rounds
    grid_points: int

    def summary(self, spec: SweepSpec) -> dict[str, Any]:
        """`runs.adaptive`: how the rounds ended."""
        budget = parse_budget(spec.adaptive_budget)
        return {
            "rounds": self.state.rounds,
            "stop": self.state.stop,
            "spent_s": round(self.state.spent.seconds, 3),
            "estimated_s": round(self.state.spent.estimated, 3),
            "launches": self.state.spent.launches,
            "budget": spec.adaptive_budget,
            "budget_words": budget.words(self.state.full_s),
            "full_grid_s": round(self.state.full_s, 3),
            "measured": len(self.state.measured.times),
            "grid_points": self.grid_points,
        }


def sweep_adaptively(
    path: Path,
    spec: SweepSpec,
    params: Params,
    measure_round: MeasureRound,
    say: Callable[[str], None],
    run_id: str | None = None,
) -> AdaptiveRun:
    """Measure `spec` round by round on `params` (the host's calibration); `run_id` resumes a
    stored adaptive run: its pending points first, then its rounds go on."""
    grid, cores = adaptive_grid(spec, params), physical_cores()
    state = Rounds(choices=choices_of(spec.adaptive_points))
    state.measured.tried = {c.point for c in state.choices}
    run = AdaptiveRun(run_id, state, len(grid.predicted))
    if run_id is not None:
        state.spent = _spent_before(path, run_id)
    budget = parse_budget(spec.adaptive_budget)

    def measure(choices: Sequence[Choice], now: Rounds) -> None:
        _measure(path, spec, grid, run, measure_round, choices, say)

    def cost(choices: Sequence[Choice]) -> tuple[float, int]:
        return round_cost(spec, grid, state.measured, choices, cores)

    reestimate(grid, cost, state)
    say(
        f"adaptive: the full grid is {counted(len(grid.predicted), 'point')}, about "
        f"{format_seconds(state.full_s)} to measure; budget {budget.words(state.full_s)}"
    )
    try:
        if state.choices:  # a resumed run: what its last round left unmeasured, first
            _measure(path, spec, grid, run, measure_round, [], say)
        run_rounds(grid, measure, cost, budget, state)
    except RoundStopped as exc:
        state.stop = str(exc)
    if not state.choices:
        raise BadInput(_too_small(spec, grid, cost, budget.words(state.full_s)))
    if run.run_id is not None:
        store.update_run(path, run.run_id, {"adaptive": run.summary(spec)})
    return run


def _too_small(
    spec: SweepSpec, grid: Grid, cost: Callable[[Sequence[Choice]], tuple[float, int]], words: str
) -> str:
    """Why nothing was measured: the budget does not cover round 0's first cell."""
    first = first_round(grid)
    cell = [c for c in first if c.where == first[0].where] if first else []
    seconds, launches = cost(cell)
    return (
        f"adaptive: the budget ({words}) does not cover the first cell of round 0 (about "
        f"{format_seconds(seconds)}, {counted(launches, 'launch', 'launches')} of "
        f"{format_seconds(launch_cost_s(spec.launch_calibration))} each): give a larger "
        "--adaptive-budget, or sweep the whole grid"
    )


def ending_line(run: AdaptiveRun, spec: SweepSpec) -> str:
    """How the rounds ended, in a line (rounds.rounds_words)."""
    return f"adaptive: {rounds_words(run.summary(spec))}"


def _measure(
    path: Path,
    spec: SweepSpec,
    grid: Grid,
    run: AdaptiveRun,
    measure_round: MeasureRound,
    choices: Sequence[Choice],
    say: Callable[[str], None],
) -> None:
    """Sweep the points chosen so far (the new ones are measured, the rest are stored), then
    read back what the run has measured."""
    state = run.state
    round_spec = spec.with_values(adaptive_points=points_of(state.choices))
    index = choices[0].round if choices else state.rounds - 1
    if run.run_id is not None and choices:  # the stored spec names the round before its sweep
        pending = (
            f"adaptive round {index} chosen, not yet measured: `collsweep sweep --resume "
            f"{run.run_id}` measures it and goes on"
        )
        fields = {"status": RunStatus.INTERRUPTED, "status_reason": pending}
        store.update_run(path, run.run_id, {"spec_toml": round_spec.to_toml(), **fields})
        hold_at("adaptive-round")
    if choices:
        say(_round_line(choices))
    started = time.monotonic()
    run.run_id, complete = measure_round(round_spec, run.run_id)
    state.spent.seconds += time.monotonic() - started
    state.spent.launches += round_cost(spec, grid, state.measured, choices, physical_cores())[1]
    state.measured = _stored(path, run.run_id, state.measured.tried)
    store.update_run(path, run.run_id, {"adaptive": run.summary(spec)})
    if not complete:
        raise RoundStopped(f"round {index} did not complete")


def _round_line(choices: Sequence[Choice]) -> str:
    """A round said in a line: its points, cells, and why they were chosen."""
    why = Counter(_kind(c.reason) for c in choices)
    cells = len({c.where for c in choices})
    reasons = ", ".join(f"{n} {kind}" for kind, n in why.most_common())
    return (
        f"adaptive round {choices[0].round}: {counted(len(choices), 'point')} in "
        f"{counted(cells, 'cell')} ({reasons})"
    )


def _kind(reason: str) -> str:
    """A reason's kind, for the round's line."""
    for words, kind in (
        ("smallest size", "smallest size"),
        ("largest size", "largest size"),
        ("model's crossover", "the model's crossovers"),
        ("best choice changes", "where the winner changes"),
        ("prefers", "the model disagreeing"),
        ("not measured here", "close rivals"),
        ("the only rival", "a lone point's rival"),
        ("the rest of the grid", "the rest of the grid"),
    ):
        if words in reason:
            return kind
    return "other"


def _stored(path: Path, run_id: str, tried: set[Any]) -> Measured:
    """What the run has measured: its ok points' medians and each cell's measured winner."""
    points = load_points(path, run_id)
    comparisons = Comparisons.load(path, run_id)
    winners = []
    for collective, mine in by_collective(points).items():
        rows = winner_rows(group_points(mine), comparisons)
        winners += [row | {"collective": collective} for row in rows]
    return measured_of(points, winners, tried)


def _spent_before(path: Path, run_id: str) -> Spending:
    """What a resumed run's rounds spent before (runs.adaptive)."""
    run = store.get_run(path, run_id) or {}
    before = run.get("adaptive") or {}
    spent, estimated = float(before.get("spent_s", 0.0)), float(before.get("estimated_s", 0.0))
    return Spending(spent, int(before.get("launches", 0)), estimated)
