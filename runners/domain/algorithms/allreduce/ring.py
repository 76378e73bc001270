"""Ring allreduce: ring reduce-scatter followed by ring allgather."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import (
    CORE,
    CriticalPath,
    Step,
    block_bounds,
    counted_by,
)


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Ring reduce-scatter + ring allgather over p near-equal datatype-aligned blocks.

    Works for any p. In reduce-scatter step s a rank sends block rank - s to its right
    neighbour and reduces block rank - s - 1 from its left; each block's partial sum travels
    around the ring starting after its owner, so the reduction order wraps around rank
    p-1 -> 0: commutative ops only. The allgather passes the finished blocks on around.
    """
    if size == 1:
        return ()
    reduced = ring_pass(rank, size, count, first=rank, phase="reduce-scatter", reduce=True)
    gathered = ring_pass(rank, size, count, first=rank + 1, phase="allgather", start=size - 1)
    return (*reduced, *gathered)


@counted_by(schedule)
def critical_path(size: int, count: int) -> CriticalPath:
    """The ring's critical path without its O(p^2) steps: in every round each block moves once
    (and is reduced once in the reduce-scatter), so each of the 2(p-1) rounds costs the
    largest block."""
    if size == 1:
        return CriticalPath(0, 0, 0)
    largest = -(-count // size)
    return CriticalPath(2 * (size - 1), 2 * (size - 1) * largest, (size - 1) * largest)


def ring_pass(
    rank: int,
    size: int,
    count: int,
    first: int,
    phase: str,
    reduce: bool = False,
    start: int = 0,
) -> tuple[Step, ...]:
    """p-1 ring steps over p near-equal blocks (rounds start, start+1, ...): in step s a rank
    sends block first - s to its right neighbour and receives block first - s - 1 from its
    left, reducing it when `reduce`. Every ring schedule is passes of this: allreduce's
    reduce-scatter (first = rank) and allgather (first = rank + 1), reduce_scatter's
    (first = rank - 1, ending with its own block) and allgather's (first = rank)."""
    bounds = block_bounds(count, size)
    right, left = (rank + 1) % size, (rank - 1) % size

    def block(i: int) -> tuple[int, int]:
        return bounds[i % size], bounds[i % size + 1]

    return tuple(
        Step((CORE, start + s), phase, right, block(first - s), left, block(first - s - 1), reduce)
        for s in range(size - 1)
    )


def _ring_parts(ranks: int) -> int:
    return ranks


DESCRIPTOR = AlgorithmSpec(
    "ring",
    "ring reduce-scatter + ring allgather, 2(p-1) steps",
    commutative_only=True,
    color="#d62728",
    short="ring",
    schedule=schedule,
    parts=_ring_parts,
    other_p="the ring takes 2(p-1) steps for any p",
    any_p=True,
)
