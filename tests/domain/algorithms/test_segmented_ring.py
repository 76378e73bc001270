"""The segmented ring (Open MPI's ring_segmented), segment size a parameter: Open MPI's number
of phases, every member keeping the allreduce's contract for p = 1..9, its critical path
counted without walking as the walk counts it, (phases + 1)(p - 1) rounds."""

from __future__ import annotations

import itertools

import pytest

from runners.domain.algorithms.allreduce.segmented_ring import phases
from runners.domain.collectives.contract_check import contract_problems
from runners.domain.collectives.schedule import critical_path, walked_path
from runners.domain.libraries.catalog import ALGORITHMS


def test_the_phases_are_open_mpis() -> None:
    """count // (p s), one more where the rest is over half of p s and at least p; the plain
    ring (one phase) below p s."""
    assert phases(65536, 4, 8192) == 2
    assert phases(106921, 5, 8192) == 3  # rest 25001 > 20480
    assert phases(90000, 5, 8192) == 2  # rest 8080 < 20480
    assert phases(1000, 4, 8192) == 1


@pytest.mark.parametrize("segment", (1, 2, 3, 8))
def test_every_member_keeps_the_contract_and_its_counted_path(segment: int) -> None:
    spec = ALGORITHMS[f"segmented_ring(segment={segment})"]
    assert spec.commutative_only  # the ring's reduction order wraps around rank 0
    schedule = spec.required_schedule
    for p, count in itertools.product(range(1, 10), (0, 1, 5, 13, 40, 100)):
        assert contract_problems(spec, p, count) == [], (spec.name, p, count)
        path = critical_path(schedule, p, count)
        assert path == walked_path(schedule, p, count), (p, count)
        if p > 1:
            assert path.messages == (phases(count, p, segment) + 1) * (p - 1)


def test_one_phase_is_the_ring() -> None:
    ring = ALGORITHMS["ring"].required_schedule
    segmented = ALGORITHMS["segmented_ring(segment=64KiB)"].schedule_at(8)
    for rank in range(4):
        assert segmented(rank, 4, 1000) == ring(rank, 4, 1000)
