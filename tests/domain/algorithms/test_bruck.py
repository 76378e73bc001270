"""Bruck's allgather with radix k (k-port): every member keeps the allgather's contract for
p = 1..12, radix 2 is the default (Bruck's original, one exchange a round), and radix k takes
ceil(log_k p) rounds of up to k-1 exchanges each."""

from __future__ import annotations

import itertools

import pytest

from runners.domain.algorithms.bcast.knomial import levels
from runners.domain.collectives.contract_check import contract_problems
from runners.domain.collectives.schedule import critical_path
from runners.domain.libraries.catalog import ALGORITHMS, canonical_name


@pytest.mark.parametrize("radix", (2, 3, 4, 5, 8))
def test_every_member_keeps_the_allgathers_contract_for_p_1_to_12(radix: int) -> None:
    spec = ALGORITHMS[canonical_name(f"allgather.bruck(radix={radix})", {})]
    for p, count in itertools.product(range(1, 13), (0, 1, 5, 12, 25)):
        assert contract_problems(spec, p, count) == [], (spec.name, p, count)


def test_radix_2_is_the_default_and_brucks_original() -> None:
    assert canonical_name("allgather.bruck(radix=2)", {}) == "allgather.bruck"
    schedule = ALGORITHMS["allgather.bruck"].required_schedule
    for p in range(2, 17):
        steps = schedule(0, p, 4 * p)
        assert len(steps) == len({s.round for s in steps}) == levels(p, 2), p


@pytest.mark.parametrize(("radix", "p"), [(3, 9), (4, 16), (4, 10), (8, 64)])
def test_radix_k_takes_log_k_p_rounds_of_up_to_k_minus_1_exchanges(radix: int, p: int) -> None:
    spec = ALGORITHMS[f"allgather.bruck(radix={radix})"]
    steps = spec.required_schedule(0, p, p)
    rounds = {s.round for s in steps}
    assert len(rounds) == levels(p, radix)
    assert max(sum(s.round == r for s in steps) for r in rounds) == radix - 1
    path = critical_path(spec.required_schedule, p, p)
    assert path.sent == p - 1  # every other rank's block arrives once, whatever the radix
