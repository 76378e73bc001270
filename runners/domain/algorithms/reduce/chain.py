"""Pipelined chain reduce to rank 0: the vector cut into segments of a fixed size, each
reduced along the line p-1 -> ... -> 1 -> 0 one round behind the one before, each rank
putting its own data on the left of what it receives (rank order kept for any op): p - 2 +
n/b rounds of one segment, (p - 2 + n/b)(alpha + b beta + b gamma) (Open MPI's reduce chain
with coll_tuned_reduce_algorithm_segmentsize)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.bcast.chain import chain_path, chain_steps
from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.segments import SEGMENT, pipeline_member, segment_ranges
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import Schedule, Step, counted_by


@lru_cache(maxsize=256)
def schedule_for(segment: int) -> Schedule:
    """The pipelined chain reduce of `segment`-element segments as a schedule."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        return tuple(chain_steps(rank, size, segment_ranges(count, segment), "reduce", False))

    schedule.__doc__ = f"pipelined chain reduce to rank 0, {segment}-element segments"
    counted_by(schedule)(chain_path(segment, reduces=True))
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    return pipeline_member(
        name, values, schedule_for,
        "pipelined chain to rank 0 in segments of {segment}: p - 2 + n/b rounds of one "
        "segment each, reduced in rank order",
        collective="reduce", color="#2ca02c", short="chain",
        other_p="a chain runs the same for any p",
    )  # fmt: skip


FAMILY = Family(
    "reduce.chain",
    (SEGMENT,),
    build,
    help="pipelined chain reduce (segment size b: p - 2 + n/b rounds of b bytes)",
    example_values=(("segment", "64KiB"),),
)
