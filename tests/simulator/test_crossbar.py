"""The simulator against the model: on a crossbar, SimGrid running every rank's steps lands on
the alpha-beta-gamma schedule-exact price (issue 46, check a), and a contended platform never
beats its contention-free price."""

from __future__ import annotations

import pytest
from helpers.simgrid_here import needs_simgrid

from runners.domain.algorithms import HAND_WRITTEN, OTHER_COLLECTIVES
from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.collectives.datatypes import DTYPES
from runners.domain.model.contention_free import contention_free_s
from runners.domain.model.platform import Link, Platform, crossbar, schedule_exact
from runners.domain.sweep.simulation import SimulatedCall
from runners.simulator.engine import ACTORS, ROUNDS, SimPoint, point_of, simulate

SCHEDULES = [a for a in (*HAND_WRITTEN, *OTHER_COLLECTIVES) if a.schedule is not None]
RANKS = (2, 3, 4, 5, 6, 7, 8, 12, 16, 24)  # non-powers of two fold
SIZES = (8, 64 * 1024, 1 << 20)
CROSSBAR = crossbar(alpha=2e-6, beta=8e-11, gamma=1e-9)


def calls(ranks: tuple[int, ...], sizes: tuple[int, ...]) -> list[SimulatedCall]:
    """Every schedule at every group size and size it can run, float32 sum."""
    found = []
    for spec in SCHEDULES:
        for p in ranks:
            for nbytes in sizes:
                count = nbytes // DTYPES["float32"].itemsize
                if spec.unsupported_reason(p, "sum", True):
                    continue
                if COLLECTIVES[spec.collective].unsupported_count(count, p):
                    continue
                found.append(
                    SimulatedCall(
                        spec.collective, spec.name, spec.name, p, nbytes, "float32", "sum"
                    )
                )
    return found


def test_the_contention_free_price_on_a_crossbar_is_the_schedule_exact_one() -> None:
    """Two pricers of one schedule agree: the route-aware one (platform.py) and pricing.py."""
    for call in calls(RANKS, SIZES):
        exact = schedule_exact(call.runs, call.ranks, call.bytes, call.itemsize, CROSSBAR)
        free = contention_free_s(call.steps(), call.itemsize, CROSSBAR, call.gamma(CROSSBAR))
        assert free == pytest.approx(exact, rel=1e-9), call


@needs_simgrid
@pytest.mark.slow
def test_simulated_on_a_crossbar_is_the_model_within_one_percent() -> None:
    """Every hand-written schedule of every collective, p = 2..24 and non-powers of two."""
    chosen = calls(RANKS, SIZES)
    simulated = simulate([point_of(c, CROSSBAR) for c in chosen], CROSSBAR, ACTORS, ranks=32)
    worst = max(
        abs(s / schedule_exact(c.runs, c.ranks, c.bytes, c.itemsize, CROSSBAR) - 1)
        for c, s in zip(chosen, simulated, strict=True)
    )
    assert len(chosen) > 250
    assert worst < 0.01


@needs_simgrid
@pytest.mark.slow
def test_the_check_can_fail() -> None:
    """A network 10% slower per byte than the price assumes is outside the 1%."""
    (call,) = [c for c in calls((8,), (1 << 20,)) if c.algorithm == "ring"]
    slower = crossbar(alpha=2e-6, beta=8.8e-11, gamma=1e-9)
    (simulated,) = simulate([point_of(call, slower)], slower, ranks=32)
    assert simulated / call.predicted_s(CROSSBAR) > 1.01


TAPERED = Platform(
    "tapered",
    "fat_tree",
    Link(0.3e-6, 12.5e9),
    0.25e-9,
    fat_tree=(2, (4, 8), (1, 2), (1, 1)),  # 32 nodes, 4 per leaf, 2 links up: 2:1
)


@needs_simgrid
@pytest.mark.slow
@pytest.mark.parametrize("mode", [ACTORS, ROUNDS])
def test_a_tapered_fat_tree_never_beats_its_contention_free_price(mode: str) -> None:
    chosen = [c for c in calls((8, 24, 32), (64 * 1024, 1 << 20))]
    simulated = simulate([point_of(c, TAPERED) for c in chosen], TAPERED, mode, ranks=32)
    ratios = [s / c.predicted_s(TAPERED) for c, s in zip(chosen, simulated, strict=True)]
    assert min(ratios) > 1 - 1e-6
    assert max(ratios) > 1.05  # the taper binds somewhere: contention is simulated


@needs_simgrid
@pytest.mark.slow
def test_rounds_is_actors_on_a_crossbar() -> None:
    """The faster mode ends each round on its slowest rank; on a crossbar nothing else differs
    for these schedules."""
    chosen = calls((5, 8, 16), (8, 64 * 1024))  # 8 B: blocks of no element are flows too
    points = [point_of(c, CROSSBAR) for c in chosen]
    by_actors = simulate(points, CROSSBAR, ACTORS, ranks=16)
    by_rounds = simulate(points, CROSSBAR, ROUNDS, ranks=16)
    for a, r in zip(by_actors, by_rounds, strict=True):
        assert r == pytest.approx(a, rel=0.01)


def test_contention_free_prices_routes() -> None:
    """A fat-tree's message within a leaf crosses 2 links, across leaves 4; ranks of one node
    talk over the node's own link."""
    two_per_node = Platform(
        "p",
        "fat_tree",
        Link(1e-6, 1e9),
        0.0,
        ranks_per_node=2,
        intra_node=Link(0.1e-6, 10e9),
        fat_tree=(2, (4, 4), (1, 4), (1, 1)),
    )
    assert two_per_node.route(0, 1) == (0.1e-6, 1e-10)
    assert two_per_node.route(0, 2)[0] == pytest.approx(2e-6)
    assert two_per_node.route(0, 8)[0] == pytest.approx(4e-6)
    steps = ((), ())
    assert contention_free_s(steps, 4, two_per_node, 0.0) == 0.0
    assert SimPoint(steps, 4, 0.0).ranks == 2
