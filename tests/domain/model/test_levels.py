"""The two-level model: a schedule priced with the level each message crosses (inside a node
or over the network) from the rank-to-node map, on the platform a calibration of both levels
makes."""

from __future__ import annotations

import pytest

from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.model.levels import emulated_platform, two_level_s
from runners.domain.model.platform import Link, Platform, checked, schedule_exact
from runners.domain.model.pricing import Costs, Levels, MessageCost, schedule_prediction
from runners.domain.nodes.placement import BLOCK, ROUND_ROBIN, Placement

NODE, NETWORK = Link(0.5e-6, 10e9), Link(20e-6, 1e9)
GAMMA = 2e-10


def platform(ranks_per_node: int) -> Platform:
    return checked(Platform("two", "bus", NETWORK, GAMMA, ranks_per_node, intra_node=NODE))


def one_level(link: Link, algorithm: str, ranks: int, nbytes: int) -> float:
    flat = checked(Platform("one", "crossbar", link, GAMMA))
    return schedule_exact(ALGORITHMS[algorithm], ranks, nbytes, 4, flat)


@pytest.mark.parametrize("algorithm", ["recursive_doubling", "ring", "rabenseifner"])
def test_one_rank_a_node_is_the_network_and_one_node_is_its_inside(algorithm: str) -> None:
    nbytes = 1 << 20
    spread = two_level_s(algorithm, 4, nbytes, "float32", "sum", platform(1), Placement(1))
    together = two_level_s(algorithm, 4, nbytes, "float32", "sum", platform(4), Placement(4))
    assert spread == pytest.approx(one_level(NETWORK, algorithm, 4, nbytes), rel=1e-9)
    assert together == pytest.approx(one_level(NODE, algorithm, 4, nbytes), rel=1e-9)
    mixed = two_level_s(algorithm, 4, nbytes, "float32", "sum", platform(2), Placement(2))
    assert together < mixed <= spread


def test_the_placement_decides_which_rounds_cross_the_network() -> None:
    """4 ranks on 2 nodes of 2. Recursive doubling's partners (rank XOR 1, then XOR 2) are
    inside a node in one round and across in the other, in either placement: one price.
    Rabenseifner exchanges half the vector first, with rank XOR 1: inside a node in block
    placement (only the quarter crosses the network), across in round-robin (the half does)."""

    def price(algorithm: str, order: str) -> float:
        return two_level_s(algorithm, 4, 1 << 20, "float32", "sum", platform(2),
                           Placement(2, order))  # fmt: skip

    assert price("recursive_doubling", BLOCK) == pytest.approx(
        price("recursive_doubling", ROUND_ROBIN), rel=1e-9
    )
    assert price("rabenseifner", BLOCK) < 0.8 * price("rabenseifner", ROUND_ROBIN)


def test_a_calibration_of_two_levels_is_a_bus_platform_of_those_levels() -> None:
    calibration = {
        "calibration_id": "c1",
        "gammas": {"float32/sum": GAMMA},
        "details": {"levels": {
            "node": {"alpha_s": 0.5e-6, "beta_s_per_byte": 1e-10},
            "network": {"alpha_s": 20e-6, "beta_s_per_byte": 1e-9, "stated": "bandwidth=8Gbit"},
        }},
    }  # fmt: skip
    made = emulated_platform(calibration, 2)
    assert made.topology == "bus" and made.ranks_per_node == 2
    assert made.route(0, 1) == pytest.approx((0.5e-6, 1e-10))
    assert made.route(1, 2) == pytest.approx((20e-6, 1e-9))
    with pytest.raises(ValueError, match="has no levels"):
        emulated_platform({"calibration_id": "c2", "details": {}}, 2)


# --- the two_level variant: a run's own predictions on its nodes (runners.domain.model.pricing)


def _line(link: Link) -> MessageCost:
    """A message-time curve that is exactly alpha + m / bandwidth."""
    big = float(2**30)
    return MessageCost.from_medians(
        [0, big], [link.latency_s, link.latency_s + big / link.bandwidth_Bps]
    )


def _two_level(algorithm: str, ranks: int, nbytes: int, placement: Placement, bus: bool) -> float:
    spec = ALGORITHMS[algorithm]
    levels = Levels(Costs(_line(NODE)), placement.node_map, bus=bus)
    costs = Costs(_line(NETWORK), levels=levels)
    args = (spec.required_schedule, spec.blocks(ranks), ranks, nbytes, 4, costs, GAMMA)
    return schedule_prediction(*args).total_s


def test_the_ring_on_a_bus_waits_for_every_message_crossing_by_hand() -> None:
    """4 ranks, 2 nodes of 2, block: in each of the ring's 6 rounds ranks 1 -> 2 and 3 -> 0
    cross the network with n/4 bytes each, sharing the bus (n/2 bytes at its rate), while
    0 -> 1 and 2 -> 3 stay inside; the 3 reduce-scatter rounds reduce n/4 on every rank.
    Round-robin: all four messages cross, n bytes on the bus each round."""
    n = 1 << 20
    a, bw = NETWORK.latency_s, NETWORK.bandwidth_Bps
    block = _two_level("ring", 4, n, Placement(2, BLOCK), bus=True)
    assert block == pytest.approx(6 * (a + n / 2 / bw) + 3 * n / 4 * GAMMA, rel=1e-9)
    spread = _two_level("ring", 4, n, Placement(2, ROUND_ROBIN), bus=True)
    assert spread == pytest.approx(6 * (a + n / bw) + 3 * n / 4 * GAMMA, rel=1e-9)


@pytest.mark.parametrize("algorithm", ["recursive_doubling", "ring", "rabenseifner",
                                       "binomial_tree", "hierarchical(node=2)"])  # fmt: skip
@pytest.mark.parametrize("order", [BLOCK, ROUND_ROBIN])
def test_without_a_bus_each_level_prices_as_the_contention_free_walk(
    algorithm: str, order: str
) -> None:
    """A port per node (no bus): the round-by-round price with each message on its level's
    curve is the critical path walk of the same schedule on the same two links."""
    if algorithm.startswith("hierarchical") and order == ROUND_ROBIN:
        return  # hierarchical's own nodes are blocks
    placement, nbytes = Placement(2, order), 1 << 20
    ports = _two_level(algorithm, 4, nbytes, placement, bus=False)
    walked = two_level_s(algorithm, 4, nbytes, "float32", "sum", platform(2), placement)
    assert ports == pytest.approx(walked, rel=1e-9)
    assert _two_level(algorithm, 4, nbytes, placement, bus=True) >= ports


def test_rabenseifner_pays_the_bus_for_the_half_that_crosses_in_round_robin() -> None:
    """Its first exchange (half the vector, rank XOR 1) stays inside the nodes in block
    placement and puts 4 x n/2 bytes on the bus in round-robin: round-robin costs about twice
    block at 1 MiB, as measured on emulated nodes (16.8 against 33.5 ms at 1 Gbit/s)."""
    n = 1 << 20
    block = _two_level("rabenseifner", 4, n, Placement(2, BLOCK), bus=True)
    spread = _two_level("rabenseifner", 4, n, Placement(2, ROUND_ROBIN), bus=True)
    assert 1.8 < spread / block < 2.2
