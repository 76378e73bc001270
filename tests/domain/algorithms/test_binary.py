"""The pipelined binary tree broadcast, segment size a parameter: every member keeps the
broadcast's contract for p = 1..12, a parent serves its two children one after another, so
the pipeline takes 2 (s - 1) + 2 depth rounds (s segments), against the chain's p - 2 + s:
fewer from p of about 2 log2 p on."""

from __future__ import annotations

import itertools

import pytest

from runners.domain.collectives.contract_check import contract_problems
from runners.domain.collectives.schedule import critical_path
from runners.domain.libraries.catalog import ALGORITHMS


@pytest.mark.parametrize("segment", (1, 3, 8))
def test_every_member_keeps_the_broadcasts_contract_for_p_1_to_12(segment: int) -> None:
    spec = ALGORITHMS[f"bcast.binary(segment={segment})"]
    for p, count in itertools.product(range(1, 13), (0, 1, 5, 13, 40)):
        assert contract_problems(spec, p, count) == [], (spec.name, p, count)


def test_the_rounds_are_two_a_segment_plus_two_a_level() -> None:
    """16 segments: p=2 is the chain (one child: 16 rounds); p = 3, 7, 15 (full trees of
    depth 1, 2, 3) take 2 x 15 + 2 depth rounds."""
    binary = ALGORITHMS["bcast.binary(segment=4)"].schedule_at(1)
    chain = ALGORITHMS["bcast.chain(segment=4)"].schedule_at(1)
    rounds = {p: critical_path(binary, p, 64).messages for p in (2, 3, 7, 15)}
    assert rounds == {2: 16, 3: 32, 7: 34, 15: 36}
    assert critical_path(chain, 2, 64).messages == 16
    assert critical_path(chain, 63, 64).messages > critical_path(binary, 63, 64).messages
