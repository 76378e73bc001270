"""Recursive multiplying (k-ary recursive doubling): every member keeps the allreduce's
contract in rank order for p = k^0..k^3 and every p = 1..13 (runs of consecutive ranks folded
into a power-of-k core), its rounds move everything before they reduce (each partner gets
what the rank held when the round began), and radix 2 is recursive doubling's core."""

from __future__ import annotations

import pytest

from runners.domain.collectives.contract_check import contract_problems
from runners.domain.collectives.schedule import critical_path, exchange_first, rounds_of
from runners.domain.libraries.catalog import ALGORITHMS, canonical_name


def member(radix: int):
    return ALGORITHMS[canonical_name(f"recursive_multiplying(radix={radix})", {})]


@pytest.mark.parametrize("radix", (2, 3, 4, 5))
def test_every_member_keeps_the_contract_in_rank_order(radix: int) -> None:
    spec = member(radix)
    assert not spec.commutative_only
    for p in {*range(1, 14), radix, radix**2, *([radix**3] if radix < 4 else [])}:
        for count in (0, 1, 5, 8):
            assert contract_problems(spec, p, count) == [], (spec.name, p, count)


def test_a_round_exchanges_with_k_minus_1_partners_before_it_reduces() -> None:
    """Radix 4 on 16 ranks: 2 rounds of 3 whole exchanges each (the critical path: 6 messages
    of the whole vector, 6 reductions), every round moving everything first."""
    schedule = member(4).required_schedule
    path = critical_path(schedule, 16, 8)
    assert (path.messages, path.sent, path.reduced) == (6, 48, 48)
    assert all(exchange_first(group) for group in rounds_of(schedule(5, 16, 8)))


def test_radix_2_is_recursive_doubling_and_any_p_runs() -> None:
    assert canonical_name("recursive_multiplying(radix=2)", {}) == "recursive_multiplying"
    ours, doubling = member(2).required_schedule, ALGORITHMS["recursive_doubling"].required_schedule
    assert [critical_path(ours, p, 8) for p in (2, 4, 8)] == [
        critical_path(doubling, p, 8) for p in (2, 4, 8)
    ]
    assert member(3).unsupported_reason(6, "first_nonzero", False) is None


def test_where_p_is_not_a_power_of_k_runs_of_ranks_fold_in_and_get_the_result_back() -> None:
    """Radix 3 on 7 ranks: runs 0-2, 3-4, 5-6 (a core of 3); rank 0 takes ranks 1 and 2 in
    one round, the core exchanges once (2 partners), and the result goes back: 2 + 2 + 2
    messages on the critical path; MPICH's forced member keeps to powers of k."""
    schedule = member(3).required_schedule
    assert critical_path(schedule, 7, 8).messages == 6
    partners = {s.recv_from for s in schedule(0, 7, 8) if s.reduce}
    assert partners == {1, 2, 3, 5}
    assert [s.send_to for s in schedule(4, 7, 8)] == [3, None]
    forced = ALGORITHMS[canonical_name("mpi:recursive_multiplying(radix=3)", {})]
    assert "a power of 3" in (forced.unsupported_reason(6, "sum", True) or "")
