"""Launches as the unit of repetition: the interval's coverage by simulation, the plan's rounds,
and a point's samples merged over its launches."""

from __future__ import annotations

import numpy as np
import pytest

from runners.domain.status import PointStatus
from runners.domain.sweep.plan import plan_launches
from runners.domain.sweep.point_row import PointRow
from runners.domain.sweep.records import PointKey, TimingPolicy
from runners.domain.sweep.repetition import Repetition, median_launch_interval
from runners.domain.sweep.spec import parse_spec
from runners.domain.sweep.stats import median_ci
from runners.jobs.point_history import PointHistory

PASSES, PER_PASS = 2, 60


def launch_samples(rng: np.random.Generator, effect: float) -> tuple[np.ndarray, np.ndarray]:
    """One launch: each pass drifts a little, samples are log-normal with rare stalls."""
    seconds, passes = [], []
    for index in range(PASSES):
        drift = 1 + 0.02 * rng.standard_normal()
        noise = np.exp(0.05 * rng.standard_normal(PER_PASS))
        stalls = (rng.random(PER_PASS) < 0.05) * rng.exponential(0.5, PER_PASS)
        seconds.append(effect * drift * noise + stalls)
        passes.append(np.full(PER_PASS, index))
    return np.concatenate(seconds), np.concatenate(passes)


def launch_effects(rng: np.random.Generator, kind: str, size: int) -> np.ndarray:
    """Each launch's machine state: a 5% normal spread, or two states 2.2x apart (70/30)."""
    if kind == "normal":
        return 1 + 0.05 * rng.standard_normal(size)
    return np.where(rng.random(size) < 0.7, 1.0, 2.2)


def one_run(rng: np.random.Generator, kind: str, launches: int) -> Repetition:
    """A point measured in `launches` launches."""
    parts = [launch_samples(rng, effect) for effect in launch_effects(rng, kind, launches)]
    return Repetition(
        np.concatenate([s for s, _ in parts]),
        np.concatenate([p for _, p in parts]),
        np.concatenate([np.full(s.size, i) for i, (s, _) in enumerate(parts)]),
    )


def true_median_launch(kind: str) -> float:
    """The median over many launches of each launch's median: what the interval estimates."""
    rng = np.random.default_rng(99)
    effects = launch_effects(rng, kind, 3000)
    return float(np.median([np.median(launch_samples(rng, e)[0]) for e in effects]))


def median_launch(rep: Repetition) -> float:
    """The median of a run's launch medians: what its interval is about."""
    return float(np.median([np.median(rep.seconds[rep.launches == i]) for i in set(rep.launches)]))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["normal", "bimodal"])
@pytest.mark.parametrize("launches", [3, 5])
def test_the_interval_covers_the_median_launch_at_least_90_percent(kind, launches):
    """repeat=False (comparisons): covers the true median launch."""
    truth, rng, trials = true_median_launch(kind), np.random.default_rng(launches), 200
    hits = 0
    for _ in range(trials):
        low, high = median_launch_interval(one_run(rng, kind, launches), replicates=400)
        hits += low <= truth <= high
    assert hits / trials >= 0.90, f"coverage {hits / trials:.0%} with {launches} {kind} launches"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["normal", "bimodal"])
@pytest.mark.parametrize("launches", [3, 5])
def test_the_repeat_interval_covers_a_second_run_at_least_90_percent(kind, launches):
    """repeat=True (stored with every point): a second run's median launch lands inside."""
    rng, trials, hits = np.random.default_rng(10 + launches), 200, 0
    for _ in range(trials):
        first, second = one_run(rng, kind, launches), one_run(rng, kind, launches)
        low, high = median_launch_interval(first, replicates=400, repeat=True)
        hits += low <= median_launch(second) <= high
    assert hits / trials >= 0.90, f"coverage {hits / trials:.0%} with {launches} {kind} launches"


def test_one_launch_gives_the_within_launch_ci_and_says_nothing_more():
    rep = one_run(np.random.default_rng(1), "normal", 1)
    assert median_launch_interval(rep) == median_ci(np.sort(rep.seconds))


def test_more_launches_narrow_the_interval_and_it_stays_above_zero():
    rng = np.random.default_rng(2)
    widths = {}
    for launches in (3, 8):
        runs = [one_run(rng, "normal", launches) for _ in range(30)]
        intervals = [median_launch_interval(rep, replicates=300) for rep in runs]
        widths[launches] = np.median([high - low for low, high in intervals])
        assert all(0 < low <= high for low, high in intervals)
    assert widths[8] < widths[3] / 1.5


def test_launches_visit_the_whole_grid_in_rounds_in_a_seeded_shuffled_order():
    spec = parse_spec(
        "sizes = [8, 64, 512]\nranks = [2, 3]\nalgorithms = ['ring', 'mpi', 'mpi:ring']\n"
        "launches = 3\nseed = 7\n"
    )
    launches = plan_launches(spec, "r", set(), cores=8)
    assert [p.index for p in launches] == sorted(p.index for p in launches)
    per_round = [
        [(p.group.ranks, p.group.config) for p in launches if p.index == i] for i in range(3)
    ]
    assert all(sorted(r) == sorted(per_round[0]) for r in per_round) and len(per_round[0]) == 4
    orders = {tuple(c.nbytes for c in p.group.cells) for p in launches}
    assert len(orders) > 1, "every round visited the cells in the same order"
    assert [p.group.cells for p in plan_launches(spec, "r", set(), cores=8)] == [
        p.group.cells for p in launches
    ]


def test_a_resumed_run_plans_only_the_missing_launches_of_each_point():
    spec = parse_spec("sizes = [8, 64]\nranks = [2]\nalgorithms = ['ring', 'mpi']\nlaunches = 2\n")
    every = {pid for p in plan_launches(spec, "r", set(), cores=8) for pid in p.group.points("r")}
    first = next(iter(sorted(every)))
    done = {(pid, 0) for pid in every} | {(first, 1)}
    left = plan_launches(spec, "r", set(), done, cores=8)
    assert {p.index for p in left} == {1}
    assert {pid for p in left for pid in p.group.points("r")} == every - {first}
    assert plan_launches(spec, "r", every, cores=8) == []


def point_row(
    status: PointStatus = PointStatus.OK, reason: str = "", nbytes: int = 8, job: str | None = None
) -> PointRow:
    key = PointKey("r", "ring", 2, nbytes, "float32", "sum")
    return PointRow(key, status, reason, cores=2, job=job)


def samples(values: list[float]) -> list[dict]:
    return [{"seconds": v, "pass": i % 2} for i, v in enumerate(values)]


def test_a_launch_measured_again_replaces_its_samples_and_rows_sum_up_every_launch():
    history, timing = PointHistory(), TimingPolicy(launches=2, target_rel_ci=0.5)
    history.merge(point_row(), 0, samples([1.0, 1.1, 1.0, 1.2]), timing)
    row, rows = history.merge(point_row(), 1, samples([2.0, 2.1]), timing)
    assert row.launches == 2 and len(rows) == 6
    point, rows = history.merge(point_row(), 1, samples([1.5, 1.4, 1.6]), timing)
    row = point.columns()
    assert row["launches"] == 2 and [r["iteration"] for r in rows] == list(range(7))
    assert sorted(r["seconds"] for r in rows if r["launch"] == 1) == [1.4, 1.5, 1.6]
    assert row["median_s"] == pytest.approx(1.2)
    assert row["interval_low_s"] <= row["median_s"] <= row["interval_high_s"]


def test_a_wrong_result_in_one_launch_keeps_the_point_failed():
    history, timing = PointHistory(), TimingPolicy(launches=3)
    history.merge(point_row(), 0, samples([1.0, 1.1]), timing)
    history.merge(point_row(PointStatus.FAILED, "wrong result: 3 elements differ"), 1, [], timing)
    row, rows = history.merge(point_row(), 2, samples([1.0, 1.2]), timing)
    assert row.status == PointStatus.FAILED and "wrong result" in row.reason and len(rows) == 4
    assert "median_s" not in row.columns()


def test_a_point_whose_launches_agreed_borrows_the_spread_of_its_job():
    """Three launches that happen to agree give a narrow interval of their own; the spread
    pooled over the job's other points widens it to what launches really vary by."""
    rng = np.random.default_rng(5)
    seconds = 1 + 0.001 * rng.standard_normal(6 * 40)  # three launches that agree to 0.1%
    lucky = Repetition(seconds, np.tile(np.repeat([0, 1], 40), 3), np.repeat([0, 1, 2], 80))
    own = median_launch_interval(lucky, repeat=True)
    pooled = median_launch_interval(lucky, repeat=True, spread_floor=0.05)
    assert pooled[0] <= own[0] and pooled[1] >= own[1]
    assert (pooled[1] - pooled[0]) > 1.5 * (own[1] - own[0])


def test_the_sweep_pools_the_launch_spread_over_the_points_of_a_job():
    history, timing = PointHistory(), TimingPolicy(launches=3)
    rng = np.random.default_rng(6)
    for index in range(4):  # points whose launches vary by +-10%
        row = point_row(nbytes=8 * (index + 2), job="ranks=2 config=default")
        for launch, scale in enumerate((0.9, 1.0, 1.1)):
            history.merge(row, launch, samples(list(scale * (1 + 0.01 * rng.random(8)))), timing)
    steady = point_row(job="ranks=2 config=default")
    for launch in range(3):
        row, _ = history.merge(steady, launch, samples(list(1 + 0.01 * rng.random(8))), timing)
    stats = row.statistics
    assert stats["interval_high_s"] - stats["interval_low_s"] > 0.15  # not the 1% of its own


@pytest.mark.parametrize("width", [1, 5, 101])
def test_sketches_are_each_passes_quantiles_padded_by_repeating_its_launchs_passes(
    width: int,
) -> None:
    """Launches with different numbers of passes and samples (one sample, too), pass numbers
    not starting at 0: every sketch is np.quantile of its own (launch, pass), bit for bit."""
    rng = np.random.default_rng(7)
    seconds, passes, launches = [], [], []
    shape = {4: [3, 1, 40], 1: [1], 9: [60, 2]}  # launch -> samples in each of its passes
    for launch, sizes in shape.items():
        for number, size in enumerate(sizes, start=2):
            seconds += list(rng.lognormal(-10, 0.5, size))
            passes += [number] * size
            launches += [launch] * size
    rep = Repetition.of(seconds, passes, launches)
    sketch, counts = rep.sketches(width)
    probabilities = np.linspace(0, 1, width) if width > 1 else np.array([0.5])
    assert counts.tolist() == [1, 3, 2] and sketch.shape == (3, 3, width)
    for row, launch in enumerate(sorted(shape)):
        mine = rep.launches == launch
        expected = [
            np.quantile(rep.seconds[mine & (rep.passes == p)], probabilities)
            for p in sorted(set(rep.passes[mine]))
        ]
        for column in range(3):
            assert np.array_equal(sketch[row, column], expected[column % len(expected)])
