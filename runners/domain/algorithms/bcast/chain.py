"""Pipelined chain broadcast from rank 0: the vector cut into segments of a fixed size, each
passed down the line 0 -> 1 -> ... -> p-1 one round behind the one before, so p - 2 + n/b
rounds of one segment each: (p - 2 + n/b)(alpha + b beta), best at b* = sqrt(n alpha /
((p - 2) beta)) (MPICH's pipelined tree with a 1-ary tree; Open MPI's bcast chain with
coll_tuned_bcast_algorithm_segmentsize)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.segments import SEGMENT, pipeline_member, segment_ranges
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import (
    CORE,
    CriticalPath,
    PathCount,
    Range,
    Schedule,
    Step,
    counted_by,
)


def chain_steps(
    rank: int, size: int, segments: tuple[Range, ...], phase: str, downward: bool
) -> list[Step]:
    """One rank's rounds of a pipeline along the line of ranks: downward (a broadcast from
    rank 0) a rank takes segment s from rank - 1 in round s + rank - 1 and passes it on in
    round s + rank; upward (a reduce to rank 0) the same from the other end, each received
    segment reduced onto the right of the rank's own (rank order kept)."""
    hops = rank if downward else size - 1 - rank
    before = rank - 1 if downward else rank + 1
    after = rank + 1 if downward else rank - 1
    takes = hops > 0
    passes = 0 <= after < size
    steps = []
    for when in range(len(segments) + size - 2):
        got, sent = when - hops + 1, when - hops
        recv = segments[got] if takes and 0 <= got < len(segments) else None
        send = segments[sent] if passes and 0 <= sent < len(segments) else None
        if recv is None and send is None:
            continue
        steps.append(
            Step(
                (CORE, when),
                phase,
                send_to=after if send is not None else None,
                send=send,
                recv_from=before if recv is not None else None,
                recv=recv,
                reduce=recv is not None and not downward,
                mine_is_left=not downward,
            )
        )
    return steps


def chain_path(segment: int, reduces: bool) -> PathCount:
    """The critical path of a chain of `segment`-element segments without walking it: every
    round moves one segment (a full one but in the first round, when several are cut)."""

    def count(size: int, elements: int) -> CriticalPath:
        if size < 2:
            return CriticalPath(0, 0, 0)
        segments = segment_ranges(elements, segment)
        rounds = len(segments) + size - 2
        first = segments[0][1] - segments[0][0]
        moved = rounds * first if len(segments) == 1 else (rounds - 1) * segment + first
        return CriticalPath(rounds, moved, moved if reduces else 0)

    return count


@lru_cache(maxsize=256)
def schedule_for(segment: int) -> Schedule:
    """The pipelined chain broadcast of `segment`-element segments as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        return tuple(chain_steps(rank, size, segment_ranges(count, segment), "broadcast", True))

    schedule.__doc__ = f"pipelined chain broadcast from rank 0, {segment}-element segments"
    counted_by(schedule)(chain_path(segment, reduces=False))
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    return pipeline_member(
        name, values, schedule_for,
        "pipelined chain from rank 0 in segments of {segment}: p - 2 + n/b rounds of one "
        "segment each",
        collective="bcast", color="#2ca02c", short="chain",
        other_p="a chain runs the same for any p",
    )  # fmt: skip


FAMILY = Family(
    "bcast.chain",
    (SEGMENT,),
    build,
    help="pipelined chain broadcast (segment size b: p - 2 + n/b rounds of b bytes)",
    example_values=(("segment", "64KiB"),),
)
