"""Every algorithm's descriptor: its schedule reduces correctly, its counts equal README's
closed forms, and it provides everything the ranks, the model, the checks and charts read."""

from __future__ import annotations

import itertools

import pytest

from runners.domain.algorithms import HAND_WRITTEN, library
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import (
    _COUNTED,
    Step,
    block_bounds,
    critical_path,
    simulate,
    walked_path,
)
from runners.domain.libraries.catalog import ALGORITHMS, modelled_spec

SIZES = range(1, 11)
COUNTS = (0, 1, 2, 3, 7, 8, 13)
IDS = [spec.name for spec in HAND_WRITTEN]


def closed_form(name: str, p: int, n: int) -> tuple[int, int, int]:
    """README's critical-path counts for n elements in equal blocks (n a multiple of parts)."""
    pof2 = 1 << (p.bit_length() - 1)
    k, fold = pof2.bit_length() - 1, int(pof2 != p)
    if name == "recursive_doubling":
        return k + 2 * fold, (k + 2 * fold) * n, (k + fold) * n
    if name == "binomial_tree":
        depth = (p - 1).bit_length()
        return 2 * depth, 2 * depth * n, depth * n
    if name == "rabenseifner":
        reduced = (pof2 - 1) * (n // pof2) + fold * n
        return 2 * k + 2 * fold, 2 * reduced, reduced
    if name == "ring":
        return 2 * (p - 1), 2 * (p - 1) * (n // p), (p - 1) * (n // p)
    raise AssertionError(f"no closed form written down for {name}: add it to README and here")


@pytest.mark.parametrize("spec", HAND_WRITTEN, ids=IDS)
def test_every_rank_ends_with_every_ranks_input_in_order(spec: AlgorithmSpec) -> None:
    for p, count in itertools.product(SIZES, COUNTS):
        final, _ = simulate(spec.schedule, p, count)
        for rank, values in enumerate(final):
            for value in values:
                got = sorted(value) if spec.commutative_only else list(value)
                assert got == list(range(p)), (spec.name, p, count, rank, value)


@pytest.mark.parametrize("spec", HAND_WRITTEN, ids=IDS)
def test_counts_walked_from_the_schedule_equal_the_closed_forms(spec: AlgorithmSpec) -> None:
    for p in range(2, 17):
        for n in (0, spec.parts(p), 3 * spec.parts(p) * 8):
            path = critical_path(spec.schedule, p, n)
            assert (path.messages, path.sent, path.reduced) == closed_form(spec.name, p, n)


@pytest.mark.parametrize("spec", HAND_WRITTEN, ids=IDS)
def test_bytes_grow_in_proportion_to_whole_blocks(spec: AlgorithmSpec) -> None:
    """What the smoothed model relies on: equal blocks scale every byte count alike."""
    for p in (2, 3, 5, 8, 12):
        parts = spec.parts(p)
        one = critical_path(spec.schedule, p, parts)
        for q in (2, 7):
            more = critical_path(spec.schedule, p, q * parts)
            assert (more.messages, more.sent, more.reduced) == (
                one.messages,
                q * one.sent,
                q * one.reduced,
            )


@pytest.mark.parametrize("spec", HAND_WRITTEN, ids=IDS)
def test_steps_stay_inside_the_buffer_and_the_group(spec: AlgorithmSpec) -> None:
    for p, count in itertools.product(SIZES, COUNTS):
        for rank in range(p):
            for step in spec.schedule(rank, p, count):
                assert step.send is not None or step.recv is not None
                for partner in (step.send_to, step.recv_from):
                    assert partner is None or (0 <= partner < p and partner != rank)
                for part in (step.send, step.recv):
                    assert part is None or 0 <= part[0] <= part[1] <= count


def test_uneven_blocks_cost_no_more_than_the_largest_block_everywhere() -> None:
    """README's closed form with the largest block is an upper bound of the walked count."""
    spec = ALGORITHMS["rabenseifner"]
    path = critical_path(spec.schedule, 8, 1001)
    assert 2 * 7 * 1001 / 8 <= path.sent <= 2 * 7 * 126


@pytest.mark.parametrize("spec", [*HAND_WRITTEN, library.AUTOTUNED, *library.FORCED])
def test_every_descriptor_provides_what_its_readers_need(spec: AlgorithmSpec) -> None:
    assert ALGORITHMS[spec.name] is spec
    assert spec.description and spec.color.startswith("#")
    modelled = modelled_spec(spec.name)
    if spec.library and not spec.forced:
        assert modelled is None and spec.parts is None and spec.other_p
        return
    assert modelled is not None and modelled.schedule is not None
    assert modelled.other_p and modelled.parts is not None
    assert all(modelled.parts(p) >= 1 for p in SIZES)
    if not spec.library:
        assert spec.short and modelled is spec


def test_block_bounds_are_near_equal_and_cover_the_count() -> None:
    for count, parts in itertools.product(range(20), range(1, 9)):
        bounds = block_bounds(count, parts)
        sizes = [b - a for a, b in itertools.pairwise(bounds)]
        assert bounds[0] == 0 and bounds[-1] == count and len(sizes) == parts
        assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


def test_the_simulator_catches_a_receive_nobody_sends() -> None:
    def lonely(rank: int, size: int, count: int) -> tuple[Step, ...]:
        return (Step((0, 0), "broken", recv_from=1, recv=(0, count)),) if rank == 0 else ()

    with pytest.raises(ValueError, match="no match"):
        simulate(lonely, 2, 4)


@pytest.mark.parametrize("schedule", list(_COUNTED), ids=lambda s: s.__module__)
def test_a_counted_critical_path_is_the_walks_exactly(schedule) -> None:
    """A schedule's registered path count (schedule.counted_by) gives the walk's counts, even
    and uneven blocks, fewer elements than ranks, none at all."""
    for size in range(1, 41):
        for count in {0, 1, size - 1, size, size + 1, 3 * size + 2, 1000}:
            if count >= 0:
                assert critical_path(schedule, size, count) == walked_path(schedule, size, count)
