"""Pipelined binary tree broadcast from rank 0: the vector cut into segments of a fixed size,
passed down the binary tree of the ranks in heap order (rank r's children 2r+1 and 2r+2), a
parent sending each segment to its left child, then to its right one: 2 (s - 1) + 2 depth
rounds at most, of one segment each (Open MPI's bcast binary tree with
coll_tuned_bcast_algorithm_segmentsize; MPICH's pipelined tree with a 2-ary tree)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.segments import SEGMENT, pipeline_member, segment_ranges
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, Range, Schedule, Step


def depth(rank: int) -> int:
    """A rank's depth in the heap-ordered binary tree (the root's is 0)."""
    return (rank + 1).bit_length() - 1


def binary_steps(rank: int, size: int, segments: tuple[Range, ...]) -> list[Step]:
    """One rank's rounds: segment s reaches a child of a parent at depth d in round 2s + 2d
    (the left child) or 2s + 2d + 1 (the right one); a rank passes each segment on from the
    round after it arrived, a receive and a send of one round made at once."""
    sends: dict[int, tuple[int, Range]] = {}
    for side, child in enumerate((2 * rank + 1, 2 * rank + 2)):
        if child < size:
            for s, segment in enumerate(segments):
                sends[2 * s + 2 * depth(rank) + side] = (child, segment)
    receives: dict[int, Range] = {}
    if rank:
        parent, side = (rank - 1) // 2, (rank - 1) % 2
        for s, segment in enumerate(segments):
            receives[2 * s + 2 * depth(parent) + side] = segment
    steps = []
    for when in sorted({*sends, *receives}):
        to = sends[when][0] if when in sends else None
        sent = sends[when][1] if when in sends else None
        got = receives.get(when)
        steps.append(
            Step(
                (CORE, when), "broadcast", send_to=to, send=sent,
                recv_from=(rank - 1) // 2 if got is not None else None, recv=got,
            )
        )  # fmt: skip
    return steps


@lru_cache(maxsize=256)
def schedule_for(segment: int) -> Schedule:
    """The pipelined binary tree broadcast of `segment`-element segments as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        return tuple(binary_steps(rank, size, segment_ranges(count, segment)))

    schedule.__doc__ = f"pipelined binary tree broadcast from rank 0, {segment}-element segments"
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    return pipeline_member(
        name, values, schedule_for,
        "pipelined binary tree from rank 0 in segments of {segment}: about 2 (n/b + log2 p) "
        "rounds of one segment each",
        collective="bcast", color="#9467bd", short="bin",
        other_p="a binary tree's last level is partly filled where p is not 2^k - 1",
    )  # fmt: skip


FAMILY = Family(
    "bcast.binary",
    (SEGMENT,),
    build,
    help="pipelined binary tree broadcast (segment size b: about 2 (n/b + log2 p) rounds)",
    example_values=(("segment", "64KiB"),),
)
