"""The hand-written schedules of reduce_scatter, allgather, bcast and reduce: each keeps its
collective's contract for every p and count (symbolically), its critical path equals the
closed form of Thakur, Rabenseifner & Gropp (IJHPCA 2005) that README tabulates, and a
broken schedule is caught."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from runners.domain.algorithms import OTHER_COLLECTIVES
from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.collectives.contract_check import contract_problems
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import critical_path
from runners.domain.libraries.catalog import (
    ALGORITHMS,
    BASE_OF_COLLECTIVE,
    algorithms_of,
    collective_list,
)

IDS = [spec.name for spec in OTHER_COLLECTIVES]


def log2(p: int) -> int:
    return (p - 1).bit_length()


def closed_form(name: str, p: int, n: int) -> tuple[int, int, int]:
    """README's (messages, elements sent, elements reduced) on the critical path, p a power of
    two and n a multiple of p."""
    share = (p - 1) * n // p
    return {
        "reduce_scatter.ring": (p - 1, share, share),
        "reduce_scatter.pairwise": (p - 1, share, share),
        "reduce_scatter.recursive_halving": (log2(p), share, share),
        "allgather.ring": (p - 1, share, 0),
        "allgather.recursive_doubling": (log2(p), share, 0),
        "allgather.bruck": (log2(p), share, 0),
        "bcast.binomial_tree": (log2(p), log2(p) * n, 0),
        "bcast.scatter_allgather": (log2(p) + p - 1, 2 * share, 0),
        "reduce.binomial_tree": (log2(p), log2(p) * n, log2(p) * n),
        "reduce.rabenseifner": (2 * log2(p), 2 * share, share),
    }[name]


@pytest.mark.parametrize("spec", OTHER_COLLECTIVES, ids=IDS)
def test_every_rank_ends_holding_what_its_collective_promises(spec: AlgorithmSpec) -> None:
    for p, count in itertools.product(range(1, 11), (0, 1, 2, 3, 7, 8, 13, 64)):
        if spec.power_of_two_only and p & (p - 1):
            continue
        assert contract_problems(spec, p, count) == [], (spec.name, p, count)


@pytest.mark.parametrize("spec", OTHER_COLLECTIVES, ids=IDS)
def test_critical_paths_equal_the_closed_forms(spec: AlgorithmSpec) -> None:
    for p in (2, 4, 8, 16):
        for n in (p, 24 * p):
            path = critical_path(spec.schedule, p, n)
            assert (path.messages, path.sent, path.reduced) == closed_form(spec.name, p, n)


def test_a_schedule_that_drops_a_round_or_reduces_out_of_order_is_caught() -> None:
    ring = ALGORITHMS["reduce_scatter.ring"]
    short = replace(ring, schedule=lambda r, p, n: ring.schedule(r, p, n)[:-1])
    assert contract_problems(short, 4, 8)
    ordered = replace(ring, commutative_only=False)  # the ring wraps rank order around
    assert contract_problems(ordered, 4, 8)
    tree = ALGORITHMS["bcast.binomial_tree"]
    assert contract_problems(replace(tree, schedule=lambda r, p, n: ()), 3, 5)


def test_every_collective_has_its_algorithms_and_the_library_call() -> None:
    assert set(BASE_OF_COLLECTIVE) == set(COLLECTIVES)
    for collective, names in BASE_OF_COLLECTIVE.items():
        assert any(ALGORITHMS[n].library for n in names), collective
        assert all(ALGORITHMS[n].collective == collective for n in names)


def test_users_name_algorithms_within_the_collectives_asked() -> None:
    assert algorithms_of(["ring"], ["allreduce", "allgather"]) == ["ring", "allgather.ring"]
    assert algorithms_of(["bruck", "mpi"], ["allgather"]) == ["allgather.bruck", "allgather.mpi"]
    assert collective_list(["all"]) == list(COLLECTIVES)
    with pytest.raises(ValueError, match="unknown algorithm bruck for bcast"):
        algorithms_of(["bruck"], ["bcast"])
    with pytest.raises(ValueError, match="unknown collective alltoall"):
        collective_list(["alltoall"])


def test_busbw_factors_are_nccl_tests() -> None:
    factors = {name: c.busbw(4) for name, c in COLLECTIVES.items()}
    assert factors == {
        "allreduce": 1.5,
        "reduce_scatter": 0.75,
        "allgather": 0.75,
        "bcast": 1.0,
        "reduce": 1.0,
    }
