"""Two-tree broadcast from rank 0 (Sanders, Speck & Traff 2009): the vector cut in two
halves, each cut in segments of a fixed size; rank 0 passes the first half's segments to the
root of one binary tree over ranks 1..p-1 and the second half's to the root of the other (the
trees of runners.domain.algorithms.two_tree), where a rank interior in one tree is a leaf in
the other. A rank sends and receives one segment a round, so the pipeline takes about
n/b + 2 log2 p rounds of one segment, against the binary tree's 2 n/b + 2 log2 p."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from runners.domain.algorithms.parameters import Family
from runners.domain.algorithms.segments import SEGMENT, pipeline_member
from runners.domain.algorithms.two_tree import (
    Edge,
    Rounds,
    coloured_plan,
    rounds_of_plan,
    tree_edges,
    tree_root,
    two_tree_schedule,
)
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import Schedule


def broadcast_edges(size: int) -> list[Edge]:
    """Rank 0's edges to the two trees' roots, then the trees' own, downward."""
    others = range(1, size)
    if not others:
        return []
    edges = [Edge(0, tree_root(others, tree), tree, False) for tree in (0, 1)]
    return edges + tree_edges(others, 0, False) + tree_edges(others, 1, False)


@lru_cache(maxsize=512)
def broadcast_rounds(size: int, first: int, second: int) -> Rounds:
    """The rounds of a two-tree broadcast of `first` and `second` segments on `size` ranks."""
    return rounds_of_plan(coloured_plan(broadcast_edges(size), (first, second)), size)


@lru_cache(maxsize=256)
def schedule_for(segment: int) -> Schedule:
    """The two-tree broadcast of `segment`-element segments as a schedule."""
    doc = f"two-tree broadcast from rank 0, {segment}-element segments"
    return two_tree_schedule(segment, broadcast_rounds, doc)


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member (parameters.Family.build)."""
    return pipeline_member(
        name, values, schedule_for,
        "two binary trees from rank 0, each carrying half the vector in segments of "
        "{segment}: about n/b + 2 log2 p rounds of one segment each",
        collective="bcast", color="#17becf", short="2tree",
        other_p="the trees' last levels are partly filled where p - 1 is not 2^k - 1",
    )  # fmt: skip


FAMILY = Family(
    "bcast.two_tree",
    (SEGMENT,),
    build,
    help="two-tree (double binary tree) broadcast (segment size b: about n/b + 2 log2 p rounds)",
    example_values=(("segment", "64KiB"),),
)
