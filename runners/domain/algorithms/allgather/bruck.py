"""Bruck's allgather: ceil(log2 p) rounds for any p, in a buffer rotated by the rank."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.collectives.descriptor import AlgorithmSpec, per_rank
from runners.domain.collectives.schedule import CORE, Step, block_bounds


def relative_bounds(rank: int, size: int, count: int) -> tuple[int, ...]:
    """Block boundaries in the rotated buffer: block j there is rank (rank + j) % p's."""
    bounds = block_bounds(count, size)
    out = [0]
    for j in range(size):
        owner = (rank + j) % size
        out.append(out[-1] + bounds[owner + 1] - bounds[owner])
    return tuple(out)


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Bruck: the buffer is rotated so a rank's own block comes first (the descriptor says
    `rotated`; the ranks rotate it back after the last round). In round k a rank sends its
    first min(2^k, p - 2^k) blocks to rank - 2^k and appends as many from rank + 2^k."""
    steps: list[Step] = []
    dist = 1
    mine = relative_bounds(rank, size, count)
    while dist < size:
        n = min(dist, size - dist)
        theirs = relative_bounds((rank + dist) % size, size, count)
        sent = (0, mine[n])
        got = (mine[dist], mine[dist] + theirs[n])
        to, frm = (rank - dist) % size, (rank + dist) % size
        steps.append(Step((CORE, len(steps)), "allgather", to, sent, frm, got))
        dist <<= 1
    return tuple(steps)


DESCRIPTOR = AlgorithmSpec(
    "allgather.bruck",
    "Bruck: ceil(log2 p) rounds for any p, then a local rotation",
    collective="allgather",
    color="#ff7f0e",
    short="bruck",
    schedule=schedule,
    parts=per_rank,
    rotated=True,
    other_p="Bruck takes ceil(log2 p) rounds for any p (the last one shorter)",
    any_p=True,
)
