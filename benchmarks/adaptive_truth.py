"""An adaptive sweep against the full grid on a simulated ground truth (figure 14's engine).

The truth is SimGrid's time of every point on a contended platform (`collsweep simulate`); the
sweep's model is the contention-free price on the platform's link figures, as a user's
calibration would give it, so the model is wrong where contention matters. "Measuring" a point
draws its (launch, pass) medians around the truth with this host's launch-to-launch spread,
each draw independent (no shared launch state for the pairing to cancel: the harder case). The
full grid measures every point the same way; both decide a cell as a sweep does (the fastest
two by median, decided when their paired interval excludes 1).
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from runners.domain.adaptive.cost import LAUNCH_START_S, point_cost
from runners.domain.adaptive.design import Choice
from runners.domain.adaptive.estimates import Grid, Outcome, PointAt, Where, corrected
from runners.domain.adaptive.inference import inferred
from runners.domain.adaptive.rounds import Rounds, run_rounds
from runners.domain.sweep.adaptive_spec import Budget
from runners.domain.sweep.records import TimingPolicy
from runners.domain.verdict.comparison import Unit, compare

TIMING = TimingPolicy()


@dataclass(frozen=True)
class Truth:
    """Every point's simulated (true) and predicted time."""

    simulated: Mapping[PointAt, float]
    predicted: Mapping[PointAt, float]

    @classmethod
    def of(cls, points: Iterable[Mapping]) -> Truth:
        """From `collsweep simulate --json` lines."""
        simulated, predicted = {}, {}
        for p in points:
            at = (
                (p["collective"], int(p["ranks"]), p["dtype"], p["op"]),
                int(p["bytes"]),
                p["algorithm"],
            )
            simulated[at], predicted[at] = float(p["simulated_s"]), float(p["predicted_s"])
        return cls(simulated, predicted)

    def grid(self) -> Grid:
        """The sweep's grid: every simulated point, its prediction the model's."""
        algorithms: dict[Where, list[str]] = {}
        for group, nbytes, algorithm in self.simulated:
            algorithms.setdefault((group, nbytes), []).append(algorithm)
        return Grid({w: tuple(a) for w, a in algorithms.items()}, self.predicted)


@dataclass
class Noisy:
    """Measurements drawn around the truth: each point's (launch, pass) medians, the truth
    times a shift shared by every point of the same batch and unit (a launch's machine state:
    the pairing cancels it between points of one round) and a point's own draw."""

    truth: Truth
    spread: float  # the sd of a point's own (launch, pass) log draw
    launch_spread: float = 0.0  # the sd of a (launch, pass) shift shared by a batch's points
    seed: int = 0
    units: dict[PointAt, dict[Unit, float]] = field(default_factory=dict)
    shifts: dict[tuple[object, Unit], float] = field(default_factory=dict)

    def of(self, point: PointAt, batch: object = "full") -> dict[Unit, float]:
        """A point's (launch, pass) medians, drawn once in its batch (the same if asked again)."""
        if point not in self.units:
            draw = random.Random(f"{self.seed}:{point}")
            true_s = self.truth.simulated[point]
            self.units[point] = {
                unit: true_s * math.exp(self._shift(batch, unit) + draw.gauss(0.0, self.spread))
                for unit in itertools.product(range(TIMING.launches), range(TIMING.passes))
            }
        return self.units[point]

    def _shift(self, batch: object, unit: Unit) -> float:
        if (batch, unit) not in self.shifts:
            draw = random.Random(f"{self.seed}:{batch}:{unit}")
            self.shifts[(batch, unit)] = draw.gauss(0.0, self.launch_spread)
        return self.shifts[(batch, unit)]

    def median(self, point: PointAt, batch: object = "full") -> float:
        """A point's measured median."""
        return statistics.median(self.of(point, batch).values())

    def outcome(self, where: Where, algorithms: Sequence[str]) -> Outcome:
        """A cell's answer from the measured points of these algorithms."""
        group, nbytes = where
        by_time = sorted(algorithms, key=lambda a: self.median((group, nbytes, a)))
        best, second = by_time[0], by_time[1] if len(by_time) > 1 else by_time[0]
        found = compare(self.of((group, nbytes, best)), self.of((group, nbytes, second)))
        return Outcome(best, second, best != second and found is not None and found.decided)


def full_grid(noisy: Noisy, grid: Grid) -> dict[Where, Outcome]:
    """Every cell's answer when every point is measured."""
    return {where: noisy.outcome(where, grid.algorithms[where]) for where in grid.cells()}


def cost_of(truth: Mapping[PointAt, float], points: Iterable[PointAt]) -> tuple[float, int]:
    """Measuring these points: seconds (their costs and their launches' starts) and launches
    (a launch per group size and launch round: the algorithms of a size share one)."""
    points = list(points)
    launches = len({ranks for (_, ranks, _, _), _, _ in points}) * TIMING.launches
    return sum(point_cost(TIMING, truth[p]) for p in points) + launches * LAUNCH_START_S, launches


def adaptive(noisy: Noisy, grid: Grid, budget: Budget) -> Rounds:
    """The adaptive sweep's rounds on noisy measurements of the truth."""

    def measure(choices: Sequence[Choice], state: Rounds) -> None:
        seconds, launches = cost_of(noisy.truth.simulated, [c.point for c in choices])
        state.spent.seconds += seconds
        state.spent.launches += launches
        for choice in choices:
            state.measured.times[choice.point] = noisy.median(choice.point, choice.round)
        for where in {c.where for c in choices}:
            here = [a for a in grid.algorithms[where] if (*where, a) in state.measured.times]
            state.measured.outcomes[where] = noisy.outcome(where, here)

    state = Rounds()

    def estimate(choices: Sequence[Choice]) -> tuple[float, int]:
        """As the real sweep estimates a round: each point at the model corrected by what was
        measured so far (runners.analysis.adaptive.round_cost)."""
        groups = {c.point[0] for c in choices}
        guesses = {g: corrected(grid, state.measured, g) for g in groups}
        times = {c.point: guesses[c.point[0]][(c.point[1], c.point[2])] for c in choices}
        return cost_of(times, times)

    return run_rounds(grid, measure, estimate, budget, state)


@dataclass(frozen=True)
class Judged:
    """The adaptive answer held against the full grid's."""

    cells: int
    measured_share: float  # of the full grid's measuring time
    winners_share: float  # of the full grid's decided cells, the same winner
    regret_median: float
    regret_worst: float
    crossovers: tuple[int, int]  # the full grid's crossovers found in place, of all
    rounds: int
    stop: str
    points: tuple[int, int]  # measured, of the grid's


def judged(noisy: Noisy, full_noisy: Noisy, grid: Grid, state: Rounds) -> Judged:
    """The adaptive sweep's answer per cell (measured or inferred) against the full grid's
    (measured in draws of its own, `full_noisy`)."""
    truth = noisy.truth.simulated
    full = full_grid(full_noisy, grid)
    answer = {w: o.winner for w, o in state.measured.outcomes.items()}
    answer |= {i.where: i.winner for i in inferred(grid, state.measured)}
    decided = [w for w, o in full.items() if o.decided]
    same = sum(answer[w] == full[w].winner for w in decided)
    regrets = [regret(truth, w, answer[w], full[w]) for w in full]
    full_s, _ = cost_of(truth, truth)
    return Judged(
        len(full),
        state.spent.seconds / full_s,
        same / len(decided) if decided else 1.0,
        statistics.median(regrets),
        max(regrets),
        _crossovers(grid, full, answer),
        state.rounds,
        state.stop,
        (len(state.measured.times), len(truth)),
    )


def noise_floor(full_noisy: Noisy, grid: Grid) -> tuple[float, float]:
    """The full grid's own regret against the truth (its winner by median against the truly
    fastest), median and worst: what the noise costs a grid that measures everything."""
    truth = full_noisy.truth.simulated
    full = full_grid(full_noisy, grid)
    lost = [
        truth[(*w, o.winner)] / min(truth[(*w, a)] for a in grid.algorithms[w]) - 1
        for w, o in full.items()
    ]
    return statistics.median(lost), max(lost)


def regret(truth: Mapping[PointAt, float], where: Where, choice: str, full: Outcome) -> float:
    """How much slower the adaptive choice is than the full grid's answer in a cell: its
    decided winner, or, for a tie, the faster of the two it could not tell apart (either is
    its answer: a choice of one of them loses nothing against it)."""
    answer = (full.winner,) if full.decided else (full.winner, full.runner_up)
    if choice in answer:
        return 0.0
    best = min(truth[(*where, a)] for a in answer)
    return truth[(*where, choice)] / best - 1


def _crossovers(
    grid: Grid, full: Mapping[Where, Outcome], answer: Mapping[Where, str]
) -> tuple[int, int]:
    """The full grid's crossovers (between adjacent decided sizes whose winners differ) that
    the adaptive answer puts between the same two sizes."""
    found = total = 0
    for group in grid.groups():
        sizes = [n for n in grid.sizes(group) if full[(group, n)].decided]
        for below, above in itertools.pairwise(sizes):
            a, b = full[(group, below)].winner, full[(group, above)].winner
            if a != b:
                total += 1
                found += answer[(group, below)] == a and answer[(group, above)] == b
    return found, total
