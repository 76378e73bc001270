"""The hierarchical allreduce family: every member keeps the contract for p = 1..8 (in rank
order where it claims to), its name is one canonical form, and its phases cross the levels a
two-level allreduce should (a node's non-leaders never talk to another node)."""

from __future__ import annotations

import itertools

import pytest

from runners.domain.algorithms.allreduce.hierarchical import FAMILY, LEADERS, members
from runners.domain.collectives.contract_check import contract_problems
from runners.domain.collectives.schedule import critical_path
from runners.domain.libraries.catalog import ALGORITHMS, canonical_name
from runners.domain.nodes.placement import PLACEMENTS, Placement

NAMES = [
    FAMILY.member_name({"node": str(node), "leaders": leaders, "order": order})
    for node, leaders, order in itertools.product((1, 2, 3, 4), LEADERS, PLACEMENTS)
]


@pytest.mark.parametrize("name", NAMES)
def test_every_member_keeps_the_allreduce_contract_for_p_1_to_8(name: str) -> None:
    spec = ALGORITHMS[name]
    for p, count in itertools.product(range(1, 9), (0, 1, 3, 8, 13)):
        assert contract_problems(spec, p, count) == [], (name, p, count)


def test_block_members_keep_rank_order_and_round_robin_ones_say_they_cannot() -> None:
    assert not ALGORITHMS["hierarchical(node=2)"].commutative_only  # checked in order above
    assert not ALGORITHMS["hierarchical(node=2,leaders=rabenseifner)"].commutative_only
    assert ALGORITHMS["hierarchical(node=2,order=round-robin)"].commutative_only
    assert ALGORITHMS["hierarchical(node=2,leaders=ring)"].commutative_only  # the ring's own


@pytest.mark.parametrize("order", PLACEMENTS)
def test_only_the_leaders_send_between_nodes(order: str) -> None:
    placement, p = Placement(2, order), 8
    node = placement.node_map(p)
    schedule = ALGORITHMS[
        FAMILY.member_name({"node": "2", "leaders": "recursive_doubling", "order": order})
    ].required_schedule
    leaders = {group[0] for group in members(placement, p)}
    for rank in range(p):
        for step in schedule(rank, p, 4):
            peer = step.send_to if step.send_to is not None else step.recv_from
            if node[peer] != node[rank]:
                assert rank in leaders and peer in leaders, (order, rank, step)


def test_the_critical_path_is_the_sum_of_its_three_phases() -> None:
    # 4 nodes of 2: reduce 1 round, recursive doubling among 4 leaders 2 rounds, bcast 1 round
    path = critical_path(ALGORITHMS["hierarchical(node=2)"].required_schedule, 8, 16)
    assert (path.messages, path.sent, path.reduced) == (4, 4 * 16, 3 * 16)


def test_one_name_per_member_filled_from_the_run() -> None:
    run = {"ranks_per_node": 4, "placement": "round-robin"}
    assert canonical_name("hierarchical", run) == "hierarchical(node=4,order=round-robin)"
    assert canonical_name(" hierarchical( leaders = recursive_doubling , node=2 ) ", {}) == (
        "hierarchical(node=2)"
    )
    assert "hierarchical(leaders=ring,node=2)" not in ALGORITHMS  # not canonical: one name
    for bad in (
        "hierarchical",
        "hierarchical(node=0)",
        "hierarchical(node=2,radix=3)",
        "hierarchical(node=2",
        "hierarchical(leaders=mpi,node=2)",
    ):
        with pytest.raises(ValueError, match="hierarchical"):
            canonical_name(bad, {})
