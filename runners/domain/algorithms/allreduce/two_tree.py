"""Two-tree allreduce (NCCL's double binary tree): the vector cut in two halves, each cut in
segments of a fixed size; each half is reduced up a binary tree of all the ranks to its root
and broadcast back down it, the two trees those of runners.domain.algorithms.two_tree (a rank
interior in one is a leaf in the other), both halves pipelined at once, the reduces first,
then the broadcasts. A rank sends and receives one segment a round: about n/b + 2 log2 p
rounds of one segment reduced, then as many moved (a reduce and a broadcast each at the speed
of one tree for the whole vector). The second tree's subtrees wrap around rank order where p
is odd, so it needs a commutative op (as NCCL's)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.segments import SEGMENT, pipeline_member
from runners.domain.algorithms.two_tree import (
    Rounds,
    coloured_plan,
    rounds_of_plan,
    tree_edges,
    two_tree_schedule,
)
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import Schedule


@lru_cache(maxsize=512)
def allreduce_rounds(size: int, first: int, second: int) -> Rounds:
    """The rounds of a two-tree allreduce of `first` and `second` segments on `size` ranks:
    both trees' reduces pipelined together, then both trees' broadcasts (one after the other,
    so that no broadcast round waits on a reduction: interleaved, nearly every round would
    cost a segment's reduction, and the whole reduction is the n gamma a CPU pays slowest)."""
    segments = (first, second)
    phases = [
        [e for tree in (0, 1) for e in tree_edges(range(size), tree, up)] for up in (True, False)
    ]
    plan = tuple(r for edges in phases for r in coloured_plan(edges, segments))
    return rounds_of_plan(plan, size)


@lru_cache(maxsize=256)
def schedule_for(segment: int) -> Schedule:
    """The two-tree allreduce of `segment`-element segments as a schedule."""
    doc = f"two-tree reduce + broadcast, {segment}-element segments"
    return two_tree_schedule(segment, allreduce_rounds, doc)


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    return pipeline_member(
        name, values, schedule_for,
        "two binary trees, each reducing half the vector up to its root and broadcasting "
        "it back down, in segments of {segment}: about 2 (n/b + 2 log2 p) rounds of one segment",
        color="#17becf", short="2tree", commutative_only=True,
        other_p="the trees' last levels are partly filled where p is not a power of two",
    )  # fmt: skip


FAMILY = Family(
    "two_tree",
    (SEGMENT,),
    build,
    help="two-tree (double binary tree) allreduce, NCCL's (segment size b)",
    example_values=(("segment", "64KiB"),),
)
