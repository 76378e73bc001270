"""Van de Geijn's broadcast: a binomial scatter of p blocks, then a ring allgather."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from runners.domain.algorithms.allgather import ring
from runners.domain.algorithms.bcast.binomial_tree import tree_steps
from runners.domain.collectives.descriptor import AlgorithmSpec, per_rank
from runners.domain.collectives.schedule import CORE, Step, block_bounds


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Scatter: the binomial tree of bcast, each subtree of ranks [r, s) getting only their
    blocks; then every rank holds its own block and the ring allgather completes the vector."""
    bounds = block_bounds(count, size)
    steps = tree_steps(rank, size, lambda first, stop: (bounds[first], bounds[stop]), "scatter")
    depth = (size - 1).bit_length()
    steps += [
        replace(s, round=(CORE, depth + s.round[1])) for s in ring.schedule(rank, size, count)
    ]
    return tuple(steps)


DESCRIPTOR = AlgorithmSpec(
    "bcast.scatter_allgather",
    "binomial scatter of p blocks + ring allgather (van de Geijn)",
    collective="bcast",
    color="#2ca02c",
    short="sag",
    schedule=schedule,
    parts=per_rank,
    other_p="the scatter's tree is unbalanced for p not a power of two; the ring takes p-1 "
    "steps for any p",
)
