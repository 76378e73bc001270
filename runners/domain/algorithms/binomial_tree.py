"""Binomial-tree reduce to rank 0 followed by a binomial-tree broadcast from rank 0."""

from __future__ import annotations

from functools import lru_cache

from runners.domain.descriptor import AlgorithmSpec
from runners.domain.schedule import CORE, Step


@lru_cache(maxsize=1024)
def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
    """Binomial-tree reduce + binomial-tree broadcast, for any p.

    Reduce: in round k a rank whose lowest set bit is 2^k sends its partial result (covering
    ranks [r, r + 2^k)) to r - 2^k, which appends it on the right, so noncommutative ops
    keep rank order. Broadcast: the same tree in reverse, ceil(log2 p) more rounds.
    """
    whole, depth = (0, count), (size - 1).bit_length()
    steps: list[Step] = []
    mask, k = 1, 0
    while mask < size:  # reduce towards rank 0
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
    if rank:
        steps.append(
            Step((CORE, 2 * depth - 1 - k), "broadcast", recv_from=rank - mask, recv=whole)
        )
    mask >>= 1
    while mask > 0:  # then pass the result down the same tree
        if rank + mask < size:
            k = mask.bit_length() - 1
            steps.append(Step((CORE, 2 * depth - 1 - k), "broadcast", rank + mask, whole))
        mask >>= 1
    return tuple(steps)


DESCRIPTOR = AlgorithmSpec(
    "binomial_tree",
    "binomial-tree reduce to rank 0, then binomial-tree broadcast",
    color="#ff7f0e",
    short="tree",
    schedule=schedule,
    other_p="{alg} runs an unbalanced tree: ceil(log2 p) rounds on the critical path "
    "while some ranks idle",
)
