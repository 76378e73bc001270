"""Intervals that hold over time (issue 33): the host's run-to-run variation learnt from the
store widens a run's stored intervals. Coverage of a repeat run measured by simulation (a
normal and a two-state host), and on stored synthetic runs: the launches' interval kept, the
widening recorded with the run, the same after analysing again, and said at the sweep's end."""

from __future__ import annotations

import math
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from helpers import synthetic

from runners import store
from runners.analysis.run_analysis import analyze_run
from runners.domain.verdict.history import MIN_RUNS, run_to_run
from runners.store.run_compare import compare_runs, time_span_note

POINTS = 40
LAUNCH_SPREAD = 0.05  # each point's own noise between runs (log)


def simulated_coverage(earlier: int, two_state: bool, trials: int = 600) -> tuple[float, float]:
    """Share of points where a repeat run's median lands inside this run's interval, with the
    history's widening and with the launches' interval alone (which covers the point noise)."""
    rng = np.random.default_rng(earlier + 10 * two_state)
    inside = alone = 0.0
    for _ in range(trials):
        runs = earlier + 2  # this run, its repeat, the earlier runs
        if two_state:  # 30% of runs in a state 1.5x slower
            state = np.log(np.where(rng.random(runs) < 0.3, 1.5, 1.0))
        else:
            state = rng.normal(0.0, 0.15, runs)
        logs = rng.normal(0, 1, POINTS)[None, :] + state[:, None]
        logs = logs + rng.normal(0, LAUNCH_SPREAD, (runs, POINTS))
        known = [0, *range(2, runs)]
        spread = run_to_run({p: {f"r{i}": logs[i, p] for i in known} for p in range(POINTS)}, "r0")
        half = 1.96 * math.sqrt(2) * LAUNCH_SPREAD
        low, high = logs[0] - half, logs[0] + half
        alone += np.mean((logs[1] >= low) & (logs[1] <= high))
        low = np.minimum(low, logs[0] + spread.shift - spread.half)
        high = np.maximum(high, logs[0] + spread.shift + spread.half)
        inside += np.mean((logs[1] >= low) & (logs[1] <= high))
    return inside / trials, alone / trials


@pytest.mark.slow
@pytest.mark.parametrize("earlier", [2, 5])
def test_a_repeat_lands_inside_the_widened_interval(earlier: int) -> None:
    covered, alone = simulated_coverage(earlier, two_state=False)
    assert covered >= 0.93, covered  # nominal 95%
    assert alone < 0.6  # the launches alone cannot see a state that moves the whole run


@pytest.mark.slow
def test_a_two_state_host_is_covered_once_the_history_has_seen_its_states() -> None:
    few, _ = simulated_coverage(2, two_state=True)
    many, _ = simulated_coverage(5, two_state=True)
    assert 0.8 <= few < many and many >= 0.92, (few, many)


def test_too_few_runs_or_shared_points_say_nothing() -> None:
    two_runs = {p: {"a": 0.1 * p, "b": 0.1 * p + 0.2} for p in range(30)}
    assert run_to_run(two_runs, "a") is None  # MIN_RUNS counts this run too
    three = {p: {"a": 0.0, "b": 0.1, "c": -0.1} for p in range(5)}
    assert run_to_run(three, "a") is None  # too few shared points
    assert MIN_RUNS == 3


def test_a_run_in_an_odd_state_expects_its_repeat_nearer_the_usual() -> None:
    logs = {p: {"slow": 0.5 + 0.01 * p, "b": 0.0 + 0.01 * p, "c": 0.01 * p} for p in range(20)}
    spread = run_to_run(logs, "slow")
    assert spread is not None and spread.shift < 0  # this run ran slow: a repeat lands lower
    assert spread.half > abs(spread.shift)


def runs_of_one_host() -> list[synthetic.RunSpec]:
    """Three runs of one host, the third in a 1.3x slower state."""
    first = synthetic.RunSpec(ranks=(2,), timeout_point=False)
    return [
        first,
        synthetic.RunSpec(
            run_id="r20261201-130000-bbbb", started_at=first.started_at + timedelta(hours=1),
            ranks=(2,), timeout_point=False, seed=1,
        ),
        synthetic.RunSpec(
            run_id="r20261201-140000-cccc", started_at=first.started_at + timedelta(hours=2),
            ranks=(2,), timeout_point=False, seed=2,
            slowdown={a: 1.3 for a in synthetic.ALGORITHMS},
        ),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def history_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("history") / "s.duckdb"
    synthetic.build_store(path, runs_of_one_host())
    return path


POINTS_SQL = """
SELECT point_id, median_s, launch_low_s, launch_high_s, interval_low_s, interval_high_s
FROM points WHERE run_id = ? AND status = 'ok' ORDER BY point_id
"""


def test_the_third_run_is_widened_and_keeps_its_launches_interval(history_store) -> None:
    first, second, third = (spec.run_id for spec in runs_of_one_host())
    assert store.get_run(history_store, first)["interval_history"] in ({}, None)
    assert store.get_run(history_store, second)["interval_history"] in ({}, None)
    record = store.get_run(history_store, third)["interval_history"]
    assert set(record) == {"2"} and record["2"]["runs"] == 3
    assert record["2"]["shift"] < 0  # the slow run expects a faster repeat
    points = store.query(history_store, POINTS_SQL, [third])
    assert (points.interval_low_s <= points.launch_low_s).all()
    assert (points.interval_high_s >= points.launch_high_s).all()
    assert (points.interval_low_s < points.launch_low_s).any()
    lowest = points.median_s * record["2"]["low_factor"]
    assert np.allclose(np.minimum(points.launch_low_s, lowest), points.interval_low_s)


def test_analysing_again_changes_nothing(history_store) -> None:
    third = runs_of_one_host()[2].run_id
    before = store.query(history_store, POINTS_SQL, [third])
    analyze_run(history_store, third, progress=lambda line: None)
    after = store.query(history_store, POINTS_SQL, [third])
    assert before.equals(after)


def test_the_sweep_end_says_where_a_repeat_lands(history_store) -> None:
    third = runs_of_one_host()[2].run_id
    note = time_span_note(history_store, third)
    assert "the run-to-run variation of this host, from 2 earlier runs" in note
    assert "a repeat lands at p=2 within" in note


def test_compare_counts_the_run_to_run_variation_once(history_store) -> None:
    """compare adds two runs' intervals itself: it reads the launches' intervals."""
    first, _, third = (spec.run_id for spec in runs_of_one_host())
    found = compare_runs(history_store, first, third)
    assert (found.points.change == "slower").sum() > len(found.points) / 2
