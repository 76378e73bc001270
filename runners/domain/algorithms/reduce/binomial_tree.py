"""Binomial-tree reduce to rank 0: ceil(log2 p) rounds of the whole vector, in rank order."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, Step


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """In round k a rank whose lowest set bit is 2^k sends its partial result (ranks
    [r, r + 2^k)) to r - 2^k, which appends it on the right: noncommutative ops keep rank
    order."""
    whole, steps, mask, k = (0, count), [], 1, 0
    while mask < size:
        if rank & mask:
            steps.append(Step((CORE, k), "reduce", send_to=rank - mask, send=whole))
            break
        if rank + mask < size:
            steps.append(
                Step(
                    (CORE, k),
                    "reduce",
                    recv_from=rank + mask,
                    recv=whole,
                    reduce=True,
                    mine_is_left=True,
                )
            )
        mask, k = mask << 1, k + 1
    return tuple(steps)


DESCRIPTOR = AlgorithmSpec(
    "reduce.binomial_tree",
    "binomial tree to rank 0: ceil(log2 p) rounds of the whole vector",
    collective="reduce",
    color="#ff7f0e",
    short="tree",
    schedule=schedule,
    other_p="{alg} runs an unbalanced tree: ceil(log2 p) rounds while some ranks idle",
)
