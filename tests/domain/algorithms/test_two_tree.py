"""The two-tree (double binary tree), segment size a parameter: NCCL's trees with every rank
interior in at most one of them, an edge colouring under which no rank sends or receives
twice in a round, every member keeping its collective's contract for p = 1..12, and the
rounds the paper promises: the broadcast in n/b + 2 log2 p, half the binary tree's pipeline;
the allreduce in 2 (n/b + 2 log2 p), where the chain takes 2 (n/b + p - 2)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from runners.domain.algorithms.bcast.two_tree import broadcast_edges
from runners.domain.algorithms.two_tree import btree, edge_colours, tree_edges
from runners.domain.collectives.contract_check import contract_problems
from runners.domain.collectives.schedule import critical_path, simulate, walked_path
from runners.domain.libraries.catalog import ALGORITHMS


def test_nccls_tree_is_in_order_so_a_subtree_holds_consecutive_positions() -> None:
    for positions in range(1, 40):
        parents = {node: btree(positions, node)[0] for node in range(positions)}
        assert list(parents.values()).count(-1) == 1
        for node in range(positions):
            for child in btree(positions, node)[1]:
                assert parents[child] == node
            below = _subtree(positions, node)
            assert below == list(range(min(below), max(below) + 1)), (positions, node)


def _subtree(positions: int, node: int) -> list[int]:
    children = btree(positions, node)[1]
    return sorted([node, *(n for child in children for n in _subtree(positions, child))])


@pytest.mark.parametrize("size", [2, 3, 4, 5, 8, 15, 16, 17, 64, 100, 257])
def test_a_rank_has_children_in_at_most_one_tree_and_two_colours_suffice(size: int) -> None:
    """The trees complement each other (a rank at most 2 children in both together), so the
    broadcast's edges take 2 colours, and so do the allreduce's reduces (both trees' upward
    edges) and its broadcasts."""
    down = broadcast_edges(size)
    assert max(Counter(e.sender for e in down).values()) <= 2
    assert max(edge_colours(down).values()) + 1 == 2
    for up in (True, False):
        both = [e for t in (0, 1) for e in tree_edges(range(size), t, up)]
        assert max(edge_colours(both).values()) + 1 <= 2


@pytest.mark.parametrize("size", [3, 8, 17, 40])
def test_no_rank_sends_or_receives_twice_in_a_round(size: int) -> None:
    for name in ("bcast.two_tree(segment=1)", "two_tree(segment=1)"):
        schedule = ALGORITHMS[name].schedule_at(1)
        for rank in range(size):
            rounds = Counter(step.round for step in schedule(rank, size, 24))
            assert set(rounds.values()) == {1}, (name, rank)


@pytest.mark.parametrize(
    ("family", "segment"), list(itertools.product(("bcast.two_tree", "two_tree"), (1, 3, 8)))
)
def test_every_member_keeps_its_contract_for_p_1_to_12(family: str, segment: int) -> None:
    spec = ALGORITHMS[f"{family}(segment={segment})"]
    for p, count in itertools.product(range(1, 13), (0, 1, 5, 13, 40)):
        assert contract_problems(spec, p, count) == [], (spec.name, p, count)
        schedule = spec.required_schedule
        assert critical_path(schedule, p, count) == walked_path(schedule, p, count)


def test_the_allreduce_keeps_rank_order_where_p_is_even_and_needs_a_commutative_op() -> None:
    """The second tree is the first mirrored where p is even (its subtrees still hold
    consecutive ranks) and shifted where p is odd (one subtree wraps around rank 0)."""
    spec = ALGORITHMS["two_tree(segment=2)"]
    assert spec.commutative_only
    for size in (2, 4, 6, 8):
        values, _ = simulate(spec.required_schedule, size, 9)
        assert {v for rank in values for v in rank} == {tuple(range(size))}
    values, _ = simulate(spec.required_schedule, 5, 9)
    assert {v for rank in values for v in rank} > {tuple(range(5))}  # some out of order


@pytest.mark.parametrize("size", [4, 8, 16, 64, 256])
def test_the_broadcast_takes_n_over_b_plus_two_log_p_rounds(size: int) -> None:
    two_tree = ALGORITHMS["bcast.two_tree(segment=1)"].schedule_at(1)
    binary = ALGORITHMS["bcast.binary(segment=1)"].schedule_at(1)
    for segments in (2, 16, 64):
        rounds = critical_path(two_tree, size, segments).messages
        assert rounds <= segments + 2 * math.ceil(math.log2(size)), (size, segments)
        if segments >= 16:
            assert rounds < critical_path(binary, size, segments).messages


@pytest.mark.parametrize("size", [4, 16, 64, 256])
def test_the_allreduce_reduces_then_broadcasts_in_n_over_b_plus_two_log_p_rounds_each(
    size: int,
) -> None:
    """Both trees' reduces pipelined together, then both broadcasts: s + 2 log2 p rounds that
    reduce a segment, as many that only move one (interleaved, nearly every round would
    reduce), fewer than the chain's 2 (p - 2 + s) from p = 16 on."""
    two_tree = ALGORITHMS["two_tree(segment=1)"].schedule_at(1)
    chain = ALGORITHMS["chain(segment=1)"].schedule_at(1)
    for segments in (2, 16, 64):
        path = critical_path(two_tree, size, segments)
        bound = segments + 2 * math.ceil(math.log2(size))
        assert segments <= path.reduced <= bound and path.messages <= 2 * bound, (size, path)
        if size >= 16:
            assert path.messages < critical_path(chain, size, segments).messages
