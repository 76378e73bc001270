"""The adaptive sweep's rounds on a made-up group whose truth is known: what round 0 measures,
that the rounds find the true crossover when the model misplaces it, what is inferred and
said about every unmeasured cell, and that a budget is kept."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from runners.domain.adaptive.cost import point_cost
from runners.domain.adaptive.design import Choice, first_round
from runners.domain.adaptive.estimates import Grid, Group, Outcome, PointAt, corrected
from runners.domain.adaptive.inference import inferred
from runners.domain.adaptive.rounds import BUDGET_SPENT, DECIDED, Rounds, run_rounds
from runners.domain.sweep.adaptive_spec import Budget, parse_budget
from runners.domain.sweep.records import TimingPolicy

GROUP: Group = ("allreduce", 16, "float32", "sum")
SIZES = [2**k for k in range(3, 27)]  # 8 B .. 64 MiB
Times = Callable[[str, int], float]


def times_of(crossing_at: float) -> Times:
    """recursive_doubling (20 us + 1 ns/B) fastest below `crossing_at` bytes, the ring
    (0.25 ns/B) above, rabenseifner never."""

    def time(algorithm: str, n: int) -> float:
        latency_bound = 20e-6 + n * 1e-9
        if algorithm == "ring":
            return 20e-6 + 0.75e-9 * crossing_at + n * 0.25e-9
        return latency_bound if algorithm == "recursive_doubling" else 3 * latency_bound

    return time


def grid_of(model: Times) -> Grid:
    algorithms = ("recursive_doubling", "ring", "rabenseifner")
    return Grid(
        {(GROUP, n): algorithms for n in SIZES},
        {(GROUP, n, a): model(a, n) for n in SIZES for a in algorithms},
    )


def measured_by(truth: Times) -> Callable[[Sequence[Choice], Rounds], None]:
    """Measures exactly; a cell is decided where its two fastest differ by over 2%."""

    def measure(choices: Sequence[Choice], state: Rounds) -> None:
        for choice in choices:
            _group, n, algorithm = choice.point
            state.measured.times[choice.point] = truth(algorithm, n)
        for where in {c.where for c in choices}:
            here = sorted(
                (t, a) for (g, n, a), t in state.measured.times.items() if (g, n) == where
            )
            second = here[1] if len(here) > 1 else here[0]
            state.measured.outcomes[where] = Outcome(
                here[0][1], second[1], second[0] > 1.02 * here[0][0]
            )
        state.spent.seconds += len(choices)
        state.spent.launches += 1

    return measure


def per_point(choices: Sequence[Choice]) -> tuple[float, int]:
    return float(len(choices)), 1


def true_winner(truth: Times, n: int) -> str:
    return min(("recursive_doubling", "ring", "rabenseifner"), key=lambda a: truth(a, n))


def answers(grid: Grid, state: Rounds) -> dict[int, str]:
    out = {n: o.winner for (_, n), o in state.measured.outcomes.items()}
    return out | {i.where[1]: i.winner for i in inferred(grid, state.measured)}


def test_round_zero_measures_the_extremes_and_brackets_the_models_crossover() -> None:
    grid = grid_of(times_of(80e3))
    chosen = first_round(grid)
    sizes = sorted({c.point[1] for c in chosen})
    crossing = next(n for n in SIZES if true_winner(times_of(80e3), n) == "ring")
    assert sizes == [SIZES[0], crossing // 2, crossing, SIZES[-1]]
    at_smallest = {c.point[2] for c in chosen if c.point[1] == SIZES[0]}
    assert at_smallest == {"recursive_doubling", "ring", "rabenseifner"}
    at_largest = {c.point[2] for c in chosen if c.point[1] == SIZES[-1]}
    assert at_largest == {"ring"}  # the others are priced far (over 1.5x) off
    assert all(c.round == 0 and c.reason for c in chosen)


def test_an_exact_model_is_decided_after_round_zero_and_every_cell_is_inferred_right() -> None:
    truth = times_of(80e3)
    grid = grid_of(truth)
    state = run_rounds(grid, measured_by(truth), per_point, Budget("share", 1.0), Rounds())
    assert state.stop == DECIDED
    assert len(state.measured.times) < len(grid.predicted) / 4
    assert answers(grid, state) == {n: true_winner(truth, n) for n in SIZES}


def test_the_rounds_find_a_crossover_the_model_misplaces_by_64x() -> None:
    model, truth = times_of(80e3), times_of(80e3 * 64)
    grid = grid_of(model)
    state = run_rounds(grid, measured_by(truth), per_point, Budget("share", 1.0), Rounds())
    assert state.stop == DECIDED
    assert state.rounds > 1
    assert answers(grid, state) == {n: true_winner(truth, n) for n in SIZES}
    flip = next(n for n in SIZES if true_winner(truth, n) == "ring")
    assert (GROUP, flip) in state.measured.outcomes and (
        GROUP,
        flip // 2,
    ) in state.measured.outcomes
    reasons = [c.reason for c in state.choices if c.round > 0]
    assert any("where the best choice changes" in r for r in reasons)


def test_every_unmeasured_cell_is_inferred_with_its_reason() -> None:
    truth = times_of(80e3)
    grid = grid_of(truth)
    state = run_rounds(grid, measured_by(truth), per_point, Budget("share", 1.0), Rounds())
    found = inferred(grid, state.measured)
    assert {i.where for i in found} == {(GROUP, n) for n in SIZES} - set(state.measured.outcomes)
    assert all(i.settled and "both won by" in i.reason for i in found)


def test_a_budget_stops_the_rounds_and_says_so() -> None:
    model, truth = times_of(80e3), times_of(80e3 * 64)
    grid = grid_of(model)
    state = run_rounds(grid, measured_by(truth), per_point, Budget("seconds", 12), Rounds())
    assert state.stop == BUDGET_SPENT
    assert state.spent.seconds <= 12
    unsettled = [i for i in inferred(grid, state.measured) if not i.settled]
    assert unsettled and all(
        "model corrected by the measurements picks" in i.reason for i in unsettled
    )


def test_a_point_chosen_before_is_not_chosen_again_even_unmeasured() -> None:
    truth = times_of(80e3)
    grid = grid_of(truth)

    def fails(choices: Sequence[Choice], state: Rounds) -> None:
        state.spent.launches += 1  # every launch fails: nothing is measured

    state = run_rounds(grid, fails, per_point, Budget("share", 1.0), Rounds())
    points: list[PointAt] = [c.point for c in state.choices]
    assert len(points) == len(set(points))


def test_the_corrected_model_carries_a_measured_offset_to_unmeasured_points() -> None:
    grid = grid_of(times_of(80e3))
    state = Rounds()
    state.measured.times[(GROUP, 8, "ring")] = 2 * grid.predicted[(GROUP, 8, "ring")]
    state.measured.times[(GROUP, 8, "recursive_doubling")] = (
        2 * grid.predicted[(GROUP, 8, "recursive_doubling")]
    )
    estimates = corrected(grid, state.measured, GROUP)
    for n in (64, 2**20):
        assert estimates[(n, "ring")] == pytest.approx(2 * grid.predicted[(GROUP, n, "ring")])
        assert estimates[(n, "rabenseifner")] == pytest.approx(
            2 * grid.predicted[(GROUP, n, "rabenseifner")]
        )


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [("90s", "seconds", 90), ("2min", "seconds", 120), ("1h", "seconds", 3600),
     ("30 launches", "launches", 30), ("10%", "share", 0.1)],
)  # fmt: skip
def test_budget_forms(text: str, kind: str, value: float) -> None:
    budget = parse_budget(text)
    assert (budget.kind, budget.value) == (kind, pytest.approx(value))


@pytest.mark.parametrize("text", ["", "0s", "ten", "-5s", "5 parsecs"])
def test_bad_budgets_say_the_forms(text: str) -> None:
    with pytest.raises(ValueError, match="write seconds"):
        parse_budget(text)


def test_a_share_over_the_whole_grid_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 100%"):
        parse_budget("150%")


def test_a_points_cost_is_its_iteration_limit_its_budget_or_its_least_calls() -> None:
    timing = TimingPolicy()  # 3 launches x 2 passes, warmup 5, 10 to 1000 iterations, 0.5 s
    assert point_cost(timing, 1e-6) == pytest.approx((6 * 5 + 1000) * 1e-6)  # iteration limit
    assert point_cost(timing, 1e-3) == pytest.approx(timing.budget_s)  # the budget
    assert point_cost(timing, 0.1) == pytest.approx(6 * (5 + 5) * 0.1)  # least calls: 60
