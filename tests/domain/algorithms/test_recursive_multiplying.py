"""Recursive multiplying (k-ary recursive doubling): every member keeps the allreduce's
contract in rank order for p = k^0..k^3, its rounds move everything before they reduce (each
partner gets what the rank held when the round began), radix 2 is recursive doubling's core,
and p must be a power of the radix."""

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
    for p in (1, radix, radix**2, *([radix**3] if radix < 4 else [])):
        for count in (0, 1, 5, 8):
            assert contract_problems(spec, p, count) == [], (spec.name, p, count)


def test_a_round_exchanges_with_k_minus_1_partners_before_it_reduces() -> None:
    """Radix 4 on 16 ranks: 2 rounds of 3 whole exchanges each (the critical path: 6 messages
    of the whole vector, 6 reductions), every round moving everything first."""
    schedule = member(4).required_schedule
    path = critical_path(schedule, 16, 8)
    assert (path.messages, path.sent, path.reduced) == (6, 48, 48)
    assert all(exchange_first(group) for group in rounds_of(schedule(5, 16, 8)))


def test_radix_2_is_recursive_doubling_and_p_must_be_a_power_of_the_radix() -> None:
    assert canonical_name("recursive_multiplying(radix=2)", {}) == "recursive_multiplying"
    ours, doubling = member(2).required_schedule, ALGORITHMS["recursive_doubling"].required_schedule
    assert [critical_path(ours, p, 8) for p in (2, 4, 8)] == [
        critical_path(doubling, p, 8) for p in (2, 4, 8)
    ]
    assert member(3).unsupported_reason(9, "sum", True) is None
    assert "a power of 3" in (member(3).unsupported_reason(6, "sum", True) or "")
