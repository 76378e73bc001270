"""Recursive-doubling allgather: log2 p exchanges of a doubling range (power-of-two p)."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.collectives.descriptor import AlgorithmSpec, per_rank
from runners.domain.collectives.schedule import CORE, Step, block_bounds


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """In round k a rank swaps the 2^k blocks it holds (an aligned run around its own) with
    rank XOR 2^k. Power-of-two p only: collsweep refuses other p rather than fold (MPICH
    switches to a different algorithm there)."""
    if size & (size - 1):
        raise ValueError(f"recursive-doubling allgather needs a power-of-two p, got {size}")
    bounds = block_bounds(count, size)
    steps: list[Step] = []
    mask = 1
    while mask < size:
        mine = rank & ~(mask - 1)
        theirs = (rank ^ mask) & ~(mask - 1)
        sent = (bounds[mine], bounds[mine + mask])
        got = (bounds[theirs], bounds[theirs + mask])
        steps.append(Step((CORE, len(steps)), "allgather", rank ^ mask, sent, rank ^ mask, got))
        mask <<= 1
    return tuple(steps)


DESCRIPTOR = AlgorithmSpec(
    "allgather.recursive_doubling",
    "recursive doubling: log2 p exchanges of a doubling range; power-of-two p only",
    collective="allgather",
    power_of_two_only=True,
    color="#1f77b4",
    short="rd",
    schedule=schedule,
    parts=per_rank,
    other_p="{alg} is refused for p that is not a power of two (no fold: bruck or ring run there)",
)
