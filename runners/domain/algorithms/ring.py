"""Ring allreduce: ring reduce-scatter followed by ring allgather."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.descriptor import AlgorithmSpec
from runners.domain.schedule import CORE, Step, block_bounds


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
    bounds = block_bounds(count, size)
    right, left = (rank + 1) % size, (rank - 1) % size

    def block(i: int) -> tuple[int, int]:
        return bounds[i % size], bounds[i % size + 1]

    steps = [
        Step((CORE, s), "reduce-scatter", right, block(rank - s), left, block(rank - s - 1), True)
        for s in range(size - 1)
    ]
    steps += [
        Step((CORE, size - 1 + s), "allgather", right, block(rank + 1 - s), left, block(rank - s))
        for s in range(size - 1)
    ]
    return tuple(steps)


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
