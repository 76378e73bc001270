"""Segmented ring allreduce (Open MPI's ring_segmented): the ring's reduce-scatter run in
phases, each on one near-equal part of every block, so that a block's segment is reduced
while the next arrives, then the ring allgather of whole blocks: phases (p - 1) + (p - 1)
rounds. The phases are Open MPI's: count // (p s) for s elements a segment, one more where
the rest is over half of p s (and at least p); fewer than p s elements run the plain ring.
The round model prices a round's transfer and reduction one after the other, so it sees the
extra rounds and not the overlap that pays for them."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.allreduce.ring import ring_pass
from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.segments import SEGMENT, pipeline_member
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import (
    CORE,
    CriticalPath,
    Schedule,
    Step,
    block_bounds,
    counted_by,
)


def phases(count: int, size: int, segment: int) -> int:
    """Open MPI's number of phases for `count` elements on `size` ranks in `segment`-element
    segments (1: the plain ring)."""
    whole = size * segment
    if count < whole:
        return 1
    rest = count % whole
    return count // whole + (1 if rest >= size and rest > whole // 2 else 0)


def phase_steps(rank: int, size: int, count: int, parts: int) -> list[Step]:
    """The reduce-scatter in `parts` phases: in phase f, step s, a rank sends part f of block
    rank - s to its right and reduces part f of block rank - s - 1 from its left."""
    bounds = block_bounds(count, size)
    right, left = (rank + 1) % size, (rank - 1) % size

    def part(block: int, f: int) -> tuple[int, int]:
        start = bounds[block % size]
        cut = block_bounds(bounds[block % size + 1] - start, parts)
        return start + cut[f], start + cut[f + 1]

    steps = []
    for f in range(parts):
        for s in range(size - 1):
            sent, got = part(rank - s, f), part(rank - s - 1, f)
            when = (CORE, f * (size - 1) + s)
            steps.append(Step(when, "reduce-scatter", right, sent, left, got, reduce=True))
    return steps


@lru_cache(maxsize=256)
def schedule_for(segment: int) -> Schedule:
    """The segmented ring of `segment`-element segments as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        if size == 1:
            return ()
        parts = phases(count, size, segment)
        reduced = phase_steps(rank, size, count, parts)
        start = parts * (size - 1)
        gathered = ring_pass(rank, size, count, first=rank + 1, phase="allgather", start=start)
        return (*reduced, *gathered)

    def count(size: int, elements: int) -> CriticalPath:
        if size == 1:
            return CriticalPath(0, 0, 0)
        # every round moves one part of every block: the largest block's parts add up to it
        block = -(-elements // size)
        rounds = (phases(elements, size, segment) + 1) * (size - 1)
        return CriticalPath(rounds, 2 * (size - 1) * block, (size - 1) * block)

    schedule.__doc__ = f"segmented ring, {segment}-element segments"
    counted_by(schedule)(count)
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    return pipeline_member(
        name, values, schedule_for,
        "ring reduce-scatter in phases of {segment} segments per block, then ring allgather: "
        "(phases + 1)(p - 1) rounds (Open MPI's ring_segmented)",
        color="#e377c2", short="sring", commutative_only=True,
        other_p="the ring takes its rounds for any p",
    )  # fmt: skip


FAMILY = Family(
    "segmented_ring",
    (SEGMENT,),
    build,
    help="segmented ring allreduce, Open MPI's (segment size b: n / (p b) phases)",
    example_values=(("segment", "64KiB"),),
)
