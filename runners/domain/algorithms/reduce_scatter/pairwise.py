"""Pairwise reduce-scatter: p-1 exchanges, in step i with the ranks i away on either side."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.collectives.descriptor import AlgorithmSpec, per_rank
from runners.domain.collectives.schedule import CORE, Step, block_bounds


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Pairwise exchange reduce-scatter, for any p (MPICH's for long messages).

    In step i (1..p-1) a rank sends its own input's block of rank + i to that rank and reduces
    the block of its own that rank - i sends it. Inputs are never overwritten except the
    rank's own block, which gathers the partial results out of rank order: commutative ops only.
    """
    bounds = block_bounds(count, size)
    mine = (bounds[rank], bounds[rank + 1])
    steps = []
    for i in range(1, size):
        dst, src = (rank + i) % size, (rank - i) % size
        sent = (bounds[dst], bounds[dst + 1])
        steps.append(Step((CORE, i - 1), "reduce-scatter", dst, sent, src, mine, True))
    return tuple(steps)


DESCRIPTOR = AlgorithmSpec(
    "reduce_scatter.pairwise",
    "pairwise exchange: p-1 steps, each rank sending one block to rank + i",
    collective="reduce_scatter",
    commutative_only=True,
    color="#9467bd",
    short="pair",
    schedule=schedule,
    parts=per_rank,
    other_p="pairwise exchange takes p-1 steps for any p",
    any_p=True,
)
