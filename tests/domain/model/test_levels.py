"""The two-level model: a schedule priced with the level each message crosses (inside a node
or over the network) from the rank-to-node map, on the platform a calibration of both levels
makes."""

from __future__ import annotations

import pytest

from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.model.levels import emulated_platform, two_level_s
from runners.domain.model.platform import Link, Platform, checked, schedule_exact
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
