"""Pipelined chain allreduce: the pipelined chain reduce to rank 0, then the pipelined chain
broadcast from it, segments of a fixed size: 2 (p - 2 + n/b) rounds of one segment (MPICH's
tree allreduce on a 1-ary tree with MPIR_CVAR_ALLREDUCE_TREE_PIPELINE_CHUNK_SIZE = b)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache

from runners.domain.algorithms.bcast.chain import chain_path, chain_steps
from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.segments import SEGMENT, pipeline_member, segment_ranges
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, CriticalPath, Schedule, Step, counted_by


@lru_cache(maxsize=256)
def schedule_for(segment: int) -> Schedule:
    """The pipelined chain reduce + broadcast of `segment`-element segments as a schedule."""
    up, down = chain_path(segment, reduces=True), chain_path(segment, reduces=False)

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        segments = segment_ranges(count, segment)
        later = len(segments) + size - 2  # the reduce's rounds
        reduce = chain_steps(rank, size, segments, "reduce", False)
        bcast = chain_steps(rank, size, segments, "broadcast", True)
        return (*reduce, *(replace(s, round=(CORE, later + s.round[1])) for s in bcast))

    def count(size: int, elements: int) -> CriticalPath:
        a, b = up(size, elements), down(size, elements)
        return CriticalPath(a.messages + b.messages, a.sent + b.sent, a.reduced)

    schedule.__doc__ = f"pipelined chain reduce + broadcast, {segment}-element segments"
    counted_by(schedule)(count)
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    return pipeline_member(
        name, values, schedule_for,
        "pipelined chain reduce to rank 0, then pipelined chain broadcast, in segments of "
        "{segment}: 2 (p - 2 + n/b) rounds of one segment each",
        color="#2ca02c", short="chain", other_p="a chain runs the same for any p",
    )  # fmt: skip


FAMILY = Family(
    "chain",
    (SEGMENT,),
    build,
    help="pipelined chain reduce + broadcast allreduce (segment size b)",
    example_values=(("segment", "64KiB"),),
)
